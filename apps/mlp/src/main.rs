//! `mlp`: data-parallel and pipelined training of a multilayer perceptron, on popnn.
//!
//! - `mlp train`: train (on the shipped UCI digits unless told otherwise) and print loss and
//!   accuracy per epoch; writes `history.json` and the loss curve `loss.png`.
//! - `mlp scaling`: the scaling report over R = 1 … 64 (and several Pods): table,
//!   `scaling.json`, `scaling.svg`.
//! - `mlp compile`: compile only, printing the compile time (for `/usr/bin/time -v`).

use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use mlp::config::{Activation, Config, Optimizer, Reduction, Schedule, Shape, TensorStorage};
use mlp::data::{Data, DataError};

#[derive(Parser)]
#[command(
    name = "mlp",
    about = "Data-parallel and pipelined MLP training on popnn"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Train and report loss and accuracy per epoch.
    Train {
        #[command(flatten)]
        opts: Opts,
        /// Epochs.
        #[arg(long, default_value_t = 30, allow_hyphen_values = true)]
        epochs: usize,
        /// Host threads of the simulator (default: all).
        #[arg(long, allow_hyphen_values = true)]
        threads: Option<usize>,
        /// The data set when no --data is given: the shipped UCI handwritten digits, or
        /// generated Gaussian blobs (--inputs, --classes, --per-class).
        #[arg(long, value_enum, default_value_t = Builtin::Digits)]
        dataset: Builtin,
        /// Training features: a .npy file of f32 [samples, features] (overrides --dataset).
        #[arg(long, requires = "labels")]
        data: Option<PathBuf>,
        /// Training labels: a .npy file of i32, i64 or u8 [samples], 0 ≤ label < classes.
        #[arg(long, requires = "data")]
        labels: Option<PathBuf>,
        /// Test features (without them, 20 % of --data is held out after a seeded shuffle).
        #[arg(long, requires_all = ["test_labels", "data"])]
        test_data: Option<PathBuf>,
        /// Test labels.
        #[arg(long, requires = "test_data")]
        test_labels: Option<PathBuf>,
        /// Output folder (refused if it holds an earlier run, unless --force).
        #[arg(long, default_value = "mlp-out")]
        out: PathBuf,
        /// Replace an earlier run's files in --out, and train past the bound on the estimated
        /// work (epochs × samples × parameters).
        #[arg(long)]
        force: bool,
    },
    /// The scaling report over replication factors.
    Scaling {
        #[command(flatten)]
        opts: Opts,
        /// Largest R (powers of two from 1; above 64 on several Pod64s); at least 1.
        #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..), allow_hyphen_values = true)]
        max_replicas: u32,
        #[arg(long, default_value = "mlp-scaling")]
        out: PathBuf,
        #[arg(long)]
        force: bool,
    },
    /// Compile the training graph only and print the compile time.
    Compile {
        #[command(flatten)]
        opts: Opts,
    },
}

