//! The whole switch in SystemVerilog (`hdl-ref/switch.sv`) in lockstep with the Rust switch:
//! recordings replayed through its Verilated model (`testbenches/hdl/replay_switch.sh`), every
//! port output compared in every cycle.
//!
//! - Seeded random link traffic that obeys the protocol (`switch_hdl/random_link.rs`), recorded
//!   on the cycle engine: a 4-port switch with 2 VCs (1Q and the AFC) and a 12-port switch with
//!   4 VCs (DBBM's 3 and the AFC), both under ARN+AFI.
//! - In situ: a switch of the `default` fabric, recorded while the fabric runs on the fast engine,
//!   for the whole run.
//!
//! Models are built two at a time, the longest first, once per parameter set (reused when
//! present).

#[path = "switch_hdl/random_link.rs"]
mod random_link;

use arnsim::cli::scenarios::BUNDLED;
use arnsim::config::Scenario;
use arnsim::fabric::Fabric;
use arnsim::trace::recording::record_run;
use arnsim::wire::link::FEW_VCS;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn target() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// Records switch `name` of the bundled scenario `scenario` for its whole run.
fn record_in_situ(scenario: &str, name: &str, out: &Path) -> Result<String, String> {
    let text = BUNDLED
        .iter()
        .find(|(n, _)| *n == scenario)
        .map(|(_, t)| *t)
        .ok_or("no such scenario")?;
    let s = Scenario::from_text(scenario, text, &[]).map_err(|e| e.to_string())?;
    let mut f = Fabric::<FEW_VCS>::build(&s.topology, s.params.clone(), &s.flows)?;
    let sw = f
        .switch_names()
        .iter()
        .position(|n| n == name)
        .ok_or("no such switch")? as u32;
    let mut w = std::io::BufWriter::new(std::fs::File::create(out).map_err(|e| e.to_string())?);
    record_run(&mut f, sw, s.sim_cycles, &mut w, |_, _, _| {})?;
    w.flush().map_err(|e| e.to_string())?;
    Ok(format!(
        "{scenario} switch {name}, fast engine, {} cycles",
        s.sim_cycles
    ))
}

/// Replays `rec` through the Verilated switch; the replay's last lines.
fn replay(rec: &Path) -> (bool, String) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let t0 = Instant::now();
    let out = Command::new("bash")
        .arg(root.join("testbenches/hdl/replay_switch.sh"))
        .arg(rec)
        .output();
    let secs = t0.elapsed().as_secs_f64();
    match out {
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout).into_owned()
                + &String::from_utf8_lossy(&o.stderr);
            let keep: Vec<&str> = text
                .lines()
                .filter(|l| {
                    l.contains("switch replay")
                        || l.contains("built in")
                        || l.contains("mismatch")
                        || l.contains("Assertion")
                        || l.contains("%Error")
                })
                .collect();
            let ok = o.status.success() && text.contains(" cycles, 0 mismatches");
            (
                ok,
                format!("{} ({secs:.0} s with the build)", keep.join("; ")),
            )
        }
        Err(e) => (false, format!("replay_switch.sh: {e}")),
    }
}

fn main() {
    let dir = target().join("switch-hdl");
    std::fs::create_dir_all(&dir).expect("folder");
    type Make = Box<dyn Fn(&Path) -> Result<String, String> + Send + Sync>;
    let cases: Vec<(&str, Make)> = vec![
        (
            "random_p12_v4_arn_afi",
            Box::new(|out: &Path| {
                let out = out.to_string_lossy().into_owned();
                random_link::record(&[
                    "--ports",
                    "12",
                    "--queuing",
                    "dbbm",
                    "--qvcs",
                    "3",
                    "--cycles",
                    "300000",
                    "--vc-capacity",
                    "24",
                    "--out",
                    &out,
                ])
            }),
        ),
        (
            "random_p4_v2_arn_afi",
            Box::new(|out: &Path| {
                let out = out.to_string_lossy().into_owned();
                random_link::record(&["--ports", "4", "--cycles", "1000000", "--out", &out])
            }),
        ),
        (
            "in_situ_default_s2_1",
            Box::new(|out: &Path| record_in_situ("default", "s2_1", out)),
        ),
    ];
    // Two at a time, the longest first: each Verilator build takes one core.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..2 {
            sc.spawn(|| {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((name, make)) = cases.get(k) else {
                        break;
                    };
                    let rec = dir.join(format!("{name}.rec"));
                    let r = match make(&rec) {
                        Ok(what) => {
                            let (ok, how) = replay(&rec);
                            (k, name.to_string(), ok, format!("{what}: {how}"))
                        }
                        Err(e) => (k, name.to_string(), false, format!("recording failed: {e}")),
                    };
                    results.lock().expect("lock").push(r);
                }
            });
        }
    });
    let mut results = results.into_inner().expect("lock");
    results.sort_by_key(|r| r.0);
    let mut failed = 0;
    for (_, name, ok, how) in results {
        if ok {
            println!("ok     {name}: {how}");
        } else {
            failed += 1;
            println!("FAIL   {name}: {how}");
        }
    }
    println!(
        "switch HDL lockstep: {} passed, {failed} failed",
        cases.len() - failed
    );
    if failed > 0 {
        std::process::exit(1);
    }
}
