//! VCD dumps of one block, laid out as Verilator lays out the dump of its HDL testbench.
//!
//! Time base: 1 ps per VCD tick and one cycle per [`CLOCK_PERIOD_PS`] (5.12 ns, one 64-byte flit
//! at 100 Gb/s). The synchronous reset edge is at 2560 ps; cycle `c` is the interval that starts at
//! the rising edge `2560 + 5120 c` ps, and the falling edge sits half a period later. Scopes are
//! `TOP` / `tb_<block>` / `u_dut`, with `clk_i` and `rst_ni` at every level and the testbench's
//! cycle counter (`cycle_q` in the block testbenches, `cur` in the switch replay's), exactly as in
//! the Verilator dump, so both files show the same waves. Signals up to 256 bits wide.

use super::{Sig, Visit};
use std::io::{self, Write};
use vcd::{IdCode, Value};

/// One clock period in VCD ticks (picoseconds).
pub const CLOCK_PERIOD_PS: u64 = 5120;

/// The time of the rising edge that opens cycle `cycle`.
pub const fn cycle_time_ps(cycle: u64) -> u64 {
    CLOCK_PERIOD_PS / 2 + cycle * CLOCK_PERIOD_PS
}

/// The text of a VCD identifier code, made once per signal: the `vcd` crate formats an
/// identifier character by character at every change it writes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IdText {
    len: u8,
    bytes: [u8; 8],
}

impl IdText {
    /// The text of `id` (at most five characters for 2^32 signals).
    pub(crate) fn new(id: IdCode) -> Self {
        let s = id.to_string();
        let mut bytes = [0u8; 8];
        let len = s.len().min(bytes.len());
        bytes[..len].copy_from_slice(&s.as_bytes()[..len]);
        IdText {
            len: len as u8,
            bytes,
        }
    }
}

/// The eight characters `0`/`1` of each byte, most significant bit first.
static BITS: [[u8; 8]; 256] = {
    let mut t = [[0u8; 8]; 256];
    let mut v = 0;
    while v < 256 {
        let mut k = 0;
        while k < 8 {
            t[v][k] = b'0' + ((v >> (7 - k)) & 1) as u8;
            k += 1;
        }
        v += 1;
    }
    t
};

/// The two decimal digits of each number below 100.
static DIGIT_PAIRS: [[u8; 2]; 100] = {
    let mut t = [[0u8; 2]; 100];
    let mut v = 0;
    while v < 100 {
        t[v] = [b'0' + (v / 10) as u8, b'0' + (v % 10) as u8];
        v += 1;
    }
    t
};

/// Appends the time stamp `#<ts>`, the text of the `vcd` crate's `timestamp`, to `buf`: two
/// digits at a time, as one block of fixed size cut to its length.
#[inline]
pub(crate) fn append_timestamp(buf: &mut Vec<u8>, ts: u64) {
    let digits = ts.checked_ilog10().unwrap_or(0) as usize + 1;
    // `#`, at most 20 digits, the newline.
    let mut text = [0u8; 24];
    text[0] = b'#';
    let (mut rest, mut end) = (ts, digits);
    while end >= 2 {
        text[end - 1..=end].copy_from_slice(&DIGIT_PAIRS[(rest % 100) as usize]);
        rest /= 100;
        end -= 2;
    }
    if end == 1 {
        text[1] = b'0' + rest as u8;
    }
    text[digits + 1] = b'\n';
    let len = buf.len();
    buf.extend_from_slice(&text);
    buf.truncate(len + digits + 2);
}

/// Writes `value` as a change of the `width`-bit signal `id`: `<bit><id>` when one bit wide,
/// else `b<bits> <id>` with every bit, the text the `vcd` crate's `change_scalar` and
/// `change_vector` write.
pub(crate) fn write_change(
    out: &mut impl Write,
    id: &IdText,
    width: u32,
    value: u128,
) -> io::Result<()> {
    let mut text = [0u8; 140];
    let n = change_text(&mut text, id, width, value);
    out.write_all(&text[..n])
}

/// Appends the text of [`write_change`] of a signal of at most 64 bits to `buf`, copied as one
/// block of fixed size and then cut to its length: a few vector moves rather than a call.
#[inline(always)]
pub(crate) fn append_change(buf: &mut Vec<u8>, id: &IdText, width: u32, value: u64) {
    debug_assert!(width <= 64, "a {width}-bit signal");
    // The bits, `b`, a space, an identifier of up to 8 characters and the newline.
    if width <= 32 {
        append_block::<48>(buf, id, width, value);
    } else {
        append_block::<80>(buf, id, width.min(64), value);
    }
}

