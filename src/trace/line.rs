//! One-line-per-cycle text traces: the common format of the Rust model and the HDL testbenches.
//!
//! A trace file starts with a header line of signal names separated by spaces, then one line per
//! cycle with each value in lower-case hexadecimal without leading zeros (`%0h` in SystemVerilog).

use super::{Sig, Visit};
use std::fmt::Write as _;

/// Collects the header line (signal names) of a trace.
#[derive(Default, Debug, Clone)]
pub struct TraceHeader {
    /// The header, without a trailing newline.
    pub line: String,
}

impl Visit for TraceHeader {
    fn signal(&mut self, sig: Sig<'_>, _value: u128) {
        if !self.line.is_empty() {
            self.line.push(' ');
        }
        self.line.push_str(sig.name);
        if let Some(i) = sig.index {
            let _ = write!(self.line, "[{i}]");
        }
    }
}

/// Formats one cycle's values; reuse it across cycles (call [`TraceLine::clear`]).
#[derive(Default, Debug, Clone)]
pub struct TraceLine {
    /// The values, without a trailing newline.
    pub line: String,
}

impl TraceLine {
    /// Empties the line, keeping its storage.
    pub fn clear(&mut self) {
        self.line.clear();
    }
}

impl Visit for TraceLine {
    fn signal(&mut self, _sig: Sig<'_>, value: u128) {
        if !self.line.is_empty() {
            self.line.push(' ');
        }
        let _ = write!(self.line, "{value:x}");
    }

    fn signal_wide(&mut self, _sig: Sig<'_>, low: u128, high: u128) {
        if !self.line.is_empty() {
            self.line.push(' ');
        }
        let _ = match high {
            0 => write!(self.line, "{low:x}"),
            _ => write!(self.line, "{high:x}{low:032x}"),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_values_line_up() {
        let mut h = TraceHeader::default();
        let mut l = TraceLine::default();
        for v in [&mut h as &mut dyn Visit, &mut l as &mut dyn Visit] {
            v.bits("gnt_o", 8, 0x80);
            v.elem("occ_i", 2, 16, 0);
            v.bit("valid_o", true);
            v.elem_wide("desc_i", 1, 176, 0xab, 0x1);
            v.elem_wide("desc_i", 2, 176, 0xcd, 0);
        }
        assert_eq!(h.line, "gnt_o occ_i[2] valid_o desc_i[1] desc_i[2]");
        assert_eq!(l.line, "80 0 1 1000000000000000000000000000000ab cd");
    }
}
