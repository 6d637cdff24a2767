//! SplitMix64: a tiny, fixed, well-mixed pseudo-random stream.

/// SplitMix64 generator (Steele, Lea, Flood 2014). Its output for a seed never changes.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A stream starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The step between two states.
    const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

    /// The output of a state.
    #[inline]
    fn mix(mut z: u64) -> u64 {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(Self::GAMMA);
        Self::mix(self.state)
    }

    /// Takes up to `n` draws of 64 bits, stopping after the first whose upper 32 bits are below
    /// `p` (a Bernoulli trial of probability `p / 2^32`). Returns how many draws came before
    /// that one, or `None` when none of the `n` was. The stream moves exactly as `n` or fewer
    /// calls of [`SplitMix64::next_u64`] would move it; a loop of those calls keeps the state in
    /// memory, this one in a register (a source at full load takes one draw per cycle).
    #[inline]
    pub fn first_below(&mut self, p: u64, n: u64) -> Option<u64> {
        let mut state = self.state;
        let mut k = 0;
        let hit = loop {
            if k == n {
                break None;
            }
            state = state.wrapping_add(Self::GAMMA);
            if (Self::mix(state) >> 32) < p {
                break Some(k);
            }
            k += 1;
        };
        self.state = state;
        hit
    }

    /// Next 128 random bits.
    pub fn next_u128(&mut self) -> u128 {
        ((self.next_u64() as u128) << 64) | self.next_u64() as u128
    }

    /// Uniform in `0..n` (`n` > 0), by multiply-shift.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_is_fixed() {
        // Reference values of SplitMix64 for seed 0.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn first_below_moves_the_stream_as_single_draws_do() {
        for (seed, p, n) in [
            (3u64, 1u64 << 26, 500u64),
            (9, 0, 40),
            (1, u64::MAX, 5),
            (4, 1 << 20, 0),
        ] {
            let (mut a, mut b) = (SplitMix64::new(seed), SplitMix64::new(seed));
            let got = a.first_below(p, n);
            let want = (0..n).find(|_| (b.next_u64() >> 32) < p);
            assert_eq!(got, want, "seed {seed}, p {p}, n {n}");
            assert_eq!(a.next_u64(), b.next_u64(), "seed {seed}: the streams part");
        }
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = SplitMix64::new(7);
        for n in [1u64, 2, 3, 10, 1000] {
            for _ in 0..1000 {
                assert!(r.below(n) < n);
            }
        }
    }
}
