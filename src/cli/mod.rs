//! The `arnsim` command line: `run` a scenario (summary, CSV, SVG and VCD outputs; checkpoints
//! that `resume` continues from), `check` or
//! list `scenarios`, `sweep` a scenario over offered loads, `plot` several runs into one figure-6 panel, `demo` every hardware block
//! on its seeded stimulus (a VCD and a GTKWave save file each), `replay` a switch recording on the
//! cycle engine (and dump it), `waves-pair` the Rust and Verilated dumps of one replay, and write
//! the MPI `trace` of a paper workload (PTRANS, Inception-v3). No command changes a file that
//! existed before it unless it succeeds (`docs/outputs.md`).

pub mod checkpoints;
pub mod console;
pub mod contention;
pub mod demo;
pub mod dump;
#[cfg(test)]
mod engine_tests;
#[cfg(test)]
pub(crate) mod fabrics_tests;
#[cfg(test)]
mod fst_tests;
#[cfg(test)]
mod gtkw_tests;
pub mod interrupt;
pub mod outputs;
pub mod partition;
#[cfg(test)]
mod phase_tests;
pub mod plot;
#[cfg(test)]
mod plot_refusal_tests;
pub mod record;
#[cfg(test)]
mod record_tests;
pub mod run;
mod run_dump;
mod run_report;
mod run_summary;
#[cfg(test)]
mod run_tests;
pub mod scenarios;
pub mod sweep;
pub mod sweep_grid;
pub mod sweep_table;
#[cfg(test)]
mod sweep_tests;
pub mod trace_gen;
pub mod waves_pair;
#[cfg(test)]
mod waves_pair_tests;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Cycle-accurate model of an InfiniBand-class switch with ARN congestion management.
#[derive(Parser, Debug)]
#[command(
    name = "arnsim",
    version,
    about,
    after_help = "The switch implements adaptive routing notifications (ARN) with adapted-flow isolation (AFI) \
as described by J. Rocher-Gonzalez, J. Escudero-Sahuquillo, P. J. Garcia and F. J. Quiles, \
\"Congestion Management in High-Performance Interconnection Networks Using Adaptive Routing \
Notifications\"; the interleaved forwarding tables follow J. C. Martinez et al., \"Supporting Fully \
Adaptive Routing in InfiniBand Networks\". All references: docs/references.md."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a scenario (a file, or a bundled name such as `default` or `paper/config1_h10`).
    Run {
        /// Scenario file or bundled name.
        scenario: String,
        /// Output directory (default: `waves/<scenario name>`).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Seed (overrides the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Override any scenario key, e.g. `--set routing=dmodk --set sim_time=20ms`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Write a VCD of the fabric (and a GTKWave save file beside it).
        #[arg(long)]
        vcd: Option<PathBuf>,
        /// Write an FST of the fabric (GTKWave's compressed format; same signals, window and
        /// value changes as the VCD, and a save file beside it). With --vcd too, both are
        /// written from the same samples; a save file they would share opens the FST.
        #[arg(long)]
        fst: Option<PathBuf>,
        /// Signals to dump: glob over names such as `fabric.s3_*.out4.*` (repeatable; all if none).
        #[arg(long = "scope", value_name = "PATTERN")]
        scope: Vec<String>,
        /// Start of the dump, and of the comparison of a recording (a time such as `3ms`).
        #[arg(long)]
        from: Option<String>,
        /// End of the dump, and of a recording (a time).
        #[arg(long)]
        to: Option<String>,
        /// Record what switch NAME (as in the waveforms, e.g. `s2_0`) receives and drives on
        /// every port in every cycle, into `<out>/NAME.rec` (docs/recording.md).
        #[arg(long, value_name = "NAME")]
        record_switch: Option<String>,
        /// Start the dump this long before the first congestion root is detected (a time).
        #[arg(long, value_name = "TIME")]
        trigger_before: Option<String>,
        /// The engine stepping the switches: `event` (a calendar of port and node events, the
        /// default) or `cycle` (one clock cycle per step, module for module as the HDL; much
        /// slower). The outputs are the same; `summary.json` names the engine.
        #[arg(long, value_enum, default_value_t = EngineArg::Event)]
        engine: EngineArg,
        /// Threads stepping the fabric (0: one per core, but one for fabrics of fewer than 32
        /// switches, where a thread's share is too small to pay; at most the machine's cores).
        /// Outputs do not depend on it.
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=16))]
        threads: u64,
        /// Write the whole model's state into `<out>/checkpoint.bin` every TIME of simulated
        /// time (e.g. `1ms`), and when a signal stops the run; `arnsim resume <out>` continues
        /// from it to the outputs of an uninterrupted run (docs/checkpoints.md).
        #[arg(long, value_name = "TIME")]
        checkpoint_every: Option<String>,
    },
    /// Continue a run from the last checkpoint in its output folder (a run started with
    /// `--checkpoint-every`, stopped or killed): its command line, in the folder it was started
    /// in, by the build that took the checkpoint; the outputs are those of an uninterrupted run.
    Resume {
        /// The run's output folder (holding `checkpoint.bin`).
        dir: PathBuf,
    },
    /// Run a scenario at every point of a grid of scenario keys' values (`--vary`, `--loads`),
    /// each point on one or more seeds, and write `sweep.csv` (means and 95 % confidence
    /// intervals per point) and `sweep.svg`: accepted load and packet latency against the first
    /// varied key, a curve per value of the others (docs/outputs.md).
    Sweep {
        /// Scenario file or bundled name.
        scenario: String,
        /// Offered loads, comma-separated, each in (0, 1], e.g. `0.1,0.2,0.5`: short for
        /// `--vary traffic.load=...`, varied first.
        #[arg(long, value_name = "LOADS")]
        loads: Option<String>,
        /// A scenario key and its values, e.g. `--vary switch.buffer=32KB,64KB`; repeat for a
        /// grid (the first key across the plot, a curve per value of the others).
        #[arg(long, value_name = "KEY=V1,V2,...")]
        vary: Vec<String>,
        /// Runs per point, on consecutive seeds from the scenario's (or `--seed`'s): the table
        /// gives each metric's mean and 95 % confidence interval.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1000))]
        seeds: Option<u64>,
        /// Output directory (default: `waves/<scenario name>-sweep`); each run goes to a folder
        /// of it named by its values, e.g. `<out>/load-0.30/` or `<out>/load-0.30,buffer-64KB,seed-2/`.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Seed of every run, or of the first of each point's (overrides the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Override any scenario key the sweep does not vary, e.g. `--set traffic.pattern=bitrev`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Runs at once, each stepping on one thread (default: one per core). The outputs do
        /// not depend on it.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
        jobs: Option<u64>,
    },
    /// Replay a switch recording on the cycle engine, comparing every output in every cycle.
    Replay {
        /// A recording written by `run --record-switch`.
        file: PathBuf,
        /// Write a VCD of the switch's port interface as the Verilated replay of
        /// `hdl-ref/switch.sv` dumps it (same names, same clock cycles; docs/waveforms.md).
        #[arg(long)]
        vcd: Option<PathBuf>,
        /// Write the same dump as an FST (GTKWave's compressed format; beside or instead of
        /// `--vcd`).
        #[arg(long)]
        fst: Option<PathBuf>,
        /// First recording cycle dumped: a cycle number or a time such as `10us` (5.12 ns per
        /// cycle); the recording's `from` without it.
        #[arg(long)]
        from: Option<String>,
        /// Last recording cycle dumped (a cycle or a time); the recording's last without it.
        #[arg(long)]
        to: Option<String>,
    },
    /// Merge the Rust cycle engine's and the Verilated switch's dumps of one replay window into
    /// one VCD (top scopes `rust` and `hdl`) with a GTKWave save file that shows each port's
    /// signals of both models one above the other, and compare their value changes.
    WavesPair {
        /// The dump of `arnsim replay FILE --vcd`.
        #[arg(long)]
        rust: PathBuf,
        /// The dump of `testbenches/hdl/replay_switch.sh FILE --vcd ... -- +vcd_from=.. +vcd_to=..`.
        #[arg(long)]
        hdl: PathBuf,
        /// The merged VCD (its `.gtkw` beside it).
        #[arg(long)]
        out: PathBuf,
        /// Fail (and write nothing) when a signal's value changes differ between the models.
        #[arg(long)]
        check: bool,
    },
    /// Validate a scenario without running it.
    Check {
        /// Scenario file or bundled name.
        scenario: String,
        /// Override any scenario key.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Also print how a run on this many MPI ranks splits the fabric (docs/distributed.md).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=128))]
        ranks: Option<u32>,
        /// Threads per rank, with --ranks.
        #[arg(long, default_value_t = 1, requires = "ranks", value_parser = clap::value_parser!(u32).range(1..=16))]
        threads: u32,
    },
    /// Route random permutations over a scenario's fat tree (a modified one with
    /// `topology.horizontal`) obliviously and by flow routing, and print the flows' contention:
    /// the flows on the busiest link of each path, largest and mean (figure 5 of Birk and
    /// Zdornov; docs/results_birk_zdornov.md).
    Contention {
        /// Scenario file or bundled name (its topology a `kary_ntree` or `rlft`).
        scenario: String,
        /// Random permutations routed.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=contention::MOST_PERMUTATIONS))]
        permutations: u64,
        /// Seed of the permutations (default: the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Override any scenario key, e.g. `--set topology.horizontal=2`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// List the bundled scenarios.
    Scenarios,
    /// Overlay the efficiency of several runs in one SVG panel (like figure 6 of Rocher-Gonzalez et al.,
    /// "Congestion Management in High-Performance Interconnection Networks Using Adaptive Routing
    /// Notifications"); trace replays as bars of their execution time with the incast's overhead
    /// (like its figure 8).
    Plot {
        /// Output directories of `arnsim run` (each holding `efficiency.csv` and `summary.json`;
        /// when every one is a trace replay, one bar per technique: the run alone, and an error bar
        /// to its run beside an incast), or of `arnsim sweep` (each holding `sweep.csv`; the
        /// curves are named by the folders).
        #[arg(required = true, value_name = "RUN_DIR")]
        runs: Vec<PathBuf>,
        /// The SVG file to write.
        #[arg(long)]
        out: PathBuf,
        /// Title (default: scenario and traffic of the first run).
        #[arg(long)]
        title: Option<String>,
        /// Plot only up to this time (a time such as `20ms`), to compare runs of different lengths.
        #[arg(long)]
        to: Option<String>,
    },
    /// Write the MPI trace of a generated workload (PTRANS, Inception-v3, NAS CG or FT;
    /// docs/workloads.md), in the format of docs/traces.md.
    Trace {
        /// The workload and its parameters.
        #[command(subcommand)]
        workload: trace_gen::Workload,
    },
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

/// `--engine`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// The cycle engine (`src/cycle/`).
    Cycle,
    /// The event engine (`src/fabric/event.rs`).
    Event,
}

