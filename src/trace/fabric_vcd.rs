//! VCD dumps of a whole fabric, chosen by scope patterns and a window of cycles.
//!
//! Hierarchy (stable names): `fabric` holds `clk` and `cycle`; each switch is `s<stage>_<k>` (the
//! k-th switch of its stage); inside it `in<p>.vc<v>.occupancy`, `out<p>.busy`, `out<p>.packet`
//! (id of the packet on the link) and its header decoded in `out<p>.pkt.{src,dlid,len,vc,adapted}`,
//! `out<p>.detector_state` (0 idle, 1 wait, 2 root), `out<p>.crossed`, `out<p>.vc<v>.credits`, and
//! `arn_table.entries`; each end node is `n<id>` with `queued` (packets in its send memory).
//! A pattern is matched against the full dotted name; `*` stands for any run of characters
//! (dots included), so `fabric.s3_*.out4.*` selects every signal of output 4 of every stage-3 switch.
//!
//! Values are sampled after each cycle's clock edge: the sample of cycle `c` is stamped at the
//! rising edge that opens cycle `c + 1` (1 ps ticks, 5120 ps per cycle, as the block dumps).

use super::dump_window::{DumpWindow, WaveSink};
pub use super::fabric_tap::FabricTap;
pub use super::gtkw::write_fabric_gtkw;
use super::vcd_writer::{CLOCK_PERIOD_PS, IdText, append_change, append_timestamp, cycle_time_ps};
use crate::cycle::CycleSwitch;
use crate::fabric::node::EndNode;
use crate::fabric::{Fabric, Sample};
use crate::switch::OutputProbe;
use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::ops::Range;
use std::path::Path;

#[derive(Clone, Copy, Debug)]
pub(super) enum Src {
    InOcc(u32, u16, u8),
    Credits(u32, u16, u8),
    /// Field `j` of [`OUTPUT_FIELDS`] of an output.
    Out(u32, u16, u8),
    ArnEntries(u32),
    Queued(u32),
}

/// One dumpable signal: full dotted name, width, where its value comes from.
#[derive(Clone, Debug)]
pub struct FabricSignal {
    /// Full dotted name, `fabric.s1_0.out3.vc0.credits`.
    pub name: String,
    /// Width in bits.
    pub width: u32,
    pub(super) src: Src,
}

