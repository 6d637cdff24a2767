//! Planted bugs in the event engine: each is written into a copy of the sources, the copy is
//! built, and the lockstep against the cycle engine (`src/cycle/tests.rs`: every switch of
//! `default`, `figure4`, a 16-VC `default`, `irregular16` under FA, `default` and `irregular16`
//! arbitrating first come, first served, marking FECN and under QCN, and random small fabrics,
//! each switch against its cycle-engine twin and each link between two switches) must fail,
//! naming the cycle, port and signal where the bug first shows. A bug the lockstep does not catch
//! fails this test.
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
        file: "src/fabric/event/output_port.rs",
        find: "if c.saturating_sub(spent) >= head.len + reserve {",
        replace: "if c.saturating_sub(spent) >= 1 + reserve {",
    },
    Bug {
        name: "a packet started with credits for one flit less than its length",
        file: "src/fabric/event/output_port.rs",
        find: "if c.saturating_sub(spent) >= head.len + reserve {",
        replace: "if c.saturating_sub(spent) + 1 >= head.len + reserve {",
    },
    Bug {
        name: "credit check off by one (the credit spent this cycle forgotten)",
        file: "src/fabric/event/output_port.rs",
        find: "let spent = (sending_vc == Some(head.next_vc)) as u16;",
        replace: "let spent = 0u16;",
    },
    Bug {
        name: "FA: a packet sent on to its escape queue requests a cycle late",
        file: "src/fabric/event/output_port.rs",
        find: "slot.ready = now + 1;",
        replace: "slot.ready = now + 2;",
    },
    Bug {
        name: "an output's round-robin pointer that never moves",
        file: "src/fabric/event/output_port.rs",
        find: "req: inputs as u128,\n                    ack: true,",
        replace: "req: inputs as u128,\n                    ack: false,",
    },
    Bug {
        name: "a credit returned a cycle late",
        file: "src/fabric/event/input_port_ctrl.rs",
        find: "self.file(up.part(), now + self.latency, ev, None);",
        replace: "self.file(up.part(), now + self.latency + 1, ev, None);",
    },
    Bug {
        name: "an adapted packet mapped to a data VC instead of the AFC",
        file: "src/fabric/event/routing_stage.rs",
        find: "slot.next_vc = sp.next_vc(&pkt, vl);",
        replace: "slot.next_vc = vl;",
    },
    Bug {
        name: "ARN forwarded where it must be consumed",
        file: "src/fabric/event/arn.rs",
        find: "let consumed = !adapted && unit.wiring().stage == info.root_info;",
        replace: "let consumed = !adapted && unit.wiring().stage < info.root_info;",
    },
    Bug {
        name: "ARN entries living one cycle past their TTL",
        file: "src/fabric/event/arn.rs",
        find: "arn.catch_up(s as usize, now + 1);",
        replace: "arn.catch_up(s as usize, now);",
    },
    Bug {
        name: "ARN gap one cycle short",
        file: "src/fabric/event/arn.rs",
        find: "arn.ok_at[e] = r + sp.arn_gap as u64;",
        replace: "arn.ok_at[e] = r + sp.arn_gap as u64 - 1;",
    },
    Bug {
        name: "FCFS: every head of an input stamped as its VC 0 head",
        file: "src/fabric/event/output_port.rs",
        find: "let stamp = |i, v| self.voqs[self.voq(out, i, v)].ready as u32;",
        replace: "let stamp = |i, _| self.voqs[self.voq(out, i, 0)].ready as u32;",
    },
    Bug {
        name: "FECN: the output's queue counts a new packet's flits from the wrong cycle",
        file: "src/fabric/event/output_port.rs",
        find: "if a.out as u16 == port && a.len > 0 && a.start + 1 < now {",
        replace: "if a.out as u16 == port && a.len > 0 && a.start < now {",
    },
    Bug {
        name: "QCN: a port's notification lane sends its next CNM a cycle late",
        file: "src/fabric/event/qcn.rs",
        find: "let leave = q.free[lane].max(now + 1);",
        replace: "let leave = q.free[lane].max(now + 2);",
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
            && (l.contains("replayed") || l.contains("link from"))
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
    println!("planted bugs in the event engine: {caught} caught, {missed} missed");
    if missed > 0 {
        std::process::exit(1);
    }
}