/// Why a command failed: a message for the user and the process's exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// What went wrong (or where a stopped run left its outputs).
    pub message: String,
    /// 1 for an error; 128 + the signal's number for a run a signal stopped.
    pub code: i32,
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure { message, code: 1 }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.code {
            1 => write!(f, "error: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

/// Runs the parsed command.
pub fn run(cli: Cli) -> Result<(), Failure> {
    run_parsed(cli, None)
}

/// Runs the parsed command; `resumed`: a `run` continued from this checkpoint of it.
pub(crate) fn run_parsed(
    cli: Cli,
    resumed: Option<crate::run::checkpoint::Loaded>,
) -> Result<(), Failure> {
    let split = matches!(cli.command, Command::Run { .. } | Command::Sweep { .. });
    if crate::fabric::ranks::world().is_some() && !split {
        return Err(
            "only `arnsim run` and `arnsim sweep` are split over MPI ranks: start the other commands without mpirun (or with -n 1)"
                .to_string()
                .into(),
        );
    }
    match cli.command {
        Command::Demo { out, cycles, seed } => Ok(demo::run(&out, cycles, seed)?),
        Command::Run {
            scenario,
            out,
            seed,
            mut set,
            vcd,
            fst,
            scope,
            from,
            to,
            trigger_before,
            record_switch,
            engine,
            threads,
            checkpoint_every,
        } => {
            let checkpoints = checkpoints::asked(checkpoint_every, resumed)?;
            if let Some(s) = seed {
                set.push(format!("seed={s}"));
            }
            let waves = match (vcd, fst) {
                (None, None) => {
                    // A recording takes --from and --to too.
                    let (f, t) = match record_switch {
                        Some(_) => (None, None),
                        None => (from.as_deref(), to.as_deref()),
                    };
                    let ignored =
                        dump::ignored_without_vcd(&scope, f, t, trigger_before.as_deref())?;
                    if let Some(w) = ignored {
                        crate::errln!("arnsim: warning: {w}");
                    }
                    None
                }
                (vcd, fst) => Some(run::WaveRequest {
                    vcd,
                    fst,
                    scopes: scope,
                    from: from.clone(),
                    to: to.clone(),
                    trigger_before,
                }),
            };
            let stop = interrupt::Stop::on_signals();
            // More threads than the machine runs at once only make the threads wait for each
            // other at every window; the outputs are the same for any count.
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let threads = if let Some(t) = checkpoints.as_ref().and_then(|c| c.threads()) {
                // A run continued from a checkpoint steps on the threads it was saved on.
                t
            } else if threads as usize > cores {
                let rank = crate::fabric::ranks::world().map_or(0, |r| r.rank());
                if rank == 0 {
                    crate::errln!(
                        "arnsim: warning: --threads {threads}: this machine runs {cores} threads at once; stepping on {cores} (the outputs do not depend on the thread count)"
                    );
                }
                cores
            } else {
                threads as usize
            };
            let record = record_switch.map(|switch| record::RecordRequest { switch, from, to });
            let engine = match engine {
                EngineArg::Cycle => crate::fabric::Engine::Cycle,
                EngineArg::Event => crate::fabric::Engine::Event,
            };
            let how = run::How {
                step: crate::run::Stepping {
                    engine,
                    threads,
                    stop: &stop,
                    ranks: crate::fabric::ranks::world(),
                },
                quiet: false,
            };
            run::run_checkpointed(&scenario, out, &set, waves, record, &how, checkpoints)
        }
        Command::Resume { dir } => checkpoints::resume(&dir),
        Command::Sweep {
            scenario,
            loads,
            vary,
            seeds,
            out,
            seed,
            mut set,
            jobs,
        } => {
            if let Some(s) = seed {
                set.push(format!("seed={s}"));
            }
            let req = sweep::Request {
                scenario,
                loads,
                vary,
                seeds: seeds.unwrap_or(1) as usize,
                out,
                set,
                jobs: jobs.unwrap_or(0) as usize,
            };
            let stop = interrupt::Stop::on_signals();
            stop.listen()?;
            sweep::sweep(&req, &stop)
        }
        Command::Replay {
            file,
            vcd,
            fst,
            from,
            to,
        } => {
            let dump = if vcd.is_some() || fst.is_some() {
                Some(record::ReplayDump { vcd, fst, from, to })
            } else {
                if from.is_some() || to.is_some() {
                    crate::errln!(
                        "arnsim: warning: --from/--to given without --vcd or --fst: ignored (nothing is dumped without a dump file)"
                    );
                }
                None
            };
            record::replay(&file, dump.as_ref(), &interrupt::Stop::on_signals())
        }
        Command::WavesPair {
            rust,
            hdl,
            out,
            check,
        } => Ok(waves_pair::run(&rust, &hdl, &out, check)?),
        Command::Check {
            scenario,
            set,
            ranks,
            threads,
        } => {
            scenarios::check(&scenario, &set)?;
            if let Some(n) = ranks {
                let s = scenarios::load(&scenario, &set)?;
                for line in partition::lines(&s, n as usize, threads as usize) {
                    crate::outln!("{line}");
                }
            }
            Ok(())
        }
        Command::Contention {
            scenario,
            permutations,
            seed,
            set,
        } => Ok(contention::run(&scenario, &set, permutations, seed)?),
        Command::Scenarios => Ok(scenarios::list()?),
        Command::Trace { workload } => Ok(trace_gen::run(&workload)?),
        Command::Plot {
            runs,
            out,
            title,
            to,
        } => Ok(plot::run(&runs, &out, title.as_deref(), to.as_deref())?),
    }
}
