//! Pinned outputs: what the model computes for three runs, held by SHA-256.
//!
//! Each run's `summary.json` (less its wall time), CSVs, plot and VCD are hashed and compared with
//! `testbenches/pinned/outputs.sha256` (the `sha256sum` format). Any change to what the model
//! computes, or to how it is written, fails here and names the file that changed. A change made on
//! purpose is re-pinned with
//!
//!     ARNSIM_REPIN=1 cargo test --test pinned
//!
//! and the reason goes into the commit message. The configuration-1 run is made on one and on two
//! threads: both must match the same pins.

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const PIN_FILE: &str = "testbenches/pinned/outputs.sha256";

/// One pinned run: a bundled scenario and the command-line arguments after it.
struct Run {
    label: &'static str,
    scenario: &'static str,
    args: &'static [&'static str],
}

const RUNS: &[Run] = &[
    Run {
        label: "default",
        scenario: "default",
        args: &[
            "--scope",
            "fabric.s2_*.out*",
            "--scope",
            "fabric.n5.*",
            "--trigger-before",
            "5us",
        ],
    },
    Run {
        label: "figure4",
        scenario: "figure4",
        args: &["--scope", "fabric.*"],
    },
    // Configuration 1 under H10 for 100 µs, the hot spot and the congestion root timer brought
    // forward so that roots, ARNs and adapted flows happen inside the window.
    Run {
        label: "config1_h10_100us",
        scenario: "paper/config1_h10",
        args: &[
            "--set",
            "sim_time=100us",
            "--set",
            "traffic.hot_start=10us",
            "--set",
            "switch.crt=20us",
            "--set",
            "bin=5us",
            "--scope",
            "fabric.s1_0.*",
            "--scope",
            "fabric.s3_*.out4.*",
            "--scope",
            "fabric.n4.*",
            "--from",
            "20us",
            "--to",
            "60us",
        ],
    },
    // An MPI trace replayed closed-loop: execution time and every rank's finish in the summary.
    Run {
        label: "trace_halo",
        scenario: "trace_halo",
        args: &[
            "--scope",
            "fabric.n*.queued",
            "--scope",
            "fabric.s1_0.*",
            "--from",
            "0us",
            "--to",
            "40us",
        ],
    },
];

/// The files of a run that are pinned, and how each is read before hashing.
const FILES: &[&str] = &[
    "summary.json",
    "efficiency.csv",
    "latency.csv",
    "efficiency.svg",
    "fabric.vcd",
    "fabric.gtkw",
];

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The bytes that are hashed: the summary less the lines of its wall time, thread count and
/// engine (the only fields that differ between two runs of the same scenario and seed), every
/// other file as written.
fn pinned_bytes(name: &str, bytes: Vec<u8>) -> Vec<u8> {
    if name != "summary.json" {
        return bytes;
    }
    let text = String::from_utf8(bytes).expect("summary.json is UTF-8");
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            !l.starts_with("\"wall_seconds\"")
                && !l.starts_with("\"threads\"")
                && !l.starts_with("\"engine\"")
        })
        .collect();
    assert!(
        kept.len() + 3 == text.lines().count(),
        "summary.json has no wall_seconds, threads and engine lines of their own"
    );
    kept.join("\n").into_bytes()
}

fn run_once(run: &Run, out: &Path, threads: &str) -> BTreeMap<String, String> {
    let _ = std::fs::remove_dir_all(out);
    let status = Command::new(env!("CARGO_BIN_EXE_arnsim"))
        .arg("run")
        .arg(run.scenario)
        .arg("--out")
        .arg(out)
        .arg("--threads")
        .arg(threads)
        .arg("--vcd")
        .arg(out.join("fabric.vcd"))
        .args(run.args)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("arnsim runs");
    assert!(
        status.success(),
        "{}: arnsim run failed: {status}",
        run.label
    );
    FILES
        .iter()
        .map(|f| {
            let bytes = std::fs::read(out.join(f))
                .unwrap_or_else(|e| panic!("{}: {f} not written: {e}", run.label));
            (
                format!("{}/{f}", run.label),
                sha256_hex(&pinned_bytes(f, bytes)),
            )
        })
        .collect()
}

fn read_pins(root: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root.join(PIN_FILE)).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split_once("  "))
        .map(|(h, f)| (f.to_string(), h.to_string()))
        .collect()
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let work = root.join("target").join("pinned");
    let mut got = BTreeMap::new();
    for run in RUNS {
        let one = run_once(run, &work.join(run.label), "1");
        if run.label.starts_with("config1") {
            let two = run_once(run, &work.join(format!("{}-2", run.label)), "2");
            assert_eq!(one, two, "{}: one and two threads differ", run.label);
        }
        got.extend(one);
    }
    if std::env::var_os("ARNSIM_REPIN").is_some() {
        let text: String = got.iter().map(|(f, h)| format!("{h}  {f}\n")).collect();
        let path = root.join(PIN_FILE);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        println!("re-pinned {} files into {PIN_FILE}", got.len());
        return;
    }
    let pins = read_pins(&root);
    let mut failed = 0;
    for (file, hash) in &got {
        match pins.get(file) {
            Some(p) if p == hash => {}
            Some(p) => {
                failed += 1;
                println!(
                    "CHANGED {file}: pinned {p}, now {hash} (outputs kept in {})",
                    work.display()
                );
            }
            None => {
                failed += 1;
                println!("UNPINNED {file}: {hash}");
            }
        }
    }
    for file in pins.keys().filter(|f| !got.contains_key(*f)) {
        failed += 1;
        println!("MISSING {file}: pinned but no longer written");
    }
    if failed > 0 {
        println!(
            "what the model computes has changed; if on purpose, re-pin with `ARNSIM_REPIN=1 cargo test --test pinned` and give the reason in the commit"
        );
    }
    println!(
        "pinned outputs: {} passed, {failed} failed",
        got.len() - failed.min(got.len())
    );
    if failed > 0 {
        std::process::exit(1);
    }
}
