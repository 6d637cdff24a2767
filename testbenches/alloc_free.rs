//! Stepping allocates nothing: a counting global allocator watches 100,000 steady-state cycles
//! of a loaded fabric (every routing mode's machinery: detectors, ARN table, AFC, FA's escape
//! queues), on one thread and on two, and with 16 VCs per port (a fabric of 16 VC lanes), on the
//! event engine and the cycle engine (Dragonflies layered over VLs and FA on an irregular fabric
//! on both); the cycle engine's switches, replaying every switch of such a fabric recorded on
//! the event engine, allocate nothing in their steps; and a fabric whose end nodes replay an MPI
//! trace (24 ranks placed at random on 9 nodes: ring allreduces, all-to-alls and point-to-point
//! rounds) allocates nothing from its first cycle to its last rank's finish (after the first
//! cycle, in which a thread pool starts its workers), on both engines.

use arnsim::blocks::congestion_point::QcnPoint;
use arnsim::blocks::fecn_marker::FecnMarking;
use arnsim::cli::scenarios;
use arnsim::config::TimeBase;
use arnsim::cycle::compare::Replay;
use arnsim::fabric::node::{CaCongestion, Destination, Flow, QcnReaction, RATE_ONE, SendMemory};
use arnsim::fabric::topology::Topology;
use arnsim::fabric::{Engine, Fabric, FabricParams};
use arnsim::replay::{Mapping, Replayer};
use arnsim::switch::{QueuingScheme, RoutingMode, SwitchParams, packet_slots};
use arnsim::wire::link::{FEW_VCS, MAX_VCS};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    let mut failed = 0;
    let mut passed = 0;
    for mode in [
        RoutingMode::Oblivious,
        RoutingMode::AdaptiveThAfi,
        RoutingMode::ArnAfi,
        RoutingMode::Fa,
    ] {
        let (topo, params, flows) = loaded_fabric(mode);
        let mut f = Fabric::<FEW_VCS>::build(&topo, params, &flows).expect("fabric");
        f.set_engine(Engine::Event);
        let mut replays: Vec<Replay> = (0..f.switches().len())
            .map(|s| Replay::new(f.cycle_twin(s)))
            .collect();
        let all: Vec<u32> = (0..replays.len() as u32).collect();
        let (mut allocs, mut mismatch) = (0u64, None);
        let r = f.run_recorded(30_000, &mut (), &all, &mut |sw, c, ins, outs| {
            let before = ALLOCS.load(Ordering::Relaxed);
            let r = replays[sw as usize].check(c, ins, outs);
            // Cycles of warm-up first: the count starts at cycle 5,000.
            if c >= 5_000 {
                allocs += ALLOCS.load(Ordering::Relaxed) - before;
            }
            if let Err(e) = r {
                mismatch.get_or_insert(format!("switch {sw}: {e}"));
            }
            Ok(())
        });
        let steps: u64 = replays.iter().map(|r| r.cycles()).sum();
        if r.is_err() || mismatch.is_some() || allocs != 0 {
            failed += 1;
            println!(
                "FAIL   cycle engine, {}: {r:?} {mismatch:?}, {allocs} allocations",
                mode.name()
            );
        } else {
            passed += 1;
            println!(
                "ok     cycle engine, {:<16} {steps} switch-cycles, 0 allocations",
                mode.name()
            );
        }
    }
    let cases = [
        (RoutingMode::DModK, 1),
        (RoutingMode::AdaptiveThAfi, 1),
        (RoutingMode::ArnAfi, 1),
        (RoutingMode::ArnAfi, 2),
    ];
    for (mode, threads) in cases {
        let (topo, params, flows) = loaded_fabric(mode);
        let ok =
            steady_state::<FEW_VCS>(mode.name(), &topo, params, &flows, threads, Engine::Cycle);
        if ok {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    // InfiniBand's 16 VLs: DBBM over 15 regular VCs and the AFC.
    let (topo, mut params, flows) = loaded_fabric(RoutingMode::ArnAfi);
    params.switch.queuing = QueuingScheme::Dbbm { vcs: 15 };
    params.switch.max_packets = packet_slots(16, params.switch.vc_capacity, 1);
    let ok = steady_state::<MAX_VCS>("arn_afi, dbbm", &topo, params, &flows, 1, Engine::Cycle);
    if ok {
        passed += 1;
    } else {
        failed += 1;
    }
    // The event engine (D-mod-K), on 4 lanes (one thread and two) and on 16 (DBBM over 15 VCs).
    let (topo, mut params, flows) = loaded_fabric(RoutingMode::DModK);
    let ok = steady_state::<FEW_VCS>(
        "event engine",
        &topo,
        params.clone(),
        &flows,
        1,
        Engine::Event,
    );
    let ok2 = steady_state::<FEW_VCS>(
        "event engine",
        &topo,
        params.clone(),
        &flows,
        2,
        Engine::Event,
    );
    params.switch.queuing = QueuingScheme::Dbbm { vcs: 15 };
    params.switch.max_packets = packet_slots(15, params.switch.vc_capacity, 1);
    let ok16 = steady_state::<MAX_VCS>("event, dbbm", &topo, params, &flows, 1, Engine::Event);
    // Under Oblivious, Adaptive-Th + AFI and ARN + AFI (the routing stage a cycle after the
    // heads; detectors, ARN tables and ARNs between parts), two threads.
    let mut oks = vec![ok, ok2, ok16];
    for mode in [
        RoutingMode::Oblivious,
        RoutingMode::AdaptiveThAfi,
        RoutingMode::ArnAfi,
        RoutingMode::Fa,
    ] {
        let (topo, params, flows) = loaded_fabric(mode);
        let name = format!("event, {}", mode.name());
        oks.push(steady_state::<FEW_VCS>(
            &name,
            &topo,
            params,
            &flows,
            2,
            Engine::Event,
        ));
    }
    // InfiniBand congestion control: FECN marking at every output over a low threshold, CNPs and
    // the sources' rate limiters, on both engines.
    for (engine, name) in [
        (Engine::Cycle, "cycle, ib_cca"),
        (Engine::Event, "event, ib_cca"),
    ] {
        let (topo, mut params, flows) = loaded_fabric(RoutingMode::DModK);
        params.switch.fecn = FecnMarking {
            threshold: 8,
            rate: 0,
            min_len: 1,
            victims: 0,
        };
        params.switch.max_packets = packet_slots(1, params.switch.vc_capacity, 1);
        params.ca_congestion = Some(CaCongestion {
            ccti_increase: 2,
            ccti_limit: 40,
            ccti_timer: 500,
            ipd_step: 4,
            limiters: 16,
        });
        oks.push(steady_state::<FEW_VCS>(
            name, &topo, params, &flows, 2, engine,
        ));
    }
    // QCN: congestion points sampling every packet over a low equilibrium, CNMs queued and
    // passed on through the switches, the sources' reaction points, on both engines.
    for (engine, name) in [(Engine::Cycle, "cycle, qcn"), (Engine::Event, "event, qcn")] {
        let (topo, mut params, flows) = loaded_fabric(RoutingMode::DModK);
        params.switch.qcn = QcnPoint {
            qeq: 8,
            w: 2,
            sample: 1,
        };
        params.qcn_reaction = Some(QcnReaction {
            gd: 512,
            bc_limit: 64,
            timer: 500,
            fast_recovery: 5,
            r_ai: RATE_ONE / 2000,
            r_hai: RATE_ONE / 200,
            min_rate: RATE_ONE / 1000,
            limiters: 16,
        });
        oks.push(steady_state::<FEW_VCS>(
            name, &topo, params, &flows, 2, engine,
        ));
    }
    for ok in oks {
        if ok {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    // A Dragonfly whose paths are layered over VLs: D3R's SLs held by the HCAs (two threads), and
    // the VL raised after the global hop by the routers' SL-to-VL tables; FA with escape routes
    // on an irregular fabric near saturation, half of the packets adaptive, so that packets
    // leave adaptive queues for escape ones (two threads).
    let bundled_cases: [(&str, &str, &[&str], usize); 3] = [
        (
            "d3r_2vl",
            "dragonfly72",
            &["routing_engine=d3r_2vl", "traffic.load=0.6"],
            2,
        ),
        (
            "dfly_vl_hops",
            "dragonfly72",
            &["routing_engine=dfly_vl_hops", "traffic.load=0.6"],
            1,
        ),
        (
            "fa, irregular16",
            "irregular16",
            &[
                "routing=fa",
                "routing_engine=fa_updn",
                "traffic.load=0.9",
                "traffic.adaptive_share=0.5",
            ],
            2,
        ),
    ];
    for (label, name, set, threads) in bundled_cases {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        let s = scenarios::load(name, &set).expect("bundled scenario");
        for engine in [Engine::Cycle, Engine::Event] {
            let label = format!("{}, {label}", engine.name());
            let (t, p, f) = (&s.topology, s.params.clone(), &s.flows);
            if steady_state::<FEW_VCS>(&label, t, p, f, threads, engine) {
                passed += 1;
            } else {
                failed += 1;
            }
        }
    }
    for engine in [Engine::Cycle, Engine::Event] {
        for threads in [1, 2] {
            if replay_case(threads, engine) {
                passed += 1;
            } else {
                failed += 1;
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}

/// Runs the fabric on `V` VC lanes, `threads` threads and `engine` for 20,000 cycles of
/// warm-up, then counts the allocations of 100,000 more; whether there were none.
fn steady_state<const V: usize>(
    name: &str,
    topo: &Topology,
    params: FabricParams,
    flows: &[Vec<Flow>],
    threads: usize,
    engine: Engine,
) -> bool {
    let mut f = Fabric::<V>::build(topo, params, flows).expect("fabric");
    f.set_engine(engine);
    f.set_threads(threads);
    f.run(20_000, &mut ()).expect("warm-up");
    let before = ALLOCS.load(Ordering::Relaxed);
    let r = f.run(100_000, &mut ());
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    let t = f.totals();
    assert!(t.nodes.delivered_packets > 10_000, "the fabric was loaded");
    if let Err(v) = r {
        println!("FAIL   {name} on {threads} thread(s): {v}");
        false
    } else if allocs != 0 {
        println!("FAIL   {name} on {threads} thread(s): {allocs} allocations in 100,000 cycles");
        false
    } else {
        println!(
            "ok     {name:<16} {threads} thread(s), {} VCs, 100000 cycles, 0 allocations ({} packets delivered, {} roots, {} adapted, {} marked FECN, {} CNPs)",
            f.params().switch.vcs(),
            t.nodes.delivered_packets,
            t.switches.roots_detected,
            t.switches.packets_adapted,
            t.switches.packets_marked,
            t.nodes.cnps_sent
        );
        true
    }
}

/// The fabric of [`loaded_fabric`] with its end nodes replaying a trace, on `threads` threads:
/// whether it ran to the last rank's finish without an allocation after its first cycle.
fn replay_case(threads: usize, engine: Engine) -> bool {
    let p = 24;
    let mut text = format!("ranks {p}\n");
    for r in 0..p {
        let (right, left) = ((r + 1) % p, (r + p - 1) % p);
        for i in 0..3 {
            text += &format!("{r} compute {}ns\n{r} allreduce 65536\n", 100 * (r + i));
            text += &format!("{r} irecv {left} req=1\n{r} isend {right} 3000 req=2\n{r} waitall\n");
            text += &format!("{r} alltoall 512\n{r} send {left} 64\n{r} recv {right}\n");
        }
    }
    let program = arnsim::replay::load(&text, "generated").expect("trace");
    let (topo, params, _) = loaded_fabric(RoutingMode::ArnAfi);
    let idle = vec![Vec::new(); topo.nodes as usize];
    let mut f = Fabric::<FEW_VCS>::build(&topo, params, &idle).expect("fabric");
    let mapping = Mapping::random(p, topo.nodes, 42).expect("mapping");
    let ranks = Replayer::build_all(&program, &mapping, &TimeBase::default()).expect("replayers");
    f.attach_replay(ranks).expect("attach");
    f.set_engine(engine);
    f.set_threads(threads);
    // The thread pool starts its workers in the first cycle stepped.
    let mut r = f.run(1, &mut ());
    let before = ALLOCS.load(Ordering::Relaxed);
    while r.is_ok() && !f.replay_finished() && f.now() < 2_000_000 {
        r = f.run(1000, &mut ());
    }
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    let ok = r.is_ok() && f.replay_finished() && allocs == 0;
    println!(
        "{}  trace replay, {} engine, on {threads} thread(s): {} messages, {} packets delivered, finished: {}, cycle {}, {allocs} allocations {r:?}",
        if ok { "ok   " } else { "FAIL " },
        engine.name(),
        program.messages().len(),
        f.totals().nodes.delivered_packets,
        f.replay_finished(),
        f.now()
    );
    ok
}

/// A 3-ary 2-tree under uniform traffic at 0.7 plus a hot spot on node 0, so that roots, ARNs
/// and adaptation occur.
fn loaded_fabric(mode: RoutingMode) -> (Topology, FabricParams, Vec<Vec<Flow>>) {
    let mut sw = SwitchParams::with_paper_ratios(mode, 128, 300);
    sw.arn_ttl = 3000;
    sw.arn_gap = 50;
    let params = FabricParams {
        switch: sw,
        link_latency: 3,
        mtu_flits: 16,
        node_vc_capacity: 128,
        seed: 1,
        watchdog_cycles: 10_000,
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
    let topo = Topology::kary_ntree(3, 2);
    let flows: Vec<Vec<Flow>> = (0..topo.nodes)
        .map(|n| {
            let mut v = vec![Flow {
                dest: Destination::Uniform,
                rate: 0.7,
                message_flits: 16,
                start: 0,
                stop: u64::MAX,
                hot: false,
            }];
            if n % 3 == 1 {
                v.push(Flow {
                    dest: Destination::Node(0),
                    rate: 0.3,
                    message_flits: 16,
                    start: 0,
                    stop: u64::MAX,
                    hot: true,
                });
            }
            v
        })
        .collect();
    (topo, params, flows)
}
