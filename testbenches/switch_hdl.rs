//! The whole switch in SystemVerilog (`hdl-ref/switch.sv`) in lockstep with the Rust switch:
//! recordings replayed through its Verilated model (`testbenches/hdl/replay_switch.sh`), every
//! port output compared in every cycle.
//!
//! - Seeded random link traffic that obeys the protocol (`switch_hdl/random_link.rs`), recorded
//!   on the cycle engine, for each of the ten routing modes on a 4-port switch with 2 VCs
//!   (1,000,000 cycles) and, S-mod-K, snooped AR and flow routing apart, on a 12-port switch
//!   with 4 VCs (300,000 cycles, or
//!   `ARNSIM_SWITCH_HDL_P12_CYCLES`), three of them (ARN and FA on 4 ports, Adaptive-Th on 12)
//!   arbitrating first come, first served, three marking FECN, and two (Adaptive-Th on 4 ports,
//!   Oblivious on 12) with QCN congestion points and CNMs arriving (under AFI the scheme's
//!   regular VCs and the AFC; the modes without AFI use two or four regular VCs of DBBM, vFtree
//!   or Flow2SL).
//! - In situ, recorded while the fabric runs on the event engine: every switch of `default` and
//!   of `figure4` for the whole run, three routers of `dragonfly72` with the VL raised after the
//!   global hop, three switches of `default` under FA, two under first come, first served
//!   arbitration, two marking FECN under ARN+AFI and one under FA, one under InfiniBand
//!   congestion control, two under QCN (CNMs in and out), two leaves under S-mod-K, two leaves of
//!   `phases16` under flow routing (setups, teardowns, acknowledgements), and the
//!   first congestion-root switch
//!   of configuration 1 under H10 with ARN+AFI (hot spot at 10 us, CRT 20 us) from reset, less
//!   than 100 us before its root is detected, to 500 us after.
//!
//! The switch's configuration (routing mode, scheme, id, stage, up ports, seed) is an input of
//! `switch.sv`, so the model is built once per parameter set (ports, VCs, buffers, thresholds):
//! first every recording is made, then every distinct build, then every replay, each stage two at
//! a time (the machine's cores), longest first. A recording that replays with 0 mismatches is
//! deleted; one that does not is kept, with both models' waves of the 64 cycles up to the first
//! mismatch beside it (`<case>.waves/`: the cycle engine's and the Verilated switch's dumps with
//! the same names, merged with a GTKWave save file that shows them port by port).

#[path = "switch_hdl/cases.rs"]
mod cases;
#[path = "harness/jobs.rs"]
mod jobs;
#[path = "switch_hdl/random_link.rs"]
mod random_link;

use cases::{
    config1_root_case, dragonfly_vl_hops_cases, fa_cases, fcfs_cases, fecn_cases, flow_cases,
    in_situ_cases, qcn_cases, random_cases, smodk_cases, snoop_cases,
};
use jobs::{at_a_time, target};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testbenches/hdl/replay_switch.sh")
}

/// `replay_switch.sh REC OPTION`, which must succeed.
fn script_with(rec: &Path, option: &str) -> Result<Output, String> {
    let o = Command::new("bash")
        .arg(script())
        .arg(rec)
        .arg(option)
        .output()
        .map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr).into_owned());
    }
    Ok(o)
}

/// The -G values of a recording: its build.
fn gflags(rec: &Path) -> Result<String, String> {
    let o = script_with(rec, "--gflags")?;
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Builds the model of `rec`'s parameter set; how long it took.
fn build(rec: &Path) -> Result<f64, String> {
    let t0 = Instant::now();
    script_with(rec, "--build-only")?;
    Ok(t0.elapsed().as_secs_f64())
}

/// Replays `rec` through the Verilated switch: whether every cycle matched, and the replay's
/// report lines.
fn replay(rec: &Path) -> (bool, String) {
    let vcd = rec.with_extension("mismatch.vcd");
    let out = Command::new("bash")
        .arg(script())
        .arg(rec)
        .arg("--vcd")
        .arg(&vcd)
        .output();
    match out {
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout).into_owned()
                + &String::from_utf8_lossy(&o.stderr);
            let keep: Vec<&str> = text
                .lines()
                .filter(|l| {
                    l.contains("switch replay")
                        || l.contains("mismatch")
                        || l.contains("Assertion")
                        || l.contains("%Error")
                        || l.contains("not a cycle line")
                })
                .collect();
            let ok = o.status.success() && text.contains(" cycles, 0 mismatches");
            let mut said = keep.join("; ");
            if !ok && let Some(cycle) = mismatch_cycle(&text) {
                said += &format!("; {}", both_waves(rec, cycle));
            }
            (ok, said)
        }
        Err(e) => (false, format!("replay_switch.sh: {e}")),
    }
}

