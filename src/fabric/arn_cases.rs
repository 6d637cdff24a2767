//! Directed ARN scenarios: the operation example of section 3.6 of Rocher-Gonzalez et al. (figure 4) and the three
//! cases of figure 1 (ARN consumed one stage up, several stages up, and never in incast).

use super::node::{Destination, Flow};
use super::tests::small_params;
use crate::wire::link::FEW_VCS;

/// ARN+AFI on 256-flit VCs (16 packets): deep enough that a congested VOQ stays above HCDTh
/// while packets leave it, as in the paper's 84-packet buffers.
fn arn_params(seed: u64) -> FabricParams {
    let mut p = small_params(RoutingMode::ArnAfi, seed);
    let mut sw = SwitchParams::with_paper_ratios(RoutingMode::ArnAfi, 256, 200);
    sw.arn_ttl = 2000;
    sw.arn_gap = 50;
    p.switch = sw;
    p.node_vc_capacity = 256;
    p
}
use super::topology::{Endpoint, SwitchSpec, Topology};
use super::*;
use crate::switch::{RoutingMode, SwitchEvent, SwitchParams};

type Events = Vec<(u64, u32, SwitchEvent)>;

fn sw(sw: u32, port: u16) -> Endpoint {
    Endpoint::Switch { sw, port }
}

fn custom(nodes: u32, switches: &[(u8, u16, u64)], links: &[(Endpoint, Endpoint)]) -> Topology {
    Topology {
        nodes,
        switches: switches
            .iter()
            .map(|&(stage, ports, up_ports)| SwitchSpec {
                ports,
                stage,
                up_ports,
            })
            .collect(),
        links: links.to_vec(),
        xgft: None,
        dragonfly: None,
        horizontal: 0,
    }
}

fn flow(dest: u32, stop: u64) -> Flow {
    flow_at(dest, 1.0, stop)
}

fn flow_at(dest: u32, rate: f64, stop: u64) -> Flow {
    Flow {
        dest: Destination::Node(dest),
        rate,
        message_flits: 16,
        start: 0,
        stop,
        hot: false,
    }
}

fn first(
    ev: &Events,
    what: impl Fn(u32, &SwitchEvent) -> bool,
) -> Option<&(u64, u32, SwitchEvent)> {
    ev.iter().find(|(_, s, e)| what(*s, e))
}

