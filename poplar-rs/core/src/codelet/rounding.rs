//! Rounding f32 results to f16 as the chip does: to nearest (ties to even), or stochastically
//! when the engine runs with stochastic rounding (`EngineOptions::stochastic_rounding`).
//!
//! A codelet that produces f16 values from f32 arithmetic calls [`to_f16`] with the element's
//! index in its output. With stochastic rounding on, the engine gives each vertex execution a
//! key derived from the seed, the count of compute phases run so far, the tile and the vertex;
//! the random bits of element `i` are a hash of that key and `i`. So the bits depend only on
//! the seed and the program, never on how tiles are spread over host threads or in which order
//! worker calls run.
//!
//! A stochastically rounded value is one of the two f16 values that bracket `x`, the upper one
//! with probability `(x − lo) / (hi − lo)`: unbiased, `E[to_f16(x)] = x`. Values beyond the
//! f16 range round to infinity as with rounding to nearest; NaN stays NaN.

use std::cell::Cell;

use half::f16;

use crate::rand::{mix64, GOLDEN_GAMMA};

/// The rounding mode of the calling thread's current vertex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// To nearest, ties to even.
    Nearest,
    /// Stochastic, with this vertex execution's key.
    Stochastic { key: u64 },
}

thread_local! {
    static ROUNDING: Cell<Rounding> = const { Cell::new(Rounding::Nearest) };
}

/// Sets the calling thread's rounding mode (the engine does, around each vertex).
#[doc(hidden)]
#[inline]
pub fn set_rounding(r: Rounding) {
    ROUNDING.with(|c| c.set(r));
}

/// The calling thread's rounding mode.
pub fn rounding() -> Rounding {
    ROUNDING.with(|c| c.get())
}

/// The key of one vertex execution: `seed`, the engine's count of compute phases run,
/// the tile, and the vertex's index on its tile.
#[inline]
pub fn vertex_key(seed: u64, epoch: u64, tile: u32, vertex: u32) -> u64 {
    mix64(
        mix64(mix64(seed ^ 0x5851_F42D_4C95_7F2D) ^ epoch)
            ^ ((u64::from(tile) << 32) | u64::from(vertex)),
    )
}

/// `x` rounded to f16 with the calling thread's mode; `index` is the element's index in the
/// vertex's output (it selects the random bits under stochastic rounding).
#[inline]
pub fn to_f16(x: f32, index: usize) -> f16 {
    match rounding() {
        Rounding::Nearest => f16::from_f32(x),
        Rounding::Stochastic { key } => {
            stochastic_f16(x, mix64(key ^ (index as u64).wrapping_mul(GOLDEN_GAMMA)))
        }
    }
}

/// The f16 values next to `h` towards +∞ and −∞ (finite `h`).
fn neighbours(h: f16) -> (f16, f16) {
    let b = h.to_bits();
    let (up, down) = if b == 0x8000 || b == 0 {
        // ±0: the smallest subnormals.
        (0x0001, 0x8001)
    } else if b & 0x8000 == 0 {
        (b + 1, b - 1)
    } else {
        (b - 1, b + 1)
    };
    (f16::from_bits(up), f16::from_bits(down))
}

/// `x` rounded stochastically to f16 with the 64 random bits `random`: the upper of the two
/// f16 values bracketing `x` with probability `(x − lo) / (hi − lo)`.
pub(crate) fn stochastic_f16(x: f32, random: u64) -> f16 {
    let near = f16::from_f32(x);
    let back = near.to_f32();
    if back == x || !x.is_finite() || near.is_infinite() || near.is_nan() {
        return near;
    }
    let (up, down) = neighbours(near);
    let (lo, hi) = if back < x { (near, up) } else { (down, near) };
    let (l, h) = (f64::from(lo.to_f32()), f64::from(hi.to_f32()));
    if h.is_infinite() || l.is_infinite() {
        return near;
    }
    let p = (f64::from(x) - l) / (h - l);
    let u = (random >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    if u < p {
        hi
    } else {
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_is_the_default_and_exact_values_stay() {
        assert_eq!(rounding(), Rounding::Nearest);
        assert_eq!(to_f16(1.5, 0), f16::from_f32(1.5));
        for r in [0, u64::MAX, 12345] {
            assert_eq!(stochastic_f16(1.5, r), f16::from_f32(1.5));
            assert!(stochastic_f16(f32::NAN, r).is_nan());
            assert!(stochastic_f16(1e6, r).is_infinite());
        }
    }

    #[test]
    fn stochastic_rounding_brackets_and_is_unbiased() {
        // 1 + 2^-12 lies a quarter of the way from 1 to the next f16 (1 + 2^-10).
        let x = 1.0 + 2f32.powi(-12);
        let (lo, hi) = (
            f16::from_f32(1.0),
            f16::from_bits(f16::from_f32(1.0).to_bits() + 1),
        );
        let n = 200_000u64;
        let mut ups = 0u64;
        for i in 0..n {
            let r = stochastic_f16(x, mix64(i));
            assert!(r == lo || r == hi);
            ups += u64::from(r == hi);
        }
        // Binomial(n, 1/4): mean n/4, standard deviation sqrt(n · 3/16) ≈ 194; 5σ bound.
        let mean = n as f64 / 4.0;
        assert!(
            (ups as f64 - mean).abs() < 5.0 * (n as f64 * 3.0 / 16.0).sqrt(),
            "{ups}"
        );
        // Negative values and values between the subnormals round the same way.
        let y = -(2f32.powi(-24) * 1.5); // halfway between two f16 subnormals
        let r = stochastic_f16(y, 0);
        assert!(r.to_f32() == -(2f32.powi(-24)) || r.to_f32() == -(2f32.powi(-23)));
    }

    #[test]
    fn keys_differ_by_each_input() {
        let k = vertex_key(1, 2, 3, 4);
        assert_ne!(k, vertex_key(2, 2, 3, 4));
        assert_ne!(k, vertex_key(1, 3, 3, 4));
        assert_ne!(k, vertex_key(1, 2, 4, 4));
        assert_ne!(k, vertex_key(1, 2, 3, 5));
        assert_eq!(k, vertex_key(1, 2, 3, 4));
    }
}
