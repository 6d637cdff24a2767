//! Closed-loop replay of MPI-level traces: end nodes run ranks of a trace instead of Bernoulli
//! sources, and a rank's next message waits for the messages it depends on.
//!
//! - [`parse`]: the text format of `docs/traces.md` into a [`Trace`] (and [`Trace`]'s `Display`
//!   writes it back), every error at `file:line` with its token;
//! - [`collectives`]: collectives expanded into point-to-point steps.

pub mod collectives;
pub mod error;
pub mod parse;
pub mod trace;

pub use error::{TraceError, TraceErrors};
pub use parse::parse;
pub use trace::{RankOp, Trace, TraceOp};
