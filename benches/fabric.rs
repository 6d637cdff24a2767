//! Criterion bench: router-cycles per second of whole fabrics, on one thread and on two.
//!
//! - The reference point of `docs/performance.md`: a 6-ary 3-tree (216 nodes, 108 switches of 12
//!   ports), 2 VCs of 64 flits, 16-flit packets, uniform traffic at load 0.5.
//! - Configuration 1 of the paper as bundled (`paper/config1_h10`: 432 nodes, 180 switches,
//!   ARN+AFI, 1Q), in its first phase (uniform traffic at full load), after 10,000 cycles of warm-up,
//!   stepped cycle by cycle (window 1) and in windows of the link latency (6 cycles); on one thread
//!   also with a VCD of a few scopes written every cycle (the price of tracing).

use arnsim::fabric::node::{Destination, Flow, SendMemory};
use arnsim::fabric::topology::Topology;
use arnsim::fabric::{Fabric, FabricParams};
use arnsim::switch::{QueuingScheme, RoutingMode, SwitchParams};
use arnsim::trace::fabric_vcd::FabricVcd;
use arnsim::wire::link::FEW_VCS;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// The binary's allocator (`src/main.rs`), so the fabrics lie in the pages a run gives them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn six_ary_three_tree() -> Fabric<FEW_VCS> {
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
        resequence: false,
        node_consumes_arns: true,
        node_send_memory: SendMemory::Shared,
        adaptive_share: 1.0,
        routing_engine: None,
        routing_phases: Default::default(),
        ca_congestion: None,
        qcn_reaction: None,
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
    let mut f = Fabric::<FEW_VCS>::build(&topo, params, &flows).expect("fabric");
    f.run(5_000, &mut ()).expect("warm-up");
    f
}

/// Configuration 1 after its warm-up, stepped in windows of `window` cycles (at most the link
/// latency, 6 cycles).
fn config1(window: u64) -> Fabric<FEW_VCS> {
    let s = arnsim::cli::run::load("paper/config1_h10", &[]).expect("bundled scenario");
    let mut f = Fabric::<FEW_VCS>::build(&s.topology, s.params.clone(), &s.flows).expect("fabric");
    f.set_window(window);
    f.run(10_000, &mut ()).expect("warm-up");
    f
}

fn fabric(c: &mut Criterion) {
    let mut g = c.benchmark_group("fabric");
    g.sample_size(10);
    const CYCLES: u64 = 1_000;
    let mut f = six_ary_three_tree();
    let switches = f.switches().len() as u64;
    g.throughput(Throughput::Elements(CYCLES * switches));
    for threads in [1, 2] {
        f.set_threads(threads);
        g.bench_function(
            format!("kary6_n3_uniform_0.5_router_cycles/{threads}_threads"),
            |b| b.iter(|| f.run(CYCLES, &mut ()).expect("run")),
        );
    }
    // A fresh fabric for each variant, so that all of them measure the same stretch of the run
    // (under full load the state keeps evolving).
    for threads in [1, 2] {
        for w in [1, 6] {
            let mut f = config1(w);
            f.set_threads(threads);
            g.throughput(Throughput::Elements(CYCLES * f.switches().len() as u64));
            g.bench_function(
                format!("config1_arn_afi_uniform_1.0_router_cycles/{threads}_threads_window_{w}"),
                |b| b.iter(|| f.run(CYCLES, &mut ()).expect("run")),
            );
        }
    }
    let mut f = config1(6);
    let path = std::env::temp_dir().join(format!("arnsim-bench-{}.vcd", std::process::id()));
    let scopes = vec![
        "fabric.s3_*.out4.*".to_string(),
        "fabric.s1_0.*".to_string(),
    ];
    let (mut vcd, signals) =
        FabricVcd::create(&path, &f, &scopes, (f.now(), f.now() + CYCLES)).expect("VCD file");
    let tap = vcd.tap(&f);
    g.bench_function(
        format!("config1_arn_afi_uniform_1.0_router_cycles/1_thread_vcd_{signals}_signals"),
        |b| {
            b.iter(|| {
                f.run_tapped(CYCLES, &mut (), &tap, &mut |c, w| {
                    vcd.samples(c, w, 0, u64::MAX).expect("VCD write")
                })
                .expect("run")
            })
        },
    );
    vcd.finish().expect("VCD flush");
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(path.with_extension("gtkw"));
    g.finish();
}

criterion_group!(benches, fabric);
criterion_main!(benches);
