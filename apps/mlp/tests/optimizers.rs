//! The optimizers (popnn's, re-exported as `mlp::optim`): SGD, momentum and Adam on the
//! device against the f64 reference.
//!
//! Specification: with R = 1, 2, 4 replicas the device's parameters agree with the f64
//! reference (`popnn::host::Reference`: the model's arithmetic in f64 and `optim::Oracle`)
//! within the tolerance derived below, for both reductions; every rule changes training; on
//! 1 and 2 threads the bits are the same; bad hyper-parameters are named.

mod common;

use common::{bits, device_params, init, oracle, small, worst};
use mlp::config::{Config, Reduction};
use mlp::optim::Optimizer;

fn momentum() -> Optimizer {
    Optimizer::Momentum { momentum: 0.9 }
}

fn cfg(replicas: u32, m: usize, opt: Optimizer, reduction: Reduction, lr: f32) -> Config {
    Config {
        optimizer: opt,
        reduction,
        lr,
        ..small(replicas, m)
    }
}

/// One replica, both reductions (Sum at lr 0.05/16 takes Mean's steps at 0.05: the global
/// batch is 16), 6 steps: within the bounds of the test below.
#[test]
fn one_replica_agrees_with_the_f64_reference_for_both_reductions() {
    for opt in [Optimizer::Sgd, momentum(), Optimizer::adam()] {
        for (reduction, lr) in [(Reduction::Mean, 0.05), (Reduction::Sum, 0.05 / 16.0)] {
            let c = cfg(1, 8, opt, reduction, lr);
            let (train, _) = mlp::run::data(&c);
            let got = device_params(&c, &train, 6, 2);
            let w = worst(&got, &oracle(&c, &train, 6));
            assert!(w <= 2e-5, "{opt:?} {reduction:?}: worst {w:e}");
            assert_ne!(bits(&got), bits(&init(&c)), "{opt:?}: the parameters moved");
        }
    }
}

#[test]
fn the_optimizers_differ_from_one_another() {
    // Each rule changes what training does (a test of the wiring, not of the maths).
    let run = |opt| {
        let c = cfg(1, 8, opt, Reduction::Mean, 0.05);
        let (train, _) = mlp::run::data(&c);
        device_params(&c, &train, 4, 1)
    };
    let (a, b, c) = (run(Optimizer::Sgd), run(momentum()), run(Optimizer::adam()));
    assert_ne!(bits(&a), bits(&b));
    assert_ne!(bits(&a), bits(&c));
    assert_ne!(bits(&b), bits(&c));
}

#[test]
fn threads_do_not_change_the_bits() {
    for opt in [momentum(), Optimizer::adam()] {
        let c = cfg(2, 4, opt, Reduction::Mean, 0.05);
        let (train, _) = mlp::run::data(&c);
        assert_eq!(
            bits(&device_params(&c, &train, 5, 1)),
            bits(&device_params(&c, &train, 5, 2)),
            "{opt:?}"
        );
    }
}

/// Tolerance: 10 steps at lr 0.01 (Mean) from the same start. f32 against f64 differ by the
/// rounding of sums of up to 64 terms per gradient element (relative 64·2⁻²⁴ ≈ 4e-6) and of
/// the updates; SGD and momentum move a parameter by at most lr·|ĝ| ≲ 0.01 a step, so the
/// difference stays near 1e-7 a step: bound 2e-5 over 10 steps. Adam divides by √v̂, so its
/// step is lr·m̂/(√v̂ + ε), at most lr in size whatever |ĝ|: where a gradient nearly cancels
/// (|ĝ| near the rounding noise) f32 and f64 can step in different directions, up to 2·lr in
/// one step. The bound is 1e-5; a failure here is either a broken rule or such a
/// cancellation, which the two medians tell apart. A wrong rule (β swapped, no bias
/// correction, the wrong scale) moves parameters by about lr a step, 0.1 over 10 steps.
#[test]
fn replicas_agree_with_the_f64_oracle() {
    for opt in [Optimizer::Sgd, momentum(), Optimizer::adam()] {
        for r in [1u32, 2, 4] {
            let c = Config {
                accumulate: 1,
                ..cfg(r, 16 / r as usize, opt, Reduction::Mean, 0.01)
            };
            let (train, _) = mlp::run::data(&c);
            let got = device_params(&c, &train, 10, 2);
            let want = oracle(&c, &train, 10);
            let mut diffs: Vec<f64> = got
                .iter()
                .zip(&want)
                .map(|(&a, &b)| (f64::from(a) - b).abs())
                .collect();
            diffs.sort_by(f64::total_cmp);
            let (worst, median) = (diffs[diffs.len() - 1], diffs[diffs.len() / 2]);
            let bound = if opt == Optimizer::adam() { 1e-5 } else { 2e-5 };
            assert!(
                worst <= bound,
                "{opt:?} R = {r}: worst {worst:e}, median {median:e}"
            );
            assert!(
                median <= 1e-5,
                "{opt:?} R = {r}: worst {worst:e}, median {median:e}"
            );
            eprintln!("{opt:?} R = {r}: worst {worst:e}, median {median:e}");
        }
    }
}

#[test]
fn bad_hyper_parameters_are_named() {
    let (train, _) = mlp::run::data(&small(1, 4));
    for (opt, option) in [
        (Optimizer::Momentum { momentum: 1.0 }, "momentum"),
        (Optimizer::Momentum { momentum: f32::NAN }, "momentum"),
        (
            Optimizer::Adam {
                beta1: -0.1,
                beta2: 0.999,
                eps: 1e-8,
            },
            "beta1",
        ),
        (
            Optimizer::Adam {
                beta1: 0.9,
                beta2: 1.5,
                eps: 1e-8,
            },
            "beta2",
        ),
        (
            Optimizer::Adam {
                beta1: 0.9,
                beta2: 0.999,
                eps: 0.0,
            },
            "eps",
        ),
    ] {
        let e = Config {
            optimizer: opt,
            ..small(1, 4)
        }
        .check(train.len())
        .unwrap_err();
        assert_eq!(e.option, option, "{e}");
    }
}
