//! What popops' element-wise test files share: the target, inputs spread over tiles, a run
//! through the whole pipeline, the edge-value inputs and the ulp distance.
#![allow(dead_code)] // each test file uses a part of it

use super::common::Rng;
use poplar::{compile, CompileOptions, Element, Engine, EngineOptions, Graph, Program};
use poplar::{Target, Tensor};
use popops::expr::UnaryOpType as U;

/// A 4-tile IEEE target (subnormal flushing off), or with flushing.
pub fn target(flush: bool) -> Target {
    Target {
        flush_subnormals: flush,
        ..Target::custom(4, 256 * 1024)
    }
}

/// A variable of `data`, spread over the tiles in grains of `grain` elements.
pub fn input<T: Element>(
    g: &mut Graph,
    name: &str,
    shape: &[usize],
    data: &[T],
    grain: usize,
) -> Tensor {
    let t = g.add_variable(T::DTYPE, shape, name);
    g.map_linearly(&t, grain).unwrap();
    g.set_initial_value(&t, data).unwrap();
    t
}

pub fn run(g: &Graph, prog: Vec<Program>) -> Engine {
    let exe = compile(g, &[Program::seq(prog)], &CompileOptions::default())
        .unwrap_or_else(|e| panic!("compile: {e}"));
    let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
    e.run(0).unwrap();
    e
}

/// Edge values (±0, subnormals, ±inf, NaN, the extremes), values near the ops' interesting
/// points, random values of moderate size and random bit patterns.
pub fn f32_inputs(seed: u64) -> Vec<f32> {
    let mut v: Vec<f32> = poplar::isa::EDGE_VALUES.to_vec();
    v.extend([
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
        0.5,
        -0.5,
        1.5,
        -2.5,
        1.0,
        -1.0,
        1e-3,
        -1e-6,
        88.7,
        -103.0,
        1e10,
        -3e30,
        12.0,
        0.1,
    ]);
    let mut r = Rng::new(seed);
    for _ in 0..80 {
        v.push(r.f32_in(-8.0, 8.0));
    }
    for _ in 0..40 {
        v.push(f32::from_bits(r.next_u64() as u32));
    }
    v
}

/// Distance in units in the last place (f32), NaN only near NaN.
pub fn ulps(a: f32, b: f32) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    let o = |x: f32| {
        let b = x.to_bits();
        if b >> 31 == 1 {
            -i64::from(b & 0x7fff_ffff)
        } else {
            i64::from(b)
        }
    };
    (o(a) - o(b)).unsigned_abs()
}

/// erf in f64 by the series `2/√π · e^{-x²} · Σ 2ⁿ x^{2n+1} / (1·3···(2n+1))` (no
/// cancellation; independent of the codelet's alternating Taylor series).
pub fn erf_ref(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.abs() > 6.0 {
        return x.signum();
    }
    let mut term = x;
    let mut sum = x;
    let mut k = 1.0;
    while term.abs() > 1e-18 * sum.abs() {
        k += 2.0;
        term *= 2.0 * x * x / k;
        sum += term;
    }
    2.0 / std::f64::consts::PI.sqrt() * (-x * x).exp() * sum
}

pub fn sign_ref(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x
    }
}

/// The bound of each unary float op (ulps), with its f64 reference.
pub type Ref1 = fn(f64) -> f64;
pub fn unary_table() -> Vec<(U, Ref1, u64)> {
    vec![
        (U::Abs, f64::abs, 0),
        (U::Sign, sign_ref, 0),
        (U::Neg, |x| -x, 0),
        (U::Sqrt, f64::sqrt, 0),
        (U::Rsqrt, |x| 1.0 / x.sqrt(), 2),
        (U::Cbrt, f64::cbrt, 1),
        (U::Exp, f64::exp, 1),
        (U::Exp2, f64::exp2, 1),
        (U::Expm1, f64::exp_m1, 1),
        (U::Log, f64::ln, 1),
        (U::Log1p, f64::ln_1p, 1),
        (U::Sin, f64::sin, 1),
        (U::Cos, f64::cos, 1),
        (U::Tan, f64::tan, 1),
        (U::Tanh, f64::tanh, 2),
        (U::Sigmoid, |x| 1.0 / (1.0 + (-x).exp()), 3),
        (U::Erf, erf_ref, 1),
        (U::Floor, f64::floor, 0),
        (U::Ceil, f64::ceil, 0),
        (U::Round, f64::round, 0),
        (U::Trunc, f64::trunc, 0),
        (U::Square, |x| x * x, 0),
        (U::Inverse, |x| 1.0 / x, 0),
    ]
}

