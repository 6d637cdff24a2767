//! Whole runs driven through [`Run`] without the command line: the bins it returns are those
//! `arnsim run` writes, figure 4 adapts its flow, a stop request ends the run at a chunk
//! boundary, a trace replay ends when its last rank finishes, and the first pass of a triggered
//! dump finds the first root.

use super::*;
use crate::cli::outputs::Summary;
use crate::cli::run::How;
use crate::cli::scenarios::load;
use libc::{SIGINT, SIGTERM};

/// The bundled scenario `name` with `set`.
fn scenario(name: &str, set: &[&str]) -> Scenario {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    load(name, &set).unwrap()
}

/// Steps a run of `s` to its end chunk by chunk; the chunks stepped, the cycle after each, and
/// what it ended with.
fn chunked<const V: usize>(s: &Scenario, stop: &Stop) -> (Vec<u64>, Ended) {
    let mut run = Run::<V>::new(s, &Stepping::new(1, stop)).unwrap();
    let mut after = Vec::new();
    while run.step_chunk().unwrap() {
        after.push(run.now());
    }
    assert!(!run.step_chunk().unwrap(), "a run over stays over");
    (after, run.finish().unwrap())
}

/// 50 us of `default` (its hot spot from 10 us) through the library: the bins equal
/// `efficiency.csv` and `latency.csv` of `arnsim run` on the same scenario, and the totals its
/// summary.
#[test]
fn a_whole_run_gives_the_bins_arnsim_run_writes() {
    let set = ["sim_time=50us", "traffic.hot_start=10us"];
    let s = scenario("default", &set);
    let e = run_whole(&s, &Stepping::new(1, &Stop::never())).unwrap();
    assert!(e.complete && e.stopped.is_none(), "{:?}", e.stopped);
    assert_eq!(e.invariants, Ok(()));
    assert_eq!(e.reached, s.sim_cycles);
    assert!(e.totals.nodes.delivered_packets > 0);
    assert!(e.totals.switches.roots_detected > 0);
    assert_eq!(e.rank_finishes, None);
    let cycles: u64 = e.series.bins.iter().map(|b| b.cycles).sum();
    assert_eq!(cycles, e.reached, "the bins cover the run");
    assert_eq!(
        e.series.bins.len() as u64,
        s.sim_cycles.div_ceil(s.bin_cycles)
    );

    let (_tmp, out) = crate::scratch::folder("run-lib-default");
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let never = Stop::never();
    let how = How::new(2, &never);
    crate::cli::run::run("default", Some(out.clone()), &set, None, None, &how).unwrap();
    let cycle_ns = s.time_base.cycle_ns();
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    assert_eq!(read("efficiency.csv"), e.series.efficiency_csv(cycle_ns));
    assert_eq!(read("latency.csv"), e.series.latency_csv(cycle_ns));
    let summary = Summary::from_json("summary.json", &read("summary.json")).unwrap();
    assert!(summary.complete);
    assert_eq!(summary.simulated_cycles, e.reached);
    assert_eq!(summary.packets_delivered, e.totals.nodes.delivered_packets);
    assert_eq!(summary.roots_detected, e.totals.switches.roots_detected);
}

/// Figure 4 chunk by chunk: a root at B, its ARN, A's flow adapted; every chunk ends at most
/// [`CHUNK`] cycles after the one before, and on every bin's end.
#[test]
fn figure4_steps_in_chunks_to_its_adapted_flow() {
    let s = scenario("figure4", &[]);
    let (after, e) =
        crate::with_lanes!(s.params.switch.vcs(), |V| chunked::<V>(&s, &Stop::never()));
    assert!(e.complete, "{:?}", e.stopped);
    assert_eq!(e.invariants, Ok(()));
    assert_eq!(after.last(), Some(&s.sim_cycles));
    let mut before = 0;
    for &a in &after {
        assert!(a > before && a - before <= CHUNK, "{before} -> {a}");
        let bin_end = (before / s.bin_cycles + 1) * s.bin_cycles;
        assert!(
            a <= bin_end,
            "chunk {before} -> {a} crosses the bin end {bin_end}"
        );
        before = a;
    }
    let bin_ends: Vec<u64> = e.series.bins.iter().map(|b| b.end).collect();
    assert!(bin_ends.iter().all(|b| after.contains(b)), "{bin_ends:?}");
    let sw = &e.totals.switches;
    assert!(sw.roots_detected > 0 && sw.arns_sent > 0, "{sw:?}");
    assert!(sw.packets_adapted > 0, "{sw:?}");
    assert!(e.totals.nodes.delivered_packets > 0);
}

