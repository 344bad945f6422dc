//! What the device tests share: a small configuration and a few training steps on the engine.

#![allow(dead_code)] // each test file uses its part

use mlp::config::{Config, Reduction};
use mlp::data::Dataset;
use mlp::device::{self, Device};
use mlp::model::{self, Shape};

/// 8 inputs, 16 hidden units, 4 classes, 200 points per class, 3 sample tiles, GA 2, Mean at
/// lr 0.05, seed 3.
pub fn small(replicas: u32, micro_batch: usize) -> Config {
    Config {
        replicas,
        micro_batch,
        accumulate: 2,
        epochs: 1,
        lr: 0.05,
        reduction: Reduction::Mean,
        tiles: 3,
        shape: Shape {
            inputs: 8,
            hidden: 16,
            classes: 4,
        },
        per_class: 200,
        seed: 3,
        optimizer: mlp::optim::Optimizer::Sgd,
        shard: None,
        state_chunks: None,
    }
}

/// Runs `steps` training steps of `cfg` on the engine; returns the parameters.
pub fn device_params(cfg: &Config, train: &Dataset, steps: usize, threads: usize) -> Vec<f32> {
    mlp::link();
    let c = device::build(cfg, &device::machine(cfg.replicas)).unwrap();
    let mut d = Device::new(&c.exe, cfg, threads).unwrap();
    d.set_params(&model::init(cfg.shape, cfg.seed)).unwrap();
    d.feed(train, 0, steps).unwrap();
    for _ in 0..steps {
        d.step().unwrap();
    }
    d.params().unwrap()
}

/// The bit patterns of `p`, for bit-for-bit comparisons.
pub fn bits(p: &[f32]) -> Vec<u32> {
    p.iter().map(|v| v.to_bits()).collect()
}

/// The summed f64 gradient of the samples `range` of `x`, `y` at `p` (written independently of
/// `model.rs`: the layer layout is `[W1 (h × d), b1 (h), W2 (c × h), b2 (c)]`).
pub fn grad64(
    c: &Config,
    p: &[f64],
    data: &mlp::data::Dataset,
    range: std::ops::Range<usize>,
) -> Vec<f64> {
    let (d, h, k) = (c.shape.inputs, c.shape.hidden, c.shape.classes);
    let (b1, w2, b2) = (d * h, d * h + h, d * h + h + k * h);
    let mut g = vec![0.0; p.len()];
    for i in range {
        let (x, y) = data.sample(i);
        let z: Vec<f64> = (0..h)
            .map(|j| p[b1 + j] + (0..d).map(|q| p[j * d + q] * f64::from(x[q])).sum::<f64>())
            .collect();
        let a: Vec<f64> = z.iter().map(|&v| v.max(0.0)).collect();
        let l: Vec<f64> = (0..k)
            .map(|o| p[b2 + o] + (0..h).map(|j| p[w2 + o * h + j] * a[j]).sum::<f64>())
            .collect();
        let m = l.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = l.iter().map(|v| (v - m).exp()).collect();
        let s: f64 = e.iter().sum();
        let dl: Vec<f64> = (0..k)
            .map(|o| e[o] / s - if o == y as usize { 1.0 } else { 0.0 })
            .collect();
        for o in 0..k {
            g[b2 + o] += dl[o];
            for j in 0..h {
                g[w2 + o * h + j] += dl[o] * a[j];
            }
        }
        for j in 0..h {
            if z[j] <= 0.0 {
                continue;
            }
            let da: f64 = (0..k).map(|o| dl[o] * p[w2 + o * h + j]).sum();
            g[b1 + j] += da;
            for q in 0..d {
                g[j * d + q] += da * f64::from(x[q]);
            }
        }
    }
    g
}

/// `steps` steps of `c` in f64: the global batch's summed gradient, scaled, then the oracle's
/// update.
pub fn oracle(c: &Config, data: &mlp::data::Dataset, init: &[f32], steps: usize) -> Vec<f64> {
    let mut p: Vec<f64> = init.iter().map(|&v| f64::from(v)).collect();
    let mut o = mlp::optim::Oracle::new(c.optimizer, p.len());
    let b = c.global_batch();
    let s = match c.reduction {
        Reduction::Sum => 1.0,
        Reduction::Mean => 1.0 / b as f64,
    };
    for step in 0..steps {
        let g = grad64(c, &p, data, step * b..(step + 1) * b);
        let g: Vec<f64> = g.iter().map(|v| v * s).collect();
        o.update(&mut p, &g, f64::from(c.lr));
    }
    p
}
