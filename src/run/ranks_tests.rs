//! A run split over ranks (threads standing for MPI ranks, `fabric::ranks::local`) ends with
//! what a run in one process ends with, on every rank, for any number of ranks and threads per
//! rank: the bins, the counters, the invariants, the ends of a trace replay and of a phase, and
//! the breach or deadlock that stops it.

use super::*;
use crate::fabric::ranks::local::LocalRanks;
use std::sync::Arc;

/// What a run's outputs are made of, as text to compare.
pub(super) fn ended_text(s: &Scenario, e: &Ended) -> String {
    let ns = s.time_base.cycle_ns();
    format!(
        "{}\n{}\n{:?}\n{} {} {:?}\n{:?}\n{:?}\n{:?}",
        e.series.efficiency_csv(ns),
        e.series.latency_csv(ns),
        e.totals,
        e.reached,
        e.complete,
        e.stopped,
        e.invariants,
        e.rank_finishes,
        e.phase_ends,
    )
}

/// The scenario `name` with `set` run on as many ranks as `threads` says, rank `r` asking for
/// `threads[r]` threads (each loads the scenario, as MPI ranks do): what each rank ended with.
fn split(name: &str, set: &[String], threads: &[usize]) -> Vec<String> {
    let stop = Stop::never();
    LocalRanks::each(threads.len(), |r| {
        let r: Arc<dyn crate::fabric::ranks::Ranks> = r.clone();
        let s = crate::cli::scenarios::load(name, set).unwrap();
        let how = Stepping {
            ranks: Some(&r),
            ..Stepping::new(threads[r.rank()], &stop)
        };
        crate::with_lanes!(s.params.switch.vcs(), |V| {
            let mut run = Run::<V>::new(&s, &how).unwrap();
            let (mine, all) = (run.fabric().local_nodes().count(), s.topology.nodes);
            assert!(mine < all as usize, "a rank steps {mine} of {all} nodes");
            while run.step_chunk().unwrap() {}
            ended_text(&s, &run.finish().unwrap())
        })
    })
}

/// The scenario `name` with `set`, run in one process and split over 2 ranks of 2 threads, 3 of 1,
/// 4 of 1 (a grid of 2 x 2: events crossing in two rounds), and 2 asking for 2 and 1 threads
/// (both then step on 1): every rank ends with what the one process ends with.
fn same_on_ranks(name: &str, set: &[&str]) -> String {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let s = crate::cli::scenarios::load(name, &set).unwrap();
    let one = ended_text(
        &s,
        &run_whole(&s, &Stepping::new(1, &Stop::never())).unwrap(),
    );
    for threads in [&[2, 2][..], &[1, 1, 1], &[1, 1, 1, 1], &[2, 1]] {
        for (rank, got) in split(name, &set, threads).iter().enumerate() {
            assert_eq!(
                *got, one,
                "{name}: rank {rank} of ranks asking for {threads:?} threads"
            );
        }
    }
    one
}

#[test]
fn default_on_ranks_is_default_in_one_process() {
    let one = same_on_ranks("default", &["sim_time=30us", "traffic.hot_start=5us"]);
    assert!(one.contains("invariants") || one.contains("Ok(())"));
}

#[test]
fn a_dragonfly_routed_by_d3r_on_ranks() {
    same_on_ranks("dragonfly72", &["sim_time=10us", "routing_engine=d3r_2vl"]);
}

#[test]
fn fa_on_an_irregular_fabric_on_ranks() {
    same_on_ranks("irregular64_fa", &["sim_time=10us"]);
}

#[test]
fn a_trace_replay_on_ranks() {
    let one = same_on_ranks("trace_halo", &[]);
    assert!(one.contains("Some(["), "the replay's ranks finish: {one}");
}

#[test]
fn a_communication_phase_on_ranks() {
    same_on_ranks("phases16", &[]);
}

/// A Dragonfly routed minimally on one VL with buffers of one packet deadlocks within
/// microseconds: every rank stops at the same window with the one process's report (the blocked
/// inputs of every rank, in switch order).
#[test]
fn a_deadlock_on_ranks_is_reported_as_in_one_process() {
    let one = same_on_ranks("dragonfly72", &crate::cli::fabrics_tests::TINY_BUFFERS);
    assert!(
        one.contains("deadlock") && one.contains("progress"),
        "{one}"
    );
}
