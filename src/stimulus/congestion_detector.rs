//! Stimulus for `congestion_detector` (placeholder until the block lands).
