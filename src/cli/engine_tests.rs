//! `arnsim run` on the default event engine against `--engine cycle`: the same bytes in every
//! output (summary less its wall time, thread count and engine; CSVs, plot, VCD and its save file)
//! on every bundled scenario, under every routing mode and queuing scheme, and on the event engine
//! on any number of threads.

use super::interrupt::Stop;
use super::run::{How, WaveRequest, run};
use super::scenarios::BUNDLED;
use crate::fabric::Engine;
use crate::run::Stepping;
use std::path::{Path, PathBuf};

/// The outputs of a run folder, file by file, the summary's wall time left out.
fn outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let mut bytes = std::fs::read(p).unwrap();
            if name == "summary.json" {
                let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                v.as_object_mut().unwrap().remove("wall_seconds");
                v.as_object_mut().unwrap().remove("threads");
                v.as_object_mut().unwrap().remove("engine");
                bytes = v.to_string().into_bytes();
            }
            (name, bytes)
        })
        .collect()
}

/// The event engine's `summary.json` of the [`same_bytes`] run of `name` under `base`.
fn event_summary(base: &Path, name: &str) -> serde_json::Value {
    let text =
        std::fs::read_to_string(base.join(name).join("event/summary.json")).expect("summary");
    serde_json::from_str(&text).expect("json")
}

fn run_threads(engine: Engine, threads: usize, name: &str, set: &[String], dir: &Path, dump: bool) {
    let waves = dump.then(|| WaveRequest {
        vcd: Some(dir.join("fabric.vcd")),
        fst: None,
        scopes: vec!["fabric.s2_*.out*".into(), "fabric.s1_0.*".into()],
        from: None,
        to: None,
        trigger_before: None,
    });
    run_or_fail(engine, threads, name, set, dir, waves).unwrap_or_else(|e| panic!("{e}"));
}

/// [`run_threads`], a failed run's message (a deadlock the watchdog found) returned.
fn run_or_fail(
    engine: Engine,
    threads: usize,
    name: &str,
    set: &[String],
    dir: &Path,
    waves: Option<WaveRequest>,
) -> Result<(), String> {
    let how = How {
        step: Stepping {
            engine,
            threads,
            stop: &Stop::never(),
            ranks: None,
        },
        quiet: false,
    };
    run(name, Some(dir.to_path_buf()), set, waves, None, &how)
        .map_err(|e| format!("{name} on {engine:?}: {}", e.message))
}

