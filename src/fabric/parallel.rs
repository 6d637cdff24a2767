//! The worker threads that step parts of the fabric in parallel within one clock cycle (or one
//! window of cycles, see `Fabric::run`).
//!
//! In hardware every switch of the fabric evaluates at the same clock edge. The model does the
//! same: within a cycle every switch and node only reads the channels (values registered by their
//! neighbours at least one cycle earlier) and writes its own state and its outbox (kept for it by
//! `fabric::scheduler`), so the parts of the fabric can be stepped on different threads; once all
//! parts are done, each thread writes its own units' outboxes into the channels (every delay line
//! has one writer). Results cannot depend on the number of threads.
//!
//! [`Pool::broadcast`] runs one closure on every thread (the caller takes part 0) and returns once
//! all are done. The workers live as long as the pool: they spin briefly between cycles, then
//! park.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Largest number of threads stepping one fabric.
pub const MAX_THREADS: usize = 16;

/// How long an idle worker spins before it parks.
const SPIN: Duration = Duration::from_micros(200);

type Job = dyn Fn(usize) + Sync;

/// A job borrowed for the duration of one [`Pool::broadcast`] call.
#[derive(Clone, Copy)]
struct JobRef(*const Job);

// SAFETY: the pointer is only dereferenced by workers between the epoch that publishes it and
// their decrement of `pending`, and `broadcast` does not return (so the closure stays alive)
// before `pending` is zero. The closure itself is `Sync`.
unsafe impl Send for JobRef {}

struct Shared {
    job: Mutex<Option<JobRef>>,
    epoch: AtomicU64,
    pending: AtomicUsize,
    panicked: AtomicBool,
    shutdown: AtomicBool,
}

/// A fixed set of worker threads.
pub struct Pool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
}

impl Default for Pool {
    /// The caller alone.
    fn default() -> Self {
        Pool::new(1)
    }
}

impl Pool {
    /// A pool for `threads` threads in all: the caller and `threads - 1` workers.
    pub fn new(threads: usize) -> Self {
        let threads = threads.clamp(1, MAX_THREADS);
        let shared = Arc::new(Shared {
            job: Mutex::new(None),
            epoch: AtomicU64::new(0),
            pending: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            shutdown: AtomicBool::new(false),
        });
        let workers = (1..threads)
            .map(|k| {
                let shared = Arc::clone(&shared);
                thread::Builder::new()
                    .name(format!("fabric-{k}"))
                    .spawn(move || worker(k, &shared))
                    .expect("spawning a fabric worker thread")
            })
            .collect();
        Pool { shared, workers }
    }

    /// Threads in all, the caller included.
    pub fn threads(&self) -> usize {
        self.workers.len() + 1
    }

    /// Runs `f(k)` for every thread `k` (the caller runs `f(0)`) and returns when all are done.
    /// A panic in any of them is raised again here, after all have finished.
    pub fn broadcast<F: Fn(usize) + Sync>(&self, f: &F) {
        if self.workers.is_empty() {
            f(0);
            return;
        }
        let job: &(dyn Fn(usize) + Sync + '_) = f;
        // SAFETY: only the lifetime is erased; see `JobRef`. Every path below waits for
        // `pending` to reach zero before returning or unwinding.
        let job: &'static Job =
            unsafe { std::mem::transmute::<&(dyn Fn(usize) + Sync + '_), &'static Job>(job) };
        *self.shared.job.lock().unwrap_or_else(|e| e.into_inner()) = Some(JobRef(job));
        self.shared
            .pending
            .store(self.workers.len(), Ordering::Release);
        self.shared.epoch.fetch_add(1, Ordering::AcqRel);
        for w in &self.workers {
            w.thread().unpark();
        }
        let mine = catch_unwind(AssertUnwindSafe(|| f(0)));
        let mut spins = 0u32;
        while self.shared.pending.load(Ordering::Acquire) != 0 {
            spins += 1;
            if spins < 1 << 12 {
                std::hint::spin_loop();
            } else {
                thread::yield_now();
            }
        }
        *self.shared.job.lock().unwrap_or_else(|e| e.into_inner()) = None;
        if let Err(p) = mine {
            resume_unwind(p);
        }
        if self.shared.panicked.swap(false, Ordering::AcqRel) {
            panic!("a fabric worker thread panicked");
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        for w in self.workers.drain(..) {
            w.thread().unpark();
            let _ = w.join();
        }
    }
}

fn worker(k: usize, shared: &Shared) {
    let mut seen = 0u64;
    loop {
        // Wait for the next epoch: spin for a while, then park (an unpark that came first makes
        // the park return at once, so no wake-up is lost).
        let start = Instant::now();
        let mut spins = 0u32;
        loop {
            if shared.shutdown.load(Ordering::Acquire) {
                return;
            }
            let e = shared.epoch.load(Ordering::Acquire);
            if e != seen {
                seen = e;
                break;
            }
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(64) || start.elapsed() < SPIN {
                std::hint::spin_loop();
            } else {
                thread::park();
            }
        }
        let job = *shared.job.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(JobRef(job)) = job {
            // SAFETY: see `JobRef`; `pending` is decremented only after the call.
            let job = unsafe { &*job };
            if catch_unwind(AssertUnwindSafe(|| job(k))).is_err() {
                shared.panicked.store(true, Ordering::Release);
            }
        }
        shared.pending.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_thread_runs_once_per_broadcast() {
        let pool = Pool::new(3);
        let hits: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
        for _ in 0..1000 {
            pool.broadcast(&|k| {
                hits[k].fetch_add(1, Ordering::Relaxed);
            });
        }
        for (k, h) in hits.iter().enumerate() {
            assert_eq!(h.load(Ordering::Relaxed), 1000, "thread {k}");
        }
    }

    #[test]
    fn a_worker_panic_reaches_the_caller() {
        let pool = Pool::new(2);
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.broadcast(&|k| assert!(k == 0, "worker {k} fails"));
        }));
        assert!(r.is_err());
        // The pool still works afterwards.
        let n = AtomicUsize::new(0);
        pool.broadcast(&|_| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(n.load(Ordering::Relaxed), 2);
    }
}
