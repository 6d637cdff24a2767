//! What loading refuses and warns about in a communication phase's keys: a flow's `bytes`,
//! `traffic.permutations` and `traffic.flow_bytes`, each error at its file, line and key.

use super::refusal_tests::{about, errors, load};

/// A 4-ary 2-tree under two superposed permutations.
const PERMS: &str = r#"sim_time = "1ms"
[topology]
kind = "kary_ntree"
k = 4
stages = 2
[traffic]
pattern = "permutations"
permutations = 2
flow_bytes = "64KB"
"#;

/// One finite flow from node 0 to node 1.
const FLOW: &str = r#"sim_time = "1ms"
[topology]
kind = "kary_ntree"
k = 4
stages = 2
[traffic]
pattern = "flows"
[[traffic.flow]]
src = 0
dst = 1
bytes = "12.5MB"
"#;

#[test]
fn a_phase_loads_with_its_flows() {
    let s = load(PERMS, &[]).unwrap();
    let p = s.phase.as_ref().unwrap();
    assert!(p.len() <= 32 && p.len() >= 16, "{}", p.len());
    assert!(
        p.iter()
            .all(|f| f.bytes == 65536 && f.flits == 1024 && f.rate == 1.0)
    );
    assert!(s.flows.iter().all(|f| f.is_empty()), "no Bernoulli source");
    let s = load(FLOW, &[]).unwrap();
    let f = s.phase.as_ref().unwrap()[0];
    assert_eq!(
        (f.src, f.dst, f.bytes, f.flits),
        (0, 1, 13_107_200, 204_800)
    );
    // A flow without `bytes` is a Bernoulli flow as before: no phase.
    let s = load(FLOW, &["traffic.flow[0].bytes=1B", "traffic.flow[1].src=2"]);
    assert!(s.is_err(), "the second flow has no dst");
    let plain = FLOW.replace("bytes = \"12.5MB\"\n", "rate = 0.5\n");
    let s = load(&plain, &[]).unwrap();
    assert!(s.phase.is_none() && s.flows[0].len() == 1);
}

#[test]
fn flow_sizes_out_of_range_are_refused_at_their_line() {
    let e = about(
        &errors(FLOW, &["traffic.flow[0].bytes=0B"]),
        "traffic.flow[0].bytes",
    );
    assert_eq!(e.at, "--set");
    assert!(e.message.contains("at least one byte"), "{e}");
    let text = FLOW.replace("12.5MB", "2048GB");
    let e = about(&errors(&text, &[]), "traffic.flow[0].bytes");
    assert_eq!(e.at, "s.toml:11");
    assert!(
        e.message.contains("beyond the largest flow, 2^40 bytes"),
        "{e}"
    );
    refused_with(&[
        ("traffic.flow[0].bytes=1000", "a bare number"),
        ("traffic.flow[0].bytes=1.5B", "not a whole number of bytes"),
        ("traffic.flow[0].bytes=3flits", "not a size unit of a flow"),
    ]);
}

/// Each `key=value` set on [`FLOW`] is refused at its key with a message that says `says`.
fn refused_with(cases: &[(&str, &str)]) {
    for &(set, says) in cases {
        let key = set.split('=').next().unwrap_or_default();
        let e = about(&errors(FLOW, &[set]), key);
        assert!(e.message.contains(says), "{set}: {e}");
    }
}

#[test]
fn a_finite_flow_has_no_stop_and_a_rate_above_zero() {
    refused_with(&[
        ("traffic.flow[0].stop=5us", "has no `stop`"),
        ("traffic.flow[0].rate=0", "never end"),
        ("traffic.flow[0].dst=0", "sends to itself"),
        ("traffic.flow[0].dst=16", "outside 0..=15"),
    ]);
    let s = load(FLOW, &["traffic.flow[0].start=2ms"]).unwrap();
    assert!(
        s.warnings[0].contains("traffic.flow[0].start") && s.warnings[0].contains("never ends"),
        "{:?}",
        s.warnings
    );
}

#[test]
fn permutations_out_of_range_or_without_a_size_are_refused() {
    let e = about(
        &errors(PERMS, &["traffic.permutations=0"]),
        "traffic.permutations",
    );
    assert!(e.message.contains("0 is outside 1..=64"), "{e}");
    let text = PERMS.replace("permutations = 2", "permutations = 100000");
    let e = about(&errors(&text, &[]), "traffic.permutations");
    assert_eq!(e.at, "s.toml:8");
    assert!(e.message.contains("100000 is outside 1..=64"), "{e}");
    let e = about(
        &errors(PERMS, &["traffic.permutations=-1"]),
        "traffic.permutations",
    );
    assert!(e.at == "--set", "{e}");
    let text = PERMS.replace("flow_bytes = \"64KB\"\n", "");
    let e = about(&errors(&text, &[]), "traffic.flow_bytes");
    assert!(e.message.contains("missing"), "{e}");
    let e = about(
        &errors(PERMS, &["traffic.flow_bytes=0KB"]),
        "traffic.flow_bytes",
    );
    assert!(e.message.contains("at least one byte"), "{e}");
    // One node has no other to send to.
    let one = PERMS.replace("k = 4\nstages = 2", "k = 1\nstages = 1");
    let e = about(&errors(&one, &[]), "traffic.pattern");
    assert!(e.message.contains("at least 2 end nodes"), "{e}");
}

#[test]
fn phase_keys_of_another_pattern_are_ignored_with_a_warning() {
    let text = PERMS.replace("\"permutations\"", "\"uniform\"");
    let s = load(&text, &[]).unwrap();
    assert!(s.phase.is_none());
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("traffic.permutations") && w.contains("ignored")),
        "{:?}",
        s.warnings
    );
    let s = load(PERMS, &["traffic.load=0.5"]).unwrap();
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("traffic.load") && w.contains("line rate")),
        "{:?}",
        s.warnings
    );
}

#[test]
fn the_injection_scheme_loads_with_a_phase_and_is_refused_or_ignored_otherwise() {
    use crate::traffic::phase::Injection;
    assert_eq!(load(PERMS, &[]).unwrap().phase_injection, Injection::Paced);
    for (name, want) in [("ps", Injection::Ps), ("svc", Injection::Svc)] {
        let s = load(PERMS, &[&format!("node.injection={name}")]).unwrap();
        assert_eq!(s.phase_injection, want);
    }
    let e = about(&errors(PERMS, &["node.injection=wfq"]), "node.injection");
    assert!(e.message.contains("paced, ps, svc"), "{e}");
    let text = PERMS.replace("\"permutations\"", "\"uniform\"");
    let s = load(&text, &["node.injection=ps"]).unwrap();
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("node.injection") && w.contains("ignored")),
        "{:?}",
        s.warnings
    );
}
