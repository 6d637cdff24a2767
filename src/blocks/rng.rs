//! SplitMix64: a tiny, fixed, well-mixed pseudo-random stream.

/// SplitMix64 generator (Steele, Lea, Flood 2014). Its output for a seed never changes.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

    /// The output function's two multipliers, in order.
    const MIX: [u64; 2] = [0xbf58_476d_1ce4_e5b9, 0x94d0_49bb_1331_11eb];

    /// The output of a state.
    #[inline]
    fn mix(mut z: u64) -> u64 {
        z = (z ^ (z >> 30)).wrapping_mul(Self::MIX[0]);
        z = (z ^ (z >> 27)).wrapping_mul(Self::MIX[1]);
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
    /// calls of [`SplitMix64::next_u64`] would move it: a source at full load takes one draw per
    /// cycle. Each state is the first plus a multiple of the step, so on a CPU with AVX2 the
    /// draws go four at a time side by side (`lanes`); the answer and the state after it are the
    /// same either way.
    #[inline]
    pub fn first_below(&mut self, p: u64, n: u64) -> Option<u64> {
        let mut k = 0;
        #[cfg(target_arch = "x86_64")]
        if n >= lanes::WIDTH && p > 0 && p < 1 << 32 && std::arch::is_x86_feature_detected!("avx2")
        {
            // SAFETY: the CPU has AVX2, checked just above.
            let (state, hit) = unsafe { lanes::first_below(self.state, p, n) };
            self.state = state;
            match hit {
                Ok(d) => return Some(d),
                Err(taken) => k = taken,
            }
        }
        self.one_at_a_time(p, k, n)
    }

    /// Draws `k..n` of [`SplitMix64::first_below`], one at a time, the state in a register.
    #[inline]
    fn one_at_a_time(&mut self, p: u64, mut k: u64, n: u64) -> Option<u64> {
        let mut state = self.state;
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

/// SplitMix64's draws four at a time in the lanes of a 256-bit register (AVX2). AVX2 has no
/// 64-bit product, so each product by a mixing constant is put together from three 32-bit ones;
/// the result is exact, bit for bit the scalar one.
#[cfg(target_arch = "x86_64")]
mod lanes {
    use super::SplitMix64;
    use std::arch::x86_64::*;

    /// Draws per block.
    pub(super) const WIDTH: u64 = 4;

    /// The low 64 bits of `x * c` in each lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn product(x: __m256i, c: u64) -> __m256i {
        let c_lo = _mm256_set1_epi64x((c & 0xffff_ffff) as i64);
        let c_hi = _mm256_set1_epi64x((c >> 32) as i64);
        let low = _mm256_mul_epu32(x, c_lo);
        let cross = _mm256_add_epi64(
            _mm256_mul_epu32(_mm256_srli_epi64::<32>(x), c_lo),
            _mm256_mul_epu32(x, c_hi),
        );
        _mm256_add_epi64(low, _mm256_slli_epi64::<32>(cross))
    }

    /// [`SplitMix64::mix`] in each lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn mix(z: __m256i) -> __m256i {
        let z = _mm256_xor_si256(z, _mm256_srli_epi64::<30>(z));
        let z = product(z, SplitMix64::MIX[0]);
        let z = _mm256_xor_si256(z, _mm256_srli_epi64::<27>(z));
        let z = product(z, SplitMix64::MIX[1]);
        _mm256_xor_si256(z, _mm256_srli_epi64::<31>(z))
    }

    /// The whole blocks of [`SplitMix64::first_below`] from `state`, for `0 < p < 2^32` and
    /// `n >= WIDTH`: the state after them and either the draw that hit (`Ok`) or how many were
    /// taken without a hit (`Err`, a multiple of `WIDTH`; the rest are the caller's).
    #[target_feature(enable = "avx2")]
    pub(super) fn first_below(state: u64, p: u64, n: u64) -> (u64, Result<u64, u64>) {
        let g = SplitMix64::GAMMA;
        let mut states = _mm256_set_epi64x(
            state.wrapping_add(g.wrapping_mul(4)) as i64,
            state.wrapping_add(g.wrapping_mul(3)) as i64,
            state.wrapping_add(g.wrapping_mul(2)) as i64,
            state.wrapping_add(g) as i64,
        );
        let step = _mm256_set1_epi64x(g.wrapping_mul(WIDTH) as i64);
        // Both sides of the comparison are below 2^32, so a signed one is exact.
        let threshold = _mm256_set1_epi64x(p as i64);
        let mut first = state;
        let mut k = 0;
        while n - k >= WIDTH {
            let top = _mm256_srli_epi64::<32>(mix(states));
            let below = _mm256_cmpgt_epi64(threshold, top);
            let hits = _mm256_movemask_pd(_mm256_castsi256_pd(below)) as u32;
            if hits != 0 {
                let j = hits.trailing_zeros() as u64;
                return (first.wrapping_add(g.wrapping_mul(j + 1)), Ok(k + j));
            }
            states = _mm256_add_epi64(states, step);
            first = first.wrapping_add(g.wrapping_mul(WIDTH));
            k += WIDTH;
        }
        (first, Err(k))
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

    /// `first_below`, and its path without lanes (what a CPU without AVX2 takes), against the
    /// loop of single draws they stand for: the same answer and the same state after it.
    fn first_below_matches_single_draws(seed: u64, p: u64, n: u64) {
        let want = {
            let mut b = SplitMix64::new(seed);
            let hit = (0..n).find(|_| (b.next_u64() >> 32) < p);
            (hit, b.next_u64())
        };
        let mut a = SplitMix64::new(seed);
        let got = a.first_below(p, n);
        assert_eq!((got, a.next_u64()), want, "seed {seed}, p {p}, n {n}");
        let mut c = SplitMix64::new(seed);
        let got = c.one_at_a_time(p, 0, n);
        assert_eq!(
            (got, c.next_u64()),
            want,
            "one at a time: seed {seed}, p {p}, n {n}"
        );
    }

    #[test]
    fn first_below_moves_the_stream_as_single_draws_do() {
        for (seed, p, n) in [
            (3u64, 1u64 << 26, 500u64),
            (9, 0, 40),
            (1, u64::MAX, 5),
            (1, 1 << 32, 9),
            (4, 1 << 20, 0),
            (5, 1 << 29, 7),
            (6, 1 << 29, 8),
            (7, 1 << 29, 17),
        ] {
            first_below_matches_single_draws(seed, p, n);
        }
    }

    proptest::proptest! {
        /// Hits at every place in and after the blocks of eight, and runs that end inside one.
        #[test]
        fn first_below_is_single_draws(seed: u64, p in 0u64..=(1 << 32), n in 0u64..200) {
            first_below_matches_single_draws(seed, p >> (p % 29), n);
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
