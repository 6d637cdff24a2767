//! Tests of `arnsim run --record-switch` and `arnsim replay`.

use super::interrupt::Stop;
use super::record::{RecordRequest, ReplayDump, replay_cycle};
use super::run::{How, run};
use std::path::Path;

/// `arnsim replay` without signals, its failure's message.
fn replay(path: &Path, dump: Option<&ReplayDump>) -> Result<(), String> {
    super::record::replay(path, dump, &Stop::never()).map_err(|f| f.message)
}

#[test]
fn a_recorded_switch_replays_on_the_cycle_engine_and_a_corrupted_recording_is_refused() {
    let (_tmp, base) = crate::scratch::folder("record");
    let out = base.join("out");
    let rec = |switch: &str| {
        Some(RecordRequest {
            switch: switch.into(),
            from: Some("10us".into()),
            to: Some("60us".into()),
        })
    };
    let set = vec!["sim_time=80us".to_string()];
    let e = run(
        "default",
        Some(out.clone()),
        &set,
        None,
        rec("s9_9"),
        &How::new(1, &Stop::never()),
    )
    .unwrap_err();
    assert!(
        e.message.contains("--record-switch s9_9: no such switch"),
        "{e:?}"
    );
    assert!(
        !out.join("summary.json").exists(),
        "a refused run writes nothing"
    );
    run(
        "default",
        Some(out.clone()),
        &set,
        None,
        rec("s2_1"),
        &How::new(2, &Stop::never()),
    )
    .unwrap();
    let file = out.join("s2_1.rec");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("\nfrom 1953 to 11719\n"),
        "--from and --to in cycles"
    );
    assert!(text.ends_with("end 11720\n"));
    assert!(
        text.lines()
            .filter(|l| l.contains(" O ") && l.contains(" F "))
            .count()
            > 1000
    );
    replay(&file, None).unwrap();
    // A signal stops a replay with its exit code, and its dump under way is removed, not left
    // under its temporary name.
    let before: Vec<_> = std::fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let stopped = ReplayDump {
        vcd: Some(base.join("stopped.vcd")),
        fst: Some(base.join("stopped.fst")),
        from: None,
        to: None,
    };
    let f = super::record::replay(&file, Some(&stopped), &Stop::at_cycle(5000, libc::SIGTERM))
        .unwrap_err();
    assert_eq!(f.code, 143, "{}", f.message);
    assert!(
        f.message.starts_with("stopped by SIGTERM at cycle 5"),
        "{}",
        f.message
    );
    let after: Vec<_> = std::fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(after, before, "nothing written");
    // Cut short on a line boundary: refused as such before it is replayed, not reported as the
    // mismatches of the cycles it lacks.
    let cut = base.join("cut.rec");
    let half: Vec<&str> = text.lines().take(text.lines().count() / 2).collect();
    std::fs::write(&cut, half.join("\n") + "\n").unwrap();
    let e = replay(&cut, None).unwrap_err();
    assert!(
        e.contains("cut.rec: the recording does not end with its `end` line (cut short?)"),
        "{e}"
    );
    // Comments and blank lines after the `end` line are not a cut; a file that is no recording
    // is named as such, not as a cut one.
    let commented = base.join("commented.rec");
    std::fs::write(&commented, format!("{text}# replayed\n\n")).unwrap();
    replay(&commented, None).unwrap();
    let not_one = base.join("not_a_recording.rec");
    std::fs::write(&not_one, "hello\nworld\n").unwrap();
    let e = replay(&not_one, None).unwrap_err();
    assert!(e.contains("not a switch recording"), "{e}");
    // A cycle number beyond 64 bits is said to be one, not taken for a time without a unit.
    let e = replay_cycle("to", "99999999999999999999").unwrap_err();
    assert!(
        e.contains("--to: cycle `99999999999999999999` is beyond"),
        "{e}"
    );
    assert_eq!(replay_cycle("to", " 1953 "), Ok(1953));
    assert_eq!(replay_cycle("from", "+2000"), Ok(2000));
    // A dump named like the recording (another spelling of it) is refused before it is read.
    let onto = ReplayDump {
        vcd: None,
        fst: Some(out.join("../out/s2_1.rec")),
        from: None,
        to: None,
    };
    let e = replay(&file, Some(&onto)).unwrap_err();
    assert!(e.contains("would replace the input"), "{e}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    // One output flit's VC changed: the replay names the cycle, port and signal.
    let line = text
        .lines()
        .position(|l| l.split(' ').nth(1) == Some("O") && l.split(' ').nth(3) == Some("F"))
        .unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut w: Vec<String> = lines[line].split(' ').map(String::from).collect();
    w[4] = "1".into();
    let (cycle, port) = (w[0].clone(), w[2].clone());
    lines[line] = w.join(" ");
    let bad = base.join("bad.rec");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let e = replay(&bad, None).unwrap_err();
    assert!(
        e.contains(&format!("cycle {cycle}, port {port}, out_flit[{port}]")),
        "{e}"
    );
    // The message names a line of that cycle giving that port's outputs.
    let at_line = |e: &str, side: &str, cycle: &str, port: &str| {
        let rest = e.strip_prefix(&format!("{}:", bad.display())).unwrap_or("");
        let n: usize = rest.split(':').next().unwrap_or("").parse().unwrap_or(0);
        assert!(
            n >= 1 && lines[n - 1].starts_with(&format!("{cycle} {side} {port} ")),
            "{e}"
        );
    };
    at_line(&e, "O", &cycle, &port);
    // An input credit line returning more credits than were taken: a protocol fault of the
    // replaying switch, named with the recording's line of that port's inputs.
    let credit = text
        .lines()
        .position(|l| l.split(' ').nth(1) == Some("I") && l.split(' ').nth(3) == Some("C"))
        .unwrap();
    let mut faulty = text.lines().map(String::from).collect::<Vec<_>>();
    let mut w: Vec<String> = faulty[credit].split(' ').map(String::from).collect();
    w[5] = "255".into();
    let (ccycle, cport) = (w[0].clone(), w[2].clone());
    faulty[credit] = w.join(" ");
    std::fs::write(&bad, faulty.join("\n") + "\n").unwrap();
    let e = replay(&bad, None).unwrap_err();
    assert!(
        e.contains(&format!(
            "cycle {ccycle}, port {cport}: credit counter of VC"
        )),
        "{e}"
    );
    at_line(&e, "I", &ccycle, &cport);
    // A malformed line is refused with its file and line.
    lines[line] = "12 O x F".into();
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let e = replay(&bad, None).unwrap_err();
    assert!(e.contains(&format!("bad.rec:{}:", line + 1)), "{e}");
}

