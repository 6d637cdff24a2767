//! The event engine on several threads: the switches dealt out to parts (`ranks::Partition`:
//! in one process switch `s` to part `s % parts`; each end node to the part of the switch it is
//! cabled to), each part with its own calendar, stepped on its own thread a window of cycles at
//! a time. A window is the link
//! latency plus one cycle: whatever one part files for another's ports lands at least that much
//! later (a grant in cycle `c` files its head and its credit stream's start for `c + 1 + L` and
//! the stream's stop for its tail's cycle plus `L`), so the parts exchange those events only at
//! window boundaries, through one mailbox per part and window parity, with one barrier per
//! window. The events of a cycle are independent of the order they are handled in, so the
//! outputs are those of one thread. State kept for speed; it models no hardware.

use super::crossing::{self, Crossing};
use super::watchdog::{self, Halt};
use super::{Env, EventCore, PortRecords};
use crate::fabric::invariants::{WATCH_EVERY, next_look, watchdog_looks};
use crate::fabric::parallel::Pool;
use crate::fabric::ranks::{self, Ranks};
use crate::fabric::{Fabric, Sample, Tap, Violation};
use crate::switch::SwitchStats;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// What one rank of a split fabric has exchanged with the others: the windows ended together,
/// the events its parts filed for other ranks (each [`crossing::WORDS`] words), the messages it
/// sent and their words (the grid's rounds: events it passes on for its row included, with the
/// lists' lengths and the agreed words), and the seconds spent exchanging and agreeing (waiting
/// for the slowest rank included).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Exchanged {
    pub windows: u64,
    pub events: u64,
    #[serde(default)]
    pub messages: u64,
    #[serde(default)]
    pub words: u64,
    pub seconds: f64,
}

impl Exchanged {
    /// Bytes of events sent.
    pub fn bytes(&self) -> u64 {
        self.events * crossing::WORDS as u64 * 8
    }
}

/// Room for events to another part that a list starts with.
pub(super) const OUTBOX: usize = 1024;

/// The fabric's switches, ports and links as the event engine steps them, in parts.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct EventEngine<const V: usize> {
    /// This rank's parts (of the whole fabric's, those `Partition::parts_of` gives it).
    parts: Vec<Mutex<EventCore<V>>>,
    /// Per part of the whole fabric, per window parity: the events the other parts filed for
    /// its ports (for another rank's part, those this rank sends it at the window's end).
    mail: Vec<[Mutex<Vec<Crossing>>; 2]>,
    /// The ranks the fabric is split over (`None`: one process), and per part of the whole
    /// fabric its rank.
    #[serde(skip)]
    ranks: Option<Arc<dyn Ranks>>,
    rank_of: Vec<usize>,
    /// Per end node, whether one of this rank's parts steps it.
    mine: Vec<bool>,
    /// What this rank has exchanged with the others.
    exchanged: Exchanged,
    latency: u64,
    /// The samples of the last run, as handed on (kept for its room).
    samples: Vec<Sample>,
}

