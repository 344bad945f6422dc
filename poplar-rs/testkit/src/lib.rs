//! Test support of the framework crates (`poplar-rs/*/tests/`), in one crate so that every test
//! binary registers the same test codelets: [`vertices`] (`"test::…"`, one definition per name),
//! [`builder`] (hand-made executables, no compiler), [`golden`] files, and with the feature
//! `compiler` the graph-building cases with their host models: `random` graphs, the
//! multi-rank loop (`ranks`) and the `remote` buffers.
//!
//! `inventory` registers the codelets of the crates a binary links only: a test binary that
//! uses nothing else of this crate calls [`link`] (and `codelets::link()` for the standard
//! codelets).

pub mod builder;
mod golden;
pub mod vertices;

#[cfg(feature = "compiler")]
pub mod random;
#[cfg(feature = "compiler")]
pub mod ranks;
#[cfg(feature = "compiler")]
pub mod remote;

pub use golden::golden;

/// Forces the linker to keep this crate's registrations.
pub fn link() {}
