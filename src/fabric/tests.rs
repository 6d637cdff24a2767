//! Whole-fabric tests: conservation, ordering and draining under every routing mode.

use super::node::{Destination, Flow};
use super::topology::Topology;
use super::*;
use crate::switch::RoutingMode;

/// Small-fabric parameters: 64-flit VCs, 16-flit packets, short timers.
pub(crate) fn small_params(routing: RoutingMode, seed: u64) -> FabricParams {
    let mut sw = SwitchParams::with_paper_ratios(routing, 64, 200);
    sw.max_packets = 64;
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

fn drain(f: &mut Fabric, limit: u64) {
    for _ in 0..limit {
        f.step(&mut ()).unwrap_or_else(|v| panic!("{v}"));
        let t = f.totals();
        if f.nodes().iter().all(|n| !n.is_busy()) && t.nodes.delivered_flits == t.nodes.injected_flits {
            return;
        }
    }
    panic!("fabric did not drain in {limit} cycles: {:?}", f.totals().nodes);
}

#[test]
fn uniform_traffic_conserves_and_drains_in_every_mode() {
    let topo = Topology::kary_ntree(2, 3);
    for mode in RoutingMode::ALL {
        let mut f = Fabric::build(&topo, small_params(mode, 7), &uniform(8, 0.6, 3000)).unwrap();
        f.run(3000, &mut ()).unwrap_or_else(|v| panic!("{}: {v}", mode.name()));
        drain(&mut f, 20_000);
        f.check().unwrap();
        let t = f.totals();
        assert!(t.nodes.delivered_packets > 500, "{}: {:?}", mode.name(), t.nodes);
        assert_eq!(t.nodes.delivered_packets, t.nodes.generated_packets, "{}", mode.name());
    }
}

#[test]
fn same_seed_same_result_different_seed_different() {
    let topo = Topology::kary_ntree(2, 3);
    let run = |seed| {
        let mut f = Fabric::build(&topo, small_params(RoutingMode::Oblivious, seed), &uniform(8, 0.5, 2000)).unwrap();
        f.run(2500, &mut ()).unwrap();
        f.totals()
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}
