//! What loading refuses, and what it warns about: every refusal names its place and key, every
//! error of a file is reported in one load, and what loads builds.

use super::custom_refusal_tests::custom;
use super::*;
use crate::fabric::Fabric;
use crate::switch::QueuingScheme;

/// A 4-ary 2-tree under uniform traffic; tests replace what they study.
const BASE: &str = r#"sim_time = "20us"
[topology]
kind = "kary_ntree"
k = 4
stages = 2
[traffic]
pattern = "uniform"
load = 0.5
"#;

pub(super) fn load(text: &str, set: &[&str]) -> Result<Scenario, ScenarioErrors> {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    Scenario::from_text("s.toml", text, &set)
}

pub(super) fn errors(text: &str, set: &[&str]) -> Vec<ScenarioError> {
    load(text, set).expect_err("must be refused").0
}

/// The error about `key` (the test fails when there is none).
pub(super) fn about(all: &[ScenarioError], key: &str) -> ScenarioError {
    all.iter()
        .find(|e| e.key.as_deref() == Some(key))
        .unwrap_or_else(|| panic!("no error about `{key}` in {all:#?}"))
        .clone()
}

/// Builds the fabric and runs a few cycles: what loads runs.
pub(super) fn runs(s: &Scenario) {
    crate::with_lanes!(s.params.switch.vcs(), |V| {
        let mut f = Fabric::<V>::build(&s.topology, s.params.clone(), &s.flows).expect("builds");
        f.run(s.sim_cycles.min(200), &mut ()).expect("runs");
    })
}

#[test]
fn fabrics_beyond_the_unicast_lids_are_refused_with_the_limit() {
    let rlft = "sim_time = \"1us\"\n[topology]\nkind = \"rlft\"\nports = 28\nstages = 4\n[traffic]\npattern = \"uniform\"\n";
    let e = about(&errors(rlft, &[]), "topology.ports");
    assert_eq!(e.at, "s.toml:4");
    assert!(
        e.message
            .contains("28 ports and 4 stages give 76832 end nodes")
            && e.message.contains("hold 49152 end nodes"),
        "{e}"
    );
    let e = about(
        &errors(BASE, &["topology.k=8", "topology.stages=6"]),
        "topology.k",
    );
    assert!(e.message.contains("262144 end nodes"), "{e}");
    let e = about(
        &errors(&custom(&[]), &["topology.nodes=49153"]),
        "topology.nodes",
    );
    assert!(e.message.contains("49,152"), "{e}");
}

#[test]
fn a_16_ary_3_tree_builds() {
    // 4096 end nodes and 16 up ports: LMC 3, since LMC 4 would need 65,536 LIDs.
    let s = load(
        BASE,
        &["topology.k=16", "topology.stages=3", "sim_time=1us"],
    )
    .unwrap();
    assert_eq!(s.topology.nodes, 4096);
    runs(&s);
}

#[test]
fn the_largest_bundled_fabric_builds_and_runs() {
    // 16,000 nodes: LIDs up to 31,999 at LMC 1, beyond the 4,096 of a 16-ary 3-tree.
    let s = crate::cli::run::load("rlft40_uniform", &[]).unwrap();
    assert_eq!(
        (s.topology.nodes, s.topology.switches.len()),
        (16_000, 2_000)
    );
    crate::with_lanes!(s.params.switch.vcs(), |V| {
        let mut f = Fabric::<V>::build(&s.topology, s.params.clone(), &s.flows).expect("builds");
        assert_eq!(f.params().switch.lmc, 1);
        f.run(300, &mut ()).expect("runs");
        // Packets crossed the fabric, to destinations all over the LID range.
        assert!(f.totals().nodes.delivered_packets > 1_000);
    })
}

