//! `arnsim`: command-line entry point. Exit codes: 0 done, 1 error (nothing changed, or a run
//! whose invariants broke), 2 bad usage, 130 / 143 a run stopped by SIGINT / SIGTERM.

use clap::Parser;

fn main() {
    let cli = arnsim::cli::Cli::parse();
    if let Err(e) = arnsim::cli::run(cli) {
        // One line per error (a scenario reports every error it has), each with the prefix.
        for line in e.to_string().lines() {
            let line = line.strip_prefix("error: ").unwrap_or(line);
            if e.code == 1 {
                eprintln!("arnsim: error: {line}");
            } else {
                eprintln!("arnsim: {line}");
            }
        }
        std::process::exit(e.code);
    }
}
