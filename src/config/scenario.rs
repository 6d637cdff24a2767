//! Scenario files: what to simulate, in physical units, validated and converted once into the
//! cycles, flits and register values of the model.
//!
//! The keys, their defaults and their limits (with the register or table each limit comes from)
//! are listed in `docs/scenarios.md`. Every key is read even after an error, so one load reports
//! every error of a file; a scenario that loads builds and runs. Legal values that are surely
//! not meant (a hot window after the end of the run, a flow that never sends) load with a
//! warning in [`Scenario::warnings`].

use super::document::{Document, ScenarioError, ScenarioErrors, Value};
pub(super) use super::reader::Reader;
use super::units::TimeBase;
use super::{switch_keys, topology_keys, traffic_keys};
use crate::fabric::FabricParams;
use crate::fabric::node::{Flow, SOURCE_QUEUE, SendMemory};
use crate::fabric::subnet_manager::{RoutingEngine, colored};
use crate::fabric::topology::Topology;
use crate::switch::{QueuingScheme, RoutingMode, packet_slots};
use crate::traffic::phase::{Injection, PhaseFlow};
use crate::wire::link::MAX_VCS;

/// A validated scenario, in cycles and flits.
#[derive(Debug)]
pub struct Scenario {
    /// Name.
    pub name: String,
    /// Free text.
    pub description: String,
    /// The document it came from (with overrides).
    pub doc: Document,
    /// Time base.
    pub time_base: TimeBase,
    /// Seed.
    pub seed: u64,
    /// Cycles to simulate.
    pub sim_cycles: u64,
    /// Cycles per statistics bin.
    pub bin_cycles: u64,
    /// Topology.
    pub topology: Topology,
    /// Fabric parameters.
    pub params: FabricParams,
    /// Traffic pattern name.
    pub pattern: String,
    /// Flows per node.
    pub flows: Vec<Vec<Flow>>,
    /// The MPI trace the nodes replay instead of flows (pattern `trace`).
    pub replay: Option<super::TraceReplay>,
    /// The finite flows of a communication phase (`permutations`, or flows with `bytes`).
    pub phase: Option<Vec<crate::traffic::phase::PhaseFlow>>,
    /// How the nodes space the phase's packets (`node.injection`).
    pub phase_injection: crate::traffic::phase::Injection,
    /// Values that are legal but surely not meant, one line each (`place: key `k`: what`).
    pub warnings: Vec<String>,
}

/// Link rates the model takes, in Gb/s: one cycle is one flit time, so the rate only scales
/// the conversion of times; outside this range times of a few nanoseconds or of a whole run
/// stop meaning anything.
pub const LINK_GBPS: std::ops::RangeInclusive<f64> = 1.0..=10_000.0;

/// Longest link latency in cycles: each direction of a link holds a ring of about twice its
/// latency in slots, allocated when the fabric is built.
pub const MAX_LATENCY: u64 = 65_535;

/// Most memory the links' delay lines may take (they are allocated when the fabric is built).
pub const MAX_LINK_BYTES: u64 = 8 << 30;

/// Most statistics bins of a run: each is a row of the efficiency and latency series, held in
/// memory during the run.
pub const MAX_BINS: u64 = 1 << 20;

/// Largest scenario file, in bytes: 64 MiB. The file is read whole, and its TOML takes some 55
/// bytes of memory a byte; a custom 6-ary 6-tree (46,656 switches, 279,936 cables) is some 17 MB.
pub const MAX_SCENARIO_BYTES: u64 = 64 << 20;

/// Link rate and flit size: what one cycle means. Falls back to the defaults on errors.
fn time_base(doc: &Document) -> TimeBase {
    let mut tb = TimeBase::default();
    if let Some(r) = doc.str("link.rate") {
        match TimeBase::parse_rate(&r) {
            Ok(g) if LINK_GBPS.contains(&g) => tb.link_gbps = g,
            Ok(g) => {
                doc.fail::<()>(
                    "link.rate",
                    format!(
                        "{g} Gb/s is outside {} to {} Gb/s, the link rates the model takes",
                        LINK_GBPS.start(),
                        LINK_GBPS.end()
                    ),
                );
            }
            Err(e) => doc.fail::<()>("link.rate", e.0).unwrap_or(()),
        }
    }
    if let Some(f) = doc.str("link.flit") {
        match TimeBase::bytes(&f) {
            Ok(b) if (1..=4096).contains(&b) => tb.flit_bytes = b as u32,
            Ok(b) => doc
                .fail::<()>("link.flit", format!("{b} B: a flit is 1 B to 4 KB"))
                .unwrap_or(()),
            Err(e) => doc.fail::<()>("link.flit", e.0).unwrap_or(()),
        }
    }
    tb
}

