//! Whole-fabric tests: conservation, ordering and draining under every routing mode.

use super::node::{Destination, Flow, SendMemory};
use super::topology::Topology;
use super::*;
use crate::switch::{QueuingScheme, RoutingMode, SwitchParams};
use crate::wire::link::{FEW_VCS, MAX_VCS};

/// Small-fabric parameters: 64-flit VCs, 16-flit packets, short timers.
pub(crate) fn small_params(routing: RoutingMode, seed: u64) -> FabricParams {
    let mut sw = SwitchParams::with_paper_ratios(routing, 64, 200);
    sw.arn_ttl = 2000;
    sw.arn_gap = 50;
    FabricParams {
        switch: sw,
        link_latency: 2,
        mtu_flits: 16,
        node_vc_capacity: 64,
        seed,
        watchdog_cycles: 5000,
        check_order: routing == RoutingMode::DModK,
        resequence: false,
        node_consumes_arns: true,
        node_send_memory: SendMemory::Shared,
        adaptive_share: 1.0,
        routing_engine: None,
        routing_phases: Default::default(),
        ca_congestion: None,
        qcn_reaction: None,
    }
}

pub(crate) fn uniform(nodes: u32, rate: f64, stop: u64) -> Vec<Vec<Flow>> {
    (0..nodes)
        .map(|_| {
            vec![Flow {
                dest: Destination::Uniform,
                rate,
                message_flits: 16,
                start: 0,
                stop,
                hot: false,
            }]
        })
        .collect()
}

/// Switch parameters with VCs of `vc` flits under SL policy `scheme` (0 to 3: 1Q, then DBBM,
/// vFtree and Flow2SL over 3 VCs) on `topo`, a k-ary n-tree of `k`, the descriptor pool sized to
/// match.
pub(crate) fn switch_with_scheme(
    routing: RoutingMode,
    vc: u16,
    scheme: usize,
    topo: &Topology,
    k: u32,
) -> SwitchParams {
    let mut sw = SwitchParams::with_paper_ratios(routing, vc, 100);
    sw.queuing = [
        QueuingScheme::OneQ,
        QueuingScheme::Dbbm { vcs: 3 },
        QueuingScheme::VFtree {
            vcs: 3,
            nodes_per_leaf: k,
        },
        QueuingScheme::Flow2Sl {
            vcs: 3,
            nodes: topo.nodes,
        },
    ][scheme];
    sw.max_packets = crate::switch::packet_slots(sw.vcs(), vc, 1);
    sw
}

fn drain(f: &mut Fabric<FEW_VCS>, limit: u64) {
    for _ in 0..limit {
        f.step(&mut ()).unwrap_or_else(|v| panic!("{v}"));
        let t = f.totals();
        if f.nodes().iter().all(|n| !n.is_busy())
            && t.nodes.delivered_flits == t.nodes.injected_flits
        {
            return;
        }
    }
    panic!(
        "fabric did not drain in {limit} cycles: {:?}",
        f.totals().nodes
    );
}

#[test]
fn uniform_traffic_conserves_and_drains_in_every_mode() {
    let topo = Topology::kary_ntree(2, 3);
    for mode in RoutingMode::ALL {
        let mut f =
            Fabric::<FEW_VCS>::build(&topo, small_params(mode, 7), &uniform(8, 0.6, 3000)).unwrap();
        f.run(3000, &mut ())
            .unwrap_or_else(|v| panic!("{}: {v}", mode.name()));
        drain(&mut f, 20_000);
        f.check().unwrap();
        let t = f.totals();
        assert!(
            t.nodes.delivered_packets > 500,
            "{}: {:?}",
            mode.name(),
            t.nodes
        );
        assert_eq!(
            t.nodes.delivered_packets,
            t.nodes.generated_packets,
            "{}",
            mode.name()
        );
    }
}

