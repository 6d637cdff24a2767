//! The replay state machine an end node drives: the ranks mapped to one node, each walking its
//! resolved actions in cycles. Everything is allocated when the replayer is built; stepping it
//! allocates nothing.
//!
//! Semantics (see `docs/traces.md`): sends are eager, so a send (blocking or not) is done once
//! its message is handed to the node; a receive is done when the message's last byte has been
//! delivered to the receiving node; a rank advances only when what it waits for has arrived;
//! compute times are replayed as given. A rank's finish is the cycle its last action completes.
//!
//! The node's side of the contract: call [`Replayer::advance`] in every cycle that
//! [`Replayer::next_wake`] names (at or before the current cycle) and take the messages it
//! posts; at the receiving node, report each packet's flits with [`Replayer::flits_arrived`]
//! under the message's index there ([`Post::dst_index`], which the packets carry), or the whole
//! message with [`Replayer::delivered`] in the cycle its last byte arrives, and call `advance`
//! again in that cycle. Messages between ranks on the same node are posted like the others.

use super::mapping::Mapping;
use super::program::{Op, Program};
use crate::config::TimeBase;
use std::fmt;

/// A message a rank hands to its node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Post {
    /// Global message id ([`Program::messages`]).
    pub msg: u32,
    /// Sending rank.
    pub src_rank: u32,
    /// Receiving rank.
    pub dst_rank: u32,
    /// The node running the receiving rank.
    pub dst_node: u32,
    /// The message's index at the receiving node, what [`Replayer::delivered`] takes there: the
    /// node's ranks' receives, rank by rank ascending, each rank's in posting order.
    pub dst_index: u32,
    /// Size in bytes.
    pub bytes: u64,
    /// Size in flits: `ceil(bytes / flit_bytes)`, at least one (a 0-byte message still takes a
    /// packet).
    pub flits: u32,
}

/// A rank waiting for a message that has not arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// The waiting rank.
    pub rank: u32,
    /// Trace line of the receive or wait it is in.
    pub line: u32,
    /// The message it waits for (global id).
    pub msg: u32,
    /// The rank that sends it.
    pub src: u32,
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rank {} waits at line {} for message {} from rank {}",
            self.rank, self.line, self.msg, self.src
        )
    }
}

/// Never delivered.
const NEVER: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
enum Local {
    Compute { cycles: u64 },
    Send { out: u32 },
    Wait { index: u32 },
}

/// Where a rank is. A rank starts `Ready` from cycle 0; every change goes through
/// [`Rank::step`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RankState {
    /// Goes on with its next action from cycle `from` (computing until then).
    Ready { from: u64 },
    /// Reached, in cycle `since`, the wait for receive `index` (of its node), not yet
    /// delivered when it last looked.
    Waiting { index: u32, since: u64 },
    /// Finished in cycle `at`.
    Done { at: u64 },
}

/// One rank: its actions and its state.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct Rank {
    rank: u32,
    /// Next action, an index into `ops`; `end` is one past the rank's last.
    pc: u32,
    end: u32,
    state: RankState,
}

impl Rank {
    /// One transition in cycle `now`, handing a message sent to `post`; whether the rank moved.
    fn step(
        &mut self,
        now: u64,
        ops: &[Local],
        outs: &[Post],
        arrived: &[u64],
        post: &mut impl FnMut(&Post),
    ) -> bool {
        let next = match self.state {
            RankState::Done { .. } => return false,
            RankState::Waiting { index, since } => {
                let at = arrived[index as usize];
                if at > now {
                    return false;
                }
                self.pc += 1;
                RankState::Ready {
                    from: since.max(at),
                }
            }
            RankState::Ready { from } if self.pc == self.end => RankState::Done { at: from },
            RankState::Ready { from } if from > now => return false,
            RankState::Ready { from } => match ops[self.pc as usize] {
                Local::Compute { cycles } => {
                    self.pc += 1;
                    RankState::Ready {
                        from: from + cycles,
                    }
                }
                Local::Send { out } => {
                    post(&outs[out as usize]);
                    self.pc += 1;
                    RankState::Ready { from }
                }
                Local::Wait { index } => RankState::Waiting { index, since: from },
            },
        };
        self.state = next;
        true
    }

    /// The first cycle this rank can move without anything more arriving.
    fn wake(&self, arrived: &[u64]) -> Option<u64> {
        match self.state {
            RankState::Ready { from } => Some(from),
            RankState::Waiting { index, since } => {
                let at = arrived[index as usize];
                (at != NEVER).then(|| at.max(since))
            }
            RankState::Done { .. } => None,
        }
    }

