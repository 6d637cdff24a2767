//! `arnsim run`: a scenario stepped bin by bin, and its outputs (summary.json, efficiency.csv,
//! latency.csv, efficiency.svg, and the VCD with its GTKWave save file when asked).
//!
//! Every argument is checked and every output reserved under a temporary name before the first
//! cycle; the outputs are renamed into place at the end, `summary.json` last (see
//! `docs/outputs.md`). A stop request (SIGINT, SIGTERM) ends the run after the chunk being
//! stepped, and what was gathered is written, marked incomplete.

use super::Failure;
pub use super::dump::WaveRequest;
use super::dump::{self, DumpPlan};
use super::interrupt::{Stop, exit_code, signal_name};
use super::outputs::{NewFolders, Staged, Summary, refuse_overwriting_inputs};
use super::record::{RecordRequest, Recording};
use super::run_summary::{RunEnd, replay_summary, summary};
pub use super::scenarios::{BUNDLED, check, list, load};
use crate::config::Scenario;
use crate::fabric::subnet_manager::deadlock;
use crate::fabric::{Engine, Fabric};
use crate::metrics::Series;
use crate::replay::Replayer;
use crate::trace::DETECTOR_STATES;
use crate::trace::fabric_vcd::{FabricSignal, FabricVcd, write_fabric_gtkw};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The files a run writes into its output folder; `summary.json` is renamed into place last.
pub const OUTPUTS: [&str; 4] = [
    "efficiency.csv",
    "latency.csv",
    "efficiency.svg",
    "summary.json",
];

/// Switches below which `--threads 0` steps on one thread.
const SMALL_FABRIC: usize = 32;

/// Most cycles stepped between two looks at a stop request (a bin is stepped in chunks of this
/// many cycles; outputs do not depend on it).
const CHUNK: u64 = 1024;

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

/// A VCD being written and its save file, under temporary names.
struct Dump {
    plan: DumpPlan,
    chosen: Vec<FabricSignal>,
    vcd_file: Staged,
    gtkw_file: Staged,
    /// The translate filter for detector states, when one is dumped.
    states_file: Option<Staged>,
    vcd: FabricVcd,
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

/// How a run steps: the switches' engine, the threads (0: one per core, or one for a fabric of
/// fewer than [`SMALL_FABRIC`] switches) and the stop request it watches.
pub struct How<'a> {
    /// The engine.
    pub engine: Engine,
    /// Threads.
    pub threads: usize,
    /// Stop request.
    pub stop: &'a Stop,
    /// No progress bar and no scenario warnings (a sweep runs several at once and warns once).
    pub quiet: bool,
}

impl<'a> How<'a> {
    /// The fast engine on `threads` threads, watching `stop`.
    pub fn fast(threads: usize, stop: &'a Stop) -> Self {
        How {
            engine: Engine::Fast,
            threads,
            stop,
            quiet: false,
        }
    }
}

/// `arnsim run`: runs the scenario on `threads` threads (0: one per core, or one for a fabric of
/// fewer than [`SMALL_FABRIC`] switches), writes the outputs into `out` (default `waves/<name>`).
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
    let s = load(name_or_path, overrides)?;
    // The fabric's types are sized by its VC lanes, chosen once here.
    crate::with_lanes!(s.params.switch.vcs(), |V| run_on::<V>(
        s, out, overrides, waves, record, how, &mut None
    ))
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
    crate::with_lanes!(s.params.switch.vcs(), |V| run_on::<V>(
        s,
        Some(out),
        overrides,
        None,
        None,
        how,
        written
    ))
}