/// The stated bound of a unary op (also quoted in docs/popops.md).
pub fn ulp_bound(op: U) -> u64 {
    unary_table()
        .into_iter()
        .find(|r| r.0 == op)
        .map_or(0, |r| r.2)
}

/// The index of the first extreme element of each line of `data` (`shape`) along `axis`;
/// NaN: the first NaN (numpy's argmax/argmin).
pub fn host_arg(data: &[f64], shape: &[usize], axis: usize, max: bool) -> Vec<u32> {
    let inner: usize = shape[axis + 1..].iter().product();
    let n = shape[axis];
    let outer: usize = shape[..axis].iter().product();
    let mut out = Vec::new();
    for o in 0..outer {
        for i in 0..inner {
            let line: Vec<f64> = (0..n).map(|k| data[(o * n + k) * inner + i]).collect();
            let idx = match line.iter().position(|v| v.is_nan()) {
                Some(p) => p,
                None => {
                    let mut best = 0;
                    for (k, &v) in line.iter().enumerate() {
                        if (max && v > line[best]) || (!max && v < line[best]) {
                            best = k;
                        }
                    }
                    best
                }
            };
            out.push(idx as u32);
        }
    }
    out
}

// The host reference of the reductions (reduce.rs, reduce_spread.rs).

/// Row-major strides of `shape`.
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

/// The host reference: `fold(init, f)` over each output's elements, in row-major order.
pub fn host_reduce<T: Copy, A: Copy>(
    data: &[T],
    shape: &[usize],
    dims: &[usize],
    init: A,
    f: impl Fn(A, T) -> A,
) -> Vec<A> {
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !dims.contains(d)).collect();
    let out_shape: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
    let out_n: usize = out_shape.iter().product();
    let (is, os) = (strides(shape), strides(&out_shape));
    let mut out = vec![init; out_n];
    for (flat, &x) in data.iter().enumerate() {
        let o: usize = kept
            .iter()
            .zip(&os)
            .map(|(&d, &s)| (flat / is[d]) % shape[d] * s)
            .sum();
        out[o] = f(out[o], x);
    }
    out
}

/// The f64 reference of `op` over f32 values, and the sum of magnitudes for the bound.
pub fn ref_f64(
    op: popops::Operation,
    data: &[f32],
    shape: &[usize],
    dims: &[usize],
) -> Vec<(f64, f64)> {
    let init = match op {
        popops::Operation::Mul => 1.0,
        popops::Operation::Max => f64::NEG_INFINITY,
        popops::Operation::Min => f64::INFINITY,
        _ => 0.0,
    };
    host_reduce(data, shape, dims, (init, 0.0f64), |(a, m), x| {
        let x = f64::from(x);
        let v = match op {
            popops::Operation::Add => a + x,
            popops::Operation::SquareAdd => a + x * x,
            popops::Operation::Mul => a * x,
            popops::Operation::Max if a.is_nan() || x.is_nan() => f64::NAN,
            popops::Operation::Min if a.is_nan() || x.is_nan() => f64::NAN,
            popops::Operation::Max => a.max(x),
            popops::Operation::Min => a.min(x),
            _ => unreachable!(),
        };
        let mag = match op {
            popops::Operation::SquareAdd => x * x,
            popops::Operation::Mul => 0.0,
            _ => x.abs(),
        };
        (v, m + mag)
    })
}

/// `got` against the f64 reference: exact for max/min, within `n · 2^-23 · Σ|x|` for sums
/// (n elements per output: each addition of the reassociated sum rounds once), within
/// `n · 2^-23 · |r|` for products.
pub fn check_f32(op: popops::Operation, got: &[f32], want: &[(f64, f64)], n: usize, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let eps = f64::from(f32::EPSILON);
    for (i, (&g, &(w, mag))) in got.iter().zip(want).enumerate() {
        let g = f64::from(g);
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() || matches!(op, popops::Operation::Max | popops::Operation::Min) {
            g == w
        } else {
            let bound = match op {
                popops::Operation::Mul => (n as f64 + 1.0) * eps * w.abs(),
                _ => (n as f64 + 1.0) * eps * mag,
            };
            (g - w).abs() <= bound
        };
        assert!(ok, "{what}: element {i}: got {g}, want {w} (Σ|x| {mag})");
    }
}
