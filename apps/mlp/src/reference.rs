//! The host reference trainer: the same steps in plain Rust, in the order of one replica
//! (`R = 1`): per micro-batch, per sample tile the summed gradient of its samples, added to
//! the accumulator tile by tile, then the update (`optim::update_f32`, the optimizer's). With `R = 1` the device performs the same
//! f32 operations in the same order, so its parameters equal these bit for bit; with more
//! replicas the all-reduce adds the replicas' sums in ring order instead.

use crate::config::{split, Config};
use crate::data::Dataset;
use crate::model::{sample_grad, scratch_len};

/// Trains `steps` steps from `params` on `data` as the device would with one replica and a
/// micro-batch of `R·m` (the same samples per micro-batch).
pub fn train(cfg: &Config, data: &Dataset, params: &[f32], steps: usize) -> Vec<f32> {
    let shape = cfg.shape;
    let p_len = shape.params();
    let mut p = params.to_vec();
    let mut acc = vec![0f32; p_len];
    let mut part = vec![0f32; p_len];
    let mut scratch = vec![0f32; scratch_len(shape)];
    let rm = cfg.replicas as usize * cfg.micro_batch;
    let mut state = crate::optim::State::new(cfg.optimizer, p_len);
    for s in 0..steps {
        for a in 0..cfg.accumulate {
            let first = cfg.first_sample(s, a, 0);
            let parts: Vec<Vec<f32>> = split(rm, cfg.tiles)
                .into_iter()
                .map(|r| {
                    part.fill(0.0);
                    for i in r {
                        let (x, y) = data.sample(first + i);
                        sample_grad(shape, &p, x, y as usize, &mut part, &mut scratch);
                    }
                    part.clone()
                })
                .collect();
            for (i, v) in acc.iter_mut().enumerate() {
                let mut t = *v;
                for q in &parts {
                    t += q[i];
                }
                *v = t;
            }
        }
        crate::optim::update_f32(cfg.optimizer, &mut state, &mut p, &mut acc, cfg.scales());
    }
    p
}
