//! The event engine against the cycle engine: the same counters of every node and of the
//! switches after every stretch of cycles, the invariants holding, on random fat trees.

use super::*;
use crate::fabric::Engine;
use crate::fabric::tests::{small_params, switch_with_scheme, uniform};
use crate::fabric::topology::Topology;
use crate::wire::link::FEW_VCS;
use proptest::prelude::*;

/// Every counter of the fabric that an output is made of: the totals and each node's.
fn counters<const V: usize>(f: &Fabric<V>) -> (crate::fabric::FabricTotals, Vec<String>) {
    let nodes = f
        .nodes()
        .iter()
        .map(|n| format!("{:?}", n.stats()))
        .collect();
    (f.totals(), nodes)
}

/// The routing modes the event engine steps that adapt on their own (the first four).
const ROUTINGS: &[RoutingMode] = RoutingMode::ALL.split_at(4).0;
/// Every routing mode but FA (which needs the escape routes of its own routing engine).
fn all_routings() -> Vec<RoutingMode> {
    RoutingMode::ALL
        .into_iter()
        .filter(|&m| m != RoutingMode::Fa)
        .collect()
}
proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Over random k-ary n-trees, routing modes (Adaptive-Th at random thresholds), loads, message sizes, buffers, link latencies
    /// and SL policies,
    /// run in stretches of random length until the sources stop and the fabric drains, the event
    /// engine on one to three threads: after every stretch its counters are the cycle engine's,
    /// and both pass the invariant checks.
    #[test]
    fn the_event_engine_counts_what_the_cycle_engine_counts(
        k in 2u32..=4,
        n in 1u32..=3,
        routing in prop::sample::select(all_routings()),
        threshold in 1u16..=64,
        load in 0.05f64..1.0,
        message in prop::sample::select(vec![1u32, 5, 16, 40]),
        vc in prop::sample::select(vec![16u16, 32, 64, 128]),
        latency in 1u32..=7,
        scheme in 0usize..4,
        stretch in 1u64..200,
        threads in 1usize..=3,
        seed in any::<u64>(),
    ) {
        let topo = Topology::kary_ntree(k, n);
        let mut p = small_params(routing, seed);
        p.switch = switch_with_scheme(routing, vc, scheme, &topo, k);
        p.switch.adaptive_threshold = threshold;
        p.node_vc_capacity = vc;
        p.link_latency = latency;
        let mut flows = uniform(topo.nodes, load, 1500);
        for f in flows.iter_mut().flatten() {
            f.message_flits = message;
        }
        let build = |engine| {
            let mut f = Fabric::<FEW_VCS>::build(&topo, p.clone(), &flows).unwrap();
            f.set_engine(engine);
            f
        };
        let (mut cycle, mut event) = (build(Engine::Cycle), build(Engine::Event));
        event.set_threads(threads);
        // Past the sources' stop until the fabric drains (a deep tree of small buffers under a
        // high load takes longer than 6,000 cycles), within a bound.
        let drained = |f: &Fabric<FEW_VCS>| {
            let t = f.totals();
            t.nodes.delivered_packets == t.nodes.generated_packets
        };
        while cycle.now() < 6000 || (!drained(&cycle) && cycle.now() < 30_000) {
            cycle.run(stretch, &mut ()).map_err(|v| TestCaseError::fail(v.to_string()))?;
            event.run(stretch, &mut ()).map_err(|v| TestCaseError::fail(v.to_string()))?;
            prop_assert_eq!(cycle.now(), event.now());
            prop_assert_eq!(counters(&cycle), counters(&event), "after cycle {}", cycle.now());
            event.check().map_err(|v| TestCaseError::fail(v.to_string()))?;
        }
        let t = event.totals();
        prop_assert_eq!(t.nodes.delivered_packets, t.nodes.generated_packets, "not drained");
    }
}

