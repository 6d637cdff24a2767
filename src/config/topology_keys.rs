//! Topology keys: fat trees and Dragonflies by their shape, random irregular fabrics by shape and
//! seed, custom topologies cable by cable.
//!
//! A topology that loads is one the subnet manager can program and the fabric can build: at
//! most [`MAX_NODES`] end nodes (one unicast LID each), switches of 1 to 64 ports, and for
//! custom topologies every switch port and every node cabled exactly once, no cable from a
//! switch to itself or from a node to a node, and every switch and node connected to every
//! node (minimal routing needs a path to each destination). Each error names the line of the
//! offending `[[topology.switch]]` or `[[topology.link]]`. The checks are linear in the number
//! of cables.

use super::scenario::Reader;
use crate::fabric::subnet_manager::RoutingEngine;
use crate::fabric::topology::{DragonflyShape, Endpoint, IrregularShape, SwitchSpec, Topology};
use std::collections::HashMap;

/// Most end nodes of a fabric: each needs at least one of InfiniBand's unicast LIDs (0 to
/// 0xBFFF), and a switch's LFT holds one row per destination.
pub const MAX_NODES: u64 = crate::fabric::subnet_manager::UNICAST_LIDS as u64;

/// Most ports of a switch: the up-port mask is 64 bits and the radix of the model is 64.
pub const MAX_PORTS: u64 = 64;

/// Most switches of a custom fabric: 2^17 (131,072), room for the fabric of the most switches
/// the other kinds build (the 6-ary 6-tree's 46,656) written cable by cable, or a chain of
/// 100,000 two-port switches. Cables are bounded by the scenario file
/// ([`MAX_SCENARIO_BYTES`](super::scenario::MAX_SCENARIO_BYTES)).
pub const MAX_CUSTOM_SWITCHES: usize = 1 << 17;

const PORTS_WHY: &str = "ports of a switch, 64 at most";

fn lft_limit(r: &Reader, key: &str, shape: String, nodes: u64) -> Option<()> {
    if nodes > MAX_NODES {
        return r.doc.fail(
            key,
            format!(
                "{shape} give {nodes} end nodes; the unicast LIDs (0 to 49,151) hold \
                 {MAX_NODES} end nodes"
            ),
        );
    }
    Some(())
}

/// Reads `topology.*`. `None` when anything in it is in error (the errors are recorded).
/// The keys of every topology kind (each kind reads its own, and ignores the others').
const KIND_KEYS: &[&str] = &[
    "topology.ports",
    "topology.stages",
    "topology.k",
    "topology.horizontal",
    "topology.top_switches",
    "topology.a",
    "topology.h",
    "topology.p",
    "topology.switches",
    "topology.links",
    "topology.nodes_per_switch",
    "topology.seed",
    "topology.nodes",
    "topology.switch",
    "topology.link",
];

pub(super) fn read(r: &Reader) -> Option<Topology> {
    let doc = r.doc;
    let kinds = ["rlft", "kary_ntree", "dragonfly", "irregular", "custom"];
    let Some(kind) = r.choice("topology.kind", None, &kinds) else {
        doc.skip(KIND_KEYS);
        return None;
    };
    // Each kind's own keys; the others' are ignored with a warning.
    let own: &[&str] = match kind.as_str() {
        "rlft" => &["topology.ports", "topology.stages", "topology.top_switches"],
        "kary_ntree" => &[
            "topology.k",
            "topology.stages",
            "topology.horizontal",
            "topology.top_switches",
        ],
        "dragonfly" => &["topology.a", "topology.h", "topology.p"],
        "irregular" => &[
            "topology.switches",
            "topology.links",
            "topology.nodes_per_switch",
            "topology.seed",
        ],
        _ => &["topology.nodes", "topology.switch", "topology.link"],
    };
    for &k in KIND_KEYS {
        if !own.contains(&k) {
            doc.ignore(k, &format!("`topology.kind` is `{kind}`"));
        }
    }
    match kind.as_str() {
        "rlft" => {
            let p = r
                .uint_in("topology.ports", None, (2, MAX_PORTS), PORTS_WHY)
                .filter(|p| {
                    doc.holds("topology.ports", p % 2 == 0, || {
                        format!("{p}: a real-life fat tree needs an even radix")
                    })
                });
            let n = r.uint_in("topology.stages", None, (1, 4), "the model's RLFTs");
            let (p, n) = (p?, n?);
            let nodes = 2 * (p / 2).pow(n as u32);
            lft_limit(
                r,
                "topology.ports",
                format!("{p} ports and {n} stages"),
                nodes,
            )?;
            let t = Topology::rlft(p as u32, n as u32);
            slimmed(r, t, (p / 2) as u32)
        }
        "kary_ntree" => {
            let k = r.uint_in(
                "topology.k",
                None,
                (1, MAX_PORTS / 2),
                "2k ports, 64 at most",
            );
            let n = r.uint_in("topology.stages", None, (1, 6), "the model's k-ary n-trees");
            let (k, n) = (k?, n?);
            lft_limit(
                r,
                "topology.k",
                format!("k = {k} and {n} stages"),
                k.pow(n as u32),
            )?;
            // A chain's inner switch has 2k + 2 horizontal ports.
            let most = (MAX_PORTS - 2 * k) / 2;
            let why =
                format!("an inner switch of a chain has 2k + 2 x width ports, {MAX_PORTS} at most");
            let h = r.uint_in("topology.horizontal", Some(0), (0, most), &why)?;
            let t = slimmed(r, Topology::kary_ntree(k as u32, n as u32), k as u32)?;
            Some(t.with_horizontal(h as u32))
        }
        "dragonfly" => dragonfly(r),
        "irregular" => irregular(r),
        _ => custom(r),
    }
}

