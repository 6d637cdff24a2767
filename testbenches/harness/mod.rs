//! Lockstep cross-check of a Rust block against its Verilated SystemVerilog twin.
//!
//! For one case: the seeded stimulus is generated once and written to `stim.txt`; the Rust block
//! runs on it and writes `rust.trace` (one line per cycle: every output, then every register) and
//! `rust.vcd`; the Verilated testbench reads the same `stim.txt` and writes `hdl.trace` and
//! `hdl.vcd`. The traces are compared line by line. On the first difference the report names the
//! cycle, the signal and both values, and both sides are run again with their VCD window around
//! that cycle; the VCDs are kept for GTKWave.
//!
//! The HDL side is built with `--assert`: a named assertion of `hdl-ref/` that fails stops the
//! simulation with `%Error: ... Assertion failed in TOP.<path>.<name>`. The harness reads those
//! lines back ([`AssertionFailure`]) and reports the assertion by name and cycle. An HDL
//! configuration may carry an [`RtlAlteration`]: a planted bug in a copy of the block's RTL, whose
//! case expects given assertions to fire.

pub mod case;
pub mod jobs;
pub mod waves;

use arnsim::blocks::Block;
use arnsim::stimulus::Stimulus;
use arnsim::trace::{BlockVcd, TraceHeader, TraceLine, VcdWindow, Visit};
use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Cycles dumped to VCD at the start of a passing case.
pub const VCD_HEAD_CYCLES: u64 = 2000;
/// Cycles dumped before and after a mismatch.
pub const VCD_AROUND_MISMATCH: u64 = 200;

/// The project root (where `hdl-ref/` and `testbenches/` are).
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A planted bug in the RTL of a block: the build uses a copy of `hdl-ref/<block>.sv` in which
/// the text `find` (which must occur exactly once) is replaced by `replace`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RtlAlteration {
    /// Short name, part of the build directory's name.
    pub name: &'static str,
    /// The RTL text to replace.
    pub find: &'static str,
    /// Its replacement.
    pub replace: &'static str,
}

/// One parameterisation of one HDL block: a Verilator build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HdlConfig {
    /// Block (module) name, e.g. `rr_arbiter`.
    pub block: &'static str,
    /// Top-level testbench parameters, passed as `-Gname=value`.
    pub params: Vec<(&'static str, u64)>,
    /// A planted bug in the block's RTL (`None`: the RTL of `hdl-ref/` as it is).
    pub alter: Option<RtlAlteration>,
}

impl HdlConfig {
    /// `rr_arbiter[N=5]`
    pub fn label(&self) -> String {
        let p: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        match &self.alter {
            None => format!("{}[{}]", self.block, p.join(",")),
            Some(a) => format!("{}[{}]+{}", self.block, p.join(","), a.name),
        }
    }

    /// Directory-safe tag.
    pub fn tag(&self) -> String {
        let p: Vec<String> = self.params.iter().map(|(k, v)| format!("{k}{v}")).collect();
        match &self.alter {
            None => format!("{}_{}", self.block, p.join("_")),
            Some(a) => format!("{}_{}_alt_{}", self.block, p.join("_"), a.name),
        }
    }

    /// The RTL source to build: `hdl-ref/<block>.sv`, or its altered copy written into `dir`.
    fn rtl_source(&self, dir: &Path) -> Result<PathBuf, String> {
        let orig = project_root().join(format!("hdl-ref/{}.sv", self.block));
        let Some(a) = &self.alter else {
            return Ok(orig);
        };
        let text = fs::read_to_string(&orig).map_err(io_err(&orig))?;
        let n = text.matches(a.find).count();
        if n != 1 {
            return Err(format!(
                "alteration {} of {}: the text to replace occurs {n} times (must be once):\n{}",
                a.name,
                orig.display(),
                a.find
            ));
        }
        let path = dir.join(format!("{}.sv", self.block));
        let altered = text.replacen(a.find, a.replace, 1);
        if fs::read_to_string(&path).ok().as_deref() != Some(altered.as_str()) {
            fs::write(&path, altered).map_err(io_err(&path))?;
        }
        Ok(path)
    }

