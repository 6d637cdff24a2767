//! How the ranks hand each other a window's events: over a grid of ranks, in two rounds of
//! messages, so that a rank talks to the ranks of its row and of its column rather than to every
//! rank, and the window's agreement (a least value of a few words) rides in the same messages
//! instead of a collective operation of its own. State kept for the split; it models no
//! hardware.

use super::Ranks;

/// The ranks as `rows` × `cols`, rank `k` at row `k / cols`, column `k % cols`; `rows` the largest
/// divisor of the rank count not above its square root (1 for a prime count: one round, every
/// rank a peer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Rows of ranks.
    pub rows: usize,
    /// Ranks per row.
    pub cols: usize,
}

impl Grid {
    /// The grid of `size` ranks.
    pub fn of(size: usize) -> Self {
        let rows = (1..=size.max(1))
            .take_while(|r| r * r <= size)
            .filter(|&r| size.is_multiple_of(r))
            .last()
            .unwrap_or(1);
        Grid {
            rows,
            cols: size.max(1) / rows,
        }
    }

    /// The ranks a rank sends a message to (and receives one from) in each window.
    pub fn peers(&self) -> usize {
        self.rows + self.cols - 2
    }

    fn at(&self, row: usize, col: usize) -> usize {
        row * self.cols + col
    }
}

/// What one exchange brought this rank, and what it sent.
pub struct Exchange {
    /// What each rank sent this one, by rank (this rank's own list empty).
    pub from: Vec<Vec<u64>>,
    /// Messages this rank sent.
    pub messages: u64,
    /// Their words.
    pub words: u64,
}

/// Sends `out[r]` to each other rank `r` and returns what each rank sent this one; replaces each
/// element of `agree` by its least value over the ranks.
/// Collective. Round one goes along the rows: to each rank of its row a rank sends its `agree`
/// and its lists for the ranks of that rank's column. Round two goes along the columns: to each
/// rank of its column it sends the least `agree` of its row and the lists its row holds for it,
/// by source. A list reaches its rank after two messages at most; empty lists travel as their
/// length, so a rank always waits for exactly one message from each peer.
pub fn exchange(r: &dyn Ranks, out: &[Vec<u64>], agree: &mut [u64]) -> Exchange {
    let g = Grid::of(r.size());
    let me = r.rank();
    let (row, col) = (me / g.cols, me % g.cols);
    let k = agree.len();
    let none: &[u64] = &[];
    // Round one: to rank (row, c), `agree` and my lists for column c, by row.
    let for_column = |c: usize| {
        let mut m = agree.to_vec();
        for i in 0..g.rows {
            let d = g.at(i, c);
            put(&mut m, if d == me { none } else { &out[d] });
        }
        m
    };
    let row_peers: Vec<usize> = (0..g.cols)
        .filter(|&c| c != col)
        .map(|c| g.at(row, c))
        .collect();
    let sent: Vec<Vec<u64>> = row_peers.iter().map(|&p| for_column(p % g.cols)).collect();
    let mut words = sent.iter().map(Vec::len).sum::<usize>();
    let mut got = swap(r, &row_peers, &sent);
    // What my row holds for my column: by source column, by destination row.
    let mut held = vec![Vec::new(); g.cols];
    got.push(for_column(col));
    for (src, m) in row_peers.iter().map(|&p| p % g.cols).chain([col]).zip(&got) {
        least(agree, &m[..k]);
        held[src] = lists(&m[k..], g.rows);
    }
    // Round two: to rank (i, col), my row's least `agree` and its lists for that rank, by source.
    let for_row = |i: usize| {
        let mut m = agree.to_vec();
        for h in &held {
            put(&mut m, &h[i]);
        }
        m
    };
    let col_peers: Vec<usize> = (0..g.rows)
        .filter(|&i| i != row)
        .map(|i| g.at(i, col))
        .collect();
    let sent: Vec<Vec<u64>> = col_peers.iter().map(|&p| for_row(p / g.cols)).collect();
    words += sent.iter().map(Vec::len).sum::<usize>();
    let mut got = swap(r, &col_peers, &sent);
    got.push(for_row(row));
    let mut from = vec![Vec::new(); g.rows * g.cols];
    for (src_row, m) in col_peers.iter().map(|&p| p / g.cols).chain([row]).zip(&got) {
        least(agree, &m[..k]);
        for (c, list) in lists(&m[k..], g.cols).into_iter().enumerate() {
            from[g.at(src_row, c)] = list;
        }
    }
    Exchange {
        from,
        messages: g.peers() as u64,
        words: words as u64,
    }
}

/// One round with `peers` (none: no messages).
fn swap(r: &dyn Ranks, peers: &[usize], out: &[Vec<u64>]) -> Vec<Vec<u64>> {
    match peers.is_empty() {
        true => Vec::new(),
        false => r.swap(peers, out),
    }
}

/// Appends `list` after its length.
fn put(m: &mut Vec<u64>, list: &[u64]) {
    m.push(list.len() as u64);
    m.extend_from_slice(list);
}

/// The `n` lists of `put`'s words.
fn lists(mut w: &[u64], n: usize) -> Vec<Vec<u64>> {
    (0..n)
        .map(|_| {
            let len = w[0] as usize;
            let list = w[1..1 + len].to_vec();
            w = &w[1 + len..];
            list
        })
        .collect()
}

fn least(agree: &mut [u64], other: &[u64]) {
    agree
        .iter_mut()
        .zip(other)
        .for_each(|(x, &y)| *x = (*x).min(y));
}

#[cfg(test)]
mod tests {
    use super::super::local::LocalRanks;
    use super::*;

    #[test]
    fn the_grid_is_the_squarest_split_of_the_ranks() {
        let shape = |n| {
            let g = Grid::of(n);
            (g.rows, g.cols, g.peers())
        };
        assert_eq!(shape(1), (1, 1, 0));
        assert_eq!(shape(2), (1, 2, 1));
        assert_eq!(shape(4), (2, 2, 2));
        assert_eq!(shape(7), (1, 7, 6));
        assert_eq!(shape(12), (3, 4, 5));
        assert_eq!(shape(24), (4, 6, 8));
        assert_eq!(shape(64), (8, 8, 14));
        assert_eq!(shape(128), (8, 16, 22));
    }

    #[test]
    fn every_list_reaches_its_rank_and_every_rank_agrees() {
        for size in [1, 2, 3, 4, 6, 9, 12] {
            let got = LocalRanks::each(size, |r| {
                let me = r.rank() as u64;
                // Rank `me` sends rank `to` `(me + to) % 3` words (some empty).
                let out: Vec<Vec<u64>> = (0..size as u64)
                    .map(|to| (0..(me + to) % 3).map(|i| me * 100 + to * 10 + i).collect())
                    .collect();
                let mut agree = [50 - me, me + 7, u64::MAX];
                let got = exchange(&**r, &out, &mut agree);
                assert_eq!(got.messages as usize, Grid::of(size).peers());
                (got.from, agree)
            });
            for (me, (from, agree)) in got.into_iter().enumerate() {
                assert_eq!(agree, [51 - size as u64, 7, u64::MAX], "{size} ranks");
                assert_eq!(from.len(), size);
                for (src, list) in from.iter().enumerate() {
                    let (s, m) = (src as u64, me as u64);
                    let want: Vec<u64> = match src == me {
                        true => vec![],
                        false => (0..(s + m) % 3).map(|i| s * 100 + m * 10 + i).collect(),
                    };
                    assert_eq!(*list, want, "{size} ranks, {src} to {me}");
                }
            }
        }
    }
}
