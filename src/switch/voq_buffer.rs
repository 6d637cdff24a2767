//! Input buffer of one switch port: VC-partitioned flit storage with virtual output queues.
//!
//! Each VC owns a fixed share of the buffer (its credits upstream). Packets are descriptors in a
//! pool of slots sized at build; each (VC, output) pair keeps a FIFO of slots as a linked list, the
//! way shared-memory switch buffers keep their VOQs. Occupancy is counted in flits per VC (what flow
//! control sees), per output across VCs (the VOQ occupancy the congestion detector sees) and per
//! (VC, output). A packet is counted in a VOQ from the cycle it is routed; flits that arrived before
//! are added then.
//!
//! Departures are kept as closed forms: once a packet wins its output its flits leave one per
//! cycle from a known first cycle, so the buffer records the departure's start and computes how
//! many flits have left by any cycle; its counters are settled when the tail leaves. Every count
//! is therefore read "through" a cycle: the flits that have left by the end of that cycle are
//! gone. Within a cycle the switch reads the state as of the end of the previous one, except in
//! its transmit phase and after the step.

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
    /// Whether the routing stage has placed it in a VOQ.
    pub routed: bool,
    /// First cycle in which it may request its output.
    pub ready: u64,
}

/// A packet leaving the buffer for one output: one flit per cycle from `start`.
#[derive(Clone, Copy, Debug, Default)]
struct Departure {
    start: u64,
    slot: u16,
    len: u16,
    vc: u8,
}

