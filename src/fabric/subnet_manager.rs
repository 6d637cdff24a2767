//! The subnet-manager step: assigns LIDs, programs every switch's interleaved LFT and, for the
//! routing engines that need it, chooses each path's service level.
//!
//! End node `d` owns the 2^LMC LIDs `d << LMC ..= (d << LMC) | (2^LMC - 1)`. For each destination
//! a switch gets one output port per LID of that range: option 0 (the base LID, the deterministic
//! route) is D-mod-K, options 1.. are the other minimal ports in rotation after it. Downward there
//! is a single minimal port, written to every option. LMC is the smallest that covers the up ports
//! of the widest stage (at most 4, so at most 16 options), lowered until every node's LIDs lie in
//! InfiniBand's unicast range (LIDs below 0xC000): 16,000 nodes leave room for LMC 1 only.
//!
//! The routing engine is chosen per fabric ([`RoutingEngine`], named as OpenSM names its engines):
//! `ftree` (the above, fat trees only), `minhop` (every shortest path), `updn` (up*/down*,
//! `updn`), on Dragonflies `dfly_min` (minimal routes, local, global, local, `dragonfly`),
//! `dfly_vl_hops` (the same, the VL raised after the global hop by the SL-to-VL tables),
//! `d3r_2vl` and `d3r_3vl` (the same with D3R's VL order by SL, `path_sl`), `lash` (minimal
//! paths in as few layers as needed, `lash`) and `dfsssp` (balanced shortest paths layered over
//! 8 VLs, `dfsssp`). The
//! [`deadlock`] module checks what an engine wrote for cycles of channel dependencies.

pub mod colored;
pub mod deadlock;
mod dfsssp;
mod dragonfly;
pub mod fa;
pub(crate) mod fat_tree;
#[cfg(test)]
mod fat_tree_tests;
mod lash;
pub mod path_sl;
mod updn;

use super::topology::{Endpoint, Topology};
use crate::blocks::LftBanks;
use crate::blocks::rng::SplitMix64;
use crate::switch::SlToVl;
use fat_tree::Minimal;
pub use path_sl::PathSls;

/// How the subnet manager computes the LFTs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RoutingEngine {
    /// Fat trees: D-mod-K, then the other up ports in rotation.
    Ftree,
    /// Fat trees: option 0 an up port drawn at random per switch and destination from `seed`,
    /// once (a static table, the slides' "random"), then the other up ports in rotation.
    Random {
        /// Seed of the table (`routing_seed`).
        seed: u64,
    },
    /// Fat trees: option 0 an up port per switch and destination searched offline to spread
    /// the traffic's known phases over the links (the slides' "colored"; `colored`), then the
    /// other up ports in rotation.
    Colored,
    /// Every shortest path; option 0 the lowest-numbered port.
    Minhop,
    /// Up*/down* from the most central switch (`updn` module).
    Updn,
    /// Dragonflies: minimal routes, local, global, local (`dragonfly`), on one VL.
    DflyMin,
    /// Dragonflies: minimal routes, VL 0 up to the global hop and VL 1 after it, written into
    /// the routers' SL-to-VL tables (Kim et al.'s VC assignment; `dragonfly`).
    DflyVlHops,
    /// Dragonflies: minimal routes, packets on VL 0 from a higher to a lower group and on VL 1
    /// from a lower to a higher one (D3R, Maglione-Mathey et al.; `path_sl`).
    D3r2Vl,
    /// D3R with a third VL for the traffic inside a group.
    D3r3Vl,
    /// Layered shortest paths (Skeie et al.): one minimal path per destination, the paths in as
    /// few layers (VLs, by SL) as keep each layer's channel dependencies acyclic (`lash`).
    Lash,
    /// Deadlock-free single-source shortest paths (Domke et al.): one balanced path per
    /// destination, the paths layered over 8 VLs so that no VL's channel
    /// dependencies close a cycle (`dfsssp`).
    Dfsssp,
    /// FA with escape routes (Martínez et al., sections 3 and 4.4): option 0 the up*/down*
    /// route (the escape path), options 1 to `options - 1` minimal ports (the adaptive ones), so
    /// a switch offers at most `options` routes per destination (the paper's MR).
    FaUpdn {
        /// Routing options per destination and switch, escape included (2 to 16).
        options: u8,
    },
}