/// A switch of a QCN run (its congestion points sampling, CNMs queued at its ports and passed
/// on): its recording carries the congestion point settings and the CNMs both ways, and replays
/// on the cycle engine.
#[test]
fn a_switch_under_qcn_is_recorded_with_its_cnms_and_replays() {
    let (_tmp, base) = crate::scratch::folder("record-qcn");
    let out = base.join("out");
    let set: Vec<String> = [
        "sim_time=120us",
        "routing=\"dmodk\"",
        "rate_control=\"qcn\"",
        "switch.qcn_qeq=\"1KB\"",
        "switch.qcn_sample=\"4KB\"",
    ]
    .map(String::from)
    .to_vec();
    // The hot node's leaf, whose congestion points see the hot spot.
    let rec = RecordRequest {
        switch: "s1_1".into(),
        from: None,
        to: None,
    };
    run(
        "default",
        Some(out.clone()),
        &set,
        None,
        Some(rec),
        &How::new(1, &Stop::never()),
    )
    .unwrap();
    let file = out.join("s1_1.rec");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("\nparam qcn_qeq 16 qcn_w 2 qcn_sample 64\n"),
        "header"
    );
    let cnms = |side: &str| {
        text.lines()
            .filter(|l| l.contains(side) && l.contains(" Q "))
            .count()
    };
    assert!(cnms(" O ") > 10, "{} CNMs sent upstream", cnms(" O "));
    replay(&file, None).unwrap();
    // A CNM dropped from the recording is a mismatch where the twin sends it.
    let first = text
        .lines()
        .find(|l| l.contains(" O ") && l.contains(" Q "))
        .unwrap();
    let cut = base.join("cut.rec");
    std::fs::write(&cut, text.replacen(&format!("{first}\n"), "", 1)).unwrap();
    let e = replay(&cut, None).unwrap_err();
    assert!(e.contains("out_cnm"), "{e}");
}
