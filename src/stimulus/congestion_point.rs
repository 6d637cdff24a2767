//! Random arrivals and queues for the congestion points, in phases.
//!
//! Each phase draws the settings (Qeq off one phase in eight, small or large; w from 0 to 255;
//! sample intervals of 0, 1, a few packets or many), the arrival rate per input, how many
//! outputs the arrivals go to (one in eight of them beyond the switch's ports) and the packets'
//! lengths. Each output's queue walks up and down from phase to phase (so the queue's growth
//! `Q - Qold` takes both signs), with one phase in six at extreme values (0, all bits set).

use super::{SplitMix64, Stimulus};
use crate::blocks::congestion_point::QcnPoint;
use crate::blocks::congestion_point::{Arrival, CongestionPointIn, MAX_PORTS};

/// Seeded random stimulus for the congestion points of a `ports`-port switch.
#[derive(Clone, Debug)]
pub struct RandomArrivals {
    ports: usize,
    rng: SplitMix64,
    left: u64,
    cp: QcnPoint,
    arrive_num: u64,
    outs: u64,
    max_len: u64,
    wide: bool,
    queue: [u32; MAX_PORTS],
}

impl RandomArrivals {
    /// Stream for `ports` ports (1 to 64) of `seed`.
    pub fn new(ports: usize, seed: u64) -> Self {
        assert!((1..=MAX_PORTS).contains(&ports));
        RandomArrivals {
            ports,
            rng: SplitMix64::new(seed),
            left: 0,
            cp: QcnPoint::default(),
            arrive_num: 0,
            outs: 1,
            max_len: 1,
            wide: false,
            queue: [0; MAX_PORTS],
        }
    }

    fn phase(&mut self) {
        let r = &mut self.rng;
        self.left = 8 + r.below(300);
        self.cp = QcnPoint {
            qeq: match r.below(8) {
                0 => 0,
                1 => u32::MAX,
                2..=4 => 1 + r.below(64) as u32,
                _ => 1 + r.below(4000) as u32,
            },
            w: [0, 1, 2, 2, 4, 255][r.below(6) as usize],
            sample: match r.below(6) {
                0 => 0,
                1 => 1,
                5 => 1000 + r.below(100_000) as u32,
                _ => 1 + r.below(300) as u32,
            },
        };
        self.arrive_num = [4, 16, 32, 64][r.below(4) as usize];
        self.outs = 1 + r.below(self.ports as u64 + 1);
        self.max_len = [1, 8, 64, 300, 0x1_0000][r.below(5) as usize];
        self.wide = r.chance(1, 6);
    }
}

impl Stimulus<CongestionPointIn> for RandomArrivals {
    fn next(&mut self, _cycle: u64) -> CongestionPointIn {
        if self.left == 0 {
            self.phase();
        }
        self.left -= 1;
        let mut inp = CongestionPointIn {
            cp: self.cp,
            ..Default::default()
        };
        for a in inp.arrivals.iter_mut().take(self.ports) {
            if !self.rng.chance(self.arrive_num, 64) {
                continue;
            }
            let out = if self.rng.chance(1, 8) {
                [self.ports as u8, 0x80, 0xff][self.rng.below(3) as usize]
            } else {
                (self.rng.below(self.outs) % self.ports as u64) as u8
            };
            let len = self.rng.below(self.max_len + 1) as u16;
            *a = Some(Arrival { out, len });
        }
        for (q, walk) in inp
            .queue
            .iter_mut()
            .zip(self.queue.iter_mut())
            .take(self.ports)
        {
            let step = self.rng.below(64) as u32;
            *walk = if self.rng.chance(1, 2) {
                walk.saturating_add(step).min(20_000)
            } else {
                walk.saturating_sub(step)
            };
            *q = if self.wide {
                [0, 1, u32::MAX, 1 << 31][self.rng.below(4) as usize]
            } else {
                *walk
            };
        }
        inp
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::{Block, CongestionPoint};

    #[test]
    fn the_stream_samples_in_every_regime_within_its_first_20000_cycles() {
        let mut s = RandomArrivals::new(4, 0xBAD);
        let mut b = CongestionPoint::new(4);
        let (mut off, mut samples, mut saturated, mut least) = (0, 0, 0, 0);
        for c in 0..20_000 {
            let inp = s.next(c);
            let out = b.step(&inp);
            let ready = (0..4).any(|i| {
                inp.arrivals[i].is_some_and(|a| a.out < 4 && b.regs(a.out as usize).left <= 64)
            });
            off += (inp.cp.qeq == 0 && ready) as u32;
            samples += out.sampled.count_ones();
            saturated += out.fb[..4].iter().filter(|&&f| f == 63).count();
            least += out.fb[..4].iter().filter(|&&f| f == 1).count();
        }
        assert!(
            off > 50 && samples > 1000 && saturated > 50 && least > 50,
            "off {off}, samples {samples}, saturated {saturated}, least {least}"
        );
    }
}
