//! The deadlock check of a routing: the channel dependency graph (Dally and Seitz; Duato for
//! adaptive routing) of what the subnet manager wrote into the LFTs, searched for a cycle.
//!
//! A channel is one direction of a switch-to-switch cable on one VC, named by the sending port
//! (`s3:5` VC 0). A packet to node `d` that holds channel `c` into switch `t` waits for a
//! channel that `t`'s LFT offers toward `d`: that is a dependency `c → c'`. The check follows
//! each destination's routes from every switch that has end nodes, through the options the
//! routing mode may take (option 0 only under D-mod-K, every option otherwise), on the VL of the
//! packets' SL: the queuing scheme's for the destination, or the one the routing engine chose for
//! the path from the source switch (`path_sl`). Under AFI a packet may move to the AFC on any hop, so
//! all VCs of a link count as one channel there (a cycle found then may be one no packet can
//! close; an acyclic graph is still a proof). Channels toward end nodes cannot be part of a cycle
//! and are left out. No cycle: no packet can wait for itself, the routing is deadlock-free. A
//! cycle is reported channel by channel.

use super::{Routing, RoutingEngine, SwitchGraph, program};
use crate::blocks::LftBanks;
use crate::fabric::FabricParams;
use crate::fabric::topology::Endpoint;
use crate::fabric::topology::Topology;
use crate::switch::RoutingMode;
use crate::switch::SlToVl;
use std::fmt;

/// What the check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadlockCheck {
    /// Channels between switches (cable directions × VCs).
    pub channels: usize,
    /// Distinct dependencies between them.
    pub dependencies: usize,
    /// A cycle of channels, each `(switch, port, VC)`, if there is one.
    pub cycle: Option<Vec<(u32, u16, u8)>>,
}

impl fmt::Display for DeadlockCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cycle {
            None => write!(
                f,
                "deadlock-free: no cycle among {} channel dependencies ({} channels)",
                self.dependencies, self.channels
            ),
            Some(c) => {
                let names: Vec<String> = c
                    .iter()
                    .chain(c.first())
                    .map(|&(s, p, v)| format!("s{s}:{p} VC {v}"))
                    .collect();
                write!(
                    f,
                    "channel dependencies form a cycle of {} channels: {}",
                    c.len(),
                    names.join(" → ")
                )
            }
        }
    }
}

/// Which LFT options packets may take and on which VC they travel.
pub struct Usage<'a> {
    /// Only option 0 (deterministic routing), or every option.
    pub deterministic: bool,
    /// The SL of packets from the nodes of a switch to a destination node.
    pub sl_of: &'a dyn Fn(usize, u32) -> u8,
    /// Every switch's SL-to-VL tables (`None`: VL = SL everywhere).
    pub sl_to_vl: Option<&'a [SlToVl]>,
    /// VCs per channel (1 when every VC counts as one).
    pub vcs: u8,
}

/// The check of the routing a fabric of `params` gets on `topo`; `None` on fat trees, where every
/// engine but DFSSSP routes up, then down (shortest paths in a fat tree do too), which cannot
/// close a cycle.
pub fn of_fabric(topo: &Topology, params: &FabricParams) -> Result<Option<DeadlockCheck>, String> {
    let engine = params
        .routing_engine
        .unwrap_or_else(|| RoutingEngine::default_for(topo));
    if !needs_check(topo, engine) {
        return Ok(None);
    }
    of_routing(topo, params, &program(topo, engine)?).map(Some)
}

/// Whether `engine`'s routes on `topo` can close a cycle: not on a fat tree, where every engine
/// but DFSSSP routes up, then down (DFSSSP's balanced paths need not); a modified k-ary n-tree's
/// horizontal links are checked whatever the engine.
pub fn needs_check(topo: &Topology, engine: RoutingEngine) -> bool {
    topo.xgft.is_none() || topo.horizontal > 0 || engine == RoutingEngine::Dfsssp
}

/// [`of_fabric`] of a routing already programmed (`arnsim check` also counts its options), on
/// any topology.
pub fn of_routing(
    topo: &Topology,
    params: &FabricParams,
    routing: &Routing,
) -> Result<DeadlockCheck, String> {
    let sw = &params.switch;
    let queuing = sw.queuing;
    let sls = routing.sls.as_ref();
    let sl_of = move |s: usize, d: u32| sls.map_or_else(|| queuing.vc_for(0, d), |t| t.sl(s, d));
    let usage = Usage {
        // FA: the escape routes (option 0) must be free of cycles (Duato); adaptive options may
        // close some.
        deterministic: sw.routing == RoutingMode::DModK || sw.routing.escape_queues(),
        sl_of: &sl_of,
        sl_to_vl: routing.sl_to_vl.as_deref(),
        // Under AFI a packet may move to the AFC on any hop: one channel per cable.
        vcs: if sw.routing.afi() {
            1
        } else {
            queuing.regular_vcs() as u8
        },
    };
    check(topo, routing.lmc, &routing.tables, &usage)
}

