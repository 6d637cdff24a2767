//! `arnsim plot` refuses what it would draw wrong: values a run cannot write, files with no rows,
//! sweeps out of order, a `--to` before every bin, replays without an execution time. Each
//! refusal names the file and line, or the flag, and writes nothing.

use super::outputs::{ReplaySummary, Summary};
use super::plot::run;
use std::path::{Path, PathBuf};

fn write_run(d: &Path, csv: &str) {
    std::fs::create_dir_all(d).unwrap();
    std::fs::write(d.join("efficiency.csv"), csv).unwrap();
    let summary = Summary {
        scenario: "s".into(),
        routing: "dmodk".into(),
        queuing: "1q".into(),
        traffic: "h10".into(),
        complete: true,
        ..Summary::default()
    };
    std::fs::write(d.join("summary.json"), summary.to_json()).unwrap();
}

/// The error of plotting `dirs`, checking that nothing was written to `out`.
fn refused(dirs: &[PathBuf], out: &Path, to: Option<&str>) -> String {
    let e = run(dirs, out, None, to).unwrap_err();
    assert!(!out.exists(), "{e}: a refused plot writes nothing");
    e
}

#[test]
fn efficiency_rows_a_run_cannot_write_are_refused() {
    let (_tmp, dir) = crate::scratch::folder("plot-refuse-eff");
    let (a, out) = (dir.join("a"), dir.join("p.svg"));
    for (csv, says) in [
        (
            "time_us,efficiency\n10,0.5\n20,1.5\n",
            "efficiency.csv:3: field `efficiency`: 1.5 is not a share of the capacity, 0 to 1",
        ),
        (
            "time_us,efficiency\n10,-0.1\n",
            "efficiency.csv:2: field `efficiency`: -0.1 is not a share",
        ),
        (
            "time_us,efficiency\n10,0.5\n1e300,0.5\n",
            "efficiency.csv:3: field `time_us`: 1000000000000000000",
        ),
        (
            "time_us,efficiency\n-5,0.5\n",
            "efficiency.csv:2: field `time_us`: -5 is not a time of a run",
        ),
        (
            "time_us,efficiency\n",
            "efficiency.csv: no rows after the header",
        ),
    ] {
        write_run(&a, csv);
        let e = refused(std::slice::from_ref(&a), &out, None);
        assert!(e.contains(says), "{csv}: {e}");
    }
}

#[test]
fn a_to_before_the_first_bin_is_refused() {
    let (_tmp, dir) = crate::scratch::folder("plot-refuse-to");
    let (a, out) = (dir.join("a"), dir.join("p.svg"));
    write_run(&a, "time_us,efficiency\n100,0.9\n200,0.5\n");
    let e = refused(std::slice::from_ref(&a), &out, Some("50us"));
    assert!(
        e.starts_with("--to 50us: before the end of") && e.contains("first bin (100 us)"),
        "{e}"
    );
    run(std::slice::from_ref(&a), &out, None, Some("100us")).unwrap();
}

