//! The random stream of a (seed, seed modifier) pair, element by element: what the vertices
//! compute and what a host reference can recompute.
//!
//! **Counter layout.** Element `i` (its flat index in the generated tensor) of a plain draw
//! takes word `i % 4` of the Philox4x32-10 block with counter `[j, j >> 32, modifier, 0]`,
//! `j = i / 4`, under key `seed` ([`Stream::block`]). So the bits of an element depend on the
//! seed, the modifier and its index only: not on the tile, the worker, the thread or the rank
//! that computes it, nor on where the tensor is mapped. The truncated normal's attempts use
//! per-element counters `[i, i >> 32, modifier, 1 + attempt]`, which never meet a plain draw's
//! (tag 0).
//!
//! **Distributions** (the arithmetic is f64, from the 32-bit words, rounded once to the
//! element type; the transcendental functions are this module's own [`ln`] and
//! [`sincos_2pi`], plain IEEE arithmetic, so the bits are the same on every host and at every
//! instruction-set level, with no libm):
//! - uniform real: `lo + (hi − lo) · w / 2³²` in the closed interval `[lo, hi]` (rounding may
//!   reach `hi`, as poprand documents);
//! - uniform integer in `[lo, hi]`: `lo + ⌊w · (hi − lo + 1) / 2³²⌋` (a bias below
//!   `(hi − lo + 1) / 2³²` unless the range is a power of two, as poprand documents);
//! - Bernoulli(p): `w < round(p · 2³²)`;
//! - normal: Box–Muller over the word pairs `(w0, w1)` and `(w2, w3)` of a block:
//!   `r = √(−2 ln((w0 + ½) / 2³²))`, `θ = 2π · w1 / 2³²`; the even element of the pair takes
//!   `r cos θ`, the odd one `r sin θ`; then `mean + std · z`;
//! - truncated normal on `[−α, α]` standard deviations: rejection, up to
//!   [`TRUNCATED_ATTEMPTS`] attempts of two candidates each: for `α ≥ 1` the Box–Muller pair
//!   of each half block, kept if `|z| ≤ α` (accepted with probability at least 0.68); for
//!   `α < 1` a uniform proposal `u = α (2 w0 / 2³² − 1)` kept if `−2 ln((w1 + ½) / 2³²) ≥ u²`
//!   (accepted with probability at least `e^(−½)` ≈ 0.61); after the last attempt the last
//!   uniform proposal in `[−α, α]` (probability below 10⁻¹²).

use crate::philox::philox4x32_10;

/// Attempts (each of two candidates) of the truncated normal before its fallback.
pub const TRUNCATED_ATTEMPTS: u32 = 16;

const TWO_POW_M32: f64 = 1.0 / 4_294_967_296.0;

/// A seeded stream: Philox4x32-10 under key `seed`, with `modifier` in counter word 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    /// The key (poprand's pair of 32-bit seed words).
    pub seed: [u32; 2],
    /// poprand's seed modifier: a different stream for the same seed.
    pub modifier: u32,
}

impl Stream {
    /// The stream of `seed` and `modifier`.
    pub const fn new(seed: [u32; 2], modifier: u32) -> Stream {
        Stream { seed, modifier }
    }

    /// The 128 bits of block `j` of the draw tagged `tag` (0 for plain draws).
    #[inline(always)]
    pub fn block(&self, j: u64, tag: u32) -> [u32; 4] {
        philox4x32_10([j as u32, (j >> 32) as u32, self.modifier, tag], self.seed)
    }

    /// The Philox block of element `i` of a plain draw (block `i / 4`; the element's 32 bits
    /// are its word `i % 4`).
    pub fn bits(&self, i: u64) -> [u32; 4] {
        self.block(i / 4, 0)
    }

    /// Fills `out` with `f(block, lane)` for elements `first ..`, one Philox block per 4
    /// elements (a block straddling the start or end of `out` is recomputed, not shared).
    #[inline(always)]
    pub fn fill<T>(&self, first: u64, out: &mut [T], f: impl Fn(&[u32; 4], usize) -> T) {
        let mut cached = u64::MAX;
        let mut b = [0u32; 4];
        for (k, o) in out.iter_mut().enumerate() {
            let i = first + k as u64;
            let j = i >> 2;
            if j != cached {
                b = self.block(j, 0);
                cached = j;
            }
            *o = f(&b, (i & 3) as usize);
        }
    }
}

