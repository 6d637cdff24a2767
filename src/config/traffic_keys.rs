//! Traffic keys: the pattern, its load and message size, the hot-spot window, explicit flows,
//! and the finite flows of a communication phase (a flow's `bytes`, `permutations`).
//!
//! A message is cut into MTU packets that must all fit the send queue of a queue pair
//! ([`QP_DEPTH`] packets), or the node would never send it. Patterns that draw
//! random destinations need at least two end nodes; bit reversal needs a power-of-two node count.
//! A hot window that starts after the end of the run, a pattern that makes no hot sender, and a
//! flow that never sends load with a warning.

use super::scenario::Reader;
use super::trace_keys::{self, TraceReplay};
use super::units::shown;
use crate::fabric::node::QP_DEPTH;
use crate::traffic::phase::{PhaseFlow, permutation_flows, tags};
use crate::traffic::{ExplicitFlow, Pattern, hot_senders, paper_hot_spots};

/// Most superposed permutations (`traffic.permutations`): each is a flow per node, whose state
/// the node holds for the whole run.
pub const MOST_PERMUTATIONS: u64 = 64;

/// The traffic of a scenario.
pub(super) struct Traffic {
    /// Pattern name as written.
    pub name: String,
    /// The pattern.
    pub pattern: Pattern,
    /// Message size in flits.
    pub message: u64,
    /// The trace the nodes replay (pattern `trace`).
    pub replay: Option<TraceReplay>,
    /// Share of packets whose DLID asks for every routing option (`traffic.adaptive_share`).
    pub adaptive_share: f64,
    /// The finite flows of a communication phase, when there are any.
    pub phase: Option<Vec<PhaseFlow>>,
}

const PATTERNS: &[&str] = &[
    "uniform",
    "rnd",
    "bitrev",
    "hotspot",
    "h10",
    "h25",
    "h10-4",
    "h25-4",
    "flows",
    "permutations",
    "trace",
];
/// The keys of the `permutations` pattern.
const PHASE_KEYS: &[&str] = &["traffic.permutations", "traffic.flow_bytes"];
const HOT_KEYS: &[&str] = &[
    "traffic.hot_share",
    "traffic.hot_spots",
    "traffic.hot_start",
    "traffic.hot_duration",
];

/// A message size of `key` in flits: 1 to what a queue pair's send queue holds.
fn message(r: &Reader, key: &str, mtu: Option<u64>) -> Option<u64> {
    let m = mtu.unwrap_or(64);
    let f = r.size(key, &format!("{}B", m * r.tb.flit_bytes as u64))?;
    let most = QP_DEPTH as u64 * m;
    if f == 0 {
        return r.doc.fail(key, "a message is at least one flit");
    }
    if mtu.is_some() && f > most {
        return r.doc.fail(
            key,
            format!(
                "{f} flits is {} packets of the MTU; a queue pair's send queue holds {QP_DEPTH}, \
                 so a message is at most {most} flits",
                f.div_ceil(m)
            ),
        );
    }
    Some(f)
}

/// A fraction of the link, 0 to 1.
fn fraction(r: &Reader, key: &str, what: &str) -> Option<f64> {
    let v = match r.doc.get(key) {
        None => 1.0,
        Some(_) => r.doc.number(key)?,
    };
    if !(0.0..=1.0).contains(&v) {
        return r
            .doc
            .fail(key, format!("{} is not {what} between 0 and 1", shown(v)));
    }
    Some(v)
}