/// Whether `name` matches `pattern` (`*` = any run of characters).
pub fn glob(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < n.len() {
        if i < p.len() && p[i] == b'*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if i < p.len() && p[i] == n[j] {
            i += 1;
            j += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    while i < p.len() && p[i] == b'*' {
        i += 1;
    }
    i == p.len()
}

/// Every signal of the fabric, in hierarchy order.
pub fn fabric_signals<const V: usize>(f: &Fabric<V>) -> Vec<FabricSignal> {
    let mut v = Vec::new();
    for (s, name) in f.switches().iter().zip(f.switch_names()) {
        let base = format!("fabric.{name}");
        let id = s.id();
        v.push(FabricSignal {
            name: format!("{base}.arn_table.entries"),
            width: 7,
            src: Src::ArnEntries(id),
        });
        for p in 0..s.ports() as u16 {
            for vc in 0..f.params().switch.vcs() as u8 {
                v.push(FabricSignal {
                    name: format!("{base}.in{p}.vc{vc}.occupancy"),
                    width: 16,
                    src: Src::InOcc(id, p, vc),
                });
            }
            let out = format!("{base}.out{p}");
            for (j, (leaf, width)) in OUTPUT_FIELDS.iter().enumerate() {
                v.push(FabricSignal {
                    name: format!("{out}.{leaf}"),
                    width: *width,
                    src: Src::Out(id, p, j as u8),
                });
            }
            for vc in 0..f.params().switch.vcs() as u8 {
                v.push(FabricSignal {
                    name: format!("{out}.vc{vc}.credits"),
                    width: 16,
                    src: Src::Credits(id, p, vc),
                });
            }
        }
    }
    for n in 0..f.nodes().len() as u32 {
        v.push(FabricSignal {
            name: format!("fabric.n{n}.queued"),
            width: 10,
            src: Src::Queued(n),
        });
    }
    v
}

/// The switch or node a signal belongs to.
pub(super) enum Owner {
    Switch(u32),
    Node(u32),
}

impl Src {
    pub(super) fn owner(self) -> Owner {
        match self {
            Src::Queued(n) => Owner::Node(n),
            Src::InOcc(s, ..) | Src::Credits(s, ..) | Src::Out(s, ..) | Src::ArnEntries(s) => {
                Owner::Switch(s)
            }
        }
    }
}

fn read<const V: usize>(f: &Fabric<V>, src: Src) -> u64 {
    match src.owner() {
        Owner::Node(n) => read_node(&f.nodes()[n as usize], src),
        Owner::Switch(s) => {
            let units = f
                .cycle_units()
                .expect("FabricVcd::sample reads the cycle engine's switches");
            read_switch(&units[s as usize], src)
        }
    }
}

/// The value of `src`, a signal of switch `sw` (every signal is at most 32 bits wide).
fn read_switch(sw: &CycleSwitch, src: Src) -> u64 {
    if let Some((p, j)) = probe_index(src) {
        return probe_field(sw.output_probe(p as usize), j);
    }
    match src {
        Src::InOcc(_, p, v) => sw.buffered(p as usize, v as usize) as u64,
        Src::Credits(_, p, v) => sw.credits(p as usize, v as usize) as u64,
        Src::ArnEntries(_) => sw.arn_table().count() as u64,
        _ => 0,
    }
}

/// The signals of an output, in order: name below `out<p>` and width. `packet` is the id of the
/// packet on the link; `pkt.*` are the fields of its header, decoded (all 0 when idle).
pub(super) const OUTPUT_FIELDS: [(&str, u32); 9] = [
    ("busy", 1),
    ("packet", 32),
    ("pkt.src", 16),
    ("pkt.dlid", 16),
    ("pkt.len", 13),
    ("pkt.vc", 4),
    ("pkt.adapted", 1),
    ("detector_state", 2),
    ("crossed", 7),
];

/// Field `j` of an output's probe, in the order of [`OUTPUT_FIELDS`].
#[inline]
pub(super) fn probe_field(pr: OutputProbe, j: usize) -> u64 {
    crate::fabric::probe_value(&pr, j)
}

/// The probe field (see [`probe_field`]) of a switch signal, if it is one.
pub(super) fn probe_index(src: Src) -> Option<(u16, usize)> {
    match src {
        Src::Out(_, p, j) => Some((p, j as usize)),
        _ => None,
    }
}

/// The value of `src`, a signal of node `n`.
pub(super) fn read_node<const V: usize>(n: &EndNode<V>, src: Src) -> u64 {
    match src {
        Src::Queued(_) => n.queued() as u64,
        _ => 0,
    }
}

/// Where a fabric VCD stands, as a checkpoint keeps it ([`FabricVcd::state`]).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct VcdState {
    /// Bytes of the file written so far.
    pub bytes: u64,
    last: Vec<Option<u64>>,
    window: DumpWindow,
}

/// The header of a dump of `chosen` written by `w`: the identifiers of the clock, the cycle
/// counter and each signal.
#[allow(clippy::type_complexity)]
fn header<W: io::Write>(
    w: &mut vcd::Writer<W>,
    chosen: &[FabricSignal],
) -> io::Result<(IdText, IdText, Vec<(Src, IdText, u32)>)> {
    w.version("arnsim fabric VCD")?;
    w.timescale(1, vcd::TimescaleUnit::PS)?;
    w.add_module("fabric")?;
    let clk = w.add_wire(1, "clk")?;
    let cycle = w.add_var(
        vcd::VarType::Wire,
        64,
        "cycle",
        Some(vcd::ReferenceIndex::Range(63, 0)),
    )?;
    let mut stack: Vec<String> = vec!["fabric".into()];
    let mut sigs = Vec::with_capacity(chosen.len());
    for s in chosen {
        let parts: Vec<&str> = s.name.split('.').collect();
        let (scopes, leaf) = parts.split_at(parts.len() - 1);
        let common = stack
            .iter()
            .zip(scopes)
            .take_while(|(a, b)| a == *b)
            .count();
        for _ in common..stack.len() {
            w.upscope()?;
        }
        stack.truncate(common);
        for sc in &scopes[common..] {
            w.add_module(sc)?;
            stack.push(sc.to_string());
        }
        let index = (s.width > 1).then(|| vcd::ReferenceIndex::Range(s.width as i32 - 1, 0));
        let id = w.add_var(vcd::VarType::Wire, s.width, leaf[0], index)?;
        sigs.push((s.src, IdText::new(id), s.width));
    }
    for _ in 0..stack.len() {
        w.upscope()?;
    }
    w.enddefinitions()?;
    Ok((IdText::new(clk), IdText::new(cycle), sigs))
}

/// A fabric VCD being written.
pub struct FabricVcd {
    w: vcd::Writer<BufWriter<File>>,
    clk: IdText,
    cycle: IdText,
    sigs: Vec<(Src, IdText, u32)>,
    /// Per signal: the value written last by [`FabricVcd::change`]. The windows of
    /// [`FabricVcd::samples`] write every sample as a change; debug builds check that against it.
    last: Vec<Option<u64>>,
    /// Where the dump stands in its window (`FabricVcd::samples`).
    window: DumpWindow,
    /// Text of the cycles written since the last spill into the file.
    body: Vec<u8>,
}

