//! A trace resolved for replay: collectives expanded into point-to-point messages, every send
//! matched to its receive by MPI's non-overtaking rule, requests resolved, and each rank's
//! operations reduced to what timing depends on: compute, send, wait for a message.
//!
//! Matching is per (source, destination, tag) in posting order: the i-th send from `s` to `d`
//! with tag `t` is received by the i-th receive at `d` from `s` with tag `t`. Collectives'
//! messages are matched in their own space, per collective, so they never meet the trace's.

use super::collectives::{self, Step};
use super::error::{TraceError, TraceErrors};
use super::trace::{MAX_PENDING, Trace, TraceOp};
use std::collections::{BTreeMap, HashMap};

/// Most messages a program may have after collectives are expanded: 2^26.
pub const MAX_MESSAGES: u64 = 1 << 26;

/// What a rank does next, as timing sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Compute for this many picoseconds.
    Compute { ps: u64 },
    /// Hand message `msg` (a global id) to the node; sends are eager, so this never blocks.
    Send { msg: u32 },
    /// Wait until the message received in `slot` of this rank has been delivered.
    Wait { slot: u32 },
}

/// An operation and the trace line it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Action {
    /// Line in the trace (for a collective: the rank's line of it).
    pub line: u32,
    /// The operation.
    pub op: Op,
}

/// A matched message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// Sending rank.
    pub src: u32,
    /// Receiving rank.
    pub dst: u32,
    /// Size in bytes.
    pub bytes: u64,
    /// The receiving rank's slot: its receives numbered in posting order from 0.
    pub slot: u32,
    /// Line of the send.
    pub send_line: u32,
    /// Line of the receive.
    pub recv_line: u32,
}

/// A resolved trace: per rank its actions, and every message by global id (ids in file order of
/// the sends, collectives expanded in place).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    ranks: u32,
    actions: Vec<Action>,
    /// Rank `r`'s actions are `actions[starts[r]..starts[r + 1]]`.
    starts: Vec<u32>,
    messages: Vec<Message>,
    /// Rank `r`'s received message ids by slot are `received[slot_starts[r]..slot_starts[r+1]]`.
    received: Vec<u32>,
    slot_starts: Vec<u32>,
}

/// Matching key: source, destination, tag (bit 32 set: a collective's index).
type Key = (u32, u32, u64);

/// A request a rank has posted and not yet waited for.
#[derive(Clone, Copy)]
struct Pending {
    req: u32,
    line: u32,
    /// The receive's slot, or `None` for a send.
    slot: Option<u32>,
}

/// A rank's pending requests in posting order, found by number in O(log n): waits and
/// `waitall` cost time in proportion to the requests they complete, not to all pending.
#[derive(Default)]
struct PendingRequests {
    /// By posting sequence number.
    by_seq: BTreeMap<u64, Pending>,
    /// Request number to its posting sequence number.
    seq_of: HashMap<u32, u64>,
    next_seq: u64,
}

impl PendingRequests {
    /// The line that posted `req`, if it is pending.
    fn line_of(&self, req: u32) -> Option<u32> {
        self.seq_of.get(&req).map(|s| self.by_seq[s].line)
    }

    fn post(&mut self, p: Pending) {
        self.seq_of.insert(p.req, self.next_seq);
        self.by_seq.insert(self.next_seq, p);
        self.next_seq += 1;
    }

    fn take(&mut self, req: u32) -> Option<Pending> {
        let seq = self.seq_of.remove(&req)?;
        self.by_seq.remove(&seq)
    }

    /// Every pending request in posting order, leaving none.
    fn take_all(&mut self) -> impl Iterator<Item = Pending> + use<> {
        self.seq_of.clear();
        std::mem::take(&mut self.by_seq).into_values()
    }

    fn iter(&self) -> impl Iterator<Item = &Pending> {
        self.by_seq.values()
    }

    fn len(&self) -> usize {
        self.by_seq.len()
    }
}

/// Per-rank state while resolving.
#[derive(Default)]
struct RankBuild {
    actions: Vec<Action>,
    /// Keys and lines of this rank's receives, by slot.
    recvs: Vec<(Key, u32)>,
    pending: PendingRequests,
    collectives: u32,
}