/// Runs `name` with `set` on both engines into `base`, and asserts the same outputs.
fn same_bytes(base: &Path, name: &str, set: &[String], dump: bool) {
    let dir = |e: &str| base.join(name.replace('/', "_")).join(e);
    let waves = |d: &Path| {
        dump.then(|| WaveRequest {
            vcd: Some(d.join("fabric.vcd")),
            fst: None,
            scopes: vec!["fabric.s2_*.out*".into(), "fabric.s1_0.*".into()],
            from: None,
            to: None,
            trigger_before: None,
        })
    };
    let ran = |e: Engine, d: &Path| run_or_fail(e, 1, name, set, d, waves(d));
    let (a, b) = (
        ran(Engine::Event, &dir("event")),
        ran(Engine::Cycle, &dir("cycle")),
    );
    // A run the watchdog stops fails alike on both, with the same report.
    let strip = |r: Result<(), String>| r.map_err(|e| e.split_once(": ").map(|x| x.1.to_string()));
    assert_eq!(strip(a), strip(b), "{name}");
    let (event, cycle) = (outputs(&dir("event")), outputs(&dir("cycle")));
    assert_eq!(
        event.iter().map(|f| &f.0).collect::<Vec<_>>(),
        cycle.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for ((file, a), (_, b)) in event.iter().zip(&cycle) {
        assert!(a == b, "{name}: {file} differs between the engines");
    }
}

#[test]
fn both_engines_write_the_same_bytes_on_every_bundled_scenario() {
    let (_tmp, base) = crate::scratch::folder("engines");
    for (name, _) in BUNDLED {
        // The 16,000-node fabric is left to the event engine (the cycle engine holds it in 3.7 GB
        // and steps it at some 8 cycles/s): `the_largest_bundled_fabric_builds_and_runs`.
        if *name == "rlft40_uniform" {
            continue;
        }
        // The paper's fabrics for a few microseconds, their hot spots brought forward.
        let set: Vec<String> = if *name == "kary6_uniform" {
            vec!["sim_time=20us".into()]
        } else if name.starts_with("dragonfly") {
            // Fabrics with cycles, long enough for packets to cross several groups: 1,953
            // cycles at 100 Gb/s, 2,441 at the irregular fabric's 2.5 Gb/s.
            vec!["sim_time=10us".into(), "bin=1us".into()]
        } else if name.starts_with("irregular") {
            vec!["sim_time=500us".into(), "bin=50us".into()]
        } else if name.starts_with("paper/") {
            let us = if name.starts_with("paper/config2") {
                2
            } else {
                6
            };
            vec![
                format!("sim_time={us}us"),
                "bin=1us".into(),
                "traffic.hot_start=1us".into(),
                "switch.crt=1us".into(),
            ]
        } else {
            Vec::new()
        };
        same_bytes(&base, name, &set, *name == "default");
    }
}

/// Paths layered over VLs by their SL (D3R-3VL, DFSSSP on its eight VLs under ARN+AFI) or by the
/// routers' SL-to-VL tables (the VL raised after the global hop) on a Dragonfly at high load: the
/// same bytes on both engines.
#[test]
fn both_engines_write_the_same_bytes_under_routings_that_layer_paths_over_vls() {
    let (_tmp, base) = crate::scratch::folder("engines-sl");
    for set in [
        &["routing_engine=d3r_3vl", "routing=oblivious"][..],
        // The VL changes after the global hop in the routers' SL-to-VL tables.
        &["routing_engine=dfly_vl_hops"],
        // Nine VCs: a buffer of two MTUs per VC.
        &[
            "routing_engine=dfsssp",
            "routing=arn_afi",
            "switch.buffer=36KB",
            "node.buffer=36KB",
        ],
    ] {
        let mut set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        set.extend(["sim_time=10us", "bin=1us", "traffic.load=0.9"].map(String::from));
        same_bytes(&base, "dragonfly72", &set, false);
    }
}

/// First come, first served at every output, on the hot-spot fat tree and on FA's escape
/// queues (an escaping head takes a new stamp).
#[test]
fn both_engines_write_the_same_bytes_under_fcfs_arbitration() {
    let (_tmp, base) = crate::scratch::folder("engines-fcfs");
    let fcfs = "switch.output_arbitration=fcfs".to_string();
    same_bytes(&base, "default", std::slice::from_ref(&fcfs), true);
    let fa = [fcfs, "sim_time=300us".into(), "traffic.load=0.9".into()];
    same_bytes(&base, "irregular64_fa", &fa, false);
}

/// InfiniBand congestion control (FECN marking at every output, CNPs, the sources' rate
/// limiters) on the hot-spot fat tree, with a short timer and a marking rate of 0 so that the
/// indices rise and fall within the run, on the irregular fabric under FA (its 256-byte packets
/// all eligible) and on the 6-ary tree under D-mod-K: the same bytes on both engines.
#[test]
fn both_engines_write_the_same_bytes_under_infiniband_congestion_control() {
    let (_tmp, base) = crate::scratch::folder("engines-cc");
    let cc = [
        "rate_control=ib_cca",
        "switch.cc_marking_rate=0",
        "node.ccti_timer=5us",
        "node.ccti_increase=4",
    ]
    .map(String::from);
    same_bytes(&base, "default", &cc, true);
    let mut fa = cc.to_vec();
    fa.extend(
        [
            "switch.cc_packet_size=0",
            "routing=fa",
            "routing_engine=fa_updn",
            "traffic.adaptive_share=0.5",
            "sim_time=300us",
            "traffic.load=0.9",
        ]
        .map(String::from),
    );
    same_bytes(&base, "irregular16", &fa, false);
    // D-mod-K places a head in its queue at its arrival, a cycle before its routing stage.
    let mut dmodk = cc.to_vec();
    dmodk.extend(["routing=dmodk", "switch.cc_packet_size=0", "sim_time=30us"].map(String::from));
    same_bytes(&base, "kary6_uniform", &dmodk, false);
    // Every run slowed sources.
    for name in ["default", "irregular16", "kary6_uniform"] {
        let s = event_summary(&base, name);
        let becns = s["congestion_control"]["becns_received"].as_u64();
        assert!(becns.is_some_and(|b| b > 100), "{name}: {becns:?} BECNs");
    }
}

/// IEEE 802.1Qau (congestion points at every output, CNMs upstream through the switches, the
/// sources' reaction points) on the hot-spot fat tree under D-mod-K and ARN+AFI, and on the
/// irregular fabric under FA, with a low equilibrium and short timers so that rates fall and
/// recover within the run: the same bytes on both engines, and every run slowed sources.
#[test]
fn both_engines_write_the_same_bytes_under_qcn() {
    let (_tmp, base) = crate::scratch::folder("engines-qcn");
    let qcn = [
        "rate_control=qcn",
        "switch.qcn_qeq=4KB",
        "switch.qcn_sample=8KB",
        "node.qcn_timer=5us",
        "node.qcn_bc_limit=16KB",
    ]
    .map(String::from);
    let mut dmodk = qcn.to_vec();
    dmodk.push("routing=dmodk".into());
    same_bytes(&base, "default", &dmodk, true);
    let mut fa = qcn.to_vec();
    fa.extend(
        [
            "routing=fa",
            "routing_engine=fa_updn",
            "traffic.adaptive_share=0.5",
            "sim_time=300us",
            "traffic.load=0.9",
        ]
        .map(String::from),
    );
    same_bytes(&base, "irregular16", &fa, false);
    // Two threads: CNMs cross between the parts.
    let two = base.join("threads2");
    run_or_fail(Engine::Event, 2, "irregular16", &fa, &two, None).expect("two threads");
    assert!(
        outputs(&two) == outputs(&base.join("irregular16/event")),
        "two threads differ"
    );
    for name in ["default", "irregular16"] {
        let s = event_summary(&base, name);
        let got = s["qcn"]["cnms_received_by_nodes"].as_u64();
        assert!(
            got.is_some_and(|n| n > 20),
            "{name}: {got:?} CNMs at the sources"
        );
    }
}

/// Snooped AR on QCN's notifications: on the default fat tree both engines write the same
/// bytes, waveforms included, and on configuration 1's hot spot two threads write what one
/// does; the switches absorbed notifications and rerouted around them, and the destinations
/// resequenced what the rerouting reordered.
#[test]
fn both_engines_write_the_same_bytes_under_snooped_ar() {
    let (_tmp, base) = crate::scratch::folder("engines-snoop");
    let set = [
        "rate_control=qcn",
        "switch.qcn_qeq=4KB",
        "switch.qcn_sample=8KB",
        "node.qcn_timer=5us",
        "node.qcn_bc_limit=16KB",
        "routing=snoop_ar",
    ]
    .map(String::from);
    same_bytes(&base, "default", &set, true);
    let s = event_summary(&base, "default");
    let snooped = &s["qcn"]["snooped"];
    for key in [
        "cnms_absorbed_by_switches",
        "packets_rerouted",
        "packets_resequenced",
    ] {
        let n = snooped[key].as_u64();
        assert!(n.is_some_and(|n| n > 10), "{key}: {n:?}");
    }
    let mut hot = set.to_vec();
    hot.extend(["sim_time=60us", "bin=10us"].map(String::from));
    let (one, two) = (base.join("h10-1"), base.join("h10-2"));
    run_or_fail(Engine::Event, 1, "paper/config1_h10", &hot, &one, None).expect("one thread");
    run_or_fail(Engine::Event, 2, "paper/config1_h10", &hot, &two, None).expect("two threads");
    assert!(outputs(&one) == outputs(&two), "two threads differ");
}

/// Sixteen VCs per port (DBBM over 15 regular VCs and the AFC, ARN+AFI) on the default 4-ary
/// 2-tree: the run, its waveform dump included, is the same on both engines.
#[test]
fn both_engines_write_the_same_bytes_with_16_vcs() {
    let (_tmp, base) = crate::scratch::folder("engines16");
    let set = ["queuing=dbbm", "queuing_vcs=15"].map(String::from);
    same_bytes(&base, "default", &set, true);
}

/// Under each queuing scheme on configuration 1 and through its hot spot, under Oblivious,
/// Adaptive-Th and ARN, each with and without AFI, FA with escape queues, a deadlock, a trace
/// replay and communication phases: the same bytes on both engines.
#[test]
fn both_engines_write_the_same_bytes_under_every_mode_and_scheme() {
    let (_tmp, base) = crate::scratch::folder("engines-event");
    let runs: &[(&str, &[&str])] = &[
        ("default", &[]),
        ("figure4", &[]),
        ("kary6_uniform", &["sim_time=20us"]),
        ("irregular16", &["sim_time=500us", "bin=50us"]),
        ("paper/config1_rnd", &["sim_time=20us", "bin=1us"]),
        (
            "paper/config1_rnd",
            &["sim_time=20us", "bin=1us", "queuing=dbbm"],
        ),
        (
            "paper/config1_rnd",
            &["sim_time=20us", "bin=1us", "queuing=vftree"],
        ),
        (
            "paper/config1_rnd",
            &["sim_time=20us", "bin=1us", "queuing=flow2sl"],
        ),
        (
            "paper/config1_h10",
            &["sim_time=30us", "bin=1us", "traffic.hot_start=5us"],
        ),
        (
            "paper/config2_h25",
            &["sim_time=3us", "bin=1us", "traffic.hot_start=1us"],
        ),
        (
            "paper/config1_rnd",
            &["sim_time=20us", "bin=1us", "routing=oblivious"],
        ),
        (
            "paper/config1_h10",
            &[
                "sim_time=30us",
                "bin=1us",
                "traffic.hot_start=5us",
                "routing=adaptive_th",
            ],
        ),
        (
            "paper/config1_h10",
            &[
                "sim_time=30us",
                "bin=1us",
                "traffic.hot_start=5us",
                "routing=adaptive_th_afi",
                "queuing=vftree",
            ],
        ),
        ("default", &["routing=arn_afi"]),
        H10_ARN_AFI,
        (
            "paper/config1_h10",
            &[
                "sim_time=60us",
                "bin=1us",
                "traffic.hot_start=5us",
                "switch.crt=10us",
                "routing=arn",
                "queuing=dbbm",
            ],
        ),
        // FA with escape queues, a Dragonfly routed minimally on one VL into a deadlock (the
        // watchdog's report and the outputs marked incomplete), and a trace replay.
        (
            "irregular64_fa",
            &["sim_time=300us", "bin=20us", "routing=fa"],
        ),
        ("dragonfly72", &["traffic.load=0.9"]),
        ("trace_halo", &[]),
        // Communication phases: superposed permutations that end, adaptive and oblivious.
        ("phases16", &["routing=arn_afi", "switch.crt=1us"]),
        (
            "phases16",
            &[
                "routing=oblivious",
                "traffic.permutations=3",
                "traffic.message=8KB",
            ],
        ),
        // The injection schemes, which wait for the node's transmitter.
        ("phases16", &["node.injection=ps", "traffic.permutations=3"]),
        ("phases16", &["node.injection=svc", "routing=oblivious"]),
        // Flow routing: setups, teardowns and their acknowledgements, with route caches of two
        // entries (often full) and periodic selection.
        (
            "phases16",
            &[
                "routing=flow",
                "traffic.permutations=3",
                "switch.route_cache_entries=2",
                "node.injection=ps",
            ],
        ),
    ];
    for (k, (name, set)) in runs.iter().enumerate() {
        let set = with_routing(set);
        // The small fat trees with a dump of their last stage's outputs and a leaf switch.
        let dump = matches!(*name, "default" | "figure4");
        same_bytes(&base.join(k.to_string()), name, &set, dump);
    }
}

/// Configuration 1 through its hot spot under ARN + AFI, with a CRT short enough that roots,
/// ARNs and isolation happen in 60 µs.
const H10_ARN_AFI: (&str, &[&str]) = (
    "paper/config1_h10",
    &[
        "sim_time=60us",
        "bin=1us",
        "traffic.hot_start=5us",
        "switch.crt=10us",
        "routing=arn_afi",
    ],
);

/// `set`, routed by D-mod-K unless it names a routing mode.
fn with_routing(set: &[&str]) -> Vec<String> {
    let mut set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    if !set.iter().any(|s| s.starts_with("routing=")) {
        set.push("routing=dmodk".into());
    }
    set
}

/// The event engine on two and three threads writes the bytes it writes on one, over fabrics with
/// one-cycle and longer links, through a hot spot, and under Oblivious, Adaptive-Th + AFI and
/// ARN + AFI.
#[test]
fn the_event_engine_writes_the_same_bytes_on_any_number_of_threads() {
    let (_tmp, base) = crate::scratch::folder("engines-event-threads");
    let runs: &[(&str, &[&str])] = &[
        ("default", &[]),
        ("kary6_uniform", &["sim_time=20us"]),
        ("irregular16", &["sim_time=500us", "bin=50us"]),
        (
            "paper/config1_h10",
            &["sim_time=30us", "bin=1us", "traffic.hot_start=5us"],
        ),
        ("kary6_uniform", &["sim_time=20us", "routing=oblivious"]),
        (
            "paper/config1_h10",
            &[
                "sim_time=30us",
                "bin=1us",
                "traffic.hot_start=5us",
                "routing=adaptive_th_afi",
            ],
        ),
        ("default", &["routing=arn_afi"]),
        H10_ARN_AFI,
        ("phases16", &["routing=oblivious"]),
        ("phases16", &["node.injection=ps"]),
        ("phases16", &["routing=flow", "traffic.permutations=2"]),
    ];
    for (k, (name, set)) in runs.iter().enumerate() {
        let set = with_routing(set);
        let dir = |t: usize| base.join(format!("{k}-{t}"));
        for t in 1..=3 {
            run_threads(Engine::Event, t, name, &set, &dir(t), false);
        }
        let one = outputs(&dir(1));
        for t in 2..=3 {
            assert!(
                one == outputs(&dir(t)),
                "{name}: {t} threads differ from one"
            );
        }
    }
}
