//! A training run: data, the popnn training graph and its trainer, epochs, and what is
//! written.

use poplar::exe::{Executable, Step};
use poplar::profile::{Profile, Split};
use poplar::{Engine, EngineOptions};
use popnn::LayerParams;
use serde::Serialize;

use crate::config::{machine, Config};
use crate::data::{blobs, Data, DataInfo, Dataset};

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
    /// Host streams of the batches and Streaming Memory transfers (waited for).
    pub transfer: u64,
    /// The gradient collectives (their labelled blocks, [`GRADIENT_LABEL`]: the all-reduce,
    /// or with sharding the reduce-scatters and the all-reduces across groups; part of
    /// `compute`, `exchange` and `sync`).
    pub all_reduce: u64,
    /// The step outside the gradient collectives (pipeline, update, and with sharding the
    /// all-gather of the weights): `compute`, `exchange`, `sync` and `transfer` less the
    /// collectives' own. With `all_reduce` they add up to `total`.
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
    /// The gradient collectives' plans (their labels, `; `-separated), or `none`.
    pub all_reduce_plan: String,
    pub compile_seconds: f64,
    pub step_cycles: StepCycles,
    pub epochs: Vec<EpochRecord>,
}

/// What the labels of the gradient collectives hold: popnn names them `gradients …`
/// (`popnn::train::ALL_REDUCE_NAME`), and the collectives' labels are `kind(name) plan`.
pub const GRADIENT_LABEL: &str = "(gradients";

/// The compiled training graph of a run and its compile time.
pub struct Compiled {
    pub popnn: popnn::Compiled,
    pub compile_seconds: f64,
}

/// Builds and compiles the training graph of `cfg` (popnn's) on [`machine`]. Does not run
/// [`Config::check`]: callers check first (the benches build what the command line refuses).
pub fn build(cfg: &Config) -> anyhow::Result<Compiled> {
    let t0 = std::time::Instant::now();
    let model = cfg.model()?;
    let c = popnn::build(&machine(cfg.chips()), &model, &cfg.options())?;
    Ok(Compiled {
        popnn: c,
        compile_seconds: t0.elapsed().as_secs_f64(),
    })
}

/// popnn's trainer on the engine.
pub type Trainer = popnn::Trainer<Engine>;

/// A trainer of `c` on `threads` host threads with the initial parameters of `cfg.seed`.
pub fn trainer(cfg: &Config, c: &Compiled, threads: usize) -> anyhow::Result<Trainer> {
    let engine = Engine::new(&c.popnn.exe, EngineOptions::with_threads(threads))?;
    let mut t = Trainer::new(&c.popnn, engine);
    t.set_params(&c.popnn.model.init(cfg.seed))?;
    Ok(t)
}

/// Connects each replica's streams to its samples of `steps` steps from step `first` of
/// `data`, in the order the steps read them ([`Config::first_sample`]).
pub fn feed(
    t: &mut Trainer,
    cfg: &Config,
    data: &Dataset,
    first: usize,
    steps: usize,
) -> anyhow::Result<()> {
    let d = cfg.shape.inputs;
    let m = cfg.micro_batch;
    let r = cfg.replicas as usize;
    let (mut xs, mut ys) = (vec![Vec::new(); r], vec![Vec::new(); r]);
    for s in first..first + steps {
        for a in 0..cfg.accumulate {
            for (k, (x, y)) in xs.iter_mut().zip(&mut ys).enumerate() {
                let at = cfg.first_sample(s, a, k);
                x.extend_from_slice(&data.x[at * d..(at + m) * d]);
                y.extend_from_slice(&data.y[at..at + m]);
            }
        }
    }
    t.feed(&xs, &ys)?;
    Ok(())
}

/// The parameters as one flat vector: per layer `W` (row-major) then `b`.
pub fn flat(p: &[LayerParams]) -> Vec<f32> {
    p.iter()
        .flat_map(|l| l.w.iter().chain(&l.b))
        .copied()
        .collect()
}

/// Accuracy of `p` on a data set (popnn's host forward pass, in f64).
pub fn accuracy(model: &popnn::Model, p: &[LayerParams], data: &Dataset) -> f64 {
    popnn::host::accuracy(model, p, &data.x, &data.y)
}

