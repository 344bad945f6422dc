//! The ULP harness: how far the f32 functions that codelets use are from the correctly rounded
//! result, over every f32 input (or sampled pairs for division), with the host's IEEE
//! arithmetic and with the chip's subnormal flushing (`poplar_core::fp`).
//!
//! The reference of `f(x)` is `f64` of the same function on `x` converted exactly, rounded to
//! f32 once. With flushing, the reference follows the chip's rule too: a subnormal input is
//! taken as zero and a subnormal reference result becomes zero (sign kept).

use std::ops::Range;
use std::time::Instant;

use poplar_core::fp::{flush_f32, FlushGuard};
use poplar_core::rand::SplitMix64;
use rayon::prelude::*;
use serde::Serialize;

/// A function applied to every element of a slice (`x`, `out`).
pub type SliceFn = fn(&[f32], &mut [f32]);

/// A unary function under test and its f64 reference.
#[derive(Clone, Copy)]
pub struct Unary {
    pub name: &'static str,
    pub f: fn(f32) -> f32,
    pub reference: fn(f64) -> f64,
    /// The inputs the function is meant for (`None`: every f32). The others are counted, not
    /// measured.
    pub domain: Option<fn(f32) -> bool>,
    /// The function over a slice, compiled for every instruction-set level and run at the
    /// active one (`poplar_core::isa`): what the sweep calls when given, so that each level's
    /// code is measured (a per-element call through `f` would run the baseline's).
    pub batch: Option<SliceFn>,
}

/// [−87, 88]: the range the TP06 kernel's `exp_f32` serves (it clamps its argument to it, by
/// design, so that the cell model's loop stays branch-free and every result finite and normal).
fn exp_domain(x: f32) -> bool {
    (-87.0..=88.0).contains(&x)
}

/// [−125.5, 127]: the range the TP06 kernel's `exp2_f32` serves (its clamp, as `exp_domain`).
fn exp2_domain(x: f32) -> bool {
    (-125.5..=127.0).contains(&x)
}

/// Positive normal inputs, finite: the range of the TP06 kernel's `ln_f32`.
fn ln_domain(x: f32) -> bool {
    x.is_normal() && x > 0.0
}

/// The functions codelets use: the standard library's, and the TP06 kernel's approximations.
pub fn unary_functions() -> Vec<Unary> {
    let std = |name, f, reference| Unary {
        name,
        f,
        reference,
        domain: None,
        batch: None,
    };
    vec![
        std("exp", f32::exp, f64::exp),
        std("expm1", f32::exp_m1, f64::exp_m1),
        std("ln", f32::ln, f64::ln),
        std("sqrt", f32::sqrt, f64::sqrt),
        Unary {
            name: "tp06-exp",
            f: tp06::real::exp_f32,
            reference: f64::exp,
            domain: Some(exp_domain),
            batch: Some(tp06::real::exp_f32_slice),
        },
        Unary {
            name: "tp06-exp2",
            f: tp06::real::exp2_f32,
            reference: f64::exp2,
            domain: Some(exp2_domain),
            batch: Some(tp06::real::exp2_f32_slice),
        },
        Unary {
            name: "tp06-ln",
            f: tp06::real::ln_f32,
            reference: f64::ln,
            domain: Some(ln_domain),
            batch: Some(tp06::real::ln_f32_slice),
        },
    ]
    .into_iter()
    .chain(popops_functions().into_iter().map(|(u, _)| u))
    .collect()
}

/// popops' transcendental functions as the `Map<float>` vertices evaluate them
/// ([`codelets::map::unary_f32`]), each with the bound `docs/popops.md` states (ulps over
/// every f32 input, with the host's IEEE arithmetic). `erf`'s reference is musl's f64 `erf`
/// (the `libm` crate), independent of the vertex's Taylor series.
pub fn popops_functions() -> Vec<(Unary, u64)> {
    macro_rules! popops {
        ($($name:literal, $op:ident, $reference:expr, $bound:expr;)*) => {
            vec![$({
                fn batch(xs: &[f32], out: &mut [f32]) {
                    codelets::map::unary_f32(codelets::map::Op::$op, xs, out)
                        .expect("a unary f32 operation");
                }
                fn one(x: f32) -> f32 {
                    let mut out = [0.0];
                    batch(&[x], &mut out);
                    out[0]
                }
                (
                    Unary { name: $name, f: one, reference: $reference, domain: None, batch: Some(batch) },
                    $bound,
                )
            },)*]
        };
    }
    popops! {
        "popops-sqrt", Sqrt, f64::sqrt, 0;
        "popops-rsqrt", Rsqrt, |x: f64| 1.0 / x.sqrt(), 2;
        "popops-cbrt", Cbrt, f64::cbrt, 1;
        "popops-exp", Exp, f64::exp, 1;
        "popops-exp2", Exp2, f64::exp2, 1;
        "popops-expm1", Expm1, f64::exp_m1, 1;
        "popops-log", Log, f64::ln, 1;
        "popops-log1p", Log1p, f64::ln_1p, 1;
        "popops-sin", Sin, f64::sin, 1;
        "popops-cos", Cos, f64::cos, 1;
        "popops-tan", Tan, f64::tan, 1;
        "popops-tanh", Tanh, f64::tanh, 2;
        "popops-sigmoid", Sigmoid, |x: f64| 1.0 / (1.0 + (-x).exp()), 3;
        "popops-inverse", Inverse, |x: f64| 1.0 / x, 0;
        "popops-erf", Erf, libm::erf, 1;
    }
}

