//! A stand-in network for the replay tests: a message handed to a node in cycle `t` starts when
//! the node's previous message has left (messages are serialized per sending node), leaves one
//! flit per cycle in packets of at most `mtu` flits, and each packet arrives whole `latency`
//! cycles after its tail left. The receiving node counts the packets' flits
//! ([`Replayer::flits_arrived`]).

use super::replayer::{Blocked, Post, Replayer, execution_time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// How a run ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every rank finished; the execution time.
    Finished(u64),
    /// Nothing in flight, nothing to wake, ranks waiting: who waits on what, node by node.
    Deadlock(Vec<Blocked>),
}

/// What a run saw, by global message id.
#[derive(Debug, Default)]
pub struct Log {
    /// Cycle each message was posted, and the post.
    pub posted: Vec<Option<(u64, Post)>>,
    /// Cycle each message was delivered (its last packet arrived).
    pub delivered: Vec<Option<u64>>,
}

/// The fake network's parameters.
#[derive(Clone, Copy, Debug)]
pub struct Net {
    pub latency: u64,
    /// Largest packet, in flits.
    pub mtu: u32,
}

/// A packet in flight: arrival cycle, receiving node, receive index there, message, flits.
type Packet = Reverse<(u64, u32, u32, u32, u32)>;

impl Net {
    /// Runs `replayers` (one per node, index = node) until all finish or nothing can move.
    pub fn run(&self, replayers: &mut [Replayer], messages: usize) -> (Outcome, Log) {
        let mut log = Log {
            posted: vec![None; messages],
            delivered: vec![None; messages],
        };
        let mut free = vec![0u64; replayers.len()];
        let mut flight: BinaryHeap<Packet> = BinaryHeap::new();
        let mut handed: Vec<Post> = Vec::new();
        let mut now = 0;
        loop {
            loop {
                let mut moved = false;
                while let Some(&Reverse((at, node, index, msg, flits))) = flight.peek() {
                    if at > now {
                        break;
                    }
                    flight.pop();
                    let log = &mut log.delivered[msg as usize];
                    assert!(log.is_none(), "message {msg}: a packet after the last");
                    if replayers[node as usize].flits_arrived(index, flits, at) {
                        *log = Some(at);
                    }
                    moved = true;
                }
                for (node, r) in replayers.iter_mut().enumerate() {
                    if r.next_wake().is_none_or(|w| w > now) {
                        continue;
                    }
                    moved = true;
                    r.advance(now, |p| handed.push(*p));
                    for p in handed.drain(..) {
                        let mut tail = free[node].max(now);
                        let mut left = p.flits;
                        while left > 0 {
                            let flits = left.min(self.mtu);
                            left -= flits;
                            tail += u64::from(flits);
                            let packet =
                                (tail + self.latency, p.dst_node, p.dst_index, p.msg, flits);
                            flight.push(Reverse(packet));
                        }
                        free[node] = tail;
                        assert!(log.posted[p.msg as usize].replace((now, p)).is_none());
                    }
                    assert!(r.next_wake().is_none_or(|w| w > now), "advance left work");
                }
                if !moved {
                    break;
                }
            }
            let wake = replayers.iter().filter_map(|r| r.next_wake()).min();
            let arrival = flight.peek().map(|Reverse(f)| f.0);
            match wake.into_iter().chain(arrival).min() {
                Some(t) => now = t,
                None => break,
            }
        }
        let outcome = match execution_time(replayers) {
            Some(t) => Outcome::Finished(t),
            None => Outcome::Deadlock(replayers.iter().flat_map(|r| r.blocked()).collect()),
        };
        (outcome, log)
    }
}
