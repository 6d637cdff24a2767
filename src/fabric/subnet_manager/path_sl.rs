//! Service levels per path, as a subnet manager answers an HCA's path query (InfiniBand's
//! PathRecord SL): the SL a packet from a node of switch `s` to end node `d` carries. The HCA sets
//! it at injection and no switch changes it; every output port's SL-to-VL table is the identity,
//! so the SL is the packet's VL on every hop (`docs/switch.md`). Routing engines that break the
//! cycles of their channel dependencies by layering paths over VLs choose these SLs.
//!
//! D3R (Maglione-Mathey et al., "Scalable Deadlock-Free Deterministic Minimal-Path Routing Engine
//! for InfiniBand-Based Dragonflies", section 4): a minimal route on a Dragonfly goes local,
//! global, local (`dragonfly`). Packets whose source group is higher than their destination group travel on
//! VL 0, those from a lower to a higher group on VL 1: on each VL the groups a packet crosses only
//! fall (or only rise), so no chain of channel dependencies can come back to its start. Packets
//! inside one group take one local hop and depend on no other channel between switches: D3R-2VL
//! puts them on VL 0, D3R-3VL on a VL 2 of their own, so that they do not queue behind traffic
//! between groups.

use crate::fabric::topology::Topology;
use std::sync::Arc;

/// The SL of every path: one row per switch (the SL toward each end node from a node attached to
/// that switch), shared by the HCAs of the switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathSls {
    vls: u8,
    rows: Vec<Arc<[u8]>>,
}

impl PathSls {
    /// SLs from one row per switch; every SL is below `vls`.
    pub fn new(vls: u8, rows: Vec<Vec<u8>>) -> Self {
        debug_assert!(rows.iter().flatten().all(|&sl| sl < vls));
        PathSls {
            vls,
            rows: rows.into_iter().map(Arc::from).collect(),
        }
    }

    /// VLs the paths are spread over (every SL is below it).
    pub fn vls(&self) -> u8 {
        self.vls
    }

    /// The SL of packets from a node of switch `sw` to end node `dest`.
    pub fn sl(&self, sw: usize, dest: u32) -> u8 {
        self.rows[sw][dest as usize]
    }

    /// The SLs toward every end node from the nodes of switch `sw` (what their HCAs hold).
    pub fn row(&self, sw: usize) -> Arc<[u8]> {
        self.rows[sw].clone()
    }
}

/// D3R's SLs on a Dragonfly with `vls` (2 or 3) VLs; refused on other topologies.
pub fn d3r(topo: &Topology, vls: u8) -> Result<PathSls, String> {
    let shape = super::dragonfly::shape_of(topo, "d3r")?;
    let node_group = |d: u32| shape.group_of(d / shape.p);
    let rows = (0..topo.switches.len() as u32)
        .map(|s| {
            let gs = shape.group_of(s);
            (0..topo.nodes)
                .map(|d| {
                    let gd = node_group(d);
                    match gs.cmp(&gd) {
                        std::cmp::Ordering::Greater => 0,
                        std::cmp::Ordering::Less => 1,
                        std::cmp::Ordering::Equal if vls >= 3 => 2,
                        std::cmp::Ordering::Equal => 0,
                    }
                })
                .collect()
        })
        .collect();
    Ok(PathSls::new(vls, rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::topology::DragonflyShape;

    #[test]
    fn d3r_orders_groups_and_gives_intra_group_traffic_its_own_vl() {
        let shape = DragonflyShape { a: 4, h: 2, p: 2 };
        let topo = Topology::dragonfly(shape);
        let two = d3r(&topo, 2).unwrap();
        let three = d3r(&topo, 3).unwrap();
        assert_eq!((two.vls(), three.vls()), (2, 3));
        // Switch 5 is in group 1; node 0 in group 0, node 9 in group 1 (switch 4), node 20 in
        // group 2 (switch 10).
        assert_eq!([two.sl(5, 0), two.sl(5, 9), two.sl(5, 20)], [0, 0, 1]);
        assert_eq!([three.sl(5, 0), three.sl(5, 9), three.sl(5, 20)], [0, 2, 1]);
        assert!(d3r(&Topology::xgft(&[2, 2], &[1, 2]), 2).is_err());
    }
}
