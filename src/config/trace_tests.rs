//! What loading a trace scenario refuses: each error names the scenario's line and key, and a
//! trace's own errors keep their `file:line`.

use super::*;

/// A trace scenario on the 16-node 4-ary 2-tree; the trace path is set by each test.
const BASE: &str = "sim_time = \"100us\"\n[topology]\nkind = \"kary_ntree\"\nk = 4\nstages = 2\n[traffic]\npattern = \"trace\"\n";

fn load_in(dir: &std::path::Path, set: &[&str]) -> Result<Scenario, ScenarioErrors> {
    let path = dir.join("s.toml");
    std::fs::write(&path, BASE).unwrap();
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    Scenario::load(path.to_str().unwrap(), &set)
}

fn error(dir: &std::path::Path, set: &[&str], key: &str) -> ScenarioError {
    let all = load_in(dir, set).expect_err("must be refused").0;
    all.iter()
        .find(|e| e.key.as_deref() == Some(key))
        .unwrap_or_else(|| panic!("no error about `{key}` in {all:#?}"))
        .clone()
}

#[test]
fn a_trace_beside_the_scenario_loads_with_every_mapping() {
    let (_tmp, d) = crate::scratch::folder("trace-ok");
    std::fs::write(d.join("t.txt"), "ranks 20\n").unwrap();
    std::fs::write(
        d.join("map.txt"),
        (0..20)
            .map(|r| format!("{r} {}\n", 15 - r % 16))
            .collect::<String>(),
    )
    .unwrap();
    for mapping in ["linear", "random", "map.txt"] {
        let m = format!("traffic.mapping={mapping:?}");
        let s = load_in(&d, &["traffic.trace=\"t.txt\"", &m]).unwrap_or_else(|e| panic!("{e}"));
        let t = s.replay.expect("a replay");
        assert_eq!(t.program.ranks(), 20);
        assert_eq!(t.mapping.ranks(), 20);
        assert!(s.flows.iter().all(|f| f.is_empty()));
        assert!(!s.params.check_order);
    }
}

#[test]
fn trace_errors_name_the_key_and_the_traces_line() {
    let (_tmp, d) = crate::scratch::folder("trace-bad");
    let e = error(&d, &[], "traffic.trace");
    assert!(e.message.contains("missing"), "{e}");
    let e = error(&d, &["traffic.trace=\"nope.txt\""], "traffic.trace");
    assert!(e.message.contains("nope.txt"), "{e}");
    std::fs::write(
        d.join("t.txt"),
        "ranks 2\n0 send 1 10\n1 recv 0\n1 recv 0\n",
    )
    .unwrap();
    let e = error(&d, &["traffic.trace=\"t.txt\""], "traffic.trace");
    assert!(e.message.contains("t.txt:4"), "{e}");
    std::fs::write(d.join("t.txt"), "ranks 2\n").unwrap();
    let e = error(
        &d,
        &["traffic.trace=\"t.txt\"", "traffic.mapping=\"m.txt\""],
        "traffic.mapping",
    );
    assert!(e.message.contains("m.txt"), "{e}");
    std::fs::write(d.join("m.txt"), "0 0\n1 99\n").unwrap();
    let e = error(
        &d,
        &["traffic.trace=\"t.txt\"", "traffic.mapping=\"m.txt\""],
        "traffic.mapping",
    );
    assert!(e.message.contains("m.txt:2"), "{e}");
    // Keys of the Bernoulli patterns are refused as meaningless here, not silently taken.
    let s = load_in(&d, &["traffic.trace=\"t.txt\"", "traffic.load=0.5"]);
    match s {
        Ok(s) => assert!(
            s.warnings.iter().any(|w| w.contains("traffic.load")),
            "{:?}",
            s.warnings
        ),
        Err(e) => assert!(e.to_string().contains("traffic.load"), "{e}"),
    }
}

