//! The output contract of `arnsim run`, on the real program and real signals: SIGINT and SIGTERM
//! end a run with its outputs written and marked incomplete, SIGKILL leaves the previous complete
//! outputs byte for byte and nothing that claims to be complete (docs/outputs.md).

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Each test's own scratch folder, the library's tests' helper.
#[path = "../src/scratch.rs"]
mod scratch;

/// `arnsim run default` into `dir/out`, dumping into `dir/f.vcd` and `dir/f.fst` (one save file
/// beside both, `dir/f.gtkw`), for `sim_time`.
fn arnsim(dir: &Path, sim_time: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arnsim"));
    c.args(["run", "default", "--threads", "1", "--set"])
        .arg(format!("sim_time={sim_time}"))
        .arg("--out")
        .arg(dir.join("out"))
        .arg("--vcd")
        .arg(dir.join("f.vcd"))
        .arg("--fst")
        .arg(dir.join("f.fst"))
        .args(["--scope", "fabric.n5.*", "--scope", "fabric.s1_0.out0.*"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SIGINT and SIGTERM as a terminal's foreground job has them, whoever started the tests: a
    // background job of a non-interactive shell (as CI may be) inherits SIGINT ignored, and a
    // signal ignored before the run listens would not end the load.
    start_with(&mut c, libc::SIGINT, libc::SIG_DFL);
    start_with(&mut c, libc::SIGTERM, libc::SIG_DFL);
    c
}

/// Has `c` start its process with `sig` set to `disposition` (`SIG_DFL` or `SIG_IGN`).
fn start_with(c: &mut Command, sig: libc::c_int, disposition: libc::sighandler_t) {
    // SAFETY: signal(2) is async-signal-safe, and nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(move || {
            if libc::signal(sig, disposition) == libc::SIG_ERR {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Every file in `dir` and below, with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            m.extend(snapshot(&p));
        } else {
            m.insert(p.clone(), std::fs::read(&p).unwrap());
        }
    }
    m
}

fn is_partial(p: &Path) -> bool {
    let n = p.file_name().unwrap().to_string_lossy();
    n.starts_with('.') && n.ends_with(".partial")
}

/// The sizes of the partial outputs in `dir`.
fn partial_sizes(dir: &Path) -> Vec<u64> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| is_partial(&e.path()))
        .map(|e| e.metadata().unwrap().len())
        .collect()
}

/// Starts a long run and returns once it is stepping (its VCD has grown past the header).
fn start_long_run(dir: &Path) -> Child {
    wait_until_it_writes(dir, arnsim(dir, "500ms").spawn().unwrap())
}

/// `child` (a long run into `dir`) once it has written 64 KiB of an output.
fn wait_until_it_writes(dir: &Path, mut child: Child) -> Child {
    let t0 = Instant::now();
    let growing = || partial_sizes(dir).iter().any(|&n| n > 1 << 16);
    while !growing() {
        if t0.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("the run never started");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

fn signal(child: &Child, sig: &str) {
    let number = match sig {
        "INT" => libc::SIGINT,
        "TERM" => libc::SIGTERM,
        _ => panic!("no signal {sig}"),
    };
    // SAFETY: kill(2) on the child's pid, which stays the child's until it is waited for.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, number) };
    assert_eq!(rc, 0, "kill -{sig}: {}", std::io::Error::last_os_error());
}

fn field<'a>(summary: &'a str, key: &str) -> &'a str {
    let at = summary
        .find(&format!("\"{key}\": "))
        .unwrap_or_else(|| panic!("{key} in {summary}"));
    summary[at + key.len() + 4..]
        .split([',', '\n'])
        .next()
        .unwrap()
}

#[test]
fn sigint_and_sigterm_stop_the_run_with_its_outputs_marked_incomplete() {
    for (sig, code) in [("INT", 130), ("TERM", 143)] {
        let (_tmp, dir) = scratch::folder(&format!("it-sig{sig}"));
        let child = start_long_run(&dir);
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        assert!(
            stderr.contains(&format!("stopped by SIG{sig} at cycle")),
            "{stderr}"
        );
        let summary = std::fs::read_to_string(dir.join("out/summary.json")).unwrap();
        assert_eq!(field(&summary, "complete"), "false", "{summary}");
        assert_eq!(field(&summary, "stop_reason"), format!("\"SIG{sig}\""));
        assert_eq!(field(&summary, "invariants"), "\"ok\"");
        let reached: u64 = field(&summary, "simulated_cycles").parse().unwrap();
        assert_eq!(field(&summary, "stopped_at_cycle"), reached.to_string());
        assert!(reached > 0 && reached < 97_656_250, "{reached}");
        // The VCD ends with the sample of the last cycle stepped and a note naming it.
        let vcd = std::fs::read_to_string(dir.join("f.vcd")).unwrap();
        let tail = &vcd[vcd.len().saturating_sub(1000)..];
        let edge = 2560 + 5120 * reached;
        assert!(
            tail.contains(&format!("#{edge}\n"))
                && tail.contains(&format!(
                    "stopped at cycle {reached} of 97656250 (SIG{sig})"
                )),
            "{tail}"
        );
        assert!(tail.trim_end().ends_with("$end"), "{tail}");
        // The FST, complete as a file, ends with the same sample.
        let fst = wellen::simple::read(dir.join("f.fst")).unwrap();
        assert_eq!(fst.time_table().last(), Some(&(edge + 2560)));
        assert!(dir.join("f.gtkw").is_file());
        let csv = std::fs::read_to_string(dir.join("out/efficiency.csv")).unwrap();
        assert!(csv.lines().count() > 1, "{csv}");
        let left: Vec<_> = snapshot(&dir)
            .into_keys()
            .filter(|p| is_partial(p))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}

#[test]
fn a_run_started_with_sigint_ignored_keeps_it_ignored_and_sigterm_stops_it() {
    let (_tmp, dir) = scratch::folder("it-ignored");
    let mut c = arnsim(&dir, "500ms");
    start_with(&mut c, libc::SIGINT, libc::SIG_IGN);
    let child = wait_until_it_writes(&dir, c.spawn().unwrap());
    signal(&child, "INT");
    // Still stepping after the signal: its partial VCD keeps growing.
    let len = || partial_sizes(&dir).iter().sum::<u64>();
    let at_signal = len();
    let t0 = Instant::now();
    while len() <= at_signal && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(len() > at_signal, "the dump stopped growing after SIGINT");
    signal(&child, "TERM");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("stopped by SIGTERM at cycle"), "{stderr}");
    let summary = std::fs::read_to_string(dir.join("out/summary.json")).unwrap();
    assert_eq!(field(&summary, "stop_reason"), "\"SIGTERM\"");
}

