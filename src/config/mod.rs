//! Run configuration: scenario files in physical units, validated and converted once into
//! cycles and flits, with errors that name the file, the line and the key.

pub mod document;
pub mod errors;
mod keys;
mod qcn_keys;
mod reader;
mod routing_phases;
pub mod scenario;
mod switch_keys;
pub mod text_lines;
pub mod topology_keys;
pub mod trace_keys;
mod traffic_keys;
pub mod units;

pub use document::{ScenarioError, ScenarioErrors};
pub use scenario::Scenario;
pub use trace_keys::TraceReplay;
pub use units::TimeBase;

#[cfg(test)]
mod cc_tests;
#[cfg(test)]
mod custom_refusal_tests;
#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod limit_tests;
#[cfg(test)]
mod phase_refusal_tests;
#[cfg(test)]
mod qcn_tests;
#[cfg(test)]
mod refusal_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod trace_tests;
