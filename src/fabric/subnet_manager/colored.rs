//! The `colored` routing engine on fat trees: the slides' "optimized" oblivious routing, an
//! offline assignment of each switch's up port toward each destination that spreads a known
//! set of communication phases over the links (Gusat, Minkenberg and Rodríguez; Rodríguez et
//! al.'s "colored" routing).
//!
//! A phase is a set of messages in flight together: a trace's sub-phase (every rank's `k`-th
//! message), or a pattern's flows. Within a phase, a link's load is the bytes of the phase's
//! messages that cross it; phases do not load each other. The table is what a subnet manager
//! writes: one up port per switch and destination (option 0 of the LFT, the other up ports
//! after it in rotation), so every message to a destination that meets a switch leaves it by
//! the same port, whatever its source or phase.
//!
//! The search starts from D-mod-K and improves the table one entry at a time: for each
//! destination in turn, for each switch its messages climb through (lowest level first), it
//! takes the up port that most lowers the sum over phases and links of the squared load,
//! counting only the messages to that destination. Every message's path has the same length
//! whatever the up ports, so the total load is fixed and the squares are least when the loads
//! are most even; a phase that can run without two messages on one link reaches exactly that.
//! Passes repeat until one changes nothing (at most [`MAX_PASSES`]). Ties keep the entry as it
//! is, then the lowest port, so the table depends on the phases alone.

use super::fat_tree::FatTree;
use crate::fabric::topology::Topology;

/// One message of a phase: source node, destination node, bytes.
pub type Message = (u32, u32, u64);

/// Messages in flight together.
pub type Phase = Vec<Message>;

/// Passes over the destinations at most.
pub const MAX_PASSES: u32 = 8;

/// Entries the load table may hold (phases x switch output ports): 2^25 byte counts of 8
/// bytes, 256 MiB.
pub const MAX_LOAD_ENTRIES: u64 = 1 << 25;

/// The fat tree as the search walks it.
struct Tree(FatTree);

impl Tree {
    fn of(topo: &Topology) -> Self {
        Tree(FatTree::of(topo).expect("`check` refuses other topologies"))
    }

    fn outputs(&self) -> u32 {
        self.0.outputs as u32
    }

    /// The output ports (flat indices) a message from `src` to `dst` crosses when switch
    /// `sw`'s first up port toward `dst` is `first(sw)`, and the switches it climbs through.
    fn walk(&self, src: u32, dst: u32, first: impl Fn(u32) -> u32, mut hop: impl FnMut(u32, u32)) {
        let t = &self.0;
        let mut sw = t.leaf[src as usize].0;
        loop {
            let way = &t.ways[sw as usize];
            let port = way.port_after(dst, 0, first(sw)) as u32;
            hop(sw, (t.first_port[sw as usize] + port as usize) as u32);
            match t.peers[sw as usize][port as usize] {
                Some(next) => sw = next,
                None => return,
            }
        }
    }
}

/// The load table: per phase and output port, the bytes crossing it.
struct Loads {
    outputs: usize,
    bytes: Vec<u64>,
}

impl Loads {
    /// Adds `w` bytes on `(phase, port)` and returns by how much the squared load grew.
    fn add(&mut self, phase: usize, port: u32, w: u64) -> u128 {
        let l = &mut self.bytes[phase * self.outputs + port as usize];
        let before = u128::from(*l);
        *l += w;
        let w = u128::from(w);
        2 * before * w + w * w
    }

    fn remove(&mut self, phase: usize, port: u32, w: u64) {
        self.bytes[phase * self.outputs + port as usize] -= w;
    }
}

/// Refuses phases the search cannot hold, before any work.
pub fn check(topo: &Topology, phases: &[Phase]) -> Result<(), String> {
    if topo.xgft.is_none() {
        return Err("`colored` routes fat trees (`rlft` or `kary_ntree`)".into());
    }
    if phases.iter().all(|p| p.iter().all(|m| m.0 == m.1)) {
        return Err(
            "`colored` needs traffic whose messages are known before the run (a trace, a phase, \
             `flows` or `bitrev`), and this traffic has none between two nodes"
                .into(),
        );
    }
    let outputs: u64 = topo.switches.iter().map(|s| u64::from(s.ports)).sum();
    if phases.len() as u64 * outputs > MAX_LOAD_ENTRIES {
        return Err(format!(
            "`colored` would weigh {} phases on {outputs} switch ports, more than \
             {MAX_LOAD_ENTRIES} loads (256 MiB): take a trace of fewer phases",
            phases.len()
        ));
    }
    Ok(())
}

