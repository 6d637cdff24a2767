//! Communication phases end to end: the bundled `phases16` run's `flows.csv` and summary, flows
//! alone on an idle fabric ending when the link parameters say, two flows sharing a destination
//! link at half the rate each, and a phase that the run's time cuts short.

use super::interrupt::Stop;
use super::run::{How, run};
use crate::config::Scenario;
use crate::fabric::Engine;
use crate::run::{Stepping, run_whole};
use crate::traffic::phase::permutation_flows;
use std::path::Path;

/// Runs `name` (a bundled scenario or a file) with `set` into `dir`.
fn run_into(name: &str, set: &[&str], dir: &Path) {
    run_on(name, set, dir, Engine::default());
}

/// [`run_into`] on `engine`.
fn run_on(name: &str, set: &[&str], dir: &Path, engine: Engine) {
    let stop = Stop::never();
    let how = How {
        step: Stepping {
            engine,
            ..Stepping::new(1, &stop)
        },
        quiet: true,
    };
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    run(name, Some(dir.to_path_buf()), &set, None, None, &how)
        .unwrap_or_else(|e| panic!("{name}: {}", e.message));
}

/// `flows.csv`'s rows: (src, dst, bytes, start_us, end_us, rate), the last two `None` when empty.
type Row = (u32, u32, u64, f64, Option<f64>, Option<f64>);

fn flows_csv(dir: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(dir.join("flows.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("src,dst,bytes,start_us,end_us,rate"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 6, "{l}");
            let opt = |s: &str| (!s.is_empty()).then(|| s.parse::<f64>().unwrap());
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                opt(f[4]),
                opt(f[5]),
            )
        })
        .collect()
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn the_bundled_phase_ends_every_flow_and_stops_at_its_bin() {
    let (_tmp, dir) = crate::scratch::folder("phases16");
    run_into("phases16", &[], &dir);
    let rows = flows_csv(&dir);
    // Two permutations of 16 nodes drawn from seed 1; nodes mapped to themselves send nothing.
    let want = permutation_flows(16, 2, 1, (262_144, 4096), 64);
    assert!(want.len() > 16 && want.len() <= 32);
    assert_eq!(rows.len(), want.len(), "a row per flow");
    for (r, w) in rows.iter().zip(&want) {
        assert_eq!((r.0, r.1, r.2, r.3), (w.src, w.dst, 262_144, 0.0));
        let rate = r.5.expect("every flow ends");
        assert!(rate > 0.0 && rate <= 1.0, "{r:?}");
    }
    let last = rows.iter().map(|r| r.4.unwrap()).fold(0.0, f64::max);
    let s = summary(&dir);
    assert_eq!(s["phase_completion_us"].as_f64(), Some(last));
    assert_eq!(s["phase_flows"].as_u64(), Some(want.len() as u64));
    assert_eq!(s["phase_flows_ended"].as_u64(), Some(want.len() as u64));
    assert_eq!(s["complete"].as_bool(), Some(true));
    assert_eq!(s["invariants"].as_str(), Some("ok"));
    // The run stops at the end of the 5 us bin (977 cycles) the phase completes in.
    let cycles = s["simulated_cycles"].as_u64().unwrap();
    let cycle_us = 64.0 * 8.0 / 100.0 / 1000.0;
    assert_eq!(cycles % 977, 0);
    assert!(cycles as f64 * cycle_us >= last && (cycles - 977) as f64 * cycle_us < last);
    // Every flit injected was delivered: the phase's flits and nothing else.
    let flits = s["flits_delivered"].as_u64().unwrap();
    assert_eq!(flits, want.len() as u64 * 4096);
    assert_eq!(s["flits_injected"].as_u64(), Some(flits));
}

/// A 4-ary 2-tree with links of 30 ns (6 cycles at 100 Gb/s), D-mod-K, the flows `flows`.
fn tree(flows: &str) -> String {
    format!(
        "sim_time = \"2ms\"\nbin = \"10us\"\nrouting = \"dmodk\"\n[topology]\nkind = \"kary_ntree\"\n\
         k = 4\nstages = 2\n[link]\nlatency = \"30ns\"\n[traffic]\npattern = \"flows\"\n{flows}"
    )
}

