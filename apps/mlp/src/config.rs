//! What a training run is: options, checked before any work, with typed errors naming the
//! command-line option at fault. The model and the training graph are popnn's: a
//! [`Config`] turns into a [`popnn::Model`] ([`Config::model`]) and [`popnn::TrainOptions`]
//! ([`Config::options`]).

use poplar::Target;
use serde::Serialize;

pub use popnn::{Activation, Optimizer, Reduction, Schedule, TensorStorage};

/// Layer sizes: `inputs → hidden[0] → … → classes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shape {
    pub inputs: usize,
    /// The widths of the hidden layers, in order.
    pub hidden: Vec<usize>,
    pub classes: usize,
}

impl Shape {
    /// Dense layers in all (the hidden ones and the logits).
    pub fn layers(&self) -> usize {
        self.hidden.len() + 1
    }

    /// Parameters in all.
    pub fn params(&self) -> usize {
        let mut sizes = vec![self.inputs];
        sizes.extend_from_slice(&self.hidden);
        sizes.push(self.classes);
        sizes.windows(2).map(|w| w[1] * (w[0] + 1)).sum()
    }

    /// `inputs → h₁ → … → classes`, for messages and plot titles.
    pub fn arrows(&self) -> String {
        let mut parts = vec![self.inputs.to_string()];
        parts.extend(self.hidden.iter().map(usize::to_string));
        parts.push(self.classes.to_string());
        parts.join(" → ")
    }
}

/// A training run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    /// Replicas (a power of two), each of `stages` chips.
    pub replicas: u32,
    /// Pipeline stages (chips per replica); the layers are split into this many runs.
    pub stages: usize,
    /// Samples per replica per micro-batch (`m`).
    pub micro_batch: usize,
    /// Micro-batches accumulated per step (`GA`).
    pub accumulate: usize,
    pub epochs: usize,
    pub lr: f32,
    pub reduction: Reduction,
    /// Tiles of each chip a layer's rows are spread over (popnn's `tiles`).
    pub tiles: usize,
    pub shape: Shape,
    /// The activation after every hidden layer.
    pub activation: Activation,
    /// The pipeline schedule (with one stage every schedule is the same computation).
    pub schedule: Schedule,
    /// Recompute the activations in the backward pass instead of stashing them.
    pub recompute: bool,
    /// f16 weights with an f32 master copy (`popnn::TrainOptions::half_weights`).
    pub half_weights: bool,
    pub per_class: usize,
    pub seed: u64,
    /// The update rule and its state (`popnn::optim`).
    pub optimizer: Optimizer,
    /// Where the optimizer's state lives: on chip, or in Streaming Memory.
    pub state_location: TensorStorage,
    /// Replicated tensor sharding of the master weights and the optimizer's state over groups
    /// of this many consecutive replicas (`None`: every replica holds all of them).
    pub shard: Option<u32>,
}

/// An option outside what a run can do; names the option and the allowed range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--{option} {value}: {allowed}")]
pub struct ConfigError {
    pub option: &'static str,
    pub value: String,
    pub allowed: String,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            replicas: 1,
            stages: 1,
            micro_batch: 16,
            accumulate: 1,
            epochs: 5,
            lr: 0.05,
            reduction: Reduction::Mean,
            tiles: 4,
            shape: Shape {
                inputs: 8,
                hidden: vec![32],
                classes: 4,
            },
            activation: Activation::Relu,
            schedule: Schedule::Grouped,
            recompute: false,
            half_weights: false,
            per_class: 500,
            seed: 1,
            optimizer: Optimizer::Sgd,
            state_location: TensorStorage::OnChip,
            shard: None,
        }
    }
}