/// `topology.top_switches`: a fat tree whose top level keeps `T` of its `K^(n-1)` switches (tree
/// slimming): each switch of the level below keeps `T / K^(n-2)` of its `K` up ports, so `T` is
/// a multiple of `K^(n-2)`, from one to `K` of them. `K` is the up ports of a switch below the
/// top.
fn slimmed(r: &Reader, t: Topology, k: u32) -> Option<Topology> {
    let Some((m, mut w)) = t.xgft.clone() else {
        return Some(t);
    };
    let n = w.len();
    let full: u64 = w.iter().map(|&x| x as u64).product();
    if !r.doc.has("topology.top_switches") {
        return Some(t);
    }
    if n < 2 {
        r.doc.fail::<()>(
            "topology.top_switches",
            "a one-stage tree has a single switch; nothing to slim",
        );
        return None;
    }
    let group = full / k as u64;
    let why = format!(
        "a multiple of {group} (K^(n-2), K = {k}), up to {full}: every switch below the top keeps the same number of up ports"
    );
    let top = r.uint_in("topology.top_switches", None, (group, full), &why)?;
    if !r.doc.holds("topology.top_switches", top % group == 0, || {
        format!("{top}: not a multiple of {group} ({why})")
    }) {
        return None;
    }
    w[n - 1] = (top / group) as u32;
    Some(Topology::xgft(&m, &w))
}

/// `kind = "dragonfly"`: `a`, `h`, `p`.
fn dragonfly(r: &Reader) -> Option<Topology> {
    let why = "a router has p + a - 1 + h ports, 64 at most";
    let a = r.uint_in("topology.a", None, (1, MAX_PORTS), why);
    let h = r.uint_in("topology.h", None, (1, MAX_PORTS), why);
    let p = r.uint_in("topology.p", None, (1, MAX_PORTS), why);
    let shape = DragonflyShape {
        a: a? as u32,
        h: h? as u32,
        p: p? as u32,
    };
    let radix = shape.radix() as u64;
    if radix > MAX_PORTS {
        return r.doc.fail(
            "topology.a",
            format!(
                "a = {}, h = {}, p = {} give routers of {radix} ports; {why}",
                shape.a, shape.h, shape.p
            ),
        );
    }
    let nodes = (shape.a as u64 * shape.h as u64 + 1) * shape.a as u64 * shape.p as u64;
    lft_limit(
        r,
        "topology.a",
        format!("a = {}, h = {}, p = {}", shape.a, shape.h, shape.p),
        nodes,
    )?;
    Some(Topology::dragonfly(shape))
}