/// Locks a mutex no thread holds across a panic that matters (a panic ends the run).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<const V: usize> EventEngine<V> {
    /// The event engine's view of `f` (built, before its first cycle), in one part per thread
    /// of its pool and rank, dealt out as [`ranks::Partition`] says.
    pub(in crate::fabric) fn new(f: &Fabric<V>) -> Self {
        let (rank, size) = f.ranks.as_ref().map_or((0, 1), |r| (r.rank(), r.size()));
        let split = f.partition_over(size);
        let parts: Vec<EventCore<V>> = split
            .parts_of(rank)
            .map(|k| EventCore::new(f, k, &split))
            .collect();
        let mine = (0..f.nodes.len() as u32)
            .map(|n| parts.iter().any(|p| p.owns_node(n)))
            .collect();
        EventEngine {
            parts: parts.into_iter().map(Mutex::new).collect(),
            mail: (0..split.parts)
                .map(|_| [0, 1].map(|_| Mutex::new(Vec::with_capacity(OUTBOX))))
                .collect(),
            ranks: f.ranks.clone(),
            rank_of: split.rank_of_part,
            mine,
            exchanged: Exchanged::default(),
            latency: f.params.link_latency as u64,
            samples: Vec::new(),
        }
    }

    /// What this rank has exchanged with the other ranks so far.
    pub(in crate::fabric) fn exchanged(&self) -> Exchanged {
        self.exchanged
    }

    /// Whether one of this rank's parts steps end node `n`.
    pub(in crate::fabric) fn owns_node(&self, n: usize) -> bool {
        self.mine[n]
    }

    /// The ranks the fabric is split over, when it is.
    pub(in crate::fabric) fn ranks(&self) -> Option<&dyn Ranks> {
        self.ranks.as_deref()
    }

    /// Cycles the parts step between two exchanges (1 for one part in all).
    pub(in crate::fabric) fn window(&self) -> u64 {
        if self.mail.len() == 1 {
            1
        } else {
            self.latency + 1
        }
    }

    /// The samples the parts recorded in the last run, of the cycles before `upto`, by cycle,
    /// then signal (on MPI ranks, those of every rank); the parts' lists are emptied. One part
    /// records them in that order.
    pub(in crate::fabric) fn samples(&mut self, upto: u64) -> &[Sample] {
        let all = &mut self.samples;
        all.clear();
        if let [p] = &mut self.parts[..] {
            let p = p.get_mut().unwrap_or_else(|e| e.into_inner());
            std::mem::swap(all, &mut p.samples);
            all.truncate(all.partition_point(|s| s.0 < upto));
            debug_assert!(all.is_sorted_by_key(|s| (s.0, s.1)));
        } else {
            for p in &mut self.parts {
                let p = p.get_mut().unwrap_or_else(|e| e.into_inner());
                all.extend(p.samples.drain(..).filter(|s| s.0 < upto));
            }
            all.sort_unstable_by_key(|s| (s.0, s.1));
        }
        if let Some(r) = &self.ranks {
            // Every rank's samples, on every rank, in the order of one process.
            let mine: Vec<u64> = all.iter().flat_map(|&(c, s, v)| [c, s as u64, v]).collect();
            all.clear();
            for words in r.gather(&mine) {
                all.extend(words.chunks_exact(3).map(|w| (w[0], w[1] as u32, w[2])));
            }
            all.sort_unstable_by_key(|s| (s.0, s.1));
        }
        all
    }

    /// Notes from now on what switch `s`'s ports receive and send (on one part).
    pub(in crate::fabric) fn record(&mut self, s: u32) {
        assert_eq!(self.parts.len(), 1, "a recording steps on one thread");
        self.parts[0]
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .record(s);
    }

    /// Stops noting what the recorded switch receives and sends.
    pub(in crate::fabric) fn stop_recording(&mut self) {
        for p in &mut self.parts {
            p.get_mut().unwrap_or_else(|e| e.into_inner()).rec = None;
        }
    }

    /// Hands on what the ports of each switch of `switches` (recorded) received and sent in
    /// cycles `from..upto`: `each(switch, cycle, port, received, sent)`, switch by switch.
    pub(in crate::fabric) fn drain_records(
        &mut self,
        switches: impl Iterator<Item = u32>,
        cycles: (u64, u64),
        mut each: impl FnMut(u32, u64, usize, PortRecords<V>, PortRecords<V>),
    ) {
        let core = self.parts[0].get_mut().unwrap_or_else(|e| e.into_inner());
        for s in switches {
            let ports = core.ports_of(s);
            if let Some(log) = core.link_log() {
                log.drain(ports, cycles, |c, p, got, sent| each(s, c, p, got, sent));
            }
        }
    }

    /// The first cycle from `now` on in which some part has something to do (`u64::MAX`: none).
    pub(in crate::fabric) fn next_cycle(&self, now: u64) -> u64 {
        let parts = self.locked();
        let mut next = [parts
            .iter()
            .map(|p| p.next_cycle(now, u64::MAX))
            .min()
            .unwrap_or(u64::MAX)];
        if let Some(r) = &self.ranks {
            r.min(&mut next);
        }
        next[0]
    }

    /// The cycle the fabric's first congestion root was detected in, if one was, and the lowest
    /// switch that detected one then.
    pub(in crate::fabric) fn first_root(&self) -> Option<(u64, u32)> {
        let mut first = self.locked().iter().map(|p| p.first_root).min();
        if let Some(r) = &self.ranks {
            let (c, s) = first.unwrap_or((u64::MAX, u32::MAX));
            first = r
                .gather(&[c, s as u64])
                .iter()
                .map(|w| (w[0], w[1] as u32))
                .min();
        }
        first.filter(|&(c, _)| c != u64::MAX)
    }

    /// Parts (threads) it steps in on this rank.
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
        if let Some(r) = &self.ranks {
            ranks::switch_stats(&**r, &mut s);
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

    /// Steps cycles `from..end`: the cycle it reached, and the first breach or the deadlock
    /// found, which stop it at the end of that window (on one part, of that cycle).
    pub(in crate::fabric) fn run(
        &mut self,
        env: &Env<V>,
        pool: &Pool,
        (from, end): (u64, u64),
        tap: Option<&dyn Tap<V>>,
    ) -> (u64, Result<(), Violation>) {
        if self.mail.len() == 1 {
            let core = self.parts[0].get_mut().unwrap_or_else(|e| e.into_inner());
            return match core.run(env, (from, end), tap) {
                Ok(()) => (end, Ok(())),
                Err(Halt::Breach(v)) => ((v.cycle + 1).clamp(from + 1, end), Err(v)),
                Err(Halt::Deadlock(c)) => (c + 1, Err(self.deadlock_report(c))),
            };
        }
        let barrier = SpinBarrier::new(self.parts.len());
        let looks = [0, 1, 2].map(|_| Looks::new());
        let reached = AtomicU64::new(end);
        let (parts, mail, window) = (&self.parts, &self.mail, self.window());
        let split = self.ranks.as_deref().map(|r| Split {
            ranks: r,
            rank_of: &self.rank_of,
            windows: AtomicU64::new(0),
            events: AtomicU64::new(0),
            messages: AtomicU64::new(0),
            words: AtomicU64::new(0),
            nanos: AtomicU64::new(0),
        });
        pool.broadcast(&|k| {
            let Some(part) = parts.get(k) else { return };
            let mut core = lock(part);
            let shared = Shared {
                mail,
                barrier: &barrier,
                looks: &looks,
                split: split.as_ref().filter(|_| k == 0),
                ranks: split.is_some(),
            };
            let r = core.run_windows(env, &shared, (from, end), window, tap);
            if let Err((until, _)) = &r {
                reached.fetch_min(*until, Ordering::SeqCst);
            }
            core.halt = r.err().and_then(|(_, h)| h);
        });
        // The earliest breach (the lowest part among those of one cycle), or the deadlock.
        let mut first: Option<Violation> = None;
        let mut dead = None;
        for p in &mut self.parts {
            let p = p.get_mut().unwrap_or_else(|e| e.into_inner());
            match p.halt.take() {
                Some(Halt::Breach(v)) if first.as_ref().is_none_or(|f| v.cycle < f.cycle) => {
                    first = Some(v)
                }
                Some(Halt::Deadlock(c)) => dead = Some(c),
                _ => {}
            }
        }
        let reached = reached.load(Ordering::SeqCst);
        if let Some(x) = &split {
            let e = &mut self.exchanged;
            e.windows += x.windows.load(Ordering::Relaxed);
            e.events += x.events.load(Ordering::Relaxed);
            e.messages += x.messages.load(Ordering::Relaxed);
            e.words += x.words.load(Ordering::Relaxed);
            e.seconds += x.nanos.load(Ordering::Relaxed) as f64 * 1e-9;
        }
        if let Some(r) = &self.ranks {
            // Every rank stopped at the same window; the breach is the earliest of any rank's.
            first = ranks::earliest(&**r, first.as_ref());
        }
        match (first, dead) {
            (Some(v), _) => (reached, Err(v)),
            (None, Some(c)) => (reached, Err(self.deadlock_report(c))),
            (None, None) => (reached, Ok(())),
        }
    }
}