/// A stop request is seen at the chunk boundary after the cycle it names: the run ends there,
/// incomplete, its last bin cut; one made before the first cycle steps nothing.
#[test]
fn a_stop_request_ends_the_run_at_a_chunk_boundary() {
    // Bins of 3906 cycles, chunks of 1024: the request at 5000 is seen at 3906 + 2 * 1024.
    let s = scenario("default", &["sim_time=100us", "bin=20us"]);
    let stop = Stop::at_cycle(5000, SIGINT);
    let (after, e) = crate::with_lanes!(s.params.switch.vcs(), |V| chunked::<V>(&s, &stop));
    assert_eq!(after, [1024, 2048, 3072, 3906, 4930, 5954]);
    assert_eq!(e.reached, 5954);
    assert!(!e.complete);
    assert_eq!(e.stopped, Some(Stopped::Signal(SIGINT)));
    assert_eq!(e.invariants, Ok(()));
    let bins: Vec<(u64, u64)> = e.series.bins.iter().map(|b| (b.end, b.cycles)).collect();
    assert_eq!(bins, [(3906, 3906), (5954, 2048)]);

    let stop = Stop::never();
    stop.request(SIGTERM);
    crate::with_lanes!(s.params.switch.vcs(), |V| {
        let mut run = Run::<V>::new(&s, &Stepping::new(1, &stop)).unwrap();
        assert!(!run.step_chunk().unwrap());
        assert_eq!(run.stopped(), Some(Stopped::Signal(SIGTERM)));
        assert_eq!(run.now(), 0);
        let e = run.finish().unwrap();
        assert!(!e.complete && e.series.bins.is_empty());
    });
}

/// A trace replay ends when its last rank finishes, before the scenario's time, complete, with
/// every rank's finish within the cycles stepped.
#[test]
fn a_trace_replay_ends_when_its_last_rank_finishes() {
    let s = scenario("trace_halo", &[]);
    let e = run_whole(&s, &Stepping::new(1, &Stop::never())).unwrap();
    assert!(e.complete, "{:?}", e.stopped);
    assert_eq!(e.invariants, Ok(()));
    assert!(e.reached < s.sim_cycles, "{}", e.reached);
    let finishes = e.rank_finishes.unwrap();
    assert_eq!(finishes.len(), 16);
    assert!(finishes.iter().all(|f| f.is_some_and(|c| c < e.reached)));
    // The run stops in the chunk the last rank finishes in.
    let last = finishes.iter().flatten().max().copied().unwrap();
    assert!(e.reached - last <= CHUNK, "{last} {}", e.reached);
}

/// The first pass of a triggered dump stops in the window (on the event engine, the chunk) the
/// first root is detected in, in the same cycle on every engine, and a stop request made before
/// it ends it without a root.
#[test]
fn the_first_pass_finds_the_first_root() {
    let s = scenario("default", &[]);
    crate::with_lanes!(s.params.switch.vcs(), |V| {
        let stop = Stop::never();
        let mut run = Run::<V>::new(&s, &Stepping::new(1, &stop)).unwrap();
        let root = run
            .first_root()
            .unwrap()
            .expect("default has a congestion root");
        assert!(root > 0 && root < run.now() && run.now() - root <= CHUNK);
        assert!(run.fabric().totals().switches.roots_detected >= 1);
        let cycle = Stepping {
            engine: Engine::Cycle,
            ..Stepping::new(1, &stop)
        };
        let mut on_cycle = Run::<V>::new(&s, &cycle).unwrap();
        assert_eq!(on_cycle.first_root(), Ok(Some(root)));
        assert!(on_cycle.now() - root <= on_cycle.fabric().window());
        stop.request(SIGINT);
        let mut run = Run::<V>::new(&s, &Stepping::new(1, &stop)).unwrap();
        assert_eq!(run.first_root(), Ok(None));
        assert_eq!(run.now(), 0);
    });
}
