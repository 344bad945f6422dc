//! What a training run is: options, checked before any work, with typed errors.

use serde::Serialize;

use crate::model::Shape;

/// How the gradients of the global batch are combined before the update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Reduction {
    /// The update uses the sum of the per-sample gradients of the global batch:
    /// `params −= lr · Σ grad`. The step grows with the global batch.
    Sum,
    /// The update uses their mean over the global batch of `R · m · GA` samples:
    /// `params −= lr · Σ grad / (R·m·GA)`. The step does not depend on how the batch is split.
    Mean,
}

/// A training run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    /// Replicas (a power of two, one chip each).
    pub replicas: u32,
    /// Samples per replica per micro-batch (`m`).
    pub micro_batch: usize,
    /// Micro-batches accumulated per step (`GA`).
    pub accumulate: usize,
    pub epochs: usize,
    pub lr: f32,
    pub reduction: Reduction,
    /// Tiles per replica that compute samples (the parameters live on one more tile).
    pub tiles: usize,
    pub shape: Shape,
    pub per_class: usize,
    pub seed: u64,
    /// The update rule and its state (`optim`).
    pub optimizer: crate::optim::Optimizer,
    /// Replicated tensor sharding of the master weights and the optimizer's state over groups
    /// of this many consecutive replicas (`None`: every replica holds all of them): each
    /// replica updates `⌈P/G⌉` parameters, after a reduce-scatter of the gradients, and the
    /// weights are all-gathered.
    pub shard: Option<u32>,
    /// Where the optimizer's state lives: on tile 0 (`None`), or in Streaming Memory in this
    /// many chunks, loaded one at a time for the update and stored back.
    pub state_chunks: Option<u32>,
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
            micro_batch: 16,
            accumulate: 1,
            epochs: 5,
            lr: 0.05,
            reduction: Reduction::Mean,
            tiles: 4,
            shape: Shape {
                inputs: 8,
                hidden: 32,
                classes: 4,
            },
            per_class: 500,
            seed: 1,
            optimizer: crate::optim::Optimizer::Sgd,
            shard: None,
            state_chunks: None,
        }
    }
}

impl Config {
    /// Samples per step over all replicas: `R · m · GA`.
    pub fn global_batch(&self) -> usize {
        self.replicas as usize * self.micro_batch * self.accumulate
    }

    /// The factor of the summed gradient in the update (see [`Reduction`]).
    pub fn update_scale(&self) -> f32 {
        match self.reduction {
            Reduction::Sum => self.lr,
            Reduction::Mean => self.lr / self.global_batch() as f32,
        }
    }

    /// Checks every option; `train_len` is the size of the training set.
    /// The gradient's scale before momentum's and Adam's updates: 1 (`Sum`) or `1/B` (`Mean`).
    pub fn grad_scale(&self) -> f32 {
        match self.reduction {
            Reduction::Sum => 1.0,
            Reduction::Mean => 1.0 / self.global_batch() as f32,
        }
    }

    /// Parameters each replica updates: `⌈P/G⌉` when sharded over groups of `G`, else `P`.
    pub fn shard_len(&self) -> usize {
        let p = self.shape.params();
        self.shard.map_or(p, |g| p.div_ceil(g as usize))
    }

    /// The scales of an update (`optim::Scales`).
    pub fn scales(&self) -> crate::optim::Scales {
        crate::optim::Scales {
            sgd: self.update_scale(),
            grad: self.grad_scale(),
            lr: self.lr,
        }
    }

    pub fn check(&self, train_len: usize) -> Result<(), ConfigError> {
        let bad = |option, value: String, allowed: &str| {
            Err(ConfigError {
                option,
                value,
                allowed: allowed.to_string(),
            })
        };
        if let Err((option, value, allowed)) = self.optimizer.check() {
            return bad(option, value.to_string(), allowed);
        }
        if let Some(k) = self.state_chunks {
            if k == 0 || k as usize > self.shard_len() {
                return bad(
                    "state-chunks",
                    k.to_string(),
                    &format!(
                        "1 to {} chunks (the parameters a replica updates)",
                        self.shard_len()
                    ),
                );
            }
        }
        if let Some(g) = self.shard {
            if g < 2 || !self.replicas.is_multiple_of(g) {
                return bad(
                    "shard",
                    g.to_string(),
                    &format!(
                        "a group of 2 or more replicas that divides --replicas {}",
                        self.replicas
                    ),
                );
            }
        }
        if !self.replicas.is_power_of_two() || self.replicas > 256 {
            return bad(
                "replicas",
                self.replicas.to_string(),
                "a power of two from 1 to 256",
            );
        }
        if self.micro_batch == 0 {
            return bad("micro-batch", "0".into(), "at least 1 sample per replica");
        }
        if self.accumulate == 0 {
            return bad("accumulate", "0".into(), "at least 1 micro-batch per step");
        }
        if self.tiles == 0 || self.tiles > 1024 {
            return bad(
                "tiles",
                self.tiles.to_string(),
                "1 to 1024 sample tiles per replica",
            );
        }
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return bad("lr", self.lr.to_string(), "a finite learning rate above 0");
        }
        if self.shape.inputs == 0 {
            return bad("inputs", "0".into(), "at least 1 input feature");
        }
        if self.shape.hidden == 0 {
            return bad("hidden", "0".into(), "at least 1 hidden unit");
        }
        if self.shape.classes < 2 {
            return bad(
                "classes",
                self.shape.classes.to_string(),
                "at least 2 classes",
            );
        }
        if self.per_class == 0 {
            return bad(
                "per-class",
                "0".into(),
                "at least 1 generated sample per class",
            );
        }
        if self.global_batch() > train_len {
            return bad(
                "micro-batch",
                self.micro_batch.to_string(),
                &format!(
                    "the global batch R·m·GA = {} exceeds the {train_len} training samples",
                    self.global_batch()
                ),
            );
        }
        Ok(())
    }

    /// Training steps per epoch (whole global batches; the rest of the set is left out).
    pub fn steps_per_epoch(&self, train_len: usize) -> usize {
        train_len / self.global_batch()
    }

    /// The first sample of replica `r`'s part of micro-batch `a` of step `s`: the global
    /// batch of step `s` is samples `s·B ..` in data order, micro-batch `a` its `a`-th run of
    /// `R·m`, replica `r` the `r`-th `m` of that. One replica with micro-batch `R·m` sees the
    /// same samples per micro-batch.
    pub fn first_sample(&self, s: usize, a: usize, r: usize) -> usize {
        let rm = self.replicas as usize * self.micro_batch;
        s * self.global_batch() + a * rm + r * self.micro_batch
    }
}

/// `total` in `parts` balanced runs (the first ones one larger), empty runs dropped.
pub fn split(total: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
    let parts = parts.max(1);
    let mut out = Vec::new();
    let mut at = 0;
    for k in 0..parts {
        let n = total / parts + usize::from(k < total % parts);
        if n > 0 {
            out.push(at..at + n);
        }
        at += n;
    }
    out
}
