//! The `summary.json` of an `arnsim run`: what was run, how far it got, and its counters, from
//! the scenario and what the run returned when it ended (`run::Ended`: totals, bins, how it
//! ended, the replay's finish cycles, the phase's flow ends); and a phase's `flows.csv`.

use super::interrupt::signal_name;
use super::outputs::{CcSummary, QcnSummary, ReplaySummary, SnoopSummary, Summary, rounded};
use crate::config::Scenario;
use crate::run::{Ended, Stopped};

/// Why the run stopped early, as `summary.json` says it.
pub(super) fn stop_reason(e: &Ended) -> Option<String> {
    e.stopped.map(|why| match why {
        Stopped::Violation => "invariant violated".to_string(),
        Stopped::Signal(sig) => signal_name(sig),
    })
}

/// The summary of a run of `s` with `overrides` that ended as `end`.
pub(super) fn summary(s: &Scenario, overrides: &[String], end: &Ended) -> Summary {
    let cycle_ns = s.time_base.cycle_ns();
    let (t, series) = (&end.totals, &end.series);
    Summary {
        scenario: s.name.clone(),
        file: s.doc.path().to_string(),
        overrides: overrides.to_vec(),
        seed: s.seed,
        routing: s.params.switch.routing.name().to_string(),
        queuing: s.params.switch.queuing.name().to_string(),
        output_arbitration: s.params.switch.arbitration.name().to_string(),
        traffic: s.pattern.clone(),
        nodes: s.topology.nodes,
        switches: s.topology.switches.len() as u64,
        simulated_cycles: end.reached,
        simulated_us: rounded(end.reached as f64 * cycle_ns / 1000.0, 3),
        complete: end.complete,
        stopped_at_cycle: (!end.complete).then_some(end.reached),
        stop_reason: stop_reason(end),
        wall_seconds: rounded(end.wall, 3),
        threads: end.threads as u64,
        engine: end.engine.name().to_string(),
        packets_generated: t.nodes.generated_packets,
        packets_injected: t.nodes.injected_packets,
        packets_delivered: t.nodes.delivered_packets,
        flits_injected: t.nodes.injected_flits,
        flits_delivered: t.nodes.delivered_flits,
        switch_traversals: t.switches.packets_sent,
        mean_efficiency: rounded(series.mean_efficiency(), 6),
        mean_latency_us: rounded(
            t.nodes.latency_sum as f64 / t.nodes.delivered_packets.max(1) as f64 * cycle_ns
                / 1000.0,
            6,
        ),
        max_latency_us: rounded(t.nodes.latency_max as f64 * cycle_ns / 1000.0, 6),
        roots_detected: t.switches.roots_detected,
        arns_sent: t.switches.arns_sent,
        arns_received_by_switches: t.switches.arns_received,
        arns_consumed: t.switches.arns_consumed,
        arns_received_by_nodes: t.nodes.arns_received,
        arns_consumed_by_nodes: t.nodes.arns_consumed,
        packets_adapted: t.switches.packets_adapted,
        packets_isolated_by_nodes: t.nodes.packets_adapted,
        packets_delivered_adapted: t.nodes.delivered_adapted,
        packets_escaped: s
            .params
            .switch
            .routing
            .escape_queues()
            .then_some(t.switches.packets_escaped),
        packets_marked_fecn: s
            .params
            .switch
            .fecn
            .on()
            .then_some(t.switches.packets_marked),
        congestion_control: s.params.ca_congestion.map(|_| CcSummary {
            fecns_received: t.nodes.fecns_received,
            fecns_unanswered: t.nodes.fecns_unanswered,
            cnps_sent: t.nodes.cnps_sent,
            becns_received: t.nodes.becns_received,
            becns_dropped: t.nodes.becns_dropped,
        }),
        qcn: s.params.qcn_reaction.map(|_| QcnSummary {
            cnms_made: t.switches.cnms_made,
            cnms_dropped_by_switches: t.switches.cnms_dropped,
            cnms_received_by_nodes: t.nodes.cnms_received,
            cnms_dropped_by_nodes: t.nodes.cnms_dropped,
            snooped: s.params.switch.snoop.on().then(|| SnoopSummary {
                cnms_absorbed_by_switches: t.switches.cnms_absorbed,
                snoops_dropped_by_switches: t.switches.snoops_dropped,
                packets_rerouted: t.switches.packets_adapted,
                packets_resequenced: s.params.resequence.then_some(t.nodes.packets_resequenced),
            }),
        }),
        phase_flows: end.phase_ends.as_ref().map(|e| e.len() as u64),
        phase_flows_ended: end
            .phase_ends
            .as_ref()
            .map(|e| e.iter().flatten().count() as u64),
        phase_completion_us: end.phase_ends.as_ref().map(|e| {
            crate::traffic::phase::completion(e)
                .map(|c| rounded((c + 1) as f64 * cycle_ns / 1000.0, 3))
        }),
        invariants: match &end.invariants {
            Ok(()) => "ok".to_string(),
            Err(v) => v.to_string(),
        },
        replay: replay_summary(s, end),
    }
}

/// The replay's outcome, for the summary.
fn replay_summary(s: &Scenario, end: &Ended) -> Option<ReplaySummary> {
    let (t, finish) = (s.replay.as_ref()?, end.rank_finishes.as_ref()?);
    let cycle_ns = s.time_base.cycle_ns();
    let us = |c: u64| rounded(c as f64 * cycle_ns / 1000.0, 3);
    let done = finish.iter().flatten().count() as u32;
    Some(ReplaySummary {
        trace: t.file.clone(),
        ranks: t.program.ranks(),
        messages: t.program.messages().len() as u64,
        bytes: t.program.total_bytes(),
        ranks_finished: done,
        execution_time_us: (done == t.program.ranks())
            .then(|| finish.iter().flatten().max().copied().map_or(0.0, us)),
        rank_finish_us: finish.iter().map(|f| f.map(us)).collect(),
    })
}

/// A phase's `flows.csv`: `src,dst,bytes,start_us,end_us,rate`, a line per flow in the phase's
/// order. A flow ends at the end of the cycle the tail of its last packet arrives in; `rate` is
/// its bytes over its duration, as a share of the link's rate (6 decimals). A flow that did not
/// end within the run has `end_us` and `rate` empty. `None` without a phase.
pub(super) fn flows_csv(s: &Scenario, end: &Ended) -> Option<String> {
    let (flows, ends) = (s.phase.as_ref()?, end.phase_ends.as_ref()?);
    let cycle_ns = s.time_base.cycle_ns();
    let us = |c: u64| rounded(c as f64 * cycle_ns / 1000.0, 3);
    let mut out = String::from("src,dst,bytes,start_us,end_us,rate\n");
    for (f, e) in flows.iter().zip(ends) {
        let (end_us, rate) = match e {
            Some(e) => {
                let cycles = (e + 1).saturating_sub(f.start).max(1);
                let line = cycles as f64 * s.time_base.flit_bytes as f64;
                (
                    us(e + 1).to_string(),
                    rounded(f.bytes as f64 / line, 6).to_string(),
                )
            }
            None => (String::new(), String::new()),
        };
        out.push_str(&format!(
            "{},{},{},{},{end_us},{rate}\n",
            f.src,
            f.dst,
            f.bytes,
            us(f.start)
        ));
    }
    Some(out)
}
