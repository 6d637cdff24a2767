//! The subnet-manager step: assigns LIDs and programs every switch's interleaved LFT.
//!
//! End node `d` owns the 2^LMC LIDs `d << LMC ..= (d << LMC) | (2^LMC - 1)`. For each destination
//! a switch gets one output port per LID of that range: option 0 (the base LID, the deterministic
//! route) is D-mod-K, options 1.. are the other minimal ports in rotation after it. Downward there
//! is a single minimal port, written to every option. LMC is the smallest that covers the up ports
//! of the widest stage (at most 4, so at most 16 options).

use super::topology::Topology;
use crate::blocks::LftBanks;

/// Smallest LMC giving at least `options` routing options (capped at 4).
pub fn lmc_for(options: u32) -> u32 {
    let mut lmc = 0;
    while (1u32 << lmc) < options && lmc < 4 {
        lmc += 1;
    }
    lmc
}

/// The minimal output ports of switch `sw` toward end node `dest`, deterministic (D-mod-K) first.
/// Only for fat trees (XGFT topologies).
pub fn minimal_ports(topo: &Topology, sw: u32, dest: u32) -> Vec<u16> {
    minimal_ports_at(topo, sw, index_in_level(topo, sw), dest)
}

/// Index of switch `sw` inside its level (switches are numbered level by level).
fn index_in_level(topo: &Topology, sw: u32) -> u32 {
    let l = topo.switches[sw as usize].stage;
    sw - topo.switches[..sw as usize]
        .iter()
        .filter(|s| s.stage < l)
        .count() as u32
}

/// [`minimal_ports`] with the switch's index in its level already known.
fn minimal_ports_at(topo: &Topology, sw: u32, local: u32, dest: u32) -> Vec<u16> {
    let (m, w) = topo.xgft.as_ref().expect("minimal_ports needs a fat tree");
    let l = topo.switches[sw as usize].stage as usize;
    let b_l: u32 = w[..l].iter().product();
    let a_part = local / b_l;
    let below: u32 = m[..l].iter().product();
    if dest / below == a_part {
        // In this subtree: one way down, digit a_l of the destination.
        let digit = (dest / m[..l - 1].iter().product::<u32>()) % m[l - 1];
        vec![digit as u16]
    } else {
        // Up: D-mod-K first, then the other up ports in rotation.
        let up = w[l];
        let j0 = (dest / b_l) % up;
        (0..up).map(|j| (m[l - 1] + (j0 + j) % up) as u16).collect()
    }
}

/// Builds the LFT of every switch of a fat tree. Returns the LMC used and one table per switch.
pub fn program_fat_tree(topo: &Topology) -> (u32, Vec<LftBanks>) {
    let widest = topo
        .switches
        .iter()
        .map(|s| s.up_ports.count_ones())
        .max()
        .unwrap_or(1);
    let lmc = lmc_for(widest);
    let banks = 1u32 << lmc;
    let rows = topo.nodes as usize;
    let mut tables = Vec::with_capacity(topo.switches.len());
    for sw in 0..topo.switches.len() as u32 {
        let mut t = LftBanks::new(lmc, rows);
        let local = index_in_level(topo, sw);
        for d in 0..topo.nodes {
            let ports = minimal_ports_at(topo, sw, local, d);
            for b in 0..banks {
                let port = ports[(b as usize) % ports.len()];
                t.program(((d << lmc) | b) as u16, port as u8);
            }
        }
        tables.push(t);
    }
    (lmc, tables)
}

