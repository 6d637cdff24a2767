//! FST dumps of one block in its testbench scope (`arnsim replay --fst`): the scopes, names and
//! value changes of the block VCD ([`super::BlockVcd`]) in GTKWave's compressed binary format,
//! written by the `fst-writer` crate.
//!
//! Same scopes (`TOP`, `tb_<block>`, `u_dut`, with `clk_i` and `rst_ni` in each as aliases of
//! one signal), same names (a vector's name carries its range, `credit_o [7:0]`, as Verilator's
//! FST dumps do), same time base (1 ps ticks) and the same value changes: a cycle's rising edge
//! with every changed value and the testbench's counter, its falling edge half a period later.
//! The file opens at time 0 with every signal unknown (`x`) up to its first value.

use super::fabric_fst::{FLUSH_BYTES, io_error, var_name};
use super::vcd_writer::{CLOCK_PERIOD_PS, Changes, VcdWindow, cycle_time_ps};
use crate::blocks::probe::{Sig, Visit};
use fst_writer::{
    FstBodyWriter, FstFileType, FstHeaderWriter, FstInfo, FstScopeType, FstSignalId, FstSignalType,
    FstVarDirection, FstVarType,
};
use std::fs::File;
use std::io::{self, BufWriter, Write};

/// A block FST being written.
pub struct BlockFst {
    w: FstBodyWriter<BufWriter<File>>,
    clk: FstSignalId,
    rst: FstSignalId,
    cycle: FstSignalId,
    ids: Vec<(FstSignalId, u32)>,
    /// The last value written of each signal: bits 0 to 127, and the bits above.
    last: Vec<Option<(u128, u128)>>,
    window: VcdWindow,
    started: bool,
    /// The text of one value, `0`/`1` per bit, most significant first.
    text: [u8; 256],
}

/// Declares the block's signals under their full names (with their ranges).
struct Declare<'a> {
    h: &'a mut FstHeaderWriter<BufWriter<File>>,
    ids: Vec<(FstSignalId, u32)>,
    err: Option<io::Error>,
}

/// A `width`-bit wire `name` (the range after a space when wider than a bit), or an alias of
/// `alias`.
fn wire(
    h: &mut FstHeaderWriter<BufWriter<File>>,
    name: &str,
    width: u32,
    alias: Option<FstSignalId>,
) -> io::Result<FstSignalId> {
    h.var(
        var_name(name, width),
        FstSignalType::bit_vec(width),
        FstVarType::Wire,
        FstVarDirection::Implicit,
        alias,
    )
    .map_err(io_error)
}

impl Visit for Declare<'_> {
    fn signal(&mut self, sig: Sig<'_>, _value: u128) {
        if self.err.is_some() {
            return;
        }
        match wire(self.h, &sig.full_name(), sig.width, None) {
            Ok(id) => self.ids.push((id, sig.width)),
            Err(e) => self.err = Some(e),
        }
    }
}

/// Signal `id`, `width` bits wide, changes to the value of bits `low` (0 to 127) and `high`
/// (128 to 255), written as text into `text` first.
fn put(
    w: &mut FstBodyWriter<BufWriter<File>>,
    text: &mut [u8; 256],
    id: FstSignalId,
    width: u32,
    low: u128,
    high: u128,
) -> io::Result<()> {
    let n = width.clamp(1, 256) as usize;
    for (i, c) in text[..n].iter_mut().enumerate() {
        let b = (n - 1 - i) as u32;
        let word = if b < 128 { low >> b } else { high >> (b - 128) };
        *c = b'0' + (word & 1) as u8;
    }
    w.signal_change(id, &text[..n]).map_err(io_error)
}