#[test]
fn same_seed_same_result_different_seed_different() {
    let topo = Topology::kary_ntree(2, 3);
    let run = |seed| {
        let mut f = Fabric::<FEW_VCS>::build(
            &topo,
            small_params(RoutingMode::Oblivious, seed),
            &uniform(8, 0.5, 2000),
        )
        .unwrap();
        f.run(2500, &mut ()).unwrap();
        f.totals()
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}

mod random_fabrics {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Over random small fat trees, routing modes, loads, buffer sizes and link latencies, on
        /// the event engine: every invariant holds at every 97th cycle of the drain and at its
        /// end, and once the sources stop, everything generated is delivered.
        #[test]
        fn invariants_hold_and_everything_is_delivered(
            k in 2u32..=3,
            n in 1u32..=3,
            mode in 0usize..7,
            load in 0.05f64..1.0,
            vc in prop::sample::select(vec![16u16, 32, 64, 128]),
            latency in 1u32..=5,
            scheme in 0usize..4,
            seed in any::<u64>(),
        ) {
            let routing = RoutingMode::ALL[mode];
            let topo = Topology::kary_ntree(k, n);
            let mut p = small_params(routing, seed);
            let mut sw = switch_with_scheme(routing, vc, scheme, &topo, k);
            sw.arn_ttl = 1000;
            sw.arn_gap = 20;
            p.switch = sw;
            p.node_vc_capacity = vc;
            p.link_latency = latency;
            let mut f = Fabric::<FEW_VCS>::build(&topo, p, &uniform(topo.nodes, load, 1500)).unwrap();
            if let Err(v) = f.run(1500, &mut ()) {
                return Err(TestCaseError::fail(v.to_string()));
            }
            for _ in 0..50_000 {
                if let Err(v) = f.step(&mut ()) {
                    return Err(TestCaseError::fail(v.to_string()));
                }
                if f.now().is_multiple_of(97) {
                    f.check().map_err(|v| TestCaseError::fail(v.to_string()))?;
                }
                let t = f.totals();
                if f.nodes().iter().all(|x| !x.is_busy()) && t.nodes.delivered_flits == t.nodes.injected_flits {
                    break;
                }
            }
            f.check().map_err(|v| TestCaseError::fail(v.to_string()))?;
            let t = f.totals();
            prop_assert_eq!(t.nodes.delivered_packets, t.nodes.generated_packets);
        }
    }
}

/// Six switches in a ring with one-packet VC buffers, every flow three hops clockwise: the
/// channel dependencies form a cycle, buffers fill with transit packets, and the watchdog must
/// stop the run with a deadlock report.
#[test]
fn watchdog_reports_a_ring_deadlock() {
    let (topo, p, flows) = ring_deadlock_case();
    let mut f = Fabric::<FEW_VCS>::build(&topo, p, &flows).unwrap();
    let err = f.run(200_000, &mut ()).expect_err("the ring must deadlock");
    assert_eq!(err.invariant, "progress", "{err}");
    assert!(
        err.detail.contains("deadlock") && err.detail.contains("switch"),
        "{err}"
    );
    assert!(err.cycle < 200_000);
    // The watchdog looks at the end of every 256th cycle.
    assert_eq!((err.cycle + 1) % super::invariants::WATCH_EVERY, 0, "{err}");
    assert_eq!(f.now(), err.cycle + 1);
}

/// The ring of [`watchdog_reports_a_ring_deadlock`]: its topology, parameters and flows.
pub(crate) fn ring_deadlock_case() -> (Topology, FabricParams, Vec<Vec<Flow>>) {
    use super::topology::{Endpoint, SwitchSpec};
    let sw = |sw, port| Endpoint::Switch { sw, port };
    // Port 0: node; port 1: clockwise neighbour; port 2: counter-clockwise neighbour.
    let mut links = Vec::new();
    const RING: u32 = 6;
    for s in 0..RING {
        links.push((Endpoint::Node(s), sw(s, 0)));
        links.push((sw(s, 1), sw((s + 1) % RING, 2)));
    }
    let topo = Topology {
        nodes: RING,
        switches: vec![
            SwitchSpec {
                ports: 3,
                stage: 0,
                up_ports: 0
            };
            RING as usize
        ],
        links,
        xgft: None,
        dragonfly: None,
        horizontal: 0,
    };
    let flows: Vec<Vec<Flow>> = (0..RING)
        .map(|s| {
            vec![Flow {
                dest: Destination::Node((s + RING / 2) % RING),
                rate: 1.0,
                message_flits: 16,
                start: 0,
                stop: u64::MAX,
                hot: false,
            }]
        })
        .collect();
    let mut p = small_params(RoutingMode::DModK, 1);
    p.switch = SwitchParams::with_paper_ratios(RoutingMode::DModK, 16, 100);
    p.node_vc_capacity = 16;
    p.watchdog_cycles = 2000;
    (topo, p, flows)
}