/// A credit stream that stops without having started is reported where and when, as a broken
/// invariant.
#[test]
fn a_stream_stopped_before_it_started_is_reported() {
    let topo = Topology::kary_ntree(2, 2);
    let p = small_params(RoutingMode::DModK, 7);
    let mut f = Fabric::<FEW_VCS>::build(&topo, p, &uniform(topo.nodes, 0.5, 400)).unwrap();
    f.set_engine(Engine::Event);
    f.run(3000, &mut ()).unwrap();
    let at = f.now();
    let core = event_engine(&mut f).part(0);
    let j = (0..core.outputs.len())
        .find(|&j| core.outputs[j].credits.running(0) == 0)
        .unwrap();
    let mut ev = Ev::new(Kind::CreditsStop, j as u32);
    ev.count = 1;
    core.cal.push(at + 2, ev);
    let (s, port) = (core.ins[j].place.switch, core.ins[j].place.port);
    let v = f.run(10, &mut ()).unwrap_err();
    assert_eq!((v.cycle, v.invariant), (at + 2, "switch"), "{v}");
    assert_eq!(v.place, format!("switch {s} port {port}"));
    assert!(v.detail.contains("out of step"), "{v}");
    assert_eq!(f.now(), at + 3, "the run stops the cycle after");
}

/// Credits lost on their way back show in the credit conservation check.
#[test]
fn credits_lost_on_the_way_are_found_by_the_check() {
    let topo = Topology::kary_ntree(2, 2);
    let p = small_params(RoutingMode::DModK, 3);
    let mut f = Fabric::<FEW_VCS>::build(&topo, p, &uniform(topo.nodes, 0.8, 2000)).unwrap();
    f.set_engine(Engine::Event);
    f.run(500, &mut ()).unwrap();
    f.check().unwrap();
    let core = event_engine(&mut f).part(0);
    let lost = core
        .outputs
        .iter()
        .position(|o| o.credits.pending(0, 499) > 0);
    let j = lost.expect("some output has credits coming back");
    let mut b = Backward::<FEW_VCS>::default();
    b.start_stream(0, 1);
    // Counted as arrived, never started at the far end: one credit too many.
    core.outputs[j].credits.arrive(&b, 499).unwrap();
    let v = f.check().unwrap_err();
    assert_eq!(v.invariant, "credit_conservation", "{v}");
}

/// Under each adaptive mode, on a fat tree loaded enough to congest, packets leave their
/// deterministic route (as many, and the same counters, as on the cycle engine) and the AFI
/// modes' packets come out of the AFC.
#[test]
fn the_routing_modes_adapt_as_on_the_cycle_engine() {
    let topo = Topology::kary_ntree(4, 2);
    for &routing in ROUTINGS {
        let mut p = small_params(routing, 11);
        p.switch = switch_with_scheme(routing, 32, 0, &topo, 4);
        p.switch.adaptive_threshold = 8;
        let flows = uniform(topo.nodes, 0.9, 3000);
        let build = |engine| {
            let mut f = Fabric::<FEW_VCS>::build(&topo, p.clone(), &flows).unwrap();
            f.set_engine(engine);
            f
        };
        let (mut cycle, mut event) = (build(Engine::Cycle), build(Engine::Event));
        cycle.run(4000, &mut ()).unwrap();
        event.run(4000, &mut ()).unwrap();
        event.check().unwrap();
        assert_eq!(counters(&cycle), counters(&event), "{}", routing.name());
        let adapted = event.totals().switches.packets_adapted;
        assert_eq!(
            adapted > 0,
            routing != RoutingMode::DModK,
            "{}: {adapted}",
            routing.name()
        );
    }
}

/// Under ARN and ARN + AFI, on a fat tree with an incast: roots and ARNs up to the sources, and
/// after every stretch the cycle engine's counters, on one to three threads. (Switches consuming
/// ARNs and re-routing are compared on configuration 1, `cli/engine_tests.rs`.)
#[test]
fn arn_runs_as_on_the_cycle_engine() {
    for routing in [RoutingMode::ArnAfi, RoutingMode::Arn] {
        for threads in 1..=3 {
            let (topo, mut p, flows) = crate::fabric::tests::arn_incast_case();
            p.switch.routing = routing;
            let build = |engine| {
                let mut f = Fabric::<FEW_VCS>::build(&topo, p.clone(), &flows).unwrap();
                f.set_engine(engine);
                f
            };
            let (mut cycle, mut event) = (build(Engine::Cycle), build(Engine::Event));
            event.set_threads(threads);
            while cycle.now() < 7000 {
                cycle.run(97, &mut ()).unwrap();
                event.run(97, &mut ()).unwrap_or_else(|v| panic!("{v}"));
                assert_eq!(
                    counters(&cycle),
                    counters(&event),
                    "{} on {threads} threads after cycle {}",
                    routing.name(),
                    cycle.now()
                );
                event.check().unwrap();
            }
            let t = event.totals();
            assert!(
                t.switches.roots_detected > 0 && t.switches.arns_sent > 0,
                "{}: {t:?}",
                routing.name()
            );
            assert!(t.nodes.arns_received > 0, "{}: {t:?}", routing.name());
        }
    }
}

