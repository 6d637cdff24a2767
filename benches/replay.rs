//! Criterion bench: one recorded switch, the same work on the cycle engine and the Verilated HDL.
//! The stimulus is what the first congestion-root switch of configuration 1 under H10 with ARN+AFI
//! (hot spot at 10 us, CRT 20 us, as in the figure-6 runs) received from reset to 500 us after its
//! root is detected; the cycle engine replays it from reset (`fabric::switch_rig`), and the Verilated
//! `hdl-ref/switch.sv` replays the same recording (written to `target/bench-root-switch.rec`)
//! with `testbenches/hdl/replay_switch.sh`, built once before timing, every output compared in
//! every cycle as the engines do (`docs/performance.md`). Without Verilator on the machine the
//! third is left out, with a note.

use arnsim::cli::scenarios::BUNDLED;
use arnsim::config::Scenario;
use arnsim::cycle::{PortIn, PortOut};
use arnsim::fabric::Fabric;
use arnsim::fabric::record::first_root;
use arnsim::fabric::switch_rig::{RigStimulus, SwitchRig};
use arnsim::trace::recording::{RecordingHeader, record_run};
use arnsim::wire::link::FEW_VCS;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::io::Write;

fn target() -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

fn replay_switch() -> std::process::Command {
    let mut c = std::process::Command::new("bash");
    c.arg(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testbenches/hdl/replay_switch.sh"),
    )
    .arg(target().join("bench-root-switch.rec"));
    c
}

fn root_switch() -> (RecordingHeader, RigStimulus<FEW_VCS>) {
    let text = BUNDLED
        .iter()
        .find(|(n, _)| *n == "paper/config1_h10")
        .map(|(_, t)| *t)
        .expect("bundled");
    let sets = ["traffic.hot_start=10us", "switch.crt=20us", "sim_time=1ms"];
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let s = Scenario::from_text("paper/config1_h10", text, &sets).expect("loads");
    let build = || Fabric::<FEW_VCS>::build(&s.topology, s.params.clone(), &s.flows);
    let (sw, detected) = first_root(build, s.sim_cycles)
        .expect("runs")
        .expect("a root forms");
    let cycles = detected + (500_000.0 / s.time_base.cycle_ns()).round() as u64 + 1;
    let mut f = build().expect("builds");
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(target().join("bench-root-switch.rec")).expect("create"),
    );
    let mut frames: Vec<(u64, Vec<PortIn>, Vec<PortOut>)> = Vec::new();
    let header = record_run(&mut f, sw, cycles, &mut file, |c, i, o| {
        if i.iter().any(|p| *p != PortIn::default()) || o.iter().any(|p| *p != PortOut::default()) {
            frames.push((c, i.to_vec(), o.to_vec()));
        }
    })
    .expect("records");
    file.flush().expect("write");
    let ports = header.wiring.out_capacity.len();
    let st = RigStimulus::<FEW_VCS>::from_frames(
        ports,
        cycles,
        frames.iter().map(|(c, i, o)| (*c, &i[..], &o[..])),
    );
    (header, st)
}

fn recorded_root_switch(c: &mut Criterion) {
    let (header, st) = root_switch();
    let mut g = c.benchmark_group("recorded_root_switch");
    g.sample_size(10);
    g.throughput(Throughput::Elements(st.cycles()));
    g.bench_function("cycle", |b| {
        b.iter(|| {
            let sent = SwitchRig::new(&header).run(&st).expect("runs");
            assert_eq!(sent, st.heads_out());
        })
    });
    let verilator = std::process::Command::new("verilator")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let built = verilator
        && replay_switch()
            .arg("--build-only")
            .status()
            .is_ok_and(|s| s.success());
    if built {
        // The process is timed whole: start, header, LFT writes and every cycle compared.
        g.bench_function("verilator", |b| {
            b.iter_custom(|iters| {
                let t0 = std::time::Instant::now();
                for _ in 0..iters {
                    let o = replay_switch().output().expect("runs");
                    assert!(
                        String::from_utf8_lossy(&o.stdout).contains(" cycles, 0 mismatches"),
                        "the Verilated switch replays the recording"
                    );
                }
                t0.elapsed()
            })
        });
    } else {
        eprintln!(
            "recorded_root_switch/verilator left out: {}",
            if verilator {
                "the Verilated build failed"
            } else {
                "no verilator on this machine"
            }
        );
    }
    g.finish();
}

criterion_group!(benches, recorded_root_switch);
criterion_main!(benches);