    /// Builds (or reuses) the Verilated testbench, returning the simulator executable.
    pub fn build(&self) -> Result<PathBuf, String> {
        let root = project_root();
        let dir = jobs::target().join("hdl").join(self.tag());
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut cmd = Command::new("verilator");
        cmd.args([
            "--cc", "--exe", "--build", "-j", "2", "--trace", "--assert", "-Wall",
        ])
        .args(["--x-assign", "0", "--x-initial", "0"])
        .args(["--prefix", "Vtb", "--top-module"])
        .arg(format!("tb_{}", self.block))
        .arg("-I".to_string() + &root.join("testbenches/hdl").display().to_string())
        .arg("-I".to_string() + &root.join("hdl-ref").display().to_string())
        .args(["--Mdir"])
        .arg(&dir)
        .args(["-o", "sim"]);
        for (k, v) in &self.params {
            cmd.arg(format!("-G{k}={v}"));
        }
        // With ccache installed, Verilator's runtime (the same C++ in every build) is compiled
        // once for all the builds.
        if std::env::var_os("OBJCACHE").is_none() && has_ccache() {
            cmd.env("OBJCACHE", "ccache");
        }
        cmd.arg(self.rtl_source(&dir)?)
            .arg(root.join(format!("testbenches/hdl/tb_{}.sv", self.block)))
            .arg(root.join("testbenches/hdl/sim_main.cpp"));
        let out = cmd.output().map_err(|e| {
            format!(
                "cannot run verilator ({e}); install it with `apt-get install -y verilator` \
                 (the cross-check needs Verilator 5)"
            )
        })?;
        if !out.status.success() {
            return Err(format!(
                "verilator build of {} failed:\n{}{}",
                self.label(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(dir.join("sim"))
    }
}

/// Whether `ccache` runs on this machine (asked once for all the builds).
fn has_ccache() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        Command::new("ccache")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The first difference between the two traces.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// Cycle (0 is the first cycle after reset).
    pub cycle: u64,
    /// Signal name, as in the trace header.
    pub signal: String,
    /// Value on the Rust side (hex).
    pub rust: String,
    /// Value on the HDL side (hex).
    pub hdl: String,
    /// Rust VCD around the mismatch.
    pub rust_vcd: PathBuf,
    /// HDL VCD around the mismatch.
    pub hdl_vcd: PathBuf,
}

/// A named assertion (or assumption) of the RTL that failed in the HDL simulation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssertionFailure {
    /// The assertion's name (`a_...` or `m_...`).
    pub name: String,
    /// Its hierarchical path, e.g. `TOP.tb_rr_arbiter.u_dut.a_ptr_holds`.
    pub path: String,
    /// The cycle whose values broke it (0 is the first cycle after reset), when known.
    pub cycle: Option<u64>,
    /// Verilator's message, as printed.
    pub message: String,
}

impl std::fmt::Display for AssertionFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.cycle {
            Some(c) => write!(
                f,
                "assertion {} failed in cycle {c} ({})",
                self.name, self.path
            ),
            None => write!(f, "assertion {} failed ({})", self.name, self.path),
        }
    }
}

/// Reads the assertion failures out of Verilator's output. A line reads
/// `[<time ps>] %Error: <file>:<line>: Assertion failed in <path>: <message>`; the values that
/// broke the assertion are those of the cycle closed by the edge at that time.
pub fn assertion_failures(output: &str) -> Vec<AssertionFailure> {
    const KEY: &str = "Assertion failed in ";
    let period = arnsim::trace::cycle_time_ps(1) - arnsim::trace::cycle_time_ps(0);
    let first_edge = arnsim::trace::cycle_time_ps(0);
    let mut v = Vec::new();
    for line in output.lines() {
        let Some(at) = line.find(KEY) else { continue };
        let rest = &line[at + KEY.len()..];
        let path = rest.split(": ").next().unwrap_or(rest).trim().to_string();
        let name = path.rsplit('.').next().unwrap_or(&path).to_string();
        let cycle = line
            .strip_prefix('[')
            .and_then(|l| l.split(']').next())
            .and_then(|t| t.trim().parse::<u64>().ok())
            .and_then(|t| t.checked_sub(first_edge))
            .and_then(|t| (t / period).checked_sub(1));
        v.push(AssertionFailure {
            name,
            path,
            cycle,
            message: line.trim().to_string(),
        });
    }
    v
}

/// Result of one case.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Cycles compared (up to and including a mismatch).
    pub cycles: u64,
    /// `None` when the traces agree on every cycle.
    pub mismatch: Option<Mismatch>,
    /// Signals whose VCD waveforms were compared (0 after a mismatch).
    pub wave_signals: usize,
    /// Wall time of the whole case (stimulus, both simulations, comparison).
    pub wall: Duration,
    /// Assertions of the RTL that failed, in the order Verilator reported them. A run that
    /// does not keep going stops at the first one and its traces are not compared.
    pub assertions: Vec<AssertionFailure>,
}

fn io_err(p: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("{}: {e}", p.display())
}

