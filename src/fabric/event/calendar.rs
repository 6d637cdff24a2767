//! The event engine's calendar: a timing wheel of the events of the next [`HORIZON`] cycles,
//! one list per cycle, and a heap for the few events further ahead (an end node's next
//! message, a wake-up after a long wait). State kept for speed; it models no hardware.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Cycles the wheel holds (a power of two).
pub const HORIZON: u64 = 1024;

/// What happens at a port or node in a cycle.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Kind {
    /// A packet's head reaches switch input `unit` (flat index); `arg`: its slot.
    Head,
    /// Switch output `unit` (flat index) has to be visited: its packet's head or tail leaves, or it
    /// may grant a waiting packet.
    Output,
    /// At switch output `unit`, `count` credit streams start on VC `vc`, of `arg` flits in all.
    CreditsStart,
    /// At switch output `unit`, `count` credit streams stop on VC `vc`.
    CreditsStop,
    /// End node `unit` steps (something arrives for it, or it is due).
    Node,
    /// An ARN reaches switch output `unit` (flat index); `arg`: its entry in the part's pool.
    Arn,
    /// The congestion detector of switch output `unit` (flat index) is evaluated.
    Detect,
    /// A QCN congestion notification reaches switch output `unit` (flat index) from downstream;
    /// `arg` and `vc` carry it (`event/qcn.rs`).
    Cnm,
    /// A QCN congestion notification leaves switch port `unit` (flat index) upstream.
    CnmOut,
}

/// One event (12 bytes of payload besides its kind).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Ev {
    pub kind: Kind,
    pub vc: u8,
    pub count: u8,
    pub unit: u32,
    pub arg: u32,
}

impl Ev {
    pub fn new(kind: Kind, unit: u32) -> Self {
        Ev {
            kind,
            vc: 0,
            count: 0,
            unit,
            arg: 0,
        }
    }
}

/// The events of the cycles to come.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Calendar {
    wheel: Vec<Vec<Ev>>,
    far: BinaryHeap<Reverse<(u64, Ev)>>,
    /// The cycle being processed: events are for later cycles.
    now: u64,
}

impl Calendar {
    /// A calendar for a part of `units` ports and end nodes: room in each cycle's list for four
    /// events of each of them (at least 256, at most 2,048: 3 to 24 MB in all) and in the heap
    /// for four of each, so that filing events does not grow a list once the part is built (a
    /// list that grows keeps its room, its cycle's list from then on).
    pub fn new(units: usize) -> Self {
        let per_cycle = (4 * units).clamp(256, 2048);
        Calendar {
            wheel: (0..HORIZON)
                .map(|_| Vec::with_capacity(per_cycle))
                .collect(),
            far: BinaryHeap::with_capacity((4 * units).max(1024)),
            now: 0,
        }
    }

    /// Files `ev` for cycle `at` (after the cycle being processed).
    #[inline(always)]
    pub fn push(&mut self, at: u64, ev: Ev) {
        debug_assert!(
            at > self.now || (at == self.now && self.now == 0),
            "{ev:?} at {at} now {}",
            self.now
        );
        if at - self.now < HORIZON {
            self.wheel[(at % HORIZON) as usize].push(ev);
        } else {
            self.push_far(at, ev);
        }
    }

    #[cold]
    #[inline(never)]
    fn push_far(&mut self, at: u64, ev: Ev) {
        self.far.push(Reverse((at, ev)));
    }

    /// Takes the events of cycle `now` (`now` not before the last cycle taken), leaving an empty
    /// list to hand back with [`Calendar::give_back`].
    #[inline]
    pub fn take(&mut self, now: u64) -> Vec<Ev> {
        self.now = now;
        while let Some(Reverse((at, _))) = self.far.peek() {
            if *at - now >= HORIZON {
                break;
            }
            let Some(Reverse((at, ev))) = self.far.pop() else {
                break;
            };
            self.wheel[(at % HORIZON) as usize].push(ev);
        }
        std::mem::take(&mut self.wheel[(now % HORIZON) as usize])
    }

    /// Hands back the list [`Calendar::take`] gave for `now`, emptied, keeping its room.
    #[inline]
    pub fn give_back(&mut self, now: u64, mut list: Vec<Ev>) {
        list.clear();
        let slot = &mut self.wheel[(now % HORIZON) as usize];
        debug_assert!(
            slot.is_empty(),
            "an event filed for the cycle being processed"
        );
        *slot = list;
    }

    /// Whether any event is filed for cycle `at` or an earlier one (none is, before the cycle
    /// being processed).
    #[inline]
    pub fn has(&self, at: u64) -> bool {
        !self.wheel[(at % HORIZON) as usize].is_empty()
    }

    /// Whether any event is filed for cycle `at` (not before the last cycle taken), in the wheel
    /// or still in the heap.
    #[inline]
    pub fn due(&self, at: u64) -> bool {
        self.has(at) || self.far.peek().is_some_and(|Reverse((c, _))| *c <= at)
    }

    /// The first cycle from `from` on with an event, or `None` before `until`.
    pub fn next_busy(&self, from: u64, until: u64) -> Option<u64> {
        let far = self.far.peek().map_or(u64::MAX, |Reverse((at, _))| *at);
        let near = (from..until.min(from + HORIZON)).find(|&c| self.has(c));
        let first = near.unwrap_or(u64::MAX).min(far);
        (first < until).then_some(first)
    }

    /// Every event filed, in no particular order (for the invariant checks).
    pub fn all(&self) -> impl Iterator<Item = &Ev> + '_ {
        self.wheel
            .iter()
            .flatten()
            .chain(self.far.iter().map(|Reverse((_, ev))| ev))
    }
}
