//! Signal tracing, kept outside the model.
//!
//! A block exposes its ports and registers to a [`Visit`] visitor through the
//! [`Block`](crate::blocks::Block) probe methods; nothing is recorded unless a
//! visitor asks. Two visitors live here:
//! - [`TraceLine`]: one text line per cycle, hexadecimal values in a fixed order,
//!   the format the HDL testbenches print too, so the two can be compared line by line;
//! - [`BlockVcd`]: a VCD file whose scopes and signal names are the ones Verilator
//!   writes for the SystemVerilog twin, so both dumps line up in GTKWave.

mod fabric_tap;
pub mod fabric_vcd;
mod gtkw;
mod line;
mod vcd_writer;

pub use gtkw::{signals_of, write_block_gtkw};
pub use line::{TraceHeader, TraceLine};
pub use vcd_writer::{BlockVcd, CLOCK_PERIOD_PS, VcdWindow, cycle_time_ps};

/// One traced signal: the HDL name, an optional unpacked-array index, the width in bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sig<'a> {
    /// Name as written in the SystemVerilog twin (`req_i`, `ptr_q`, ...).
    pub name: &'a str,
    /// Element index for unpacked arrays (`occ_i[3]`), as Verilator names them.
    pub index: Option<u16>,
    /// Width in bits, 1 to 128.
    pub width: u32,
}

impl Sig<'_> {
    /// The name as it appears in a VCD or a trace header: `name` or `name[index]`.
    pub fn full_name(&self) -> String {
        match self.index {
            Some(i) => format!("{}[{}]", self.name, i),
            None => self.name.to_string(),
        }
    }
}

/// Receives signals one by one, in the block's fixed order.
pub trait Visit {
    /// One signal and its current value (bits above `width` are zero).
    fn signal(&mut self, sig: Sig<'_>, value: u128);
}

impl dyn Visit + '_ {
    /// A one-bit signal.
    pub fn bit(&mut self, name: &str, value: bool) {
        self.signal(
            Sig {
                name,
                index: None,
                width: 1,
            },
            value as u128,
        );
    }

    /// A vector signal of `width` bits.
    pub fn bits(&mut self, name: &str, width: u32, value: u128) {
        debug_assert!((1..=128).contains(&width));
        debug_assert!(
            width == 128 || value >> width == 0,
            "{name}: value wider than {width} bits"
        );
        self.signal(
            Sig {
                name,
                index: None,
                width,
            },
            value,
        );
    }

    /// Element `index` of an unpacked array of `width`-bit values.
    pub fn elem(&mut self, name: &str, index: usize, width: u32, value: u128) {
        debug_assert!(
            width == 128 || value >> width == 0,
            "{name}[{index}]: value wider than {width} bits"
        );
        self.signal(
            Sig {
                name,
                index: Some(index as u16),
                width,
            },
            value,
        );
    }
}

/// A visitor that only collects signal definitions (names and widths).
#[derive(Default, Debug, Clone)]
pub struct SignalList {
    /// `(full name, width)` in visiting order.
    pub signals: Vec<(String, u32)>,
}

impl Visit for SignalList {
    fn signal(&mut self, sig: Sig<'_>, _value: u128) {
        self.signals.push((sig.full_name(), sig.width));
    }
}

/// Number of bits needed to index `n` items (at least 1), as `$clog2` with a floor of 1.
pub const fn index_width(n: usize) -> u32 {
    if n <= 2 {
        1
    } else {
        usize::BITS - (n - 1).leading_zeros()
    }
}

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
