//! Training on popnn's replicated graph: the device's gradient against finite differences of
//! an independently written loss, the device against the f64 reference, R replicas × m
//! against one replica × R·m, thread counts, learning, and bad options.

mod common;

use common::{device_params, init, oracle, small, trainer_after, worst, worst32};
use mlp::config::{Config, Reduction, Shape};

/// The loss of one sample in f64, written independently of popnn: flat parameters
/// `[W1 (h × d), b1 (h), W2 (c × h), b2 (c)]`, ReLU, softmax cross-entropy.
fn loss64(shape: &Shape, q: &[f64], x: &[f32], y: usize) -> f64 {
    let (d, h, c) = (shape.inputs, shape.hidden[0], shape.classes);
    let a: Vec<f64> = (0..h)
        .map(|j| {
            let z = q[d * h + j] + (0..d).map(|i| q[j * d + i] * f64::from(x[i])).sum::<f64>();
            z.max(0.0)
        })
        .collect();
    let w2 = d * h + h;
    let l: Vec<f64> = (0..c)
        .map(|k| q[w2 + c * h + k] + (0..h).map(|j| q[w2 + k * h + j] * a[j]).sum::<f64>())
        .collect();
    let m = l.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let s: f64 = l.iter().map(|v| (v - m).exp()).sum();
    -(l[y] - m - s.ln())
}

/// One step of plain SGD with Sum at lr 1 on one sample moves every parameter by exactly its
/// gradient (up to the rounding of `p − g`, a few ulps of |p| + |g|): the device's gradient
/// against central differences of [`loss64`] (to 1e-4), and its loss (the statistics) against
/// the f64 loss (to 1e-5).
#[test]
fn the_gradient_matches_finite_differences() {
    let cfg = Config {
        micro_batch: 1,
        accumulate: 1,
        lr: 1.0,
        reduction: Reduction::Sum,
        shape: Shape {
            inputs: 8,
            hidden: vec![6],
            classes: 4,
        },
        ..small(1, 1)
    };
    let (train, _) = mlp::run::data(&cfg);
    let p0 = init(&cfg);
    let mut t = trainer_after(&cfg, &train, 1, 2);
    let (loss, _) = t.take_stats().unwrap();
    let p1 = mlp::run::flat(&t.params().unwrap());
    let (x, y) = train.sample(0);
    let q: Vec<f64> = p0.iter().map(|&v| f64::from(v)).collect();
    let l0 = loss64(&cfg.shape, &q, x, y as usize);
    assert!((loss - l0).abs() < 1e-5, "loss {loss} against {l0}");
    let mut moved = 0;
    for i in 0..q.len() {
        let e = 1e-6;
        let (mut a, mut b) = (q.clone(), q.clone());
        a[i] += e;
        b[i] -= e;
        let fd = (loss64(&cfg.shape, &a, x, y as usize) - loss64(&cfg.shape, &b, x, y as usize))
            / (2.0 * e);
        let g = f64::from(p0[i]) - f64::from(p1[i]);
        moved += usize::from(g != 0.0);
        assert!((g - fd).abs() < 1e-4, "parameter {i}: {g} vs {fd}");
    }
    assert!(moved > q.len() / 4, "only {moved} parameters moved");
}

/// One replica against the f64 reference after 12 steps: within 1e-5 (f32 sums of at most 20
/// terms and updates of at most lr·|ĝ| ≲ 0.05 per step).
#[test]
fn one_replica_agrees_with_the_f64_reference() {
    let cfg = small(1, 10);
    let (train, _) = mlp::run::data(&cfg);
    let steps = 12;
    let dev = device_params(&cfg, &train, steps, 2);
    let want = oracle(&cfg, &train, steps);
    let w = worst(&dev, &want);
    assert!(w <= 1e-5, "worst {w:e}");
    assert!(
        worst32(&dev, &init(&cfg)) > 1e-3,
        "training changed nothing"
    );
}

