//! The scalar type the model is generic over, and branch-free `exp`/`ln` for `f32`.
//!
//! The model equations are written once ([`super::model`]) against [`Real`], and instantiated
//! for `f64` (the plain reference, using the standard library's `exp`/`ln`) and for `f32` (the
//! batch kernel). The `f32` instance cannot use `f32::exp`/`f32::ln`: those are calls into libm,
//! which LLVM cannot vectorise, and a TP06 step evaluates about 50 exponentials per cell. The
//! functions below are plain arithmetic and integer bit manipulation (no tables, no branches), so
//! the loop over cells in [`super::step_batch`] auto-vectorises with nothing more than SSE2.
//!
//! The model's exponentials of a variable times a constant, e^(k·x), go through [`exp2_f32`]
//! with log₂e folded into k ([`Real::exp_mul`]): 6 multiplications instead of [`exp_f32`]'s 10,
//! which is what bounds the AVX-512 kernel (its multiplier is busier than its adder).
//!
//! Accuracy (measured by the unit tests in this file against `f64::exp`/`f64::exp2`/`f64::ln`
//! over the ranges the model uses, and by `tools/ulp` over every f32 of the domains):
//! [`exp_f32`] and [`exp2_f32`] ≤ 1 ulp, [`ln_f32`] ≤ 2e-7 absolute error for arguments near
//! 1 and ≤ 3 ulp relative elsewhere — i.e. as good as libm for this purpose, which matters
//! because §5 of the paper is precisely about the accuracy of single-precision special
//! functions in this solver.

use std::ops::{Add, Div, Mul, Neg, Sub};

/// Floating-point operations the TP06 equations need.
///
/// Every method must be branch-free for the `f32` instance (select, not jump), so that the
/// per-cell loop vectorises.
pub trait Real:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// Below this |x| the Bernoulli function x/(eˣ−1) is taken from its Taylor series instead
    /// of the quotient, whose relative rounding error grows like ε/|x| (see `bernoulli`).
    const BERNOULLI_SERIES_LIMIT: f64;
    /// A model constant (always folded at compile time after inlining).
    fn c(x: f64) -> Self;
    fn exp(self) -> Self;
    /// e^(k·self) for a compile-time constant `k`. `f64` evaluates `(self·k).exp()`, the
    /// same bits as written out; `f32` folds log₂e into `k` and takes [`exp2_f32`], four
    /// multiplications fewer than `exp` (see [`exp2_f32`]).
    fn exp_mul(self, k: f64) -> Self;
    fn ln(self) -> Self;
    /// `self`, with any NaN replaced by the one quiet NaN: a NaN's sign and payload depend on
    /// the architecture (x86-64 makes −NaN of an invalid operation, aarch64 +NaN) and on the
    /// operand order the compiler chose, and the kernel promises the same bits everywhere.
    fn canonical_nan(self) -> Self;
    fn sqrt(self) -> Self;
    fn abs(self) -> Self;
    fn to_f64(self) -> f64;
}

