//! Random lookups, processARN and remove commands for the ARN table, in phases.
//!
//! Keys come from small spaces (destination 0..8, port 0..4, VC 0..3, ARN id 0..3) so that
//! lookups hit, commands refresh existing entries or move roots, and the table fills up. Each
//! phase draws its own command, remove and lookup rates, add and consumed probabilities, the size
//! of the key spaces, and whether key indices map to small values or to extreme ones (all bits
//! set, top bit set, ...). Phases last up to about 4 Ttl cycles, so idle phases let every entry
//! expire.
//!
//! One phase in five is periodic: no random commands, but one to four tracked commands, each
//! issued again and again at a fixed period of Ttl-1, Ttl or Ttl+1 cycles, so that refreshes
//! land just before, exactly on and just after the last cycle of an entry's life.

use super::{SplitMix64, Stimulus};
use crate::blocks::arn_table::{ArnLookup, ArnProcess, ArnRemove, ArnTableIn, MAX_PORTS};

/// Destination values of the "wide" key mapping (index 0..8).
const DEST_WIDE: [u16; 8] = [0, 1, 0x00ff, 0x7fff, 0x8000, 0xabcd, 0xfffe, 0xffff];
/// Port values of the "wide" key mapping (index 0..4).
const PORT_WIDE: [u8; 4] = [0, 0x7f, 0x80, 0xff];
/// VC values of the "wide" key mapping (index 0..3).
const VC_WIDE: [u8; 3] = [1, 0x80, 0xff];
/// ARN id values of the "wide" key mapping (index 0..3).
const ID_WIDE: [u32; 3] = [0, 0x8000_0000, 0xffff_ffff];

/// Most tracked commands of a periodic phase.
const MAX_TRACKED: usize = 4;

/// A command of a periodic phase, issued every `period` cycles.
#[derive(Clone, Copy, Debug, Default)]
struct Tracked {
    cmd: ArnProcess,
    period: u64,
    due: u64,
}

/// Seeded random stimulus for an ARN table of `ports` lookup ports and time-to-live `ttl`.
#[derive(Clone, Debug)]
pub struct RandomArnOps {
    ports: usize,
    ttl: u64,
    rng: SplitMix64,
    left: u64,
    pr_num: u64,
    add_num: u64,
    consumed_num: u64,
    rm_num: u64,
    lk_num: u64,
    dests: u64,
    key_ports: u64,
    vcs: u64,
    ids: u64,
    wide: bool,
    tracked: [Tracked; MAX_TRACKED],
    n_tracked: usize,
}

impl RandomArnOps {
    /// Stream for a table with `ports` lookup ports and time-to-live `ttl` cycles.
    pub fn new(ports: usize, ttl: u32, seed: u64) -> Self {
        assert!((1..=MAX_PORTS).contains(&ports));
        RandomArnOps {
            ports,
            ttl: ttl as u64,
            rng: SplitMix64::new(seed),
            left: 0,
            pr_num: 0,
            add_num: 0,
            consumed_num: 0,
            rm_num: 0,
            lk_num: 0,
            dests: 1,
            key_ports: 1,
            vcs: 1,
            ids: 1,
            wide: false,
            tracked: [Tracked::default(); MAX_TRACKED],
            n_tracked: 0,
        }
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.rng.below(xs.len() as u64) as usize]
    }

    fn new_phase(&mut self, cycle: u64) {
        self.left = 16 + self.rng.below(4 * self.ttl + 64);
        self.pr_num = self.pick(&[0, 4, 16, 32, 64, 64]);
        self.add_num = self.pick(&[4, 12, 16, 16]);
        self.consumed_num = self.pick(&[0, 8, 16]);
        self.rm_num = self.pick(&[0, 0, 2, 8]);
        self.lk_num = self.pick(&[0, 16, 48, 64]);
        self.dests = self.pick(&[1, 2, 4, 8, 8]);
        self.key_ports = 1 + self.rng.below(4);
        self.vcs = 1 + self.rng.below(3);
        self.ids = 1 + self.rng.below(3);
        self.wide = self.rng.chance(1, 4);
        self.n_tracked = 0;
        if self.rng.chance(1, 5) {
            // Periodic phase: tracked commands on distinct destinations, staggered.
            self.dests = 8;
            self.n_tracked = 1 + self.rng.below(MAX_TRACKED as u64) as usize;
            self.left += 4 * self.ttl;
            for (i, &wide_dest) in DEST_WIDE.iter().enumerate().take(self.n_tracked) {
                let mut cmd = self.command();
                cmd.en = true;
                cmd.add = true;
                cmd.dest = if self.wide { wide_dest } else { i as u16 };
                let period = (self.ttl - 1 + self.rng.below(3)).max(1);
                let due = cycle + i as u64 + self.rng.below(8);
                self.tracked[i] = Tracked { cmd, period, due };
            }
        }
    }

    fn dest(&mut self) -> u16 {
        let i = self.rng.below(self.dests) as usize;
        if self.wide { DEST_WIDE[i] } else { i as u16 }
    }

    fn port(&mut self) -> u8 {
        let i = self.rng.below(self.key_ports) as usize;
        if self.wide { PORT_WIDE[i] } else { i as u8 }
    }

    fn vc(&mut self) -> u8 {
        let i = self.rng.below(self.vcs) as usize;
        if self.wide { VC_WIDE[i] } else { i as u8 }
    }

    fn arn_id(&mut self) -> u32 {
        let i = self.rng.below(self.ids) as usize;
        if self.wide { ID_WIDE[i] } else { i as u32 }
    }

    /// A random processARN command of the current phase.
    fn command(&mut self) -> ArnProcess {
        ArnProcess {
            en: self.rng.chance(self.pr_num, 64),
            dest: self.dest(),
            port: self.port(),
            vc: self.vc(),
            arn_id: self.arn_id(),
            root_info: self.rng.next_u64() as u8,
            consumed: self.rng.chance(self.consumed_num, 16),
            alt_port: self.rng.next_u64() as u8,
            add: self.rng.chance(self.add_num, 16),
        }
    }
}

