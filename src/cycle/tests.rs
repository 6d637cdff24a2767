//! The cycle engine against the event engine, in situ: every switch of a fabric is recorded
//! while the fabric runs on the event engine, and a cycle-engine twin of it replays its inputs;
//! every output of every cycle must match.

use super::compare::Replay;
use super::{PortIn, PortOut};
use crate::cli::scenarios;
use crate::config::Scenario;
use crate::fabric::{Engine, Fabric};
use crate::wire::link::FEW_VCS;

/// Runs `scenario` (bundled name) with `overrides` on the event engine, replaying every switch on
/// the cycle engine; returns the cycles compared per switch, or the first difference.
pub(crate) fn lockstep_all(name: &str, overrides: &[&str]) -> Result<Vec<u64>, String> {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let s = scenarios::load(name, &overrides)?;
    crate::with_lanes!(s.params.switch.vcs(), |V| lockstep_on::<V>(&s))
}

/// [`lockstep_all`] on a fabric of `V` VC lanes.
fn lockstep_on<const V: usize>(s: &Scenario) -> Result<Vec<u64>, String> {
    let mut f = Fabric::<V>::build(&s.topology, s.params.clone(), &s.flows)?;
    f.set_engine(Engine::Event);
    let mut replays: Vec<Replay> = (0..f.switches().len())
        .map(|sw| Replay::new(f.cycle_twin(sw)))
        .collect();
    let all: Vec<u32> = (0..replays.len() as u32).collect();
    let peers: Vec<Vec<Option<(u32, usize)>>> = f
        .switches()
        .iter()
        .map(|sw| (0..sw.ports()).map(|p| f.switch_peer(sw.id(), p)).collect())
        .collect();
    let mut links = Links::new(s.params.link_latency as u64);
    let mut first: Option<String> = None;
    let r = f.run_recorded(s.sim_cycles, &mut (), &all, &mut |sw, c, ins, outs| {
        if first.is_some() {
            return Ok(());
        }
        let checked = replays[sw as usize]
            .check(c, ins, outs)
            .map_err(|e| format!("switch {sw}: {e}"))
            .and_then(|()| links.check(sw, c, ins, outs, &peers[sw as usize]));
        first = checked.err();
        Ok(())
    });
    if let Some(e) = first {
        return Err(e);
    }
    r.map_err(|v| format!("{v:?}"))?;
    Ok(replays.iter().map(|r| r.cycles()).collect())
}

/// The links between recorded switches: what a port drives in cycle `t` (its output link's flit,
/// its input's credits and ARN upstream) is what the port at the far end receives in
/// `t + latency`. The replays check each switch against its twin; this checks what joins them.
struct Links {
    latency: u64,
    /// What each (switch, port) drove in each cycle, until its far end's frame of that cycle
    /// plus the latency comes.
    sent: std::collections::HashMap<(u32, usize, u64), PortOut>,
}

impl Links {
    fn new(latency: u64) -> Self {
        Links {
            latency,
            sent: Default::default(),
        }
    }

    /// Switch `sw`'s frame of cycle `c`, its ports' far ends `peers` (the frames of a cycle
    /// come after those of `c - latency`, window by window).
    fn check(
        &mut self,
        sw: u32,
        c: u64,
        ins: &[PortIn],
        outs: &[PortOut],
        peers: &[Option<(u32, usize)>],
    ) -> Result<(), String> {
        for (p, peer) in peers.iter().enumerate() {
            let Some((far, q)) = *peer else {
                continue;
            };
            self.sent.insert((sw, p, c), outs[p]);
            let Some(t) = c.checked_sub(self.latency) else {
                continue;
            };
            let Some(d) = self.sent.remove(&(far, q, t)) else {
                return Err(format!("switch {far} port {q}: no frame of cycle {t}"));
            };
            let arrived = PortIn {
                flit: d.flit,
                credit: d.credit,
                arn: d.arn.map(|a| crate::wire::ArnInfo { port: 0, ..a }),
                cnm: d.cnm,
            };
            if ins[p] != arrived {
                return Err(format!(
                    "cycle {c}, port {p}: link from switch {far} port {q} (sent in cycle {t}): \
                     switch {sw} received {:?}, switch {far} drove {:?}",
                    ins[p], d
                ));
            }
        }
        Ok(())
    }
}

#[test]
fn every_switch_of_default_matches_the_event_engine() {
    let cycles = lockstep_all("default", &[]).unwrap_or_else(|e| panic!("{e}"));
    assert!(cycles.iter().all(|&c| c > 10_000), "{cycles:?}");
}

