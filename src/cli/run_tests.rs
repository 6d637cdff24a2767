//! Tests of `arnsim run`: determinism across thread counts, the fabric dump, and the output
//! contract (nothing changed by a failed run, stopped runs marked incomplete).

use super::Failure;
use super::interrupt::{SIGINT, SIGTERM, Stop};
use super::outputs::Summary;
use super::run::*;
use crate::fabric::Fabric;
use crate::trace::fabric_vcd::FabricVcd;
use crate::wire::link::FEW_VCS;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A path `tag` not yet made, inside a scratch folder removed when the guard is dropped.
pub(super) fn base(tag: &str) -> (tempfile::TempDir, PathBuf) {
    let (guard, folder) = crate::scratch::folder(tag);
    (guard, folder.join(tag))
}

pub(super) fn summary(dir: &Path) -> Summary {
    let p = dir.join("summary.json");
    Summary::from_json(
        &p.display().to_string(),
        &std::fs::read_to_string(&p).unwrap(),
    )
    .unwrap()
}

fn go(name: &str, out: &Path, set: &[String], threads: usize) {
    run(
        name,
        Some(out.into()),
        set,
        None,
        None,
        &How::new(threads, &Stop::never()),
    )
    .unwrap();
}

/// Every file under `dir` and its bytes.
pub(super) fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            m.extend(snapshot(&p));
        } else {
            m.insert(p.clone(), std::fs::read(&p).unwrap());
        }
    }
    m
}

/// Every output of two runs, byte for byte, except the summary's wall time and thread count.
fn assert_same_outputs(a: &Path, b: &Path) {
    let strip = |d: &Path| Summary {
        wall_seconds: 0.0,
        threads: 0,
        ..summary(d)
    };
    assert_eq!(strip(a), strip(b), "summary.json of {a:?} and {b:?}");
    for f in ["efficiency.csv", "latency.csv", "efficiency.svg"] {
        assert!(
            std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap(),
            "{f} of {a:?} and {b:?} differ"
        );
    }
}

#[test]
fn outputs_do_not_depend_on_the_thread_count() {
    let (_tmp, base) = base("threads");
    // Incast with ARNs (default), adaptation (figure4), and a paper fabric under uniform load.
    for (name, set) in [
        ("default", vec!["sim_time=60us".to_string()]),
        ("figure4", vec![]),
        ("paper/config1_rnd", vec!["sim_time=6us".to_string()]),
        // FA: adaptive heads leaving for escape queues.
        (
            "irregular16",
            [
                "routing=fa",
                "routing_engine=fa_updn",
                "traffic.load=0.9",
                "sim_time=500us",
            ]
            .map(String::from)
            .to_vec(),
        ),
    ] {
        let dir = |t: usize| base.join(format!("{}-{t}", name.replace('/', "_")));
        for t in [1, 2, 3] {
            go(name, &dir(t), &set, t);
        }
        let s = summary(&dir(1));
        assert!(s.invariants == "ok" && s.complete, "{s:?}");
        assert_eq!(s.threads, 1);
        // Apart from those two fields, the summary's text is the same too.
        let text = |t: usize| -> String {
            std::fs::read_to_string(dir(t).join("summary.json"))
                .unwrap()
                .lines()
                .filter(|l| !l.contains("\"wall_seconds\"") && !l.contains("\"threads\""))
                .collect()
        };
        assert_eq!(text(1), text(3));
        assert_same_outputs(&dir(1), &dir(2));
        assert_same_outputs(&dir(1), &dir(3));
    }
}

#[test]
fn run_writes_every_output_and_is_deterministic() {
    let (_tmp, base) = base("run");
    let set = vec!["sim_time=30us".to_string()];
    go("default", &base.join("a"), &set, 1);
    go("default", &base.join("b"), &set, 1);
    let mut names: Vec<_> = std::fs::read_dir(base.join("a"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "efficiency.csv",
            "efficiency.svg",
            "latency.csv",
            "summary.json"
        ],
        "every output, and no temporary file left"
    );
    let csv = |d: &str| std::fs::read_to_string(base.join(d).join("efficiency.csv")).unwrap();
    assert!(csv("a").starts_with("time_us,efficiency\n"));
    assert_eq!(csv("a"), csv("b"), "same scenario and seed, same CSV");
    let s = summary(&base.join("a"));
    assert_eq!((s.invariants.as_str(), s.complete), ("ok", true));
    assert_eq!((s.stopped_at_cycle, s.stop_reason), (None, None));
    assert_eq!(s.overrides, set);
    let text = std::fs::read_to_string(base.join("a/summary.json")).unwrap();
    assert!(
        text.starts_with("{\n  \"scenario\": \"default\",\n"),
        "{text}"
    );
    assert!(text.contains("\n  \"complete\": true,\n"), "{text}");
}

