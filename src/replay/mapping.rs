//! Ranks to end nodes: linear, a seeded random permutation, or a map file. More ranks than
//! nodes is allowed (ranks wrap: a node then runs several ranks, as the paper's 512 tasks on
//! 432 nodes).

use super::error::{TraceError, TraceErrors, keep};
use crate::blocks::rng::SplitMix64;

/// Which node runs each rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    nodes: u32,
    node_of: Vec<u32>,
}

impl Mapping {
    /// Rank `r` on node `r mod nodes`.
    pub fn linear(ranks: u32, nodes: u32) -> Result<Mapping, String> {
        check(ranks, nodes)?;
        Ok(Mapping {
            nodes,
            node_of: (0..ranks).map(|r| r % nodes).collect(),
        })
    }

    /// A seeded permutation: `max(ranks, nodes)` places shuffled (Fisher-Yates over
    /// [`SplitMix64`]), rank `r` on node `place[r] mod nodes`. With no more ranks than nodes each
    /// rank has a node of its own; with more, every node runs `ranks / nodes` or one more.
    pub fn random(ranks: u32, nodes: u32, seed: u64) -> Result<Mapping, String> {
        check(ranks, nodes)?;
        let mut place: Vec<u32> = (0..ranks.max(nodes)).collect();
        let mut rng = SplitMix64::new(seed);
        for i in (1..place.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            place.swap(i, j);
        }
        Ok(Mapping {
            nodes,
            node_of: place[..ranks as usize].iter().map(|p| p % nodes).collect(),
        })
    }

    /// A map file: `rank node` per line, `#` comments, every rank exactly once. Errors name
    /// `file:line`; a rank the file leaves out is named at the file's last line.
    pub fn from_file(
        text: &str,
        file: &str,
        ranks: u32,
        nodes: u32,
    ) -> Result<Mapping, TraceErrors> {
        check(ranks, nodes).map_err(|m| TraceError::at_line(file, 1, None, m))?;
        let mut node_of = vec![u32::MAX; ranks as usize];
        let mut line_of = vec![0u32; ranks as usize];
        let (mut errors, mut unkept) = (Vec::new(), 0usize);
        let mut last = 1;
        for (i, raw) in text.lines().enumerate() {
            let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
            last = line;
            let body = raw.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                continue;
            }
            let err = |token: &str, msg: String| TraceError::at_line(file, line, Some(token), msg);
            let tokens: Vec<&str> = body.split_whitespace().collect();
            let [r, n] = tokens[..] else {
                keep(
                    &mut errors,
                    &mut unkept,
                    err(body, "expected `rank node`".into()),
                );
                continue;
            };
            let (r, n) = match (number(r), number(n)) {
                (Some(rv), Some(nv)) if rv < ranks && nv < nodes => (rv, nv),
                (Some(rv), Some(_)) if rv < ranks => {
                    keep(
                        &mut errors,
                        &mut unkept,
                        err(n, format!("no such node (nodes 0 to {})", nodes - 1)),
                    );
                    continue;
                }
                (Some(_), Some(_)) => {
                    keep(
                        &mut errors,
                        &mut unkept,
                        err(r, format!("no such rank (ranks 0 to {})", ranks - 1)),
                    );
                    continue;
                }
                (None, _) => {
                    keep(
                        &mut errors,
                        &mut unkept,
                        err(r, "rank: expected a whole number".into()),
                    );
                    continue;
                }
                (_, None) => {
                    keep(
                        &mut errors,
                        &mut unkept,
                        err(n, "node: expected a whole number".into()),
                    );
                    continue;
                }
            };
            if node_of[r as usize] != u32::MAX {
                let first = line_of[r as usize];
                keep(
                    &mut errors,
                    &mut unkept,
                    err(
                        tokens[0],
                        format!("rank {r} is already mapped at line {first}"),
                    ),
                );
                continue;
            }
            node_of[r as usize] = n;
            line_of[r as usize] = line;
        }
        let missing: Vec<String> = (0..ranks)
            .filter(|&r| node_of[r as usize] == u32::MAX)
            .map(|r| r.to_string())
            .collect();
        if !missing.is_empty() && errors.is_empty() {
            let shown = missing.len().min(10);
            errors.push(TraceError::at_line(
                file,
                last,
                None,
                format!(
                    "{} rank(s) have no node: {}{}",
                    missing.len(),
                    missing[..shown].join(", "),
                    if shown < missing.len() { ", ..." } else { "" }
                ),
            ));
        }
        if errors.is_empty() {
            Ok(Mapping { nodes, node_of })
        } else {
            Err(TraceErrors::capped_beyond(errors, unkept))
        }
    }

    /// Number of nodes.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// Number of ranks.
    pub fn ranks(&self) -> u32 {
        self.node_of.len() as u32
    }

    /// The node running `rank`.
    pub fn node_of(&self, rank: u32) -> u32 {
        self.node_of[rank as usize]
    }

    /// The ranks `node` runs, ascending.
    pub fn ranks_on(&self, node: u32) -> impl Iterator<Item = u32> + '_ {
        (0..self.ranks()).filter(move |&r| self.node_of(r) == node)
    }
}

