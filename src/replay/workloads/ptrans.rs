//! HPCC's PTRANS (parallel matrix transpose, C <- A^T + C) as an MPI trace: the communication of
//! HPCC 1.5's `PTRANS/pdtransdriver.c` and of PUMMA's `pdtrans` (`PTRANS/pdtrans.c`) in the
//! HPCC repository (icl-utk-edu/hpcc), run on a P x Q process grid with block-cyclic
//! distribution, block size NB and matrix order N (M = N, MB = NB, as HPCC runs it).
//!
//! `pdtrans` works in lcm(P, Q)/P x lcm(P, Q)/Q exchange steps. In each, every process packs
//! the blocks of A^T that one process owns in C into one buffer of `ml x nl` doubles, with
//! `ml = nl = ceil(ceil(N / NB) / lcm) * NB`, and swaps it with `MPI_Sendrecv` (tag 0, through
//! `Cblacs_dSendrecv` of `PTRANS/cblacslt.c`), except the one step where a process of
//! `(col - row) mod gcd(P, Q) = 0` would send to itself and copies instead. Each Sendrecv is
//! written as `isend`, `irecv`, `waitall`.
//!
//! HPCC times five transposes (`grid_cnt < 5`), each on a new random placement of the MPI ranks
//! on the grid (`grid_map`: HPCC's swap shuffle, here driven by [`SplitMix64`] from a seed where
//! HPCC seeds from the clock). Around each transpose it calls small collectives (4 to 16-byte
//! allreduces and a barrier); they are written as dissemination barriers, which have the round
//! structure of MPICH's recursive-doubling short allreduce (docs/workloads.md). Computation
//! (matrix generation, packing, checking) is not written: the trace is the communication, as
//! the paper measures it.

use crate::blocks::rng::SplitMix64;
use crate::replay::program::MAX_MESSAGES;
use crate::replay::trace::{MAX_BYTES, MAX_RANKS, Trace, TraceOp};

/// Bytes of a double.
const DOUBLE: u64 = 8;

/// Small collectives before the repetitions: the allreduce of the allocation check and the
/// three parameter checks (grid, matrix, block size).
pub const SETUP_COLLECTIVES: u32 = 4;

/// Small collectives before each transpose: the seed and `r0x0` allreduces, the memory check
/// (`Cigsum2d`) and the barrier that starts the timer.
pub const COLLECTIVES_BEFORE: u32 = 4;

/// Small collectives after each transpose: the residual (`pdmatcmp`'s `Cdgamx2d`) and the
/// two timing combines (`slcombine` of wall and CPU time).
pub const COLLECTIVES_AFTER: u32 = 3;

/// Bytes rank `r0x0` sends rank 0 after each transpose when it is not rank 0: three doubles.
pub const REPORT_BYTES: u64 = 24;

/// The parameters of one PTRANS run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ptrans {
    /// Process grid rows.
    pub p: u32,
    /// Process grid columns.
    pub q: u32,
    /// Matrix order.
    pub n: u64,
    /// Block size.
    pub nb: u64,
    /// Transposes timed (HPCC: 5).
    pub reps: u32,
    /// Seed of the grid placements.
    pub seed: u64,
}

/// One exchange step of one process, by grid position (row, column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The process copies its own blocks.
    Local,
    /// `MPI_Sendrecv`: send to `to`, receive from `from`.
    Swap { to: (u32, u32), from: (u32, u32) },
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The grid HPL's advice gives `ranks` processes: P x Q = ranks with P <= Q as close as can be
/// (P the largest divisor not above the square root). 432 gives 18 x 24.
pub fn grid_for(ranks: u32) -> (u32, u32) {
    let mut p = 1;
    for d in 1..=ranks {
        if d as u64 * d as u64 > ranks as u64 {
            break;
        }
        if ranks.is_multiple_of(d) {
            p = d;
        }
    }
    (p, ranks / p)
}

impl Default for Ptrans {
    /// The run of docs/workloads.md: 432 ranks on 18 x 24, N = 161,280, NB = 80, 5 transposes.
    fn default() -> Self {
        Ptrans {
            p: 18,
            q: 24,
            n: 161_280,
            nb: 80,
            reps: 5,
            seed: 1,
        }
    }
}

impl Ptrans {
    /// The default run on `ranks` ranks, its grid by [`grid_for`].
    pub fn with_ranks(ranks: u32) -> Self {
        let (p, q) = grid_for(ranks.max(1));
        Ptrans {
            p,
            q,
            ..Ptrans::default()
        }
    }

    /// Number of ranks, P x Q.
    pub fn ranks(&self) -> u32 {
        self.p * self.q
    }

    /// lcm(P, Q).
    pub fn lcm(&self) -> u64 {
        self.p as u64 * self.q as u64 / gcd(self.p as u64, self.q as u64)
    }

    /// gcd(P, Q).
    pub fn gcd(&self) -> u64 {
        gcd(self.p as u64, self.q as u64)
    }

    /// Rows (and columns) of the buffer one step swaps: `ceil(ceil(N / NB) / lcm) * NB`.
    pub fn buffer_order(&self) -> u64 {
        self.n.div_ceil(self.nb).div_ceil(self.lcm()) * self.nb
    }

    /// Bytes of one exchange message: `buffer_order^2` doubles.
    pub fn message_bytes(&self) -> u64 {
        let m = self.buffer_order();
        m.saturating_mul(m).saturating_mul(DOUBLE)
    }

    /// Exchange steps per transpose and process: (lcm / P) x (lcm / Q).
    pub fn steps(&self) -> u64 {
        (self.lcm() / self.p as u64) * (self.lcm() / self.q as u64)
    }

