//! Dragonfly minimal routing (Kim et al., "Technology-Driven, Highly-Scalable Dragonfly
//! Topology", ISCA 2008): a packet crosses at most three links between routers, local in its
//! source group, the one global link between its source and destination groups, local in the
//! destination group. The shortest path between two routers can be shorter through a third group
//! (two global hops); this routing never takes it, which is what lets D3R (`path_sl`) and the
//! VL change after the global hop (below) break every cycle. One option per destination.
//!
//! The VL change (Kim et al., section 4): every packet carries SL 0, and every router's SL-to-VL
//! tables send a packet that arrived on a global port out of a local port on VL 1, everything
//! else on VL 0. The channels then form three classes, local VL 0, global VL 0, local VL 1, that
//! a packet takes only in that order: no cycle of channel dependencies. Unlike D3R the VL changes
//! on the way, so the switches' tables, indexed by input port, do the work, not the HCA's SL.

use super::PortLists;
use crate::fabric::topology::{DragonflyShape, Topology};
use crate::switch::SlToVl;

/// The Dragonfly's shape; an error naming `engine` on other topologies.
pub(super) fn shape_of(topo: &Topology, engine: &str) -> Result<DragonflyShape, String> {
    topo.dragonfly.ok_or_else(|| {
        format!("routing engine `{engine}` routes Dragonflies (`topology.kind` `dragonfly`)")
    })
}

/// The one minimal port of every router toward every end node.
pub fn minimal_ports(topo: &Topology, engine: &str) -> Result<PortLists, String> {
    let shape = shape_of(topo, engine)?;
    let (a, h, p) = (shape.a, shape.h, shape.p);
    let groups = shape.groups();
    Ok((0..shape.routers())
        .map(|s| {
            let (g, r) = (s / a, s % a);
            (0..topo.nodes)
                .map(|d| {
                    let sd = d / p;
                    let (gd, rd) = (sd / a, sd % a);
                    let port = if s == sd {
                        (d % p) as u16
                    } else if g == gd {
                        shape.local_port(r, rd)
                    } else {
                        // Global link j of group g leads to group (g + j + 1) mod G.
                        let j = (gd + groups - g - 1) % groups;
                        let (owner, k) = (j / h, j % h);
                        if owner == r {
                            shape.global_port(k)
                        } else {
                            shape.local_port(r, owner)
                        }
                    };
                    vec![port]
                })
                .collect()
        })
        .collect())
}

/// The SL-to-VL tables of every router for the VL change after the global hop.
pub fn vl_hop_tables(topo: &Topology) -> Result<Vec<SlToVl>, String> {
    let shape = shape_of(topo, "dfly_vl_hops")?;
    let ports = shape.radix() as usize;
    let first_global = (shape.p + shape.a - 1) as usize;
    let local = shape.p as usize..first_global;
    let mut t = SlToVl::identity();
    for out in local {
        for input in first_global..ports {
            t.set(ports, out, input, 0, 1);
        }
    }
    Ok(vec![t; topo.switches.len()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::subnet_manager::SwitchGraph;

    #[test]
    fn minimal_routes_go_local_global_local_and_arrive() {
        let shape = DragonflyShape { a: 4, h: 2, p: 2 };
        let topo = Topology::dragonfly(shape);
        let ports = minimal_ports(&topo, "dfly_min").unwrap();
        let g = SwitchGraph::of(&topo).unwrap();
        let peer = g.peers();
        let global = |port: u16| port as u32 >= shape.p + shape.a - 1;
        for src in 0..shape.routers() as usize {
            for d in 0..topo.nodes {
                let (mut s, mut hops, mut globals) = (src, 0, 0);
                while s != g.attach[d as usize].0 {
                    let port = ports[s][d as usize][0];
                    globals += global(port) as u32;
                    s = peer[s][port as usize].expect("a switch port");
                    hops += 1;
                }
                assert_eq!(ports[s][d as usize][0], g.attach[d as usize].1);
                assert!(hops <= 3 && globals <= 1, "{src} -> {d}: {hops} hops");
            }
        }
    }

    #[test]
    fn a_packet_from_a_global_port_to_a_local_one_moves_to_vl_1() {
        // a = 4, h = 2, p = 2: ports 0-1 nodes, 2-4 local, 5-6 global.
        let topo = Topology::dragonfly(DragonflyShape { a: 4, h: 2, p: 2 });
        let t = vl_hop_tables(&topo).unwrap();
        assert_eq!(t.len(), 36);
        assert_eq!(t[7].vl(3, 5, 0), 1, "global in, local out");
        assert_eq!(t[7].vl(5, 3, 0), 0, "local in, global out");
        assert_eq!(t[7].vl(3, 0, 0), 0, "from a node");
        assert_eq!(t[7].vl(0, 6, 0), 0, "to a node");
        assert_eq!(t[7].vl(6, 5, 0), 0, "global to global");
        assert!(vl_hop_tables(&Topology::xgft(&[2, 2], &[1, 2])).is_err());
    }
}