/// Figure 4: A (stage 1) reaches node 1 through B (deterministic) or C; node 2 also sends to
/// node 1 through B, so B's port toward D becomes a congestion root.
#[test]
fn figure_4_operation_example() {
    // Switches: A=0, B=1, C=2, D=3. Nodes: 0 (source at A), 1 (destination), 2 (source at B).
    let topo = custom(
        3,
        &[(1, 3, 0b110), (2, 3, 0), (2, 2, 0), (1, 3, 0b011)],
        &[
            (Endpoint::Node(0), sw(0, 0)),
            (sw(0, 1), sw(1, 0)),
            (sw(0, 2), sw(2, 0)),
            (Endpoint::Node(2), sw(1, 1)),
            (sw(1, 2), sw(3, 0)),
            (sw(2, 1), sw(3, 1)),
            (sw(3, 2), Endpoint::Node(1)),
        ],
    );
    let stop = 6000;
    let flows = vec![vec![flow(1, stop)], vec![], vec![flow(1, stop)]];
    let params = arn_params(3);
    let ttl = params.switch.arn_ttl as u64;
    let gap = params.switch.arn_gap as u64;
    let mut f = cycle_fabric(&topo, params, &flows);
    let mut ev: Events = Vec::new();
    f.run(stop, &mut ev).unwrap_or_else(|v| panic!("{v}"));
    // Let the sources empty their queues and the fabric drain.
    while f.nodes().iter().any(|n| n.is_busy()) || units(&f).iter().any(|s| !s.is_idle()) {
        f.step(&mut ev).unwrap_or_else(|v| panic!("{v}"));
        assert!(f.now() < 100_000, "no drain");
    }
    let drained = f.now();
    // Roots release within a gap of the drain; entries then live at most TTL more cycles.
    f.run(ttl + 2 * gap + 1000, &mut ev)
        .unwrap_or_else(|v| panic!("{v}"));
    f.check().unwrap();

    // Event 2: B detects the root at its port 2 (toward D), stage 2 downward: consumable at stage 1.
    let (t_root, _, root) = *first(&ev, |s, e| {
        s == 1 && matches!(e, SwitchEvent::RootDetected { port: 2, .. })
    })
    .expect("root at B port 2");
    let SwitchEvent::RootDetected { info, .. } = root else {
        unreachable!()
    };
    assert_eq!(info.root_info, 1);
    assert_eq!(info.dest, 1 << f.params().switch.lmc);
    // Event 3: B records it, not consumed.
    let (t_entry, ..) = *first(&ev, |s, e| {
        s == 1
            && matches!(
                e,
                SwitchEvent::EntryAdded {
                    consumed: false,
                    ..
                }
            )
    })
    .expect("entry at B");
    assert!(t_entry >= t_root);
    // Event 4: B sends an ARN upstream toward A (its input 0).
    let (t_sent, ..) = *first(&ev, |s, e| {
        s == 1 && matches!(e, SwitchEvent::ArnSent { port: 0, .. })
    })
    .expect("ARN from B to A");
    assert!(t_sent > t_entry);
    // Events 5-6: A receives it on its port 1 and consumes it, choosing port 2 (toward C).
    let (t_recv, ..) = *first(&ev, |s, e| {
        s == 0 && matches!(e, SwitchEvent::ArnReceived { port: 1, .. })
    })
    .expect("ARN at A");
    assert_eq!(t_recv, t_sent + f.params().link_latency as u64);
    let (t_cons, ..) = *first(&ev, |s, e| {
        s == 0
            && matches!(
                e,
                SwitchEvent::EntryAdded {
                    consumed: true,
                    alt_port: 2,
                    ..
                }
            )
    })
    .expect("A consumes the ARN");
    assert!(t_cons >= t_recv);
    // Event 7: packets of node 0 to node 1 are adapted through port 2.
    let (t_adapt, ..) = *first(&ev, |s, e| {
        s == 0 && matches!(e, SwitchEvent::Adapted { det: 1, out: 2, .. })
    })
    .expect("adaptation at A");
    assert!(t_adapt > t_cons);
    // Events 8-9: they cross C and reach node 1 in the AFC, marked adapted.
    assert!(f.nodes()[1].stats().delivered_adapted > 0);
    assert!(
        units(&f)[2].stats().flits_sent > 0,
        "C carried the adapted flow"
    );
    // Event 10: once traffic stops, nothing refreshes the entries after the roots release...
    let last_refresh = ev
        .iter()
        .filter(|(_, _, e)| {
            matches!(
                e,
                SwitchEvent::EntryAdded { .. } | SwitchEvent::ArnReceived { .. }
            )
        })
        .map(|(t, ..)| *t)
        .max()
        .unwrap();
    assert!(
        last_refresh < drained + 2 * gap,
        "refreshes went on after the drain"
    );
    // ... and the entries expire: every table is empty.
    for s in units(&f) {
        assert_eq!(
            s.arn_table().count(),
            0,
            "switch {} still has entries",
            s.id()
        );
    }
    // Everything injected was delivered.
    let t = f.totals();
    assert_eq!(t.nodes.injected_flits, t.nodes.delivered_flits);
}

