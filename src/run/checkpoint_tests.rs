//! A run saved between two chunks and taken back by a run built anew steps on to the outputs
//! of a run never saved: on one thread and two, on ARN routing, an FA fabric, a trace replay
//! and a communication phase, on either engine; a damaged or foreign checkpoint is refused.

use super::checkpoint::{self, Header};
use super::ranks_tests::ended_text as outputs;
use super::*;
use crate::cli::scenarios::load;
use crate::fabric::Engine;

/// Runs `s` whole on `threads`; then again, saved after the chunk that reaches `at` of its
/// cycles (0 to 1) into bytes, those taken back
/// by a third run that steps to the end: both end alike. Returns the state's size.
fn saved_and_resumed<const V: usize>(s: &Scenario, threads: usize, at: f64) -> usize {
    saved_and_resumed_on::<V>(s, Engine::Event, threads, at)
}

/// [`saved_and_resumed`] on `engine`.
fn saved_and_resumed_on<const V: usize>(
    s: &Scenario,
    engine: Engine,
    threads: usize,
    at: f64,
) -> usize {
    let never = Stop::never();
    let how = Stepping {
        engine,
        ..Stepping::new(threads, &never)
    };
    let (whole, at) = {
        let mut run = Run::<V>::new(s, &how).unwrap();
        while run.step_chunk().unwrap() {}
        let e = run.finish().unwrap();
        (outputs(s, &e), (e.reached as f64 * at) as u64)
    };
    let mut bytes = Vec::new();
    {
        let mut run = Run::<V>::new(s, &how).unwrap();
        while run.now() < at {
            assert!(run.step_chunk().unwrap(), "the run ends before cycle {at}");
        }
        run.save(&mut bytes).unwrap();
        // The saved run goes on stepping: saving changed nothing.
        while run.step_chunk().unwrap() {}
        assert_eq!(outputs(s, &run.finish().unwrap()), whole);
    }
    let mut run = Run::<V>::new(s, &how).unwrap();
    assert!(run.restore(&bytes).unwrap().is_none(), "no dump");
    assert!(run.now() > 0);
    while run.step_chunk().unwrap() {}
    assert_eq!(outputs(s, &run.finish().unwrap()), whole);
    bytes.len()
}

fn scenario(name: &str, set: &[&str]) -> Scenario {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    load(name, &set).unwrap()
}

#[test]
fn a_run_taken_back_from_its_state_ends_as_one_never_saved() {
    let s = scenario("default", &["sim_time=40us", "traffic.hot_start=10us"]);
    crate::with_lanes!(s.params.switch.vcs(), |V| {
        let n = saved_and_resumed::<V>(&s, 1, 0.4);
        assert!(n > 1000, "{n} bytes");
        saved_and_resumed::<V>(&s, 2, 0.7);
    });
}

#[test]
fn a_run_on_the_cycle_engine_is_taken_back_too() {
    for (name, set) in [
        ("default", vec!["sim_time=20us", "traffic.hot_start=5us"]),
        ("irregular64_fa", vec!["sim_time=10us"]),
    ] {
        let s = scenario(name, &set);
        crate::with_lanes!(s.params.switch.vcs(), |V| {
            saved_and_resumed_on::<V>(&s, Engine::Cycle, 1, 0.6);
            saved_and_resumed_on::<V>(&s, Engine::Cycle, 2, 0.3);
        });
    }
}

#[test]
fn fa_replay_and_phase_runs_are_taken_back_too() {
    for (name, set) in [
        ("irregular64_fa", vec!["sim_time=20us"]),
        ("trace_halo", vec![]),
        ("phases16", vec![]),
    ] {
        let s = scenario(name, &set);
        crate::with_lanes!(s.params.switch.vcs(), |V| {
            saved_and_resumed::<V>(&s, 2, 0.5);
        });
    }
}

#[test]
fn a_damaged_or_foreign_checkpoint_is_refused() {
    let (_tmp, dir) = crate::scratch::folder("checkpoint-refusals");
    let path = dir.join(checkpoint::FILE);
    let header = Header {
        build: 1,
        inputs: 2,
        command: vec!["run".into(), "default".into()],
        cwd: dir.clone(),
        pid: 7,
        threads: 1,
        lanes: 4,
        cycle: 100,
        cycles: 200,
        dumps: vec![],
    };
    checkpoint::write(&path, &header, |w| w.write_all(b"state bytes")).unwrap();
    let back = checkpoint::read(&path).unwrap();
    assert_eq!(back.header, header);
    assert_eq!(back.state, b"state bytes");
    let good = std::fs::read(&path).unwrap();
    let mut flipped = good.clone();
    let k = flipped.len() - 12;
    flipped[k] ^= 1;
    std::fs::write(&path, &flipped).unwrap();
    let e = checkpoint::read(&path).err().unwrap();
    assert!(e.contains("checksum does not match"), "{e}");
    let mut flipped = good.clone();
    flipped[25] ^= 1;
    std::fs::write(&path, &flipped).unwrap();
    let e = checkpoint::read(&path).err().unwrap();
    assert!(e.contains("checksum does not match"), "{e}");
    std::fs::write(&path, &good[..30]).unwrap();
    let e = checkpoint::read(&path).err().unwrap();
    assert!(e.contains("damaged"), "{e}");
    std::fs::write(&path, b"{\"not\": \"a checkpoint\"}").unwrap();
    let e = checkpoint::read(&path).err().unwrap();
    assert!(e.contains("not a checkpoint"), "{e}");
    // A state of another fabric is refused by the run taking it back.
    let s = scenario("default", &["sim_time=10us"]);
    let never = Stop::never();
    let e = crate::with_lanes!(s.params.switch.vcs(), |V| {
        let mut run = Run::<V>::new(&s, &Stepping::new(1, &never)).unwrap();
        run.restore(b"state bytes").err().unwrap()
    });
    assert!(e.contains("cannot be read"), "{e}");
}
