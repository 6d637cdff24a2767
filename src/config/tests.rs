//! Scenario loading: good files, and bad ones reported by file, line and key.

use super::*;
use crate::switch::{QueuingScheme, RoutingMode};

pub(super) const SMALL: &str = r#"
name = "small"
sim_time = "100us"
routing = "arn_afi"
queuing = "dbbm"

[topology]
kind = "kary_ntree"
k = 2
stages = 3

[switch]
buffer = "64KB"

[traffic]
pattern = "uniform"
load = 0.5
"#;

fn errs(text: &str, set: &[&str]) -> Vec<ScenarioError> {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    Scenario::from_text("s.toml", text, &set)
        .expect_err("must be refused")
        .0
}

fn err(text: &str) -> ScenarioError {
    errs(text, &[]).remove(0)
}

#[test]
fn a_small_scenario_converts_to_cycles_and_flits() {
    let s = Scenario::from_text("s.toml", SMALL, &[]).unwrap();
    assert_eq!(s.sim_cycles, 19_531);
    assert_eq!(s.topology.nodes, 8);
    assert_eq!(s.params.link_latency, 6, "5 m at 6 ns/m");
    assert_eq!(s.params.switch.queuing, QueuingScheme::Dbbm { vcs: 3 });
    assert_eq!(s.params.switch.vcs(), 4, "3 DBBM VCs and the AFC");
    assert_eq!(s.params.switch.vc_capacity, 1024 / 4);
    assert_eq!(s.params.switch.hcdth, 207, "81 % of 256");
    assert_eq!(s.flows.len(), 8);
}

#[test]
fn overrides_replace_keys() {
    let s = Scenario::from_text(
        "s.toml",
        SMALL,
        &[
            "routing=dmodk".into(),
            "sim_time=20us".into(),
            "traffic.load=0.25".into(),
        ],
    )
    .unwrap();
    assert_eq!(s.params.switch.routing, RoutingMode::DModK);
    assert_eq!(s.sim_cycles, 3906);
    assert!(s.params.check_order);
}

#[test]
fn unknown_key_names_file_line_and_key() {
    let e = err(&SMALL.replace("buffer = \"64KB\"", "bufer = \"64KB\""));
    assert_eq!(e.at, "s.toml:13");
    assert_eq!(e.key.as_deref(), Some("switch.bufer"));
    assert!(e.message.contains("unknown key"));
    assert_eq!(
        e.to_string(),
        "s.toml:13: key `switch.bufer`: unknown key; did you mean `switch.buffer`?"
    );
}

#[test]
fn wrong_units_are_refused() {
    let e = err(&SMALL.replace("\"100us\"", "\"100KB\""));
    assert_eq!(
        (e.at.as_str(), e.key.as_deref()),
        ("s.toml:3", Some("sim_time"))
    );
    assert!(e.message.contains("not a time unit"), "{e}");
    let e = err(&SMALL.replace("\"64KB\"", "\"64\""));
    assert_eq!(e.key.as_deref(), Some("switch.buffer"));
    assert!(e.message.contains("no unit"), "{e}");
}

#[test]
fn impossible_values_are_refused() {
    let e = err(&SMALL.replace("load = 0.5", "load = 1.5"));
    assert_eq!(
        (e.at.as_str(), e.key.as_deref()),
        ("s.toml:17", Some("traffic.load"))
    );
    let e = err(&SMALL.replace("\"64KB\"", "\"4KB\""));
    assert!(e.message.contains("less than one MTU"), "{e}");
    let e = err(&SMALL.replace("queuing = \"dbbm\"", "queuing = \"fifo\""));
    assert_eq!(e.key.as_deref(), Some("queuing"));
    let e = err(&SMALL.replace("k = 2", "k = \"two\""));
    assert!(e.message.contains("expected an integer"), "{e}");
    let e = err(&SMALL.replace("pattern = \"uniform\"", "pattern = \"h10\""));
    assert!(e.message.contains("432 and 3456"), "{e}");
    let e = errs(SMALL, &["routing=fast"]).remove(0);
    assert_eq!(e.at, "--set");
}

