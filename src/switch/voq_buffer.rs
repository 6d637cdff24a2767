//! Input buffer of one switch port: VC-partitioned flit storage with virtual output queues.
//!
//! Each VC owns a fixed share of the buffer (its credits upstream). Packets are descriptors in a
//! pool of slots sized at build; each (VC, output) pair keeps a FIFO of slots as a linked list, the
//! way shared-memory switch buffers keep their VOQs. Occupancy is counted in flits per VC (what flow
//! control sees), per output across VCs (the VOQ occupancy the congestion detector sees) and per
//! (VC, output). A packet is counted in a VOQ from the cycle it is routed; flits that arrived before
//! are added then.
//!
//! Arrivals and departures are kept as closed forms. A packet's flits arrive one per cycle from
//! its head, and once it wins its output they leave one per cycle from a known first cycle; so
//! the buffer records when the packet arriving (one at a time) and each packet leaving (one per
//! output) started, computes how many flits have come or gone by any cycle, and settles its
//! counters when the next head arrives or the tail leaves. Every count is therefore read
//! "through" a cycle: the flits that have arrived and left by the end of that cycle. Within a
//! cycle the switch reads the state as of the end of the previous one, except in its transmit
//! phase and after the step.

use crate::switch::{MAX_PORTS, port_ix, vc_ix};
use crate::wire::Packet;
use crate::wire::link::{Lanes, streamed, tail_cycle};

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
    /// Whether the routing stage has placed it in a VOQ.
    pub routed: bool,
    /// FA: the escape route (option 0) of an adaptive packet.
    pub escape: u8,
    /// FA: routed to an adaptive option, the credits of its next VC's escape half, which it
    /// needs free beside its length; 0 otherwise.
    pub reserve: u16,
    /// First cycle in which it may request its output.
    pub ready: u64,
    /// The next slot of its list: its VOQ's FIFO while queued, the free list while free (`NIL`
    /// at the end). Kept in the slot, so that taking a packet from either list touches the
    /// slot's own cache line and no other.
    next: u16,
}

/// No output chosen yet (of the packet arriving).
const NO_OUT: u8 = u8::MAX;

/// The packet arriving: one flit per cycle from `start` (its head).
#[derive(Clone, Copy, Debug)]
struct Arrival {
    start: u64,
    slot: u16,
    len: u16,
    vc: u8,
    /// Its output once routed, else `NO_OUT`.
    out: u8,
}

impl Arrival {
    /// Flits come by the end of cycle `through`.
    #[inline]
    fn got(&self, through: u64) -> u16 {
        streamed(self.start, self.len, through)
    }

    /// The cycle its tail arrives.
    #[inline]
    fn end(&self) -> u64 {
        tail_cycle(self.start, self.len)
    }
}

/// Why a head could not be taken in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrivalFault {
    /// The previous packet still has `left` flits to come (packet `id`).
    StillArriving {
        /// Packet arriving.
        id: u32,
        /// Its flits still due.
        left: u64,
    },
    /// The descriptor pool is full.
    PoolFull,
    /// The head is on a VC the port does not have.
    NoSuchVc,
    /// The head's VC is full: the sender spent a credit it did not have.
    Overflow,
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
        streamed(self.start, self.len, through)
    }
}

/// The queues of one output: flits waiting for it over all VCs and per VC, each VC's FIFO of
/// slots (first and last), and the packet leaving for it. An output's bookkeeping sits in one
/// 64-byte block with 4 VC lanes (128 bytes with 16), so that what a head's routing, a grant and
/// a packet's departure update share a cache line.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Voq<const V: usize> {
    occ: u16,
    vc_occ: [u16; V],
    head: [u16; V],
    tail: [u16; V],
    /// The packet leaving for the output (at most one at a time), valid where the buffer's
    /// `departing` has the output's bit.
    dep: Departure,
}

const _: () = assert!(std::mem::size_of::<Voq<4>>() == 64);

impl<const V: usize> Voq<V> {
    const EMPTY: Self = Voq {
        occ: 0,
        vc_occ: [0; V],
        head: [NIL; V],
        tail: [NIL; V],
        dep: Departure {
            start: 0,
            slot: 0,
            len: 0,
            vc: 0,
        },
    };
}

