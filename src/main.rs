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
    // Under `mpirun`, MPI is initialised first and finalised before the process exits: a job
    // of several ranks splits the fabric of `arnsim run` over them.
    #[cfg(feature = "mpi")]
    let mpi = arnsim::fabric::ranks::mpi::init().map(|(universe, ranks)| {
        if let Some(r) = ranks {
            arnsim::fabric::ranks::set_world(r);
        }
        universe
    });
    let code = arnsim_main();
    #[cfg(feature = "mpi")]
    drop(mpi);
    std::process::exit(code);
}

/// The command line's work, and the exit code.
fn arnsim_main() -> i32 {
    let cli = match arnsim::cli::Cli::try_parse() {
        Ok(cli) => cli,
        // Help, version, or bad usage: clap's text and exit code (0 or 2), or 1 when the text
        // could not be written (a full disk, a closed pipe).
        Err(e) => return if e.print().is_err() { 1 } else { e.exit_code() },
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
        return e.code;
    }
    if let Some(f) = console::failure() {
        // Said on stderr if it still takes it; the exit code says it in any case.
        arnsim::errln!("arnsim: error: {f}");
        return 1;
    }
    0
}
