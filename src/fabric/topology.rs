//! Fabric topologies: which switch port is cabled to which, and each switch's stage.
//!
//! Fat trees are built as extended generalised fat trees XGFT(h; m1..mh; w1..wh) (Öhring et al.):
//! level 0 holds the end nodes, level l the switches of stage l, each with `m_l` ports down and
//! `w_(l+1)` ports up. A k-ary n-tree is XGFT(n; k..k; 1, k..k); the paper's real-life fat tree of
//! radix P = 2K and n stages is XGFT(n; K..K, 2K; 1, K..K): N = 2 K^n nodes and N (2n-1) / 2K
//! switches (Rocher-Gonzalez et al., table 3). Ports are numbered down ports first (0 .. m_l-1), then up ports.

mod dragonfly;
mod irregular;

pub use dragonfly::DragonflyShape;
pub use irregular::IrregularShape;

/// One end of a cable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// Port `port` of switch `sw`.
    Switch {
        /// Switch index.
        sw: u32,
        /// Port index.
        port: u16,
    },
    /// End node `0` (its single port).
    Node(u32),
}

/// One switch of a topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchSpec {
    /// Number of ports.
    pub ports: u16,
    /// Stage in the fat tree, 1 for the leaves (0 where stages do not apply).
    pub stage: u8,
    /// Bit p set: port p goes up (toward the roots).
    pub up_ports: u64,
}

/// A whole topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Number of end nodes.
    pub nodes: u32,
    /// The switches.
    pub switches: Vec<SwitchSpec>,
    /// Full-duplex cables.
    pub links: Vec<(Endpoint, Endpoint)>,
    /// XGFT shape when the topology is a fat tree: `(m, w)` per level 1..h.
    pub xgft: Option<(Vec<u32>, Vec<u32>)>,
    /// The Dragonfly's shape when the topology is one (routing engines that order its groups).
    pub dragonfly: Option<DragonflyShape>,
    /// Horizontal width of a modified k-ary n-tree: the parallel links between neighbouring
    /// switches of one logical node ([`Topology::with_horizontal`]); 0 for none.
    pub horizontal: u32,
}

impl Topology {
    /// XGFT(h; m; w). `m` and `w` have one entry per level, level 1 first.
    pub fn xgft(m: &[u32], w: &[u32]) -> Self {
        assert_eq!(m.len(), w.len());
        let h = m.len();
        let nodes: u32 = m.iter().product();
        // Switch count and first index per level.
        let mut first = vec![0u32; h + 2];
        let mut count = vec![0u32; h + 1];
        count[0] = nodes;
        for l in 1..=h {
            count[l] = m[l..].iter().product::<u32>() * w[..l].iter().product::<u32>();
            first[l + 1] = first[l] + count[l];
        }
        let mut switches = Vec::new();
        for l in 1..=h {
            let down = m[l - 1];
            let up = if l < h { w[l] } else { 0 };
            assert!(down + up <= 64, "switch radix {} above 64", down + up);
            for _ in 0..count[l] {
                switches.push(SwitchSpec {
                    ports: (down + up) as u16,
                    stage: l as u8,
                    up_ports: ((1u64 << up) - 1) << down,
                });
            }
        }
        // A vertex of level l is a label: digits a_h..a_(l+1) (radices m) then b_l..b_1 (radices
        // w). Encode it as an index: the a digits high, the b digits low.
        let b_radix = |l: usize| w[..l].iter().product::<u32>();
        let mut links = Vec::new();
        for l in 1..=h {
            // Children at level l-1: index = a_part(h..l) * B(l-1) + b_part(l-1..1).
            let bl = b_radix(l - 1);
            for child in 0..count[l - 1] {
                let b_low = child % bl;
                let a_high = child / bl; // digits a_h..a_l, a_l least significant
                let a_l = a_high % m[l - 1];
                let a_rest = a_high / m[l - 1];
                for b in 0..w[l - 1] {
                    let parent = a_rest * (bl * w[l - 1]) + b * bl + b_low;
                    let child_end = if l == 1 {
                        Endpoint::Node(child)
                    } else {
                        Endpoint::Switch {
                            sw: first[l - 1] + child,
                            port: (m[l - 2] + b) as u16,
                        }
                    };
                    let parent_end = Endpoint::Switch {
                        sw: first[l] + parent,
                        port: a_l as u16,
                    };
                    links.push((child_end, parent_end));
                }
            }
        }
        Topology {
            nodes,
            switches,
            links,
            xgft: Some((m.to_vec(), w.to_vec())),
            dragonfly: None,
            horizontal: 0,
        }
    }

    /// The k-ary n-tree: k^n nodes, n k^(n-1) switches of 2k ports.
    pub fn kary_ntree(k: u32, n: u32) -> Self {
        let m = vec![k; n as usize];
        let mut w = vec![k; n as usize];
        w[0] = 1;
        Self::xgft(&m, &w)
    }

    /// The real-life fat tree of switch radix `p` (even) and `n` stages: 2 (p/2)^n nodes.
    pub fn rlft(p: u32, n: u32) -> Self {
        assert!(p.is_multiple_of(2) && p >= 2, "RLFT radix must be even");
        let k = p / 2;
        let mut m = vec![k; n as usize];
        m[n as usize - 1] = p;
        let mut w = vec![k; n as usize];
        w[0] = 1;
        Self::xgft(&m, &w)
    }

