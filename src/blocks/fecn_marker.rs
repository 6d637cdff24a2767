//! FECN marker (`fecn_marker.sv`): InfiniBand congestion control at one switch output (IBTA
//! annex A10; the SwitchCongestionSetting OpenSM programs).
//!
//! A grant is eligible when marking is on (`thr_i` not 0), the flits queued for the output at
//! the start of the cycle reach the threshold, the packet is at least `Packet_Size`
//! (`min_len_i`) and the output is not only a victim of congestion further on (`short_i`: some
//! head waiting for it lacks the credits to request) unless its bit of the victim mask is set
//! (`victim_i`). An eligible grant finding the counter at 0 is marked (`mark_o`) and reloads it
//! with `Marking_Rate` (`rate_i`); any other eligible grant counts it down.
//!
//! The decision is [`FecnMarking::grant`], which both engines call on their own copy of the
//! counter (one per output); this block is that decision stepped a cycle at a time for the
//! lockstep with its SystemVerilog twin, which `output_port.sv` instantiates.
//!
//! Widths: `thr_i`, `rate_i`, `min_len_i`, `len_i`, `count_q` 16 bits, `queue_i` 32.

use super::Block;
use super::probe::Visit;

/// A switch's FECN marking settings, as its output ports hold them (`cfg_t.fecn_*`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct FecnMarking {
    /// Flits queued for an output (summed over its inputs' VOQs) from which it is congested; 0
    /// turns marking off.
    pub threshold: u16,
    /// `Marking_Rate`: eligible packets left unmarked between two marked ones.
    pub rate: u16,
    /// `Packet_Size` in flits: shorter packets are never marked (nor counted by the rate).
    pub min_len: u16,
    /// `Victim_Mask`: bit p, output p marks even when it is only a victim.
    pub victims: u64,
}

/// The settings OpenSM programs by default: `Threshold` 15 (the most aggressive),
/// `Marking_Rate` 10, `Packet_Size` 8 credits (512 bytes), no port in the victim mask.
pub const OPENSM_THRESHOLD: u8 = 0xF;
/// OpenSM's default `Marking_Rate`.
pub const OPENSM_MARKING_RATE: u16 = 10;
/// OpenSM's default `Packet_Size`, in 64-byte credits.
pub const OPENSM_PACKET_SIZE: u8 = 8;

impl FecnMarking {
    /// Whether the outputs mark at all.
    #[inline]
    pub fn on(&self) -> bool {
        self.threshold != 0
    }

    /// The queue threshold in flits of the 4-bit `Threshold` `t` (0 none, 1 loose .. 15
    /// aggressive) for input buffers of `vc_capacity` flits per VC: `(16 - t) / 16` of one VC's
    /// buffer, at least one flit; 0 for `t` 0.
    pub fn queue_threshold(t: u8, vc_capacity: u16) -> u16 {
        match t {
            0 => 0,
            t => ((16 - t.min(15) as u32) * vc_capacity as u32 / 16).max(1) as u16,
        }
    }

    /// `Packet_Size` (64-byte credits) in flits of `flit_bytes`, rounded up.
    pub fn min_len(packet_size: u8, flit_bytes: u32) -> u16 {
        (packet_size as u32 * 64)
            .div_ceil(flit_bytes.max(1))
            .min(u16::MAX as u32) as u16
    }

    /// Whether output `port`'s grant of a `len`-flit packet while `queue` flits wait for it
    /// (and, when `short`, some head waiting for it lacks credits) counts for marking.
    #[inline]
    pub fn eligible(&self, port: usize, queue: u32, short: bool, len: u16) -> bool {
        self.on()
            && queue >= self.threshold as u32
            && len >= self.min_len
            && (!short || self.victims >> port & 1 == 1)
    }

    /// Output `port` grants a `len`-flit packet while `queue` flits wait for it (the start of the
    /// cycle's VOQ occupancies, summed over its inputs) and, when `short`, some head waiting for
    /// it lacks the credits to request: whether the packet leaves with FECN. `count` is the
    /// output's marking counter: an eligible packet finding it at 0 is marked and reloads it
    /// with the rate; any other eligible packet counts it down.
    #[inline]
    pub fn grant(&self, port: usize, queue: u32, short: bool, len: u16, count: &mut u16) -> bool {
        if !self.eligible(port, queue, short, len) {
            return false;
        }
        if *count == 0 {
            *count = self.rate;
            true
        } else {
            *count -= 1;
            false
        }
    }
}

