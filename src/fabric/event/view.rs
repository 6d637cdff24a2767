//! A switch of the event engine as a waveform reads it: the values its registers hold at the end
//! of a cycle, from the event engine's state and the closed forms between events (flits of a
//! packet arriving or leaving one a cycle, credits streaming back, the ARN table's TTLs running
//! out, a detector holding between its evaluations). They are the values the cycle engine's
//! switch holds in that cycle (`docs/waveforms.md`), which the dump tests compare byte for byte.
//! Which switches, and which of their values, are read in a cycle: `sampler.rs`.

use super::*;
use crate::switch::OutputProbe;

/// Switch `switch` of a part of the event engine (its flat port 0 `first`), read as of the end
/// of cycle `now` (a cycle the part has stepped through, and none of its events after it).
pub(super) struct SwitchView<'a, const V: usize> {
    core: &'a EventCore<V>,
    switch: u32,
    first: usize,
    now: u64,
}

impl<'a, const V: usize> SwitchView<'a, V> {
    #[inline(always)]
    pub(super) fn new(core: &'a EventCore<V>, switch: u32, first: u32, now: u64) -> Self {
        SwitchView {
            core,
            switch,
            first: first as usize,
            now,
        }
    }

    /// Valid entries of the ARN table (`count_o`).
    pub fn arn_entries(&self) -> u64 {
        self.core
            .arn
            .as_ref()
            .map_or(0, |a| a.entries_at(self.switch as usize, self.now))
    }

    /// For each packet an output is sending: `each(its input, its VC there, its flits gone out)`,
    /// as [`SwitchView::occupancy`] counts them.
    #[inline(always)]
    pub fn leaving(&self, each: impl FnMut(usize, usize, u64)) {
        self.core.leaving(self.first, self.now, each)
    }

    /// Flits of input `port`'s `vc`: arrived, less those gone, `leaving` of them in packets
    /// leaving through outputs of the switch (counted flit by flit, [`SwitchView::leaving`]).
    #[inline(always)]
    pub fn occupancy(&self, port: usize, vc: usize, leaving: u64) -> u64 {
        self.core.held(self.first + port, vc, self.now, leaving)
    }

    /// The credit counters of output `port`, to be read as of the end of the cycle
    /// (`OutputCredits::credits`, through the view's cycle).
    #[inline(always)]
    pub fn credits(&self, port: usize) -> &'a OutputCredits<V> {
        &self.core.outputs[self.first + port].credits
    }

    /// The cycle read.
    #[inline(always)]
    pub fn now(&self) -> u64 {
        self.now
    }

    /// What output `port`'s waveform shows: the packet granted or being sent (from the cycle of
    /// its grant to the one before its tail's), and its congestion detector.
    pub fn output_probe(&self, port: usize) -> OutputProbe {
        let c = self.core;
        let j = self.first + port;
        let (busy, pkt, vc) = match c.outputs[j].tx {
            Some(tx) => (true, c.slots[tx.slot as usize].pkt, tx.next_vc),
            None => (false, Packet::default(), 0),
        };
        let (state, over) = c.arn.as_ref().map_or((0, 0), |a| {
            let r = a.dets[j].regs();
            (r.state as u8, r.over)
        });
        OutputProbe {
            busy,
            packet: pkt.id,
            src: pkt.src,
            dlid: pkt.dlid,
            len: pkt.len,
            vc,
            adapted: pkt.adapted(),
            det_state: state,
            crossed: over.count_ones() as u8,
        }
    }
}