/// The seed: a 64-bit integer, written as an integer or as a string of digits.
fn seed(doc: &Document) -> Option<u64> {
    match doc.get("seed") {
        None => Some(1),
        Some(Value::Str(s)) => {
            let s = s.replace('_', "");
            s.parse::<u64>().ok().or_else(|| {
                doc.fail(
                    "seed",
                    format!("`{s}` is not a 64-bit unsigned integer (0 to 2^64 - 1)"),
                )
            })
        }
        Some(_) => doc.uint("seed"),
    }
}

/// Link latency in cycles: `link.latency`, or `link.length` times `link.ns_per_metre`.
fn latency(r: &Reader) -> Option<u64> {
    let doc = r.doc;
    let m = match doc.get("link.length") {
        Some(_) => doc
            .number("link.length")
            .filter(|&m| doc.holds("link.length", m >= 0.0, || "must not be negative".into())),
        None => Some(5.0),
    };
    let per = match doc.get("link.ns_per_metre") {
        Some(_) => doc.number("link.ns_per_metre").filter(|&p| {
            doc.holds("link.ns_per_metre", p >= 0.0, || {
                "must not be negative".into()
            })
        }),
        None => Some(6.0),
    };
    let limit = |key: &str, c: f64| {
        if c > MAX_LATENCY as f64 {
            doc.fail::<u64>(key, format!(
                "{c:.0} cycles is beyond {MAX_LATENCY} (each direction of a link holds a ring of twice its latency, allocated at build)"
            ))
        } else {
            Some((c as u64).max(1))
        }
    };
    if doc.has("link.latency") {
        for k in ["link.length", "link.ns_per_metre"] {
            if doc.has(k) {
                doc.warn(k, "ignored: `link.latency` is given");
            }
        }
        let c = r.time("link.latency", "30ns")?;
        return limit("link.latency", c as f64);
    }
    let (m, per) = (m?, per?);
    limit("link.length", (m * per / r.tb.cycle_ns()).round())
}

