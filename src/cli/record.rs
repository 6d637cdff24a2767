//! `arnsim run --record-switch NAME`: the request checked and its file reserved (the run writes
//! the recording of the switch's ports, `run::Run::record`, `docs/recording.md`); and
//! `arnsim replay FILE [--vcd OUT]`: a recording replayed into the cycle engine, every output
//! compared, its port interface dumped as the Verilated replay of `hdl-ref/switch.sv` dumps it.

use super::Failure;
use super::dump::flag_cycles;
use super::interrupt::{Stop, exit_code, signal_name};
use super::outputs::{Staged, refuse_overwriting_inputs};
use super::run::progress_bar;
use crate::config::Scenario;
use crate::config::text_lines::open_input;
use crate::config::units::nanoseconds;
use crate::cycle::compare::{Replay, ReplayError};
use crate::cycle::{CycleSwitch, PortIn, PortOut};
use crate::run::Run;
use crate::trace::recording::{RecordingHeader, RecordingReader};
use crate::trace::switch_ports::{COUNTER, TESTBENCH, clock_cycle, probe_ports};
use crate::trace::{BlockFst, BlockVcd, CLOCK_PERIOD_PS, VcdWindow};
use indicatif::{ProgressBar, ProgressFinish};
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};

/// What `--record-switch`, `--from` and `--to` ask for.
#[derive(Clone, Debug)]
pub struct RecordRequest {
    /// The switch, by its name in the waveforms (`s2_0`).
    pub switch: String,
    /// First cycle compared (a time).
    pub from: Option<String>,
    /// Last cycle recorded (a time).
    pub to: Option<String>,
}

/// Checks the request against the scenario and the run's fabric, reserves `<out>/<NAME>.rec`
/// and has the run record that switch into it (the header is written now, before the first
/// cycle). Returns the file, renamed into place with the run's other outputs.
pub fn start<const V: usize>(
    s: &Scenario,
    req: &RecordRequest,
    run: &mut Run<'_, V>,
    out: &Path,
) -> Result<Staged, String> {
    let (id, cycles) = resolve(s, req, run)?;
    let mut staged = Staged::open(&out.join(format!("{}.rec", req.switch)))
        .map_err(|e| format!("--record-switch {e}"))?;
    let file = staged.take_file()?;
    run.record(id, &req.switch, cycles, Box::new(file))
        .map_err(|e| format!("{}: {e}", staged.dest().display()))?;
    Ok(staged)
}

/// [`start`] on an MPI rank other than 0: the rank takes part in the recording (it hands on
/// what its switches note) and writes nothing.
pub fn start_unwritten<const V: usize>(
    s: &Scenario,
    req: &RecordRequest,
    run: &mut Run<'_, V>,
) -> Result<(), String> {
    let (id, cycles) = resolve(s, req, run)?;
    run.record(id, &req.switch, cycles, Box::new(std::io::sink()))
        .map_err(|e| e.to_string())
}

/// The switch of the request, and its first and last cycles.
fn resolve<const V: usize>(
    s: &Scenario,
    req: &RecordRequest,
    run: &Run<'_, V>,
) -> Result<(usize, (u64, u64)), String> {
    let names = run.fabric().switch_names();
    let Some(id) = names.iter().position(|n| *n == req.switch) else {
        let some: Vec<&str> = names.iter().take(6).map(|s| s.as_str()).collect();
        return Err(format!(
            "--record-switch {}: no such switch (the fabric's switches are named like {})",
            req.switch,
            some.join(", ")
        ));
    };
    let last = s.sim_cycles.saturating_sub(1);
    let from = req
        .from
        .as_deref()
        .map(|t| flag_cycles(s, "from", t))
        .transpose()?
        .unwrap_or(0);
    let to = req
        .to
        .as_deref()
        .map(|t| flag_cycles(s, "to", t))
        .transpose()?
        .unwrap_or(last)
        .min(last);
    if from > to {
        return Err(format!(
            "--from: cycle {from} is after the last cycle recorded ({to})"
        ));
    }
    Ok((id, (from, to)))
}