/// The command-line option of one of popnn's option names.
fn cli_option(popnn: &'static str) -> &'static str {
    match popnn {
        "stages" => "pipeline-stages",
        "micro-batch and accumulate" => "micro-batch",
        "sharding domain" => "shard",
        other => other,
    }
}

impl From<popnn::TrainError> for ConfigError {
    /// popnn's option errors under the command-line option's name; a model error (which
    /// [`Config::check`] rules out before) under `classes` or `hidden`; anything else is not
    /// an option's and stays under `model`.
    fn from(e: popnn::TrainError) -> ConfigError {
        use popnn::ModelError;
        match e {
            popnn::TrainError::Option {
                option,
                value,
                allowed,
            } => ConfigError {
                option: cli_option(option),
                value,
                allowed,
            },
            popnn::TrainError::Model(m) => ConfigError {
                option: match m {
                    ModelError::TooFewClasses(_) => "classes",
                    _ => "hidden",
                },
                value: String::new(),
                allowed: m.to_string(),
            },
            other => ConfigError {
                option: "model",
                value: String::new(),
                allowed: other.to_string(),
            },
        }
    }
}

impl Config {
    /// The benches' training step: Adam, 64 → 128 → 10, `replicas` replicas, micro-batches
    /// of 32 accumulated 4 times, 4 tiles a layer, one epoch of 1,000 samples per class.
    pub fn adam_bench(replicas: u32) -> Config {
        Config {
            replicas,
            micro_batch: 32,
            accumulate: 4,
            epochs: 1,
            lr: 0.001,
            reduction: Reduction::Mean,
            tiles: 4,
            shape: Shape {
                inputs: 64,
                hidden: vec![128],
                classes: 10,
            },
            per_class: 1000,
            optimizer: Optimizer::adam(),
            ..Config::default()
        }
    }

    /// Samples per step over all replicas: `R · m · GA`.
    pub fn global_batch(&self) -> usize {
        self.replicas as usize * self.micro_batch * self.accumulate
    }

    /// Chips in all: `R × P`.
    pub fn chips(&self) -> u32 {
        self.replicas.saturating_mul(self.stages as u32)
    }

    /// The popnn model (`Model::mlp`); [`Config::check`] makes it succeed.
    pub fn model(&self) -> Result<popnn::Model, ConfigError> {
        let s = &self.shape;
        popnn::Model::mlp(s.inputs, &s.hidden, s.classes, self.activation)
            .map_err(|e| popnn::TrainError::Model(e).into())
    }

    /// popnn's training options of this run.
    pub fn options(&self) -> popnn::TrainOptions {
        popnn::TrainOptions {
            replicas: self.replicas,
            stages: self.stages,
            micro_batch: self.micro_batch,
            accumulate: self.accumulate,
            tiles: self.tiles,
            schedule: self.schedule,
            recompute: self.recompute,
            optimizer: self.optimizer,
            lr: self.lr,
            reduction: self.reduction,
            optimizer_state_location: popnn::TensorLocation {
                storage: self.state_location,
                replicated_tensor_sharding: self.shard.is_some(),
            },
            half_weights: self.half_weights,
            sharding_domain: self.shard,
            ..popnn::TrainOptions::default()
        }
    }

    /// Checks every option; `train_len` is the size of the training set. mlp's own rules
    /// first (the shape, the replicas, the data), then popnn's against the machine of
    /// [`machine`] (stages, tiles, lr, the optimizer's hyper-parameters).
    pub fn check(&self, train_len: usize) -> Result<(), ConfigError> {
        self.check_shape()?;
        self.check_parallelism()?;
        if self.accumulate == 0 {
            return bad("accumulate", "0".into(), "at least 1 micro-batch per step");
        }
        if self.micro_batch == 0 {
            return bad("micro-batch", "0".into(), "at least 1 sample per replica");
        }
        if self.per_class == 0 {
            let allowed = "at least 1 generated sample per class";
            return bad("per-class", "0".into(), allowed);
        }
        if self.global_batch() > train_len {
            let allowed = format!(
                "the global batch R·m·GA = {} exceeds the {train_len} training samples",
                self.global_batch()
            );
            return bad("micro-batch", self.micro_batch.to_string(), &allowed);
        }
        // popnn's rules: `--pipeline-stages` 1 to the layers, `--tiles` within a chip, `--lr`,
        // the optimizer's hyper-parameters.
        let tiles = machine(1).tiles_per_ipu;
        self.options().check(&self.model()?, tiles)?;
        Ok(())
    }

    fn check_shape(&self) -> Result<(), ConfigError> {
        let s = &self.shape;
        if s.inputs == 0 {
            return bad("inputs", "0".into(), "at least 1 input feature");
        }
        if s.hidden.is_empty() || s.hidden.contains(&0) {
            let list: Vec<String> = s.hidden.iter().map(usize::to_string).collect();
            let allowed = "one or more layer widths of at least 1 unit, comma-separated";
            return bad("hidden", list.join(","), allowed);
        }
        if s.classes < 2 {
            return bad("classes", s.classes.to_string(), "at least 2 classes");
        }
        self.check_layers_fit()
    }

    /// Each layer's weights, spread over `--tiles` tiles, fit in a tile's memory: a layer too
    /// wide (`--hidden 100000000000`, or a label of 10^12 in a data file) is refused naming
    /// its option, before popnn builds a graph whose every vertex would be refused.
    pub fn check_layers_fit(&self) -> Result<(), ConfigError> {
        let s = &self.shape;
        let tile_bytes = f64::from(machine(1).bytes_per_tile);
        let tiles = self.tiles.max(1) as f64;
        let mut widths = vec![s.inputs];
        widths.extend_from_slice(&s.hidden);
        widths.push(s.classes);
        for (l, w) in widths.windows(2).enumerate() {
            // f32 weights and bias of the layer's rows on one tile.
            let bytes = (w[1] as f64 / tiles).ceil() * (w[0] as f64 + 1.0) * 4.0;
            if bytes <= tile_bytes {
                continue;
            }
            let why = format!(
                "a layer of {} × {} units over --tiles {} puts {} bytes of weights on a tile, \
                 more than its {} bytes of memory",
                w[0],
                w[1],
                self.tiles,
                app_support::bounds::show(bytes),
                tile_bytes
            );
            return if l < s.hidden.len() {
                let list: Vec<String> = s.hidden.iter().map(usize::to_string).collect();
                bad(
                    "hidden",
                    list.join(","),
                    &format!("{why}: give narrower layers"),
                )
            } else {
                bad("classes", s.classes.to_string(), &why)
            };
        }
        Ok(())
    }

    fn check_parallelism(&self) -> Result<(), ConfigError> {
        if !self.replicas.is_power_of_two() || self.replicas > 256 {
            let allowed = "a power of two from 1 to 256";
            return bad("replicas", self.replicas.to_string(), allowed);
        }
        if let Some(g) = self.shard {
            if g < 2 || !self.replicas.is_multiple_of(g) {
                let allowed = format!(
                    "a group of 2 or more replicas that divides --replicas {}",
                    self.replicas
                );
                return bad("shard", g.to_string(), &allowed);
            }
        }
        Ok(())
    }

    /// Training steps per epoch (whole global batches; the rest of the set is left out).
    pub fn steps_per_epoch(&self, train_len: usize) -> usize {
        train_len / self.global_batch()
    }

    /// The first sample of replica `r`'s part of micro-batch `a` of step `s`: the global
    /// batch of step `s` is samples `s·B ..` in data order, micro-batch `a` its `a`-th run of
    /// `R·m`, replica `r` the `r`-th `m` of that (popnn's order: step → micro-batch →
    /// replica). One replica with micro-batch `R·m` sees the same samples per micro-batch.
    pub fn first_sample(&self, s: usize, a: usize, r: usize) -> usize {
        let rm = self.replicas as usize * self.micro_batch;
        s * self.global_batch() + a * rm + r * self.micro_batch
    }
}

fn bad(option: &'static str, value: String, allowed: &str) -> Result<(), ConfigError> {
    Err(ConfigError {
        option,
        value,
        allowed: allowed.to_string(),
    })
}

/// The machine a run uses: `chips` chips (`R × P`) on a Pod64, or on several Pods beyond 64.
pub fn machine(chips: u32) -> Target {
    if chips <= 64 {
        Target::pod64()
    } else {
        Target::pods(chips.div_ceil(64), 64)
    }
}