/// The buffer of one input port.
///
/// The counters and queue ends are fixed arrays (`V` VC lanes and `MAX_PORTS` outputs),
/// so a flit's bookkeeping touches no heap pointer and needs no bounds check. The fields are laid
/// out in the order written (`repr(C)`): the ones every arrival and departure reads first, then
/// the per-output blocks.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct VoqBuffer<const V: usize> {
    vcs: usize,
    /// Outputs with a packet leaving (bit per output).
    departing: u64,
    /// The packet arriving, if any, until it is settled (at the next head, or when it leaves).
    arr: Option<Arrival>,
    cap: [u16; V],
    occ: [u16; V],
    free: u16,
    used: u16,
    slots: Vec<Slot>,
    /// Flits received per VC, of the packets settled.
    received: [u64; V],
    /// Per output: its queues and the packet leaving for it.
    voqs: [Voq<V>; MAX_PORTS],
}

impl<const V: usize> VoqBuffer<V> {
    /// A buffer of `vcs` VCs of `cap_per_vc` flits, `outs` outputs and room for `max_packets`
    /// packets at once.
    pub fn new(vcs: usize, outs: usize, cap_per_vc: u16, max_packets: usize) -> Self {
        assert!(max_packets < NIL as usize);
        let () = Lanes::<V>::OK;
        assert!((1..=V).contains(&vcs) && (1..=MAX_PORTS).contains(&outs));
        let mut slots = vec![Slot::default(); max_packets];
        for (s, slot) in slots.iter_mut().enumerate() {
            slot.next = if s + 1 < max_packets {
                s as u16 + 1
            } else {
                NIL
            };
        }
        VoqBuffer {
            vcs,
            cap: [cap_per_vc; V],
            occ: [0; V],
            voqs: [Voq::EMPTY; MAX_PORTS],
            slots,
            departing: 0,
            arr: None,
            received: [0; V],
            free: if max_packets > 0 { 0 } else { NIL },
            used: 0,
        }
    }

    /// Asks for the cache line of the slot the next head will take.
    #[inline]
    pub fn prefetch_free(&self) {
        if let Some(s) = self.slots.get(self.free as usize) {
            crate::wire::prefetch::prefetch(s);
        }
    }

    /// Capacity of VC `vc` in flits.
    pub fn capacity(&self, vc: usize) -> u16 {
        self.cap[vc_ix::<V>(vc)]
    }

    /// Flits stored in VC `vc` at the end of cycle `through`.
    pub fn occupancy(&self, vc: usize, through: u64) -> u16 {
        let vc = vc_ix::<V>(vc);
        let mut occ = self.occ[vc];
        if let Some(a) = self.arr
            && a.vc as usize == vc
        {
            occ += a.got(through);
        }
        let mut scan = self.departing;
        while scan != 0 {
            let o = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let d = &self.voqs[o].dep;
            if d.vc as usize == vc {
                occ -= d.gone(through);
            }
        }
        occ
    }

    /// [`VoqBuffer::occupancy`] of every VC lane, the packets arriving and leaving visited once
    /// (for a waveform reading all of a port's VCs each cycle).
    pub fn occupancies(&self, through: u64) -> [u16; V] {
        let mut occ = self.occ;
        if let Some(a) = self.arr {
            occ[vc_ix::<V>(a.vc as usize)] += a.got(through);
        }
        let mut scan = self.departing;
        while scan != 0 {
            let o = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let d = &self.voqs[o].dep;
            occ[vc_ix::<V>(d.vc as usize)] -= d.gone(through);
        }
        occ
    }

    /// Flits of the packet leaving for `out` gone by the end of cycle `through`.
    #[inline]
    fn gone(&self, out: usize, through: u64) -> u16 {
        if self.departing >> out & 1 == 1 {
            self.voqs[out].dep.gone(through)
        } else {
            0
        }
    }

    /// Flits of the packet arriving, routed to `out`, come by the end of cycle `through`.
    #[inline]
    fn got(&self, out: usize, through: u64) -> u16 {
        match self.arr {
            Some(a) if a.out as usize == out => a.got(through),
            _ => 0,
        }
    }

    /// Flits of the packet arriving, routed to `out`, still to come after cycle `through`: how
    /// much the VOQ of `out` may still grow before the next head.
    #[inline]
    pub fn due_for(&self, out: usize, through: u64) -> u16 {
        match self.arr {
            Some(a) if a.out as usize == out => a.len - a.got(through),
            _ => 0,
        }
    }

    /// How many VCs hold flits for output `out` at the end of cycle `through`.
    #[inline]
    pub fn vcs_holding(&self, out: usize, vcs: usize, through: u64) -> u32 {
        (0..vcs)
            .filter(|&v| self.vc_voq_occupancy(v, out, through) > 0)
            .count() as u32
    }

