//! Training on replicated graphs: the arithmetic against finite differences, the device
//! against the host reference, R replicas × m against one replica × R·m, thread counts,
//! learning, and bad options.

mod common;

use common::{device_params, small};
use mlp::config::Config;
use mlp::model::{self, Shape};

/// Central differences of an f64 loss written independently of `model.rs`.
#[test]
fn the_gradient_matches_finite_differences() {
    let shape = Shape {
        inputs: 5,
        hidden: 6,
        classes: 3,
    };
    let p = model::init(shape, 9);
    let x = [0.3f32, -1.2, 0.8, 0.05, -0.4];
    let y = 2usize;
    let loss64 = |q: &[f64]| -> f64 {
        let (d, h, c) = (shape.inputs, shape.hidden, shape.classes);
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
    };
    let mut grad = vec![0f32; shape.params()];
    let mut scratch = vec![0f32; model::scratch_len(shape)];
    let (loss, _) = model::sample_grad(shape, &p, &x, y, &mut grad, &mut scratch);
    let q: Vec<f64> = p.iter().map(|&v| f64::from(v)).collect();
    assert!((f64::from(loss) - loss64(&q)).abs() < 1e-5);
    for i in 0..q.len() {
        let e = 1e-6;
        let (mut a, mut b) = (q.clone(), q.clone());
        a[i] += e;
        b[i] -= e;
        let fd = (loss64(&a) - loss64(&b)) / (2.0 * e);
        // f32 arithmetic against f64: a few ulps of the largest term.
        assert!(
            (f64::from(grad[i]) - fd).abs() < 1e-4,
            "parameter {i}: {} vs {fd}",
            grad[i]
        );
    }
}

#[test]
fn one_replica_equals_the_host_reference_bit_for_bit() {
    let cfg = small(1, 10);
    let (train, _) = mlp::run::data(&cfg);
    let steps = 12;
    let dev = device_params(&cfg, &train, steps, 2);
    let host = mlp::reference::train(&cfg, &train, &model::init(cfg.shape, cfg.seed), steps);
    assert_eq!(
        dev.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        host.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    assert_ne!(
        host,
        model::init(cfg.shape, cfg.seed),
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
    for (r, m) in [(2u32, 8usize), (4, 4), (8, 2)] {
        let cfg = small(r, m);
        assert_eq!(cfg.global_batch(), one.global_batch());
        let p = device_params(&cfg, &train, steps, 2);
        let worst = p
            .iter()
            .zip(&base)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(
            worst <= 1e-5,
            "R = {r} × m = {m}: largest difference {worst}"
        );
        // And against the host reference of one replica × R·m.
        let host = mlp::reference::train(&cfg, &train, &model::init(cfg.shape, cfg.seed), steps);
        let worst = p
            .iter()
            .zip(&host)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(
            worst <= 1e-5,
            "R = {r}: largest difference from the host {worst}"
        );
    }
}

#[test]
fn results_are_identical_for_any_thread_count() {
    let cfg = small(4, 5);
    let (train, _) = mlp::run::data(&cfg);
    let a = device_params(&cfg, &train, 6, 1);
    let b = device_params(&cfg, &train, 6, 3);
    assert_eq!(
        a.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        b.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
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
    let e = err(small(64, 64));
    assert_eq!(e.option, "micro-batch");
    assert!(e.to_string().contains("exceeds"), "{e}");
}
