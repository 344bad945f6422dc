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
