//! The cross-check cases of every block: HDL configurations, directed cases, seeded random runs
//! and deliberately altered blocks.

mod arn_table;
mod congestion_detector;
mod credit_counter;
mod lft_banks;
mod rr_arbiter;

use crate::harness::case::Case;

/// Random cycles for a case whose nominal length is `cycles`, scaled by `scale`.
pub fn scaled(cycles: u64, scale: f64) -> u64 {
    ((cycles as f64 * scale).round() as u64).max(1)
}

/// Every case of every block.
pub fn all_cases(scale: f64) -> Vec<Case> {
    let mut v = Vec::new();
    v.extend(rr_arbiter::cases(scale));
    v.extend(credit_counter::cases(scale));
    v.extend(lft_banks::cases(scale));
    v.extend(arn_table::cases(scale));
    v.extend(congestion_detector::cases(scale));
    v
}
