//! What the device tests share: a small configuration, a few training steps on popnn's
//! trainer, and the f64 reference (`popnn::host::Reference`) over the same samples.

#![allow(dead_code)] // each test file uses its part

use mlp::config::{Config, Reduction, Shape};
use mlp::data::Dataset;
use mlp::run::Trainer;
use popnn::host::Reference;
use popnn::LayerParams;

/// 8 inputs, 16 hidden units, 4 classes, 200 points per class, 3 tiles, GA 2, Mean at lr 0.05,
/// seed 3.
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
            hidden: vec![16],
            classes: 4,
        },
        per_class: 200,
        seed: 3,
        ..Config::default()
    }
}

/// A trainer of `cfg` after `steps` training steps on `train` with `threads` threads.
pub fn trainer_after(cfg: &Config, train: &Dataset, steps: usize, threads: usize) -> Trainer {
    mlp::link();
    let c = mlp::run::build(cfg).unwrap();
    let mut t = mlp::run::trainer(cfg, &c, threads).unwrap();
    mlp::run::feed(&mut t, cfg, train, 0, steps).unwrap();
    for _ in 0..steps {
        t.step().unwrap();
    }
    t
}

/// Runs `steps` training steps of `cfg` on the engine; returns the parameters, flat.
pub fn device_params(cfg: &Config, train: &Dataset, steps: usize, threads: usize) -> Vec<f32> {
    mlp::run::flat(&trainer_after(cfg, train, steps, threads).params().unwrap())
}

/// The initial parameters of `cfg`, flat.
pub fn init(cfg: &Config) -> Vec<f32> {
    mlp::run::flat(&cfg.model().unwrap().init(cfg.seed))
}

/// The bit patterns of `p`, for bit-for-bit comparisons.
pub fn bits(p: &[f32]) -> Vec<u32> {
    p.iter().map(|v| v.to_bits()).collect()
}

/// `steps` steps of `cfg` in f64 (`popnn::host::Reference`: the global batch's summed
/// gradient, scaled by the reduction, then the optimizer oracle's update) from the device's
/// initial parameters; the parameters, flat.
pub fn oracle(cfg: &Config, data: &Dataset, steps: usize) -> Vec<f64> {
    let model = cfg.model().unwrap();
    let scale = match cfg.reduction {
        Reduction::Sum => 1.0,
        Reduction::Mean => 1.0 / cfg.global_batch() as f64,
    };
    let init: Vec<LayerParams> = model.init(cfg.seed);
    let mut r = Reference::new(&model, &init, cfg.optimizer, f64::from(cfg.lr), scale);
    let (b, d) = (cfg.global_batch(), cfg.shape.inputs);
    for s in 0..steps {
        r.step(
            &data.x[s * b * d..(s + 1) * b * d],
            &data.y[s * b..(s + 1) * b],
        );
    }
    r.params
        .iter()
        .flat_map(|l| l.w.iter().chain(&l.b))
        .copied()
        .collect()
}

/// The largest difference between `got` and the oracle's parameters.
pub fn worst(got: &[f32], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(&a, &b)| (f64::from(a) - b).abs())
        .fold(0.0, f64::max)
}

/// The largest difference between two f32 parameter vectors.
pub fn worst32(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max)
}
