//! MPI ranks (`--features mpi`, `docs/distributed.md`): `mpirun -n N arnsim run` writes the
//! bytes a run in one process writes (its summary less the wall time and the thread count), for
//! 2 and 4 ranks (4 oversubscribed on two cores) and with 2 threads per rank, and so does a sweep; a SIGTERM to
//! `mpirun` stops every rank and leaves the outputs marked incomplete; a rank killed makes the
//! job end non-zero within seconds; bad input is refused before anything runs. A switch
//! recorded that another rank than rank 0 steps is recorded as in one process.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ARNSIM: &str = env!("CARGO_BIN_EXE_arnsim");

/// One case: a label, a bundled scenario and the arguments after it.
struct Case {
    label: &'static str,
    scenario: &'static str,
    args: &'static [&'static str],
}

const CASES: &[Case] = &[
    // With a VCD and an FST of switches and a node on both ranks, triggered by the first root
    // (`{out}`: the run's output folder).
    Case {
        label: "default",
        scenario: "default",
        args: &[
            "--set",
            "sim_time=100us",
            "--vcd",
            "{out}/f.vcd",
            "--fst",
            "{out}/f.fst",
            "--scope",
            "fabric.s2_*.out*",
            "--scope",
            "fabric.s1_0.*",
            "--scope",
            "fabric.n5.*",
            "--trigger-before",
            "5us",
        ],
    },
    // A switch recorded that a rank other than 0 steps: its recording is the one process's.
    Case {
        label: "default_recorded",
        scenario: "default",
        args: &["--set", "sim_time=30us", "--record-switch", "s1_3"],
    },
    // QCN: CNMs crossing between the ranks on the links' return directions, a recorded leaf
    // switch of the hot node on rank 1 carrying them.
    Case {
        label: "default_qcn",
        scenario: "default",
        args: &[
            "--set",
            "sim_time=100us",
            "--set",
            "routing=dmodk",
            "--set",
            "rate_control=qcn",
            "--set",
            "switch.qcn_qeq=4KB",
            "--set",
            "switch.qcn_sample=8KB",
            "--record-switch",
            "s1_1",
        ],
    },
    Case {
        label: "dragonfly72_d3r",
        scenario: "dragonfly72",
        args: &["--set", "sim_time=50us", "--set", "routing_engine=d3r_2vl"],
    },
    Case {
        label: "irregular64_fa",
        scenario: "irregular64_fa",
        args: &["--set", "sim_time=50us"],
    },
    Case {
        label: "trace_halo",
        scenario: "trace_halo",
        args: &[],
    },
    // ARN+AFI under H10, the hot spot and the root timer brought forward into the 100 µs.
    Case {
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
        ],
    },
];

/// `mpirun` for `ranks` ranks (as root; oversubscribed when there are more ranks than cores).
fn mpirun(ranks: usize) -> Command {
    let mut c = Command::new("mpirun");
    // Unbound, so that a rank may step on more than one thread.
    c.args([
        "-n",
        &ranks.to_string(),
        "--oversubscribe",
        "--bind-to",
        "none",
    ])
    .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
    .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    .arg(ARNSIM);
    c
}

/// Runs `c` to its end: its exit code and what it printed.
fn output(mut c: Command) -> (Option<i32>, String) {
    let o = c.output().expect("starting the command");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), text)
}

/// A file's bytes, a summary's wall time and thread count left out.
fn read_output(p: &Path) -> Vec<u8> {
    let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    if !p.ends_with("summary.json") {
        return bytes;
    }
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("\"wall_seconds\"") && !l.contains("\"threads\""))
        .collect::<Vec<_>>()
        .join("\n")
        .into_bytes()
}

/// Every file under `dir`, by its path there, as [`read_output`] reads them.
fn outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            files.extend(
                outputs(&p)
                    .into_iter()
                    .map(|(n, b)| (format!("{name}/{n}"), b)),
            );
        } else {
            files.push((name, read_output(&p)));
        }
    }
    files.sort();
    files
}