/// The cycle each flow of `text`'s phase ended in.
fn ends(text: &str) -> Vec<Option<u64>> {
    let s = Scenario::from_text("s.toml", text, &[]).unwrap();
    let e = run_whole(&s, &Stepping::new(1, &Stop::never())).unwrap();
    assert!(e.complete && e.invariants.is_ok());
    e.phase_ends.unwrap()
}

#[test]
fn a_flow_alone_ends_after_its_flits_and_the_path_latency() {
    // 100,000 bytes are 1,563 flits of 64 B (the last one half full): 24 packets of the 4 KB
    // MTU and one of 27 flits, injected back to back from cycle 195 (1 us at 5.12 ns, nearest).
    // The tail of the last flit leaves the source in 195 + 1,563 - 1. Each link is L = 6
    // cycles and each switch 3 (`docs/switch.md`: stored in t, routed in t+1, granted in t+2,
    // leaving in t+3), and each flit follows its head by its place in the packet, so the last
    // tail arrives `2L + 3` cycles after it left (one switch: nodes 0 and 1 share a leaf) and
    // `4L + 9` across the root (node 0 to node 15: leaf, root, leaf).
    let (start, flits, l) = (195, 1563, 6);
    let one = "[[traffic.flow]]\nsrc = 0\ndst = 1\nbytes = \"100000B\"\nstart = \"1us\"\n";
    assert_eq!(ends(&tree(one)), [Some(start + flits - 1 + 2 * l + 3)]);
    let far = one.replace("dst = 1", "dst = 15");
    assert_eq!(ends(&tree(&far)), [Some(start + flits - 1 + 4 * l + 9)]);
    // At half the link's rate a packet falls due every 128 cycles: the last (27 flits) is
    // posted at 195 + 2 x 1,536 and arrives 26 + 2L + 3 cycles later.
    let half = one.replace("start =", "rate = 0.5\nstart =");
    assert_eq!(
        ends(&tree(&half)),
        [Some(start + 2 * 1536 + 26 + 2 * l + 3)]
    );
}

#[test]
fn two_flows_into_one_node_share_its_link() {
    let (_tmp, dir) = crate::scratch::folder("phase-incast");
    let two = "[[traffic.flow]]\nsrc = 0\ndst = 1\nbytes = \"1MB\"\n\
               [[traffic.flow]]\nsrc = 2\ndst = 1\nbytes = \"1MB\"\n";
    let file = dir.join("two.toml");
    std::fs::write(&file, tree(two)).unwrap();
    run_into(file.to_str().unwrap(), &[], &dir.join("out"));
    let rows = flows_csv(&dir.join("out"));
    assert_eq!(rows.len(), 2);
    for r in &rows {
        // 16,384 flits each through one link of one flit per cycle: about 32,768 cycles.
        let rate = r.5.unwrap();
        assert!((rate - 0.5).abs() < 0.005, "{r:?}");
    }
}

#[test]
fn a_phase_the_run_cuts_short_has_no_completion() {
    let (_tmp, dir) = crate::scratch::folder("phase-short");
    // 256 KB flows take at least 4,096 cycles (21 us): none ends in 15 us.
    run_into("phases16", &["sim_time=15us"], &dir);
    let s = summary(&dir);
    assert!(s["phase_completion_us"].is_null(), "{s}");
    assert_eq!(s["phase_flows_ended"].as_u64(), Some(0));
    assert_eq!(s["complete"].as_bool(), Some(true), "it ran its whole time");
    let rows = flows_csv(&dir);
    assert!(rows.iter().all(|r| r.4.is_none() && r.5.is_none()));
    let text = std::fs::read_to_string(dir.join("flows.csv")).unwrap();
    assert!(text.lines().nth(1).unwrap().ends_with(",0,,"), "{text}");
}