#[test]
fn windowed_dump_matches_the_cycle_by_cycle_dump() {
    // Configuration 1 has 6-cycle links, so the tapped run steps windows of 6 cycles.
    let s = load("paper/config1_h10", &["sim_time=3us".to_string()]).unwrap();
    let (_tmp, base) = base("tap");
    std::fs::create_dir_all(&base).unwrap();
    // Units of both halves of the fabric, so that two threads hand on samples out of signal
    // order.
    let scopes: Vec<String> = [
        "fabric.s1_0.*",
        "fabric.n3.*",
        "fabric.s3_0.out1.*",
        "fabric.n300.*",
    ]
    .map(String::from)
    .to_vec();
    let (from, to) = (100, 500);
    let dump = |name: &str, windowed: bool, threads: usize, finished: bool| {
        let mut f = Fabric::<FEW_VCS>::build(&s.topology, s.params.clone(), &s.flows).unwrap();
        // The reference reads the cycle engine's switches after every cycle; the windowed dumps
        // are the event engine's, on one and two threads.
        if !windowed {
            f.set_engine(crate::fabric::Engine::Cycle);
            assert!(f.window() > 1);
        }
        f.set_threads(threads);
        let path = base.join(name);
        let (mut v, n) = FabricVcd::create(&path, &f, &scopes, (from, to)).unwrap();
        assert!(n > 20, "{n} signals");
        if windowed {
            let tap = v.tap(&f);
            assert_eq!(crate::fabric::Tap::<FEW_VCS>::signals(&tap), n);
            f.run_tapped(s.sim_cycles, &mut (), &tap, &mut |c, w| {
                v.samples(c, w, from, to).unwrap()
            })
            .unwrap();
        } else {
            for c in 0..s.sim_cycles {
                f.step(&mut ()).unwrap();
                if (from..=to).contains(&c) {
                    v.sample(&f, c).unwrap();
                }
            }
        }
        if finished {
            v.finish().unwrap();
        } else {
            drop(v);
        }
        std::fs::read(&path).unwrap()
    };
    let reference = dump("cycles.vcd", false, 1, true);
    assert!(reference.len() > 10_000);
    assert!(
        dump("windows.vcd", true, 1, true) == reference,
        "one thread"
    );
    assert!(
        dump("windows2.vcd", true, 2, true) == reference,
        "two threads"
    );
    // A dump dropped unfinished (a run cut short) keeps every cycle it was given.
    assert!(dump("dropped.vcd", true, 1, false) == reference, "dropped");
}

fn waves(path: PathBuf, trigger_before: Option<&str>) -> Option<WaveRequest> {
    Some(WaveRequest {
        vcd: Some(path),
        fst: None,
        scopes: vec!["fabric.s2_*.out1.*".into(), "fabric.n5.*".into()],
        from: None,
        to: None,
        trigger_before: trigger_before.map(String::from),
    })
}