/// The recording cycle of the first mismatch a replay reports.
fn mismatch_cycle(text: &str) -> Option<u64> {
    let at = text.find(" mismatches at cycle ")? + " mismatches at cycle ".len();
    text[at..].split_whitespace().next()?.parse().ok()
}

/// Both models' waves of the 64 cycles up to `cycle` (testbenches/hdl/waves_pair.sh): the cycle
/// engine's and the Verilated switch's dumps and their merge with its save file, kept beside
/// the recording.
fn both_waves(rec: &Path, cycle: u64) -> String {
    let out = rec.with_extension("waves");
    let r = Command::new("bash")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testbenches/hdl/waves_pair.sh"))
        .arg(rec)
        .args(["--from", &cycle.saturating_sub(64).to_string()])
        .args(["--to", &cycle.to_string()])
        .arg("--out")
        .arg(&out)
        .env("ARNSIM", env!("CARGO_BIN_EXE_arnsim"))
        .output();
    match r {
        Ok(_) if out.join("both.gtkw").exists() => format!(
            "both models' waves up to the mismatch in {} (gtkwave {})",
            out.display(),
            out.join("both.gtkw").display()
        ),
        Ok(o) => format!(
            "waves_pair.sh wrote no merged dump: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => format!("waves_pair.sh: {e}"),
    }
}

fn main() {
    let dir = target().join("switch-hdl");
    std::fs::create_dir_all(&dir).expect("folder");
    let filter = std::env::var("ARNSIM_SWITCH_HDL_FILTER").unwrap_or_default();
    let mut cases = random_cases();
    cases.extend(in_situ_cases("default"));
    cases.extend(in_situ_cases("figure4"));
    cases.extend(dragonfly_vl_hops_cases());
    cases.extend(fa_cases());
    cases.extend(fcfs_cases());
    cases.extend(fecn_cases());
    cases.extend(qcn_cases());
    cases.extend(smodk_cases());
    cases.extend(snoop_cases());
    cases.extend(flow_cases());
    cases.push(config1_root_case());
    cases.retain(|c| c.name.contains(&filter));
    cases.sort_by_key(|c| std::cmp::Reverse(c.weight));
    let t0 = Instant::now();

    // 1. Recordings.
    let recorded = at_a_time(2, &cases, |c| {
        let rec = dir.join(format!("{}.rec", c.name));
        (c.make)(&rec).map(|what| (rec, what))
    });
    let t_rec = t0.elapsed().as_secs_f64();

    // 2. One build per parameter set, the largest first.
    let mut sets: Vec<(String, PathBuf, u64)> = Vec::new();
    for (c, r) in cases.iter().zip(&recorded) {
        if let Ok((rec, _)) = r
            && let Ok(g) = gflags(rec)
            && !sets.iter().any(|(s, _, _)| *s == g)
        {
            let size = g
                .split_whitespace()
                .filter_map(|f| f.strip_prefix("-GP=").or_else(|| f.strip_prefix("-GV=")))
                .filter_map(|v| v.parse::<u64>().ok())
                .product::<u64>();
            sets.push((g, rec.clone(), size.max(1) * 1_000_000 + c.weight / 1000));
        }
    }
    sets.sort_by_key(|s| std::cmp::Reverse(s.2));
    let built = at_a_time(2, &sets, |(_, rec, _)| build(rec));
    for ((g, _, _), b) in sets.iter().zip(&built) {
        match b {
            Ok(secs) => println!("built  {g} in {secs:.0} s"),
            Err(e) => println!("FAIL   build {g}: {e}"),
        }
    }
    let t_build = t0.elapsed().as_secs_f64() - t_rec;

    // 3. Replays.
    let replays = at_a_time(2, &recorded, |r| match r {
        Ok((rec, _)) => {
            let t = Instant::now();
            let (ok, how) = replay(rec);
            if ok {
                let _ = std::fs::remove_file(rec);
            }
            (ok, format!("{how} ({:.0} s)", t.elapsed().as_secs_f64()))
        }
        Err(e) => (false, format!("recording failed: {e}")),
    });
    let t_replay = t0.elapsed().as_secs_f64() - t_rec - t_build;

    let mut failed = 0;
    for ((c, r), (ok, how)) in cases.iter().zip(&recorded).zip(&replays) {
        let what = r.as_ref().map(|(_, w)| w.as_str()).unwrap_or("");
        if *ok {
            println!("ok     {}: {what}: {how}", c.name);
        } else {
            failed += 1;
            println!("FAIL   {}: {what}: {how}", c.name);
        }
    }
    println!(
        "switch HDL lockstep: recordings {t_rec:.0} s, {} builds {t_build:.0} s, replays \
         {t_replay:.0} s",
        sets.len()
    );
    println!(
        "switch HDL lockstep: {} passed, {failed} failed",
        cases.len() - failed
    );
    if failed > 0 || cases.is_empty() {
        std::process::exit(1);
    }
}
