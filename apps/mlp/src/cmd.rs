//! The commands of `mlp`, which the binary parses and dispatches to: [`train`], [`scaling`]
//! and [`compile`]. Each checks its options before it creates an output folder or prints a
//! banner; rank 0 of an MPI job talks and writes the files.

use std::path::Path;

use anyhow::Result;
use app_support::output::{write_atomic, OutputLock, RunFiles};

use crate::config::{Config, TensorStorage};
use crate::data::Data;

/// `println!` on rank 0 only: under `mpiexec` every rank runs this same program (the engine's
/// reads are collective), and rank 0 talks and writes the files.
macro_rules! say {
    ($($t:tt)*) => {
        if poplar::dist::is_root() {
            println!($($t)*);
        }
    };
}

/// The pipeline in words: `P pipeline stages (schedule, recompute)`, or `no pipeline`; and
/// where the optimizer's state lives.
fn pipeline_text(cfg: &Config) -> String {
    let pipe = if cfg.stages > 1 {
        format!(
            "{} pipeline stages ({}{})",
            cfg.stages,
            cfg.schedule.name(),
            if cfg.recompute { ", recompute" } else { "" }
        )
    } else {
        "no pipeline".into()
    };
    let state = match (cfg.state_location, cfg.shard) {
        (TensorStorage::OnChip, None) => "state on chip".to_string(),
        (TensorStorage::OffChip, None) => "state off chip".to_string(),
        (TensorStorage::OnChip, Some(g)) => format!("state on chip, sharded over {g}"),
        (TensorStorage::OffChip, Some(g)) => format!("state off chip, sharded over {g}"),
    };
    format!("{pipe}, {state}")
}

/// Files `mlp train` writes (and would overwrite) in its output folder.
const TRAIN_FILES: RunFiles = RunFiles::new(&["history.json", "loss.png"]);

/// Files `mlp scaling` writes.
const SCALING_FILES: RunFiles = RunFiles::new(&["scaling.json", "scaling.svg"]);

/// Checks the output folder on rank 0 (created if missing; refused if it is a file, cannot be
/// written, is in use by another run, or holds `files` of an earlier run unless `force`, which
/// removes them) and locks it until the returned lock (rank 0's) is dropped; its verdict is
/// every rank's.
fn out_dir(dir: &Path, files: RunFiles, force: bool) -> Result<Option<OutputLock>> {
    let mut lock = None;
    poplar::dist::agree(if poplar::dist::is_root() {
        files
            .prepare(dir, force)
            .map(|l| lock = Some(l))
            .map_err(|e| format!("{e:#}"))
    } else {
        Ok(())
    })?;
    Ok(lock)
}

/// Most work of `mlp train` without `--force`, in sample-parameters (epochs × the training
/// and test samples × the model's parameters): about 15 hours at
/// [`SAMPLE_PARAMETERS_PER_SECOND`].
pub const MAX_WORK: f64 = 1e13;

/// Sample-parameters per second of a training run on a 2-core host (measured with the test
/// build: the shipped digits, 30 epochs of 5,620 samples through 64 → 64 → 10, 8.1·10^8
/// sample-parameters, in 4.3 s on 2 threads).
pub const SAMPLE_PARAMETERS_PER_SECOND: f64 = 1.9e8;

/// Refuses a training run whose estimated work is past [`MAX_WORK`] unless `force`.
pub fn check_work(cfg: &Config, data: &Data, force: bool) -> Result<()> {
    let samples = (data.train.len() + data.test.len()) as f64;
    let mut sizes = vec![cfg.shape.inputs as f64];
    sizes.extend(cfg.shape.hidden.iter().map(|&h| h as f64));
    sizes.push(cfg.shape.classes as f64);
    let params: f64 = sizes.windows(2).map(|w| w[1] * (w[0] + 1.0)).sum();
    app_support::bounds::check_work(
        app_support::bounds::Work {
            what: format!(
                "--epochs {} of {samples} samples through {}",
                cfg.epochs,
                cfg.shape.arrows()
            ),
            amount: cfg.epochs as f64 * samples * params,
            unit: "sample-parameters",
            per_second: SAMPLE_PARAMETERS_PER_SECOND,
            bound: MAX_WORK,
            advice: "train fewer --epochs, or a smaller model",
        },
        force,
    )?;
    Ok(())
}