/// Refuses a trace of more than [`MAX_MESSAGES`] messages (collectives expanded) at the line
/// that passes the limit, before any of them is built: counting costs no memory.
pub fn check_message_count(trace: &Trace, file: &str) -> Result<(), TraceErrors> {
    let (mut n, mut steps) = (0u64, Vec::new());
    for (i, rop) in trace.ops.iter().enumerate() {
        n += match rop.op {
            TraceOp::Send { .. } | TraceOp::Isend { .. } => 1,
            TraceOp::Compute { .. }
            | TraceOp::Recv { .. }
            | TraceOp::Irecv { .. }
            | TraceOp::Wait { .. }
            | TraceOp::Waitall => 0,
            _ => {
                steps.clear();
                collectives::expand(&rop.op, rop.rank, trace.ranks, &mut steps);
                steps
                    .iter()
                    .filter(|s| matches!(s, Step::Send { .. }))
                    .count() as u64
            }
        };
        if n > MAX_MESSAGES {
            let e = TraceError::at_line(
                file,
                trace.line(i),
                None,
                format!("more than {MAX_MESSAGES} messages (collectives expanded)"),
            );
            return Err(TraceErrors::capped(vec![e]));
        }
    }
    Ok(())
}

impl Program {
    /// Resolves `trace` (checked first with [`Trace::check`], as a trace built in memory has
    /// not been through the parser); `file` names it in errors. Deadlock is checked separately
    /// ([`Program::check_progress`]).
    pub fn build(trace: &Trace, file: &str) -> Result<Program, TraceErrors> {
        trace.check(file)?;
        check_collectives(trace, file)?;
        check_message_count(trace, file)?;
        let at =
            |line, token: Option<&str>, msg: String| TraceError::at_line(file, line, token, msg);
        let mut errors = Vec::new();
        let mut ranks: Vec<RankBuild> = (0..trace.ranks).map(|_| RankBuild::default()).collect();
        let mut messages: Vec<Message> = Vec::new();
        let mut sends: Vec<Key> = Vec::new();
        let mut steps = Vec::new();
        for (i, rop) in trace.ops.iter().enumerate() {
            let line = trace.line(i);
            let rank = rop.rank;
            let rb = &mut ranks[rank as usize];
            let mut send = |rb: &mut RankBuild, key: Key, bytes: u64| {
                rb.actions.push(Action {
                    line,
                    op: Op::Send {
                        msg: messages.len() as u32,
                    },
                });
                sends.push(key);
                messages.push(Message {
                    src: key.0,
                    dst: key.1,
                    bytes,
                    slot: u32::MAX,
                    send_line: line,
                    recv_line: 0,
                });
            };
            let recv = |rb: &mut RankBuild, key: Key| {
                rb.recvs.push((key, line));
                rb.recvs.len() as u32 - 1
            };
            let wait = |rb: &mut RankBuild, slot| {
                rb.actions.push(Action {
                    line,
                    op: Op::Wait { slot },
                })
            };
            match rop.op {
                TraceOp::Compute { ps } => rb.actions.push(Action {
                    line,
                    op: Op::Compute { ps },
                }),
                TraceOp::Send { dst, bytes, tag } => send(rb, (rank, dst, tag.into()), bytes),
                TraceOp::Recv { src, tag } => {
                    let slot = recv(rb, (src, rank, tag.into()));
                    wait(rb, slot);
                }
                TraceOp::Isend { req, .. } | TraceOp::Irecv { req, .. } => {
                    // A request still pending is an error; the message is kept, so that
                    // matching reports nothing that follows from it.
                    let reused = rb.pending.line_of(req);
                    if reused.is_none() && rb.pending.len() == MAX_PENDING {
                        errors.push(at(
                            line,
                            Some(&format!("req={req}")),
                            format!(
                                "rank {rank} already has {MAX_PENDING} requests pending; a rank \
                                 has at most 2^21 pending at once"
                            ),
                        ));
                        return Err(TraceErrors::capped(errors));
                    }
                    if let Some(first) = reused {
                        errors.push(at(
                            line,
                            Some(&format!("req={req}")),
                            format!("request {req} is still pending from line {first}"),
                        ));
                    }
                    let slot = match rop.op {
                        TraceOp::Isend {
                            dst, bytes, tag, ..
                        } => {
                            send(rb, (rank, dst, tag.into()), bytes);
                            None
                        }
                        TraceOp::Irecv { src, tag, .. } => Some(recv(rb, (src, rank, tag.into()))),
                        _ => unreachable!("isend or irecv"),
                    };
                    if reused.is_none() {
                        rb.pending.post(Pending { req, line, slot });
                    }
                }
                TraceOp::Wait { req } => match rb.pending.take(req) {
                    Some(p) => {
                        if let Some(slot) = p.slot {
                            wait(rb, slot);
                        }
                    }
                    None => errors.push(at(
                        line,
                        Some(&req.to_string()),
                        format!("rank {rank} has no pending request {req}"),
                    )),
                },
                TraceOp::Waitall => {
                    for p in rb.pending.take_all() {
                        if let Some(slot) = p.slot {
                            wait(rb, slot);
                        }
                    }
                }
                _ => {
                    let space = 1u64 << 32 | u64::from(rb.collectives);
                    rb.collectives += 1;
                    steps.clear();
                    collectives::expand(&rop.op, rank, trace.ranks, &mut steps);
                    for s in &steps {
                        match *s {
                            Step::Send { peer, bytes } => send(rb, (rank, peer, space), bytes),
                            Step::Recv { peer } => {
                                let slot = recv(rb, (peer, rank, space));
                                wait(rb, slot);
                            }
                        }
                    }
                }
            }
            if messages.len() as u64 > MAX_MESSAGES {
                errors.push(at(
                    line,
                    None,
                    format!("more than {MAX_MESSAGES} messages (collectives expanded)"),
                ));
                return Err(TraceErrors::capped(errors));
            }
        }
        for (r, rb) in ranks.iter().enumerate() {
            for p in rb.pending.iter() {
                errors.push(at(
                    p.line,
                    Some(&format!("req={}", p.req)),
                    format!("rank {r} never waits for request {}", p.req),
                ));
            }
        }
        match_messages(&ranks, &sends, &mut messages, file, &mut errors);
        if !errors.is_empty() {
            sort_errors(&mut errors);
            return Err(TraceErrors::capped(errors));
        }
        let mut program = Program {
            ranks: trace.ranks,
            actions: Vec::new(),
            starts: vec![0],
            messages,
            received: Vec::new(),
            slot_starts: vec![0],
        };
        for rb in &ranks {
            program.actions.extend_from_slice(&rb.actions);
            program.starts.push(program.actions.len() as u32);
            let base = program.received.len();
            program.received.resize(base + rb.recvs.len(), u32::MAX);
            program.slot_starts.push(program.received.len() as u32);
        }
        for (id, m) in program.messages.iter().enumerate() {
            program.received[program.slot_starts[m.dst as usize] as usize + m.slot as usize] =
                id as u32;
        }
        Ok(program)
    }

