//! Random and mutated scenario texts and `--set` values through loading: no panic, every
//! refusal placed (`file:line`, the file, or `--set`) and naming a key or a line, and what
//! loads builds and runs.

use super::*;
use crate::cli::run::BUNDLED;
use crate::fabric::Fabric;
use proptest::prelude::*;

/// Values that sit on or beyond the limits, of every type.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "3",
    "15",
    "16",
    "65",
    "4097",
    "1e30",
    "nan",
    "inf",
    "-inf",
    "0.5",
    "true",
    "\"\"",
    "\"0ns\"",
    "\"1ps\"",
    "\"1e30s\"",
    "\"nanms\"",
    "\"30\"",
    "\"4KB\"",
    "\"0B\"",
    "\"1e30MB\"",
    "\"2MB\"",
    "18446744073709551615",
    "18446744073709551616",
    "[]",
    "[0, 1]",
    "[9999]",
    "[-1]",
    "\"n0\"",
    "\"n1\"",
    "\"s0:0\"",
    "\"s1:2\"",
    "\"s99:99\"",
    "\"x\"",
    "1979-05-27",
    "{ a = 1 }",
    "\"custom\"",
    "\"rlft\"",
    "\"kary_ntree\"",
    "\"dragonfly\"",
    "\"irregular\"",
    "\"updn\"",
    "\"minhop\"",
    "\"ftree\"",
    "\"flows\"",
    "\"h10\"",
    "\"h25-4\"",
    "\"uniform\"",
    "\"dmodk\"",
    "\"flow2sl\"",
    "\"ib_cca\"",
    "\"1Mb/s\"",
    "\"100Tb/s\"",
    "\"1s\"",
];

/// Keys and table headers of scenarios (and near misses).
const KEYS: &[&str] = &[
    "seed",
    "sim_time",
    "sim_tme",
    "bin",
    "routing",
    "queuing",
    "queuing_vcs",
    "watchdog",
    "rate_control",
    "switch.cc_threshold",
    "switch.cc_marking_rate",
    "switch.cc_packet_size",
    "switch.cc_victim_mask",
    "node.ccti_increase",
    "node.ccti_limit",
    "node.ccti_timer",
    "node.cct_step",
    "node.rate_limiters",
    "switch.qcn_qeq",
    "switch.qcn_w",
    "switch.qcn_sample",
    "node.qcn_gd",
    "node.qcn_bc_limit",
    "node.qcn_timer",
    "node.qcn_fast_recovery",
    "node.qcn_r_ai",
    "node.qcn_r_hai",
    "node.qcn_min_rate",
    "topology.kind",
    "topology.ports",
    "topology.k",
    "topology.stages",
    "topology.nodes",
    "topology.a",
    "topology.h",
    "topology.p",
    "topology.switches",
    "topology.links",
    "topology.nodes_per_switch",
    "topology.seed",
    "routing_engine",
    "topology.switch[0].ports",
    "topology.switch[0].up",
    "topology.link[0].a",
    "topology.link[1].b",
    "topology.link[7].a",
    "link.rate",
    "link.flit",
    "link.latency",
    "link.length",
    "switch.buffer",
    "switch.mtu",
    "switch.crt",
    "switch.arn_ttl",
    "switch.arn_gap",
    "switch.arn_entries",
    "switch.hcdth",
    "switch.lcdth",
    "node.buffer",
    "node.send_memory",
    "traffic.pattern",
    "traffic.load",
    "traffic.message",
    "traffic.hot_start",
    "traffic.hot_duration",
    "traffic.hot_spots",
    "traffic.flow[0].src",
    "traffic.flow[0].stop",
    "traffic.flow[1].dst",
    "traffic.flow[0].size",
    "",
];

const HEADERS: &[&str] = &[
    "[topology]",
    "[[topology.switch]]",
    "[[topology.link]]",
    "[traffic]",
    "[[traffic.flow]]",
    "[switch]",
    "[link]",
    "[a.b.c]",
    "[[topology]]",
];