    /// Messages of one transpose: every process's steps but the P x Q / gcd local copies.
    pub fn messages_per_transpose(&self) -> u64 {
        self.ranks() as u64 * self.steps() - self.ranks() as u64 / self.gcd()
    }

    /// Refuses what cannot be written as a trace.
    pub fn check(&self) -> Result<(), String> {
        if self.p == 0 || self.q == 0 {
            return Err(format!("a {} x {} grid has no process", self.p, self.q));
        }
        if self.p as u64 * self.q as u64 > MAX_RANKS as u64 {
            return Err(format!(
                "{} x {} ranks: more than {MAX_RANKS}",
                self.p, self.q
            ));
        }
        if self.n == 0 || self.nb == 0 {
            return Err("the matrix order and the block size must be at least 1".into());
        }
        if self.reps == 0 {
            return Err("at least one transpose".into());
        }
        if self.message_bytes() > MAX_BYTES {
            // The buffers are at least NB x NB doubles, whatever N.
            let smaller = if self.nb.saturating_mul(self.nb).saturating_mul(DOUBLE) > MAX_BYTES {
                "NB"
            } else {
                "N"
            };
            return Err(format!(
                "N = {}, NB = {} on {} x {} swaps buffers of {} bytes, more than a trace's \
                 {MAX_BYTES}; choose a smaller {smaller}",
                self.n,
                self.nb,
                self.p,
                self.q,
                self.message_bytes()
            ));
        }
        let messages = u128::from(self.messages_per_transpose()) * u128::from(self.reps);
        if messages > u128::from(MAX_MESSAGES) {
            return Err(format!(
                "{} transposes on {} x {} send {messages} messages, more than a trace may hold \
                 ({MAX_MESSAGES})",
                self.reps, self.p, self.q
            ));
        }
        Ok(())
    }

    /// The exchange steps of the process at `(row, col)`, in `pdtrans`'s order (`k2` outer,
    /// `j1` inner), with HPCC's first block on process (0, 0).
    pub fn schedule(&self, row: u32, col: u32) -> Vec<Step> {
        let (p, q) = (self.p as u64, self.q as u64);
        let (row, col) = (row as u64, col as u64);
        let (lcm, g) = (self.lcm(), self.gcd());
        let (lcmp, lcmq) = (lcm / p, lcm / q);
        let kmod1 = (p + col - row) % g;
        let kmod2 = (g - kmod1) % g;
        let mut steps = Vec::with_capacity((lcmp * lcmq) as usize);
        for k2 in 0..lcmp {
            let k1 = k2 * g + kmod1;
            let send_col = (col + q - k1) % q;
            let recv_col = (col + k2 * g + kmod2) % q;
            for j1 in 0..lcmq {
                let send_row = (row + g * j1 + kmod1) % p;
                if send_row == row && send_col == col {
                    steps.push(Step::Local);
                } else {
                    let recv_row = (row + p - g * j1 - kmod2) % p;
                    steps.push(Step::Swap {
                        to: (send_row as u32, send_col as u32),
                        from: (recv_row as u32, recv_col as u32),
                    });
                }
            }
        }
        steps
    }

    /// The placements of the transposes: for each, the MPI rank at grid position
    /// `row * Q + col`. HPCC's `grid_map` swap loop (every place swapped with a uniformly drawn
    /// one), one shuffle of the identity per transpose from one stream.
    pub fn placements(&self) -> Vec<Vec<u32>> {
        let n = self.ranks();
        let mut rng = SplitMix64::new(self.seed);
        (0..self.reps)
            .map(|_| {
                let mut map: Vec<u32> = (0..n).collect();
                for i in 0..n as usize {
                    let j = rng.below(n as u64) as usize;
                    map.swap(i, j);
                }
                map
            })
            .collect()
    }

    /// The trace: setup collectives, then per transpose the collectives before it, its
    /// exchange steps, the collectives after it and `r0x0`'s report to rank 0.
    pub fn trace(&self) -> Result<Trace, String> {
        self.check()?;
        let ranks = self.ranks();
        let bytes = self.message_bytes();
        let mut t = Trace::new(ranks);
        let small = |t: &mut Trace, count: u32| {
            for _ in 0..count {
                for r in 0..ranks {
                    t.push(r, TraceOp::Barrier);
                }
            }
        };
        small(&mut t, SETUP_COLLECTIVES);
        let schedules: Vec<Vec<Step>> = (0..ranks)
            .map(|pos| self.schedule(pos / self.q, pos % self.q))
            .collect();
        for map in self.placements() {
            let rank_at = |(row, col): (u32, u32)| map[(row * self.q + col) as usize];
            small(&mut t, COLLECTIVES_BEFORE);
            for s in 0..self.steps() as usize {
                for (pos, schedule) in schedules.iter().enumerate() {
                    if let Step::Swap { to, from } = schedule[s] {
                        let me = map[pos];
                        let (dst, src) = (rank_at(to), rank_at(from));
                        t.push(
                            me,
                            TraceOp::Isend {
                                dst,
                                bytes,
                                req: 1,
                                tag: 0,
                            },
                        );
                        t.push(
                            me,
                            TraceOp::Irecv {
                                src,
                                req: 2,
                                tag: 0,
                            },
                        );
                        t.push(me, TraceOp::Waitall);
                    }
                }
            }
            small(&mut t, COLLECTIVES_AFTER);
            let r0x0 = map[0];
            if r0x0 != 0 {
                let (dst, src, tag) = (0, r0x0, 0);
                t.push(
                    r0x0,
                    TraceOp::Send {
                        dst,
                        bytes: REPORT_BYTES,
                        tag,
                    },
                );
                t.push(0, TraceOp::Recv { src, tag });
            }
        }
        Ok(t)
    }
}
