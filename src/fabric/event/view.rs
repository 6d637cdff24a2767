//! A switch of the event engine as a waveform reads it: the values its registers hold at the end
//! of a cycle, from the event engine's state and the closed forms between events (flits of a
//! packet arriving or leaving one a cycle, credits streaming back, the ARN table's TTLs running
//! out, a detector holding between its evaluations). They are the values the cycle engine's
//! switch holds in that cycle (`docs/waveforms.md`), which the dump tests compare byte for byte.

use super::*;
use crate::switch::OutputProbe;

/// Switch `switch` of a part of the event engine, read as of the end of cycle `now` (a cycle
/// the part has stepped through, and none of its events after it).
pub struct SwitchView<'a, const V: usize> {
    core: &'a EventCore<V>,
    switch: u32,
    now: u64,
}

impl<'a, const V: usize> SwitchView<'a, V> {
    pub(super) fn new(core: &'a EventCore<V>, switch: u32, now: u64) -> Self {
        SwitchView { core, switch, now }
    }

    /// Index of the switch in the fabric.
    pub fn id(&self) -> u32 {
        self.switch
    }

    /// The flat index of port `port`.
    fn flat(&self, port: usize) -> usize {
        self.core.first[self.switch as usize] as usize + port
    }

    /// Valid entries of the ARN table (`count_o`).
    pub fn arn_entries(&self) -> u64 {
        self.core
            .arn
            .as_ref()
            .map_or(0, |a| a.entries_at(self.switch as usize, self.now))
    }

    /// Flits of input `port`'s VCs: arrived, less those gone (a packet leaving through any
    /// output of the switch counted flit by flit).
    pub fn occupancy(&self, port: usize) -> impl Fn(usize) -> u64 + '_ {
        self.core.buffered(self.flat(port), self.now)
    }

    /// Free credits of output `port`'s `vc`.
    pub fn credits(&self, port: usize, vc: usize) -> u16 {
        self.core.outputs[self.flat(port)]
            .credits
            .credits(vc, self.now)
    }

    /// What output `port`'s waveform shows: the packet granted or being sent (from the cycle of
    /// its grant to the one before its tail's), and its congestion detector.
    pub fn output_probe(&self, port: usize) -> OutputProbe {
        let c = self.core;
        let j = self.flat(port);
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

impl<const V: usize> EventCore<V> {
    /// The switches and nodes of this part that `tap` has signals of.
    pub(super) fn tapped(&self, env: &Env<V>, tap: &dyn Tap<V>) -> (Vec<u32>, Vec<u32>) {
        let switches = (0..self.first.len() as u32)
            .filter(|&s| {
                self.owner[self.first[s as usize] as usize] == self.part && tap.taps_switch(s)
            })
            .collect();
        let nodes = (0..env.node_count() as u32)
            .filter(|&n| self.owns_node(n) && tap.taps_node(n))
            .collect();
        (switches, nodes)
    }

    /// Records the signals `tap` has of this part's switches and nodes `units` as of the end of
    /// each cycle of `cycles` (cycles stepped, with no event of this part after them).
    pub(super) fn sample(
        &mut self,
        env: &Env<V>,
        tap: &dyn Tap<V>,
        units: &(Vec<u32>, Vec<u32>),
        cycles: std::ops::Range<u64>,
    ) {
        let mut out = std::mem::take(&mut self.samples);
        for c in cycles {
            for &s in &units.0 {
                tap.view_signals(&SwitchView::new(self, s, c), c, &mut out);
            }
            for &n in &units.1 {
                // SAFETY: read only, by the part owning the node, holding no other reference.
                tap.node_signals(unsafe { env.node(n) }, c, &mut out);
            }
        }
        self.samples = out;
    }
}
