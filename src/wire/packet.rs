//! Data packet descriptor: the header fields a switch looks at, and bookkeeping for statistics.

use bitflags::bitflags;

bitflags! {
    /// Header flag bits.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
    pub struct PacketFlags: u8 {
        /// AFI "adapted" bit: the packet was re-routed; it travels in the AFC and follows
        /// deterministic routing from then on (Rocher-Gonzalez et al., sections 2.4 and 3.5).
        const ADAPTED = 1 << 0;
        /// The packet belongs to a hot-spot flow of the traffic pattern (statistics only; no
        /// switch looks at it).
        const HOT = 1 << 1;
        /// The packet carries part of a replayed MPI message: its `id` is the message's receive
        /// index at the destination node (`fabric::node::replay`).
        const MESSAGE = 1 << 2;
        /// InfiniBand's forward explicit congestion notification: a switch output over its
        /// congestion threshold marked the packet (`blocks::fecn_marker`, IBTA annex A10).
        const FECN = 1 << 3;
        /// InfiniBand's backward explicit congestion notification: the packet is a congestion
        /// notification packet (CNP) a destination sent back to the source of a packet that
        /// arrived marked with FECN (`fabric::node::cc`).
        const BECN = 1 << 4;
        /// Flow routing's setup packet p_s (Birk and Zdornov, section 4): one flit, it chooses
        /// its flow's port at every switch it crosses (the port selection unit) and stores it
        /// in the input's route cache; the destination answers with an `ACK`.
        const SETUP = 1 << 5;
        /// Flow routing's teardown packet p_t: one flit, it follows its flow's route and erases
        /// the route-cache entries; the destination answers with an `ACK`.
        const TEARDOWN = 1 << 6;
        /// The destination's answer to a `SETUP` or `TEARDOWN` (one flit, back to the flow's
        /// source): the source's next step of the flow may go.
        const ACK = 1 << 7;
    }
}

/// A data packet, as a descriptor. 24 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Packet {
    /// Injection cycle at the source.
    pub injected: u64,
    /// Unique id (per fabric run).
    pub id: u32,
    /// Source end node.
    pub src: u16,
    /// Destination LID. With LMC > 0 its least significant bit asks for adaptive routing (1) or
    /// deterministic routing (0) (Martínez et al., section 4.2).
    pub dlid: u16,
    /// Length in flits (1 to 4096).
    pub len: u16,
    /// Service level (4 bits in InfiniBand).
    pub sl: u8,
    /// VC the packet occupies in the buffer it is in (the AFC once adapted).
    pub vc: u8,
    /// VC the packet would use had it not been adapted: kept in the header so that ARNs name the
    /// original VC (Rocher-Gonzalez et al., section 3.4).
    pub orig_vc: u8,
    /// Header flags.
    pub flags: PacketFlags,
    /// The connection identifier (CID) of the finite flow of a communication phase the packet
    /// carries part of: the flow's index among the phase's flows into the destination node,
    /// plus one; 0 for any other packet. Under flow routing a switch's route cache keys a flow
    /// by GCID = (`src`, `dlid`, `flow`) (Birk and Zdornov, section 4); the header carries it
    /// (`hdl-ref/`'s descriptor, a switch recording).
    pub flow: u16,
}

impl Packet {
    /// Whether the AFI adapted bit is set.
    pub fn adapted(&self) -> bool {
        self.flags.contains(PacketFlags::ADAPTED)
    }

    /// Whether the packet is one of flow routing's control packets (setup, teardown, their
    /// acknowledgement), which carry no data of the flow.
    pub fn flow_control(&self) -> bool {
        self.flags
            .intersects(PacketFlags::SETUP | PacketFlags::TEARDOWN | PacketFlags::ACK)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_stays_small() {
        assert_eq!(std::mem::size_of::<Packet>(), 24);
    }
}