#[test]
fn fabric_vcd_is_chosen_by_scope_and_repeatable() {
    let (_tmp, base) = base("vcd");
    let set = vec!["sim_time=80us".to_string()];
    let r = base.join("r");
    let stop = Stop::never();
    let w = |name: &str| waves(base.join(name), Some("2us"));
    let dump = |vcd: &str, threads| {
        run(
            "default",
            Some(r.clone()),
            &set,
            w(vcd),
            None,
            &How::new(threads, &stop),
        )
        .unwrap()
    };
    dump("a.vcd", 1);
    dump("b.vcd", 1);
    dump("c.vcd", 2);
    let a = std::fs::read(base.join("a.vcd")).unwrap();
    assert_eq!(
        a,
        std::fs::read(base.join("b.vcd")).unwrap(),
        "same run, same VCD bytes"
    );
    assert!(
        a == std::fs::read(base.join("c.vcd")).unwrap(),
        "one thread and two threads, same VCD bytes"
    );
    let text = String::from_utf8(a).unwrap();
    assert!(text.contains("$scope module s2_3 $end") && text.contains("$scope module n5 $end"));
    assert!(!text.contains("s1_0"), "only the chosen scopes");
    assert!(!text.contains("$comment"), "a complete dump has no note");
    // The dump parses as VCD and starts at most 2 us before the first root.
    let mut p = vcd::Parser::new(text.as_bytes());
    let header = p.parse_header().unwrap();
    assert!(
        header
            .find_var(&["fabric", "s2_0", "out1", "busy"])
            .is_some()
    );
    let first = p
        .find_map(|c| match c.unwrap() {
            vcd::Command::Timestamp(t) => Some(t),
            _ => None,
        })
        .unwrap();
    assert!(first > 0);
    let gtkw = std::fs::read_to_string(base.join("a.gtkw")).unwrap();
    assert!(
        gtkw.starts_with("[dumpfile] \"a.vcd\"\n[savefile] \"a.gtkw\"\n"),
        "{gtkw}"
    );
    check_save_file(&gtkw, &text);
    // Detector states are shown through the translate filter beside the save file.
    assert!(gtkw.contains(
        "^1 a.states.txt\n@2024\n+{s2_0/out1/detector_state} fabric.s2_0.out1.detector_state[1:0]\n"
    ));
    assert_eq!(crate::trace::gtkw_check::filters(&gtkw), ["a.states.txt"]);
    let states = std::fs::read_to_string(base.join("a.states.txt")).unwrap();
    assert_eq!(states, crate::trace::DETECTOR_STATES);
    assert_eq!(
        std::fs::read_dir(&base).unwrap().count(),
        10,
        "r/, three dumps, their save files and state filters, no temporary file"
    );
}

/// What a fabric save file shows on opening (`gtkw_tests::check_fabric_save_file`), and the
/// rows of the chosen scopes.
fn check_save_file(gtkw: &str, vcd: &str) {
    let rows = super::gtkw_tests::check_fabric_save_file(gtkw, vcd, Some("a.states.txt"));
    let shown: std::collections::BTreeSet<String> = rows
        .iter()
        .map(crate::trace::gtkw_check::shown_name)
        .collect();
    for vc in ["vc0", "vc1"] {
        let credits = format!("s2_0/out1/{vc}/credits");
        assert!(shown.contains(&credits), "{credits}");
    }
    assert!(shown.contains("s2_0/out1/pkt/dlid") && shown.contains("n5/queued"));
    assert!(
        gtkw.contains("@800200\n-fabric.s2_0.out1\n") && gtkw.contains("@800200\n-fabric.n5\n")
    );
}

#[test]
fn figure4_scenario_adapts_the_flow_through_c() {
    let (_tmp, dir) = base("fig4");
    go("figure4", &dir, &[], 2);
    let s = summary(&dir);
    assert!(s.roots_detected >= 1, "{s:?}");
    assert!(s.arns_consumed >= 1, "{s:?}");
    assert!(s.packets_adapted > 0, "{s:?}");
    assert!(s.packets_delivered_adapted > 0, "{s:?}");
    assert_eq!(s.invariants, "ok");
}

/// Runs that fail on their arguments or their output folders change no file that existed before
/// them, and leave no new one.
#[test]
fn a_failed_run_changes_no_file() {
    let (_tmp, base) = base("fail");
    let out = base.join("out");
    let set = vec!["sim_time=20us".to_string()];
    go("default", &out, &set, 1);
    std::fs::write(base.join("precious.txt"), "keep me").unwrap();
    std::fs::write(base.join("precious.gtkw"), "keep me too").unwrap();
    let before = snapshot(&base);
    let fail = |out: &Path, w: Option<WaveRequest>| -> String {
        let e = run(
            "default",
            Some(out.into()),
            &set,
            w,
            None,
            &How::new(1, &Stop::never()),
        )
        .unwrap_err();
        assert_eq!(e.code, 1, "{e:?}");
        assert_eq!(snapshot(&base), before, "after: {}", e.message);
        e.message
    };
    let dump = |scopes: &[&str], from: Option<&str>, to: Option<&str>| {
        Some(WaveRequest {
            vcd: Some(base.join("precious.txt")),
            fst: None,
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            from: from.map(String::from),
            to: to.map(String::from),
            trigger_before: None,
        })
    };
    let e = fail(&out, dump(&["nothing.*"], None, None));
    assert!(e.starts_with("--scope nothing.*: selects no signal"), "{e}");
    let e = fail(&out, dump(&[], Some("garbage"), None));
    assert!(e.starts_with("--from: `garbage`"), "{e}");
    let e = fail(&out, dump(&[], None, Some("1e300s")));
    assert!(e.starts_with("--to: `1e300s` is"), "{e}");
    let e = fail(&out, dump(&[], Some("10us"), Some("5us")));
    assert_eq!(e, "--to is before --from");
    let e = fail(&out, dump(&[], Some("1ms"), None));
    assert!(
        e.starts_with("--from 1ms: cycle 195313 is past the end"),
        "{e}"
    );
    let e = fail(&out, waves(base.clone(), None));
    assert!(e.contains("is a folder"), "{e}");
    let e = fail(&out, waves(out.join("summary.json"), None));
    assert!(
        e.contains("summary.json: the same file as the output of --out"),
        "{e}"
    );
    assert_eq!(
        fail(Path::new(""), None),
        "--out: an empty path (give a folder)"
    );
    // An output folder that cannot be made (a file is in the way) fails before the first cycle.
    let e = fail(&base.join("precious.txt").join("sub"), None);
    assert!(e.contains("precious.txt"), "{e}");
}

