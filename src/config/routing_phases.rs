//! The phases of a scenario's traffic that are known before it runs, which the `colored`
//! routing engine spreads over the fabric's links (`fabric::subnet_manager::colored`).
//!
//! - A trace: phase `k` holds every rank's `k`-th message (collectives expanded), between the
//!   nodes the mapping puts the ranks on, weighted by its bytes. A trace of sub-phases in which
//!   every rank sends once (NAS CG and FT, PTRANS's steps) gives exactly those sub-phases.
//! - A communication phase (`permutations`, flows with `bytes`): one phase of its flows,
//!   weighted by their bytes.
//! - Flows: one phase of every flow to a fixed destination, weighted by its rate in millionths
//!   of the line rate (bit reversal, explicit flows). Flows to random destinations are unknown
//!   beforehand and left out.

use super::trace_keys::TraceReplay;
use crate::fabric::node::{Destination, Flow};
use crate::fabric::subnet_manager::colored::Phase;
use crate::traffic::phase::PhaseFlow;

/// The known phases of the traffic: the trace's when it replays one, the communication phase's
/// when it has one, else its flows'.
pub fn of(
    flows: &[Vec<Flow>],
    finite: Option<&[PhaseFlow]>,
    replay: Option<&TraceReplay>,
) -> Vec<Phase> {
    if let (None, Some(finite)) = (replay, finite) {
        return vec![finite.iter().map(|f| (f.src, f.dst, f.bytes)).collect()];
    }
    match replay {
        Some(t) => {
            let mut sent = vec![0usize; t.program.ranks() as usize];
            let mut phases: Vec<Phase> = Vec::new();
            for m in t.program.messages() {
                let k = sent[m.src as usize];
                sent[m.src as usize] += 1;
                if phases.len() <= k {
                    phases.push(Vec::new());
                }
                let (s, d) = (t.mapping.node_of(m.src), t.mapping.node_of(m.dst));
                phases[k].push((s, d, m.bytes));
            }
            phases
        }
        None => {
            let mut phase = Phase::new();
            for (s, node_flows) in flows.iter().enumerate() {
                for f in node_flows {
                    if let Destination::Node(d) = f.dest {
                        let weight = (f.rate * 1e6).round().max(1.0) as u64;
                        phase.push((s as u32, d, weight));
                    }
                }
            }
            vec![phase]
        }
    }
}
