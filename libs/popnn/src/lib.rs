//! Neural-network training on poplar-rs, in the spirit of Poplar's popnn and PopART's
//! training options, written only against the public APIs of the framework's crates (the graph
//! IR, the compiler and the executable, not the engine), `codelets` and `collectives`:
//!
//! - [`model`]: dense layers with ReLU or GELU ([`math::Activation`]) ending in logits, a
//!   softmax cross-entropy loss, the parameters' layout and initialisation;
//! - [`optim`]: SGD, SGD with momentum and Adam, with f32 state (the host's f32 and f64
//!   arithmetic beside the vertices');
//! - [`schedule`]: the pipeline schedules (Sequential, Interleaved, Grouped) and their stash
//!   depths;
//! - [`train`]: the training graph — layers spread over tiles, split into pipeline stages over
//!   the chips of each replica, gradient accumulation over micro-batches, the all-reduce over
//!   replicas, the update — and [`train::Trainer`], its host side on any device (an
//!   `Engine`: `poplar_exe::exe::Device`);
//! - [`ops`]: graph-building ops in the style of poplibs' popnn — non-linearities, softmax
//!   and log-softmax, cross-entropy and sum-of-squares losses, max and average pooling,
//!   batch, layer and group normalisation, with their gradients;
//! - [`host`]: the f64 reference the device is checked against;
//! - [`codelets`]: the vertices, with their cycle estimates.
//!
//! ```
//! use popnn::{Activation, Model, Optimizer, Schedule, TrainOptions, Trainer};
//!
//! popnn::link();
//! let model = Model::mlp(4, &[8], 3, Activation::Relu)?;
//! let opts = TrainOptions {
//!     replicas: 2,
//!     stages: 2, // one layer a chip: 2 replicas × 2 chips
//!     micro_batch: 2,
//!     accumulate: 4,
//!     tiles: 2,
//!     schedule: Schedule::Interleaved,
//!     optimizer: Optimizer::adam(),
//!     lr: 0.01,
//!     ..TrainOptions::default()
//! };
//! let machine = poplar_core::target::Target { num_ipus: 4, ..poplar_core::target::Target::custom(4, 64 * 1024) };
//! let compiled = popnn::build(&machine, &model, &opts)?;
//! let engine = poplar::Engine::new(&compiled.exe, poplar::EngineOptions::with_threads(1))?;
//! let mut t = Trainer::new(&compiled, engine);
//! t.set_params(&model.init(1))?;
//! // Each replica's samples of one step (M micro-batches of m), sample-major, and labels.
//! let x: Vec<f32> = (0..8 * 4).map(|i| (i as f32 * 0.3).sin()).collect();
//! let y: Vec<i32> = (0..8).map(|s| s % 3).collect();
//! t.feed(&[x.clone(), x], &[y.clone(), y])?;
//! t.step()?;
//! let (loss, _right) = t.take_stats()?;
//! assert!(loss > 0.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A binary that uses this crate calls [`link()`] once, so that the linker keeps the codelet
//! registrations.

pub mod bubble;
pub mod codelets;
pub mod host;
pub mod math;
pub mod model;
mod network;
pub mod ops;
pub mod optim;
pub mod options;
pub mod presets;
pub mod schedule;
pub mod sequential;
pub mod train;
pub mod update;

pub use math::Activation;
pub use model::{Dense, LayerParams, Model, ModelError};
pub use optim::Optimizer;
pub use options::{Reduction, TensorLocation, TensorStorage, TrainError, TrainOptions};
pub use schedule::Schedule;
pub use train::{build, Compiled, RunError, Trainer};

/// Keeps this crate's codelet registrations (and the collectives' and standard ones) linked.
#[inline(never)]
pub fn link() {
    collectives::link();
    poplin::link();
}
