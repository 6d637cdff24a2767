//! A link direction: data flits one way, credits and ARNs the other way, each with the link's
//! latency in cycles.
//!
//! A full-duplex cable is two [`Channel`]s. A channel is a pair of delay lines written by one side
//! and read by the other; what is written in cycle `t` is read in cycle `t + latency` (latency at
//! least 1). Every slot carries its arrival cycle, so a reader never sees a stale value and the
//! writer and the reader can be stepped in either order within a cycle.
//!
//! Units (switches and end nodes) do not write channels themselves: what they send in a cycle
//! goes to a [`LinkSend`] (in a fabric, the unit's outbox in `fabric::scheduler`, written into the
//! channels once every unit has stepped), and they are told which of their ports receive something
//! in a cycle ([`Arriving`]), so idle links are never read.
//!
//! Since nothing sent in cycle `t` arrives before `t + latency`, a unit can step up to `latency`
//! cycles in a row (a window) before anyone reads what it sent: the delay lines hold two windows,
//! the one being read and the one being written.
//!
//! Switches and nodes send a packet's flits in consecutive cycles, from head to tail, once it
//! has won its output (virtual cut-through: the credits for the whole packet are there). So only
//! the head flit travels in the forward delay line: the receiver, having taken the head in cycle
//! `t`, takes flit `k` in cycle `t + k`, exactly when the flit-by-flit link would deliver it. The
//! invariant checks count the flits on a link from the two ends' counters of flits sent and
//! received.
//!
//! Credits come back the same way. A buffer frees a packet's flits one per cycle, from the
//! cycle its head leaves (or, at an end node, arrives) to the cycle its tail does, so the
//! receiver sends one record when a packet starts freeing credits and one when it stops
//! ([`Backward`]), and the sender's [`CreditReturns`] turns them back into the credits of each
//! cycle: exactly the counts a per-cycle credit return would deliver, in the same cycles.

mod credits;

pub(crate) use credits::Lanes;
pub use credits::{Backward, CreditReturns, FEW_VCS, MAX_VCS, lanes_for};

use super::Packet;

/// Unused slots at both ends of every delay line, so that no cache line holds slots of two delay
/// lines: the two directions of a channel, and neighbouring channels, are written by different
/// units, possibly on different threads (measured: sharing made two threads slower than one on a
/// fabric with one-cycle links).
const PAD: usize = 2;
const _: () = assert!(
    PAD * std::mem::size_of::<Slot<Option<Flit>>>() >= 64
        && PAD * std::mem::size_of::<Slot<Backward<1>>>() >= 64
);

/// The slot of a ring of `mask + 1` slots (after the padding) that holds what arrives in `cycle`.
#[inline]
fn slot_index(mask: u64, cycle: u64) -> usize {
    PAD + (cycle & mask) as usize
}

/// Flits of a packet of `len` flits moving one per cycle from cycle `start` (its head) on, that
/// have moved by the end of cycle `through`: how a packet's flits cross a link, enter and leave
/// a buffer, and how its credits are spent and come back.
#[inline]
pub fn streamed(start: u64, len: u16, through: u64) -> u16 {
    if through < start {
        0
    } else {
        (through - start + 1).min(len as u64) as u16
    }
}

/// The cycle the tail of a packet of `len` flits moves, its head moving in `start` (see
/// [`streamed`]).
#[inline]
pub fn tail_cycle(start: u64, len: u16) -> u64 {
    start + len as u64 - 1
}

/// Bytes one link direction of `latency` cycles holds in its delay lines (both rings), as
/// allocated when the fabric is built for ports of `vcs` VCs.
pub fn channel_bytes(latency: u64, vcs: usize) -> u64 {
    let slots = (PAD + ring_len(latency) as usize + PAD) as u64;
    let back = match lanes_for(vcs) {
        FEW_VCS => std::mem::size_of::<Slot<Backward<FEW_VCS>>>(),
        _ => std::mem::size_of::<Slot<Backward<MAX_VCS>>>(),
    };
    slots * (std::mem::size_of::<Slot<Option<Flit>>>() + back) as u64
}

/// Slots of a delay line of `latency` cycles: a power of two holding two windows (at least
/// `latency + 1`), so the arrivals of one window are read while those of the next are written.
pub fn ring_len(latency: u64) -> u64 {
    (2 * latency.max(1)).next_power_of_two()
}