/// `kind = "irregular"`: `switches`, `links`, `nodes_per_switch` (4), `seed` (1).
fn irregular(r: &Reader) -> Option<Topology> {
    let switches = r.uint_in("topology.switches", None, (2, 4096), "2 to 4,096 switches");
    let links = r.uint_in(
        "topology.links",
        None,
        (1, MAX_PORTS - 1),
        "links per switch below 64",
    );
    let per = r.uint_in(
        "topology.nodes_per_switch",
        Some(4),
        (1, MAX_PORTS - 1),
        "nodes per switch below 64",
    );
    let seed = r.uint_in("topology.seed", Some(1), (0, u64::MAX), "a seed");
    let shape = IrregularShape {
        switches: switches? as u32,
        links: links? as u32,
        nodes_per_switch: per? as u32,
        seed: seed?,
    };
    lft_limit(
        r,
        "topology.switches",
        format!(
            "{} switches of {} nodes",
            shape.switches, shape.nodes_per_switch
        ),
        shape.switches as u64 * shape.nodes_per_switch as u64,
    )?;
    Topology::irregular(shape)
        .map_err(|e| r.doc.fail::<()>("topology.links", e))
        .ok()
}

fn name(e: Endpoint) -> String {
    match e {
        Endpoint::Node(n) => format!("n{n}"),
        Endpoint::Switch { sw, port } => format!("s{sw}:{port}"),
    }
}

fn endpoint(r: &Reader, key: &str) -> Option<Endpoint> {
    let doc = r.doc;
    if !doc.has(key) {
        doc.missing(key, "an endpoint such as `n3` or `s1:2`");
        return None;
    }
    let s = doc.str(key)?;
    // An index as written in an endpoint: decimal digits, no sign, no leading zero.
    fn index<T: std::str::FromStr>(d: &str) -> Option<T> {
        let plain = !d.is_empty()
            && d.bytes().all(|b| b.is_ascii_digit())
            && (d == "0" || !d.starts_with('0'));
        plain.then(|| d.parse().ok()).flatten()
    }
    let parsed = if let Some(n) = s.strip_prefix('n') {
        index(n).map(Endpoint::Node)
    } else {
        s.strip_prefix('s')
            .and_then(|x| x.split_once(':'))
            .and_then(|(sw, port)| {
                Some(Endpoint::Switch {
                    sw: index(sw)?,
                    port: index(port)?,
                })
            })
    };
    parsed.or_else(|| doc.fail(key, format!("`{s}` is not an endpoint (`n3` or `s1:2`)")))
}

/// Union-find root of `v`, with path halving.
fn root(parent: &mut [usize], mut v: usize) -> usize {
    while parent[v] != v {
        parent[v] = parent[parent[v]];
        v = parent[v];
    }
    v
}

/// A list of numbers for a message: the first few, and how many in all.
fn few(v: &[u64]) -> String {
    let s: Vec<String> = v.iter().take(8).map(|x| x.to_string()).collect();
    if v.len() > 8 {
        format!("{} … ({} in all)", s.join(", "), v.len())
    } else {
        s.join(", ")
    }
}

