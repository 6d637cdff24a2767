//! `arnsim`: command-line entry point. Exit codes: 0 done, 1 error (nothing changed, or a run
//! whose invariants broke, or stdout or stderr could not be written), 2 bad usage, 130 / 143 a
//! run stopped by SIGINT / SIGTERM.

use arnsim::cli::console;
use clap::Parser;

/// mimalloc maps its segments with `MADV_HUGEPAGE`, so the fabric's state lies in 2 MB pages where
/// the kernel allows them (`docs/performance.md`, "Huge pages"); the library leaves the allocator
/// to its user.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = match arnsim::cli::Cli::try_parse() {
        Ok(cli) => cli,
        // Help, version, or bad usage: clap's text and exit code (0 or 2), or 1 when the text
        // could not be written (a full disk, a closed pipe).
        Err(e) => {
            let code = if e.print().is_err() { 1 } else { e.exit_code() };
            std::process::exit(code);
        }
    };
    if let Err(e) = arnsim::cli::run(cli) {
        // One line per error (a scenario reports every error it has), each with the prefix.
        for line in e.to_string().lines() {
            let line = line.strip_prefix("error: ").unwrap_or(line);
            if e.code == 1 {
                arnsim::errln!("arnsim: error: {line}");
            } else {
                arnsim::errln!("arnsim: {line}");
            }
        }
        std::process::exit(e.code);
    }
    if let Some(f) = console::failure() {
        // Said on stderr if it still takes it; the exit code says it in any case.
        arnsim::errln!("arnsim: error: {f}");
        std::process::exit(1);
    }
}
