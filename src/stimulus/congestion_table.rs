//! Random snoops and lookups for the congestion table, in phases.
//!
//! Keys come from small spaces (a phase draws how many destinations and ports) so that snoops
//! hit, lookups find several ports of one destination and the table fills up; one phase in four
//! maps key indices to extreme values (all bits set, top bit set). Each phase draws its snoop
//! rate (idle to every cycle) and lasts up to about three Ttl cycles, so idle phases let every
//! entry expire, and one phase in five repeats one key at a period of Ttl - 1, Ttl or Ttl + 1
//! cycles, so that a refresh lands just before, on and just after an entry's last cycle.

use super::{SplitMix64, Stimulus};
use crate::blocks::congestion_table::{CongestionTableIn, MAX_LOOKUPS, Snoop};

/// Destination values of the "wide" mapping.
const DEST_WIDE: [u16; 6] = [0, 1, 0x7fff, 0x8000, 0xfffe, 0xffff];
/// Port values of the "wide" mapping (some beyond the switch's ports).
const PORT_WIDE: [u8; 4] = [0, 0x3f, 0x80, 0xff];

/// Seeded random stimulus for a table of `lookups` lookup ports, `ports` switch ports and
/// time-to-live `ttl`.
#[derive(Clone, Debug)]
pub struct RandomSnoops {
    lookups: usize,
    ports: u64,
    ttl: u64,
    rng: SplitMix64,
    left: u64,
    sn_num: u64,
    dests: u64,
    key_ports: u64,
    wide: bool,
    /// A periodic phase's key and period (0: not periodic).
    period: u64,
    key: Snoop,
}

impl RandomSnoops {
    /// Stream for a table with `lookups` lookup ports, `ports` ports and `ttl` cycles.
    pub fn new(lookups: usize, ports: usize, ttl: u32, seed: u64) -> Self {
        assert!((1..=MAX_LOOKUPS).contains(&lookups));
        RandomSnoops {
            lookups,
            ports: ports as u64,
            ttl: ttl as u64,
            rng: SplitMix64::new(seed),
            left: 0,
            sn_num: 0,
            dests: 1,
            key_ports: 1,
            wide: false,
            period: 0,
            key: Snoop::default(),
        }
    }

    fn dest(&mut self) -> u16 {
        let k = self.rng.below(self.dests);
        if self.wide {
            DEST_WIDE[k as usize % DEST_WIDE.len()]
        } else {
            k as u16
        }
    }

    fn port(&mut self) -> u8 {
        let k = self.rng.below(self.key_ports);
        if self.wide {
            PORT_WIDE[k as usize % PORT_WIDE.len()]
        } else {
            (k % self.ports) as u8
        }
    }

    fn snoop(&mut self) -> Snoop {
        Snoop {
            dest: self.dest(),
            port: self.port(),
            fb: self.rng.below(64) as u8,
            local: self.rng.chance(1, 2),
        }
    }
}

impl Stimulus<CongestionTableIn> for RandomSnoops {
    fn next(&mut self, cycle: u64) -> CongestionTableIn {
        if self.left == 0 {
            self.left = 1 + self.rng.below(3 * self.ttl + 16);
            self.sn_num = [0, 1, 4, 16, 32, 64][self.rng.below(6) as usize];
            self.dests = 1 + self.rng.below(6);
            self.key_ports = 1 + self.rng.below(self.ports.min(6));
            self.wide = self.rng.chance(1, 4);
            self.period = 0;
            if self.rng.chance(1, 5) {
                self.period = (self.ttl + self.rng.below(3)).saturating_sub(1).max(1);
                self.key = self.snoop();
            }
        }
        self.left -= 1;
        let snoop = if self.period != 0 {
            cycle.is_multiple_of(self.period).then_some(self.key)
        } else {
            self.rng.chance(self.sn_num, 64).then(|| self.snoop())
        };
        let mut lk_dest = [0; MAX_LOOKUPS];
        for d in lk_dest.iter_mut().take(self.lookups) {
            *d = self.dest();
        }
        CongestionTableIn { lk_dest, snoop }
    }
}
