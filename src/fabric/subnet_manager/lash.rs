//! LASH, layered shortest-path routing (Skeie, Lysne and Theiss, "Layered Shortest Path (LASH)
//! Routing in Irregular System Area Networks", IPDPS 2002; OpenSM's `lash`; seed 003 compares
//! it with D3R). One minimal path per destination (`minhop`'s option 0, the lowest port one hop
//! closer); each path from a switch with end nodes to a destination goes, in the order
//! destination then source switch, to the first layer whose channel dependencies stay acyclic
//! with it (`dfsssp::layer_paths`). A path's layer is its SL and its VL on every hop, and the
//! fabric has as many VLs as layers were needed, at most 15 (16 with the AFC). Unlike DFSSSP the
//! paths are not balanced and the layers are not spread over spare VLs.

use super::PortLists;
use super::dfsssp::layer_paths;
use super::path_sl::PathSls;
use crate::fabric::topology::Topology;

/// Layers LASH may take: InfiniBand's 16 data VLs less the AFC.
pub const MOST_LAYERS: u8 = 15;

/// The one port of every switch toward every destination and every path's SL.
pub fn route(topo: &Topology) -> Result<(PortLists, PathSls), String> {
    let mut ports = super::minimal_port_lists(topo)?;
    for p in ports.iter_mut().flatten() {
        p.truncate(1);
    }
    let (layer_of, count) = layer_paths(topo, &ports, MOST_LAYERS, "lash")?;
    let rows = layer_of
        .iter()
        .map(|row| row.iter().map(|l| l.unwrap_or(0)).collect())
        .collect();
    Ok((ports, PathSls::new(count.len().max(1) as u8, rows)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::topology::DragonflyShape;

    #[test]
    fn lash_needs_few_layers_on_a_dragonfly_and_one_on_a_fat_tree() {
        let t = Topology::dragonfly(DragonflyShape { a: 4, h: 2, p: 2 });
        let (ports, sls) = route(&t).unwrap();
        assert!(ports.iter().flatten().all(|p| p.len() == 1));
        assert!((2..=4).contains(&sls.vls()), "{} layers", sls.vls());
        // Up, then down, never closes a cycle: a fat tree takes one layer.
        let (_, sls) = route(&Topology::kary_ntree(3, 3)).unwrap();
        assert_eq!(sls.vls(), 1);
    }
}