impl Real for f64 {
    // Truncation of the series after x⁸ is |x|¹⁰/47_900_160 ≈ 2e-21 at 0.05, while the
    // quotient's rounding error there is ≈ 2.2e-16/0.05 ≈ 4e-15: both far below f64 needs.
    const BERNOULLI_SERIES_LIMIT: f64 = 0.05;
    #[inline(always)]
    fn c(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn exp(self) -> Self {
        f64::exp(self)
    }
    #[inline(always)]
    fn exp_mul(self, k: f64) -> Self {
        (self * k).exp()
    }
    #[inline(always)]
    fn ln(self) -> Self {
        f64::ln(self)
    }
    #[inline(always)]
    fn canonical_nan(self) -> Self {
        if self.is_nan() {
            f64::NAN
        } else {
            self
        }
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f64::abs(self)
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
}

impl Real for f32 {
    // At 0.5 the series truncation (x¹⁰ term, ≈ 2e-11) is negligible and the quotient's
    // rounding error (≈ 6e-8/0.5 ≈ 1.2e-7, ~2 ulp) is acceptable; closer to 0 the quotient
    // would lose digits (the I_CaL singularity at V = 15 mV).
    const BERNOULLI_SERIES_LIMIT: f64 = 0.5;
    #[inline(always)]
    fn c(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn exp(self) -> Self {
        exp_f32(self)
    }
    #[inline(always)]
    fn exp_mul(self, k: f64) -> Self {
        exp2_f32(self * (k * std::f64::consts::LOG2_E) as f32)
    }
    #[inline(always)]
    fn ln(self) -> Self {
        ln_f32(self)
    }
    #[inline(always)]
    fn canonical_nan(self) -> Self {
        poplar_core::fp::canonical_nan(self)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f32::abs(self)
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
}

/// 1.5·2²³: adding it to |x| < 2²² rounds x to an integer (round-to-nearest-even), which then
/// sits in the low mantissa bits. Used instead of `f32::round`, which is a libm call without
/// SSE4.1 and would stop vectorisation.
const ROUND_MAGIC: f32 = 12_582_912.0;

/// eˣ in single precision, branch-free and vectorisable.
///
/// Cody–Waite reduction x = k·ln2 + r with |r| ≤ ln2/2, a degree-6 polynomial for eʳ
/// (truncation 3e-9 relative, below half an ulp), and 2ᵏ assembled in the exponent bits. The argument is clamped to [−87, 88] so the result is always a finite normal number:
/// the model never needs more (its largest argument at |V| ≤ 200 mV is ≈ 70), and a finite
/// value keeps products like `0 · e^big` in discarded select branches from turning into NaN.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // ln 2 split so that k·LN2_HI is exact for |k| < 2⁸.
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let x = x.clamp(-87.0, 88.0);
    let kr = x * LOG2E + ROUND_MAGIC;
    let k_bits = kr.to_bits().wrapping_sub(ROUND_MAGIC.to_bits()) as i32;
    let k = kr - ROUND_MAGIC;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    // eʳ = 1 + r + r²·q(r), q a degree-4 polynomial fitted (weighted least squares, iterated
    // towards equi-oscillation) to (eʳ−1−r)/r² on |r| ≤ ln2/2: truncation error 3.1e-9
    // relative, well below f32 rounding (one term fewer than the Taylor series for the same
    // accuracy).
    let q = 0.001_381_454 * r + 0.008_368_745;
    let q = q * r + 0.041_668_39;
    let q = q * r + 0.166_665_21;
    let q = q * r + 0.499_999_94;
    let p = 1.0 + (r + r * r * q);
    scale_by_power_of_two(p, k_bits)
}

/// p·2ᵏ for p in [½, 2) and a result that is a normal number, by adding k to p's exponent
/// field: the same bits as the multiplication by 2ᵏ (exact when the result is normal), on the
/// integer units instead of the multiplier. Both callers clamp their argument so that the
/// result is normal: e^(−87) and 2^(−125.5) are above the smallest normal float.
/// Wrapping arithmetic (never wrapping here) keeps overflow checks in test builds from adding
/// a branch that would stop the cell loop from vectorising.
#[inline(always)]
fn scale_by_power_of_two(p: f32, k: i32) -> f32 {
    f32::from_bits((p.to_bits() as i32).wrapping_add(k.wrapping_shl(23)) as u32)
}

/// 2ᵗ in single precision, branch-free and vectorisable: the kernel's exponential of an
/// argument already scaled by log₂e ([`Real::exp_mul`] folds log₂e into the model's
/// constant). t = k + f with k = round(t), |f| ≤ ½ (exact), then 2ᶠ = 1 + f·q(f), q of degree
/// 5 fitted for least maximum relative error (iterated weighted least squares) on |f| ≤ ½:
/// truncation 2e-9; in f32 arithmetic at most 1 ulp from the correctly rounded result over
/// every f32 of the domain (`tools/ulp`, every level). No Cody–Waite
/// split (the reduction is exact) and no leading `r + r²·q` term: 6 multiplications where
/// [`exp_f32`] takes 10. The argument is clamped to [−125.5, 127], where the result is a normal
/// number (2^(−125.5) ≈ e^(−87.0), 2^127 ≈ e^(88.0)).
///
/// The rounding of t = x·log₂e itself costs e^x as much accuracy as that of x does, so a model
/// term e^(k·x) taken as 2^((k·log₂e)·x) is as accurate as e^(round(k·x)) taken exactly.
#[inline(always)]
pub fn exp2_f32(t: f32) -> f32 {
    let t = t.clamp(-125.5, 127.0);
    let kr = t + ROUND_MAGIC;
    let k_bits = kr.to_bits().wrapping_sub(ROUND_MAGIC.to_bits()) as i32;
    let f = t - (kr - ROUND_MAGIC);
    let q = 1.535_335e-4 * f + 1.339_887_5e-3;
    let q = q * f + 9.618_438e-3;
    let q = q * f + 5.550_332_4e-2;
    let q = q * f + 2.402_264_8e-1;
    let q = q * f + 6.931_472e-1;
    scale_by_power_of_two(1.0 + f * q, k_bits)
}

/// ln x in single precision for x > 0, branch-free and vectorisable.
///
/// Splits x = m·2ᵉ with m ∈ [√½, √2), then ln m = 2·atanh(s), s = (m−1)/(m+1), |s| ≤ 0.172,
/// summed to s⁹ (truncation 2s¹¹/11 ≈ 7e-10). Non-positive and subnormal inputs, and NaN, are
/// clamped to the smallest normal float (ln ≈ −87.3) instead of producing NaN/−∞:
/// concentrations in the model are positive, and a finite value keeps a corrupted cell from
/// spreading NaN. The clamp compares the bits as an integer: with `f32::max`, or a float
/// comparison and a select, a signalling NaN gave the smallest normal float on x86-64 and a
/// quiet NaN inside on aarch64 (`fmaxnm`; measured under qemu), so ln returned ±88–89 there.
#[inline(always)]
pub fn ln_f32(x: f32) -> f32 {
    const SQRT_HALF_BITS: u32 = 0x3f35_04f3;
    // Positive normal or +inf: bits in [0x0080_0000, 0x7f80_0000], one unsigned comparison.
    let normal = x.to_bits().wrapping_sub(0x0080_0000) <= 0x7f00_0000;
    let x = if normal { x } else { f32::MIN_POSITIVE };
    // Shift the bits so that mantissas ≥ √½ fall into exponent e, smaller ones into e−1.
    let ix = x.to_bits().wrapping_add(0x3f80_0000 - SQRT_HALF_BITS);
    // Exponent field ≤ 255 and mantissa < 2²³: no operation below can wrap; wrapping forms
    // keep overflow checks (test builds) out of the vectorised loop, as in `exp_f32`.
    let e = ((ix >> 23) as i32).wrapping_sub(127) as f32;
    let m = f32::from_bits((ix & 0x007f_ffff).wrapping_add(SQRT_HALF_BITS));
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let p = 1.0 / 9.0;
    let p = p * s2 + 1.0 / 7.0;
    let p = p * s2 + 1.0 / 5.0;
    let p = p * s2 + 1.0 / 3.0;
    let p = p * s2 + 1.0;
    let ln_m = 2.0 * s * p;
    e * std::f32::consts::LN_2 + ln_m
}

poplar_core::isa_dispatch! {
    /// [`exp_f32`] of every element of `x` into `out` (the shorter length), compiled for
    /// every instruction-set level and run at the active one ([`poplar_core::isa`]): the
    /// ULP harness measures the kernel maths at each level through it.
    pub fn exp_f32_slice(x: &[f32], out: &mut [f32]) {
        for (o, &v) in out.iter_mut().zip(x) {
            *o = exp_f32(v);
        }
    }
}

poplar_core::isa_dispatch! {
    /// [`exp2_f32`] of every element of `x` into `out`, at the active level (as
    /// [`exp_f32_slice`]).
    pub fn exp2_f32_slice(x: &[f32], out: &mut [f32]) {
        for (o, &v) in out.iter_mut().zip(x) {
            *o = exp2_f32(v);
        }
    }
}

poplar_core::isa_dispatch! {
    /// [`ln_f32`] of every element of `x` into `out`, at the active level (as
    /// [`exp_f32_slice`]).
    pub fn ln_f32_slice(x: &[f32], out: &mut [f32]) {
        for (o, &v) in out.iter_mut().zip(x) {
            *o = ln_f32(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulp_err(approx: f32, exact: f64) -> f64 {
        let e32 = exact as f32;
        let ulp = (f32::from_bits(e32.to_bits() + 1) - e32) as f64;
        (approx as f64 - exact).abs() / ulp
    }

    #[test]
    fn exp_f32_within_two_ulp() {
        let mut worst: f64 = 0.0;
        let mut x = -87.0f32;
        while x < 88.0 {
            let err = ulp_err(exp_f32(x), (x as f64).exp());
            worst = worst.max(err);
            x += 0.000_731;
        }
        assert!(worst <= 2.0, "worst exp_f32 error {worst} ulp");
    }

    #[test]
    fn exp2_f32_within_two_ulp() {
        let mut worst: f64 = 0.0;
        let mut t = -125.5f32;
        while t < 127.0 {
            worst = worst.max(ulp_err(exp2_f32(t), (t as f64).exp2()));
            t += 0.000_913;
        }
        // Every 97th f32 of the reduced argument's range |f| ≤ ½, where the polynomial works.
        for bits in (0..=0.5f32.to_bits()).step_by(97) {
            let f = f32::from_bits(bits);
            for f in [f, -f] {
                worst = worst.max(ulp_err(exp2_f32(f), (f as f64).exp2()));
            }
        }
        assert!(worst <= 2.0, "worst exp2_f32 error {worst} ulp");
    }

    #[test]
    fn exp2_f32_clamps_to_normal() {
        assert_eq!(exp2_f32(-1000.0), exp2_f32(-125.5));
        assert!(exp2_f32(-1000.0).is_normal());
        assert!(exp2_f32(1000.0).is_normal());
        assert_eq!(exp2_f32(0.0), 1.0);
        assert_eq!(exp2_f32(-3.0), 0.125);
        assert_eq!(exp2_f32(127.0), 2f32.powi(127));
    }

    #[test]
    fn exp_f32_clamps_to_finite() {
        assert!(exp_f32(1000.0).is_finite());
        assert!(exp_f32(-1000.0) > 0.0);
        assert_eq!(exp_f32(0.0), 1.0);
    }

    #[test]
    fn ln_f32_accurate() {
        let mut worst_rel: f64 = 0.0;
        let mut worst_abs: f64 = 0.0;
        let mut x = 1e-30f32;
        while x < 1e30 {
            let exact = (x as f64).ln();
            let got = ln_f32(x) as f64;
            if exact.abs() > 0.5 {
                worst_rel = worst_rel.max(ulp_err(got as f32, exact));
            } else {
                worst_abs = worst_abs.max((got - exact).abs());
            }
            x *= 1.000_37;
        }
        assert!(worst_rel <= 2.0, "worst ln_f32 error {worst_rel} ulp");
        assert!(
            worst_abs <= 2e-7,
            "worst ln_f32 abs error near 1: {worst_abs}"
        );
    }

    #[test]
    fn ln_f32_never_nan() {
        assert!(ln_f32(0.0).is_finite());
        assert!(ln_f32(-1.0).is_finite());
        assert!(ln_f32(1e-42).is_finite());
    }
}
