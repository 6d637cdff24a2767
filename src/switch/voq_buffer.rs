//! Input buffer of one switch port: VC-partitioned flit storage with virtual output queues.
//!
//! Each VC owns a fixed share of the buffer (its credits upstream). Packets are descriptors in a
//! pool of slots sized at build; each (VC, output) pair keeps a FIFO of slots as a linked list, the
//! way shared-memory switch buffers keep their VOQs. Occupancy is counted in flits per VC (what flow
//! control sees), per output across VCs (the VOQ occupancy the congestion detector sees) and per
//! (VC, output). A packet is counted in a VOQ from the cycle it is routed; flits that arrived before
//! are added then.

use crate::switch::{MAX_PORTS, port_ix, vc_ix};
use crate::wire::Packet;
use crate::wire::link::MAX_VCS;

/// End of a list.
const NIL: u16 = u16::MAX;

/// A packet held in the buffer.
#[derive(Clone, Copy, Debug, Default)]
pub struct Slot {
    /// The packet as stored (its `vc` is the VC of this buffer).
    pub pkt: Packet,
    /// Output port chosen by the routing stage (meaningful once routed).
    pub out: u8,
    /// VC the packet will use in the next buffer (set when routed).
    pub next_vc: u8,
    /// Flits received so far.
    pub arrived: u16,
    /// Flits sent so far.
    pub sent: u16,
    /// Whether the routing stage has placed it in a VOQ.
    pub routed: bool,
    /// First cycle in which it may request its output.
    pub ready: u64,
}

/// The buffer of one input port.
///
/// The counters and queue heads are fixed arrays (at most `MAX_VCS` VCs and `MAX_PORTS` outputs),
/// so a flit's bookkeeping touches no heap pointer and needs no bounds check.
#[derive(Clone, Debug)]
pub struct VoqBuffer {
    vcs: usize,
    cap: [u16; MAX_VCS],
    occ: [u16; MAX_VCS],
    voq_occ: [u16; MAX_PORTS],
    vc_voq_occ: [[u16; MAX_PORTS]; MAX_VCS],
    head: [[u16; MAX_PORTS]; MAX_VCS],
    tail: [[u16; MAX_PORTS]; MAX_VCS],
    next: Vec<u16>,
    slots: Vec<Slot>,
    free: u16,
    used: u16,
}

impl VoqBuffer {
    /// A buffer of `vcs` VCs of `cap_per_vc` flits, `outs` outputs and room for `max_packets`
    /// packets at once.
    pub fn new(vcs: usize, outs: usize, cap_per_vc: u16, max_packets: usize) -> Self {
        assert!(max_packets < NIL as usize);
        assert!((1..=MAX_VCS).contains(&vcs) && (1..=MAX_PORTS).contains(&outs));
        let mut next: Vec<u16> = (1..=max_packets as u16).collect();
        if let Some(last) = next.last_mut() {
            *last = NIL;
        }
        VoqBuffer {
            vcs,
            cap: [cap_per_vc; MAX_VCS],
            occ: [0; MAX_VCS],
            voq_occ: [0; MAX_PORTS],
            vc_voq_occ: [[0; MAX_PORTS]; MAX_VCS],
            head: [[NIL; MAX_PORTS]; MAX_VCS],
            tail: [[NIL; MAX_PORTS]; MAX_VCS],
            next,
            slots: vec![Slot::default(); max_packets],
            free: if max_packets > 0 { 0 } else { NIL },
            used: 0,
        }
    }

    /// Capacity of VC `vc` in flits.
    pub fn capacity(&self, vc: usize) -> u16 {
        self.cap[vc_ix(vc)]
    }

    /// Flits stored in VC `vc`.
    pub fn occupancy(&self, vc: usize) -> u16 {
        self.occ[vc_ix(vc)]
    }

    /// Flits of routed packets waiting for output `out`, over all VCs (the VOQ occupancy).
    pub fn voq_occupancy(&self, out: usize) -> u16 {
        self.voq_occ[port_ix(out)]
    }

    /// Flits of routed packets in VC `vc` waiting for output `out`.
    pub fn vc_voq_occupancy(&self, vc: usize, out: usize) -> u16 {
        self.vc_voq_occ[vc_ix(vc)][port_ix(out)]
    }

    /// Packets held.
    pub fn packets(&self) -> usize {
        self.used as usize
    }

    /// Total flits stored.
    pub fn flits(&self) -> u32 {
        self.occ[..self.vcs].iter().map(|&o| o as u32).sum()
    }

    /// A slot by index.
    pub fn slot(&self, s: u16) -> &Slot {
        &self.slots[s as usize]
    }

    /// Takes a slot for a packet whose head flit arrives now. `None` when the pool is full
    /// (a configuration error: the pool is sized for the smallest packets).
    pub fn admit(&mut self, pkt: Packet) -> Option<u16> {
        let s = self.free;
        if s == NIL {
            return None;
        }
        self.free = self.next[s as usize];
        self.next[s as usize] = NIL;
        self.used += 1;
        self.slots[s as usize] = Slot {
            pkt,
            ..Slot::default()
        };
        Some(s)
    }

