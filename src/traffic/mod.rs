//! Traffic patterns of section 4.2.1 of Rocher-Gonzalez et al., turned into per-node flows.
//!
//! - Uniform (RND): every node sends to uniformly random destinations at a given load.
//! - Hot spot (H10, H25, H10-4, H25-4): a fraction of the nodes (10 % or 25 %) send to the hot
//!   spots at full rate during the hot window (from 3 ms, for 90 ms), and uniformly outside it;
//!   the other nodes send uniformly all the time. With several hot spots, the hot senders are dealt
//!   to them in turn.
//! - Bit reversal (`bitrev`): node `d` sends to the node whose index is `d`'s bits reversed over
//!   log2(nodes) bits, at a given load; the node count must be a power of two. A node whose index
//!   reads the same reversed (0, the last node, and every other palindrome) would send to itself:
//!   it sends nothing.
//! - Explicit flows (source, destination, rate, size, start, stop) for directed studies.
//! - Communication phases ([`phase`]): flows of a stated size that end, explicit or superposed
//!   random permutations.
//!
//! Which nodes are hot senders is fixed: evenly spaced over the node range (node `i` is chosen
//! when `floor((i+1) f) > floor(i f)` for fraction `f`), skipping the hot spots themselves.

pub mod phase;

use crate::fabric::node::{Destination, Flow};

/// Hot-spot nodes of the paper for configuration 1 (432 nodes) or 2 (3456 nodes), with one or
/// four hot spots.
pub fn paper_hot_spots(nodes: u32, count: usize) -> Option<Vec<u32>> {
    match (nodes, count) {
        (432, 1) => Some(vec![4]),
        (432, 4) => Some(vec![4, 120, 244, 431]),
        (3456, 1) => Some(vec![4]),
        (3456, 4) => Some(vec![0, 889, 1772, 3454]),
        _ => None,
    }
}

/// A traffic pattern over a fabric of `nodes` end nodes.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// Uniform random destinations at `load` (flits per cycle per node).
    Uniform {
        /// Offered load, 0 to 1.
        load: f64,
    },
    /// Bit reversal at `load`: node `d` sends to [`bit_reversal`]`(d)`; a node that maps to
    /// itself sends nothing.
    BitReversal {
        /// Offered load, 0 to 1.
        load: f64,
    },
    /// Hot-spot traffic.
    HotSpot {
        /// Fraction of the nodes sending to the hot spots (0.10 for H10, 0.25 for H25).
        fraction: f64,
        /// Hot-spot nodes.
        hot: Vec<u32>,
        /// First cycle of the hot window.
        start: u64,
        /// Length of the hot window in cycles.
        duration: u64,
        /// Load of the uniform traffic (and of the hot senders outside the window).
        load: f64,
    },
    /// A share of every node's traffic to one hot node, the rest uniform (Martínez et al.,
    /// section 5.1: 5, 10 or 20 % to a randomly selected host). The hot node sends uniform
    /// traffic only.
    HotShare {
        /// Offered load of every node, 0 to 1.
        load: f64,
        /// Share of it sent to the hot node, 0 to 1.
        share: f64,
        /// The hot node.
        hot: u32,
    },
    /// Explicit flows.
    Explicit(Vec<ExplicitFlow>),
    /// The ranks of an MPI trace, replayed closed-loop (`crate::replay`): no Bernoulli source.
    Trace,
    /// The finite flows of a communication phase only ([`phase`]): no Bernoulli source.
    Phase,
}

/// One explicit flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExplicitFlow {
    /// Source node.
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// Offered rate in flits per cycle.
    pub rate: f64,
    /// Message size in flits.
    pub message_flits: u32,
    /// First cycle.
    pub start: u64,
    /// First cycle after the flow.
    pub stop: u64,
}

/// The destination of node `d` under bit reversal over `nodes` end nodes: `d`'s index with its
/// log2(`nodes`) bits in reverse order. `None` when `nodes` is not a power of two or `d` is not
/// a node.
pub fn bit_reversal(d: u32, nodes: u32) -> Option<u32> {
    if !nodes.is_power_of_two() || d >= nodes {
        return None;
    }
    let bits = nodes.trailing_zeros();
    Some(match bits {
        0 => 0,
        b => d.reverse_bits() >> (32 - b),
    })
}

/// Whether node `i` is one of the evenly spaced `fraction` of the nodes.
fn chosen(i: u32, fraction: f64) -> bool {
    ((i + 1) as f64 * fraction).floor() > (i as f64 * fraction).floor()
}