/// The timing diagram of docs/switch.md: a 4-flit packet through one switch with 2-cycle links
/// leaves its source in cycle 0, reaches the switch in 2, is routed in 3, granted in 4, leaves in
/// 5, and its tail reaches the destination in 5 + 2 + 3 = 10.
#[test]
fn doc_timing_one_packet_through_one_switch() {
    let topo = Topology::kary_ntree(2, 1);
    let one = Flow {
        dest: Destination::Node(1),
        rate: 4.0,
        message_flits: 4,
        start: 0,
        stop: 1,
        hot: false,
    };
    let mut f = Fabric::<FEW_VCS>::build(
        &topo,
        small_params(RoutingMode::DModK, 1),
        &[vec![one], vec![]],
    )
    .unwrap();
    f.run(30, &mut ()).unwrap();
    let s = f.nodes()[1].stats();
    assert_eq!(s.delivered_packets, 1);
    assert_eq!(s.latency_max, 10);
    assert_eq!(f.totals().switches.packets_sent, 1, "one switch traversal");
}

/// Switch traversals: on the 2-ary 3-tree every node sends to the node whose address differs in
/// every digit, so each packet climbs to the top stage and crosses 5 switches; once the fabric
/// has drained, the switches' head counts add up to 5 per packet delivered, in every mode.
#[test]
fn a_packet_counts_one_traversal_per_switch_it_crosses() {
    let topo = Topology::kary_ntree(2, 3);
    let flows: Vec<Vec<Flow>> = (0..8)
        .map(|i| {
            vec![Flow {
                dest: Destination::Node(i ^ 7),
                rate: 0.4,
                message_flits: 16,
                start: 0,
                stop: 1000,
                hot: false,
            }]
        })
        .collect();
    for mode in RoutingMode::ALL {
        let mut f = Fabric::<FEW_VCS>::build(&topo, small_params(mode, 3), &flows).unwrap();
        f.run(1000, &mut ())
            .unwrap_or_else(|v| panic!("{}: {v}", mode.name()));
        let t = f.totals();
        assert!(
            t.switches.packets_sent > 5 * t.nodes.delivered_packets,
            "{}: packets on their way have left some switches",
            mode.name()
        );
        drain(&mut f, 20_000);
        let t = f.totals();
        assert!(t.nodes.delivered_packets > 100, "{}", mode.name());
        assert_eq!(
            t.switches.packets_sent,
            5 * t.nodes.delivered_packets,
            "{}",
            mode.name()
        );
    }
}

/// Everything a run leaves behind: totals, per-switch counters, and per port and VC the buffered
/// flits and the free credits, of every switch and node.
fn fingerprint<const V: usize>(f: &Fabric<V>) -> Vec<u64> {
    let t = f.totals();
    let mut v = vec![f.now()];
    v.extend(format!("{t:?}").bytes().map(u64::from));
    let vcs = f.params().switch.vcs();
    for s in f.cycle_units().expect("the cycle engine") {
        v.extend(format!("{:?}", s.stats()).bytes().map(u64::from));
        for p in 0..s.ports() {
            for vc in 0..vcs {
                v.push(s.buffered(p, vc) as u64);
                v.push(s.credits(p, vc) as u64);
            }
            v.push(s.arn_table().count() as u64);
        }
    }
    for n in f.nodes() {
        v.extend((0..vcs).map(|vc| n.credits(vc) as u64));
        v.push(n.queued() as u64);
    }
    v
}

