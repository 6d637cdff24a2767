//! A fat tree (k-ary n-tree or RLFT, with or without horizontal links) as the subnet manager's
//! offline computations walk it: each switch's minimal ways toward any destination
//! ([`Minimal`]: D-mod-K's port and the up ports in rotation, or the one way down), its
//! index in its level, the switch at the far end of each port, and each node's leaf. The
//! `colored` engine and flow routing's contention analysis (`fabric::flow_routes`) both walk it.

use crate::fabric::topology::{Endpoint, Topology};

/// The minimal ways of one switch of a fat tree, toward any destination: down to the one port
/// of the destination's subtree, or up by D-mod-K and then the other up ports in rotation.
pub(crate) struct Minimal {
    /// End nodes below a switch of this level (`m_1 ⋯ m_l`), and below one child (`m_1 ⋯ m_{l-1}`).
    pub(crate) below: u32,
    pub(crate) below_child: u32,
    /// Down ports (`m_l`): the first up port's number.
    pub(crate) down: u32,
    /// Up ports (`w_{l+1}`).
    pub(crate) up: u32,
    /// The subtree this switch serves (`local / (w_1 ⋯ w_l)`), and that product.
    pub(crate) part: u32,
    pub(crate) b_l: u32,
}

impl Minimal {
    pub(crate) fn at(topo: &Topology, sw: u32, local: u32) -> Self {
        let (m, w) = topo.xgft.as_ref().expect("minimal_ports needs a fat tree");
        let l = topo.switches[sw as usize].stage as usize;
        let b_l: u32 = w[..l].iter().product();
        Minimal {
            below: m[..l].iter().product(),
            below_child: m[..l - 1].iter().product(),
            down: m[l - 1],
            up: w.get(l).copied().unwrap_or(0),
            part: local / b_l,
            b_l,
        }
    }

    /// How many minimal ports lead to `dest`.
    pub(crate) fn count(&self, dest: u32) -> u32 {
        if dest / self.below == self.part {
            1
        } else {
            self.up
        }
    }

    /// Minimal port `j` (below [`Minimal::count`]) toward `dest`; port 0 is D-mod-K's.
    pub(crate) fn port(&self, dest: u32, j: u32) -> u16 {
        self.port_after(dest, j, (dest / self.b_l) % self.up.max(1))
    }

    /// Minimal port `j` toward `dest` when up port `j0` comes first.
    pub(crate) fn port_after(&self, dest: u32, j: u32, j0: u32) -> u16 {
        if dest / self.below == self.part {
            // In this subtree: one way down, digit a_l of the destination.
            ((dest / self.below_child) % self.down) as u16
        } else {
            (self.down + (j0 + j) % self.up) as u16
        }
    }
}

/// The switches of a fat tree as route computations read them.
pub(crate) struct FatTree {
    /// Per switch, its minimal ways.
    pub(crate) ways: Vec<Minimal>,
    /// Per switch, its level (1 for leaves) and its index in its level.
    pub(crate) level: Vec<u32>,
    pub(crate) local: Vec<u32>,
    /// Per switch and port, the switch at the other end (`None`: an end node).
    pub(crate) peers: Vec<Vec<Option<u32>>>,
    /// Per end node, its leaf switch and the leaf's port.
    pub(crate) leaf: Vec<(u32, u16)>,
    /// Per switch, the number of its port 0 in the flat list of every switch's output ports.
    pub(crate) first_port: Vec<usize>,
    /// Output ports of all switches.
    pub(crate) outputs: usize,
}

impl FatTree {
    /// The tree of `topo`; refused unless it is a fat tree.
    pub(crate) fn of(topo: &Topology) -> Result<Self, String> {
        let Some((m, _)) = topo.xgft.as_ref() else {
            return Err("not a fat tree (`rlft` or `kary_ntree`)".into());
        };
        let n = topo.switches.len();
        let mut seen = vec![0u32; m.len() + 1];
        let (mut ways, mut level, mut local) = (Vec::new(), Vec::new(), Vec::new());
        let (mut first_port, mut outputs) = (Vec::with_capacity(n), 0usize);
        for (sw, s) in topo.switches.iter().enumerate() {
            let l = s.stage as usize;
            ways.push(Minimal::at(topo, sw as u32, seen[l]));
            level.push(l as u32);
            local.push(seen[l]);
            seen[l] += 1;
            first_port.push(outputs);
            outputs += s.ports as usize;
        }
        let mut peers: Vec<Vec<Option<u32>>> = topo
            .switches
            .iter()
            .map(|s| vec![None; s.ports as usize])
            .collect();
        let mut leaf = vec![(0, 0); topo.nodes as usize];
        for &(a, b) in &topo.links {
            for (x, y) in [(a, b), (b, a)] {
                match (x, y) {
                    (Endpoint::Switch { sw, port }, Endpoint::Switch { sw: o, .. }) => {
                        peers[sw as usize][port as usize] = Some(o);
                    }
                    (Endpoint::Switch { sw, port }, Endpoint::Node(d)) => {
                        leaf[d as usize] = (sw, port);
                    }
                    _ => {}
                }
            }
        }
        Ok(FatTree {
            ways,
            level,
            local,
            peers,
            leaf,
            first_port,
            outputs,
        })
    }
}