/// What the parts share over a run: the mailboxes, the barrier, the earliest breach, and per
/// window (in turn, three sets) what the watchdog and the skipping of idle cycles need.
struct Shared<'a> {
    mail: &'a [[Mutex<Vec<Crossing>>; 2]],
    barrier: &'a SpinBarrier,
    looks: &'a [Looks; 3],
    /// For the rank's first part of a split fabric: the ranks, and per part its rank.
    split: Option<&'a Split<'a>>,
    /// Whether the fabric is split over ranks.
    ranks: bool,
}

/// The ranks a fabric is split over, as the rank's first part sees them at a window's end, and
/// what it has exchanged with them.
struct Split<'a> {
    ranks: &'a dyn Ranks,
    rank_of: &'a [usize],
    windows: AtomicU64,
    events: AtomicU64,
    messages: AtomicU64,
    words: AtomicU64,
    nanos: AtomicU64,
}

impl Split<'_> {
    /// At the end of a window: sends the events this rank's parts filed for another rank's
    /// parts, takes in those filed for its own, and agrees with every rank on the window's
    /// looks and on the earliest breach.
    fn cross(&self, mail: &[[Mutex<Vec<Crossing>>; 2]], parity: usize, set: &Looks) {
        let started = std::time::Instant::now();
        let me = self.ranks.rank();
        let mut out = vec![Vec::new(); self.ranks.size()];
        for (q, boxes) in mail.iter().enumerate() {
            let r = self.rank_of[q];
            if r != me {
                let mut m = lock(&boxes[parity]);
                for c in m.drain(..) {
                    c.encode(q as u8, &mut out[r]);
                }
            }
        }
        let sent: usize = out.iter().map(|w| w.len() / crossing::WORDS).sum();
        self.events.fetch_add(sent as u64, Ordering::Relaxed);
        self.windows.fetch_add(1, Ordering::Relaxed);
        let mut agreed = [
            set.next.load(Ordering::Relaxed),
            !set.progress.load(Ordering::Relaxed),
            u64::from(!set.stuck.load(Ordering::Relaxed)),
            set.stop.load(Ordering::Relaxed),
        ];
        let got = ranks::grid::exchange(self.ranks, &out, &mut agreed);
        self.messages.fetch_add(got.messages, Ordering::Relaxed);
        self.words.fetch_add(got.words, Ordering::Relaxed);
        for words in got.from {
            for w in words.chunks_exact(crossing::WORDS) {
                let (q, c) = Crossing::decode(w);
                lock(&mail[q as usize][parity]).push(c);
            }
        }
        set.next.store(agreed[0], Ordering::Relaxed);
        set.progress.store(!agreed[1], Ordering::Relaxed);
        set.stuck.store(agreed[2] == 0, Ordering::Relaxed);
        set.stop.store(agreed[3], Ordering::Relaxed);
        let spent = started.elapsed().as_nanos() as u64;
        self.nanos.fetch_add(spent, Ordering::Relaxed);
    }
}

