//! Stopping a run early on signals: the handlers that set a run's stop request
//! ([`crate::run::Stop`]), the signals' names and the exit codes of stopped runs. SIGINT (Ctrl-C)
//! or SIGTERM ask the run to stop at the end of the chunk of cycles it is stepping; it then writes what it has gathered, marked incomplete. A
//! second signal of either kind ends the process at once (its outputs stay under their
//! temporary names). Until a run starts listening (once its scenario, trace and fabric are
//! loaded, before it touches a file) a signal ends the process at once: nothing is written yet,
//! and a long load is not waited for. A signal ignored when the process starts stays ignored.

use std::sync::Arc;
use std::sync::atomic::Ordering;

pub use signal_hook::consts::{SIGINT, SIGTERM};

pub use crate::run::Stop;

/// The installation of the signal handlers that set a [`Stop`] (the request itself, and how a
/// run reads it, are the library's: `run::stop`).
impl Stop {
    /// A request set by SIGINT or SIGTERM once [`Stop::listen`] is called (before that they
    /// take their default action); a second one of either ends the process as the default
    /// action does.
    pub fn on_signals() -> Self {
        let mut stop = Self::never();
        stop.signals = true;
        stop
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
