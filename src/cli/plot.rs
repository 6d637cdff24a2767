//! `arnsim plot`: the efficiency curves of several runs in one SVG panel, labelled by routing mode
//! and queuing scheme, as in figure 6 of Rocher-Gonzalez et al. (docs/references.md); or, given
//! the folders of `arnsim sweep`, their accepted load and latency curves in one figure, labelled
//! by folder name, as in figure 14 of Maglione-Mathey et al.; or, given trace replays, their
//! execution times as bars with the incast's overhead, as in figure 8 of Rocher-Gonzalez et al.

use super::outputs::{Summary, write_atomically};
use crate::config::text_lines::open_input;
use crate::config::units::nanoseconds;
use crate::metrics::{
    Curve, ExecutionBar, efficiency_plot_svg, execution_plot_svg, read_efficiency_csv,
    read_sweep_csv, sweep_curves, sweep_plot_svg,
};
use std::path::{Path, PathBuf};

fn read(path: &Path) -> Result<String, String> {
    open_input(path)
        .and_then(std::io::read_to_string)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads every run directory and writes the panel to `out` (through a temporary file: nothing is
/// written unless every run reads), with the bins that end by `to` (a time) when given.
pub fn run(
    runs: &[PathBuf],
    out: &Path,
    title: Option<&str>,
    to: Option<&str>,
) -> Result<(), String> {
    let to_ms = to
        .map(|t| nanoseconds(t).map(|ns| ns / 1e6))
        .transpose()
        .map_err(|e| format!("--to: {e}"))?;
    check_out(runs, out)?;
    // One folder named twice (`o/a` and `o/../o/a`) would draw one curve over another.
    let mut seen = std::collections::HashMap::new();
    for dir in runs {
        let same = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
        if let Some(first) = seen.insert(same, dir) {
            return Err(format!(
                "{} is given twice (also as {}): each run is one curve",
                dir.display(),
                first.display()
            ));
        }
    }
    let is_sweep = |d: &PathBuf| d.join("sweep.csv").is_file();
    if let (Some(sweep), Some(run)) = (
        runs.iter().find(|d| is_sweep(d)),
        runs.iter().find(|d| !is_sweep(d)),
    ) {
        return Err(format!(
            "{} is a load sweep (sweep.csv) and {} is not: plot sweeps and runs apart",
            sweep.display(),
            run.display()
        ));
    }
    if runs.iter().all(is_sweep) {
        if to.is_some() {
            return Err("--to cuts runs in time; the folders given are load sweeps".into());
        }
        return sweeps(runs, out, title);
    }
    let summaries = runs
        .iter()
        .map(|dir| {
            let path = dir.join("summary.json");
            Summary::from_json(&path.display().to_string(), &read(&path)?)
        })
        .collect::<Result<Vec<_>, String>>()?;
    if summaries.iter().all(|s| s.replay.is_some()) {
        if to.is_some() {
            return Err(
                "--to cuts runs in time; the runs given are trace replays, plotted by \
                        their execution time"
                    .into(),
            );
        }
        return execution_times(runs, &summaries, out, title);
    }
    let mut curves = Vec::with_capacity(runs.len());
    let mut default_title = None;
    for (dir, sum) in runs.iter().zip(&summaries) {
        let csv_path = dir.join("efficiency.csv");
        let csv = read(&csv_path)?;
        if !sum.complete {
            crate::errln!(
                "arnsim: warning: {}: the run stopped at cycle {} ({}): its curve ends there",
                dir.display(),
                sum.stopped_at_cycle.unwrap_or(sum.simulated_cycles),
                sum.stop_reason.as_deref().unwrap_or("incomplete")
            );
        }
        let label = sum.label();
        if default_title.is_none() {
            default_title = Some(format!("{}: {} traffic", sum.scenario, sum.traffic));
        }
        let mut points = read_efficiency_csv(&csv_path.display().to_string(), &csv)?;
        if let Some(t) = to_ms {
            let first_ms = points[0].0;
            points.retain(|&(time_ms, _)| time_ms <= t + 1e-9);
            if points.is_empty() {
                return Err(format!(
                    "--to {}: before the end of {}'s first bin ({} us): its curve would be empty",
                    to.unwrap_or_default(),
                    dir.display(),
                    first_ms * 1000.0
                ));
            }
        }
        curves.push(Curve { label, points });
    }
    let title = title
        .map(str::to_string)
        .or(default_title)
        .unwrap_or_default();
    write_atomically(out, efficiency_plot_svg(&title, &curves).as_bytes())?;
    crate::outln!("{}: {} runs", out.display(), curves.len());
    Ok(())
}

/// Trace replays (every summary has a `replay` section): a bar per routing mode, queuing
/// scheme and output arbitration ([`Summary::label`]) with its execution time, and an error bar up to the time of its run beside an incast
/// (traffic `trace+...`), as in the paper's figure 8. Two runs of one kind and technique are an
/// error; a replay that did not finish is left out with a warning.
fn execution_times(
    dirs: &[PathBuf],
    summaries: &[Summary],
    out: &Path,
    title: Option<&str>,
) -> Result<(), String> {
    let mut bars: Vec<ExecutionBar> = Vec::new();
    let mut from: Vec<[Option<&Path>; 2]> = Vec::new();
    for (dir, sum) in dirs.iter().zip(summaries) {
        let label = sum.label();
        let incast = sum.traffic.contains('+') as usize;
        let k = match bars.iter().position(|b| b.label == label) {
            Some(k) => k,
            None => {
                bars.push(ExecutionBar {
                    label: label.clone(),
                    alone: None,
                    with_incast: None,
                });
                from.push([None, None]);
                bars.len() - 1
            }
        };
        if let Some(other) = from[k][incast] {
            return Err(format!(
                "{} and {}: both replay {} ({} traffic); give one run of each",
                other.display(),
                dir.display(),
                label,
                sum.traffic
            ));
        }
        from[k][incast] = Some(dir);
        let seconds = sum
            .replay
            .as_ref()
            .and_then(|r| r.execution_time_us)
            .map(|us| us / 1e6);
        match (seconds, incast) {
            (None, 0) => {
                return Err(format!(
                    "{}: not every rank finished within the run (stopped at cycle {}): it has no \
                     execution time, and its bar would be empty; run it longer (`sim_time`) or \
                     leave it out",
                    dir.display(),
                    sum.stopped_at_cycle.unwrap_or(sum.simulated_cycles)
                ));
            }
            (None, _) => crate::errln!(
                "arnsim: warning: {}: not every rank finished within the run beside the incast: \
                 its bar has no error bar",
                dir.display()
            ),
            _ => {}
        }
        let slot = &mut bars[k];
        *(if incast == 1 {
            &mut slot.with_incast
        } else {
            &mut slot.alone
        }) = seconds;
    }
    if let Some(b) = bars.iter().find(|b| b.alone.is_none()) {
        return Err(format!(
            "{}: only a run beside an incast is given; a bar is the execution time of the \
             replay alone (traffic `trace`), the incast's run its error bar: give that run too",
            b.label
        ));
    }
    let trace = summaries[0]
        .replay
        .as_ref()
        .map_or("", |r| r.trace.as_str());
    let name = Path::new(trace)
        .file_name()
        .map_or_else(|| trace.to_string(), |n| n.to_string_lossy().into_owned());
    let title = title.map_or_else(
        || format!("{}: {name}, execution time", summaries[0].scenario),
        str::to_string,
    );
    write_atomically(out, execution_plot_svg(&title, &bars).as_bytes())?;
    crate::outln!(
        "{}: {} runs, {} bars",
        out.display(),
        dirs.len(),
        bars.len()
    );
    Ok(())
}

/// The sweeps in `dirs`, each labelled by its folder's name, into one figure.
fn sweeps(dirs: &[PathBuf], out: &Path, title: Option<&str>) -> Result<(), String> {
    let mut tables = Vec::with_capacity(dirs.len());
    for dir in dirs {
        let path = dir.join("sweep.csv");
        let table = read_sweep_csv(&path.display().to_string(), &read(&path)?)?;
        let label = dir
            .file_name()
            .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into());
        tables.push((label, table));
    }
    let (axis, series) = sweep_curves(&tables)?;
    let svg = sweep_plot_svg(title.unwrap_or("sweeps"), &axis, &series);
    write_atomically(out, svg.as_bytes())?;
    crate::outln!(
        "{}: {} sweeps, {} curves",
        out.display(),
        tables.len(),
        series.len()
    );
    Ok(())
}

/// The plot goes to an `.svg` file that is none of the runs' own files: a plot never writes over
/// a run's CSV or summary, nor over a file that is not a plot.
fn check_out(runs: &[PathBuf], out: &Path) -> Result<(), String> {
    if out.is_dir() {
        return Err(format!("--out {}: is a folder", out.display()));
    }
    let is_svg = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    if !is_svg {
        return Err(format!(
            "--out {}: a plot is written to an .svg file (give a name ending in .svg)",
            out.display()
        ));
    }
    let target = super::outputs::resolved(out);
    for dir in runs {
        // A run's files, or a sweep's and those of its runs (its folders).
        let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
        let runs_of_sweep = entries.map(|e| e.path()).filter(|p| p.is_dir());
        let owned: Vec<PathBuf> = std::iter::once(dir.clone())
            .chain(runs_of_sweep)
            .flat_map(|d| super::run::OUTPUTS.iter().map(move |f| d.join(f)))
            .chain(super::sweep::OUTPUTS.iter().map(|f| dir.join(f)))
            .collect();
        if let Some(f) = owned
            .into_iter()
            .find(|f| super::outputs::resolved(f) == target)
        {
            return Err(format!(
                "--out {}: that is {}, an output of a run or sweep being plotted; write the plot elsewhere",
                out.display(),
                f.display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plot_never_writes_over_a_run_or_a_file_that_is_not_svg() {
        let (_tmp, dir) = crate::scratch::folder("plot-out");
        std::fs::write(dir.join("efficiency.svg"), "<svg/>").unwrap();
        std::fs::write(dir.join("notes.txt"), "kept").unwrap();
        let runs = [dir.clone()];
        let e = run(&runs, &dir.join("notes.txt"), None, None).unwrap_err();
        assert!(e.contains("--out") && e.contains(".svg"), "{e}");
        let e = run(&runs, &dir.join("efficiency.svg"), None, None).unwrap_err();
        assert!(e.contains("an output of a run"), "{e}");
        assert_eq!(
            std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
            "kept"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("efficiency.svg")).unwrap(),
            "<svg/>"
        );
    }

    #[test]
    fn plots_sweeps_labelled_by_their_folders() {
        let (_tmp, dir) = crate::scratch::folder("plot-sweeps");
        let (a, b) = (dir.join("MIN-1VL"), dir.join("D3R-2VL"));
        for d in [&a, &b] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(
                d.join("sweep.csv"),
                format!(
                    "{}\n0.50,1,0.500000,,1.0,,700.0,,900.0,,10,,complete,\n",
                    super::super::sweep_table::LOAD_HEADER_FOR_TESTS
                ),
            )
            .unwrap();
        }
        let out = dir.join("fig.svg");
        run(&[a.clone(), b.clone()], &out, Some("figure 14"), None).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        assert!(svg.contains(">MIN-1VL</text>") && svg.contains(">D3R-2VL</text>"));
        assert!(svg.contains(">figure 14</text>"));
        let e = run(&[a.clone(), b.clone()], &out, None, Some("1ms")).unwrap_err();
        assert!(e.contains("load sweeps"), "{e}");
        // One folder under two names is refused.
        let again = dir.join("D3R-2VL/../MIN-1VL");
        let e = run(&[a.clone(), b.clone(), again], &out, None, None).unwrap_err();
        assert!(e.contains("is given twice (also as"), "{e}");
        // A control character in the title stays out of the XML.
        let odd = dir.join("odd.svg");
        run(std::slice::from_ref(&a), &odd, Some("a\u{1}b"), None).unwrap();
        assert!(
            std::fs::read_to_string(&odd)
                .unwrap()
                .contains(">a\u{fffd}b</text>")
        );
        // A sweep's own files, and a run folder beside a sweep, are refused.
        std::fs::write(a.join("sweep.svg"), "kept").unwrap();
        let e = run(std::slice::from_ref(&a), &a.join("sweep.svg"), None, None).unwrap_err();
        assert!(
            e.contains("an output of a run or sweep being plotted"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(a.join("sweep.svg")).unwrap(),
            "kept"
        );
        let e = run(&[a.clone(), dir.clone()], &odd, None, None).unwrap_err();
        assert!(e.contains("is a load sweep (sweep.csv) and"), "{e}");
        for (row, says) in [
            (
                "0.50,1,NaN,,1.0,,700.0,,900.0,,10,,complete,",
                "`NaN` is not a number 0 or above",
            ),
            ("0.50,1,1.5,,1.0,,700.0,,900.0,,10,,complete,", "0 to 1"),
            (
                "0.50,1,0.5,,1.0,,700.0,,900.0,,10,,bogus,",
                "`bogus` is not one of complete",
            ),
        ] {
            let text = format!(
                "{}\n{row}\n",
                super::super::sweep_table::LOAD_HEADER_FOR_TESTS
            );
            std::fs::write(b.join("sweep.csv"), text).unwrap();
            let e = run(&[a.clone(), b.clone()], &out, None, None).unwrap_err();
            assert!(e.contains(says), "{row}: {e}");
        }
        std::fs::write(b.join("sweep.csv"), "offered_load,accepted_load,x\n0.5\n").unwrap();
        let e = run(&[a.clone(), b.clone()], &out, None, None).unwrap_err();
        assert!(e.ends_with("sweep.csv:1: expected the header of a sweep.csv (columns `accepted_load`, `mean_latency_ns` and `status`)"), "{e}");
        let text = format!(
            "{}\n0.5\n",
            super::super::sweep_table::LOAD_HEADER_FOR_TESTS
        );
        std::fs::write(b.join("sweep.csv"), text).unwrap();
        let e = run(&[a, b], &out, None, None).unwrap_err();
        assert!(
            e.ends_with("sweep.csv:2: 1 fields where the header has 14"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            svg,
            "a failed plot writes nothing"
        );
    }

    #[test]
    fn plots_runs_and_names_the_broken_file() {
        let (_tmp, dir) = crate::scratch::folder("plot");
        let (a, b) = (dir.join("a"), dir.join("b"));
        for (d, routing) in [(&a, "dmodk"), (&b, "arn_afi")] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(
                d.join("efficiency.csv"),
                "time_us,efficiency\n100,0.9\n200,0.5\n",
            )
            .unwrap();
            let summary = Summary {
                scenario: "s".into(),
                routing: routing.into(),
                queuing: "1q".into(),
                traffic: "h10".into(),
                complete: true,
                ..Summary::default()
            };
            std::fs::write(d.join("summary.json"), summary.to_json()).unwrap();
        }
        let out = dir.join("panel.svg");
        run(&[a.clone(), b.clone()], &out, None, None).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        assert!(svg.contains(">s: h10 traffic</text>"), "{svg}");
        assert!(svg.contains(">dmodk + 1q</text>") && svg.contains(">arn_afi + 1q</text>"));
        // `--to` keeps the bins up to that time: the panel's time axis then ends earlier.
        run(&[a.clone(), b.clone()], &out, None, Some("150us")).unwrap();
        let short = std::fs::read_to_string(&out).unwrap();
        assert_ne!(short, svg, "the 200 us bins are left out");
        run(&[a.clone(), b.clone()], &out, None, Some("1ms")).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), svg);
        let e = run(&[a.clone(), b.clone()], &out, None, Some("20")).unwrap_err();
        assert!(e.starts_with("--to: `20` has no unit"), "{e}");
        std::fs::write(
            b.join("efficiency.csv"),
            "time_us,efficiency\n100,0.9\n200\n",
        )
        .unwrap();
        let e = run(&[a.clone(), b.clone()], &out, None, None).unwrap_err();
        assert!(
            e.ends_with("efficiency.csv:3: field `efficiency` is missing"),
            "{e}"
        );
        std::fs::write(b.join("summary.json"), "{\n  \"scenario\": \"s\"\n}\n").unwrap();
        let e = run(&[a.clone(), b.clone()], &out, None, None).unwrap_err();
        assert!(
            e.contains("summary.json: missing field `file` at line 3"),
            "{e}"
        );
        // A failed plot leaves the panel of the last good one, and no temporary file.
        assert_eq!(std::fs::read_to_string(&out).unwrap(), svg);
        let e = run(std::slice::from_ref(&a), &dir, None, None).unwrap_err();
        assert!(e.ends_with("is a folder"), "{e}");
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 3, "{left:?}");
    }

    #[test]
    fn plots_replays_as_execution_times_with_the_incasts_overhead() {
        use super::super::outputs::ReplaySummary;
        let (_tmp, dir) = crate::scratch::folder("plot-bars");
        let runs = [
            ("dmodk", "trace", Some(200_000.0)),
            ("dmodk", "trace+h10", Some(290_000.0)),
            ("arn_afi", "trace", Some(201_000.0)),
            ("arn_afi", "trace+h10", None),
        ];
        let mut dirs = Vec::new();
        for (k, (routing, traffic, us)) in runs.iter().enumerate() {
            let d = dir.join(format!("r{k}"));
            std::fs::create_dir_all(&d).unwrap();
            let summary = Summary {
                scenario: "config1".into(),
                routing: routing.to_string(),
                queuing: "1q".into(),
                traffic: traffic.to_string(),
                complete: true,
                replay: Some(ReplaySummary {
                    trace: "traces/ptrans.trace".into(),
                    execution_time_us: *us,
                    ..ReplaySummary::default()
                }),
                ..Summary::default()
            };
            std::fs::write(d.join("summary.json"), summary.to_json()).unwrap();
            dirs.push(d);
        }
        let out = dir.join("fig8.svg");
        run(&dirs, &out, None, None).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        assert!(
            svg.contains(">config1: ptrans.trace, execution time</text>"),
            "{svg}"
        );
        assert!(svg.contains(">dmodk + 1q</text>") && svg.contains(">arn_afi + 1q</text>"));
        // D-mod-K's incast costs 0.09 s; ARN+AFI's run beside it did not finish: no error bar.
        assert!(
            svg.contains(">+0.090</text>") && svg.contains(">0.201</text>"),
            "{svg}"
        );
        assert_eq!(svg.matches("<path ").count(), 1);
        let e = run(&dirs, &out, None, Some("1ms")).unwrap_err();
        assert!(e.contains("trace replays"), "{e}");
        // Two runs of one technique and kind: which one is meant is not guessed.
        let copy = dir.join("r0_again");
        std::fs::create_dir_all(&copy).unwrap();
        for f in std::fs::read_dir(&dirs[0]).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, copy.join(f.file_name().unwrap())).unwrap();
        }
        let e = run(&[dirs[0].clone(), copy], &out, None, None).unwrap_err();
        assert!(e.contains("both replay dmodk + 1q (trace traffic)"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            svg,
            "nothing written"
        );
    }
}
