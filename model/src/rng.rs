//! The scheduler's random generator, specified so that hardware reproduces it bit for bit.
//!
//! - Generator: Marsaglia's xorshift64 with the shift triple (13, 7, 17):
//!   `x ^= x << 13; x ^= x >> 7; x ^= x << 17`, on a 64-bit state that is never zero
//!   (a zero seed is replaced by [`DEFAULT_SEED`]).
//! - One step per *task first pass*: exactly once for every first pass of a `NEW_TASK` or
//!   `NEW_TASK_RANDOM` packet whose pool is valid, whether or not the samples are used (a task that
//!   finds an idle node still advances the generator). Nothing else advances it. This makes the
//!   generator's position a function of the order of task passes only, which the hardware sees at
//!   its parser.
//! - Two samples per step: the low 32 bits give sample 1 and the high 32 bits sample 2, each mapped
//!   to `[0, n)` by a multiply-high, `(r32 · n) >> 32`. This works for any `n`, not only powers of
//!   two, and its bias is below `n / 2^32` (under 10^-6 for n ≤ 4096).
//!
//! In hardware: a 64-bit register with three XOR-shift layers (one LUT level each after synthesis)
//! and two 32 × 16-bit multipliers (DSP slices).

/// The state used when a seed of zero is given (xorshift never leaves zero).
pub const DEFAULT_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Xorshift64 {
    state: u64,
}

impl Xorshift64 {
    pub fn new(seed: u64) -> Xorshift64 {
        Xorshift64 {
            state: if seed == 0 { DEFAULT_SEED } else { seed },
        }
    }

    pub fn state(&self) -> u64 {
        self.state
    }

    /// Advances one step and returns the new state.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        x
    }

    /// Advances one step and returns the two samples in `[0, n)` (both 0 when `n == 0`).
    #[inline]
    pub fn two_samples(&mut self, n: u16) -> (u16, u16) {
        let r = self.next_u64();
        (scale(r as u32, n), scale((r >> 32) as u32, n))
    }

    /// The Tofino profile's two samples: one step, the top 8 bits of each 32-bit half mapped by
    /// [`scale8`] (a Tofino switch draws a byte per sample and maps it through an exact-match
    /// table of 256 entries a pool; decision T1).
    pub fn two_samples_8(&mut self, n: u16) -> (u16, u16) {
        let r = self.next_u64();
        (scale8((r >> 24) as u8, n), scale8((r >> 56) as u8, n))
    }
}

/// The draws a Tofino switch's sample table maps for each pool (decision T1): a pool it
/// samples holds at most this many members.
pub const TOFINO_DRAWS: u16 = 256;

/// Maps a uniform byte to `[0, n)` by multiply-high: the slot a Tofino switch's sample table
/// holds for draw `d` of a pool of `n` (`floor(d n / 256)`; every slot for `n <= 256`).
#[inline]
pub fn scale8(d: u8, n: u16) -> u16 {
    ((u32::from(d) * u32::from(n)) >> 8) as u16
}

/// Maps a uniform 32-bit value to `[0, n)` by multiply-high.
#[inline]
pub fn scale(r: u32, n: u16) -> u16 {
    ((u64::from(r) * u64::from(n)) >> 32) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_outputs_are_the_specified_xorshift64_sequence() {
        // Hand-checked: seed 1 gives 1 ^ 1<<13 = 0x2001, then ^ >>7 (0x40) = 0x2041,
        // then ^ <<17 = 0x2041 ^ 0x4082_0000 = 0x4082_2041.
        let mut g = Xorshift64::new(1);
        assert_eq!(g.next_u64(), 0x4082_2041);
        assert_eq!(g.state(), 0x4082_2041);
    }

    #[test]
    fn zero_seed_is_replaced_so_the_generator_never_sticks() {
        let mut g = Xorshift64::new(0);
        assert_eq!(g.state(), DEFAULT_SEED);
        assert_ne!(g.next_u64(), 0);
    }

    #[test]
    fn samples_cover_any_pool_size_and_stay_in_range() {
        for n in [1u16, 2, 3, 5, 7, 100, 1000, 4095, 4096] {
            let mut g = Xorshift64::new(42);
            let mut seen = vec![0u32; usize::from(n)];
            for _ in 0..(u32::from(n) * 200) {
                let (a, b) = g.two_samples(n);
                assert!(a < n && b < n);
                seen[usize::from(a)] += 1;
                seen[usize::from(b)] += 1;
            }
            // 400 expected hits per value; a uniform generator never gets close to 0 or 4x.
            assert!(
                seen.iter().all(|&c| c > 200 && c < 800),
                "n = {n}: {seen:?}"
            );
        }
        assert_eq!(Xorshift64::new(5).two_samples(0), (0, 0));
    }

    #[test]
    fn byte_samples_are_the_sample_tables_slots() {
        // Each slot of a pool of n <= 256 has floor(256 / n) or ceil(256 / n) of the 256 draws,
        // in order, and every slot has one.
        for n in [1u16, 3, 7, 100, 255, 256] {
            let mut hits = vec![0u32; usize::from(n)];
            let mut last = 0;
            for d in 0..=255u8 {
                let slot = scale8(d, n);
                assert!(slot < n && slot >= last, "n {n} draw {d}");
                last = slot;
                hits[usize::from(slot)] += 1;
            }
            let (lo, hi) = (256 / u32::from(n), 256_u32.div_ceil(u32::from(n)));
            assert!(hits.iter().all(|&h| h == lo || h == hi), "n {n}: {hits:?}");
        }
        let mut a = Xorshift64::new(9);
        let mut b = a.clone();
        let r = b.next_u64();
        assert_eq!(
            a.two_samples_8(5),
            (scale8((r >> 24) as u8, 5), scale8((r >> 56) as u8, 5))
        );
    }

    #[test]
    fn multiply_high_maps_extremes_to_the_ends_of_the_range() {
        assert_eq!(scale(0, 7), 0);
        assert_eq!(scale(u32::MAX, 7), 6);
        assert_eq!(scale(u32::MAX, 1), 0);
    }
}