impl Departure {
    /// Flits gone by the end of cycle `through`.
    #[inline]
    fn gone(&self, through: u64) -> u16 {
        if through < self.start {
            0
        } else {
            (through - self.start + 1).min(self.len as u64) as u16
        }
    }
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
    /// Per output: the packet leaving for it (at most one at a time), valid where `departing`
    /// has the output's bit.
    dep: [Departure; MAX_PORTS],
    departing: u64,
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
            dep: [Departure::default(); MAX_PORTS],
            departing: 0,
            free: if max_packets > 0 { 0 } else { NIL },
            used: 0,
        }
    }

    /// Capacity of VC `vc` in flits.
    pub fn capacity(&self, vc: usize) -> u16 {
        self.cap[vc_ix(vc)]
    }

    /// Flits stored in VC `vc` at the end of cycle `through`.
    pub fn occupancy(&self, vc: usize, through: u64) -> u16 {
        let vc = vc_ix(vc);
        let mut occ = self.occ[vc];
        let mut scan = self.departing;
        while scan != 0 {
            let o = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let d = &self.dep[o];
            if d.vc as usize == vc {
                occ -= d.gone(through);
            }
        }
        occ
    }

    /// Flits of the packet leaving for `out` gone by the end of cycle `through`.
    #[inline]
    fn gone(&self, out: usize, through: u64) -> u16 {
        if self.departing >> out & 1 == 1 {
            self.dep[out].gone(through)
        } else {
            0
        }
    }

    /// Flits of routed packets waiting for output `out`, over all VCs (the VOQ occupancy), at
    /// the end of cycle `through`.
    #[inline]
    pub fn voq_occupancy(&self, out: usize, through: u64) -> u16 {
        let out = port_ix(out);
        self.voq_occ[out] - self.gone(out, through)
    }

    /// Flits of routed packets in VC `vc` waiting for output `out`, at the end of cycle
    /// `through`.
    #[inline]
    pub fn vc_voq_occupancy(&self, vc: usize, out: usize, through: u64) -> u16 {
        let (vc, out) = (vc_ix(vc), port_ix(out));
        let gone = if self.dep[out].vc as usize == vc {
            self.gone(out, through)
        } else {
            0
        };
        self.vc_voq_occ[vc][out] - gone
    }

    /// Packets held.
    pub fn packets(&self) -> usize {
        self.used as usize
    }

    /// Total flits stored at the end of cycle `through`.
    pub fn flits(&self, through: u64) -> u32 {
        (0..self.vcs)
            .map(|v| self.occupancy(v, through) as u32)
            .sum()
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

    /// One flit of the packet in slot `s` arrives, with the departures through cycle `through`
    /// gone. Returns false on a VC overflow (more flits than the VC's credits allow).
    pub fn arrive_flit(&mut self, s: u16, through: u64) -> bool {
        let slot = &self.slots[s as usize];
        let vc = vc_ix(slot.pkt.vc as usize);
        let (routed, out) = (slot.routed, port_ix(slot.out as usize));
        if self.occupancy(vc, through) >= self.cap[vc] {
            return false;
        }
        self.slots[s as usize].arrived += 1;
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

    /// The packet in slot `s` (popped from its queue) starts leaving for its output: one flit
    /// per cycle from cycle `start`. Returns its VC here, or `None` when its head has not arrived
    /// (a cut-through underrun).
    pub fn start_departure(&mut self, s: u16, start: u64) -> Option<usize> {
        let slot = &self.slots[s as usize];
        if slot.arrived == 0 {
            return None;
        }
        let out = port_ix(slot.out as usize);
        debug_assert!(
            self.departing >> out & 1 == 0,
            "two packets leave for one output"
        );
        self.dep[out] = Departure {
            start,
            slot: s,
            len: slot.pkt.len,
            vc: slot.pkt.vc,
        };
        self.departing |= 1 << out;
        Some(vc_ix(slot.pkt.vc as usize))
    }

    /// The tail of the packet leaving for `out` leaves in cycle `now`: its flits are taken off
    /// the counters and its slot is released. Returns its VC, or `None` when not all of its
    /// flits had arrived (the departure would have overtaken the arrival: a cut-through
    /// underrun).
    pub fn finish_departure(&mut self, out: usize, now: u64) -> Option<usize> {
        let out = port_ix(out);
        debug_assert!(self.departing >> out & 1 == 1);
        let d = self.dep[out];
        debug_assert_eq!(d.gone(now), d.len, "tail leaves before its time");
        if self.slots[d.slot as usize].arrived < d.len {
            return None;
        }
        self.departing &= !(1 << out);
        let vc = vc_ix(d.vc as usize);
        self.occ[vc] -= d.len;
        self.voq_occ[out] -= d.len;
        self.vc_voq_occ[vc][out] -= d.len;
        self.next[d.slot as usize] = self.free;
        self.free = d.slot;
        self.used -= 1;
        Some(vc)
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
        assert!(b.arrive_flit(a, 0));
        assert_eq!(b.voq_occupancy(2, 0), 0, "not routed yet");
        b.route(a, 2, 0, 5);
        assert_eq!(b.voq_occupancy(2, 0), 1);
        assert!(b.arrive_flit(a, 0));
        assert_eq!(b.voq_occupancy(2, 0), 2);
        let c = b.admit(pkt(2, 0, 1)).unwrap();
        assert!(b.arrive_flit(c, 0));
        b.route(c, 2, 0, 6);
        assert_eq!(b.head(0, 2).unwrap().0, a);
        assert_eq!(b.pop(0, 2), a);
        assert_eq!(b.head(0, 2).unwrap().0, c);
        // Packet a leaves in cycles 10 and 11.
        assert_eq!(b.start_departure(a, 10), Some(0));
        assert_eq!(b.occupancy(0, 9), 3);
        assert_eq!(b.voq_occupancy(2, 10), 2);
        assert_eq!(b.vc_voq_occupancy(0, 2, 10), 2);
        assert_eq!(b.occupancy(1, 11), 0);
        assert_eq!(b.finish_departure(2, 11), Some(0));
        assert_eq!(b.occupancy(0, 11), 1);
        assert_eq!(b.voq_occupancy(2, 11), 1);
        assert_eq!(b.packets(), 1);
    }

    #[test]
    fn cut_through_cannot_overtake_arrival() {
        let mut b = VoqBuffer::new(1, 1, 10, 2);
        let a = b.admit(pkt(1, 0, 3)).unwrap();
        assert_eq!(b.start_departure(a, 1), None, "head not here yet");
        b.arrive_flit(a, 0);
        b.route(a, 0, 0, 0);
        b.pop(0, 0);
        assert!(b.start_departure(a, 1).is_some());
        assert!(b.finish_departure(0, 3).is_none(), "the body never arrived");
    }

    #[test]
    fn departures_free_room_for_arrivals_cycle_by_cycle() {
        let mut b = VoqBuffer::new(1, 2, 4, 4);
        let a = b.admit(pkt(1, 0, 4)).unwrap();
        for _ in 0..4 {
            assert!(b.arrive_flit(a, 0));
        }
        b.route(a, 1, 0, 1);
        b.pop(0, 1);
        b.start_departure(a, 5);
        let c = b.admit(pkt(2, 0, 2)).unwrap();
        assert!(!b.arrive_flit(c, 4), "full until a flit has left");
        assert!(b.arrive_flit(c, 5));
        assert!(!b.arrive_flit(c, 5), "one flit left by cycle 5");
        assert!(b.arrive_flit(c, 6));
        assert_eq!(b.occupancy(0, 6), 4);
        assert_eq!(b.occupancy(0, 8), 2);
    }

    #[test]
    fn vc_overflow_is_reported_and_pool_limits() {
        let mut b = VoqBuffer::new(1, 1, 1, 1);
        let a = b.admit(pkt(1, 0, 2)).unwrap();
        assert!(b.arrive_flit(a, 0));
        assert!(!b.arrive_flit(a, 0));
        assert!(b.admit(pkt(2, 0, 1)).is_none());
    }
}
