//! Shared by the tests: a small machine, a model, data and the f64 reference run.
#![allow(dead_code)]

use poplar::{Engine, EngineOptions};
use popnn::host::Reference;
use popnn::{Activation, Compiled, Model, Optimizer, Reduction, Schedule, TrainOptions, Trainer};

/// `chips` chips of 8 tiles of 256 KiB.
pub fn machine(chips: u32) -> poplar::Target {
    poplar::Target {
        num_ipus: chips,
        ..poplar::Target::custom(8, 256 * 1024)
    }
}

/// Four layers (so that 1, 2 and 4 stages split it), `act` after the hidden ones.
pub fn model(act: Activation) -> Model {
    Model::mlp(6, &[12, 10, 8], 3, act).unwrap()
}

/// `n` samples: features from a smooth function, labels from the sign pattern of two of them.
pub fn data(n: usize, d: usize, seed: usize) -> (Vec<f32>, Vec<i32>) {
    let x: Vec<f32> = (0..n * d)
        .map(|i| (((i + 7 * seed) as f64) * 0.731).sin() as f32)
        .collect();
    let y = (0..n)
        .map(|s| {
            let (a, b) = (x[s * d], x[s * d + 1]);
            if a + b > 0.3 {
                0
            } else if a > b {
                1
            } else {
                2
            }
        })
        .collect();
    (x, y)
}

pub fn options(replicas: u32, stages: usize, schedule: Schedule) -> TrainOptions {
    TrainOptions {
        replicas,
        stages,
        micro_batch: 4,
        accumulate: 4,
        tiles: 3,
        schedule,
        recompute: false,
        optimizer: Optimizer::Sgd,
        lr: 0.1,
        reduction: Reduction::Mean,
        ..Default::default()
    }
}

/// The samples of `steps` steps, split per replica in the order the device reads them: step
/// `s`, micro-batch `a`, replica `r` takes the next `m` samples of the global order
/// `(s, a, r)`.
pub fn per_replica(
    opts: &TrainOptions,
    x: &[f32],
    y: &[i32],
    d: usize,
    steps: usize,
) -> (Vec<Vec<f32>>, Vec<Vec<i32>>) {
    let r = opts.replicas as usize;
    let m = opts.micro_batch;
    let (mut xs, mut ys) = (vec![vec![]; r], vec![vec![]; r]);
    let mut at = 0;
    for _ in 0..steps {
        for _ in 0..opts.accumulate {
            for k in 0..r {
                xs[k].extend_from_slice(&x[at * d..(at + m) * d]);
                ys[k].extend_from_slice(&y[at..at + m]);
                at += m;
            }
        }
    }
    (xs, ys)
}

/// Trains `steps` steps on the device (with `threads` threads) and returns the parameters and
/// the summed loss.
pub fn train_device(
    model: &Model,
    opts: &TrainOptions,
    steps: usize,
    threads: usize,
) -> (Vec<popnn::LayerParams>, f64) {
    let mut t = trainer_after(model, opts, steps, threads);
    let (loss, _) = t.take_stats().unwrap();
    (t.params().unwrap(), loss)
}

/// The trainer of `c` on an engine of `threads` threads.
pub fn trainer(c: &Compiled, threads: usize) -> Trainer<Engine> {
    Trainer::new(
        c,
        Engine::new(&c.exe, EngineOptions::with_threads(threads)).unwrap(),
    )
}

/// A trainer after `steps` steps from the initial parameters of seed 5.
pub fn trainer_after(
    model: &Model,
    opts: &TrainOptions,
    steps: usize,
    threads: usize,
) -> Trainer<Engine> {
    popnn::link();
    let machine = machine(opts.replicas * opts.stages as u32);
    let c = popnn::build(&machine, model, opts).unwrap();
    let mut t = trainer(&c, threads);
    t.set_params(&model.init(5)).unwrap();
    let b = opts.global_batch();
    let (x, y) = data(b * steps, model.inputs(), 0);
    let (xs, ys) = per_replica(opts, &x, &y, model.inputs(), steps);
    t.feed(&xs, &ys).unwrap();
    for _ in 0..steps {
        t.step().unwrap();
    }
    t
}

/// The f64 reference's parameters and summed loss after the same steps.
pub fn train_reference(model: &Model, opts: &TrainOptions, steps: usize) -> (Reference, f64) {
    let mut r = reference_for(model, opts);
    let loss = run_reference(&mut r, model, opts, steps);
    (r, loss)
}

/// The f64 reference of `opts` from the initial parameters of seed 5.
pub fn reference_for(model: &Model, opts: &TrainOptions) -> Reference {
    let scale = match opts.reduction {
        Reduction::Sum => 1.0,
        Reduction::Mean => 1.0 / opts.global_batch() as f64,
    };
    Reference::new(
        model,
        &model.init(5),
        opts.optimizer,
        f64::from(opts.lr),
        scale,
    )
}

/// `steps` steps of the reference on the device's samples; the summed loss.
pub fn run_reference(r: &mut Reference, model: &Model, opts: &TrainOptions, steps: usize) -> f64 {
    let b = opts.global_batch();
    let (x, y) = data(b * steps, model.inputs(), 0);
    let d = model.inputs();
    let mut loss = 0.0;
    for s in 0..steps {
        loss += r.step(&x[s * b * d..(s + 1) * b * d], &y[s * b..(s + 1) * b]);
    }
    loss
}

/// The largest difference between the device's and the reference's parameters, relative to
/// the largest reference parameter.
pub fn max_rel_diff(dev: &[popnn::LayerParams], reference: &Reference) -> f64 {
    let mut worst: f64 = 0.0;
    let mut scale: f64 = 0.0;
    for (d, r) in dev.iter().zip(&reference.params) {
        for (a, b) in d.w.iter().chain(&d.b).zip(r.w.iter().chain(&r.b)) {
            worst = worst.max((f64::from(*a) - b).abs());
            scale = scale.max(b.abs());
        }
    }
    worst / scale.max(1e-30)
}

/// Every parameter bit-identical.
pub fn same_bits(a: &[popnn::LayerParams], b: &[popnn::LayerParams]) -> bool {
    a.iter().zip(b).all(|(x, y)| {
        x.w.iter()
            .chain(&x.b)
            .zip(y.w.iter().chain(&y.b))
            .all(|(p, q)| p.to_bits() == q.to_bits())
    })
}
