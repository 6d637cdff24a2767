//! `arnsim sweep`: a scenario run at every point of a grid of scenario keys' values
//! (`--vary KEY=V1,V2,...`, `--loads` for `traffic.load`), each point `--seeds N` times on
//! consecutive seeds, each run an ordinary `arnsim run` into its own folder of `<out>`, several
//! at once on a work queue (one thread each); then `sweep.csv` (a row per point: the means and
//! their 95 % confidence intervals, `sweep_table.rs`) and `sweep.svg` from the runs' summaries.
//!
//! Every flag and every point's scenario is checked, and every output folder tried, before the
//! first run; then the previous sweep's table and the folders of its runs that this one does not
//! run are removed. A run that stops on a broken invariant (the deadlock watchdog among them) is
//! a run of its point, marked as such; a stop request ends the sweep with a table of the points
//! finished, the others marked `stopped`.

use super::Failure;
use super::outputs::{Staged, Summary, make_folder, refuse_overwriting_inputs};
use super::run::{self, How, default_out};
use super::sweep_grid::{Grid, LOAD_KEY, Vary, parse_vary};
use super::sweep_table::{Scale, csv, status, svg};
use crate::config::Scenario;
use crate::config::units::shown;
use crate::metrics::RunStatus;
use crate::run::{Stepping, Stop};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The sweep's own files in its output folder; `sweep.csv` is renamed into place last.
pub const OUTPUTS: [&str; 2] = ["sweep.svg", "sweep.csv"];

/// What `arnsim sweep` was asked.
#[derive(Clone, Debug)]
pub struct Request {
    /// Scenario file or bundled name.
    pub scenario: String,
    /// `--loads`, as given.
    pub loads: Option<String>,
    /// `--vary`, in order.
    pub vary: Vec<String>,
    /// `--seeds`: runs per point, on consecutive seeds from the scenario's.
    pub seeds: usize,
    /// `--out`.
    pub out: Option<PathBuf>,
    /// `--set`, in order (with `seed=S` for `--seed`).
    pub set: Vec<String>,
    /// `--jobs`: runs at once (0: one per core).
    pub jobs: usize,
}

