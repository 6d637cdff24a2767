//! `flow_unit.sv` on the event engine: flow routing's route cache of every flat input and flow
//! count of every flat output (`crate::switch::flow` says what they decide). A switch's heads
//! of cycle `r` are routed in input order (`routing_stage.rs`): each reads its cache as of the
//! start of `r`, its command applied at once (the input routes no other head before `r + 1`),
//! and the counts with the changes of the heads routed before it in `r`, kept apart until the
//! cycle is over.

use crate::blocks::route_cache::{Gcid, RouteCacheCmd, RouteCacheEntry, lookup, next_state};
use crate::switch::flow::counted;

/// Route caches and flow counts of every switch.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct FlowState {
    /// Entries per route cache.
    entries: usize,
    /// Per flat input, its `entries` slots.
    caches: Vec<RouteCacheEntry>,
    /// Per flat output: its count as of the start of cycle `pending.0`, and the change the heads
    /// routed through it in that cycle made.
    counts: Vec<u16>,
    pending: Vec<(u64, i32)>,
}

impl FlowState {
    /// Empty caches of `entries` slots and zero counts for `ports` flat ports.
    pub(super) fn new(ports: usize, entries: usize) -> Self {
        FlowState {
            entries,
            caches: vec![RouteCacheEntry::default(); ports * entries],
            counts: vec![0; ports],
            pending: vec![(0, 0); ports],
        }
    }

    fn slots(&self, input: u32) -> &[RouteCacheEntry] {
        let k = input as usize * self.entries;
        &self.caches[k..k + self.entries]
    }

    /// The port flat input `input`'s cache holds for `g`.
    #[inline]
    pub(super) fn cached(&self, input: u32, g: Gcid) -> Option<u8> {
        lookup(self.slots(input), g)
    }

    /// Whether flat input `input`'s cache is full.
    #[inline]
    pub(super) fn full(&self, input: u32) -> bool {
        self.slots(input).iter().all(|e| e.valid)
    }

    /// Flat output `out`'s count as a head routed in cycle `r` reads it: as of the start of `r`,
    /// with the changes of the heads routed before it in `r`.
    #[inline]
    pub(super) fn count(&self, out: u32, r: u64) -> u16 {
        // Before `r` the pending changes are the last cycle's, the register's at the start of
        // `r`; in `r` they are the changes so far: either way they add to the stored count.
        debug_assert!(self.pending[out as usize].0 <= r);
        let (_, delta) = self.pending[out as usize];
        counted(self.counts[out as usize], delta)
    }

    /// A head routed in cycle `r` at flat input `input` to flat output `out`: its command and
    /// its count change.
    pub(super) fn routed(&mut self, input: u32, cmd: RouteCacheCmd, out: u32, change: i8, r: u64) {
        if cmd != RouteCacheCmd::Idle {
            let k = input as usize * self.entries;
            next_state(&mut self.caches[k..k + self.entries], cmd);
        }
        if change != 0 {
            let o = out as usize;
            let (c, delta) = self.pending[o];
            if c < r {
                self.counts[o] = counted(self.counts[o], delta);
                self.pending[o] = (r, 0);
            }
            self.pending[o].1 += change as i32;
        }
    }
}