/// Figure 1, flow A: a root at a stage-3 switch's downward port is consumed one stage up (stage 2).
#[test]
fn figure_1_root_at_stage_3_is_consumed_at_stage_2() {
    // S1U=0 (src node 0), S2U=1, S3a=2 (extra source node 3), S3b=3, S2D=4, S1D1=5 (node 1),
    // S1D2=6 (node 2).
    let topo = custom(
        4,
        &[
            (1, 2, 0b10),
            (2, 3, 0b110),
            (3, 3, 0),
            (3, 2, 0),
            (2, 4, 0b1100),
            (1, 2, 0b10),
            (1, 2, 0b10),
        ],
        &[
            (Endpoint::Node(0), sw(0, 0)),
            (sw(0, 1), sw(1, 0)),
            (sw(1, 1), sw(2, 0)),
            (sw(1, 2), sw(3, 0)),
            (Endpoint::Node(3), sw(2, 1)),
            (sw(2, 2), sw(4, 2)),
            (sw(3, 1), sw(4, 3)),
            (sw(4, 0), sw(5, 1)),
            (sw(4, 1), sw(6, 1)),
            (sw(5, 0), Endpoint::Node(1)),
            (sw(6, 0), Endpoint::Node(2)),
        ],
    );
    // The contending flow offers less, so the flow of interest holds the fullest VOQ at the root.
    let flows = vec![
        vec![flow(1, 8000)],
        vec![],
        vec![],
        vec![flow_at(2, 0.3, 8000)],
    ];
    let mut f = cycle_fabric(&topo, arn_params(5), &flows);
    let mut ev: Events = Vec::new();
    f.run(9000, &mut ev).unwrap_or_else(|v| panic!("{v}"));
    let root = first(&ev, |s, e| {
        s == 2 && matches!(e, SwitchEvent::RootDetected { port: 2, .. })
    })
    .expect("root at the stage-3 switch toward S2D");
    let SwitchEvent::RootDetected { info, .. } = root.2 else {
        unreachable!()
    };
    assert_eq!(info.root_info, 2);
    first(&ev, |s, e| {
        s == 1
            && matches!(
                e,
                SwitchEvent::EntryAdded {
                    consumed: true,
                    alt_port: 2,
                    ..
                }
            )
    })
    .expect("S2U (stage 2) consumes and re-routes through the other stage-3 switch");
    assert!(
        first(&ev, |s, e| {
            s == 0
                && matches!(e, SwitchEvent::EntryAdded { consumed: true, info: i, .. } if i.arn_id == info.arn_id)
        })
        .is_none(),
        "the stage-1 switch must not consume it"
    );
    first(&ev, |s, e| {
        s == 1 && matches!(e, SwitchEvent::Adapted { det: 1, out: 2, .. })
    })
    .expect("adapted at S2U");
    assert!(
        units(&f)[3].stats().flits_sent > 0,
        "the alternative stage-3 switch carries traffic"
    );
}

/// Figure 1, flow B: a root at a stage-2 switch's downward port travels up through stage 3 and
/// stage 2 without being consumed and is consumed at stage 1.
#[test]
fn figure_1_root_at_stage_2_is_consumed_at_stage_1() {
    // S1U=0 (src node 0), S2Ua=1, S2Ub=2, S3a=3, S3b=4, S2Da=5 (extra source node 3), S2Db=6,
    // S1D=7 (nodes 1 and 2).
    let topo = custom(
        4,
        &[
            (1, 3, 0b110),
            (2, 2, 0b10),
            (2, 2, 0b10),
            (3, 2, 0),
            (3, 2, 0),
            (2, 3, 0b10),
            (2, 2, 0b10),
            (1, 4, 0b1100),
        ],
        &[
            (Endpoint::Node(0), sw(0, 0)),
            (sw(0, 1), sw(1, 0)),
            (sw(0, 2), sw(2, 0)),
            (sw(1, 1), sw(3, 0)),
            (sw(2, 1), sw(4, 0)),
            (sw(3, 1), sw(5, 1)),
            (sw(4, 1), sw(6, 1)),
            (Endpoint::Node(3), sw(5, 2)),
            (sw(5, 0), sw(7, 2)),
            (sw(6, 0), sw(7, 3)),
            (sw(7, 0), Endpoint::Node(1)),
            (sw(7, 1), Endpoint::Node(2)),
        ],
    );
    // The contending flow offers less, so the flow of interest holds the fullest VOQ at the root.
    let flows = vec![
        vec![flow(1, 8000)],
        vec![],
        vec![],
        vec![flow_at(2, 0.3, 8000)],
    ];
    let mut f = cycle_fabric(&topo, arn_params(9), &flows);
    let mut ev: Events = Vec::new();
    f.run(9000, &mut ev).unwrap_or_else(|v| panic!("{v}"));
    let root = first(&ev, |s, e| {
        s == 5 && matches!(e, SwitchEvent::RootDetected { port: 0, .. })
    })
    .expect("root at S2Da toward S1D");
    let SwitchEvent::RootDetected { info, .. } = root.2 else {
        unreachable!()
    };
    assert_eq!(info.root_info, 1);
    for s in [3u32, 1] {
        first(&ev, |x, e| {
            x == s
                && matches!(
                    e,
                    SwitchEvent::EntryAdded {
                        consumed: false,
                        ..
                    }
                )
        })
        .unwrap_or_else(|| panic!("switch {s} records the ARN without consuming it"));
        first(&ev, |x, e| {
            x == s && matches!(e, SwitchEvent::ArnSent { .. })
        })
        .unwrap_or_else(|| panic!("switch {s} forwards the ARN upstream"));
    }
    first(&ev, |s, e| {
        s == 0
            && matches!(
                e,
                SwitchEvent::EntryAdded {
                    consumed: true,
                    alt_port: 2,
                    ..
                }
            )
    })
    .expect("the stage-1 switch consumes it and picks the other stage-2 switch");
    first(&ev, |s, e| {
        s == 0 && matches!(e, SwitchEvent::Adapted { det: 1, out: 2, .. })
    })
    .expect("adapted at S1U");
}

