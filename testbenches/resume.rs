//! Resumable runs on the real program and real signals: a run with `--checkpoint-every` killed
//! between two checkpoints (SIGKILL) or stopped (SIGTERM), then `arnsim resume`d, writes the
//! bytes of a run never interrupted, its VCD included; a checkpoint of another scenario or of
//! another build is refused with nothing changed; what a checkpoint cannot hold is refused
//! (docs/checkpoints.md).

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Each test's own scratch folder, the library's tests' helper.
#[path = "../src/scratch.rs"]
mod scratch;

const SIM_TIME: &str = "sim_time=3ms";

/// `arnsim run SCENARIO` in `dir` (its current folder) into `out/`, dumping `out/f.vcd` from
/// 0.5 ms to 2.5 ms, with `extra` flags.
fn arnsim_run(dir: &Path, scenario: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arnsim"));
    c.current_dir(dir)
        .args(["run", scenario, "--threads", "1", "--set", SIM_TIME])
        .args(["--out", "out", "--vcd", "out/f.vcd", "--from", "0.5ms"])
        .args(["--to", "2.5ms", "--scope", "fabric.s1_0.out*", "--scope"])
        .arg("fabric.n5.*")
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SIGTERM as a foreground job has it, whoever started the tests.
    // SAFETY: signal(2) is async-signal-safe, and nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(|| {
            if libc::signal(libc::SIGTERM, libc::SIG_DFL) == libc::SIG_ERR {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c
}

fn resume(dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arnsim"))
        .args(["resume"])
        .arg(dir)
        .output()
        .unwrap()
}

/// Every file in `dir`, with its bytes; `summary.json` without its wall time.
fn outputs(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let mut bytes = std::fs::read(&p).unwrap();
        if p.ends_with("summary.json") {
            let text = String::from_utf8(bytes).unwrap();
            bytes = text
                .lines()
                .filter(|l| !l.contains("\"wall_seconds\""))
                .collect::<Vec<_>>()
                .join("\n")
                .into_bytes();
        }
        m.insert(p.strip_prefix(dir).unwrap().to_path_buf(), bytes);
    }
    m
}

/// The outputs of the run never interrupted, in a folder of their own.
fn uninterrupted(scenario_dir: Option<&Path>) -> BTreeMap<PathBuf, Vec<u8>> {
    let (_tmp, dir) = scratch::folder("resume-reference");
    let scenario = match scenario_dir {
        Some(d) => {
            std::fs::copy(d.join("s.toml"), dir.join("s.toml")).unwrap();
            "s.toml"
        }
        None => "default",
    };
    let done = arnsim_run(&dir, scenario, &[]).output().unwrap();
    assert!(done.status.success(), "{done:?}");
    outputs(&dir.join("out"))
}

