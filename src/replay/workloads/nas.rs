//! The communication phases of two NAS Parallel Benchmarks (NPB 3.x, MPI) as MPI traces, as
//! Gusat, Minkenberg and Rodríguez simulate them: CG's sparse matrix-vector product (class D on
//! 128 ranks: 750,000-byte messages in 5 sub-phases) and FT's transpose (class C on 128 ranks:
//! 131,072-byte messages in 127 sub-phases). Every sub-phase is a symmetric pairwise
//! permutation: each rank swaps one message with one peer.
//!
//! - [`Cg`] follows `CG/cg.f`'s `setup_submatrix_info` and `conj_grad`: ranks on an
//!   `nprows x npcols` grid (`npcols = nprows` or `2 nprows`), the product's row sums reduced by
//!   recursive halving over `log2 npcols` exchanges along the grid row (partners at column
//!   distance 1, 2, 4, ...), then one exchange with the transpose processor; each CG iteration
//!   then sums two dot products over the same partners with 8-byte messages. Each exchange is
//!   written as NPB makes it: `irecv` (request 1), blocking `send`, `wait 1`, tag `i` for the
//!   `i`-th reduction partner and tag 1 for the transpose. A rank whose transpose processor is
//!   itself (the grid's diagonal) exchanges nothing.
//! - [`Ft`] follows `FT/ft.f`'s 1-D layout: one `MPI_Alltoall` per FFT of the iteration loop,
//!   `nx ny nz / np^2` complex doubles to every other rank, written as the pairwise exchange
//!   MPI libraries use for long messages on a power of two of ranks (step `k` swaps with
//!   `rank XOR k`): `isend` (request 1), `irecv` (request 2), `waitall`.
//!
//! Computation is not written: the trace is the communication, as the slides simulate it.

use crate::replay::program::MAX_MESSAGES;
use crate::replay::trace::{MAX_BYTES, MAX_OPS, MAX_RANKS, Trace, TraceOp};

/// Bytes of a double.
const DOUBLE: u64 = 8;

/// Bytes of a double-precision complex.
const COMPLEX: u64 = 16;

/// Whether `ranks` is a power of two of at least 2, as both benchmarks require.
fn check_ranks(ranks: u32) -> Result<(), String> {
    if ranks < 2 || !ranks.is_power_of_two() || ranks > MAX_RANKS {
        return Err(format!(
            "{ranks} ranks: the benchmark runs on a power of two of ranks, 2 to {MAX_RANKS}"
        ));
    }
    Ok(())
}

/// Refuses more messages, or more operations (three a message: a receive posted, a send, a
/// wait), than a trace may hold.
fn check_messages(messages: u128, what: &str) -> Result<(), String> {
    if messages > u128::from(MAX_MESSAGES) {
        return Err(format!(
            "{what} send {messages} messages, more than a trace may hold ({MAX_MESSAGES})"
        ));
    }
    if 3 * messages > MAX_OPS as u128 {
        return Err(format!(
            "{what} take {} operations, more than a trace may hold ({MAX_OPS})",
            3 * messages
        ));
    }
    Ok(())
}

/// One exchange of NPB's style: receive posted, blocking send, wait.
fn npb_exchange(t: &mut Trace, me: u32, peer: u32, bytes: u64, tag: u32) {
    t.push(
        me,
        TraceOp::Irecv {
            src: peer,
            req: 1,
            tag,
        },
    );
    t.push(
        me,
        TraceOp::Send {
            dst: peer,
            bytes,
            tag,
        },
    );
    t.push(me, TraceOp::Wait { req: 1 });
}

/// The parameters of one CG run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cg {
    /// MPI ranks: a power of two.
    pub ranks: u32,
    /// Matrix order `na` (class D: 1,500,000).
    pub na: u64,
    /// CG iterations written (NPB runs 25 per outer iteration).
    pub iterations: u32,
}

impl Default for Cg {
    /// Class D on 128 ranks, one CG iteration: the slides' 5 sub-phases of 750 KB.
    fn default() -> Self {
        Cg {
            ranks: 128,
            na: 1_500_000,
            iterations: 1,
        }
    }
}

