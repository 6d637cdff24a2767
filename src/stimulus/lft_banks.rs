//! Random reads and subnet-manager writes for the interleaved forwarding table.

use super::{SplitMix64, Stimulus};
use crate::blocks::lft_banks::{LftBanksIn, NO_ROUTE, shape_fits};

/// Size of the ring of recently written LIDs that reads aim at.
const RECENT: usize = 8;

/// Reads and writes in phases of a few hundred cycles, each with its own read and write density.
///
/// The memory is only observable through the read port, so the reads are aimed: at the entry
/// written in the same cycle (read-first), at its row mates, at recently written LIDs and their
/// row mates, at never-written entries, beyond the table, and uniformly. Never-written entries
/// stay available for a long time: in-table writes only reach LIDs below a frontier that grows
/// linearly and covers the whole table after three quarters of the run's `cycles`. Written
/// ports are often 0xFF (no route) or 0, and the write LID is sometimes beyond the table
/// (ignored by the block). Inputs not enabled carry random values, which the block must ignore.
#[derive(Clone, Debug)]
pub struct RandomLft {
    banks: u32,
    entries: u32,
    horizon: u64,
    rng: SplitMix64,
    left: u32,
    rd_num: u64,
    wr_num: u64,
    recent: [u16; RECENT],
    recent_len: usize,
    recent_pos: usize,
}

impl RandomLft {
    /// Stream for a table of `2^lmc` banks of `rows` rows, for a run of about `cycles` cycles.
    pub fn new(lmc: u32, rows: usize, cycles: u64, seed: u64) -> Self {
        assert!(shape_fits(lmc, rows));
        RandomLft {
            banks: 1 << lmc,
            entries: (rows as u32) << lmc,
            horizon: (cycles * 3 / 4).max(1),
            rng: SplitMix64::new(seed),
            left: 0,
            rd_num: 0,
            wr_num: 0,
            recent: [0; RECENT],
            recent_len: 0,
            recent_pos: 0,
        }
    }

    /// LIDs below the frontier may be written at `cycle` (at least 1, at most the table).
    fn frontier(&self, cycle: u64) -> u32 {
        let f = 1 + self.entries as u64 * cycle / self.horizon;
        f.min(self.entries as u64) as u32
    }

    /// A LID in `0..n`.
    fn below(&mut self, n: u32) -> u16 {
        self.rng.below(n as u64) as u16
    }

    /// Another LID of the same row (same node), any bank.
    fn row_mate(&mut self, lid: u16) -> u16 {
        (lid & !(self.banks as u16 - 1)) | self.below(self.banks)
    }

    /// A LID beyond the table, biased to just past its end and to the top of the LID space;
    /// a LID in the table when the table covers every LID.
    fn beyond(&mut self) -> u16 {
        if self.entries > 0xffff {
            return self.rng.next_u64() as u16;
        }
        let span = 0x1_0000 - self.entries;
        let off = match self.rng.below(5) {
            0 | 1 => self.rng.below((2 * self.banks).min(span) as u64) as u32,
            2 => span - 1 - self.rng.below(4.min(span) as u64) as u32,
            _ => self.rng.below(span as u64) as u32,
        };
        (self.entries + off) as u16
    }

    /// A recently written LID (the one written last when the ring is still empty: LID 0).
    fn recent(&mut self) -> u16 {
        if self.recent_len == 0 {
            return 0;
        }
        self.recent[self.rng.below(self.recent_len as u64) as usize]
    }

    fn remember(&mut self, lid: u16) {
        self.recent[self.recent_pos] = lid;
        self.recent_pos = (self.recent_pos + 1) % RECENT;
        self.recent_len = (self.recent_len + 1).min(RECENT);
    }

    fn write_lid(&mut self, frontier: u32) -> u16 {
        match self.rng.below(100) {
            0..25 => {
                let l = self.recent();
                let mate = self.row_mate(l);
                mate.min((frontier - 1) as u16)
            }
            25..30 => self.beyond(),
            30..40 => {
                let near = frontier.min(2 * self.banks);
                (frontier - 1) as u16 - self.below(near)
            }
            _ => self.below(frontier),
        }
    }

    fn read_dlid(&mut self, frontier: u32, wr: Option<u16>) -> u16 {
        let r = self.rng.below(100);
        match (r, wr) {
            (0..12, Some(w)) => w,
            (12..20, Some(w)) => self.row_mate(w),
            (20..45, _) => {
                let l = self.recent();
                if self.rng.chance(1, 2) {
                    l
                } else {
                    self.row_mate(l)
                }
            }
            (45..60, _) if frontier < self.entries => {
                (frontier + self.rng.below((self.entries - frontier) as u64) as u32) as u16
            }
            (60..70, _) => self.beyond(),
            _ => self.below(self.entries.min(0x1_0000)),
        }
    }

    fn port(&mut self) -> u8 {
        match self.rng.below(100) {
            0..15 => NO_ROUTE,
            15..25 => 0,
            25..70 => self.rng.below(36) as u8,
            _ => self.rng.next_u64() as u8,
        }
    }
}

