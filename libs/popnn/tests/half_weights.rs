//! f16 weights with an f32 master copy: the passes read the weights rounded to f16, the
//! optimizer updates the f32 master (whole, sharded or with its state off chip) and rounds it
//! into the weights. Against the f64 reference that rounds its weights to f16 for the passes:
//! the master after three steps within 1e-5 of the largest parameter (measured: at most
//! 3.1e-7; a weight near an f16 rounding boundary could round the other way in f32 and f64,
//! which these seeds do not meet), and the f16 weights are exactly the master rounded to f16,
//! on every replica.

mod common;

use common::*;
use popnn::{Activation, Optimizer, Schedule, TensorLocation, TensorStorage};

#[test]
fn half_weights_follow_the_reference() {
    let model = model(Activation::Gelu);
    for (replicas, stages, storage, sharded) in [
        (1, 1, TensorStorage::OnChip, false),
        (2, 2, TensorStorage::OnChip, true),
        (4, 1, TensorStorage::OffChip, false),
        (4, 2, TensorStorage::OffChip, true),
    ] {
        for (opt, lr, tolerance) in [(Optimizer::Sgd, 0.1, 1e-5), (Optimizer::adam(), 0.01, 1e-5)] {
            let mut opts = options(replicas, stages, Schedule::Grouped);
            opts.half_weights = true;
            opts.optimizer = opt;
            opts.lr = lr;
            opts.optimizer_state_location = TensorLocation {
                storage,
                replicated_tensor_sharding: sharded,
            };
            let t = trainer_after(&model, &opts, 3, 2);
            let dev = t.params().unwrap();
            let mut reference = reference_for(&model, &opts);
            reference.half_weights = true;
            run_reference(&mut reference, &model, &opts, 3);
            let diff = max_rel_diff(&dev, &reference);
            let what = format!(
                "R {replicas} P {stages} {storage:?} sharded {sharded} {}",
                opt.name()
            );
            assert!(diff < tolerance, "{what}: relative difference {diff:e}");
            for (l, p) in dev.iter().enumerate() {
                let half = t.half_weights(l).unwrap();
                for (h, m) in half.iter().zip(&p.w) {
                    let want = poplar::f16_from_f64(f64::from(*m)).to_f32();
                    assert_eq!(
                        h.to_bits(),
                        want.to_bits(),
                        "{what}: layer {l}: {h} is not {m} rounded"
                    );
                }
            }
        }
    }
}

/// f16 weights halve the weights' bytes on every tile that holds them.
#[test]
fn half_weights_take_half_the_memory() {
    popnn::link();
    let model = model(Activation::Relu);
    let mut opts = options(1, 1, Schedule::Grouped);
    let bytes = |opts: &popnn::TrainOptions| {
        let c = popnn::build(&machine(1), &model, opts).unwrap();
        c.exe.tiles[0]
            .breakdown
            .iter()
            .filter(|i| i.name == "w0")
            .map(|i| i.bytes)
            .sum::<u32>()
    };
    let full = bytes(&opts);
    opts.half_weights = true;
    assert_eq!(2 * bytes(&opts), full);
}