    /// Number of ranks.
    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    /// Rank `rank`'s actions in program order.
    pub fn actions(&self, rank: u32) -> &[Action] {
        let r = rank as usize;
        &self.actions[self.starts[r] as usize..self.starts[r + 1] as usize]
    }

    /// Every message, by global id.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The ids of the messages rank `rank` receives, by slot.
    pub fn received(&self, rank: u32) -> &[u32] {
        let r = rank as usize;
        &self.received[self.slot_starts[r] as usize..self.slot_starts[r + 1] as usize]
    }

    /// Sum of all messages' bytes.
    pub fn total_bytes(&self) -> u64 {
        self.messages.iter().map(|m| m.bytes).sum()
    }
}

/// The line number of a `file:line` place (0 for a file alone), for ordering errors.
fn line_of(at: &str) -> u32 {
    at.rsplit(':')
        .next()
        .and_then(|l| l.parse().ok())
        .unwrap_or(0)
}

/// Orders errors by line, then message, numbers in a message by value (rank 2 before rank 10):
/// the same order on every run.
pub(super) fn sort_errors(errors: &mut [TraceError]) {
    errors.sort_by_cached_key(|e| (line_of(&e.at), numbers_by_value(&e.message)));
}

/// `s` with every run of digits left-padded to 20, so that text order is number order.
fn numbers_by_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 40);
    let mut digits = String::new();
    for c in s.chars().chain(std::iter::once('\0')) {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        if !digits.is_empty() {
            out.push_str(&format!("{digits:0>20}"));
            digits.clear();
        }
        out.push(c);
    }
    out
}

