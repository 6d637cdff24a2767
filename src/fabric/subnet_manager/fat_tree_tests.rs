//! The `random` and `colored` engines and slimmed fat trees: every route arrives minimally, the
//! random table is the seed's alone, the colored one spreads its phases at least as well as
//! D-mod-K and is its phases' alone, and a slimmed top is routed by every fat-tree engine.

use super::*;
use crate::fabric::topology::Endpoint;
use std::collections::HashMap;

/// Follows option 0 from every source to every destination of `r` on `topo`: it must arrive
/// within two hops per stage. Returns the ports taken at each switch, per destination.
fn walk_all(topo: &Topology, r: &Routing) -> Vec<Vec<u8>> {
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
            while let Endpoint::Switch { sw, .. } = at {
                let opts = r.tables[sw as usize].options((d << r.lmc) as u16);
                assert!(opts.usable(0), "{s}->{d}: no route at switch {sw}");
                at = peer[&Endpoint::Switch {
                    sw,
                    port: opts.ports[0] as u16,
                }];
                hops += 1;
                assert!(hops <= 2 * stages, "{s}->{d} is not minimal");
            }
            assert_eq!(at, Endpoint::Node(d), "{s}->{d} arrived elsewhere");
        }
    }
    (0..topo.switches.len())
        .map(|sw| {
            (0..topo.nodes)
                .map(|d| r.tables[sw].options((d << r.lmc) as u16).ports[0])
                .collect()
        })
        .collect()
}

#[test]
fn a_random_table_reaches_everywhere_and_is_its_seeds_alone() {
    let t = Topology::kary_ntree(4, 3);
    let dmodk = walk_all(&t, &program(&t, RoutingEngine::Ftree).unwrap());
    let a = walk_all(&t, &program(&t, RoutingEngine::Random { seed: 1 }).unwrap());
    let again = walk_all(&t, &program(&t, RoutingEngine::Random { seed: 1 }).unwrap());
    let b = walk_all(&t, &program(&t, RoutingEngine::Random { seed: 2 }).unwrap());
    assert_eq!(a, again, "the same seed, the same table");
    assert_ne!(a, b, "another seed, another table");
    assert_ne!(a, dmodk);
    // Down ports are the tree's: only the up choices differ from D-mod-K's, and every up port
    // is taken somewhere.
    let up_ports: std::collections::BTreeSet<u8> = (0..t.switches.len())
        .filter(|&sw| t.switches[sw].up_ports != 0)
        .flat_map(|sw| a[sw].iter().copied())
        .filter(|&p| p >= 4)
        .collect();
    assert_eq!(up_ports.into_iter().collect::<Vec<_>>(), [4, 5, 6, 7]);
    for sw in 0..t.switches.len() {
        for d in 0..t.nodes as usize {
            if dmodk[sw][d] < 4 {
                assert_eq!(a[sw][d], dmodk[sw][d], "switch {sw} to {d}: down is unique");
            }
        }
    }
    let shape = crate::fabric::topology::DragonflyShape { a: 2, h: 1, p: 1 };
    let e = program(
        &Topology::dragonfly(shape),
        RoutingEngine::Random { seed: 1 },
    );
    assert!(e.err().unwrap().contains("`random` needs a fat tree"));
}

#[test]
fn a_slimmed_top_is_routed_by_every_fat_tree_engine() {
    // 4-ary 3-tree with 8 of its 16 top switches: the level below keeps 2 of 4 up ports.
    let t = Topology::xgft(&[4, 4, 4], &[1, 4, 2]);
    assert_eq!(t.switches.iter().filter(|s| s.stage == 3).count(), 8);
    assert!(
        t.switches
            .iter()
            .filter(|s| s.stage == 2)
            .all(|s| s.ports == 6)
    );
    for engine in [
        RoutingEngine::Ftree,
        RoutingEngine::Random { seed: 3 },
        RoutingEngine::Minhop,
        RoutingEngine::Updn,
    ] {
        walk_all(&t, &program(&t, engine).unwrap());
    }
}

#[test]
fn a_colored_table_separates_what_dmodk_crowds_and_reaches_everywhere() {
    use colored::{Phase, dmodk_first_up_ports, first_up_ports, largest_loads};
    // 4-ary 2-tree: nodes 0 and 1 (leaf 0) send to 7 and 11, whose D-mod-K up port is 3 at
    // leaf 0 for both: two messages on one up link. On two up ports, they meet nowhere.
    let t = Topology::kary_ntree(4, 2);
    let phases: Vec<Phase> = vec![vec![(0, 7, 10), (1, 11, 10)]];
    let dmodk = largest_loads(&t, &phases, &dmodk_first_up_ports(&t));
    assert_eq!(dmodk, [20]);
    let table = first_up_ports(&t, &phases);
    assert_eq!(largest_loads(&t, &phases, &table), [10]);
    walk_all(
        &t,
        &program_with(&t, RoutingEngine::Colored, &phases).unwrap(),
    );
    // No phases: refused, not D-mod-K under another name.
    let e = program_with(&t, RoutingEngine::Colored, &[]).err().unwrap();
    assert!(e.contains("known before the run"), "{e}");
    // More phases than the load table holds: refused before any work.
    let ports: u64 = t.switches.iter().map(|s| s.ports as u64).sum();
    let mut many: Vec<Phase> = vec![Vec::new(); (colored::MAX_LOAD_ENTRIES / ports + 1) as usize];
    many[0].push((0, 7, 10));
    let e = program_with(&t, RoutingEngine::Colored, &many)
        .err()
        .unwrap();
    assert!(e.contains("fewer phases"), "{e}");
}

