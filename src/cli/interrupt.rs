//! Stopping a run early: SIGINT (Ctrl-C) or SIGTERM ask the run loop to stop at the end of the
//! chunk of cycles it is stepping; it then writes what it has gathered, marked incomplete. A
//! second signal of either kind ends the process at once (its outputs stay under their
//! temporary names). Until a run starts listening (once its scenario, trace and fabric are
//! loaded, before it touches a file) a signal ends the process at once: nothing is written yet,
//! and a long load is not waited for. A signal ignored when the process starts stays ignored.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub use signal_hook::consts::{SIGINT, SIGTERM};

/// A request to stop: set by a signal handler (or by [`Stop::request`]), read by the run loop.
#[derive(Clone, Debug)]
pub struct Stop {
    /// The signal that asked, 0 while none has.
    signal: Arc<AtomicUsize>,
    /// Set by the first signal: the next one takes the default action.
    armed: Arc<AtomicBool>,
    /// Ask as soon as the run reaches this cycle (for tests; `u64::MAX` otherwise), as this
    /// signal would.
    at_cycle: u64,
    at_cycle_signal: i32,
    /// Whether [`Stop::listen`] installs the handlers of SIGINT and SIGTERM.
    signals: bool,
    /// Set once they are installed.
    listening: Arc<AtomicBool>,
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
            at_cycle_signal: SIGINT,
            signals: false,
            listening: Arc::new(AtomicBool::new(false)),
        }
    }

    /// A request set by SIGINT or SIGTERM once [`Stop::listen`] is called (before that they
    /// take their default action); a second one of either ends the process as the default
    /// action does.
    pub fn on_signals() -> Self {
        Stop {
            signals: true,
            ..Self::never()
        }
    }

    /// Installs the handlers of SIGINT and SIGTERM, for a request made by [`Stop::on_signals`]
    /// (once; a request made otherwise has none to install).
    pub fn listen(&self) -> Result<(), String> {
        if !self.signals || self.listening.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        for sig in [SIGINT, SIGTERM] {
            let e = |e: std::io::Error| format!("cannot handle {}: {e}", signal_name(sig));
            // A signal the run was started with ignored stays ignored, as a Unix tool leaves it
            // (a background job of a non-interactive shell is started with SIGINT ignored, so
            // that a Ctrl-C meant for the shell does not reach it).
            if ignored(sig).map_err(e)? {
                continue;
            }
            // The default action goes first: it only acts once a first signal armed it.
            signal_hook::flag::register_conditional_default(sig, Arc::clone(&self.armed))
                .map_err(e)?;
            signal_hook::flag::register_usize(sig, Arc::clone(&self.signal), sig as usize)
                .map_err(e)?;
            signal_hook::flag::register(sig, Arc::clone(&self.armed)).map_err(e)?;
        }
        Ok(())
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

/// Whether `sig` is ignored (`SIG_IGN`) in this process.
fn ignored(sig: i32) -> std::io::Result<bool> {
    // SAFETY: sigaction(2) with no new action only reads the current one into `old`, which is a
    // plain C struct for which all zeroes is a valid value.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(old.sa_sigaction == libc::SIG_IGN)
    }
}

/// `SIGINT`, `SIGTERM`, or the number.
pub fn signal_name(signal: i32) -> String {
    match signal {
        SIGINT => "SIGINT".into(),
        SIGTERM => "SIGTERM".into(),
        s => format!("signal {s}"),
    }
}

/// The exit code of a run stopped by `signal`: 128 + its number, as a shell reports a process
/// the signal ended (130 for SIGINT, 143 for SIGTERM).
pub fn exit_code(signal: i32) -> i32 {
    128 + signal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_seen_and_named() {
        let s = Stop::never();
        assert_eq!(s.requested(0), None);
        s.request(SIGTERM);
        assert_eq!(s.requested(0), Some(SIGTERM));
        let s = Stop::at_cycle(100, SIGINT);
        assert_eq!(s.requested(99), None);
        assert_eq!(s.requested(100), Some(SIGINT));
        assert_eq!(signal_name(SIGINT), "SIGINT");
        assert_eq!((exit_code(SIGINT), exit_code(SIGTERM)), (130, 143));
    }
}