#[test]
fn huge_times_and_sizes_are_errors_not_saturated() {
    let all = errors(BASE, &["sim_time=1e30s", "traffic.message=1e30MB"]);
    assert!(about(&all, "sim_time").message.contains("2^40 cycles"));
    assert!(
        about(&all, "traffic.message")
            .message
            .contains("2^32 - 1 flits")
    );
    let all = errors(BASE, &["traffic.message=2MB"]);
    let e = about(&all, "traffic.message");
    assert!(e.message.contains("send queue holds 128"), "{e}");
    assert!(
        errors(BASE, &["link.length=1e12"])[0]
            .message
            .contains("65535")
    );
    let e = about(&errors(BASE, &["node.buffer=100MB"]), "node.buffer");
    assert!(e.message.contains("16-bit"), "{e}");
}

#[test]
fn a_value_of_no_use_is_one_error() {
    let all = errors(&BASE.replace("\"20us\"", "1979-05-27"), &[]);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(
        all[0].to_string(),
        "s.toml:1: key `sim_time`: datetime values are not used in scenarios"
    );
}

#[test]
fn bare_numbers_ask_for_a_unit() {
    let all = errors(BASE, &["sim_time=20", "switch.buffer=64"]);
    assert!(
        about(&all, "sim_time")
            .message
            .contains("write a time with its unit")
    );
    assert!(
        about(&all, "switch.buffer")
            .message
            .contains("write a size with its unit")
    );
}

#[test]
fn a_tiny_link_rate_is_blamed_on_the_rate() {
    let all = errors(BASE, &["link.rate=1Mb/s"]);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(all[0].key.as_deref(), Some("link.rate"));
    assert!(all[0].message.contains("1 to 10000 Gb/s"), "{}", all[0]);
}

#[test]
fn nan_zero_bins_and_zero_sizes_are_errors() {
    let text = BASE.replace("load = 0.5", "load = nan");
    assert!(
        about(&errors(&text, &[]), "traffic.load")
            .message
            .contains("finite")
    );
    let text = format!("{BASE}[link]\nlength = inf\n");
    let e = about(&errors(&text, &[]), "link.length");
    assert_eq!(e.at, "s.toml:10");
    assert!(
        about(&errors(BASE, &["bin=1ps"]), "bin")
            .message
            .contains("0 cycles")
    );
    let e = about(&errors(BASE, &["sim_time=1s", "bin=6ns"]), "bin");
    assert!(e.message.contains("at most 1048576"), "{e}");
    assert!(
        about(&errors(BASE, &["switch.arn_gap=0ns"]), "switch.arn_gap")
            .message
            .contains("1 to")
    );
}

#[test]
fn queuing_vcs_beyond_the_vls_or_on_one_queue_are_refused_at_their_line() {
    // BASE routes with ARN+AFI: 15 regular VCs and the AFC make InfiniBand's 16 VLs.
    let text = format!("queuing = \"dbbm\"\nqueuing_vcs = 16\n{BASE}");
    let all = errors(&text, &[]);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(
        all[0].to_string(),
        "s.toml:2: key `queuing_vcs`: 16 is outside 1..=15 (regular VCs; with the AFC at most 16 VCs per port, InfiniBand's data VLs)"
    );
    let e = about(
        &errors(&text, &["routing=\"arn\"", "queuing_vcs=17"]),
        "queuing_vcs",
    );
    assert_eq!(e.at, "--set");
    assert!(e.message.contains("outside 1..=16"), "{e}");
    let e = about(&errors(&text, &["queuing_vcs=0"]), "queuing_vcs");
    assert!(e.message.contains("outside 1..=15"), "{e}");
    let e = about(
        &errors(&format!("queuing_vcs = 2\n{BASE}"), &[]),
        "queuing_vcs",
    );
    assert_eq!(e.at, "s.toml:1");
    assert!(e.message.contains("`1q` has one regular VC"), "{e}");
    let e = about(&errors(&text, &["queuing_vcs=\"3\""]), "queuing_vcs");
    assert_eq!(e.at, "--set");
    // The whole range loads and runs: 1q alone, and 15 regular VCs with the AFC.
    runs(&load(&format!("queuing_vcs = 1\n{BASE}"), &[]).unwrap());
    let s = load(&text, &["queuing_vcs=15"]).unwrap();
    assert_eq!(s.params.switch.queuing, QueuingScheme::Dbbm { vcs: 15 });
    assert_eq!(s.params.switch.vcs(), 16);
    runs(&s);
    let s = load(&text, &["routing=\"dmodk\"", "queuing=\"flow2sl\""]).unwrap();
    assert_eq!(s.params.switch.vcs(), 16, "no AFC without AFI");
    runs(&s);
}

