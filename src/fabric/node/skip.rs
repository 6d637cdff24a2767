//! When an end node may skip cycles: the tests that nothing arrives, nothing is generated and no
//! packet can start before a given cycle. State kept for speed, apart from the HCA's registers.

use super::*;

impl<const V: usize> EndNode<V> {
    /// Whether, with nothing arriving, the node would change no register in the cycles
    /// `from ..= to`: no message, no tail, no packet could start, no live ARN entry expires
    /// while a packet waits.
    #[inline]
    pub fn quiet_through(&self, _from: u64, to: u64) -> bool {
        to < self.wake
    }

    /// After stepping cycle `last`: the first cycle the node has to step if nothing arrives for
    /// it, so that the cycles `last + 1 .. due` are [`EndNode::quiet_through`] (nothing that
    /// passing cycles change can make it decide again).
    #[inline]
    pub fn due_after(&self, last: u64) -> u64 {
        self.wake.max(last + 1)
    }

    /// Passes quiet cycles up to `now` (see [`EndNode::quiet_through`]).
    #[inline]
    pub fn skip_to(&mut self, now: u64) {
        self.now = now;
    }
}