/// Builds the channel dependency graph of `tables` on `topo` and looks for a cycle: per
/// destination and SL, the channels its packets can take from the switches whose nodes send with
/// that SL, each channel's VL the one the sending switch's SL-to-VL table gives the SL from the
/// port the packet came in on.
pub fn check(
    topo: &Topology,
    lmc: u32,
    tables: &[LftBanks],
    usage: &Usage,
) -> Result<DeadlockCheck, String> {
    let g = SwitchGraph::of(topo)?;
    let ns = g.adj.len();
    let vcs = usage.vcs.max(1) as usize;
    // Per switch and port: the switch and port at the cable's far end.
    let mut far: Vec<Vec<Option<(usize, u16)>>> = topo
        .switches
        .iter()
        .map(|sp| vec![None; sp.ports as usize])
        .collect();
    for &(a, b) in &topo.links {
        if let (Endpoint::Switch { sw: s, port: p }, Endpoint::Switch { sw: t, port: q }) = (a, b) {
            far[s as usize][p as usize] = Some((t as usize, q));
            far[t as usize][q as usize] = Some((s as usize, p));
        }
    }
    let mut first = vec![0usize; ns + 1];
    for s in 0..ns {
        first[s + 1] = first[s] + far[s].len();
    }
    let vl = |s: usize, out: u16, input: u16, sl: u8| {
        let v = usage
            .sl_to_vl
            .map_or(sl, |t| t[s].vl(out as usize, input as usize, sl));
        v as usize % vcs
    };
    let chan = |s: usize, p: u16, v: usize| ((first[s] + p as usize) * vcs + v) as u32;
    let mut node_ports: Vec<Vec<u16>> = vec![Vec::new(); ns];
    for &(s, p) in &g.attach {
        node_ports[s].push(p);
    }
    let options = if usage.deterministic {
        1
    } else {
        1usize << lmc
    };
    let mut deps: Vec<(u32, u32)> = Vec::new();
    let mut seen = vec![0u32; first[ns] * vcs];
    let mut search = 0u32;
    let mut stack: Vec<(usize, u16, usize)> = Vec::new();
    let mut next: Vec<Vec<u16>> = vec![Vec::new(); ns];
    // The previous destination's switch, next ports and SL per switch: a destination that has
    // the same adds the same dependencies (the nodes of one switch, as a rule), and is skipped.
    let mut prev: Option<usize> = None;
    let mut prev_next: Vec<Vec<u16>> = vec![Vec::new(); ns];
    let (mut sl_at, mut prev_sl_at) = (vec![0u8; ns], vec![0u8; ns]);
    for d in 0..topo.nodes {
        let (sd, _) = g.attach[d as usize];
        std::mem::swap(&mut next, &mut prev_next);
        std::mem::swap(&mut sl_at, &mut prev_sl_at);
        // The switch-to-switch ports each switch offers toward d.
        for s in 0..ns {
            next[s].clear();
            if s == sd {
                continue;
            }
            let o = tables[s].options((d << lmc) as u16);
            for b in 0..options {
                let p = o.ports[b] as u16;
                let cabled = far[s].get(p as usize).is_some_and(|f| f.is_some());
                if o.usable(b) && cabled && !next[s].contains(&p) {
                    next[s].push(p);
                }
            }
        }
        for s in (0..ns).filter(|&s| !node_ports[s].is_empty()) {
            sl_at[s] = if s == sd { 0 } else { (usage.sl_of)(s, d) };
        }
        if prev == Some(sd) && next == prev_next && sl_at == prev_sl_at {
            continue;
        }
        prev = Some(sd);
        let mut sls: Vec<u8> = (0..ns)
            .filter(|&s| !node_ports[s].is_empty() && s != sd)
            .map(|s| sl_at[s])
            .collect();
        sls.sort_unstable();
        sls.dedup();
        for sl in sls {
            search += 1;
            // The first channels: from the nodes of every switch whose packets to d carry `sl`.
            for s in (0..ns).filter(|&s| s != sd && sl_at[s] == sl) {
                for &i in &node_ports[s] {
                    for &q in &next[s] {
                        let v = vl(s, q, i, sl);
                        if seen[chan(s, q, v) as usize] != search {
                            seen[chan(s, q, v) as usize] = search;
                            stack.push((s, q, v));
                        }
                    }
                }
            }
            // Every channel a packet holding (s, p, v) may wait for next.
            while let Some((s, p, v)) = stack.pop() {
                let Some((t, i)) = far[s][p as usize] else {
                    continue;
                };
                for &q in &next[t] {
                    let w = vl(t, q, i, sl);
                    deps.push((chan(s, p, v), chan(t, q, w)));
                    if seen[chan(t, q, w) as usize] != search {
                        seen[chan(t, q, w) as usize] = search;
                        stack.push((t, q, w));
                    }
                }
            }
        }
    }
    deps.sort_unstable();
    deps.dedup();
    let channels = far.iter().flatten().filter(|f| f.is_some()).count() * vcs;
    let cycle = find_cycle(first[ns] * vcs, &deps).map(|c| {
        c.into_iter()
            .map(|i| {
                let (port_index, vc) = (i / vcs, (i % vcs) as u8);
                let s = first.partition_point(|&f| f <= port_index) - 1;
                (s as u32, (port_index - first[s]) as u16, vc)
            })
            .collect()
    });
    Ok(DeadlockCheck {
        channels,
        dependencies: deps.len(),
        cycle,
    })
}

