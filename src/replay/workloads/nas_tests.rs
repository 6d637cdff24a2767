//! Tests of the NAS generators: CG's grid, partners and lengths against NPB's
//! `setup_submatrix_info` worked by hand for 128 ranks of class D, every sub-phase of both
//! benchmarks a symmetric pairwise permutation, the message counts and bytes of the slides
//! (CG: 5 sub-phases of 750 KB; FT: 127 of 128 KiB), the refusals, and both traces resolved,
//! checked and replayed to the end on the fake network.

use super::nas::{Cg, Ft};
use super::tests::replay;
use crate::replay::{Trace, TraceOp};

/// The large sends of a trace (more than `floor` bytes), in order, as `(src, dst, bytes)`.
fn large_sends(trace: &Trace, floor: u64) -> Vec<(u32, u32, u64)> {
    let mut v = Vec::new();
    for op in &trace.ops {
        match op.op {
            TraceOp::Send { dst, bytes, .. } | TraceOp::Isend { dst, bytes, .. }
                if bytes > floor =>
            {
                v.push((op.rank, dst, bytes))
            }
            _ => {}
        }
    }
    v
}

/// Splits the sends into sub-phases in which each rank sends and receives at most once (a
/// rank's second send or receive opens the next), and checks each is a symmetric pairing:
/// whoever `a` sends to sends to `a`.
fn symmetric_sub_phases(sends: &[(u32, u32, u64)], ranks: u32) -> Vec<Vec<(u32, u32, u64)>> {
    let mut phases: Vec<Vec<(u32, u32, u64)>> = vec![Vec::new()];
    for &s in sends {
        if phases
            .last()
            .unwrap()
            .iter()
            .any(|p| p.0 == s.0 || p.1 == s.1)
        {
            phases.push(Vec::new());
        }
        phases.last_mut().unwrap().push(s);
    }
    for (i, phase) in phases.iter().enumerate() {
        let mut to = vec![None; ranks as usize];
        for &(a, b, _) in phase {
            assert_ne!(a, b, "sub-phase {i}: {a} sends to itself");
            to[a as usize] = Some(b);
        }
        for &(a, b, _) in phase {
            assert_eq!(
                to[b as usize],
                Some(a),
                "sub-phase {i}: {a} -> {b} not returned"
            );
        }
    }
    phases
}

#[test]
fn cg_class_d_on_128_ranks_is_a_16_by_8_grid_with_750_kb_messages() {
    let cg = Cg::default();
    assert_eq!((cg.npcols(), cg.nprows(), cg.l2npcols()), (16, 8, 4));
    // Rank 37: proc_row 2, proc_col 5; 187,500 rows, odd so send_len = 93,750; the first
    // exchange (i = 4) sends the other half, also 93,750 doubles.
    let r = cg.rank(37);
    assert_eq!(
        r.reduce,
        vec![
            (2 * 16 + 4, 750_000, 4),
            (2 * 16 + 7, 750_000, 3),
            (2 * 16 + 1, 750_000, 2),
            (2 * 16 + 13, 750_000, 1)
        ]
    );
    // me / 2 = 18 = (row 2, col 2) of the 8 x 8 grid of pairs: on the diagonal, itself.
    assert_eq!(r.transpose, (37, 750_000));
    // me / 2 = 19 = (2, 3) -> (3, 2) = 26, so 2 * 26 + 0 = 52.
    assert_eq!(cg.rank(38).transpose, (52, 750_000));
    // The trace: 4 x 128 reduction messages and 112 transposes (16 diagonal ranks keep theirs).
    let t = cg.trace().unwrap();
    let big = large_sends(&t, 8);
    assert_eq!(big.len(), 4 * 128 + 112);
    assert!(big.iter().all(|s| s.2 == 750_000));
    let phases = symmetric_sub_phases(&big, 128);
    assert_eq!(phases.len(), 5, "the slides' 5 sub-phases");
    // And the two dot products: 2 x 4 exchanges of one double per rank.
    let small = large_sends(&t, 0).len() - big.len();
    assert_eq!(small, 2 * 4 * 128);
}

#[test]
fn cg_on_square_and_uneven_grids_pairs_every_sub_phase() {
    for (ranks, na) in [
        (2, 100),
        (4, 14_000),
        (8, 999),
        (16, 1000),
        (32, 1001),
        (64, 75_000),
    ] {
        let cg = Cg {
            ranks,
            na,
            iterations: 2,
        };
        let t = cg.trace().unwrap();
        let big = large_sends(&t, 8);
        let phases = symmetric_sub_phases(&big, ranks);
        // On 2 ranks every rank is its own transpose processor.
        let transposes = (0..ranks).any(|m| cg.rank(m).transpose.0 != m);
        let per_iteration = cg.l2npcols() as usize + usize::from(transposes);
        assert_eq!(phases.len(), 2 * per_iteration, "{ranks} {na}");
        assert_eq!(transposes, ranks > 2);
        // Every reduction exchange swaps equal halves (or halves one apart when rows are odd).
        for (a, b, bytes) in &big {
            let back = big.iter().find(|s| s.0 == *b && s.1 == *a).unwrap().2;
            assert!(bytes.abs_diff(back) <= 8, "{ranks} {na}: {a}<->{b}");
        }
        let secs = replay(&t);
        assert!(secs > 0.0);
    }
}

#[test]
fn ft_class_c_on_128_ranks_is_127_xor_exchanges_of_128_kib() {
    let ft = Ft::default();
    assert_eq!(ft.message_bytes(), 131_072);
    let t = ft.trace().unwrap();
    let sends = large_sends(&t, 0);
    assert_eq!(sends.len(), 128 * 127);
    let phases = symmetric_sub_phases(&sends, 128);
    assert_eq!(phases.len(), 127, "the slides' 127 sub-phases");
    for (k, phase) in phases.iter().enumerate() {
        assert_eq!(phase.len(), 128);
        assert!(phase.iter().all(|&(a, b, _)| a ^ b == k as u32 + 1));
    }
    // On the fake network each rank's link carries 127 messages of 131,072 bytes in each
    // direction, 127 x 2048 = 260,096 cycles of 5.12 ns, plus one latency per step.
    let secs = replay(&t);
    let floor = 127.0 * 2048.0 * 5.12e-9;
    assert!(
        secs >= floor && secs < floor * 1.2,
        "{secs} s against {floor} s"
    );
}

#[test]
fn nas_generators_refuse_what_npb_or_a_trace_cannot_hold() {
    let refused = |r: Result<Trace, String>, says: &str| {
        let e = r.unwrap_err();
        assert!(e.contains(says), "{e}");
    };
    let cg = |ranks, na, iterations| Cg {
        ranks,
        na,
        iterations,
    };
    refused(cg(96, 1000, 1).trace(), "power of two");
    refused(cg(1, 1000, 1).trace(), "power of two");
    refused(cg(128, 100, 1).trace(), "at least one row");
    refused(cg(2, 2_000_000_000, 1).trace(), "choose a smaller na");
    refused(
        cg(1 << 20, 1 << 30, 100_000).trace(),
        "more than a trace may hold",
    );
    let ft = |ranks, n: u64| Ft {
        ranks,
        nx: n,
        ny: n,
        nz: n,
        iterations: 1,
    };
    refused(ft(12, 512).trace(), "power of two");
    refused(ft(1024, 512).trace(), "1-D layout");
    refused(ft(2, 1_000_000).trace(), "choose a smaller grid");
    refused(ft(8, 4).trace(), "1-D layout");
    let mut f = ft(128, 512);
    f.iterations = 5000;
    refused(f.trace(), "more than a trace may hold");
}