/// Builds the LFTs of any topology from shortest paths: at each switch, the ports toward a
/// destination are those one hop closer to it; option 0 is the lowest-numbered such port.
pub fn program_minimal(topo: &Topology) -> Result<(u32, Vec<LftBanks>), String> {
    use super::topology::Endpoint;
    use std::collections::VecDeque;
    let ns = topo.switches.len();
    // Vertex v < ns is a switch, v >= ns is node v - ns.
    let vertex = |e: Endpoint| match e {
        Endpoint::Switch { sw, .. } => sw as usize,
        Endpoint::Node(n) => ns + n as usize,
    };
    let mut adj: Vec<Vec<(usize, Option<u16>)>> = vec![Vec::new(); ns + topo.nodes as usize];
    for &(a, b) in &topo.links {
        let port = |e: Endpoint| match e {
            Endpoint::Switch { port, .. } => Some(port),
            Endpoint::Node(_) => None,
        };
        adj[vertex(a)].push((vertex(b), port(a)));
        adj[vertex(b)].push((vertex(a), port(b)));
    }
    let mut ports_to: Vec<Vec<Vec<u16>>> = vec![vec![Vec::new(); topo.nodes as usize]; ns];
    let mut widest = 1;
    for d in 0..topo.nodes as usize {
        let mut dist = vec![u32::MAX; adj.len()];
        let mut q = VecDeque::new();
        dist[ns + d] = 0;
        q.push_back(ns + d);
        while let Some(v) = q.pop_front() {
            // Paths never cross another end node.
            if v >= ns && v != ns + d {
                continue;
            }
            for &(u, _) in &adj[v] {
                if dist[u] == u32::MAX {
                    dist[u] = dist[v] + 1;
                    q.push_back(u);
                }
            }
        }
        for s in 0..ns {
            if dist[s] == u32::MAX {
                return Err(format!("node {d} cannot be reached from switch {s}"));
            }
            let mut p: Vec<u16> = adj[s]
                .iter()
                .filter(|&&(u, _)| dist[u] + 1 == dist[s] && (u < ns || u == ns + d))
                .filter_map(|&(_, port)| port)
                .collect();
            p.sort_unstable();
            widest = widest.max(p.len() as u32);
            ports_to[s][d] = p;
        }
    }
    let lmc = lmc_for(widest);
    let banks = 1u32 << lmc;
    let tables = ports_to
        .iter()
        .map(|per_dest| {
            let mut t = LftBanks::new(lmc, topo.nodes as usize);
            for (d, ports) in per_dest.iter().enumerate() {
                for b in 0..banks {
                    let port = ports[(b as usize) % ports.len()];
                    t.program((((d as u32) << lmc) | b) as u16, port as u8);
                }
            }
            t
        })
        .collect();
    Ok((lmc, tables))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::topology::Endpoint;
    use std::collections::HashMap;

    /// Follows option 0 from every source to every destination: it must arrive, minimally.
    fn walk_all(topo: &Topology) {
        let (lmc, tables) = program_fat_tree(topo);
        let mut peer: HashMap<Endpoint, Endpoint> = HashMap::new();
        for &(a, b) in &topo.links {
            peer.insert(a, b);
            peer.insert(b, a);
        }
        let stages = topo.stages() as usize;
        for s in 0..topo.nodes {
            for d in 0..topo.nodes {
                let mut at = peer[&Endpoint::Node(s)];
                let mut hops = 0;
                loop {
                    let Endpoint::Switch { sw, .. } = at else {
                        assert_eq!(at, Endpoint::Node(d), "{s}->{d} arrived at the wrong node");
                        break;
                    };
                    let opts = tables[sw as usize].options((d << lmc) as u16);
                    let port = opts.deterministic().expect("route") as u16;
                    at = peer[&Endpoint::Switch { sw, port }];
                    hops += 1;
                    assert!(hops <= 2 * stages, "{s}->{d} is not minimal");
                }
            }
        }
    }

    #[test]
    fn dmodk_routes_reach_every_destination() {
        walk_all(&Topology::kary_ntree(2, 3));
        walk_all(&Topology::kary_ntree(3, 2));
        walk_all(&Topology::rlft(4, 3));
    }

    #[test]
    fn alternatives_follow_the_deterministic_option() {
        let t = Topology::kary_ntree(4, 2);
        // Leaf switch 0, destination 7 (not below it): D-mod-K picks up port 4 + (7 mod 4).
        assert_eq!(minimal_ports(&t, 0, 7), vec![7, 4, 5, 6]);
        // Destination 2 is below leaf 0: down port 2 only.
        assert_eq!(minimal_ports(&t, 0, 2), vec![2]);
        assert_eq!(lmc_for(4), 2);
    }
}