impl Default for Request {
    fn default() -> Self {
        Request {
            scenario: String::new(),
            loads: None,
            vary: Vec::new(),
            seeds: 1,
            out: None,
            set: Vec::new(),
            jobs: 0,
        }
    }
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

/// The varied keys of `req`: `--loads` first, then each `--vary`.
fn varied(req: &Request) -> Result<Vec<Vary>, String> {
    let mut keys = Vec::new();
    if let Some(l) = &req.loads {
        keys.push(Vary::loads(&parse_loads(l)?));
    }
    for v in &req.vary {
        keys.push(parse_vary(v)?);
    }
    if keys.is_empty() {
        return Err(
            "give --loads L1,L2,... or --vary KEY=V1,V2,... (what the sweep varies)".into(),
        );
    }
    if let Some(s) = req.set.iter().find(|s| {
        s.split_once('=')
            .is_some_and(|(k, _)| keys.iter().any(|v| v.key == k.trim()))
    }) {
        let from = match s.trim_start().starts_with(LOAD_KEY) && req.loads.is_some() {
            true => "from --loads (give the load there)",
            false => "from --vary",
        };
        return Err(format!("--set {s}: the sweep sets that key itself, {from}"));
    }
    if req.seeds == 0 {
        return Err("--seeds 0: a point runs at least once".into());
    }
    Ok(keys)
}

/// Loads the scenario at every point (on the first seed): the first error refuses the sweep.
/// Returns the first point's scenario and the warnings (each once, in order).
fn check_scenarios(req: &Request, grid: &Grid) -> Result<(Scenario, Vec<String>), String> {
    let mut first = None;
    let mut warnings: Vec<String> = Vec::new();
    for p in 0..grid.points.len() {
        let s = run::load(&req.scenario, &grid.overrides(&req.set, p, 0)).map_err(|e| {
            // A varied key's value is refused as `--vary`'s, not as an override's.
            let e = match grid
                .keys
                .iter()
                .any(|k| e.starts_with(&format!("--set: key `{}`", k.key)))
            {
                true => e.replacen("--set:", "--vary:", 1),
                false => e,
            };
            match first {
                None => e,
                Some(_) => format!("at {}: {e}", grid.name(p)),
            }
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
    let s = first.ok_or("--vary: no point")?;
    let loads = grid.keys.iter().any(|k| k.key == LOAD_KEY);
    if loads
        && (s.pattern == "flows" || s.pattern == "permutations" || s.pattern.starts_with("trace"))
    {
        return Err(format!(
            "--loads: traffic pattern `{}` does not read `traffic.load` (a load sweep needs a pattern that does: uniform, rnd, bitrev, h10, h25, h10-4, h25-4)",
            s.pattern
        ));
    }
    Ok((s, warnings))
}

/// The sweep's folder, each run's folder and every output in them can be written: tried
/// before the first run. Returns the sweep's own outputs under their temporary names.
fn reserve(out: &Path, dirs: &[PathBuf]) -> Result<Vec<Staged>, String> {
    let flag = |e: String| format!("--out {e}");
    if let Some(d) = dirs.iter().find(|d| d.exists() && !d.is_dir()) {
        return Err(format!(
            "--out {}: not a folder (a run of the sweep goes there)",
            d.display()
        ));
    }
    make_folder(out).map_err(flag)?;
    let staged = OUTPUTS
        .iter()
        .map(|n| Staged::open(&out.join(n)).map_err(flag))
        .collect::<Result<Vec<_>, _>>()?;
    for dir in dirs {
        make_folder(dir).map_err(flag)?;
        for n in run::OUTPUTS {
            // Dropped at once: only the trial is wanted.
            Staged::open(&dir.join(n)).map_err(flag)?;
        }
    }
    Ok(staged)
}

/// Removes what an earlier sweep into `out` left that this one will not write: its table and
/// plot, and each folder of `out` that holds a run's `summary.json` and nothing a run does not
/// write, unless this sweep runs there. A folder holding other files stays, with a warning.
fn clear_earlier(out: &Path, dirs: &[PathBuf]) {
    for n in OUTPUTS {
        let _ = std::fs::remove_file(out.join(n));
    }
    let Ok(entries) = std::fs::read_dir(out) else {
        return;
    };
    for d in entries.flatten().map(|e| e.path()) {
        if !d.is_dir() || !d.join("summary.json").is_file() || dirs.contains(&d) {
            continue;
        }
        let files: Vec<PathBuf> = std::fs::read_dir(&d)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        let a_run_writes = |f: &PathBuf| {
            let n = f
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into());
            f.is_file()
                && (run::OUTPUTS.contains(&n.as_str())
                    || n == run::PHASE_OUTPUT
                    || (n.starts_with('.') && n.ends_with(".partial")))
        };
        if !files.iter().all(a_run_writes) {
            crate::errln!(
                "arnsim: warning: {} is a run of an earlier sweep, not of this one, but holds files a run does not write: left as it is",
                d.display()
            );
            continue;
        }
        for f in &files {
            let _ = std::fs::remove_file(f);
        }
        let _ = std::fs::remove_dir(&d);
    }
}

/// `arnsim sweep`.
pub fn sweep(req: &Request, stop: &Stop) -> Result<(), Failure> {
    let keys = varied(req)?;
    // With replications, the first seed is the scenario's (after `--set` and `--seed`); one run
    // a point takes the scenario's seed as it is.
    let base = match req.seeds {
        1 => Ok(0),
        _ => run::load(&req.scenario, &req.set).map(|s| s.seed),
    };
    let grid = Grid::new(keys, req.seeds, *base.as_ref().unwrap_or(&0))?;
    let (first, warnings) = check_scenarios(req, &grid)?;
    base?;
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
    let runs: Vec<(usize, usize)> = (0..grid.points.len())
        .flat_map(|p| (0..grid.replications()).map(move |r| (p, r)))
        .collect();
    let dirs: Vec<PathBuf> = runs.iter().map(|&(p, r)| grid.dir(&out, p, r)).collect();
    // No output of the sweep or of any run may be one of the files the runs read.
    let mut outputs: Vec<(&str, PathBuf)> =
        OUTPUTS.iter().map(|n| ("--out", out.join(n))).collect();
    for d in &dirs {
        outputs.extend(run::outputs_of(d, None, None));
    }
    refuse_overwriting_inputs(&outputs, &run::inputs_of(&first))?;
    let scale = Scale {
        flit_bytes: first.time_base.flit_bytes,
        cycle_ns: first.time_base.cycle_ns(),
    };
    drop(first);
    if crate::fabric::ranks::world().is_some_and(|r| r.rank() != 0) {
        return step_on_rank(req, &grid, &runs, &dirs, stop);
    }
    let mut staged = reserve(&out, &dirs)?;
    clear_earlier(&out, &dirs);
    for w in &warnings {
        crate::errln!("arnsim: warning: {w}");
    }
    // On MPI ranks each run is split over them: one run at a time.
    let jobs = match req.jobs {
        _ if crate::fabric::ranks::world().is_some() => 1,
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(runs.len());
    let results = run_all(req, &grid, &runs, &dirs, jobs, stop);
    // A point counts once every one of its runs has its summary.
    let mut points: Vec<Option<Vec<Summary>>> = vec![Some(Vec::new()); grid.points.len()];
    let mut failure: Option<Failure> = None;
    for (&(p, _), r) in runs.iter().zip(results) {
        match r {
            Some(Ok(s)) => {
                if let Some(v) = &mut points[p] {
                    v.push(s);
                }
            }
            Some(Err(f)) => {
                points[p] = None;
                if failure.as_ref().is_none_or(|g| g.code == 1 && f.code != 1) {
                    failure = Some(Failure {
                        message: format!("{}: {}", grid.name(p), f.message),
                        code: f.code,
                    });
                }
            }
            None => points[p] = None,
        }
    }
    let unfinished = match &failure {
        Some(f) if f.code > 128 => format!(
            "not finished: the sweep was stopped by {}",
            super::interrupt::signal_name(f.code - 128)
        ),
        _ => "not finished: the sweep stopped on an error".to_string(),
    };
    let (Some(mut csv_file), Some(mut svg_file)) = (staged.pop(), staged.pop()) else {
        return Err("the sweep's outputs were not reserved".to_string().into());
    };
    let table = csv(&grid, &points, scale, &unfinished);
    let first_summary = points.iter().flatten().flatten().next();
    // A sweep that finished no point has no curve: its table alone says so.
    if let Ok(plot) = svg(&grid, &table, first_summary) {
        svg_file.write(plot.as_bytes())?;
        svg_file.commit()?;
    }
    csv_file.write(table.as_bytes())?;
    csv_file.commit()?;
    let done = points.iter().filter(|p| p.is_some()).count();
    if let Some(f) = failure {
        return Err(Failure {
            message: format!(
                "{}; the sweep stopped: {} holds the {done} of {} points finished, the others marked `stopped`",
                f.message,
                out.join("sweep.csv").display(),
                grid.points.len()
            ),
            code: f.code,
        });
    }
    let early = points
        .iter()
        .flatten()
        .filter(|v| v.iter().any(|s| status(s).0 != RunStatus::Complete))
        .count();
    crate::outln!(
        "{}: {} points x {} seed(s) on {jobs} job(s){}; plot in {}",
        out.join("sweep.csv").display(),
        grid.points.len(),
        grid.replications(),
        match early {
            0 => String::new(),
            n => format!(", {n} of them with runs stopped early (see the `status` column)"),
        },
        out.join("sweep.svg").display()
    );
    Ok(())
}

/// Runs every run on `jobs` threads, one at a time per thread, taking them in order from a
/// shared queue; after a failure no further run is started. Each result sits at its run's
/// index, so the outcome does not depend on `jobs`.
fn run_all(
    req: &Request,
    grid: &Grid,
    runs: &[(usize, usize)],
    dirs: &[PathBuf],
    jobs: usize,
    stop: &Stop,
) -> Vec<Option<Result<Summary, Failure>>> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results = Mutex::new(vec![None; runs.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| {
                while !failed.load(Ordering::SeqCst) {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&(p, rep)) = runs.get(i) else { break };
                    let set = grid.overrides(&req.set, p, rep);
                    let r = run_one(req, &set, &grid.name(p), &dirs[i], stop);
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

/// A sweep on an MPI rank other than 0: the runs in order, each split over the ranks, writing
/// nothing (rank 0 writes every run's outputs and the sweep's); stops where rank 0 stops: at a
/// stop request, which the ranks agree on.
fn step_on_rank(
    req: &Request,
    grid: &Grid,
    runs: &[(usize, usize)],
    dirs: &[PathBuf],
    stop: &Stop,
) -> Result<(), Failure> {
    for (&(p, rep), dir) in runs.iter().zip(dirs) {
        let set = grid.overrides(&req.set, p, rep);
        let s = run::load(&req.scenario, &set)?;
        let how = How {
            step: Stepping::new(1, stop),
            quiet: true,
        };
        // A broken invariant (code 1) ends the run, not the sweep.
        match run::run_loaded(s, dir.to_path_buf(), &set, &how, &mut None) {
            Err(f) if f.code != 1 => return Err(f),
            _ => {}
        }
    }
    Ok(())
}

/// One run on one thread: its summary, also when it stopped on a broken invariant.
fn run_one(
    req: &Request,
    set: &[String],
    name: &str,
    dir: &Path,
    stop: &Stop,
) -> Result<Summary, Failure> {
    let s = run::load(&req.scenario, set)?;
    let how = How {
        step: Stepping::new(1, stop),
        quiet: true,
    };
    let mut written = None;
    let r = run::run_loaded(s, dir.to_path_buf(), set, &how, &mut written);
    match (r, written) {
        (Ok(()), Some(s)) => Ok(s),
        // A broken invariant: the run wrote its outputs, marked; a run of the sweep.
        (Err(f), Some(s)) if f.code == 1 && s.invariants != "ok" => {
            crate::errln!("arnsim: {name}: {}", f.message);
            Ok(s)
        }
        (Err(f), _) => Err(f),
        (Ok(()), None) => Err(format!("{name}: the run wrote no summary").into()),
    }
}