/// How much cycle text [`FabricVcd`] gathers before it hands it to the file.
const SPILL_BYTES: usize = 1 << 18;

/// The signals of `f` whose names match one of `patterns` (every signal when there are none), in
/// hierarchy order, and per pattern the number of signals it matches.
pub fn select<const V: usize>(
    f: &Fabric<V>,
    patterns: &[String],
) -> (Vec<FabricSignal>, Vec<usize>) {
    let mut per_pattern = vec![0; patterns.len()];
    let chosen = fabric_signals(f)
        .into_iter()
        .filter(|s| {
            let mut any = patterns.is_empty();
            for (n, p) in per_pattern.iter_mut().zip(patterns) {
                if glob(p, &s.name) {
                    *n += 1;
                    any = true;
                }
            }
            any
        })
        .collect();
    (chosen, per_pattern)
}

impl FabricVcd {
    /// Opens `path` with the signals of `f` whose names match one of `patterns`, and writes a
    /// GTKWave save file beside it (same name, `.gtkw`), signals grouped per switch and port, with
    /// the translate filter for detector states (`.states.txt`) when one is chosen.
    /// Returns the writer and the number of signals.
    /// `(first, last)` are the cycles the save file opens the view on.
    pub fn create<const V: usize>(
        path: &Path,
        f: &Fabric<V>,
        patterns: &[String],
        (first, last): (u64, u64),
    ) -> io::Result<(Self, usize)> {
        let (chosen, _) = select(f, patterns);
        let v = FabricVcd::new(File::create(path)?, &chosen)?;
        let gtkw = path.with_extension("gtkw");
        let mut g = BufWriter::new(File::create(&gtkw)?);
        let name = |p: &Path| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let states = chosen.iter().any(|s| s.name.ends_with(".detector_state"));
        let states = states.then(|| super::states_path(path));
        if let Some(p) = &states {
            std::fs::write(p, super::DETECTOR_STATES)?;
        }
        let states = states.as_deref().map(name);
        let (vcd, gtkw) = (name(path), name(&gtkw));
        write_fabric_gtkw(&mut g, &vcd, &gtkw, states.as_deref(), &chosen, first, last)?;
        g.flush()?;
        Ok((v, chosen.len()))
    }

    /// Writes the header of a dump of `chosen` (see [`select`]) into `file`.
    pub fn new(file: File, chosen: &[FabricSignal]) -> io::Result<Self> {
        let mut w = vcd::Writer::new(BufWriter::new(file));
        let (clk, cycle, sigs) = header(&mut w, chosen)?;
        let n = sigs.len();
        Ok(FabricVcd {
            w,
            clk,
            cycle,
            last: vec![None; n],
            window: DumpWindow::new(n),
            body: Vec::with_capacity(SPILL_BYTES + (1 << 12)),
            sigs,
        })
    }

    /// Where the dump stands, for a checkpoint: every cycle gathered handed to the file and
    /// flushed, the bytes written and the values written last.
    pub fn state(&mut self) -> io::Result<VcdState> {
        self.spill(0)?;
        self.w.flush()?;
        Ok(VcdState {
            bytes: self.w.writer().get_mut().stream_position()?,
            last: self.last.clone(),
            window: self.window.clone(),
        })
    }