/// Pairs the i-th send with the i-th receive of every key; fills in the messages' slots and
/// receive lines, and reports what stays unmatched.
fn match_messages(
    ranks: &[RankBuild],
    sends: &[Key],
    messages: &mut [Message],
    file: &str,
    errors: &mut Vec<TraceError>,
) {
    // Sends and receives sorted by key (stable sorts, so each key's keep their posting order:
    // message ids ascend as sends are posted, and a key's receives are one rank's, by slot),
    // then walked key by key: a few bytes per message rather than a queue per key.
    let recv_key = |&(r, slot): &(u32, u32)| ranks[r as usize].recvs[slot as usize].0;
    let mut send_ids: Vec<u32> = (0..sends.len() as u32).collect();
    send_ids.sort_by_key(|&id| sends[id as usize]);
    let mut recv_slots: Vec<(u32, u32)> = ranks
        .iter()
        .enumerate()
        .flat_map(|(r, rb)| (0..rb.recvs.len() as u32).map(move |slot| (r as u32, slot)))
        .collect();
    recv_slots.sort_by_key(recv_key);
    let (mut i, mut j) = (0, 0);
    while i < send_ids.len() || j < recv_slots.len() {
        let next_send = send_ids.get(i).map(|&id| sends[id as usize]);
        let next_recv = recv_slots.get(j).map(recv_key);
        let key = match (next_send, next_recv) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).expect("one is left"),
        };
        let n = send_ids[i..].partition_point(|&id| sends[id as usize] == key);
        let m = recv_slots[j..].partition_point(|x| recv_key(x) == key);
        let (ids, recvs) = (&send_ids[i..i + n], &recv_slots[j..j + m]);
        (i, j) = (i + n, j + m);
        report_key(ranks, &key, ids, recvs, messages, file, errors);
    }
}

/// [`match_messages`] for one key: its sends' message ids and its receives' (rank, slot), each
/// in posting order.
fn report_key(
    ranks: &[RankBuild],
    key: &Key,
    ids: &[u32],
    recvs: &[(u32, u32)],
    messages: &mut [Message],
    file: &str,
    errors: &mut Vec<TraceError>,
) {
    let tag = |key: &Key| {
        if key.2 >> 32 == 0 {
            format!("tag {}", key.2)
        } else {
            format!("collective #{}", (key.2 & 0xffff_ffff) + 1)
        }
    };
    for (i, &id) in ids.iter().enumerate() {
        let m = &mut messages[id as usize];
        match recvs.get(i) {
            Some(&(r, slot)) => {
                m.slot = slot;
                m.recv_line = ranks[r as usize].recvs[slot as usize].1;
            }
            None => errors.push(TraceError::at_line(
                file,
                m.send_line,
                None,
                format!(
                    "send from rank {} to rank {} ({}, {} of them) has no matching receive \
                     (rank {} posts {})",
                    key.0,
                    key.1,
                    tag(key),
                    ids.len(),
                    key.1,
                    recvs.len()
                ),
            )),
        }
    }
    for &(r, slot) in recvs.iter().skip(ids.len()) {
        errors.push(TraceError::at_line(
            file,
            ranks[r as usize].recvs[slot as usize].1,
            None,
            format!(
                "receive at rank {} from rank {} ({}) has no matching send (rank {} sends {} \
                 such messages, rank {} posts {} receives)",
                key.1,
                key.0,
                tag(key),
                key.0,
                ids.len(),
                key.1,
                recvs.len()
            ),
        ));
    }
}

/// Every rank must list the same collectives in the same order, with the same arguments.
fn check_collectives(trace: &Trace, file: &str) -> Result<(), TraceErrors> {
    let mut lists: Vec<Vec<(TraceOp, u32)>> = vec![Vec::new(); trace.ranks as usize];
    for (i, rop) in trace.ops.iter().enumerate() {
        if rop.op.is_collective() {
            lists[rop.rank as usize].push((rop.op, trace.line(i)));
        }
    }
    let mut errors = Vec::new();
    let reference = &lists[0];
    for (r, list) in lists.iter().enumerate().skip(1) {
        let differs = list.iter().zip(reference).position(|(a, b)| a.0 != b.0);
        if let Some(k) = differs {
            errors.push(TraceError::at_line(
                file,
                list[k].1,
                Some(&list[k].0.to_string()),
                format!(
                    "rank {r}'s collective #{} differs from rank 0's, `{}` at line {}; every rank \
                     lists the same collectives in the same order",
                    k + 1,
                    reference[k].0,
                    reference[k].1
                ),
            ));
        } else if list.len() > reference.len() {
            let (op, line) = list[reference.len()];
            errors.push(TraceError::at_line(
                file,
                line,
                Some(&op.to_string()),
                format!(
                    "rank {r} lists {} collectives, rank 0 only {}",
                    list.len(),
                    reference.len()
                ),
            ));
        } else if list.len() < reference.len() {
            let (op, line) = reference[list.len()];
            errors.push(TraceError::at_line(
                file,
                line,
                Some(&op.to_string()),
                format!(
                    "rank 0's collective #{} is missing on rank {r}, which lists {}",
                    list.len() + 1,
                    list.len()
                ),
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        sort_errors(&mut errors);
        Err(TraceErrors::capped(errors))
    }
}
