//! The `arnsim` command line.
//!
//! Until the switch and the fabric are assembled, the main job is the block-level demo:
//! every hardware block runs on its seeded stimulus and leaves a VCD and a GTKWave save file.

pub mod demo;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Cycle-accurate model of an InfiniBand-class switch with ARN congestion management.
#[derive(Parser, Debug)]
#[command(name = "arnsim", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run every hardware block on its seeded stimulus and write one VCD (+ .gtkw) per block.
    Demo {
        /// Output directory for the VCD and .gtkw files.
        #[arg(long, default_value = "waves/demo")]
        out: PathBuf,
        /// Cycles to simulate per block.
        #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
        cycles: u64,
        /// Stimulus seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

/// Runs the parsed command; the error is a message for the user.
pub fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Demo { out, cycles, seed } => demo::run(&out, cycles, seed),
    }
}