/// A short cycle of the directed graph on `n` vertices with sorted edge list `edges`: a depth-first
/// search finds one, then a breadth-first search from each of its first channels finds the
/// shortest cycle through it (the shortest of those is reported).
fn find_cycle(n: usize, edges: &[(u32, u32)]) -> Option<Vec<usize>> {
    let mut start = vec![0usize; n + 1];
    for &(a, _) in edges {
        start[a as usize + 1] += 1;
    }
    for v in 0..n {
        start[v + 1] += start[v];
    }
    let next = |v: usize| edges[start[v]..start[v + 1]].iter().map(|e| e.1 as usize);
    let found = any_cycle(n, &start, edges)?;
    let mut best = found.clone();
    let mut parent = vec![usize::MAX; n];
    let mut queue = std::collections::VecDeque::new();
    for &v in found.iter().take(64) {
        parent.fill(usize::MAX);
        queue.clear();
        queue.push_back(v);
        'bfs: while let Some(u) = queue.pop_front() {
            for w in next(u) {
                if w == v {
                    let mut c = vec![u];
                    while *c.last().unwrap() != v {
                        c.push(parent[*c.last().unwrap()]);
                    }
                    c.reverse();
                    if c.len() < best.len() {
                        best = c;
                    }
                    break 'bfs;
                }
                if parent[w] == usize::MAX {
                    parent[w] = u;
                    queue.push_back(w);
                }
            }
        }
    }
    Some(best)
}

