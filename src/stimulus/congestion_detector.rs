//! Random VOQ occupancies, head packets and downstream credits for the congestion detector.
//!
//! Every input port is a random walk of its VOQ occupancy and of the free credits of its head
//! packet's downstream VC, each drifting toward a target with some noise. Targets come from a
//! regime that lasts from a few dozen to several CRT periods and is shared by all inputs, so
//! that roots are declared, held and released again and again:
//! - `Calm`: every VOQ drifts under LCDTh (roots are released);
//! - `Hotspot`: one to three VOQs drift above HCDTh, mostly with room downstream (roots), some
//!   without (branches); sometimes the hot VOQs move in lockstep so that the offending input is
//!   chosen among equal occupancies;
//! - `Hover`: occupancies and credits sit within a few units of HCDTh, LCDTh and FCTh, so the
//!   comparisons meet their exact boundaries and the CRT timer is often cancelled;
//! - `Storm`: targets anywhere in the 16-bit range, including 0 and 0xFFFF, with random head
//!   validity;
//! - `Drain`: every VOQ empties.

use super::{SplitMix64, Stimulus};
use crate::blocks::congestion_detector::{CongestionDetectorIn, DetectorConfig, MAX_INPUTS};

/// The regime shared by all inputs for a while.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Regime {
    Calm,
    Hotspot,
    Hover,
    Storm,
    Drain,
}

/// The walk of one input port.
#[derive(Clone, Copy, Debug, Default)]
struct Lane {
    occ_target: u16,
    fc_target: u16,
    hot: bool,
    room: bool,
}

/// Seeded regime-driven random walks for a detector of configuration `cfg`.
#[derive(Clone, Debug)]
pub struct RandomCongestion {
    cfg: DetectorConfig,
    rng: SplitMix64,
    occ_max: u16,
    fc_max: u16,
    regime: Regime,
    left: u32,
    step: u16,
    fc_step: u16,
    noise: u16,
    invalid_num: u64,
    tied: bool,
    lanes: [Lane; MAX_INPUTS],
    cur: CongestionDetectorIn,
}

impl RandomCongestion {
    /// Stream for a detector of configuration `cfg`.
    pub fn new(cfg: DetectorConfig, seed: u64) -> Self {
        // The buffer behind HCDTh (81 %) and the VC behind FCTh (78 %), with a little headroom.
        let occ_max = (cfg.hcdth as u32 * 100 / 81 + 8).min(0xFFFF) as u16;
        let fc_max = (cfg.fcth as u32 * 100 / 78 + 8).min(0xFFFF) as u16;
        RandomCongestion {
            cfg,
            rng: SplitMix64::new(seed),
            occ_max,
            fc_max,
            regime: Regime::Calm,
            left: 0,
            step: 1,
            fc_step: 1,
            noise: 0,
            invalid_num: 0,
            tied: false,
            lanes: [Lane::default(); MAX_INPUTS],
            cur: CongestionDetectorIn::default(),
        }
    }

    fn range(&mut self, lo: u16, hi: u16) -> u16 {
        if hi <= lo {
            return lo;
        }
        lo + self.rng.below((hi - lo) as u64 + 1) as u16
    }

    /// A value within `spread` of `center`, saturating at the 16-bit limits.
    fn near(&mut self, center: u16, spread: u16) -> u16 {
        let off = self.rng.below(2 * spread as u64 + 1) as i32 - spread as i32;
        (center as i32 + off).clamp(0, 0xFFFF) as u16
    }

    fn retarget(&mut self, i: usize) {
        let (h, l, f) = (self.cfg.hcdth, self.cfg.lcdth, self.cfg.fcth);
        let (occ_max, fc_max) = (self.occ_max, self.fc_max);
        let lane = self.lanes[i];
        let (occ, fc) = match self.regime {
            Regime::Calm => {
                let occ = self.range(0, l.saturating_sub(1));
                (occ, self.range(0, fc_max))
            }
            Regime::Hotspot if lane.hot => {
                let occ = self.range(h.saturating_add(1), occ_max.max(h.saturating_add(1)));
                let fc = if lane.room {
                    self.range(f.saturating_add(1), fc_max.max(f.saturating_add(1)))
                } else {
                    self.range(0, f)
                };
                (occ, fc)
            }
            Regime::Hotspot => (self.range(0, h), self.range(0, fc_max)),
            Regime::Hover => {
                let center = if self.rng.chance(1, 2) { h } else { l };
                (self.near(center, 3), self.near(f, 2))
            }
            Regime::Storm => {
                let occ = match self.rng.below(8) {
                    0 => 0,
                    1 => 0xFFFF,
                    2 => self.near(h, 2),
                    _ => self.rng.next_u64() as u16,
                };
                let fc = match self.rng.below(8) {
                    0 => 0,
                    1 => 0xFFFF,
                    2 => self.near(f, 2),
                    _ => self.rng.next_u64() as u16,
                };
                (occ, fc)
            }
            Regime::Drain => (0, self.range(0, fc_max)),
        };
        self.lanes[i].occ_target = occ;
        self.lanes[i].fc_target = fc;
    }

