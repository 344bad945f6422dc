//! poplar-rs: a Poplar-style graph compiler and a multithreaded simulator of a many-tile chip.
//!
//! The pipeline: build a [`Graph`] (variables mapped to tiles, compute sets of vertices running
//! [`codelet`](mod@codelet)s) and [`Program`]s → [`compile`] (validation, exchange inference, BSP lowering,
//! memory allocation) → an [`Executable`] (plain data, saveable) → an [`Engine`] that runs it
//! on the tile simulator. See ARCHITECTURE.md.
//!
//! This crate is the façade: it re-exports the public API of the crates along the pipeline,
//! which Cargo keeps apart —
//! `poplar-core` (targets, element types, ids, host floating point, codelets),
//! `poplar-exe` (executables, their file, profiles),
//! `poplar-compiler` (the graph IR and the compiler) and
//! `poplar-engine` (the simulator and its distribution over ranks).
//! Applications and libraries use `poplar::…` only.

/// Programs: control flow over compute sets, copies and host streams (part of the graph IR,
/// in `graph/program.rs`).
pub use poplar_compiler::graph::program;
pub use poplar_compiler::{compiler, graph};
pub use poplar_core::isa_dispatch;
pub use poplar_core::rand;
pub use poplar_core::{codelet, dtype, entity, fp, isa, target};
pub use poplar_engine::{dist, engine};
pub use poplar_exe::{exe, profile};

#[doc(hidden)]
pub use poplar_core::inventory;

pub use compiler::{compile, CompileOptions, InPlaceConcat};
pub use dtype::{DType, Element};
pub use engine::{Engine, EngineError, EngineOptions, GroupedRun, Interleave};
pub use error::{CompileError, GraphError, ValidationError};

/// The errors of building and compiling a graph, in one place: [`GraphError`] (and how errors
/// name a vertex, [`VertexName`](error::VertexName)) from `poplar::graph`, the compiler's from
/// `poplar::compiler`.
pub mod error {
    pub use poplar_compiler::compiler::{CompileError, Pass, ValidationError, VerifierError};
    pub use poplar_compiler::graph::{GraphError, VertexName};
}
pub use exe::Executable;
pub use fp::f16_from_f64;
pub use graph::{concat, ComputeSet, Function, Graph, Stream, Tensor, VertexRef};
/// IEEE binary16, the chip's half-precision element type (`DType::F16`, `half` in codelet names).
pub use poplar_core::f16;
pub use program::Program;
pub use target::{Target, TileId};
