//! The size limits of the inputs a scenario names: each refusal names the file (and the key or
//! the line) and the limit, and is made before the input is read whole. Oversized files are
//! sparse: their length is set, not written.

use super::refusal_tests::{about, errors};
use super::scenario::MAX_SCENARIO_BYTES;
use super::topology_keys::MAX_CUSTOM_SWITCHES;
use super::trace_keys::MAX_TEXT_BYTES;
use super::*;

/// A file at `path` of `len` bytes, beginning with `text`, the rest a hole.
fn sparse(path: &std::path::Path, text: &str, len: u64) {
    std::fs::write(path, text).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(len).unwrap();
}

#[test]
fn a_scenario_file_past_64_mib_is_refused_unread() {
    assert_eq!(MAX_SCENARIO_BYTES, 64 << 20);
    let (_tmp, d) = crate::scratch::folder("limit-scenario");
    let path = d.join("s.toml");
    let text = "sim_time = \"1us\"\n[topology]\nkind = \"kary_ntree\"\nk = 2\nstages = 1\n";
    sparse(&path, text, MAX_SCENARIO_BYTES + 1);
    let e = Scenario::load(path.to_str().unwrap(), &[]).expect_err("refused");
    assert_eq!(e.0.len(), 1, "{e}");
    assert_eq!(e.0[0].at, path.to_str().unwrap());
    assert!(
        e.0[0]
            .message
            .starts_with("67108865 bytes; a scenario is at most 67108864 bytes (64 MiB"),
        "{e}"
    );
    // At the limit the file is read (and refused for what it holds: NUL bytes are no TOML).
    sparse(&path, text, MAX_SCENARIO_BYTES);
    let e = Scenario::load(path.to_str().unwrap(), &[]).expect_err("refused");
    assert!(!e.to_string().contains("at most 67108864 bytes"), "{e}");
}

#[test]
fn a_custom_fabric_of_more_than_2_to_the_17_switches_is_refused_at_the_first_past_them() {
    assert_eq!(MAX_CUSTOM_SWITCHES, 131_072);
    let head = "sim_time = \"1us\"\n[topology]\nkind = \"custom\"\nnodes = 2\n";
    let switches = |n: usize| head.to_string() + &"[[topology.switch]]\nports = 2\n".repeat(n);
    let e = about(&errors(&switches(131_073), &[]), "topology.switch[131072]");
    // Line 5 opens switch 0; each takes two lines.
    assert_eq!(e.at, format!("s.toml:{}", 5 + 2 * 131_072));
    assert_eq!(
        e.message,
        "131073 `[[topology.switch]]`; a custom fabric has at most 131072 switches (the 6-ary \
         6-tree has 46,656)"
    );
    // At the limit the switches are read: the errors are the uncabled ports, not the count.
    let all = errors(&switches(131_072), &[]);
    assert!(
        all.iter().all(|e| !e.message.contains("at most 131072")),
        "{all:#?}"
    );
}

#[test]
fn a_trace_or_map_file_past_4_gib_is_refused_unread() {
    assert_eq!(MAX_TEXT_BYTES, 4 << 30);
    let (_tmp, d) = crate::scratch::folder("limit-trace");
    let scenario = d.join("s.toml");
    std::fs::write(
        &scenario,
        "sim_time = \"100us\"\n[topology]\nkind = \"kary_ntree\"\nk = 4\nstages = 2\n\
         [traffic]\npattern = \"trace\"\n",
    )
    .unwrap();
    sparse(&d.join("big.txt"), "ranks 2\n", MAX_TEXT_BYTES + 1);
    std::fs::write(d.join("t.txt"), "ranks 2\n").unwrap();
    let load = |set: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        Scenario::load(scenario.to_str().unwrap(), &set).expect_err("refused")
    };
    let e = about(&load(&["traffic.trace=big.txt"]).0, "traffic.trace");
    let want = "4294967297 bytes; a trace or map file is at most 4294967296 bytes (4 GiB)";
    assert!(
        e.message.contains("big.txt`: ") && e.message.ends_with(want),
        "{e}"
    );
    let e = about(
        &load(&["traffic.trace=t.txt", "traffic.mapping=big.txt"]).0,
        "traffic.mapping",
    );
    assert!(e.message.ends_with(want), "{e}");
}
