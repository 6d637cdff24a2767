//! Criterion bench: router-cycles per second of whole fabrics.
//!
//! The reference point of `docs/performance.md`: a 6-ary 3-tree (216 nodes, 108 switches of 12
//! ports), 2 VCs of 64 flits, 16-flit packets, uniform traffic at load 0.5.

use arnsim::fabric::node::{Destination, Flow};
use arnsim::fabric::topology::Topology;
use arnsim::fabric::{Fabric, FabricParams};
use arnsim::switch::{QueuingScheme, RoutingMode, SwitchParams};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn six_ary_three_tree() -> Fabric {
    let mut sw = SwitchParams::with_paper_ratios(RoutingMode::DModK, 64, 1000);
    sw.queuing = QueuingScheme::Dbbm { vcs: 2 };
    sw.max_packets = arnsim::switch::packet_slots(sw.vcs(), 64, 16);
    let params = FabricParams {
        switch: sw,
        link_latency: 1,
        mtu_flits: 16,
        node_vc_capacity: 64,
        seed: 1,
        watchdog_cycles: 100_000,
        check_order: false,
    };
    let topo = Topology::kary_ntree(6, 3);
    let flows: Vec<Vec<Flow>> = (0..topo.nodes)
        .map(|_| {
            vec![Flow {
                dest: Destination::Uniform,
                rate: 0.5,
                message_flits: 16,
                start: 0,
                stop: u64::MAX,
                hot: false,
            }]
        })
        .collect();
    let mut f = Fabric::build(&topo, params, &flows).expect("fabric");
    f.run(5_000, &mut ()).expect("warm-up");
    f
}

fn fabric(c: &mut Criterion) {
    let mut g = c.benchmark_group("fabric");
    g.sample_size(10);
    const CYCLES: u64 = 1_000;
    let mut f = six_ary_three_tree();
    let switches = f.switches().len() as u64;
    g.throughput(Throughput::Elements(CYCLES * switches));
    g.bench_function("kary6_n3_uniform_0.5_router_cycles", |b| {
        b.iter(|| f.run(CYCLES, &mut ()).expect("run"))
    });
    g.finish();
}

criterion_group!(benches, fabric);
criterion_main!(benches);
