//! Criterion bench: cycles per second of one 12-port switch (12 end nodes) under full load.

use arnsim::fabric::node::{Destination, Flow, SendMemory};
use arnsim::fabric::topology::Topology;
use arnsim::fabric::{Fabric, FabricParams};
use arnsim::switch::{RoutingMode, SwitchParams};
use arnsim::wire::link::FEW_VCS;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn loaded_switch(mode: RoutingMode) -> Fabric<FEW_VCS> {
    // The paper's port: 5376-flit input buffer per VC, 64-flit MTU packets, 6-cycle links.
    let mut sw = SwitchParams::with_paper_ratios(mode, 5376, 976_563);
    sw.max_packets = arnsim::switch::packet_slots(sw.vcs(), 5376, 64);
    let params = FabricParams {
        switch: sw,
        link_latency: 6,
        mtu_flits: 64,
        node_vc_capacity: 5376,
        seed: 1,
        watchdog_cycles: 1_000_000,
        check_order: false,
        resequence: false,
        node_consumes_arns: true,
        node_send_memory: SendMemory::Shared,
        adaptive_share: 1.0,
        routing_engine: None,
        routing_phases: Default::default(),
        ca_congestion: None,
        qcn_reaction: None,
    };
    let topo = Topology::kary_ntree(12, 1);
    let flows: Vec<Vec<Flow>> = (0..topo.nodes)
        .map(|_| {
            vec![Flow {
                dest: Destination::Uniform,
                rate: 1.0,
                message_flits: 64,
                start: 0,
                stop: u64::MAX,
                hot: false,
            }]
        })
        .collect();
    let mut f = Fabric::<FEW_VCS>::build(&topo, params, &flows).expect("fabric");
    f.run(50_000, &mut ()).expect("warm-up");
    f
}

fn switch_full_load(c: &mut Criterion) {
    let mut g = c.benchmark_group("switch12_full_load");
    g.sample_size(20);
    const CYCLES: u64 = 10_000;
    g.throughput(Throughput::Elements(CYCLES));
    for mode in [RoutingMode::DModK, RoutingMode::ArnAfi] {
        let mut f = loaded_switch(mode);
        g.bench_function(mode.name(), |b| {
            b.iter(|| f.run(CYCLES, &mut ()).expect("run"))
        });
    }
    g.finish();
}

criterion_group!(benches, switch_full_load);
criterion_main!(benches);
