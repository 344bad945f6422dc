//! Replicated tensor sharding of the master weights and the optimizer's state (`--shard G`).
//!
//! Specification: a sharded run updates each element with the same f32 operations as an
//! unsharded one, on a summed gradient that differs only in the order of its additions (the
//! reduce-scatter's ring, plus an all-reduce across groups, against the all-reduce's method):
//! with one group of two replicas the orders coincide and so do the bits; otherwise the
//! parameters agree with the f64 oracle within the bounds of `tests/optimizers.rs`. The zero
//! padding of `⌈P/G⌉`-element shards never reaches the weights, and the state a replica holds
//! shrinks to `⌈P/G⌉` elements.

mod common;

use common::{device_params, oracle, small};
use mlp::config::{Config, Reduction};
use mlp::optim::Optimizer;

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

const OPTIMIZERS: [Optimizer; 3] = [
    Optimizer::Sgd,
    Optimizer::Momentum { momentum: 0.9 },
    Optimizer::Adam {
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
    },
];

/// The largest difference between `got` and the oracle's parameters.
fn worst(got: &[f32], want: &[f64]) -> f64 {
    got.iter()
        .zip(want)
        .map(|(&a, &b)| (f64::from(a) - b).abs())
        .fold(0.0, f64::max)
}

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
            let init = mlp::model::init(c.shape, c.seed);
            let got = device_params(&c, &train, 10, 2);
            if (r, g) == (4, 2) {
                assert_eq!(
                    bits(&device_params(&c, &train, 10, 1)),
                    bits(&got),
                    "threads"
                );
            }
            let w = worst(&got, &oracle(&c, &train, &init, 10));
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

#[test]
fn padding_never_reaches_the_weights() {
    // 8 inputs, 16 hidden, 4 classes: P = 212 parameters, not a multiple of 8: shards of 27,
    // the last padded with 4 zeros.
    let c = Config {
        shard: Some(8),
        optimizer: Optimizer::adam(),
        ..small(8, 2)
    };
    assert_eq!((c.shape.params(), c.shard_len()), (212, 27));
    mlp::link();
    let (train, _) = mlp::run::data(&c);
    let exe = mlp::device::build(&c, &mlp::device::machine(8))
        .unwrap()
        .exe;
    let mut d = mlp::device::Device::new(&exe, &c, 1).unwrap();
    let init = mlp::model::init(c.shape, c.seed);
    d.set_params(&init).unwrap();
    d.feed(&train, 0, 5).unwrap();
    for _ in 0..5 {
        d.step().unwrap();
    }
    // The last replica's shard holds elements 189..212 and 4 padding zeros, which stay zero.
    let shard = d
        .engine
        .read_tensor_replica::<f32>("params shard", 7)
        .unwrap();
    assert_eq!(shard[23..], [0.0; 4]);
    let m = d.engine.read_tensor_replica::<f32>("opt a", 7).unwrap();
    assert_eq!(m.len(), 27);
    assert_eq!(m[23..], [0.0; 4]);
    // The weights are every shard's, in order, and what the oracle trains.
    let p = d.params().unwrap();
    assert_eq!(p[189..], shard[..23]);
    let w = worst(&p, &oracle(&c, &train, &init, 5));
    assert!(w <= 1e-5, "worst {w:e}");
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