impl BlockFst {
    /// Writes the header into `file`: the testbench `tb_<block>` with its 64-bit cycle counter
    /// `counter`, and the block `u_dut`, whose signals `declare` visits (in the order later
    /// samples will visit them).
    pub fn with_counter(
        file: File,
        block: &str,
        counter: &str,
        window: VcdWindow,
        declare: impl FnOnce(&mut dyn Visit),
    ) -> io::Result<Self> {
        let info = FstInfo {
            start_time: 0,
            timescale_exponent: -12,
            version: "arnsim block FST".into(),
            // No date: the same replay writes the same file.
            date: String::new(),
            file_type: FstFileType::Verilog,
        };
        let mut h = FstHeaderWriter::new(BufWriter::new(file), &info).map_err(io_error)?;
        let module = |h: &mut FstHeaderWriter<_>, name: &str| {
            h.scope(name, "", FstScopeType::Module).map_err(io_error)
        };
        module(&mut h, "TOP")?;
        let clk = wire(&mut h, "clk_i", 1, None)?;
        let rst = wire(&mut h, "rst_ni", 1, None)?;
        module(&mut h, &format!("tb_{block}"))?;
        wire(&mut h, "clk_i", 1, Some(clk))?;
        wire(&mut h, "rst_ni", 1, Some(rst))?;
        let cycle = wire(&mut h, counter, 64, None)?;
        module(&mut h, "u_dut")?;
        wire(&mut h, "clk_i", 1, Some(clk))?;
        wire(&mut h, "rst_ni", 1, Some(rst))?;
        let mut d = Declare {
            h: &mut h,
            ids: Vec::new(),
            err: None,
        };
        declare(&mut d);
        if let Some(e) = d.err {
            return Err(e);
        }
        let ids = d.ids;
        for _ in 0..3 {
            h.up_scope().map_err(io_error)?;
        }
        let w = h.finish().map_err(io_error)?;
        let n = ids.len();
        let mut fst = BlockFst {
            w,
            clk,
            rst,
            cycle,
            ids,
            last: vec![None; n],
            window,
            started: false,
            text: [b'0'; 256],
        };
        if window.from == 0 {
            // Power-up, before the reset edge: clock low, reset asserted, the rest unknown.
            fst.put(clk, 1, 0, 0)?;
            fst.put(rst, 1, 0, 0)?;
            fst.started = true;
        }
        Ok(fst)
    }

    /// Signal `id`, `width` bits wide, changes to the value of bits `low` (0 to 127) and `high`
    /// (128 to 255).
    fn put(&mut self, id: FstSignalId, width: u32, low: u128, high: u128) -> io::Result<()> {
        put(&mut self.w, &mut self.text, id, width, low, high)
    }

    /// Dumps cycle `cycle` with the testbench's counter at `count`: the rising edge that opens
    /// it (with every changed value, visited in declaration order by `probe`) and the falling
    /// edge half a period later (see [`super::BlockVcd::sample_counted`]).
    pub fn sample_counted(
        &mut self,
        cycle: u64,
        count: u64,
        probe: impl FnOnce(&mut dyn Visit),
    ) -> io::Result<()> {
        if !self.window.contains(cycle) {
            return Ok(());
        }
        if self.w.size() >= FLUSH_BYTES {
            // Only right before a new time: the writer's rule.
            self.w.flush().map_err(io_error)?;
        }
        let t = cycle_time_ps(cycle);
        self.w.time_change(t).map_err(io_error)?;
        self.put(self.clk, 1, 1, 0)?;
        if !self.started {
            self.put(self.rst, 1, (cycle != 0) as u128, 0)?;
            self.started = true;
        }
        self.put(self.cycle, 64, count as u128, 0)?;
        let (w, ids, text) = (&mut self.w, &self.ids, &mut self.text);
        let mut c = Changes::new(&mut self.last, |k, low, high| {
            let (id, width) = ids[k];
            put(w, text, id, width, low, high)
        });
        probe(&mut c);
        if let Some(e) = c.err {
            return Err(e);
        }
        self.w
            .time_change(t + CLOCK_PERIOD_PS / 2)
            .map_err(io_error)?;
        self.put(self.clk, 1, 0, 0)?;
        if cycle == 0 {
            self.put(self.rst, 1, 1, 0)?;
        }
        Ok(())
    }

    /// Writes the last block and the header's end time and counts, and flushes the file.
    pub fn finish(self) -> io::Result<()> {
        let mut out = self.w.finish().map_err(io_error)?;
        out.flush()
    }
}