#[test]
fn random_destinations_need_two_nodes() {
    let e = about(&errors(BASE, &["topology.k=1"]), "traffic.pattern");
    assert!(e.message.contains("at least 2 end nodes"), "{e}");
    let e = about(
        &errors(BASE, &["topology.k=1", "traffic.pattern=h10"]),
        "traffic.pattern",
    );
    assert!(e.message.contains("has 1"), "{e}");
}

#[test]
fn every_error_is_reported_unknown_keys_first_with_a_suggestion() {
    let text = BASE
        .replace("sim_time", "sim_tme")
        .replace("load = 0.5", "load = 2\nmessage = \"4\"");
    let all = errors(&text, &["routing=fast"]);
    let shown: Vec<String> = all.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        shown,
        [
            "s.toml:1: key `sim_tme`: unknown key; did you mean `sim_time`?",
            "s.toml:8: key `traffic.load`: 2 is not a load between 0 and 1",
            "s.toml:9: key `traffic.message`: `4` has no unit; write a size such as `4KB` or `64B`",
            "s.toml: key `sim_time`: missing (a time such as `10ms`)",
            "--set: key `routing`: `fast` is not one of dmodk, oblivious, adaptive_th, adaptive_th_afi, arn, arn_afi, fa, smodk, snoop_ar, flow",
        ]
    );
    let text = format!("{}\n", shown.join("\n"));
    assert_eq!(ScenarioErrors(all).to_string() + "\n", text, "one per line");
}

#[test]
fn misplaced_keys_suggest_their_table() {
    let text = BASE.replace("[topology]\n", "");
    let e = about(&errors(&text, &[]), "kind");
    assert_eq!(e.message, "unknown key; did you mean `topology.kind`?");
    let e = about(&errors(BASE, &["switch.load=1"]), "switch.load");
    assert_eq!(e.message, "unknown key; did you mean `traffic.load`?");
    // A misspelt kind key is named, not only the kind found missing.
    let all = errors(
        &BASE.replace("kind", "knd").replace("pattern", "patern"),
        &[],
    );
    let e = about(&all, "topology.knd");
    assert_eq!(e.message, "unknown key; did you mean `topology.kind`?");
    let e = about(&all, "traffic.patern");
    assert_eq!(e.message, "unknown key; did you mean `traffic.pattern`?");
    assert!(about(&all, "topology.kind").message.starts_with("missing"));
}

#[test]
fn a_table_given_a_plain_value_is_named_so() {
    let e = about(&errors(&format!("switch = 5\n{BASE}"), &[]), "switch");
    assert_eq!(
        e.to_string(),
        "s.toml:1: key `switch`: expected a table, found an integer"
    );
    let e = about(&errors(BASE, &["link=\"fast\""]), "link");
    assert_eq!(e.message, "expected a table, found a string");
    let set = ["traffic.pattern=flows", "traffic.flow[0]=1"];
    let e = about(&errors(BASE, &set), "traffic.flow[0]");
    assert_eq!(e.message, "expected a table, found an integer");
}

#[test]
fn a_bad_trace_key_leaves_the_mapping_known() {
    let text = BASE.replace(
        "pattern = \"uniform\"\nload = 0.5",
        "pattern = \"trace\"\ntrace = 5\nmapping = \"linear\"",
    );
    let all = errors(&text, &[]);
    let shown: Vec<String> = all.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        shown,
        ["s.toml:8: key `traffic.trace`: expected a string, found an integer"]
    );
}

#[test]
fn a_64_bit_seed_is_taken() {
    let s = load(BASE, &["seed=18446744073709551615"]).unwrap();
    assert_eq!(s.seed, u64::MAX);
    let s = load(&format!("seed = 18446744073709551615\n{BASE}"), &[]).unwrap();
    assert_eq!(s.seed, u64::MAX);
    let s = load(&format!("seed = \"18446744073709551614\"\n{BASE}"), &[]).unwrap();
    assert_eq!(s.seed, u64::MAX - 1);
    let e = about(&errors(BASE, &["seed=18446744073709551616"]), "seed");
    assert!(e.message.contains("64-bit"), "{e}");
}

