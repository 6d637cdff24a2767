//! FST dumps of a whole fabric (`arnsim run --fst`): the signals, hierarchy and samples of the
//! fabric VCD ([`super::fabric_vcd`]) in GTKWave's compressed binary format, written by the
//! `fst-writer` crate.
//!
//! Same scopes (`fabric`, then one per dotted level), same names (a vector's name carries its
//! range, `credits [15:0]`, as Verilator's FST dumps do), same time base (1 ps ticks) and the
//! same value changes: a cycle's sample at the rising edge that opens the next cycle, with `clk`
//! and `cycle`, and the falling clock edge half a period later. The file opens at time 0 with
//! every signal unknown (`x`) up to the first sample, where a VCD has no value yet.
//!
//! The writer streams: value changes are gathered in memory up to [`FLUSH_BYTES`] and then
//! written as one compressed block, so the file is never held whole.

use super::dump_window::{DumpWindow, WaveSink};
use super::fabric_vcd::FabricSignal;
use super::vcd_writer::{CLOCK_PERIOD_PS, cycle_time_ps};
use crate::fabric::Sample;
use fst_writer::{
    FstBodyWriter, FstFileType, FstHeaderWriter, FstInfo, FstScopeType, FstSignalId, FstSignalType,
    FstVarDirection, FstVarType, FstWriteError,
};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::ops::Range;

/// The value changes gathered in memory before they are written to the file as one block.
pub const FLUSH_BYTES: usize = 16 << 20;

/// A fabric FST being written.
pub struct FabricFst {
    w: FstBodyWriter<BufWriter<File>>,
    clk: FstSignalId,
    cycle: FstSignalId,
    sigs: Vec<(FstSignalId, u32)>,
    /// Per signal: the value written last.
    last: Vec<Option<u64>>,
    /// Where the dump stands in its window ([`FabricFst::samples`]).
    window: DumpWindow,
    /// The text of one value, `0`/`1` per bit, most significant first.
    text: [u8; 64],
}

/// The I/O error of a failed write, or the writer's own error as one.
pub(super) fn io_error(e: FstWriteError) -> io::Error {
    match e {
        FstWriteError::Io(e) => e,
        other => io::Error::other(other.to_string()),
    }
}

/// The name an FST gives a `width`-bit signal `leaf`: Verilator's, with the range after a space.
pub(super) fn var_name(leaf: &str, width: u32) -> String {
    match width {
        1 => leaf.to_string(),
        w => format!("{leaf} [{}:0]", w - 1),
    }
}

impl FabricFst {
    /// Writes the header of a dump of `chosen` (see [`super::fabric_vcd::select`]) into `file`.
    pub fn new(file: File, chosen: &[FabricSignal]) -> io::Result<Self> {
        let info = FstInfo {
            // Not the start (the writer always starts at 0) but the FST's `timezero`, an offset
            // readers add to every time: none.
            start_time: 0,
            timescale_exponent: -12,
            version: "arnsim fabric FST".into(),
            // No date: the same run writes the same file.
            date: String::new(),
            file_type: FstFileType::Verilog,
        };
        let mut h = FstHeaderWriter::new(BufWriter::new(file), &info).map_err(io_error)?;
        let wire = |h: &mut FstHeaderWriter<_>, name: &str, width: u32| {
            h.var(
                var_name(name, width),
                FstSignalType::bit_vec(width),
                FstVarType::Wire,
                FstVarDirection::Implicit,
                None,
            )
        };
        h.scope("fabric", "", FstScopeType::Module)
            .map_err(io_error)?;
        let clk = wire(&mut h, "clk", 1).map_err(io_error)?;
        let cycle = wire(&mut h, "cycle", 64).map_err(io_error)?;
        let mut stack: Vec<&str> = vec!["fabric"];
        let mut sigs = Vec::with_capacity(chosen.len());
        for s in chosen {
            let parts: Vec<&str> = s.name.split('.').collect();
            let (scopes, leaf) = parts.split_at(parts.len().saturating_sub(1));
            let common = stack.iter().zip(scopes).take_while(|(a, b)| a == b).count();
            for _ in common..stack.len() {
                h.up_scope().map_err(io_error)?;
            }
            stack.truncate(common);
            for sc in &scopes[common..] {
                h.scope(sc, "", FstScopeType::Module).map_err(io_error)?;
                stack.push(sc);
            }
            let leaf = leaf.first().copied().unwrap_or_default();
            let id = wire(&mut h, leaf, s.width.clamp(1, 64)).map_err(io_error)?;
            sigs.push((id, s.width.clamp(1, 64)));
        }
        for _ in 0..stack.len() {
            h.up_scope().map_err(io_error)?;
        }
        let w = h.finish().map_err(io_error)?;
        let n = sigs.len();
        Ok(FabricFst {
            w,
            clk,
            cycle,
            sigs,
            last: vec![None; n],
            window: DumpWindow::new(n),
            text: [b'0'; 64],
        })
    }

