//! Tests of `arnsim sweep`: the loads it takes, one row per load, outputs that do not depend on
//! `--jobs`, refusals that change no file, and runs that stop on a broken invariant.

use super::interrupt::Stop;
use super::outputs::Summary;
use super::run_tests::base;
use super::sweep::*;
use super::sweep_grid::{Grid, Vary};
use super::sweep_table::{Scale, csv, svg};

use super::sweep_table::LOAD_HEADER_FOR_TESTS as LOAD_HEADER;
use std::path::Path;

/// A few microseconds of `default` under uniform traffic.
fn request(out: &Path, loads: &str, jobs: usize, extra: &[&str]) -> Request {
    let mut set: Vec<String> = ["sim_time=10us", "traffic.pattern=uniform"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    set.extend(extra.iter().map(|s| s.to_string()));
    Request {
        scenario: "default".into(),
        loads: Some(loads.into()),
        out: Some(out.to_path_buf()),
        set,
        jobs,
        ..Request::default()
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn loads_are_numbers_in_the_unit_interval_each_once() {
    let l = parse_loads(" 0.3,0.1 ,1,0.305").unwrap();
    let labels: Vec<&str> = l.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        ["0.10", "0.30", "0.305", "1.00"],
        "in increasing order"
    );
    assert_eq!(l[2].value, 0.305);
    // A load of many digits names its folder in scientific notation, which reads back exactly.
    let tiny = parse_loads("1e-300,0.123456789123").unwrap();
    let labels: Vec<&str> = tiny.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["1e-300", "1.23456789123e-1"]);
    for l in &tiny {
        assert_eq!(l.label.parse::<f64>(), Ok(l.value));
    }
    for (bad, says) in [
        ("", "--loads: empty"),
        ("  ", "--loads: empty"),
        ("0.1,,0.2", "an empty entry"),
        ("0.1,x", "`x` is not a number"),
        ("0", "`0` is outside (0, 1]"),
        ("1.5", "`1.5` is outside (0, 1]"),
        ("-0.2", "`-0.2` is outside (0, 1]"),
        ("NaN", "`NaN` is outside (0, 1]"),
        ("inf", "`inf` is outside (0, 1]"),
        ("0.2,0.20", "0.2 is given twice"),
        ("1e-300,1.0000000000000001e-300", ": 1e-300 is given twice"),
    ] {
        let e = parse_loads(bad).unwrap_err();
        assert!(e.starts_with("--loads") && e.contains(says), "{bad:?}: {e}");
    }
}

#[test]
fn a_sweep_has_a_row_per_load_and_does_not_depend_on_jobs() {
    let (_tmp, dir) = base("sweep-jobs");
    let loads = "0.5,0.1,0.3";
    let one = dir.join("one");
    let two = dir.join("two");
    sweep(&request(&one, loads, 1, &[]), &Stop::never()).unwrap();
    sweep(&request(&two, loads, 2, &[]), &Stop::never()).unwrap();
    let csv = read(&one.join("sweep.csv"));
    assert_eq!(csv, read(&two.join("sweep.csv")), "--jobs 1 and --jobs 2");
    assert_eq!(
        read(&one.join("sweep.svg")),
        read(&two.join("sweep.svg")),
        "--jobs 1 and --jobs 2"
    );
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], LOAD_HEADER);
    assert_eq!(lines.len(), 4, "one row per load: {csv}");
    let mut last = 0.0;
    for (row, load) in lines[1..].iter().zip(["0.10", "0.30", "0.50"]) {
        let f: Vec<&str> = row.split(',').collect();
        assert_eq!(f.len(), 14, "{row}");
        assert_eq!((f[0], f[1]), (load, "1"));
        assert!(
            f[3].is_empty() && f[7].is_empty(),
            "no interval for one run: {row}"
        );
        let accepted: f64 = f[2].parse().unwrap();
        // Below saturation the fabric delivers about what is offered, a little less in the
        // first microseconds while the first packets cross it.
        let offered: f64 = load.parse().unwrap();
        assert!(
            accepted > last,
            "accepted load grows with offered load: {csv}"
        );
        assert!(
            accepted > 0.5 * offered && accepted < 1.1 * offered,
            "{row}"
        );
        assert!(f[4].parse::<f64>().unwrap() > 0.0, "{row}");
        let (mean, max): (f64, f64) = (f[6].parse().unwrap(), f[8].parse().unwrap());
        assert!(mean > 0.0 && max >= mean, "{row}");
        assert!(f[10].parse::<u64>().unwrap() > 0, "{row}");
        assert_eq!((f[12], f[13]), ("complete", ""), "{row}");
        last = accepted;
        // Each load is an ordinary run in its own folder, its overrides in its summary.
        let run = one.join(format!("load-{load}"));
        let s = Summary::from_json("summary.json", &read(&run.join("summary.json"))).unwrap();
        assert!(s.complete);
        assert_eq!(
            s.overrides.last().unwrap(),
            &format!("traffic.load={offered}")
        );
        for f in super::run::OUTPUTS {
            assert!(run.join(f).is_file(), "{f}");
        }
    }
    // Bit reversal on the 16 nodes, as a sweep.
    let rev = dir.join("bitrev");
    sweep(
        &request(&rev, "0.2,0.4", 2, &["traffic.pattern=bitrev"]),
        &Stop::never(),
    )
    .unwrap();
    let s = Summary::from_json(
        "summary.json",
        &read(&rev.join("load-0.40").join("summary.json")),
    )
    .unwrap();
    assert_eq!(s.traffic, "bitrev");
    assert!(s.packets_delivered > 0 && s.invariants == "ok");
    // 12 of the 16 nodes send (0, 6, 9 and 15 map to themselves).
    let csv = read(&rev.join("sweep.csv"));
    let accepted: f64 = csv
        .lines()
        .nth(2)
        .unwrap()
        .split(',')
        .nth(2)
        .unwrap()
        .parse()
        .unwrap();
    assert!(accepted < 0.4 * 12.0 / 16.0 * 1.05, "{csv}");
}

