//! Scenario files: what to simulate, in physical units, validated and converted once.
//!
//! Keys (defaults in parentheses; times like `30ns`/`5us`/`3ms`, sizes like `64B`/`4KB`):
//!
//! | key | meaning |
//! |---|---|
//! | `name` (default file stem), `description` (default "") | labels |
//! | `seed` (default 1) | seed of every random choice |
//! | `sim_time` | simulated time (required) |
//! | `bin` (default 10us) | width of an efficiency/latency time bin |
//! | `routing` (default arn_afi) | dmodk, oblivious, adaptive_th, adaptive_th_afi, arn, arn_afi |
//! | `queuing` (default 1q) | 1q, dbbm, vftree, flow2sl (3 regular VCs each but 1q) |
//! | `topology.kind` | rlft (`ports`, `stages`), kary_ntree (`k`, `stages`), custom |
//! | `topology.nodes`, `topology.switch(default i).{stage,ports,up}`, `topology.link(default i).{a,b}` | custom topology; endpoints `n3` or `s1:2` |
//! | `link.rate` (default 100Gb/s), `link.flit` (default 64B) | what one cycle means |
//! | `link.latency` (default from `link.length` 5 and `link.ns_per_metre` 6) | propagation delay |
//! | `switch.buffer` (default 344KB) | input buffer per port, split evenly among the VCs |
//! | `switch.mtu` (default 4KB) | largest packet |
//! | `switch.arn_entries` (default 16), `switch.arn_ttl` (default 1ms), `switch.arn_gap` (default 1us) | ARN table |
//! | `switch.hcdth` (default 81), `switch.lcdth` (default 63), `switch.fcth` (default 78) (percent), `switch.crt` (default 5ms) | congestion detector |
//! | `switch.adaptive_threshold` (default 75) (percent) | Adaptive-Th trigger |
//! | `switch.adapted_refresh` (default true) | adapted packets matching a non-consumed ARN entry send ARNs upstream |
//! | `node.buffer` (default = switch.buffer) | receive buffer of an end node |
//! | `node.consume_arns` (default true) | end nodes consume incast ARNs and, under ARN+AFI, inject matching packets into the AFC |
//! | `traffic.pattern` | uniform, h10, h25, h10-4, h25-4, flows |
//! | `traffic.load` (default 1.0), `traffic.message` (default = mtu) | offered load and message size |
//! | `traffic.hot_start` (default 3ms), `traffic.hot_duration` (default 90ms), `traffic.hot_spots` (default paper's) | hot spots |
//! | `traffic.flow(default i).{src,dst,rate,size,start,stop}` | explicit flows |
//! | `watchdog` (default 1ms) | time without progress that counts as a deadlock |

use super::document::{Document, ScenarioError};
use super::units::TimeBase;
use crate::fabric::FabricParams;
use crate::fabric::node::Flow;
use crate::fabric::topology::{Endpoint, SwitchSpec, Topology};
use crate::switch::{QueuingScheme, RoutingMode, SwitchParams, packet_slots};
use crate::traffic::{ExplicitFlow, Pattern, paper_hot_spots};

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
}

fn unit<T>(
    doc: &Document,
    key: &str,
    r: Result<T, super::units::UnitError>,
) -> Result<T, ScenarioError> {
    r.map_err(|e| doc.error(key, e.0))
}

struct Reader<'a> {
    doc: &'a Document,
    tb: TimeBase,
}