/// Reads `traffic.*` for a fabric of `nodes` end nodes (unknown when the topology is in error).
pub(super) fn read(
    r: &Reader,
    nodes: Option<u32>,
    mtu: Option<u64>,
    sim: Option<u64>,
    seed: Option<u64>,
) -> Option<Traffic> {
    let doc = r.doc;
    let name = r.choice("traffic.pattern", None, PATTERNS);
    let adaptive_share = fraction(r, "traffic.adaptive_share", "a share");
    if name.as_deref() == Some("trace") {
        // The trace's ranks, and optionally an incast of Bernoulli hot senders beside them.
        let why = "`traffic.pattern` is `trace`";
        for k in ["traffic.load", "traffic.flow"].iter().chain(PHASE_KEYS) {
            doc.ignore(k, why);
        }
        let incast = match doc.has("traffic.incast") {
            // Refused or not, the trace keys are read below, so that they are not unknown.
            true => Some(r.choice("traffic.incast", None, &["h10", "h25", "h10-4", "h25-4"])),
            false => {
                for k in HOT_KEYS.iter().chain(&["traffic.message"]) {
                    doc.ignore(k, "no `traffic.incast`");
                }
                None
            }
        };
        let replay = trace_keys::read(r, nodes, seed);
        let incast = match incast {
            Some(p) => Some(p?),
            None => None,
        };
        let message = match incast {
            Some(_) => message(r, "traffic.message", mtu),
            None => Some(1),
        };
        let pattern = match &incast {
            Some(p) => hot_spot(r, p, nodes, sim, Some(0.0)),
            None => Some(Pattern::Trace),
        };
        return Some(Traffic {
            name: match incast {
                Some(p) => format!("trace+{p}"),
                None => "trace".into(),
            },
            pattern: pattern?,
            message: message?,
            replay: Some(replay?),
            adaptive_share: adaptive_share?,
            phase: None,
        });
    }
    let load = fraction(r, "traffic.load", "a load");
    let message = message(r, "traffic.message", mtu);
    let Some(name) = name else {
        doc.skip(HOT_KEYS);
        doc.skip(&[
            "traffic.flow",
            "traffic.incast",
            "traffic.trace",
            "traffic.mapping",
        ]);
        doc.skip(PHASE_KEYS);
        return None;
    };
    let random = name != "flows" && name != "bitrev";
    if random && let Some(n) = nodes.filter(|&n| n < 2) {
        doc.fail::<()>(
            "traffic.pattern",
            format!("`{name}` draws destinations other than the source: it needs at least 2 end nodes, the fabric has {n}"),
        );
    }
    let why = format!("`traffic.pattern` is `{name}`");
    if name != "flows" {
        doc.ignore("traffic.flow", &why);
    }
    if name != "permutations" {
        for k in PHASE_KEYS {
            doc.ignore(k, &why);
        }
    }
    let mut phase = None;
    // The keys of a trace replay.
    for k in ["traffic.trace", "traffic.mapping", "traffic.incast"] {
        doc.ignore(k, &why);
    }
    let pattern = match name.as_str() {
        "uniform" | "rnd" => {
            for k in HOT_KEYS {
                doc.ignore(k, &why);
            }
            Pattern::Uniform { load: load? }
        }
        "bitrev" => {
            for k in HOT_KEYS {
                doc.ignore(k, &why);
            }
            if let Some(n) = nodes
                && !n.is_power_of_two()
            {
                return doc.fail(
                    "traffic.pattern",
                    format!(
                        "`bitrev` sends node d to the node whose index is d's bits reversed over \
                         log2(nodes) bits: it needs a power-of-two node count, the fabric has {n}"
                    ),
                );
            }
            Pattern::BitReversal { load: load? }
        }
        "flows" => {
            for k in HOT_KEYS {
                doc.ignore(k, &why);
            }
            for k in ["traffic.load", "traffic.message"] {
                if doc.has(k) {
                    doc.warn(
                        k,
                        "ignored: each [[traffic.flow]] has its own `rate` and `size`",
                    );
                }
            }
            let (explicit, finite) = flows(r, nodes, mtu, sim)?;
            phase = (!finite.is_empty()).then_some(finite);
            Pattern::Explicit(explicit)
        }
        "permutations" => {
            for k in HOT_KEYS {
                doc.ignore(k, &why);
            }
            if doc.has("traffic.load") {
                doc.warn(
                    "traffic.load",
                    "ignored: the flows of `permutations` send at line rate",
                );
            }
            phase = Some(permutations(r, nodes, seed, message)?);
            Pattern::Phase
        }
        "hotspot" => {
            for k in ["traffic.hot_start", "traffic.hot_duration"] {
                doc.ignore(k, &why);
            }
            hot_share(r, nodes, seed, load)?
        }
        p => {
            doc.ignore("traffic.hot_share", &why);
            hot_spot(r, p, nodes, sim, load)?
        }
    };
    Some(Traffic {
        name,
        pattern,
        message: message?,
        replay: None,
        adaptive_share: adaptive_share?,
        phase,
    })
}

