//! Replay against the fake network: execution times worked out by hand, the message counts of
//! the collectives' algorithms, causality, deadlock, matching and round trips of the writer.

use super::fake_network::{Log, Net, Outcome};
use super::*;

use crate::config::TimeBase;

/// 64-byte flits at 100 Gb/s: one cycle is 5.12 ns.
const TIME: TimeBase = TimeBase {
    flit_bytes: 64,
    link_gbps: 100.0,
};

const NET: Net = Net {
    latency: 100,
    mtu: 64,
};

/// Flits of a message of `bytes`.
fn flits(bytes: u64) -> u64 {
    bytes.div_ceil(64).max(1)
}

fn run(program: &Program, mapping: &Mapping, net: Net) -> (Outcome, Log, Vec<Replayer>) {
    let mut reps = Replayer::build_all(program, mapping, &TIME).unwrap();
    let (outcome, log) = net.run(&mut reps, program.messages().len());
    (outcome, log, reps)
}

fn run_linear(text: &str, net: Net) -> (Program, Outcome, Log, Vec<Replayer>) {
    let program = load(text, "t.trace").unwrap();
    let mapping = Mapping::linear(program.ranks(), program.ranks()).unwrap();
    let (o, log, reps) = run(&program, &mapping, net);
    (program, o, log, reps)
}

fn finishes(reps: &[Replayer]) -> Vec<(u32, Option<u64>)> {
    let mut v: Vec<_> = reps.iter().flat_map(|r| r.rank_finishes()).collect();
    v.sort();
    v
}

#[test]
fn ping_pong_takes_the_time_worked_out_by_hand() {
    let round = "0 compute 512ns\n0 send 1 1000\n1 recv 0\n1 send 0 1000\n0 recv 1\n";
    let text = format!("ranks 2\n{}", round.repeat(3));
    let (_, outcome, _, reps) = run_linear(&text, NET);
    // 512 ns is 100 cycles; 1000 B take 16 cycles to leave and arrive 100 later: each way 116.
    // Round i (from 0): rank 0 sends at 332i + 100, rank 1 receives and answers at 332i + 216,
    // rank 0 receives at 332(i + 1).
    assert_eq!(outcome, Outcome::Finished(3 * 332));
    assert_eq!(finishes(&reps), [(0, Some(996)), (1, Some(880))]);
}

#[test]
fn a_nodes_messages_leave_one_after_another() {
    let text = "ranks 3\n0 isend 1 6400 req=1\n0 isend 2 6400 req=2\n0 waitall\n\
                1 recv 0\n2 recv 0\n";
    let net = Net {
        latency: 10,
        mtu: 64,
    };
    let (_, outcome, log, reps) = run_linear(text, net);
    assert_eq!(outcome, Outcome::Finished(210));
    assert_eq!(
        finishes(&reps),
        [(0, Some(0)), (1, Some(110)), (2, Some(210))]
    );
    assert_eq!(log.delivered, [Some(110), Some(210)]);
}

#[test]
fn compute_times_round_to_the_nearest_cycle() {
    // 1 us is 195.3 cycles, 2.56 ns half a cycle (rounds away from zero: 1).
    let (_, outcome, _, _) = run_linear("ranks 1\n0 compute 1us\n0 compute 2.56ns\n", NET);
    assert_eq!(outcome, Outcome::Finished(196));
}

/// Time of `n` exchange steps of `chunk` bytes, each waiting for the one before.
fn steps(n: u64, chunk: u64) -> Option<u64> {
    Some(n * (flits(chunk) + NET.latency))
}