    /// Flits of routed packets waiting for output `out`, over all VCs (the VOQ occupancy), at
    /// the end of cycle `through`.
    #[inline]
    pub fn voq_occupancy(&self, out: usize, through: u64) -> u16 {
        let out = port_ix(out);
        self.voqs[out].occ + self.got(out, through) - self.gone(out, through)
    }

    /// Flits received on `vc` by the end of cycle `through`.
    pub fn received(&self, vc: usize, through: u64) -> u64 {
        let vc = vc_ix::<V>(vc);
        let mut n = self.received[vc];
        if let Some(a) = self.arr
            && a.vc as usize == vc
        {
            n += a.got(through) as u64;
        }
        n
    }

    /// Flits of the packet in slot `s`, `len` flits long, come by the end of cycle `through`.
    /// Every packet but the one arriving has come whole, so the slot itself is not read.
    #[inline]
    fn arrived(&self, s: u16, len: u16, through: u64) -> u16 {
        match self.arr {
            Some(a) if a.slot == s => a.got(through),
            _ => len,
        }
    }

    /// Flits of the packet in slot `s`, `len` flits long, counted in the buffer's counters: all
    /// of them once settled, none while it is the packet arriving (whose flits the closed form
    /// counts).
    #[inline]
    fn settled(&self, s: u16, len: u16) -> u16 {
        match self.arr {
            Some(a) if a.slot == s => 0,
            _ => len,
        }
    }

