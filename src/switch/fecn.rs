//! InfiniBand congestion control at a switch output (IBTA annex A10; the SwitchCongestionSetting
//! that OpenSM programs): an output whose queue is over its threshold marks the packets it grants
//! with FECN, every `Marking_Rate + 1`-th eligible one, unless it is only a victim of congestion
//! further on (some packet waiting for it lacks credits downstream) and its port is not in the
//! victim mask; packets shorter than `Packet_Size` are never marked. `docs/ib_cc.md` says how the
//! four settings map onto the model's registers.
//!
//! Both engines call [`FecnMarking::grant`]; `hdl-ref/output_port.sv` is its twin.

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

    /// Output `port` grants a `len`-flit packet while `queue` flits wait for it (the start of the
    /// cycle's VOQ occupancies, summed over its inputs) and, when `short`, some head waiting for
    /// it lacks the credits to request: whether the packet leaves with FECN. `count` is the
    /// output's marking counter: an eligible packet finding it at 0 is marked and reloads it
    /// with the rate; any other eligible packet counts it down.
    #[inline]
    pub fn grant(&self, port: usize, queue: u32, short: bool, len: u16, count: &mut u16) -> bool {
        let eligible = self.on()
            && queue >= self.threshold as u32
            && len >= self.min_len
            && (!short || self.victims >> port & 1 == 1);
        if !eligible {
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
