//! What a training graph is built with, checked before any graph is built.

use serde::Serialize;

use crate::model::{Model, ModelError};
use crate::optim::Optimizer;
use crate::schedule::Schedule;

/// How the gradients of the global batch are combined before the update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reduction {
    /// The update uses the sum of the per-sample gradients of the global batch.
    Sum,
    /// The update uses their mean over the global batch of `R · m · M` samples.
    Mean,
}

/// Where a kind of tensor is stored (PopART's `TensorStorage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TensorStorage {
    /// In the tile memory of the chip that uses it.
    #[default]
    OnChip,
    /// In Streaming Memory: loaded onto the tiles for the update, stored back after it.
    OffChip,
}

/// Where a kind of tensor lives (PopART's `TensorLocation`): its storage, and whether it is
/// split over the replicas (replicated tensor sharding) instead of copied on each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct TensorLocation {
    pub storage: TensorStorage,
    pub replicated_tensor_sharding: bool,
}

/// The options of a training graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainOptions {
    /// Replicas (a power of two), each of `stages` chips.
    pub replicas: u32,
    /// Pipeline stages: the layers are split into this many consecutive runs, one chip each.
    pub stages: usize,
    /// Samples per micro-batch (`m`).
    pub micro_batch: usize,
    /// Micro-batches per step (`M`, the gradient accumulation count).
    pub accumulate: usize,
    /// Tiles of each chip a layer's rows are spread over.
    pub tiles: usize,
    pub schedule: Schedule,
    /// Keep only each stage's input per micro-batch and recompute its activations in the
    /// backward pass.
    pub recompute: bool,
    pub optimizer: Optimizer,
    pub lr: f32,
    pub reduction: Reduction,
    /// Where the optimizer's state lives (`crate::update` states what each choice saves).
    /// With replicated tensor sharding the update also keeps an f32 master copy of the
    /// replica's shard of the weights, and the weights are all-gathered after it.
    pub optimizer_state_location: TensorLocation,
    /// Unsharded, the gradients are all-reduced in buckets of consecutive tensors (largest
    /// first) of at most this many bytes, one collective each (PyTorch DDP's `bucket_cap_mb`):
    /// fewer, larger collectives pay their latency less often; smaller ones need shorter
    /// buffers. A tensor larger than this is a bucket of its own. Default 1 MiB.
    pub all_reduce_bucket_bytes: usize,
    /// Weights in f16 (half the memory and exchange of f32 weights), updated through an f32
    /// master copy (on chip as the weights, or the replica's shard with replicated tensor
    /// sharding) and rounded to f16 after each update.
    pub half_weights: bool,
    /// Shard over groups of this many consecutive replicas (within a Pod) instead of all of
    /// them; the shards' gradients are then all-reduced across the groups.
    pub sharding_domain: Option<u32>,
}

impl Default for TrainOptions {
    fn default() -> TrainOptions {
        TrainOptions {
            replicas: 1,
            stages: 1,
            micro_batch: 8,
            accumulate: 4,
            tiles: 4,
            schedule: Schedule::Grouped,
            recompute: false,
            optimizer: Optimizer::Sgd,
            lr: 0.05,
            reduction: Reduction::Mean,
            optimizer_state_location: TensorLocation::default(),
            all_reduce_bucket_bytes: 1 << 20,
            half_weights: false,
            sharding_domain: None,
        }
    }
}

/// A graph that cannot be built; names the option or the part at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrainError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("{option} {value}: {allowed}")]
    Option {
        option: &'static str,
        value: String,
        allowed: String,
    },
    #[error(transparent)]
    Graph(#[from] poplar_compiler::graph::GraphError),
    #[error("building the gradient all-reduce: {0}")]
    Collective(#[from] collectives::CollectiveError),
    #[error(transparent)]
    Compile(#[from] poplar_compiler::compiler::CompileError),
    #[error("zeroing the gradients: {0}")]
    Op(#[from] popops::OpError),
}

impl TrainOptions {
    /// Samples per step over every replica (`R · m · M`).
    pub fn global_batch(&self) -> usize {
        self.replicas as usize * self.micro_batch * self.accumulate
    }

    /// Plain SGD's factor of the summed gradient: `lr`, or `lr / B` for the mean.
    pub fn update_scale(&self) -> f32 {
        match self.reduction {
            Reduction::Sum => self.lr,
            Reduction::Mean => self.lr / self.global_batch() as f32,
        }
    }

    /// The other optimizers' scale of the summed gradient: 1, or `1 / B` for the mean.
    pub fn grad_scale(&self) -> f32 {
        match self.reduction {
            Reduction::Sum => 1.0,
            Reduction::Mean => 1.0 / self.global_batch() as f32,
        }
    }

    /// The replicas a shard is split over (`None` without replicated tensor sharding).
    pub fn shard_group(&self) -> Option<u32> {
        self.optimizer_state_location
            .replicated_tensor_sharding
            .then(|| self.sharding_domain.unwrap_or(self.replicas))
    }

    /// Checks the options against `model` and a chip of `tiles_per_chip` tiles.
    pub fn check(&self, model: &Model, tiles_per_chip: u32) -> Result<(), TrainError> {
        let bad = |option, value: String, allowed: String| {
            Err(TrainError::Option {
                option,
                value,
                allowed,
            })
        };
        let layers = model.layers().len();
        if self.stages == 0 || self.stages > layers {
            return bad(
                "stages",
                self.stages.to_string(),
                format!("1 to the model's {layers} layers (a stage holds at least one)"),
            );
        }
        if self.micro_batch == 0 || self.accumulate == 0 {
            return bad(
                "micro-batch and accumulate",
                format!("{} and {}", self.micro_batch, self.accumulate),
                "at least 1 each".into(),
            );
        }
        if self.tiles == 0 || self.tiles > tiles_per_chip as usize {
            return bad(
                "tiles",
                self.tiles.to_string(),
                format!("1 to the chip's {tiles_per_chip} tiles"),
            );
        }
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return bad("lr", self.lr.to_string(), "a finite value above 0".into());
        }
        if let Some(d) = self.sharding_domain {
            if d == 0 || !self.replicas.is_multiple_of(d) {
                return bad(
                    "sharding domain",
                    d.to_string(),
                    format!("a divisor of the {} replicas", self.replicas),
                );
            }
        }
        if let Err((option, value, allowed)) = self.optimizer.check() {
            return bad(option, value.to_string(), allowed.into());
        }
        Ok(())
    }
}