#[test]
fn a_nested_header_is_reported_at_its_line() {
    let text = format!("{BASE}\n\n[a.b.c.d]\n");
    let e = about(&errors(&text, &[]), "a.b.c.d");
    assert_eq!(
        (e.at.as_str(), e.message.as_str()),
        ("s.toml:11", "unknown table")
    );
    let text = format!("{BASE}\n\n[traffic.x.y.z]\nw = 1\n");
    assert_eq!(
        about(&errors(&text, &[]), "traffic.x.y.z.w").at,
        "s.toml:12"
    );
}

#[test]
fn a_table_made_by_set_is_blamed_on_set() {
    let text = BASE.replace(
        "pattern = \"uniform\"\nload = 0.5",
        "pattern = \"flows\"\n[[traffic.flow]]\nsrc = 0\ndst = 1",
    );
    load(&text, &[]).unwrap();
    let e = about(
        &errors(&text, &["traffic.flow[1].src=2"]),
        "traffic.flow[1].dst",
    );
    assert_eq!(e.at, "--set", "{e}");
    assert!(e.message.starts_with("missing"), "{e}");
}

#[test]
fn set_errors_say_set_and_the_key() {
    let e = &errors(BASE, &["=3"])[0];
    assert_eq!(e.to_string(), "--set: `=3` has an empty key");
    let e = &errors(BASE, &["traffic.flow[5].src=1"])[0];
    assert_eq!(e.at, "--set");
    assert_eq!(e.key.as_deref(), Some("traffic.flow[5].src"));
    assert!(e.message.contains("[0] to [0]"), "{e}");
    let e = &errors(BASE, &["a..b=1"])[0];
    assert_eq!((e.at.as_str(), e.key.as_deref()), ("--set", Some("a..b")));
    let e = &errors(BASE, &["swich.crt=1us"])[0];
    assert_eq!(
        e.to_string(),
        "--set: key `swich.crt`: unknown key; did you mean `switch.crt`?"
    );
    // Broken TOML that starts like an array or a string is its syntax error, not a string.
    let e = &errors(BASE, &["traffic.hot_spots=[3, 5"])[0];
    assert_eq!(
        e.to_string(),
        "--set: key `traffic.hot_spots`: `[3, 5` is not a TOML value: unclosed array, expected `]` (column 6)"
    );
    let e = &errors(BASE, &["traffic.hot_spots=[99999999999999999999]"])[0];
    assert!(e.message.ends_with("is beyond a 64-bit integer"), "{e}");
    let e = &errors(BASE, &["routing=\"arn"])[0];
    assert!(e.message.starts_with("`\"arn` is not a TOML value"), "{e}");
    // A huge number is shown in scientific notation.
    let e = &errors(BASE, &["traffic.load=1e308"])[0];
    assert_eq!(e.message, "1e308 is not a load between 0 and 1");
}

#[test]
fn hot_windows_outside_the_run_and_silent_flows_warn() {
    let s = load(
        &BASE.replace("uniform", "h25"),
        &["traffic.hot_spots=[3]", "traffic.hot_start=1ms"],
    )
    .unwrap();
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(s.warnings[0].starts_with("--set: key `traffic.hot_start`: the hot window starts"));
    let text = format!("{}stop = \"1us\"\nstart = \"2us\"\n", custom(&[]));
    let s = load(&text, &[]).unwrap();
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(
        s.warnings[0].contains("key `traffic.flow[0].stop`")
            && s.warnings[0].contains("never sends"),
        "{:?}",
        s.warnings
    );
    let s = load(&custom(&[]), &["traffic.flow[0].rate=0"]).unwrap();
    assert!(
        s.warnings[0].contains("traffic.flow[0].rate"),
        "{:?}",
        s.warnings
    );
    let s = load(&custom(&[]), &["traffic.load=0.5"]).unwrap();
    assert!(
        s.warnings[0].contains("key `traffic.load`: ignored"),
        "{:?}",
        s.warnings
    );
    let s = load(BASE, &["traffic.hot_start=1us"]).unwrap();
    assert!(
        s.warnings[0].contains("ignored: `traffic.pattern` is `uniform`"),
        "{:?}",
        s.warnings
    );
    assert!(load(BASE, &[]).unwrap().warnings.is_empty());
}