#[test]
fn refusals_name_the_flag_and_change_no_file() {
    let (_tmp, dir) = base("sweep-refused");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("sweep.csv"), "kept").unwrap();
    let refused = |req: &Request| {
        let e = sweep(req, &Stop::never()).unwrap_err();
        assert_eq!(e.code, 1);
        e.message
    };
    let e = refused(&request(&dir, "0.1,2", 1, &[]));
    assert!(e.starts_with("--loads 0.1,2: `2` is outside (0, 1]"), "{e}");
    let e = refused(&request(&dir, "", 1, &[]));
    assert!(e.starts_with("--loads: empty"), "{e}");
    let e = refused(&request(&dir, "0.1", 1, &["traffic.load=0.3"]));
    assert!(e.starts_with("--set traffic.load=0.3:"), "{e}");
    let e = refused(&request(&dir, "0.1", 1, &["traffic.pattern=flows"]));
    assert!(e.contains("traffic.flow") || e.contains("`flows`"), "{e}");
    let e = refused(&request(&dir, "0.1", 1, &["routing=fast"]));
    assert!(e.contains("routing"), "{e}");
    // 9 nodes: bit reversal is refused at its key.
    let e = refused(&request(
        &dir,
        "0.1",
        1,
        &["traffic.pattern=bitrev", "topology.k=3"],
    ));
    assert!(
        e.contains("traffic.pattern") && e.contains("power-of-two"),
        "{e}"
    );
    // An output folder that is a file.
    let file = dir.join("sweep.csv");
    let e = refused(&request(&file, "0.1", 1, &[]));
    assert!(e.starts_with("--out"), "{e}");
    // A load folder that is a file: found before any run.
    std::fs::write(dir.join("load-0.20"), "kept").unwrap();
    let e = refused(&request(&dir, "0.1,0.2", 1, &[]));
    assert!(e.starts_with("--out") && e.contains("load-0.20"), "{e}");
    assert!(
        !dir.join("load-0.10").join("summary.json").exists(),
        "no run"
    );
    assert_eq!(read(&dir.join("sweep.csv")), "kept");
    assert_eq!(read(&dir.join("load-0.20")), "kept");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_run_stopped_by_the_watchdog_is_a_marked_point() {
    let ok = Summary {
        scenario: "s".into(),
        nodes: 16,
        switches: 8,
        simulated_cycles: 1000,
        complete: true,
        packets_delivered: 10,
        flits_delivered: 8000,
        mean_latency_us: 1.5,
        max_latency_us: 2.25,
        invariants: "ok".into(),
        ..Summary::default()
    };
    let deadlock = Summary {
        complete: false,
        stopped_at_cycle: Some(600),
        simulated_cycles: 600,
        stop_reason: Some("invariant violated".into()),
        invariants: "cycle 600: invariant progress broken at fabric: no packet started or finished a hop for 500 cycles (deadlock); blocked: s0, s1".into(),
        ..ok.clone()
    };
    let broken = Summary {
        invariants: "cycle 7: invariant credits broken at s1_0: \"x\"".into(),
        ..deadlock.clone()
    };
    let idle = Summary {
        packets_delivered: 0,
        flits_delivered: 0,
        ..ok.clone()
    };
    let grid = Grid::new(
        vec![Vary::loads(&parse_loads("0.2,0.5,0.8,0.9").unwrap())],
        1,
        1,
    )
    .unwrap();
    let runs: Vec<Option<Vec<Summary>>> = [ok, deadlock, broken, idle]
        .into_iter()
        .map(|s| Some(vec![s]))
        .collect();
    let scale = Scale {
        flit_bytes: 64,
        cycle_ns: 5.12,
    };
    let csv = csv(&grid, &runs, scale, "");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], LOAD_HEADER);
    // 8000 flits over 16 nodes x 1000 cycles; 8000 x 64 B over 5120 ns and 8 switches.
    assert_eq!(
        lines[1],
        "0.20,1,0.500000,,12.500000,,1500.000,,2250.000,,10,,complete,"
    );
    assert!(
        lines[2].starts_with("0.50,1,0.833333,")
            && lines[2].ends_with(",deadlock,\"cycle 600: invariant progress broken at fabric: no packet started or finished a hop for 500 cycles (deadlock); blocked: s0, s1\""),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].ends_with(",invariant,\"cycle 7: invariant credits broken at s1_0: \"\"x\"\"\""),
        "{}",
        lines[3]
    );
    assert_eq!(
        lines[4], "0.90,1,0.000000,,0.000000,,,,,,0,,complete,",
        "no packet: no latency"
    );
    let svg = svg(&grid, &csv, runs[0].as_ref().map(|v| &v[0])).unwrap();
    assert!(svg.contains("stopped early"), "the stopped runs are marked");
}

