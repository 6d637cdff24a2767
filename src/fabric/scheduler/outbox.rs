//! Outboxes: the registers at the near end of a unit's links, filled while the unit steps a
//! window and written into the channels (the delay lines) once every unit has stepped it, on one
//! thread or several ([`SharedChannels`]).

use super::{Arrivals, MAX_WINDOW};
use crate::wire::link::{Backward, Channel, Flit, LinkSend};
use std::marker::PhantomData;

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

impl<const V: usize> LinkSend<V> for Outbox<V> {
    /// Queues a flit sent in cycle `now` on channel `ch`.
    #[inline]
    fn send_flit(&mut self, now: u64, ch: u32, flit: Flit) {
        debug_assert!(self.flits.len() < self.flits.capacity(), "outbox full");
        self.flits.push((now, ch, flit));
    }

    /// Queues credits and/or an ARN sent back in cycle `now` on the reverse direction of `ch`.
    #[inline]
    fn send_back(&mut self, now: u64, ch: u32, b: Backward<V>) {
        debug_assert!(self.backs.len() < self.backs.capacity(), "outbox full");
        self.backs.push((now, ch, b));
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