/// A 2-ary 3-tree under ARN+AFI with uniform background traffic and an incast on node 3, so
/// that roots, ARNs and adaptation happen.
pub(crate) fn arn_incast_case() -> (Topology, FabricParams, Vec<Vec<Flow>>) {
    let topo = Topology::kary_ntree(2, 3);
    let mut params = small_params(RoutingMode::ArnAfi, 21);
    params.link_latency = 5;
    // 256-flit VCs, so a congested VOQ stays above HCDTh (as in `arn_cases`).
    let mut sw = SwitchParams::with_paper_ratios(RoutingMode::ArnAfi, 256, 200);
    sw.arn_ttl = 2000;
    sw.arn_gap = 50;
    params.switch = sw;
    params.node_vc_capacity = 256;
    // Uniform background plus an incast on node 3, so roots, ARNs and adaptation happen.
    let mut flows = uniform(8, 0.3, 5000);
    for (n, f) in flows.iter_mut().enumerate().filter(|&(n, _)| n != 3) {
        f.push(Flow {
            dest: Destination::Node(3),
            rate: 0.7,
            message_flits: 32,
            start: 200 + n as u64,
            stop: 4000,
            hot: true,
        });
    }
    (topo, params, flows)
}

/// [`arn_incast_case`] on the cycle engine, a fabric of `V` VC lanes, `threads` threads and
/// windows of `window` cycles: the events and the final state.
fn run_arn_incast<const V: usize>(
    threads: usize,
    window: u64,
) -> (Vec<(u64, u32, SwitchEvent)>, Vec<u64>) {
    let (topo, params, flows) = arn_incast_case();
    let mut f = Fabric::<V>::build(&topo, params, &flows).unwrap();
    f.set_engine(Engine::Cycle);
    f.set_threads(threads);
    f.set_window(window);
    assert_eq!(f.window(), window.min(5));
    let mut ev: Vec<(u64, u32, SwitchEvent)> = Vec::new();
    // An odd length, so the last window is cut short.
    f.run(6001, &mut ev).unwrap_or_else(|v| panic!("{v}"));
    (ev, fingerprint(&f))
}

/// On the cycle engine, stepping every unit through windows of cycles, on any number of threads,
/// gives the same events in the same order and the same state as stepping the fabric cycle by
/// cycle.
#[test]
fn windows_and_threads_change_nothing() {
    let run = run_arn_incast::<FEW_VCS>;
    let (ev, print) = run(1, 1);
    assert!(
        ev.iter()
            .any(|e| matches!(e.2, SwitchEvent::RootDetected { .. }))
            && ev
                .iter()
                .any(|e| matches!(e.2, SwitchEvent::ArnSent { .. })),
        "the case exercises the ARN machinery"
    );
    assert!(
        ev.windows(2).all(|w| w[0].0 <= w[1].0),
        "events in cycle order"
    );
    for (threads, window) in [(1, 5), (1, 3), (2, 1), (2, 5), (3, 2), (1, 99)] {
        let (e, p) = run(threads, window);
        assert!(
            e == ev,
            "events differ on {threads} threads, window {window}"
        );
        assert!(
            p == print,
            "state differs on {threads} threads, window {window}"
        );
    }
}

/// A flit lost on a link (the sender counted it, the receiver never got it) stops the run with
/// the broken invariants named, with the cycle and the link.
#[test]
fn a_lost_flit_is_reported_with_where_and_when() {
    let topo = Topology::kary_ntree(2, 3);
    let mut f = Fabric::<FEW_VCS>::build(
        &topo,
        small_params(RoutingMode::DModK, 3),
        &uniform(8, 0.5, 2000),
    )
    .unwrap();
    f.set_engine(Engine::Cycle);
    f.run(1000, &mut ()).unwrap();
    f.check().unwrap();
    f.nodes[2].lose_flit_for_test(0);
    let v = f.check().unwrap_err();
    assert_eq!(v.invariant, "flit_conservation", "{v}");
    assert_eq!(v.cycle, 999, "{v}");
    // Debug builds check every window; release builds check at the end of a run (`check`).
    let stepped = f.run(1, &mut ());
    let v = if cfg!(debug_assertions) {
        stepped.unwrap_err()
    } else {
        stepped.unwrap();
        f.check().unwrap_err()
    };
    assert!(
        ["flit_conservation", "credit_conservation"].contains(&v.invariant),
        "{v}"
    );
}