impl Reader<'_> {
    fn time(&self, key: &str, default: &str) -> Result<u64, ScenarioError> {
        let text = self.doc.str(key)?.unwrap_or_else(|| default.to_string());
        unit(self.doc, key, self.tb.cycles(&text))
    }

    fn time_required(&self, key: &str) -> Result<u64, ScenarioError> {
        match self.doc.str(key)? {
            Some(t) => unit(self.doc, key, self.tb.cycles(&t)),
            None => Err(self.doc.error(key, "missing (a time such as `10ms`)")),
        }
    }

    fn size(&self, key: &str, default: &str) -> Result<u64, ScenarioError> {
        let text = self.doc.str(key)?.unwrap_or_else(|| default.to_string());
        unit(self.doc, key, self.tb.flits(&text))
    }

    fn percent(&self, key: &str, default: f64) -> Result<f64, ScenarioError> {
        let v = self.doc.number(key)?.unwrap_or(default);
        if !(0.0..=100.0).contains(&v) {
            return Err(self
                .doc
                .error(key, format!("{v} is not a percentage (0 to 100)")));
        }
        Ok(v)
    }

    fn uint_in(
        &self,
        key: &str,
        default: Option<u64>,
        lo: u64,
        hi: u64,
    ) -> Result<u64, ScenarioError> {
        let v = match (self.doc.uint(key)?, default) {
            (Some(v), _) | (None, Some(v)) => v,
            (None, None) => return Err(self.doc.error(key, "missing")),
        };
        if !(lo..=hi).contains(&v) {
            return Err(self.doc.error(key, format!("{v} is outside {lo}..={hi}")));
        }
        Ok(v)
    }
}

fn endpoint(doc: &Document, key: &str) -> Result<Endpoint, ScenarioError> {
    let s = doc
        .str(key)?
        .ok_or_else(|| doc.error(key, "missing (an endpoint such as `n3` or `s1:2`)"))?;
    let bad = || doc.error(key, format!("`{s}` is not an endpoint (`n3` or `s1:2`)"));
    if let Some(n) = s.strip_prefix('n') {
        return n.parse().map(Endpoint::Node).map_err(|_| bad());
    }
    let (sw, port) = s
        .strip_prefix('s')
        .and_then(|r| r.split_once(':'))
        .ok_or_else(bad)?;
    Ok(Endpoint::Switch {
        sw: sw.parse().map_err(|_| bad())?,
        port: port.parse().map_err(|_| bad())?,
    })
}

