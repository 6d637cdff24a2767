//! Collectives expanded into point-to-point steps, by the algorithms `docs/traces.md` states:
//! ring allreduce (reduce-scatter then allgather), pairwise-exchange all-to-all, binomial-tree
//! broadcast, dissemination barrier of 1-byte messages and ring allgather.
//!
//! Every step is "isend to one peer, irecv from another, wait both"; sends are eager (done when
//! handed to the node), so a step is a send followed by a blocking receive. Reductions take no
//! compute time. The messages of a collective are matched in their own space, apart from the
//! trace's point-to-point messages (as MPI keeps collectives on their own context).

use super::trace::TraceOp;

/// One point-to-point step of an expanded collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send `bytes` to `peer`.
    Send { peer: u32, bytes: u64 },
    /// Wait for the next message from `peer`.
    Recv { peer: u32 },
}

/// Appends the steps of collective `op` for `rank` of `ranks` to `out`; nothing for a
/// point-to-point operation.
pub fn expand(op: &TraceOp, rank: u32, ranks: u32, out: &mut Vec<Step>) {
    let p = u64::from(ranks);
    let r = u64::from(rank);
    // Peer `r + d` (mod p) for a distance d in 0..p, and `r - d`.
    let right = |d: u64| ((r + d) % p) as u32;
    let left = |d: u64| ((r + p - d) % p) as u32;
    let exchange = |to: u32, from: u32, bytes: u64, out: &mut Vec<Step>| {
        out.push(Step::Send { peer: to, bytes });
        out.push(Step::Recv { peer: from });
    };
    match *op {
        TraceOp::Allreduce { bytes } => {
            let chunk = bytes.div_ceil(p);
            for _ in 0..2 * (p - 1) {
                exchange(right(1), left(1), chunk, out);
            }
        }
        TraceOp::Allgather { bytes } => {
            for _ in 0..p - 1 {
                exchange(right(1), left(1), bytes, out);
            }
        }
        TraceOp::Alltoall { bytes } => {
            for k in 1..p {
                exchange(right(k), left(k), bytes, out);
            }
        }
        TraceOp::Barrier => {
            let mut d = 1;
            while d < p {
                exchange(right(d), left(d), 1, out);
                d *= 2;
            }
        }
        TraceOp::Bcast { root, bytes } => {
            // Ranks relative to the root; the parent of v is v with its lowest set bit
            // cleared, its children v + 2^j for 2^j below that bit.
            let v = (r + p - u64::from(root)) % p;
            let abs = |rel: u64| ((rel + u64::from(root)) % p) as u32;
            let mut mask = 1;
            while mask < p {
                if v & mask != 0 {
                    out.push(Step::Recv {
                        peer: abs(v - mask),
                    });
                    break;
                }
                mask <<= 1;
            }
            mask >>= 1;
            while mask > 0 {
                if v + mask < p {
                    out.push(Step::Send {
                        peer: abs(v + mask),
                        bytes,
                    });
                }
                mask >>= 1;
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(op: TraceOp, rank: u32, ranks: u32) -> Vec<Step> {
        let mut v = Vec::new();
        expand(&op, rank, ranks, &mut v);
        v
    }

    #[test]
    fn binomial_broadcast_from_root_2_of_6() {
        let op = TraceOp::Bcast { root: 2, bytes: 9 };
        let send = |peer| Step::Send { peer, bytes: 9 };
        // Relative ranks 0..5 are absolute 2, 3, 4, 5, 0, 1.
        assert_eq!(steps(op, 2, 6), [send(0), send(4), send(3)]);
        assert_eq!(steps(op, 3, 6), [Step::Recv { peer: 2 }]);
        assert_eq!(steps(op, 4, 6), [Step::Recv { peer: 2 }, send(5)]);
        assert_eq!(steps(op, 0, 6), [Step::Recv { peer: 2 }, send(1)]);
        assert_eq!(steps(op, 1, 6), [Step::Recv { peer: 0 }]);
    }

    #[test]
    fn dissemination_barrier_of_5_has_3_rounds() {
        let s = steps(TraceOp::Barrier, 4, 5);
        let send = |peer| Step::Send { peer, bytes: 1 };
        let recv = |peer| Step::Recv { peer };
        assert_eq!(s, [send(0), recv(3), send(1), recv(2), send(3), recv(0)]);
    }

    #[test]
    fn ring_allreduce_chunks_round_up() {
        let s = steps(TraceOp::Allreduce { bytes: 10 }, 0, 4);
        assert_eq!(s.len(), 2 * 2 * 3);
        assert_eq!(s[0], Step::Send { peer: 1, bytes: 3 });
        assert_eq!(s[1], Step::Recv { peer: 3 });
    }

    #[test]
    fn one_rank_collectives_do_nothing() {
        for op in [
            TraceOp::Allreduce { bytes: 8 },
            TraceOp::Alltoall { bytes: 8 },
            TraceOp::Allgather { bytes: 8 },
            TraceOp::Barrier,
            TraceOp::Bcast { root: 0, bytes: 8 },
        ] {
            assert!(steps(op, 0, 1).is_empty(), "{op}");
        }
    }
}
