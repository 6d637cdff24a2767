//! DFSSSP: deadlock-free single-source shortest-path routing (Domke, Hoefler and Nagel,
//! "Deadlock-Free Oblivious Routing for Arbitrary Topologies", IPDPS 2011; OpenSM's `dfsssp`).
//!
//! Routes: one path per destination node, the destinations taken in order. Every channel between
//! switches has a weight, 1 at first; the paths toward a destination form the tree of shortest
//! paths to its switch under the current weights (Dijkstra, ties to the lowest port), and then
//! every channel of that tree gains the number of end nodes whose packets cross it, so the next
//! destinations avoid the loaded channels. One LFT option per destination (LMC 0).
//!
//! Layers: a path from a switch with end nodes to a destination depends on each next channel it
//! takes. Paths are given, in the order destination then source switch, to the first layer whose
//! channel dependencies stay acyclic with the path's added (first fit; OpenSM instead puts every
//! path in layer 0 and moves the paths of the weakest edge of each cycle up a layer; both give
//! acyclic layers, first fit needs no cycle search over a whole layer). The layers found are then
//! spread over all [`VLS`] VLs as OpenSM does: each layer gets VLs in proportion to its paths and
//! deals its paths round robin over them (a part of an acyclic layer is acyclic). A path's VL is
//! its SL (`path_sl`).

use super::path_sl::PathSls;
use super::{PortLists, SwitchGraph};
use crate::fabric::topology::Topology;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// VLs DFSSSP spreads its layers over: the 8 of the paper's DFSSSP runs (seed 003, figure 14).
pub const VLS: u8 = 8;

/// The ports of every switch toward every destination (one each) and every path's SL.
pub fn route(topo: &Topology) -> Result<(PortLists, PathSls), String> {
    let g = SwitchGraph::of(topo)?;
    let ns = g.adj.len();
    let peer = g.peers();
    let first = channel_index(&peer);
    let chan = |s: usize, p: u16| first[s] + p as usize;
    let mut nodes_at = vec![0u64; ns];
    for &(s, _) in &g.attach {
        nodes_at[s] += 1;
    }
    let mut weight = vec![1u64; first[ns]];
    let mut ports = vec![vec![Vec::new(); topo.nodes as usize]; ns];
    for (d, &(sd, pd)) in g.attach.iter().enumerate() {
        let dist = distances_to(&g, sd, &weight, chan);
        for s in 0..ns {
            let port = if s == sd {
                pd
            } else {
                g.adj[s]
                    .iter()
                    .filter(|&&(t, _)| dist[t] != u64::MAX)
                    .map(|&(t, p)| (weight[chan(s, p)] + dist[t], p))
                    .min()
                    .ok_or_else(|| format!("node {d} cannot be reached from switch {s}"))?
                    .1
            };
            ports[s][d] = vec![port];
        }
        // Every channel of the tree toward d gains the end nodes whose packets cross it.
        for s0 in (0..ns).filter(|&s| nodes_at[s] > 0) {
            let mut s = s0;
            while s != sd {
                let p = ports[s][d][0];
                weight[chan(s, p)] += nodes_at[s0];
                s = peer[s][p as usize].ok_or("a route leaves the switches")?;
            }
        }
    }
    let (layer_of, count) = layer_paths(topo, &ports, VLS, "dfsssp")?;
    // Spread the layers over the VLs.
    let used = count.len();
    let mut vls = vec![1u64; used];
    for _ in used..VLS as usize {
        let l = (0..used)
            .max_by(|&a, &b| {
                let (x, y) = (count[a] * vls[b], count[b] * vls[a]);
                x.cmp(&y).then(b.cmp(&a))
            })
            .unwrap_or(0);
        vls[l] += 1;
    }
    let first_vl: Vec<u64> = vls
        .iter()
        .scan(0, |acc, &k| {
            *acc += k;
            Some(*acc - k)
        })
        .collect();
    // Each layer deals its paths round robin over its VLs, in the order they were layered.
    let mut dealt = vec![0u64; used];
    let mut rows = vec![vec![0u8; topo.nodes as usize]; ns];
    for d in 0..topo.nodes as usize {
        for s in 0..ns {
            if let Some(l) = layer_of[s][d] {
                let l = l as usize;
                rows[s][d] = (first_vl[l] + dealt[l] % vls[l]) as u8;
                dealt[l] += 1;
            }
        }
    }
    Ok((ports, PathSls::new(VLS, rows)))
}