/// The files a run writes, each with the flag that names it.
pub(super) fn outputs_of(
    out: &Path,
    dump: Option<&dump::DumpPlan>,
    record: Option<&RecordRequest>,
) -> Vec<(&'static str, PathBuf)> {
    let mut all: Vec<(&str, PathBuf)> = OUTPUTS.iter().map(|n| ("--out", out.join(n))).collect();
    if let Some(d) = dump {
        all.extend([d.vcd.clone(), d.gtkw.clone(), d.states.clone()].map(|p| ("--vcd", p)));
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

/// [`run`] on a fabric of `V` VC lanes.
fn run_on<const V: usize>(
    s: Scenario,
    out: Option<PathBuf>,
    overrides: &[String],
    waves: Option<WaveRequest>,
    record: Option<RecordRequest>,
    how: &How<'_>,
    written: &mut Option<Summary>,
) -> Result<(), Failure> {
    let (threads, stop) = (how.threads, how.stop);
    let threads = match threads {
        0 if s.topology.switches.len() < SMALL_FABRIC => 1,
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    // Everything is checked before a file is touched.
    // How errors about the output folder name it: the flag, or where the folder came from.
    let out_flag = if out.is_some() {
        "--out"
    } else {
        "output folder (no --out given)"
    };
    let out = match out {
        Some(o) if o.as_os_str().is_empty() => {
            return Err("--out: an empty path (give a folder)".to_string().into());
        }
        Some(o) => o,
        None => default_out(&s)?,
    };
    let mut warnings = s.warnings.clone();
    let plan = match &waves {
        Some(w) => {
            let (p, w) = dump::plan(&s, w)?;
            warnings.extend(w);
            Some(p)
        }
        None => None,
    };
    refuse_overwriting_inputs(
        &outputs_of(&out, plan.as_ref(), record.as_ref()),
        &inputs_of(&s),
    )?;
    if let Some(c) = deadlock::of_fabric(&s.topology, &s.params)?.filter(|c| c.cycle.is_some()) {
        warnings.push(format!(
            "{c}: the routing can deadlock; the watchdog stops the run if it does"
        ));
    }
    let mut fabric = Fabric::<V>::build(&s.topology, s.params.clone(), &s.flows)?;
    if let Some(t) = &s.replay {
        fabric.attach_replay(Replayer::build_all(&t.program, &t.mapping, &s.time_base)?)?;
    }
    fabric.set_engine(how.engine);
    fabric.set_threads(threads);
    let chosen = match &plan {
        Some(p) => {
            let (c, w) = dump::choose(&fabric, &p.scopes)?;
            warnings.extend(w);
            Some(c)
        }
        None => None,
    };
    for w in warnings.iter().filter(|_| !how.quiet) {
        crate::errln!("arnsim: warning: {w}");
    }
    // From here a signal asks the run to stop (until now it ended the process: nothing was
    // written, and a long load is not waited for). Every output is reserved under its temporary
    // name: a folder that cannot be written fails the run here, before the first cycle.
    stop.listen()?;
    let mut folders = NewFolders::make(&out).map_err(|e| format!("{out_flag} {e}"))?;
    let mut staged = OUTPUTS
        .iter()
        .map(|n| Staged::open(&out.join(n)).map_err(|e| format!("{out_flag} {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut dump = match (plan, chosen) {
        (Some(plan), Some(chosen)) => {
            let vcd_flag = |e: String| format!("--vcd {e}");
            let vcd_folder = plan.vcd.parent().unwrap_or(Path::new(""));
            folders = folders.and(NewFolders::make(vcd_folder).map_err(vcd_flag)?);
            let mut vcd_file = Staged::open(&plan.vcd).map_err(vcd_flag)?;
            let gtkw_file = Staged::open(&plan.gtkw).map_err(vcd_flag)?;
            let states_file = match chosen.iter().any(|s| s.name.ends_with(".detector_state")) {
                true => Some(Staged::open(&plan.states).map_err(vcd_flag)?),
                false => None,
            };
            let vcd = FabricVcd::new(vcd_file.take_file()?, &chosen)
                .map_err(|e| format!("{}: {e}", plan.vcd.display()))?;
            Some(Dump {
                plan,
                chosen,
                vcd_file,
                gtkw_file,
                states_file,
                vcd,
            })
        }
        _ => None,
    };
    let window = match &dump {
        Some(d) => dump::window::<V>(&s, &d.plan, threads, stop)?,
        None => None,
    };
    if dump.is_some() && window.is_none() {
        // (A first pass that was stopped: the run below stops before its first cycle.)
        if stop.requested(0).is_none()
            && let Some(d) = &dump
        {
            let vcd = d.plan.vcd.display();
            let earlier = if d.plan.vcd.exists() {
                " (the file there is an earlier one, left as it was)"
            } else {
                ""
            };
            crate::outln!(
                "no congestion root was detected: nothing to dump; {vcd} not written{earlier}"
            );
        }
        dump = None;
    }
    let mut recording = match &record {
        Some(r) => Some(Recording::start(&s, r, &mut fabric, &out)?),
        None => None,
    };
    folders.keep();
    let tap = dump.as_ref().map(|d| d.vcd.tap(&fabric));
    let nodes = s.topology.nodes;
    let cycle_ns = s.time_base.cycle_ns();
    let bar = match how.quiet {
        true => ProgressBar::hidden(),
        false => progress_bar(s.sim_cycles),
    };
    let t0 = Instant::now();
    let mut series = Series::default();
    let mut last = fabric.totals().nodes;
    let mut bin_start = fabric.now();
    let mut result = Ok(());
    let mut signal = None;
    while fabric.now() < s.sim_cycles && !(s.replay.is_some() && fabric.replay_finished()) {
        if let Some(sig) = stop.requested(fabric.now()) {
            signal = Some(sig);
            break;
        }
        let start = fabric.now();
        let bin_end = (bin_start + s.bin_cycles).min(s.sim_cycles);
        let n = (bin_end - start).min(CHUNK);
        let stepped = match (&mut dump, &tap, window) {
            (Some(d), Some(tap), Some((from, to))) if start + n > from && start <= to => {
                // Units record the dumped signals at every cycle of a window (no stepping cycle
                // by cycle); the samples are written in cycle order.
                let mut written = Ok(());
                let v = &mut d.vcd;
                let r = fabric.run_tapped(n, &mut (), tap, &mut |cycles, samples| {
                    if written.is_ok() {
                        written = v.samples(cycles, samples, from, to);
                    }
                });
                written.map_err(|e| format!("VCD: {e}"))?;
                r
            }
            _ => fabric.run(n, &mut ()),
        };
        if let Some(r) = &mut recording {
            r.drain(&mut fabric)?;
        }
        if let Err(v) = stepped {
            result = Err(v);
            break;
        }
        if fabric.now() == bin_end {
            let t = fabric.totals().nodes;
            series.push(
                fabric.now(),
                fabric.now() - bin_start,
                nodes,
                t.delivered_flits - last.delivered_flits,
                t.delivered_packets - last.delivered_packets,
                t.latency_sum - last.latency_sum,
            );
            last = t;
            bin_start = fabric.now();
        }
        if !bar.is_hidden() {
            bar.set_position(fabric.now());
            bar.set_message(format!(
                "{:.3}/{:.3} ms simulated  {:.0} cycles/s",
                fabric.now() as f64 * cycle_ns / 1e6,
                s.sim_cycles as f64 * cycle_ns / 1e6,
                fabric.now() as f64 / t0.elapsed().as_secs_f64().max(1e-9)
            ));
        }
    }
    let reached = fabric.now();
    if let (Some(sig), 0) = (signal, reached) {
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
    if reached > bin_start {
        // The bin the run stopped in, as far as it got.
        let t = fabric.totals().nodes;
        series.push(
            reached,
            reached - bin_start,
            nodes,
            t.delivered_flits - last.delivered_flits,
            t.delivered_packets - last.delivered_packets,
            t.latency_sum - last.latency_sum,
        );
    }
    if signal.is_some() || result.is_err() {
        bar.abandon();
    } else {
        bar.finish();
    }
    if !bar.is_hidden() {
        crate::errln!();
    }
    let finished = s.replay.is_some() && fabric.replay_finished();
    let complete = signal.is_none() && result.is_ok() && (reached == s.sim_cycles || finished);
    let stop_reason = match (signal, &result) {
        (_, Err(_)) => Some("invariant violated".to_string()),
        (Some(sig), _) => Some(signal_name(sig)),
        _ => None,
    };
    if result.is_ok() {
        result = fabric.check();
    }
    let wall = t0.elapsed().as_secs_f64();
    let t = fabric.totals();
    let end = RunEnd {
        reached,
        replay: replay_summary(&s, &fabric),
        complete,
        stop_reason,
        threads,
        wall,
    };
    let summary = summary(&s, overrides, &t, &series, &end, &result);
    // The outputs, complete, under their temporary names.
    let mut others = Vec::new();
    if let Some(mut d) = dump {
        let io = |e: std::io::Error| format!("{}: {e}", d.plan.vcd.display());
        match &end.stop_reason {
            None => d.vcd.finish().map_err(io)?,
            Some(why) => d
                .vcd
                .finish_early(&format!(
                    "arnsim: the run stopped at cycle {reached} of {} ({why}): no later cycle is dumped",
                    s.sim_cycles
                ))
                .map_err(io)?,
        }
        let mut g = Vec::new();
        let name = |p: &Path| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        };
        // The cycles dumped: the window, up to the last cycle stepped.
        let (from, to) = window.unwrap_or((0, 0));
        let last = to.min(reached.saturating_sub(1));
        let (vcd, gtkw) = (name(&d.plan.vcd), name(&d.plan.gtkw));
        let states = d.states_file.as_ref().map(|_| name(&d.plan.states));
        write_fabric_gtkw(
            &mut g,
            &vcd,
            &gtkw,
            states.as_deref(),
            &d.chosen,
            from,
            last,
        )
        .map_err(io)?;
        d.gtkw_file.write(&g)?;
        others = vec![d.vcd_file, d.gtkw_file];
        if let Some(mut f) = d.states_file {
            f.write(DETECTOR_STATES.as_bytes())?;
            others.push(f);
        }
    }
    let title = format!(
        "{}: {} + {}, {} traffic",
        s.name,
        s.params.switch.routing.name(),
        s.params.switch.queuing.name(),
        s.pattern
    );
    let texts = [
        series.efficiency_csv(cycle_ns),
        series.latency_csv(cycle_ns),
        series.efficiency_svg(cycle_ns, &title),
    ];
    for (f, text) in staged.iter_mut().zip(&texts) {
        f.write(text.as_bytes())?;
    }
    let Some(summary_file) = staged.pop() else {
        return Err("no summary.json".to_string().into());
    };
    others.extend(staged);
    if let Some(r) = recording {
        others.push(r.finish(&mut fabric)?);
    }
    put_in_place(&out, summary_file, others, &summary)?;
    *written = Some(summary);
    let _ = std::io::stdout().flush();
    crate::outln!(
        "{}: {} cycles ({:.3} ms) in {wall:.2} s on {threads} thread(s) ({:.0} cycles/s); mean efficiency {:.3}; {} packets delivered; {} roots, {} ARNs, {} adapted, {} isolated at sources; invariants {}; outputs in {}{}",
        s.name,
        reached,
        reached as f64 * cycle_ns / 1e6,
        reached as f64 / wall.max(1e-9),
        series.mean_efficiency(),
        t.nodes.delivered_packets,
        t.switches.roots_detected,
        t.switches.arns_sent,
        t.switches.packets_adapted,
        t.nodes.packets_adapted,
        if result.is_ok() { "ok" } else { "BROKEN" },
        out.display(),
        if complete { "" } else { " (incomplete)" }
    );
    result.map_err(|v| format!("run stopped: {v}"))?;
    match signal {
        Some(sig) => Err(Failure {
            code: exit_code(sig),
            message: format!(
                "stopped by {} at cycle {reached} of {} ({:.3} of {:.3} ms): the outputs gathered so far are in {}, marked \"complete\": false",
                signal_name(sig),
                s.sim_cycles,
                reached as f64 * cycle_ns / 1e6,
                s.sim_cycles as f64 * cycle_ns / 1e6,
                out.display()
            ),
        }),
        None => Ok(()),
    }
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