/// The position of `x` on the line of f32 values: adjacent values differ by 1, ±0 are both 0.
pub fn ordinal(x: f32) -> i64 {
    let b = x.to_bits();
    let m = i64::from(b & 0x7fff_ffff);
    if b & 0x8000_0000 != 0 {
        -m
    } else {
        m
    }
}

/// ULPs between two non-NaN f32 values.
pub fn ulp_distance(a: f32, b: f32) -> u64 {
    (ordinal(a) - ordinal(b)).unsigned_abs()
}

/// Histogram buckets.
pub const BUCKETS: [&str; 8] = [
    "0",
    "1",
    "2",
    "3",
    "4-7",
    "8-15",
    ">=16",
    "nan/inf mismatch",
];

/// What one sweep found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Sweep {
    pub function: String,
    pub mode: String,
    /// The instruction-set level the function's code ran at (`baseline`, `avx2`, `avx512`).
    pub isa: String,
    pub inputs: u64,
    pub max_ulp: u64,
    /// Up to five inputs where `max_ulp` occurs: (input bits, input, got, expected).
    pub worst: Vec<(u32, f32, f32, f32)>,
    pub histogram: [u64; 8],
    /// Inputs outside the function's domain (not measured).
    pub outside_domain: u64,
    pub seconds: f64,
}

impl Sweep {
    #[inline]
    fn record(&mut self, x: f32, got: f32, want: f32) {
        self.inputs += 1;
        if got.to_bits() == want.to_bits() {
            self.histogram[0] += 1;
            return;
        }
        self.record_slow(x, got, want);
    }

    #[cold]
    fn record_slow(&mut self, x: f32, got: f32, want: f32) {
        let bucket = if got.is_nan() && want.is_nan() {
            0
        } else if got.is_nan() != want.is_nan() || got.is_infinite() != want.is_infinite() {
            7
        } else {
            let d = ulp_distance(got, want);
            if d > self.max_ulp {
                self.max_ulp = d;
                self.worst.clear();
            }
            if d == self.max_ulp && d > 0 && self.worst.len() < 5 {
                self.worst.push((x.to_bits(), x, got, want));
            }
            match d {
                0..=3 => d as usize,
                4..=7 => 4,
                8..=15 => 5,
                _ => 6,
            }
        };
        self.histogram[bucket] += 1;
    }

    fn merge(mut self, o: Sweep) -> Sweep {
        self.inputs += o.inputs;
        self.outside_domain += o.outside_domain;
        for (a, b) in self.histogram.iter_mut().zip(o.histogram) {
            *a += b;
        }
        if o.max_ulp > self.max_ulp {
            self.max_ulp = o.max_ulp;
            self.worst = o.worst;
        } else if o.max_ulp == self.max_ulp {
            self.worst.extend(o.worst);
            self.worst.sort_by_key(|w| w.0);
            self.worst.truncate(5);
        }
        self
    }
}

fn mode_name(flush: bool) -> &'static str {
    if flush {
        "flush"
    } else {
        "ieee"
    }
}

/// Inputs per parallel task.
const CHUNK: u64 = 1 << 20;

/// `f` over the f32 bit patterns in `bits`, in parallel, against its reference.
pub fn sweep_unary(u: &Unary, bits: Range<u64>, flush: bool) -> Sweep {
    sweep_bits(u, bits.end - bits.start, |i| bits.start + i, flush)
}

/// `f` over every `stride`-th f32 bit pattern (0, `stride`, 2·`stride`, …): a sample of the
/// whole line of f32 values, every binade and both signs, for a quick check of a bound.
pub fn sweep_unary_every(u: &Unary, stride: u64, flush: bool) -> Sweep {
    let stride = stride.max(1);
    sweep_bits(u, ALL.end.div_ceil(stride), |i| i * stride, flush)
}

