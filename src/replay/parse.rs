//! Reading the text format of `docs/traces.md` into a [`Trace`]: every line checked on its own
//! (rank in range, arguments, units, limits), every error placed at `file:line` with its token.
//! What needs the whole trace (matching, collectives, requests) is checked by
//! [`Program::build`](super::Program::build).

use super::error::{TraceError, TraceErrors, keep};
use super::trace::{MAX_BYTES, MAX_COMPUTE_PS, MAX_OPS, MAX_RANKS, RankOp, Trace, TraceOp};
use crate::config::TimeBase;
use crate::config::units::nanoseconds;

/// Reads a trace; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Trace, TraceErrors> {
    parse_most(text, file, MAX_OPS)
}

/// [`parse`] refusing a trace of more than `most_ops` operations at the line past them.
pub(super) fn parse_most(text: &str, file: &str, most_ops: usize) -> Result<Trace, TraceErrors> {
    let mut errors = Vec::new();
    // Errors past the first reported are only counted: a file of bad lines costs no memory.
    let mut unkept = 0usize;
    let mut trace: Option<Trace> = None;
    let mut last_line = 0u32;
    for (i, raw) in text.lines().enumerate() {
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        last_line = line;
        let body = raw.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let err = |token: Option<&str>, msg: String| TraceError::at_line(file, line, token, msg);
        let mut tokens = body.split_whitespace();
        let first = tokens.next().unwrap_or("");
        let Some(t) = trace.as_mut() else {
            match header(first, tokens.collect()) {
                Ok(ranks) => {
                    trace = Some(Trace {
                        ranks,
                        ops: Vec::new(),
                        lines: Vec::new(),
                    })
                }
                Err((token, msg)) => {
                    errors.push(err(token, msg));
                    return Err(TraceErrors(errors));
                }
            }
            continue;
        };
        if first == "ranks" {
            keep(
                &mut errors,
                &mut unkept,
                err(
                    Some(first),
                    "`ranks` is given twice: a trace has one `ranks N` line, its first".into(),
                ),
            );
            continue;
        }
        if t.ops.len() == most_ops {
            keep(
                &mut errors,
                &mut unkept,
                err(
                    None,
                    format!("more than {most_ops} operations: a trace has at most {most_ops}"),
                ),
            );
            return Err(TraceErrors::capped_beyond(errors, unkept));
        }
        match operation(first, tokens.collect(), t.ranks) {
            Ok(op) => {
                t.ops.push(op);
                t.lines.push(line);
            }
            Err((token, msg)) => keep(&mut errors, &mut unkept, err(token, msg)),
        }
    }
    let Some(trace) = trace else {
        return Err(TraceError::at_line(
            file,
            last_line.max(1),
            None,
            "the trace has no `ranks N` line; it must open with one",
        )
        .into());
    };
    if errors.is_empty() {
        Ok(trace)
    } else {
        Err(TraceErrors::capped_beyond(errors, unkept))
    }
}

/// A line's error: the token to blame (if any) and the message.
type LineError<'a> = (Option<&'a str>, String);

fn header<'a>(first: &'a str, args: Vec<&'a str>) -> Result<u32, LineError<'a>> {
    if first != "ranks" {
        return Err((
            Some(first),
            "a trace opens with `ranks N` (the number of ranks)".into(),
        ));
    }
    let [n] = args[..] else {
        return Err((None, "`ranks` takes one number".into()));
    };
    let n = number(n, "number of ranks")?;
    if n == 0 || n > MAX_RANKS {
        return Err((Some(args[0]), format!("ranks must be 1 to {MAX_RANKS}")));
    }
    Ok(n)
}

/// A decimal `u32`: digits only, no sign.
fn number<'a>(token: &'a str, what: &str) -> Result<u32, LineError<'a>> {
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
        return Err((Some(token), format!("{what}: expected a whole number")));
    }
    token
        .parse()
        .map_err(|_| (Some(token), format!("{what}: beyond 2^32 - 1")))
}

fn rank_arg<'a>(token: &'a str, ranks: u32, what: &str) -> Result<u32, LineError<'a>> {
    let r = number(token, what)?;
    if r >= ranks {
        return Err((
            Some(token),
            format!(
                "{what}: no such rank (the trace has ranks 0 to {})",
                ranks - 1
            ),
        ));
    }
    Ok(r)
}