/// Message count, byte total and execution time of a collective on `p` ranks, one per node.
fn check_collective(op: &str, p: u32, messages: usize, bytes: u64, time: Option<u64>) {
    let text = format!(
        "ranks {p}\n{}",
        (0..p).map(|r| format!("{r} {op}\n")).collect::<String>()
    );
    let (program, outcome, log, _) = run_linear(&text, NET);
    assert_eq!(program.messages().len(), messages, "{op} on {p} ranks");
    assert_eq!(program.total_bytes(), bytes, "{op} on {p} ranks");
    assert!(log.delivered.iter().all(Option::is_some));
    if let Some(t) = time {
        assert_eq!(outcome, Outcome::Finished(t), "{op} on {p} ranks");
    } else {
        assert!(matches!(outcome, Outcome::Finished(_)));
    }
}

#[test]
fn ring_allreduce_sends_2p_p_minus_1_chunks() {
    for p in [2u32, 3, 5, 8] {
        let n = 2 * p as usize * (p as usize - 1);
        let chunk = 1000u64.div_ceil(p.into());
        let t = steps(2 * (u64::from(p) - 1), chunk);
        check_collective("allreduce 1000", p, n, n as u64 * chunk, t);
    }
    // 10 B over 4 ranks: chunks of 3 B.
    check_collective("allreduce 10", 4, 24, 72, steps(6, 3));
}

#[test]
fn pairwise_alltoall_sends_p_p_minus_1_messages() {
    for p in [2u32, 3, 6] {
        let n = p as usize * (p as usize - 1);
        check_collective("alltoall 640", p, n, 640 * n as u64, None);
    }
}

#[test]
fn the_other_collectives_send_what_their_algorithms_do() {
    check_collective("allgather 64", 5, 20, 20 * 64, steps(4, 64));
    // Binomial tree, p - 1 messages. 4096 B leave in 64 cycles and arrive 100 later. On 7
    // ranks (relative numbering) the root sends to 4, 2, 1 (arriving 164, 228, 292); 4 sends
    // to 6 and 5 (328, 392), 2 to 3 (392).
    check_collective("bcast 3 4096", 7, 6, 6 * 4096, Some(392));
    // On 8, 6 also sends to 7 (492).
    check_collective("bcast 0 4096", 8, 7, 7 * 4096, Some(492));
    // Dissemination: ceil(log2 p) rounds of p 1-byte messages.
    check_collective("barrier", 5, 15, 15, steps(3, 1));
    check_collective("barrier", 8, 24, 24, steps(3, 1));
}

#[test]
fn pairwise_alltoall_on_3_ranks_pairs_the_right_peers() {
    let text = "ranks 3\n0 alltoall 8\n1 alltoall 8\n2 alltoall 8\n";
    let program = load(text, "t").unwrap();
    let pairs: Vec<(u32, u32)> = program.messages().iter().map(|m| (m.src, m.dst)).collect();
    // Ids follow the file: rank 0's steps k = 1, 2, then rank 1's, then rank 2's.
    assert_eq!(pairs, [(0, 1), (0, 2), (1, 2), (1, 0), (2, 0), (2, 1)]);
}

/// A mixed trace: point-to-point with requests, tags and computes, and every collective.
fn mixed(p: u32) -> String {
    let mut t = format!("ranks {p}\n");
    for r in 0..p {
        let (right, left) = ((r + 1) % p, (r + p - 1) % p);
        t += &format!("{r} compute {}ns\n", 100 * (r + 1));
        t += &format!(
            "{r} irecv {left} req=1 tag=3\n{r} isend {right} {} req=2 tag=3\n",
            500 + r
        );
        t += &format!("{r} allreduce 4096\n{r} waitall\n{r} compute 1us\n");
        t += &format!("{r} alltoall 256\n{r} send {left} 64\n{r} recv {right}\n");
        t += &format!("{r} bcast 1 3000\n{r} barrier\n{r} allgather 100\n");
    }
    t
}