/// `mlp train`: checks the options against the data, locks the output folder, trains on
/// `data` for `cfg.epochs` epochs printing loss and accuracy per epoch, and writes
/// `history.json` and the loss curve `loss.png` into `out`.
pub fn train(
    cfg: &Config,
    data: &Data,
    threads: Option<usize>,
    out: &Path,
    force: bool,
) -> Result<()> {
    let threads = app_support::bounds::threads(threads)?;
    if cfg.epochs == 0 {
        anyhow::bail!(
            "--epochs 0: at least 1 epoch (0 trains nothing and writes an empty history)"
        );
    }
    cfg.check(data.train.len())?;
    check_work(cfg, data, force)?;
    let _output_lock = out_dir(out, TRAIN_FILES, force)?;
    let threads =
        threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    say!(
        "training: R = {} replicas × micro-batch {} × GA {} = {} samples per step, reduction {:?}, lr {}, optimizer {}, {}",
        cfg.replicas,
        cfg.micro_batch,
        cfg.accumulate,
        cfg.global_batch(),
        cfg.reduction,
        cfg.lr,
        cfg.optimizer.name(),
        pipeline_text(cfg)
    );
    let name = match data.info.train_files.first() {
        Some(f) if data.info.source == "files" => f.display().to_string(),
        _ => data.info.source.clone(),
    };
    say!(
        "data: {name}, {} training and {} test samples ({}), {} features, {} classes; model {} ({})",
        data.info.train_samples,
        data.info.test_samples,
        data.info.split,
        data.info.features,
        data.info.classes,
        cfg.shape.arrows(),
        cfg.activation.name()
    );
    let epochs = cfg.epochs;
    let (history, _) = crate::run::train_on(cfg, data, threads, |e| {
        say!(
            "epoch {:>3}/{epochs}: {} steps, train loss {:.4}, train accuracy {:.1} %, test accuracy {:.1} % ({:.1} s)",
            e.epoch,
            e.steps,
            e.train_loss,
            100.0 * e.train_accuracy,
            100.0 * e.test_accuracy,
            e.seconds
        );
    })?;
    let c = &history.step_cycles;
    say!(
        "modelled step: {} cycles = compute {} + exchange {} + sync {} + transfers {} outside the gradient reduction + gradient reduction {}, {:.0} samples/s",
        c.total,
        c.outside_compute,
        c.outside_exchange,
        c.outside_sync,
        c.outside_transfer,
        c.all_reduce,
        c.samples_per_second
    );
    say!("gradient reduction: {}", history.all_reduce_plan);
    let path = out.join("history.json");
    let png = out.join("loss.png");
    if poplar::dist::is_root() {
        write_atomic(&path, serde_json::to_string_pretty(&history)?)?;
        let title = format!(
            "mlp train: {name}, R = {} × P = {} × micro-batch {} × GA {}, lr {}, model {}",
            cfg.replicas,
            cfg.stages,
            cfg.micro_batch,
            cfg.accumulate,
            cfg.lr,
            cfg.shape.arrows()
        );
        crate::curve::plot(&history.epochs, &title, &png)?;
    }
    say!("wrote {} and {}", path.display(), png.display());
    Ok(())
}

/// `mlp scaling`: the scaling report of `cfg` over R = 1, 2, 4, … `max_replicas` (every R
/// checked first): the table, `scaling.json` and `scaling.svg` in `out`.
pub fn scaling(cfg: &Config, max_replicas: u32, out: &Path, force: bool) -> Result<()> {
    let (train, _) = crate::run::data(cfg);
    cfg.check(train.len())?;
    let _output_lock = out_dir(out, SCALING_FILES, force)?;
    let rs: Vec<u32> = (0..=max_replicas.ilog2()).map(|k| 1 << k).collect();
    for &r in &rs {
        Config {
            replicas: r,
            ..cfg.clone()
        }
        .check(usize::MAX)?;
    }
    let rows = crate::scaling::report(cfg, &rs)?;
    if poplar::dist::is_root() {
        print!("{}", crate::scaling::table(&rows));
        write_atomic(
            out.join("scaling.json"),
            serde_json::to_string_pretty(&rows)?,
        )?;
        crate::scaling::plot(&rows, &out.join("scaling.svg"))?;
    }
    say!("wrote {}/scaling.json and scaling.svg", out.display());
    Ok(())
}

/// `mlp compile`: compiles the training graph of `cfg` only and prints the compile time (for
/// `/usr/bin/time -v`).
pub fn compile(cfg: &Config) -> Result<()> {
    let (train, _) = crate::run::data(cfg);
    cfg.check(train.len())?;
    let c = crate::run::build(cfg)?;
    say!(
        "compiled R = {} × P = {}: {:.3} s, {} tiles per replica stored, {} exchange phases",
        cfg.replicas,
        cfg.stages,
        c.compile_seconds,
        c.popnn.exe.tiles.len(),
        c.popnn.exe.exchanges.len()
    );
    Ok(())
}