/// What the parts tell each other at the end of a window: the first cycle any of them has
/// something to do in, the last cycle any made progress in, at a watchdog's look whether any
/// holds flits or waiting packets, and the earliest breach found in the window. Window `w` uses
/// set `w % 3`; set `(w + 2) % 3` is emptied after its barrier (every part read it before
/// arriving there, and none writes it before the next barrier).
struct Looks {
    next: AtomicU64,
    progress: AtomicU64,
    stuck: AtomicBool,
    stop: AtomicU64,
}

impl Looks {
    fn new() -> Self {
        Looks {
            next: AtomicU64::new(u64::MAX),
            progress: AtomicU64::new(0),
            stuck: AtomicBool::new(false),
            stop: AtomicU64::new(u64::MAX),
        }
    }

    fn clear(&self) {
        self.next.store(u64::MAX, Ordering::Relaxed);
        self.progress.store(0, Ordering::Relaxed);
        self.stuck.store(false, Ordering::Relaxed);
        self.stop.store(u64::MAX, Ordering::Relaxed);
    }
}

impl<const V: usize> EventCore<V> {
    /// This part steps cycles `from..end` a window at a time, exchanging events with the others
    /// at each window's end; a window ends at the watchdog's next look at the latest. When no
    /// part has anything to do in the cycles after a window, the parts pass them together,
    /// stopping only at a look the watchdog has to make. A stop: the end of its window, and why,
    /// when this part found the reason (a part stopped by another's breach has none).
    fn run_windows(
        &mut self,
        env: &Env<V>,
        sh: &Shared<'_>,
        (from, end): (u64, u64),
        window: u64,
        tap: Option<&dyn Tap<V>>,
    ) -> Result<(), (u64, Option<Halt>)> {
        let me = self.part as usize;
        let watch = env.params.watchdog_cycles;
        let mut tapped = tap.map(|t| (t, self.tapped(env, t, from)));
        let mut halt = None;
        let (mut t, mut w) = (from, 0usize);
        // No look before this cycle finds anything new (a look found nothing, and nothing has
        // happened since).
        let mut quiet = from;
        while t < end {
            let parity = w & 1;
            let until = (t + window).min(end).min(next_look(t));
            for now in t..until {
                if self.busy(now)
                    && let Err(v) = self.cycle(env, now)
                {
                    sh.looks[w % 3].stop.fetch_min(v.cycle, Ordering::Relaxed);
                    halt = Some(Halt::Breach(v));
                    break;
                }
                if let Some((tap, sampler)) = &mut tapped {
                    self.sample(env, *tap, sampler, now..now + 1);
                }
            }
            let set = &sh.looks[w % 3];
            let mut next = self.next_cycle(until, end);
            // A mailbox is empty when its window parity comes round again (its part took it in
            // after the last barrier): the first outbox for it is handed over whole, and the
            // mailbox's emptied list becomes the outbox, so the lists go round without being
            // copied or grown; a third part's are appended.
            for (q, out) in self.outbox.iter_mut().enumerate() {
                if q != me && !out.is_empty() {
                    next = out.iter().map(|c| c.at).fold(next, u64::min);
                    let mut m = lock(&sh.mail[q][parity]);
                    if m.is_empty() {
                        std::mem::swap(&mut *m, out);
                    } else {
                        m.append(out);
                    }
                }
            }
            set.next.fetch_min(next, Ordering::Relaxed);
            let last = until - 1;
            let mine = self.progress_through(last);
            set.progress.fetch_max(mine, Ordering::Relaxed);
            // The look at the end of the window: every part whose own progress is as old as
            // the watchdog's cycles says whether it holds anything (if one's is not, the
            // fabric's is not either).
            let look = until.is_multiple_of(WATCH_EVERY) && last >= quiet;
            if look && watchdog_looks(last, mine, watch) && self.stuck(env, last) {
                set.stuck.store(true, Ordering::Relaxed);
            }
            sh.barrier.wait();
            sh.looks[(w + 2) % 3].clear();
            if let Some(split) = sh.split {
                split.cross(sh.mail, parity, set);
            }
            if sh.ranks {
                // The first part's exchange is over.
                sh.barrier.wait();
            }
            self.take_in(&mut lock(&sh.mail[me][parity]));
            // A breach stops every part at the end of its window (read from the window's set: a
            // part may already be stepping the next one).
            if set.stop.load(Ordering::Relaxed) != u64::MAX {
                return Err((until, halt));
            }
            let next = set.next.load(Ordering::Relaxed).min(end);
            let progress = set.progress.load(Ordering::Relaxed);
            if look && watchdog_looks(last, progress, watch) {
                if set.stuck.load(Ordering::Relaxed) {
                    return Err((until, Some(Halt::Deadlock(last))));
                }
                quiet = next;
            }
            // Nothing happens before `next`: the parts go there together, or to the look the
            // watchdog makes before it (a window of one cycle that ends at the look). A dump
            // samples every cycle.
            t = if tapped.is_some() {
                until
            } else {
                until.max(next)
            };
            if let Some(c) = watchdog::first_look(until.max(quiet), t, progress, watch) {
                t = c;
            }
            w += 1;
        }
        Ok(())
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
