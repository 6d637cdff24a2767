//! The cache lines an end node reads first when it steps a window, asked for before it steps
//! (see `wire::prefetch`).

use super::EndNode;
use crate::wire::link::Channel;
use crate::wire::prefetch::prefetch;

impl<const V: usize> EndNode<V> {
    /// First stage, three units ahead: lines found from the node's own address.
    #[inline]
    pub fn prefetch_head(&self) {
        prefetch(self);
        prefetch(&self.wake);
        prefetch(&self.next_message);
        prefetch(&self.heads);
        prefetch(&self.tx);
        prefetch(&self.rx);
        prefetch(&self.stats);
        prefetch(&self.now);
        self.credits.prefetch(1);
    }

    /// Second stage, two units ahead: its two channels' headers and its flows.
    #[inline]
    pub fn prefetch_links(&self, channels: &[Channel<V>]) {
        for ch in [self.in_ch, self.out_ch] {
            if let Some(c) = channels.get(ch as usize) {
                prefetch(c);
            }
        }
        prefetch(self.flows.as_ptr());
    }

    /// Third stage, one unit ahead: the delay-line registers read in cycle `c`, for a
    /// flit arriving (`flit`) or a return (`back`).
    #[inline]
    pub fn prefetch_registers(&self, c: u64, flit: bool, back: bool, channels: &[Channel<V>]) {
        if flit && let Some(ch) = channels.get(self.in_ch as usize) {
            ch.prefetch_flit(c);
        }
        if back && let Some(ch) = channels.get(self.out_ch as usize) {
            ch.prefetch_back(c);
        }
    }
}
