//! Flow routing's choice of path on a k-ary n-tree and its modified form (Birk and Zdornov,
//! section 4), computed for whole sets of flows at once, and the static contention analysis of
//! their figure 5: how many flows share the most loaded link of each flow's path.
//!
//! A flow is routed hop by hop, each switch scoring its candidate output links by the number of
//! flows already crossing them (the port selection unit's measure), flows one after the other in
//! source order:
//! - **ascent**: while the destination is not below the switch's logical node, the up link with
//!   the fewest flows, ties to the first in D-mod-K's rotation (so that on an idle fabric the
//!   route is D-mod-K's);
//! - **descent**: at each level the single down link toward the destination or, on a modified
//!   tree, a horizontal hop to the next switch of the logical node's chain, whichever has fewer
//!   flows (ties: down; among a hop's parallel links the first with the fewest). The direction is
//!   chosen once per level, before the first hop: to the right from the left half of the chain,
//!   to the left from the right half (section 4).
//!
//! Oblivious routing is D-mod-K on the same tree, horizontal links unused.

use super::subnet_manager::fat_tree::FatTree;
use super::topology::Topology;
use crate::blocks::rng::SplitMix64;

/// How flows are routed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowRouting {
    /// D-mod-K up, the one way down.
    Oblivious,
    /// Least-loaded up link, then down with horizontal hops.
    Adaptive,
}

/// A fat tree's switches as flow routing reads them.
pub struct TreeRoutes {
    tree: FatTree,
    /// Horizontal width.
    width: u32,
}

/// Contention of one set of flows: over flows, the largest and the mean of the number of flows
/// on the most loaded link of each flow's path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contention {
    pub max: u32,
    pub mean: f64,
}

impl TreeRoutes {
    /// The routes of `topo`, a k-ary n-tree or RLFT with or without horizontal links.
    pub fn of(topo: &Topology) -> Result<Self, String> {
        let tree = FatTree::of(topo)
            .map_err(|_| "flow routing's contention analysis needs a fat tree".to_string())?;
        Ok(TreeRoutes {
            tree,
            width: topo.horizontal,
        })
    }

    /// The path of `src` to `dst` (the switch output links it crosses), routed by `how` on the
    /// loads in `load`, which it then adds itself to.
    pub fn route(
        &self,
        src: u32,
        dst: u32,
        how: FlowRouting,
        load: &mut [u32],
        path: &mut Vec<usize>,
    ) {
        path.clear();
        let t = &self.tree;
        let mut sw = t.leaf[src as usize].0;
        let mut chose_direction = None::<(u32, bool)>;
        loop {
            let s = sw as usize;
            let (way, l) = (&t.ways[s], t.level[s]);
            let link = |p: u32| t.first_port[s] + p as usize;
            let port = if way.count(dst) > 1 {
                // Ascent.
                let j0 = (dst / way.b_l) % way.up;
                let rotation = (0..way.up).map(|j| way.port_after(dst, j, j0) as u32);
                match how {
                    FlowRouting::Oblivious => way.down + j0,
                    FlowRouting::Adaptive => rotation
                        .min_by_key(|&p| load[link(p)])
                        .unwrap_or(way.down + j0),
                }
            } else {
                let to_dst = way.port_after(dst, 0, 0) as u32;
                match (how, self.width, l) {
                    (FlowRouting::Adaptive, w, 2..) if w > 0 => {
                        let chain = way.b_l;
                        let i = t.local[s] % chain;
                        let right = match chose_direction {
                            Some((lv, r)) if lv == l => r,
                            _ => {
                                let r = i < chain / 2;
                                chose_direction = Some((l, r));
                                r
                            }
                        };
                        let base = way.down + way.up;
                        let hop = match right {
                            true if i + 1 < chain => Some(base + (i > 0) as u32 * w),
                            false if i > 0 => Some(base),
                            _ => None,
                        };
                        let best = hop.and_then(|h| (h..h + w).min_by_key(|&p| load[link(p)]));
                        match best {
                            Some(p) if load[link(p)] < load[link(to_dst)] => p,
                            _ => to_dst,
                        }
                    }
                    _ => to_dst,
                }
            };
            let k = link(port);
            load[k] += 1;
            path.push(k);
            match t.peers[s][port as usize] {
                Some(next) => sw = next,
                None => return,
            }
        }
    }

    /// The contention of the flows `i -> perm[i]` (a node mapped to itself sends nothing),
    /// routed by `how` in source order on an idle fabric.
    pub fn contention(&self, perm: &[u32], how: FlowRouting) -> Contention {
        let mut load = vec![0u32; self.tree.outputs];
        let mut paths: Vec<Vec<usize>> = Vec::with_capacity(perm.len());
        let mut path = Vec::new();
        for (src, &dst) in perm.iter().enumerate() {
            if src as u32 == dst {
                continue;
            }
            self.route(src as u32, dst, how, &mut load, &mut path);
            paths.push(path.clone());
        }
        let worst: Vec<u32> = paths
            .iter()
            .map(|p| p.iter().map(|&k| load[k]).max().unwrap_or(0))
            .collect();
        Contention {
            max: worst.iter().copied().max().unwrap_or(0),
            mean: worst.iter().map(|&c| c as f64).sum::<f64>() / worst.len().max(1) as f64,
        }
    }
}

