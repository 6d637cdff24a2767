//! The fabric dump of `arnsim run --vcd` and `--fst`: its flags checked against the scenario
//! before anything is written, the signals chosen by `--scope`, and the window of cycles (with `--trigger-before`,
//! found by a first pass of the run, `run::Run::first_root`).

use crate::config::Scenario;
use crate::config::units::nanoseconds;
use crate::fabric::Fabric;
use crate::run::{Run, Stepping};
use crate::trace::fabric_vcd::{self, FabricSignal};
use std::path::{Path, PathBuf};

/// What to dump during a run, to VCD, FST or both (one set of samples written to each).
#[derive(Clone, Debug, Default)]
pub struct WaveRequest {
    /// VCD file (`--vcd`).
    pub vcd: Option<PathBuf>,
    /// FST file (`--fst`).
    pub fst: Option<PathBuf>,
    /// Glob patterns over signal names (all signals when empty).
    pub scopes: Vec<String>,
    /// Start time (text with unit).
    pub from: Option<String>,
    /// End time.
    pub to: Option<String>,
    /// Start this long before the first congestion root.
    pub trigger_before: Option<String>,
}

/// The dump flags given without `--vcd` or `--fst`, for a warning (they are ignored); an error when one of
/// the times is not a time.
pub fn ignored_without_vcd(
    scopes: &[String],
    from: Option<&str>,
    to: Option<&str>,
    trigger_before: Option<&str>,
) -> Result<Option<String>, String> {
    let mut given = Vec::new();
    if !scopes.is_empty() {
        given.push("--scope");
    }
    for (flag, t) in [
        ("--from", from),
        ("--to", to),
        ("--trigger-before", trigger_before),
    ] {
        if let Some(t) = t {
            nanoseconds(t).map_err(|e| format!("{flag}: {e}"))?;
            given.push(flag);
        }
    }
    Ok((!given.is_empty()).then(|| {
        format!(
            "{} given without --vcd or --fst: ignored (nothing is dumped without --vcd FILE or --fst FILE)",
            given.join(", ")
        )
    }))
}

/// Most cycles a time flag may name: far beyond any run, far below overflow.
const MAX_CYCLES: f64 = 1e15;

/// A time flag in cycles of `s`; the error names the flag.
pub fn flag_cycles(s: &Scenario, flag: &str, text: &str) -> Result<u64, String> {
    let ns = nanoseconds(text).map_err(|e| format!("--{flag}: {e}"))?;
    let c = (ns / s.time_base.cycle_ns()).round();
    if c > MAX_CYCLES {
        return Err(format!(
            "--{flag}: `{text}` is {c:.3e} cycles, more than any run can reach"
        ));
    }
    Ok(c as u64)
}

/// A GTKWave save file beside a dump, with the translate filter for detector states beside it.
#[derive(Clone, Debug)]
pub struct SaveFile {
    /// The flag of the dump it opens.
    pub flag: &'static str,
    /// The save file.
    pub gtkw: PathBuf,
    /// The dump its `[dumpfile]` names.
    pub dump: PathBuf,
    /// The translate filter, written when a `detector_state` is dumped.
    pub states: PathBuf,
}

/// A dump request checked against the scenario, in cycles.
#[derive(Clone, Debug)]
pub struct DumpPlan {
    /// The VCD file.
    pub vcd: Option<PathBuf>,
    /// The FST file.
    pub fst: Option<PathBuf>,
    /// The save files: one beside each dump, or one for both when they would share it (same
    /// folder and name but for the extension), which then names the FST.
    pub saves: Vec<SaveFile>,
    /// Scope patterns.
    pub scopes: Vec<String>,
    /// First cycle dumped (before the trigger moves it).
    pub from: u64,
    /// Last cycle dumped.
    pub to: u64,
    /// Cycles before the first root that the dump starts, with `--trigger-before`.
    pub trigger_before: Option<u64>,
}

impl DumpPlan {
    /// The dump files, each with its flag.
    pub fn dumps(&self) -> impl Iterator<Item = (&'static str, &PathBuf)> {
        let vcd = self.vcd.iter().map(|p| ("--vcd", p));
        vcd.chain(self.fst.iter().map(|p| ("--fst", p)))
    }
}

/// Checks the dump file `path` given to `flag` (`--vcd`, `--fst`, whose usual extension is
/// `ext`); returns its save file.
fn dump_file(flag: &'static str, path: &Path, ext: &str) -> Result<SaveFile, String> {
    if path.file_name().is_none() || path.to_string_lossy().ends_with('/') {
        return Err(format!(
            "{flag} {}: not a file name (give one such as waves/fabric.{ext})",
            path.display()
        ));
    }
    if path.is_dir() {
        return Err(format!(
            "{flag} {}: is a folder (give a file name such as {}/fabric.{ext})",
            path.display(),
            path.display()
        ));
    }
    let gtkw = path.with_extension("gtkw");
    if gtkw == path {
        return Err(format!(
            "{flag} {}: the GTKWave save file beside the dump is named `.gtkw`: give the dump another extension (.{ext})",
            path.display()
        ));
    }
    Ok(SaveFile {
        flag,
        gtkw,
        dump: path.to_path_buf(),
        states: crate::trace::states_path(path),
    })
}

