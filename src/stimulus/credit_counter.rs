//! Stimulus for `credit_counter` (placeholder until the block lands).
