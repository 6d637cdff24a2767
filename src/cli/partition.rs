//! `arnsim check --ranks N`: how a run on N MPI ranks deals the scenario's fabric out
//! (`docs/distributed.md`): per rank its parts, switches, ports and end nodes, and the cables
//! between switches of different ranks, whose events cross between processes every window.

use crate::config::Scenario;
use crate::fabric::ranks::Partition;
use crate::fabric::ranks::grid::Grid;
use crate::fabric::topology::Endpoint;

/// The lines `arnsim check --ranks ranks --threads threads` prints.
pub fn lines(s: &Scenario, ranks: usize, threads: usize) -> Vec<String> {
    let t = &s.topology;
    let stages: Vec<u8> = t.switches.iter().map(|s| s.stage).collect();
    // A switch weighs its ports and its end nodes (as a run deals them out).
    let mut weights: Vec<u32> = t.switches.iter().map(|s| s.ports as u32).collect();
    for (a, b) in &t.links {
        if let (Endpoint::Switch { sw, .. }, Endpoint::Node(_))
        | (Endpoint::Node(_), Endpoint::Switch { sw, .. }) = (a, b)
        {
            weights[*sw as usize] += 1;
        }
    }
    let split = Partition::new(&stages, &weights, ranks, threads);
    let rank_of = |e: &Endpoint| match *e {
        Endpoint::Switch { sw, .. } => Some(split.rank_of_switch(sw as usize)),
        Endpoint::Node(_) => None,
    };
    // Per rank: switches, ports, end nodes.
    let mut per = vec![(0usize, 0usize, 0usize); ranks];
    for (k, sw) in t.switches.iter().enumerate() {
        let r = &mut per[split.rank_of_switch(k)];
        r.0 += 1;
        r.1 += sw.ports as usize;
    }
    let (mut between, mut cut) = (0usize, 0usize);
    for (a, b) in &t.links {
        match (rank_of(a), rank_of(b)) {
            (Some(x), Some(y)) => {
                between += 1;
                cut += usize::from(x != y);
            }
            (Some(x), None) | (None, Some(x)) => per[x].2 += 1,
            // Two end nodes cabled together belong to the first part.
            (None, None) => per[0].2 += 2,
        }
    }
    let how = match ranks {
        1 => format!("switch s in part s mod {}", split.parts),
        _ => "each stage's switches in contiguous runs, one per rank, balanced by ports and end nodes"
            .to_string(),
    };
    let mut out = vec![format!(
        "on {ranks} MPI ranks of {threads} thread(s): {} parts, {how}",
        split.parts
    )];
    for (r, (switches, ports, nodes)) in per.iter().enumerate() {
        let parts = split.parts_of(r);
        out.push(format!(
            "  rank {r}: parts {}..{}, {switches} switches, {ports} ports, {nodes} end nodes",
            parts.start, parts.end
        ));
    }
    out.push(format!(
        "  cables between switches: {between}, {cut} of them between ranks ({:.1} %)",
        100.0 * cut as f64 / between.max(1) as f64
    ));
    if ranks > 1 {
        // The busiest rank's ports and end nodes over the mean: the run's pace is its pace.
        let load: Vec<usize> = per.iter().map(|&(_, ports, nodes)| ports + nodes).collect();
        let mean = load.iter().sum::<usize>() as f64 / ranks as f64;
        let g = Grid::of(ranks);
        out.push(format!(
            "  busiest rank: {} ports and end nodes, {:.2} x the mean; events exchanged over a {} x {} grid of ranks, {} message{} a window per rank",
            load.iter().max().copied().unwrap_or(0),
            load.iter().max().copied().unwrap_or(0) as f64 / mean.max(1.0),
            g.rows,
            g.cols,
            g.peers(),
            if g.peers() == 1 { "" } else { "s" }
        ));
    }
    if (0..ranks).any(|r| split.parts_of(r).is_empty()) {
        out.push(format!(
            "  refused: {ranks} ranks for {} switches (at most one rank per switch)",
            t.switches.len()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 4-ary 2-tree of `default` (4 leaves of 8 ports, 4 top switches of 4) over 2 ranks: 2
    /// leaves and 2 tops each (24 ports), 8 nodes each, half the 16 cables between switches cut.
    #[test]
    fn the_partition_of_default_over_two_ranks() {
        let s = crate::cli::scenarios::load("default", &[]).unwrap();
        assert_eq!(
            lines(&s, 2, 1),
            [
                "on 2 MPI ranks of 1 thread(s): 2 parts, each stage's switches in contiguous runs, one per rank, balanced by ports and end nodes",
                "  rank 0: parts 0..1, 4 switches, 24 ports, 8 end nodes",
                "  rank 1: parts 1..2, 4 switches, 24 ports, 8 end nodes",
                "  cables between switches: 16, 8 of them between ranks (50.0 %)",
                "  busiest rank: 32 ports and end nodes, 1.00 x the mean; events exchanged over a 1 x 2 grid of ranks, 1 message a window per rank",
            ]
        );
        let one = lines(&s, 1, 2);
        assert_eq!(
            one[2],
            "  cables between switches: 16, 0 of them between ranks (0.0 %)"
        );
        assert_eq!(
            one[0],
            "on 1 MPI ranks of 2 thread(s): 2 parts, switch s in part s mod 2"
        );
        // A Dragonfly's groups stay whole: 28 of its 90 cables between routers are cut.
        let df = crate::cli::scenarios::load("dragonfly72", &[]).unwrap();
        let l = lines(&df, 2, 1);
        assert_eq!(
            l[3],
            "  cables between switches: 90, 28 of them between ranks (31.1 %)"
        );
        // Configuration 1 on 64 ranks: balanced to one switch, 14 peers each.
        let c1 = crate::cli::scenarios::load("paper/config1_h10", &[]).unwrap();
        assert_eq!(
            lines(&c1, 64, 1).last().unwrap(),
            "  busiest rank: 48 ports and end nodes, 1.19 x the mean; events exchanged over a 8 x 8 grid of ranks, 14 messages a window per rank"
        );
        let too_many = lines(&s, 9, 1);
        assert!(
            too_many
                .last()
                .unwrap()
                .contains("refused: 9 ranks for 8 switches")
        );
    }
}