/// The incast of figure 1 (flow C): every node but 0 sends to node 0.
fn incast(consume: bool) -> Fabric<FEW_VCS> {
    let topo = Topology::kary_ntree(2, 3);
    let flows: Vec<Vec<Flow>> = (0..8)
        .map(|n| if n == 0 { vec![] } else { vec![flow(0, 8000)] })
        .collect();
    let mut p = arn_params(11);
    p.node_consumes_arns = consume;
    cycle_fabric(&topo, p, &flows)
}

/// Figure 1, flow C: incast at a leaf's port toward a node: ARNs reach the sources and no switch
/// consumes them or re-routes a packet. With `node_consumes_arns` off the sources only count them.
#[test]
fn figure_1_incast_arns_reach_the_nodes() {
    let mut f = incast(false);
    let mut ev: Events = Vec::new();
    f.run(9000, &mut ev).unwrap_or_else(|v| panic!("{v}"));
    let roots: Vec<_> = ev
        .iter()
        .filter_map(|(_, s, e)| match e {
            SwitchEvent::RootDetected { info, .. } => Some((*s, info.root_info)),
            _ => None,
        })
        .collect();
    assert!(
        roots.contains(&(0, 0)),
        "root at leaf 0 toward node 0: {roots:?}"
    );
    let t = f.totals();
    assert_eq!(t.switches.arns_consumed, 0);
    assert_eq!(t.switches.packets_adapted, 0);
    assert!(t.nodes.arns_received > 0, "the sources receive the ARNs");
    assert_eq!(t.nodes.arns_consumed, 0);
    assert_eq!(t.nodes.packets_adapted + t.nodes.delivered_adapted, 0);
}

/// Figure 1, flow C, with the sources consuming the ARNs: still no switch consumes or re-routes,
/// but the sources inject the incast flow into the AFC, where it arrives at node 0, while the
/// packets sent before the first ARN arrive on VC 0.
#[test]
fn figure_1_incast_isolated_at_the_sources() {
    let mut f = incast(true);
    let mut ev: Events = Vec::new();
    f.run(5000, &mut ev).unwrap_or_else(|v| panic!("{v}"));
    // Mid-run, the sources hold entries, each naming node 0 on VC 0.
    let entries: Vec<_> = f
        .nodes()
        .iter()
        .flat_map(|n| n.arn_entries(f.now()).collect::<Vec<_>>())
        .collect();
    assert!(!entries.is_empty());
    assert!(
        entries.iter().all(|&(dest, vc, _)| dest == 0 && vc == 0),
        "{entries:?}"
    );
    f.run(4000, &mut ev).unwrap_or_else(|v| panic!("{v}"));
    let t = f.totals();
    assert_eq!(t.switches.arns_consumed, 0);
    assert_eq!(t.switches.packets_adapted, 0);
    assert!(
        !ev.iter()
            .any(|(_, _, e)| matches!(e, SwitchEvent::Adapted { .. })),
        "no switch re-routes an incast packet"
    );
    assert_eq!(t.nodes.arns_consumed, t.nodes.arns_received);
    assert!(t.nodes.arns_consumed > 0);
    assert!(t.nodes.packets_adapted > 0, "{t:?}");
    assert!(t.nodes.delivered_adapted > 0, "{t:?}");
    assert!(
        t.nodes.delivered_adapted < t.nodes.delivered_packets,
        "the first packets travel on VC 0: {t:?}"
    );
}

