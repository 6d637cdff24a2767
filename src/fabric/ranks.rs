//! The processes one fabric is stepped on (MPI ranks): what they tell each other. The event
//! engine's parts are dealt out over the ranks (`docs/distributed.md`); each rank steps its own
//! parts on its threads and, at every window boundary, hands the events its parts filed for
//! another rank's ports to that rank ([`Ranks::exchange`]) and agrees with all on the window's
//! looks (one [`Ranks::min`]). Counters, the end of a trace replay or phase, the invariants and a
//! breach found on one rank are agreed the same way, so that every rank holds the whole fabric's
//! answers and rank 0 writes the outputs of one process. State kept for the split; it models no
//! hardware.

#[cfg(test)]
pub(crate) mod local;
#[cfg(feature = "mpi")]
pub mod mpi;

use super::Violation;
use super::node::NodeStats;
use crate::blocks::LftBanks;
use crate::blocks::lft_banks::NO_ROUTE;
use crate::switch::SwitchStats;
use std::sync::{Arc, OnceLock};

/// What the ranks stepping one fabric do together. Every method is collective: every rank calls
/// it, in the same order, from the thread that steps its first part.
pub trait Ranks: Send + Sync {
    /// This rank.
    fn rank(&self) -> usize;
    /// Ranks in all.
    fn size(&self) -> usize;
    /// Replaces each element by its least value over the ranks.
    fn min(&self, v: &mut [u64]);
    /// Replaces each element by its sum over the ranks (wrapping).
    fn sum(&self, v: &mut [u64]);
    /// Sends `out[r]` to rank `r` (this rank's own list is left alone) and returns what every
    /// other rank sent this one, by rank (an empty list from a rank with nothing for it).
    fn exchange(&self, out: &[Vec<u64>]) -> Vec<Vec<u64>>;
    /// Every rank's `mine`, by rank.
    fn gather(&self, mine: &[u64]) -> Vec<Vec<u64>>;
}

impl std::fmt::Debug for dyn Ranks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rank {} of {}", self.rank(), self.size())
    }
}

/// Replaces each element by its greatest value over the ranks.
pub fn max(r: &dyn Ranks, v: &mut [u64]) {
    v.iter_mut().for_each(|x| *x = !*x);
    r.min(v);
    v.iter_mut().for_each(|x| *x = !*x);
}

/// Replaces each element by its least value over the ranks, `None` ("not yet", "none")
/// counting as the largest; without ranks, leaves `v` as it is.
pub fn least_of_each(r: Option<&dyn Ranks>, v: &mut [Option<u64>]) {
    let Some(r) = r else { return };
    let mut w: Vec<u64> = v.iter().map(|x| x.unwrap_or(u64::MAX)).collect();
    r.min(&mut w);
    for (x, y) in v.iter_mut().zip(w) {
        *x = (y != u64::MAX).then_some(y);
    }
}

/// Whether `yes` holds on every rank.
pub fn all(r: &dyn Ranks, yes: bool) -> bool {
    let mut v = [u64::from(yes)];
    r.min(&mut v);
    v[0] == 1
}

/// How the event engine deals a fabric out: `parts` parts in all (one per thread of each rank,
/// at most one per switch and at most 128), rank `r` of `n` stepping the parts
/// `parts·r/n .. parts·(r+1)/n`, each end node in the part of the switch it is cabled to. In
/// one process switch `s` is in part `s mod parts` (the parts' work balanced: a split by
/// locality stepped slower on threads, `docs/performance.md`). Over several ranks each stage's
/// switches, in their order, are dealt out in contiguous runs, one per rank (so a rank holds the
/// same share of every stage, and a fat tree's lower stages keep their subtrees together), and
/// within a rank by index over its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// Parts in all.
    pub parts: usize,
    /// Per part, its rank.
    pub rank_of_part: Vec<usize>,
    /// Per switch, its part.
    of_switch: Vec<u8>,
}

/// Parts the event engine's link codes can name.
pub const MOST_PARTS: usize = 128;