#[test]
fn broken_toml_names_the_line() {
    let e = err("sim_time = \"1us\"\n[topology\nkind = 1\n");
    assert_eq!(e.at, "s.toml:2");
    assert!(e.message.contains("not valid TOML"));
}

#[test]
fn a_key_given_twice_is_named_with_its_line() {
    let e = err(&SMALL.replace("k = 2", "k = 2\nk = 3"));
    assert!(e.message.contains("`k` is given twice"), "{e}");
    let line = SMALL.lines().position(|l| l == "k = 2").unwrap() + 2;
    assert_eq!(e.at, format!("s.toml:{line}"));
}

#[test]
fn a_scenario_file_that_is_not_utf8_is_refused_with_its_line() {
    let (_tmp, dir) = crate::scratch::folder("utf8");
    let p = dir.join("s.toml");
    std::fs::write(&p, b"seed = 1\n# caf\xe9\n").unwrap();
    let e = Scenario::load(p.to_str().unwrap(), &[])
        .unwrap_err()
        .0
        .remove(0);
    assert_eq!(e.at, format!("{}:2", p.display()));
    assert!(e.message.contains("not UTF-8"), "{e}");
}

#[test]
fn missing_required_keys() {
    let e = err("[topology]\nkind = \"rlft\"\nports = 12\nstages = 3\n");
    assert_eq!(e.key.as_deref(), Some("sim_time"));
    assert!(e.message.contains("missing"));
}

#[test]
fn custom_topology_and_explicit_flows() {
    let text = r#"
sim_time = "10us"
[topology]
kind = "custom"
nodes = 2
[[topology.switch]]
ports = 2
stage = 1
[[topology.link]]
a = "n0"
b = "s0:0"
[[topology.link]]
a = "n1"
b = "s0:1"
[traffic]
pattern = "flows"
[[traffic.flow]]
src = 0
dst = 1
rate = 0.5
size = "1KB"
"#;
    let s = Scenario::from_text("c.toml", text, &[]).unwrap();
    assert_eq!(s.topology.links.len(), 2);
    assert_eq!(s.flows[0].len(), 1);
    assert_eq!(s.flows[0][0].message_flits, 16);
    let all = errs(&text.replace("b = \"s0:1\"", "b = \"s0:7\""), &[]);
    let e = all
        .iter()
        .find(|e| e.key.as_deref() == Some("topology.link[1].b"))
        .expect("the link is named");
    assert!(e.message.contains("has ports 0 to 1, not 7"), "{e}");
    assert_eq!(e.at, "s.toml:14");
}

#[test]
fn node_arn_consumption_is_a_switch() {
    let s = Scenario::from_text("s.toml", SMALL, &[]).unwrap();
    assert!(s.params.node_consumes_arns, "on by default");
    let text = format!("{SMALL}\n[node]\nconsume_arns = false\n");
    let s = Scenario::from_text("s.toml", &text, &[]).unwrap();
    assert!(!s.params.node_consumes_arns);
    let text = format!("{SMALL}\n[node]\nconsume_arns = 3\n");
    let e = err(&text);
    assert_eq!(e.key.as_deref(), Some("node.consume_arns"));
    assert!(e.at.starts_with("s.toml:"), "{e}");
}