/// ARN entries that live 1 us (195 cycles), refreshed every 100 ns while their root holds: they
/// expire all through the hot spot, with heads looking them up in the cycles they do.
#[test]
fn every_switch_of_default_with_short_lived_arn_entries_matches_the_event_engine() {
    let sets = ["switch.arn_ttl=\"1us\"", "switch.arn_gap=\"100ns\""];
    let cycles = lockstep_all("default", &sets).unwrap_or_else(|e| panic!("{e}"));
    assert!(cycles.iter().all(|&c| c > 10_000), "{cycles:?}");
}

#[test]
fn every_switch_of_figure4_matches_the_event_engine() {
    let cycles = lockstep_all("figure4", &[]).unwrap_or_else(|e| panic!("{e}"));
    assert!(cycles.iter().all(|&c| c > 1_000), "{cycles:?}");
}

/// Sixteen VCs per port, InfiniBand's VLs: DBBM over 15 regular VCs and the AFC, under ARN+AFI on
/// the default 4-ary 2-tree (a fabric of 16 VC lanes).
#[test]
fn every_switch_of_a_16_vc_fabric_matches_the_event_engine() {
    let sets = ["queuing=\"dbbm\"", "queuing_vcs=15", "sim_time=\"120us\""];
    let cycles = lockstep_all("default", &sets).unwrap_or_else(|e| panic!("{e}"));
    assert!(cycles.iter().all(|&c| c > 10_000), "{cycles:?}");
}

/// Every switch of the irregular fabric under FA with escape routes, near saturation, half of
/// the packets allowed to route adaptively, with `more` settings: its lockstep with its
/// cycle-engine twin, each switch stepping over 1,000 cycles.
fn irregular16_under_fa(more: &[&str]) {
    let mut sets = vec![
        "routing=\"fa\"",
        "routing_engine=\"fa_updn\"",
        "traffic.load=0.9",
        "traffic.adaptive_share=0.5",
    ];
    sets.extend_from_slice(more);
    let cycles = lockstep_all("irregular16", &sets).unwrap_or_else(|e| panic!("{more:?}: {e}"));
    assert!(cycles.iter().all(|&c| c > 1_000), "{cycles:?}");
}

/// FA on the irregular fabric with two and three routing options: packets take adaptive
/// options, and some leave them for their escape route; every switch equals its cycle-engine
/// twin.
#[test]
fn every_switch_of_an_irregular_fabric_under_fa_matches_the_event_engine() {
    for options in ["fa_options=2", "fa_options=3"] {
        irregular16_under_fa(&[options, "sim_time=\"1ms\""]);
    }
}

/// First come, first served at every output, on `default` under ARN+AFI (hot spot included) and
/// on the irregular fabric under FA (heads that leave for their escape routes take new stamps):
/// every switch equals its cycle-engine twin.
#[test]
fn every_switch_under_fcfs_arbitration_matches_the_event_engine() {
    let fcfs = "switch.output_arbitration=\"fcfs\"";
    let cycles = lockstep_all("default", &[fcfs]).unwrap_or_else(|e| panic!("{e}"));
    assert!(cycles.iter().all(|&c| c > 10_000), "{cycles:?}");
    irregular16_under_fa(&[fcfs, "sim_time=\"300us\""]);
}

/// InfiniBand congestion control's FECN marking at every output, on `default` under ARN+AFI
/// (every eligible packet over a low threshold, and every fourth with half the ports marking as
/// victims too) and on the irregular fabric under FA (packets still arriving when they leave for
/// their escape routes count in their new output's queue): every switch, FECN bits included,
/// equals its cycle-engine twin.
#[test]
fn every_switch_under_fecn_marking_matches_the_event_engine() {
    for sets in [
        &[
            "switch.cc_threshold=15",
            "switch.cc_marking_rate=0",
            "switch.cc_packet_size=0",
        ][..],
        &[
            "switch.cc_threshold=12",
            "switch.cc_marking_rate=3",
            "switch.cc_victim_mask=0x55",
        ],
    ] {
        let cycles = lockstep_all("default", sets).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
        assert!(cycles.iter().all(|&c| c > 10_000), "{cycles:?}");
    }
    irregular16_under_fa(&[
        "rate_control=\"ib_cca\"",
        "node.ccti_timer=\"5us\"",
        "node.ccti_increase=4",
        "switch.cc_marking_rate=1",
        "switch.cc_packet_size=0",
        "sim_time=\"300us\"",
    ]);
}

