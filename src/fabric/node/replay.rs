//! The end node running ranks of an MPI trace (closed-loop replay, `docs/traces.md`): the host
//! side posts each message its ranks send to the queue pair of the destination, cut into MTU
//! packets, as the send memory has room; the receive side counts each message's flits in and
//! tells the ranks when a message is whole.
//!
//! A packet of a replayed message is marked `MESSAGE` and carries, in its `id`, the message's
//! receive index at its destination node ([`Post::dst_index`]): all that the receiver needs to count it in, whatever
//! the order its packets arrive in. Messages between ranks of the same node go through host
//! memory: one is delivered in the cycle the messages posted before it are all in the send
//! memory.

use super::*;
use crate::replay::{Post, Replayer};
use std::collections::VecDeque;

/// The replay state of one node: its ranks, and the messages they posted that are not yet all
/// in the send memory.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct NodeReplay {
    pub(super) ranks: Replayer,
    /// Posted messages in posting order; room for every send of the node's ranks, so that
    /// stepping never allocates.
    pending: VecDeque<Post>,
    /// Flits of the front message not yet cut into packets.
    left: u32,
}

impl NodeReplay {
    /// The replay of `ranks` on its node.
    pub fn new(ranks: Replayer) -> Self {
        NodeReplay {
            pending: VecDeque::with_capacity(ranks.sends()),
            ranks,
            left: 0,
        }
    }

    /// The node's ranks.
    pub fn ranks(&self) -> &Replayer {
        &self.ranks
    }
}

impl<const V: usize> EndNode<V> {
    /// Gives the node the ranks it runs (before the first cycle).
    pub fn attach_replay(&mut self, ranks: Replayer) {
        self.replay = Some(Box::new(NodeReplay::new(ranks)));
        self.wake = 0;
    }

    /// The node's replay, if it runs ranks of a trace.
    pub fn replay(&self) -> Option<&NodeReplay> {
        self.replay.as_deref()
    }

    /// A packet of a replayed message reached this node in cycle `now` (its tail).
    pub(super) fn replay_received(&mut self, pkt: &Packet, now: u64) {
        if let Some(r) = self.replay.as_deref_mut()
            && pkt.flags.contains(PacketFlags::MESSAGE)
        {
            r.ranks.flits_arrived(pkt.id, pkt.len as u32, now);
        }
    }

    /// The ranks' work in cycle `now`: they go on as far as they can, and what they send is
    /// posted; messages to ranks of this node are delivered at once.
    pub(super) fn replay_step(&mut self, now: u64) {
        let Some(mut r) = self.replay.take() else {
            return;
        };
        loop {
            if r.ranks.next_wake().is_some_and(|w| w <= now) {
                let pending = &mut r.pending;
                r.ranks.advance(now, |p| pending.push_back(*p));
            }
            self.post_packets(&mut r, now);
            // A local message at the front is delivered, and may let a rank go on.
            match r.pending.front().copied() {
                Some(p) if p.dst_node == self.id => {
                    r.pending.pop_front();
                    r.ranks.flits_arrived(p.dst_index, p.flits, now);
                }
                _ => break,
            }
        }
        self.replay = Some(r);
    }

    /// Cuts the posted messages into MTU packets into the send memory while it and the
    /// destination's queue pair have room, in posting order.
    fn post_packets(&mut self, r: &mut NodeReplay, now: u64) {
        while let Some(p) = r.pending.front().copied() {
            if p.dst_node == self.id || !self.has_room(p.dst_node, 1) {
                return;
            }
            if r.left == 0 {
                r.left = p.flits;
            }
            let len = r.left.min(self.mtu as u32) as u16;
            self.post(p.dst_node, len, p.dst_index, (PacketFlags::MESSAGE, 0), now);
            r.left -= len as u32;
            if r.left == 0 {
                r.pending.pop_front();
            }
        }
    }

    /// The first cycle after `now` the replay needs the node: a rank's compute ends, or a posted
    /// message waits for room (which only a packet's start makes, in a cycle the node steps).
    pub(super) fn replay_wake(&self, now: u64) -> u64 {
        let Some(r) = self.replay.as_deref() else {
            return u64::MAX;
        };
        let ranks = r.ranks.next_wake().map_or(u64::MAX, |w| w.max(now + 1));
        let posting = match r.pending.front() {
            Some(p) if p.dst_node == self.id || self.has_room(p.dst_node, 1) => now + 1,
            _ => u64::MAX,
        };
        ranks.min(posting)
    }
}

impl<const V: usize> EndNode<V> {
    /// Takes from `fresh`, the same node built anew, what a checkpoint of this one leaves out:
    /// the SL row it shares with its switch's other nodes, and the room of its send memory and
    /// of its replay's posted messages (so that stepping on allocates nothing).
    pub(in crate::fabric) fn take_unsaved(&mut self, fresh: &EndNode<V>) {
        self.path_sls = fresh.path_sls.clone();
        let room = fresh.queue.capacity();
        self.queue
            .reserve_exact(room.saturating_sub(self.queue.len()));
        if let (Some(r), Some(f)) = (&mut self.replay, &fresh.replay) {
            let room = f.pending.capacity();
            r.pending
                .reserve_exact(room.saturating_sub(r.pending.len()));
        }
    }
}
