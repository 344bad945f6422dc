//! Replicated tensor sharding of the master weights and the optimizer's state (`--shard G`,
//! popnn's `optimizer_state_location.replicated_tensor_sharding` with `sharding_domain` G).
//!
//! Specification: a sharded run updates each element with the same f32 operations as an
//! unsharded one, on a summed gradient that differs only in the order of its additions (the
//! reduce-scatter's ring, plus an all-reduce across groups, against the all-reduce's method):
//! with one group of two replicas the orders coincide and so do the bits; otherwise the
//! parameters agree with the f64 reference within the bounds of `tests/optimizers.rs`. Each
//! tile's piece of a tensor is split into `⌈L/G⌉`-element shards, zero-padded; the padding
//! never reaches the weights, and the state a replica holds shrinks to its shards.

mod common;

use common::{bits, device_params, oracle, small, trainer_after, worst};
use mlp::config::{Config, Reduction};
use mlp::optim::Optimizer;

const OPTIMIZERS: [Optimizer; 3] = [
    Optimizer::Sgd,
    Optimizer::Momentum { momentum: 0.9 },
    Optimizer::Adam {
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
    },
];

#[test]
fn one_group_of_two_gives_the_unsharded_bits() {
    for opt in OPTIMIZERS {
        let plain = Config {
            optimizer: opt,
            ..small(2, 4)
        };
        let (train, _) = mlp::run::data(&plain);
        let want = device_params(&plain, &train, 6, 2);
        let c = Config {
            shard: Some(2),
            ..plain.clone()
        };
        assert_eq!(
            bits(&device_params(&c, &train, 6, 1)),
            bits(&want),
            "{opt:?}"
        );
    }
}

#[test]
fn sharded_runs_agree_with_the_f64_oracle() {
    // Sum at lr 0.01/16 takes Mean's steps at 0.01 (the global batch is 16).
    let reductions = [(Reduction::Mean, 0.01), (Reduction::Sum, 0.01 / 16.0)];
    for (opt, (reduction, lr)) in OPTIMIZERS
        .into_iter()
        .flat_map(|o| reductions.map(|x| (o, x)))
    {
        for (r, g) in [(2u32, 2u32), (4, 2), (4, 4), (8, 4), (8, 8)] {
            let c = Config {
                optimizer: opt,
                shard: Some(g),
                accumulate: 1,
                lr,
                reduction,
                ..small(r, 16 / r as usize)
            };
            let (train, _) = mlp::run::data(&c);
            let got = device_params(&c, &train, 10, 2);
            if (r, g) == (4, 2) {
                assert_eq!(
                    bits(&device_params(&c, &train, 10, 1)),
                    bits(&got),
                    "threads"
                );
            }
            let w = worst(&got, &oracle(&c, &train, 10));
            let bound = if matches!(opt, Optimizer::Adam { .. }) {
                1e-5
            } else {
                2e-5
            };
            assert!(
                w <= bound,
                "{opt:?} {reduction:?}, R = {r}, shard over {g}: worst {w:e}"
            );
        }
    }
}

/// 8 replicas sharded over 8, 3 tiles a layer: `b0`'s 16 rows are pieces of 6, 5 and 5
/// elements, one-element shards of which replicas 5 to 7 (6 and 7 for the pieces of 5) hold
/// only padding; `b1`'s 4 rows are pieces of 2, 1 and 1. Every replica's master shard is its
/// runs of the trained weights with zeros for the padding, its Adam state is as long as its
/// shards (zero on the padding), and the weights are what the f64 reference trains.
#[test]
fn padding_never_reaches_the_weights() {
    let c = Config {
        shard: Some(8),
        optimizer: Optimizer::adam(),
        ..small(8, 2)
    };
    let (train, _) = mlp::run::data(&c);
    let t = trainer_after(&c, &train, 5, 1);
    let params = t.params().unwrap();
    let model = c.model().unwrap();
    let mut padded = 0;
    for (l, (p, d)) in params.iter().zip(model.layers()).enumerate() {
        for (name, v, width) in [("w", &p.w, d.inputs), ("b", &p.b, 1)] {
            let lens: Vec<usize> = popnn::model::blocks(d.outputs, c.tiles)
                .into_iter()
                .filter(|r| !r.is_empty())
                .map(|r| r.len() * width)
                .collect();
            let shard_len: usize = lens.iter().map(|l| l.div_ceil(8)).sum();
            for r in 0..8u32 {
                let want = popnn::update::shard_of(v, &lens, 8, r);
                let master = t
                    .engine
                    .read_tensor_replica::<f32>(&format!("{name}{l}/master"), r)
                    .unwrap();
                assert_eq!(bits(&master), bits(&want), "{name}{l} replica {r}");
                let m = t
                    .engine
                    .read_tensor_replica::<f32>(&format!("{name}{l}/opt a"), r)
                    .unwrap();
                assert_eq!(m.len(), shard_len, "{name}{l} replica {r}");
                padded += padding_is_zero(&m, &lens, r);
            }
        }
    }
    assert!(padded >= 8, "only {padded} padding elements");
    let w = worst(&mlp::run::flat(&params), &oracle(&c, &train, 5));
    assert!(w <= 1e-5, "worst {w:e}");
}

/// Checks that replica `r`'s elements of `state` beyond each piece's end are zero; their
/// count.
fn padding_is_zero(state: &[f32], lens: &[usize], r: u32) -> usize {
    let (mut at, mut n) = (0, 0);
    for &l in lens {
        let w = l.div_ceil(8);
        let real = l.saturating_sub(r as usize * w).min(w);
        for (k, v) in state[at + real..at + w].iter().enumerate() {
            assert_eq!(
                *v, 0.0,
                "padding element {k} of a piece of {l}, replica {r}"
            );
            n += 1;
        }
        at += w;
    }
    n
}

#[test]
fn a_shard_group_must_divide_the_replicas() {
    let (train, _) = mlp::run::data(&small(4, 2));
    for g in [0, 1, 3, 8] {
        let e = Config {
            shard: Some(g),
            ..small(4, 2)
        }
        .check(train.len())
        .unwrap_err();
        assert_eq!(e.option, "shard", "{e}");
    }
}
