//! Random grants for a FECN marker, in phases.
//!
//! Each phase draws the settings (threshold off one phase in eight, low, high or at its
//! largest; a marking rate of 0, a few or the largest; a minimum length; the victim bit), the
//! grant rate, how often heads are short of credits, and the queues and lengths around the
//! threshold and the minimum length, so that every term of eligibility is met and missed by one.

use super::{SplitMix64, Stimulus};
use crate::blocks::fecn_marker::FecnMarking;
use crate::blocks::fecn_marker::{FecnMarkerIn, Grant};

/// Seeded random stimulus for one output's FECN marker.
#[derive(Clone, Debug)]
pub struct RandomGrants {
    rng: SplitMix64,
    left: u64,
    marking: FecnMarking,
    victim: bool,
    grant_num: u64,
    short_num: u64,
}

impl RandomGrants {
    /// Stream of `seed`.
    pub fn new(seed: u64) -> Self {
        RandomGrants {
            rng: SplitMix64::new(seed),
            left: 0,
            marking: FecnMarking::default(),
            victim: false,
            grant_num: 0,
            short_num: 0,
        }
    }
}

impl Stimulus<FecnMarkerIn> for RandomGrants {
    fn next(&mut self, _cycle: u64) -> FecnMarkerIn {
        let r = &mut self.rng;
        if self.left == 0 {
            self.left = 8 + r.below(400);
            self.marking = FecnMarking {
                threshold: match r.below(8) {
                    0 => 0,
                    1 => u16::MAX,
                    2..=4 => 1 + r.below(16) as u16,
                    _ => 1 + r.below(400) as u16,
                },
                rate: match r.below(6) {
                    0 => 0,
                    1 => u16::MAX,
                    _ => r.below(12) as u16,
                },
                min_len: r.below(24) as u16,
                victims: 0,
            };
            self.victim = r.chance(1, 2);
            self.grant_num = [8, 32, 64][r.below(3) as usize];
            self.short_num = [0, 16, 48][r.below(3) as usize];
        }
        self.left -= 1;
        let grant = r.chance(self.grant_num, 64).then(|| {
            let thr = self.marking.threshold as u32;
            let queue = match r.below(8) {
                0 => 0,
                1 => u32::MAX,
                _ => (thr + r.below(9) as u32).saturating_sub(4),
            };
            let min = self.marking.min_len as u64;
            Grant {
                queue,
                short: r.chance(self.short_num, 64),
                len: (min + r.below(7)).saturating_sub(3).min(u16::MAX as u64) as u16,
            }
        });
        FecnMarkerIn {
            marking: self.marking,
            victim: self.victim,
            grant,
        }
    }
}
