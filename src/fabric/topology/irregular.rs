//! Random irregular fabrics as seed 002 builds them: `switches` switches of equal radix, each with
//! `nodes_per_switch` end nodes and `links` inter-switch links, at most one link between two
//! switches, every switch reachable from every other, drawn from a seed.
//!
//! The switch graph is a random `links`-regular simple connected graph: stubs are paired by
//! repeatedly taking the switch with the most free ports (lowest index first) and cabling it to a
//! uniformly drawn switch with a free port that it is not yet cabled to; an attempt that gets
//! stuck or comes out disconnected is drawn again from the same generator. Ports of a switch:
//! `0 .. nodes_per_switch` its nodes (node `s·nodes_per_switch + i` on port `i`), then its
//! neighbours in increasing switch index.

use super::{Endpoint, SwitchSpec, Topology};
use crate::blocks::rng::SplitMix64;

/// Attempts before a shape is declared impossible to draw.
const ATTEMPTS: u32 = 10_000;

/// The shape of a random irregular fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IrregularShape {
    /// Switches.
    pub switches: u32,
    /// Inter-switch links per switch.
    pub links: u32,
    /// End nodes per switch.
    pub nodes_per_switch: u32,
    /// Seed of the draw.
    pub seed: u64,
}

impl IrregularShape {
    /// Why no such fabric exists, if it does not.
    pub fn impossible(&self) -> Option<String> {
        let (n, l) = (self.switches, self.links);
        if n < 2 {
            Some(format!("{n} switch: an irregular fabric has at least 2"))
        } else if l == 0 || l >= n {
            Some(format!(
                "{l} links per switch among {n} switches: between 1 and {} (one link per pair of switches)",
                n - 1
            ))
        } else if l == 1 && n > 2 {
            Some(format!(
                "1 link per switch only pairs switches off two by two: {n} switches cannot all be \
                 connected (more than 2 switches need at least 2 links per switch)"
            ))
        } else if (n * l) % 2 == 1 {
            Some(format!(
                "{n} switches of {l} links make {} link ends, an odd number",
                n * l
            ))
        } else if self.nodes_per_switch + l > 64 {
            Some(format!(
                "{} ports per switch, 64 at most",
                self.nodes_per_switch + l
            ))
        } else {
            None
        }
    }
}

impl Topology {
    /// A random irregular fabric (module docs). Errors name why the shape cannot be drawn.
    pub fn irregular(shape: IrregularShape) -> Result<Self, String> {
        if let Some(why) = shape.impossible() {
            return Err(why);
        }
        let n = shape.switches as usize;
        let mut rng = SplitMix64::new(shape.seed);
        let neighbours = (0..ATTEMPTS)
            .find_map(|_| draw(n, shape.links as usize, &mut rng))
            .ok_or_else(|| {
                format!(
                    "no connected fabric of {n} switches with {} links each in {ATTEMPTS} draws",
                    shape.links
                )
            })?;
        let q = shape.nodes_per_switch;
        let mut links = Vec::new();
        for s in 0..n as u32 {
            for i in 0..q {
                links.push((
                    Endpoint::Node(s * q + i),
                    Endpoint::Switch {
                        sw: s,
                        port: i as u16,
                    },
                ));
            }
        }
        let port_to = |s: usize, t: usize| {
            let i = neighbours[s].iter().position(|&x| x == t).expect("cabled");
            (q as usize + i) as u16
        };
        for (s, near) in neighbours.iter().enumerate() {
            for &t in near.iter().filter(|&&t| t > s) {
                links.push((
                    Endpoint::Switch {
                        sw: s as u32,
                        port: port_to(s, t),
                    },
                    Endpoint::Switch {
                        sw: t as u32,
                        port: port_to(t, s),
                    },
                ));
            }
        }
        Ok(Topology {
            nodes: shape.switches * q,
            switches: vec![
                SwitchSpec {
                    ports: (q + shape.links) as u16,
                    stage: 0,
                    up_ports: 0,
                };
                n
            ],
            links,
            xgft: None,
            dragonfly: None,
            horizontal: 0,
        })
    }
}

/// One attempt: each switch's neighbours in increasing order, or `None` when the pairing got
/// stuck or the graph is not connected.
fn draw(n: usize, l: usize, rng: &mut SplitMix64) -> Option<Vec<Vec<usize>>> {
    let mut free = vec![l; n];
    let mut adj: Vec<Vec<usize>> = vec![Vec::with_capacity(l); n];
    loop {
        let u = (0..n).max_by_key(|&s| (free[s], std::cmp::Reverse(s)))?;
        if free[u] == 0 {
            break;
        }
        let can: Vec<usize> = (0..n)
            .filter(|&v| v != u && free[v] > 0 && !adj[u].contains(&v))
            .collect();
        if can.is_empty() {
            return None;
        }
        let v = can[rng.below(can.len() as u64) as usize];
        adj[u].push(v);
        adj[v].push(u);
        free[u] -= 1;
        free[v] -= 1;
    }
    // Connected?
    let mut seen = vec![false; n];
    let mut stack = vec![0];
    seen[0] = true;
    while let Some(s) = stack.pop() {
        for &t in &adj[s] {
            if !seen[t] {
                seen[t] = true;
                stack.push(t);
            }
        }
    }
    if !seen.iter().all(|&x| x) {
        return None;
    }
    for a in &mut adj {
        a.sort_unstable();
    }
    Some(adj)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_002_sizes_draw_regular_connected_fabrics() {
        for switches in [8, 16, 32, 64] {
            for links in [4, 6] {
                for seed in 0..10 {
                    let shape = IrregularShape {
                        switches,
                        links,
                        nodes_per_switch: 4,
                        seed,
                    };
                    let t = Topology::irregular(shape).unwrap();
                    assert_eq!(t.nodes, switches * 4);
                    super::super::tests::check_cabling(&t);
                    let mut pairs = std::collections::HashSet::new();
                    for &(a, b) in &t.links {
                        if let (Endpoint::Switch { sw: x, .. }, Endpoint::Switch { sw: y, .. }) =
                            (a, b)
                        {
                            assert!(pairs.insert((x.min(y), x.max(y))), "two links {x}-{y}");
                        }
                    }
                    assert_eq!(pairs.len() as u32, switches * links / 2);
                }
            }
        }
        // The same seed draws the same fabric; another seed another.
        let s = IrregularShape {
            switches: 16,
            links: 4,
            nodes_per_switch: 4,
            seed: 7,
        };
        assert_eq!(Topology::irregular(s), Topology::irregular(s));
        assert_ne!(
            Topology::irregular(s),
            Topology::irregular(IrregularShape { seed: 8, ..s })
        );
    }

    #[test]
    fn impossible_shapes_are_refused() {
        let s = |switches, links| IrregularShape {
            switches,
            links,
            nodes_per_switch: 4,
            seed: 1,
        };
        assert!(Topology::irregular(s(5, 3)).unwrap_err().contains("odd"));
        assert!(
            Topology::irregular(s(4, 4))
                .unwrap_err()
                .contains("between 1 and 3")
        );
        assert!(Topology::irregular(s(1, 1)).is_err());
        assert!(Topology::irregular(s(4, 3)).is_ok()); // the complete graph K4
    }
}
