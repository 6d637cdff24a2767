//! The switch lockstep's cases (`testbenches/switch_hdl.rs`): seeded random link traffic on the
//! cycle engine and switches recorded in situ in fabric runs on the event engine, each a
//! recording to make and replay.

use arnsim::cli::scenarios;
use arnsim::config::Scenario;
use arnsim::fabric::record::first_root;
use arnsim::fabric::{Engine, Fabric};
use arnsim::trace::recording::record_run;
use arnsim::wire::link::FEW_VCS;
use std::io::Write;
use std::path::Path;

pub type Make = Box<dyn Fn(&Path) -> Result<String, String> + Send + Sync>;

/// One recording to make and replay; `weight` orders the work (ports times cycles).
pub struct Case {
    pub name: String,
    pub weight: u64,
    pub make: Make,
}

pub fn random_case(ports: u64, routing: &str, scheme: &[&str], cycles: u64, seed: u64) -> Case {
    let mut args: Vec<String> = vec![
        "--ports".into(),
        ports.to_string(),
        "--routing".into(),
        routing.into(),
        "--cycles".into(),
        cycles.to_string(),
        "--seed".into(),
        seed.to_string(),
    ];
    if ports > 4 {
        args.extend([
            "--vc-capacity".into(),
            "24".into(),
            "--lmc".into(),
            "2".into(),
        ]);
    }
    args.extend(scheme.iter().map(|s| s.to_string()));
    let vcs = if ports > 4 { 4 } else { 2 };
    let fcfs = if scheme.contains(&"fcfs") {
        "_fcfs"
    } else {
        ""
    };
    let fecn = if scheme.contains(&"--fecn") {
        "_fecn"
    } else {
        ""
    };
    let qcn = if scheme.contains(&"--qcn") {
        "_qcn"
    } else {
        ""
    };
    Case {
        name: format!("random_p{ports}_v{vcs}_{routing}{fcfs}{fecn}{qcn}"),
        weight: ports * cycles,
        make: Box::new(move |out: &Path| {
            let out = out.to_string_lossy().into_owned();
            let mut a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            a.extend(["--out", &out]);
            super::random_link::record(&a).map(|s| format!("{} {s}", a[..a.len() - 2].join(" ")))
        }),
    }
}

/// Cycles of each 12-port random case: `ARNSIM_SWITCH_HDL_P12_CYCLES`, or 300,000 (the 4-port
/// cases run 1,000,000; a 12-port replay runs at about a tenth of their speed).
pub fn p12_cycles() -> u64 {
    match std::env::var("ARNSIM_SWITCH_HDL_P12_CYCLES") {
        Ok(s) => s.parse().unwrap_or_else(|_| {
            panic!("ARNSIM_SWITCH_HDL_P12_CYCLES={s}: not a whole number of cycles")
        }),
        Err(_) => 300_000,
    }
}