/// Runs the Rust side: writes the stimulus (if `stim_path` is given), the trace and the VCD.
fn run_rust<B: Block, S: Stimulus<B::In>>(
    mut block: B,
    mut stim: S,
    cycles: u64,
    stim_path: Option<&Path>,
    trace_path: &Path,
    vcd_path: &Path,
    window: VcdWindow,
) -> Result<(), String> {
    let mut stim_w = match stim_path {
        Some(p) => Some(BufWriter::new(File::create(p).map_err(io_err(p))?)),
        None => None,
    };
    let mut trace_w = BufWriter::new(File::create(trace_path).map_err(io_err(trace_path))?);
    let vcd_file = BufWriter::new(File::create(vcd_path).map_err(io_err(vcd_path))?);
    block.reset();
    let inp0 = B::In::default();
    let out0 = B::Out::default();
    let mut vcd = BlockVcd::new(vcd_file, B::NAME, window, |v| {
        block.probe_inputs(&inp0, v);
        block.probe_outputs(&out0, v);
        block.probe_regs(v);
    })
    .map_err(io_err(vcd_path))?;
    if let Some(w) = stim_w.as_mut() {
        let mut h = TraceHeader::default();
        block.probe_inputs(&inp0, &mut h);
        writeln!(w, "{}", h.line).map_err(io_err(stim_path.unwrap()))?;
    }
    let mut h = TraceHeader::default();
    block.probe_outputs(&out0, &mut h);
    block.probe_regs(&mut h);
    writeln!(trace_w, "{}", h.line).map_err(io_err(trace_path))?;

    let mut line = TraceLine::default();
    for c in 0..cycles {
        let inp = stim.next(c);
        if let Some(w) = stim_w.as_mut() {
            line.clear();
            block.probe_inputs(&inp, &mut line);
            writeln!(w, "{}", line.line).map_err(io_err(stim_path.unwrap()))?;
        }
        let out = block.evaluate(&inp);
        line.clear();
        block.probe_outputs(&out, &mut line);
        block.probe_regs(&mut line);
        writeln!(trace_w, "{}", line.line).map_err(io_err(trace_path))?;
        if window.contains(c) {
            vcd.sample(c, |v: &mut dyn Visit| {
                block.probe_inputs(&inp, v);
                block.probe_outputs(&out, v);
                block.probe_regs(v);
            })
            .map_err(io_err(vcd_path))?;
        }
        block.commit();
    }
    vcd.finish().map_err(io_err(vcd_path))?;
    if let Some(mut w) = stim_w {
        w.flush().map_err(io_err(stim_path.unwrap()))?;
    }
    trace_w.flush().map_err(io_err(trace_path))
}

