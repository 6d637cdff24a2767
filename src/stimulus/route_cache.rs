//! Random lookups, inserts and erases for the route cache, in phases.
//!
//! GCIDs come from small spaces (a phase draws how many sources, destinations and connection ids)
//! so that lookups hit, inserts find their flow again and the cache fills; one phase in four maps
//! the indices to extreme values (all bits set, top bit set). Each phase draws its rates of
//! inserts, erases and lookups, so that the cache fills, empties and churns.

use super::{SplitMix64, Stimulus};
use crate::blocks::route_cache::{Gcid, RouteCacheCmd, RouteCacheIn};

/// Values of the "wide" mapping.
const WIDE: [u16; 6] = [0, 1, 0x7fff, 0x8000, 0xfffe, 0xffff];

/// Seeded random stimulus for a route cache.
#[derive(Clone, Debug)]
pub struct RandomFlows {
    rng: SplitMix64,
    left: u64,
    insert_num: u64,
    erase_num: u64,
    lookup_num: u64,
    keys: u64,
    wide: bool,
}

impl RandomFlows {
    /// Stream of `seed`.
    pub fn new(seed: u64) -> Self {
        RandomFlows {
            rng: SplitMix64::new(seed),
            left: 0,
            insert_num: 0,
            erase_num: 0,
            lookup_num: 0,
            keys: 1,
            wide: false,
        }
    }

    fn field(&mut self) -> u16 {
        let k = self.rng.below(self.keys);
        if self.wide {
            WIDE[k as usize % WIDE.len()]
        } else {
            k as u16
        }
    }

    fn gcid(&mut self) -> Gcid {
        Gcid {
            slid: self.field(),
            dlid: self.field(),
            cid: self.field(),
        }
    }
}

impl Stimulus<RouteCacheIn> for RandomFlows {
    fn next(&mut self, _cycle: u64) -> RouteCacheIn {
        if self.left == 0 {
            self.left = 16 + self.rng.below(400);
            self.insert_num = [0, 2, 8, 24, 48][self.rng.below(5) as usize];
            self.erase_num = [0, 2, 8, 24, 48][self.rng.below(5) as usize];
            self.lookup_num = [0, 16, 48, 64][self.rng.below(4) as usize];
            self.keys = 1 + self.rng.below(4);
            self.wide = self.rng.chance(1, 4);
        }
        self.left -= 1;
        let lookup = self.rng.chance(self.lookup_num, 64).then(|| self.gcid());
        let r = self.rng.below(64);
        let cmd = if r < self.insert_num {
            let port = self.rng.below(256) as u8;
            RouteCacheCmd::Insert(self.gcid(), port)
        } else if r < self.insert_num + self.erase_num {
            RouteCacheCmd::Erase(self.gcid())
        } else {
            RouteCacheCmd::Idle
        };
        RouteCacheIn { lookup, cmd }
    }
}