    /// One flit of the packet in slot `s` arrives. Returns false on a VC overflow (more flits
    /// than the VC's credits allow).
    pub fn arrive_flit(&mut self, s: u16) -> bool {
        let slot = &mut self.slots[s as usize];
        slot.arrived += 1;
        let vc = vc_ix(slot.pkt.vc as usize);
        let (routed, out) = (slot.routed, port_ix(slot.out as usize));
        if self.occ[vc] >= self.cap[vc] {
            return false;
        }
        self.occ[vc] += 1;
        if routed {
            self.voq_occ[out] += 1;
            self.vc_voq_occ[vc][out] += 1;
        }
        true
    }

    /// Rewrites the header flags of the packet in slot `s` (the routing stage sets the adapted
    /// bit).
    pub fn set_flags(&mut self, s: u16, flags: crate::wire::PacketFlags) {
        self.slots[s as usize].pkt.flags = flags;
    }

    /// The routing stage places the packet in slot `s` in the VOQ of `out`; it may request the
    /// output from cycle `ready`.
    pub fn route(&mut self, s: u16, out: u8, next_vc: u8, ready: u64) {
        let slot = &mut self.slots[s as usize];
        debug_assert!(!slot.routed);
        slot.routed = true;
        slot.out = out;
        slot.next_vc = next_vc;
        slot.ready = ready;
        let (vc, o) = (vc_ix(slot.pkt.vc as usize), port_ix(out as usize));
        let arrived = slot.arrived;
        self.voq_occ[o] += arrived;
        self.vc_voq_occ[vc][o] += arrived;
        if self.tail[vc][o] == NIL {
            self.head[vc][o] = s;
        } else {
            self.next[self.tail[vc][o] as usize] = s;
        }
        self.tail[vc][o] = s;
        self.next[s as usize] = NIL;
    }

    /// The packet at the head of the (VC, output) queue.
    #[inline]
    pub fn head(&self, vc: usize, out: usize) -> Option<(u16, &Slot)> {
        let s = self.head[vc_ix(vc)][port_ix(out)];
        (s != NIL).then(|| (s, &self.slots[s as usize]))
    }

    /// Removes the head of the (VC, output) queue when it wins arbitration; its flits stay
    /// counted until they leave.
    pub fn pop(&mut self, vc: usize, out: usize) -> u16 {
        let (vc, out) = (vc_ix(vc), port_ix(out));
        let s = self.head[vc][out];
        debug_assert!(s != NIL);
        self.head[vc][out] = self.next[s as usize];
        if self.head[vc][out] == NIL {
            self.tail[vc][out] = NIL;
        }
        self.next[s as usize] = NIL;
        s
    }

    /// One flit of slot `s` leaves. Returns `(vc, tail)`: the VC freed and whether it was the
    /// last flit (the slot is then released). `None` when the flit has not arrived yet.
    pub fn depart_flit(&mut self, s: u16) -> Option<(usize, bool)> {
        let slot = &mut self.slots[s as usize];
        if slot.sent >= slot.arrived {
            return None;
        }
        slot.sent += 1;
        let vc = vc_ix(slot.pkt.vc as usize);
        let out = port_ix(slot.out as usize);
        let tail = slot.sent == slot.pkt.len;
        self.occ[vc] -= 1;
        self.voq_occ[out] -= 1;
        self.vc_voq_occ[vc][out] -= 1;
        if tail {
            self.next[s as usize] = self.free;
            self.free = s;
            self.used -= 1;
        }
        Some((vc, tail))
    }

    /// Number of VCs.
    pub fn vcs(&self) -> usize {
        self.vcs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(id: u32, vc: u8, len: u16) -> Packet {
        Packet {
            id,
            vc,
            len,
            ..Packet::default()
        }
    }

    #[test]
    fn voq_fifo_and_accounting() {
        let mut b = VoqBuffer::new(2, 3, 10, 4);
        let a = b.admit(pkt(1, 0, 2)).unwrap();
        assert!(b.arrive_flit(a));
        assert_eq!(b.voq_occupancy(2), 0, "not routed yet");
        b.route(a, 2, 0, 5);
        assert_eq!(b.voq_occupancy(2), 1);
        assert!(b.arrive_flit(a));
        assert_eq!(b.voq_occupancy(2), 2);
        let c = b.admit(pkt(2, 0, 1)).unwrap();
        assert!(b.arrive_flit(c));
        b.route(c, 2, 0, 6);
        assert_eq!(b.head(0, 2).unwrap().0, a);
        assert_eq!(b.pop(0, 2), a);
        assert_eq!(b.head(0, 2).unwrap().0, c);
        assert_eq!(b.depart_flit(a), Some((0, false)));
        assert_eq!(b.depart_flit(a), Some((0, true)));
        assert_eq!(b.occupancy(0), 1);
        assert_eq!(b.voq_occupancy(2), 1);
        assert_eq!(b.packets(), 1);
    }

    #[test]
    fn cut_through_cannot_overtake_arrival() {
        let mut b = VoqBuffer::new(1, 1, 10, 2);
        let a = b.admit(pkt(1, 0, 3)).unwrap();
        b.arrive_flit(a);
        b.route(a, 0, 0, 0);
        b.pop(0, 0);
        assert!(b.depart_flit(a).is_some());
        assert!(b.depart_flit(a).is_none(), "second flit not here yet");
    }

    #[test]
    fn vc_overflow_is_reported_and_pool_limits() {
        let mut b = VoqBuffer::new(1, 1, 1, 1);
        let a = b.admit(pkt(1, 0, 2)).unwrap();
        assert!(b.arrive_flit(a));
        assert!(!b.arrive_flit(a));
        assert!(b.admit(pkt(2, 0, 1)).is_none());
    }
}
