//! The size limits of a trace: operations, requests pending on a rank, and the errors kept of a
//! file of bad lines. Each refusal names the line past the limit.

use super::error::MAX_ERRORS;
use super::parse::parse_most;
use super::trace::{MAX_OPS, MAX_PENDING, RankOp, Trace, TraceOp};
use super::{Program, parse};

#[test]
fn a_trace_past_its_operations_is_refused_at_the_line_past_them() {
    assert_eq!(MAX_OPS, 1 << 26);
    let text = "ranks 2\n# three operations\n0 compute 1us\n\n1 compute 1us\n0 barrier\n";
    let e = parse_most(text, "t.txt", 2).expect_err("refused");
    assert_eq!(e.0.len(), 1, "{e}");
    assert_eq!(
        e.to_string(),
        "t.txt:6: more than 2 operations: a trace has at most 2"
    );
    assert_eq!(parse_most(text, "t.txt", 3).expect("loads").ops.len(), 3);
    // Errors before the limit are kept, the limit's last.
    let text = "ranks 2\n0 nosuch\n0 compute 1us\n1 compute 1us\n";
    let e = parse_most(text, "t.txt", 1).expect_err("refused");
    assert_eq!(e.0.len(), 2, "{e}");
    assert_eq!(e.0[1].at, "t.txt:4");
}

#[test]
fn a_trace_built_past_its_operations_is_refused_as_a_parsed_one_would_be() {
    let text = "ranks 2\n# three operations\n0 compute 1us\n\n1 compute 1us\n0 barrier\n";
    let parsed = parse_most(text, "t.txt", 3).expect("loads");
    let e = parsed.check_most("t.txt", 2).expect_err("refused");
    assert_eq!(
        e.to_string(),
        "t.txt:6: more than 2 operations: a trace has at most 2"
    );
    // Built in memory, the line past them is the written text's.
    let mut built = Trace::new(2);
    for r in [0, 1, 0] {
        built.push(r, TraceOp::Barrier);
    }
    let e = built.check_most("gen.trace", 2).expect_err("refused");
    assert_eq!(e.0[0].at, "gen.trace:4");
    built.check_most("gen.trace", 3).expect("within the limit");
}

#[test]
fn a_file_of_bad_lines_keeps_only_the_errors_reported() {
    let bad = 100_000;
    let text = "ranks 2\n".to_string() + &"0 nosuch\n".repeat(bad);
    let e = parse(&text, "t.txt").expect_err("refused");
    assert_eq!(e.0.len(), MAX_ERRORS);
    let last = &e.0[MAX_ERRORS - 1];
    assert_eq!(last.at, format!("t.txt:{}", MAX_ERRORS + 1));
    assert_eq!(
        last.message,
        format!("and {} more errors", bad - (MAX_ERRORS - 1))
    );
}

#[test]
fn a_rank_past_its_pending_requests_is_refused_at_the_post_past_them() {
    assert_eq!(MAX_PENDING, 1 << 21);
    let n = MAX_PENDING as u32 + 1;
    let mut t = Trace {
        ranks: 2,
        ops: Vec::with_capacity(n as usize),
        lines: Vec::new(),
    };
    // Rank 1 posts one receive too many from rank 0, each its own request.
    t.ops.extend((0..n).map(|req| RankOp {
        rank: 1,
        op: TraceOp::Irecv {
            src: 0,
            req,
            tag: 0,
        },
    }));
    let e = Program::build(&t, "t.txt").expect_err("refused");
    assert_eq!(e.0.len(), 1, "{e}");
    assert_eq!(
        e.to_string(),
        format!(
            "t.txt:{}: `req={}`: rank 1 already has 2097152 requests pending; a rank has at \
             most 2^21 pending at once",
            n + 1,
            n - 1
        )
    );
}

#[test]
fn a_map_file_of_bad_lines_keeps_only_the_errors_reported() {
    let bad = 100_000;
    let text = "0 0\n".to_string() + &"x\n".repeat(bad);
    let e = super::mapping::Mapping::from_file(&text, "m.txt", 2, 2).expect_err("refused");
    assert_eq!(e.0.len(), MAX_ERRORS);
    assert_eq!(e.0[MAX_ERRORS - 1].at, format!("m.txt:{}", MAX_ERRORS + 1));
    assert_eq!(
        e.0[MAX_ERRORS - 1].message,
        format!("and {} more errors", bad - (MAX_ERRORS - 1))
    );
}
