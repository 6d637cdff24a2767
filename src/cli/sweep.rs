//! `arnsim sweep`: a scenario run once per offered load (`traffic.load`), each load an ordinary
//! `arnsim run` into `<out>/load-<load>/`, several at once on a work queue (one thread each),
//! then `sweep.csv` (one row per load) and `sweep.svg` (accepted load and mean latency against
//! offered load) from the runs' summaries.
//!
//! Every flag and every load's scenario is checked, and every output folder tried, before the
//! first run. A run that stops on a broken invariant (the deadlock watchdog among them) is a
//! point of the sweep, marked as such; a stop request ends the sweep without `sweep.csv`.

use super::Failure;
use super::outputs::{Staged, Summary, make_folder, refuse_overwriting_inputs};
use super::run::{self, How, default_out};
use crate::config::Scenario;
use crate::config::units::shown;
use crate::metrics::{RunStatus, SweepPoint, SweepSeries, sweep_plot_svg};
use crate::run::{Stepping, Stop};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The sweep's own files in its output folder; `sweep.csv` is renamed into place last.
pub const OUTPUTS: [&str; 2] = ["sweep.svg", "sweep.csv"];

/// The header of `sweep.csv`.
pub const CSV_HEADER: &str = "offered_load,accepted_load,accepted_bytes_per_ns_per_switch,mean_latency_ns,max_latency_ns,packets_delivered,status,reason";

/// What `arnsim sweep` was asked.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// Scenario file or bundled name.
    pub scenario: String,
    /// `--loads`, as given.
    pub loads: String,
    /// `--out`.
    pub out: Option<PathBuf>,
    /// `--set`, in order (with `seed=S` for `--seed`).
    pub set: Vec<String>,
    /// `--jobs`: runs at once (0: one per core).
    pub jobs: usize,
}

/// One offered load: its value and its text (in the folder name and the override).
#[derive(Clone, Debug, PartialEq)]
pub struct Load {
    /// The load, in (0, 1].
    pub value: f64,
    /// Two decimals, or as many as it takes to tell it apart (`0.30`, `1.00`, `0.305`).
    pub label: String,
}

/// Reads `--loads`: comma-separated numbers in (0, 1], each once; returned in increasing order.
pub fn parse_loads(text: &str) -> Result<Vec<Load>, String> {
    if text.trim().is_empty() {
        return Err("--loads: empty (give offered loads such as 0.1,0.2,0.5)".into());
    }
    let mut loads = Vec::new();
    for item in text.split(',') {
        let t = item.trim();
        if t.is_empty() {
            return Err(format!("--loads {text}: an empty entry between two commas"));
        }
        let v: f64 = t
            .parse()
            .map_err(|_| format!("--loads {text}: `{t}` is not a number"))?;
        if !(v > 0.0 && v <= 1.0) {
            return Err(format!(
                "--loads {text}: `{t}` is outside (0, 1] (a load is a fraction of the link rate, above 0)"
            ));
        }
        loads.push(v);
    }
    loads.sort_by(f64::total_cmp);
    if let Some(w) = loads.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("--loads {text}: {} is given twice", shown(w[0])));
    }
    Ok(loads
        .into_iter()
        .map(|value| {
            let two = format!("{value:.2}");
            // Two decimals where they are exact, else the shortest text that reads back, in
            // scientific notation when plain digits would run long (1e-300).
            let plain = format!("{value}");
            let label = match two.parse::<f64>() == Ok(value) {
                true => two,
                false if plain.len() <= 12 => plain,
                false => format!("{value:e}"),
            };
            Load { value, label }
        })
        .collect())
}

/// How the folder of each load's run starts.
pub const LOAD_DIR_PREFIX: &str = "load-";

/// The folder of one load's run.
pub fn load_dir(out: &Path, load: &Load) -> PathBuf {
    out.join(format!("{LOAD_DIR_PREFIX}{}", load.label))
}

/// The overrides of one load's run: `set`, then `traffic.load`.
fn overrides(set: &[String], load: &Load) -> Vec<String> {
    let mut v = set.to_vec();
    v.push(format!("traffic.load={}", load.value));
    v
}

/// What a row needs beyond a run's summary: the scenario's flit size and cycle time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    /// Bytes per flit.
    pub flit_bytes: u32,
    /// Nanoseconds per cycle.
    pub cycle_ns: f64,
}

