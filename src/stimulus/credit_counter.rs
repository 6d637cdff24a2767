//! Random sends, credit returns and packet lengths for the credit counter, in phases.
//!
//! The generator plays the link controller and the downstream switch. It keeps its own view of
//! the free credits (the count a correct counter holds), so that a well-behaved sender sends only
//! when a credit is left and the link returns only credits of flits actually outstanding. Phases
//! of varying length then drive the count to every region of its range:
//! - drain: heavy sending, few returns (the count runs down to zero and stays near it);
//! - fill: few sends, heavy returns (the count climbs back to `Cap` and stays near it);
//! - balanced: sends and returns at matching rates (the count hovers);
//! - burst: returns of up to 255 credits at once (all outstanding credits come back together);
//! - idle: nothing moves.
//!
//! With errors enabled, a sender sometimes sends with no credit left (underflow) and the link
//! sometimes returns phantom credits (overflow when the count is near `Cap`). `need_i` is often
//! the count itself or one off, so that both sides of the virtual cut-through check occur.

use super::{SplitMix64, Stimulus};
use crate::blocks::credit_counter::{CreditCounterIn, MAX_CAP};

/// The kind of a phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Drain,
    Fill,
    Balanced,
    Burst,
    Idle,
}

/// Phased random stimulus for a `credit_counter` of capacity `cap`.
#[derive(Clone, Debug)]
pub struct RandomCredits {
    cap: u32,
    errors: bool,
    rng: SplitMix64,
    /// The free credits a correct counter holds now.
    free: u32,
    left: u32,
    phase: Phase,
    send_num: u64,
    ret_num: u64,
    ret_max: u32,
    err_num: u64,
}

impl RandomCredits {
    /// Stream for a counter of capacity `cap`. With `errors`, deliberate underflows and
    /// overflows happen now and then; without, the stream obeys the credit protocol exactly.
    pub fn new(cap: usize, seed: u64, errors: bool) -> Self {
        assert!(
            (1..=MAX_CAP).contains(&cap),
            "credit_counter: Cap = {cap} is outside 1..=65535"
        );
        RandomCredits {
            cap: cap as u32,
            errors,
            rng: SplitMix64::new(seed),
            free: cap as u32,
            left: 0,
            phase: Phase::Idle,
            send_num: 0,
            ret_num: 0,
            ret_max: 1,
            err_num: 0,
        }
    }

    fn new_phase(&mut self) {
        let r = &mut self.rng;
        // Some long enough for a drain to empty a large buffer, most short to change often.
        self.left = if r.chance(1, 3) {
            8 + r.below((2 * self.cap as u64 + 200).min(12_000)) as u32
        } else {
            8 + r.below(400) as u32
        };
        self.phase = [
            Phase::Drain,
            Phase::Drain,
            Phase::Fill,
            Phase::Fill,
            Phase::Balanced,
            Phase::Balanced,
            Phase::Burst,
            Phase::Idle,
        ][r.below(8) as usize];
        (self.send_num, self.ret_num, self.ret_max) = match self.phase {
            Phase::Drain => (56 + r.below(9), r.below(12), 1 + r.below(2) as u32),
            Phase::Fill => (
                r.below(12),
                32 + r.below(33),
                [1, 2, 4, 8][r.below(4) as usize],
            ),
            Phase::Balanced => {
                let k = [1u64, 2, 4][r.below(3) as usize];
                (32, 64 / k / 2 + r.below(3), k as u32)
            }
            Phase::Burst => (r.below(64), 2 + r.below(8), 255),
            Phase::Idle => (0, 0, 1),
        };
        self.err_num = if self.errors {
            [0, 0, 1, 2, 8][r.below(5) as usize]
        } else {
            0
        };
        if self.phase == Phase::Idle {
            self.left = 8 + r.below(64) as u32;
        }
    }

    /// A packet length to check against the count: often the count itself or one off.
    fn need(&mut self) -> u16 {
        let r = &mut self.rng;
        let free = self.free as i64;
        let v = match r.below(8) {
            0..=2 => free + r.below(3) as i64 - 1,
            3 | 4 => 1 + r.below(64) as i64,
            5 => free + r.below(17) as i64 - 8,
            6 => r.below(self.cap as u64 + 2) as i64,
            _ => [0, 0xffff, r.below(0x1_0000) as i64][r.below(3) as usize],
        };
        v.clamp(0, 0xffff) as u16
    }
}