impl Partition {
    /// The split of a fabric whose switches are in stages `stages` (0 where stages do not apply)
    /// over `ranks` ranks of `threads` threads.
    pub fn new(stages: &[u8], ranks: usize, threads: usize) -> Self {
        let switches = stages.len();
        let parts = (threads * ranks).clamp(1, switches.clamp(1, MOST_PARTS));
        let first = |r: usize| parts * r / ranks;
        let of_switch = if ranks == 1 {
            (0..switches).map(|s| (s % parts) as u8).collect()
        } else {
            // Each switch's place in its stage, and the stages' sizes.
            let mut size = [0usize; 256];
            let place: Vec<usize> = stages
                .iter()
                .map(|&st| {
                    size[st as usize] += 1;
                    size[st as usize] - 1
                })
                .collect();
            (0..switches)
                .map(|s| {
                    let r = place[s] * ranks / size[stages[s] as usize];
                    let own = first(r)..first(r + 1);
                    (own.start + place[s] % own.len().max(1)) as u8
                })
                .collect()
        };
        Partition {
            parts,
            rank_of_part: (0..parts)
                .map(|q| (0..ranks).rfind(|&r| first(r) <= q).unwrap_or(0))
                .collect(),
            of_switch,
        }
    }

    /// The parts rank `r` steps.
    pub fn parts_of(&self, r: usize) -> std::ops::Range<usize> {
        let first = self.rank_of_part.partition_point(|&x| x < r);
        first..self.rank_of_part.partition_point(|&x| x <= r)
    }

    /// The part of switch `s`.
    pub fn part_of_switch(&self, s: usize) -> usize {
        self.of_switch[s] as usize
    }

    /// The rank of switch `s`.
    pub fn rank_of_switch(&self, s: usize) -> usize {
        self.rank_of_part[self.part_of_switch(s)]
    }
}

static WORLD: OnceLock<Arc<dyn Ranks>> = OnceLock::new();

/// The ranks of this process's MPI job, when it is one of more than one (set once, by the
/// binary, before anything runs).
pub fn world() -> Option<&'static Arc<dyn Ranks>> {
    WORLD.get()
}

/// Makes `r` the ranks of this process's job; `false` when they were already set.
pub fn set_world(r: Arc<dyn Ranks>) -> bool {
    WORLD.set(r).is_ok()
}

impl<const V: usize> super::Fabric<V> {
    /// Splits the fabric over `ranks`, this process being one of them, before the engine
    /// `engine` is laid out: from then on it steps only its own parts, and what it answers
    /// (counters, checks, ends) is the whole fabric's, agreed with the other ranks. Refused off
    /// the event engine or with fewer switches than ranks; the ranks agree on the threads each
    /// steps on.
    pub(super) fn join_ranks(
        &mut self,
        ranks: Arc<dyn Ranks>,
        engine: super::Engine,
    ) -> Result<(), String> {
        if engine != super::Engine::Event {
            return Err("a fabric split over MPI ranks steps on the event engine".into());
        }
        if self.switches.len() < ranks.size() {
            return Err(format!(
                "{} MPI ranks for a fabric of {} switches: at most one rank per switch",
                ranks.size(),
                self.switches.len()
            ));
        }
        // Every rank deals the parts out alike: on the fewest threads any rank steps on (a rank
        // bound to fewer cores may step on fewer).
        let mut threads = [self.threads() as u64];
        ranks.min(&mut threads);
        self.set_threads(threads[0] as usize);
        // The forwarding tables of the switches other ranks step are theirs to read
        // ([`Fabric::switch_lft`] fetches one).
        let split = self.partition_over(ranks.size());
        for (s, setup) in self.switches.iter_mut().enumerate() {
            if split.rank_of_switch(s) != ranks.rank() {
                setup.forget_lft();
            }
        }
        self.ranks = Some(ranks);
        Ok(())
    }