#[test]
fn a_rank_sends_nothing_before_what_it_waits_for_has_arrived() {
    let p = 7;
    let program = load(&mixed(p), "mixed").unwrap();
    for (nodes, seed, latency) in [(7, 0, 1), (3, 1, 40), (5, 2, 7), (7, 3, 300)] {
        let mapping = Mapping::random(p, nodes, seed).unwrap();
        let net = Net {
            latency,
            mtu: 1 + latency as u32 % 64,
        };
        let (outcome, log, _) = run(&program, &mapping, net);
        let Outcome::Finished(end) = outcome else {
            panic!("{outcome:?}")
        };
        for r in 0..p {
            // The earliest the rank may be at each action: computes add up, waits take the
            // delivery.
            let mut clock = 0;
            for a in program.actions(r) {
                match a.op {
                    Op::Compute { ps } => {
                        clock += (ps as f64 / 1000.0 / TIME.cycle_ns()).round() as u64
                    }
                    Op::Send { msg } => {
                        let (posted, post) = log.posted[msg as usize].unwrap();
                        assert_eq!(
                            posted, clock,
                            "rank {r}, line {}: posted when ready",
                            a.line
                        );
                        assert_eq!(post.src_rank, r);
                    }
                    Op::Wait { slot } => {
                        let msg = program.received(r)[slot as usize];
                        clock = clock.max(log.delivered[msg as usize].unwrap());
                    }
                }
            }
            assert!(clock <= end);
        }
    }
}

#[test]
fn receive_indices_number_each_nodes_receives_once() {
    let p = 7;
    let program = load(&mixed(p), "mixed").unwrap();
    let mapping = Mapping::random(p, 3, 9).unwrap();
    let (outcome, log, reps) = run(&program, &mapping, NET);
    assert!(matches!(outcome, Outcome::Finished(_)));
    for (node, rep) in reps.iter().enumerate() {
        let mut seen = vec![false; rep.receives()];
        for (_, post) in log.posted.iter().flatten() {
            if post.dst_node as usize == node {
                assert_eq!(mapping.node_of(post.dst_rank), post.dst_node);
                assert!(!std::mem::replace(&mut seen[post.dst_index as usize], true));
            }
        }
        assert!(seen.iter().all(|&s| s), "node {node}");
    }
}

#[test]
fn a_deadlocked_trace_is_refused_at_load_and_stalls_the_network() {
    let text = "ranks 3\n0 recv 1\n0 send 1 8\n1 recv 0\n1 send 0 8\n2 compute 1us\n";
    let e = load(text, "dead.trace").unwrap_err();
    let at: Vec<&str> = e.0.iter().map(|e| e.at.as_str()).collect();
    assert_eq!(at, ["dead.trace:2", "dead.trace:4"]);
    assert!(
        e.first().message.starts_with(
            "deadlock: rank 0 waits forever for the message from rank 1 sent at line 5"
        )
    );
    // Unchecked, the network sees no progress and the replayers say who waits on what.
    let program = Program::build(&parse(text, "dead.trace").unwrap(), "dead.trace").unwrap();
    let (outcome, _, reps) = run(&program, &Mapping::linear(3, 3).unwrap(), NET);
    let Outcome::Deadlock(blocked) = outcome else {
        panic!("{outcome:?}")
    };
    let text: Vec<String> = blocked.iter().map(|b| b.to_string()).collect();
    assert_eq!(
        text,
        [
            "rank 0 waits at line 2 for message 1 from rank 1",
            "rank 1 waits at line 4 for message 0 from rank 0",
        ]
    );
    assert_eq!(finishes(&reps), [(0, None), (1, None), (2, Some(195))]);
}

#[test]
fn sends_match_receives_in_posting_order_per_source_and_tag() {
    let text = "ranks 2\n0 send 1 100 tag=5\n0 send 1 200 tag=5\n0 send 1 300 tag=6\n\
                1 recv 0 tag=6\n1 recv 0 tag=5\n1 irecv 0 req=4 tag=5\n1 wait 4\n";
    let program = load(text, "t").unwrap();
    let m: Vec<(u64, u32, u32)> = program
        .messages()
        .iter()
        .map(|m| (m.bytes, m.slot, m.recv_line))
        .collect();
    assert_eq!(m, [(100, 1, 6), (200, 2, 7), (300, 0, 5)]);
    assert_eq!(program.received(1), [2, 0, 1]);
}