/// One data flit on a link: the descriptor of its packet and its position in it (the fabric's
/// units put only heads on links, see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Flit {
    /// The packet (head fields travel with every flit; only the head's are used).
    pub pkt: Packet,
    /// 0 for the head flit; `pkt.len - 1` for the tail.
    pub index: u16,
}

impl Flit {
    /// Whether this is the first flit of its packet.
    pub fn is_head(&self) -> bool {
        self.index == 0
    }

    /// Whether this is the last flit of its packet.
    pub fn is_tail(&self) -> bool {
        self.index + 1 == self.pkt.len
    }
}

/// One register of a delay line, in a cache line of its own: a record written or read touches
/// one line, not two.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
#[repr(align(64))]
struct Slot<T> {
    arrival: u64,
    value: T,
}

/// One direction of a link.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Channel<const V: usize> {
    /// The unit (switch or node, as the fabric numbers them) and port the flits go to.
    fwd_to: (u32, u8),
    /// The unit and port the credits and ARNs go back to.
    bwd_to: (u32, u8),
    latency: u64,
    /// Ring length minus one (see [`ring_len`]).
    mask: u64,
    fwd: Vec<Slot<Option<Flit>>>,
    bwd: Vec<Slot<Backward<V>>>,
}

impl<const V: usize> Channel<V> {
    /// A channel of `latency` cycles (at least 1), its delay lines allocated.
    pub fn new(latency: u32) -> Self {
        let mut ch = Self::closed(latency);
        ch.open();
        ch
    }

    /// A channel of `latency` cycles whose delay lines are not allocated yet: a link the engine
    /// stepping the fabric does not carry through delay lines (see [`Channel::open`]).
    pub fn closed(latency: u32) -> Self {
        let latency = latency.max(1) as u64;
        Channel {
            fwd_to: (0, 0),
            bwd_to: (0, 0),
            latency,
            mask: ring_len(latency) - 1,
            fwd: Vec::new(),
            bwd: Vec::new(),
        }
    }

    /// Allocates its delay lines, empty, if they are not (sending on or reading a closed
    /// channel panics; one closed holds nothing in flight).
    pub fn open(&mut self) {
        if self.is_open() {
            return;
        }
        let len = PAD + self.mask as usize + 1 + PAD;
        self.fwd = vec![
            Slot {
                arrival: u64::MAX,
                value: None
            };
            len
        ];
        self.bwd = vec![
            Slot {
                arrival: u64::MAX,
                value: Backward::default()
            };
            len
        ];
    }

    /// Frees its delay lines (what they held is dropped).
    pub fn close(&mut self) {
        self.fwd = Vec::new();
        self.bwd = Vec::new();
    }

    /// Whether its delay lines are allocated.
    pub fn is_open(&self) -> bool {
        !self.fwd.is_empty()
    }

    /// Names the receiving ends (unit, port), which the writers of the delay lines report so that
    /// the receivers can be told of arrivals: flits go to `fwd_to`, credits and ARNs back to
    /// `bwd_to`.
    pub fn set_ends(&mut self, fwd_to: (u32, u8), bwd_to: (u32, u8)) {
        self.fwd_to = fwd_to;
        self.bwd_to = bwd_to;
    }

    /// Latency in cycles.
    pub fn latency(&self) -> u64 {
        self.latency
    }

    #[inline]
    fn slot(&self, cycle: u64) -> usize {
        slot_index(self.mask, cycle)
    }

    /// Sends a flit in cycle `now`; it arrives in `now + latency`.
    #[inline]
    pub fn send_flit(&mut self, now: u64, flit: Flit) {
        // SAFETY: `self` is borrowed exclusively.
        unsafe { Self::send_flit_raw(self, now, flit) };
    }

    /// [`Channel::send_flit`] through a pointer, touching only the forward ring. Returns the
    /// receiving end (unit, port) and the arrival cycle.
    ///
    /// # Safety
    /// `ch` is valid, and no other thread accesses its forward ring during the call.
    #[inline]
    pub unsafe fn send_flit_raw(ch: *mut Channel<V>, now: u64, flit: Flit) -> ((u32, u8), u64) {
        // SAFETY: `latency` and `mask` are only read, by anyone, once the channel is built; the
        // forward ring is ours alone by the contract. No reference to the whole channel is made.
        unsafe {
            let at = now + (*ch).latency;
            let s = slot_index((*ch).mask, at);
            let fwd = &mut *std::ptr::addr_of_mut!((*ch).fwd);
            debug_assert!(
                fwd[s].arrival == u64::MAX || fwd[s].arrival < now,
                "two flits in one cycle"
            );
            fwd[s] = Slot {
                arrival: at,
                value: Some(flit),
            };
            ((*ch).fwd_to, at)
        }
    }