/// The random-traffic cases: every routing mode on both switches; seven of them with 30 % of the
/// SL-to-VL entries remapped, three arbitrating FCFS and three marking FECN.
pub fn random_cases() -> Vec<Case> {
    let m = 1_000_000;
    let m12 = p12_cycles();
    vec![
        // 4 ports, 2 VCs: 1Q and the AFC under AFI, two regular VCs otherwise.
        random_case(
            4,
            "dmodk",
            &["--queuing", "dbbm", "--qvcs", "2", "--sl2vl", "30"],
            m,
            11,
        ),
        random_case(
            4,
            "oblivious",
            &["--queuing", "vftree", "--qvcs", "2", "--qarg", "2"],
            m,
            12,
        ),
        random_case(
            4,
            "adaptive_th",
            &[
                "--queuing",
                "flow2sl",
                "--qvcs",
                "2",
                "--qarg",
                "16",
                "--qcn",
                "6:2:10",
            ],
            m,
            13,
        ),
        random_case(4, "adaptive_th_afi", &["--queuing", "1q"], m, 14),
        random_case(
            4,
            "arn",
            &[
                "--queuing",
                "dbbm",
                "--qvcs",
                "2",
                "--sl2vl",
                "30",
                "--arbitration",
                "fcfs",
            ],
            m,
            15,
        ),
        random_case(
            4,
            "arn_afi",
            &["--queuing", "1q", "--fecn", "6:2:3:5"],
            m,
            16,
        ),
        random_case(
            4,
            "fa",
            &[
                "--queuing",
                "dbbm",
                "--qvcs",
                "2",
                "--sl2vl",
                "30",
                "--arbitration",
                "fcfs",
            ],
            m,
            17,
        ),
        random_case(
            4,
            "smodk",
            &["--queuing", "dbbm", "--qvcs", "2", "--smodk-div", "2"],
            m,
            18,
        ),
        // Snooped AR: a four-entry table whose entries live 300 cycles, fed by the CNMs the
        // switch makes and those arriving (storms of one source included).
        random_case(
            4,
            "snoop_ar",
            &["--queuing", "1q", "--qcn", "6:2:10", "--snoop", "4:300"],
            m,
            19,
        ),
        // Flow routing: four-entry route caches (often full), setups and teardowns of four
        // connections per pair, first come, first served as in Birk and Zdornov's baseline.
        random_case(
            4,
            "flow",
            &[
                "--queuing",
                "dbbm",
                "--qvcs",
                "2",
                "--route-cache",
                "4",
                "--arbitration",
                "fcfs",
            ],
            m,
            20,
        ),
        // 12 ports, 4 VCs: three regular VCs and the AFC under AFI, four otherwise.
        random_case(
            12,
            "dmodk",
            &["--queuing", "dbbm", "--qvcs", "4", "--sl2vl", "30"],
            m12,
            21,
        ),
        random_case(
            12,
            "oblivious",
            &[
                "--queuing",
                "vftree",
                "--qvcs",
                "4",
                "--qarg",
                "6",
                "--sl2vl",
                "30",
                "--qcn",
                "10:2:24",
            ],
            m12,
            22,
        ),
        random_case(
            12,
            "adaptive_th",
            &[
                "--queuing",
                "flow2sl",
                "--qvcs",
                "4",
                "--qarg",
                "48",
                "--arbitration",
                "fcfs",
            ],
            m12,
            23,
        ),
        random_case(
            12,
            "adaptive_th_afi",
            &["--queuing", "vftree", "--qvcs", "3", "--qarg", "6"],
            m12,
            24,
        ),
        random_case(
            12,
            "arn",
            &["--queuing", "dbbm", "--qvcs", "4", "--fecn", "20:0:1:0"],
            m12,
            25,
        ),
        random_case(
            12,
            "arn_afi",
            &[
                "--queuing",
                "flow2sl",
                "--qvcs",
                "3",
                "--qarg",
                "48",
                "--sl2vl",
                "30",
            ],
            m12,
            26,
        ),
        random_case(
            12,
            "fa",
            &[
                "--queuing",
                "dbbm",
                "--qvcs",
                "4",
                "--sl2vl",
                "30",
                "--fecn",
                "12:1:2:a5a",
            ],
            m12,
            27,
        ),
    ]
}

pub fn bundled(scenario: &str, sets: &[&str]) -> Result<Scenario, String> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    scenarios::load(scenario, &sets)
}

/// Records switch `sw` of `s`'s fabric for `cycles` cycles into `out`.
pub fn record_switch(s: &Scenario, sw: u32, cycles: u64, out: &Path) -> Result<(), String> {
    let mut f = Fabric::<FEW_VCS>::build(&s.topology, s.params.clone(), &s.flows)?;
    f.set_engine(Engine::Event);
    let mut w = std::io::BufWriter::new(std::fs::File::create(out).map_err(|e| e.to_string())?);
    record_run(&mut f, sw, cycles, &mut w, |_, _, _| {})?;
    w.flush().map_err(|e| e.to_string())
}