/// Eight switches in a ring, one node each, routed minimally with one VC: the channel
/// dependencies form a cycle, and at a high enough load the watchdog stops the run.
fn ring() -> String {
    let mut s = String::from(
        "name = \"ring\"\nsim_time = \"50us\"\nrouting = \"dmodk\"\nwatchdog = \"20us\"\n\
         [topology]\nkind = \"custom\"\nnodes = 8\n",
    );
    for _ in 0..8 {
        s.push_str("[[topology.switch]]\nports = 3\n");
    }
    for i in 0..8 {
        s.push_str(&format!(
            "[[topology.link]]\na = \"n{i}\"\nb = \"s{i}:0\"\n[[topology.link]]\na = \"s{i}:1\"\nb = \"s{}:2\"\n",
            (i + 1) % 8
        ));
    }
    s.push_str("[switch]\nbuffer = \"2KB\"\nmtu = \"1KB\"\n[traffic]\npattern = \"uniform\"\nmessage = \"1KB\"\n");
    s
}

#[test]
fn a_deadlocked_load_is_a_row_of_the_sweep() {
    let (_tmp, dir) = base("sweep-ring");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ring.toml");
    std::fs::write(&file, ring()).unwrap();
    let req = Request {
        scenario: file.display().to_string(),
        loads: Some("0.05,0.5".into()),
        out: Some(dir.join("sweep")),
        jobs: 2,
        ..Request::default()
    };
    sweep(&req, &Stop::never()).expect("a deadlock does not fail the sweep");
    let csv = read(&dir.join("sweep").join("sweep.csv"));
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert_eq!((rows[0][0], rows[0][12]), ("0.05", "complete"), "{csv}");
    assert_eq!((rows[1][0], rows[1][12]), ("0.50", "deadlock"), "{csv}");
    assert!(rows[1][13].contains("invariant progress broken"), "{csv}");
    let s = Summary::from_json(
        "summary.json",
        &read(&dir.join("sweep").join("load-0.50").join("summary.json")),
    )
    .unwrap();
    assert!(!s.complete && s.stop_reason.as_deref() == Some("invariant violated"));
    assert!(read(&dir.join("sweep").join("sweep.svg")).contains("stopped early"));
}

