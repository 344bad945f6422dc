//! Data-parallel (and pipelined) training of a multilayer perceptron, a thin app on
//! [`popnn`] (`docs/mlp.md`): the data sets (`data`: generated blobs, `.npy` files, the
//! shipped UCI digits of `digits`), the run's options checked with errors naming the
//! command-line option (`config`), training runs on popnn's graph and trainer (`run`), the
//! loss curve (`curve`), the scaling report (`scaling`) and the commands of the `mlp` binary
//! (`cmd`). The model, its vertices, the
//! optimizers, the replicated and pipelined graph and the f64 reference are popnn's.

pub mod cmd;
pub mod config;
pub mod curve;
pub mod data;
pub mod digits;
pub mod run;
pub mod scaling;

/// The optimizers (popnn's): SGD, momentum and Adam, with their host arithmetic and f64
/// oracle.
pub use popnn::optim;

/// Keeps the codelet registrations (popnn's, the collectives' and the standard ones) in the
/// final binary.
#[inline(never)]
pub fn link() {
    popnn::link();
}
