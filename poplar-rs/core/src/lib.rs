//! poplar-rs core types, shared by every other crate of the framework: the [`target`] chip,
//! element types ([`dtype`]), typed ids and dense maps ([`entity`]), floating point on host
//! threads ([`fp`]), deterministic random numbers ([`rand`]), and [`codelet`](mod@codelet)s with their registry.
//!
//! Users reach these through the `poplar` façade (`poplar::target`, `poplar::codelet!`, …);
//! see ARCHITECTURE.md for the crates and the doors between them.

#![warn(unreachable_pub)]
pub mod codelet;
pub mod dtype;
pub mod entity;
pub mod fp;
pub mod isa;
pub mod rand;
pub mod target;

#[doc(hidden)]
pub use inventory;

/// IEEE binary16, the chip's half-precision element type (`DType::F16`, `half` in codelet names).
pub use half::f16;