/// IEEE 802.1Qau on `default` under D-mod-K and ARN+AFI, and on the irregular fabric under FA:
/// congestion points sampling every packet over a low equilibrium (CNMs queueing at ports, some
/// dropped) or every 16 KB, the sources' limiters on short timers; every switch, CNMs included,
/// equals its cycle-engine twin.
#[test]
fn every_switch_under_qcn_matches_the_event_engine() {
    let qcn = [
        "rate_control=\"qcn\"",
        "switch.qcn_qeq=\"1KB\"",
        "node.qcn_timer=\"2us\"",
        "node.qcn_bc_limit=\"8KB\"",
    ];
    for (routing, sample) in [("dmodk", "64B"), ("arn_afi", "16KB")] {
        let mut sets = qcn.to_vec();
        let (r, n) = (
            format!("routing=\"{routing}\""),
            format!("switch.qcn_sample=\"{sample}\""),
        );
        sets.extend([r.as_str(), n.as_str()]);
        let cycles = lockstep_all("default", &sets).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
        assert!(cycles.iter().all(|&c| c > 10_000), "{cycles:?}");
    }
    let mut sets = qcn.to_vec();
    sets.extend(["switch.qcn_sample=\"256B\"", "sim_time=\"300us\""]);
    irregular16_under_fa(&sets);
}

mod random_fabrics {
    use super::lockstep_all;
    use proptest::prelude::*;

    fn routing() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "dmodk",
            "oblivious",
            "adaptive_th",
            "adaptive_th_afi",
            "arn",
            "arn_afi",
            "fa",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Small fabrics (k-ary n-trees and the custom figure-4 fabric) with random routing
        /// modes, queuing schemes and their VC counts (1 to 16 VCs per port), loads, link
        /// latencies, buffers, seeds, output arbitrations, FECN marking settings and the HCAs'
        /// congestion control (InfiniBand's or QCN's): every
        /// switch of the event engine
        /// equals its cycle-engine twin in every cycle.
        #[test]
        fn event_and_cycle_engines_agree(
            shape in prop::sample::select(vec!["k2n2", "k3n2", "k2n3", "figure4"]),
            routing in routing(),
            queuing in prop::sample::select(vec!["1q", "dbbm", "vftree", "flow2sl"]),
            regular_vcs in 1u8..=16,
            latency in 1u32..6,
            load in 0.2f64..1.0,
            buffer_kb in prop::sample::select(vec![16u32, 32, 64]),
            seed in 0u64..1000,
            arbitration in prop::sample::select(vec!["round_robin", "fcfs"]),
            cc_threshold in prop::sample::select(vec![0u8, 0, 9, 15]),
            cc_rate in 0u16..4,
            rate_control in prop::sample::select(vec!["none", "ib_cca", "qcn"]),
        ) {
            let mut sets = vec![
                format!("routing=\"{routing}\""),
                format!("queuing=\"{queuing}\""),
                format!("link.latency=\"{:.2}ns\"", latency as f64 * 5.12),
                format!("seed={seed}"),
                "sim_time=\"12us\"".to_string(),
                "switch.crt=\"1us\"".to_string(),
                "switch.arn_gap=\"100ns\"".to_string(),
                format!("switch.output_arbitration=\"{arbitration}\""),
                format!("switch.cc_threshold={cc_threshold}"),
                format!("switch.cc_marking_rate={cc_rate}"),
                "switch.cc_packet_size=0".to_string(),
            ];
            // The HCAs' half: CNPs in the fabric and sources slowed.
            if rate_control == "ib_cca" && cc_threshold != 0 {
                sets.extend([
                    "rate_control=\"ib_cca\"".to_string(),
                    "node.ccti_timer=\"2us\"".to_string(),
                    "node.ccti_increase=3".to_string(),
                    "node.cct_step=\"64B\"".to_string(),
                ]);
            }
            // QCN: congestion points over a low equilibrium, CNMs upstream, sources slowed.
            if rate_control == "qcn" {
                sets.extend([
                    "rate_control=\"qcn\"".to_string(),
                    "switch.qcn_qeq=\"512B\"".to_string(),
                    "switch.qcn_sample=\"2KB\"".to_string(),
                    "node.qcn_timer=\"2us\"".to_string(),
                    "node.qcn_bc_limit=\"4KB\"".to_string(),
                ]);
            }
            // `1q` has one regular VC; with the AFC under AFI at most 15, for 16 VCs in all.
            if queuing != "1q" {
                let most = if routing.ends_with("_afi") { 15 } else { 16 };
                sets.push(format!("queuing_vcs={}", regular_vcs.min(most)));
            }
            // FA's halves of a VC each hold a packet: 256-byte packets, on the k-ary n-trees.
            prop_assume!(routing != "fa" || shape != "figure4");
            let mtu = if routing == "fa" { "256B" } else { "1KB" };
            let scenario = if shape == "figure4" {
                "figure4"
            } else {
                sets.push(format!("switch.buffer=\"{buffer_kb}KB\""));
                sets.push(format!("switch.mtu=\"{mtu}\""));
                sets.push(format!("traffic.load={load:.2}"));
                sets.push("traffic.hot_start=\"2us\"".to_string());
                sets.push("traffic.hot_spots=[1]".to_string());
                sets.push(format!("topology.k={}", &shape[1..2]));
                sets.push(format!("topology.stages={}", &shape[3..4]));
                "default"
            };
            let sets: Vec<&str> = sets.iter().map(|s| s.as_str()).collect();
            let cycles = lockstep_all(scenario, &sets).map_err(TestCaseError::fail)?;
            prop_assert!(cycles.iter().all(|&c| c > 2_000));
        }
    }
}