#[test]
fn a_scenario_name_is_one_folder_inside_waves() {
    for bad in ["../../x", "/abs", "", "..", "a/b", "tab\there"] {
        let s = load("default", &[format!("name={bad:?}")]).unwrap();
        let e = default_out(&s).unwrap_err();
        assert!(e.starts_with("--set: key `name`: "), "{e}");
        assert!(e.contains(&format!("{bad:?}")), "{e}");
    }
    // In a file, the error gives its line.
    let (_tmp, dir) = base("name");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("x.toml");
    let text = BUNDLED[0]
        .1
        .replace("name = \"default\"", "name = \"../x\"");
    std::fs::write(&file, text).unwrap();
    let e = run(
        file.to_str().unwrap(),
        None,
        &[],
        None,
        None,
        &How::new(1, &Stop::never()),
    )
    .unwrap_err();
    assert_eq!(
        e.message,
        format!(
            "{}:2: key `name`: \"../x\" would write outside waves/ (a name is one path component; or give --out)",
            file.display()
        )
    );
    let s = load("default", &["name=\"mine\"".into()]).unwrap();
    assert_eq!(default_out(&s).unwrap(), Path::new("waves/mine"));
}

/// A stop request ends the run after the chunk it is stepping: its outputs are written, marked
/// incomplete, the VCD ends with the last cycle stepped, and the exit code is the signal's.
#[test]
fn a_stopped_run_writes_what_it_has_marked_incomplete() {
    let (_tmp, base) = base("stop");
    // Bins of 3906 cycles, stepped in chunks of 1024: the run stops inside a bin.
    let set = vec!["sim_time=100us".to_string(), "bin=20us".to_string()];
    let (out, vcd) = (base.join("out"), base.join("f.vcd"));
    let stop = Stop::at_cycle(5000, SIGINT);
    let e = run(
        "default",
        Some(out.clone()),
        &set,
        waves(vcd.clone(), None),
        None,
        &How::new(1, &stop),
    )
    .unwrap_err();
    assert_eq!(e.code, 130, "{e:?}");
    assert!(
        e.message
            .starts_with("stopped by SIGINT at cycle 5954 of 19531"),
        "{e:?}"
    );
    let s = summary(&out);
    assert!(!s.complete);
    assert_eq!(
        s.simulated_cycles, 5954,
        "the end of the chunk that reached 5000"
    );
    assert_eq!(s.stopped_at_cycle, Some(5954));
    assert_eq!(s.stop_reason.as_deref(), Some("SIGINT"));
    assert_eq!(s.invariants, "ok");
    // The bins so far, the last one cut where the run stopped.
    let csv = std::fs::read_to_string(out.join("efficiency.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(rows[2].starts_with("30.484,"), "{csv}");
    // The VCD parses, and its last sample is the one of cycle 5953, then a note.
    let text = std::fs::read_to_string(&vcd).unwrap();
    let mut p = vcd::Parser::new(text.as_bytes());
    p.parse_header().unwrap();
    let mut last = 0;
    let mut note = None;
    for c in p {
        match c.unwrap() {
            vcd::Command::Timestamp(t) => last = t,
            vcd::Command::Comment(c) => note = Some(c),
            _ => {}
        }
    }
    let edge = crate::trace::cycle_time_ps(5954);
    assert_eq!(last, edge + crate::trace::CLOCK_PERIOD_PS / 2);
    let note = note.unwrap();
    assert!(
        note.contains("stopped at cycle 5954 of 19531 (SIGINT)"),
        "{note}"
    );
    assert!(base.join("f.gtkw").is_file());
    // Stopped again, by SIGTERM, before the first cycle (in the trigger's first pass): nothing
    // is written.
    let before = snapshot(&base);
    let e = run(
        "default",
        Some(out.clone()),
        &set,
        waves(vcd.clone(), Some("1us")),
        None,
        &How::new(1, &Stop::at_cycle(0, SIGTERM)),
    )
    .unwrap_err();
    assert_eq!(e.code, 143);
    assert_eq!(
        e.message,
        "stopped by SIGTERM before the first cycle: nothing is written"
    );
    assert_eq!(snapshot(&base), before);
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        4,
        "no temporary file"
    );
}

#[test]
fn dump_flags_without_vcd_are_named() {
    let w = super::dump::ignored_without_vcd(&["x".into()], None, Some("3us"), None).unwrap();
    assert_eq!(
        w.as_deref(),
        Some(
            "--scope, --to given without --vcd or --fst: ignored (nothing is dumped without --vcd FILE or --fst FILE)"
        )
    );
    assert_eq!(
        super::dump::ignored_without_vcd(&[], None, None, None),
        Ok(None)
    );
    let e = super::dump::ignored_without_vcd(&[], None, None, Some("3")).unwrap_err();
    assert!(e.starts_with("--trigger-before: `3` has no unit"), "{e}");
}

#[test]
fn a_dump_to_the_runs_length_is_not_past_its_end() {
    let s = load("default", &["sim_time=20us".to_string()]).unwrap();
    let (_tmp, dir) = base("dump-to");
    let warnings = |to: &str| {
        let w = WaveRequest {
            vcd: Some(dir.join("w.vcd")),
            fst: None,
            scopes: Vec::new(),
            from: None,
            to: Some(to.into()),
            trigger_before: None,
        };
        super::dump::plan(&s, &w).unwrap().1
    };
    assert_eq!(warnings("20us"), Vec::<String>::new());
    assert_eq!(warnings("19us"), Vec::<String>::new());
    let w = warnings("20.01us");
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("--to 20.01us: cycle 3908 is past the end"),
        "{w:?}"
    );
}

