//! An MPI-level trace as written: the number of ranks and one operation per line, each rank's
//! operations in file order. [`Trace`]'s `Display` writes the text format of `docs/traces.md`,
//! which [`parse`](fn@super::parse) reads back to the same trace.

use super::error::{TraceError, TraceErrors};
use std::fmt;

/// Most ranks a trace may have: 2^20.
pub const MAX_RANKS: u32 = 1 << 20;

/// Largest message, collective or per-pair size, in bytes: 2^32 - 1.
pub const MAX_BYTES: u64 = u32::MAX as u64;

/// Most operations (lines that are not blank or comments) a trace may have: 2^26 (67,108,864),
/// as many as the messages it may have ([`MAX_MESSAGES`](super::program::MAX_MESSAGES)); more
/// messages come from collectives. Loading takes some 110 bytes an operation at its peak (the
/// text, the operations read, and the same resolved), some 7 GB at the limit.
pub const MAX_OPS: usize = 1 << 26;

/// Most requests one rank may have pending at once: 2^21 (2,097,152), a non-blocking send and
/// receive to each of the largest trace's 2^20 ranks.
pub const MAX_PENDING: usize = 1 << 21;

/// Longest compute time, in picoseconds: 10^15 (1000 s).
pub const MAX_COMPUTE_PS: u64 = 1_000_000_000_000_000;

/// One MPI call (or compute phase) of a rank, as the trace writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceOp {
    /// Computation between calls, in picoseconds.
    Compute { ps: u64 },
    /// Blocking send (eager: done once handed to the node).
    Send { dst: u32, bytes: u64, tag: u32 },
    /// Blocking receive; its size is the matched send's.
    Recv { src: u32, tag: u32 },
    /// Non-blocking send, completed by `wait req` or `waitall`.
    Isend {
        dst: u32,
        bytes: u64,
        req: u32,
        tag: u32,
    },
    /// Non-blocking receive, completed by `wait req` or `waitall`.
    Irecv { src: u32, req: u32, tag: u32 },
    /// Waits for one request.
    Wait { req: u32 },
    /// Waits for every request the rank has pending.
    Waitall,
    /// Ring allreduce of `bytes` per rank.
    Allreduce { bytes: u64 },
    /// Pairwise all-to-all, `bytes` to every other rank.
    Alltoall { bytes: u64 },
    /// Binomial-tree broadcast of `bytes` from `root`.
    Bcast { root: u32, bytes: u64 },
    /// Dissemination barrier of 1-byte messages.
    Barrier,
    /// Ring allgather, each rank contributing `bytes`.
    Allgather { bytes: u64 },
}

impl TraceOp {
    /// Whether every rank must list this operation, in the same order with the same arguments.
    pub fn is_collective(&self) -> bool {
        matches!(
            self,
            TraceOp::Allreduce { .. }
                | TraceOp::Alltoall { .. }
                | TraceOp::Bcast { .. }
                | TraceOp::Barrier
                | TraceOp::Allgather { .. }
        )
    }
}

/// One line of a trace: a rank and its operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankOp {
    /// The rank calling.
    pub rank: u32,
    /// What it calls.
    pub op: TraceOp,
}

/// A whole trace: `ranks` ranks and their operations in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// Number of ranks (ranks are `0..ranks`).
    pub ranks: u32,
    /// Every operation, in file order (each rank's in its program order).
    pub ops: Vec<RankOp>,
    /// Line of each operation in its file; empty for a trace built in memory, whose operation
    /// `i` is then named by its line in the written text, `i + 2`.
    pub lines: Vec<u32>,
}

impl Trace {
    /// An empty trace of `ranks` ranks.
    pub fn new(ranks: u32) -> Self {
        Trace {
            ranks,
            ops: Vec::new(),
            lines: Vec::new(),
        }
    }

    /// Appends `op` for `rank`.
    pub fn push(&mut self, rank: u32, op: TraceOp) {
        self.ops.push(RankOp { rank, op });
        if !self.lines.is_empty() {
            // Keep the numbering of a parsed trace going.
            let last = *self.lines.last().unwrap_or(&1);
            self.lines.push(last + 1);
        }
    }

    /// Line of operation `i`: its line in the file, or in the written text.
    pub fn line(&self, i: usize) -> u32 {
        self.lines.get(i).copied().unwrap_or(i as u32 + 2)
    }

    /// Checks what [`parse`](fn@super::parse) checks line by line, for a trace built in memory:
    /// the number of ranks and of operations, every rank, peer and root in range, sizes and
    /// times within their limits, collectives of at least 1 byte.
    pub fn check(&self, file: &str) -> Result<(), TraceErrors> {
        self.check_most(file, MAX_OPS)
    }

