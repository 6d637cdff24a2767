//! Tests of fabrics beyond fat trees through `arnsim run`: a routing whose channel dependencies
//! close a cycle deadlocks at high load and the watchdog stops the run with where; up*/down* on
//! the same fabric and load does not.

use super::interrupt::Stop;
use super::run::*;
use super::run_tests::{base, summary};

fn go(name: &str, tag: &str, set: &[&str]) -> (std::path::PathBuf, Result<(), String>) {
    let out = base(tag);
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let r = run(
        name,
        Some(out.clone()),
        &set,
        None,
        None,
        &How::fast(1, &Stop::never()),
    );
    (out, r.map(|_| ()).map_err(|e| e.message))
}

#[test]
fn minimal_routing_on_one_vl_deadlocks_a_dragonfly_and_the_watchdog_says_where() {
    let (out, r) = go("dragonfly72", "df72-min", &["traffic.load=0.9"]);
    let e = r.expect_err("MIN-1VL at load 0.9 must deadlock");
    assert!(
        e.contains("invariant progress") && e.contains("deadlock"),
        "{e}"
    );
    assert!(e.contains("switch") && e.contains("input"), "{e}");
    let s = summary(&out);
    assert!(!s.complete);
    assert!(s.stopped_at_cycle.is_some_and(|c| c < 39_063));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn updn_on_the_same_dragonfly_and_load_runs_to_the_end() {
    let (out, r) = go(
        "dragonfly72",
        "df72-updn",
        &["traffic.load=0.9", "routing_engine=updn"],
    );
    r.unwrap();
    let s = summary(&out);
    assert!(s.complete);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_irregular_fabric_runs_under_updn_at_full_load() {
    let (out, r) = go(
        "irregular16",
        "irr16",
        &["traffic.load=1.0", "sim_time=500us"],
    );
    r.unwrap();
    assert!(summary(&out).complete);
    let _ = std::fs::remove_dir_all(&out);
}