/// The names of the labelled blocks of program `index` of `exe` that contain `pattern`, in
/// program order, each once.
pub fn labels(exe: &Executable, index: usize, pattern: &str) -> Vec<String> {
    fn walk(s: &Step, pattern: &str, out: &mut Vec<String>) {
        if let Step::Label { name, .. } = s {
            if name.contains(pattern) && !out.contains(name) {
                out.push(name.clone());
            }
        }
        for c in s.children() {
            walk(c, pattern, out);
        }
    }
    let mut out = Vec::new();
    if let Some(p) = exe.programs.get(index) {
        walk(p, pattern, &mut out);
    }
    out
}

/// The gradient collectives' plans of a compiled run, `; `-separated (`none` with one
/// replica unsharded).
pub fn gradient_plans(c: &Compiled) -> String {
    let l = labels(&c.popnn.exe, popnn::train::REDUCE, GRADIENT_LABEL);
    if l.is_empty() {
        "none".into()
    } else {
        l.join("; ")
    }
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
) -> anyhow::Result<(History, Vec<LayerParams>)> {
    let d = Data::blobs(cfg.shape.classes, cfg.shape.inputs, cfg.per_class, cfg.seed);
    train_on(cfg, &d, threads, progress)
}

/// Trains `cfg` on `data` (its features and classes must be `cfg.shape`'s), as [`train`].
pub fn train_on(
    cfg: &Config,
    data: &Data,
    threads: usize,
    mut progress: impl FnMut(&EpochRecord),
) -> anyhow::Result<(History, Vec<LayerParams>)> {
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
    let compiled = build(cfg)?;
    let model = compiled.popnn.model.clone();
    let mut t = trainer(cfg, &compiled, threads)?;
    let steps = cfg.steps_per_epoch(train.len());
    let mut epochs = Vec::new();
    let mut step_cycles = StepCycles::default();
    for epoch in 0..cfg.epochs {
        let t0 = std::time::Instant::now();
        feed(&mut t, cfg, train, 0, steps)?;
        for s in 0..steps {
            if epoch == 0 && s == 0 {
                step_cycles = profiled_step(&mut t, cfg)?;
            } else {
                t.step()?;
            }
        }
        let (loss, right) = t.take_stats()?;
        let seen = (steps * cfg.global_batch()) as f64;
        let params = t.params()?;
        let rec = EpochRecord {
            epoch: epoch + 1,
            steps,
            train_loss: loss / seen,
            train_accuracy: right / seen,
            test_accuracy: accuracy(&model, &params, test),
            seconds: t0.elapsed().as_secs_f64(),
        };
        progress(&rec);
        epochs.push(rec);
    }
    let params = t.params()?;
    let history = History {
        config: cfg.clone(),
        data: data.info.clone(),
        train_samples: train.len(),
        test_samples: test.len(),
        all_reduce_plan: gradient_plans(&compiled),
        compile_seconds: compiled.compile_seconds,
        step_cycles,
        epochs,
    };
    Ok((history, params))
}

/// Runs one step with profiling on and splits its modelled cycles.
fn profiled_step(t: &mut Trainer, cfg: &Config) -> anyhow::Result<StepCycles> {
    t.engine
        .enable_profiling(poplar::profile::ProfileOptions::default());
    t.step()?;
    let p = t
        .engine
        .take_profile()
        .ok_or_else(|| anyhow::anyhow!("no profile of the first step"))?;
    t.engine.disable_profiling();
    Ok(step_cycles(&p, cfg.global_batch()))
}

/// The cycles of a profiled step of `batch` samples, split at the gradient collectives.
pub fn step_cycles(p: &Profile, batch: usize) -> StepCycles {
    let ar = p
        .labels
        .iter()
        .filter(|l| l.name.contains(GRADIENT_LABEL))
        .fold(Split::default(), |mut a, l| {
            a += l.elapsed;
            a
        });
    let total = p.elapsed.total();
    StepCycles {
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
        samples_per_second: batch as f64 / (total as f64 / p.target.clock_hz),
    }
}
