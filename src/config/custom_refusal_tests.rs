//! What loading refuses in custom topologies (a file of switches, nodes and cables): every
//! refusal at the offending line, a suggestion that keeps a table's index, and a file of 100,000
//! cables loaded and checked.

use super::refusal_tests::{about, errors, load, runs};

/// Two nodes on a switch of three ports, plus `extra` lines appended to the topology; one flow.
pub(super) fn custom(extra: &[&str]) -> String {
    format!(
        r#"sim_time = "10us"
[topology]
kind = "custom"
nodes = 2
[[topology.switch]]
ports = 2
[[topology.link]]
a = "n0"
b = "s0:0"
[[topology.link]]
a = "n1"
b = "s0:1"
{}
[traffic]
pattern = "flows"
[[traffic.flow]]
src = 0
dst = 1
"#,
        extra.join("\n")
    )
}

#[test]
fn custom_topologies_are_checked_at_the_offending_line() {
    let good = load(&custom(&[]), &[]).unwrap();
    runs(&good);
    // Line 13 is the first extra line.
    let sw = ["[[topology.switch]]", "ports = 2"];
    let cases: &[(&[&str], &str, &str, &str)] = &[
        (
            &["[[topology.link]]", "a = \"s0:0\"", "b = \"s0:1\""],
            "topology.link[2]",
            "s.toml:13",
            "self-loop",
        ),
        (
            &["[[topology.link]]", "a = \"n0\"", "b = \"n1\""],
            "topology.link[2]",
            "s.toml:13",
            "node 0 to node 1",
        ),
        (
            &["[[topology.link]]", "a = \"n1\"", "b = \"s0:0\""],
            "topology.link[2].a",
            "s.toml:14",
            "n1 is cabled twice (already by `topology.link[1]` at s.toml:10)",
        ),
        (
            &["[[topology.link]]", "a = \"n3\"", "b = \"s0:0\""],
            "topology.link[2].a",
            "s.toml:14",
            "node 3 does not exist",
        ),
        (
            &["[[topology.link]]", "a = \"n0\"", "b = \"s0:2\""],
            "topology.link[2].b",
            "s.toml:15",
            "has ports 0 to 1, not 2",
        ),
        (
            &["[[topology.link]]", "a = \"n0\"", "b = \"s1:0\""],
            "topology.link[2].b",
            "s.toml:15",
            "switch 1 does not exist",
        ),
        (
            &["[[topology.link]]", "a = \"n0\"", "b = \"s0:+1\""],
            "topology.link[2].b",
            "s.toml:15",
            "`s0:+1` is not an endpoint",
        ),
        (
            &["[[topology.link]]", "a = \"n01\"", "b = \"s0:0\""],
            "topology.link[2].a",
            "s.toml:14",
            "`n01` is not an endpoint",
        ),
        (
            &sw,
            "topology.switch[1]",
            "s.toml:13",
            "port 0, 1 not cabled",
        ),
        (
            &[
                sw[0],
                sw[1],
                "[[topology.link]]",
                "a = \"s1:0\"",
                "b = \"s1:1\"",
            ],
            "topology.link[2]",
            "s.toml:15",
            "self-loop",
        ),
        (
            &[
                sw[0],
                sw[1],
                sw[0],
                sw[1],
                "[[topology.link]]",
                "a = \"s1:0\"",
                "b = \"s2:1\"",
                "[[topology.link]]",
                "a = \"s1:1\"",
                "b = \"s2:0\"",
            ],
            "topology.switch[1]",
            "s.toml:13",
            "cannot reach node 0",
        ),
    ];
    for (extra, key, at, what) in cases {
        let all = errors(&custom(extra), &[]);
        let e = about(&all, key);
        assert_eq!(e.at, *at, "{e}");
        assert!(e.message.contains(what), "{e}");
    }
    let e = about(
        &errors(&custom(&[]), &["topology.nodes=3"]),
        "topology.nodes",
    );
    assert!(e.message.contains("node 2 not cabled"), "{e}");
}

/// A chain of `n` two-port switches between node 0 and node 1: `n + 1` cables, each table on
/// lines of its own, about 80 bytes per cable.
pub(super) fn chain(n: usize) -> String {
    use std::fmt::Write as _;
    let mut t = String::with_capacity(100 * n + 200);
    t.push_str("sim_time = \"1us\"\n[topology]\nkind = \"custom\"\nnodes = 2\n");
    for i in 0..n {
        let _ = writeln!(
            t,
            "[[topology.switch]] # switch {i}\nports = 2\nstage = 1\n"
        );
    }
    let _ = writeln!(t, "[[topology.link]]\na = \"n0\"\nb = \"s0:0\"");
    for i in 1..n {
        let _ = writeln!(t, "[[topology.link]]\na = \"s{}:1\"\nb = \"s{i}:0\"", i - 1);
    }
    let _ = writeln!(t, "[[topology.link]]\na = \"s{}:1\"\nb = \"n1\"", n - 1);
    t.push_str("[traffic]\npattern = \"flows\"\n[[traffic.flow]]\nsrc = 0\ndst = 1\n");
    t
}

#[test]
fn a_100k_cable_topology_loads_and_is_checked() {
    let n = 100_000;
    let text = chain(n);
    assert!(text.len() > 6_000_000, "{} bytes", text.len());
    let t0 = std::time::Instant::now();
    let s = load(&text, &[]).unwrap();
    eprintln!(
        "{} bytes, {} cables: loaded in {:?}",
        text.len(),
        n + 1,
        t0.elapsed()
    );
    assert_eq!(
        (s.topology.switches.len(), s.topology.links.len()),
        (n, n + 1)
    );
    // The same file with its middle cable cut in two is refused at that cable's line.
    let cut = text.replacen(
        &format!("a = \"s{}:1\"\nb = \"s{}:0\"", n / 2, n / 2 + 1),
        "a = \"s0:0\"\nb = \"n1\"",
        1,
    );
    let all = errors(&cut, &[]);
    assert!(
        all.iter().any(|e| e.message.contains("cabled twice")),
        "{all:#?}"
    );
}

#[test]
fn suggestions_keep_the_index_of_a_table() {
    let text = custom(&[]).replace("b = \"s0:1\"", "bb = \"s0:1\"");
    let e = about(&errors(&text, &[]), "topology.link[1].bb");
    assert!(
        e.message.ends_with("did you mean `topology.link[1].b`?"),
        "{e}"
    );
}