/// Per switch, the dense index of its first port among all switches' ports (one more entry at
/// the end: the count).
fn channel_index(peer: &[Vec<Option<usize>>]) -> Vec<usize> {
    let mut first = vec![0usize; peer.len() + 1];
    for (s, ports) in peer.iter().enumerate() {
        first[s + 1] = first[s] + ports.len();
    }
    first
}

/// Per source switch and destination the path's layer (`None`: no path), and paths per layer.
pub(super) type PathLayers = (Vec<Vec<Option<u8>>>, Vec<u64>);

/// Layers the paths of `ports` (option 0 of every switch) from every switch with end nodes to
/// every end node, in the order destination then source switch, each into the first layer whose
/// channel dependencies stay acyclic with it (at most `most` layers, or an error naming
/// `engine`). A switch without end nodes, or the destination's own, has no path.
pub(super) fn layer_paths(
    topo: &Topology,
    ports: &PortLists,
    most: u8,
    engine: &str,
) -> Result<PathLayers, String> {
    let g = SwitchGraph::of(topo)?;
    let ns = g.adj.len();
    let peer = g.peers();
    let first = channel_index(&peer);
    let mut has_nodes = vec![false; ns];
    for &(s, _) in &g.attach {
        has_nodes[s] = true;
    }
    let mut layers = Layers::new(first[ns], most, engine);
    let mut layer_of = vec![vec![None; topo.nodes as usize]; ns];
    let mut path = Vec::new();
    for (d, &(sd, _)) in g.attach.iter().enumerate() {
        for s0 in (0..ns).filter(|&s| has_nodes[s] && s != sd) {
            path.clear();
            let mut s = s0;
            while s != sd {
                let p = ports[s][d][0];
                path.push((first[s] + p as usize) as u32);
                s = peer[s][p as usize].ok_or("a route leaves the switches")?;
                if path.len() > ns {
                    return Err(format!(
                        "routing engine {engine}: the route to node {d} loops"
                    ));
                }
            }
            layer_of[s0][d] = Some(layers.place(&path)?);
        }
    }
    Ok((layer_of, layers.count))
}

/// Weighted distances of every switch to switch `to` (Dijkstra over the channels' weights).
fn distances_to(
    g: &SwitchGraph,
    to: usize,
    weight: &[u64],
    chan: impl Fn(usize, u16) -> usize,
) -> Vec<u64> {
    let mut dist = vec![u64::MAX; g.adj.len()];
    let mut heap = BinaryHeap::from([Reverse((0u64, to))]);
    dist[to] = 0;
    while let Some(Reverse((d, t))) = heap.pop() {
        if d > dist[t] {
            continue;
        }
        // Channels s -> t: t's cables, seen from s.
        for &(s, _) in &g.adj[t] {
            for &(u, p) in &g.adj[s] {
                if u == t {
                    let nd = d + weight[chan(s, p)];
                    if nd < dist[s] {
                        dist[s] = nd;
                        heap.push(Reverse((nd, s)));
                    }
                }
            }
        }
    }
    dist
}

/// The layers' channel dependency graphs, kept acyclic.
struct Layers {
    channels: usize,
    /// Layers at most, and the engine named in the error past them.
    most: u8,
    engine: String,
    layers: Vec<Layer>,
    /// Paths per layer.
    count: Vec<u64>,
    /// Search state: the search each channel was last seen by.
    seen: Vec<u32>,
    search: u32,
    /// The dependencies (channel pairs) of the path being placed that its layer did not have.
    added: Vec<(u32, u32)>,
}

