//! Read-only views of a switch's registers, as the invariant checks, the waveform dump and the
//! tests read them: buffer and VOQ occupancies, credits, flits sent and received per port and
//! VC, the ARN table, and each output's probe.

use super::*;

impl<const V: usize> Switch<V> {
    /// Index in the fabric.
    pub fn id(&self) -> u32 {
        self.wiring.id
    }

    /// Cabling.
    pub fn wiring(&self) -> &SwitchWiring {
        &self.wiring
    }

    /// Parameters.
    pub fn params(&self) -> &SwitchParams {
        &self.params
    }

    /// The LFT as programmed.
    pub fn lft(&self) -> &LftBanks {
        &self.lft
    }

    /// The random stream of Oblivious routing's draws, as it stands.
    pub fn route_rng(&self) -> &SplitMix64 {
        &self.rng
    }

    /// The seed it was built with (the fabric's).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Counters.
    pub fn stats(&self) -> SwitchStats {
        let mut s = self.stats;
        s.flits_sent += self
            .outputs
            .iter()
            .filter_map(|o| o.tx)
            .map(|t| t.sent(self.now) as u64)
            .sum::<u64>();
        s
    }

    /// A count that grows whenever a packet starts or finishes leaving the switch (the
    /// fabric's deadlock watchdog reads it; cheaper than [`Switch::stats`]).
    pub fn progress(&self) -> u64 {
        self.stats.flits_sent + self.stats.packets_sent
    }

    /// The ARN table.
    pub fn arn_table(&self) -> &ArnTable {
        &self.arn
    }

    /// The input buffer of `port`.
    pub fn input_buffer(&self, port: usize) -> &VoqBuffer<V> {
        &self.inputs[port].buf
    }

    /// Flits in input `port`'s VC `vc`.
    pub fn buffered(&self, port: usize, vc: usize) -> u16 {
        self.inputs[port].buf.occupancy(vc, self.now)
    }

    /// Flits in each VC lane of input `port` ([`Switch::buffered`] of every lane at once).
    pub fn buffered_lanes(&self, port: usize) -> [u16; V] {
        self.inputs[port].buf.occupancies(self.now)
    }

    /// Flits in input `port`'s buffer, over all VCs.
    pub fn buffered_flits(&self, port: usize) -> u32 {
        self.inputs[port].buf.flits(self.now)
    }

    /// Flits in input `port`'s VOQ for output `out`, over all VCs.
    pub fn voq_occupancy(&self, port: usize, out: usize) -> u16 {
        self.inputs[port].buf.voq_occupancy(out, self.now)
    }

    /// Free credits of (output `port`, `vc`).
    pub fn credits(&self, port: usize, vc: usize) -> u16 {
        self.outputs[port].credits.credits(vc, self.now)
    }

    /// Credits of (output `port`, `vc`) whose return has started but not yet arrived.
    pub fn credits_returning(&self, port: usize, vc: usize) -> u64 {
        self.outputs[port].credits.pending(vc, self.now)
    }

    /// Flits of input `port`'s VC `vc` whose credit streams have started (their packets are
    /// leaving) but that have not left yet: announced upstream, still in the buffer.
    pub fn credits_announced(&self, port: usize, vc: usize) -> u64 {
        let buf = &self.inputs[port].buf;
        self.outputs
            .iter()
            .filter_map(|o| o.tx)
            // A packet that won its output in this cycle starts leaving in the next.
            .filter(|t| t.sent(self.now) > 0 && t.input as usize == port)
            .filter(|t| buf.slot(t.slot).pkt.vc as usize == vc)
            .map(|t| (t.len - t.sent(self.now)) as u64)
            .sum()
    }

    /// Flits output `port` sent on VC `vc` (of the next buffer) since the start.
    pub fn flits_sent(&self, port: usize, vc: usize) -> u64 {
        self.outputs[port].credits.sent(vc, self.now)
    }

    /// Flits input `port` received on VC `vc` since the start.
    pub fn flits_received(&self, port: usize, vc: usize) -> u64 {
        self.inputs[port].buf.received(vc, self.now)
    }

    /// What a waveform shows of output `port`: busy, the packet being sent (id and header fields),
    /// detector state and crossed set.
    pub fn output_probe(&self, port: usize) -> OutputProbe {
        let o = &self.outputs[port];
        let r = o.detector.regs();
        let pkt = o.tx.map(|t| {
            (
                self.inputs[t.input as usize].buf.slot(t.slot).pkt,
                t.next_vc,
            )
        });
        let (p, vc) = pkt.unwrap_or_default();
        OutputProbe {
            busy: o.tx.is_some(),
            packet: p.id,
            src: p.src,
            dlid: p.dlid,
            len: p.len,
            vc,
            adapted: p.adapted(),
            det_state: r.state as u8,
            // Usually empty; the test spares the bit count (a long sequence on baseline x86-64).
            crossed: if r.over == 0 {
                0
            } else {
                r.over.count_ones() as u8
            },
        }
    }

    /// Output `port`'s probe as three words that differ whenever [`Switch::output_probe`] does:
    /// the transmission under way (its start cycle, input, slot, next VC and length: a packet's
    /// header does not change once it is routed, and an output starts one transmission per
    /// cycle at most), the detector state, and the crossed set as its bits rather than their
    /// count; and the output's credit counters, which [`Switch::credits`] reads at the end of
    /// cycle [`Switch::now`]. The waveform dump reads both every cycle (the output looked up
    /// once), and the probe only when the words changed.
    #[inline]
    pub fn output_probe_key(&self, port: usize) -> ([u64; 3], &OutputCredits<V>) {
        let o = &self.outputs[port];
        let r = o.detector.regs();
        let (start, tx) = match o.tx {
            Some(t) => (
                t.start,
                1 | (t.input as u64) << 1
                    | (t.slot as u64) << 9
                    | (t.next_vc as u64) << 25
                    | (t.len as u64) << 33,
            ),
            None => (0, 0),
        };
        ([start, tx | (r.state as u64) << 49, r.over], &o.credits)
    }

    /// The cycle it has stepped last.
    #[inline]
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Stage of the switch.
    pub fn stage(&self) -> u8 {
        self.wiring.stage
    }

    /// Number of VCs per port.
    pub fn vcs(&self) -> usize {
        self.vcs
    }

    /// Number of ports.
    pub fn ports(&self) -> usize {
        self.ports
    }

    /// Whether the detector of output `port` holds a root.
    pub fn is_root(&self, port: usize) -> bool {
        self.outputs[port].root.is_some()
    }

    /// Whether nothing is stored, in flight inside, or pending.
    pub fn is_idle(&self) -> bool {
        self.inputs
            .iter()
            .all(|i| i.buf.packets() == 0 && i.arn_out.is_empty())
            && self
                .outputs
                .iter()
                .all(|o| o.tx.is_none() && o.next.is_none())
    }
}
