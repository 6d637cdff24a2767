//! What the HDL suites share: the target folder they write under, and work spread over the
//! machine's cores (a Verilator build or an HDL simulation takes one core each).

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The cargo target folder (`CARGO_TARGET_DIR` or `target/`).
pub fn target() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// Runs `work` on every job on `threads` threads (at least one), taking the jobs in the order
/// given (put the longest first); the results in the same order.
pub fn at_a_time<T: Sync, R: Send>(
    threads: usize,
    jobs: &[T],
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..threads.max(1) {
            sc.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(k) else { break };
                    let r = work(job);
                    done.lock().expect("lock").push((k, r));
                }
            });
        }
    });
    let mut done = done.into_inner().expect("lock");
    done.sort_by_key(|(k, _)| *k);
    done.into_iter().map(|(_, r)| r).collect()
}
