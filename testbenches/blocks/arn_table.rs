//! Cross-check cases of `arn_table` (none yet).

use crate::harness::case::Case;

pub fn cases(_scale: f64) -> Vec<Case> {
    Vec::new()
}