/// A size: whole bytes, plain (`4096`) or with a unit (`4KB`, `64B`).
fn bytes(token: &str) -> Result<u64, LineError<'_>> {
    let b = if token.bytes().all(|b| b.is_ascii_digit()) && !token.is_empty() {
        token.parse::<u64>().unwrap_or(u64::MAX)
    } else {
        TimeBase::bytes(token).map_err(|e| (Some(token), format!("size: {e}")))?
    };
    if b > MAX_BYTES {
        return Err((Some(token), format!("size beyond {MAX_BYTES} bytes")));
    }
    Ok(b)
}

/// A time with its unit (`1.5us`, `300ns`), in whole picoseconds.
fn time(token: &str) -> Result<u64, LineError<'_>> {
    let ns = nanoseconds(token).map_err(|e| (Some(token), format!("time: {e}")))?;
    let ps = (ns * 1000.0).round();
    if ps > MAX_COMPUTE_PS as f64 {
        return Err((Some(token), "time beyond 1000 s".into()));
    }
    Ok(ps as u64)
}

/// The positional arguments and the `key=value` options (`tag`, `req`) of an operation.
struct Args<'a> {
    positional: Vec<&'a str>,
    tag: Option<u32>,
    req: Option<u32>,
}

fn split_args<'a>(args: Vec<&'a str>) -> Result<Args<'a>, LineError<'a>> {
    let mut a = Args {
        positional: Vec::new(),
        tag: None,
        req: None,
    };
    for token in args {
        let Some((key, value)) = token.split_once('=') else {
            if a.tag.is_some() || a.req.is_some() {
                return Err((Some(token), "positional argument after an option".into()));
            }
            a.positional.push(token);
            continue;
        };
        let slot = match key {
            "tag" => &mut a.tag,
            "req" => &mut a.req,
            _ => return Err((Some(token), format!("unknown option `{key}` (tag, req)"))),
        };
        if slot.is_some() {
            return Err((Some(token), format!("`{key}` given twice")));
        }
        *slot = Some(number(value, key).map_err(|(_, m)| (Some(token), m))?);
    }
    Ok(a)
}

fn operation<'a>(first: &'a str, args: Vec<&'a str>, ranks: u32) -> Result<RankOp, LineError<'a>> {
    let rank = rank_arg(first, ranks, "rank")?;
    let Some((&name, rest)) = args.split_first() else {
        return Err((Some(first), "an operation follows the rank".into()));
    };
    let a = split_args(rest.to_vec())?;
    let (takes_tag, takes_req, arity) = match name {
        "compute" => (false, false, 1),
        "send" => (true, false, 2),
        "recv" => (true, false, 1),
        "isend" => (true, true, 2),
        "irecv" => (true, true, 1),
        "wait" => (false, false, 1),
        "allreduce" | "alltoall" | "allgather" => (false, false, 1),
        "bcast" => (false, false, 2),
        "waitall" | "barrier" => (false, false, 0),
        _ => {
            return Err((
                Some(name),
                "unknown operation (compute, send, recv, isend, irecv, wait, waitall, \
                 allreduce, alltoall, bcast, barrier, allgather)"
                    .into(),
            ));
        }
    };
    if a.positional.len() != arity {
        return Err((
            Some(name),
            format!("takes {arity} argument(s), got {}", a.positional.len()),
        ));
    }
    if a.tag.is_some() && !takes_tag {
        return Err((Some(name), "takes no `tag=`".into()));
    }
    if a.req.is_some() && !takes_req {
        return Err((Some(name), "takes no `req=`".into()));
    }
    let req = match (takes_req, a.req) {
        (true, None) => return Err((Some(name), "needs `req=R`".into())),
        (_, r) => r.unwrap_or(0),
    };
    let tag = a.tag.unwrap_or(0);
    let p = &a.positional;
    let op = match name {
        "compute" => TraceOp::Compute { ps: time(p[0])? },
        "send" => TraceOp::Send {
            dst: rank_arg(p[0], ranks, "destination")?,
            bytes: bytes(p[1])?,
            tag,
        },
        "recv" => TraceOp::Recv {
            src: rank_arg(p[0], ranks, "source")?,
            tag,
        },
        "isend" => TraceOp::Isend {
            dst: rank_arg(p[0], ranks, "destination")?,
            bytes: bytes(p[1])?,
            req,
            tag,
        },
        "irecv" => TraceOp::Irecv {
            src: rank_arg(p[0], ranks, "source")?,
            req,
            tag,
        },
        "wait" => TraceOp::Wait {
            req: number(p[0], "request")?,
        },
        "waitall" => TraceOp::Waitall,
        "barrier" => TraceOp::Barrier,
        "allreduce" => TraceOp::Allreduce {
            bytes: collective_bytes(p[0])?,
        },
        "alltoall" => TraceOp::Alltoall {
            bytes: collective_bytes(p[0])?,
        },
        "allgather" => TraceOp::Allgather {
            bytes: collective_bytes(p[0])?,
        },
        _ => TraceOp::Bcast {
            root: rank_arg(p[0], ranks, "root")?,
            bytes: collective_bytes(p[1])?,
        },
    };
    Ok(RankOp { rank, op })
}

