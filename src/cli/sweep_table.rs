//! `sweep.csv` and `sweep.svg` from the summaries of a sweep's runs: per point of the grid the
//! mean of each metric over its replications with the half-width of its 95 % confidence
//! interval, and how its runs ended; a point the sweep did not finish is a row marked `stopped`
//! without figures.

use super::outputs::Summary;
use super::sweep_grid::Grid;
use crate::metrics::{
    Estimate, METRICS, RUNS, RunStatus, csv_field, estimate, read_sweep_csv, sweep_curves,
    sweep_plot_svg,
};
use std::fmt::Write as _;

/// What a row needs beyond the runs' summaries: the scenario's flit size and cycle time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    /// Bytes per flit.
    pub flit_bytes: u32,
    /// Nanoseconds per cycle.
    pub cycle_ns: f64,
}

/// How a run ended: `complete`, `deadlock` (the progress watchdog), `invariant` (another
/// invariant broken) or `stopped`; and why, when it did not complete.
pub fn status(s: &Summary) -> (RunStatus, String) {
    if s.invariants != "ok" {
        let kind = match s.invariants.contains("invariant progress broken") {
            true => RunStatus::Deadlock,
            false => RunStatus::Invariant,
        };
        return (kind, s.invariants.clone());
    }
    match s.complete {
        true => (RunStatus::Complete, String::new()),
        false => (
            RunStatus::Stopped,
            s.stop_reason.clone().unwrap_or_default(),
        ),
    }
}

/// The accepted load of a run: flits delivered over the nodes' injection capacity (a flit per
/// node per cycle), as `mean_efficiency` in the summary but from the exact counts.
pub fn accepted(s: &Summary) -> f64 {
    s.flits_delivered as f64 / (s.nodes as f64 * s.simulated_cycles as f64).max(1.0)
}

/// The header of `sweep.csv` for `grid`'s keys.
pub fn header(grid: &Grid) -> String {
    let mut h: Vec<String> = grid.keys.iter().map(|k| csv_field(k.column())).collect();
    h.push(RUNS.into());
    for m in METRICS {
        h.push(m.into());
        h.push(format!("{m}_ci95"));
    }
    h.push("status".into());
    h.push("reason".into());
    h.join(",")
}

/// A run's metrics, in the order of [`METRICS`]; the latencies `None` without a packet.
fn metrics(s: &Summary, scale: Scale) -> [Option<f64>; 5] {
    let ns = s.simulated_cycles as f64 * scale.cycle_ns;
    let bytes = s.flits_delivered as f64 * scale.flit_bytes as f64;
    let per_switch = bytes / ns.max(1e-9) / (s.switches.max(1) as f64);
    let latency = |us: f64| (s.packets_delivered > 0).then_some(us * 1000.0);
    [
        Some(accepted(s)),
        Some(per_switch),
        latency(s.mean_latency_us),
        latency(s.max_latency_us),
        Some(s.packets_delivered as f64),
    ]
}

/// `sweep.csv`: the header and a row per point, in the grid's order; `runs[p]` holds point p's
/// summaries in seed order when every one of its runs finished. `unfinished` says why a point
/// without summaries has none.
pub fn csv(grid: &Grid, runs: &[Option<Vec<Summary>>], scale: Scale, unfinished: &str) -> String {
    let mut out = header(grid);
    out.push('\n');
    for (p, r) in runs.iter().enumerate() {
        for l in grid.labels(p) {
            let _ = write!(out, "{},", csv_field(l));
        }
        let Some(summaries) = r else {
            let blanks = ",".repeat(2 * METRICS.len());
            let _ = writeln!(out, "0,{blanks}stopped,{}", csv_field(unfinished));
            continue;
        };
        let _ = write!(out, "{},", summaries.len());
        let each: Vec<[Option<f64>; 5]> = summaries.iter().map(|s| metrics(s, scale)).collect();
        for (m, decimals) in [6, 6, 3, 3, 1].into_iter().enumerate() {
            let xs: Vec<f64> = each.iter().filter_map(|v| v[m]).collect();
            // A count over a single run stays a whole number.
            let decimals = match (m, xs.len()) {
                (4, 1) => 0,
                _ => decimals,
            };
            match estimate(&xs) {
                Some(Estimate { mean, ci95, .. }) => {
                    let _ = write!(out, "{mean:.decimals$},");
                    if let Some(c) = ci95 {
                        let _ = write!(out, "{c:.decimals$}");
                    }
                    out.push(',');
                }
                None => out.push_str(",,"),
            }
        }
        // The first run that did not complete says how the point ended.
        let ended = summaries.iter().enumerate().find_map(|(rep, s)| {
            let (st, why) = status(s);
            (st != RunStatus::Complete).then(|| match &grid.seeds {
                Some(seeds) => (st, format!("seed {}: {why}", seeds[rep])),
                None => (st, why),
            })
        });
        let (st, why) = ended.unwrap_or((RunStatus::Complete, String::new()));
        let _ = writeln!(out, "{},{}", st.name(), csv_field(&why));
    }
    out
}

/// `sweep.svg`, drawn from the table `csv` wrote: accepted load and mean latency against the
/// first varied key, a curve per combination of the others' values.
pub fn svg(grid: &Grid, table: &str, first: Option<&Summary>) -> Result<String, String> {
    let t = read_sweep_csv("sweep.csv", table)?;
    let (axis, series) = sweep_curves(&[(String::new(), t)])?;
    let keys: Vec<&str> = grid.keys.iter().map(|k| k.key.as_str()).collect();
    let mut title = match first {
        Some(s) => format!("{}: sweep of {}", s.scenario, keys.join(" x ")),
        None => format!("sweep of {}", keys.join(" x ")),
    };
    if grid.replications() > 1 {
        let _ = write!(
            title,
            ", {} seeds per point (95 % intervals)",
            grid.replications()
        );
    }
    if let Some(s) = first {
        // The sweep's own overrides (all but the varied keys and the seed) say what differs
        // from the file.
        let set: Vec<&str> = s
            .overrides
            .iter()
            .map(String::as_str)
            .filter(|o| {
                let k = o.split_once('=').map_or(*o, |(k, _)| k).trim();
                !keys.contains(&k) && (grid.seeds.is_none() || k != "seed")
            })
            .collect();
        if !set.is_empty() {
            let _ = write!(title, " ({})", set.join(", "));
        }
    }
    Ok(sweep_plot_svg(&title, &axis, &series))
}

/// The header of a sweep of `traffic.load` alone, for the tests of what reads tables.
#[cfg(test)]
pub const LOAD_HEADER_FOR_TESTS: &str = "offered_load,runs,accepted_load,accepted_load_ci95,accepted_bytes_per_ns_per_switch,accepted_bytes_per_ns_per_switch_ci95,mean_latency_ns,mean_latency_ns_ci95,max_latency_ns,max_latency_ns_ci95,packets_delivered,packets_delivered_ci95,status,reason";