/// `permutations`: `traffic.permutations` superposed random permutations of the nodes, drawn from
/// the scenario's seed, each flow `traffic.flow_bytes` in messages of `message` flits.
fn permutations(
    r: &Reader,
    nodes: Option<u32>,
    seed: Option<u64>,
    message: Option<u64>,
) -> Option<Vec<PhaseFlow>> {
    let n = r.uint_in(
        "traffic.permutations",
        Some(1),
        (1, MOST_PERMUTATIONS),
        "superposed permutations: a flow per node each",
    );
    let bytes = r.flow_bytes(
        "traffic.flow_bytes",
        "the bytes each flow of the phase carries, such as `1MB`",
    );
    let flits = bytes?.div_ceil(r.tb.flit_bytes as u64);
    Some(permutation_flows(
        nodes?,
        n? as u32,
        seed?,
        (bytes?, flits),
        message? as u32,
    ))
}

/// `hotspot`: `traffic.hot_share` of every node's load to one hot node (`traffic.hot_spots`, one
/// node; drawn from the scenario's seed when absent), the rest uniform.
fn hot_share(
    r: &Reader,
    nodes: Option<u32>,
    seed: Option<u64>,
    load: Option<f64>,
) -> Option<Pattern> {
    let doc = r.doc;
    if !doc.has("traffic.hot_share") {
        doc.missing(
            "traffic.hot_share",
            "the share of the traffic sent to the hot node, 0 to 1",
        );
        return None;
    }
    let share = fraction(r, "traffic.hot_share", "a share");
    let hot = match (doc.uints("traffic.hot_spots"), nodes) {
        (Some(h), Some(n)) => match h.as_slice() {
            [x] if *x < n as u64 => Some(*x as u32),
            [x] => doc.fail(
                "traffic.hot_spots",
                format!("node {x} does not exist (the fabric has {n})"),
            ),
            _ => doc.fail(
                "traffic.hot_spots",
                format!("`hotspot` has one hot node, not {}", h.len()),
            ),
        },
        (None, Some(n)) if !doc.has("traffic.hot_spots") => {
            Some(crate::blocks::rng::SplitMix64::new(seed?).below(n as u64) as u32)
        }
        _ => None,
    };
    Some(Pattern::HotShare {
        load: load?,
        share: share?,
        hot: hot?,
    })
}

/// A hot-spot pattern `p` (`h10`, `h25`, `h10-4`, `h25-4`): its hot spots and window from the
/// `traffic.hot_*` keys, the uniform traffic at `load`.
fn hot_spot(
    r: &Reader,
    p: &str,
    nodes: Option<u32>,
    sim: Option<u64>,
    load: Option<f64>,
) -> Option<Pattern> {
    let doc = r.doc;
    let fraction = if p.starts_with("h10") { 0.10 } else { 0.25 };
    let count = if p.ends_with("-4") { 4 } else { 1 };
    let start = r.time("traffic.hot_start", "3ms");
    let duration = r.time("traffic.hot_duration", "90ms");
    let hot = match (doc.uints("traffic.hot_spots"), nodes) {
        (Some(h), Some(n)) => {
            if h.is_empty() {
                doc.fail::<()>("traffic.hot_spots", "a hot-spot pattern needs at least one hot spot");
            }
            if let Some(d) = h.iter().enumerate().find_map(|(i, x)| h[..i].contains(x).then_some(x)) {
                doc.warn(
                    "traffic.hot_spots",
                    format!("node {d} is listed more than once: its senders are dealt to it once per listing"),
                );
            }
            match h.iter().find(|&&x| x >= n as u64) {
                Some(x) => doc.fail(
                    "traffic.hot_spots",
                    format!("node {x} does not exist (the fabric has {n})"),
                ),
                None => Some(h.into_iter().map(|x| x as u32).collect::<Vec<_>>()),
            }
        }
        (None, Some(n)) if !doc.has("traffic.hot_spots") => paper_hot_spots(n, count)
            .or_else(|| doc.fail("traffic.hot_spots", format!("missing: the paper gives hot spots for 432 and 3456 nodes only, this fabric has {n}"))),
        _ => None,
    };
    if let (Some(s), Some(sim)) = (start, sim)
        && s >= sim
    {
        doc.warn(
            "traffic.hot_start",
            format!("the hot window starts at cycle {s}, after the run ends ({sim} cycles): no hot traffic"),
        );
    }
    if duration == Some(0) {
        doc.warn("traffic.hot_duration", "0 cycles: no hot traffic");
    }
    if let (Some(h), Some(n)) = (&hot, nodes)
        && !h.is_empty()
        && hot_senders(n, fraction, h).is_empty()
    {
        doc.warn(
            "traffic.pattern",
            format!("`{p}` on {n} nodes makes no hot sender: no hot traffic"),
        );
    }
    Some(Pattern::HotSpot {
        fraction,
        hot: hot?,
        start: start?,
        duration: duration?,
        load: load?,
    })
}