impl RoutingEngine {
    /// Every engine.
    pub const ALL: [RoutingEngine; 12] = [
        Self::Ftree,
        Self::Random { seed: 1 },
        Self::Colored,
        Self::Minhop,
        Self::Updn,
        Self::DflyMin,
        Self::DflyVlHops,
        Self::D3r2Vl,
        Self::D3r3Vl,
        Self::Lash,
        Self::Dfsssp,
        Self::FaUpdn { options: 2 },
    ];

    /// The engine's name in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ftree => "ftree",
            Self::Random { .. } => "random",
            Self::Colored => "colored",
            Self::Minhop => "minhop",
            Self::Updn => "updn",
            Self::DflyMin => "dfly_min",
            Self::DflyVlHops => "dfly_vl_hops",
            Self::D3r2Vl => "d3r_2vl",
            Self::D3r3Vl => "d3r_3vl",
            Self::Lash => "lash",
            Self::Dfsssp => "dfsssp",
            Self::FaUpdn { .. } => "fa_updn",
        }
    }

    /// The engine of that name, if any (`fa_updn` with its default options).
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// The engine a topology gets when none is named: `ftree` on fat trees, `minhop` otherwise.
    pub fn default_for(topo: &Topology) -> Self {
        if topo.xgft.is_some() {
            Self::Ftree
        } else {
            Self::Minhop
        }
    }

    /// The VLs the engine spreads paths over, by their service level or by the SL-to-VL tables
    /// (`None`: the queuing scheme's SLs and identity tables, or, for [`Self::Lash`], as many as
    /// its layers on the topology: see [`PathSls::vls`]).
    pub fn vls(self) -> Option<u8> {
        match self {
            Self::DflyVlHops | Self::D3r2Vl => Some(2),
            Self::D3r3Vl => Some(3),
            Self::Dfsssp => Some(dfsssp::VLS),
            _ => None,
        }
    }
}

/// What the subnet manager writes: the LMC, every switch's LFT and, for engines that layer
/// paths over VLs, each path's service level.
pub struct Routing {
    /// LIDs per node: 2^`lmc`.
    pub lmc: u32,
    /// One table per switch.
    pub tables: Vec<LftBanks>,
    /// The SL of each path, when the engine chooses it.
    pub sls: Option<PathSls>,
    /// Every switch's SL-to-VL tables, when the engine writes other than the identity.
    pub sl_to_vl: Option<Vec<SlToVl>>,
}

/// Runs `engine` on `topo`: the LMC, every switch's LFT, the paths' SLs and the SL-to-VL tables.
/// [`RoutingEngine::Colored`] needs the traffic's phases: [`program_with`].
pub fn program(topo: &Topology, engine: RoutingEngine) -> Result<Routing, String> {
    program_with(topo, engine, &[])
}

