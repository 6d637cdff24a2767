//! Random and mutated trace texts through loading: no panic, every error placed at
//! `file:line` within the text; and what loads also replays to the end on the fake network
//! (a trace that passes the load's deadlock check never stalls), every message delivered once.

use super::fake_network::{Net, Outcome};
use super::*;
use crate::config::TimeBase;
use proptest::prelude::*;

const FILE: &str = "t.trace";

/// Tokens of traces, on and beyond their limits.
const TOKENS: &[&str] = &[
    "ranks",
    "0",
    "1",
    "2",
    "3",
    "5",
    "-1",
    "+1",
    "99",
    "1048577",
    "4294967295",
    "4294967296",
    "compute",
    "send",
    "recv",
    "isend",
    "irecv",
    "wait",
    "waitall",
    "allreduce",
    "alltoall",
    "bcast",
    "barrier",
    "allgather",
    "1us",
    "1µs",
    "30",
    "0ns",
    "2.56ns",
    "1e30s",
    "nanms",
    "infs",
    "1e-9ps",
    "-3ns",
    "4KB",
    "0B",
    "1.5B",
    "5GB",
    "1e30MB",
    "1flit",
    "tag=1",
    "tag=",
    "tag=-1",
    "req=1",
    "req=2",
    "req=x",
    "foo=1",
    "=",
    "#",
    "é",
    "\t",
];

/// Checks the promise of a load: placed errors, or a program that replays to its end.
fn check(text: &str, nodes: u32, seed: u64) -> Result<(), TestCaseError> {
    let lines = text.lines().count().max(1) as u32;
    match load(text, FILE) {
        Err(e) => {
            prop_assert!(!e.0.is_empty());
            for err in &e.0 {
                let line = err
                    .at
                    .strip_prefix("t.trace:")
                    .and_then(|l| l.parse::<u32>().ok());
                prop_assert!(
                    line.is_some_and(|l| (1..=lines).contains(&l)),
                    "error not at a line of the text: {err}"
                );
            }
        }
        Ok(program) => {
            let mapping = Mapping::random(program.ranks(), nodes, seed).unwrap();
            let mut reps = Replayer::build_all(&program, &mapping, &TimeBase::default()).unwrap();
            let net = Net {
                latency: 1 + seed % 50,
                mtu: 1 + (seed >> 8) as u32 % 80,
            };
            let (outcome, log) = net.run(&mut reps, program.messages().len());
            prop_assert!(
                matches!(outcome, Outcome::Finished(_)),
                "{outcome:?}\n{text}"
            );
            prop_assert!(log.delivered.iter().all(Option::is_some));
        }
    }
    Ok(())
}

/// A round every rank takes part in.
#[derive(Clone, Debug)]
enum Round {
    /// Each rank sends to `r + shift`, receives from `r - shift`.
    Exchange {
        shift: u32,
        bytes: u64,
        blocking: bool,
        tag: u32,
    },
    Compute {
        ps: u64,
    },
    Collective(TraceOp),
}

fn round() -> impl Strategy<Value = Round> {
    prop_oneof![
        (0u32..8, 0u64..10_000, any::<bool>(), 0u32..3).prop_map(
            |(shift, bytes, blocking, tag)| {
                Round::Exchange {
                    shift,
                    bytes,
                    blocking,
                    tag,
                }
            }
        ),
        (0u64..5_000_000).prop_map(|ps| Round::Compute { ps }),
        prop_oneof![
            (1u64..5000).prop_map(|bytes| TraceOp::Allreduce { bytes }),
            (1u64..5000).prop_map(|bytes| TraceOp::Alltoall { bytes }),
            (1u64..5000).prop_map(|bytes| TraceOp::Allgather { bytes }),
            (0u32..8, 1u64..5000).prop_map(|(root, bytes)| TraceOp::Bcast { root, bytes }),
            Just(TraceOp::Barrier),
        ]
        .prop_map(Round::Collective),
    ]
}

/// A valid trace of `p` ranks taking `rounds` in turn.
fn build(p: u32, rounds: &[Round]) -> Trace {
    let mut t = Trace::new(p);
    for round in rounds {
        for r in 0..p {
            match *round {
                Round::Exchange {
                    shift,
                    bytes,
                    blocking,
                    tag,
                } => {
                    let (dst, src) = ((r + shift) % p, (r + p - shift % p) % p);
                    if blocking {
                        t.push(r, TraceOp::Send { dst, bytes, tag });
                        t.push(r, TraceOp::Recv { src, tag });
                    } else {
                        t.push(r, TraceOp::Irecv { src, req: 7, tag });
                        t.push(
                            r,
                            TraceOp::Isend {
                                dst,
                                bytes,
                                req: 8,
                                tag,
                            },
                        );
                        t.push(r, TraceOp::Waitall);
                    }
                }
                Round::Compute { ps } => t.push(
                    r,
                    TraceOp::Compute {
                        ps: ps * u64::from(r + 1),
                    },
                ),
                Round::Collective(TraceOp::Bcast { root, bytes }) => t.push(
                    r,
                    TraceOp::Bcast {
                        root: root % p,
                        bytes,
                    },
                ),
                Round::Collective(op) => t.push(r, op),
            }
        }
    }
    t
}

/// How a text is mutated.
#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    Token(usize, usize, usize),
}

fn mutate(text: &str, mutations: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for m in mutations {
        if lines.is_empty() {
            break;
        }
        let n = lines.len();
        match *m {
            Mutation::Delete(i) => {
                lines.remove(i % n);
            }
            Mutation::Duplicate(i) => lines.insert(i % n, lines[i % n].clone()),
            Mutation::Swap(i, j) => lines.swap(i % n, j % n),
            Mutation::Token(i, k, v) => {
                let mut tokens: Vec<&str> = lines[i % n].split(' ').collect();
                let len = tokens.len();
                tokens[k % len] = TOKENS[v % TOKENS.len()];
                lines[i % n] = tokens.join(" ");
            }
        }
    }
    lines.join("\n")
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Duplicate),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Mutation::Swap(i, j)),
        (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(i, k, v)| Mutation::Token(i, k, v)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn token_soup_never_panics(
        lines in prop::collection::vec(prop::collection::vec(0..TOKENS.len(), 0..6), 0..12),
        header in any::<bool>(),
    ) {
        let mut text = if header { "ranks 4\n".to_string() } else { String::new() };
        for l in &lines {
            let tokens: Vec<&str> = l.iter().map(|&i| TOKENS[i]).collect();
            text += &tokens.join(" ");
            text.push('\n');
        }
        check(&text, 3, 1)?;
    }

    #[test]
    fn valid_traces_load_replay_and_round_trip(
        p in 1u32..7,
        rounds in prop::collection::vec(round(), 0..8),
        nodes in 1u32..8,
        seed in any::<u64>(),
    ) {
        let trace = build(p, &rounds);
        let text = trace.to_string();
        let parsed = parse(&text, FILE).unwrap();
        prop_assert_eq!(&parsed.ops, &trace.ops);
        prop_assert!(load(&text, FILE).is_ok(), "{}", text);
        check(&text, nodes, seed)?;
    }

    #[test]
    fn mutated_traces_are_refused_in_place_or_replay(
        p in 1u32..6,
        rounds in prop::collection::vec(round(), 1..6),
        mutations in prop::collection::vec(mutation(), 1..4),
        nodes in 1u32..6,
        seed in any::<u64>(),
    ) {
        let text = mutate(&build(p, &rounds).to_string(), &mutations);
        check(&text, nodes, seed)?;
    }
}