#[test]
fn a_colored_table_lowers_nas_cg_contention_and_is_its_phases_alone() {
    use crate::replay::workloads::Cg;
    use colored::{Phase, dmodk_first_up_ports, first_up_ports, largest_loads};
    // NAS CG on 128 ranks placed linearly on a 2-stage fat tree of 16-port switches: the
    // reductions' partners at distance 8 sit on the next leaf, and the transpose's across the
    // tree. Phase k: every rank's k-th message.
    let t = Topology::rlft(16, 2);
    assert_eq!(t.nodes, 128);
    let cg = Cg::default();
    let mut phases: Vec<Phase> = Vec::new();
    for me in 0..128 {
        let r = cg.rank(me);
        let mut mine: Vec<(u32, u64)> = r.reduce.iter().map(|&(p, b, _)| (p, b)).collect();
        if r.transpose.0 != me {
            mine.push(r.transpose);
        }
        for (k, (dst, bytes)) in mine.into_iter().enumerate() {
            if phases.len() <= k {
                phases.push(Vec::new());
            }
            phases[k].push((me, dst, bytes));
        }
    }
    let dmodk: u64 = largest_loads(&t, &phases, &dmodk_first_up_ports(&t))
        .iter()
        .sum();
    let table = first_up_ports(&t, &phases);
    let colored: u64 = largest_loads(&t, &phases, &table).iter().sum();
    // Five phases of 750,000-byte messages: at best one message on every link.
    assert!(colored >= 5 * 750_000);
    assert!(colored < dmodk, "colored {colored} against D-mod-K {dmodk}");
    assert_eq!(
        first_up_ports(&t, &phases),
        table,
        "the same phases, the same table"
    );
    walk_all(
        &t,
        &program_with(&t, RoutingEngine::Colored, &phases).unwrap(),
    );
}

/// The switches a packet from `s` to `d` crosses, each hop toward the roots taking S-mod-K's up
/// port when `smodk`, else option 0 (D-mod-K's).
fn path(topo: &Topology, r: &Routing, s: u32, d: u32, smodk: bool) -> Vec<u32> {
    use crate::switch::routing_stage::smodk_port;
    let divs = smodk_divisors(topo);
    let peer: HashMap<Endpoint, Endpoint> = topo
        .links
        .iter()
        .flat_map(|&(a, b)| [(a, b), (b, a)])
        .collect();
    let mut at = peer[&Endpoint::Node(s)];
    let mut seen = Vec::new();
    while let Endpoint::Switch { sw, .. } = at {
        seen.push(sw);
        let mut port = r.tables[sw as usize].options((d << r.lmc) as u16).ports[0];
        let up = topo.switches[sw as usize].up_ports;
        if smodk && up >> port & 1 == 1 {
            port = smodk_port(up, divs[sw as usize], s as u16);
        }
        at = peer[&Endpoint::Switch {
            sw,
            port: port as u16,
        }];
        assert!(
            seen.len() <= 2 * topo.stages() as usize,
            "{s}->{d} is not minimal"
        );
    }
    assert_eq!(at, Endpoint::Node(d), "{s}->{d} arrived elsewhere");
    seen
}

#[test]
fn smodk_routes_each_pair_over_dmodks_path_of_the_reverse_pair() {
    // S-mod-K spreads by source what D-mod-K spreads by destination: the path from s to d is
    // D-mod-K's from d to s, reversed, on full and slimmed trees.
    for t in [
        Topology::kary_ntree(4, 3),
        Topology::xgft(&[4, 4, 4], &[1, 4, 2]),
        Topology::xgft(&[8, 4], &[1, 4]),
    ] {
        let r = program(&t, RoutingEngine::Ftree).unwrap();
        for s in 0..t.nodes {
            for d in 0..t.nodes {
                let mut back = path(&t, &r, d, s, false);
                back.reverse();
                assert_eq!(path(&t, &r, s, d, true), back, "{s}->{d}");
            }
        }
    }
    // And it differs from D-mod-K: from the 4 nodes of one leaf to one remote destination,
    // D-mod-K takes one up port, S-mod-K four.
    let t = Topology::kary_ntree(4, 2);
    let r = program(&t, RoutingEngine::Ftree).unwrap();
    let second = |smodk| -> std::collections::BTreeSet<u32> {
        (0..4).map(|s| path(&t, &r, s, 12, smodk)[1]).collect()
    };
    assert_eq!(second(false).len(), 1);
    assert_eq!(second(true).len(), 4);
}