    /// Dumps the `cycles` of a window of [`crate::fabric::Fabric::run_tapped`] from its changes
    /// (sorted by cycle, then signal; every signal changes in the first cycle its tap records),
    /// keeping the cycles in `from..=to`: the value changes
    /// [`super::fabric_vcd::FabricVcd::samples`] writes for the same arguments.
    pub fn samples(
        &mut self,
        cycles: Range<u64>,
        changes: &[Sample],
        from: u64,
        to: u64,
    ) -> io::Result<()> {
        let mut window = std::mem::take(&mut self.window);
        let fed = window.feed(self, cycles, changes, from, to);
        self.window = window;
        fed
    }

    /// Signal `id`, `width` bits wide, changes to `v`.
    fn put(&mut self, id: FstSignalId, width: u32, v: u64) -> io::Result<()> {
        let w = width.clamp(1, 64) as usize;
        for (i, c) in self.text[..w].iter_mut().enumerate() {
            *c = b'0' + ((v >> (w - 1 - i)) & 1) as u8;
        }
        self.w.signal_change(id, &self.text[..w]).map_err(io_error)
    }

    /// Opens cycle `cycle`'s sample: its time (the gathered changes written as a block first
    /// once they are [`FLUSH_BYTES`] or more), the rising clock edge and the cycle counter.
    fn open_cycle(&mut self, cycle: u64) -> io::Result<()> {
        if self.w.size() >= FLUSH_BYTES {
            // Only right before a new time: the writer's rule.
            self.w.flush().map_err(io_error)?;
        }
        self.w
            .time_change(cycle_time_ps(cycle + 1))
            .map_err(io_error)?;
        self.put(self.clk, 1, 1)?;
        self.put(self.cycle, 64, cycle + 1)
    }

    /// Signal `k`'s change to `v`, if it differs from the value written last.
    fn change(&mut self, k: usize, v: u64) -> io::Result<()> {
        let Some(&(id, width)) = self.sigs.get(k) else {
            return Err(io::Error::other(format!("no dumped signal {k}")));
        };
        if self.last[k] == Some(v) {
            return Ok(());
        }
        self.last[k] = Some(v);
        self.put(id, width, v)
    }

    /// The falling clock edge that closes cycle `cycle`'s sample.
    fn close_cycle(&mut self, cycle: u64) -> io::Result<()> {
        self.w
            .time_change(cycle_time_ps(cycle + 1) + CLOCK_PERIOD_PS / 2)
            .map_err(io_error)?;
        self.put(self.clk, 1, 0)
    }

    /// Writes the last block and the header's end time and counts, and flushes the file. (An FST
    /// holds no comment: a dump whose run stopped early simply ends at its last cycle.)
    pub fn finish(self) -> io::Result<()> {
        let mut out = self.w.finish().map_err(io_error)?;
        out.flush()
    }
}

impl WaveSink for FabricFst {
    fn open_cycle(&mut self, c: u64) -> io::Result<()> {
        FabricFst::open_cycle(self, c)
    }

    fn show(&mut self, k: usize, v: u64) -> io::Result<()> {
        FabricFst::change(self, k, v)
    }

    fn change(&mut self, k: usize, v: u64) -> io::Result<()> {
        FabricFst::change(self, k, v)
    }

    fn close_cycle(&mut self, c: u64) -> io::Result<()> {
        FabricFst::close_cycle(self, c)
    }
}