impl Scenario {
    /// Reads a scenario from `path`, applying `overrides` (`key=value`).
    pub fn load(path: &str, overrides: &[String]) -> Result<Self, ScenarioErrors> {
        let mut bytes = Vec::new();
        let cannot = |e: std::io::Error| ScenarioError {
            at: path.to_string(),
            key: None,
            message: format!("cannot read: {e}"),
        };
        let f = super::text_lines::open_input(path.as_ref()).map_err(cannot)?;
        let size = f.metadata().map_err(cannot)?.len();
        if size > MAX_SCENARIO_BYTES {
            return Err(ScenarioError {
                at: path.to_string(),
                key: None,
                message: format!(
                    "{size} bytes; a scenario is at most {MAX_SCENARIO_BYTES} bytes (64 MiB: a \
                     custom 6-ary 6-tree, 279,936 cables, takes some 17 MB)"
                ),
            }
            .into());
        }
        std::io::Read::read_to_end(
            &mut std::io::Read::take(f, MAX_SCENARIO_BYTES + 1),
            &mut bytes,
        )
        .map_err(cannot)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = 1 + good.iter().filter(|&&b| b == b'\n').count();
            ScenarioError {
                at: format!("{path}:{line}"),
                key: None,
                message: "not UTF-8 text (a scenario is a TOML file)".to_string(),
            }
        })?;
        Self::from_text(path, &text, overrides)
    }

    /// Reads a scenario from its text: every error of it, or the scenario with its warnings.
    pub fn from_text(path: &str, text: &str, overrides: &[String]) -> Result<Self, ScenarioErrors> {
        let mut doc = Document::parse(path, text)?;
        for o in overrides {
            if let Err(e) = doc.set(o) {
                doc.push(e);
            }
        }
        let tb = time_base(&doc);
        let r = Reader { doc: &doc, tb };

        let name = doc.str("name").unwrap_or_else(|| {
            std::path::Path::new(path)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        let description = doc.str("description").unwrap_or_default();
        let seed = seed(&doc);
        let sim_cycles = r
            .time_required("sim_time", "a time such as `10ms`")
            .filter(|&c| doc.holds("sim_time", c > 0, || "must be at least one cycle".into()));
        let bin_cycles = r.time("bin", "10us").filter(|&c| {
            doc.holds("bin", c > 0, || {
                format!(
                    "rounds to 0 cycles; a bin is at least one cycle ({} ns)",
                    tb.cycle_ns()
                )
            })
        });
        if let (Some(sim), Some(bin)) = (sim_cycles, bin_cycles) {
            let bins = sim.div_ceil(bin);
            doc.holds("bin", bins <= MAX_BINS, || {
                format!(
                    "{sim} cycles in bins of {bin} make {bins} bins; at most {MAX_BINS} \
                     (each is a row of efficiency.csv and latency.csv, held during the run)"
                )
            });
        }
        let modes: Vec<&str> = RoutingMode::ALL.iter().map(|m| m.name()).collect();
        let routing = r
            .choice("routing", Some("arn_afi"), &modes)
            .and_then(|n| RoutingMode::named(&n));

        let topology = topology_keys::read(&r);
        let routing_engine = topology_keys::routing_engine(&r, topology.as_ref());
        // S-mod-K divides the source by the up-port counts of a fat tree's levels.
        if let (Some(RoutingMode::SModK), Some(t)) = (routing, topology.as_ref()) {
            doc.holds("routing", t.xgft.is_some(), || {
                "`smodk` routes fat trees (`topology.kind` `kary_ntree` or `rlft`): it divides \
                 the source by the up-port counts of the tree's levels"
                    .into()
            });
        }
        // A custom topology in error still declares its node count: the traffic keys are checked
        // against it, so that one run of `check` reports their errors too.
        let nodes =
            topology
                .as_ref()
                .map(|t| t.nodes)
                .or_else(|| match doc.get("topology.nodes") {
                    Some(super::document::Value::Int(n))
                        if (1..=topology_keys::MAX_NODES as i128).contains(n) =>
                    {
                        Some(*n as u32)
                    }
                    _ => None,
                });

        let queuing_name = r.choice("queuing", Some("1q"), &["1q", "dbbm", "vftree", "flow2sl"]);
        let nodes_per_leaf = topology
            .as_ref()
            .and_then(|t| t.xgft.as_ref())
            .map_or(1, |(m, _)| m[0]);
        // Without a valid routing mode, the AFC is counted in (the stricter limit).
        let afi = routing.is_none_or(|m| m.afi());
        let queuing_vcs = switch_keys::queuing_vcs(&r, queuing_name.as_deref(), afi);
        let queuing = queuing_name
            .zip(queuing_vcs)
            .map(|(q, vcs)| match q.as_str() {
                "dbbm" => QueuingScheme::Dbbm { vcs },
                "vftree" => QueuingScheme::VFtree {
                    vcs,
                    nodes_per_leaf,
                },
                "flow2sl" => QueuingScheme::Flow2Sl {
                    vcs,
                    nodes: nodes.unwrap_or(1),
                },
                _ => QueuingScheme::OneQ,
            });
        // An engine that layers its paths over VLs chooses every packet's VL itself (SLs, SL-to-VL
        // tables).
        let queuing = match topology_keys::engine_vls(&r, routing_engine, topology.as_ref()) {
            Some(vls) if queuing != Some(QueuingScheme::OneQ) => {
                if queuing.is_some() {
                    doc.fail::<()>(
                        "queuing",
                        format!(
                            "routing engine `{}` layers its paths over {vls} VLs by SLs and SL-to-VL tables; \
                             leave `queuing` at `1q`",
                            routing_engine.name()
                        ),
                    );
                }
                None
            }
            Some(vls) => Some(QueuingScheme::PathSl { vcs: vls }),
            None => queuing,
        };

        let latency = latency(&r);
        if let (Some(l), Some(t)) = (latency, topology.as_ref()) {
            // The delay lines are allocated at build: refuse what cannot fit in memory.
            let vcs = queuing.map_or(MAX_VCS, |q| q.regular_vcs() + afi as usize);
            let bytes = 2 * t.links.len() as u64 * crate::wire::link::channel_bytes(l, vcs);
            if bytes > MAX_LINK_BYTES {
                let key = if doc.has("link.latency") {
                    "link.latency"
                } else {
                    "link.length"
                };
                doc.fail::<()>(
                    key,
                    format!(
                        "{l} cycles on {} cables need {:.1} GiB of delay lines, beyond {} GiB (each direction holds a ring of about twice its latency)",
                        t.links.len(),
                        bytes as f64 / (1u64 << 30) as f64,
                        MAX_LINK_BYTES >> 30
                    ),
                );
            }
        }
        let rate_control = switch_keys::rate_control(&r);
        let ib_cca = rate_control.as_ref().is_some_and(|c| c.ca.is_some());
        let qcn = rate_control.as_ref().is_some_and(|c| c.qcn.is_some());
        let switch = switch_keys::read(&r, routing, queuing, ib_cca, qcn);
        let mtu = switch.as_ref().map(|s| s.1);
        let traffic = traffic_keys::read(&r, nodes, mtu, sim_cycles, seed);

        let watchdog = r.time("watchdog", "1ms");
        // Progress is seen when a packet starts or finishes a hop, so the watchdog must outlast
        // the longest packet.
        if let (Some(w), Some(m)) = (watchdog, mtu)
            && w <= 2 * m
        {
            doc.fail::<()>(
                "watchdog",
                format!("must be longer than two packets ({} cycles)", 2 * m),
            );
        }
        let node_consumes_arns = doc.bool("node.consume_arns").unwrap_or(true);
        let phase_injection = match traffic.as_ref().is_some_and(|t| t.phase.is_some()) {
            true => r
                .choice("node.injection", Some("paced"), &Injection::NAMES)
                .and_then(|n| Injection::named(&n))
                .unwrap_or_default(),
            false => {
                doc.ignore(
                    "node.injection",
                    "it spaces a phase's finite flows, and there are none",
                );
                Injection::Paced
            }
        };
        let node_send_memory = match r
            .choice("node.send_memory", Some("shared"), &["shared", "per_vc"])
            .as_deref()
        {
            Some("per_vc") => SendMemory::PerVc,
            _ => SendMemory::Shared,
        };

        // Flows and the packet slots they need.
        let flows = match (&traffic, nodes, sim_cycles) {
            (Some(t), Some(n), Some(sim)) => t
                .pattern
                .flows(n, t.message as u32, sim)
                .map_err(|e| doc.fail::<()>("traffic.pattern", e))
                .ok(),
            _ => None,
        };
        let phase = traffic.as_ref().and_then(|t| t.phase.as_deref());
        if let (Some(flows), Some(sim), Some(n), Some(RoutingMode::DModK)) =
            (&flows, sim_cycles, nodes, routing)
        {
            packet_ids(&doc, (flows, phase), sim, n, (mtu.unwrap_or(64), ib_cca));
        }
        if let (Some(flows), Some((sw, mtu, _))) = (&flows, &switch) {
            let vcs = sw.queuing.regular_vcs();
            if let Some(part) = node_send_memory.part(vcs) {
                per_vc_messages(&doc, flows, vcs, part, *mtu);
            }
        }

        // The `colored` engine's phases, refused at `routing_engine` when it cannot route them.
        let routing_phases = match (&flows, &traffic, &topology) {
            (Some(f), Some(t), Some(topo)) if routing_engine == RoutingEngine::Colored => {
                let phases = super::routing_phases::of(f, t.phase.as_deref(), t.replay.as_ref());
                if let Err(e) = colored::check(topo, &phases) {
                    doc.fail::<()>("routing_engine", e);
                }
                phases
            }
            _ => Vec::new(),
        };

        let warnings = doc.finish()?;
        let (
            Some(seed),
            Some(sim_cycles),
            Some(bin_cycles),
            Some(routing),
            Some(topology),
            Some(latency),
            Some((mut switch, mtu, node_vc)),
            Some(traffic),
            Some(flows),
            Some(watchdog),
            Some(switch_keys::RateControl {
                ca: ca_congestion,
                qcn: qcn_reaction,
            }),
        ) = (
            seed,
            sim_cycles,
            bin_cycles,
            routing,
            topology,
            latency,
            switch,
            traffic,
            flows,
            watchdog,
            rate_control,
        )
        else {
            return Err(ScenarioError {
                at: path.to_string(),
                key: None,
                message: "a value was refused without an error (a bug of the scenario reader)"
                    .into(),
            }
            .into());
        };
        // The smallest packet any flow makes: a message's last piece, or a whole short message.
        // A replay's: the last piece of its shortest message (not one flit whatever the trace:
        // the cycle engine holds every slot, 16 GB more on a 16,000-node fabric).
        let phase = traffic.phase.as_deref();
        let min_packet = match &traffic.replay {
            Some(t) => smallest_message_packet(&t.program, tb.flit_bytes, mtu)
                .min(smallest_packet((&flows, phase), mtu)),
            None => smallest_packet((&flows, phase), mtu),
        }
        // Congestion control's CNPs are one flit.
        .min(if ca_congestion.is_some() { 1 } else { u64::MAX });
        switch.max_packets = packet_slots(switch.vcs(), switch.vc_capacity, min_packet as u16);
        let params = FabricParams {
            switch,
            link_latency: latency as u32,
            mtu_flits: mtu as u16,
            node_vc_capacity: node_vc,
            seed,
            watchdog_cycles: watchdog,
            // A replayed packet's id names its message, not its place in its flow.
            // Under FA, the packets that take the deterministic route keep their order.
            check_order: (matches!(routing, RoutingMode::DModK | RoutingMode::SModK)
                || (routing == RoutingMode::Fa && traffic.adaptive_share < 1.0))
                && traffic.replay.is_none(),
            resequence: routing == RoutingMode::SnoopAr && traffic.replay.is_none(),
            node_consumes_arns,
            node_send_memory,
            routing_engine: Some(routing_engine),
            routing_phases: std::sync::Arc::new(routing_phases),
            adaptive_share: traffic.adaptive_share,
            ca_congestion,
            qcn_reaction,
        };
        Ok(Scenario {
            name,
            description,
            time_base: tb,
            seed,
            sim_cycles,
            bin_cycles,
            topology,
            params,
            pattern: traffic.name,
            flows,
            replay: traffic.replay,
            phase: traffic.phase,
            phase_injection,
            doc,
            warnings,
        })
    }
}

/// The flows of a scenario: the nodes' Bernoulli flows and the phase's finite flows.
type AllFlows<'a> = (&'a [Vec<Flow>], Option<&'a [PhaseFlow]>);

fn smallest_packet((flows, phase): AllFlows<'_>, mtu: u64) -> u64 {
    let finite = phase.unwrap_or_default().iter();
    flows
        .iter()
        .flatten()
        .map(|f| match f.message_flits as u64 % mtu {
            0 => mtu,
            rest => rest,
        })
        .chain(finite.map(|f| f.smallest_packet(mtu)))
        .min()
        .unwrap_or(mtu)
        .max(1)
}

/// The smallest packet a trace's messages make: each message's last piece (a message of
/// `ceil(bytes / flit_bytes)` flits, at least one, is cut into `mtu`-flit packets); `mtu` when
/// there is no message.
fn smallest_message_packet(program: &crate::replay::Program, flit_bytes: u32, mtu: u64) -> u64 {
    program
        .messages()
        .iter()
        .map(
            |m| match m.bytes.div_ceil(flit_bytes.max(1) as u64).max(1) % mtu {
                0 => mtu,
                rest => rest,
            },
        )
        .min()
        .unwrap_or(mtu)
        .max(1)
}

/// Under D-mod-K the in-order check tells the packets of a flow apart by their 32-bit id
/// (sequence number times nodes plus source), so a run must make fewer than 2^32 ids. A node
/// injects at most one flit per cycle and holds at most its send memory ahead; under InfiniBand
/// congestion control it also numbers one CNP per packet it receives.
fn packet_ids(
    doc: &Document,
    flows: AllFlows<'_>,
    sim: u64,
    nodes: u32,
    (mtu, ib_cca): (u64, bool),
) {
    let per_node = (sim / smallest_packet(flows, mtu)) * (1 + ib_cca as u64) + SOURCE_QUEUE as u64;
    if (per_node + 1) * nodes as u64 > u32::MAX as u64 {
        doc.fail::<()>(
            "sim_time",
            format!(
                "{sim} cycles: under dmodk the in-order check numbers packets in 32 bits \
                 (sequence × {nodes} nodes + source), and {nodes} nodes can make up to \
                 {per_node} packets each in this time, beyond 2^32 ids"
            ),
        );
    }
}

/// With the send memory split per VC, a message must fit the part of one VC, or it would never
/// be posted. (A phase flow posts its messages packet by packet: any fits.)
fn per_vc_messages(doc: &Document, flows: &[Vec<Flow>], vcs: usize, part: usize, mtu: u64) {
    let largest = flows
        .iter()
        .flatten()
        .map(|f| (f.message_flits as u64).div_ceil(mtu))
        .max()
        .unwrap_or(0);
    if largest > part as u64 {
        doc.fail::<()>(
            "node.send_memory",
            format!(
                "`per_vc` gives each of the {vcs} regular VCs {part} packets of the send memory \
                 ({SOURCE_QUEUE} / {vcs}), and the largest message is {largest} packets of the \
                 MTU, so it would never be posted: use smaller messages, fewer VCs or `shared`"
            ),
        );
    }
}