#[test]
fn a_grid_runs_the_first_key_fastest_with_a_folder_per_run() {
    let load = Vary::loads(&parse_loads("0.5,0.2").unwrap());
    let buffers = super::sweep_grid::parse_vary("switch.buffer=64KB,32KB").unwrap();
    let texts: Vec<&str> = buffers.values.iter().map(|v| v.text.as_str()).collect();
    assert_eq!(texts, ["64KB", "32KB"], "names keep the order given");
    let hcdth = super::sweep_grid::parse_vary("arn.hcdth=16, 8,12").unwrap();
    let texts: Vec<&str> = hcdth.values.iter().map(|v| v.text.as_str()).collect();
    assert_eq!(texts, ["8", "12", "16"], "numbers run in increasing order");
    let g = Grid::new(vec![load, buffers], 2, 7).unwrap();
    assert_eq!(g.points, [[0, 0], [1, 0], [0, 1], [1, 1]]);
    assert_eq!(g.seeds.as_deref(), Some(&[7u64, 8][..]));
    assert_eq!(
        g.overrides(&["sim_time=5us".into()], 2, 1),
        [
            "sim_time=5us",
            "traffic.load=0.2",
            "switch.buffer=32KB",
            "seed=8"
        ]
    );
    let out = Path::new("o");
    assert_eq!(g.dir(out, 1, 0), out.join("load-0.50,buffer-64KB,seed-7"));
    assert_eq!(g.name(3), "traffic.load=0.50, switch.buffer=32KB");
    // Two keys that end alike are named in full.
    let a = super::sweep_grid::parse_vary("arn.ttl=1us").unwrap();
    let b = super::sweep_grid::parse_vary("afi.ttl=2us").unwrap();
    let g = Grid::new(vec![a, b], 1, 0).unwrap();
    assert_eq!(g.dir(out, 0, 0), out.join("arn.ttl-1us,afi.ttl-2us"));
    for (bad, says) in [
        ("switch.buffer", "expected KEY=V1,V2,..."),
        ("=1,2", "the key is empty"),
        ("switch.buffer=1,,2", "an empty value"),
        ("arn.hcdth=8,8.0", "`8` and `8.0` are the same number"),
        ("arn.hcdth=1,inf", "`inf` is not a finite number"),
        ("traffic.pattern=a/b,a_b", "name the same folder (`a_b`)"),
        (
            "traffic.load=0.5,2",
            "--vary traffic.load=0.5,2: `2` is outside (0, 1]",
        ),
        ("seed=1,2", "give --seeds N"),
    ] {
        let e = super::sweep_grid::parse_vary(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
    let twice = vec![Vary::loads(&parse_loads("0.5").unwrap()); 2];
    assert!(Grid::new(twice, 1, 0).unwrap_err().contains("varied twice"));
    // A value the scenario refuses is named as --vary's, with its point.
    let (_tmp, dir) = base("sweep-vary-refused");
    let req = Request {
        scenario: "default".into(),
        vary: vec!["sim_time=2us,abc".into()],
        out: Some(dir.clone()),
        ..Request::default()
    };
    let e = sweep(&req, &Stop::never()).unwrap_err().message;
    assert!(
        e.starts_with("at sim_time=abc: --vary: key `sim_time`"),
        "{e}"
    );
    assert!(!dir.exists(), "nothing written");
    let many = super::sweep_grid::parse_vary("arn.hcdth=1,2,3,4,5,6,7,8,9,10").unwrap();
    let e = Grid::new(vec![many], 1001, 0).unwrap_err();
    assert!(e.contains("more than 10000 runs"), "{e}");
}

/// Reads a sweep's table as rows of fields (no field of these tables is quoted).
fn rows_of(csv: &str) -> Vec<Vec<String>> {
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn a_two_key_sweep_with_seeds_gives_means_and_intervals() {
    let (_tmp, dir) = base("sweep-grid");
    let req = |out: &Path, jobs: usize| Request {
        scenario: "default".into(),
        loads: Some("0.6,0.3".into()),
        vary: vec!["routing=dmodk,arn".into()],
        seeds: 3,
        out: Some(out.to_path_buf()),
        set: vec!["sim_time=5us".into(), "traffic.pattern=uniform".into()],
        jobs,
    };
    let (one, two) = (dir.join("one"), dir.join("two"));
    sweep(&req(&one, 1), &Stop::never()).unwrap();
    sweep(&req(&two, 2), &Stop::never()).unwrap();
    let csv = read(&one.join("sweep.csv"));
    assert_eq!(csv, read(&two.join("sweep.csv")), "--jobs 1 and --jobs 2");
    assert_eq!(read(&one.join("sweep.svg")), read(&two.join("sweep.svg")));
    assert!(csv.starts_with("offered_load,routing,runs,accepted_load,accepted_load_ci95,"));
    let rows = rows_of(&csv);
    let points: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    assert_eq!(
        points,
        [
            ("0.30", "dmodk"),
            ("0.60", "dmodk"),
            ("0.30", "arn"),
            ("0.60", "arn")
        ]
    );
    let seed = super::run::load("default", &[]).unwrap().seed;
    for r in &rows {
        assert_eq!(r[2], "3", "{r:?}");
        // The mean and interval are those of the three runs' summaries.
        let accepted: Vec<f64> = (0..3)
            .map(|k| {
                let d = one.join(format!("load-{},routing-{},seed-{}", r[0], r[1], seed + k));
                let s = Summary::from_json("s", &read(&d.join("summary.json"))).unwrap();
                assert_eq!(s.seed, seed + k);
                super::sweep_table::accepted(&s)
            })
            .collect();
        let e = crate::metrics::estimate(&accepted).unwrap();
        assert_eq!(r[3], format!("{:.6}", e.mean), "{r:?}");
        assert_eq!(r[4], format!("{:.6}", e.ci95.unwrap()), "{r:?}");
        assert!(e.ci95.unwrap() > 0.0, "seeds differ: {accepted:?}");
        assert!(
            !r[7].is_empty() && !r[11].is_empty(),
            "latency and packets: {r:?}"
        );
        assert_eq!(r[r.len() - 2], "complete");
    }
    let svg = read(&one.join("sweep.svg"));
    assert!(svg.contains(">routing=dmodk</text>") && svg.contains(">routing=arn</text>"));
    assert!(svg.contains("class=\"ci\"") && svg.contains("3 seeds per point"));
}

#[test]
fn a_stopped_sweep_writes_the_points_it_finished() {
    let (_tmp, dir) = base("sweep-stopped");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("sweep.csv"), "an earlier sweep").unwrap();
    let req = Request {
        scenario: "default".into(),
        vary: vec!["sim_time=2us,40us".into()],
        out: Some(dir.clone()),
        jobs: 1,
        ..Request::default()
    };
    // Every run is asked to stop at its cycle 1000: the first point ends at cycle 390.
    let stop = Stop::at_cycle(1000, super::interrupt::SIGTERM);
    let e = sweep(&req, &stop).unwrap_err();
    assert_eq!(e.code, 143, "{}", e.message);
    assert!(
        e.message.contains("holds the 1 of 2 points finished"),
        "{}",
        e.message
    );
    let csv = read(&dir.join("sweep.csv"));
    let rows = rows_of(&csv);
    assert_eq!(rows.len(), 2, "{csv}");
    assert_eq!(
        (rows[0][0].as_str(), rows[0][12].as_str()),
        ("2us", "complete")
    );
    assert_eq!(
        (
            rows[1][0].as_str(),
            rows[1][1].as_str(),
            rows[1][2].as_str(),
            rows[1][12].as_str()
        ),
        ("40us", "0", "", "stopped")
    );
    assert_eq!(
        rows[1][13],
        "not finished: the sweep was stopped by SIGTERM"
    );
    // The stopped run wrote its outputs, marked incomplete.
    let s =
        Summary::from_json("s", &read(&dir.join("sim_time-40us").join("summary.json"))).unwrap();
    assert!(!s.complete);
    assert!(read(&dir.join("sweep.svg")).contains("<svg"));
}

#[test]
fn a_new_sweep_removes_the_runs_of_an_earlier_one_it_does_not_redo() {
    let (_tmp, dir) = base("sweep-again");
    sweep(&request(&dir, "0.1,0.2,0.3", 2, &[]), &Stop::never()).unwrap();
    std::fs::write(dir.join("load-0.30").join("notes.txt"), "mine").unwrap();
    std::fs::create_dir_all(dir.join("other")).unwrap();
    std::fs::write(dir.join("other").join("summary.json"), "{}").unwrap();
    std::fs::write(dir.join("other").join("data.bin"), "mine").unwrap();
    sweep(&request(&dir, "0.1", 2, &[]), &Stop::never()).unwrap();
    assert!(dir.join("load-0.10").join("summary.json").is_file());
    assert!(
        !dir.join("load-0.20").exists(),
        "a run the new sweep does not redo"
    );
    // Folders holding files no run writes stay.
    assert_eq!(read(&dir.join("load-0.30").join("notes.txt")), "mine");
    assert_eq!(read(&dir.join("other").join("data.bin")), "mine");
    assert_eq!(rows_of(&read(&dir.join("sweep.csv"))).len(), 1);
}
