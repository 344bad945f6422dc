//! A training run: data, device, epochs, and what is written.

use serde::Serialize;

use crate::config::Config;
use crate::data::{blobs, Data, DataInfo, Dataset};
use crate::device::{self, Device};
use crate::model;

/// One epoch's figures.
#[derive(Debug, Clone, Serialize)]
pub struct EpochRecord {
    pub epoch: usize,
    pub steps: usize,
    /// Mean cross-entropy over the epoch's training samples (as the steps saw them).
    pub train_loss: f64,
    pub train_accuracy: f64,
    /// Accuracy of the parameters after the epoch on the held-out set.
    pub test_accuracy: f64,
    /// Host wall time of the epoch.
    pub seconds: f64,
}

/// Modelled cycles of one training step (profiled on the first step).
#[derive(Debug, Clone, Default, Serialize)]
pub struct StepCycles {
    pub total: u64,
    pub compute: u64,
    pub exchange: u64,
    pub sync: u64,
    /// Host streams of the batches (transfers waited for).
    pub transfer: u64,
    /// The gradient all-reduce (its labelled block; part of `compute`, `exchange` and `sync`).
    pub all_reduce: u64,
    /// The step outside the all-reduce (micro-batches and update): `compute`, `exchange` and
    /// `sync` and `transfer` less the all-reduce's own. With `all_reduce` they add up to
    /// `total`.
    pub outside_compute: u64,
    pub outside_exchange: u64,
    pub outside_sync: u64,
    pub outside_transfer: u64,
    /// `R·m·GA / (total / clock)`.
    pub samples_per_second: f64,
}

/// Everything `history.json` holds.
#[derive(Debug, Clone, Serialize)]
pub struct History {
    pub config: Config,
    /// Which data was used (dataset name or files, split, sample counts).
    pub data: DataInfo,
    pub train_samples: usize,
    pub test_samples: usize,
    pub all_reduce_plan: String,
    pub compile_seconds: f64,
    pub step_cycles: StepCycles,
    pub epochs: Vec<EpochRecord>,
}

/// The data set of a configuration.
pub fn data(cfg: &Config) -> (Dataset, Dataset) {
    blobs(
        cfg.shape.classes,
        cfg.shape.inputs,
        cfg.per_class,
        0.2,
        cfg.seed,
    )
}

/// Trains `cfg` on the generated blobs of its options (see [`data`]) on `threads` host
/// threads; `progress` sees each epoch as it ends. Returns the history and the final
/// parameters.
pub fn train(
    cfg: &Config,
    threads: usize,
    progress: impl FnMut(&EpochRecord),
) -> anyhow::Result<(History, Vec<f32>)> {
    let d = Data::blobs(cfg.shape.classes, cfg.shape.inputs, cfg.per_class, cfg.seed);
    train_on(cfg, &d, threads, progress)
}

/// Trains `cfg` on `data` (its features and classes must be `cfg.shape`'s), as [`train`].
pub fn train_on(
    cfg: &Config,
    data: &Data,
    threads: usize,
    mut progress: impl FnMut(&EpochRecord),
) -> anyhow::Result<(History, Vec<f32>)> {
    let (train, test) = (&data.train, &data.test);
    anyhow::ensure!(
        data.info.features == cfg.shape.inputs && data.info.classes == cfg.shape.classes,
        "the data has {} features and {} classes, the model {} inputs and {} classes",
        data.info.features,
        data.info.classes,
        cfg.shape.inputs,
        cfg.shape.classes
    );
    cfg.check(train.len())?;
    let compiled = device::build(cfg, &device::machine(cfg.replicas))?;
    let mut dev = Device::new(&compiled.exe, cfg, threads)?;
    let init = model::init(cfg.shape, cfg.seed);
    dev.set_params(&init)?;
    let steps = cfg.steps_per_epoch(train.len());
    let mut epochs = Vec::new();
    let mut step_cycles = StepCycles::default();
    for epoch in 0..cfg.epochs {
        let t0 = std::time::Instant::now();
        dev.feed(train, 0, steps)?;
        for s in 0..steps {
            let profile = epoch == 0 && s == 0;
            if profile {
                dev.engine
                    .enable_profiling(poplar::profile::ProfileOptions::default());
            }
            dev.step()?;
            if profile {
                let p = dev.engine.take_profile().expect("profiling was on");
                dev.engine.disable_profiling();
                let ar = device::reduction_labels(cfg)
                    .iter()
                    .filter_map(|prefix| p.labels.iter().find(|l| l.name.starts_with(prefix)))
                    .fold(poplar::profile::Split::default(), |mut a, l| {
                        a += l.elapsed;
                        a
                    });
                let total = p.elapsed.total();
                step_cycles = StepCycles {
                    total,
                    compute: p.elapsed.compute,
                    exchange: p.elapsed.exchange,
                    sync: p.elapsed.sync,
                    transfer: p.elapsed.transfer,
                    all_reduce: ar.total(),
                    outside_compute: p.elapsed.compute.saturating_sub(ar.compute),
                    outside_exchange: p.elapsed.exchange.saturating_sub(ar.exchange),
                    outside_sync: p.elapsed.sync.saturating_sub(ar.sync),
                    outside_transfer: p.elapsed.transfer.saturating_sub(ar.transfer),
                    samples_per_second: cfg.global_batch() as f64
                        / (total as f64 / p.target.clock_hz),
                };
            }
        }
        let (loss, right) = dev.take_stats()?;
        let seen = (steps * cfg.global_batch()) as f64;
        let params = dev.params()?;
        let rec = EpochRecord {
            epoch: epoch + 1,
            steps,
            train_loss: loss / seen,
            train_accuracy: right / seen,
            test_accuracy: model::accuracy(cfg.shape, &params, test),
            seconds: t0.elapsed().as_secs_f64(),
        };
        progress(&rec);
        epochs.push(rec);
    }
    let params = dev.params()?;
    Ok((
        History {
            config: cfg.clone(),
            data: data.info.clone(),
            train_samples: train.len(),
            test_samples: test.len(),
            all_reduce_plan: compiled.plan.label(device::ALL_REDUCE_NAME),
            compile_seconds: compiled.compile_seconds,
            step_cycles,
            epochs,
        },
        params,
    ))
}