impl Stimulus<LftBanksIn> for RandomLft {
    fn next(&mut self, cycle: u64) -> LftBanksIn {
        if self.left == 0 {
            self.left = 16 + self.rng.below(500) as u32;
            self.rd_num = [0, 4, 12, 16, 16][self.rng.below(5) as usize];
            self.wr_num = [0, 1, 4, 8, 16][self.rng.below(5) as usize];
        }
        self.left -= 1;
        let frontier = self.frontier(cycle);
        let wr_en = self.rng.chance(self.wr_num, 16);
        let wr_lid = if wr_en {
            self.write_lid(frontier)
        } else {
            self.rng.next_u64() as u16
        };
        let wr_port = self.port();
        let rd_en = self.rng.chance(self.rd_num, 16);
        let rd_dlid = if rd_en {
            self.read_dlid(frontier, wr_en.then_some(wr_lid))
        } else {
            self.rng.next_u64() as u16
        };
        if wr_en && (wr_lid as u32) < self.entries {
            self.remember(wr_lid);
        }
        LftBanksIn {
            rd_en,
            rd_dlid,
            wr_en,
            wr_lid,
            wr_port,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::Block;
    use crate::blocks::lft_banks::LftBanks;

    /// Counts of the corner cases a stream hits.
    #[derive(Debug, Default)]
    struct Corners {
        idle_read_port: u64,
        read_never_written: u64,
        read_written_recently: u64,
        read_during_write_visible: u64,
        read_row_mate_of_write: u64,
        read_beyond: u64,
        read_deterministic: u64,
        read_adaptive_several_usable: u64,
        read_in_range_none_usable: u64,
        write_beyond: u64,
        write_no_route: u64,
        overwrite_changes_value: u64,
    }

    fn corners(lmc: u32, rows: usize, cycles: u64, seed: u64) -> Corners {
        let mut s = RandomLft::new(lmc, rows, cycles, seed);
        let mut t = LftBanks::new(lmc, rows);
        let banks = 1u16 << lmc;
        let mut written_at: Vec<Option<u64>> = vec![None; t.entries()];
        let mut k = Corners::default();
        for c in 0..cycles {
            let i = s.next(c);
            let in_range = |l: u16| (l as usize) < written_at.len();
            if !i.rd_en {
                k.idle_read_port += 1;
            } else if !in_range(i.rd_dlid) {
                k.read_beyond += 1;
            } else {
                let o = t.options(i.rd_dlid);
                match written_at[i.rd_dlid as usize] {
                    None => k.read_never_written += 1,
                    Some(w) if c - w <= 64 => k.read_written_recently += 1,
                    _ => {}
                }
                if i.rd_dlid & 1 == 0 && lmc > 0 {
                    k.read_deterministic += 1;
                }
                if o.mask.count_ones() > 1 {
                    k.read_adaptive_several_usable += 1;
                }
                if o.mask == 0 {
                    k.read_in_range_none_usable += 1;
                }
                if i.wr_en && i.wr_lid == i.rd_dlid && t.entry(i.wr_lid) != Some(i.wr_port) {
                    k.read_during_write_visible += 1;
                }
                if i.wr_en && i.wr_lid != i.rd_dlid && i.wr_lid / banks == i.rd_dlid / banks {
                    k.read_row_mate_of_write += 1;
                }
            }
            if i.wr_en {
                if !in_range(i.wr_lid) {
                    k.write_beyond += 1;
                } else {
                    if i.wr_port == NO_ROUTE {
                        k.write_no_route += 1;
                    }
                    if t.entry(i.wr_lid)
                        .is_some_and(|p| p != i.wr_port && p != NO_ROUTE)
                    {
                        k.overwrite_changes_value += 1;
                    }
                    written_at[i.wr_lid as usize] = Some(c);
                }
            }
            t.step(&i);
        }
        k
    }

    /// Every corner happens at least 0.5 % of the cycles in 100k cycles of every cross-checked
    /// configuration (reads beyond the table only where the table leaves LIDs uncovered).
    #[test]
    fn every_corner_happens_often() {
        let cycles = 100_000u64;
        for (lmc, rows) in [(0u32, 16usize), (1, 64), (2, 32), (4, 8), (3, 5)] {
            let k = corners(lmc, rows, cycles, 0x1F7 + lmc as u64);
            let min = cycles / 200;
            let mut checks = vec![
                ("idle read port", k.idle_read_port),
                ("read never written", k.read_never_written),
                ("read written recently", k.read_written_recently),
                ("read during write, visible", k.read_during_write_visible),
                ("read beyond", k.read_beyond),
                ("read in range, none usable", k.read_in_range_none_usable),
                ("write beyond", k.write_beyond),
                ("write no route", k.write_no_route),
                ("overwrite changes value", k.overwrite_changes_value),
            ];
            if lmc > 0 {
                checks.push(("read row mate of write", k.read_row_mate_of_write));
                checks.push(("read deterministic", k.read_deterministic));
                checks.push(("read several usable", k.read_adaptive_several_usable));
            }
            for (name, n) in checks {
                assert!(
                    n >= min,
                    "Lmc={lmc} Rows={rows}: {name} only {n} times: {k:?}"
                );
            }
        }
    }

    #[test]
    fn full_lid_space_reads_stay_in_table() {
        let mut s = RandomLft::new(4, 4096, 10_000, 1);
        let mut t = LftBanks::new(4, 4096);
        for c in 0..10_000 {
            let o = t.step(&s.next(c));
            assert!(!o.rd_valid || (o.rd_dlid & 1 == 1) || o.rd_mask <= 1);
        }
        assert_eq!(s.frontier(10_000), 65536);
    }

    #[test]
    fn stream_is_a_function_of_the_seed() {
        let mut a = RandomLft::new(2, 32, 1000, 9);
        let mut b = RandomLft::new(2, 32, 1000, 9);
        for c in 0..1000 {
            assert_eq!(a.next(c), b.next(c));
        }
    }
}
