//! The end of `arnsim run` on the console: the run's line (cycles, speed, efficiency, counters,
//! where the outputs are), on MPI ranks what rank 0 exchanged, and the exit code a broken
//! invariant or a stop request gives; a rank other than 0 ends silently with the same code.

use super::Failure;
use super::interrupt::{exit_code, signal_name};
use crate::config::Scenario;
use crate::run::{Ended, Stopped};
use std::io::Write;
use std::path::Path;

/// Prints the run's line; fails on a broken invariant, and with the signal's exit code when a
/// stop request ended it.
pub(super) fn report(s: &Scenario, e: &Ended, out: &Path) -> Result<(), Failure> {
    let cycle_ns = s.time_base.cycle_ns();
    let (reached, wall, t) = (e.reached, e.wall, &e.totals);
    let _ = std::io::stdout().flush();
    // A communication phase: when it completed, or how many of its flows ended.
    let phase = e.phase_ends.as_ref().map_or(String::new(), |ends| {
        let ended = ends.iter().flatten().count();
        match crate::traffic::phase::completion(ends) {
            Some(c) => format!(
                "; phase of {} flows complete at {:.3} us",
                ends.len(),
                (c + 1) as f64 * cycle_ns / 1000.0
            ),
            None => format!("; phase: {ended} of {} flows ended", ends.len()),
        }
    });
    crate::outln!(
        "{}: {} cycles ({:.3} ms) in {wall:.2} s on {}thread(s) ({:.0} cycles/s); mean efficiency {:.3}; {} packets delivered{phase}; {} roots, {} ARNs, {} adapted, {} isolated at sources; invariants {}; outputs in {}{}",
        s.name,
        reached,
        reached as f64 * cycle_ns / 1e6,
        match e.ranks {
            1 => format!("{} ", e.threads),
            n => format!("{n} MPI ranks of {} ", e.threads),
        },
        reached as f64 / wall.max(1e-9),
        e.series.mean_efficiency(),
        t.nodes.delivered_packets,
        t.switches.roots_detected,
        t.switches.arns_sent,
        t.switches.packets_adapted,
        t.nodes.packets_adapted,
        if e.invariants.is_ok() { "ok" } else { "BROKEN" },
        out.display(),
        if e.complete { "" } else { " (incomplete)" }
    );
    if let Some(x) = e.exchanged {
        crate::errln!(
            "arnsim: rank 0 of {}: {} windows, {} events ({} bytes) for the other ranks, sent in {} messages ({} bytes), {:.2} s exchanging and waiting",
            e.ranks,
            x.windows,
            x.events,
            x.bytes(),
            x.messages,
            x.words * 8,
            x.seconds
        );
    }
    if let Err(v) = &e.invariants {
        return Err(format!("run stopped: {v}").into());
    }
    match e.stopped {
        Some(Stopped::Signal(sig)) => Err(Failure {
            code: exit_code(sig),
            message: format!(
                "stopped by {} at cycle {reached} of {} ({:.3} of {:.3} ms): the outputs gathered so far are in {}, marked \"complete\": false",
                signal_name(sig),
                s.sim_cycles,
                reached as f64 * cycle_ns / 1e6,
                s.sim_cycles as f64 * cycle_ns / 1e6,
                out.display()
            ),
        }),
        _ => Ok(()),
    }
}

/// How a rank other than 0 ends, silently: with the exit code rank 0 ends with (a broken
/// invariant, a stop request), which it reports.
pub(super) fn silent_outcome(e: &Ended) -> Result<(), Failure> {
    let code = match (&e.invariants, e.stopped) {
        (Err(_), _) => 1,
        (_, Some(Stopped::Signal(sig))) => exit_code(sig),
        _ => return Ok(()),
    };
    Err(Failure {
        code,
        message: String::new(),
    })
}