/// [`append_change`] written in place into a block of `N` bytes past the end of `buf`, then cut
/// to its length.
#[inline(always)]
fn append_block<const N: usize>(buf: &mut Vec<u8>, id: &IdText, width: u32, value: u64) {
    let len = buf.len();
    buf.resize(len + N, 0);
    let n = change_text(&mut buf[len..len + N], id, width, value);
    buf.truncate(len + n);
}

/// A signal's value as [`change_text`] writes it: one bit, or a byte, counted from the right.
trait Word: Copy {
    fn bit(self, i: usize) -> u8;
    fn byte(self, i: usize) -> u8;
}

/// [`Word`] for an unsigned integer type.
macro_rules! word_impl {
    ($($t:ty),*) => {$(
        impl Word for $t {
            #[inline]
            fn bit(self, i: usize) -> u8 {
                (self >> i) as u8 & 1
            }
            #[inline]
            fn byte(self, i: usize) -> u8 {
                (self >> (8 * i)) as u8
            }
        }
    )*};
}

word_impl!(u64, u128);

/// The text of [`write_change`] in `text` (at least `width + 11` bytes, `width` at most the
/// bits of `W`); returns its length.
#[inline(always)]
fn change_text<W: Word>(text: &mut [u8], id: &IdText, width: u32, value: W) -> usize {
    let mut n = if width == 1 {
        text[0] = b'0' + value.bit(0);
        1
    } else {
        let width = width.min(128) as usize;
        text[0] = b'b';
        // The bits above the last whole byte one by one, then eight at a time.
        let whole = width / 8;
        let lead = width - 8 * whole;
        for (k, c) in text[1..=lead].iter_mut().enumerate() {
            *c = b'0' + value.bit(width - 1 - k);
        }
        for b in 0..whole {
            let byte = value.byte(whole - 1 - b);
            let at = 1 + lead + 8 * b;
            text[at..at + 8].copy_from_slice(&BITS[byte as usize]);
        }
        text[width + 1] = b' ';
        width + 2
    };
    // All eight bytes of the identifier at once (a fixed-size move rather than a call), the
    // newline then written over the first byte past its length; what lies beyond is cut off.
    text[n..n + 8].copy_from_slice(&id.bytes);
    n += id.len as usize;
    text[n] = b'\n';
    n + 1
}

/// A value wider than 128 bits (bits 0 to 127 in `low`, the bits above in `high`), through the
/// `vcd` crate's writer.
fn put_wide<W: Write>(
    w: &mut vcd::Writer<W>,
    id: IdCode,
    width: u32,
    low: u128,
    high: u128,
) -> io::Result<()> {
    let bit = |b: u32| {
        let word = if b < 128 { low >> b } else { high >> (b - 128) };
        if word & 1 == 1 { Value::V1 } else { Value::V0 }
    };
    w.change_vector(id, (0..width.min(256)).rev().map(bit))
}

/// Writes `value` as a change of the `width`-bit signal `id` (scalar when one bit wide).
pub(crate) fn put_value<W: Write>(
    w: &mut vcd::Writer<W>,
    id: IdCode,
    width: u32,
    value: u128,
) -> io::Result<()> {
    write_change(w.writer(), &IdText::new(id), width, value)
}

/// Which cycles a dump covers (both ends inclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VcdWindow {
    /// First cycle dumped.
    pub from: u64,
    /// Last cycle dumped.
    pub to: u64,
}

impl VcdWindow {
    /// Every cycle.
    pub const ALL: VcdWindow = VcdWindow {
        from: 0,
        to: u64::MAX,
    };

    /// Whether `cycle` is dumped.
    pub fn contains(&self, cycle: u64) -> bool {
        (self.from..=self.to).contains(&cycle)
    }
}

/// A VCD writer for one block wrapped in its testbench scope.
pub struct BlockVcd<W: Write> {
    w: vcd::Writer<W>,
    clk: IdCode,
    rst: IdCode,
    cycle: IdCode,
    ids: Vec<(IdCode, u32)>,
    /// The last value written of each signal: bits 0 to 127, and the bits above.
    last: Vec<Option<(u128, u128)>>,
    window: VcdWindow,
    started: bool,
}

/// Collects `(name, width)` of the block's signals to declare them.
struct Declare<'a, W: Write> {
    w: &'a mut vcd::Writer<W>,
    ids: Vec<(IdCode, u32)>,
    err: Option<io::Error>,
}

