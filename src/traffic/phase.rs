//! Communication phases (Birk and Zdornov, section 5): flows of a stated size that end once
//! their last byte is delivered, and superposed random permutations of such flows.
//!
//! A phase flow's data is cut into messages of its message size (the last one shorter), each
//! message into MTU packets; the source posts its packets one by one, each no earlier than
//! `start + (flits before it) / rate` and only while the send memory and the destination's queue
//! pair have room (never dropped). Among a node's flows with a packet due, the one due earliest
//! posts first (ties: the flow listed first). The flow ends in the cycle the tail of its last
//! packet reaches the destination; the phase completes when its last flow ends.
//!
//! `permutations`: `n` random permutations of the nodes, drawn one after the other from the
//! scenario's seed by [`crate::fabric::flow_routes::permutation`] (the draws of
//! `arnsim contention`); node `i` sends one flow to `p(i)` for each permutation `p`, a node that
//! a permutation maps to itself sends nothing in it.

use crate::blocks::rng::SplitMix64;
use crate::fabric::flow_routes::permutation;

/// How a node spaces its phase flows' packets (`node.injection`; Birk and Zdornov, section 6).
/// Bernoulli flows and trace replays are not affected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Injection {
    /// Each flow paced on its own: packet `j` falls due at `start + (flits before it) / rate`,
    /// the flow due earliest posts first, and a flow held back by back-pressure catches up.
    #[default]
    Paced,
    /// Periodic selection: one packet every `d_p / R` (`R` the sum of the rates of the node's
    /// flows still sending, at most the link's), from the flow with the least `D(f, t) / r(f)`
    /// (data sent over rate; ties to the flow listed first), only while nothing of the node
    /// waits to be sent; after back-pressure the period counts from the packet actually
    /// posted, with no make-up.
    Ps,
    /// Shaped virtual clock as the paper adapts it: whenever nothing of the node waits to be
    /// sent, the flow with the least `D(f, t) / r(f)` among the eligible ones (its last packet
    /// posted at least `d_p / r(f)` ago); none eligible, the node waits.
    Svc,
}

impl Injection {
    /// Every scheme's name in scenario files.
    pub const NAMES: [&'static str; 3] = ["paced", "ps", "svc"];

    /// The scheme of that name.
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "paced" => Some(Injection::Paced),
            "ps" => Some(Injection::Ps),
            "svc" => Some(Injection::Svc),
            _ => None,
        }
    }
}

/// One finite flow of a phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhaseFlow {
    /// Source node.
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// Its size in bytes, as written.
    pub bytes: u64,
    /// Its size in flits (the bytes rounded up to whole flits).
    pub flits: u64,
    /// Message size in flits.
    pub message_flits: u32,
    /// Largest rate, a share of the link (0 excluded, to 1).
    pub rate: f64,
    /// First cycle.
    pub start: u64,
}

impl PhaseFlow {
    /// The smallest packet the flow makes with MTU `mtu`: the last piece of a whole message or
    /// of its last, shorter message.
    pub fn smallest_packet(&self, mtu: u64) -> u64 {
        let piece = |m: u64| match m % mtu {
            0 => mtu,
            r => r,
        };
        let m = self.message_flits.max(1) as u64;
        let last = match self.flits % m {
            0 => m,
            r => r,
        };
        let whole = if self.flits > m { piece(m) } else { mtu };
        whole.min(piece(last)).max(1)
    }
}

/// The flows of `n` superposed random permutations of `nodes` nodes drawn from `seed`: in
/// permutation order, then node order; a node mapped to itself sends nothing.
pub fn permutation_flows(
    nodes: u32,
    n: u32,
    seed: u64,
    (bytes, flits): (u64, u64),
    message_flits: u32,
) -> Vec<PhaseFlow> {
    let mut rng = SplitMix64::new(seed);
    let mut flows = Vec::new();
    for _ in 0..n {
        let p = permutation(nodes, &mut rng);
        for (src, &dst) in p.iter().enumerate() {
            if dst != src as u32 {
                flows.push(PhaseFlow {
                    src: src as u32,
                    dst,
                    bytes,
                    flits,
                    message_flits,
                    rate: 1.0,
                    start: 0,
                });
            }
        }
    }
    flows
}

/// Per flow, its tag at its destination: one plus the number of flows before it to the same
/// node (`Packet::flow`). `None` when a node receives more than `u16::MAX` flows.
pub fn tags(flows: &[PhaseFlow], nodes: u32) -> Option<Vec<u16>> {
    let mut into = vec![0u32; nodes as usize];
    flows
        .iter()
        .map(|f| {
            let c = into.get_mut(f.dst as usize)?;
            *c += 1;
            u16::try_from(*c).ok()
        })
        .collect()
}

/// The phase's completion cycle: the last flow's end, when every flow has ended (`ends` per
/// flow, `None` for one that has not).
pub fn completion(ends: &[Option<u64>]) -> Option<u64> {
    ends.iter().try_fold(0, |m, e| e.map(|e| e.max(m)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_are_those_of_the_contention_analysis() {
        let flows = permutation_flows(16, 3, 9, (1000, 16), 64);
        let mut rng = SplitMix64::new(9);
        let mut k = 0;
        for _ in 0..3 {
            let p = permutation(16, &mut rng);
            for (i, &d) in p.iter().enumerate().filter(|&(i, &d)| i as u32 != d) {
                assert_eq!((flows[k].src, flows[k].dst), (i as u32, d));
                k += 1;
            }
        }
        assert_eq!(k, flows.len());
        // Every node sends and receives at most one flow per permutation.
        for n in 0..16 {
            assert!(flows.iter().filter(|f| f.src == n).count() <= 3);
            assert!(flows.iter().filter(|f| f.dst == n).count() <= 3);
        }
    }

    #[test]
    fn tags_count_the_flows_into_each_node() {
        let f = |src, dst| PhaseFlow {
            src,
            dst,
            bytes: 64,
            flits: 1,
            message_flits: 1,
            rate: 1.0,
            start: 0,
        };
        let flows = [f(0, 1), f(2, 1), f(0, 3), f(0, 1)];
        assert_eq!(tags(&flows, 4).unwrap(), [1, 2, 1, 3]);
        assert_eq!(tags(&flows, 2), None, "node 3 is not a node");
    }

    #[test]
    fn smallest_packets_and_completion() {
        let mut f = PhaseFlow {
            src: 0,
            dst: 1,
            bytes: 0,
            flits: 200,
            message_flits: 64,
            rate: 1.0,
            start: 0,
        };
        assert_eq!(f.smallest_packet(64), 8, "200 = 3 x 64 + 8");
        f.message_flits = 100;
        assert_eq!(f.smallest_packet(64), 36, "messages of 100: 64 + 36");
        f.flits = 30;
        assert_eq!(f.smallest_packet(64), 30, "one short message");
        assert_eq!(completion(&[Some(4), Some(9), Some(2)]), Some(9));
        assert_eq!(completion(&[Some(4), None]), None);
        assert_eq!(completion(&[]), Some(0));
    }
}