    /// Switch `sw`'s programmed forwarding table. On MPI ranks only the rank that steps the
    /// switch keeps it, and sends it to the others: every rank asks, in the same order.
    pub fn switch_lft(&self, sw: usize) -> LftBanks {
        let kept = self.switches[sw].kept_lft();
        let Some(r) = &self.ranks else {
            return self.switches[sw].lft().clone();
        };
        let mine: Vec<u64> = kept.map_or_else(Vec::new, |t| {
            let mut w = vec![t.lmc() as u64, t.rows() as u64];
            let entries: Vec<u8> = (0..t.entries())
                .map(|l| t.entry(l as u16).unwrap_or(NO_ROUTE))
                .collect();
            w.extend(bytes_to_words(&entries));
            w
        });
        let all = r.gather(&mine);
        let w = all
            .iter()
            .find(|w| !w.is_empty())
            .expect("the rank stepping a switch keeps its table");
        let mut t = LftBanks::new(w[0] as u32, w[1] as usize);
        for (lid, port) in words_to_bytes(&w[2..]).take(t.entries()).enumerate() {
            t.program(lid as u16, port);
        }
        t
    }

    /// How its switches are dealt out to `ranks` ranks of its threads.
    pub(super) fn partition_over(&self, ranks: usize) -> Partition {
        let stages: Vec<u8> = self.switches.iter().map(|s| s.stage()).collect();
        Partition::new(&stages, ranks, self.pool.threads())
    }

    /// The ranks it is split over, when it is.
    pub fn ranks(&self) -> Option<&dyn Ranks> {
        self.ranks.as_deref()
    }

    /// Whether `yes` holds on every rank (on this process, without ranks).
    pub(super) fn on_every_rank(&self, yes: bool) -> bool {
        self.ranks().map_or(yes, |r| all(r, yes))
    }

    /// What this rank has exchanged with the others, when the fabric is split.
    pub fn exchanged(&self) -> Option<super::event::Exchanged> {
        match (&self.wing, &self.ranks) {
            (super::Wing::Event(e), Some(_)) => Some(e.exchanged()),
            _ => None,
        }
    }

    /// Whether this process steps end node `n` (every node, in one process).
    pub fn owns_node(&self, n: usize) -> bool {
        match &self.wing {
            super::Wing::Event(e) => e.owns_node(n),
            super::Wing::Cycle(_) => true,
        }
    }

    /// The end nodes this process steps, with their indices.
    pub fn local_nodes(&self) -> impl Iterator<Item = (usize, &super::node::EndNode<V>)> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|&(n, _)| self.owns_node(n))
    }
}

/// Sums the fields of a counter set over the ranks (`max` fields take the largest).
macro_rules! reduce {
    ($name:ident, $t:ident, [$($sum:ident),*], [$($max:ident),*]) => {
        /// The counters summed over the ranks, on every rank.
        pub fn $name(r: &dyn Ranks, x: &mut $t) {
            // Every field is named (a new counter must say how it is reduced).
            let $t { $($sum: _,)* $($max: _,)* } = *x;
            let mut w = [$(x.$sum,)*];
            r.sum(&mut w);
            let [$($sum,)*] = w;
            $(x.$sum = $sum;)*
            let mut m = [$(x.$max,)*];
            max(r, &mut m);
            let [$($max,)*] = m;
            $(x.$max = $max;)*
        }
    };
}

reduce!(
    switch_stats,
    SwitchStats,
    [
        roots_detected,
        arns_sent,
        arns_received,
        arns_consumed,
        packets_adapted,
        packets_escaped,
        packets_marked,
        arn_commands_dropped,
        flits_sent,
        packets_sent
    ],
    []
);

reduce!(
    node_stats,
    NodeStats,
    [
        generated_packets,
        generation_stalls,
        injected_flits,
        injected_packets,
        delivered_flits,
        delivered_packets,
        delivered_adapted,
        latency_sum,
        arns_received,
        arns_consumed,
        packets_adapted,
        fecns_received,
        fecns_unanswered,
        cnps_sent,
        becns_received,
        becns_dropped
    ],
    [latency_max]
);

/// The earliest of the violations the ranks found (by cycle, then rank), on every rank; `None`
/// when none found one. Its invariant's name is one of the model's.
pub fn earliest(r: &dyn Ranks, mine: Option<&Violation>) -> Option<Violation> {
    let words = mine.map_or_else(Vec::new, encode_violation);
    r.gather(&words)
        .iter()
        .filter_map(|w| decode_violation(w))
        .min_by_key(|v| v.cycle)
}