#[test]
fn the_send_memory_is_shared_or_split_per_vc() {
    use crate::fabric::node::SendMemory;
    let s = Scenario::from_text("s.toml", SMALL, &[]).unwrap();
    assert_eq!(
        s.params.node_send_memory,
        SendMemory::Shared,
        "shared by default"
    );
    let text = format!("{SMALL}\n[node]\nsend_memory = \"per_vc\"\n");
    let s = Scenario::from_text("s.toml", &text, &[]).unwrap();
    assert_eq!(s.params.node_send_memory, SendMemory::PerVc);
    let e = err(&format!("{SMALL}\n[node]\nsend_memory = \"split\"\n"));
    assert_eq!(e.key.as_deref(), Some("node.send_memory"));
    assert!(e.message.contains("shared, per_vc"), "{e}");
    // 100 packets of the 4 KB MTU: a queue pair holds them, a VC's part (256 / 3) does not.
    let big = SMALL.replace("load = 0.5", "load = 0.5\nmessage = \"400KB\"");
    assert!(Scenario::from_text("s.toml", &big, &[]).is_ok());
    let e = err(&format!("{big}\n[node]\nsend_memory = \"per_vc\"\n"));
    assert_eq!(e.key.as_deref(), Some("node.send_memory"));
    assert!(
        e.message.contains("3 regular VCs 85 packets") && e.message.contains("100 packets"),
        "{e}"
    );
    assert!(e.at.starts_with("s.toml:"), "{e}");
}

#[test]
fn adapted_refresh_is_a_switch_key() {
    let s = Scenario::from_text("s.toml", SMALL, &[]).unwrap();
    assert!(s.params.switch.adapted_refresh, "on by default");
    let s = Scenario::from_text("s.toml", SMALL, &["switch.adapted_refresh=false".into()]).unwrap();
    assert!(!s.params.switch.adapted_refresh);
    let e = err(&SMALL.replace("[switch]\n", "[switch]\nadapted_refresh = \"yes\"\n"));
    assert_eq!(e.key.as_deref(), Some("switch.adapted_refresh"));
    assert!(e.at.starts_with("s.toml:"), "{e}");
}

#[test]
fn output_arbitration_is_a_switch_key() {
    use crate::switch::OutputArbitration;
    let s = Scenario::from_text("s.toml", SMALL, &[]).unwrap();
    assert_eq!(s.params.switch.arbitration, OutputArbitration::RoundRobin);
    let set = ["switch.output_arbitration=\"fcfs\"".into()];
    let s = Scenario::from_text("s.toml", SMALL, &set).unwrap();
    assert_eq!(s.params.switch.arbitration, OutputArbitration::Fcfs);
    let e = err(&SMALL.replace("[switch]\n", "[switch]\noutput_arbitration = \"oldest\"\n"));
    assert_eq!(e.key.as_deref(), Some("switch.output_arbitration"));
    assert!(e.message.contains("round_robin, fcfs"), "{e}");
    assert!(e.at.starts_with("s.toml:"), "{e}");
}

#[test]
fn queuing_vcs_sets_the_regular_vcs_of_the_scheme() {
    let s = Scenario::from_text("s.toml", SMALL, &["queuing_vcs=7".into()]).unwrap();
    assert_eq!(s.params.switch.queuing, QueuingScheme::Dbbm { vcs: 7 });
    assert_eq!(s.params.switch.vcs(), 8, "7 DBBM VCs and the AFC");
    assert_eq!(s.params.switch.vc_capacity, 1024 / 8);
    let s = Scenario::from_text("s.toml", SMALL, &["queuing=\"1q\"".into()]).unwrap();
    assert_eq!(s.params.switch.vcs(), 2, "1q and the AFC");
}

const DRAGONFLY: &str = r#"sim_time = "1us"
routing = "dmodk"
[topology]
kind = "dragonfly"
a = 4
h = 2
p = 2
[traffic]
pattern = "uniform"
load = 0.5
"#;