/// A collective's size: at least one byte.
fn collective_bytes(token: &str) -> Result<u64, LineError<'_>> {
    let b = bytes(token)?;
    if b == 0 {
        return Err((Some(token), "a collective moves at least 1 byte".into()));
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_error(text: &str) -> String {
        parse(text, "t.trace").unwrap_err().first().to_string()
    }

    #[test]
    fn every_operation_reads() {
        let t = parse(
            "# a comment\nranks 3\n0 compute 1.5us # trailing\n0 send 1 4KB tag=7\n\
             1 recv 0 tag=7\n1 isend 2 100 req=4\n2 irecv 1 req=9 tag=0\n2 wait 9\n1 waitall\n\
             0 allreduce 64\n1 alltoall 8B\n2 bcast 1 1MB\n0 barrier\n0 allgather 3\n",
            "t.trace",
        )
        .unwrap();
        assert_eq!(t.ranks, 3);
        assert_eq!(t.lines[0], 3);
        let ops: Vec<TraceOp> = t.ops.iter().map(|o| o.op).collect();
        assert_eq!(
            ops,
            [
                TraceOp::Compute { ps: 1_500_000 },
                TraceOp::Send {
                    dst: 1,
                    bytes: 4096,
                    tag: 7
                },
                TraceOp::Recv { src: 0, tag: 7 },
                TraceOp::Isend {
                    dst: 2,
                    bytes: 100,
                    req: 4,
                    tag: 0
                },
                TraceOp::Irecv {
                    src: 1,
                    req: 9,
                    tag: 0
                },
                TraceOp::Wait { req: 9 },
                TraceOp::Waitall,
                TraceOp::Allreduce { bytes: 64 },
                TraceOp::Alltoall { bytes: 8 },
                TraceOp::Bcast {
                    root: 1,
                    bytes: 1 << 20
                },
                TraceOp::Barrier,
                TraceOp::Allgather { bytes: 3 },
            ]
        );
    }

    #[test]
    fn errors_name_file_line_and_token() {
        assert_eq!(
            first_error("ranks 2\n0 send 2 8\n"),
            "t.trace:2: `2`: destination: no such rank (the trace has ranks 0 to 1)"
        );
        assert_eq!(
            first_error("ranks 2\n\n0 compute 30\n"),
            "t.trace:3: `30`: time: `30` has no unit; write a time such as `30ns`, `5us` or `3ms`"
        );
        assert!(first_error("ranks 2\n0 isend 1 8\n").starts_with("t.trace:2: `isend`: needs"));
        assert!(first_error("ranks 2\n0 send 1 8 tag=1 tag=2\n").starts_with("t.trace:2: `tag=2`"));
        assert!(first_error("ranks 2\n0 fly 1\n").starts_with("t.trace:2: `fly`: unknown"));
        assert!(first_error("ranks 2\n0 send 1 5GB\n").starts_with("t.trace:2: `5GB`"));
        assert!(first_error("ranks 2\n0 send 1 4294967296\n").contains("beyond"));
        assert!(first_error("ranks 2\n0 allreduce 0\n").contains("at least 1 byte"));
        assert!(first_error("ranks 2\n-1 barrier\n").starts_with("t.trace:2: `-1`"));
        assert!(first_error("0 barrier\n").starts_with("t.trace:1: `0`: a trace opens"));
        assert!(first_error("ranks 0\n").starts_with("t.trace:1: `0`: ranks must be"));
        assert_eq!(
            first_error("# nothing\n\n"),
            "t.trace:2: the trace has no `ranks N` line; it must open with one"
        );
        assert_eq!(
            first_error(""),
            "t.trace:1: the trace has no `ranks N` line; it must open with one"
        );
    }

    #[test]
    fn every_bad_line_is_reported() {
        let e = parse("ranks 2\n0 bad\n1 barrier\n1 worse\n", "t").unwrap_err();
        let at: Vec<&str> = e.0.iter().map(|e| e.at.as_str()).collect();
        assert_eq!(at, ["t:2", "t:4"]);
    }
}
