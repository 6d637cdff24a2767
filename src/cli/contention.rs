//! `arnsim contention`: the static analysis of Birk and Zdornov's figure 5 on a scenario's fat
//! tree (`fabric/flow_routes.rs`): random permutations routed obliviously (D-mod-K) and by flow
//! routing (least-loaded ascent, descent with horizontal hops on a modified tree), and per flow
//! the number of flows on the busiest link of its path: the largest over the flows and their
//! mean, each averaged over the permutations.

use super::run::load;
use crate::blocks::rng::SplitMix64;
use crate::fabric::flow_routes::{FlowRouting, TreeRoutes, permutation};

/// The most permutations one analysis takes.
pub const MOST_PERMUTATIONS: u64 = 1_000_000;

/// `arnsim contention SCENARIO --permutations N [--seed S] [--set ...]`: prints one line per
/// routing.
pub fn run(
    scenario: &str,
    set: &[String],
    permutations: u64,
    seed: Option<u64>,
) -> Result<(), String> {
    let s = load(scenario, set)?;
    let routes = TreeRoutes::of(&s.topology)
        .map_err(|e| format!("{scenario}: {e} (`topology.kind` `kary_ntree` or `rlft`)"))?;
    let seed = seed.unwrap_or(s.seed);
    crate::outln!(
        "{}: {} nodes, horizontal width {}; {permutations} random permutations (seed {seed})",
        s.name,
        s.topology.nodes,
        s.topology.horizontal
    );
    crate::outln!("routing    max contention (mean, largest)   mean contention");
    for (name, how) in [
        ("oblivious", FlowRouting::Oblivious),
        ("adaptive", FlowRouting::Adaptive),
    ] {
        // The same permutations for both routings.
        let mut rng = SplitMix64::new(seed);
        let (mut max_sum, mut largest, mut mean_sum) = (0.0, 0u32, 0.0);
        for _ in 0..permutations {
            let c = routes.contention(&permutation(s.topology.nodes, &mut rng), how);
            max_sum += c.max as f64;
            largest = largest.max(c.max);
            mean_sum += c.mean;
        }
        let n = permutations as f64;
        crate::outln!(
            "{name:<10} {:>8.3} {largest:>8}                  {:>8.3}",
            max_sum / n,
            mean_sum / n
        );
    }
    Ok(())
}