/// Any cycle, by an iterative depth-first search (a cycle may be as long as the graph).
fn any_cycle(n: usize, start: &[usize], edges: &[(u32, u32)]) -> Option<Vec<usize>> {
    // 0 white, 1 on the path, 2 done.
    let mut colour = vec![0u8; n];
    let mut path: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if colour[root] != 0 {
            continue;
        }
        colour[root] = 1;
        path.push((root, start[root]));
        while let Some(&mut (v, ref mut i)) = path.last_mut() {
            if *i == start[v + 1] {
                colour[v] = 2;
                path.pop();
                continue;
            }
            let w = edges[*i].1 as usize;
            *i += 1;
            match colour[w] {
                0 => {
                    colour[w] = 1;
                    path.push((w, start[w]));
                }
                1 => {
                    let from = path.iter().position(|&(u, _)| u == w).expect("on the path");
                    return Some(path[from..].iter().map(|&(u, _)| u).collect());
                }
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::topology::{DragonflyShape, IrregularShape};

    fn run(topo: &Topology, engine: RoutingEngine, deterministic: bool) -> DeadlockCheck {
        let r = program(topo, engine).unwrap();
        let sls = r.sls.as_ref();
        let usage = Usage {
            deterministic,
            sl_of: &|s, d| sls.map_or(0, |t| t.sl(s, d)),
            sl_to_vl: r.sl_to_vl.as_deref(),
            vcs: sls.map(|t| t.vls()).or(engine.vls()).unwrap_or(1),
        };
        check(topo, r.lmc, &r.tables, &usage).unwrap()
    }

    /// Seed 002's 16-switch irregular fabric (4 nodes and 4 links per switch).
    fn irregular16(seed: u64) -> Topology {
        let shape = IrregularShape {
            switches: 16,
            links: 4,
            nodes_per_switch: 4,
            seed,
        };
        Topology::irregular(shape).unwrap()
    }

    #[test]
    fn minimal_routing_on_one_vc_of_a_dragonfly_has_a_cycle() {
        let t = Topology::dragonfly(DragonflyShape { a: 4, h: 2, p: 2 });
        let r = run(&t, RoutingEngine::Minhop, true);
        let cycle = r
            .cycle
            .clone()
            .expect("minimal routing on a Dragonfly closes a cycle");
        // The cycle is made of real channels, each leading to the switch of the next one.
        let g = SwitchGraph::of(&t).unwrap();
        let peer = g.peers();
        for (i, &(s, p, _)) in cycle.iter().enumerate() {
            let (t_next, _, _) = cycle[(i + 1) % cycle.len()];
            assert_eq!(peer[s as usize][p as usize], Some(t_next as usize), "{r}");
        }
        assert!(r.to_string().contains("cycle"), "{r}");
    }

    #[test]
    fn updn_and_fat_trees_are_deadlock_free() {
        let t = Topology::dragonfly(DragonflyShape { a: 4, h: 2, p: 2 });
        assert_eq!(run(&t, RoutingEngine::Updn, false).cycle, None);
        for seed in 0..5 {
            let r = run(&irregular16(seed), RoutingEngine::Updn, false);
            assert_eq!(r.cycle, None, "{r}");
            assert!(r.dependencies > 0);
        }
        let t = Topology::kary_ntree(3, 3);
        let r = run(&t, RoutingEngine::Ftree, false);
        assert_eq!(r.cycle, None, "{r}");
        assert!(r.to_string().starts_with("deadlock-free"));
    }

    #[test]
    fn d3r_dfsssp_and_lash_break_the_cycles_with_their_vls() {
        for shape in [
            DragonflyShape { a: 4, h: 2, p: 2 },
            DragonflyShape { a: 6, h: 3, p: 3 },
        ] {
            let t = Topology::dragonfly(shape);
            // On one VL the same minimal routes close a cycle, even taking only option 0.
            assert!(run(&t, RoutingEngine::Minhop, true).cycle.is_some());
            assert!(run(&t, RoutingEngine::DflyMin, true).cycle.is_some());
            for engine in [
                RoutingEngine::D3r2Vl,
                RoutingEngine::D3r3Vl,
                RoutingEngine::DflyVlHops,
            ] {
                // Every minimal option, as the adaptive modes take them.
                let r = run(&t, engine, false);
                assert_eq!(r.cycle, None, "{}: {r}", engine.name());
                assert!(r.dependencies > 0);
            }
            for engine in [RoutingEngine::Dfsssp, RoutingEngine::Lash] {
                let r = run(&t, engine, true);
                assert_eq!(r.cycle, None, "{}: {r}", engine.name());
            }
        }
        // DFSSSP on irregular fabrics, where minimal routing on one VL is not deadlock-free.
        for seed in 0..3 {
            for engine in [RoutingEngine::Dfsssp, RoutingEngine::Lash] {
                let r = run(&irregular16(seed), engine, true);
                assert_eq!(r.cycle, None, "{} seed {seed}: {r}", engine.name());
            }
        }
    }

    #[test]
    fn the_check_sees_a_cycle_that_d3r_sls_would_break_when_they_are_ignored() {
        // D3R's routes with every SL taken as VL 0: the minimal routes' cycle is back.
        let t = Topology::dragonfly(DragonflyShape { a: 4, h: 2, p: 2 });
        let r = program(&t, RoutingEngine::D3r2Vl).unwrap();
        let usage = Usage {
            deterministic: true,
            sl_of: &|_, _| 0,
            sl_to_vl: None,
            vcs: 2,
        };
        let found = check(&t, r.lmc, &r.tables, &usage).unwrap();
        assert!(found.cycle.is_some(), "{found}");
    }

    #[test]
    fn the_check_follows_the_vl_changes_of_the_sl_to_vl_tables() {
        // dfly_vl_hops's routes with identity tables: one VL per packet, the cycle is back.
        let t = Topology::dragonfly(DragonflyShape { a: 4, h: 2, p: 2 });
        let r = program(&t, RoutingEngine::DflyVlHops).unwrap();
        let mut usage = Usage {
            deterministic: false,
            sl_of: &|_, _| 0,
            sl_to_vl: None,
            vcs: 2,
        };
        let without = check(&t, r.lmc, &r.tables, &usage).unwrap();
        assert!(without.cycle.is_some(), "{without}");
        usage.sl_to_vl = r.sl_to_vl.as_deref();
        let with = check(&t, r.lmc, &r.tables, &usage).unwrap();
        assert_eq!(with.cycle, None, "{with}");
    }

    #[test]
    fn a_ring_of_dependencies_is_found_and_shortened() {
        // Six channels, each depending on the next.
        let edges: Vec<(u32, u32)> = (0..6).map(|i| (i, (i + 1) % 6)).collect();
        let mut c = find_cycle(6, &edges).unwrap();
        c.sort_unstable();
        assert_eq!(c, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(find_cycle(6, &edges[..5]), None);
        // A chord 0 -> 3 makes a shorter cycle through 0: 0 3 4 5.
        let mut edges = edges;
        edges.push((0, 3));
        edges.sort_unstable();
        assert_eq!(find_cycle(6, &edges).unwrap().len(), 4);
    }
}
