//! poplar-rs: a Poplar-style graph compiler and a multithreaded simulator of a many-tile chip.
//!
//! The pipeline: build a [`Graph`] (variables mapped to tiles, compute sets of vertices running
//! [`codelet`](mod@codelet)s) and [`Program`]s → [`compile`] (validation, exchange inference, BSP lowering,
//! memory allocation) → an [`Executable`] (plain data, saveable) → an [`Engine`] that runs it
//! on the tile simulator. See ARCHITECTURE.md.

pub mod codelet;
pub mod compiler;
pub mod dist;
pub mod dtype;
pub mod engine;
pub mod entity;
pub mod error;
pub mod exe;
pub mod fp;
pub mod graph;
/// Programs: control flow over compute sets, copies and host streams (part of the graph IR,
/// in `graph/program.rs`).
pub use graph::program;
pub mod profile;
pub mod target;

#[doc(hidden)]
pub use inventory;

pub use compiler::{compile, CompileOptions, InPlaceConcat};
pub use dtype::{DType, Element};
pub use engine::{Engine, EngineError, EngineOptions, GroupedRun, Interleave};
pub use error::{CompileError, GraphError, ValidationError};
pub use exe::Executable;
pub use graph::{concat, ComputeSet, Function, Graph, Stream, Tensor, VertexRef};
/// IEEE binary16, the chip's half-precision element type (`DType::F16`, `half` in codelet names).
pub use half::f16;
pub use program::Program;
pub use target::{Target, TileId};
