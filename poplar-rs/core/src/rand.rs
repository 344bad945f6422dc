//! Deterministic pseudo-random numbers for every crate and test: [`SplitMix64`] (Steele, Lea and
//! Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014; the 64-bit variant
//! of Java's `SplittableRandom`), its finaliser [`mix64`] as a stateless hash, and the floats,
//! ranges and normals drawn from it. The same seed gives the same stream on every host, thread
//! count and ISA level: nothing here reads the clock or the platform.

/// The generator's increment: 2^64 / φ, odd.
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's finaliser (Stafford's variant 13): a bijective mix of 64 bits, usable as a
/// hash of a counter.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The SplitMix64 generator: a 64-bit state advanced by [`GOLDEN_GAMMA`] and finalised by
/// [`mix64`]. Small, fast and deterministic; not for cryptography.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// The generator whose first output is `mix64(seed + GOLDEN_GAMMA)`.
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix64(self.state)
    }

    /// The next 32 random bits (the high half of [`next_u64`](Self::next_u64)).
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in [0, 1): the top 53 bits over 2^53.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in (0, 1): the top 53 bits plus one half, over 2^53 (never 0, so its logarithm
    /// is finite).
    #[inline]
    pub fn next_f64_open(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Uniform in [0, 1): the top 24 bits over 2^24.
    #[inline]
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u32 << 24) as f32
    }

    /// Uniform in [`lo`, `hi`) in f32 (`lo + (hi − lo) · u`, `u` from [`next_f32`](Self::next_f32)).
    #[inline]
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_f32()
    }

    /// An integer in `0..n` (`next_u64() % n`; `n = 0` is taken as 1). The modulo bias, below
    /// `n / 2^64`, does not matter for tests and shuffles.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// A standard normal by Box–Muller (`√(−2 ln u) · cos(2π v)`, `u` and `v` from
    /// [`next_f64_open`](Self::next_f64_open)); one normal per two draws.
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.next_f64_open(), self.next_f64_open());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// `items` in a random order (Fisher–Yates from the last item, `j = below(i + 1)`).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference outputs, from an independent implementation of the published algorithm:
    ///
    /// ```python
    /// M = (1 << 64) - 1
    /// def splitmix64(seed, n):
    ///     s, out = seed, []
    ///     for _ in range(n):
    ///         s = (s + 0x9E3779B97F4A7C15) & M
    ///         z = s
    ///         z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    ///         z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    ///         out.append(z ^ (z >> 31))
    ///     return out
    /// print(splitmix64(0, 3), splitmix64(1234567, 5))
    /// ```
    #[test]
    fn the_streams_are_the_published_ones() {
        let first = |seed, n| {
            let mut r = SplitMix64::new(seed);
            (0..n).map(|_| r.next_u64()).collect::<Vec<u64>>()
        };
        let seed_0: [u64; 3] = [
            16294208416658607535,
            7960286522194355700,
            487617019471545679,
        ];
        assert_eq!(first(0, 3), seed_0);
        let seed_1234567: [u64; 5] = [
            6457827717110365317,
            3203168211198807973,
            9817491932198370423,
            4593380528125082431,
            16408922859458223821,
        ];
        assert_eq!(first(1234567, 5), seed_1234567);
    }

    #[test]
    fn mix64_is_the_generator_finaliser() {
        assert_eq!(mix64(GOLDEN_GAMMA), 16294208416658607535);
        assert_eq!(mix64(0), 0);
    }

    #[test]
    fn floats_and_ranges_stay_in_their_intervals() {
        let mut r = SplitMix64::new(7);
        for _ in 0..10_000 {
            let x = r.next_f64();
            assert!((0.0..1.0).contains(&x), "{x}");
            let x = r.next_f64_open();
            assert!(x > 0.0 && x < 1.0, "{x}");
            let x = r.next_f32();
            assert!((0.0..1.0).contains(&x), "{x}");
            let x = r.f32_in(-8.0, 8.0);
            assert!((-8.0..8.0).contains(&x), "{x}");
            assert!(r.below(5) < 5);
        }
        assert_eq!(r.below(0), 0);
        // The float conversions use the top bits of the same draw.
        let (mut a, mut b) = (SplitMix64::new(9), SplitMix64::new(9));
        let bits = a.next_u64();
        assert_eq!(b.next_f64(), (bits >> 11) as f64 * 2f64.powi(-53));
        assert_eq!(b.next_u32(), (a.next_u64() >> 32) as u32);
    }

    /// The mean and variance of 200,000 normals within 5 standard errors of 0 and 1
    /// (standard error of the mean 1/√n ≈ 0.0022, of the variance √(2/n) ≈ 0.0032).
    #[test]
    fn normals_have_mean_zero_and_variance_one() {
        let mut r = SplitMix64::new(42);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| r.normal()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 5.0 * 0.0023, "mean {mean}");
        assert!((var - 1.0).abs() < 5.0 * 0.0032, "variance {var}");
        assert!(xs.iter().all(|x| x.is_finite()));
    }

    #[test]
    fn a_shuffle_is_a_permutation_and_depends_on_the_seed() {
        let mut v: Vec<u32> = (0..100).collect();
        SplitMix64::new(1).shuffle(&mut v);
        let mut w: Vec<u32> = (0..100).collect();
        SplitMix64::new(2).shuffle(&mut w);
        assert_ne!(v, w);
        assert_ne!(v, (0..100).collect::<Vec<_>>());
        v.sort_unstable();
        assert_eq!(v, (0..100).collect::<Vec<_>>());
    }
}