fn errors(text: &str) -> Vec<String> {
    match load(text, "t.trace") {
        Ok(_) => panic!("loaded: {text}"),
        Err(e) => e.0.iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn a_second_ranks_line_is_named_as_such() {
    let e = errors("ranks 2\nranks 2\n0 barrier\n1 barrier\n");
    assert_eq!(
        e,
        ["t.trace:2: `ranks`: `ranks` is given twice: a trace has one `ranks N` line, its first"]
    );
}

#[test]
fn matching_errors_name_their_lines() {
    let e = errors("ranks 2\n0 send 1 8 tag=1\n1 recv 0 tag=2\n");
    assert_eq!(e.len(), 2);
    assert!(
        e[0].starts_with("t.trace:2: send from rank 0 to rank 1 (tag 1"),
        "{e:?}"
    );
    assert!(
        e[1].starts_with("t.trace:3: receive at rank 1 from rank 0 (tag 2)"),
        "{e:?}"
    );
    let e = errors("ranks 2\n0 send 1 8\n0 send 1 8\n1 recv 0\n");
    assert_eq!(e.len(), 1);
    assert!(
        e[0].starts_with("t.trace:3: send from rank 0 to rank 1"),
        "the second send: {e:?}"
    );
}

#[test]
fn request_errors_name_their_lines() {
    let e = errors("ranks 2\n0 isend 1 8 req=1\n0 isend 1 8 req=1\n0 wait 1\n1 recv 0\n1 recv 0\n");
    assert_eq!(
        e,
        ["t.trace:3: `req=1`: request 1 is still pending from line 2"]
    );
    let e = errors("ranks 2\n0 wait 3\n");
    assert_eq!(e, ["t.trace:2: `3`: rank 0 has no pending request 3"]);
    let e = errors("ranks 2\n0 isend 1 8 req=1\n1 irecv 0 req=2\n1 wait 2\n");
    assert_eq!(e, ["t.trace:2: `req=1`: rank 0 never waits for request 1"]);
}

#[test]
fn collectives_must_agree_across_ranks() {
    let e = errors("ranks 3\n0 barrier\n1 barrier\n2 barrier\n0 allreduce 8\n1 allreduce 16\n");
    assert_eq!(
        e,
        [
            "t.trace:5: `allreduce 8`: rank 0's collective #2 is missing on rank 2, which lists 1",
            "t.trace:6: `allreduce 16`: rank 1's collective #2 differs from rank 0's, \
             `allreduce 8` at line 5; every rank lists the same collectives in the same order",
        ]
    );
    // One line's errors in rank order, 2 before 10.
    let e = errors("ranks 12\n0 barrier\n");
    let ranks: Vec<&str> = e
        .iter()
        .map(|m| {
            m.split("missing on rank ")
                .nth(1)
                .unwrap_or("")
                .split(',')
                .next()
                .unwrap_or("")
        })
        .collect();
    assert_eq!(
        ranks,
        ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"]
    );
    let e = errors("ranks 2\n0 barrier\n1 barrier\n1 bcast 1 8\n");
    assert_eq!(
        e,
        ["t.trace:4: `bcast 1 8`: rank 1 lists 2 collectives, rank 0 only 1"]
    );
}

#[test]
fn the_writer_round_trips() {
    let trace = parse(&mixed(4), "mixed").unwrap();
    let text = trace.to_string();
    let again = parse(&text, "written").unwrap();
    assert_eq!((again.ranks, &again.ops), (trace.ranks, &trace.ops));
    assert_eq!(again.to_string(), text, "the written form is canonical");
    // A trace built in memory names its operations by their written lines.
    let mut built = Trace::new(2);
    built.push(0, TraceOp::Compute { ps: 1_500_000 });
    built.push(
        0,
        TraceOp::Send {
            dst: 1,
            bytes: 8,
            tag: 2,
        },
    );
    built.push(1, TraceOp::Compute { ps: 2_500 });
    built.push(1, TraceOp::Recv { src: 0, tag: 3 });
    assert_eq!(
        built.to_string(),
        "ranks 2\n0 compute 1500ns\n0 send 1 8 tag=2\n1 compute 2500ps\n1 recv 0 tag=3\n"
    );
    let e = Program::build(&built, "built").unwrap_err();
    let at: Vec<&str> = e.0.iter().map(|e| e.at.as_str()).collect();
    assert_eq!(at, ["built:3", "built:5"]);
}

#[test]
fn the_example_of_the_format_page_loads_and_replays() {
    let page = include_str!("../../docs/traces.md");
    let start = page.find("```\nranks 2\n").unwrap() + 4;
    let example = &page[start..start + page[start..].find("```").unwrap()];
    let (program, outcome, _, _) = run_linear(example, NET);
    // The ping-pong pair, then 2 allreduce chunks of 512 KB each way and 2 barrier messages.
    assert_eq!(program.messages().len(), 2 + 4 + 2);
    assert_eq!(program.total_bytes(), 2 * 4096 + 4 * (1 << 19) + 2);
    assert!(matches!(outcome, Outcome::Finished(_)));
}

#[test]
fn a_trace_built_in_memory_is_checked_like_a_parsed_one() {
    let mut t = Trace::new(2);
    t.push(
        0,
        TraceOp::Send {
            dst: 2,
            bytes: 8,
            tag: 0,
        },
    );
    t.push(1, TraceOp::Allreduce { bytes: 0 });
    t.push(2, TraceOp::Barrier);
    let e = Program::build(&t, "built").unwrap_err();
    let text: Vec<String> = e.0.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        text,
        [
            "built:2: `0 send 2 8`: destination 2: no such rank (the trace has ranks 0 to 1)",
            "built:3: `1 allreduce 0`: size 0 is not 1 to 4294967295 bytes",
            "built:4: `2 barrier`: rank 2: no such rank (the trace has ranks 0 to 1)",
        ]
    );
    assert!(Program::build(&Trace::new(0), "built").is_err());
}

#[test]
fn a_message_is_delivered_when_its_last_flit_is_in() {
    let text = "ranks 2\n0 send 1 10000\n0 send 1 0\n1 recv 0\n1 recv 0\n";
    let program = load(text, "t").unwrap();
    let mut reps = Replayer::build_all(&program, &Mapping::linear(2, 2).unwrap(), &TIME).unwrap();
    let mut posts = Vec::new();
    reps[0].advance(0, |p| posts.push(*p));
    let sizes: Vec<(u32, u64, u32)> = posts
        .iter()
        .map(|p| (p.dst_index, p.bytes, p.flits))
        .collect();
    assert_eq!(
        sizes,
        [(0, 10000, 157), (1, 0, 1)],
        "a 0-byte message takes a flit"
    );
    assert_eq!(reps[0].finish_cycle(), Some(0), "sends are eager");
    reps[1].advance(0, |_| panic!("rank 1 only receives"));
    assert_eq!(reps[1].next_wake(), None);
    // The packets of the first message, its last (57 flits) first: the message is in with
    // the last to arrive.
    assert!(!reps[1].flits_arrived(0, 57, 80));
    assert_eq!(reps[1].next_wake(), None);
    assert!(reps[1].flits_arrived(0, 100, 90));
    assert_eq!(reps[1].next_wake(), Some(90));
    reps[1].advance(90, |_| {});
    assert_eq!(reps[1].blocked().map(|b| b.msg).collect::<Vec<_>>(), [1]);
    assert!(reps[1].flits_arrived(1, 1, 95));
    reps[1].advance(95, |_| {});
    assert_eq!(reps[1].rank_finishes().collect::<Vec<_>>(), [(1, Some(95))]);
    assert_eq!(execution_time(&reps), Some(95));
}

#[test]
fn five_hundred_and_twelve_ranks_run_on_432_nodes() {
    let p = 512;
    let text: String = format!("ranks {p}\n")
        + &(0..p)
            .map(|r| format!("{r} compute {}ns\n{r} allreduce 64KB\n{r} barrier\n", r % 7))
            .collect::<String>();
    let program = load(&text, "t").unwrap();
    assert_eq!(program.messages().len(), 2 * 512 * 511 + 512 * 9);
    let mapping = Mapping::random(p, 432, 2026).unwrap();
    let (outcome, log, reps) = run(&program, &mapping, NET);
    let Outcome::Finished(end) = outcome else {
        panic!("{outcome:?}")
    };
    // The ring's 1022 steps each wait at least a 2-flit chunk (128 B) and the latency; ranks
    // sharing a node also share its link.
    assert!(end >= 1022 * (2 + 100) + 9 * 101, "{end}");
    assert!(log.delivered.iter().all(Option::is_some));
    let busy = reps
        .iter()
        .filter(|r| r.rank_finishes().count() == 2)
        .count();
    assert_eq!(busy, 80, "512 - 432 nodes run two ranks");
}

#[test]
fn a_trace_past_the_message_limit_is_refused_at_its_line_before_it_is_built() {
    // 8,193 ranks each in an alltoall: 8,193 x 8,192 messages, past 2^26 at the last rank's
    // line. Counted without building any: the refusal costs no memory.
    let p = 8193;
    let mut t = Trace::new(p);
    for r in 0..p {
        t.push(r, TraceOp::Alltoall { bytes: 1 });
    }
    assert!(u64::from(p) * u64::from(p - 1) > program::MAX_MESSAGES);
    let e = Program::build(&t, "big").unwrap_err();
    let text: Vec<String> = e.0.iter().map(|e| e.to_string()).collect();
    assert_eq!(text.len(), 1, "{text:?}");
    assert!(
        text[0].starts_with(&format!("big:{}: ", p + 1))
            && text[0].ends_with("more than 67108864 messages (collectives expanded)"),
        "{text:?}"
    );
}

#[test]
fn invisible_characters_are_written_out_in_errors() {
    let e = errors("ranks 2\n0 send 1 4\0KB\n1 recv 0\n");
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].starts_with("t.trace:2: `4\\u{0}KB`: "), "{e:?}");
    assert!(!e[0].contains('\0'), "{e:?}");
    let e = errors("\u{feff}ranks 2\n");
    assert!(e[0].starts_with("t.trace:1: `\\u{feff}ranks`: "), "{e:?}");
}