/// What `arnsim replay [--vcd OUT] [--fst OUT] [--from T] [--to T]` asks for.
#[derive(Clone, Debug)]
pub struct ReplayDump {
    /// The VCD to write, if any.
    pub vcd: Option<PathBuf>,
    /// The FST to write, if any (the same window and signals).
    pub fst: Option<PathBuf>,
    /// First recording cycle dumped (a cycle or a time; the recording's `from` without it).
    pub from: Option<String>,
    /// Last recording cycle dumped (the recording's last without it).
    pub to: Option<String>,
}

/// A `--from`/`--to` of `arnsim replay`: a recording cycle (`1953`) or a time (`10us`), read as
/// `arnsim run` reads times, at the dumps' [`CLOCK_PERIOD_PS`] per cycle.
pub fn replay_cycle(flag: &str, text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(c) => return Ok(c),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
            return Err(format!(
                "--{flag}: cycle `{}` is beyond the largest cycle number ({})",
                text.trim(),
                u64::MAX
            ));
        }
        Err(_) => {}
    }
    let ns = nanoseconds(text).map_err(|e| format!("--{flag}: {e} (or a cycle number)"))?;
    let c = (ns * 1000.0 / CLOCK_PERIOD_PS as f64).round();
    if !(0.0..=1e15).contains(&c) {
        return Err(format!("--{flag}: `{text}` is out of range"));
    }
    Ok(c as u64)
}

/// The Rust cycle engine's dumps of a replay: the port interface as the Verilated replay dumps
/// it (`trace::switch_ports`), on the same clock cycles, as a VCD, an FST or both.
struct ReplayVcd {
    vcd: Option<(BlockVcd<BufWriter<File>>, Staged)>,
    fst: Option<(BlockFst, Staged)>,
    /// Clock cycles of the Verilated replay before recording cycle 0.
    setup: u64,
    from: u64,
    to: u64,
    vcs: usize,
}

impl ReplayVcd {
    fn open(d: &ReplayDump, h: &RecordingHeader) -> Result<Self, String> {
        let from = d
            .from
            .as_deref()
            .map(|t| replay_cycle("from", t))
            .transpose()?
            .unwrap_or(h.from);
        let mut to =
            d.to.as_deref()
                .map(|t| replay_cycle("to", t))
                .transpose()?
                .unwrap_or(h.to);
        if to > h.to {
            crate::errln!(
                "arnsim: warning: --to: cycle {to} is past the recording's last cycle, {}: the dump ends there",
                h.to
            );
            to = h.to;
        }
        if from > to {
            return Err(format!(
                "--from: cycle {from} is after the last cycle dumped ({to})"
            ));
        }
        let setup = clock_cycle(h.setup_writes(), 0);
        let (ports, vcs) = (h.wiring.out_capacity.len(), h.params.vcs());
        let ins = vec![PortIn::default(); ports];
        let outs = vec![PortOut::default(); ports];
        let window = VcdWindow {
            from: setup + from,
            to: setup + to,
        };
        let declare = |v: &mut dyn crate::trace::Visit| probe_ports(&ins, &outs, vcs, v);
        let vcd = match &d.vcd {
            Some(path) => {
                let mut staged = Staged::open(path).map_err(|e| format!("--vcd {e}"))?;
                let file = staged.take_file()?;
                let vcd = BlockVcd::with_counter(
                    BufWriter::new(file),
                    TESTBENCH,
                    COUNTER,
                    window,
                    declare,
                )
                .map_err(|e| format!("{}: {e}", path.display()))?;
                Some((vcd, staged))
            }
            None => None,
        };
        let fst = match &d.fst {
            Some(path) => {
                let mut staged = Staged::open(path).map_err(|e| format!("--fst {e}"))?;
                let file = staged.take_file()?;
                let fst = BlockFst::with_counter(file, TESTBENCH, COUNTER, window, declare)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                Some((fst, staged))
            }
            None => None,
        };
        Ok(ReplayVcd {
            vcd,
            fst,
            setup,
            from,
            to,
            vcs,
        })
    }

    /// Dumps recording cycle `t`.
    fn sample(&mut self, t: u64, ins: &[PortIn], outs: &[PortOut]) -> Result<(), String> {
        let (vcs, c) = (self.vcs, self.setup + t);
        if let Some((vcd, staged)) = &mut self.vcd {
            vcd.sample_counted(c, t, |v| probe_ports(ins, outs, vcs, v))
                .map_err(|e| format!("{}: {e}", staged.dest().display()))?;
        }
        if let Some((fst, staged)) = &mut self.fst {
            fst.sample_counted(c, t, |v| probe_ports(ins, outs, vcs, v))
                .map_err(|e| format!("{}: {e}", staged.dest().display()))?;
        }
        Ok(())
    }