    /// The modified k-ary n-tree of Birk and Zdornov (section 4, figure 4b): the switches of each
    /// logical node (the switches of one level that serve the same subtree: same `a` digits,
    /// `b` digits running) joined in a chain, in the order of their `b` digits, by `width`
    /// parallel links between each two neighbours. A chain's inner switches get `2 width` ports
    /// after their up ports, its two ends `width`; the ports to the left neighbour come first.
    /// Level 1 (one switch per logical node) gets none.
    pub fn with_horizontal(mut self, width: u32) -> Self {
        let Some((m, w)) = self.xgft.clone() else {
            return self;
        };
        if width == 0 {
            return self;
        }
        let mut first = 0usize;
        for l in 1..=m.len() {
            let count = m[l..].iter().product::<u32>() * w[..l].iter().product::<u32>();
            // Switches of one logical node: consecutive indices, as many as their b digits.
            let chain = w[..l].iter().product::<u32>() as usize;
            let base: Vec<u16> = (first..first + count as usize)
                .map(|s| self.switches[s].ports)
                .collect();
            for s in first..first + count as usize {
                let i = (s - first) % chain;
                let sides = (i > 0) as u16 + (i + 1 < chain) as u16;
                self.switches[s].ports += sides * width as u16;
            }
            for s in first..first + count as usize {
                let i = (s - first) % chain;
                if i + 1 == chain {
                    continue;
                }
                // Right ports of `s` come after its left ones; left ports of `s + 1` first.
                let right = base[s - first] + (i > 0) as u16 * width as u16;
                let left = base[s + 1 - first];
                for j in 0..width as u16 {
                    self.links.push((
                        Endpoint::Switch {
                            sw: s as u32,
                            port: right + j,
                        },
                        Endpoint::Switch {
                            sw: s as u32 + 1,
                            port: left + j,
                        },
                    ));
                }
            }
            first += count as usize;
        }
        self.horizontal = width;
        self
    }

    /// Number of stages of a fat tree (0 for custom topologies).
    pub fn stages(&self) -> u8 {
        self.switches.iter().map(|s| s.stage).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    pub(super) fn check_cabling(t: &Topology) {
        let mut seen = HashSet::new();
        for &(a, b) in &t.links {
            assert!(seen.insert(a), "{a:?} cabled twice");
            assert!(seen.insert(b), "{b:?} cabled twice");
        }
        // Every switch port and every node is cabled exactly once.
        let ports: usize = t.switches.iter().map(|s| s.ports as usize).sum();
        assert_eq!(seen.len(), ports + t.nodes as usize);
    }

    #[test]
    fn paper_configuration_1() {
        let t = Topology::rlft(12, 3);
        assert_eq!(t.nodes, 432);
        assert_eq!(t.switches.len(), 180);
        assert!(t.switches.iter().all(|s| s.ports == 12));
        assert_eq!(t.links.len(), 432 + 72 * 6 + 72 * 6);
        check_cabling(&t);
    }

    #[test]
    fn paper_configuration_2() {
        let t = Topology::rlft(24, 3);
        assert_eq!(t.nodes, 3456);
        assert_eq!(t.switches.len(), 720);
        assert!(t.switches.iter().all(|s| s.ports == 24));
        check_cabling(&t);
    }

    #[test]
    fn kary_ntree_counts() {
        let t = Topology::kary_ntree(6, 3);
        assert_eq!(t.nodes, 216);
        assert_eq!(t.switches.len(), 108);
        check_cabling(&t);
        let t = Topology::kary_ntree(2, 3);
        assert_eq!(t.nodes, 8);
        assert_eq!(t.switches.len(), 12);
        check_cabling(&t);
    }

    #[test]
    fn a_modified_tree_chains_each_logical_node() {
        // 4-ary 3-tree: level 2 has 4 logical nodes of 4 switches, level 3 one of 16.
        let plain = Topology::kary_ntree(4, 3);
        let t = Topology::kary_ntree(4, 3).with_horizontal(2);
        check_cabling(&t);
        let pairs = 4 * 3 + 15;
        assert_eq!(t.links.len(), plain.links.len() + 2 * pairs);
        let added: usize = t
            .switches
            .iter()
            .zip(&plain.switches)
            .map(|(a, b)| (a.ports - b.ports) as usize)
            .sum();
        assert_eq!(added, 2 * 2 * pairs, "two ports per link");
        assert!(
            t.switches[..16].iter().all(|s| s.ports == 8),
            "no chain at level 1"
        );
        // Level 2's first logical node: switches 16..20; an end has 2 more ports, inner ones 4.
        assert_eq!((t.switches[16].ports, t.switches[17].ports), (10, 12));
        assert_eq!(t.switches[19].ports, 10);
        // Horizontal links join switches of one level and one logical node, left to right.
        for &(a, b) in &t.links[plain.links.len()..] {
            let (Endpoint::Switch { sw: s1, port: p1 }, Endpoint::Switch { sw: s2, .. }) = (a, b)
            else {
                panic!("{a:?} {b:?}")
            };
            assert_eq!(s1 + 1, s2);
            assert_eq!(t.switches[s1 as usize].stage, t.switches[s2 as usize].stage);
            assert!(p1 >= plain.switches[s1 as usize].ports);
            assert_eq!(t.switches[s1 as usize].up_ports >> p1, 0);
        }
        assert_eq!(Topology::kary_ntree(4, 3).with_horizontal(0), plain);
    }

    #[test]
    fn up_ports_reach_the_next_stage() {
        let t = Topology::rlft(12, 3);
        for &(a, b) in &t.links {
            if let (Endpoint::Switch { sw: s1, port: p1 }, Endpoint::Switch { sw: s2, port: p2 }) =
                (a, b)
            {
                let (l1, l2) = (&t.switches[s1 as usize], &t.switches[s2 as usize]);
                assert_eq!(l1.stage + 1, l2.stage);
                assert!(l1.up_ports >> p1 & 1 == 1);
                assert!(l2.up_ports >> p2 & 1 == 0);
            }
        }
    }
}