/// A violation as words: its cycle, then its invariant, place and detail as UTF-8 with their
/// lengths.
fn encode_violation(v: &Violation) -> Vec<u64> {
    let mut bytes = Vec::new();
    for s in [v.invariant, &v.place, &v.detail] {
        bytes.extend((s.len() as u32).to_le_bytes());
        bytes.extend(s.as_bytes());
    }
    let mut words = vec![v.cycle, bytes.len() as u64];
    words.extend(bytes_to_words(&bytes));
    words
}

/// `bytes` as words between ranks, eight to a word, the first in the low byte (the last word
/// padded with zeros).
pub(in crate::fabric) fn bytes_to_words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes
        .chunks(8)
        .map(|c| c.iter().rev().fold(0u64, |w, &b| (w << 8) | b as u64))
}

/// The bytes of [`bytes_to_words`]' words, in order (the padding included).
pub(in crate::fabric) fn words_to_bytes(words: &[u64]) -> impl Iterator<Item = u8> + '_ {
    words.iter().flat_map(|x| x.to_le_bytes())
}

fn decode_violation(w: &[u64]) -> Option<Violation> {
    let (&cycle, &len) = (w.first()?, w.get(1)?);
    let bytes: Vec<u8> = words_to_bytes(&w[2..]).take(len as usize).collect();
    let mut at = 0;
    let mut next = || {
        let n = u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?) as usize;
        let s = String::from_utf8(bytes.get(at + 4..at + 4 + n)?.to_vec()).ok()?;
        at += 4 + n;
        Some(s)
    };
    let (invariant, place, detail) = (next()?, next()?, next()?);
    Some(Violation {
        cycle,
        invariant: invariant_name(&invariant),
        place,
        detail,
    })
}

/// The model's name for an invariant named `s` on another rank.
fn invariant_name(s: &str) -> &'static str {
    const NAMES: [&str; 5] = [
        "flit_conservation",
        "credit_conservation",
        "in_order",
        "progress",
        "switch",
    ];
    NAMES
        .iter()
        .find(|&&n| n == s)
        .copied()
        .unwrap_or("on another rank")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_go_to_the_ranks_in_contiguous_runs() {
        // Two stages of 10 switches on 3 ranks of 2 threads.
        let stages: Vec<u8> = [[1u8; 10], [2; 10]].concat();
        let p = Partition::new(&stages, 3, 2);
        assert_eq!(p.parts, 6);
        assert_eq!(p.rank_of_part, [0, 0, 1, 1, 2, 2]);
        assert_eq!(
            [p.parts_of(0), p.parts_of(1), p.parts_of(2)],
            [0..2, 2..4, 4..6]
        );
        // Each stage in runs of 4, 3 and 3 switches; within a rank by index over its parts.
        let ranks: Vec<usize> = (0..20).map(|s| p.rank_of_switch(s)).collect();
        assert_eq!(ranks[..10], [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]);
        assert_eq!(ranks[10..], ranks[..10]);
        assert_eq!(p.part_of_switch(0), 0);
        assert_eq!(p.part_of_switch(1), 1);
        assert_eq!(p.part_of_switch(4), 2);
        // In one process, switch s in part s mod parts.
        let one = Partition::new(&stages, 1, 4);
        assert_eq!(one.part_of_switch(9), 1);
        // More ranks than switches would leave a rank none: at most one part per switch.
        let few = Partition::new(&[0; 3], 2, 2);
        assert_eq!(
            (few.parts, few.parts_of(0), few.parts_of(1)),
            (3, 0..1, 1..3)
        );
        assert_eq!(Partition::new(&[0; 1000], 1, 200).parts, MOST_PARTS);
    }

    #[test]
    fn a_violation_crosses_ranks_whole() {
        let v = Violation {
            cycle: 1234,
            invariant: "credit_conservation",
            place: "switch 3 output 7, VC 1".into(),
            detail: "credits 3 + buffered 2 … ≠ 16".into(),
        };
        assert_eq!(decode_violation(&encode_violation(&v)), Some(v));
        assert_eq!(decode_violation(&[]), None);
    }
}
