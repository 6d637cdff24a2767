//! # arnsim: a cycle-accurate model of an InfiniBand-class switch with ARN and AFI
//!
//! The model is written the way the hardware is built: synchronous blocks with registers,
//! combinational logic and a clock edge, cross-checked cycle by cycle against SystemVerilog
//! twins in `hdl-ref/`. Time is counted in cycles (one 64-byte flit per link per cycle), sizes in
//! flits.
//!
//! Layers, one folder each:
//! - [`blocks`]: the switch's hardware blocks: round-robin arbiter, credit counter, interleaved
//!   LFT banks, ARN table (a CAM with TTL timers) and the congestion detector FSM.
//! - [`stimulus`]: seeded and directed input sequences for the blocks, shared by the HDL
//!   testbenches and the demo.
//! - [`switch`]: one input-queued switch assembled from the blocks: VOQ input buffers, the input
//!   port controller of ARN+AFI, routing modes, arbitration and credit flow control.
//! - [`fabric`]: links, end nodes, topologies (fat trees as XGFTs), the subnet manager's LFTs, and
//!   whole fabrics stepped cycle by cycle with their invariants checked.
//! - [`traffic`]: the paper's traffic patterns (uniform, hot spots) and explicit flows.
//! - [`config`]: scenario files in physical units, validated and converted into cycles and flits.
//! - [`metrics`]: efficiency and latency per time bin, CSV and SVG.
//! - [`replay`]: MPI-level traces (text format, matching, collectives, rank mapping) and the
//!   per-node state machine that replays them closed-loop.
//! - [`wire`]: what travels on links: data packet descriptors and ARN control flits.
//! - [`run`]: a run of a scenario as one object: the fabric stepped chunk by chunk into bins,
//!   stop requests, dump and recording hooks, trace-replay ends; what the outputs are made of.
//! - [`cli`]: the `arnsim` command line.
//! - [`trace`]: probes that read signals out of the model without touching it: per-cycle text
//!   traces and VCD waveforms named like the HDL's.

pub mod blocks;
pub mod cli;
pub mod config;
pub mod cycle;
pub mod fabric;
pub mod metrics;
pub mod replay;
pub mod run;
#[cfg(test)]
mod scratch;
pub mod stimulus;
pub mod switch;
pub mod trace;
pub mod traffic;
pub mod wire;