    fn finish(&self) -> Option<u64> {
        match self.state {
            RankState::Done { at } => Some(at),
            _ => None,
        }
    }
}

/// The ranks of one node and their progress.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Replayer {
    node: u32,
    ops: Vec<Local>,
    lines: Vec<u32>,
    outs: Vec<Post>,
    /// Cycle each receive was delivered, by the node's receive index.
    arrived: Vec<u64>,
    /// Flits of each receive not yet arrived.
    remaining: Vec<u32>,
    /// Global id of each receive's message.
    recv_msg: Vec<u32>,
    recv_src: Vec<u32>,
    ranks: Vec<Rank>,
}

/// Compute times to cycles, sizes to flits.
#[derive(Clone, Copy)]
struct Conversion {
    cycle_ns: f64,
    flit_bytes: u64,
}

impl Conversion {
    /// Picoseconds to the nearest cycle.
    fn cycles(&self, ps: u64) -> u64 {
        (ps as f64 / 1000.0 / self.cycle_ns).round() as u64
    }

    /// Bytes to whole flits, at least one (sizes are below 2^32 bytes).
    fn flits(&self, bytes: u64) -> u32 {
        bytes.div_ceil(self.flit_bytes).max(1) as u32
    }
}

/// Per rank, the first index its receives take at its node.
fn receive_bases(program: &Program, mapping: &Mapping) -> Vec<u32> {
    let mut next = vec![0u32; mapping.nodes() as usize];
    (0..program.ranks())
        .map(|r| {
            let n = &mut next[mapping.node_of(r) as usize];
            let base = *n;
            *n += program.received(r).len() as u32;
            base
        })
        .collect()
}

impl Replayer {
    /// One replayer per node, index = node. `time` converts compute times to cycles (rounded
    /// to the nearest; one cycle is 5.12 ns at 100 Gb/s) and sizes to flits.
    pub fn build_all(
        program: &Program,
        mapping: &Mapping,
        time: &TimeBase,
    ) -> Result<Vec<Replayer>, String> {
        if mapping.ranks() != program.ranks() {
            return Err(format!(
                "the mapping places {} ranks, the trace has {}",
                mapping.ranks(),
                program.ranks()
            ));
        }
        let cycle_ns = time.cycle_ns();
        if time.flit_bytes == 0 || !(cycle_ns.is_finite() && cycle_ns > 0.0) {
            return Err(format!("not a time base: {time:?}"));
        }
        let conv = Conversion {
            cycle_ns,
            flit_bytes: time.flit_bytes.into(),
        };
        let bases = receive_bases(program, mapping);
        let mut on_node: Vec<Vec<u32>> = vec![Vec::new(); mapping.nodes() as usize];
        for r in 0..program.ranks() {
            on_node[mapping.node_of(r) as usize].push(r);
        }
        Ok(on_node
            .iter()
            .enumerate()
            .map(|(node, ranks)| {
                Replayer::for_node(program, mapping, node as u32, ranks, conv, &bases)
            })
            .collect())
    }

    fn for_node(
        program: &Program,
        mapping: &Mapping,
        node: u32,
        ranks: &[u32],
        conv: Conversion,
        bases: &[u32],
    ) -> Replayer {
        let mut r = Replayer {
            node,
            ops: Vec::new(),
            lines: Vec::new(),
            outs: Vec::new(),
            arrived: Vec::new(),
            remaining: Vec::new(),
            recv_msg: Vec::new(),
            recv_src: Vec::new(),
            ranks: Vec::new(),
        };
        for &rank in ranks {
            let base = r.arrived.len() as u32;
            for &msg in program.received(rank) {
                let m = program.messages()[msg as usize];
                r.arrived.push(NEVER);
                r.remaining.push(conv.flits(m.bytes));
                r.recv_msg.push(msg);
                r.recv_src.push(m.src);
            }
            let start = r.ops.len() as u32;
            for a in program.actions(rank) {
                r.lines.push(a.line);
                r.ops.push(match a.op {
                    Op::Compute { ps } => Local::Compute {
                        cycles: conv.cycles(ps),
                    },
                    Op::Send { msg } => {
                        let m = program.messages()[msg as usize];
                        r.outs.push(Post {
                            msg,
                            src_rank: rank,
                            dst_rank: m.dst,
                            dst_node: mapping.node_of(m.dst),
                            dst_index: bases[m.dst as usize] + m.slot,
                            bytes: m.bytes,
                            flits: conv.flits(m.bytes),
                        });
                        Local::Send {
                            out: r.outs.len() as u32 - 1,
                        }
                    }
                    Op::Wait { slot } => Local::Wait { index: base + slot },
                });
            }
            r.ranks.push(Rank {
                rank,
                pc: start,
                end: r.ops.len() as u32,
                state: RankState::Ready { from: 0 },
            });
        }
        r
    }