/// What one CG rank sends in one matrix-vector product: the reduction partners and lengths in
/// the order they are used, then the transpose processor and length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgRank {
    /// `(partner, bytes, tag)` of the row reduction, first exchange first.
    pub reduce: Vec<(u32, u64, u32)>,
    /// `(transpose processor, bytes)`.
    pub transpose: (u32, u64),
}

impl Cg {
    /// Process grid columns: `2^ceil(log2(ranks) / 2)`.
    pub fn npcols(&self) -> u32 {
        1 << self.ranks.trailing_zeros().div_ceil(2)
    }

    /// Process grid rows.
    pub fn nprows(&self) -> u32 {
        self.ranks / self.npcols()
    }

    /// Exchanges of the row reduction: `log2 npcols`.
    pub fn l2npcols(&self) -> u32 {
        self.npcols().trailing_zeros()
    }

    /// Rows owned by grid row `proc_row` (`lastrow - firstrow + 1`).
    fn rows(&self, proc_row: u64) -> u64 {
        let nprows = self.nprows() as u64;
        let (base, extra) = (self.na / nprows, self.na % nprows);
        if self.na.is_multiple_of(self.npcols() as u64) || proc_row >= extra {
            base
        } else {
            base + 1
        }
    }

    /// What rank `me` sends in one product, as `setup_submatrix_info` sets it up.
    pub fn rank(&self, me: u32) -> CgRank {
        let (npcols, nprows) = (self.npcols(), self.nprows());
        let (proc_row, proc_col) = (me / npcols, me % npcols);
        let rows = self.rows(proc_row as u64);
        let square = npcols == nprows;
        let even = me.is_multiple_of(2);
        let send_len = match (square, even) {
            (true, _) => rows,
            (false, true) => rows.div_ceil(2),
            (false, false) => rows / 2,
        };
        let l2 = self.l2npcols();
        // Partner of reduction `i` (1-based): column distance npcols / 2^i.
        let partner = |i: u32| proc_row * npcols + (proc_col ^ (npcols >> i));
        let length = |i: u32| {
            if !square && i == l2 {
                rows - send_len
            } else {
                send_len
            }
        };
        let reduce = (1..=l2)
            .rev()
            .map(|i| (partner(i), length(i) * DOUBLE, i))
            .collect();
        let exch = if square {
            (me % nprows) * nprows + me / nprows
        } else {
            2 * ((me / 2 % nprows) * nprows + me / 2 / nprows) + me % 2
        };
        CgRank {
            reduce,
            transpose: (exch, send_len * DOUBLE),
        }
    }

    /// Refuses what cannot be written as a trace.
    pub fn check(&self) -> Result<(), String> {
        check_ranks(self.ranks)?;
        if self.na < self.ranks as u64 {
            return Err(format!(
                "na = {} on {} ranks: every rank needs at least one row and column",
                self.na, self.ranks
            ));
        }
        if self.iterations == 0 {
            return Err("at least one iteration".into());
        }
        // Grid row 0 has the most rows, and rank 0's half is the larger.
        let biggest = self.rank(0).transpose.1;
        if biggest > MAX_BYTES {
            return Err(format!(
                "na = {} on {} ranks sends messages of up to {biggest} bytes, more than a \
                 trace's {MAX_BYTES}; choose a smaller na",
                self.na, self.ranks
            ));
        }
        // Per iteration and rank: the reductions of the product and of two dot products, and
        // the transpose.
        let per_rank = 3 * u128::from(self.l2npcols()) + 1;
        let messages = per_rank * u128::from(self.ranks) * u128::from(self.iterations);
        check_messages(
            messages,
            &format!(
                "CG on {} ranks (iterations: {})",
                self.ranks, self.iterations
            ),
        )
    }

    /// The trace: per iteration, the product's row reduction and transpose exchange (the
    /// large sub-phases), then the two dot products' 8-byte reductions.
    pub fn trace(&self) -> Result<Trace, String> {
        self.check()?;
        let mut t = Trace::new(self.ranks);
        let ranks: Vec<CgRank> = (0..self.ranks).map(|me| self.rank(me)).collect();
        for _ in 0..self.iterations {
            for step in 0..self.l2npcols() as usize {
                for (me, r) in ranks.iter().enumerate() {
                    let (peer, bytes, tag) = r.reduce[step];
                    npb_exchange(&mut t, me as u32, peer, bytes, tag);
                }
            }
            for (me, r) in ranks.iter().enumerate() {
                let (peer, bytes) = r.transpose;
                if peer != me as u32 {
                    npb_exchange(&mut t, me as u32, peer, bytes, 1);
                }
            }
            for _dot_product in 0..2 {
                for i in 1..=self.l2npcols() {
                    for (me, r) in ranks.iter().enumerate() {
                        // Partners in increasing distance: the reverse of the product's order.
                        let (peer, _, tag) = r.reduce[r.reduce.len() - i as usize];
                        npb_exchange(&mut t, me as u32, peer, DOUBLE, tag);
                    }
                }
            }
        }
        Ok(t)
    }
}