fn custom(r: &Reader) -> Option<Topology> {
    let doc = r.doc;
    let before = doc.error_count();
    let nodes = r.uint_in(
        "topology.nodes",
        None,
        (1, MAX_NODES),
        "the unicast LIDs (0 to 49,151) hold 49,152 end nodes",
    );
    let mut switches = Vec::new();
    let listed = doc.table_count("topology.switch");
    if listed > MAX_CUSTOM_SWITCHES {
        return doc.fail(
            &format!("topology.switch[{MAX_CUSTOM_SWITCHES}]"),
            format!(
                "{listed} `[[topology.switch]]`; a custom fabric has at most \
                 {MAX_CUSTOM_SWITCHES} switches (the 6-ary 6-tree has 46,656)"
            ),
        );
    }
    for i in 0..listed {
        let k = |f: &str| format!("topology.switch[{i}].{f}");
        let ports = r.uint_in(&k("ports"), None, (1, MAX_PORTS), PORTS_WHY);
        let stage = r.uint_in(&k("stage"), Some(0), (0, 15), "stages 0 to 15");
        let mut up = 0u64;
        for p in doc.uints(&k("up")).unwrap_or_default() {
            if p < MAX_PORTS && up >> p & 1 == 1 {
                doc.warn(&k("up"), format!("port {p} is listed more than once"));
            }
            match ports {
                Some(n) if p >= n => {
                    doc.fail::<()>(&k("up"), format!("port {p} of a {n}-port switch"));
                }
                _ if p >= MAX_PORTS => {}
                _ => up |= 1 << p,
            }
        }
        switches.push(SwitchSpec {
            ports: ports.unwrap_or(0) as u16,
            stage: stage.unwrap_or(0) as u8,
            up_ports: up,
        });
    }
    let ns = switches.len();
    let node_count = nodes.unwrap_or(0) as usize;
    let links_n = doc.table_count("topology.link");
    let mut seen: HashMap<Endpoint, usize> = HashMap::with_capacity(2 * links_n);
    let mut links = Vec::with_capacity(links_n);
    for i in 0..links_n {
        let link = format!("topology.link[{i}]");
        let keys = [format!("{link}.a"), format!("{link}.b")];
        let ends = keys.clone().map(|k| {
            let e = endpoint(r, &k)?;
            match e {
                // With `topology.nodes` in error, nodes are not checked (nor kept).
                Endpoint::Node(n) if n as usize >= node_count => nodes.and_then(|_| {
                    doc.fail(
                        &k,
                        format!("node {n} does not exist (`topology.nodes` = {node_count})"),
                    )
                }),
                Endpoint::Switch { sw, .. } if sw as usize >= ns => doc.fail(
                    &k,
                    format!("switch {sw} does not exist ({ns} `[[topology.switch]]`)"),
                ),
                Endpoint::Switch { sw, port } if port >= switches[sw as usize].ports => {
                    let p = switches[sw as usize].ports;
                    (p == 0).then_some(e).or_else(|| {
                        doc.fail(
                            &k,
                            format!("switch {sw} has ports 0 to {}, not {port}", p - 1),
                        )
                    })
                }
                _ => Some(e),
            }
        });
        let [Some(a), Some(b)] = ends else { continue };
        match (a, b) {
            (Endpoint::Node(x), Endpoint::Node(y)) => {
                doc.fail::<()>(
                    &link,
                    format!("cables node {x} to node {y}; a node is cabled to a switch port"),
                );
                continue;
            }
            (Endpoint::Switch { sw: x, .. }, Endpoint::Switch { sw: y, .. }) if x == y => {
                doc.fail::<()>(
                    &link,
                    format!(
                        "a self-loop: both ends ({}, {}) are on switch {x}",
                        name(a),
                        name(b)
                    ),
                );
                continue;
            }
            _ => {}
        }
        let mut twice = false;
        for (e, k) in [(a, &keys[0]), (b, &keys[1])] {
            if let Some(&j) = seen.get(&e) {
                let first = format!("topology.link[{j}]");
                doc.fail::<()>(
                    k,
                    format!(
                        "{} is cabled twice (already by `{first}` at {})",
                        name(e),
                        doc.place(&first)
                    ),
                );
                twice = true;
            }
        }
        if twice {
            continue;
        }
        seen.insert(a, i);
        seen.insert(b, i);
        links.push((a, b));
    }
    // Every port and every node cabled.
    for (i, s) in switches.iter().enumerate() {
        let open: Vec<u64> = (0..s.ports)
            .filter(|&port| !seen.contains_key(&Endpoint::Switch { sw: i as u32, port }))
            .map(u64::from)
            .collect();
        if !open.is_empty() {
            doc.fail::<()>(
                &format!("topology.switch[{i}]"),
                format!(
                    "port {} not cabled; every port of a switch is cabled",
                    few(&open)
                ),
            );
        }
    }
    let open: Vec<u64> = (0..node_count as u64)
        .filter(|&n| !seen.contains_key(&Endpoint::Node(n as u32)))
        .collect();
    if !open.is_empty() {
        doc.fail::<()>(
            "topology.nodes",
            format!("node {} not cabled to any switch", few(&open)),
        );
    }
    // Connected: every switch and node reaches every node.
    let vertex = |e: Endpoint| match e {
        Endpoint::Switch { sw, .. } => sw as usize,
        Endpoint::Node(n) => ns + n as usize,
    };
    let mut parent: Vec<usize> = (0..ns + node_count).collect();
    for &(a, b) in &links {
        let (x, y) = (root(&mut parent, vertex(a)), root(&mut parent, vertex(b)));
        parent[x] = y;
    }
    let first_node = (0..node_count).find(|&n| seen.contains_key(&Endpoint::Node(n as u32)));
    if let Some(n0) = first_node {
        let home = root(&mut parent, ns + n0);
        let mut reported = std::collections::HashSet::new();
        for v in 0..ns + node_count {
            let c = root(&mut parent, v);
            if c == home || !reported.insert(c) {
                continue;
            }
            let (key, what) = if v < ns {
                (format!("topology.switch[{v}]"), format!("switch {v}"))
            } else {
                ("topology.nodes".to_string(), format!("node {}", v - ns))
            };
            if v >= ns && !seen.contains_key(&Endpoint::Node((v - ns) as u32)) {
                continue; // already reported as not cabled
            }
            doc.fail::<()>(
                &key,
                format!("{what} cannot reach node {n0}: the cables make more than one network"),
            );
        }
    }
    if doc.error_count() != before {
        return None;
    }
    Some(Topology {
        nodes: nodes? as u32,
        switches,
        links,
        xgft: None,
        dragonfly: None,
        horizontal: 0,
    })
}