#[test]
fn an_incast_can_run_beside_the_trace() {
    let (_tmp, d) = crate::scratch::folder("trace-incast");
    std::fs::write(d.join("t.txt"), "ranks 16\n").unwrap();
    let s = load_in(
        &d,
        &[
            "traffic.trace=\"t.txt\"",
            "traffic.incast=\"h25\"",
            "traffic.hot_spots=[5]",
            "traffic.hot_start=\"10us\"",
            "traffic.hot_duration=\"20us\"",
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(s.replay.is_some());
    assert_eq!(s.pattern, "trace+h25");
    let hot: Vec<_> = s.flows.iter().flatten().filter(|f| f.hot).collect();
    assert_eq!(hot.len(), 4, "25 % of 16 nodes send to node 5");
    let window = s.time_base.cycles("20us").unwrap();
    assert!(
        hot.iter()
            .all(|f| f.rate == 1.0 && f.stop - f.start == window)
    );
    // The uniform part of the pattern offers nothing: the ranks are the rest of the traffic.
    assert!(
        s.flows
            .iter()
            .flatten()
            .filter(|f| !f.hot)
            .all(|f| f.rate == 0.0)
    );
    let e = error(
        &d,
        &["traffic.trace=\"t.txt\"", "traffic.incast=\"h99\""],
        "traffic.incast",
    );
    assert!(e.message.contains("h10"), "{e}");
    // The trace's keys are still read: nothing else is reported.
    let all = load_in(&d, &["traffic.trace=\"t.txt\"", "traffic.incast=\"h99\""])
        .expect_err("refused")
        .0;
    assert_eq!(all.len(), 1, "{all:#?}");
}

#[test]
fn a_trace_or_map_that_is_not_text_is_refused_with_its_line() {
    let (_tmp, d) = crate::scratch::folder("trace-not-text");
    std::fs::write(
        d.join("t.txt"),
        b"ranks 2\n0 compute 1us\n1 comp\xffute 1us\n",
    )
    .unwrap();
    let e = error(&d, &["traffic.trace=t.txt"], "traffic.trace");
    assert!(
        e.message
            .ends_with("line 3: stream did not contain valid UTF-8"),
        "{e}"
    );
    // A file with no line end is refused after its first megabyte, not read whole.
    std::fs::write(d.join("z.txt"), vec![b'0'; (1 << 20) + 10]).unwrap();
    let e = error(&d, &["traffic.trace=z.txt"], "traffic.trace");
    assert!(
        e.message
            .ends_with("line 1 is longer than 1048576 bytes (not a text file)"),
        "{e}"
    );
    std::fs::write(d.join("t.txt"), "ranks 2\n").unwrap();
    let e = error(
        &d,
        &["traffic.trace=t.txt", "traffic.mapping=z.txt"],
        "traffic.mapping",
    );
    assert!(e.message.contains("line 1 is longer than"), "{e}");
}

#[test]
fn a_trace_missing_beside_a_bundled_scenario_says_where_it_was_looked_for() {
    let set = [
        "traffic.pattern=trace".to_string(),
        "traffic.trace=nosuch.txt".to_string(),
    ];
    let text = include_str!("../../scenarios/default.toml");
    let e = Scenario::from_text("scenarios/default.toml", text, &set).unwrap_err();
    let e =
        e.0.iter()
            .find(|e| e.key.as_deref() == Some("traffic.trace"))
            .unwrap();
    assert!(
        e.message.starts_with("cannot read `scenarios/nosuch.txt`"),
        "{e}"
    );
    assert!(
        e.message
            .ends_with("give an absolute one for a file elsewhere)"),
        "{e}"
    );
}

#[test]
fn a_trace_key_under_another_pattern_is_ignored_with_a_warning() {
    let (_tmp, d) = crate::scratch::folder("trace-other");
    let set = [
        "traffic.pattern=uniform",
        "traffic.trace=t.txt",
        "traffic.mapping=random",
        "traffic.incast=h10",
    ];
    let s = load_in(&d, &set).unwrap();
    for k in ["traffic.trace", "traffic.mapping", "traffic.incast"] {
        assert!(
            s.warnings
                .iter()
                .any(|w| w.to_string().contains(k) && w.to_string().contains("`uniform`")),
            "{k}: {:?}",
            s.warnings
        );
    }
}

/// A replay's switches hold descriptor slots for the shortest packet its messages make, not for
/// one-flit packets whatever the trace (the cycle engine allocates every slot: a one-flit
/// bound cost 16 GB on `rlft40_uniform`).
#[test]
fn a_replays_packet_slots_follow_its_shortest_message() {
    let (_tmp, d) = crate::scratch::folder("trace-slots");
    let slots = |trace: &str| {
        std::fs::write(d.join("t.txt"), trace).unwrap();
        let s = load_in(&d, &["traffic.trace=\"t.txt\""]).unwrap_or_else(|e| panic!("{e}"));
        let sw = &s.params.switch;
        (s.params.mtu_flits, sw.max_packets, sw.vcs(), sw.vc_capacity)
    };
    // 64 KB in 2 KB packets (the default MTU, 32 flits): every packet is whole.
    let (mtu, whole, vcs, cap) = slots("ranks 2\n0 send 1 64KB\n1 recv 0\n");
    assert_eq!(whole, crate::switch::packet_slots(vcs, cap, mtu));
    // 65 bytes: a 2-flit packet; 1 byte: a 1-flit one.
    let (_, two, ..) = slots("ranks 2\n0 send 1 64KB\n1 recv 0\n0 send 1 65\n1 recv 0\n");
    assert_eq!(two, crate::switch::packet_slots(vcs, cap, 2));
    let (_, one, ..) = slots("ranks 2\n0 send 1 1\n1 recv 0\n");
    assert_eq!(one, crate::switch::packet_slots(vcs, cap, 1));
    assert!(whole < two && two < one);
}
