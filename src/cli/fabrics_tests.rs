//! Tests of fabrics beyond fat trees through `arnsim run`: a routing whose channel dependencies
//! close a cycle deadlocks at high load and the watchdog stops the run with where; up*/down* on
//! the same fabric and load does not.

use super::interrupt::Stop;
use super::run::*;
use super::run_tests::{base, summary};

/// The run's outputs (in a scratch folder removed when the guard is dropped) and its result.
fn go(
    name: &str,
    tag: &str,
    set: &[&str],
) -> (tempfile::TempDir, std::path::PathBuf, Result<(), String>) {
    let (guard, out) = base(tag);
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let r = run(
        name,
        Some(out.clone()),
        &set,
        None,
        None,
        &How::new(1, &Stop::never()),
    );
    (guard, out, r.map(|_| ()).map_err(|e| e.message))
}

#[test]
fn minimal_routing_on_one_vl_deadlocks_a_dragonfly_and_the_watchdog_says_where() {
    let (_tmp, out, r) = go("dragonfly72", "df72-min", &["traffic.load=0.9"]);
    let e = r.expect_err("MIN-1VL at load 0.9 must deadlock");
    assert!(
        e.contains("invariant progress") && e.contains("deadlock"),
        "{e}"
    );
    assert!(e.contains("switch") && e.contains("input"), "{e}");
    let s = summary(&out);
    assert!(!s.complete);
    assert!(s.stopped_at_cycle.is_some_and(|c| c < 39_063));
    // The report's cycle is the last one the run stepped.
    let cycle: u64 = e
        .split("cycle ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no cycle in {e}"));
    assert_eq!(s.stopped_at_cycle, Some(cycle + 1), "{e}");
    assert_eq!(s.simulated_cycles, cycle + 1);
}

/// `dragonfly72` with buffers of one small packet on every VC, at full load: it fills and
/// deadlocks within a few microseconds.
pub(crate) const TINY_BUFFERS: [&str; 8] = [
    "sim_time=10us",
    "traffic.load=1",
    "routing=dmodk",
    "switch.mtu=128B",
    "switch.buffer=4flits",
    "node.buffer=4flits",
    "watchdog=100ns",
    "traffic.message=128B",
];

/// Buffers of one small packet on every VC: the dragonfly fills and deadlocks within a few
/// microseconds, with more blocked inputs than the report lists; it says how many it leaves out.
#[test]
fn a_deadlock_report_says_how_many_blocked_inputs_it_leaves_out() {
    let (_tmp, _out, r) = go("dragonfly72", "df72-tiny", &TINY_BUFFERS);
    let e = r.expect_err("must deadlock");
    let listed = e.matches("; switch ").count() + e.matches("blocked: switch ").count();
    assert_eq!(listed, 32, "{e}");
    let more = e.rsplit("; and ").next().unwrap_or("");
    let n: usize = more
        .strip_suffix(" more")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of those left out: {e}"));
    assert!(n > 0);
}

#[test]
fn updn_on_the_same_dragonfly_and_load_runs_to_the_end() {
    let (_tmp, out, r) = go(
        "dragonfly72",
        "df72-updn",
        &["traffic.load=0.9", "routing_engine=updn"],
    );
    r.unwrap();
    let s = summary(&out);
    assert!(s.complete);
}

#[test]
fn the_irregular_fabric_runs_under_updn_at_full_load() {
    let (_tmp, out, r) = go(
        "irregular16",
        "irr16",
        &["traffic.load=1.0", "sim_time=500us"],
    );
    r.unwrap();
    assert!(summary(&out).complete);
}

