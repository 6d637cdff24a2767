//! When an end node may skip cycles: the tests that nothing arrives, nothing is generated and no
//! packet can start before a given cycle. State kept for speed, apart from the HCA's registers.

use super::*;

impl<const V: usize> EndNode<V> {
    /// Whether, with nothing arriving, the node would change no register in the cycles
    /// `from ..= to`: no message, no tail, no packet could start, no ARN entry lives.
    #[inline]
    pub fn quiet_through(&self, from: u64, to: u64) -> bool {
        to < self.wake && !self.deciding(from)
    }

    /// After stepping cycle `last`: the first cycle the node has to step if nothing arrives for
    /// it, so that the cycles `last + 1 .. due` are [`EndNode::quiet_through`] (nothing that
    /// passing cycles change can make it decide again).
    #[inline]
    pub fn due_after(&self, last: u64) -> u64 {
        if self.deciding(last + 1) {
            last + 1
        } else {
            self.wake.max(last + 1)
        }
    }

    /// Passes quiet cycles up to `now` (see [`EndNode::quiet_through`]).
    #[inline]
    pub fn skip_to(&mut self, now: u64) {
        self.now = now;
    }

    /// Whether the node has a decision to take in cycle `now` whatever arrives: a regular head
    /// that a live ARN entry may move to the AFC queue, or may stop isolating when it expires.
    #[inline]
    pub(super) fn deciding(&self, now: u64) -> bool {
        now < self.arn_live_until && !self.queue.is_empty()
    }

    /// With the injector free after cycle `now`: the first cycle after it in which a queue head
    /// could start, if nothing arrives meanwhile (credit records and ARNs wake the node): the
    /// credits coming back at their current rate reach its length. Not later than the next cycle
    /// while ARN entries live (they decide which queue a head goes to).
    pub(super) fn start_possible(&self, now: u64) -> u64 {
        if now + 1 < self.arn_live_until {
            return now + 1;
        }
        let fit = |vc: u8, len: u16| {
            let have = self.credits.credits(vc as usize, now);
            if have >= len {
                return now + 1;
            }
            match self.credits.running(vc as usize) {
                0 => u64::MAX,
                rate => now + 1 + ((len - have) as u64).div_ceil(rate),
            }
        };
        let regular = self.queue.front().map_or(u64::MAX, |h| fit(h.vc, h.len));
        let isolated = match (self.params.afc(), self.afc_queue.front()) {
            (Some(afc), Some(h)) => fit(afc, h.len),
            _ => u64::MAX,
        };
        regular.min(isolated)
    }
}
