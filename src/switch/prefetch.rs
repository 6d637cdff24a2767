//! The cache lines a switch reads first when it steps a window, asked for before it steps (see
//! `wire::prefetch`).

use super::{Switch, set_bits};
use crate::wire::link::Channel;
use crate::wire::prefetch::prefetch;

impl<const V: usize> Switch<V> {
    /// First stage, three units ahead: lines found from the switch's own address.
    #[inline]
    pub fn prefetch_head(&self) {
        prefetch(self);
        prefetch(&self.wiring);
        prefetch(&self.skip.next_wake);
        prefetch(&self.skip.det_quiet);
        prefetch(&self.now);
        prefetch(&self.inputs);
    }

    /// Second stage, two units ahead: the channel headers, input-buffer headers (and the slot the
    /// next head takes) and output credit counters of the ports with something arriving in the
    /// window (`flits`, `back`).
    #[inline]
    pub fn prefetch_ports(&self, flits: u64, back: u64, channels: &[Channel<V>]) {
        for p in set_bits(flits) {
            if let (Some(&ch), Some(inp)) = (self.wiring.in_ch.get(p), self.inputs.get(p)) {
                if let Some(c) = channels.get(ch as usize) {
                    prefetch(c);
                }
                prefetch(&inp.buf);
                inp.buf.prefetch_free();
            }
        }
        for p in set_bits(back) {
            if let (Some(&ch), Some(out)) = (self.wiring.out_ch.get(p), self.outputs.get(p)) {
                if let Some(c) = channels.get(ch as usize) {
                    prefetch(c);
                }
                prefetch(out);
                out.credits.prefetch(self.vcs);
            }
        }
    }

    /// Third stage, one unit ahead: the delay-line registers read in cycle `c`, for the
    /// ports with a flit arriving (`flits`) and those with a return arriving (`back`).
    #[inline]
    pub fn prefetch_registers(&self, c: u64, flits: u64, back: u64, channels: &[Channel<V>]) {
        let channel = |chs: &[u32], p: usize| chs.get(p).and_then(|&ch| channels.get(ch as usize));
        for p in set_bits(flits) {
            if let Some(ch) = channel(&self.wiring.in_ch, p) {
                ch.prefetch_flit(c);
            }
        }
        for p in set_bits(back) {
            if let Some(ch) = channel(&self.wiring.out_ch, p) {
                ch.prefetch_back(c);
            }
        }
    }
}