/// 100,000 requests pending at once on each of two ranks, waited for one by one in reverse
/// order on one and by `waitall` on the other: loads in about 0.1 s (a scan of every pending
/// request per wait took 23 s). The 20 s bound is a generous guard against the quadratic
/// load, not a measurement.
#[test]
fn a_hundred_thousand_pending_requests_load_in_near_linear_time() {
    let n = 100_000u32;
    let mut text = String::from("ranks 2\n");
    for i in 0..n {
        text.push_str(&format!("0 isend 1 8 req={i}\n"));
    }
    for i in (0..n).rev() {
        text.push_str(&format!("0 wait {i}\n"));
    }
    for i in 0..n {
        text.push_str(&format!("1 irecv 0 req={i}\n"));
    }
    text.push_str("1 waitall\n");
    let start = std::time::Instant::now();
    let program = load(&text, "t.trace").unwrap();
    let took = start.elapsed();
    assert!(took.as_secs() < 20, "{took:?}");
    assert_eq!(program.messages().len(), n as usize);
    let waits: Vec<u32> = program
        .actions(1)
        .iter()
        .map(|a| match a.op {
            Op::Wait { slot } => slot,
            op => panic!("{op:?}"),
        })
        .collect();
    assert_eq!(
        waits,
        (0..n).collect::<Vec<_>>(),
        "waitall in posting order"
    );
    assert_eq!(
        program.actions(0).len(),
        n as usize,
        "sends; their waits cost nothing"
    );
}