/// How a run of the sweep ended: `complete`, `deadlock` (the progress watchdog), `invariant`
/// (another invariant broken) or `stopped`; and why, when it did not complete.
pub fn status(s: &Summary) -> (RunStatus, String) {
    if s.invariants != "ok" {
        let kind = match s.invariants.contains("invariant progress broken") {
            true => RunStatus::Deadlock,
            false => RunStatus::Invariant,
        };
        return (kind, s.invariants.clone());
    }
    match s.complete {
        true => (RunStatus::Complete, String::new()),
        false => (
            RunStatus::Stopped,
            s.stop_reason.clone().unwrap_or_default(),
        ),
    }
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
fn field(t: &str) -> String {
    match t.contains([',', '"', '\n', '\r']) {
        true => format!("\"{}\"", t.replace('"', "\"\"")),
        false => t.to_string(),
    }
}

/// The accepted load of a run: flits delivered over the nodes' injection capacity (a flit per
/// node per cycle), as `mean_efficiency` in the summary but from the exact counts.
fn accepted(s: &Summary) -> f64 {
    s.flits_delivered as f64 / (s.nodes as f64 * s.simulated_cycles as f64).max(1.0)
}

/// `sweep.csv`: the header and one row per load, in the order given.
pub fn csv(rows: &[(Load, Summary)], scale: Scale) -> String {
    let mut out = format!("{CSV_HEADER}\n");
    for (load, s) in rows {
        let ns = s.simulated_cycles as f64 * scale.cycle_ns;
        let bytes = s.flits_delivered as f64 * scale.flit_bytes as f64;
        let per_switch = bytes / ns.max(1e-9) / (s.switches.max(1) as f64);
        let latency = |us: f64| match s.packets_delivered {
            0 => String::new(),
            _ => format!("{:.3}", us * 1000.0),
        };
        let (status, reason) = status(s);
        let _ = writeln!(
            out,
            "{},{:.6},{:.6},{},{},{},{},{}",
            load.label,
            accepted(s),
            per_switch,
            latency(s.mean_latency_us),
            latency(s.max_latency_us),
            s.packets_delivered,
            status.name(),
            field(&reason)
        );
    }
    out
}

/// `sweep.svg`.
pub fn svg(rows: &[(Load, Summary)]) -> String {
    let title = match rows.first() {
        Some((_, s)) => {
            // The sweep's own overrides (every one but the load) say what differs from the file.
            let set: Vec<&str> = s
                .overrides
                .iter()
                .map(String::as_str)
                .filter(|o| !o.starts_with("traffic.load="))
                .collect();
            let set = match set.is_empty() {
                true => String::new(),
                false => format!(" ({})", set.join(", ")),
            };
            format!(
                "{}: {} + {}, {} traffic, load sweep{set}",
                s.scenario, s.routing, s.queuing, s.traffic
            )
        }
        None => String::new(),
    };
    let points: Vec<SweepPoint> = rows
        .iter()
        .map(|(l, s)| SweepPoint {
            offered: l.value,
            accepted: accepted(s),
            mean_latency_ns: (s.packets_delivered > 0).then_some(s.mean_latency_us * 1000.0),
            complete: status(s).0 == RunStatus::Complete,
        })
        .collect();
    sweep_plot_svg(
        &title,
        &[SweepSeries {
            label: String::new(),
            points,
        }],
    )
}

/// Loads the scenario at every load: the first error refuses the sweep. Returns the scale and
/// the warnings (each once, in order).
fn check_scenarios(req: &Request, loads: &[Load]) -> Result<(Scenario, Vec<String>), String> {
    let mut first = None;
    let mut warnings: Vec<String> = Vec::new();
    for l in loads {
        let s = run::load(&req.scenario, &overrides(&req.set, l)).map_err(|e| match first {
            None => e,
            Some(_) => format!("at load {}: {e}", l.label),
        })?;
        for w in &s.warnings {
            let w = w.to_string();
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        if first.is_none() {
            first = Some(s);
        }
    }
    let s = first.ok_or("--loads: no load")?;
    if s.pattern == "flows" || s.pattern.starts_with("trace") {
        return Err(format!(
            "--loads: traffic pattern `{}` does not read `traffic.load` (a sweep needs a pattern that does: uniform, rnd, bitrev, h10, h25, h10-4, h25-4)",
            s.pattern
        ));
    }
    Ok((s, warnings))
}

/// The sweep's folder, each load's folder and every output in them can be written: tried
/// before the first run. Returns the sweep's own outputs under their temporary names.
fn reserve(out: &Path, loads: &[Load]) -> Result<Vec<Staged>, String> {
    let flag = |e: String| format!("--out {e}");
    if let Some(d) = loads
        .iter()
        .map(|l| load_dir(out, l))
        .find(|d| d.exists() && !d.is_dir())
    {
        return Err(format!(
            "--out {}: not a folder (a load's run goes there)",
            d.display()
        ));
    }
    make_folder(out).map_err(flag)?;
    let staged = OUTPUTS
        .iter()
        .map(|n| Staged::open(&out.join(n)).map_err(flag))
        .collect::<Result<Vec<_>, _>>()?;
    for l in loads {
        let dir = load_dir(out, l);
        make_folder(&dir).map_err(flag)?;
        for n in run::OUTPUTS {
            // Dropped at once: only the trial is wanted.
            Staged::open(&dir.join(n)).map_err(flag)?;
        }
    }
    Ok(staged)
}

/// `arnsim sweep`.
pub fn sweep(req: &Request, stop: &Stop) -> Result<(), Failure> {
    let loads = parse_loads(&req.loads)?;
    if let Some(s) = req.set.iter().find(|s| {
        s.split_once('=')
            .is_some_and(|(k, _)| k.trim() == "traffic.load")
    }) {
        return Err(format!(
            "--set {s}: a sweep sets `traffic.load` itself, from --loads (give the load there)"
        )
        .into());
    }
    let (first, warnings) = check_scenarios(req, &loads)?;
    let out = match &req.out {
        Some(o) if o.as_os_str().is_empty() => {
            return Err("--out: an empty path (give a folder)".to_string().into());
        }
        Some(o) => o.clone(),
        None => {
            let d = default_out(&first)?;
            d.with_file_name(format!("{}-sweep", first.name))
        }
    };
    // No output of the sweep or of any load's run may be one of the files the runs read.
    let mut outputs: Vec<(&str, PathBuf)> =
        OUTPUTS.iter().map(|n| ("--out", out.join(n))).collect();
    for l in &loads {
        outputs.extend(run::outputs_of(&load_dir(&out, l), None, None));
    }
    refuse_overwriting_inputs(&outputs, &run::inputs_of(&first))?;
    let scale = Scale {
        flit_bytes: first.time_base.flit_bytes,
        cycle_ns: first.time_base.cycle_ns(),
    };
    drop(first);
    let mut staged = reserve(&out, &loads)?;
    for w in &warnings {
        crate::errln!("arnsim: warning: {w}");
    }
    let jobs = match req.jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(loads.len());
    let results = run_all(req, &loads, &out, jobs, stop);
    let mut rows = Vec::with_capacity(loads.len());
    for (l, r) in loads.iter().zip(results) {
        match r {
            Some(Ok(s)) => rows.push((l.clone(), s)),
            Some(Err(f)) => {
                return Err(Failure {
                    message: format!(
                        "load {}: {}; the sweep stopped: {} and sweep.svg are not written",
                        l.label,
                        f.message,
                        out.join("sweep.csv").display()
                    ),
                    code: f.code,
                });
            }
            // Not run: a run before it failed, and is reported above.
            None => {}
        }
    }
    if rows.len() != loads.len() {
        return Err(format!(
            "only {} of {} loads ran; {} is not written",
            rows.len(),
            loads.len(),
            out.join("sweep.csv").display()
        )
        .into());
    }
    let (Some(mut csv_file), Some(mut svg_file)) = (staged.pop(), staged.pop()) else {
        return Err("the sweep's outputs were not reserved".to_string().into());
    };
    svg_file.write(svg(&rows).as_bytes())?;
    csv_file.write(csv(&rows, scale).as_bytes())?;
    svg_file.commit()?;
    csv_file.commit()?;
    let stopped = rows
        .iter()
        .filter(|(_, s)| status(s).0 != RunStatus::Complete)
        .count();
    crate::outln!(
        "{}: {} loads on {jobs} job(s){}; plot in {}",
        out.join("sweep.csv").display(),
        rows.len(),
        match stopped {
            0 => String::new(),
            n => format!(", {n} of them stopped early (see the `status` column)"),
        },
        out.join("sweep.svg").display()
    );
    Ok(())
}

/// Runs every load on `jobs` threads, one run per thread at a time, taking loads in order from a
/// shared queue; after a failure no further load is started. Each load's result sits at its
/// index, so the outcome does not depend on `jobs`.
fn run_all(
    req: &Request,
    loads: &[Load],
    out: &Path,
    jobs: usize,
    stop: &Stop,
) -> Vec<Option<Result<Summary, Failure>>> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results = Mutex::new(vec![None; loads.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| {
                while !failed.load(Ordering::SeqCst) {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(l) = loads.get(i) else { break };
                    let r = run_one(req, l, out, stop);
                    if r.is_err() {
                        failed.store(true, Ordering::SeqCst);
                    }
                    if let Ok(mut v) = results.lock() {
                        v[i] = Some(r);
                    }
                }
            });
        }
    });
    results.into_inner().unwrap_or_default()
}

/// One load's run on one thread: its summary, also when it stopped on a broken invariant.
fn run_one(req: &Request, l: &Load, out: &Path, stop: &Stop) -> Result<Summary, Failure> {
    let set = overrides(&req.set, l);
    let s = run::load(&req.scenario, &set)?;
    let how = How {
        step: Stepping::new(1, stop),
        quiet: true,
    };
    let mut written = None;
    let r = run::run_loaded(s, load_dir(out, l), &set, &how, &mut written);
    match (r, written) {
        (Ok(()), Some(s)) => Ok(s),
        // A broken invariant: the run wrote its outputs, marked; a point of the sweep.
        (Err(f), Some(s)) if f.code == 1 && s.invariants != "ok" => {
            crate::errln!("arnsim: load {}: {}", l.label, f.message);
            Ok(s)
        }
        (Err(f), _) => Err(f),
        (Ok(()), None) => Err(format!("load {}: the run wrote no summary", l.label).into()),
    }
}
