//! Data-parallel training of a multilayer perceptron on replicated poplar-rs graphs
//! (`docs/mlp.md`): the data sets (`data`: generated blobs, `.npy` files, the shipped UCI
//! digits of `digits`), the model and its arithmetic (`model`), the vertices (`codelets`), the
//! optimizers (`optim`), the replicated graph with the gradient reduction of the collectives
//! library (`device`), the host reference trainer (`reference`), training runs (`run`), the
//! loss curve (`curve`) and the scaling report (`scaling`). Written only against the public
//! APIs of `poplar`, `codelets` and `collectives`.

pub mod codelets;
pub mod config;
pub mod curve;
pub mod data;
pub mod device;
pub mod digits;
pub mod model;
pub mod optim;
pub mod reference;
pub mod run;
pub mod scaling;

/// Keeps the codelet registrations (this crate's, the collectives' and the standard ones) in
/// the final binary.
#[inline(never)]
pub fn link() {
    collectives::link();
}