/// A random permutation of `0..n` (Fisher-Yates, from `rng`).
pub fn permutation(n: u32, rng: &mut SplitMix64) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n).collect();
    for i in (1..n as usize).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        p.swap(i, j);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::topology::Endpoint;

    fn walk(t: &Topology, r: &TreeRoutes, src: u32, dst: u32, how: FlowRouting) -> Vec<usize> {
        let mut load = vec![0; r.tree.outputs];
        let mut path = Vec::new();
        r.route(src, dst, how, &mut load, &mut path);
        // The path's last link reaches the destination.
        let last = *path.last().unwrap();
        let sw = r.tree.first_port.iter().rposition(|&f| f <= last).unwrap();
        let port = (last - r.tree.first_port[sw]) as u16;
        assert!(
            t.links.iter().any(|&(a, b)| (a, b)
                == (
                    Endpoint::Switch {
                        sw: sw as u32,
                        port
                    },
                    Endpoint::Node(dst)
                )
                || (b, a)
                    == (
                        Endpoint::Switch {
                            sw: sw as u32,
                            port
                        },
                        Endpoint::Node(dst)
                    )),
            "{src} -> {dst} ends at switch {sw} port {port}"
        );
        path
    }

    #[test]
    fn every_flow_reaches_its_destination_minimally_on_an_idle_tree() {
        for t in [
            Topology::kary_ntree(4, 3),
            Topology::kary_ntree(4, 3).with_horizontal(2),
            Topology::rlft(8, 3),
        ] {
            let r = TreeRoutes::of(&t).unwrap();
            for s in 0..t.nodes {
                for d in (0..t.nodes).filter(|&d| d != s) {
                    let a = walk(&t, &r, s, d, FlowRouting::Adaptive);
                    let o = walk(&t, &r, s, d, FlowRouting::Oblivious);
                    // Idle: no hop sideways, and the ascent is D-mod-K's.
                    assert_eq!(a, o, "{s} -> {d}");
                    assert_eq!(a.len() % 2, 1, "up, then as many down: {s} -> {d}");
                }
            }
        }
    }

    #[test]
    fn a_loaded_down_link_is_passed_sideways_on_a_modified_tree() {
        let t = Topology::kary_ntree(4, 2).with_horizontal(1);
        let r = TreeRoutes::of(&t).unwrap();
        // Nodes 0 and 4 (different leaves) both to node 1: D-mod-K takes both over the same top
        // switch, so the second flow's down link holds the first.
        let mut load = vec![0; r.tree.outputs];
        let (mut p1, mut p2) = (Vec::new(), Vec::new());
        r.route(4, 1, FlowRouting::Adaptive, &mut load, &mut p1);
        r.route(8, 1, FlowRouting::Adaptive, &mut load, &mut p2);
        assert_eq!(p1.len(), 3);
        assert_eq!(p2.len(), 4, "up, sideways, down, down: {p2:?}");
        assert_eq!(p1.last(), p2.last(), "the same last link to node 1");
        // Oblivious routing never leaves the tree's links.
        let mut load = vec![0; r.tree.outputs];
        r.route(4, 1, FlowRouting::Oblivious, &mut load, &mut p1);
        r.route(8, 1, FlowRouting::Oblivious, &mut load, &mut p2);
        assert_eq!(p2.len(), 3);
    }

    #[test]
    fn contention_counts_flows_on_the_busiest_link_of_each_path() {
        let t = Topology::kary_ntree(4, 2);
        let r = TreeRoutes::of(&t).unwrap();
        // Every node of leaf 0 to a node of leaf 1 with the same last digit: D-mod-K sends all
        // four over distinct top switches, so no link is shared.
        let mut perm: Vec<u32> = (0..16).collect();
        for i in 0..4 {
            perm.swap(i, i + 4);
        }
        let c = r.contention(&perm, FlowRouting::Oblivious);
        assert_eq!((c.max, c.mean), (1, 1.0));
        // All four to destinations with the same last digit: one top switch for all.
        let perm: Vec<u32> = vec![4, 8, 12, 0, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15];
        let c = r.contention(&perm, FlowRouting::Oblivious);
        assert!(c.max > 1, "{c:?}");
        let a = r.contention(&perm, FlowRouting::Adaptive);
        assert!(a.max <= c.max && a.mean <= c.mean, "{a:?} {c:?}");
        let mut rng = SplitMix64::new(7);
        let p = permutation(16, &mut rng);
        let mut sorted = p.clone();
        sorted.sort();
        assert_eq!(sorted, (0..16).collect::<Vec<_>>());
    }
}