    /// [`Trace::check`] refusing more than `most_ops` operations, at the first one past them.
    pub(super) fn check_most(&self, file: &str, most_ops: usize) -> Result<(), TraceErrors> {
        if self.ranks == 0 || self.ranks > MAX_RANKS {
            let msg = format!("ranks must be 1 to {MAX_RANKS}, not {}", self.ranks);
            return Err(TraceError::at_line(file, 1, None, msg).into());
        }
        if self.ops.len() > most_ops {
            let msg = format!("more than {most_ops} operations: a trace has at most {most_ops}");
            let line = self.line(most_ops);
            return Err(TraceError::at_line(file, line, None, msg).into());
        }
        let mut errors = Vec::new();
        for (i, rop) in self.ops.iter().enumerate() {
            if let Err(msg) = check_op(rop, self.ranks) {
                let token = format!("{} {}", rop.rank, rop.op);
                errors.push(TraceError::at_line(file, self.line(i), Some(&token), msg));
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(TraceErrors::capped(errors))
        }
    }
}

fn check_op(rop: &RankOp, ranks: u32) -> Result<(), String> {
    let in_range = |r: u32, what: &str| {
        if r < ranks {
            Ok(())
        } else {
            Err(format!(
                "{what} {r}: no such rank (the trace has ranks 0 to {})",
                ranks - 1
            ))
        }
    };
    let size = |b: u64, least: u64| {
        if (least..=MAX_BYTES).contains(&b) {
            Ok(())
        } else {
            Err(format!("size {b} is not {least} to {MAX_BYTES} bytes"))
        }
    };
    in_range(rop.rank, "rank")?;
    match rop.op {
        TraceOp::Compute { ps } if ps > MAX_COMPUTE_PS => Err("time beyond 1000 s".into()),
        TraceOp::Send { dst, bytes, .. } | TraceOp::Isend { dst, bytes, .. } => {
            in_range(dst, "destination")?;
            size(bytes, 0)
        }
        TraceOp::Recv { src, .. } | TraceOp::Irecv { src, .. } => in_range(src, "source"),
        TraceOp::Allreduce { bytes }
        | TraceOp::Alltoall { bytes }
        | TraceOp::Allgather { bytes } => size(bytes, 1),
        TraceOp::Bcast { root, bytes } => {
            in_range(root, "root")?;
            size(bytes, 1)
        }
        _ => Ok(()),
    }
}

/// A picosecond count in the largest unit that writes it exactly.
struct Time(u64);

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(u64, &str); 4] = [
            (1_000_000_000_000, "s"),
            (1_000_000_000, "ms"),
            (1_000_000, "us"),
            (1_000, "ns"),
        ];
        for (scale, unit) in UNITS {
            if self.0 != 0 && self.0.is_multiple_of(scale) {
                return write!(f, "{}{unit}", self.0 / scale);
            }
        }
        write!(f, "{}ps", self.0)
    }
}

/// ` tag=T`, left out when `T` is 0.
struct Tag(u32);

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 != 0 {
            write!(f, " tag={}", self.0)?;
        }
        Ok(())
    }
}

impl fmt::Display for TraceOp {
    /// The operation as a line writes it, without the rank.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TraceOp::Compute { ps } => write!(f, "compute {}", Time(ps)),
            TraceOp::Send { dst, bytes, tag } => write!(f, "send {dst} {bytes}{}", Tag(tag)),
            TraceOp::Recv { src, tag } => write!(f, "recv {src}{}", Tag(tag)),
            TraceOp::Isend {
                dst,
                bytes,
                req,
                tag,
            } => write!(f, "isend {dst} {bytes} req={req}{}", Tag(tag)),
            TraceOp::Irecv { src, req, tag } => write!(f, "irecv {src} req={req}{}", Tag(tag)),
            TraceOp::Wait { req } => write!(f, "wait {req}"),
            TraceOp::Waitall => f.write_str("waitall"),
            TraceOp::Allreduce { bytes } => write!(f, "allreduce {bytes}"),
            TraceOp::Alltoall { bytes } => write!(f, "alltoall {bytes}"),
            TraceOp::Bcast { root, bytes } => write!(f, "bcast {root} {bytes}"),
            TraceOp::Barrier => f.write_str("barrier"),
            TraceOp::Allgather { bytes } => write!(f, "allgather {bytes}"),
        }
    }
}

impl fmt::Display for Trace {
    /// The text format: `ranks N`, then one `<rank> <op>` line per operation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "ranks {}", self.ranks)?;
        for op in &self.ops {
            writeln!(f, "{} {}", op.rank, op.op)?;
        }
        Ok(())
    }
}