/// [`program`], with the traffic's known phases for [`RoutingEngine::Colored`] (the other
/// engines do not read them).
pub fn program_with(
    topo: &Topology,
    engine: RoutingEngine,
    phases: &[colored::Phase],
) -> Result<Routing, String> {
    let dragonfly_min = || dragonfly::minimal_ports(topo, engine.name());
    let ((lmc, tables), sls, sl_to_vl) = match engine {
        RoutingEngine::Ftree if topo.xgft.is_some() => (program_fat_tree(topo), None, None),
        RoutingEngine::Random { seed } if topo.xgft.is_some() => {
            let first = |sw, d, (up, _)| random_first(seed, sw, d, up);
            (program_fat_tree_from(topo, first), None, None)
        }
        RoutingEngine::Colored => {
            colored::check(topo, phases)?;
            let table = colored::first_up_ports(topo, phases);
            let first = |sw: u32, d: u32, _| u32::from(table[sw as usize][d as usize]);
            (program_fat_tree_from(topo, first), None, None)
        }
        RoutingEngine::Ftree | RoutingEngine::Random { .. } => {
            return Err(format!(
                "routing engine `{}` needs a fat tree",
                engine.name()
            ));
        }
        RoutingEngine::Minhop => (program_minimal(topo)?, None, None),
        RoutingEngine::Updn => (write_tables(topo.nodes, &updn::ports(topo)?), None, None),
        RoutingEngine::DflyMin => (write_tables(topo.nodes, &dragonfly_min()?), None, None),
        RoutingEngine::DflyVlHops => (
            write_tables(topo.nodes, &dragonfly_min()?),
            None,
            Some(dragonfly::vl_hop_tables(topo)?),
        ),
        RoutingEngine::D3r2Vl | RoutingEngine::D3r3Vl => {
            let vls = engine.vls().unwrap_or(2);
            let tables = write_tables(topo.nodes, &dragonfly_min()?);
            (tables, Some(path_sl::d3r(topo, vls)?), None)
        }
        RoutingEngine::Lash => {
            let (ports, sls) = lash::route(topo)?;
            (write_tables(topo.nodes, &ports), Some(sls), None)
        }
        RoutingEngine::Dfsssp => {
            let (ports, sls) = dfsssp::route(topo)?;
            (write_tables(topo.nodes, &ports), Some(sls), None)
        }
        RoutingEngine::FaUpdn { options } => {
            let escape = updn::ports(topo)?;
            let minimal = minimal_port_lists(topo)?;
            (
                write_tables(topo.nodes, &fa::lists(&escape, &minimal, options)),
                None,
                None,
            )
        }
    };
    Ok(Routing {
        lmc,
        tables,
        sls,
        sl_to_vl,
    })
}

/// Per switch and destination, the output ports toward it (option 0 first).
pub type PortLists = Vec<Vec<Vec<u16>>>;

/// LFTs from per-switch, per-destination port lists (option 0 first): LMC the smallest covering
/// the longest list, and option `b` the `b mod n`-th port.
fn write_tables(nodes: u32, ports_to: &PortLists) -> (u32, Vec<LftBanks>) {
    let widest = ports_to
        .iter()
        .flatten()
        .map(|p| p.len() as u32)
        .max()
        .unwrap_or(1);
    let lmc = lmc_for(widest, nodes);
    let banks = 1u32 << lmc;
    let tables = ports_to
        .iter()
        .map(|per_dest| {
            let mut t = LftBanks::new(lmc, nodes as usize);
            for (d, ports) in per_dest.iter().enumerate() {
                for b in 0..banks {
                    let port = ports[(b as usize) % ports.len()];
                    t.program((((d as u32) << lmc) | b) as u16, port as u8);
                }
            }
            t
        })
        .collect();
    (lmc, tables)
}

/// The switches of a topology as a graph: each switch's cables to other switches, and where
/// each end node is attached.
pub struct SwitchGraph {
    /// Per switch: (neighbour switch, own port), one entry per cable.
    pub adj: Vec<Vec<(usize, u16)>>,
    /// Per end node: (switch, port) it is cabled to.
    pub attach: Vec<(usize, u16)>,
    /// Ports per switch.
    ports: Vec<u16>,
}

impl SwitchGraph {
    /// The graph of `topo`; an error names an end node cabled to no switch.
    pub fn of(topo: &Topology) -> Result<Self, String> {
        let ns = topo.switches.len();
        let mut adj = vec![Vec::new(); ns];
        let mut attach = vec![(usize::MAX, 0); topo.nodes as usize];
        for &(a, b) in &topo.links {
            for (x, y) in [(a, b), (b, a)] {
                match (x, y) {
                    (Endpoint::Switch { sw, port }, Endpoint::Switch { sw: t, .. }) => {
                        adj[sw as usize].push((t as usize, port))
                    }
                    (Endpoint::Switch { sw, port }, Endpoint::Node(n)) => {
                        attach[n as usize] = (sw as usize, port)
                    }
                    _ => {}
                }
            }
        }
        if let Some(n) = attach.iter().position(|a| a.0 == usize::MAX) {
            return Err(format!("node {n} is cabled to no switch"));
        }
        let ports = topo.switches.iter().map(|s| s.ports).collect();
        Ok(SwitchGraph { adj, attach, ports })
    }

