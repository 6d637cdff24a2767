//! `arnsim run`: a scenario's arguments checked, its outputs (summary.json, efficiency.csv,
//! latency.csv, efficiency.svg, and the VCD or FST with its GTKWave save file when asked) reserved, the
//! run stepped by the library's [`crate::run::Run`] with a progress bar, and the outputs written
//! from what it returns.
//!
//! Every argument is checked and every output reserved under a temporary name before the first
//! cycle; the outputs are renamed into place at the end, `summary.json` last (see
//! `docs/outputs.md`). A stop request (SIGINT, SIGTERM) ends the run after the chunk being
//! stepped, and what was gathered is written, marked incomplete.

use super::Failure;
use super::checkpoints::Checkpoints;
pub use super::dump::WaveRequest;
use super::dump::{self, DumpPlan};
use super::interrupt::{exit_code, signal_name};
use super::outputs::{NewFolders, Staged, Summary, refuse_overwriting_inputs};
use super::record::{self, RecordRequest};
use super::run_dump::{Dump, dump_window, finish_dump, resume_dump, start_dump};
use super::run_report::{report, silent_outcome};
use super::run_summary::{flows_csv, summary};
pub use super::scenarios::{BUNDLED, check, list, load};
use crate::config::Scenario;
use crate::fabric::subnet_manager::deadlock;
use crate::run::{Ended, Run, Stepping, Stop, Stopped, WriteError};
use crate::trace::fabric_waves::FabricWaves;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// The files a run writes into its output folder; `summary.json` is renamed into place last.
pub const OUTPUTS: [&str; 4] = [
    "efficiency.csv",
    "latency.csv",
    "efficiency.svg",
    "summary.json",
];

/// The file a run of a communication phase writes beside [`OUTPUTS`]: a line per flow.
pub const PHASE_OUTPUT: &str = "flows.csv";

/// The default output folder, `waves/<name>`: the scenario's name must be one path component.
pub fn default_out(s: &Scenario) -> Result<PathBuf, String> {
    let n = s.name.as_str();
    let why = if n.is_empty() || n == "." {
        Some("would write into waves/ itself")
    } else if n == ".." || n.contains(['/', '\\']) || Path::new(n).is_absolute() {
        Some("would write outside waves/")
    } else if n.chars().any(char::is_control) {
        Some("holds a control character")
    } else if n.len() > 200 {
        Some("is longer than a folder name may be (200 bytes here; file systems allow 255)")
    } else {
        None
    };
    match why {
        Some(why) => Err(s
            .doc
            .error(
                "name",
                format!("{n:?} {why} (a name is one path component; or give --out)"),
            )
            .to_string()),
        None => Ok(PathBuf::from("waves").join(n)),
    }
}

/// The progress bar on stderr, when stderr is a terminal.
pub(super) fn progress_bar(cycles: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(cycles), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("[{bar:30}] {percent:>3}%  {msg}") {
        bar.set_style(style.progress_chars("## "));
    }
    bar
}

/// How `arnsim run` steps (engine, threads, stop request: the library's [`Stepping`]), and
/// whether it is quiet.
pub struct How<'a> {
    /// Engine, threads and stop request.
    pub step: Stepping<'a>,
    /// No progress bar and no scenario warnings (a sweep runs several at once and warns once).
    pub quiet: bool,
}

impl<'a> How<'a> {
    /// The default engine on `threads` threads, watching `stop`.
    pub fn new(threads: usize, stop: &'a Stop) -> Self {
        How {
            step: Stepping::new(threads, stop),
            quiet: false,
        }
    }
}

/// `arnsim run`: runs the scenario on `threads` threads (0: one per core, or one for a fabric of
/// fewer than [`crate::run::SMALL_FABRIC`] switches), writes the outputs into `out` (default `waves/<name>`).
/// When `stop` is requested the run ends after the chunk it is stepping, writes what it has
/// (marked incomplete) and fails with the signal's exit code.
pub fn run(
    name_or_path: &str,
    out: Option<PathBuf>,
    overrides: &[String],
    waves: Option<WaveRequest>,
    record: Option<RecordRequest>,
    how: &How<'_>,
) -> Result<(), Failure> {
    run_checkpointed(name_or_path, out, overrides, waves, record, how, None)
}

