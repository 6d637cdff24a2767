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

use super::{RoutingEngine, SwitchGraph, program};
use crate::blocks::LftBanks;
use crate::fabric::FabricParams;
use crate::fabric::topology::Topology;
use crate::switch::RoutingMode;
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
    /// The VC of packets from the nodes of a switch to a destination node.
    pub vc_of: &'a dyn Fn(usize, u32) -> u8,
    /// VCs per channel (1 when every VC counts as one).
    pub vcs: u8,
}

/// The check of the routing a fabric of `params` gets on `topo`; `None` on fat trees, where every
/// engine but DFSSSP routes up, then down (shortest paths in a fat tree do too), which cannot close a cycle.
pub fn of_fabric(topo: &Topology, params: &FabricParams) -> Result<Option<DeadlockCheck>, String> {
    let engine = params
        .routing_engine
        .unwrap_or_else(|| RoutingEngine::default_for(topo));
    // DFSSSP's balanced paths need not go up, then down.
    if topo.xgft.is_some() && engine != RoutingEngine::Dfsssp {
        return Ok(None);
    }
    let routing = program(topo, engine)?;
    let sw = &params.switch;
    let queuing = sw.queuing;
    let afi = sw.routing.afi();
    let sls = routing.sls.as_ref();
    let vc_of = move |s: usize, d: u32| match (afi, sls) {
        (true, _) => 0,
        (false, Some(sls)) => sls.sl(s, d),
        (false, None) => queuing.vc_for(0, d),
    };
    let vcs = match (afi, sls) {
        (true, _) => 1,
        (false, Some(sls)) => sls.vls(),
        (false, None) => queuing.regular_vcs() as u8,
    };
    let usage = Usage {
        deterministic: sw.routing == RoutingMode::DModK,
        vc_of: &vc_of,
        vcs,
    };
    check(topo, routing.lmc, &routing.tables, &usage).map(Some)
}