/// `routing_engine`: `ftree` (fat trees only; their default), `random` (with `routing_seed`) and
/// `colored` (fat trees only), `minhop` (the default elsewhere),
/// `updn`, `dfly_min`, `dfly_vl_hops`, `d3r_2vl` or `d3r_3vl` (Dragonflies only), `lash`,
/// `dfsssp` or `fa_updn` (with `fa_options`, 2 by default). An engine in error is recorded and
/// the default returned.
pub(super) fn routing_engine(r: &Reader, topology: Option<&Topology>) -> RoutingEngine {
    let default = topology.map_or(RoutingEngine::Minhop, RoutingEngine::default_for);
    if !r.doc.has("routing_engine") {
        r.doc
            .ignore("fa_options", "`routing_engine` is not `fa_updn`");
        return default;
    }
    let names: Vec<&str> = RoutingEngine::ALL.iter().map(|e| e.name()).collect();
    let Some(mut engine) = r
        .choice("routing_engine", None, &names)
        .and_then(|n| RoutingEngine::named(&n))
    else {
        r.doc.ignore("fa_options", "`routing_engine` is in error");
        return default;
    };
    if let RoutingEngine::Random { seed } = &mut engine {
        let table = r.uint_in(
            "routing_seed",
            Some(1),
            (0, u64::MAX),
            "the seed of the random table",
        );
        *seed = table.unwrap_or(1);
    } else {
        r.doc
            .ignore("routing_seed", "`routing_engine` is not `random`");
    }
    if let RoutingEngine::FaUpdn { options } = &mut engine {
        let mr = r.uint_in(
            "fa_options",
            Some(2),
            (2, 16),
            "the escape route and 1 to 15 adaptive ones",
        );
        *options = mr.unwrap_or(2) as u8;
    } else {
        r.doc
            .ignore("fa_options", "`routing_engine` is not `fa_updn`");
    }
    let fat_tree = topology.is_none_or(|t| t.xgft.is_some());
    let fat_tree_only = matches!(
        engine,
        RoutingEngine::Ftree | RoutingEngine::Random { .. } | RoutingEngine::Colored
    );
    if fat_tree_only && !fat_tree {
        r.doc.fail::<()>(
            "routing_engine",
            &format!(
                "`{}` routes fat trees (`topology.kind` `rlft` or `kary_ntree`); use `minhop` or `updn`",
                engine.name()
            ),
        );
        return default;
    }
    let dragonfly = topology.is_none_or(|t| t.dragonfly.is_some());
    let orders_groups = matches!(
        engine,
        RoutingEngine::DflyMin
            | RoutingEngine::DflyVlHops
            | RoutingEngine::D3r2Vl
            | RoutingEngine::D3r3Vl
    );
    if orders_groups && !dragonfly {
        r.doc.fail::<()>(
            "routing_engine",
            format!(
                "`{}` routes Dragonflies (`topology.kind` `dragonfly`); use `dfsssp`, `lash`, `minhop` or `updn`",
                engine.name()
            ),
        );
        return default;
    }
    engine
}

/// The VLs `engine` layers its paths over (`None`: it leaves the VLs to the queuing scheme):
/// fixed for most engines; for LASH as many as its layers on `topology`, whose routes are
/// computed here (an engine that cannot route the topology is refused at `routing_engine`).
pub(super) fn engine_vls(
    r: &Reader,
    engine: RoutingEngine,
    topology: Option<&Topology>,
) -> Option<u8> {
    if engine != RoutingEngine::Lash {
        return engine.vls();
    }
    match crate::fabric::subnet_manager::program(topology?, engine) {
        Ok(routing) => routing.sls.map(|s| s.vls()),
        Err(e) => r.doc.fail("routing_engine", e),
    }
}
