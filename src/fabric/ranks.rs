//! The processes one fabric is stepped on (MPI ranks): what they tell each other. The event
//! engine's parts are dealt out over the ranks (`docs/distributed.md`); each rank steps its own
//! parts on its threads and, at every window boundary, hands the events its parts filed for
//! another rank's ports to that rank and agrees with all on the window's looks, in the same
//! messages ([`grid::exchange`]). Counters, the end of a trace replay or phase, the invariants and a
//! breach found on one rank are agreed the same way, so that every rank holds the whole fabric's
//! answers and rank 0 writes the outputs of one process. State kept for the split; it models no
//! hardware.

pub mod grid;
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
    /// Sends `out[i]` to rank `peers[i]` and returns what each of `peers` sent this one, in
    /// order: every rank calls it, each with peers that name it among theirs (a round of
    /// [`grid::exchange`]).
    fn swap(&self, peers: &[usize], out: &[Vec<u64>]) -> Vec<Vec<u64>>;
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
/// switches, in their order, are dealt out in contiguous runs, one per rank (a fat tree's lower
/// stages keep their subtrees together, a Dragonfly its groups), stage after stage, each run's
/// length chosen so that the ranks' loads so far (a switch weighing its ports and end nodes) come
/// nearest an equal share: a rank given more of one stage is given less of the next. Within a
/// rank, switches go to its parts by their place in their stage.
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
    /// and weigh `weights` (ports and end nodes) over `ranks` ranks of `threads` threads.
    pub fn new(stages: &[u8], weights: &[u32], ranks: usize, threads: usize) -> Self {
        let switches = stages.len();
        let parts = (threads * ranks).clamp(1, switches.clamp(1, MOST_PARTS));
        let first = |r: usize| parts * r / ranks;
        let of_switch = if ranks == 1 {
            (0..switches).map(|s| (s % parts) as u8).collect()
        } else {
            let rank_of = balanced_runs(stages, weights, ranks);
            // Each switch's place in its stage.
            let mut size = [0usize; 256];
            (0..switches)
                .map(|s| {
                    let place = size[stages[s] as usize];
                    size[stages[s] as usize] += 1;
                    let own = first(rank_of[s])..first(rank_of[s] + 1);
                    (own.start + place % own.len().max(1)) as u8
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

/// Per switch, its rank: each stage (lowest first) cut into one contiguous run per rank, the run
/// of ranks `0..=r` ending where their load, earlier stages included, comes nearest
/// `(r + 1) / ranks` of the load dealt out so far (the first such end, never before the run of
/// rank `r - 1` ends).
fn balanced_runs(stages: &[u8], weights: &[u32], ranks: usize) -> Vec<usize> {
    let mut rank_of = vec![0; stages.len()];
    let mut load = vec![0u64; ranks];
    let mut dealt = 0u64;
    let mut levels: Vec<u8> = stages.to_vec();
    levels.sort_unstable();
    levels.dedup();
    for st in levels {
        let members: Vec<usize> = (0..stages.len()).filter(|&s| stages[s] == st).collect();
        // prefix[k]: the weight of the stage's first k switches.
        let prefix: Vec<u64> = std::iter::once(0)
            .chain(members.iter().scan(0u64, |w, &s| {
                *w += u64::from(weights[s]);
                Some(*w)
            }))
            .collect();
        dealt += prefix[members.len()];
        let (mut before, mut from) = (0u64, 0usize);
        for (r, rank_load) in load.iter_mut().enumerate() {
            before += *rank_load;
            // How far ranks 0..=r's load is from their share with the stage's first k switches
            // (scaled by `ranks`).
            let off =
                |k: usize| ((before + prefix[k]) * ranks as u64).abs_diff(dealt * (r as u64 + 1));
            let mut to = from;
            if r + 1 == ranks {
                to = members.len();
            } else {
                while to < members.len() && off(to + 1) < off(to) {
                    to += 1;
                }
            }
            for &s in &members[from..to] {
                rank_of[s] = r;
            }
            *rank_load += prefix[to] - prefix[from];
            from = to;
        }
    }
    rank_of
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
        let mut weights: Vec<u32> = self.switches.iter().map(|s| s.ports() as u32).collect();
        for end in &self.ends {
            if let (super::Far::Node(_), super::Far::Switch { sw, .. }) = end {
                weights[*sw as usize] += 1;
            }
        }
        Partition::new(&stages, &weights, ranks, self.pool.threads())
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
        cnms_made,
        cnms_received,
        cnms_sent,
        cnms_dropped,
        cnms_absorbed,
        snoops_dropped,
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
        packets_resequenced,
        latency_sum,
        arns_received,
        arns_consumed,
        packets_adapted,
        fecns_received,
        fecns_unanswered,
        cnps_sent,
        becns_received,
        becns_dropped,
        cnms_received,
        cnms_dropped
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
        // Two stages of 10 switches of one weight on 3 ranks of 2 threads.
        let stages: Vec<u8> = [[1u8; 10], [2; 10]].concat();
        let p = Partition::new(&stages, &[1; 20], 3, 2);
        assert_eq!(p.parts, 6);
        assert_eq!(p.rank_of_part, [0, 0, 1, 1, 2, 2]);
        assert_eq!(
            [p.parts_of(0), p.parts_of(1), p.parts_of(2)],
            [0..2, 2..4, 4..6]
        );
        // The first stage in runs of 3, 4 and 3 (10/3 and 20/3 nearest 3 and 7); the second
        // evens the loads out: 4, 2 and 4, so that the ranks hold 7, 6 and 7.
        let ranks: Vec<usize> = (0..20).map(|s| p.rank_of_switch(s)).collect();
        assert_eq!(ranks[..10], [0, 0, 0, 1, 1, 1, 1, 2, 2, 2]);
        assert_eq!(ranks[10..], [0, 0, 0, 0, 1, 1, 2, 2, 2, 2]);
        // Within a rank by place in the stage over its parts.
        assert_eq!(p.part_of_switch(0), 0);
        assert_eq!(p.part_of_switch(1), 1);
        assert_eq!(p.part_of_switch(4), 2);
        // Stages that divide evenly: equal runs, each rank the same share of every stage.
        let even = Partition::new(&stages, &[1; 20], 2, 1);
        let halves: Vec<usize> = (0..20).map(|s| even.rank_of_switch(s)).collect();
        assert_eq!(halves, [[0; 5], [1; 5], [0; 5], [1; 5]].concat());
        // In one process, switch s in part s mod parts.
        let one = Partition::new(&stages, &[1; 20], 1, 4);
        assert_eq!(one.part_of_switch(9), 1);
        // More ranks than switches would leave a rank none: at most one part per switch.
        let few = Partition::new(&[0; 3], &[1; 3], 2, 2);
        assert_eq!(
            (few.parts, few.parts_of(0), few.parts_of(1)),
            (3, 0..1, 1..3)
        );
        assert_eq!(
            Partition::new(&[0; 1000], &[1; 1000], 1, 200).parts,
            MOST_PARTS
        );
    }

    /// Configuration 1's shape (72 leaves of 12 ports and 6 end nodes, 72 middle and 36 top
    /// switches of 12 ports) on 64 ranks: every rank within one switch of its share.
    #[test]
    fn many_ranks_share_a_fat_tree_evenly() {
        let stages: Vec<u8> = [[0u8; 72], [1; 72]]
            .concat()
            .into_iter()
            .chain([2; 36])
            .collect();
        let weights: Vec<u32> = (0..180).map(|s| if s < 72 { 18 } else { 12 }).collect();
        let p = Partition::new(&stages, &weights, 64, 1);
        let mut load = [0u32; 64];
        for s in 0..180 {
            load[p.rank_of_switch(s)] += weights[s];
        }
        let mean = 2592.0 / 64.0;
        let most = *load.iter().max().unwrap() as f64;
        assert!(most <= mean + 18.0, "{load:?}");
        assert!(load.iter().all(|&l| l > 0));
        // Each stage still in contiguous runs.
        for st in [0..72, 72..144, 144..180] {
            let r: Vec<usize> = st.map(|s| p.rank_of_switch(s)).collect();
            assert!(r.windows(2).all(|w| w[0] <= w[1]), "{r:?}");
        }
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