/// One output's grant this cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Grant {
    /// `queue_i`: flits queued for the output at the start of the cycle.
    pub queue: u32,
    /// `short_i`: some head waiting for the output lacks the credits to request.
    pub short: bool,
    /// `len_i`: the granted packet's length in flits.
    pub len: u16,
}

/// This cycle's inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FecnMarkerIn {
    /// `thr_i`, `rate_i`, `min_len_i`: the switch's settings (threshold 0: off).
    pub marking: FecnMarking,
    /// `victim_i`: this port's bit of the victim mask.
    pub victim: bool,
    /// `gnt_i` and the grant.
    pub grant: Option<Grant>,
}

/// This cycle's outputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FecnMarkerOut {
    /// `elig_o`: the grant is eligible.
    pub eligible: bool,
    /// `mark_o`: the granted packet leaves with FECN.
    pub mark: bool,
}

/// One output's FECN marker.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FecnMarker {
    /// `count_q`: eligible grants to leave unmarked before the next mark.
    q: u16,
    d: u16,
}

impl FecnMarker {
    /// `count_q`.
    pub fn count(&self) -> u16 {
        self.q
    }

    /// Sets `count_q` (a test's planted bug starts here).
    pub fn set_count(&mut self, count: u16) {
        self.q = count;
    }
}

impl Block for FecnMarker {
    type In = FecnMarkerIn;
    type Out = FecnMarkerOut;
    const NAME: &'static str = "fecn_marker";

    fn reset(&mut self) {
        self.q = 0;
        self.d = 0;
    }

    fn evaluate(&mut self, inp: &FecnMarkerIn) -> FecnMarkerOut {
        self.d = self.q;
        let Some(g) = inp.grant else {
            return FecnMarkerOut::default();
        };
        // The port's bit of the mask stands at bit 0.
        let m = FecnMarking {
            victims: inp.victim as u64,
            ..inp.marking
        };
        FecnMarkerOut {
            eligible: m.eligible(0, g.queue, g.short, g.len),
            mark: m.grant(0, g.queue, g.short, g.len, &mut self.d),
        }
    }

    fn commit(&mut self) {
        self.q = self.d;
    }

    fn probe_inputs(&self, inp: &FecnMarkerIn, v: &mut dyn Visit) {
        let g = inp.grant.unwrap_or_default();
        v.bits("thr_i", 16, inp.marking.threshold as u128);
        v.bits("rate_i", 16, inp.marking.rate as u128);
        v.bits("min_len_i", 16, inp.marking.min_len as u128);
        v.bit("victim_i", inp.victim);
        v.bit("gnt_i", inp.grant.is_some());
        v.bits("queue_i", 32, g.queue as u128);
        v.bit("short_i", g.short);
        v.bits("len_i", 16, g.len as u128);
    }

    fn probe_outputs(&self, out: &FecnMarkerOut, v: &mut dyn Visit) {
        v.bit("elig_o", out.eligible);
        v.bit("mark_o", out.mark);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        v.bits("count_q", 16, self.q as u128);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_is_a_sixteenth_step_of_one_vc_buffer() {
        assert_eq!(FecnMarking::queue_threshold(0, 160), 0);
        assert_eq!(FecnMarking::queue_threshold(15, 160), 10);
        assert_eq!(FecnMarking::queue_threshold(8, 160), 80);
        assert_eq!(FecnMarking::queue_threshold(1, 160), 150);
        assert_eq!(FecnMarking::queue_threshold(15, 8), 1);
        assert_eq!(FecnMarking::min_len(8, 64), 8);
        assert_eq!(FecnMarking::min_len(8, 100), 6);
    }

    #[test]
    fn every_rate_plus_first_eligible_packet_is_marked() {
        let m = FecnMarking {
            threshold: 10,
            rate: 2,
            min_len: 4,
            victims: 0b10,
        };
        let mut count = 0;
        let marks: Vec<bool> = (0..7)
            .map(|_| m.grant(0, 10, false, 4, &mut count))
            .collect();
        assert_eq!(marks, [true, false, false, true, false, false, true]);
        // Below the threshold, short packets and victims are not eligible and leave the
        // counter alone.
        let before = count;
        assert!(!m.grant(0, 9, false, 4, &mut count));
        assert!(!m.grant(0, 10, false, 3, &mut count));
        assert!(!m.grant(0, 10, true, 4, &mut count));
        assert_eq!(count, before);
        // Port 1 is in the victim mask.
        let mut c1 = 0;
        assert!(m.grant(1, 10, true, 4, &mut c1));
        // Off.
        let off = FecnMarking::default();
        assert!(!off.grant(0, 1000, false, 100, &mut 0));
    }
}
