//! The optimizer's state in Streaming Memory (`--state-location off-chip`, popnn's
//! `TensorStorage::OffChip`: per parameter tensor a remote buffer per kind of state, one row
//! per tile's piece, loaded into staging buffers for the update and stored back).
//!
//! Specification: keeping the state in remote buffers changes where it lives, not one bit of
//! training: the parameters and the state equal the on-chip run's, sharded or not, pipelined
//! or not, on 1 and 2 threads; the tiles hold staging buffers instead of the whole state; and
//! the transfers appear in the step's modelled cycles.

mod common;

use common::{bits, device_params, small, trainer_after};
use mlp::config::{Config, Reduction, TensorStorage};
use mlp::optim::Optimizer;

fn with(opt: Optimizer, r: u32, shard: Option<u32>, location: TensorStorage) -> Config {
    Config {
        optimizer: opt,
        shard,
        state_location: location,
        ..small(r, 4)
    }
}

#[test]
fn state_in_streaming_memory_gives_the_on_chip_bits() {
    for opt in [Optimizer::Momentum { momentum: 0.9 }, Optimizer::adam()] {
        for (r, stages, shard, reduction) in [
            (1u32, 1, None, Reduction::Mean),
            (2, 1, None, Reduction::Sum),
            (4, 1, Some(4), Reduction::Mean),
            (4, 1, Some(2), Reduction::Sum),
            (2, 2, Some(2), Reduction::Mean),
        ] {
            let with = |location| {
                let mut c = Config {
                    reduction,
                    stages,
                    lr: if reduction == Reduction::Sum {
                        0.002
                    } else {
                        0.05
                    },
                    ..with(opt, r, shard, location)
                };
                c.shape.hidden = vec![16, 8];
                c
            };
            let chip = with(TensorStorage::OnChip);
            let (train, _) = mlp::run::data(&chip);
            let want = device_params(&chip, &train, 5, 2);
            for threads in [1, 2] {
                assert_eq!(
                    bits(&device_params(
                        &with(TensorStorage::OffChip),
                        &train,
                        5,
                        threads
                    )),
                    bits(&want),
                    "{opt:?} {reduction:?}, R = {r}, P = {stages}, shard {shard:?}, {threads} threads"
                );
            }
        }
    }
}

/// Bytes of `exe`'s tiles in items whose name passes `f`.
fn bytes(exe: &poplar::Executable, f: &dyn Fn(&str) -> bool) -> u64 {
    exe.tiles
        .iter()
        .flat_map(|t| &t.breakdown)
        .filter(|i| f(&i.name))
        .map(|i| u64::from(i.bytes))
        .sum()
}

#[test]
fn the_state_read_back_from_streaming_memory_is_the_on_chip_state() {
    let run = |location| {
        let c = with(Optimizer::adam(), 1, None, location);
        let (train, _) = mlp::run::data(&c);
        let t = trainer_after(&c, &train, 3, 1);
        let model = c.model().unwrap();
        let mut state = Vec::new();
        for (l, d) in model.layers().iter().enumerate() {
            for (name, width) in [("w", d.inputs), ("b", 1)] {
                for kind in ["opt a", "opt b"] {
                    let name = format!("{name}{l}/{kind}");
                    state.extend(match location {
                        TensorStorage::OnChip => t.engine.read_tensor::<f32>(&name).unwrap(),
                        TensorStorage::OffChip => unrows(&t, &name, d.outputs, width, c.tiles),
                    });
                }
            }
        }
        (state, t.engine.executable().clone())
    };
    let (chip, chip_exe) = run(TensorStorage::OnChip);
    let (off, off_exe) = run(TensorStorage::OffChip);
    assert_eq!(bits(&chip), bits(&off));
    assert!(chip.iter().any(|&x| x != 0.0), "the state moved");
    // 212 parameters, 2 kinds of state: 1,696 B on the tiles on chip (and the alignment of
    // the odd-length pieces of the biases); off chip, staging buffers as long as the most each
    // tile stages at once (`w0`'s rows), and 2 remote buffers per parameter tensor.
    let on_tiles = bytes(&chip_exe, &|n| {
        n.ends_with("/opt a") || n.ends_with("/opt b")
    });
    let staged = bytes(&off_exe, &|n| n.contains("(staged)"));
    assert!(
        (2 * 212 * 4..2 * 212 * 4 + 64).contains(&on_tiles),
        "{on_tiles} B"
    );
    assert!(staged > 0 && staged < on_tiles, "{staged} B staged");
    assert_eq!(bytes(&off_exe, &|n| n.ends_with("/opt a")), 0);
    assert_eq!(off_exe.remote_buffers.len(), 2 * 4);
}

/// The remote buffer `name` of a tensor of `outputs` rows of `width` on `tiles` tiles: one
/// row per tile's piece, as long as the longest; the pieces in order.
fn unrows(
    t: &mlp::run::Trainer,
    name: &str,
    outputs: usize,
    width: usize,
    tiles: usize,
) -> Vec<f32> {
    let rows = t.engine.read_remote_buffer::<f32>(name).unwrap();
    let lens: Vec<usize> = popnn::model::blocks(outputs, tiles)
        .into_iter()
        .filter(|r| !r.is_empty())
        .map(|r| r.len() * width)
        .collect();
    let row = lens.iter().copied().max().unwrap();
    assert_eq!(rows.len(), row * lens.len(), "{name}");
    lens.iter()
        .enumerate()
        .flat_map(|(j, &l)| rows[j * row..j * row + l].to_vec())
        .collect()
}

#[test]
fn the_transfers_are_in_the_step_cycles() {
    mlp::link();
    let c = Config {
        epochs: 1,
        ..with(Optimizer::adam(), 2, None, TensorStorage::OffChip)
    };
    let (h, _) = mlp::run::train(&c, 1, |_| {}).unwrap();
    let plain = Config {
        state_location: TensorStorage::OnChip,
        ..c.clone()
    };
    let (h0, _) = mlp::run::train(&plain, 1, |_| {}).unwrap();
    // 4 tensors × 2 kinds × (a load and a store) beside the batches' streams.
    let (s, s0) = (&h.step_cycles, &h0.step_cycles);
    assert!(s.transfer > s0.transfer, "{s:?} against {s0:?}");
    assert!(s.total > s0.total, "{s:?} against {s0:?}");
    assert_eq!(h.epochs[0].train_loss, h0.epochs[0].train_loss);
}