/// [`run`] taking the `checkpoints` asked (`--checkpoint-every`, `arnsim resume`).
pub fn run_checkpointed(
    name_or_path: &str,
    out: Option<PathBuf>,
    overrides: &[String],
    waves: Option<WaveRequest>,
    record: Option<RecordRequest>,
    how: &How<'_>,
    checkpoints: Option<Checkpoints>,
) -> Result<(), Failure> {
    let s = load(name_or_path, overrides)?;
    let asked = Asked {
        out,
        overrides,
        waves,
        record,
        checkpoints,
    };
    // The fabric's types are sized by its VC lanes, chosen once here.
    crate::with_lanes!(s.params.switch.vcs(), |V| run_on::<V>(
        s, asked, how, &mut None
    ))
}

/// What `arnsim run` is asked beside its scenario: where its outputs go, its overrides, its
/// dump, recording and checkpoints.
struct Asked<'a> {
    out: Option<PathBuf>,
    overrides: &'a [String],
    waves: Option<WaveRequest>,
    record: Option<RecordRequest>,
    checkpoints: Option<Checkpoints>,
}

/// [`run`] of a loaded scenario into `out`, without a dump or a recording; `written` receives
/// the summary once it is in place, also when the run then fails (a broken invariant, a stop
/// request), so that a caller tells a run that wrote its outputs from one that did not.
pub fn run_loaded(
    s: Scenario,
    out: PathBuf,
    overrides: &[String],
    how: &How<'_>,
    written: &mut Option<Summary>,
) -> Result<(), Failure> {
    let asked = Asked {
        out: Some(out),
        overrides,
        waves: None,
        record: None,
        checkpoints: None,
    };
    crate::with_lanes!(s.params.switch.vcs(), |V| run_on::<V>(
        s, asked, how, written
    ))
}

/// The files a run writes, each with the flag that names it.
pub(super) fn outputs_of(
    out: &Path,
    dump: Option<&dump::DumpPlan>,
    record: Option<&RecordRequest>,
) -> Vec<(&'static str, PathBuf)> {
    let mut all: Vec<(&str, PathBuf)> = OUTPUTS
        .iter()
        .chain([&PHASE_OUTPUT])
        .map(|n| ("--out", out.join(n)))
        .collect();
    if let Some(d) = dump {
        all.extend(d.dumps().map(|(flag, p)| (flag, p.clone())));
        for sv in &d.saves {
            all.extend([sv.gtkw.clone(), sv.states.clone()].map(|p| (sv.flag, p)));
        }
    }
    if let Some(r) = record {
        all.push(("--record-switch", out.join(format!("{}.rec", r.switch))));
    }
    all
}

/// The files a run reads: its scenario, trace and map file.
pub(super) fn inputs_of(s: &Scenario) -> Vec<PathBuf> {
    let mut all = vec![PathBuf::from(s.doc.path())];
    if let Some(t) = &s.replay {
        all.push(PathBuf::from(&t.file));
        all.extend(t.map_file.iter().map(PathBuf::from));
    }
    all
}