    /// Finishes the dumps and renames them into place; returns their paths.
    fn finish(self) -> Result<Vec<String>, Failure> {
        let mut written = Vec::new();
        if let Some((vcd, staged)) = self.vcd {
            let out = staged.dest().display().to_string();
            vcd.finish().map_err(|e| format!("{out}: {e}"))?;
            staged.commit()?;
            written.push(out);
        }
        if let Some((fst, staged)) = self.fst {
            let out = staged.dest().display().to_string();
            fst.finish().map_err(|e| format!("{out}: {e}"))?;
            staged.commit()?;
            written.push(out);
        }
        Ok(written)
    }
}

/// Steps `replay` through the idle cycles before `until`, dumping those in the window; a stop
/// request ends it ([`stopped`]).
fn idle_to(
    replay: &mut Replay,
    until: u64,
    dump: &mut Option<ReplayVcd>,
    fail: &dyn Fn(ReplayError) -> String,
    bar: &ProgressBar,
    stop: &Stop,
) -> Result<(), Failure> {
    let idle = vec![PortIn::default(); replay.switch().ports()];
    while replay.switch().cycle() < until {
        let c = replay.switch().cycle();
        stopped(stop, c)?;
        // A long idle stretch in pieces, so that the progress bar moves.
        let piece = until.min(c.saturating_add(PROGRESS_CYCLES));
        match dump {
            Some(d) if (d.from..=d.to).contains(&c) => {
                replay.idle_until(c + 1).map_err(fail)?;
                d.sample(c, &idle, replay.outputs())?;
            }
            Some(d) if c < d.from => replay.idle_until_settled(piece.min(d.from)).map_err(fail)?,
            _ => replay.idle_until_settled(piece).map_err(fail)?,
        }
        bar.set_position(replay.switch().cycle());
    }
    Ok(())
}

/// A replay a signal asked to stop, at recording cycle `c`: it ends there with the signal's exit
/// code, its dump removed (its temporary file goes with the [`Staged`] dropped on the way out).
fn stopped(stop: &Stop, c: u64) -> Result<(), Failure> {
    match stop.requested(c) {
        None => Ok(()),
        Some(sig) => Err(Failure {
            message: format!(
                "stopped by {} at cycle {c}: the cycles before it were compared without a \
                 mismatch; nothing is written",
                signal_name(sig)
            ),
            code: exit_code(sig),
        }),
    }
}

/// Cycles between two moves of a replay's progress bar.
const PROGRESS_CYCLES: u64 = 1 << 16;