    fn new_regime(&mut self) {
        let p = self.cfg.inputs;
        let crt = self.cfg.crt.value() as u64;
        self.left = 32 + self.rng.below((4 * crt).clamp(256, 1 << 16)) as u32;
        let after_hotspot = self.regime == Regime::Hotspot;
        self.regime = match self.rng.below(16) {
            // A hot spot is often followed by its cool-down, so roots are released.
            _ if after_hotspot && self.rng.chance(1, 2) => Regime::Calm,
            0..=3 => Regime::Calm,
            4..=9 => Regime::Hotspot,
            10..=12 => Regime::Hover,
            13..=14 => Regime::Storm,
            _ => Regime::Drain,
        };
        let scale = (self.occ_max / 16).max(1);
        let fc_scale = (self.fc_max / 16).max(1);
        (self.step, self.fc_step, self.noise) = match self.regime {
            // Fast to the threshold, then within one unit of it.
            Regime::Hover => (scale, fc_scale, 1),
            Regime::Storm => (0x2000, 0x2000, 0x400),
            _ => {
                let step = self.range(1, scale);
                (step, self.range(1, fc_scale), step / 4)
            }
        };
        self.invalid_num = match self.regime {
            Regime::Hover => 2,
            Regime::Storm => 8,
            _ if self.rng.chance(1, 4) => 1,
            _ => 0,
        };
        if self.regime == Regime::Storm {
            self.left = 16 + self.left / 8;
        } else {
            // Back from a storm: a VOQ holds at most the buffer, a VC at most its credits.
            for i in 0..p {
                self.cur.voq_occ[i] = self.cur.voq_occ[i].min(self.occ_max);
                self.cur.head_fc[i] = self.cur.head_fc[i].min(self.fc_max);
            }
        }
        let hot_count = 1 + self.rng.below(3.min(p as u64)) as usize;
        let mut hot = 0u64;
        while (hot.count_ones() as usize) < hot_count {
            hot |= 1 << self.rng.below(p as u64);
        }
        self.tied = self.regime == Regime::Hotspot && hot_count > 1 && self.rng.chance(1, 3);
        for i in 0..p {
            self.lanes[i].hot = (hot >> i) & 1 == 1;
            self.lanes[i].room = self.rng.chance(3, 4);
            self.retarget(i);
        }
    }

    /// Moves `x` toward `target` by up to `step`, then adds up to `noise` either way.
    fn walk(&mut self, x: u16, target: u16, step: u16, noise: u16) -> u16 {
        let mv = 1 + self.rng.below(step.max(1) as u64) as u16;
        let x = if x < target {
            x.saturating_add(mv).min(target)
        } else {
            x.saturating_sub(mv).max(target)
        };
        if noise == 0 {
            return x;
        }
        let n = self.rng.below(noise as u64 + 1) as u16;
        if self.rng.chance(1, 2) {
            x.saturating_add(n)
        } else {
            x.saturating_sub(n)
        }
    }
}