impl Stimulus<CreditCounterIn> for RandomCredits {
    fn next(&mut self, _cycle: u64) -> CreditCounterIn {
        if self.left == 0 {
            self.new_phase();
        }
        self.left -= 1;
        let need = self.need();
        let r = &mut self.rng;
        let outstanding = self.cap - self.free;

        // Send: a correct sender needs a credit at the start of the cycle.
        let mut dec = r.chance(self.send_num, 64);
        if dec && self.free == 0 && !r.chance(self.err_num, 64) {
            dec = false;
        }

        // Return: only credits of flits already outstanding, unless phantom credits appear.
        let mut inc = 0u32;
        if r.chance(self.ret_num, 64) {
            // Credits often come back in batches: half the returns of a burst phase and one in
            // 16 of a fill phase are a large batch (all outstanding, 255, or up to 255).
            let batch = match self.phase {
                Phase::Burst => r.chance(1, 2),
                Phase::Fill => r.chance(1, 16),
                _ => false,
            };
            inc = if batch {
                [outstanding, 255, 1 + r.below(255) as u32][r.below(3) as usize]
            } else {
                1 + r.below(self.ret_max as u64) as u32
            };
            inc = inc.min(outstanding);
        }
        if r.chance(self.err_num, 256) {
            inc += 1 + r.below(4) as u32;
        }
        let inc = inc.min(255);

        // The count a correct counter holds next.
        let underflow = dec && self.free == 0;
        let sum = self.free + inc - (dec && !underflow) as u32;
        self.free = sum.min(self.cap);
        CreditCounterIn {
            dec,
            inc: inc as u8,
            need,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::Block;
    use crate::blocks::credit_counter::CreditCounter;

    /// Events seen over a run of the real block on the stimulus.
    #[derive(Debug, Default)]
    struct Events {
        underflow: u64,
        overflow: u64,
        exactly_full: u64,
        at_zero: u64,
        at_cap: u64,
        dec_and_inc: u64,
        inc_255: u64,
        big_return: u64,
        need_eq_cnt: u64,
        need_eq_cnt_plus1: u64,
        enough: u64,
        not_enough: u64,
        phases_seen: u64,
    }

    fn count(cap: usize, seed: u64, errors: bool, cycles: u64) -> Events {
        let mut s = RandomCredits::new(cap, seed, errors);
        let mut c = CreditCounter::new(cap);
        let mut e = Events::default();
        let mut last_phase = None;
        for t in 0..cycles {
            let i = s.next(t);
            if last_phase != Some(s.phase) {
                e.phases_seen += 1;
                last_phase = Some(s.phase);
            }
            let q = c.credits() as u32;
            let o = c.step(&i);
            let udf = i.dec && q == 0;
            let sum = q + i.inc as u32 - (i.dec && !udf) as u32;
            e.underflow += udf as u64;
            e.overflow += (sum > cap as u32) as u64;
            e.exactly_full += (sum == cap as u32 && i.inc > 0) as u64;
            e.at_zero += (q == 0) as u64;
            e.at_cap += (q == cap as u32) as u64;
            e.dec_and_inc += (i.dec && i.inc > 0) as u64;
            e.inc_255 += (i.inc == 255) as u64;
            e.big_return += (i.inc >= 64) as u64;
            e.need_eq_cnt += (i.need as u32 == q) as u64;
            e.need_eq_cnt_plus1 += (i.need as u32 == q + 1) as u64;
            e.enough += o.enough as u64;
            e.not_enough += !o.enough as u64;
            // Without errors the generator's view is the counter's.
            if !errors {
                assert_eq!(c.credits() as u32, s.free, "cycle {t}");
            }
        }
        e
    }

    #[test]
    fn legal_streams_obey_the_protocol_and_reach_both_ends() {
        for (cap, seed) in [(1usize, 1u64), (20, 2), (5376, 3)] {
            let e = count(cap, seed, false, 100_000);
            assert_eq!(e.underflow, 0, "cap {cap}: {e:?}");
            assert_eq!(e.overflow, 0, "cap {cap}: {e:?}");
            assert!(e.at_zero > 500, "cap {cap}: {e:?}");
            assert!(e.at_cap > 500, "cap {cap}: {e:?}");
            assert!(e.exactly_full > 20, "cap {cap}: {e:?}");
            println!("cap {cap}: {e:?}");
            // With Cap = 1 a legal send and a legal return never meet (one needs the credit
            // the other brings back).
            assert!(cap == 1 || e.dec_and_inc > 1000, "cap {cap}: {e:?}");
            assert!(e.need_eq_cnt > 5000, "cap {cap}: {e:?}");
            assert!(e.need_eq_cnt_plus1 > 5000, "cap {cap}: {e:?}");
            assert!(
                e.enough > 10_000 && e.not_enough > 10_000,
                "cap {cap}: {e:?}"
            );
        }
    }

    #[test]
    fn error_streams_hit_every_corner_often() {
        for (cap, seed) in [(1usize, 4u64), (20, 5), (5376, 6), (MAX_CAP, 7)] {
            let e = count(cap, seed, true, 100_000);
            println!("cap {cap}: {e:?}");
            assert!(e.overflow > 20, "cap {cap}: {e:?}");
            assert!(e.at_cap > 500, "cap {cap}: {e:?}");
            assert!(e.dec_and_inc > 200, "cap {cap}: {e:?}");
            assert!(e.need_eq_cnt > 5000, "cap {cap}: {e:?}");
            assert!(
                e.enough > 10_000 && e.not_enough > 10_000,
                "cap {cap}: {e:?}"
            );
            if cap < MAX_CAP {
                assert!(e.underflow > 20, "cap {cap}: {e:?}");
                assert!(e.at_zero > 500, "cap {cap}: {e:?}");
            }
            if cap >= 255 {
                assert!(e.inc_255 > 20, "cap {cap}: {e:?}");
            }
            if cap > 64 {
                assert!(e.big_return > 50, "cap {cap}: {e:?}");
            }
        }
    }

    #[test]
    fn same_seed_same_stream() {
        let mut a = RandomCredits::new(20, 9, true);
        let mut b = RandomCredits::new(20, 9, true);
        for t in 0..10_000 {
            assert_eq!(a.next(t), b.next(t));
        }
    }
}
