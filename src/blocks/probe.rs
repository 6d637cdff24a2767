//! The probe visitor: how a block lists its ports and registers, by HDL name and width, to
//! whoever asks (text traces, VCD writers, signal lists). The blocks own it so that they depend
//! on nothing above them; `crate::trace` holds the visitors that record.

/// One traced signal: the HDL name, an optional unpacked-array index, the width in bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sig<'a> {
    /// Name as written in the SystemVerilog twin (`req_i`, `ptr_q`, ...).
    pub name: &'a str,
    /// Element index for unpacked arrays (`occ_i[3]`), as Verilator names them.
    pub index: Option<u16>,
    /// Width in bits, 1 to 128 (to 256 through [`Visit::signal_wide`]).
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

    /// A signal wider than 128 bits (129 to 256, such as the switch's 192-bit packet
    /// descriptor): bits 0 to 127 in `low`, the bits above in `high`. Visitors that keep only
    /// names and widths take the default, which hands `low` to [`Visit::signal`]; visitors that
    /// record values implement it.
    fn signal_wide(&mut self, sig: Sig<'_>, low: u128, high: u128) {
        let _ = high;
        self.signal(sig, low);
    }
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

    /// Element `index` of an unpacked array of values wider than 128 bits (`width` up to 256):
    /// bits 0 to 127 in `low`, the rest in `high`.
    pub fn elem_wide(&mut self, name: &str, index: usize, width: u32, low: u128, high: u128) {
        debug_assert!((129..=256).contains(&width));
        debug_assert!(
            width == 256 || high >> (width - 128) == 0,
            "{name}[{index}]: value wider than {width} bits"
        );
        self.signal_wide(
            Sig {
                name,
                index: Some(index as u16),
                width,
            },
            low,
            high,
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