#[test]
fn layered_routings_on_the_same_dragonfly_and_load_run_to_the_end() {
    for engine in ["d3r_2vl", "d3r_3vl", "dfsssp", "dfly_vl_hops", "lash"] {
        let set = [
            "traffic.load=0.9".to_string(),
            format!("routing_engine={engine}"),
        ];
        let set: Vec<&str> = set.iter().map(|s| s.as_str()).collect();
        let (_tmp, out, r) = go("dragonfly72", &format!("df72-{engine}"), &set);
        r.unwrap_or_else(|e| panic!("{engine}: {e}"));
        let s = summary(&out);
        assert!(s.complete, "{engine}");
        assert_eq!(s.queuing, "path_sl", "{engine}");
    }
}

/// Under D3R every node sends on the VL of its path's SL: group 0 has no lower group, so its
/// nodes send nothing on VL 0 with three VLs; the last group has no higher one, so nothing on
/// VL 1; both send to their own group on VL 2. With two VLs, the intra-group traffic is on VL 0.
#[test]
fn d3r_packets_leave_each_node_on_the_vl_of_their_group_order() {
    use crate::fabric::Fabric;
    for (engine, vls) in [("d3r_3vl", 3usize), ("d3r_2vl", 2)] {
        let set = vec![
            "traffic.load=0.5".to_string(),
            format!("routing_engine={engine}"),
        ];
        let s = super::scenarios::load("dragonfly72", &set).unwrap();
        let mut f = Fabric::<4>::build(&s.topology, s.params.clone(), &s.flows).unwrap();
        f.run(20_000, &mut ()).unwrap();
        let nodes = f.nodes();
        let sent = |n: usize, vc: usize| nodes[n].flits_sent(vc);
        // Nodes 0..8 are group 0's (4 routers of 2 nodes), 64..72 the last group's (group 8).
        for n in 0..8 {
            assert_eq!(sent(n, 0) > 0, vls == 2, "{engine}: node {n} VL 0");
            assert!(sent(n, 1) > 0, "{engine}: node {n} VL 1");
        }
        for n in 64..72 {
            assert!(sent(n, 0) > 0, "{engine}: node {n} VL 0");
            assert_eq!(sent(n, 1), 0, "{engine}: node {n} VL 1");
        }
        if vls == 3 {
            assert!(
                (0..72).all(|n| sent(n, 2) > 0),
                "{engine}: VL 2 within groups"
            );
        }
        assert!((0..72).all(|n| sent(n, 3) == 0));
    }
}

/// The VL change after the global hop, done by the routers' SL-to-VL tables: every node sends on
/// VL 0 (its SL); routers send on VL 1 only out of local ports (the last local hop of a packet
/// that crossed a global link), never toward a node or over a global link.
#[test]
fn dfly_vl_hops_moves_packets_to_vl_1_after_their_global_hop() {
    use crate::fabric::Fabric;
    let set = vec![
        "traffic.load=0.5".to_string(),
        "routing_engine=dfly_vl_hops".to_string(),
    ];
    let s = super::scenarios::load("dragonfly72", &set).unwrap();
    let mut f = Fabric::<4>::build(&s.topology, s.params.clone(), &s.flows).unwrap();
    f.set_engine(crate::fabric::Engine::Cycle);
    f.run(20_000, &mut ()).unwrap();
    let nodes = f.nodes();
    assert!((0..72).all(|n| nodes[n].flits_sent(0) > 0 && nodes[n].flits_sent(1) == 0));
    // Router ports (a = 4, h = 2, p = 2): 0-1 nodes, 2-4 local, 5-6 global.
    let (mut local, mut elsewhere) = ([0u64; 2], [0u64; 2]);
    for sw in f.cycle_units().expect("the cycle engine") {
        for port in 0..7 {
            for vl in 0..2 {
                let sent = sw.flits_sent(port, vl);
                if (2..5).contains(&port) {
                    local[vl] += sent;
                } else {
                    elsewhere[vl] += sent;
                }
            }
        }
    }
    assert!(local[0] > 0 && local[1] > 0, "local links: {local:?}");
    assert!(
        elsewhere[0] > 0 && elsewhere[1] == 0,
        "node and global links: {elsewhere:?}"
    );
}