#[test]
fn failures_carry_their_exit_code() {
    let f: Failure = "bad".to_string().into();
    assert_eq!((f.code, f.to_string()), (1, "error: bad".to_string()));
}

#[test]
fn a_rank_whose_last_compute_ends_after_the_run_has_not_finished() {
    let (_tmp, dir) = base("late-compute");
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("c.txt");
    std::fs::write(&trace, "ranks 2\n0 compute 300us\n1 compute 1us\n").unwrap();
    let set = |t: &str| {
        vec![
            format!("traffic.trace={}", trace.display()),
            format!("sim_time={t}"),
        ]
    };
    // The compute ends after the run's 200 us: rank 0 has not finished, the run went to its end.
    go("trace_halo", &dir.join("short"), &set("200us"), 1);
    let s = summary(&dir.join("short"));
    let r = s.replay.unwrap();
    assert_eq!((r.ranks_finished, r.execution_time_us), (1, None));
    assert_eq!(r.rank_finish_us[0], None);
    assert!(s.complete && s.simulated_us >= 200.0, "{}", s.simulated_us);
    // With room for it, the run stops once the compute has ended, not before.
    go("trace_halo", &dir.join("long"), &set("1ms"), 1);
    let s = summary(&dir.join("long"));
    let r = s.replay.unwrap();
    assert_eq!(r.ranks_finished, 2);
    let t = r.execution_time_us.unwrap();
    assert!((300.0..300.1).contains(&t), "{t}");
    assert!((t..1000.0).contains(&s.simulated_us), "{}", s.simulated_us);
}

#[test]
fn a_path_that_exists_but_is_no_scenario_file_is_named_so() {
    let (_tmp, dir) = base("not-a-scenario");
    std::fs::create_dir_all(&dir).unwrap();
    for p in [dir.clone(), PathBuf::from("/dev/null")] {
        let e = super::scenarios::load(p.to_str().unwrap(), &[]).unwrap_err();
        assert!(e.contains(": not a scenario file ("), "{e}");
    }
    let e = super::scenarios::load(dir.join("nothing").to_str().unwrap(), &[]).unwrap_err();
    assert!(e.contains(": no such file, and no bundled scenario"), "{e}");
}
