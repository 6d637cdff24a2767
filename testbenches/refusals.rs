//! Bad input on the real command line: every case is refused (or warned about) with a message that
//! names the key or flag, never with a panic or a hang, and no refused command changes a file that
//! existed before it or leaves a new file or folder behind.
//!
//! Each case runs `arnsim` in a scratch folder holding a file `precious.txt` and the scenario files
//! the case needs; a case that has not exited after a generous bound is killed and reported as a
//! hang.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "refusals/cases.rs"]
mod cases;

use cases::{Case, Expect, FIFO, HANG, args, cases};

fn run_case(dir: &Path, c: &Case) -> Result<(), String> {
    std::fs::create_dir_all(dir).unwrap();
    let precious = dir.join("precious.txt");
    std::fs::write(&precious, "kept as it is\n").unwrap();
    for (name, text) in &c.files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        if text == FIFO {
            let made = Command::new("mkfifo").arg(&path).status().unwrap();
            assert!(made.success(), "mkfifo {path:?}");
        } else {
            std::fs::write(&path, text).unwrap();
        }
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_arnsim"))
        .args(&c.args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start arnsim: {e}"))?;
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {} s", HANG.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    if status.code() == Some(101) || text.contains("panicked") {
        return Err(format!("panicked: {text}"));
    }
    match c.expect {
        Expect::Refused if status.success() => return Err(format!("accepted: {text}")),
        Expect::Warned | Expect::Accepted if !status.success() => {
            return Err(format!("refused: {text}"));
        }
        _ => {}
    }
    if let Some(missing) = c.names.iter().find(|n| !text.contains(*n)) {
        return Err(format!("the message does not name `{missing}`: {text}"));
    }
    if std::fs::read_to_string(&precious).ok().as_deref() != Some("kept as it is\n") {
        return Err("precious.txt was changed".into());
    }
    // A refused command changes none of the files there were, and leaves no new file or folder
    // behind (temporary files, new output folders).
    if c.expect == Expect::Refused {
        for (name, text) in c.files.iter().filter(|(_, t)| t != FIFO) {
            if std::fs::read_to_string(dir.join(name)).ok().as_ref() != Some(text) {
                return Err(format!("{name} was changed"));
            }
        }
        let mut expected: Vec<String> = c
            .files
            .iter()
            .map(|(name, _)| name.split('/').next().unwrap().to_string())
            .chain(["precious.txt".to_string()])
            .collect();
        expected.sort();
        expected.dedup();
        let mut found: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        found.sort();
        if found != expected {
            return Err(format!("left {found:?} where there was {expected:?}"));
        }
    }
    // A name must never lead a run outside the folder it was started in.
    if dir.parent().unwrap().join("escape").exists() {
        return Err("wrote outside the output root".into());
    }
    Ok(())
}

fn main() {
    let mut cases = cases();
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 16 {
        cases.push(Case {
            label: "more threads than the machine runs at once",
            files: vec![],
            args: args(&[
                "run",
                "figure4",
                "--out",
                "o",
                "--threads",
                "16",
                "--set",
                "sim_time=20us",
            ]),
            expect: Expect::Warned,
            names: &["--threads 16"],
        });
    }
    let base: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join("refusals");
    let _ = std::fs::remove_dir_all(&base);
    let mut failed = 0;
    for (i, c) in cases.iter().enumerate() {
        match run_case(&base.join(format!("case{i:02}")).join("w"), c) {
            Ok(()) => println!("ok     {}", c.label),
            Err(e) => {
                failed += 1;
                println!("FAILED {}: {e}", c.label);
            }
        }
    }
    println!("refusals: {} passed, {failed} failed", cases.len() - failed);
    if failed > 0 {
        std::process::exit(1);
    }
}
