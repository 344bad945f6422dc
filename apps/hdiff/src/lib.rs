//! The weather-model horizontal diffusion stencil (hdiff: a Laplacian feeding two limited
//! fluxes) on the simulated chip, with the single-, dual- and tri-stage mappings of SPARTA
//! (ICS 2023), written only against the public API of `poplar` and `codelets`.
//!
//! - [`grid`]: the grid, its fields, gridtools' test data;
//! - [`stencil`]: the arithmetic, as row functions shared by every implementation, the block
//!   kernels, the cycle model of each stage;
//! - [`reference`](mod@reference): the point-wise oracle and the native loop;
//! - [`plan`]: mappings and their decomposition of the grid over tiles;
//! - [`codelets`]: the vertices of each stage;
//! - [`device`]: the graph of a plan, compiled, and the engine that runs it;
//! - [`run`](mod@run): a run and the figures it reports;
//! - [`output`]: `.npy` and VTK image data (`.vti`) files;
//! - [`error`]: typed errors.

pub mod codelets;
pub mod device;
pub mod error;
pub mod grid;
pub mod output;
pub mod plan;
pub mod reference;
pub mod run;
pub mod stencil;

pub use error::HdiffError;
pub use grid::{Grid, HALO};
