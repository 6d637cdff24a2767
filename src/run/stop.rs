//! A request to stop a run early, read by [`super::Run`] at every chunk boundary: set by a signal
//! handler (the `arnsim` command installs those, `cli::interrupt`), by [`Stop::request`], or by
//! the run itself on reaching a given cycle (for tests).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A request to stop: set by a signal handler (or by [`Stop::request`]), read by the run loop.
/// Clones share the request.
#[derive(Clone, Debug)]
pub struct Stop {
    /// The signal that asked, 0 while none has.
    pub(crate) signal: Arc<AtomicUsize>,
    /// Set by the first request: a signal handler's next signal takes the default action.
    pub(crate) armed: Arc<AtomicBool>,
    /// Ask as soon as the run reaches this cycle (for tests; `u64::MAX` otherwise), as this
    /// signal would.
    at_cycle: u64,
    at_cycle_signal: i32,
    /// Whether `Stop::listen` (`cli::interrupt`) installs the handlers of SIGINT and SIGTERM.
    pub(crate) signals: bool,
    /// Set once they are installed.
    pub(crate) listening: Arc<AtomicBool>,
}

impl Default for Stop {
    fn default() -> Self {
        Self::never()
    }
}

impl Stop {
    /// A request that only [`Stop::request`] sets.
    pub fn never() -> Self {
        Stop {
            signal: Arc::new(AtomicUsize::new(0)),
            armed: Arc::new(AtomicBool::new(false)),
            at_cycle: u64::MAX,
            at_cycle_signal: libc::SIGINT,
            signals: false,
            listening: Arc::new(AtomicBool::new(false)),
        }
    }

    /// A request that the run makes itself once it reaches `cycle` (as if `signal` arrived while
    /// it stepped the chunk that reaches it).
    pub fn at_cycle(cycle: u64, signal: i32) -> Self {
        Stop {
            at_cycle: cycle,
            at_cycle_signal: signal,
            ..Self::never()
        }
    }

    /// Asks the run to stop, as `signal` does.
    pub fn request(&self, signal: i32) {
        self.signal.store(signal as usize, Ordering::SeqCst);
        self.armed.store(true, Ordering::SeqCst);
    }

    /// The signal that asked the run to stop, if one did, the run having reached cycle `now`.
    pub fn requested(&self, now: u64) -> Option<i32> {
        if now >= self.at_cycle {
            self.request(self.at_cycle_signal);
        }
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s as i32),
        }
    }
}