impl Stimulus<CongestionDetectorIn> for RandomCongestion {
    fn next(&mut self, _cycle: u64) -> CongestionDetectorIn {
        if self.left == 0 {
            self.new_regime();
        }
        self.left -= 1;
        let p = self.cfg.inputs;
        let mut leader: Option<u16> = None;
        for i in 0..p {
            let retarget = if self.regime == Regime::Hover {
                32
            } else {
                128
            };
            if self.rng.chance(1, retarget) {
                self.retarget(i);
            }
            let lane = self.lanes[i];
            let occ = match leader {
                Some(occ) if self.tied && lane.hot => occ,
                _ => {
                    let occ =
                        self.walk(self.cur.voq_occ[i], lane.occ_target, self.step, self.noise);
                    if self.tied && lane.hot {
                        leader = Some(occ);
                    }
                    occ
                }
            };
            self.cur.voq_occ[i] = occ;
            self.cur.head_fc[i] = self.walk(
                self.cur.head_fc[i],
                lane.fc_target,
                self.fc_step,
                self.noise.min(2),
            );
            let bit = 1u64 << i;
            let valid = if self.regime == Regime::Storm {
                !self.rng.chance(self.invalid_num, 64)
            } else {
                occ > 0 && !self.rng.chance(self.invalid_num, 64)
            };
            self.cur.head_valid = (self.cur.head_valid & !bit) | ((valid as u64) << i);
            if self.rng.chance(1, 16) {
                // A new packet reaches the head of the VOQ.
                self.cur.head_dest[i] = match self.rng.below(4) {
                    0 => 0xFFFF,
                    1 => self.rng.below(16) as u16,
                    _ => self.rng.next_u64() as u16,
                };
                self.cur.head_vc[i] = if self.rng.chance(1, 8) {
                    self.rng.next_u64() as u8
                } else {
                    self.rng.below(4) as u8
                };
                let adapted = self.rng.chance(1, 4);
                self.cur.head_adapted = (self.cur.head_adapted & !bit) | ((adapted as u64) << i);
            }
        }
        self.cur
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::Block;
    use crate::blocks::congestion_detector::{CongestionDetector, DetectorState};

    /// Corner events seen by a detector driven by the stream.
    #[derive(Debug, Default)]
    struct Events {
        declared: u32,
        released: u32,
        cancelled: u32,
        tie_declared: u32,
        not_lowest_declared: u32,
        occ_at_hcdth: u32,
        crossed_at_lcdth: u32,
        branch: u32,
        no_head: u32,
        multi_crossed_root: u32,
        occ_extreme: u32,
    }

    fn count(cfg: DetectorConfig, seed: u64, cycles: u64) -> Events {
        let mut s = RandomCongestion::new(cfg, seed);
        let mut d = CongestionDetector::new(cfg);
        let mut e = Events::default();
        let (h, l, f) = (cfg.hcdth, cfg.lcdth, cfg.fcth);
        for c in 0..cycles {
            let x = s.next(c);
            let q = d.regs();
            let o = d.step(&x);
            e.declared += o.root_det as u32;
            e.released += o.root_rel as u32;
            e.cancelled +=
                (q.state == DetectorState::Wait && d.regs().state == DetectorState::Idle) as u32;
            if q.state == DetectorState::Root && q.over.count_ones() > 1 {
                e.multi_crossed_root += 1;
            }
            let cond: Vec<usize> = (0..cfg.inputs)
                .filter(|&i| x.voq_occ[i] > h && (x.head_valid >> i) & 1 == 1 && x.head_fc[i] > f)
                .collect();
            if o.root_det {
                let best = x.voq_occ[o.root_in as usize];
                if cond.iter().filter(|&&i| x.voq_occ[i] == best).count() > 1 {
                    e.tie_declared += 1;
                }
                if cond[0] != o.root_in as usize {
                    e.not_lowest_declared += 1;
                }
            }
            for i in 0..cfg.inputs {
                let occ = x.voq_occ[i];
                e.occ_at_hcdth += (occ == h) as u32;
                e.crossed_at_lcdth += ((q.over >> i) & 1 == 1 && occ == l) as u32;
                e.branch += (occ > h && x.head_fc[i] == f) as u32;
                e.no_head += (occ > h && x.head_fc[i] > f && (x.head_valid >> i) & 1 == 0) as u32;
                e.occ_extreme += (occ == 0xFFFF) as u32;
            }
        }
        e
    }

    /// Over 100k cycles every corner of the detector happens many times, in both
    /// cross-checked configurations.
    #[test]
    fn every_corner_happens_often() {
        for cfg in [
            DetectorConfig::new(4, 80, 63, 15, 16),
            DetectorConfig::from_percent(12, 5376, 2688, 200),
        ] {
            let e = count(cfg, 1, 100_000);
            eprintln!("{cfg:?}: {e:?}");
            assert!(e.declared >= 30, "{e:?}");
            assert!(e.released >= 30, "{e:?}");
            assert!(e.cancelled >= 30, "{e:?}");
            assert!(e.tie_declared >= 3, "{e:?}");
            assert!(e.not_lowest_declared >= 3, "{e:?}");
            assert!(e.occ_at_hcdth >= 100, "{e:?}");
            assert!(e.crossed_at_lcdth >= 100, "{e:?}");
            assert!(e.branch >= 100, "{e:?}");
            assert!(e.no_head >= 100, "{e:?}");
            assert!(e.multi_crossed_root >= 100, "{e:?}");
            assert!(e.occ_extreme >= 100, "{e:?}");
        }
    }

    #[test]
    fn same_seed_same_stream() {
        let cfg = DetectorConfig::new(4, 80, 63, 15, 16);
        let mut a = RandomCongestion::new(cfg, 9);
        let mut b = RandomCongestion::new(cfg, 9);
        for c in 0..1000 {
            assert_eq!(a.next(c), b.next(c));
        }
    }
}
