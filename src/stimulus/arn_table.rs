//! Stimulus for `arn_table` (placeholder until the block lands).