/// Every switch of the bundled scenario, each for the whole run.
pub fn in_situ_cases(scenario: &'static str) -> Vec<Case> {
    let s = bundled(scenario, &[]).expect("bundled scenario loads");
    let f = Fabric::<FEW_VCS>::build(&s.topology, s.params.clone(), &s.flows).expect("builds");
    let names = f.switch_names();
    names
        .into_iter()
        .enumerate()
        .map(|(sw, name)| {
            let ports = f.switches()[sw].ports() as u64;
            Case {
                name: format!("in_situ_{scenario}_{name}"),
                weight: ports * s.sim_cycles,
                make: Box::new(move |out: &Path| {
                    let s = bundled(scenario, &[])?;
                    record_switch(&s, sw as u32, s.sim_cycles, out)?;
                    Ok(format!(
                        "{scenario} switch {name}, event engine, cycles 0 to {}",
                        s.sim_cycles - 1
                    ))
                }),
            }
        })
        .collect()
}

/// Switches `switches` of the bundled `scenario` with `sets`, each for the whole run: cases
/// `in_situ_<scenario>_<tag>_<switch>`, each of `ports` ports, the switch named `<unit><switch>`
/// in what the case reports.
pub fn some_switches(
    scenario: &'static str,
    sets: &'static [&'static str],
    tag: &str,
    unit: &'static str,
    switches: &[u32],
    ports: u64,
) -> Vec<Case> {
    let s = bundled(scenario, sets).expect("bundled scenario loads");
    switches
        .iter()
        .map(|&sw| Case {
            name: format!("in_situ_{scenario}_{tag}_{sw}"),
            weight: ports * s.sim_cycles,
            make: Box::new(move |out: &Path| {
                let s = bundled(scenario, sets)?;
                record_switch(&s, sw, s.sim_cycles, out)?;
                Ok(format!(
                    "{scenario} ({}) {unit}{sw}, event engine, cycles 0 to {}",
                    sets.join(", "),
                    s.sim_cycles - 1
                ))
            }),
        })
        .collect()
}

/// Three routers of a Dragonfly whose SL-to-VL tables move packets to VL 1 after their global
/// hop (`routing_engine = "dfly_vl_hops"`), at load 0.6 for the whole run: recordings with
/// `sl2vl` lines from a fabric.
pub fn dragonfly_vl_hops_cases() -> Vec<Case> {
    const SETS: &[&str] = &["routing_engine=dfly_vl_hops", "traffic.load=0.6"];
    some_switches(
        "dragonfly72",
        SETS,
        "vl_hops_s0",
        "router s0_",
        &[0, 13, 35],
        7,
    )
}

/// FA with escape queues on the default fat tree (escape route D-mod-K, adaptive options the
/// other up ports; two regular VCs by DBBM, so the build is the default's): a leaf with the hot
/// spot, another leaf and a spine, for the whole run.
pub fn fa_cases() -> Vec<Case> {
    const SETS: &[&str] = &["routing=fa", "queuing=dbbm", "queuing_vcs=2"];
    some_switches("default", SETS, "fa", "switch ", &[1, 2, 4], 8)
}

/// First come, first served arbitration on the default fat tree under ARN+AFI: the leaf with
/// the hot spot and a spine, for the whole run.
pub fn fcfs_cases() -> Vec<Case> {
    const SETS: &[&str] = &["switch.output_arbitration=fcfs"];
    some_switches("default", SETS, "fcfs", "switch ", &[1, 4], 8)
}