/// The arguments of `case` for a run into `out`.
fn args(case: &Case, out: &Path) -> Vec<String> {
    let out = out.display().to_string();
    case.args.iter().map(|a| a.replace("{out}", &out)).collect()
}

/// Each case in one process, then on 2 and 4 ranks (the first case also with 2 threads per
/// rank): the same files, the same bytes. The failures.
fn same_bytes(root: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        let one = root.join(format!("{}-1", case.label));
        let mut c = Command::new(ARNSIM);
        c.args(["run", case.scenario, "--out"])
            .arg(&one)
            .args(args(case, &one));
        let (code, text) = output(c);
        assert_eq!(code, Some(0), "{}: one process: {text}", case.label);
        let want = outputs(&one);
        let mut splits = vec![(2, 1), (4, 1)];
        if i == 0 {
            splits.push((2, 2));
        }
        for (ranks, threads) in splits {
            let out = root.join(format!("{}-{ranks}x{threads}", case.label));
            let mut c = mpirun(ranks);
            c.args(["run", case.scenario, "--threads", &threads.to_string()])
                .arg("--out")
                .arg(&out)
                .args(args(case, &out));
            let started = Instant::now();
            let (code, text) = output(c);
            let what = format!("{} on {ranks} ranks of {threads} threads", case.label);
            if code != Some(0) {
                failures.push(format!("{what}: exit {code:?}: {text}"));
                continue;
            }
            if !text.contains(&format!("on {ranks} MPI ranks of {threads} thread(s)")) {
                failures.push(format!("{what}: the run's line does not say so: {text}"));
            }
            let got = outputs(&out);
            let names = |f: &[(String, Vec<u8>)]| f.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
            if names(&got) != names(&want) {
                failures.push(format!(
                    "{what}: files {:?}, not {:?}",
                    names(&got),
                    names(&want)
                ));
            }
            for ((name, a), (_, b)) in want.iter().zip(&got) {
                if a != b {
                    failures.push(format!("{what}: {name} differs"));
                }
            }
            println!(
                "mpi: {what}: {} files as in one process ({:.1} s)",
                got.len(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    failures
}

/// A sweep of 2 loads and 2 seeds in one process and on 2 ranks (each run split over them): the
/// same files, the same bytes.
fn sweep(root: &Path) -> Vec<String> {
    let go = |ranks: usize| {
        let out = root.join(format!("sweep-{ranks}"));
        let mut c = match ranks {
            1 => Command::new(ARNSIM),
            n => mpirun(n),
        };
        c.args(["sweep", "default", "--loads", "0.3,0.6", "--seeds", "2"])
            .args(["--set", "sim_time=50us", "--out"])
            .arg(&out);
        let (code, text) = output(c);
        (code, text, out)
    };
    let (code, text, one) = go(1);
    assert_eq!(code, Some(0), "the sweep in one process: {text}");
    let (code, text, two) = go(2);
    if code != Some(0) {
        return vec![format!("the sweep on 2 ranks: exit {code:?}: {text}")];
    }
    let (want, got) = (outputs(&one), outputs(&two));
    if want.len() != 18 || want != got {
        let names = |t: &[(String, Vec<u8>)]| t.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
        let differ: Vec<_> = want
            .iter()
            .zip(&got)
            .filter(|(a, b)| a != b)
            .map(|(a, _)| a.0.clone())
            .collect();
        return vec![format!(
            "the sweep on 2 ranks: files {:?} against {:?}, differing: {differ:?}",
            names(&got),
            names(&want)
        )];
    }
    println!(
        "mpi: a sweep on 2 ranks: {} files as in one process",
        got.len()
    );
    Vec::new()
}

/// Waits up to `limit` for `child` to end: its exit code (`None`: still running, then killed).
fn wait_for(child: &mut std::process::Child, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s.code().unwrap_or(-1));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// A long run on 2 ranks, started in the background, once both ranks step (its summary is
/// reserved under its temporary name by then, and a second has passed).
fn long_run(out: &Path) -> std::process::Child {
    let mut c = mpirun(2);
    c.args([
        "run",
        "paper/config1_h10",
        "--set",
        "sim_time=20ms",
        "--out",
    ])
    .arg(out)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let child = c.spawn().expect("starting mpirun");
    std::thread::sleep(Duration::from_secs(4));
    child
}

/// SIGTERM to `mpirun` mid-run: every rank stops at the same window, rank 0 writes the outputs
/// marked incomplete, and the job ends non-zero.
fn sigterm(root: &Path) -> Vec<String> {
    let out = root.join("sigterm");
    let mut child = long_run(&out);
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let code = wait_for(&mut child, Duration::from_secs(30));
    let mut failures = Vec::new();
    if code.is_none_or(|c| c == 0) {
        failures.push(format!("SIGTERM: mpirun ended with {code:?}"));
    }
    match std::fs::read_to_string(out.join("summary.json")) {
        Ok(s) if s.contains("\"complete\": false") && s.contains("SIGTERM") => {
            println!("mpi: SIGTERM to mpirun: outputs marked incomplete, exit {code:?}")
        }
        Ok(s) => failures.push(format!("SIGTERM: the summary is not marked: {s}")),
        Err(e) => failures.push(format!("SIGTERM: no summary: {e}")),
    }
    failures
}

/// A rank killed mid-run: the job ends non-zero within seconds rather than hang.
fn killed_rank(root: &Path) -> Vec<String> {
    let out = root.join("killed");
    let mut child = long_run(&out);
    let ranks = Command::new("pgrep")
        .args(["-P", &child.id().to_string()])
        .output()
        .expect("pgrep");
    let pids = String::from_utf8_lossy(&ranks.stdout).to_string();
    let Some(pid) = pids
        .lines()
        .last()
        .and_then(|p| p.trim().parse::<i32>().ok())
    else {
        let _ = child.kill();
        let _ = child.wait();
        return vec![format!("killed rank: no rank found under mpirun: {pids:?}")];
    };
    // SAFETY: a plain kill(2) of a rank mpirun started for us.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let killed = Instant::now();
    match wait_for(&mut child, Duration::from_secs(20)) {
        Some(_) if out.join("summary.json").exists() => {
            vec!["killed rank: a summary was written".into()]
        }
        Some(c) if c != 0 => {
            println!(
                "mpi: a rank killed: the job ended with {c} after {:.1} s, no summary written",
                killed.elapsed().as_secs_f64()
            );
            Vec::new()
        }
        other => vec![format!("killed rank: mpirun ended with {other:?}")],
    }
}

/// Bad input on every rank: refused before anything runs, non-zero, with the key named.
fn bad_input(root: &Path) -> Vec<String> {
    let out = root.join("refused");
    let mut c = mpirun(2);
    c.args(["run", "default", "--set", "switch.buffer=banana", "--out"])
        .arg(&out);
    let (code, text) = output(c);
    let mut failures = Vec::new();
    if code.is_none_or(|c| c == 0) || !text.contains("switch.buffer") {
        failures.push(format!("bad input: exit {code:?}: {text}"));
    }
    if out.exists() {
        failures.push("bad input: the output folder was made".into());
    }
    let mut c = mpirun(2);
    c.args(["run", "default", "--record-switch", "s9_9", "--out"])
        .arg(root.join("rec"));
    let (code, text) = output(c);
    if code.is_none_or(|c| c == 0) || !text.contains("no such switch") {
        failures.push(format!("a recording of no switch: exit {code:?}: {text}"));
    }
    if root.join("rec").exists() {
        failures.push("a recording of no switch: the output folder was made".into());
    }
    if failures.is_empty() {
        println!("mpi: bad input refused on every rank");
    }
    failures
}

fn main() {
    let root: PathBuf = std::env::temp_dir().join(format!("arnsim-mpi-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let mut failures = same_bytes(&root);
    failures.extend(sweep(&root));
    failures.extend(sigterm(&root));
    failures.extend(killed_rank(&root));
    failures.extend(bad_input(&root));
    let _ = std::fs::remove_dir_all(&root);
    for f in &failures {
        eprintln!("FAILED: {f}");
    }
    if !failures.is_empty() {
        std::process::exit(1);
    }
    println!("mpi ranks: all passed");
}
