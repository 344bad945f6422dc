//! Where the optimizer's state lives: on chip or off chip (Streaming Memory), sharded over the
//! replicas or not, for R = 1, 2, 4 replicas × P = 1, 2, 4 pipeline stages × Sum and Mean (and
//! a sharding domain of 2 of 4 replicas): the parameters after three steps match the f64
//! reference (Adam with Mean: 1e-4 of the largest parameter; momentum with Sum: 1e-5), the
//! sharded master copies hold exactly their runs of the weights with zero padding (the last layer's three rows on three tiles leave pieces of one
//! element for four replicas: three of every four shards are padding), and off-chip state
//! gives the same bits as on-chip state.

mod common;

use common::*;
use popnn::{Activation, Optimizer, Reduction, Schedule, TensorLocation, TensorStorage};

fn location(storage: TensorStorage, sharded: bool) -> TensorLocation {
    TensorLocation {
        storage,
        replicated_tensor_sharding: sharded,
    }
}

#[test]
fn every_location_matches_the_reference() {
    let model = model(Activation::Relu);
    let mut grid = vec![];
    for replicas in [1, 2, 4] {
        for stages in [1, 2, 4] {
            grid.push((replicas, stages, None));
        }
    }
    grid.push((4, 2, Some(2)));
    for (replicas, stages, domain) in grid {
        for storage in [TensorStorage::OnChip, TensorStorage::OffChip] {
            for sharded in [false, true] {
                for (opt, reduction, tolerance) in [
                    (Optimizer::adam(), Reduction::Mean, 1e-4),
                    (Optimizer::Momentum { momentum: 0.9 }, Reduction::Sum, 1e-5),
                ] {
                    let mut opts = options(replicas, stages, Schedule::Grouped);
                    opts.optimizer = opt;
                    opts.reduction = reduction;
                    opts.lr = if reduction == Reduction::Sum {
                        0.1 / opts.global_batch() as f32
                    } else {
                        0.01
                    };
                    opts.optimizer_state_location = location(storage, sharded);
                    opts.sharding_domain = domain;
                    let (dev, _) = train_device(&model, &opts, 3, 2);
                    let (reference, _) = train_reference(&model, &opts, 3);
                    let diff = max_rel_diff(&dev, &reference);
                    let what = format!("R {replicas} P {stages} domain {domain:?} {storage:?} sharded {sharded} {}", opt.name());
                    assert!(diff < tolerance, "{what}: relative difference {diff:e}");
                }
            }
        }
    }
}

#[test]
fn master_shards_are_the_weights_runs_with_zero_padding() {
    let model = model(Activation::Gelu);
    let mut opts = options(4, 2, Schedule::Interleaved);
    opts.optimizer = Optimizer::adam();
    opts.lr = 0.01;
    opts.optimizer_state_location = location(TensorStorage::OnChip, true);
    let t = trainer_after(&model, &opts, 3, 2);
    let params = t.params().unwrap();
    for (l, (p, d)) in params.iter().zip(model.layers()).enumerate() {
        for (name, v, width) in [("w", &p.w, d.inputs), ("b", &p.b, 1)] {
            let lens: Vec<usize> = popnn::model::blocks(d.outputs, opts.tiles)
                .into_iter()
                .filter(|r| !r.is_empty())
                .map(|r| r.len() * width)
                .collect();
            let all = t
                .engine
                .read_tensor_all_replicas::<f32>(&format!("{name}{l}/master"))
                .unwrap();
            let n = all.len() / 4;
            for r in 0..4u32 {
                let want = popnn::update::shard_of(v, &lens, 4, r);
                let got = &all[r as usize * n..(r as usize + 1) * n];
                assert_eq!(got.len(), want.len());
                assert!(
                    got.iter()
                        .zip(&want)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{name}{l} replica {r}: {got:?} against {want:?}"
                );
            }
        }
    }
}

#[test]
fn off_chip_state_gives_the_on_chip_bits() {
    let model = model(Activation::Gelu);
    for sharded in [false, true] {
        let mut opts = options(2, 2, Schedule::Grouped);
        opts.optimizer = Optimizer::adam();
        opts.lr = 0.01;
        opts.optimizer_state_location = location(TensorStorage::OnChip, sharded);
        let (on, _) = train_device(&model, &opts, 3, 2);
        opts.optimizer_state_location = location(TensorStorage::OffChip, sharded);
        let (off, _) = train_device(&model, &opts, 3, 1);
        assert!(same_bits(&on, &off), "sharded {sharded}");
    }
}