/// `arnsim replay FILE [--vcd OUT]`: rebuilds the recorded switch on the cycle engine, drives it
/// with the recorded inputs and compares every output of every cycle with the recorded ones;
/// with a dump, writes its port interface in the window as the Verilated replay dumps it.
///
/// SIGINT or SIGTERM (`stop`, listening from here) end it at the next cycle with nothing written:
/// a dump under way is removed, not left under its temporary name.
pub fn replay(path: &Path, dump: Option<&ReplayDump>, stop: &Stop) -> Result<(), Failure> {
    stop.listen()?;
    let name = path.display().to_string();
    if let Some(d) = dump {
        let outputs: Vec<_> = [("--vcd", &d.vcd), ("--fst", &d.fst)]
            .into_iter()
            .filter_map(|(flag, p)| p.clone().map(|p| (flag, p)))
            .collect();
        refuse_overwriting_inputs(&outputs, &[path.to_path_buf()])?;
    }
    let f = open_input(path).map_err(|e| format!("{name}: {e}"))?;
    // A recording cut short on a line boundary would replay up to its cut and then report the
    // cycles it lacks as mismatches: its last record is checked once its header is read.
    let last = last_record(&f).map_err(|e| format!("{name}: {e}"))?;
    let mut r = RecordingReader::open(&name, BufReader::new(f))?;
    if let Some(last) = last.as_ref().filter(|l| !l.starts_with("end ")) {
        return Err(format!(
            "{name}: the recording does not end with its `end` line (cut short?); its last line is `{}`",
            last.chars().take(80).collect::<String>().escape_debug()
        )
        .into());
    }
    let h = &r.header;
    let mut vcd = dump.map(|d| ReplayVcd::open(d, h)).transpose()?;
    let sw = CycleSwitch::new(h.params.clone(), h.wiring.clone(), h.lft.clone(), h.seed);
    let (switch, from, to) = (h.name.clone(), h.from, h.to);
    let mut replay = Replay::new(sw);
    // On a terminal, the cycles replayed against the header's last cycle (a run stopped early
    // ends sooner); gone once it is done.
    let bar = progress_bar(to.saturating_add(1)).with_finish(ProgressFinish::AndClear);
    // `file:line:` where the recording has a line for the port and side concerned.
    let report = |line: Option<usize>, e: ReplayError| match line {
        Some(l) => format!("{name}:{l}: switch {switch}: {e}"),
        None => format!("{name}: switch {switch}: {e}"),
    };
    let fail = |e: ReplayError| report(None, e);
    while let Some((c, ins, outs)) = r.next_frame()? {
        stopped(stop, c)?;
        idle_to(&mut replay, c, &mut vcd, &fail, &bar, stop)?;
        if c % PROGRESS_CYCLES == 0 {
            bar.set_position(c);
        }
        if let Err(e) = replay.check(c, ins, outs) {
            let line = match &e {
                ReplayError::Fault { fault, .. } => r.line_of(usize::from(fault.port), true),
                ReplayError::Mismatch(m) => r.line_of(m.port, false),
            };
            return Err(report(line, e).into());
        }
        if let Some(d) = vcd.as_mut().filter(|d| (d.from..=d.to).contains(&c)) {
            d.sample(c, ins, replay.outputs())?;
        }
    }
    let end = r
        .end
        .ok_or_else(|| format!("{name}: the recording has no `end` line (cut short?)"))?;
    idle_to(&mut replay, end, &mut vcd, &fail, &bar, stop)?;
    drop(bar);
    // A run stopped early ends its recording before the header's last cycle.
    let to = to.min(end.saturating_sub(1));
    // Every cycle is compared, those before `from` included; `from..=to` are the cycles of
    // interest the run was asked to record.
    // Idle cycles after the switch settled are not stepped: they could not change anything.
    let skipped = match replay.skipped() {
        0 => String::new(),
        n => format!(" ({n} idle cycles skipped once an idle cycle changed no register)"),
    };
    if end <= from {
        crate::outln!(
            "{switch}: {} cycles replayed on the cycle engine{skipped} and compared: 0 mismatches; the \
             recording ends at cycle {end}, {} its first cycle of interest ({from}), so it holds \
             none of them",
            replay.cycles(),
            if end == from { "at" } else { "before" }
        );
    } else {
        crate::outln!(
            "{switch}: {} cycles replayed on the cycle engine{skipped} (compared from cycle {from} to {to}): 0 mismatches",
            replay.cycles()
        );
    }
    if let Some(d) = vcd {
        let (a, b) = (d.setup + d.from, d.setup + d.to);
        let (from, to, writes) = (d.from, d.to, d.setup - 1);
        let out = d.finish()?.join(" and ");
        crate::outln!(
            "{out}: recording cycles {from}..={to} on clock cycles {a}..={b} (after reset and {writes} LFT writes); \
             the Verilated replay dumps the same window with\n  \
             testbenches/hdl/replay_switch.sh {name} --vcd HDL.vcd -- +vcd_from={a} +vcd_to={b}"
        );
    }
    Ok(())
}

/// The last line of `f` that is neither blank nor a comment, trimmed, read from its last 4 kB
/// (`None` when those hold none); `f` is left where it was.
fn last_record(f: &File) -> std::io::Result<Option<String>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = f;
    let len = f.metadata()?.len();
    let at = f.stream_position()?;
    f.seek(SeekFrom::Start(len.saturating_sub(4096)))?;
    let mut tail = Vec::new();
    f.read_to_end(&mut tail)?;
    f.seek(SeekFrom::Start(at))?;
    let text = String::from_utf8_lossy(&tail);
    Ok(text
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string))
}
