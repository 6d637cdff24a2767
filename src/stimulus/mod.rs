//! Seeded stimulus for the blocks: the same input sequences drive the Rust model and,
//! written to a file, the SystemVerilog twin.
//!
//! Every generator is a pure function of its parameters and seed (a SplitMix64 stream), so a
//! seed names a run for good, on any machine.

pub mod arn_table;
pub mod congestion_detector;
pub mod congestion_point;
pub mod congestion_table;
pub mod credit_counter;
pub mod fecn_marker;
pub mod lft_banks;
pub mod route_cache;
pub mod rr_arbiter;

pub use crate::blocks::rng::SplitMix64;

/// A source of one input record `I` per cycle (a block's `Block::In`).
pub trait Stimulus<I> {
    /// Inputs for cycle `cycle` (cycles are asked for in order, from 0).
    fn next(&mut self, cycle: u64) -> I;
}

/// A fixed, hand-written sequence (directed test case); idle inputs after its end.
impl<I: Default> Stimulus<I> for std::vec::IntoIter<I> {
    fn next(&mut self, _cycle: u64) -> I {
        Iterator::next(self).unwrap_or_default()
    }
}

/// A random `width`-bit mask where each bit is set with probability `num / 64`.
pub(crate) fn sparse_mask(rng: &mut SplitMix64, width: u32, num: u64) -> u128 {
    let mut m = 0u128;
    for b in 0..width {
        if rng.below(64) < num {
            m |= 1u128 << b;
        }
    }
    m
}