/// Runs the Verilated testbench. Returns the assertions that failed: with `keep_going` the
/// simulation runs on after a failing assertion (`+verilator+error+limit`), otherwise it stops
/// at the first one.
fn run_hdl(
    exe: &Path,
    stim: &Path,
    trace: &Path,
    vcd: &Path,
    window: VcdWindow,
    keep_going: bool,
) -> Result<Vec<AssertionFailure>, String> {
    let mut cmd = Command::new(exe);
    cmd.arg(format!("+stim={}", stim.display()))
        .arg(format!("+trace={}", trace.display()))
        .arg(format!("+vcd={}", vcd.display()))
        .arg(format!("+vcd_from={}", window.from))
        .arg(format!("+vcd_to={}", window.to));
    if keep_going {
        cmd.arg("+verilator+error+limit+1000000000");
    }
    let out = cmd
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    let failures = assertion_failures(&text);
    if !failures.is_empty() {
        return Ok(failures);
    }
    if !out.status.success() {
        return Err(format!(
            "HDL simulation {} failed ({}):\n{}{}",
            exe.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(failures)
}

/// The first difference of two traces: cycle, signal, Rust value, HDL value.
pub type TraceDiff = (u64, String, String, String);

/// Compares two trace files; returns the cycles compared and the first difference.
pub fn compare_traces(rust: &Path, hdl: &Path) -> Result<(u64, Option<TraceDiff>), String> {
    let r = BufReader::new(File::open(rust).map_err(io_err(rust))?);
    let h = BufReader::new(File::open(hdl).map_err(io_err(hdl))?);
    let mut rl = r.lines();
    let mut hl = h.lines();
    let rh = rl
        .next()
        .ok_or_else(|| format!("{}: empty trace", rust.display()))?
        .map_err(io_err(rust))?;
    let hh = hl
        .next()
        .ok_or_else(|| format!("{}: empty trace", hdl.display()))?
        .map_err(io_err(hdl))?;
    if rh != hh {
        return Err(format!("trace headers differ:\n  rust: {rh}\n  hdl:  {hh}"));
    }
    let names: Vec<&str> = rh.split(' ').collect();
    let mut cycle = 0u64;
    loop {
        match (rl.next(), hl.next()) {
            (None, None) => return Ok((cycle, None)),
            (Some(_), None) | (None, Some(_)) => {
                return Ok((
                    cycle + 1,
                    Some((
                        cycle,
                        "<end of trace>".into(),
                        "line".into(),
                        "no line".into(),
                    )),
                ));
            }
            (Some(a), Some(b)) => {
                let a = a.map_err(io_err(rust))?;
                let b = b.map_err(io_err(hdl))?;
                if a != b {
                    let av: Vec<&str> = a.split(' ').collect();
                    let bv: Vec<&str> = b.split(' ').collect();
                    for (i, name) in names.iter().enumerate() {
                        let x = av.get(i).copied().unwrap_or("<missing>");
                        let y = bv.get(i).copied().unwrap_or("<missing>");
                        if x != y {
                            return Ok((
                                cycle + 1,
                                Some((cycle, name.to_string(), x.to_string(), y.to_string())),
                            ));
                        }
                    }
                    return Ok((
                        cycle + 1,
                        Some((cycle, "<extra column>".into(), a.clone(), b.clone())),
                    ));
                }
                cycle += 1;
            }
        }
    }
}

/// Cross-checks one case. `make_block` and `make_stim` are called again (same seed) to
/// re-run the Rust side with a VCD window around a mismatch. With `keep_going` the HDL
/// simulation runs on after failing assertions (they are all collected); otherwise the first
/// failing assertion ends the case.
pub fn crosscheck<B, S>(
    exe: &Path,
    dir: &Path,
    make_block: &dyn Fn() -> B,
    make_stim: &dyn Fn() -> S,
    cycles: u64,
    keep_going: bool,
) -> Result<Outcome, String>
where
    B: Block,
    S: Stimulus<B::In>,
{
    let t0 = Instant::now();
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let stim = dir.join("stim.txt");
    let rust_trace = dir.join("rust.trace");
    let hdl_trace = dir.join("hdl.trace");
    let rust_vcd = dir.join("rust.vcd");
    let hdl_vcd = dir.join("hdl.vcd");
    let head = VcdWindow {
        from: 0,
        to: VCD_HEAD_CYCLES - 1,
    };
    run_rust(
        make_block(),
        make_stim(),
        cycles,
        Some(&stim),
        &rust_trace,
        &rust_vcd,
        head,
    )?;
    let assertions = run_hdl(exe, &stim, &hdl_trace, &hdl_vcd, head, keep_going)?;
    if !assertions.is_empty() && !keep_going {
        return Ok(Outcome {
            cycles: assertions[0].cycle.map_or(0, |c| c + 1),
            mismatch: None,
            wall: t0.elapsed(),
            wave_signals: 0,
            assertions,
        });
    }
    let (compared, diff) = compare_traces(&rust_trace, &hdl_trace)?;
    let mut wave_signals = 0;
    let mismatch = match diff {
        None => {
            wave_signals =
                waves::compare_vcds(&rust_vcd, &hdl_vcd, arnsim::trace::cycle_time_ps(0))?;
            for p in [&stim, &rust_trace, &hdl_trace] {
                let _ = fs::remove_file(p);
            }
            None
        }
        Some((cycle, signal, rust, hdl)) => {
            let around = VcdWindow {
                from: cycle.saturating_sub(VCD_AROUND_MISMATCH),
                to: cycle + VCD_AROUND_MISMATCH,
            };
            let scratch = dir.join("rust.rerun.trace");
            run_rust(
                make_block(),
                make_stim(),
                cycles.min(around.to + 1),
                None,
                &scratch,
                &rust_vcd,
                around,
            )?;
            let _ = fs::remove_file(&scratch);
            let scratch = dir.join("hdl.rerun.trace");
            run_hdl(exe, &stim, &scratch, &hdl_vcd, around, keep_going)?;
            let _ = fs::remove_file(&scratch);
            Some(Mismatch {
                cycle,
                signal,
                rust,
                hdl,
                rust_vcd: rust_vcd.clone(),
                hdl_vcd: hdl_vcd.clone(),
            })
        }
    };
    Ok(Outcome {
        cycles: compared,
        mismatch,
        wall: t0.elapsed(),
        wave_signals,
        assertions,
    })
}

/// The report printed for a mismatch.
pub fn mismatch_report(label: &str, case: &str, m: &Mismatch) -> String {
    format!(
        "MISMATCH {label} {case}: first difference at cycle {}, signal {}: rust={} hdl={}\n  \
         waves kept for GTKWave (cycles {}..{}):\n    {}\n    {}",
        m.cycle,
        m.signal,
        m.rust,
        m.hdl,
        m.cycle.saturating_sub(VCD_AROUND_MISMATCH),
        m.cycle + VCD_AROUND_MISMATCH,
        m.rust_vcd.display(),
        m.hdl_vcd.display()
    )
}