#[test]
fn dragonflies_and_irregular_fabrics_load_with_their_routing_engine() {
    use crate::fabric::subnet_manager::RoutingEngine;
    let s = Scenario::from_text("d.toml", DRAGONFLY, &[]).unwrap();
    assert_eq!((s.topology.nodes, s.topology.switches.len()), (72, 36));
    assert_eq!(s.params.routing_engine, Some(RoutingEngine::Minhop));
    let set = ["routing_engine=updn".to_string()];
    let s = Scenario::from_text("d.toml", DRAGONFLY, &set).unwrap();
    assert_eq!(s.params.routing_engine, Some(RoutingEngine::Updn));
    let irregular = DRAGONFLY.replace(
        "kind = \"dragonfly\"\na = 4\nh = 2\np = 2",
        "kind = \"irregular\"\nswitches = 8\nlinks = 6\nseed = 3",
    );
    let s = Scenario::from_text("i.toml", &irregular, &[]).unwrap();
    assert_eq!((s.topology.nodes, s.topology.links.len()), (32, 32 + 24));
    // Fat trees keep D-mod-K unless told otherwise.
    let s = Scenario::from_text("s.toml", SMALL, &[]).unwrap();
    assert_eq!(s.params.routing_engine, Some(RoutingEngine::Ftree));
}

#[test]
fn layered_routing_engines_set_the_queuing_to_their_path_sls() {
    use crate::fabric::subnet_manager::RoutingEngine;
    use crate::switch::QueuingScheme;
    for (engine, vls) in [
        ("d3r_2vl", 2),
        ("d3r_3vl", 3),
        ("dfsssp", 8),
        ("dfly_vl_hops", 2),
        ("lash", 2),
    ] {
        let set = [format!("routing_engine={engine}")];
        let s = Scenario::from_text("d.toml", DRAGONFLY, &set).unwrap();
        assert_eq!(s.params.switch.queuing, QueuingScheme::PathSl { vcs: vls });
        assert_eq!(
            s.params.switch.vcs(),
            vls as usize,
            "{engine}: no AFC under dmodk"
        );
        assert_eq!(
            s.params.routing_engine.map(RoutingEngine::name),
            Some(engine)
        );
    }
    // With AFI the AFC comes on top: D3R-3VL under ARN+AFI has four VCs.
    let set = ["routing_engine=d3r_3vl".into(), "routing=arn_afi".into()];
    let s = Scenario::from_text("d.toml", DRAGONFLY, &set).unwrap();
    assert_eq!(s.params.switch.vcs(), 4);
    // A queuing scheme of more VCs would be a second SL policy: refused at its key.
    let e = errs(DRAGONFLY, &["routing_engine=d3r_2vl", "queuing=dbbm"]);
    assert!(
        e.iter().any(|e| e.key.as_deref() == Some("queuing")
            && e.message.contains("d3r_2vl")
            && e.message.contains("1q")),
        "{e:?}"
    );
    // D3R orders Dragonfly groups: other fabrics refuse it at the engine's key.
    let e = errs(SMALL, &["routing_engine=d3r_3vl"]);
    assert!(
        e.iter().any(
            |e| e.key.as_deref() == Some("routing_engine") && e.message.contains("Dragonflies")
        ),
        "{e:?}"
    );
    let set = ["routing_engine=dfsssp".into(), "queuing=1q".into()];
    let s = Scenario::from_text("s.toml", SMALL, &set);
    assert!(s.is_ok(), "dfsssp routes any fabric");
}

#[test]
fn mistakes_in_the_new_fabrics_are_named_at_their_key() {
    let e = errs(DRAGONFLY, &["routing_engine=ftree"]);
    assert!(
        e.iter().any(|e| e.key.as_deref() == Some("routing_engine")
            && e.at == "--set"
            && e.message.contains("fat trees")),
        "{e:?}"
    );
    let e = errs(DRAGONFLY, &["topology.a=40", "topology.h=30"]);
    assert!(
        e.iter()
            .any(|e| e.key.as_deref() == Some("topology.a") && e.message.contains("71 ports")),
        "{e:?}"
    );
    let irregular = DRAGONFLY.replace(
        "kind = \"dragonfly\"\na = 4\nh = 2\np = 2",
        "kind = \"irregular\"\nswitches = 5\nlinks = 3",
    );
    let e = errs(&irregular, &[]);
    assert!(
        e.iter().any(|e| e.key.as_deref() == Some("topology.links")
            && e.at == "s.toml:6"
            && e.message.contains("odd")),
        "{e:?}"
    );
    // Another kind's key is ignored with a warning that says why.
    let s = Scenario::from_text("d.toml", DRAGONFLY, &["topology.k=4".to_string()]).unwrap();
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("topology.k") && w.contains("dragonfly")),
        "{:?}",
        s.warnings
    );
}

