//! The LFTs of FA routing with escape paths (Martínez et al., sections 3 and 4.4): per switch and
//! destination, option 0 the escape route, options 1 and up the adaptive (minimal) ports; and
//! how many routing options a programmed fabric offers (their table 2).

use super::PortLists;
use crate::blocks::LftBanks;

/// FA's options: per switch and destination, the escape route (`escape`'s option 0) first, then
/// up to `options - 1` minimal ports, those other than the escape route first, starting at the
/// `d mod n`-th of them (ports in increasing order) as up*/down* spreads destinations, and the
/// escape route's own port last when it is minimal too. The banks past them repeat the adaptive
/// options in rotation, never the escape route alone.
pub(super) fn lists(escape: &PortLists, minimal: &PortLists, options: u8) -> PortLists {
    let adaptive = (options.clamp(2, 16) - 1) as usize;
    let banks = (adaptive + 1).next_power_of_two();
    escape
        .iter()
        .zip(minimal)
        .map(|(esc, min)| {
            esc.iter()
                .zip(min)
                .enumerate()
                .map(|(d, (e, m))| {
                    let e = e[0];
                    let others: Vec<u16> = m.iter().copied().filter(|&p| p != e).collect();
                    let mut ways: Vec<u16> = (0..others.len())
                        .map(|j| others[(d + j) % others.len()])
                        .collect();
                    if m.contains(&e) || ways.is_empty() {
                        ways.push(e);
                    }
                    ways.truncate(adaptive);
                    let mut list = vec![e];
                    list.extend((0..banks - 1).map(|b| ways[b % ways.len()]));
                    list
                })
                .collect()
        })
        .collect()
}

/// How many distinct ports the LFT options of `tables` give each (switch, destination) pair:
/// `counts[k]` pairs have `k + 1`. `attached[d]` is the switch of end node `d`, left out of its
/// own switch's count (one port away).
pub fn distinct_options(tables: &[LftBanks], nodes: u32, lmc: u32, attached: &[usize]) -> Vec<u64> {
    let mut counts = vec![0u64; 16];
    for (s, t) in tables.iter().enumerate() {
        for d in 0..nodes {
            if attached.get(d as usize) == Some(&s) {
                continue;
            }
            let opts = t.options(((d << lmc) | (lmc > 0) as u32) as u16);
            let mut seen = 0u64;
            for b in 0..opts.count as usize {
                if opts.usable(b) {
                    seen |= 1 << opts.ports[b].min(63);
                }
            }
            if seen != 0 {
                counts[seen.count_ones() as usize - 1] += 1;
            }
        }
    }
    while counts.len() > 1 && counts.last() == Some(&0) {
        counts.pop();
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adaptive_options_other_than_the_escape_route_come_first() {
        // One switch, four destinations: escape ports and minimal ports per destination.
        let escape: PortLists = vec![vec![vec![5], vec![5], vec![6], vec![7, 8]]];
        let minimal: PortLists = vec![vec![vec![5], vec![6, 7], vec![6, 7, 8], vec![9]]];
        let l = lists(&escape, &minimal, 2);
        // Option 0 the escape route; option 1 a minimal port other than it when there is one.
        assert_eq!(l[0], vec![vec![5, 5], vec![5, 7], vec![6, 7], vec![7, 9]]);
        let l = lists(&escape, &minimal, 3);
        // Two adaptive options in four banks: the second repeats them; the escape route's own
        // port comes last among the minimal ones.
        assert_eq!(
            l[0],
            vec![
                vec![5, 5, 5, 5],
                vec![5, 7, 6, 7],
                vec![6, 7, 8, 7],
                vec![7, 9, 9, 9]
            ]
        );
    }

    #[test]
    fn distinct_options_count_each_switch_and_remote_destination() {
        let mut t = LftBanks::new(1, 3);
        for (lid, port) in [(0, 1), (1, 2), (2, 1), (3, 1), (4, 3), (5, 4)] {
            t.program(lid, port);
        }
        // Node 1 hangs on switch 0: left out. Node 0 has two ports, node 2 two.
        assert_eq!(distinct_options(&[t.clone()], 3, 1, &[1, 0, 1]), vec![0, 2]);
        assert_eq!(distinct_options(&[t], 3, 1, &[0, 1, 1]), vec![1, 1]);
    }
}