/// The parameters of one FT run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ft {
    /// MPI ranks: a power of two, at most `nz` (the 1-D layout).
    pub ranks: u32,
    /// Grid points along x, y and z (class C: 512 each).
    pub nx: u64,
    /// Along y.
    pub ny: u64,
    /// Along z.
    pub nz: u64,
    /// Transposes written (NPB runs one per FFT: the forward one and one per iteration).
    pub iterations: u32,
}

impl Default for Ft {
    /// Class C on 128 ranks, one transpose: the slides' 127 sub-phases of 128 KiB.
    fn default() -> Self {
        Ft {
            ranks: 128,
            nx: 512,
            ny: 512,
            nz: 512,
            iterations: 1,
        }
    }
}

impl Ft {
    /// Bytes each rank sends every other rank in one transpose: `nx ny nz / np^2` complex
    /// doubles.
    pub fn message_bytes(&self) -> u64 {
        let np = u128::from(self.ranks);
        let points = u128::from(self.nx) * u128::from(self.ny) * u128::from(self.nz);
        u64::try_from(points * u128::from(COMPLEX) / (np * np)).unwrap_or(u64::MAX)
    }

    /// Refuses what cannot be written as a trace, or what FT's 1-D layout cannot split.
    pub fn check(&self) -> Result<(), String> {
        check_ranks(self.ranks)?;
        let np = u128::from(self.ranks);
        let (nx, ny, nz) = (self.nx, self.ny, self.nz);
        if nx == 0 || ny == 0 || nz == 0 {
            return Err("every grid dimension must be at least 1".into());
        }
        if self.ranks as u64 > nz || ny % self.ranks as u64 != 0 || nz % self.ranks as u64 != 0 {
            return Err(format!(
                "a {nx} x {ny} x {nz} grid on {} ranks: the 1-D layout needs ny and nz multiples \
                 of the rank count",
                self.ranks
            ));
        }
        if (u128::from(nx) * u128::from(ny) * u128::from(nz)) % (np * np) != 0 {
            return Err(format!(
                "a {nx} x {ny} x {nz} grid does not split into equal blocks for {} x {} ranks",
                self.ranks, self.ranks
            ));
        }
        if self.iterations == 0 {
            return Err("at least one transpose".into());
        }
        let bytes = self.message_bytes();
        if bytes > MAX_BYTES {
            return Err(format!(
                "a {nx} x {ny} x {nz} grid on {} ranks sends messages of {bytes} bytes, more \
                 than a trace's {MAX_BYTES}; choose a smaller grid",
                self.ranks
            ));
        }
        let messages = np * (np - 1) * u128::from(self.iterations);
        check_messages(
            messages,
            &format!(
                "FT on {} ranks (transposes: {})",
                self.ranks, self.iterations
            ),
        )
    }

    /// The trace: per transpose, `ranks - 1` pairwise exchanges, step `k` with `rank XOR k`.
    pub fn trace(&self) -> Result<Trace, String> {
        self.check()?;
        let bytes = self.message_bytes();
        let mut t = Trace::new(self.ranks);
        for _ in 0..self.iterations {
            for k in 1..self.ranks {
                for me in 0..self.ranks {
                    let peer = me ^ k;
                    let send = TraceOp::Isend {
                        dst: peer,
                        bytes,
                        req: 1,
                        tag: 0,
                    };
                    t.push(me, send);
                    let recv = TraceOp::Irecv {
                        src: peer,
                        req: 2,
                        tag: 0,
                    };
                    t.push(me, recv);
                    t.push(me, TraceOp::Waitall);
                }
            }
        }
        Ok(t)
    }
}