#[test]
fn a_run_without_a_phase_writes_no_flows_csv() {
    let (_tmp, dir) = crate::scratch::folder("no-phase");
    run_into("default", &["sim_time=10us"], &dir);
    assert!(!dir.join("flows.csv").exists());
    let s = summary(&dir);
    assert!(s.get("phase_completion_us").is_none() && s.get("phase_flows").is_none());
}

/// Birk and Zdornov's figure 1 (`birk_figure1`): the flows' ends in units of one flow's time at
/// line rate, `T` (1 MB at 100 Gb/s).
fn figure1_ends(set: &[&str], rate: Option<f64>) -> Vec<f64> {
    let (_tmp, dir) = crate::scratch::folder("birk_figure1");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(root.join("scenarios/birk_figure1.toml")).unwrap();
    if let Some(r) = rate {
        text = text.replace("bytes = \"1MB\"", &format!("bytes = \"1MB\"\nrate = {r}"));
    }
    let file = dir.join("figure1.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.join("out");
    run_into(file.to_str().unwrap(), set, &out);
    let t = 1_048_576.0 * 8.0 / 100e9 * 1e6;
    flows_csv(&out).iter().map(|r| r.4.unwrap() / t).collect()
}

#[test]
fn birk_figure_1_spreads_congestion_under_round_robin_and_saa_rates_reach_the_bound() {
    // Round robin: f5 and f6 (the last two rows) get 1/3 of the root and end at 3 T; f1 to f4
    // share the victim link at 1/6 each until then, and end at 5 T, where 4 T would do.
    let ends = figure1_ends(&[], None);
    assert_eq!(ends.len(), 6);
    for (k, &e) in ends.iter().enumerate() {
        let want = if k >= 4 { 3.0 } else { 5.0 };
        assert!(
            (e - want).abs() < 0.1,
            "flow {}: {e:.3} T, the paper {want} T",
            k + 1
        );
    }
    // SAA's rates (W_f = 4 on every flow's path: r = 1/4) end every flow at 4 T, the bound.
    let ends = figure1_ends(&[], Some(0.25));
    for (k, &e) in ends.iter().enumerate() {
        assert!(
            (e - 4.0).abs() < 0.02,
            "flow {}: {e:.3} T at rate 1/4",
            k + 1
        );
    }
}

#[test]
fn flow_routing_sets_up_every_flow_and_spreads_a_permutation() {
    let (_tmp, dir) = crate::scratch::folder("phases16_flow");
    let one = ["traffic.permutations=1"];
    let run = |routing: &str, engine: Engine| {
        let out = dir.join(format!("{routing}_{engine:?}"));
        run_on(
            "phases16",
            &[one[0], &format!("routing={routing}")],
            &out,
            engine,
        );
        out
    };
    let (dmodk, flow) = (run("dmodk", Engine::Event), run("flow", Engine::Event));
    let (d, f) = (summary(&dmodk), summary(&flow));
    let flows = flows_csv(&flow);
    assert!(flows.iter().all(|r| r.4.is_some()), "every flow ends");
    // Each flow's setup and teardown, and their acknowledgements, are packets of their own.
    let packets = |s: &serde_json::Value| s["packets_delivered"].as_u64().unwrap();
    assert_eq!(packets(&f), packets(&d) + 4 * flows.len() as u64);
    // D-mod-K puts two flows of the permutation on one link; the setups spread them.
    let phase = |s: &serde_json::Value| s["phase_completion_us"].as_f64().unwrap();
    assert!(
        phase(&f) < 0.6 * phase(&d),
        "flow routing {} us, D-mod-K {} us",
        phase(&f),
        phase(&d)
    );
    // The cycle engine computes the same phase.
    let cycle = run("flow", Engine::Cycle);
    let read = |d: &Path| std::fs::read(d.join("flows.csv")).unwrap();
    assert_eq!(read(&cycle), read(&flow));
}