impl Scenario {
    /// Reads a scenario from `path`, applying `overrides` (`key=value`).
    pub fn load(path: &str, overrides: &[String]) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            at: path.to_string(),
            key: None,
            message: format!("cannot read: {e}"),
        })?;
        Self::from_text(path, &text, overrides)
    }

    /// Reads a scenario from its text.
    pub fn from_text(path: &str, text: &str, overrides: &[String]) -> Result<Self, ScenarioError> {
        let mut doc = Document::parse(path, text)?;
        for o in overrides {
            doc.set(o)?;
        }
        let rate = match doc.str("link.rate")? {
            Some(r) => unit(&doc, "link.rate", TimeBase::parse_rate(&r))?,
            None => 100.0,
        };
        if rate <= 0.0 {
            return Err(doc.error("link.rate", "must be above zero"));
        }
        let flit_bytes = match doc.str("link.flit")? {
            Some(f) => {
                let one = TimeBase {
                    flit_bytes: 1,
                    link_gbps: rate,
                };
                unit(&doc, "link.flit", one.flits(&f))?
            }
            None => 64,
        };
        if !(1..=4096).contains(&flit_bytes) {
            return Err(doc.error("link.flit", "a flit is 1 B to 4 KB"));
        }
        let tb = TimeBase {
            flit_bytes: flit_bytes as u32,
            link_gbps: rate,
        };
        let r = Reader { doc: &doc, tb };

        let name = doc.str("name")?.unwrap_or_else(|| {
            std::path::Path::new(path)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        let description = doc.str("description")?.unwrap_or_default();
        let seed = doc.uint("seed")?.unwrap_or(1);
        let sim_cycles = r.time_required("sim_time")?;
        if sim_cycles == 0 {
            return Err(doc.error("sim_time", "must be at least one cycle"));
        }
        let bin_cycles = r.time("bin", "10us")?.max(1);

        let routing_name = doc.str("routing")?.unwrap_or_else(|| "arn_afi".into());
        let routing = RoutingMode::ALL
            .into_iter()
            .find(|m| m.name() == routing_name)
            .ok_or_else(|| {
                doc.error(
                    "routing",
                    format!("`{routing_name}` is not one of dmodk, oblivious, adaptive_th, adaptive_th_afi, arn, arn_afi"),
                )
            })?;

        // Topology.
        let kind = doc
            .str("topology.kind")?
            .ok_or_else(|| doc.error("topology.kind", "missing (rlft, kary_ntree or custom)"))?;
        let topology = match kind.as_str() {
            "rlft" => {
                let p = r.uint_in("topology.ports", None, 2, 64)?;
                if p % 2 == 1 {
                    return Err(doc.error(
                        "topology.ports",
                        format!("{p}: a real-life fat tree needs an even radix"),
                    ));
                }
                let n = r.uint_in("topology.stages", None, 1, 4)?;
                let nodes = 2 * (p / 2).pow(n as u32);
                if nodes > 32_768 {
                    return Err(doc.error(
                        "topology.ports",
                        format!("{nodes} end nodes is beyond 32768 (16-bit LIDs)"),
                    ));
                }
                Topology::rlft(p as u32, n as u32)
            }
            "kary_ntree" => {
                let k = r.uint_in("topology.k", None, 1, 32)?;
                let n = r.uint_in("topology.stages", None, 1, 6)?;
                if k.pow(n as u32) > 32_768 {
                    return Err(doc.error("topology.k", "more than 32768 end nodes"));
                }
                Topology::kary_ntree(k as u32, n as u32)
            }
            "custom" => {
                let nodes = r.uint_in("topology.nodes", None, 1, 32_768)? as u32;
                let mut switches = Vec::new();
                for i in 0..doc.table_count("topology.switch") {
                    let k = |f: &str| format!("topology.switch[{i}].{f}");
                    let ports = r.uint_in(&k("ports"), None, 1, 64)? as u16;
                    let stage = r.uint_in(&k("stage"), Some(0), 0, 15)? as u8;
                    let mut up = 0u64;
                    for p in doc.uints(&k("up"))?.unwrap_or_default() {
                        if p >= ports as u64 {
                            return Err(
                                doc.error(&k("up"), format!("port {p} of a {ports}-port switch"))
                            );
                        }
                        up |= 1 << p;
                    }
                    switches.push(SwitchSpec {
                        ports,
                        stage,
                        up_ports: up,
                    });
                }
                let mut links = Vec::new();
                for i in 0..doc.table_count("topology.link") {
                    let a = endpoint(&doc, &format!("topology.link[{i}].a"))?;
                    let b = endpoint(&doc, &format!("topology.link[{i}].b"))?;
                    for (e, f) in [(a, "a"), (b, "b")] {
                        let key = format!("topology.link[{i}].{f}");
                        match e {
                            Endpoint::Node(n) if n >= nodes => {
                                return Err(doc.error(&key, format!("node {n} does not exist")));
                            }
                            Endpoint::Switch { sw, port }
                                if (sw as usize) >= switches.len()
                                    || port >= switches[sw as usize].ports =>
                            {
                                return Err(doc.error(
                                    &key,
                                    format!("switch {sw} port {port} does not exist"),
                                ));
                            }
                            _ => {}
                        }
                    }
                    links.push((a, b));
                }
                Topology {
                    nodes,
                    switches,
                    links,
                    xgft: None,
                }
            }
            other => {
                return Err(doc.error(
                    "topology.kind",
                    format!("`{other}` is not rlft, kary_ntree or custom"),
                ));
            }
        };
        let nodes = topology.nodes;

        let queuing_name = doc.str("queuing")?.unwrap_or_else(|| "1q".into());
        let nodes_per_leaf = topology.xgft.as_ref().map_or(1, |(m, _)| m[0]);
        let queuing = match queuing_name.as_str() {
            "1q" => QueuingScheme::OneQ,
            "dbbm" => QueuingScheme::Dbbm { vcs: 3 },
            "vftree" => QueuingScheme::VFtree {
                vcs: 3,
                nodes_per_leaf,
            },
            "flow2sl" => QueuingScheme::Flow2Sl { vcs: 3, nodes },
            other => {
                return Err(doc.error(
                    "queuing",
                    format!("`{other}` is not one of 1q, dbbm, vftree, flow2sl"),
                ));
            }
        };

        // Links.
        let latency = if doc.has("link.latency") {
            r.time("link.latency", "30ns")?.max(1)
        } else {
            let m = doc.number("link.length")?.unwrap_or(5.0);
            let per = doc.number("link.ns_per_metre")?.unwrap_or(6.0);
            if m < 0.0 || per < 0.0 {
                return Err(doc.error("link.length", "must not be negative"));
            }
            tb.cable_cycles(m, per)
        };
        if latency > 1_000_000 {
            return Err(doc.error(
                "link.latency",
                format!("{latency} cycles is beyond a million"),
            ));
        }

        // Switch.
        let mtu = r.size("switch.mtu", "4KB")?;
        if !(1..=4096).contains(&mtu) {
            return Err(doc.error(
                "switch.mtu",
                format!("{mtu} flits: an MTU is 1 to 4096 flits"),
            ));
        }
        let buffer = r.size("switch.buffer", "344KB")?;
        let probe = SwitchParams::with_paper_ratios(routing, 1, 1);
        let vcs = (queuing.regular_vcs() + probe.routing.afi() as usize) as u64;
        let vc_cap = buffer / vcs;
        if vc_cap < mtu {
            return Err(doc.error("switch.buffer", format!("{buffer} flits over {vcs} VCs leaves {vc_cap} per VC, less than one MTU ({mtu})")));
        }
        if vc_cap > 65_535 {
            return Err(doc.error(
                "switch.buffer",
                format!("{vc_cap} flits per VC is beyond the 16-bit counters"),
            ));
        }
        let pct = |p: f64| ((p * vc_cap as f64) / 100.0).floor() as u16;
        let (h, l, f) = (
            r.percent("switch.hcdth", 81.0)?,
            r.percent("switch.lcdth", 63.0)?,
            r.percent("switch.fcth", 78.0)?,
        );
        if l > h {
            return Err(doc.error("switch.lcdth", format!("{l} % is above HCDTh ({h} %)")));
        }
        let crt = r.time("switch.crt", "5ms")?;
        let ttl = r.time("switch.arn_ttl", "1ms")?;
        let gap = r.time("switch.arn_gap", "1us")?;
        let max24 = (1u64 << 24) - 1;
        for (k, v) in [("switch.crt", crt), ("switch.arn_ttl", ttl)] {
            if v == 0 || v > max24 {
                return Err(doc.error(
                    k,
                    format!("{v} cycles: the timer is 24 bits (1 to {max24} cycles)"),
                ));
            }
        }
        let mut switch = SwitchParams {
            routing,
            queuing,
            vc_capacity: vc_cap as u16,
            max_packets: 0, // sized below from the traffic's smallest packet
            lmc: 0,
            arn_entries: r.uint_in("switch.arn_entries", Some(16), 1, 64)? as usize,
            arn_ttl: ttl as u32,
            arn_gap: gap.clamp(1, u32::MAX as u64) as u32,
            hcdth: pct(h),
            lcdth: pct(l),
            fcth: pct(f),
            crt: crt as u32,
            adaptive_threshold: pct(r.percent("switch.adaptive_threshold", 75.0)?),
            adapted_refresh: doc.bool("switch.adapted_refresh")?.unwrap_or(true),
        };
        let node_buffer = if doc.has("node.buffer") {
            r.size("node.buffer", "344KB")?
        } else {
            buffer
        };
        let node_vc = (node_buffer / vcs).min(65_535);
        if node_vc < mtu {
            return Err(doc.error("node.buffer", "less than one MTU per VC"));
        }

        // Traffic.
        let pattern_name = doc.str("traffic.pattern")?.ok_or_else(|| {
            doc.error(
                "traffic.pattern",
                "missing (uniform, h10, h25, h10-4, h25-4 or flows)",
            )
        })?;
        let load = doc.number("traffic.load")?.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&load) {
            return Err(doc.error(
                "traffic.load",
                format!("{load} is not a load between 0 and 1"),
            ));
        }
        let message = r.size(
            "traffic.message",
            &format!("{}B", mtu * tb.flit_bytes as u64),
        )?;
        if message == 0 || message > u32::MAX as u64 {
            return Err(doc.error("traffic.message", "a message is at least one flit"));
        }
        let pattern = match pattern_name.as_str() {
            "uniform" | "rnd" => Pattern::Uniform { load },
            p @ ("h10" | "h25" | "h10-4" | "h25-4") => {
                let fraction = if p.starts_with("h10") { 0.10 } else { 0.25 };
                let count = if p.ends_with("-4") { 4 } else { 1 };
                let hot = match doc.uints("traffic.hot_spots")? {
                    Some(h) => h.into_iter().map(|x| x as u32).collect(),
                    None => paper_hot_spots(nodes, count).ok_or_else(|| {
                        doc.error("traffic.hot_spots", format!("missing: the paper gives hot spots for 432 and 3456 nodes only, this fabric has {nodes}"))
                    })?,
                };
                if let Some(&x) = hot.iter().find(|&&x| x >= nodes) {
                    return Err(doc.error("traffic.hot_spots", format!("node {x} does not exist")));
                }
                Pattern::HotSpot {
                    fraction,
                    hot,
                    start: r.time("traffic.hot_start", "3ms")?,
                    duration: r.time("traffic.hot_duration", "90ms")?,
                    load,
                }
            }
            "flows" => {
                let mut v = Vec::new();
                for i in 0..doc.table_count("traffic.flow") {
                    let k = |f: &str| format!("traffic.flow[{i}].{f}");
                    let rate = doc.number(&k("rate"))?.unwrap_or(1.0);
                    if !(0.0..=1.0).contains(&rate) {
                        return Err(doc.error(&k("rate"), "a rate is 0 to 1 of the link"));
                    }
                    v.push(ExplicitFlow {
                        src: r.uint_in(&k("src"), None, 0, nodes as u64 - 1)? as u32,
                        dst: r.uint_in(&k("dst"), None, 0, nodes as u64 - 1)? as u32,
                        rate,
                        message_flits: r
                            .size(&k("size"), &format!("{}B", mtu * tb.flit_bytes as u64))?
                            .max(1) as u32,
                        start: r.time(&k("start"), "0ns")?,
                        stop: if doc.has(&k("stop")) {
                            r.time(&k("stop"), "0ns")?
                        } else {
                            u64::MAX
                        },
                    });
                }
                if v.is_empty() {
                    return Err(doc.error(
                        "traffic.flow",
                        "pattern `flows` needs at least one [[traffic.flow]]",
                    ));
                }
                Pattern::Explicit(v)
            }
            other => {
                return Err(doc.error(
                    "traffic.pattern",
                    format!("`{other}` is not uniform, h10, h25, h10-4, h25-4 or flows"),
                ));
            }
        };
        let flows = pattern
            .flows(nodes, message as u32, sim_cycles)
            .map_err(|e| doc.error("traffic.pattern", e))?;
        // The smallest packet any flow makes: a message's last piece, or a whole short message.
        let min_packet = flows
            .iter()
            .flatten()
            .map(|f| match f.message_flits as u64 % mtu {
                0 => mtu,
                rest => rest,
            })
            .min()
            .unwrap_or(mtu)
            .max(1) as u16;
        switch.max_packets = packet_slots(vcs as usize, vc_cap as u16, min_packet);
        let watchdog = r.time("watchdog", "1ms")?.max(1);
        // Progress is seen when a packet starts or finishes a hop, so the watchdog must outlast
        // the longest packet.
        let longest = mtu.max(1);
        if watchdog <= 2 * longest {
            return Err(doc.error(
                "watchdog",
                format!("must be longer than two packets ({} cycles)", 2 * longest),
            ));
        }
        let node_consumes_arns = doc.bool("node.consume_arns")?.unwrap_or(true);
        doc.reject_unknown()?;
        let params = FabricParams {
            switch,
            link_latency: latency as u32,
            mtu_flits: mtu as u16,
            node_vc_capacity: node_vc as u16,
            seed,
            watchdog_cycles: watchdog,
            check_order: routing == RoutingMode::DModK,
            node_consumes_arns,
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
            pattern: pattern_name,
            flows,
            doc,
        })
    }
}