/// `f` over the bit patterns `at(0..n)`, in parallel, against its reference.
fn sweep_bits(u: &Unary, n: u64, at: impl Fn(u64) -> u64 + Sync, flush: bool) -> Sweep {
    let t0 = Instant::now();
    let chunks = n.div_ceil(CHUNK);
    let mut s = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let _fp = FlushGuard::new(flush);
            let lo = c * CHUNK;
            let hi = (lo + CHUNK).min(n);
            let mut s = Sweep::default();
            let xs: Vec<f32> = (lo..hi)
                .map(|i| f32::from_bits(at(i) as u32))
                .filter(|&x| u.domain.is_none_or(|d| d(x)))
                .collect();
            s.outside_domain = (hi - lo) - xs.len() as u64;
            let got: Vec<f32> = match u.batch {
                Some(batch) => {
                    let mut out = vec![0.0f32; xs.len()];
                    batch(std::hint::black_box(&xs), &mut out);
                    out
                }
                None => xs.iter().map(|&x| (u.f)(std::hint::black_box(x))).collect(),
            };
            for (&x, &got) in xs.iter().zip(&got) {
                let want = if flush {
                    let xr = flush_f32(x);
                    flush_f32((u.reference)(f64::from(xr)) as f32)
                } else {
                    (u.reference)(f64::from(x)) as f32
                };
                s.record(x, got, want);
            }
            s
        })
        .reduce(Sweep::default, Sweep::merge);
    s.function = u.name.to_string();
    s.mode = mode_name(flush).to_string();
    s.isa = poplar_core::isa::active().name().to_string();
    s.seconds = t0.elapsed().as_secs_f64();
    s
}

/// Every f32 input.
pub const ALL: Range<u64> = 0..1 << 32;

/// `a / b` for `samples` pairs of random f32 bit patterns (pair `i` from the first output of SplitMix64 seeded `seed + i`), in
/// parallel, against the f64 quotient rounded to f32.
pub fn sweep_division(samples: u64, seed: u64, flush: bool, div: fn(f32, f32) -> f32) -> Sweep {
    let t0 = Instant::now();
    let chunks = samples.div_ceil(CHUNK);
    let mut s = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let _fp = FlushGuard::new(flush);
            let lo = c * CHUNK;
            let hi = (lo + CHUNK).min(samples);
            let mut s = Sweep::default();
            for i in lo..hi {
                let r = SplitMix64::new(seed.wrapping_add(i)).next_u64();
                let (a, b) = (f32::from_bits(r as u32), f32::from_bits((r >> 32) as u32));
                let got = div(std::hint::black_box(a), std::hint::black_box(b));
                let want = if flush {
                    let (a, b) = (flush_f32(a), flush_f32(b));
                    flush_f32((f64::from(a) / f64::from(b)) as f32)
                } else {
                    (f64::from(a) / f64::from(b)) as f32
                };
                s.record(a, got, want);
            }
            s
        })
        .reduce(Sweep::default, Sweep::merge);
    s.function = "div".to_string();
    s.mode = mode_name(flush).to_string();
    s.isa = poplar_core::isa::active().name().to_string();
    s.seconds = t0.elapsed().as_secs_f64();
    s
}

