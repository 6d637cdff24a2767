//! `arnsim`: command-line entry point. Exit codes: 0 done, 1 error (nothing changed, or a run
//! whose invariants broke), 2 bad usage, 130 / 143 a run stopped by SIGINT / SIGTERM.

use clap::Parser;

fn main() {
    let cli = arnsim::cli::Cli::parse();
    if let Err(e) = arnsim::cli::run(cli) {
        eprintln!("arnsim: {e}");
        std::process::exit(e.code);
    }
}
