//! Planted bugs in the fast engine: each is written into a copy of the sources, the copy is built,
//! and the lockstep against the cycle engine (`src/cycle/tests.rs`: every switch of `default`,
//! `figure4` and `irregular16` under FA, random small fabrics) must fail, naming the cycle, port and signal where the bug
//! first shows. A bug the lockstep does not catch fails this test.
//!
//! The copy is built with the test profile, debug assertions and overflow checks off in its own
//! crate only (`[profile.test.package.arnsim]`, so that the lockstep, not an assertion, catches
//! each bug), in its own target folder, which starts as hard links to the dependencies already
//! built in this one: only the copy itself is compiled.
//!
//! The planted bugs of the HDL are in `testbenches/blocks/*.rs` (altered RTL caught by named
//! assertions or by the block lockstep).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// One planted bug: in `file`, the text `find` (exactly once) becomes `replace`.
struct Bug {
    name: &'static str,
    file: &'static str,
    find: &'static str,
    replace: &'static str,
}

const BUGS: &[Bug] = &[
    Bug {
        name: "virtual cut-through checked against the head only",
        file: "src/switch/output_port.rs",
        find: "let need = slot.pkt.len + if FA { slot.reserve } else { 0 };",
        replace: "let need = 1u16;",
    },
    Bug {
        name: "FA: a packet sent on to its escape queue requests a cycle late",
        file: "src/switch/output_port.rs",
        find: "buf.escape(v, o, next_vc, now + 1);",
        replace: "buf.escape(v, o, next_vc, now + 2);",
    },
    Bug {
        name: "credit check off by one (the credit spent this cycle forgotten)",
        file: "src/switch/output_port.rs",
        find: "let spent = (sending_vc == Some(slot.next_vc)) as u16;",
        replace: "let spent = 0u16;",
    },
    Bug {
        name: "ARN forwarded where it must be consumed",
        file: "src/switch/input_port_ctrl.rs",
        find: "let consumed = !adapted && self.wiring.stage == info.root_info;",
        replace: "let consumed = !adapted && self.wiring.stage < info.root_info;",
    },
    Bug {
        name: "VOQ counted on the wrong output",
        file: "src/switch/voq_buffer.rs",
        find: "        let q = &mut self.voqs[o];\n        q.occ += arrived;",
        replace: "        let q = &mut self.voqs[(o + 1) % MAX_PORTS];\n        q.occ += arrived;",
    },
    Bug {
        name: "input arbiter pointer that does not move",
        file: "src/switch/output_port.rs",
        find: "req: req.inputs,\n                        ack: true,",
        replace: "req: req.inputs,\n                        ack: false,",
    },
    Bug {
        name: "ARN gap one cycle short",
        file: "src/switch/input_port_ctrl.rs",
        find: "inp.arn_ok_at[e] = now + self.params.arn_gap as u64;",
        replace: "inp.arn_ok_at[e] = now + self.params.arn_gap as u64 - 1;",
    },
];

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create");
    for e in fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().expect("type").is_dir() {
            copy_tree(&src, &dst);
        } else {
            fs::copy(&src, &dst).expect("copy");
        }
    }
}

/// Hard links of every file under `from` at the same place under `to` (files already there are
/// kept). A file that cannot be linked is left out: cargo then builds it anew.
fn link_tree(from: &Path, to: &Path) {
    let Ok(entries) = fs::read_dir(from) else {
        return;
    };
    let _ = fs::create_dir_all(to);
    for e in entries.flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            link_tree(&src, &dst);
        } else if !dst.exists() {
            let _ = fs::hard_link(&src, &dst);
        }
    }
}

/// The first mismatch line of a failed lockstep's output, from the failed test first in name
/// order (the tests run on two threads, so they finish in no fixed order; the report is the same
/// from run to run).
fn first_mismatch(out: &str) -> Option<&str> {
    let mut test = "";
    let mut found: Option<(&str, &str)> = None;
    for l in out.lines() {
        if let Some(name) = l
            .strip_prefix("---- ")
            .and_then(|r| r.strip_suffix(" stdout ----"))
        {
            test = name;
        } else if l.contains("cycle ")
            && l.contains(", port ")
            && l.contains("replayed")
            && found.is_none_or(|(first, _)| test < first)
        {
            found = Some((test, l.trim()));
        }
    }
    found.map(|(_, line)| line)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let tree = target.join("planted/tree");
    let build = target.join("planted/build");
    let _ = fs::remove_dir_all(&tree);
    for d in ["src", "scenarios", "docs", "testbenches", "benches"] {
        copy_tree(&root.join(d), &tree.join(d));
    }
    for f in ["Cargo.toml", "Cargo.lock", "README.md"] {
        fs::copy(root.join(f), tree.join(f)).expect("copy");
    }
    let mut manifest = fs::read_to_string(tree.join("Cargo.toml")).expect("read");
    manifest.push_str(
        "\n[profile.test.package.arnsim]\ndebug-assertions = false\noverflow-checks = false\n",
    );
    fs::write(tree.join("Cargo.toml"), manifest).expect("write");
    for d in ["deps", "build", ".fingerprint"] {
        link_tree(&target.join("debug").join(d), &build.join("debug").join(d));
    }
    let (mut caught, mut missed) = (0, 0);
    for bug in BUGS {
        let path = tree.join(bug.file);
        let pristine = fs::read_to_string(root.join(bug.file)).expect("read");
        assert_eq!(
            pristine.matches(bug.find).count(),
            1,
            "{}: the text to alter must occur once in {}",
            bug.name,
            bug.file
        );
        fs::write(&path, pristine.replacen(bug.find, bug.replace, 1)).expect("write");
        let t0 = Instant::now();
        let out = Command::new(env!("CARGO"))
            .current_dir(&tree)
            .env("CARGO_TARGET_DIR", &build)
            // Each bug rebuilds the copy: incrementally, even where CI turns that off.
            .env("CARGO_INCREMENTAL", "1")
            .env("PROPTEST_MAX_SHRINK_ITERS", "0")
            .args(["test", "--quiet", "--lib", "--", "cycle::tests::every"])
            .args(["cycle::tests::random", "--test-threads", "2"])
            .output()
            .expect("cargo");
        fs::write(&path, &pristine).expect("restore");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        let secs = t0.elapsed().as_secs_f64();
        match (out.status.success(), first_mismatch(&text)) {
            (false, Some(m)) => {
                caught += 1;
                println!("caught  {} ({secs:.0} s): {m}", bug.name);
            }
            (false, None) => {
                missed += 1;
                println!(
                    "FAILED  {}: the build or test failed without a mismatch:\n{text}",
                    bug.name
                );
            }
            (true, _) => {
                missed += 1;
                println!("MISSED  {}: the lockstep passed with the bug", bug.name);
            }
        }
    }
    println!("planted bugs in the fast engine: {caught} caught, {missed} missed");
    if missed > 0 {
        std::process::exit(1);
    }
}