/// Checks `w` against `s`, returning the plan and warnings. (That the dump replaces none of the
/// run's other outputs or inputs is checked with them, in `run`.)
pub fn plan(s: &Scenario, w: &WaveRequest) -> Result<(DumpPlan, Vec<String>), String> {
    let mut warnings = Vec::new();
    let from = w
        .from
        .as_deref()
        .map(|t| flag_cycles(s, "from", t))
        .transpose()?;
    let to =
        w.to.as_deref()
            .map(|t| flag_cycles(s, "to", t))
            .transpose()?;
    let trigger_before = w
        .trigger_before
        .as_deref()
        .map(|t| flag_cycles(s, "trigger-before", t))
        .transpose()?;
    if let (Some(f), Some(t)) = (from, to)
        && t < f
    {
        return Err("--to is before --from".into());
    }
    let end = s.sim_cycles;
    let run_end = || {
        format!(
            "the run ends at cycle {end}, {:.3} us",
            end as f64 * s.time_base.cycle_ns() / 1000.0
        )
    };
    if let Some(f) = from
        && f >= end
    {
        return Err(format!(
            "--from {}: cycle {f} is past the end of the run ({}): nothing would be dumped",
            w.from.as_deref().unwrap_or_default(),
            run_end()
        ));
    }
    // `--to` at the run's length is its end (the last cycle dumped is the run's last).
    if let Some(t) = to
        && t > end
        && w.trigger_before.is_none()
    {
        warnings.push(format!(
            "--to {}: cycle {t} is past the end of the run ({}): the dump ends with the run",
            w.to.as_deref().unwrap_or_default(),
            run_end()
        ));
    }
    let vcd = w
        .vcd
        .as_deref()
        .map(|p| dump_file("--vcd", p, "vcd"))
        .transpose()?;
    let fst = w
        .fst
        .as_deref()
        .map(|p| dump_file("--fst", p, "fst"))
        .transpose()?;
    let saves = match (vcd, fst) {
        (None, None) => return Err("no dump file: give --vcd FILE or --fst FILE".into()),
        (Some(v), Some(f)) if v.dump == f.dump => {
            return Err(format!(
                "--fst {}: the same file as --vcd; give the two dumps different names (such as fabric.vcd and fabric.fst)",
                f.dump.display()
            ));
        }
        // Both beside each other under one name: one save file, opening the FST.
        (Some(v), Some(f)) if v.gtkw == f.gtkw => vec![f],
        (v, f) => v.into_iter().chain(f).collect(),
    };
    Ok((
        DumpPlan {
            vcd: w.vcd.clone(),
            fst: w.fst.clone(),
            saves,
            scopes: w.scopes.clone(),
            from: from.unwrap_or(0),
            to: to.unwrap_or(u64::MAX),
            trigger_before,
        },
        warnings,
    ))
}

/// The signals of `f` that `scopes` choose, and warnings for patterns that choose nothing; an
/// error when no signal is chosen.
pub fn choose<const V: usize>(
    f: &Fabric<V>,
    scopes: &[String],
) -> Result<(Vec<FabricSignal>, Vec<String>), String> {
    let (chosen, per_pattern) = fabric_vcd::select(f, scopes);
    if chosen.is_empty() {
        return Err(format!(
            "--scope {}: selects no signal (names look like fabric.s1_0.out3.vc0.credits, fabric.n5.queued; see docs/waveforms.md)",
            scopes.join(" --scope ")
        ));
    }
    let warnings = scopes
        .iter()
        .zip(per_pattern)
        .filter(|(_, n)| *n == 0)
        .map(|(p, _)| format!("--scope {p}: selects no signal (the others do)"))
        .collect();
    Ok((chosen, warnings))
}

/// The window of cycles to dump: the plan's, or with `--trigger-before` the one a first pass of
/// the run (on the event engine, on `threads` threads, watching `stop`) finds; `None` when no
/// root is detected or the first pass is stopped.
pub fn window<const V: usize>(
    s: &Scenario,
    p: &DumpPlan,
    how: &Stepping<'_>,
) -> Result<Option<(u64, u64)>, String> {
    let mut from = p.from;
    if let Some(before) = p.trigger_before {
        let mut first = Run::<V>::new(s, how)?;
        match first
            .first_root()
            .map_err(|v| format!("run stopped: {v}"))?
        {
            Some(c) => from = from.max(c.saturating_sub(before)),
            None => return Ok(None),
        }
        if p.to < from {
            return Err(format!(
                "--to is before the start that --trigger-before gives (cycle {from})"
            ));
        }
    }
    Ok(Some((from, p.to)))
}