/// The incast of figure 1 over many entry lifetimes (TTL 2,000 cycles), with or without adapted
/// packets refreshing the entries: returns (packets node 0 received from cycle 14,000 to 30,000,
/// how many of them came adapted).
fn long_incast(adapted_refresh: bool) -> (u64, u64) {
    let topo = Topology::kary_ntree(2, 3);
    let flows: Vec<Vec<Flow>> = (0..8)
        .map(|n| {
            if n == 0 {
                vec![]
            } else {
                vec![flow(0, 30_000)]
            }
        })
        .collect();
    let mut p = arn_params(11);
    p.switch.adapted_refresh = adapted_refresh;
    let mut f = cycle_fabric(&topo, p, &flows);
    f.run(14_000, &mut ()).unwrap_or_else(|v| panic!("{v}"));
    let before = f.totals().nodes;
    f.run(16_000, &mut ()).unwrap_or_else(|v| panic!("{v}"));
    let after = f.totals().nodes;
    (
        after.delivered_packets - before.delivered_packets,
        after.delivered_adapted - before.delivered_adapted,
    )
}

/// Isolated packets keep their tree's entries alive: once the sources isolate the incast, every
/// packet reaching node 0 comes through the AFC for as long as the root holds, eight TTLs on.
/// Without the refresh (pseudo-code 4 taken literally) entries lapse and packets leak into VC 0.
#[test]
fn isolated_incast_keeps_its_entries_alive() {
    let (delivered, adapted) = long_incast(true);
    assert!(delivered > 900, "node 0 stays busy: {delivered}");
    assert_eq!(adapted, delivered, "every packet comes through the AFC");
    let (delivered, adapted) = long_incast(false);
    assert!(adapted < delivered, "without refresh some come on VC 0");
}

/// The node's AFC send queue: node 3 sends half to the incast at node 0 and half to node 5.
/// Its isolated packets wait for the AFC in their own queue, so its traffic to node 5 keeps
/// (nearly) its offered 0.5 flits per cycle instead of waiting behind them in one FIFO.
#[test]
fn isolated_packets_do_not_hold_up_the_source_queue() {
    let topo = Topology::kary_ntree(2, 3);
    let flows: Vec<Vec<Flow>> = (0..8)
        .map(|n| match n {
            0 | 5 => vec![],
            3 => vec![flow_at(0, 0.5, 30_000), flow_at(5, 0.5, 30_000)],
            _ => vec![flow(0, 30_000)],
        })
        .collect();
    let mut f = cycle_fabric(&topo, arn_params(11), &flows);
    f.run(10_000, &mut ()).unwrap_or_else(|v| panic!("{v}"));
    let before = f.nodes()[5].stats().delivered_flits;
    f.run(20_000, &mut ()).unwrap_or_else(|v| panic!("{v}"));
    let n3 = f.nodes()[3].stats();
    let to_5 = f.nodes()[5].stats().delivered_flits - before;
    assert!(to_5 >= 9_000, "node 5 got {to_5} flits in 20,000 cycles");
    assert!(n3.packets_adapted > 0 && n3.generation_stalls > 0, "{n3:?}");
}

/// A fabric stepped by the cycle engine, which reports the switches' events to the observer.
fn cycle_fabric(topo: &Topology, params: FabricParams, flows: &[Vec<Flow>]) -> Fabric<FEW_VCS> {
    let mut f = Fabric::<FEW_VCS>::build(topo, params, flows).unwrap();
    f.set_engine(crate::fabric::Engine::Cycle);
    f
}

/// The cycle engine's switches of `f`.
fn units(f: &Fabric<FEW_VCS>) -> &[crate::fabric::CycleUnit<FEW_VCS>] {
    f.cycle_units().expect("the cycle engine")
}