/// A credit return lost on its way upstream (the record that starts a packet's credit stream,
/// on the cycle engine's links) breaks credit conservation, and the check names it.
#[test]
fn a_lost_credit_return_is_reported() {
    let topo = Topology::kary_ntree(2, 3);
    let mut f = Fabric::<FEW_VCS>::build(
        &topo,
        small_params(RoutingMode::DModK, 3),
        &uniform(8, 0.5, 2000),
    )
    .unwrap();
    f.set_engine(Engine::Cycle);
    f.run(1000, &mut ()).unwrap();
    f.check().unwrap();
    let now = f.now();
    let lost = f
        .channels
        .iter_mut()
        .any(|c| c.lose_credit_streams_for_test(now));
    assert!(lost, "no credit stream in flight to lose");
    let v = f.check().unwrap_err();
    assert_eq!(v.invariant, "credit_conservation", "{v}");
    assert_eq!(v.cycle, 999, "{v}");
}

/// The cycle engine sized for 16 VC lanes gives the events and the state of the one sized for 4,
/// on a case of 4 VCs (the lanes change only the width of the credit records and counters).
#[test]
fn a_fabric_of_16_lanes_runs_like_one_of_4() {
    assert!(run_arn_incast::<MAX_VCS>(2, 5) == run_arn_incast::<FEW_VCS>(2, 5));
    let (topo, mut params, flows) = arn_incast_case();
    params.switch.queuing = QueuingScheme::Dbbm { vcs: 5 };
    let e = Fabric::<FEW_VCS>::build(&topo, params, &flows).err();
    assert_eq!(
        e.as_deref(),
        Some("6 VCs per port, more than the fabric's 4 VC lanes"),
        "5 regular VCs and the AFC"
    );
}

/// Two hot spots on VC 0 (DBBM over 2 VCs: even destinations on VC 0): nodes 2, 4 and 6 send to
/// node 0 at line rate, nodes 10, 12 and 14 to node 8. Node 3 offers them a flit per cycle each
/// too, and 0.3 each to nodes 5 and 11, on VC 1, which receive from nobody else. With one send
/// memory the queue pairs to 0 and 8 fill it (128 packets each) and the messages to 5 and 11 are
/// posted only as packets to the hot nodes leave; split per VC, VC 1's part keeps room and nodes
/// 5 and 11 get what node 3 offers them.
#[test]
fn a_send_memory_split_per_vc_keeps_posting_on_the_free_vc() {
    let topo = Topology::kary_ntree(2, 4);
    let (warm, cycles) = (10_000, 20_000);
    let to_5_and_11 = |memory| {
        let mut p = small_params(RoutingMode::DModK, 5);
        p.switch.queuing = QueuingScheme::Dbbm { vcs: 2 };
        p.node_send_memory = memory;
        let flow = |dest, rate| Flow {
            dest: Destination::Node(dest),
            rate,
            message_flits: 16,
            start: 0,
            stop: warm + cycles,
            hot: false,
        };
        let flows: Vec<Vec<Flow>> = (0..16)
            .map(|n| match n {
                2 | 4 | 6 => vec![flow(0, 1.0)],
                10 | 12 | 14 => vec![flow(8, 1.0)],
                3 => vec![flow(0, 1.0), flow(8, 1.0), flow(5, 0.3), flow(11, 0.3)],
                _ => vec![],
            })
            .collect();
        let mut f = Fabric::<FEW_VCS>::build(&topo, p, &flows).unwrap();
        let got = |f: &Fabric<FEW_VCS>| -> u64 {
            [5, 11]
                .iter()
                .map(|&n| f.nodes()[n].stats().delivered_flits)
                .sum()
        };
        f.run(warm, &mut ()).unwrap_or_else(|v| panic!("{v}"));
        let before = got(&f);
        f.run(cycles, &mut ()).unwrap_or_else(|v| panic!("{v}"));
        f.check().unwrap();
        got(&f) - before
    };
    let shared = to_5_and_11(SendMemory::Shared);
    let per_vc = to_5_and_11(SendMemory::PerVc);
    // Node 3 offers nodes 5 and 11 0.6 flits per cycle: 12,000 flits in 20,000 cycles.
    assert!(
        per_vc >= 11_000,
        "split per VC: {per_vc} flits to nodes 5 and 11"
    );
    assert!(
        shared * 2 < per_vc,
        "one memory: {shared} flits, split: {per_vc}"
    );
}
