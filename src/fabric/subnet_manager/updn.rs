//! Up*/down* routing (Schroeder et al., Autonet) for any topology, as the subnet manager writes it
//! into destination-indexed LFTs.
//!
//! Root: the switch of smallest eccentricity in the switch graph (the lowest index among equals).
//! Each switch's level is its hop distance from the root; a hop goes *up* when it reaches a lower
//! level, or the same level and a lower switch index, and *down* otherwise, so "up" orders the
//! switches and no path can climb in a circle. A legal route is up hops, then down hops.
//!
//! An LFT entry cannot see whether a packet has already gone down, so each destination's routes
//! are made consistent per switch: the switches from which the destination is reachable going
//! down only (always the root among them) route down, by the fewest down hops; every other switch
//! routes up, toward the fewest hops of a legal route. A packet that has turned down therefore
//! never meets a switch that sends it up again. The options of a destination are every port that
//! achieves that count; option 0 is the `d mod n`-th of them (ports in increasing order), the rest
//! follow in rotation, as D-mod-K spreads destinations over up ports on fat trees.

use super::{PortLists, SwitchGraph};
use crate::fabric::topology::Topology;

/// The switch of smallest eccentricity, lowest index among equals.
pub fn root(g: &SwitchGraph) -> usize {
    (0..g.adj.len())
        .min_by_key(|&s| (g.bfs(s).into_iter().max().unwrap_or(0), s))
        .unwrap_or(0)
}

/// Per switch and destination, the up*/down* ports (rotation applied: option 0 first).
pub fn ports(topo: &Topology) -> Result<PortLists, String> {
    let g = SwitchGraph::of(topo)?;
    let n = g.adj.len();
    let level = g.bfs(root(&g));
    let key = |s: usize| (level[s], s);
    let up = |s: usize, t: usize| key(t) < key(s);
    // Switches in the order of the up relation: every up-neighbour of s comes before s.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by_key(|&s| key(s));
    let mut out = vec![vec![Vec::new(); topo.nodes as usize]; n];
    let mut down = vec![u32::MAX; n];
    let mut legal = vec![u32::MAX; n];
    let mut queue = std::collections::VecDeque::new();
    for (d, &(sd, pd)) in g.attach.iter().enumerate() {
        // Fewest down hops to sd: backwards from sd over hops s -> t that go down.
        down.fill(u32::MAX);
        down[sd] = 0;
        queue.push_back(sd);
        while let Some(t) = queue.pop_front() {
            for &(s, _) in &g.adj[t] {
                if down[s] == u32::MAX && up(t, s) {
                    down[s] = down[t] + 1;
                    queue.push_back(s);
                }
            }
        }
        for &s in &order {
            legal[s] = if down[s] != u32::MAX {
                down[s]
            } else {
                g.adj[s]
                    .iter()
                    .filter(|&&(u, _)| up(s, u))
                    .map(|&(u, _)| legal[u].saturating_add(1))
                    .min()
                    .ok_or_else(|| format!("switch {s} has no way up toward node {d}"))?
            };
        }
        for s in 0..n {
            let mut p: Vec<u16> = if s == sd {
                vec![pd]
            } else if down[s] != u32::MAX {
                let want = down[s] - 1;
                g.adj[s]
                    .iter()
                    .filter(|&&(t, _)| !up(s, t) && down[t] == want)
                    .map(|&(_, port)| port)
                    .collect()
            } else {
                let want = legal[s] - 1;
                g.adj[s]
                    .iter()
                    .filter(|&&(u, _)| up(s, u) && legal[u] == want)
                    .map(|&(_, port)| port)
                    .collect()
            };
            if p.is_empty() {
                return Err(format!("switch {s} has no up*/down* port toward node {d}"));
            }
            p.sort_unstable();
            let first = d % p.len();
            p.rotate_left(first);
            out[s][d] = p;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::topology::{DragonflyShape, IrregularShape};

    /// Every route of option `opt` arrives, and never goes up after going down.
    fn legal_everywhere(topo: &Topology) {
        let g = SwitchGraph::of(topo).unwrap();
        let level = g.bfs(root(&g));
        let table = ports(topo).unwrap();
        let peer = g.peers();
        for (d, &(sd, _)) in g.attach.iter().enumerate() {
            for src in 0..topo.nodes as usize {
                for opt in 0..4 {
                    let (mut s, _) = g.attach[src];
                    let mut went_down = false;
                    let mut hops = 0;
                    while s != sd {
                        let ports = &table[s][d];
                        let p = ports[opt % ports.len()];
                        let t = peer[s][p as usize].expect("a switch port");
                        let is_up = (level[t], t) < (level[s], s);
                        assert!(!(is_up && went_down), "{src}->{d}: up after down at {s}");
                        went_down |= !is_up;
                        s = t;
                        hops += 1;
                        assert!(hops <= 2 * g.adj.len(), "{src}->{d} loops");
                    }
                }
            }
        }
    }

    #[test]
    fn updn_routes_are_legal_and_arrive() {
        legal_everywhere(&Topology::dragonfly(DragonflyShape { a: 4, h: 2, p: 2 }));
        for seed in 0..4 {
            let shape = IrregularShape {
                switches: 16,
                links: 4,
                nodes_per_switch: 2,
                seed,
            };
            legal_everywhere(&Topology::irregular(shape).unwrap());
        }
        legal_everywhere(&Topology::kary_ntree(2, 3));
    }

    #[test]
    fn the_root_is_central() {
        // Five switches in a line, a node on each: the middle one is the root.
        use crate::fabric::topology::{Endpoint, SwitchSpec};
        let sw = |sw, port| Endpoint::Switch { sw, port };
        let mut links: Vec<_> = (0..5).map(|s| (Endpoint::Node(s), sw(s, 0))).collect();
        links.extend((0..4).map(|s| (sw(s, 1), sw(s + 1, 2))));
        let spec = SwitchSpec {
            ports: 3,
            stage: 0,
            up_ports: 0,
        };
        let switches = vec![spec; 5];
        let t = Topology {
            nodes: 5,
            switches,
            links,
            xgft: None,
            dragonfly: None,
            horizontal: 0,
        };
        let g = SwitchGraph::of(&t).unwrap();
        assert_eq!(root(&g), 2);
        legal_everywhere(&t);
    }
}