/// A ring whose channel dependencies close a cycle deadlocks; the watchdog stops the run at the
/// same look, with the same report, as on the cycle engine, on one to three threads, in runs cut
/// into stretches of any length.
#[test]
fn the_watchdog_finds_the_deadlock_the_cycle_engine_finds() {
    let (topo, p, flows) = crate::fabric::tests::ring_deadlock_case();
    let build = |engine| {
        let mut f = Fabric::<FEW_VCS>::build(&topo, p.clone(), &flows).unwrap();
        f.set_engine(engine);
        f
    };
    let mut cycle = build(Engine::Cycle);
    let want = cycle
        .run(200_000, &mut ())
        .expect_err("the ring must deadlock");
    assert_eq!(want.invariant, "progress", "{want}");
    for threads in 1..=3 {
        for stretch in [200_000, 1000, 97] {
            let mut event = build(Engine::Event);
            event.set_threads(threads);
            let got = loop {
                match event.run(stretch, &mut ()) {
                    Ok(()) => assert!(event.now() < 200_000, "no deadlock found"),
                    Err(v) => break v,
                }
            };
            assert_eq!(got, want, "{threads} threads, stretches of {stretch}");
            assert_eq!(event.now(), cycle.now(), "{threads} threads, {stretch}");
            assert_eq!(counters(&event), counters(&cycle));
        }
    }
}

/// FA with escape queues on random irregular fabrics at full load, half the packets adaptive:
/// after every stretch the cycle engine's counters, packets escaping, on one to three threads.
#[test]
fn fa_runs_as_on_the_cycle_engine() {
    use crate::fabric::subnet_manager::RoutingEngine;
    use crate::fabric::topology::IrregularShape;
    for (seed, threads) in [(1u64, 1usize), (2, 2), (3, 3)] {
        let topo = Topology::irregular(IrregularShape {
            switches: 16,
            links: 4,
            nodes_per_switch: 4,
            seed,
        })
        .unwrap();
        let mut p = small_params(RoutingMode::Fa, seed);
        p.routing_engine = Some(RoutingEngine::FaUpdn { options: 2 });
        p.adaptive_share = 0.5;
        p.check_order = true;
        let flows = uniform(topo.nodes, 1.0, 3000);
        let build = |engine| {
            let mut f = Fabric::<FEW_VCS>::build(&topo, p.clone(), &flows).unwrap();
            f.set_engine(engine);
            f
        };
        let (mut cycle, mut event) = (build(Engine::Cycle), build(Engine::Event));
        event.set_threads(threads);
        while cycle.now() < 8000 {
            cycle.run(113, &mut ()).unwrap_or_else(|v| panic!("{v}"));
            event.run(113, &mut ()).unwrap_or_else(|v| panic!("{v}"));
            assert_eq!(
                counters(&cycle),
                counters(&event),
                "seed {seed} after {}",
                cycle.now()
            );
            event.check().unwrap_or_else(|v| panic!("{v}"));
        }
        let t = event.totals();
        assert!(t.switches.packets_escaped > 100, "seed {seed}: {t:?}");
        assert!(t.switches.packets_adapted > 100, "seed {seed}: {t:?}");
    }
}

/// The event engine stepping `f`.
fn event_engine<const V: usize>(f: &mut Fabric<V>) -> &mut super::EventEngine<V> {
    match &mut f.wing {
        crate::fabric::Wing::Event(e) => e,
        crate::fabric::Wing::Cycle(_) => panic!("the event engine steps the fabric"),
    }
}
