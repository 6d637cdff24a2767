//! A link direction: data flits one way, credits and ARNs the other way, each with the link's
//! latency in cycles.
//!
//! A full-duplex cable is two [`Channel`]s. A channel is a pair of delay lines written by one side
//! and read by the other; what is written in cycle `t` is read in cycle `t + latency` (latency at
//! least 1). Every slot carries its arrival cycle, so a reader never sees a stale value and the
//! writer and the reader can be stepped in either order within a cycle.
//!
//! Units (switches and end nodes) do not write channels while they step: what they send waits in
//! an [`Outbox`], written once every unit has stepped, and [`Arrivals`] tells each unit which of
//! its delay lines hold something in a cycle, so idle links are never read.
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

mod arrivals;
mod credits;

pub use arrivals::Arrivals;
pub(crate) use credits::Lanes;
pub use credits::{Backward, CreditReturns, FEW_VCS, MAX_VCS, lanes_for};

use super::Packet;
use std::marker::PhantomData;

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

/// Longest window: the most cycles a unit steps in a row before its sends are written.
pub const MAX_WINDOW: usize = 16;

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
fn ring_len(latency: u64) -> u64 {
    (2 * latency.max(1)).next_power_of_two()
}

/// One data flit on a link: the descriptor of its packet and its position in it (the fabric's
/// units put only heads on links, see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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

/// One register of a delay line.
#[derive(Clone, Copy, Debug)]
struct Slot<T> {
    arrival: u64,
    value: T,
}

/// One direction of a link.
#[derive(Clone, Debug)]
pub struct Channel<const V: usize> {
    /// The unit (switch or node index in [`Arrivals`]) and port the flits go to.
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
    /// A channel of `latency` cycles (at least 1).
    pub fn new(latency: u32) -> Self {
        let latency = latency.max(1) as u64;
        let ring = ring_len(latency) as usize;
        let len = PAD + ring + PAD;
        Channel {
            fwd_to: (0, 0),
            bwd_to: (0, 0),
            latency,
            mask: ring as u64 - 1,
            fwd: vec![
                Slot {
                    arrival: u64::MAX,
                    value: None
                };
                len
            ],
            bwd: vec![
                Slot {
                    arrival: u64::MAX,
                    value: Backward::default()
                };
                len
            ],
        }
    }

    /// Names the receiving ends for [`Arrivals`]: flits go to `fwd_to` (unit, port), credits
    /// and ARNs back to `bwd_to`.
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