/// R replicas × micro-batch m see the same samples per step as one replica × R·m; only the
/// order of the gradient sum differs (each replica's sum, then the ring). A step's summed
/// gradient of B = R·m·GA = 32 terms of magnitude ≤ g (≤ 2 here: |p − 1| ≤ 1 times
/// activations and inputs ≈ 1) differs by at most B·2⁻²⁴·B·g ≈ 1.2e-4; the Mean update
/// scales it by lr/B, so each step moves a parameter by at most 2e-7 differently, and
/// over 20 steps (the training is contracting at this rate) 1e-5 bounds it with margin.
#[test]
fn replicas_times_m_equals_one_replica_times_r_m() {
    let steps = 20;
    let one = small(1, 16);
    let (train, _) = mlp::run::data(&one);
    let base = device_params(&one, &train, steps, 2);
    let want = oracle(&one, &train, steps);
    for (r, m) in [(2u32, 8usize), (4, 4), (8, 2)] {
        let cfg = small(r, m);
        assert_eq!(cfg.global_batch(), one.global_batch());
        let p = device_params(&cfg, &train, steps, 2);
        let w = worst32(&p, &base);
        assert!(w <= 1e-5, "R = {r} × m = {m}: largest difference {w}");
        let w = worst(&p, &want);
        assert!(
            w <= 1e-5,
            "R = {r}: largest difference from the f64 reference {w}"
        );
    }
}

#[test]
fn results_are_identical_for_any_thread_count() {
    let cfg = small(4, 5);
    let (train, _) = mlp::run::data(&cfg);
    let a = device_params(&cfg, &train, 6, 1);
    let b = device_params(&cfg, &train, 6, 3);
    assert_eq!(common::bits(&a), common::bits(&b));
}

#[test]
fn training_learns_the_blobs() {
    mlp::link();
    let cfg = Config {
        epochs: 3,
        ..small(2, 8)
    };
    let mut seen = Vec::new();
    let (h, _) = mlp::run::train(&cfg, 2, |e| seen.push(e.test_accuracy)).unwrap();
    assert_eq!(seen.len(), 3);
    let last = h.epochs.last().unwrap();
    // Four classes: chance is 25 %; the blobs overlap, so the best is about 80 %.
    assert!(last.test_accuracy > 0.7, "{:?}", h.epochs);
    assert!(last.train_loss < h.epochs[0].train_loss);
    assert!(h.step_cycles.all_reduce > 0 && h.step_cycles.total > h.step_cycles.all_reduce);
    assert!(
        h.all_reduce_plan
            .starts_with("allReduce(gradients w0 w1 b0 b1)"),
        "{}",
        h.all_reduce_plan
    );
    let json = serde_json::to_string(&h).unwrap();
    assert!(json.contains("\"test_accuracy\"") && json.contains("\"reduction\":\"mean\""));
}

#[test]
fn bad_options_are_named() {
    let (train, _) = mlp::run::data(&small(1, 1));
    let err = |c: Config| c.check(train.len()).unwrap_err();
    assert_eq!(err(small(3, 4)).option, "replicas");
    assert_eq!(err(small(1, 0)).option, "micro-batch");
    assert_eq!(
        err(Config {
            accumulate: 0,
            ..small(1, 4)
        })
        .option,
        "accumulate"
    );
    assert_eq!(
        err(Config {
            lr: f32::NAN,
            ..small(1, 4)
        })
        .option,
        "lr"
    );
    assert_eq!(
        err(Config {
            tiles: 0,
            ..small(1, 4)
        })
        .option,
        "tiles"
    );
    let e = err(small(64, 64));
    assert_eq!(e.option, "micro-batch");
    assert!(e.to_string().contains("exceeds"), "{e}");
    // Two layers (one hidden, the logits): three stages are refused by popnn, named as the
    // command line's option.
    for stages in [0, 3] {
        let e = err(Config {
            stages,
            ..small(1, 4)
        });
        assert_eq!(e.option, "pipeline-stages", "{e}");
        assert!(e.to_string().starts_with("--pipeline-stages"), "{e}");
    }
}