/// FECN marking on the default fat tree under ARN+AFI (every eligible packet over a low
/// threshold) and under FA (every second one, half the ports marking as victims): the leaf with
/// the hot spot and a spine, for the whole run; and the whole of InfiniBand congestion control
/// (one-flit CNPs through the switches, sources slowed) at the hot spot's leaf, with 32 KB
/// buffers.
pub fn fecn_cases() -> Vec<Case> {
    const ARN: &[&str] = &["switch.cc_threshold=15", "switch.cc_marking_rate=0"];
    const FA: &[&str] = &[
        "routing=fa",
        "queuing=dbbm",
        "queuing_vcs=2",
        "switch.cc_threshold=14",
        "switch.cc_marking_rate=1",
        "switch.cc_victim_mask=0x55",
    ];
    // One-flit CNPs size the descriptor pool by the buffer's flits: 32 KB keeps the build small.
    const CCA: &[&str] = &[
        "switch.buffer=32KB",
        "rate_control=ib_cca",
        "switch.cc_marking_rate=0",
        "node.ccti_timer=5us",
        "node.ccti_increase=4",
    ];
    let mut cases = some_switches("default", ARN, "fecn", "switch ", &[1, 4], 8);
    cases.extend(some_switches("default", FA, "fecn_fa", "switch ", &[1], 8));
    cases.extend(some_switches("default", CCA, "ib_cca", "switch ", &[1], 8));
    cases
}

/// S-mod-K on the default fat tree: two leaves, for the whole run.
pub fn smodk_cases() -> Vec<Case> {
    const SMODK: &[&str] = &["routing=smodk"];
    some_switches("default", SMODK, "smodk", "switch ", &[0, 1], 8)
}

/// Snooped AR on QCN's notifications on the default fat tree: the leaf with the hot spot and a
/// spine, for the whole run.
pub fn snoop_cases() -> Vec<Case> {
    const SNOOP: &[&str] = &[
        "rate_control=qcn",
        "switch.qcn_qeq=4KB",
        "switch.qcn_sample=8KB",
        "routing=snoop_ar",
    ];
    some_switches("default", SNOOP, "snoop_ar", "switch ", &[1, 4], 8)
}

/// Flow routing on a communication phase (`phases16`: two superposed permutations of 256 KB
/// flows, each set up, sent and torn down): two leaves, for the whole phase.
pub fn flow_cases() -> Vec<Case> {
    const FLOW: &[&str] = &["routing=flow"];
    some_switches("phases16", FLOW, "flow", "switch ", &[0, 1], 8)
}

/// IEEE 802.1Qau on the default fat tree under ARN+AFI (congestion points with Qeq 2 KB, a
/// sample every 16 KB, CNMs routed upstream through the switches to the sources' reaction
/// points): the leaf with the hot spot and a spine, for the whole run.
pub fn qcn_cases() -> Vec<Case> {
    const QCN: &[&str] = &[
        "rate_control=qcn",
        "switch.qcn_qeq=2KB",
        "switch.qcn_sample=16KB",
    ];
    some_switches("default", QCN, "qcn", "switch ", &[1, 4], 8)
}

/// The first congestion-root switch of configuration 1 under H10, from reset to 500 us after its
/// root is detected.
pub fn config1_root_case() -> Case {
    Case {
        name: "in_situ_config1_h10_first_root".into(),
        weight: 12 * 120_000,
        make: Box::new(|out: &Path| {
            let sets = ["traffic.hot_start=10us", "switch.crt=20us", "sim_time=1ms"];
            let s = bundled("paper/config1_h10", &sets)?;
            let build = || Fabric::<FEW_VCS>::build(&s.topology, s.params.clone(), &s.flows);
            let (sw, detected) = first_root(build, s.sim_cycles)?.ok_or("no root forms")?;
            let until = detected + (500_000.0 / s.time_base.cycle_ns()).round() as u64;
            let before = (100_000.0 / s.time_base.cycle_ns()).round() as u64;
            if detected >= before {
                return Err(format!(
                    "the root is detected at cycle {detected}, more than 100 us after reset"
                ));
            }
            record_switch(&s, sw, until + 1, out)?;
            let name = build()?.switch_names()[sw as usize].clone();
            Ok(format!(
                "paper/config1_h10 switch {name}, event engine, root detected at cycle \
                 {detected}, cycles 0 to {until}"
            ))
        }),
    }
}
