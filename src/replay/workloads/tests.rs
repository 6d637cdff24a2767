//! Tests of the workload generators: PTRANS's message count and bytes against the formula of
//! docs/workloads.md, its Sendrecv pairings, Inception-v3's parameter counts against Keras's,
//! the gradient bytes per step, and both traces resolved, checked and replayed to the end on
//! the fake network.

use super::inception::{self, Inception, MIB};
use super::ptrans::{self, Ptrans, Step};
use crate::config::TimeBase;
use crate::replay::fake_network::{Net, Outcome};
use crate::replay::{Mapping, Program, Replayer, Trace, TraceOp};

/// One cycle is 5.12 ns at 100 Gb/s: a 64-byte flit a cycle is the link's 100 Gb/s.
const TB: TimeBase = TimeBase {
    flit_bytes: 64,
    link_gbps: 100.0,
};

/// Whole messages as one packet each: the fake network's time is the same (serialization per
/// sending node), and the 1 TB of PTRANS is 177,197 packets rather than 250 million.
const NET: Net = Net {
    latency: 200,
    mtu: 1 << 30,
};

/// Resolves, checks and replays `trace` one rank a node; the execution time in seconds.
pub(super) fn replay(trace: &Trace) -> f64 {
    let program = Program::build(trace, "gen.trace").unwrap();
    program.check_progress("gen.trace").unwrap();
    let mapping = Mapping::linear(program.ranks(), program.ranks()).unwrap();
    let mut reps = Replayer::build_all(&program, &mapping, &TB).unwrap();
    match NET.run(&mut reps, program.messages().len()).0 {
        Outcome::Finished(cycles) => cycles as f64 * 5.12e-9,
        Outcome::Deadlock(b) => panic!("deadlock: {:?}", &b[..b.len().min(5)]),
    }
}

/// Point-to-point sends of a trace (collectives left out): count and bytes.
fn sends(trace: &Trace) -> (u64, u64) {
    trace.ops.iter().fold((0, 0), |(n, b), op| match op.op {
        TraceOp::Isend { bytes, .. } | TraceOp::Send { bytes, .. } => (n + 1, b + bytes),
        _ => (n, b),
    })
}

#[test]
fn ptrans_on_432_ranks_runs_on_18_by_24_with_40_mb_swaps() {
    assert_eq!(ptrans::grid_for(432), (18, 24));
    assert_eq!(ptrans::grid_for(512), (16, 32));
    assert_eq!(ptrans::grid_for(7), (1, 7));
    let p = Ptrans::with_ranks(432);
    assert_eq!(p, Ptrans::default());
    assert_eq!((p.lcm(), p.gcd(), p.steps()), (72, 6, 12));
    // ceil(ceil(161280 / 80) / 72) * 80 = 28 * 80.
    assert_eq!(p.buffer_order(), 2240);
    assert_eq!(p.message_bytes(), 40_140_800);
}

#[test]
fn ptrans_message_count_and_bytes_follow_the_formula() {
    let p = Ptrans::default();
    let t = p.trace().unwrap();
    // Per transpose lcm^2 - PQ/gcd = 72 * 72 - 432 / 6 exchanges of 2240^2 doubles, and a
    // 24-byte report whenever rank 0 is not at grid position (0, 0).
    let exchanges = 5 * (72 * 72 - 72);
    let reports = p.placements().iter().filter(|m| m[0] != 0).count() as u64;
    let (count, bytes) = sends(&t);
    assert_eq!(count, exchanges + reports);
    assert_eq!(bytes, exchanges * 2240 * 2240 * 8 + reports * 24);
    assert_eq!(exchanges, 5 * p.messages_per_transpose());
    // Per rank: 12 exchanges a transpose, 11 for the sixth of the positions that copy once.
    let mut per_rank = vec![0u64; 432];
    for op in &t.ops {
        if let TraceOp::Isend { .. } = op.op {
            per_rank[op.rank as usize] += 1;
        }
    }
    assert!(per_rank.iter().all(|&n| (55..=60).contains(&n)));
    assert_eq!(per_rank.iter().sum::<u64>(), exchanges);
    // Collectives: 4 before the transposes and 7 around each, every rank.
    let barriers = t.ops.iter().filter(|o| o.op == TraceOp::Barrier).count();
    assert_eq!(barriers, 432 * (4 + 5 * 7));
}

#[test]
fn ptrans_steps_pair_every_sender_with_its_receiver() {
    for (p, q) in [(18, 24), (4, 6), (3, 3), (2, 5), (1, 7)] {
        let pt = Ptrans {
            p,
            q,
            n: 1000,
            nb: 10,
            ..Ptrans::default()
        };
        let all: Vec<Vec<Step>> = (0..p * q).map(|i| pt.schedule(i / q, i % q)).collect();
        let mut local = 0;
        for s in 0..pt.steps() as usize {
            let mut hit = vec![0; (p * q) as usize];
            for (i, steps) in all.iter().enumerate() {
                match steps[s] {
                    Step::Local => local += 1,
                    Step::Swap { to, from } => {
                        let (me, to_i) = ((i as u32 / q, i as u32 % q), to.0 * q + to.1);
                        hit[to_i as usize] += 1;
                        match all[to_i as usize][s] {
                            Step::Swap { from: back, .. } => assert_eq!(back, me, "{p}x{q}"),
                            Step::Local => panic!("{p}x{q}: a swap with a copying process"),
                        }
                        assert_ne!(from, me);
                    }
                }
            }
            assert!(
                hit.iter().all(|&h| h <= 1),
                "{p}x{q}: step {s} is not a pairing"
            );
        }
        assert_eq!(
            local,
            p * q / pt.gcd() as u32,
            "{p}x{q}: one copy per gcd-th process"
        );
    }
}