/// Builds the channel dependency graph of `tables` on `topo` and looks for a cycle.
pub fn check(
    topo: &Topology,
    lmc: u32,
    tables: &[LftBanks],
    usage: &Usage,
) -> Result<DeadlockCheck, String> {
    let g = SwitchGraph::of(topo)?;
    let peer = g.peers();
    let ns = g.adj.len();
    let vcs = usage.vcs.max(1) as usize;
    // Channel index of (switch, port): dense over switch-to-switch ports.
    let mut first = vec![0usize; ns + 1];
    for s in 0..ns {
        first[s + 1] = first[s] + peer[s].len();
    }
    let chan = |s: usize, p: u16, vc: u8| (first[s] + p as usize) * vcs + vc as usize;
    let mut has_nodes = vec![false; ns];
    for &(s, _) in &g.attach {
        has_nodes[s] = true;
    }
    let options = if usage.deterministic {
        1
    } else {
        1usize << lmc
    };
    let mut deps: Vec<(u32, u32)> = Vec::new();
    let mut seen = vec![u32::MAX; ns];
    let mut search = 0u32;
    let mut stack = Vec::new();
    let mut next: Vec<Vec<u16>> = vec![Vec::new(); ns];
    // Per destination and VC: the switches whose nodes send to it on that VC, and the routes on.
    for (d, vc) in (0..topo.nodes).flat_map(|d| (0..vcs as u8).map(move |vc| (d, vc))) {
        let (sd, _) = g.attach[d as usize];
        // The switches d's packets on `vc` can reach, and the ports they may take there.
        stack.extend((0..ns).filter(|&s| has_nodes[s] && (usage.vc_of)(s, d) % vcs as u8 == vc));
        if stack.is_empty() {
            continue;
        }
        search += 1;
        let d_search = search;
        for &s in &stack {
            seen[s] = d_search;
        }
        while let Some(s) = stack.pop() {
            let o = tables[s].options((d << lmc) as u16);
            next[s].clear();
            if s != sd {
                for b in 0..options {
                    if o.usable(b) && !next[s].contains(&(o.ports[b] as u16)) {
                        next[s].push(o.ports[b] as u16);
                    }
                }
            }
            for &p in &next[s] {
                let t = peer[s].get(p as usize).copied().flatten();
                if let Some(t) = t.filter(|&t| seen[t] != d_search) {
                    seen[t] = d_search;
                    stack.push(t);
                }
            }
        }
        for s in (0..ns).filter(|&s| seen[s] == d_search) {
            for &p in &next[s] {
                let Some(t) = peer[s].get(p as usize).copied().flatten() else {
                    continue;
                };
                for &q in &next[t] {
                    if peer[t].get(q as usize).copied().flatten().is_some() {
                        deps.push((chan(s, p, vc) as u32, chan(t, q, vc) as u32));
                    }
                }
            }
        }
    }
    deps.sort_unstable();
    deps.dedup();
    let channels = (0..ns)
        .map(|s| peer[s].iter().filter(|t| t.is_some()).count())
        .sum::<usize>()
        * vcs;
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
            vc_of: &|s, d| sls.map_or(0, |t| t.sl(s, d)),
            vcs: sls.map_or(1, |t| t.vls()),
        };
        check(topo, r.lmc, &r.tables, &usage).unwrap()
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
            let shape = IrregularShape {
                switches: 16,
                links: 4,
                nodes_per_switch: 4,
                seed,
            };
            let t = Topology::irregular(shape).unwrap();
            let r = run(&t, RoutingEngine::Updn, false);
            assert_eq!(r.cycle, None, "{r}");
            assert!(r.dependencies > 0);
        }
        let t = Topology::kary_ntree(3, 3);
        let r = run(&t, RoutingEngine::Ftree, false);
        assert_eq!(r.cycle, None, "{r}");
        assert!(r.to_string().starts_with("deadlock-free"));
    }

    #[test]
    fn d3r_and_dfsssp_break_the_dragonfly_cycles_with_their_vls() {
        for shape in [
            DragonflyShape { a: 4, h: 2, p: 2 },
            DragonflyShape { a: 6, h: 3, p: 3 },
        ] {
            let t = Topology::dragonfly(shape);
            // On one VL the same minimal routes close a cycle, even taking only option 0.
            assert!(run(&t, RoutingEngine::Minhop, true).cycle.is_some());
            for engine in [RoutingEngine::D3r2Vl, RoutingEngine::D3r3Vl] {
                // Every minimal option, as the adaptive modes take them.
                let r = run(&t, engine, false);
                assert_eq!(r.cycle, None, "{}: {r}", engine.name());
                assert!(r.dependencies > 0);
            }
            let r = run(&t, RoutingEngine::Dfsssp, true);
            assert_eq!(r.cycle, None, "dfsssp: {r}");
        }
        // DFSSSP on irregular fabrics, where minimal routing on one VL is not deadlock-free.
        for seed in 0..3 {
            let shape = IrregularShape {
                switches: 16,
                links: 4,
                nodes_per_switch: 4,
                seed,
            };
            let t = Topology::irregular(shape).unwrap();
            let r = run(&t, RoutingEngine::Dfsssp, true);
            assert_eq!(r.cycle, None, "seed {seed}: {r}");
        }
    }

    #[test]
    fn the_check_sees_a_cycle_that_d3r_sls_would_break_when_they_are_ignored() {
        // D3R's routes with every SL taken as VL 0: the minimal routes' cycle is back.
        let t = Topology::dragonfly(DragonflyShape { a: 4, h: 2, p: 2 });
        let r = program(&t, RoutingEngine::D3r2Vl).unwrap();
        let usage = Usage {
            deterministic: true,
            vc_of: &|_, _| 0,
            vcs: 2,
        };
        let found = check(&t, r.lmc, &r.tables, &usage).unwrap();
        assert!(found.cycle.is_some(), "{found}");
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