fn check(ranks: u32, nodes: u32) -> Result<(), String> {
    if ranks == 0 || nodes == 0 {
        return Err(format!(
            "a mapping needs ranks and nodes (got {ranks} ranks, {nodes} nodes)"
        ));
    }
    Ok(())
}

fn number(token: &str) -> Option<u32> {
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(m: &Mapping) -> Vec<u32> {
        let mut c = vec![0; m.nodes() as usize];
        for r in 0..m.ranks() {
            c[m.node_of(r) as usize] += 1;
        }
        c
    }

    #[test]
    fn linear_wraps() {
        let m = Mapping::linear(5, 3).unwrap();
        assert_eq!(
            (0..5).map(|r| m.node_of(r)).collect::<Vec<_>>(),
            [0, 1, 2, 0, 1]
        );
        assert_eq!(m.ranks_on(1).collect::<Vec<_>>(), [1, 4]);
        assert!(Mapping::linear(4, 0).is_err());
    }

    #[test]
    fn random_512_ranks_on_432_nodes_balances_and_is_seeded() {
        let m = Mapping::random(512, 432, 7).unwrap();
        let c = counts(&m);
        assert_eq!(c.iter().filter(|&&k| k == 2).count(), 80);
        assert_eq!(c.iter().filter(|&&k| k == 1).count(), 352);
        assert_eq!(m, Mapping::random(512, 432, 7).unwrap());
        assert_ne!(m, Mapping::random(512, 432, 8).unwrap());
        assert_ne!(m, Mapping::linear(512, 432).unwrap());
    }

    #[test]
    fn random_with_fewer_ranks_gives_distinct_nodes() {
        let m = Mapping::random(100, 432, 1).unwrap();
        assert!(counts(&m).iter().all(|&k| k <= 1));
        assert!(
            (0..100).any(|r| m.node_of(r) >= 100),
            "nodes drawn from all 432"
        );
    }

    #[test]
    fn map_file_reads_and_errors_name_lines() {
        let m = Mapping::from_file("# rank node\n0 2\n1 0\n2 2\n", "m.map", 3, 3).unwrap();
        assert_eq!(m.ranks_on(2).collect::<Vec<_>>(), [0, 2]);
        let e = Mapping::from_file("0 1\n0 2\n1 7\nx 1\n2\n", "m.map", 3, 3).unwrap_err();
        let text: Vec<String> = e.0.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            text,
            [
                "m.map:2: `0`: rank 0 is already mapped at line 1",
                "m.map:3: `7`: no such node (nodes 0 to 2)",
                "m.map:4: `x`: rank: expected a whole number",
                "m.map:5: `2`: expected `rank node`",
            ]
        );
        let e = Mapping::from_file("0 1\n\n", "m.map", 3, 3).unwrap_err();
        assert_eq!(
            e.first().to_string(),
            "m.map:2: 2 rank(s) have no node: 1, 2"
        );
    }
}
