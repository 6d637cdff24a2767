//! `arnsim scenarios` and `arnsim check`, and how a scenario argument is found: a file, or the
//! name of a scenario bundled with the program.

use crate::config::Scenario;
use crate::fabric::subnet_manager::{self, RoutingEngine, deadlock};
use std::path::Path;

/// The scenarios shipped in `scenarios/`, by name.
pub const BUNDLED: &[(&str, &str)] = &[
    ("default", include_str!("../../scenarios/default.toml")),
    ("figure4", include_str!("../../scenarios/figure4.toml")),
    (
        "irregular16",
        include_str!("../../scenarios/irregular16.toml"),
    ),
    (
        "irregular64_fa",
        include_str!("../../scenarios/irregular64_fa.toml"),
    ),
    (
        "dragonfly72",
        include_str!("../../scenarios/dragonfly72.toml"),
    ),
    (
        "dragonfly342",
        include_str!("../../scenarios/dragonfly342.toml"),
    ),
    (
        "dragonfly2550",
        include_str!("../../scenarios/dragonfly2550.toml"),
    ),
    (
        "kary6_uniform",
        include_str!("../../scenarios/kary6_uniform.toml"),
    ),
    (
        "trace_halo",
        include_str!("../../scenarios/trace_halo.toml"),
    ),
    ("phases16", include_str!("../../scenarios/phases16.toml")),
    (
        "birk_figure1",
        include_str!("../../scenarios/birk_figure1.toml"),
    ),
    (
        "rlft40_uniform",
        include_str!("../../scenarios/rlft40_uniform.toml"),
    ),
    (
        "paper/config1_h10-4",
        include_str!("../../scenarios/paper/config1_h10-4.toml"),
    ),
    (
        "paper/config1_h10",
        include_str!("../../scenarios/paper/config1_h10.toml"),
    ),
    (
        "paper/config1_h25-4",
        include_str!("../../scenarios/paper/config1_h25-4.toml"),
    ),
    (
        "paper/config1_h25",
        include_str!("../../scenarios/paper/config1_h25.toml"),
    ),
    (
        "paper/config1_rnd",
        include_str!("../../scenarios/paper/config1_rnd.toml"),
    ),
    (
        "paper/config2_h10-4",
        include_str!("../../scenarios/paper/config2_h10-4.toml"),
    ),
    (
        "paper/config2_h10",
        include_str!("../../scenarios/paper/config2_h10.toml"),
    ),
    (
        "paper/config2_h25-4",
        include_str!("../../scenarios/paper/config2_h25-4.toml"),
    ),
    (
        "paper/config2_h25",
        include_str!("../../scenarios/paper/config2_h25.toml"),
    ),
    (
        "paper/config2_rnd",
        include_str!("../../scenarios/paper/config2_rnd.toml"),
    ),
];

/// Loads `name_or_path`: a file, or a bundled scenario name.
pub fn load(name_or_path: &str, overrides: &[String]) -> Result<Scenario, String> {
    if Path::new(name_or_path).is_file() {
        return Scenario::load(name_or_path, overrides).map_err(|e| e.to_string());
    }
    let key = name_or_path
        .trim_end_matches(".toml")
        .trim_start_matches("scenarios/");
    match BUNDLED.iter().find(|(n, _)| *n == key) {
        Some((n, text)) => Scenario::from_text(&format!("scenarios/{n}.toml"), text, overrides)
            .map_err(|e| e.to_string()),
        None if std::fs::symlink_metadata(name_or_path).is_ok() => Err(format!(
            "{name_or_path}: not a scenario file (a folder, device, pipe or broken link), and no \
             bundled scenario of that name (see `arnsim scenarios`)"
        )),
        None => Err(format!(
            "{name_or_path}: no such file, and no bundled scenario of that name (see `arnsim scenarios`)"
        )),
    }
}

/// `arnsim scenarios`.
pub fn list() -> Result<(), String> {
    for (name, text) in BUNDLED {
        let s = Scenario::from_text(&format!("scenarios/{name}.toml"), text, &[])
            .map_err(|e| e.to_string())?;
        crate::outln!("{name:<22} {}", s.description);
    }
    Ok(())
}

