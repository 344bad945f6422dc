//! poplar-rs graph IR and compiler: the [`graph`] users build (variables, tensors as views,
//! compute sets of vertices, programs, and their errors), and the [`compiler`] that validates it,
//! lays out tile memory, infers exchanges and lowers programs into an
//! [`Executable`](poplar_exe::Executable). Compiling runs nothing.

// The rooms this crate may enter (ARCHITECTURE.md, "Doors between rooms"), imported at the
// root so that every crate names a room the same way: `crate::target::…`.
#![warn(unreachable_pub)]
use poplar_core::{codelet, dtype, entity, target};
use poplar_exe::exe;

pub mod compiler;
pub mod graph;

pub use compiler::{compile, CompileOptions, InPlaceConcat};
