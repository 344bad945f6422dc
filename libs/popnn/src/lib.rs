//! Neural-network training on poplar-rs, in the spirit of Poplar's popnn and PopART's
//! training options, written only against the public APIs of `poplar`, `codelets` and
//! `collectives`:
//!
//! - [`model`]: dense layers with ReLU or GELU ([`math::Activation`]) ending in logits, a
//!   softmax cross-entropy loss, the parameters' layout and initialisation;
//! - [`optim`]: SGD, SGD with momentum and Adam, with f32 state (the host's f32 and f64
//!   arithmetic beside the vertices');
//! - [`schedule`]: the pipeline schedules (Sequential, Interleaved, Grouped) and their stash
//!   depths;
//! - [`train`]: the training graph — layers spread over tiles, split into pipeline stages over
//!   the chips of each replica, gradient accumulation over micro-batches, the all-reduce over
//!   replicas, the update — and [`train::Trainer`], its host side;
//! - [`host`]: the f64 reference the device is checked against;
//! - [`codelets`]: the vertices, with their cycle estimates.
//!
//! A binary that uses this crate calls [`link()`] once, so that the linker keeps the codelet
//! registrations.

pub mod bubble;
pub mod codelets;
pub mod host;
pub mod math;
pub mod model;
mod network;
pub mod optim;
pub mod options;
pub mod presets;
pub mod schedule;
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
}