/// The hot senders of a hot-spot pattern, in node order.
pub fn hot_senders(nodes: u32, fraction: f64, hot: &[u32]) -> Vec<u32> {
    (0..nodes)
        .filter(|&i| chosen(i, fraction) && !hot.contains(&i))
        .collect()
}

impl Pattern {
    /// Flows per node, messages of `message_flits` flits, generation until `end`.
    pub fn flows(
        &self,
        nodes: u32,
        message_flits: u32,
        end: u64,
    ) -> Result<Vec<Vec<Flow>>, String> {
        let uniform = |rate: f64, start: u64, stop: u64| Flow {
            dest: Destination::Uniform,
            rate,
            message_flits,
            start,
            stop,
            hot: false,
        };
        let mut out: Vec<Vec<Flow>> = vec![Vec::new(); nodes as usize];
        match self {
            Pattern::Uniform { load } => {
                for f in &mut out {
                    f.push(uniform(*load, 0, end));
                }
            }
            Pattern::HotShare { load, share, hot } => {
                if *hot >= nodes {
                    return Err(format!(
                        "hot node {hot} is not a node (the fabric has {nodes})"
                    ));
                }
                for (i, f) in out.iter_mut().enumerate() {
                    let to_hot = if i as u32 == *hot { 0.0 } else { load * share };
                    if *load - to_hot > 0.0 {
                        f.push(uniform(load - to_hot, 0, end));
                    }
                    if to_hot > 0.0 {
                        f.push(Flow {
                            dest: Destination::Node(*hot),
                            rate: to_hot,
                            message_flits,
                            start: 0,
                            stop: end,
                            hot: true,
                        });
                    }
                }
            }
            Pattern::BitReversal { load } => {
                for (d, f) in out.iter_mut().enumerate() {
                    let Some(to) = bit_reversal(d as u32, nodes) else {
                        return Err(format!(
                            "`bitrev` needs a power-of-two node count, the fabric has {nodes}"
                        ));
                    };
                    // A palindromic index would send to itself: that node sends nothing.
                    if to != d as u32 {
                        f.push(Flow {
                            dest: Destination::Node(to),
                            rate: *load,
                            message_flits,
                            start: 0,
                            stop: end,
                            hot: false,
                        });
                    }
                }
            }
            Pattern::HotSpot {
                fraction,
                hot,
                start,
                duration,
                load,
            } => {
                if let Some(&h) = hot.iter().find(|&&h| h >= nodes) {
                    return Err(format!(
                        "hot spot {h} is not a node (the fabric has {nodes})"
                    ));
                }
                if hot.is_empty() {
                    return Err("a hot-spot pattern needs at least one hot spot".into());
                }
                let senders = hot_senders(nodes, *fraction, hot);
                let stop = start.saturating_add(*duration);
                for (i, f) in out.iter_mut().enumerate() {
                    match senders.iter().position(|&s| s == i as u32) {
                        Some(k) => {
                            f.push(uniform(*load, 0, *start));
                            f.push(Flow {
                                dest: Destination::Node(hot[k % hot.len()]),
                                rate: 1.0,
                                message_flits,
                                start: *start,
                                stop: stop.min(end),
                                hot: true,
                            });
                            f.push(uniform(*load, stop, end));
                        }
                        None => f.push(uniform(*load, 0, end)),
                    }
                }
            }
            Pattern::Trace | Pattern::Phase => {}
            Pattern::Explicit(flows) => {
                for e in flows {
                    if e.src >= nodes || e.dst >= nodes {
                        return Err(format!(
                            "flow {} -> {} names a node beyond {}",
                            e.src,
                            e.dst,
                            nodes - 1
                        ));
                    }
                    if e.src == e.dst {
                        return Err(format!("flow {} -> {} sends to itself", e.src, e.dst));
                    }
                    out[e.src as usize].push(Flow {
                        dest: Destination::Node(e.dst),
                        rate: e.rate,
                        message_flits: e.message_flits,
                        start: e.start,
                        stop: e.stop.min(end),
                        hot: false,
                    });
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_hot_spot_lists() {
        assert_eq!(paper_hot_spots(432, 4).unwrap(), [4, 120, 244, 431]);
        assert_eq!(paper_hot_spots(3456, 4).unwrap(), [0, 889, 1772, 3454]);
        assert_eq!(paper_hot_spots(432, 1).unwrap(), [4]);
        assert!(paper_hot_spots(100, 1).is_none());
    }

    #[test]
    fn h10_and_h25_sender_counts() {
        assert_eq!(hot_senders(432, 0.10, &[4]).len(), 43);
        assert_eq!(hot_senders(432, 0.25, &[4]).len(), 108);
        let s = hot_senders(432, 0.25, &[4, 120, 244, 431]);
        assert!(!s.contains(&4) && !s.contains(&431));
    }

    #[test]
    fn hot_window_and_dealing() {
        let p = Pattern::HotSpot {
            fraction: 0.25,
            hot: vec![4, 120, 244, 431],
            start: 100,
            duration: 1000,
            load: 1.0,
        };
        let flows = p.flows(432, 64, 2000).unwrap();
        let senders = hot_senders(432, 0.25, &[4, 120, 244, 431]);
        for (k, &s) in senders.iter().enumerate() {
            let f = &flows[s as usize];
            assert_eq!(f.len(), 3);
            assert_eq!(f[1].dest, Destination::Node([4, 120, 244, 431][k % 4]));
            assert_eq!((f[1].start, f[1].stop), (100, 1100));
            assert_eq!((f[0].stop, f[2].start), (100, 1100));
        }
        let others = (0..432).filter(|i| !senders.contains(i)).count();
        assert_eq!(flows.iter().filter(|f| f.len() == 1).count(), others);
    }

    #[test]
    fn bit_reversal_reverses_the_index_bits() {
        // 16 nodes, 4 bits: 0001 -> 1000, 0010 -> 0100, 0011 -> 1100, 1011 -> 1101.
        let m: Vec<u32> = (0..16).map(|d| bit_reversal(d, 16).unwrap()).collect();
        assert_eq!(m, [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15]);
        // A permutation that is its own inverse.
        for d in 0..1024 {
            let r = bit_reversal(d, 1024).unwrap();
            assert_eq!(bit_reversal(r, 1024), Some(d));
        }
        assert_eq!(
            bit_reversal(1, 2),
            Some(1),
            "one bit: every index is a palindrome"
        );
        assert_eq!(bit_reversal(0, 1), Some(0));
        assert_eq!(bit_reversal(6, 8), Some(3), "110 -> 011");
        assert_eq!(bit_reversal(1, 12), None, "12 is not a power of two");
        assert_eq!(bit_reversal(16, 16), None, "not a node");
    }

    #[test]
    fn bit_reversal_flows_skip_palindromes() {
        let flows = Pattern::BitReversal { load: 0.4 }
            .flows(16, 64, 1000)
            .unwrap();
        // 0000, 0110, 1001, 1111 read the same reversed: those four send nothing.
        let silent: Vec<usize> = (0..16).filter(|&d| flows[d].is_empty()).collect();
        assert_eq!(silent, [0, 6, 9, 15]);
        let f = flows[1][0];
        assert_eq!(f.dest, Destination::Node(8));
        assert_eq!(
            (f.rate, f.message_flits, f.start, f.stop),
            (0.4, 64, 0, 1000)
        );
        assert!(
            flows
                .iter()
                .all(|f| f.len() <= 1 && f.iter().all(|f| !f.hot))
        );
        let e = Pattern::BitReversal { load: 0.4 }
            .flows(12, 64, 1000)
            .unwrap_err();
        assert!(e.contains("power-of-two") && e.contains("12"), "{e}");
    }

    #[test]
    fn explicit_flows_are_checked() {
        let bad = Pattern::Explicit(vec![ExplicitFlow {
            src: 1,
            dst: 9,
            rate: 1.0,
            message_flits: 16,
            start: 0,
            stop: 10,
        }]);
        assert!(bad.flows(8, 16, 100).unwrap_err().contains("beyond 7"));
    }

    #[test]
    fn a_hot_share_splits_every_other_nodes_load() {
        let flows = Pattern::HotShare {
            load: 0.5,
            share: 0.2,
            hot: 3,
        }
        .flows(8, 16, 1000)
        .unwrap();
        for (i, f) in flows.iter().enumerate() {
            let total: f64 = f.iter().map(|f| f.rate).sum();
            assert!((total - 0.5).abs() < 1e-12, "node {i}: {total}");
            let to_hot: f64 = f
                .iter()
                .filter(|f| f.dest == Destination::Node(3))
                .map(|f| f.rate)
                .sum();
            let want = if i == 3 { 0.0 } else { 0.1 };
            assert!((to_hot - want).abs() < 1e-12, "node {i}: {to_hot}");
            assert!(f.iter().all(|f| f.hot == (f.dest == Destination::Node(3))));
        }
        // Everything to the hot node: no uniform flow left beside it.
        let all = Pattern::HotShare {
            load: 1.0,
            share: 1.0,
            hot: 0,
        }
        .flows(4, 16, 1000)
        .unwrap();
        assert_eq!(all[1].len(), 1);
        assert!(all[0].iter().all(|f| f.dest == Destination::Uniform));
    }
}