    /// The dump of `chosen` continued where `state` left it: `file` holds the dump's first
    /// `state.bytes` bytes and is positioned at their end.
    pub fn resume(file: File, chosen: &[FabricSignal], state: VcdState) -> io::Result<Self> {
        // The identifiers are those the header gave out.
        let (clk, cycle, sigs) = header(&mut vcd::Writer::new(io::sink()), chosen)?;
        if state.last.len() != sigs.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the checkpoint's dump has {} signals, this one {}",
                    state.last.len(),
                    sigs.len()
                ),
            ));
        }
        Ok(FabricVcd {
            w: vcd::Writer::new(BufWriter::new(file)),
            clk,
            cycle,
            last: state.last,
            window: state.window,
            body: Vec::with_capacity(SPILL_BYTES + (1 << 12)),
            sigs,
        })
    }

    /// Dumps the state after cycle `cycle` has been stepped, read from a fabric the cycle engine
    /// steps (the event engine shows its switches through [`Fabric::run_tapped`] only).
    pub fn sample<const V: usize>(&mut self, f: &Fabric<V>, cycle: u64) -> io::Result<()> {
        self.open_cycle(cycle);
        for k in 0..self.sigs.len() {
            let v = read(f, self.sigs[k].0);
            self.change(k, v);
        }
        self.window.mark_started();
        self.close_cycle(cycle);
        self.spill(SPILL_BYTES)
    }

    /// The dumped signals grouped per switch and node of `f`, for [`Fabric::run_tapped`].
    pub fn tap<const V: usize>(&self, f: &Fabric<V>) -> FabricTap {
        FabricTap::new(f, self.sigs.iter().map(|s| s.0))
    }

    /// Dumps the `cycles` of a window of [`Fabric::run_tapped`] from its changes (sorted by
    /// cycle, then signal; every signal changes in the first cycle its tap records), keeping the
    /// cycles in `from..=to`: the same bytes as [`FabricVcd::sample`] after each of those cycles.
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
        fed?;
        self.spill(SPILL_BYTES)
    }

    /// Hands the gathered cycle text to the file once it holds `at_least` bytes.
    fn spill(&mut self, at_least: usize) -> io::Result<()> {
        if self.body.len() >= at_least.max(1) {
            self.w.writer().write_all(&self.body)?;
            self.body.clear();
        }
        Ok(())
    }

    /// Appends the opening of cycle `cycle`'s sample: its time stamp, the rising clock edge and
    /// the cycle counter.
    fn open_cycle(&mut self, cycle: u64) {
        let out = &mut self.body;
        append_timestamp(out, cycle_time_ps(cycle + 1));
        append_change(out, &self.clk, 1, 1);
        append_change(out, &self.cycle, 64, cycle + 1);
    }

    /// Appends signal `k`'s change to `v`, if it differs from the value written last.
    fn change(&mut self, k: usize, v: u64) {
        if self.last[k] != Some(v) {
            self.last[k] = Some(v);
            let (_, id, width) = &self.sigs[k];
            append_change(&mut self.body, id, *width, v);
        }
    }

    /// Appends the falling clock edge that closes cycle `cycle`'s sample.
    fn close_cycle(&mut self, cycle: u64) {
        let out = &mut self.body;
        append_timestamp(out, cycle_time_ps(cycle + 1) + CLOCK_PERIOD_PS / 2);
        append_change(out, &self.clk, 1, 0);
    }

    /// Flushes the file.
    pub fn finish(mut self) -> io::Result<()> {
        self.spill(0)?;
        self.w.flush()
    }

    /// Ends a dump whose run stopped early: the cycles gathered so far, then a `$comment` saying
    /// why the dump ends there (`note`, one line), and flushes the file.
    pub fn finish_early(mut self, note: &str) -> io::Result<()> {
        self.spill(0)?;
        self.w.comment(note)?;
        self.w.flush()
    }
}

impl WaveSink for FabricVcd {
    fn open_cycle(&mut self, c: u64) -> io::Result<()> {
        FabricVcd::open_cycle(self, c);
        Ok(())
    }

    fn show(&mut self, k: usize, v: u64) -> io::Result<()> {
        FabricVcd::change(self, k, v);
        Ok(())
    }

    /// Every recorded change is a change of what was written last: written as it is (debug
    /// builds check it against the value written last).
    fn change(&mut self, k: usize, v: u64) -> io::Result<()> {
        if cfg!(debug_assertions) {
            assert_ne!(self.last[k], Some(v), "signal {k} recorded unchanged");
            self.last[k] = Some(v);
        }
        let (_, id, width) = &self.sigs[k];
        append_change(&mut self.body, id, *width, v);
        Ok(())
    }

    fn close_cycle(&mut self, c: u64) -> io::Result<()> {
        FabricVcd::close_cycle(self, c);
        Ok(())
    }
}

impl Drop for FabricVcd {
    /// A dump left without [`FabricVcd::finish`] (a run cut short) still gets the cycles gathered
    /// so far; the file's own buffer is flushed when it is dropped in turn.
    fn drop(&mut self) {
        let _ = self.spill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_the_hierarchy() {
        assert!(glob("fabric.s3_*.out4.*", "fabric.s3_12.out4.vc0.credits"));
        assert!(glob("fabric.s3_*.out4.*", "fabric.s3_1.out4.busy"));
        assert!(!glob("fabric.s3_*.out4.*", "fabric.s2_1.out4.busy"));
        assert!(!glob("fabric.s3_*.out4.*", "fabric.s3_1.out40"));
        assert!(glob("*credits", "fabric.s1_0.out0.vc1.credits"));
        assert!(glob("*", "anything"));
        assert!(!glob("fabric.n1.*", "fabric.n10.queued"));
    }
}
