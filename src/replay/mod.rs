//! Closed-loop replay of MPI-level traces: end nodes run ranks of a trace instead of Bernoulli
//! sources, and a rank's next message waits for the messages it depends on.
//!
//! The pipeline, all at load except the last step:
//! - [`parse()`]: the text format of `docs/traces.md` into a [`Trace`] (and [`Trace`]'s `Display`
//!   writes it back), every error at `file:line` with its token;
//! - [`Program::build`]: collectives expanded into point-to-point messages ([`collectives`]),
//!   sends matched to receives by MPI's non-overtaking rule, requests resolved;
//!   [`Program::check_progress`] refuses a trace that deadlocks;
//! - [`Mapping`]: ranks to end nodes (linear, seeded random, or a map file);
//! - [`Replayer`]: per node, the state machine the end node drives in cycles;
//! - [`otf2`]: OTF2 archives (what Score-P records) read into a [`Trace`] and written from one,
//!   through the OTF2 C library loaded at run time.
//!
//! Nothing here touches the network model: the replayer hands out messages and is told when
//! they have arrived.

pub mod collectives;
pub mod error;
pub mod mapping;
pub mod otf2;
pub mod parse;
pub mod program;
mod progress;
pub mod replayer;
pub mod trace;
pub mod workloads;

pub use error::{TraceError, TraceErrors};
pub use mapping::Mapping;
pub use parse::parse;
pub use program::{Action, Message, Op, Program};
pub use replayer::{Blocked, Post, RankState, Replayer, execution_time};
pub use trace::{RankOp, Trace, TraceOp};

/// Reads, resolves and checks a trace: [`parse()`], [`Program::build`] and
/// [`Program::check_progress`]; `file` names it in errors.
pub fn load(text: &str, file: &str) -> Result<Program, TraceErrors> {
    let trace = parse(text, file)?;
    let program = Program::build(&trace, file)?;
    program.check_progress(file)?;
    Ok(program)
}

#[cfg(test)]
mod fake_network;
#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod limit_tests;
#[cfg(test)]
mod tests;
