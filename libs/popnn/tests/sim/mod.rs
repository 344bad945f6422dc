//! Shared by the op tests (`ops.rs`, `pooling.rs`, `norm.rs`): a small target, a generator,
//! tensors with initial values, one run on the simulator, results read as f64, and the
//! element-wise check.
#![allow(dead_code)] // each test binary uses part of it

use poplar::rand::SplitMix64;
use poplar::{compile, f16, CompileOptions, DType, Engine, EngineOptions, Graph, Program};
use poplar::{Target, Tensor};

/// A 4-tile target with IEEE subnormals.
pub fn target() -> Target {
    Target {
        flush_subnormals: false,
        ..Target::custom(4, 256 * 1024)
    }
}

/// The tests' deterministic generator.
pub struct Rng(SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }
    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        self.0.f32_in(lo, hi)
    }
    pub fn vec(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.f32_in(lo, hi)).collect()
    }
    /// `n` values `0.01·(k − n/2)`, `k` a random permutation of `0..n`: at least 0.01 apart
    /// (in f16 they are rounded, and the reference takes the rounded values).
    pub fn distinct(&mut self, n: usize) -> Vec<f32> {
        let mut k: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            k.swap(i, self.below(i + 1));
        }
        k.iter()
            .map(|&k| 0.01 * (k as f32 - n as f32 / 2.0))
            .collect()
    }
}

/// A variable of `dt` spread linearly in `grain`s, holding `data` (rounded for f16).
pub fn var(
    g: &mut Graph,
    name: &str,
    dt: DType,
    shape: &[usize],
    data: &[f32],
    grain: usize,
) -> Tensor {
    let t = g.add_variable(dt, shape, name);
    g.map_linearly(&t, grain).unwrap();
    if dt == DType::F16 {
        let h: Vec<f16> = data.iter().map(|&v| f16::from_f32(v)).collect();
        g.set_initial_value(&t, &h).unwrap();
    } else {
        g.set_initial_value(&t, data).unwrap();
    }
    t
}

/// Compiles `prog` and runs it once on two threads.
pub fn run(g: &Graph, prog: Vec<Program>) -> Engine {
    let exe = compile(g, &[Program::seq(prog)], &CompileOptions::default())
        .unwrap_or_else(|e| panic!("compile: {e}"));
    let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
    e.run(0).unwrap();
    e
}

/// Host tensor `name` of `dt` as f64.
pub fn read(e: &mut Engine, name: &str, dt: DType) -> Vec<f64> {
    match dt {
        DType::F16 => e
            .read_tensor::<f16>(name)
            .unwrap()
            .iter()
            .map(|h| f64::from(h.to_f32()))
            .collect(),
        _ => e
            .read_tensor::<f32>(name)
            .unwrap()
            .iter()
            .map(|&v| f64::from(v))
            .collect(),
    }
}

/// `got` against `want` element-wise: NaN where and only where `want` is NaN, infinities
/// exactly, the rest within `abs + rel·|want|`; returns the largest finite error seen.
pub fn check(what: &str, got: &[f64], want: &[f64], abs: f64, rel: f64) -> f64 {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let mut worst = 0f64;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() {
            g == w
        } else {
            worst = worst.max((g - w).abs());
            (g - w).abs() <= abs + rel * w.abs()
        };
        assert!(ok, "{what}: element {i}: got {g}, want {w}");
    }
    worst
}

/// The values a tensor of `dt` holds of `v`, as f64.
pub fn held(v: &[f32], dt: DType) -> Vec<f64> {
    v.iter()
        .map(|&x| {
            if dt == DType::F16 {
                f64::from(f16::from_f32(x).to_f32())
            } else {
                f64::from(x)
            }
        })
        .collect()
}