#[test]
fn lists_that_repeat_an_entry_warn() {
    let s = load(
        &BASE.replace("uniform", "h25-4"),
        &["traffic.hot_spots=[3, 5, 3, 7]"],
    )
    .unwrap();
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("key `traffic.hot_spots`")
                && w.contains("node 3 is listed more than once")),
        "{:?}",
        s.warnings
    );
    let s = load(&custom(&[]), &["topology.switch[0].up=[1, 1]"]);
    let warned = match &s {
        Ok(s) => s
            .warnings
            .iter()
            .any(|w| w.contains("port 1 is listed more than once")),
        Err(e) => e.to_string().contains("port 1 is listed more than once"),
    };
    assert!(warned, "{s:?}");
}

#[test]
fn fa_needs_a_packet_in_each_half_of_a_vc_and_two_to_sixteen_options() {
    // 4 KB per VC and a 4 KB MTU: the escape half cannot hold a packet.
    let e = about(
        &errors(
            BASE,
            &[
                "routing=\"fa\"",
                "switch.buffer=\"4KB\"",
                "switch.mtu=\"4KB\"",
            ],
        ),
        "switch.buffer",
    );
    assert!(
        e.message.contains("each half of a VC") && e.message.contains("at least 128"),
        "{e}"
    );
    let e = about(
        &errors(
            BASE,
            &[
                "routing=\"fa\"",
                "node.buffer=\"4KB\"",
                "switch.mtu=\"4KB\"",
            ],
        ),
        "node.buffer",
    );
    assert!(e.message.contains("each half of a VC"), "{e}");
    let e = about(
        &errors(BASE, &["routing_engine=\"fa_updn\"", "fa_options=17"]),
        "fa_options",
    );
    assert!(e.message.contains("17 is outside 2..=16"), "{e}");
    // Under another engine the key is ignored, with a warning naming it.
    let s = load(BASE, &["routing_engine=\"updn\"", "fa_options=3"]).unwrap();
    assert!(
        s.warnings.iter().any(|w| w.contains("fa_options")),
        "{:?}",
        s.warnings
    );
    let s = load(
        BASE,
        &[
            "routing=\"fa\"",
            "routing_engine=\"fa_updn\"",
            "fa_options=3",
            "traffic.adaptive_share=0.25",
        ],
    )
    .unwrap();
    assert_eq!(
        s.params.routing_engine,
        Some(crate::fabric::subnet_manager::RoutingEngine::FaUpdn { options: 3 })
    );
    assert_eq!(s.params.adaptive_share, 0.25);
    assert!(
        s.params.check_order,
        "the deterministic packets keep their order"
    );
    runs(&s);
    let e = about(
        &errors(BASE, &["traffic.adaptive_share=1.5"]),
        "traffic.adaptive_share",
    );
    assert!(
        e.message.contains("1.5 is not a share between 0 and 1"),
        "{e}"
    );
}

#[test]
fn a_table_array_given_as_a_value_names_what_it_must_be() {
    let text = BASE.replace(
        "pattern = \"uniform\"",
        "pattern = \"flows\"\nflow = [1, 2]",
    );
    let e = about(&errors(&text, &[]), "traffic.flow");
    assert_eq!(e.at, "s.toml:8");
    assert_eq!(
        e.message,
        "expected tables `[[traffic.flow]]`, found an array"
    );
    let set = ["traffic.pattern=\"flows\"", "traffic.flow=3"];
    let e = about(&errors(BASE, &set), "traffic.flow");
    assert_eq!(e.at, "--set");
    assert!(e.message.ends_with("found an integer"), "{e}");
}