impl<W: Write> Visit for Declare<'_, W> {
    fn signal(&mut self, sig: Sig<'_>, _value: u128) {
        if self.err.is_some() {
            return;
        }
        let name = sig.full_name();
        let index = (sig.width > 1).then(|| vcd::ReferenceIndex::Range(sig.width as i32 - 1, 0));
        match self.w.add_var(vcd::VarType::Wire, sig.width, &name, index) {
            Ok(id) => self.ids.push((id, sig.width)),
            Err(e) => self.err = Some(e),
        }
    }
}

/// Visits a block's signals in declaration order and hands on those whose value changed since
/// the last sample (`put(k, low, high)` for signal `k`: bits 0 to 127, and the bits above); the
/// first error stops it. The block dumps' one change detection ([`BlockVcd`] and
/// [`super::BlockFst`]).
pub(super) struct Changes<'a, F: FnMut(usize, u128, u128) -> io::Result<()>> {
    last: &'a mut [Option<(u128, u128)>],
    put: F,
    k: usize,
    pub(super) err: Option<io::Error>,
}

impl<'a, F: FnMut(usize, u128, u128) -> io::Result<()>> Changes<'a, F> {
    /// Against the values written last, `last` (one per signal, `None` before the first).
    pub(super) fn new(last: &'a mut [Option<(u128, u128)>], put: F) -> Self {
        Changes {
            last,
            put,
            k: 0,
            err: None,
        }
    }
}

impl<F: FnMut(usize, u128, u128) -> io::Result<()>> Visit for Changes<'_, F> {
    fn signal(&mut self, sig: Sig<'_>, value: u128) {
        self.signal_wide(sig, value, 0);
    }

    fn signal_wide(&mut self, _sig: Sig<'_>, low: u128, high: u128) {
        let k = self.k;
        self.k += 1;
        if self.err.is_some() || self.last[k] == Some((low, high)) {
            return;
        }
        self.last[k] = Some((low, high));
        if let Err(e) = (self.put)(k, low, high) {
            self.err = Some(e);
        }
    }
}

impl<W: Write> BlockVcd<W> {
    /// Writes the header. `declare` visits every signal of the block (inputs, outputs,
    /// registers) in the order later samples will visit them.
    pub fn new(
        out: W,
        block: &str,
        window: VcdWindow,
        declare: impl FnOnce(&mut dyn Visit),
    ) -> io::Result<Self> {
        Self::with_counter(out, block, "cycle_q", window, declare)
    }

    /// [`BlockVcd::new`] with the testbench's 64-bit cycle counter named `counter`.
    pub fn with_counter(
        out: W,
        block: &str,
        counter: &str,
        window: VcdWindow,
        declare: impl FnOnce(&mut dyn Visit),
    ) -> io::Result<Self> {
        let mut w = vcd::Writer::new(out);
        w.version("arnsim block VCD")?;
        w.timescale(1, vcd::TimescaleUnit::PS)?;
        w.add_module("TOP")?;
        let clk = w.add_wire(1, "clk_i")?;
        let rst = w.add_wire(1, "rst_ni")?;
        w.add_module(&format!("tb_{block}"))?;
        w.var_def(vcd::VarType::Wire, 1, clk, "clk_i", None)?;
        w.var_def(vcd::VarType::Wire, 1, rst, "rst_ni", None)?;
        let cycle = w.add_var(
            vcd::VarType::Wire,
            64,
            counter,
            Some(vcd::ReferenceIndex::Range(63, 0)),
        )?;
        w.add_module("u_dut")?;
        w.var_def(vcd::VarType::Wire, 1, clk, "clk_i", None)?;
        w.var_def(vcd::VarType::Wire, 1, rst, "rst_ni", None)?;
        let mut d = Declare {
            w: &mut w,
            ids: Vec::new(),
            err: None,
        };
        declare(&mut d);
        if let Some(e) = d.err {
            return Err(e);
        }
        let ids = d.ids;
        w.upscope()?;
        w.upscope()?;
        w.upscope()?;
        w.enddefinitions()?;
        let n = ids.len();
        let mut vcd = BlockVcd {
            w,
            clk,
            rst,
            cycle,
            ids,
            last: vec![None; n],
            window,
            started: false,
        };
        if window.from == 0 {
            // Power-up, before the reset edge: clock low, reset asserted, registers unknown.
            vcd.w.timestamp(0)?;
            vcd.w.change_scalar(clk, Value::V0)?;
            vcd.w.change_scalar(rst, Value::V0)?;
            vcd.put_unknown(cycle, 64)?;
            for k in 0..n {
                let (id, width) = vcd.ids[k];
                vcd.put_unknown(id, width)?;
            }
            vcd.started = true;
        }
        Ok(vcd)
    }

