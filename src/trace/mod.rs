//! Signal tracing, kept outside the model.
//!
//! A block exposes its ports and registers to a [`Visit`] visitor (defined with the blocks, in
//! [`crate::blocks::probe`]) through the [`Block`](crate::blocks::Block) probe methods; nothing
//! is recorded unless a visitor asks. Two visitors live here:
//! - [`TraceLine`]: one text line per cycle, hexadecimal values in a fixed order,
//!   the format the HDL testbenches print too, so the two can be compared line by line;
//! - [`BlockVcd`]: a VCD file whose scopes and signal names are the ones Verilator
//!   writes for the SystemVerilog twin, so both dumps line up in GTKWave (a block's, or the
//!   whole switch's port interface in a replay, [`switch_ports`]), and [`BlockFst`], the same
//!   dump in GTKWave's compressed format.

mod block_fst;
mod dump_window;
pub mod fabric_fst;
pub mod fabric_tap;
pub mod fabric_vcd;
pub mod fabric_waves;
mod gtkw;
#[cfg(test)]
pub(crate) mod gtkw_check;
mod line;
pub mod pair_writer;
pub mod recording;
pub mod switch_ports;
pub mod vcd_pair;
mod vcd_writer;

pub use block_fst::BlockFst;
pub use gtkw::{
    DETECTOR_STATES, fabric_alias, signals_of, states_path, write_block_gtkw, zoom_for,
};
pub use line::{TraceHeader, TraceLine};
pub use vcd_writer::{BlockVcd, CLOCK_PERIOD_PS, VcdWindow, cycle_time_ps};

// The probe visitor belongs to the blocks (they list their signals through it); tracing reads it.
pub use crate::blocks::probe::{Sig, SignalList, Visit, index_width};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_width_matches_clog2_with_floor_one() {
        assert_eq!(index_width(1), 1);
        assert_eq!(index_width(2), 1);
        assert_eq!(index_width(3), 2);
        assert_eq!(index_width(4), 2);
        assert_eq!(index_width(5), 3);
        assert_eq!(index_width(96), 7);
        assert_eq!(index_width(128), 7);
        assert_eq!(index_width(129), 8);
    }

    #[test]
    fn full_name_uses_verilator_array_syntax() {
        let s = Sig {
            name: "occ_i",
            index: Some(3),
            width: 16,
        };
        assert_eq!(s.full_name(), "occ_i[3]");
    }
}
