//! Dragonflies (Kim et al.): groups of `a` routers, each router with `p` end nodes, `a − 1` local
//! ports (the group fully connected) and `h` global ports; `a·h + 1` groups, one global link
//! between every two groups.
//!
//! Ports of a router: `0 .. p` its end nodes, then `p .. p + a − 1` its local links (to the
//! other routers of its group in increasing order), then `p + a − 1 ..` its `h` global links.
//! Global links are arranged as the palm tree (Camarero et al.): global link `j = r·h + k`
//! of group `g` (router `r`, global port `k`) goes to group `(g + j + 1) mod G` and lands there
//! on link `a·h − 1 − j`. Router `r` of group `g` is switch `g·a + r`, its node `i` is end node
//! `(g·a + r)·p + i`.

use super::{Endpoint, SwitchSpec, Topology};

/// The shape of a Dragonfly: routers per group, global ports and end nodes per router.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DragonflyShape {
    /// Routers per group.
    pub a: u32,
    /// Global ports per router.
    pub h: u32,
    /// End nodes per router.
    pub p: u32,
}

impl DragonflyShape {
    /// Groups: `a·h + 1`.
    pub fn groups(&self) -> u32 {
        self.a * self.h + 1
    }

    /// Routers in all.
    pub fn routers(&self) -> u32 {
        self.groups() * self.a
    }

    /// End nodes in all.
    pub fn nodes(&self) -> u32 {
        self.routers() * self.p
    }

    /// Ports of a router.
    pub fn radix(&self) -> u32 {
        self.p + self.a - 1 + self.h
    }

    /// Group of switch `sw`.
    pub fn group_of(&self, sw: u32) -> u32 {
        sw / self.a
    }

    /// The port of router `r` toward router `other` of its group.
    pub fn local_port(&self, r: u32, other: u32) -> u16 {
        debug_assert_ne!(r, other);
        (self.p + if other < r { other } else { other - 1 }) as u16
    }

    /// Global port `k` of a router.
    pub fn global_port(&self, k: u32) -> u16 {
        (self.p + self.a - 1 + k) as u16
    }

    /// Where global link `j` of group `g` lands: (group, router, global port index).
    fn far_end(&self, g: u32, j: u32) -> (u32, u32, u32) {
        let far = (g + j + 1) % self.groups();
        let jj = self.a * self.h - 1 - j;
        (far, jj / self.h, jj % self.h)
    }
}

impl Topology {
    /// The Dragonfly of `shape` with the palm-tree global arrangement (module docs).
    pub fn dragonfly(shape: DragonflyShape) -> Self {
        let DragonflyShape { a, h, p } = shape;
        assert!(a >= 1 && h >= 1 && p >= 1, "a, h and p are at least 1");
        let radix = shape.radix();
        assert!(radix <= 64, "router radix {radix} above 64");
        let sw = |g: u32, r: u32, port: u16| Endpoint::Switch {
            sw: g * a + r,
            port,
        };
        let mut links = Vec::new();
        for g in 0..shape.groups() {
            for r in 0..a {
                for i in 0..p {
                    links.push((Endpoint::Node((g * a + r) * p + i), sw(g, r, i as u16)));
                }
                for o in r + 1..a {
                    links.push((
                        sw(g, r, shape.local_port(r, o)),
                        sw(g, o, shape.local_port(o, r)),
                    ));
                }
            }
            for j in 0..a * h {
                let (far, fr, fk) = shape.far_end(g, j);
                if far > g {
                    let near = sw(g, j / h, shape.global_port(j % h));
                    links.push((near, sw(far, fr, shape.global_port(fk))));
                }
            }
        }
        Topology {
            nodes: shape.nodes(),
            switches: vec![
                SwitchSpec {
                    ports: radix as u16,
                    stage: 0,
                    up_ports: 0,
                };
                shape.routers() as usize
            ],
            links,
            xgft: None,
            dragonfly: Some(shape),
            horizontal: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    #[test]
    fn seed_003_balanced_dragonflies() {
        for (a, h, p, nodes, routers) in [
            (4, 2, 2, 72, 36),
            (6, 3, 3, 342, 114),
            (10, 5, 5, 2550, 510),
        ] {
            let shape = DragonflyShape { a, h, p };
            let t = Topology::dragonfly(shape);
            assert_eq!((t.nodes, t.switches.len() as u32), (nodes, routers));
            super::super::tests::check_cabling(&t);
            // One global link between every two groups, none inside a group.
            let mut pairs = HashSet::new();
            let mut local: HashMap<u32, u32> = HashMap::new();
            for &(x, y) in &t.links {
                if let (
                    Endpoint::Switch { sw: s1, port: p1 },
                    Endpoint::Switch { sw: s2, port: p2 },
                ) = (x, y)
                {
                    let (g1, g2) = (shape.group_of(s1), shape.group_of(s2));
                    let global = |port: u16| port as u32 >= p + a - 1;
                    assert_eq!(global(p1), global(p2), "{x:?}-{y:?}");
                    if global(p1) {
                        assert_ne!(g1, g2);
                        assert!(
                            pairs.insert((g1.min(g2), g1.max(g2))),
                            "groups {g1},{g2} twice"
                        );
                    } else {
                        assert_eq!(g1, g2);
                        *local.entry(g1).or_default() += 1;
                    }
                }
            }
            let g = shape.groups();
            assert_eq!(pairs.len() as u32, g * (g - 1) / 2);
            assert!(local.values().all(|&n| n == a * (a - 1) / 2));
        }
    }
}
