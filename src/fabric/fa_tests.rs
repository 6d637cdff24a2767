//! FA routing with escape paths (seed 002) on irregular fabrics: it never deadlocks where the
//! adaptive routes alone would, packets leave adaptive queues for their escape routes, the
//! packets that asked for the deterministic route keep their order, and it carries more than
//! up*/down*.

use super::subnet_manager::{RoutingEngine, deadlock};
use super::tests::{small_params, uniform};
use super::topology::{IrregularShape, Topology};
use super::*;
use crate::switch::RoutingMode;
use crate::wire::link::FEW_VCS;

fn irregular(switches: u32, seed: u64) -> Topology {
    Topology::irregular(IrregularShape {
        switches,
        links: 4,
        nodes_per_switch: 4,
        seed,
    })
    .unwrap()
}

/// FA over up*/down* escape routes, two options, 64-flit VCs and 16-flit packets (so each half
/// of a VC holds two packets), `share` of the packets asking for the adaptive options.
fn fa_params(share: f64, seed: u64) -> FabricParams {
    let mut p = small_params(RoutingMode::Fa, seed);
    p.routing_engine = Some(RoutingEngine::FaUpdn { options: 2 });
    p.adaptive_share = share;
    p.check_order = share < 1.0;
    p
}

fn run(topo: &Topology, p: FabricParams, rate: f64, cycles: u64) -> FabricTotals {
    let flows = uniform(topo.nodes, rate, cycles);
    let mut f = Fabric::<FEW_VCS>::build(topo, p, &flows).unwrap();
    f.run(cycles, &mut ()).unwrap_or_else(|v| panic!("{v}"));
    f.check().unwrap_or_else(|v| panic!("{v}"));
    f.totals()
}

#[test]
fn fa_escapes_and_keeps_deterministic_packets_in_order_at_full_load() {
    for seed in 1..=3 {
        let topo = irregular(16, seed);
        // The minimal routes alone close cycles of channels; the escape routes do not.
        let check = deadlock::of_fabric(&topo, &fa_params(0.5, seed))
            .unwrap()
            .unwrap();
        assert_eq!(check.cycle, None, "seed {seed}: {check}");
        let mut minhop = small_params(RoutingMode::Oblivious, seed);
        minhop.routing_engine = Some(RoutingEngine::Minhop);
        assert!(
            deadlock::of_fabric(&topo, &minhop)
                .unwrap()
                .unwrap()
                .cycle
                .is_some()
        );
        // Full load, half the packets adaptive: the watchdog (5,000 cycles) never fires, and
        // the in-order check of the deterministic half holds (both inside `run`).
        let t = run(&topo, fa_params(0.5, seed), 1.0, 20_000);
        assert!(t.switches.packets_adapted > 1_000, "seed {seed}: {t:?}");
        assert!(t.switches.packets_escaped > 100, "seed {seed}: {t:?}");
    }
}

#[test]
fn fa_carries_more_than_its_escape_routes_alone() {
    let topo = irregular(32, 1);
    let det = run(&topo, fa_params(0.0, 1), 0.6, 10_000);
    let fa = run(&topo, fa_params(1.0, 1), 0.6, 10_000);
    // No packet asks for an adaptive option: FA is up*/down*.
    assert_eq!(
        det.switches.packets_adapted + det.switches.packets_escaped,
        0
    );
    assert!(
        fa.nodes.delivered_flits as f64 > 1.1 * det.nodes.delivered_flits as f64,
        "FA {} flits, up*/down* {}",
        fa.nodes.delivered_flits,
        det.nodes.delivered_flits
    );
}

#[test]
fn without_room_for_a_packet_in_the_adaptive_half_fa_is_its_escape_routes() {
    // 16-flit VCs: half a VC is 8 credits, and a 16-flit packet never fits in the adaptive half
    // beside it, so every packet takes its escape route, as under `dmodk` on up*/down*.
    let topo = irregular(8, 2);
    let mut fa = fa_params(1.0, 4);
    fa.switch.vc_capacity = 16;
    fa.node_vc_capacity = 16;
    let mut det = fa.clone();
    det.switch.routing = RoutingMode::DModK;
    det.check_order = true;
    det.routing_engine = Some(RoutingEngine::Updn);
    let (a, b) = (run(&topo, fa, 0.3, 5_000), run(&topo, det, 0.3, 5_000));
    assert_eq!(a.switches.packets_adapted + a.switches.packets_escaped, 0);
    assert_eq!(a.nodes.delivered_flits, b.nodes.delivered_flits);
    assert_eq!(a.nodes.latency_sum, b.nodes.latency_sum);
}
