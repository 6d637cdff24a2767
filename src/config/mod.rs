//! Run configuration: physical units converted once into cycles and flits.

pub mod units;

pub use units::TimeBase;
