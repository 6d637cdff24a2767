//! `arnsim`: command-line entry point.

use clap::Parser;

fn main() {
    let cli = arnsim::cli::Cli::parse();
    if let Err(e) = arnsim::cli::run(cli) {
        eprintln!("arnsim: error: {e}");
        std::process::exit(1);
    }
}