/// Loads and checks the property.
fn check(text: &str, set: &[String]) -> Result<(), TestCaseError> {
    match Scenario::from_text("s.toml", text, set) {
        Err(all) => {
            prop_assert!(!all.0.is_empty());
            for e in &all.0 {
                let shown = e.to_string();
                prop_assert!(
                    e.at.starts_with("s.toml") || e.at == "--set",
                    "unplaced: {shown}"
                );
                prop_assert!(
                    e.key.is_some() || e.at.starts_with("s.toml:") || e.at == "--set",
                    "names neither a key nor a line: {shown}"
                );
            }
        }
        Ok(s) => {
            for w in &s.warnings {
                prop_assert!(w.starts_with("s.toml") || w.starts_with("--set"), "{w}");
                prop_assert!(w.contains("key `"), "{w}");
            }
            if s.topology.nodes <= 64 && s.topology.links.len() <= 256 {
                crate::with_lanes!(s.params.switch.vcs(), |V| {
                    let mut f = Fabric::<V>::build(&s.topology, s.params.clone(), &s.flows)
                        .map_err(|e| {
                            TestCaseError::fail(format!("loads but does not build: {e}"))
                        })?;
                    f.run(s.sim_cycles.min(100), &mut ())
                        .map_err(|e| TestCaseError::fail(format!("loads but fails: {e}")))?;
                })
            }
        }
    }
    Ok(())
}

/// One edit of a scenario text: (what, line, value, byte).
type Edit = (u8, usize, usize, u8);

fn mutate(text: &str, edits: &[Edit]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for &(what, line, value, byte) in edits {
        if lines.is_empty() {
            lines.push(String::new());
        }
        let i = line % lines.len();
        let v = VALUES[value % VALUES.len()];
        match what % 8 {
            0..=2 => {
                // Replace the value of a `key = value` line.
                if let Some((k, _)) = lines[i].split_once('=') {
                    lines[i] = format!("{k}= {v}");
                }
            }
            3 => {
                lines.remove(i);
            }
            4 => {
                let k = KEYS[value % KEYS.len()].rsplit('.').next().unwrap_or("");
                lines.insert(i, format!("{k} = {v}"));
            }
            5 => lines.insert(i, HEADERS[byte as usize % HEADERS.len()].to_string()),
            6 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            _ => {
                // Change one character.
                let mut b = lines[i].clone().into_bytes();
                if !b.is_empty() {
                    let at = byte as usize % b.len();
                    b[at] = b"=[]\"#.,:0x9 "[value % 12];
                }
                lines[i] = String::from_utf8_lossy(&b).into_owned();
            }
        }
    }
    lines.join("\n")
}

fn sets() -> impl Strategy<Value = Vec<String>> {
    let assignment = prop_oneof![
        (0..KEYS.len(), 0..VALUES.len()).prop_map(|(k, v)| format!(
            "{}={}",
            KEYS[k],
            VALUES[v].trim_matches('"')
        )),
        (0..KEYS.len(), 0..VALUES.len()).prop_map(|(k, v)| format!("{}={}", KEYS[k], VALUES[v])),
        "[ -~]{0,24}",
    ];
    prop::collection::vec(assignment, 0..4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn mutated_bundled_scenarios(
        which in 0..BUNDLED.len(),
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), any::<u8>()), 1..5),
        set in sets(),
    ) {
        // Mostly the small ones, which also build and run.
        let which = if which % 3 == 0 { which } else { which % 2 };
        check(&mutate(BUNDLED[which].1, &edits), &set)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_texts(bytes in prop::collection::vec(any::<u8>(), 0..300), set in sets()) {
        check(&String::from_utf8_lossy(&bytes), &set)?;
    }

    #[test]
    fn random_sets_on_the_default_scenario(set in sets()) {
        check(BUNDLED[0].1, &set)?;
    }
}