/// `child` once its checkpoint has been written `n` times (the file renamed into place anew).
fn after_checkpoints(out: &Path, mut child: Child, n: usize) -> Child {
    let ck = out.join("checkpoint.bin");
    let t0 = Instant::now();
    let mut seen = Vec::new();
    while seen.len() < n {
        if let Ok(m) = std::fs::metadata(&ck) {
            use std::os::unix::fs::MetadataExt;
            let id = (m.ino(), m.mtime_nsec(), m.len());
            if seen.last() != Some(&id) {
                seen.push(id);
            }
        }
        if t0.elapsed() > Duration::from_secs(120) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("{n} checkpoints were not written while the run stepped");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

#[test]
fn a_run_killed_between_checkpoints_resumes_to_the_bytes_of_one_never_killed() {
    let reference = uninterrupted(None);
    let (_tmp, dir) = scratch::folder("resume-kill");
    let child = arnsim_run(&dir, "default", &["--checkpoint-every", "100us"])
        .spawn()
        .unwrap();
    let mut child = after_checkpoints(&dir.join("out"), child, 3);
    std::thread::sleep(Duration::from_millis(3));
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = outputs(&dir.join("out"));
    assert!(killed.contains_key(Path::new("checkpoint.bin")));
    assert!(!killed.contains_key(Path::new("summary.json")), "killed");
    let done = resume(&dir.join("out"));
    assert!(done.status.success(), "{done:?}");
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(stdout.contains("resuming `arnsim run default"), "{stdout}");
    // The killed run's temporary files are gone with its checkpoint: what is left is the
    // uninterrupted run's bytes.
    assert_eq!(outputs(&dir.join("out")), reference);
}

#[test]
fn a_run_stopped_by_sigterm_resumes_to_the_bytes_of_one_never_stopped() {
    let reference = uninterrupted(None);
    let (_tmp, dir) = scratch::folder("resume-term");
    let child = arnsim_run(&dir, "default", &["--checkpoint-every", "1ms"])
        .spawn()
        .unwrap();
    let child = after_checkpoints(&dir.join("out"), child, 1);
    // SAFETY: kill(2) on the child's pid, which stays the child's until it is waited for.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let stopped = child.wait_with_output().unwrap();
    assert_eq!(stopped.status.code(), Some(143), "{stopped:?}");
    let out = dir.join("out");
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(summary.contains("\"complete\": false"), "{summary}");
    assert!(out.join("checkpoint.bin").is_file());
    let done = resume(&out);
    assert!(done.status.success(), "{done:?}");
    assert_eq!(outputs(&out), reference);
    // A finished run has nothing to resume.
    let again = resume(&out);
    assert_eq!(again.status.code(), Some(1));
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("checkpoint.bin"), "{err}");
}

#[test]
fn a_checkpoint_of_a_changed_scenario_or_another_build_is_refused_with_nothing_changed() {
    let (_tmp, dir) = scratch::folder("resume-refused");
    let default = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/default.toml"),
    )
    .unwrap();
    std::fs::write(dir.join("s.toml"), &default).unwrap();
    let child = arnsim_run(&dir, "s.toml", &["--checkpoint-every", "100us"])
        .spawn()
        .unwrap();
    let mut child = after_checkpoints(&dir.join("out"), child, 2);
    child.kill().unwrap();
    child.wait().unwrap();
    let out = dir.join("out");
    let ck = out.join("checkpoint.bin");
    let before = outputs(&out);

    // The scenario changed since.
    std::fs::write(dir.join("s.toml"), default.replace("seed = 1", "seed = 2")).unwrap();
    let refused = resume(&out);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("another scenario") && err.contains("s.toml"),
        "{err}"
    );
    assert_eq!(outputs(&out), before);

    // Another build took it.
    std::fs::write(dir.join("s.toml"), &default).unwrap();
    let loaded = arnsim::run::checkpoint::read(&ck).unwrap();
    let mut header = loaded.header.clone();
    header.build ^= 1;
    arnsim::run::checkpoint::write(&ck, &header, |w| w.write_all(&loaded.state)).unwrap();
    let before = outputs(&out);
    let refused = resume(&out);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("another build of arnsim"), "{err}");
    assert_eq!(outputs(&out), before);

    // Taken back as it was, but its dump gone: refused, naming the file it looked for.
    header.build ^= 1;
    arnsim::run::checkpoint::write(&ck, &header, |w| w.write_all(&loaded.state)).unwrap();
    let (_, vcd_tmp) = header.dumps[0].clone();
    let vcd_tmp = dir.join(vcd_tmp);
    let aside = dir.join("vcd-aside");
    std::fs::rename(&vcd_tmp, &aside).unwrap();
    let refused = resume(&out);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("the dump the checkpoint continues is gone"),
        "{err}"
    );
    assert!(
        err.contains(vcd_tmp.file_name().unwrap().to_str().unwrap()),
        "{err}"
    );
    std::fs::rename(&aside, &vcd_tmp).unwrap();

    // Taken back as it was, it resumes to the run never killed.
    let done = resume(&out);
    assert!(done.status.success(), "{done:?}");
    assert_eq!(outputs(&out), uninterrupted(Some(&dir)));
}

#[test]
fn checkpoints_are_refused_where_they_cannot_hold_the_state() {
    let (_tmp, dir) = scratch::folder("resume-flags");
    for (extra, says) in [
        (vec!["--fst", "out/f.fst"], "--fst"),
        (vec!["--record-switch", "s1_0"], "--record-switch"),
    ] {
        let mut args = vec!["--checkpoint-every", "100us"];
        args.extend(extra);
        let o = arnsim_run(&dir, "default", &args).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("--checkpoint-every") && err.contains(says),
            "{err}"
        );
        assert!(!dir.join("out").exists(), "nothing written");
    }
    let o = arnsim_run(&dir, "default", &["--checkpoint-every", "0us"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("less than a cycle"));
    let o = arnsim_run(&dir, "default", &["--checkpoint-every", "soon"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("--checkpoint-every"));
    let o = resume(&dir.join("nowhere"));
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("nowhere/checkpoint.bin"));
    // Not a file a checkpoint is read from: refused at once, no hang on a FIFO.
    let odd = dir.join("odd");
    std::fs::create_dir_all(odd.join("checkpoint.bin")).unwrap();
    let o = resume(&odd);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a regular file"),
        "{o:?}"
    );
    std::fs::remove_dir(odd.join("checkpoint.bin")).unwrap();
    let fifo = std::ffi::CString::new(odd.join("checkpoint.bin").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) on a path of our own scratch folder.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let o = resume(&odd);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a regular file"),
        "{o:?}"
    );
    std::fs::remove_file(odd.join("checkpoint.bin")).unwrap();
    for bytes in [
        &b""[..],
        b"arnsim checkpoint 1\n",
        b"arnsim checkpoint 9\nxyz",
    ] {
        std::fs::write(odd.join("checkpoint.bin"), bytes).unwrap();
        let o = resume(&odd);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("checkpoint.bin: ") && !err.contains("panicked"),
            "{err}"
        );
    }
}