    /// The node this replayer runs on.
    pub fn node(&self) -> u32 {
        self.node
    }

    /// Number of receives at this node (the range of [`Post::dst_index`] for it).
    pub fn receives(&self) -> usize {
        self.arrived.len()
    }

    /// Number of messages this node's ranks send (what a queue of posts must hold).
    pub fn sends(&self) -> usize {
        self.outs.len()
    }

    /// Lets every rank go as far as it can in cycle `now`, handing each message it sends to
    /// `post`, ranks in ascending order, each rank's messages in program order.
    pub fn advance(&mut self, now: u64, mut post: impl FnMut(&Post)) {
        for rank in &mut self.ranks {
            while rank.step(now, &self.ops, &self.outs, &self.arrived, &mut post) {}
        }
    }

    /// The message of receive `index` (a [`Post::dst_index`] naming this node) has been
    /// delivered: its last byte arrived in cycle `at`. An index beyond [`Replayer::receives`]
    /// is a caller's bug and panics.
    pub fn delivered(&mut self, index: u32, at: u64) {
        let slot = &mut self.arrived[index as usize];
        debug_assert_eq!(*slot, NEVER, "receive {index} delivered twice");
        *slot = at;
    }

    /// `flits` flits of the message of receive `index` have arrived, the last of them in cycle
    /// `at`; once all its flits ([`Post::flits`]) are in, the message is delivered and this
    /// returns true. Packets may come in any order.
    pub fn flits_arrived(&mut self, index: u32, flits: u32, at: u64) -> bool {
        let left = self.remaining[index as usize];
        debug_assert!(
            flits <= left,
            "receive {index}: {flits} flits, {left} expected"
        );
        let left = left.saturating_sub(flits);
        self.remaining[index as usize] = left;
        if left == 0 {
            self.delivered(index, at);
        }
        left == 0
    }

    /// The first cycle a rank can go on without anything more arriving: a compute ending, or a
    /// message delivered that a rank waits for. `None` when every rank has finished or waits for
    /// a message not yet delivered.
    pub fn next_wake(&self) -> Option<u64> {
        self.ranks
            .iter()
            .filter_map(|r| r.wake(&self.arrived))
            .min()
    }

    /// Whether every rank of this node has finished before cycle `now` (a rank whose last
    /// operation is a compute finishes when it ends, which may lie ahead).
    pub fn finished_before(&self, now: u64) -> bool {
        self.ranks
            .iter()
            .all(|r| r.finish().is_some_and(|at| at < now))
    }

    /// The last finish of this node's ranks, once all have finished (0 for a node without
    /// ranks).
    pub fn finish_cycle(&self) -> Option<u64> {
        self.ranks
            .iter()
            .try_fold(0, |m, r| r.finish().map(|f| f.max(m)))
    }

    /// Each rank of the node and its finish cycle, if it has finished.
    pub fn rank_finishes(&self) -> impl Iterator<Item = (u32, Option<u64>)> + '_ {
        self.ranks.iter().map(|r| (r.rank, r.finish()))
    }

    /// Each rank of the node and its state.
    pub fn rank_states(&self) -> impl Iterator<Item = (u32, RankState)> + '_ {
        self.ranks.iter().map(|r| (r.rank, r.state))
    }

    /// The ranks waiting for a message that has not been delivered, and what they wait for.
    pub fn blocked(&self) -> impl Iterator<Item = Blocked> + '_ {
        self.ranks.iter().filter_map(|r| match r.state {
            RankState::Waiting { index, .. } if self.arrived[index as usize] == NEVER => {
                Some(Blocked {
                    rank: r.rank,
                    line: self.lines[r.pc as usize],
                    msg: self.recv_msg[index as usize],
                    src: self.recv_src[index as usize],
                })
            }
            _ => None,
        })
    }
}

/// Execution time of a replay: the last rank's finish, once every rank has finished.
pub fn execution_time(replayers: &[Replayer]) -> Option<u64> {
    replayers
        .iter()
        .try_fold(0, |m, r| r.finish_cycle().map(|f| f.max(m)))
}
