//! Cross-check cases of `congestion_detector` (none yet).

use crate::harness::case::Case;

pub fn cases(_scale: f64) -> Vec<Case> {
    Vec::new()
}