/// `arnsim check`.
pub fn check(name_or_path: &str, overrides: &[String]) -> Result<(), String> {
    let s = load(name_or_path, overrides)?;
    for w in &s.warnings {
        crate::errln!("arnsim: warning: {w}");
    }
    if let Err(e) = super::run::default_out(&s) {
        crate::errln!("arnsim: warning: {e}");
    }
    crate::outln!(
        "{}: ok: {} nodes, {} switches, {} links, {} cycles ({:.3} ms) of {} traffic, routing {}, queuing {}, {} arbitration, {} VCs of {} flits",
        s.doc.path(),
        s.topology.nodes,
        s.topology.switches.len(),
        s.topology.links.len(),
        s.sim_cycles,
        s.sim_cycles as f64 * s.time_base.cycle_ns() / 1e6,
        s.pattern,
        s.params.switch.routing.name(),
        s.params.switch.queuing.name(),
        s.params.switch.arbitration.name(),
        s.params.switch.vcs(),
        s.params.switch.vc_capacity
    );
    let engine = s
        .params
        .routing_engine
        .unwrap_or_else(|| RoutingEngine::default_for(&s.topology));
    // Programmed once, for the deadlock check and the count of options.
    let routing = subnet_manager::program_with(&s.topology, engine, &s.params.routing_phases)?;
    if !deadlock::needs_check(&s.topology, engine) {
        crate::outln!(
            "routing engine {}: deadlock-free: a fat tree routed up, then down",
            engine.name()
        );
    } else {
        let c = deadlock::of_routing(&s.topology, &s.params, &routing)?;
        crate::outln!("routing engine {}: {c}", engine.name());
    }
    crate::outln!("{}", options_line(&s, &routing)?);
    if engine == RoutingEngine::Colored {
        crate::outln!("{}", colored_line(&s));
    }
    Ok(())
}

/// What the `colored` table gains over D-mod-K's on the traffic's phases: the phases without
/// two messages on one link, and the sum over phases of the most bytes on one link.
fn colored_line(s: &Scenario) -> String {
    use subnet_manager::colored;
    let phases = &s.params.routing_phases;
    let score = |first: &[Vec<u8>]| {
        let largest = colored::largest_loads(&s.topology, phases, first);
        let free = phases
            .iter()
            .zip(&largest)
            .filter(|(p, l)| p.iter().map(|m| m.2).max().unwrap_or(0) >= **l)
            .count();
        (free, largest.iter().sum::<u64>())
    };
    let (free_d, sum_d) = score(&colored::dmodk_first_up_ports(&s.topology));
    let (free_c, sum_c) = score(&colored::first_up_ports(&s.topology, phases));
    format!(
        "colored: {} phases; without contention: {free_c} (D-mod-K {free_d}); most bytes on \
         one link, summed over the phases: {sum_c} (D-mod-K {sum_d}, {:.3}x)",
        phases.len(),
        sum_c as f64 / sum_d.max(1) as f64
    )
}

/// How many distinct ports (routing options) the programmed LFTs offer per (switch, destination)
/// pair, a destination's own switch left out.
fn options_line(s: &Scenario, routing: &subnet_manager::Routing) -> Result<String, String> {
    let attach: Vec<usize> = subnet_manager::SwitchGraph::of(&s.topology)?
        .attach
        .iter()
        .map(|a| a.0)
        .collect();
    let counts = subnet_manager::fa::distinct_options(
        &routing.tables,
        s.topology.nodes,
        routing.lmc,
        &attach,
    );
    let all: u64 = counts.iter().sum::<u64>().max(1);
    let shares: Vec<String> = counts
        .iter()
        .enumerate()
        .map(|(k, &c)| format!("{}: {:.2} %", k + 1, 100.0 * c as f64 / all as f64))
        .collect();
    Ok(format!(
        "routing options (distinct ports) per switch and remote destination, LMC {}: {}",
        routing.lmc,
        shares.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_scenario_checks() {
        for (name, _) in BUNDLED {
            check(name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn unknown_scenarios_are_named() {
        let e = load("no-such-thing", &[]).unwrap_err();
        assert!(
            e.contains("no-such-thing") && e.contains("arnsim scenarios"),
            "{e}"
        );
    }
}