/// `[[traffic.flow]]`: each flow's source and destination (two different nodes), rate, message
/// size, start and stop; a flow with `bytes` is a finite flow of the phase (no `stop`, a rate
/// above 0).
fn flows(
    r: &Reader,
    nodes: Option<u32>,
    mtu: Option<u64>,
    sim: Option<u64>,
) -> Option<(Vec<ExplicitFlow>, Vec<PhaseFlow>)> {
    let doc = r.doc;
    let count = doc.table_count("traffic.flow");
    if count == 0 {
        return doc.fail(
            "traffic.flow",
            "pattern `flows` needs at least one [[traffic.flow]]",
        );
    }
    let last = nodes.map_or(u64::MAX, |n| n as u64 - 1);
    let mut v = Vec::with_capacity(count);
    let mut finite = Vec::new();
    let mut ok = true;
    for i in 0..count {
        let k = |f: &str| format!("traffic.flow[{i}].{f}");
        let rate = fraction(r, &k("rate"), "a rate (of the link)");
        let src = r.uint_in(&k("src"), None, (0, last), "the fabric's end nodes");
        let dst = r.uint_in(&k("dst"), None, (0, last), "the fabric's end nodes");
        if let (Some(s), Some(d)) = (src, dst)
            && s == d
        {
            doc.fail::<()>(&k("dst"), format!("flow {s} -> {d} sends to itself"));
        }
        let size = message(r, &k("size"), mtu);
        let start = r.time(&k("start"), "0ns");
        if doc.has(&k("bytes")) {
            let bytes = r.flow_bytes(&k("bytes"), "");
            if doc.has(&k("stop")) {
                // Read, so that it is not also unknown.
                let _ = r.time(&k("stop"), "0ns");
                doc.fail::<()>(
                    &k("stop"),
                    "a flow of `bytes` ends when its last byte is delivered: it has no `stop`",
                );
            }
            if rate == Some(0.0) {
                doc.fail::<()>(
                    &k("rate"),
                    "0: a flow of `bytes` at rate 0 would never end (a rate above 0, to 1)",
                );
            }
            if let (Some(a), Some(sim)) = (start, sim)
                && a >= sim
            {
                doc.warn(
                    &k("start"),
                    format!("the flow starts at cycle {a}, after the run ends ({sim} cycles): it never ends"),
                );
            }
            match (rate, src, dst, size, start, bytes) {
                (Some(rate), Some(src), Some(dst), Some(size), Some(start), Some(bytes))
                    if rate > 0.0 && src != dst && !doc.has(&k("stop")) =>
                {
                    finite.push(PhaseFlow {
                        src: src as u32,
                        dst: dst as u32,
                        bytes,
                        flits: bytes.div_ceil(r.tb.flit_bytes as u64),
                        message_flits: size as u32,
                        rate,
                        start,
                    })
                }
                _ => ok = false,
            }
            continue;
        }
        let stop = if doc.has(&k("stop")) {
            r.time(&k("stop"), "0ns")
        } else {
            Some(u64::MAX)
        };
        if rate == Some(0.0) {
            doc.warn(&k("rate"), "0: the flow never sends");
        }
        if let (Some(a), Some(b)) = (start, stop)
            && b <= a
        {
            doc.warn(
                &k("stop"),
                format!("the flow stops (cycle {b}) before it starts (cycle {a}): it never sends"),
            );
        } else if let (Some(a), Some(sim)) = (start, sim)
            && a >= sim
        {
            doc.warn(
                &k("start"),
                format!("the flow starts at cycle {a}, after the run ends ({sim} cycles): it never sends"),
            );
        }
        match (rate, src, dst, size, start, stop) {
            (Some(rate), Some(src), Some(dst), Some(size), Some(start), Some(stop)) => {
                v.push(ExplicitFlow {
                    src: src as u32,
                    dst: dst as u32,
                    rate,
                    message_flits: size as u32,
                    start,
                    stop,
                })
            }
            _ => ok = false,
        }
    }
    if let Some(n) = nodes
        && ok
        && tags(&finite, n).is_none()
    {
        return doc.fail(
            "traffic.flow",
            format!("a node receives more than {} flows of `bytes`", u16::MAX),
        );
    }
    ok.then_some((v, finite))
}