#[test]
fn sweeps_out_of_order_or_with_a_broken_field_are_refused() {
    let (_tmp, dir) = crate::scratch::folder("plot-refuse-sweep");
    let (a, out) = (dir.join("a"), dir.join("p.svg"));
    std::fs::create_dir_all(&a).unwrap();
    let row = |load: &str, reason: &str| {
        format!("{load},1,0.4,,1.0,,700.0,,900.0,,10,,complete,{reason}")
    };
    for (rows, says) in [
        (vec![], "sweep.csv: no rows after the header"),
        (
            vec![row("0.50", ""), row("0.50", "")],
            "sweep.csv:3: field `offered_load`: 0.5 repeats the row before's 0.5",
        ),
        (
            vec![row("0.50", ""), row("0.20", "")],
            "sweep.csv:3: field `offered_load`: 0.2 is below the row before's 0.5",
        ),
        (
            vec![row("0.50", "\"deadlock, at cycle 9")],
            "sweep.csv:2: field `reason`: `\"deadlock, at cycle 9`: a quoted field that is not closed",
        ),
        (
            vec![row("0.50", "\"a \"lone\" quote\"")],
            "sweep.csv:2: field `reason`",
        ),
        (
            vec![row("0.50", "two, fields")],
            "sweep.csv:2: 15 fields where the header has 14",
        ),
    ] {
        let mut text = format!("{}\n", super::sweep_table::LOAD_HEADER_FOR_TESTS);
        for r in rows {
            text.push_str(&r);
            text.push('\n');
        }
        std::fs::write(a.join("sweep.csv"), &text).unwrap();
        let e = refused(std::slice::from_ref(&a), &out, None);
        assert!(e.contains(says), "{text}: {e}");
    }
    // A quoted reason with doubled quotes, as the sweep writes one, reads.
    let text = format!(
        "{}\n{}\n{}\n",
        super::sweep_table::LOAD_HEADER_FOR_TESTS,
        row("0.20", ""),
        row("0.50", "\"stopped, \"\"deadlock\"\"\"")
    );
    std::fs::write(a.join("sweep.csv"), text).unwrap();
    run(std::slice::from_ref(&a), &out, None, None).unwrap();
}

/// Writes into `dir/name` the summary of a replay of dmodk + 1q arbitrating by `arbitration`,
/// of `traffic`, whose ranks finished at `us` (`None`: not all did, the run stopped at cycle
/// 5000).
fn write_replay(
    dir: &Path,
    name: &str,
    traffic: &str,
    arbitration: &str,
    us: Option<f64>,
) -> PathBuf {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    let summary = Summary {
        scenario: "s".into(),
        routing: "dmodk".into(),
        queuing: "1q".into(),
        output_arbitration: arbitration.into(),
        traffic: traffic.into(),
        complete: true,
        simulated_cycles: 5000,
        replay: Some(ReplaySummary {
            trace: "t.trace".into(),
            execution_time_us: us,
            ..ReplaySummary::default()
        }),
        ..Summary::default()
    };
    std::fs::write(d.join("summary.json"), summary.to_json()).unwrap();
    d
}

#[test]
fn a_replay_that_never_finished_is_refused_not_drawn_as_no_run() {
    let (_tmp, dir) = crate::scratch::folder("plot-refuse-replay");
    let out = dir.join("p.svg");
    let replay =
        |name: &str, traffic: &str, us| write_replay(&dir, name, traffic, "round_robin", us);
    let unfinished = replay("alone", "trace", None);
    let e = refused(std::slice::from_ref(&unfinished), &out, None);
    assert!(
        e.contains("alone: not every rank finished within the run (stopped at cycle 5000)"),
        "{e}"
    );
    let incast = replay("incast", "trace+h10", Some(10.0));
    let e = refused(std::slice::from_ref(&incast), &out, None);
    assert!(e.contains("dmodk + 1q: only a run beside an incast"), "{e}");
}

/// Two replays of one routing mode and queuing scheme that differ in output arbitration are two
/// bars (named apart), not a refusal; two that do not differ are refused.
#[test]
fn replays_apart_by_arbitration_are_two_bars() {
    let (_tmp, dir) = crate::scratch::folder("plot-arbitration");
    let write =
        |name: &str, arbitration| write_replay(&dir, name, "trace", arbitration, Some(10.0));
    let (rr, fcfs, rr2) = (
        write("rr", "round_robin"),
        write("fcfs", "fcfs"),
        write("rr2", "round_robin"),
    );
    let out = dir.join("bars.svg");
    run(&[rr.clone(), fcfs], &out, None, None).unwrap();
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(
        svg.contains("dmodk + 1q + fcfs") && svg.contains("dmodk + 1q<"),
        "{svg}"
    );
    let out2 = dir.join("refused.svg");
    let e = refused(&[rr, rr2], &out2, None);
    assert!(e.contains("both replay dmodk + 1q"), "{e}");
}
