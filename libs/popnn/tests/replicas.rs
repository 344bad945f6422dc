//! Data parallelism combined with pipelining: for R = 1, 2, 4 replicas × P = 1, 2, 4 stages,
//! Sum and Mean, and each optimizer, the device's parameters after three steps match the f64
//! reference (relative to the largest parameter: 1e-5 for SGD and momentum; 1e-4 for Adam,
//! whose `m/√v` amplifies the f32 rounding of small gradients), with the loss summed over the
//! replicas equal to the reference's within 1e-4.

mod common;

use common::*;
use popnn::{Activation, Optimizer, Reduction, Schedule};

fn check(opt: Optimizer, tolerance: f64) {
    let model = model(Activation::Relu);
    for replicas in [1, 2, 4] {
        for stages in [1, 2, 4] {
            for reduction in [Reduction::Sum, Reduction::Mean] {
                let mut opts = options(replicas, stages, Schedule::Interleaved);
                opts.optimizer = opt;
                opts.reduction = reduction;
                opts.lr = match (opt, reduction) {
                    (Optimizer::Adam { .. }, _) => 0.01,
                    (_, Reduction::Sum) => 0.1 / opts.global_batch() as f32,
                    (_, Reduction::Mean) => 0.1,
                };
                let (dev, loss) = train_device(&model, &opts, 3, 2);
                let (reference, ref_loss) = train_reference(&model, &opts, 3);
                let diff = max_rel_diff(&dev, &reference);
                let what = format!("{} R {replicas} P {stages} {reduction:?}", opt.name());
                assert!(diff < tolerance, "{what}: relative difference {diff:e}");
                assert!(
                    (loss - ref_loss).abs() < 1e-4 * ref_loss,
                    "{what}: loss {loss} against {ref_loss}"
                );
            }
        }
    }
}

#[test]
fn sgd_matches_the_reference() {
    check(Optimizer::Sgd, 1e-5);
}

#[test]
fn momentum_matches_the_reference() {
    check(Optimizer::Momentum { momentum: 0.9 }, 1e-5);
}

#[test]
fn adam_matches_the_reference() {
    check(Optimizer::adam(), 1e-4);
}

/// The same bits for one and two threads, with four replicas and Adam, at each stage count.
/// (Across stage counts the bits may differ with several replicas: the all-reduce's ring
/// order follows the accumulators' placement over the chips. With one replica they do not:
/// `tests/pipeline.rs`.)
#[test]
fn bits_do_not_depend_on_threads() {
    let model = model(Activation::Gelu);
    for stages in [1, 2, 4] {
        let mut opts = options(4, stages, Schedule::Grouped);
        opts.optimizer = Optimizer::adam();
        opts.lr = 0.01;
        let (one, _) = train_device(&model, &opts, 3, 1);
        let (two, _) = train_device(&model, &opts, 3, 2);
        assert!(same_bits(&one, &two), "{stages} stages");
    }
}
