//! Generators of MPI workloads whose traces are not public. The two of the trace-based
//! evaluation (section 4.2.2, figure 8) of Rocher-Gonzalez et al., "Congestion Management in
//! High-Performance Interconnection Networks Using Adaptive Routing Notifications": HPCC's
//! PTRANS on 432 ranks ([`ptrans`]) and data-parallel training of Inception-v3 on 512 ranks
//! ([`inception`]). The two of Gusat, Minkenberg and Rodríguez's routing study: the
//! communication phases of NAS CG and FT on 128 ranks ([`nas`]). Each builds a
//! [`Trace`](super::Trace) that `Display` writes in the format of `docs/traces.md`;
//! `arnsim trace` writes them. Every number and its source: `docs/workloads.md`.

pub mod inception;
pub mod nas;
pub mod ptrans;

pub use inception::Inception;
pub use nas::{Cg, Ft};
pub use ptrans::Ptrans;

#[cfg(test)]
mod nas_tests;
#[cfg(test)]
mod tests;