    fn put_unknown(&mut self, id: IdCode, width: u32) -> io::Result<()> {
        if width == 1 {
            return self.w.change_scalar(id, Value::X);
        }
        self.w
            .change_vector(id, std::iter::repeat_n(Value::X, width as usize))
    }

    fn put(&mut self, id: IdCode, width: u32, value: u128) -> io::Result<()> {
        put_value(&mut self.w, id, width, value)
    }

    /// Dumps cycle `cycle`: the rising edge that opens it (with every changed value, visited
    /// in declaration order by `probe`) and the falling edge half a period later.
    pub fn sample(&mut self, cycle: u64, probe: impl FnOnce(&mut dyn Visit)) -> io::Result<()> {
        self.sample_counted(cycle, cycle, probe)
    }

    /// [`BlockVcd::sample`] with the testbench's cycle counter at `count` (a replay counts the
    /// cycles of its recording, which the clock cycles of reset and set-up precede).
    pub fn sample_counted(
        &mut self,
        cycle: u64,
        count: u64,
        probe: impl FnOnce(&mut dyn Visit),
    ) -> io::Result<()> {
        if !self.window.contains(cycle) {
            return Ok(());
        }
        let t = cycle_time_ps(cycle);
        self.w.timestamp(t)?;
        self.w.change_scalar(self.clk, Value::V1)?;
        if !self.started {
            self.w
                .change_scalar(self.rst, if cycle == 0 { Value::V0 } else { Value::V1 })?;
            self.started = true;
        }
        self.put(self.cycle, 64, count as u128)?;
        let (w, ids) = (&mut self.w, &self.ids);
        let mut c = Changes::new(&mut self.last, |k, low, high| {
            let (id, width) = ids[k];
            match width {
                0..=128 => put_value(w, id, width, low),
                _ => put_wide(w, id, width, low, high),
            }
        });
        probe(&mut c);
        if let Some(e) = c.err {
            return Err(e);
        }
        self.w.timestamp(t + CLOCK_PERIOD_PS / 2)?;
        self.w.change_scalar(self.clk, Value::V0)?;
        if cycle == 0 {
            self.w.change_scalar(self.rst, Value::V1)?;
        }
        Ok(())
    }

    /// Flushes the underlying writer.
    pub fn finish(mut self) -> io::Result<()> {
        self.w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stimulus::SplitMix64;

    /// The text the `vcd` crate writes for the same change or time stamp.
    fn crate_text(id: IdCode, width: u32, value: Option<u128>, ts: Option<u64>) -> Vec<u8> {
        let mut w = vcd::Writer::new(Vec::new());
        if let Some(t) = ts {
            w.timestamp(t).unwrap();
        }
        if let Some(v) = value {
            let bit = |b: u32| {
                if (v >> b) & 1 == 1 {
                    Value::V1
                } else {
                    Value::V0
                }
            };
            if width == 1 {
                w.change_scalar(id, bit(0)).unwrap();
            } else {
                w.change_vector(id, (0..width).rev().map(bit)).unwrap();
            }
        }
        w.writer().clone()
    }

    #[test]
    fn changes_and_time_stamps_are_the_vcd_crates_text() {
        let mut rng = SplitMix64::new(7);
        let mut id = IdCode::FIRST;
        for k in 0..2000u32 {
            let width = [1, 2, 7, 8, 9, 10, 16, 24, 31, 32, 63, 64, 65, 127, 128][k as usize % 15];
            let raw = (rng.next_u64() as u128) << 64 | rng.next_u64() as u128;
            let value = if width == 128 {
                raw
            } else {
                raw & ((1u128 << width) - 1)
            };
            let mut ours = Vec::new();
            write_change(&mut ours, &IdText::new(id), width, value).unwrap();
            assert_eq!(
                ours,
                crate_text(id, width, Some(value), None),
                "width {width}, value {value:#x}, id {id}"
            );
            if width <= 64 {
                let mut appended = b"#5\n".to_vec();
                append_change(&mut appended, &IdText::new(id), width, value as u64);
                assert_eq!(
                    appended[3..],
                    ours[..],
                    "width {width}, value {value:#x}, id {id}"
                );
            }
            let ts = rng.next_u64() >> (k % 64);
            let mut appended = b"b1 !\n".to_vec();
            append_timestamp(&mut appended, ts);
            assert_eq!(
                appended[5..],
                crate_text(id, width, None, Some(ts))[..],
                "time {ts}"
            );
            id = id.next();
        }
    }
}
