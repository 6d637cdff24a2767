//! Flow routing's handshakes at the HCA (Birk and Zdornov, section 4), under `routing = "flow"`:
//! a phase flow first sends a one-flit setup packet and posts no data before its
//! acknowledgement comes back; after its last data packet it sends a teardown packet, and the
//! next flow of the same connection (the same destination) sets up only after the teardown's
//! acknowledgement. A node that receives a setup or teardown answers with a one-flit `ACK` to
//! the flow's source, sent like a CNP: ahead of the send memory, when the link has a credit.
//!
//! Control packets are packets like any other on the links and in the counters (injected,
//! delivered, latency); they carry no data of their flow.

use super::*;
use crate::switch::RoutingMode;

/// Where a phase flow stands in its handshakes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum Handshake {
    /// Its setup packet is still to be posted.
    Setup,
    /// Its setup packet is out; its acknowledgement has not come.
    AwaitSetup,
    /// Data may go (always, without flow routing).
    #[default]
    Open,
    /// Its data is all posted; its teardown packet is still to be posted.
    Teardown,
    /// Its teardown packet is out; its acknowledgement has not come.
    AwaitTeardown,
    /// Torn down: the connection's next flow may set up.
    Closed,
}

impl<const V: usize> EndNode<V> {
    /// The node's part in a phase's handshakes, when the switches route flows: every flow starts
    /// with its setup.
    pub(super) fn handshakes_on(&self) -> bool {
        self.params.routing == RoutingMode::Flow
    }

    /// A control packet reached this node in cycle `now`: a setup or teardown is acknowledged,
    /// an acknowledgement moves its flow on.
    pub(super) fn handshake_received(&mut self, pkt: &Packet, now: u64) {
        let Some(p) = self.phase.as_deref_mut() else {
            debug_assert!(false, "node {}: a control packet without a phase", self.id);
            return;
        };
        if pkt.flags.contains(PacketFlags::ACK) {
            let known = p.acknowledged(pkt.src as u32, pkt.flow, now);
            debug_assert!(known, "node {}: an ACK of an unknown flow", self.id);
        } else {
            p.acks.push_back((pkt.src as u32, pkt.flow));
        }
    }

    /// The acknowledgement to send in cycle `now`, if one waits and the link has a credit for
    /// it.
    pub(super) fn ack_to_start(&self, now: u64) -> Option<Packet> {
        let &(dest, tag) = self.phase.as_deref()?.acks.front()?;
        self.control_packet(dest, (PacketFlags::ACK, tag), now)
    }

    /// The acknowledgement [`EndNode::ack_to_start`] gave has started.
    pub(super) fn ack_sent(&mut self) {
        if let Some(p) = self.phase.as_deref_mut() {
            p.acks.pop_front();
        }
    }

    /// The destination of the acknowledgement waiting, if any.
    pub(super) fn ack_due(&self) -> Option<u32> {
        self.phase.as_deref()?.acks.front().map(|a| a.0)
    }
}
