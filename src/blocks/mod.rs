//! The switch's hardware blocks, one synchronous circuit per module.
//!
//! Every block follows the same clocking discipline as its SystemVerilog twin in `hdl-ref/`:
//! - its registers are a plain `…Regs` struct held twice, as `q` (current) and `d` (next);
//! - [`Block::evaluate`] computes the combinational outputs and the next registers from the
//!   current registers and this cycle's inputs, reading `q` only;
//! - [`Block::commit`] is the clock edge: `q <= d`;
//! - [`Block::reset`] loads the documented reset values (synchronous, active-low `rst_ni` in HDL).
//!
//! The blocks depend on nothing above them: the probe visitor ([`probe`]) and the seeded
//! generator ([`rng`]) that switches and end nodes draw from are defined here.
//!
//! Nothing here allocates after construction. Names follow the HDL: `_i` inputs, `_o` outputs,
//! `_q` registers, so traces and waveforms of the two line up signal for signal.

pub mod arn_table;
pub mod congestion_detector;
pub mod congestion_point;
pub mod congestion_table;
pub mod credit_counter;
pub mod fecn_marker;
pub mod lft_banks;
pub mod probe;
pub mod rng;
pub mod route_cache;
pub mod rr_arbiter;

pub use arn_table::ArnTable;
pub use congestion_detector::CongestionDetector;
pub use congestion_point::CongestionPoint;
pub use congestion_table::CongestionTable;
pub use credit_counter::CreditCounter;
pub use fecn_marker::FecnMarker;
pub use lft_banks::LftBanks;
pub use rr_arbiter::RrArbiter;

use probe::Visit;

/// A cycle-stepped synchronous block with traceable ports and registers.
pub trait Block {
    /// This cycle's inputs.
    type In: Clone + Default;
    /// This cycle's outputs.
    type Out: Clone + Default;

    /// Name of the SystemVerilog module (and of this Rust module).
    const NAME: &'static str;

    /// Synchronous reset: every register takes its reset value.
    fn reset(&mut self);

    /// Combinational phase: outputs and next registers from current registers and inputs.
    fn evaluate(&mut self, inp: &Self::In) -> Self::Out;

    /// Clock edge: the next registers become current.
    fn commit(&mut self);

    /// Visits the input ports in the order the testbench stimulus file lists them.
    fn probe_inputs(&self, inp: &Self::In, v: &mut dyn Visit);

    /// Visits the output ports.
    fn probe_outputs(&self, out: &Self::Out, v: &mut dyn Visit);

    /// Visits the registers (current values).
    fn probe_regs(&self, v: &mut dyn Visit);

    /// One full cycle: evaluate then commit, returning the outputs of the cycle.
    fn step(&mut self, inp: &Self::In) -> Self::Out {
        let out = self.evaluate(inp);
        self.commit();
        out
    }
}