impl Stimulus<ArnTableIn> for RandomArnOps {
    fn next(&mut self, cycle: u64) -> ArnTableIn {
        if self.left == 0 {
            self.new_phase(cycle);
        }
        self.left -= 1;
        let mut inp = ArnTableIn::default();
        for p in 0..self.ports {
            inp.lk[p] = ArnLookup {
                en: self.rng.chance(self.lk_num, 64),
                dest: self.dest(),
                vc: self.vc(),
            };
        }
        inp.pr = self.command();
        if self.n_tracked > 0 {
            // Only the tracked commands: the first one due (the others slip by a cycle).
            inp.pr.en = false;
            if let Some(t) = self.tracked[..self.n_tracked]
                .iter_mut()
                .find(|t| t.due <= cycle)
            {
                inp.pr = t.cmd;
                t.due = cycle + t.period;
            }
        }
        inp.rm = ArnRemove {
            en: self.rng.chance(self.rm_num, 64),
            dest: self.dest(),
            port: self.port(),
            vc: self.vc(),
        };
        // Now and then the remove names the key of this cycle's command.
        if self.rng.chance(1, 8) {
            inp.rm.dest = inp.pr.dest;
            inp.rm.port = inp.pr.port;
            inp.rm.vc = inp.pr.vc;
        }
        inp
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::Block;
    use crate::blocks::arn_table::ArnTable;

    /// How often each corner of the specification happens.
    #[derive(Debug, Default)]
    struct Corners {
        lookups_hit: u64,
        lookups_consumed: u64,
        consumed_preferred: u64,
        refreshes: u64,
        refresh_saves_expiring: u64,
        return_after_expiry: u64,
        moved_roots: u64,
        add_cleared_no_insert: u64,
        removals: u64,
        remove_then_add_same_key: u64,
        full_cycles: u64,
        evictions: u64,
        add_into_expiring_slot_when_full: u64,
        expiries: u64,
        emptied: u64,
        wide_hits: u64,
    }

    fn count_corners(entries: usize, ports: usize, ttl: u32, seed: u64, cycles: u64) -> Corners {
        let mut t = ArnTable::new(entries, ports, ttl);
        let mut s = RandomArnOps::new(ports, ttl, seed);
        let mut k = Corners::default();
        let mut prev_count = 0;
        for c in 0..cycles {
            let inp = s.next(c);
            let q = *t.regs();
            let slots = &q.entries[..entries];
            let out = t.evaluate(&inp);
            for (p, r) in out.lk[..ports].iter().enumerate() {
                k.lookups_hit += r.hit as u64;
                k.lookups_consumed += r.consumed as u64;
                let first = slots
                    .iter()
                    .position(|e| e.valid && e.dest == inp.lk[p].dest && e.vc == inp.lk[p].vc);
                if r.consumed && first != Some(r.idx as usize) {
                    k.consumed_preferred += 1;
                }
                if r.hit && (inp.lk[p].dest > 7 || inp.lk[p].vc > 2) {
                    k.wide_hits += 1;
                }
            }
            let key = |e: &crate::blocks::arn_table::ArnEntry, d: u16, p: u8, v: u8| {
                e.valid && e.dest == d && e.port == p && e.vc == v
            };
            let pr = inp.pr;
            let rm = inp.rm;
            let removed =
                |e: &crate::blocks::arn_table::ArnEntry| rm.en && key(e, rm.dest, rm.port, rm.vc);
            if out.pr_hit {
                k.refreshes += 1;
                if slots.iter().any(|e| {
                    key(e, pr.dest, pr.port, pr.vc) && e.arn_id == pr.arn_id && e.ttl.value() == 1
                }) {
                    k.refresh_saves_expiring += 1;
                }
            }
            if pr.en && !out.pr_hit {
                if slots
                    .iter()
                    .any(|e| key(e, pr.dest, pr.port, pr.vc) && !removed(e))
                {
                    k.moved_roots += 1;
                }
                if !pr.add {
                    k.add_cleared_no_insert += 1;
                }
                if pr.add && rm.en && (rm.dest, rm.port, rm.vc) == (pr.dest, pr.port, pr.vc) {
                    k.remove_then_add_same_key += slots.iter().any(removed) as u64;
                }
                if pr.add && out.full && !out.pr_evict {
                    k.add_into_expiring_slot_when_full += 1;
                }
            }
            k.removals += slots.iter().filter(|e| removed(e)).count() as u64;
            k.full_cycles += out.full as u64;
            k.evictions += out.pr_evict as u64;
            k.expiries += slots
                .iter()
                .filter(|e| {
                    e.valid
                        && e.ttl.value() == 1
                        && !removed(e)
                        && !(pr.en && key(e, pr.dest, pr.port, pr.vc) && e.arn_id == pr.arn_id)
                })
                .count() as u64;
            t.commit();
            let now = t.count();
            if prev_count > 0 && now == 0 {
                k.emptied += 1;
            }
            prev_count = now;
            // The same key and id come back after the entry expired.
            if pr.en
                && !out.pr_hit
                && slots.iter().any(|e| {
                    !e.valid
                        && e.dest == pr.dest
                        && e.port == pr.port
                        && e.vc == pr.vc
                        && e.arn_id == pr.arn_id
                        && e.ttl.value() == 0
                })
            {
                k.return_after_expiry += 1;
            }
        }
        k
    }

    #[test]
    fn every_corner_happens_often() {
        for (entries, ports, ttl, seed) in [(8, 4, 64, 1u64), (16, 12, 300, 2), (1, 1, 1, 3)] {
            let k = count_corners(entries, ports, ttl, seed, 100_000);
            println!("Entries={entries} Ports={ports} Ttl={ttl}: {k:#?}");
            let min = 50;
            assert!(k.lookups_hit > min, "{k:?}");
            assert!(k.lookups_consumed > min, "{k:?}");
            if entries > 1 {
                assert!(k.consumed_preferred > min, "{k:?}");
            }
            assert!(k.refreshes > min, "{k:?}");
            assert!(k.refresh_saves_expiring > min, "{k:?}");
            assert!(k.return_after_expiry > min, "{k:?}");
            assert!(k.moved_roots > min, "{k:?}");
            assert!(k.add_cleared_no_insert > min, "{k:?}");
            assert!(k.removals > min, "{k:?}");
            assert!(k.remove_then_add_same_key > min, "{k:?}");
            assert!(k.full_cycles > min, "{k:?}");
            if ttl > 1 {
                // With Ttl = 1 every entry expires at the end of its only cycle, so a slot is
                // always free for an add: nothing is ever evicted.
                assert!(k.evictions > min, "{k:?}");
            }
            assert!(k.add_into_expiring_slot_when_full > min, "{k:?}");
            assert!(k.expiries > min, "{k:?}");
            assert!(k.emptied > 10, "{k:?}");
            assert!(k.wide_hits > min, "{k:?}");
        }
    }

    #[test]
    fn stream_is_fixed_by_seed() {
        let mut a = RandomArnOps::new(12, 300, 9);
        let mut b = RandomArnOps::new(12, 300, 9);
        for c in 0..5000 {
            assert_eq!(a.next(c), b.next(c));
        }
    }
}
