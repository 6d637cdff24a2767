//! Random requests for the round-robin arbiter, in phases of varying density.

use super::{SplitMix64, Stimulus, sparse_mask};
use crate::blocks::rr_arbiter::RrArbiterIn;

/// Phases of a few hundred cycles, each with its own request density, a set of persistent
/// requesters and an accept probability, so that sparse, dense, contended and stalled
/// patterns all occur.
#[derive(Clone, Debug)]
pub struct RandomRequests {
    n: u32,
    rng: SplitMix64,
    left: u32,
    density: u64,
    persistent: u128,
    ack_num: u64,
}

impl RandomRequests {
    /// Stream for an arbiter of `n` requesters.
    pub fn new(n: usize, seed: u64) -> Self {
        RandomRequests {
            n: n as u32,
            rng: SplitMix64::new(seed),
            left: 0,
            density: 0,
            persistent: 0,
            ack_num: 0,
        }
    }
}

impl Stimulus<RrArbiterIn> for RandomRequests {
    fn next(&mut self, _cycle: u64) -> RrArbiterIn {
        if self.left == 0 {
            self.left = 16 + self.rng.below(500) as u32;
            self.density = [0, 1, 4, 16, 32, 60, 64][self.rng.below(7) as usize];
            let persistent_density = [0, 1, 8][self.rng.below(3) as usize];
            self.persistent = sparse_mask(&mut self.rng, self.n, persistent_density);
            self.ack_num = [0, 8, 12, 16, 16][self.rng.below(5) as usize];
        }
        self.left -= 1;
        let req = sparse_mask(&mut self.rng, self.n, self.density) | self.persistent;
        RrArbiterIn {
            req,
            ack: self.rng.chance(self.ack_num, 16),
        }
    }
}
