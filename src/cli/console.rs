//! The terminal: the lines the commands print to stdout and stderr. A stream that cannot be
//! written (a full disk, a pipe closed by its reader) does not stop a command half-way, as
//! `println!` would with a panic: the line is dropped, the first failure is kept, and the command
//! reports it once it is done (exit code 1).

use std::fmt::Arguments;
use std::io::Write;
use std::sync::Mutex;

/// The first write to stdout or stderr that failed, as a message.
static FAILED: Mutex<Option<String>> = Mutex::new(None);

/// Writes `args` and a newline to stdout.
pub fn out(args: Arguments<'_>) {
    note("stdout", writeln!(std::io::stdout().lock(), "{args}"));
}

/// Writes `args` and a newline to stderr.
pub fn err(args: Arguments<'_>) {
    note("stderr", writeln!(std::io::stderr().lock(), "{args}"));
}

fn note(stream: &str, r: std::io::Result<()>) {
    if let Err(e) = r {
        let mut f = FAILED.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert_with(|| format!("cannot write to {stream}: {e}"));
    }
}

/// The first failure to write stdout or stderr, if any (stdout flushed first).
pub fn failure() -> Option<String> {
    note("stdout", std::io::stdout().lock().flush());
    FAILED.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// `println!` to stdout through [`out`].
#[macro_export]
macro_rules! outln {
    () => { $crate::cli::console::out(format_args!("")) };
    ($($t:tt)*) => { $crate::cli::console::out(format_args!($($t)*)) };
}

/// `eprintln!` to stderr through [`err`].
#[macro_export]
macro_rules! errln {
    () => { $crate::cli::console::err(format_args!("")) };
    ($($t:tt)*) => { $crate::cli::console::err(format_args!($($t)*)) };
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_write_that_fails_is_kept_not_raised() {
        super::note("stdout", Err(std::io::Error::other("disk full")));
        super::note("stderr", Err(std::io::Error::other("later")));
        assert_eq!(
            super::failure().as_deref(),
            Some("cannot write to stdout: disk full")
        );
    }
}