#[derive(Args, Clone)]
struct Opts {
    /// Replicas R (a power of two; --pipeline-stages chips each).
    #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
    replicas: u32,
    /// Pipeline stages P: the layers split into P consecutive runs, one chip each (R×P chips).
    #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
    pipeline_stages: usize,
    /// The pipeline schedule of the micro-batches over the stages.
    #[arg(long, value_enum, default_value_t = ScheduleKind::Grouped)]
    schedule: ScheduleKind,
    /// Keep only each stage's input per micro-batch and recompute its activations in the
    /// backward pass.
    #[arg(long)]
    recompute: bool,
    /// Weights in f16 (half their memory), updated through an f32 master copy.
    #[arg(long)]
    half_weights: bool,
    /// Samples per replica per micro-batch (m).
    #[arg(long, default_value_t = 16, allow_hyphen_values = true)]
    micro_batch: usize,
    /// Micro-batches per step (gradient accumulation factor GA).
    #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
    accumulate: usize,
    /// Learning rate.
    #[arg(long, default_value_t = 0.5, value_parser = app_support::bounds::f32_value, allow_hyphen_values = true)]
    lr: f32,
    /// How the global batch's gradients are combined: sum, or mean over R·m·GA samples.
    #[arg(long, value_enum, default_value_t = ReductionKind::Mean)]
    reduction: ReductionKind,
    /// Tiles of each chip a layer's rows are spread over.
    #[arg(long, default_value_t = 4, allow_hyphen_values = true)]
    tiles: usize,
    /// Input features of the blobs [default: 8]; with files, taken from them.
    #[arg(long, allow_hyphen_values = true)]
    inputs: Option<usize>,
    /// Widths of the hidden layers, comma-separated (for example 128,64).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "64",
        allow_hyphen_values = true
    )]
    hidden: Vec<usize>,
    /// The activation after every hidden layer.
    #[arg(long, value_enum, default_value_t = ActivationKind::Relu)]
    activation: ActivationKind,
    /// Classes of the blobs [default: 4]; with files, the largest label + 1 unless this is
    /// larger.
    #[arg(long, allow_hyphen_values = true)]
    classes: Option<usize>,
    /// Points per class of the generated blobs (80 % train, 20 % test) [default: 500].
    #[arg(long, allow_hyphen_values = true)]
    per_class: Option<usize>,
    #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
    seed: u64,
    /// The update rule: plain SGD, SGD with momentum, or Adam (f32 state on the device).
    #[arg(long, value_enum, default_value_t = OptimizerKind::Sgd)]
    optimizer: OptimizerKind,
    /// Momentum's μ (with `--optimizer momentum`).
    #[arg(long, default_value_t = 0.9, value_parser = app_support::bounds::f32_value, allow_hyphen_values = true)]
    momentum: f32,
    /// Adam's β₁, β₂ and ε (with `--optimizer adam`).
    #[arg(long, default_value_t = 0.9, value_parser = app_support::bounds::f32_value, allow_hyphen_values = true)]
    beta1: f32,
    #[arg(long, default_value_t = 0.999, value_parser = app_support::bounds::f32_value, allow_hyphen_values = true)]
    beta2: f32,
    #[arg(long, default_value_t = 1e-8, value_parser = app_support::bounds::f32_value, allow_hyphen_values = true)]
    eps: f32,
    /// Where the optimizer's state lives: in the tiles' memory, or in Streaming Memory
    /// (loaded for the update and stored back, one tensor at a time).
    #[arg(long, value_enum, default_value_t = StateLocation::OnChip)]
    state_location: StateLocation,
    /// Shard the master weights and the optimizer's state over groups of this many
    /// consecutive replicas (replicated tensor sharding; for example the replicas of one Pod).
    #[arg(long, allow_hyphen_values = true)]
    shard: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum OptimizerKind {
    Sgd,
    Momentum,
    Adam,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ReductionKind {
    /// The update uses the sum of the per-sample gradients of the global batch.
    Sum,
    /// The update uses their mean over the global batch of R·m·GA samples.
    Mean,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ActivationKind {
    Relu,
    Gelu,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ScheduleKind {
    /// One micro-batch at a time through every stage and back (no overlap).
    Sequential,
    /// Forward and backward groups alternate (smaller stashes).
    Interleaved,
    /// Every forward group first, then every backward group.
    Grouped,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum StateLocation {
    OnChip,
    OffChip,
}

impl Opts {
    fn config(&self, epochs: usize) -> Config {
        Config {
            replicas: self.replicas,
            stages: self.pipeline_stages,
            micro_batch: self.micro_batch,
            accumulate: self.accumulate,
            epochs,
            lr: self.lr,
            reduction: match self.reduction {
                ReductionKind::Sum => Reduction::Sum,
                ReductionKind::Mean => Reduction::Mean,
            },
            tiles: self.tiles,
            shape: Shape {
                inputs: self.inputs.unwrap_or(8),
                hidden: self.hidden.clone(),
                classes: self.classes.unwrap_or(4),
            },
            activation: match self.activation {
                ActivationKind::Relu => Activation::Relu,
                ActivationKind::Gelu => Activation::Gelu,
            },
            schedule: match self.schedule {
                ScheduleKind::Sequential => Schedule::Sequential,
                ScheduleKind::Interleaved => Schedule::Interleaved,
                ScheduleKind::Grouped => Schedule::Grouped,
            },
            recompute: self.recompute,
            half_weights: self.half_weights,
            per_class: self.per_class.unwrap_or(500),
            seed: self.seed,
            optimizer: self.optimizer(),
            state_location: match self.state_location {
                StateLocation::OnChip => TensorStorage::OnChip,
                StateLocation::OffChip => TensorStorage::OffChip,
            },
            shard: self.shard,
        }
    }

    fn optimizer(&self) -> Optimizer {
        match self.optimizer {
            OptimizerKind::Sgd => Optimizer::Sgd,
            OptimizerKind::Momentum => Optimizer::Momentum {
                momentum: self.momentum,
            },
            OptimizerKind::Adam => Optimizer::Adam {
                beta1: self.beta1,
                beta2: self.beta2,
                eps: self.eps,
            },
        }
    }
}

/// The data sets `mlp train` has without files.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Builtin {
    /// The UCI handwritten digits shipped in `apps/mlp/data/digits` (64 features, 10 classes).
    Digits,
    /// Gaussian blobs generated from --inputs, --classes, --per-class and --seed.
    Blobs,
}

/// The data of `mlp train`: `--data`/`--labels` (and `--test-data`/`--test-labels`) if given,
/// else `--dataset`; the model's inputs and classes are set from the files (`--inputs` must
/// agree, `--per-class` is refused, `--classes` may only add classes).
fn train_data(
    opts: &Opts,
    cfg: &mut Config,
    dataset: Builtin,
    files: Option<(&Path, &Path)>,
    test: Option<(&Path, &Path)>,
) -> Result<Data, DataError> {
    let d = match (files, dataset) {
        (Some(f), _) => Data::from_files("files", f, test, opts.classes, opts.seed)?,
        (None, Builtin::Digits) => mlp::digits::load(opts.classes, opts.seed)?,
        (None, Builtin::Blobs) => {
            return Ok(Data::blobs(
                cfg.shape.classes,
                cfg.shape.inputs,
                cfg.per_class,
                cfg.seed,
            ))
        }
    };
    let path = d.info.train_files[0].clone();
    if opts.per_class.is_some() {
        return Err(DataError::PerClass { path });
    }
    if let Some(given) = opts.inputs.filter(|&i| i != d.info.features) {
        return Err(DataError::Inputs {
            given,
            path,
            features: d.info.features,
        });
    }
    cfg.shape.inputs = d.info.features;
    cfg.shape.classes = d.info.classes;
    // Classes from the labels: a label too large for the logits layer is the labels' fault.
    if let Err(e) = cfg.check_layers_fit() {
        if e.option == "classes" && opts.classes.is_none_or(|c| c < d.info.classes) {
            return Err(DataError::Check {
                path: d.info.train_files.last().cloned().unwrap_or_default(),
                reason: format!(
                    "labels up to {} make {} classes: {}",
                    d.info.classes - 1,
                    d.info.classes,
                    e.allowed
                ),
            });
        }
    }
    Ok(d)
}

fn main() -> std::process::ExitCode {
    // Under `mpiexec -n P` (built with the feature `mpi`) the job has P ranks, each running
    // this same program over its share of the chips; started alone, one rank. Built without
    // it, under a launcher of several ranks, it refuses (N copies would write the same files).
    if let Err(e) = app_support::launcher::refuse_copies_without_mpi("mlp", cfg!(feature = "mpi")) {
        eprintln!("error: {e}");
        return std::process::ExitCode::FAILURE;
    }
    poplar::engine::job_main(real_main)
}

/// Parses the command line and dispatches to the command ([`mlp::cmd`]).
fn real_main() -> anyhow::Result<()> {
    mlp::link();
    match Cli::parse().cmd {
        Cmd::Train {
            opts,
            epochs,
            threads,
            dataset,
            data,
            labels,
            test_data,
            test_labels,
            out,
            force,
        } => {
            let mut cfg = opts.config(epochs);
            // Options and data first: a bad option or data file creates no output folder and
            // prints no banner.
            app_support::bounds::threads(threads)?;
            let data = train_data(
                &opts,
                &mut cfg,
                dataset,
                data.as_deref().zip(labels.as_deref()),
                test_data.as_deref().zip(test_labels.as_deref()),
            )?;
            mlp::cmd::train(&cfg, &data, threads, &out, force)
        }
        Cmd::Scaling {
            opts,
            max_replicas,
            out,
            force,
        } => mlp::cmd::scaling(&opts.config(1), max_replicas, &out, force),
        Cmd::Compile { opts } => mlp::cmd::compile(&opts.config(1)),
    }
}