#[test]
fn sigkill_leaves_the_previous_outputs_as_they_were() {
    let (_tmp, dir) = scratch::folder("it-kill");
    let done = arnsim(&dir, "20us").output().unwrap();
    assert!(done.status.success(), "{done:?}");
    let before = snapshot(&dir);
    assert_eq!(
        before.len(),
        8,
        "four outputs, a VCD, an FST, their save file and the detector-state filter"
    );
    let mut child = start_long_run(&dir);
    child.kill().unwrap();
    child.wait().unwrap();
    let after = snapshot(&dir);
    for (p, bytes) in &before {
        assert!(after.get(p) == Some(bytes), "{p:?} changed");
    }
    // The rest are the killed run's files, under temporary names that say they are partial.
    let new: Vec<_> = after.keys().filter(|p| !before.contains_key(*p)).collect();
    assert!(!new.is_empty());
    assert!(new.iter().all(|p| is_partial(p)), "{new:?}");
}

#[test]
fn a_signal_while_the_trace_loads_ends_the_process_at_once_with_nothing_written() {
    use std::os::unix::process::ExitStatusExt;
    let (_tmp, dir) = scratch::folder("it-load");
    let trace = dir.join("big.trace");
    let mut text = String::from("ranks 2\n");
    for _ in 0..2_000_000 {
        text.push_str("0 send 1 64\n1 recv 0\n");
    }
    std::fs::write(&trace, &text).unwrap();
    // An earlier complete run in the same folder stays as it was.
    let done = arnsim(&dir, "5us").output().unwrap();
    assert!(done.status.success(), "{done:?}");
    let before = snapshot(&dir);
    let mut child = arnsim(&dir, "1ms")
        .args(["--set", "traffic.pattern=trace", "--set"])
        .arg(format!("traffic.trace={}", trace.display()))
        .spawn()
        .unwrap();
    // Once the trace's text is read, its parsing and checks take a second or more.
    let io = format!("/proc/{}/io", child.id());
    let read = || {
        std::fs::read_to_string(&io)
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("rchar: ")?.parse().ok())
            })
            .unwrap_or(0u64)
    };
    let t0 = Instant::now();
    while read() < text.len() as u64 && t0.elapsed() < Duration::from_secs(60) {
        let ended = child.try_wait().unwrap();
        assert!(
            ended.is_none(),
            "the run ended before its trace was read: {ended:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    signal(&child, "INT");
    let status = child.wait().unwrap();
    // Ended by the signal itself, not by a run that waited for the load and then stopped (exit
    // code 130, "stopped by SIGINT before the first cycle").
    assert_eq!(status.signal(), Some(2), "{status:?}");
    assert_eq!(snapshot(&dir), before, "no file changed or added");
}

#[test]
fn a_stdout_that_cannot_be_written_fails_the_command_without_a_panic() {
    let (_tmp, dir) = scratch::folder("it-full");
    let full = || {
        Stdio::from(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
    };
    // A listing, and a run whose outputs are all written although its report line is not.
    let list = Command::new(env!("CARGO_BIN_EXE_arnsim"))
        .arg("scenarios")
        .stdout(full())
        .output()
        .unwrap();
    let mut run = arnsim(&dir, "5us");
    let run = run.stdout(full()).output().unwrap();
    for out in [list, run] {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(
            stderr.contains("arnsim: error: cannot write to stdout: No space left on device"),
            "{stderr}"
        );
    }
    let summary = std::fs::read_to_string(dir.join("out/summary.json")).unwrap();
    assert_eq!(field(&summary, "complete"), "true", "{summary}");
    // Help that cannot be written is an error too, and help that can is not.
    let help = |stdout: Stdio| {
        Command::new(env!("CARGO_BIN_EXE_arnsim"))
            .arg("--help")
            .stdout(stdout)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(help(full()), Some(1));
    assert_eq!(help(Stdio::null()), Some(0));
}
