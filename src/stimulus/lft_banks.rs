//! Stimulus for `lft_banks` (placeholder until the block lands).