    /// Hop distances from switch `from` (`u32::MAX`: unreachable).
    pub fn bfs(&self, from: usize) -> Vec<u32> {
        let mut dist = vec![u32::MAX; self.adj.len()];
        let mut queue = std::collections::VecDeque::from([from]);
        dist[from] = 0;
        while let Some(s) = queue.pop_front() {
            for &(t, _) in &self.adj[s] {
                if dist[t] == u32::MAX {
                    dist[t] = dist[s] + 1;
                    queue.push_back(t);
                }
            }
        }
        dist
    }

    /// Per switch and port, the switch at its far end (`None`: an end node or nothing).
    pub fn peers(&self) -> Vec<Vec<Option<usize>>> {
        let mut p: Vec<Vec<Option<usize>>> =
            self.ports.iter().map(|&n| vec![None; n as usize]).collect();
        for (s, list) in self.adj.iter().enumerate() {
            for &(t, port) in list {
                p[s][port as usize] = Some(t);
            }
        }
        p
    }
}

/// LIDs the subnet manager assigns: InfiniBand's unicast range, 0 to 0xBFFF (49,151). Node `d`
/// owns `d << LMC ..= (d << LMC) | (2^LMC - 1)`, so a fabric holds at most this many end nodes.
pub const UNICAST_LIDS: u32 = 0xC000;

/// Smallest LMC giving at least `options` routing options (capped at 4), lowered until the
/// 2^LMC LIDs of each of `nodes` end nodes lie in the unicast range.
pub fn lmc_for(options: u32, nodes: u32) -> u32 {
    let mut lmc = 0;
    while (1u32 << lmc) < options && lmc < 4 && (nodes << (lmc + 1)) <= UNICAST_LIDS {
        lmc += 1;
    }
    lmc
}

/// The minimal output ports of switch `sw` toward end node `dest`, deterministic (D-mod-K) first.
/// Only for fat trees (XGFT topologies).
pub fn minimal_ports(topo: &Topology, sw: u32, dest: u32) -> Vec<u16> {
    let way = Minimal::at(topo, sw, index_in_level(topo, sw));
    (0..way.count(dest)).map(|b| way.port(dest, b)).collect()
}

/// Index of switch `sw` inside its level (switches are numbered level by level).
/// Per switch, S-mod-K's divisor of the source (the product of the up-port counts of the levels
/// below it, the `b_l` D-mod-K divides the destination by); all 0 off a fat tree.
pub fn smodk_divisors(topo: &Topology) -> Vec<u32> {
    if topo.xgft.is_none() {
        return vec![0; topo.switches.len()];
    }
    (0..topo.switches.len() as u32)
        .map(|sw| Minimal::at(topo, sw, index_in_level(topo, sw)).b_l)
        .collect()
}

fn index_in_level(topo: &Topology, sw: u32) -> u32 {
    let l = topo.switches[sw as usize].stage;
    sw - topo.switches[..sw as usize]
        .iter()
        .filter(|s| s.stage < l)
        .count() as u32
}