    /// [`Channel::send_back`] through a pointer, touching only the reverse ring. Returns the
    /// receiving end (unit, port) and the arrival cycle.
    ///
    /// # Safety
    /// `ch` is valid, and no other thread accesses its reverse ring during the call.
    #[inline]
    pub unsafe fn send_back_raw(ch: *mut Channel<V>, now: u64, b: Backward<V>) -> ((u32, u8), u64) {
        // SAFETY: as in `send_flit_raw`, for the reverse ring.
        unsafe {
            let at = now + (*ch).latency;
            let s = slot_index((*ch).mask, at);
            let bwd = &mut *std::ptr::addr_of_mut!((*ch).bwd);
            bwd[s] = Slot {
                arrival: at,
                value: b,
            };
            ((*ch).bwd_to, at)
        }
    }

    /// The flit arriving in cycle `now`, if any.
    #[inline]
    pub fn recv_flit(&self, now: u64) -> Option<Flit> {
        let s = &self.fwd[self.slot(now)];
        if s.arrival == now { s.value } else { None }
    }

    /// Sends credits and/or an ARN back in cycle `now`; they arrive in `now + latency`.
    #[inline]
    pub fn send_back(&mut self, now: u64, b: Backward<V>) {
        // SAFETY: `self` is borrowed exclusively.
        unsafe { Self::send_back_raw(self, now, b) };
    }

    /// What arrives back in cycle `now`.
    #[inline]
    pub fn recv_back(&self, now: u64) -> Option<&Backward<V>> {
        let s = &self.bwd[self.slot(now)];
        (s.arrival == now).then_some(&s.value)
    }

    /// Flit records sent before `now` that arrive at `now` or later (in flight at the start of
    /// `now`; in a fabric, packet heads).
    pub fn flits_in_flight(&self, now: u64) -> impl Iterator<Item = &Flit> + '_ {
        self.fwd
            .iter()
            .filter(move |s| s.arrival != u64::MAX && s.arrival >= now)
            .filter_map(|s| s.value.as_ref())
    }

    /// Loses the credit streams started by the first record in flight at `now` that starts any
    /// (as a corrupted return path would). Returns whether there was one.
    #[cfg(test)]
    pub(crate) fn lose_credit_streams_for_test(&mut self, now: u64) -> bool {
        let Some(s) = self.bwd.iter_mut().find(|s| {
            s.arrival != u64::MAX && s.arrival >= now && s.value.start_flits.iter().any(|&c| c > 0)
        }) else {
            return false;
        };
        s.value.start = [0; V];
        s.value.start_flits = [0; V];
        true
    }

    /// Credits per VC of the streams whose start records were sent back before `now` and arrive
    /// at `now` or later.
    pub fn credits_in_flight(&self, now: u64, vc: usize) -> u64 {
        self.bwd
            .iter()
            .filter(|s| s.arrival != u64::MAX && s.arrival >= now)
            .map(|s| s.value.start_flits[vc] as u64)
            .sum()
    }
}

/// Where a unit (switch or end node) puts what it sends in a cycle: flits on the near end of its
/// output links, credits and ARNs on the near end of the reverse direction of its input links,
/// each named by its channel. When the records reach the channels is the caller's business (in a
/// fabric, after every unit has stepped the window: `fabric::scheduler`).
pub trait LinkSend<const V: usize> {
    /// A flit sent in cycle `now` on channel `ch`.
    fn send_flit(&mut self, now: u64, ch: u32, flit: Flit);
    /// Credits and/or an ARN sent back in cycle `now` on the reverse direction of `ch`.
    fn send_back(&mut self, now: u64, ch: u32, b: Backward<V>);
}

/// Which ports of a unit receive something in one cycle (bit `p` for port `p`): the unit reads
/// only the delay lines these name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Arriving {
    /// Inputs where a flit arrives.
    pub flits: u64,
    /// Outputs where credits or an ARN come back.
    pub back: u64,
}

#[cfg(test)]
mod tests;