/// One layer's dependencies, with a topological order of its channels kept as edges come in
/// (Pearce and Kelly, "A Dynamic Topological Sort Algorithm for Directed Acyclic Graphs", 2006):
/// an edge that agrees with the order costs nothing; one that does not is checked by searching
/// only the channels between its two ends in the order.
struct Layer {
    out: Vec<Vec<u32>>,
    inn: Vec<Vec<u32>>,
    ord: Vec<u32>,
}

impl Layers {
    fn new(channels: usize, most: u8, engine: &str) -> Self {
        Layers {
            channels,
            most,
            engine: engine.to_string(),
            layers: Vec::new(),
            count: Vec::new(),
            seen: vec![0; channels],
            search: 0,
            added: Vec::new(),
        }
    }

    /// Puts the path of `chans` into the first layer it leaves acyclic; an error when that would
    /// take more than `most` layers.
    fn place(&mut self, chans: &[u32]) -> Result<u8, String> {
        for l in 0.. {
            if l == self.layers.len() {
                if l == self.most as usize {
                    return Err(format!(
                        "routing engine {} needs more than {} layers (VLs) to be deadlock-free",
                        self.engine, self.most
                    ));
                }
                self.layers.push(Layer {
                    out: vec![Vec::new(); self.channels],
                    inn: vec![Vec::new(); self.channels],
                    ord: (0..self.channels as u32).collect(),
                });
                self.count.push(0);
            }
            self.added.clear();
            let mut fits = true;
            for w in chans.windows(2) {
                let (a, b) = (w[0], w[1]);
                if self.layers[l].out[a as usize].contains(&b) {
                    continue;
                }
                if !self.insert(l, a, b) {
                    fits = false;
                    break;
                }
                self.added.push((a, b));
            }
            if fits {
                self.count[l] += 1;
                return Ok(l as u8);
            }
            // Take back this path's new dependencies (each the last of its two lists; the order
            // stays topological without them).
            let layer = &mut self.layers[l];
            for &(a, b) in self.added.iter().rev() {
                layer.out[a as usize].pop();
                layer.inn[b as usize].pop();
            }
        }
        unreachable!("the loop returns")
    }

    /// Adds the dependency `a → b` to layer `l` unless it closes a cycle (then `false`, nothing
    /// changed).
    fn insert(&mut self, l: usize, a: u32, b: u32) -> bool {
        let layer = &mut self.layers[l];
        let (lb, ub) = (layer.ord[b as usize], layer.ord[a as usize]);
        if a == b {
            return false;
        }
        if lb > ub {
            layer.out[a as usize].push(b);
            layer.inn[b as usize].push(a);
            return true;
        }
        // Forward from b among the channels ordered before a: reaching a closes a cycle.
        self.search += 1;
        let mark = self.search;
        let mut forward = vec![b];
        let mut stack = vec![b];
        self.seen[b as usize] = mark;
        while let Some(c) = stack.pop() {
            for &n in &layer.out[c as usize] {
                if n == a {
                    return false;
                }
                if self.seen[n as usize] != mark && layer.ord[n as usize] < ub {
                    self.seen[n as usize] = mark;
                    forward.push(n);
                    stack.push(n);
                }
            }
        }
        // Backward from a among the channels ordered after b.
        let mut backward = vec![a];
        stack.push(a);
        self.seen[a as usize] = mark;
        while let Some(c) = stack.pop() {
            for &n in &layer.inn[c as usize] {
                if self.seen[n as usize] != mark && layer.ord[n as usize] > lb {
                    self.seen[n as usize] = mark;
                    backward.push(n);
                    stack.push(n);
                }
            }
        }
        // The backward set takes the lowest of their places, in its own order, then the forward set.
        backward.sort_unstable_by_key(|&c| layer.ord[c as usize]);
        forward.sort_unstable_by_key(|&c| layer.ord[c as usize]);
        let mut places: Vec<u32> = backward
            .iter()
            .chain(&forward)
            .map(|&c| layer.ord[c as usize])
            .collect();
        places.sort_unstable();
        for (&c, &o) in backward.iter().chain(&forward).zip(&places) {
            layer.ord[c as usize] = o;
        }
        layer.out[a as usize].push(b);
        layer.inn[b as usize].push(a);
        true
    }
}