/// The up port (index among the up ports) the `random` engine puts first at switch `sw` toward
/// `dest`: drawn from `seed`, `sw` and `dest` alone, so that the table does not depend on the
/// order it is written in.
fn random_first(seed: u64, sw: u32, dest: u32, up: u32) -> u32 {
    let mut g = SplitMix64::new(
        seed ^ ((sw as u64) << 32 | dest as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
    );
    g.below(up.max(1) as u64) as u32
}

/// Builds the LFT of every switch of a fat tree. Returns the LMC used and one table per switch.
pub fn program_fat_tree(topo: &Topology) -> (u32, Vec<LftBanks>) {
    program_fat_tree_from(topo, |_, d, (up, b_l)| d / b_l % up.max(1))
}

/// [`program_fat_tree`] with option 0 upward the up port (index among the up ports)
/// `first(sw, dest, (up ports, b_l))` gives; the other up ports follow in rotation.
fn program_fat_tree_from(
    topo: &Topology,
    first: impl Fn(u32, u32, (u32, u32)) -> u32,
) -> (u32, Vec<LftBanks>) {
    let widest = topo
        .switches
        .iter()
        .map(|s| s.up_ports.count_ones())
        .max()
        .unwrap_or(1);
    let lmc = lmc_for(widest, topo.nodes);
    let banks = 1u32 << lmc;
    let rows = topo.nodes as usize;
    let mut tables = Vec::with_capacity(topo.switches.len());
    for sw in 0..topo.switches.len() as u32 {
        let mut t = LftBanks::new(lmc, rows);
        let way = Minimal::at(topo, sw, index_in_level(topo, sw));
        for d in 0..topo.nodes {
            let n = way.count(d);
            let j0 = first(sw, d, (way.up, way.b_l));
            for b in 0..banks {
                t.program(((d << lmc) | b) as u16, way.port_after(d, b % n, j0) as u8);
            }
        }
        tables.push(t);
    }
    (lmc, tables)
}

/// Builds the LFTs of any topology from shortest paths: at each switch, the ports toward a
/// destination are those one hop closer to it; option 0 is the lowest-numbered such port. The
/// tables are written straight from the searches (twice: first for the LMC), never holding a
/// list per switch and destination (6936 x 41616 of them on the largest Dragonfly).
pub fn program_minimal(topo: &Topology) -> Result<(u32, Vec<LftBanks>), String> {
    let g = SwitchGraph::of(topo)?;
    let mut widest = 1;
    each_minimal_list(&g, |_, _, ports| widest = widest.max(ports.len() as u32))?;
    let lmc = lmc_for(widest, topo.nodes);
    let banks = 1u32 << lmc;
    let mut tables = vec![LftBanks::new(lmc, topo.nodes as usize); g.adj.len()];
    each_minimal_list(&g, |s, d, ports| {
        for b in 0..banks {
            let port = ports[(b as usize) % ports.len()];
            tables[s].program(((d << lmc) | b) as u16, port as u8);
        }
    })?;
    Ok((lmc, tables))
}

/// Per switch and destination, the ports one hop closer to it, lowest first.
fn minimal_port_lists(topo: &Topology) -> Result<PortLists, String> {
    let g = SwitchGraph::of(topo)?;
    let mut ports_to: PortLists = vec![vec![Vec::new(); topo.nodes as usize]; g.adj.len()];
    each_minimal_list(&g, |s, d, ports| ports_to[s][d as usize] = ports.to_vec())?;
    Ok(ports_to)
}

/// Calls `f(switch, destination, ports)` with the ports of every switch one hop closer to every
/// end node, lowest first. Paths never cross another end node, so a node's distances are those of
/// the switch it hangs off plus one: one search per switch with end nodes serves all of them (a
/// search per node made the largest Dragonfly take minutes).
fn each_minimal_list(g: &SwitchGraph, mut f: impl FnMut(usize, u32, &[u16])) -> Result<(), String> {
    let ns = g.adj.len();
    let mut at_switch: Vec<Vec<u32>> = vec![Vec::new(); ns];
    for (d, &(t, _)) in g.attach.iter().enumerate() {
        at_switch[t].push(d as u32);
    }
    let mut p: Vec<u16> = Vec::new();
    for (t, nodes) in at_switch.iter().enumerate().filter(|(_, n)| !n.is_empty()) {
        let dist = g.bfs(t);
        for s in 0..ns {
            if dist[s] == u32::MAX {
                return Err(format!(
                    "node {} cannot be reached from switch {s}",
                    nodes[0]
                ));
            }
            if s == t {
                for &d in nodes {
                    f(s, d, &[g.attach[d as usize].1]);
                }
                continue;
            }
            p.clear();
            p.extend(
                g.adj[s]
                    .iter()
                    .filter(|&&(u, _)| dist[u] + 1 == dist[s])
                    .map(|&(_, port)| port),
            );
            p.sort_unstable();
            for &d in nodes {
                f(s, d, &p);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::topology::Endpoint;
    use std::collections::HashMap;

    /// Follows option `opt` of each (source, destination) pair: it must arrive, minimally.
    fn walk(topo: &Topology, pairs: impl Iterator<Item = (u32, u32)>, opt: u32) {
        let (lmc, tables) = program_fat_tree(topo);
        let mut peer: HashMap<Endpoint, Endpoint> = HashMap::new();
        for &(a, b) in &topo.links {
            peer.insert(a, b);
            peer.insert(b, a);
        }
        let stages = topo.stages() as usize;
        for (s, d) in pairs {
            let mut at = peer[&Endpoint::Node(s)];
            let mut hops = 0;
            loop {
                let Endpoint::Switch { sw, .. } = at else {
                    assert_eq!(at, Endpoint::Node(d), "{s}->{d} arrived at the wrong node");
                    break;
                };
                let lid = (d << lmc | opt) as u16;
                let opts = tables[sw as usize].options(lid);
                let b = opt as usize;
                assert!(
                    opts.usable(b),
                    "{s}->{d}: option {opt} unusable at switch {sw}"
                );
                at = peer[&Endpoint::Switch {
                    sw,
                    port: opts.ports[b] as u16,
                }];
                hops += 1;
                assert!(hops <= 2 * stages, "{s}->{d} is not minimal");
            }
        }
    }

    /// Option 0 from every source to every destination.
    fn walk_all(topo: &Topology) {
        let n = topo.nodes;
        walk(topo, (0..n).flat_map(|s| (0..n).map(move |d| (s, d))), 0);
    }

    #[test]
    fn dmodk_routes_reach_every_destination() {
        walk_all(&Topology::kary_ntree(2, 3));
        walk_all(&Topology::kary_ntree(3, 2));
        walk_all(&Topology::rlft(4, 3));
    }

    #[test]
    fn sixteen_thousand_nodes_fit_the_unicast_lids_with_two_options() {
        // 40-port RLFT of 3 stages: 16,000 nodes, 20 up ports, LMC 1 (LIDs up to 31,999).
        let t = Topology::rlft(40, 3);
        assert_eq!((t.nodes, t.switches.len()), (16_000, 2_000));
        let (lmc, tables) = program_fat_tree(&t);
        assert_eq!(lmc, 1);
        assert_eq!(tables[0].entries(), 32_000);
        // Both options of a spread of pairs, the highest LIDs among them.
        let pairs = (0..400u32).map(|i| ((i * 7_919) % 16_000, 15_999 - (i * 104_729) % 16_000));
        walk(&t, pairs.clone(), 0);
        walk(&t, pairs, 1);
    }

    #[test]
    fn alternatives_follow_the_deterministic_option() {
        let t = Topology::kary_ntree(4, 2);
        // Leaf switch 0, destination 7 (not below it): D-mod-K picks up port 4 + (7 mod 4).
        assert_eq!(minimal_ports(&t, 0, 7), vec![7, 4, 5, 6]);
        // Destination 2 is below leaf 0: down port 2 only.
        assert_eq!(minimal_ports(&t, 0, 2), vec![2]);
        assert_eq!(lmc_for(4, 16), 2);
        // 16,000 nodes of 40-port switches (20 up ports): LMC 1, LIDs up to 31,999.
        assert_eq!(lmc_for(20, 16_000), 1);
        assert_eq!(lmc_for(20, 24_576), 1);
        assert_eq!(lmc_for(20, 24_577), 0);
        assert_eq!(lmc_for(20, 3_072), 4);
    }
}
