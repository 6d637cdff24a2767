//! The event engine on several threads: the switches dealt out to parts (switch `s` to part
//! `s % parts`, each end node to the part of the switch it is cabled to), each part with its own
//! calendar, stepped on its own thread a window of cycles at a time. A window is the link
//! latency plus one cycle: whatever one part files for another's ports lands at least that much
//! later (a grant in cycle `c` files its head and its credit stream's start for `c + 1 + L` and
//! the stream's stop for its tail's cycle plus `L`), so the parts exchange those events only at
//! window boundaries, through one mailbox per part and window parity, with one barrier per
//! window. The events of a cycle are independent of the order they are handled in, so the
//! outputs are those of one thread. State kept for speed; it models no hardware.

use super::calendar::Ev;
use super::{Env, EventCore};
use crate::fabric::parallel::Pool;
use crate::fabric::{Fabric, Violation};
use crate::switch::SwitchStats;
use crate::wire::Packet;
use crate::wire::arn::ArnInfo;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Room for events to another part that a list starts with.
pub(super) const OUTBOX: usize = 1024;

/// An event filed for a port of another part: its cycle, and the packet of a head or the
/// fields of an ARN.
#[derive(Clone, Copy, Debug)]
pub(super) struct Crossing {
    pub at: u64,
    pub ev: Ev,
    pub pkt: Packet,
    pub arn: ArnInfo,
}

/// The fabric's switches, ports and links as the event engine steps them, in parts.
pub struct EventEngine<const V: usize> {
    parts: Vec<Mutex<EventCore<V>>>,
    /// Per part, per window parity: the events the other parts filed for its ports.
    mail: Vec<[Mutex<Vec<Crossing>>; 2]>,
    latency: u64,
}

/// Locks a mutex no thread holds across a panic that matters (a panic ends the run).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<const V: usize> EventEngine<V> {
    /// The event engine's view of `f` (built, before its first cycle), in one part per thread
    /// of its pool (at most one per switch, and at most 128).
    pub(in crate::fabric) fn new(f: &Fabric<V>) -> Self {
        let most = f.switches.len().clamp(1, super::PeerCode::PARTS);
        let parts = f.pool.threads().clamp(1, most);
        EventEngine {
            parts: (0..parts)
                .map(|k| Mutex::new(EventCore::new(f, k, parts)))
                .collect(),
            mail: (0..parts)
                .map(|_| [0, 1].map(|_| Mutex::new(Vec::with_capacity(OUTBOX))))
                .collect(),
            latency: f.params.link_latency as u64,
        }
    }

    /// Cycles the parts step between two exchanges (1 for one part).
    pub(in crate::fabric) fn window(&self) -> u64 {
        if self.parts.len() == 1 {
            1
        } else {
            self.latency + 1
        }
    }

    /// The cycle a run of `from..end` stopped by breach `v` reaches: the cycle after the one it
    /// names on one part, the end of the window it is in on several.
    pub(in crate::fabric) fn reached(&self, from: u64, end: u64, v: &Violation) -> u64 {
        let window = self.window();
        let window_end = from + v.cycle.saturating_sub(from) / window * window + window;
        window_end.clamp(from + 1, end)
    }

    /// Parts (threads) it steps in.
    pub(in crate::fabric) fn parts(&self) -> usize {
        self.parts.len()
    }

    /// Part `k`.
    #[cfg(test)]
    pub(super) fn part(&mut self, k: usize) -> &mut EventCore<V> {
        self.parts[k].get_mut().unwrap_or_else(|e| e.into_inner())
    }

    /// The parts, locked (none is stepping).
    pub(super) fn locked(&self) -> Vec<MutexGuard<'_, EventCore<V>>> {
        self.parts.iter().map(lock).collect()
    }

    /// Counters of all switches together, as of the end of cycle `last`.
    pub(in crate::fabric) fn stats(&self, last: u64) -> SwitchStats {
        let mut s = SwitchStats::default();
        for p in &self.parts {
            s.accumulate(&lock(p).stats(last));
        }
        s
    }

    /// The last cycle node `n` stepped (`u64::MAX` before its first).
    pub(in crate::fabric) fn node_last(&mut self, n: usize) -> u64 {
        self.parts
            .iter_mut()
            .map(|p| p.get_mut().unwrap_or_else(|e| e.into_inner()))
            .find(|p| p.owns_node(n as u32))
            .map_or(u64::MAX, |p| p.node_steps[n].last)
    }

    /// Steps cycles `from..end`; the first breach found stops it at the end of that window.
    pub(in crate::fabric) fn run(
        &mut self,
        env: &Env<V>,
        pool: &Pool,
        from: u64,
        end: u64,
    ) -> Result<(), Violation> {
        if self.parts.len() == 1 {
            let core = self.parts[0].get_mut().unwrap_or_else(|e| e.into_inner());
            return core.run(env, from, end);
        }
        let barrier = SpinBarrier::new(self.parts.len());
        let stop = AtomicU64::new(u64::MAX);
        let (parts, mail, window) = (&self.parts, &self.mail, self.window());
        pool.broadcast(&|k| {
            let mut core = lock(&parts[k]);
            let r = core.run_windows(env, mail, &barrier, &stop, (from, end), window);
            core.breach = r.err();
        });
        // The earliest breach (the lowest part among those of one cycle).
        let mut first: Option<Violation> = None;
        for p in &mut self.parts {
            let p = p.get_mut().unwrap_or_else(|e| e.into_inner());
            if let Some(v) = p.breach.take()
                && first.as_ref().is_none_or(|f| v.cycle < f.cycle)
            {
                first = Some(v);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl<const V: usize> EventCore<V> {
    /// This part steps cycles `from..end` a window at a time, exchanging events with the others
    /// at each window's end.
    fn run_windows(
        &mut self,
        env: &Env<V>,
        mail: &[[Mutex<Vec<Crossing>>; 2]],
        barrier: &SpinBarrier,
        stop: &AtomicU64,
        (from, end): (u64, u64),
        window: u64,
    ) -> Result<(), Violation> {
        let me = self.part as usize;
        let mut result = Ok(());
        let (mut t, mut parity) = (from, 0);
        while t < end {
            let until = (t + window).min(end);
            for now in t..until {
                if !self.busy(now) {
                    continue;
                }
                if let Err(v) = self.cycle(env, now) {
                    stop.fetch_min(v.cycle, Ordering::SeqCst);
                    result = Err(v);
                    break;
                }
            }
            // A mailbox is empty when its window parity comes round again (its part took it in
            // after the last barrier): the first outbox for it is handed over whole, and the
            // mailbox's emptied list becomes the outbox, so the lists go round without being
            // copied or grown; a third part's are appended.
            for (q, out) in self.outbox.iter_mut().enumerate() {
                if q != me && !out.is_empty() {
                    let mut m = lock(&mail[q][parity]);
                    if m.is_empty() {
                        std::mem::swap(&mut *m, out);
                    } else {
                        m.append(out);
                    }
                }
            }
            barrier.wait();
            self.take_in(&mut lock(&mail[me][parity]));
            if stop.load(Ordering::SeqCst) != u64::MAX {
                break;
            }
            t = until;
            parity ^= 1;
        }
        result
    }
}

/// A barrier the parts spin on between windows (a window takes microseconds: parking a thread
/// would cost more), yielding the CPU after a while.
struct SpinBarrier {
    arrived: AtomicUsize,
    generation: AtomicUsize,
    parts: usize,
}

impl SpinBarrier {
    fn new(parts: usize) -> Self {
        SpinBarrier {
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            parts,
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parts {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            spins += 1;
            if spins < 1 << 10 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}