#[test]
fn bit_reversal_needs_a_power_of_two_node_count() {
    let s = Scenario::from_text("s.toml", SMALL, &["traffic.pattern=\"bitrev\"".into()]).unwrap();
    assert_eq!(s.pattern, "bitrev");
    // 8 nodes, 3 bits: 0 (000), 2 (010), 5 (101) and 7 (111) read the same reversed.
    let silent: Vec<usize> = (0..8).filter(|&d| s.flows[d].is_empty()).collect();
    assert_eq!(silent, [0, 2, 5, 7]);
    assert_eq!(
        s.flows[1][0].dest,
        crate::fabric::node::Destination::Node(4)
    );
    assert_eq!(s.flows[1][0].rate, 0.5, "traffic.load");
    let e = errs(
        SMALL,
        &[
            "traffic.pattern=\"bitrev\"",
            "topology.k=3",
            "topology.stages=2",
        ],
    );
    let e = e
        .iter()
        .find(|e| e.key.as_deref() == Some("traffic.pattern"))
        .expect("refused at traffic.pattern");
    assert!(
        e.message
            .contains("power-of-two node count, the fabric has 9"),
        "{e}"
    );
}

#[test]
fn a_hot_share_names_its_node_or_draws_it_from_the_seed() {
    let set = |extra: &[&str]| -> Vec<String> {
        let mut v = vec!["traffic.pattern=\"hotspot\"".to_string()];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let e = errs(SMALL, &["traffic.pattern=\"hotspot\""]);
    assert!(
        e.iter()
            .any(|e| e.key.as_deref() == Some("traffic.hot_share")),
        "{e:?}"
    );
    let s = Scenario::from_text(
        "s.toml",
        SMALL,
        &set(&["traffic.hot_share=0.1", "traffic.hot_spots=[5]"]),
    )
    .unwrap();
    assert_eq!(s.pattern, "hotspot");
    let hot_of = |s: &Scenario| {
        s.flows
            .iter()
            .flatten()
            .find(|f| f.hot)
            .map(|f| f.dest)
            .expect("a hot flow")
    };
    assert_eq!(hot_of(&s), crate::fabric::node::Destination::Node(5));
    // Drawn from the seed: the same seed, the same node.
    let a = Scenario::from_text("s.toml", SMALL, &set(&["traffic.hot_share=0.1"])).unwrap();
    let b = Scenario::from_text("s.toml", SMALL, &set(&["traffic.hot_share=0.1"])).unwrap();
    assert_eq!(hot_of(&a), hot_of(&b));
    let e = errs(
        SMALL,
        &[
            "traffic.pattern=\"hotspot\"",
            "traffic.hot_share=0.1",
            "traffic.hot_spots=[1, 2]",
        ],
    );
    assert!(
        e.iter()
            .any(|e| e.key.as_deref() == Some("traffic.hot_spots")
                && e.message.contains("one hot node")),
        "{e:?}"
    );
    let e = errs(
        SMALL,
        &["traffic.pattern=\"hotspot\"", "traffic.hot_share=1.5"],
    );
    assert!(
        e.iter()
            .any(|e| e.key.as_deref() == Some("traffic.hot_share")),
        "{e:?}"
    );
}

#[test]
fn random_tables_and_slimmed_tops_load_or_are_refused_at_their_key() {
    use crate::fabric::subnet_manager::RoutingEngine;
    let set = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let s = Scenario::from_text("s.toml", SMALL, &set(&["routing_engine=random"])).unwrap();
    assert_eq!(
        s.params.routing_engine,
        Some(RoutingEngine::Random { seed: 1 })
    );
    let s = Scenario::from_text(
        "s.toml",
        SMALL,
        &set(&["routing_engine=random", "routing_seed=9"]),
    )
    .unwrap();
    assert_eq!(
        s.params.routing_engine,
        Some(RoutingEngine::Random { seed: 9 })
    );
    let e = errs(DRAGONFLY, &["routing_engine=random"]);
    assert!(
        e[0].to_string().contains("`random` routes fat trees"),
        "{e:?}"
    );
    // 2-ary 3-tree: 4 top switches, in groups of 2.
    let s = Scenario::from_text("s.toml", SMALL, &set(&["topology.top_switches=2"])).unwrap();
    assert_eq!(
        s.topology.switches.iter().filter(|w| w.stage == 3).count(),
        2
    );
    assert_eq!(s.topology.nodes, 8);
    for (top, says) in [
        ("3", "3: not a multiple of 2"),
        ("8", "outside 2..=4"),
        ("1", "outside 2..=4"),
    ] {
        let e = errs(SMALL, &[&format!("topology.top_switches={top}")]);
        let e = e[0].to_string();
        assert!(
            e.contains("topology.top_switches") && e.contains(says),
            "{top}: {e}"
        );
    }
}

#[test]
fn colored_tables_take_the_known_phases_or_are_refused_at_routing_engine() {
    use crate::fabric::subnet_manager::RoutingEngine;
    let set = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // Bit reversal on 8 nodes: one phase of the 4 nodes that do not map to themselves (000,
    // 010, 101 and 111 do).
    let s = Scenario::from_text(
        "s.toml",
        SMALL,
        &set(&["routing_engine=colored", "traffic.pattern=bitrev"]),
    )
    .unwrap();
    assert_eq!(s.params.routing_engine, Some(RoutingEngine::Colored));
    assert_eq!(s.params.routing_phases.len(), 1);
    assert_eq!(s.params.routing_phases[0].len(), 4);
    // Two superposed permutations of 8 nodes: one phase of their flows, weighted by bytes.
    let s = Scenario::from_text(
        "s.toml",
        SMALL,
        &set(&[
            "routing_engine=colored",
            "traffic.pattern=permutations",
            "traffic.permutations=2",
            "traffic.flow_bytes=\"64KB\"",
        ]),
    )
    .unwrap();
    let phase = &s.params.routing_phases[0];
    assert_eq!(s.params.routing_phases.len(), 1);
    assert_eq!(phase.len(), s.phase.as_ref().unwrap().len());
    assert!(phase.iter().all(|m| m.2 == 65536 && m.0 != m.1));
    // Uniform traffic has no destination known before the run.
    let e = errs(SMALL, &["routing_engine=colored"]);
    let e = e[0].to_string();
    assert!(
        e.contains("routing_engine") && e.contains("known before the run"),
        "{e}"
    );
    let e = errs(DRAGONFLY, &["routing_engine=colored"]);
    assert!(
        e[0].to_string().contains("`colored` routes fat trees"),
        "{e:?}"
    );
}

#[test]
fn smodk_routes_fat_trees_and_its_flows_keep_their_order() {
    let s = Scenario::from_text("s.toml", SMALL, &["routing=smodk".to_string()]).unwrap();
    assert_eq!(s.params.switch.routing, RoutingMode::SModK);
    assert!(
        s.params.check_order,
        "S-mod-K is deterministic: flows arrive in order"
    );
    let e = errs(DRAGONFLY, &["routing=smodk"]);
    let e = e[0].to_string();
    assert!(
        e.contains("key `routing`") && e.contains("`smodk` routes fat trees"),
        "{e}"
    );
}