    /// [`Channel::send_flit`] through a pointer, touching only the forward ring.
    ///
    /// # Safety
    /// `ch` is valid, and no other thread accesses its forward ring during the call.
    #[inline]
    unsafe fn send_flit_raw(ch: *mut Channel<V>, now: u64, flit: Flit) -> ((u32, u8), u64) {
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

    /// [`Channel::send_back`] through a pointer, touching only the reverse ring.
    ///
    /// # Safety
    /// `ch` is valid, and no other thread accesses its reverse ring during the call.
    #[inline]
    unsafe fn send_back_raw(ch: *mut Channel<V>, now: u64, b: Backward<V>) -> ((u32, u8), u64) {
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

/// What one switch or node sends during a window of cycles, each send stamped with its cycle,
/// held until the window's sends are written into the channels (the registers at the link's near
/// end).
///
/// Within a window every unit only reads channels and fills its own outbox; the outboxes are
/// written into the channels once every unit has stepped the window. As a flit sent in cycle `t`
/// arrives in `t + latency` and a window is at most `latency` cycles long, this is exactly
/// equivalent to writing at once, and it lets the units of one window step, and their outboxes be
/// written, in any order or in parallel. Room for a window is reserved at build: sending never
/// allocates.
#[derive(Clone, Debug, Default)]
pub struct Outbox<const V: usize> {
    flits: Vec<(u64, u32, Flit)>,
    backs: Vec<(u64, u32, Backward<V>)>,
}

impl<const V: usize> Outbox<V> {
    /// An empty outbox for a unit that sends at most `per_cycle` flits and `per_cycle` returns
    /// in a cycle, over windows of up to [`MAX_WINDOW`] cycles.
    pub fn new(per_cycle: usize) -> Self {
        Outbox {
            flits: Vec::with_capacity(per_cycle * MAX_WINDOW),
            backs: Vec::with_capacity(per_cycle * MAX_WINDOW),
        }
    }

    /// Queues a flit sent in cycle `now` on channel `ch`.
    #[inline]
    pub fn send_flit(&mut self, now: u64, ch: u32, flit: Flit) {
        debug_assert!(self.flits.len() < self.flits.capacity(), "outbox full");
        self.flits.push((now, ch, flit));
    }

    /// Queues credits and/or an ARN sent back in cycle `now` on the reverse direction of `ch`.
    #[inline]
    pub fn send_back(&mut self, now: u64, ch: u32, b: Backward<V>) {
        debug_assert!(self.backs.len() < self.backs.capacity(), "outbox full");
        self.backs.push((now, ch, b));
    }

    /// The flits queued: (cycle sent, channel, flit).
    pub fn flits(&self) -> &[(u64, u32, Flit)] {
        &self.flits
    }

    /// The returns queued: (cycle sent, channel, return).
    pub fn backs(&self) -> &[(u64, u32, Backward<V>)] {
        &self.backs
    }

    /// Empties the outbox (at the start of a window).
    #[inline]
    pub fn clear(&mut self) {
        self.flits.clear();
        self.backs.clear();
    }

    /// Writes what was queued into `channels`, and marks the arrivals (one thread only:
    /// `channels` is borrowed mutably, so no other thread writes or marks meanwhile).
    #[inline]
    pub fn write_into(&self, channels: &mut [Channel<V>], arrivals: &Arrivals) {
        // SAFETY: `channels` is borrowed exclusively, so no other thread touches any ring.
        unsafe { self.write(SharedChannels::new(channels), arrivals, false) }
    }

    /// Writes what was queued into the channels, from several threads at once.
    ///
    /// # Safety
    /// `channels` is valid for the whole slice, and during the call no other thread accesses
    /// the forward ring of a channel this outbox sends flits on, nor the reverse ring of a channel
    /// it sends returns on. (In a fabric every channel direction has one sender and one receiver,
    /// and each writes only its own ring.)
    #[inline]
    pub unsafe fn write_shared(&self, channels: SharedChannels<'_, V>, arrivals: &Arrivals) {
        // SAFETY: the caller's contract.
        unsafe { self.write(channels, arrivals, true) }
    }

    /// Both writers: `shared` when other threads mark arrivals at the same time (atomic marks).
    ///
    /// # Safety
    /// As for [`Outbox::write_shared`].
    #[inline]
    unsafe fn write(&self, channels: SharedChannels<'_, V>, arrivals: &Arrivals, shared: bool) {
        for &(now, ch, f) in &self.flits {
            let c = channels.get(ch);
            // SAFETY: by the caller's contract nobody else touches this forward ring now.
            let (to, at) = unsafe { Channel::send_flit_raw(c, now, f) };
            arrivals.mark_flit(to, at, shared);
        }
        for &(now, ch, b) in &self.backs {
            let c = channels.get(ch);
            // SAFETY: by the caller's contract nobody else touches this reverse ring now.
            let (to, at) = unsafe { Channel::send_back_raw(c, now, b) };
            arrivals.mark_back(to, at, shared);
        }
    }
}

/// The fabric's channels, lent to several threads that each write only their own rings
/// (see [`Outbox::write_shared`]). The channels stay mutably borrowed for `'a`.
#[derive(Clone, Copy, Debug)]
pub struct SharedChannels<'a, const V: usize> {
    base: *mut Channel<V>,
    len: usize,
    borrow: PhantomData<&'a Channel<V>>,
}

// SAFETY: only used through `Outbox::write_shared`, whose contract rules out two threads touching
// one ring.
unsafe impl<const V: usize> Send for SharedChannels<'_, V> {}
// SAFETY: as above.
unsafe impl<const V: usize> Sync for SharedChannels<'_, V> {}

impl<'a, const V: usize> SharedChannels<'a, V> {
    /// Lends `channels` for as long as the borrow lasts.
    pub fn new(channels: &'a mut [Channel<V>]) -> Self {
        SharedChannels {
            base: channels.as_mut_ptr(),
            len: channels.len(),
            borrow: PhantomData,
        }
    }

    #[inline]
    fn get(&self, ch: u32) -> *mut Channel<V> {
        assert!((ch as usize) < self.len, "channel {ch} out of range");
        // SAFETY: in bounds, checked above.
        unsafe { self.base.add(ch as usize) }
    }
}
#[cfg(test)]
mod tests;