/// `ln x` for finite `x > 0` (normal, as the generators' arguments always are), in plain f64
/// arithmetic: `x = m · 2^e` with `m ∈ [√½, √2)`, `ln m = 2 atanh((m − 1)/(m + 1))` by its
/// series to the 23rd power (truncation below 10⁻¹⁹ relative).
#[inline(always)]
pub fn ln(x: f64) -> f64 {
    const LN2: f64 = std::f64::consts::LN_2;
    const SQRT2: f64 = std::f64::consts::SQRT_2;
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
    if m > SQRT2 {
        m *= 0.5;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut p = 1.0 / 23.0;
    let mut n = 21.0;
    while n > 0.0 {
        p = p * s2 + 1.0 / n;
        n -= 2.0;
    }
    e as f64 * LN2 + 2.0 * s * p
}

/// `(sin 2πu, cos 2πu)` for `u ∈ [0, 1)`, in plain f64 arithmetic: the quadrant and the
/// octant are split off exactly (`4u` is exact), leaving an angle in `[0, π/4]` for Taylor
/// series to the 17th and 18th powers (truncation below 10⁻¹⁸).
#[inline(always)]
pub fn sincos_2pi(u: f64) -> (f64, f64) {
    const HALF_PI: f64 = std::f64::consts::FRAC_PI_2;
    let t = 4.0 * u;
    let q = t as u32 & 3;
    let f = t - f64::from(t as u32);
    let (swap, a) = if f > 0.5 {
        (true, (1.0 - f) * HALF_PI)
    } else {
        (false, f * HALF_PI)
    };
    let a2 = a * a;
    // sin a = a (1 − a²/3! + a⁴/5! − …), cos a = 1 − a²/2! + a⁴/4! − …
    let mut sp = 1.0;
    let mut cp = 1.0;
    let mut k = 18.0;
    while k > 1.0 {
        // cos: terms 1/(k(k−1)); sin: 1/((k+1)k)
        cp = 1.0 - cp * a2 / (k * (k - 1.0));
        sp = 1.0 - sp * a2 / ((k + 1.0) * k);
        k -= 2.0;
    }
    let (sa, ca) = (a * sp, cp);
    let (s, c) = if swap { (ca, sa) } else { (sa, ca) };
    match q {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

/// A uniform real in `[lo, hi]` from word `w`.
#[inline(always)]
pub fn uniform(w: u32, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * (f64::from(w) * TWO_POW_M32)
}

/// A uniform integer in `[lo, hi]` (`lo ≤ hi`) from word `w`.
#[inline(always)]
pub fn uniform_int(w: u32, lo: i32, hi: i32) -> i32 {
    let range = (i64::from(hi) - i64::from(lo) + 1) as u64;
    (i64::from(lo) + ((u64::from(w) * range) >> 32) as i64) as i32
}

/// The threshold of Bernoulli(p): `round(p · 2³²)`, clamped to `[0, 2³²]`.
#[inline(always)]
pub fn bernoulli_threshold(p: f64) -> u64 {
    (p * 4_294_967_296.0).round().clamp(0.0, 4_294_967_296.0) as u64
}

/// Whether word `w` is a success of the Bernoulli draw with threshold `t`.
#[inline(always)]
pub fn bernoulli(w: u32, t: u64) -> bool {
    u64::from(w) < t
}

/// The Box–Muller pair `(r cos θ, r sin θ)` of words `w0`, `w1`.
#[inline(always)]
pub fn box_muller(w0: u32, w1: u32) -> (f64, f64) {
    let u1 = (f64::from(w0) + 0.5) * TWO_POW_M32;
    let r = (-2.0 * ln(u1)).sqrt();
    let (s, c) = sincos_2pi(f64::from(w1) * TWO_POW_M32);
    (r * c, r * s)
}

/// The standard normal of lane `lane` of block `b`.
#[inline(always)]
pub fn normal(b: &[u32; 4], lane: usize) -> f64 {
    let p = lane & 2;
    let (c, s) = box_muller(b[p], b[p + 1]);
    if lane & 1 == 0 {
        c
    } else {
        s
    }
}

/// The standard normal truncated to `[−alpha, alpha]` of element `i` (`alpha > 0`).
#[inline(always)]
pub fn truncated_normal(stream: &Stream, i: u64, alpha: f64) -> f64 {
    let mut last = 0.0;
    for attempt in 0..TRUNCATED_ATTEMPTS {
        let b = philox4x32_10(
            [i as u32, (i >> 32) as u32, stream.modifier, 1 + attempt],
            stream.seed,
        );
        if alpha >= 1.0 {
            let (z0, z1) = box_muller(b[0], b[1]);
            if z0.abs() <= alpha {
                return z0;
            }
            if z1.abs() <= alpha {
                return z1;
            }
            last = alpha * (2.0 * f64::from(b[2]) * TWO_POW_M32 - 1.0);
        } else {
            for p in [0, 2] {
                let u = alpha * (2.0 * f64::from(b[p]) * TWO_POW_M32 - 1.0);
                let v = (f64::from(b[p + 1]) + 0.5) * TWO_POW_M32;
                if -2.0 * ln(v) >= u * u {
                    return u;
                }
                last = u;
            }
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_and_sincos_agree_with_libm() {
        let mut worst_ln = 0.0f64;
        let mut worst_trig = 0.0f64;
        for k in 0..20_000u32 {
            let w = k.wrapping_mul(2_654_435_761);
            let x = (f64::from(w) + 0.5) * TWO_POW_M32;
            worst_ln = worst_ln.max((ln(x) - x.ln()).abs() / x.ln().abs().max(1e-300));
            let u = f64::from(w) * TWO_POW_M32;
            let (s, c) = sincos_2pi(u);
            let th = 2.0 * std::f64::consts::PI * u;
            worst_trig = worst_trig
                .max((s - th.sin()).abs())
                .max((c - th.cos()).abs());
        }
        assert!(worst_ln < 4e-16, "ln: {worst_ln:e}");
        assert!(worst_trig < 4e-15, "sincos: {worst_trig:e}");
        assert_eq!(ln(1.0), 0.0);
        assert_eq!(sincos_2pi(0.0), (0.0, 1.0));
        assert_eq!(sincos_2pi(0.25), (1.0, 0.0));
    }

    #[test]
    fn integer_ranges_and_thresholds() {
        assert_eq!(uniform_int(0, -3, 4), -3);
        assert_eq!(uniform_int(u32::MAX, -3, 4), 4);
        assert_eq!(uniform_int(u32::MAX, i32::MIN, i32::MAX), i32::MAX);
        assert_eq!(uniform_int(0, i32::MIN, i32::MAX), i32::MIN);
        assert_eq!(bernoulli_threshold(1.0), 1 << 32);
        assert!(bernoulli(u32::MAX, bernoulli_threshold(1.0)));
        assert!(!bernoulli(0, bernoulli_threshold(0.0)));
    }
}