/// Configuration 1 under H10 with ARN+AFI, hot spot and CRT brought forward as in the figure-6
/// runs: the switch that first becomes a congestion root, from reset (which is less than 100 us
/// before its root is detected) to 500 us after, equals its cycle-engine twin in every cycle.
#[test]
fn the_first_root_switch_of_configuration_1_matches_the_event_engine() {
    let sets = [
        "traffic.hot_start=\"10us\"",
        "switch.crt=\"20us\"",
        "sim_time=\"1ms\"",
    ];
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let s = scenarios::load("paper/config1_h10", &sets).expect("loads");
    let build = || Fabric::<FEW_VCS>::build(&s.topology, s.params.clone(), &s.flows);
    let (sw, detected) = crate::fabric::record::first_root(build, s.sim_cycles)
        .expect("runs")
        .expect("a root forms");
    let until = detected + (500_000.0 / s.time_base.cycle_ns()).round() as u64;
    let mut f = Fabric::<FEW_VCS>::build(&s.topology, s.params.clone(), &s.flows).expect("builds");
    f.set_engine(Engine::Event);
    let mut replay = Replay::new(f.cycle_twin(sw as usize));
    let mut first = None;
    let (mut flits, mut arns) = (0u64, 0u64);
    f.run_recorded(until + 1, &mut (), &[sw], &mut |_, c, ins, outs| {
        flits += outs.iter().filter(|o| o.flit.valid).count() as u64;
        arns += outs.iter().filter(|o| o.arn.is_some()).count() as u64;
        if first.is_none()
            && let Err(e) = replay.check(c, ins, outs)
        {
            first = Some(e.to_string());
        }
        Ok(())
    })
    .expect("runs");
    assert_eq!(first, None, "switch {sw}");
    assert_eq!(replay.cycles(), until + 1);
    assert!(
        flits > 100_000 && arns > 10,
        "{flits} flits and {arns} ARNs sent"
    );
    eprintln!(
        "switch {sw}: root detected at cycle {detected}; cycles 0 to {until} compared, {flits} flits and {arns} ARNs sent, 0 mismatches"
    );
}

/// A replay that skips the idle cycles of a settled switch (`Replay::idle_until_settled`) meets
/// every output of a lightly loaded switch as the replay stepping every cycle does, and ends in
/// the same registers, having skipped most cycles.
#[test]
fn a_settled_switch_skips_its_idle_cycles_exactly() {
    let sets = [
        "traffic.pattern=\"uniform\"".to_string(),
        "traffic.load=0.002".to_string(),
        "sim_time=\"400us\"".to_string(),
    ];
    let s = scenarios::load("default", &sets).expect("loads");
    let mut f = Fabric::<FEW_VCS>::build(&s.topology, s.params.clone(), &s.flows).expect("builds");
    f.set_engine(Engine::Event);
    let sw = 0;
    let mut exact = Replay::new(f.cycle_twin(sw));
    let mut skipping = Replay::new(f.cycle_twin(sw));
    let (mut first, mut flits) = (None, 0u64);
    f.run_recorded(
        s.sim_cycles,
        &mut (),
        &[sw as u32],
        &mut |_, c, ins, outs| {
            flits += outs.iter().filter(|o| o.flit.valid).count() as u64;
            // The skipping replay takes only the cycles a recording has lines for.
            let idle = ins.iter().all(|i| *i == PortIn::default())
                && outs.iter().all(|o| *o == PortOut::default());
            let r = exact.check(c, ins, outs).and_then(|()| {
                if idle {
                    return Ok(());
                }
                skipping.idle_until_settled(c)?;
                skipping.check(c, ins, outs)
            });
            if first.is_none()
                && let Err(e) = r
            {
                first = Some(e.to_string());
            }
            Ok(())
        },
    )
    .expect("runs");
    assert_eq!(first, None);
    exact.idle_until(s.sim_cycles).unwrap();
    skipping.idle_until_settled(s.sim_cycles).unwrap();
    assert!(flits > 500, "{flits} flits sent");
    assert_eq!(exact.cycles(), s.sim_cycles);
    assert_eq!(skipping.cycles() + skipping.skipped(), s.sim_cycles);
    assert!(
        skipping.skipped() > s.sim_cycles / 2,
        "{} of {} cycles skipped",
        skipping.skipped(),
        s.sim_cycles
    );
    assert!(exact.switch().registers() == skipping.switch().registers());
}