    /// Flits of routed packets in VC `vc` waiting for output `out`, at the end of cycle
    /// `through`.
    #[inline]
    pub fn vc_voq_occupancy(&self, vc: usize, out: usize, through: u64) -> u16 {
        let (vc, out) = (vc_ix::<V>(vc), port_ix(out));
        let gone = if self.voqs[out].dep.vc as usize == vc {
            self.gone(out, through)
        } else {
            0
        };
        let got = match self.arr {
            Some(a) if a.vc as usize == vc => self.got(out, through),
            _ => 0,
        };
        self.voqs[out].vc_occ[vc] + got - gone
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

    /// The head of `pkt` arrives in cycle `now`; its body follows one flit per cycle. Takes a
    /// slot for it (the pool is sized for the smallest packets) and returns it. The departures
    /// of `now` come after (the switch's phase order), so the head needs room as of the end of
    /// the cycle before.
    pub fn arrive_head(&mut self, pkt: Packet, now: u64) -> Result<u16, ArrivalFault> {
        if let Some(a) = self.arr {
            if a.end() >= now {
                return Err(ArrivalFault::StillArriving {
                    id: self.slots[a.slot as usize].pkt.id,
                    left: a.end() + 1 - now,
                });
            }
            self.settle();
        }
        let s = self.free;
        if s == NIL {
            return Err(ArrivalFault::PoolFull);
        }
        if pkt.vc as usize >= self.vcs {
            return Err(ArrivalFault::NoSuchVc);
        }
        let vc = vc_ix::<V>(pkt.vc as usize);
        if self.occupancy(vc, now.saturating_sub(1)) >= self.cap[vc] {
            return Err(ArrivalFault::Overflow);
        }
        self.free = self.slots[s as usize].next;
        self.used += 1;
        self.slots[s as usize] = Slot {
            pkt,
            next: NIL,
            ..Slot::default()
        };
        self.arr = Some(Arrival {
            start: now,
            slot: s,
            len: pkt.len,
            vc: pkt.vc,
            out: NO_OUT,
        });
        Ok(s)
    }

    /// Counts the packet arriving, whose tail has come, into the counters.
    fn settle(&mut self) {
        let Some(a) = self.arr.take() else {
            return;
        };
        let vc = vc_ix::<V>(a.vc as usize);
        self.occ[vc] += a.len;
        self.received[vc] += a.len as u64;
        if a.out != NO_OUT {
            let out = port_ix(a.out as usize);
            let q = &mut self.voqs[out];
            q.occ += a.len;
            q.vc_occ[vc] += a.len;
        }
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
        let (vc, o, len) = (
            vc_ix::<V>(slot.pkt.vc as usize),
            port_ix(out as usize),
            slot.pkt.len,
        );
        // Flits of the packet still arriving count in the VOQ through the closed form.
        let arrived = self.settled(s, len);
        if let Some(a) = &mut self.arr
            && a.slot == s
        {
            a.out = out;
        }
        let q = &mut self.voqs[o];
        q.occ += arrived;
        q.vc_occ[vc] += arrived;
        let last = q.tail[vc];
        q.tail[vc] = s;
        if last == NIL {
            q.head[vc] = s;
        } else {
            self.slots[last as usize].next = s;
        }
        self.slots[s as usize].next = NIL;
    }

    /// FA: the packet in slot `s` took an adaptive option whose next VC keeps `reserve` (at
    /// least one) credits for its escape half; `escape` is its escape route.
    pub fn set_adaptive(&mut self, s: u16, escape: u8, reserve: u16) {
        let slot = &mut self.slots[s as usize];
        debug_assert!(reserve > 0);
        slot.reserve = reserve;
        slot.escape = escape;
    }

    /// FA: the adaptive packet at the head of the (VC, `out`) queue, short of room in the
    /// adaptive half of its next VC, leaves that queue for the tail of its escape route's
    /// (`next_vc` there), bringing the flits it has received; it may request from cycle `ready`.
    /// Returns its slot and escape route.
    pub fn escape(&mut self, vc: usize, out: usize, next_vc: u8, ready: u64) -> (u16, u8) {
        let s = self.pop(vc, out);
        let slot = &mut self.slots[s as usize];
        debug_assert!(slot.reserve != 0);
        let e = slot.escape;
        slot.reserve = 0;
        slot.routed = false;
        let len = slot.pkt.len;
        let arrived = self.settled(s, len);
        let (v, o) = (vc_ix::<V>(vc), port_ix(out));
        let q = &mut self.voqs[o];
        q.occ -= arrived;
        q.vc_occ[v] -= arrived;
        self.route(s, e, next_vc, ready);
        (s, e)
    }

    /// The packet at the head of the (VC, output) queue.
    #[inline]
    pub fn head(&self, vc: usize, out: usize) -> Option<(u16, &Slot)> {
        let s = self.voqs[port_ix(out)].head[vc_ix::<V>(vc)];
        (s != NIL).then(|| (s, &self.slots[s as usize]))
    }

    /// Removes the head of the (VC, output) queue when it wins arbitration; its flits stay
    /// counted until they leave.
    pub fn pop(&mut self, vc: usize, out: usize) -> u16 {
        let (vc, out) = (vc_ix::<V>(vc), port_ix(out));
        let q = &mut self.voqs[out];
        let s = q.head[vc];
        debug_assert!(s != NIL);
        let slot = &mut self.slots[s as usize];
        q.head[vc] = slot.next;
        slot.next = NIL;
        if q.head[vc] == NIL {
            q.tail[vc] = NIL;
        }
        s
    }

    /// The packet in slot `s` (popped from its queue) starts leaving for its output: one flit
    /// per cycle from cycle `start`. Returns its VC here, or `None` when its head has not arrived
    /// (a cut-through underrun).
    pub fn start_departure(&mut self, s: u16, start: u64) -> Option<usize> {
        let slot = &self.slots[s as usize];
        if self.arrived(s, slot.pkt.len, start) == 0 {
            return None;
        }
        let out = port_ix(slot.out as usize);
        debug_assert!(
            self.departing >> out & 1 == 0,
            "two packets leave for one output"
        );
        self.voqs[out].dep = Departure {
            start,
            slot: s,
            len: slot.pkt.len,
            vc: slot.pkt.vc,
        };
        self.departing |= 1 << out;
        Some(vc_ix::<V>(slot.pkt.vc as usize))
    }

    /// The tail of the packet leaving for `out` leaves in cycle `now`: its flits are taken off
    /// the counters and its slot is released. Returns its VC, or `None` when not all of its
    /// flits had arrived (the departure would have overtaken the arrival: a cut-through
    /// underrun).
    pub fn finish_departure(&mut self, out: usize, now: u64) -> Option<usize> {
        let out = port_ix(out);
        debug_assert!(self.departing >> out & 1 == 1);
        let d = self.voqs[out].dep;
        debug_assert_eq!(d.gone(now), d.len, "tail leaves before its time");
        if self.arrived(d.slot, d.len, now) < d.len {
            return None;
        }
        if self.arr.is_some_and(|a| a.slot == d.slot) {
            self.settle();
        }
        self.departing &= !(1 << out);
        let vc = vc_ix::<V>(d.vc as usize);
        self.occ[vc] -= d.len;
        let q = &mut self.voqs[out];
        q.occ -= d.len;
        q.vc_occ[vc] -= d.len;
        self.slots[d.slot as usize].next = self.free;
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
mod tests;
