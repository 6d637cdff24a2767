//! The deadlock watchdog on the event engine (the `progress` invariant of `docs/switch.md`): each
//! part notes the last cycle a packet's head or tail left one of its outputs or end nodes, and
//! at the watchdog's looks (the end of every `WATCH_EVERY`-th cycle,
//! [`crate::fabric::invariants::watchdog_looks`]) with no progress for the watchdog's cycles, a
//! fabric with flits in its input buffers or packets waiting at its end nodes has deadlocked.
//! The looks and the report are those of the cycle engine's fabric, cycle for cycle. A look
//! that finds nothing finds nothing until something happens again, so a stretch of cycles
//! with nothing in flight (a rank's compute phase) costs one look.

use super::*;
use crate::fabric::invariants::{WATCH_EVERY, deadlock};

/// Why a part stopped stepping before the end of a run.
#[derive(Debug)]
pub(super) enum Halt {
    /// A broken invariant, seen by this part.
    Breach(Violation),
    /// The watchdog's look at the end of this cycle found the fabric deadlocked.
    Deadlock(u64),
}

impl From<Violation> for Halt {
    fn from(v: Violation) -> Self {
        Halt::Breach(v)
    }
}

/// The first cycle of `from..to` at whose end the watchdog looks and would find no progress
/// since `progress` for `cycles` cycles.
pub(super) fn first_look(from: u64, to: u64, progress: u64, cycles: u64) -> Option<u64> {
    let c = from.max(progress.saturating_add(cycles));
    let look = (c / WATCH_EVERY + 1).checked_mul(WATCH_EVERY)? - 1;
    (look < to).then_some(look)
}

impl<const V: usize> EventCore<V> {
    /// A packet's head or tail leaves in `now`, the cycle being processed.
    #[inline(always)]
    pub(super) fn moved(&mut self, now: u64) {
        self.last_progress = self.progress_through(now).max(now);
    }

    /// A packet granted in `now` starts its hop in `now + 1`.
    #[inline(always)]
    pub(super) fn moves_next(&mut self, now: u64) {
        self.last_progress = self.progress_through(now);
        self.head_progress = now + 1;
    }

    /// The last cycle up to `c` in which a packet's head or tail left one of this part's
    /// outputs or nodes (0 when none has).
    pub(super) fn progress_through(&self, c: u64) -> u64 {
        if self.head_progress <= c {
            self.last_progress.max(self.head_progress)
        } else {
            self.last_progress
        }
    }

    /// The first cycle from `now` on (before `end`) with something to do, or `end`.
    pub(super) fn next_cycle(&self, now: u64, end: u64) -> u64 {
        if now >= end || self.busy(now) {
            return now.min(end);
        }
        self.cal.next_busy(now + 1, end).unwrap_or(end)
    }

    /// The input buffers of this part holding flits after cycle `now`: (flat input, VC, flits),
    /// in input and VC order.
    pub(super) fn blocked(&self, now: u64) -> impl Iterator<Item = (usize, usize, u64)> + '_ {
        (0..self.ins.len())
            .filter(|&j| self.owner[j] == self.part)
            .flat_map(move |j| {
                let flits = self.buffered(j, now);
                (0..self.vcs).map(move |v| (j, v, flits(v)))
            })
            .filter(|&(_, _, flits)| flits > 0)
    }

    /// Whether this part holds flits in its switches' input buffers or packets at its end
    /// nodes after cycle `now`.
    pub(super) fn stuck(&self, env: &Env<V>, now: u64) -> bool {
        if self.blocked(now).next().is_some() {
            return true;
        }
        (0..env.node_count() as u32).any(|n| {
            // SAFETY: read only, by the part owning the node, while it holds no other
            // reference to it.
            self.owns_node(n) && unsafe { env.node(n) }.is_busy()
        })
    }
}

impl<const V: usize> EventEngine<V> {
    /// The deadlock report of the watchdog's look at the end of cycle `now`, over every part.
    pub(super) fn deadlock_report(&self, now: u64) -> Violation {
        let parts = self.locked();
        let mut progress = parts
            .iter()
            .map(|p| p.progress_through(now))
            .max()
            .unwrap_or(0);
        let mut blocked: Vec<(usize, usize, u64)> =
            parts.iter().flat_map(|p| p.blocked(now)).collect();
        if let Some(r) = self.ranks() {
            // Every rank's inputs, and the latest progress of any.
            let mut mine = vec![progress];
            mine.extend(
                blocked
                    .iter()
                    .flat_map(|&(j, v, n)| [j as u64, v as u64, n]),
            );
            let all = r.gather(&mine);
            progress = all
                .iter()
                .filter_map(|w| w.first().copied())
                .max()
                .unwrap_or(0);
            blocked = all
                .iter()
                .flat_map(|w| w.get(1..).unwrap_or_default().chunks_exact(3))
                .map(|t| (t[0] as usize, t[1] as usize, t[2]))
                .collect();
        }
        // Each part lists its own inputs; the report goes in switch, port and VC order.
        blocked.sort_unstable();
        let one = &parts[0];
        let named: Vec<(u32, usize, usize, u64)> = blocked
            .into_iter()
            .map(|(j, v, n)| {
                let at = one.ins[j].place;
                (at.switch, at.port as usize, v, n)
            })
            .collect();
        deadlock(now, progress, &named)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_look_is_a_look_cycle_past_the_watchdog() {
        assert_eq!(first_look(0, 10_000, 0, 1000), Some(1023));
        assert_eq!(first_look(0, 1023, 0, 1000), None);
        assert_eq!(first_look(2000, 10_000, 0, 1000), Some(2047));
        assert_eq!(first_look(0, 10_000, 1047, 1000), Some(2047));
        assert_eq!(first_look(0, 10_000, 1048, 1000), Some(2303));
        assert_eq!(first_look(0, u64::MAX, u64::MAX - 5, 1000), None);
    }
}