#[test]
fn ptrans_resolves_and_replays_in_about_0_2_s_at_100_gbps() {
    let t = Ptrans::default().trace().unwrap();
    t.check("gen.trace").unwrap();
    // 5 transposes of 12 steps, each 40,140,800 B / 12.5 GB/s = 3.21 ms: 0.193 s.
    let secs = replay(&t);
    assert!((0.19..0.20).contains(&secs), "{secs} s");
}

#[test]
fn ptrans_small_grids_replay_to_the_end() {
    for ranks in [1, 2, 6, 12, 30] {
        let p = Ptrans {
            n: 640,
            nb: 16,
            ..Ptrans::with_ranks(ranks)
        };
        assert!(replay(&p.trace().unwrap()) > 0.0 || ranks == 1);
    }
}

#[test]
fn ptrans_is_deterministic_and_seeded() {
    let a = Ptrans::default().trace().unwrap().to_string();
    assert_eq!(a, Ptrans::default().trace().unwrap().to_string());
    let other = Ptrans {
        seed: 2,
        ..Ptrans::default()
    };
    assert_ne!(a, other.trace().unwrap().to_string());
    for map in Ptrans::default().placements() {
        let mut sorted = map.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            (0..432).collect::<Vec<_>>(),
            "a placement is a permutation"
        );
    }
}

#[test]
fn ptrans_refuses_what_a_trace_cannot_hold() {
    let big = Ptrans::with_ranks(4).trace().unwrap_err();
    assert!(big.contains("choose a smaller N"), "{big}");
    let none = Ptrans {
        reps: 0,
        ..Ptrans::default()
    };
    assert!(none.trace().is_err());
    assert!(
        Ptrans {
            nb: 0,
            ..Ptrans::default()
        }
        .check()
        .is_err()
    );
}

#[test]
fn inception_has_the_parameters_of_the_keras_model() {
    assert_eq!(inception::trainable_params(), 23_817_352);
    assert_eq!(inception::state_params(), 23_851_784);
    // The table of docs/workloads.md: trainable parameters per layer group.
    let groups = [
        ("stem", 172_272),
        ("mixed0", 255_440),
        ("mixed1", 276_976),
        ("mixed2", 284_656),
        ("mixed3", 1_152_640),
        ("mixed4", 1_295_872),
        ("mixed5", 1_689_280),
        ("mixed6", 1_689_280),
        ("mixed7", 2_140_032),
        ("mixed8", 1_697_024),
        ("mixed9", 5_041_344),
        ("mixed10", 6_073_536),
        ("predictions", 2_049_000),
    ];
    let tensors = inception::tensors();
    for (name, params) in groups {
        let got: u64 = tensors
            .iter()
            .filter(|t| t.group == name && t.trainable)
            .map(|t| t.params)
            .sum();
        assert_eq!(got, params, "{name}");
    }
    assert_eq!(groups.iter().map(|g| g.1).sum::<u64>(), 23_817_352);
}

#[test]
fn buckets_close_at_their_limit_and_reduce_last_defined_first() {
    let m = MIB;
    let sizes = [m / 2, m / 2, m / 4, 20 * m, 10 * m, 3 * m, 2 * m];
    // Definition order: [0.5 + 0.5] closes at 1 MiB; [0.25 + 20 + 10] at 25 MiB; [3 + 2] rest.
    let b = inception::buckets(&sizes, &[m, 25 * m]);
    assert_eq!(b, [5 * m, m / 4 + 30 * m, m]);
    assert_eq!(inception::buckets(&[], &[m]), Vec::<u64>::new());
}

#[test]
fn inception_allreduces_sum_to_the_gradient_bytes_every_step() {
    let inc = Inception::default();
    let t = inc.trace().unwrap();
    t.check("gen.trace").unwrap();
    let mut steps = Vec::new();
    for op in t.ops.iter().filter(|o| o.rank == 511) {
        match op.op {
            TraceOp::Compute { ps } => {
                assert_eq!(ps, 250_000_000_000, "32 images at 128 images/s");
                steps.push(0u64);
            }
            TraceOp::Allreduce { bytes } => *steps.last_mut().unwrap() += bytes,
            TraceOp::Bcast { root: 0, bytes } => assert_eq!(bytes, 23_851_784 * 4),
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(steps, [23_817_352 * 4; 3]);
    let buckets = inc.bucket_sizes();
    assert_eq!(buckets.len(), 5);
    // Reduction order: the last-defined bucket (the remainder) first, the 1 MiB one last.
    let last = *buckets.last().unwrap();
    assert!((MIB..25 * MIB).contains(&last), "{last}");
    assert!(buckets[1..4].iter().all(|&b| b >= 25 * MIB));
    // Every rank lists the same operations.
    let rank0: Vec<TraceOp> = t.ops.iter().filter(|o| o.rank == 0).map(|o| o.op).collect();
    let rank7: Vec<TraceOp> = t.ops.iter().filter(|o| o.rank == 7).map(|o| o.op).collect();
    assert_eq!(rank0, rank7);
}

#[test]
fn inception_replays_to_the_end_and_is_deterministic() {
    let inc = Inception {
        ranks: 16,
        steps: 2,
        ..Inception::default()
    };
    let t = inc.trace().unwrap();
    assert_eq!(t.to_string(), inc.trace().unwrap().to_string());
    let secs = replay(&t);
    // Two steps of 250 ms compute, plus the broadcast and the allreduces.
    assert!((0.5..0.6).contains(&secs), "{secs} s");
    assert!(
        Inception {
            images_per_s: 0,
            ..inc
        }
        .trace()
        .is_err()
    );
}