/// The first up port (index among the up ports) of every switch toward every destination,
/// `first[sw][dst]`, searched over `phases` (see the module). Entries of switches that are
/// the destination's ancestors are 0 (they send it down).
pub fn first_up_ports(topo: &Topology, phases: &[Phase]) -> Vec<Vec<u8>> {
    let tree = Tree::of(topo);
    let nodes = topo.nodes as usize;
    let mut first = dmodk_first_up_ports(topo);
    // Per destination, its messages: (phase, source, bytes).
    let mut to: Vec<Vec<(usize, u32, u64)>> = vec![Vec::new(); nodes];
    for (p, phase) in phases.iter().enumerate() {
        for &(s, d, w) in phase {
            if s != d && w > 0 {
                to[d as usize].push((p, s, w));
            }
        }
    }
    let outputs = tree.outputs() as usize;
    let mut loads = Loads {
        outputs,
        bytes: vec![0; phases.len() * outputs],
    };
    for (d, msgs) in to.iter().enumerate() {
        for &(p, s, w) in msgs {
            let f = |sw: u32| u32::from(first[sw as usize][d]);
            tree.walk(s, d as u32, f, |_, port| {
                loads.add(p, port, w);
            });
        }
    }
    let stage = |sw: u32| topo.switches[sw as usize].stage;
    for _pass in 0..MAX_PASSES {
        let mut changed = false;
        for (d, msgs) in to.iter().enumerate() {
            if msgs.is_empty() {
                continue;
            }
            let dst = d as u32;
            // Take this destination's messages off the links.
            for &(p, s, w) in msgs {
                let f = |sw: u32| u32::from(first[sw as usize][d]);
                tree.walk(s, dst, f, |_, port| loads.remove(p, port, w));
            }
            // The switches they climb through, lowest level first; a change may lead them
            // through others, which are then visited in their turn.
            let mut done: Vec<u32> = Vec::new();
            loop {
                let mut climbing: Vec<u32> = Vec::new();
                for &(_, s, _) in msgs {
                    let f = |sw: u32| u32::from(first[sw as usize][d]);
                    tree.walk(s, dst, f, |sw, _| {
                        let way = &tree.0.ways[sw as usize];
                        if way.count(dst) > 1 && !done.contains(&sw) && !climbing.contains(&sw) {
                            climbing.push(sw);
                        }
                    });
                }
                let Some(&sw) = climbing.iter().min_by_key(|&&sw| (stage(sw), sw)) else {
                    break;
                };
                done.push(sw);
                let up = tree.0.ways[sw as usize].up;
                let current = u32::from(first[sw as usize][d]);
                let mut best = (u128::MAX, current);
                for j in std::iter::once(current).chain((0..up).filter(|&j| j != current)) {
                    let f = |x: u32| {
                        if x == sw {
                            j
                        } else {
                            u32::from(first[x as usize][d])
                        }
                    };
                    let mut cost = 0u128;
                    for &(p, s, w) in msgs {
                        tree.walk(s, dst, f, |_, port| cost += loads.add(p, port, w));
                    }
                    for &(p, s, w) in msgs {
                        tree.walk(s, dst, f, |_, port| loads.remove(p, port, w));
                    }
                    // The current entry is tried first and the others in order: a tie keeps the
                    // earlier.
                    if cost < best.0 {
                        best = (cost, j);
                    }
                }
                if best.1 != current {
                    first[sw as usize][d] = best.1 as u8;
                    changed = true;
                }
            }
            for &(p, s, w) in msgs {
                let f = |sw: u32| u32::from(first[sw as usize][d]);
                tree.walk(s, dst, f, |_, port| {
                    loads.add(p, port, w);
                });
            }
        }
        if !changed {
            break;
        }
    }
    first
}

/// Per phase, the most bytes on one link under the table `first` (`first[sw][dst]`, as
/// [`first_up_ports`] gives it), in the phase's order.
pub fn largest_loads(topo: &Topology, phases: &[Phase], first: &[Vec<u8>]) -> Vec<u64> {
    let tree = Tree::of(topo);
    let mut load = vec![0u64; tree.outputs() as usize];
    phases
        .iter()
        .map(|phase| {
            load.iter_mut().for_each(|l| *l = 0);
            for &(s, d, w) in phase {
                if s != d {
                    let f = |sw: u32| u32::from(first[sw as usize][d as usize]);
                    tree.walk(s, d, f, |_, port| load[port as usize] += w);
                }
            }
            load.iter().copied().max().unwrap_or(0)
        })
        .collect()
}

/// D-mod-K's table in the form of [`first_up_ports`]'s, to compare with it.
pub fn dmodk_first_up_ports(topo: &Topology) -> Vec<Vec<u8>> {
    Tree::of(topo)
        .0
        .ways
        .iter()
        .map(|w| {
            (0..topo.nodes)
                .map(|d| ((d / w.b_l) % w.up.max(1)) as u8)
                .collect()
        })
        .collect()
}