/// [`run`] on a fabric of `V` VC lanes: the checks, the run, its outputs.
fn run_on<const V: usize>(
    s: Scenario,
    asked: Asked<'_>,
    how: &How<'_>,
    written: &mut Option<Summary>,
) -> Result<(), Failure> {
    let Asked {
        out,
        overrides,
        waves,
        record,
        checkpoints,
    } = asked;
    // Everything is checked before a file is touched.
    let (out, out_flag) = out_folder(&s, out)?;
    let (plan, mut warnings) = checked(&s, &out, waves.as_ref(), record.as_ref())?;
    let mut checkpoints = match checkpoints {
        Some(c) => Some(c.check(&s, &out, plan.as_ref(), record.as_ref(), how)?),
        None => None,
    };
    let mut run = Run::<V>::new(&s, &how.step)?;
    let resumed = match &mut checkpoints {
        Some(c) => c.restore(&mut run)?,
        None => None,
    };
    if how.step.ranks.is_some_and(|r| r.rank() != 0) {
        // Rank 0 writes the outputs and says what happened; the others step their parts (and
        // sample their dumped signals for rank 0's dump).
        how.step.stop.listen()?;
        if let Some(r) = &record {
            record::start_unwritten(&s, r, &mut run)?;
        }
        if let Some(p) = &plan {
            let (chosen, _) = dump::choose(run.fabric(), &p.scopes)?;
            if let Some(window) = dump_window(&run, p, how)? {
                run.dump(FabricWaves::new(&chosen, None, None), window);
            }
        }
        step_all(&mut run, true, None, &mut |_| Ok(()))?;
        let ended = run.finish().map_err(|e| write_error(e, None))?;
        return silent_outcome(&ended);
    }
    let chosen = match &plan {
        Some(p) => {
            let (c, w) = dump::choose(run.fabric(), &p.scopes)?;
            warnings.extend(w);
            Some(c)
        }
        None => None,
    };
    // On MPI ranks, rank 0 warns (every rank would say the same).
    let speaks = !how.quiet && how.step.ranks.is_none_or(|r| r.rank() == 0);
    for w in warnings.iter().filter(|_| speaks) {
        crate::errln!("arnsim: warning: {w}");
    }
    // From here a signal asks the run to stop (until now it ended the process: nothing was
    // written, and a long load is not waited for). Every output is reserved under its temporary
    // name: a folder that cannot be written fails the run here, before the first cycle.
    how.step.stop.listen()?;
    // (Declared before the files reserved in them: a failure removes the files, then the
    // folders made for them.)
    let mut folders = NewFolders::make(&out).map_err(|e| format!("{out_flag} {e}"))?;
    let staged = OUTPUTS
        .iter()
        .map(|n| Staged::open(&out.join(n)).map_err(|e| format!("{out_flag} {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut flows_file = match s.phase {
        Some(_) => {
            Some(Staged::open(&out.join(PHASE_OUTPUT)).map_err(|e| format!("{out_flag} {e}"))?)
        }
        None => None,
    };
    let dump = match (plan, chosen, resumed) {
        // A resumed run continues the dump its checkpoint holds, if it had started one.
        (Some(plan), Some(chosen), Some((Some(saved), ref earlier))) => Some(resume_dump(
            &mut run,
            plan,
            chosen,
            &mut folders,
            saved,
            earlier.as_slice(),
        )?),
        (Some(plan), Some(chosen), None) => start_dump(&mut run, plan, chosen, &mut folders, how)?,
        _ => None,
    };
    let recording = match &record {
        Some(r) => Some(record::start(&s, r, &mut run, &out)?),
        None => None,
    };
    folders.keep();
    let dump_files = dump.as_ref().map(Dump::files).unwrap_or_default();
    let mut after_chunk = |run: &mut Run<'_, V>| match &mut checkpoints {
        Some(c) => c.after_chunk(run, &dump_files),
        None => Ok(()),
    };
    step_all(&mut run, how.quiet, recording.as_ref(), &mut after_chunk)?;
    let mut ended = run
        .finish()
        .map_err(|e| write_error(e, recording.as_ref()))?;
    let summary = summary(&s, overrides, &ended);
    // The outputs, complete, under their temporary names.
    let mut others = match (dump, ended.waves.take()) {
        (Some(d), Some(waves)) => finish_dump(&s, d, waves, &ended)?,
        _ => Vec::new(),
    };
    let summary_file = write_series(&s, &ended, staged, &mut others)?;
    if let (Some(mut f), Some(text)) = (flows_file.take(), flows_csv(&s, &ended)) {
        f.write(text.as_bytes())?;
        others.push(f);
    }
    others.extend(recording);
    put_in_place(&out, summary_file, others, &summary)?;
    if let Some(c) = checkpoints {
        c.done(ended.complete)?;
    }
    *written = Some(summary);
    report(&s, &ended, &out)
}

/// The output folder, and how errors about it name it: the flag, or where the folder came from.
fn out_folder(s: &Scenario, out: Option<PathBuf>) -> Result<(PathBuf, &'static str), String> {
    match out {
        Some(o) if o.as_os_str().is_empty() => Err("--out: an empty path (give a folder)".into()),
        Some(o) => Ok((o, "--out")),
        None => Ok((default_out(s)?, "output folder (no --out given)")),
    }
}

/// The checks before the fabric is built: the dump's flags, that no output replaces an input;
/// returns the dump's plan and the warnings (the scenario's, the dump's, a routing that can
/// deadlock).
fn checked(
    s: &Scenario,
    out: &Path,
    waves: Option<&WaveRequest>,
    record: Option<&RecordRequest>,
) -> Result<(Option<DumpPlan>, Vec<String>), String> {
    let mut warnings = s.warnings.clone();
    let plan = match waves {
        Some(w) => {
            let (p, w) = dump::plan(s, w)?;
            warnings.extend(w);
            Some(p)
        }
        None => None,
    };
    refuse_overwriting_inputs(&outputs_of(out, plan.as_ref(), record), &inputs_of(s))?;
    if let Some(c) = deadlock::of_fabric(&s.topology, &s.params)?.filter(|c| c.cycle.is_some()) {
        warnings.push(format!(
            "{c}: the routing can deadlock; the watchdog stops the run if it does"
        ));
    }
    Ok((plan, warnings))
}

/// An output the run writes while it steps, named by its file.
fn write_error(e: WriteError, recording: Option<&Staged>) -> String {
    match (e, recording) {
        (WriteError::Recording(e), Some(r)) => format!("{}: {e}", r.dest().display()),
        (e, _) => e.to_string(),
    }
}

/// Steps `run` chunk by chunk to its end, moving a progress bar on a terminal unless `quiet`.
/// A run stopped before its first cycle fails with the signal's exit code: nothing is written.
fn step_all<const V: usize>(
    run: &mut Run<'_, V>,
    quiet: bool,
    recording: Option<&Staged>,
    after_chunk: &mut dyn FnMut(&mut Run<'_, V>) -> Result<(), String>,
) -> Result<(), Failure> {
    let s = run.scenario();
    let cycle_ns = s.time_base.cycle_ns();
    let bar = match quiet {
        true => ProgressBar::hidden(),
        false => progress_bar(s.sim_cycles),
    };
    while run.step_chunk().map_err(|e| write_error(e, recording))? {
        if !bar.is_hidden() {
            bar.set_position(run.now());
            bar.set_message(format!(
                "{:.3}/{:.3} ms simulated  {:.0} cycles/s",
                run.now() as f64 * cycle_ns / 1e6,
                s.sim_cycles as f64 * cycle_ns / 1e6,
                run.now() as f64 / run.elapsed().max(1e-9)
            ));
        }
        after_chunk(run)?;
    }
    // A run stopped by a signal is checkpointed where it stopped.
    after_chunk(run)?;
    if let (Some(Stopped::Signal(sig)), 0) = (run.stopped(), run.now()) {
        // Nothing gathered: the outputs of an earlier run stay as they are.
        bar.abandon();
        return Err(Failure {
            code: exit_code(sig),
            message: format!(
                "stopped by {} before the first cycle: nothing is written",
                signal_name(sig)
            ),
        });
    }
    match run.stopped() {
        Some(_) => bar.abandon(),
        None => bar.finish(),
    }
    if !bar.is_hidden() {
        crate::errln!();
    }
    Ok(())
}

/// Writes the CSVs and the plot into their reserved files (`staged`, in [`OUTPUTS`] order),
/// added to `others`; returns the summary's file.
fn write_series(
    s: &Scenario,
    e: &Ended,
    mut staged: Vec<Staged>,
    others: &mut Vec<Staged>,
) -> Result<Staged, String> {
    let cycle_ns = s.time_base.cycle_ns();
    let title = format!(
        "{}: {} + {}, {} traffic",
        s.name,
        s.params.switch.routing.name(),
        s.params.switch.queuing.name(),
        s.pattern
    );
    let texts = [
        e.series.efficiency_csv(cycle_ns),
        e.series.latency_csv(cycle_ns),
        e.series.efficiency_svg(cycle_ns, &title),
    ];
    for (f, text) in staged.iter_mut().zip(&texts) {
        f.write(text.as_bytes())?;
    }
    let Some(summary_file) = staged.pop() else {
        return Err("no summary.json".to_string());
    };
    others.extend(staged);
    Ok(summary_file)
}

/// Puts the outputs in place: first a summary that says the outputs beside it are not all this
/// run's yet (so that a process killed among the renames leaves no summary claiming a complete
/// run), then every other output, then the summary.
fn put_in_place(
    out: &Path,
    pending_summary: Staged,
    others: Vec<Staged>,
    summary: &Summary,
) -> Result<(), String> {
    let mut pending_summary = pending_summary;
    let pending = Summary {
        complete: false,
        stopped_at_cycle: Some(summary.simulated_cycles),
        stop_reason: Some("stopped while its outputs were being renamed into place".into()),
        ..summary.clone()
    };
    pending_summary.write(pending.to_json().as_bytes())?;
    pending_summary.commit()?;
    for f in others {
        if let Err(e) = f.commit() {
            // The summary says so: the outputs beside it are not all this run's.
            let failed = Summary {
                stop_reason: Some(format!("its outputs could not all be put in place: {e}")),
                ..pending
            };
            if let Ok(mut s) = Staged::open(&out.join("summary.json")) {
                let _ = s
                    .write(failed.to_json().as_bytes())
                    .and_then(|_| s.commit());
            }
            return Err(e);
        }
    }
    let mut summary_file = Staged::open(&out.join("summary.json"))?;
    summary_file.write(summary.to_json().as_bytes())?;
    summary_file.commit()
}