/// The division codelets use.
pub fn f32_div(a: f32, b: f32) -> f32 {
    a / b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Around 1.0 (2^24 inputs), all positive subnormals (2^23), and the NaNs and infinities
    /// at the top of the positive range.
    fn ranges() -> Vec<Range<u64>> {
        let one = u64::from(1.0f32.to_bits());
        vec![
            one - (1 << 23)..one + (1 << 23),
            0..1 << 23,
            0x7f00_0000..0x8000_0000,
        ]
    }

    fn sqrt_like(f: fn(f32) -> f32) -> Unary {
        Unary {
            name: "test",
            f,
            reference: f64::sqrt,
            domain: None,
            batch: None,
        }
    }

    #[test]
    fn ulp_distances() {
        assert_eq!(ulp_distance(1.0, f32::from_bits(1.0f32.to_bits() + 1)), 1);
        assert_eq!(ulp_distance(0.0, -0.0), 0);
        assert_eq!(ulp_distance(f32::from_bits(1), -f32::from_bits(1)), 2);
        assert_eq!(ulp_distance(f32::MIN_POSITIVE, 0.0), 1 << 23);
        assert_eq!(ulp_distance(-1.0, -f32::from_bits(1.0f32.to_bits() + 3)), 3);
    }

    #[test]
    fn std_sqrt_is_correctly_rounded() {
        for r in ranges() {
            for flush in [false, true] {
                let s = sweep_unary(&sqrt_like(f32::sqrt), r.clone(), flush);
                assert_eq!(s.max_ulp, 0, "{r:?} {flush}: {s:?}");
                assert_eq!(s.histogram[7], 0);
                assert_eq!(s.inputs, r.end - r.start);
                assert_eq!(s.outside_domain, 0);
            }
        }
    }

    #[test]
    fn a_perturbed_function_is_caught_where_it_errs() {
        // sqrt nudged up by one ulp for every input whose bits end in 0x7ff.
        fn bad(x: f32) -> f32 {
            let r = x.sqrt();
            if x.to_bits() & 0xfff == 0x7ff && r.is_finite() && r > 0.0 {
                f32::from_bits(r.to_bits() + 1)
            } else {
                r
            }
        }
        let r = ranges()[0].clone();
        let s = sweep_unary(&sqrt_like(bad), r, false);
        assert_eq!(s.max_ulp, 1);
        assert_eq!(s.histogram[1], (1 << 24) / 4096);
        assert!(
            s.worst.iter().all(|w| w.0 & 0xfff == 0x7ff),
            "{:?}",
            s.worst
        );
    }

    #[test]
    fn flushing_takes_subnormal_inputs_as_zero() {
        let s = sweep_unary(&sqrt_like(f32::sqrt), 1..1 << 23, true);
        assert_eq!(s.max_ulp, 0);
        if poplar_core::fp::hardware_flush() {
            // With the hardware modes, sqrt of a subnormal is sqrt(0) = 0, as the reference
            // says; without flushing the reference the results would be ~1e-20, not zero.
            let _fp = FlushGuard::new(true);
            assert_eq!(
                f32::sqrt(std::hint::black_box(f32::from_bits(1 << 20))),
                0.0
            );
        }
    }

    #[test]
    fn division_samples_are_deterministic_and_correctly_rounded() {
        let a = sweep_division(1 << 21, 7, false, f32_div);
        let b = sweep_division(1 << 21, 7, false, f32_div);
        assert_eq!(a.histogram, b.histogram);
        assert_eq!(a.max_ulp, 0, "{a:?}");
        // A division that is off by one ulp now and then is caught.
        fn bad(a: f32, b: f32) -> f32 {
            let q = a / b;
            if a.to_bits().is_multiple_of(1000) && q.is_finite() && q != 0.0 {
                f32::from_bits(q.to_bits() ^ 1)
            } else {
                q
            }
        }
        assert_eq!(sweep_division(1 << 21, 7, false, bad).max_ulp, 1);
    }

    /// popops' functions, as the `Map<float>` vertices run them, keep the bounds
    /// `docs/popops.md` states, on a sample of every 4,099th f32 (about a million inputs over
    /// every binade; the `ulp` command sweeps them all).
    #[test]
    fn popops_functions_keep_their_documented_bounds() {
        let fs = popops_functions();
        assert_eq!(fs.len(), 15);
        for (u, bound) in fs {
            let s = sweep_unary_every(&u, 4099, false);
            assert!(s.inputs > 1_000_000, "{s:?}");
            println!(
                "{}: at most {} ulp over {} inputs",
                u.name, s.max_ulp, s.inputs
            );
            assert!(
                s.max_ulp <= bound,
                "{}: {} ulp > {bound}: {:?}",
                u.name,
                s.max_ulp,
                s.worst
            );
        }
    }

    /// With the chip's flushing, popops' functions read a subnormal input as zero, as the
    /// chip does: the full sweep found cbrt, log, log1p, sin and tan returning f(subnormal)
    /// (the host's libm inspects tiny arguments with integer instructions, which DAZ does not
    /// reach) until the evaluator passed their argument through one multiply.
    #[test]
    fn popops_functions_read_subnormal_inputs_as_zero_when_flushing() {
        if !poplar_core::fp::hardware_flush() {
            return; // a host without flush modes runs IEEE arithmetic only
        }
        let subnormals = [
            1..0x4001,
            0x007f_c000..0x0080_0000,
            0x8000_0001..0x8000_4001,
        ];
        for (u, bound) in popops_functions() {
            for r in subnormals.clone() {
                let s = sweep_unary(&u, r, true);
                assert!(
                    s.max_ulp <= bound && s.histogram[BUCKETS.len() - 1] == 0,
                    "{}: {s:?}",
                    u.name
                );
            }
        }
    }

    #[test]
    fn the_tp06_exponentials_are_measured_on_their_domains() {
        for (name, beyond) in [("tp06-exp", -100.0f32), ("tp06-exp2", -130.0)] {
            let u = unary_functions()
                .into_iter()
                .find(|u| u.name == name)
                .unwrap();
            // [1, 2) and large negatives beyond the domain.
            let one = u64::from(1.0f32.to_bits());
            let s = sweep_unary(&u, one..one + (1 << 23), false);
            assert_eq!(s.outside_domain, 0, "{name}");
            assert!(s.max_ulp <= 2, "{s:?}");
            let neg = u64::from(beyond.to_bits());
            let s = sweep_unary(&u, neg..neg + 1000, false);
            assert_eq!(s.outside_domain, 1000, "{name}");
            assert_eq!(s.inputs, 0, "{name}");
        }
    }
}
