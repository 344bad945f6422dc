//! poplar-rs engine: the multithreaded tile simulator that runs an
//! [`Executable`](poplar_exe::Executable) ([`engine`]), and the ranks of a job that runs one
//! simulation over several processes ([`dist`], MPI behind the feature `mpi`). The engine runs
//! any executable, wherever it came from: this crate knows nothing of the graph or compiler.

// The rooms this crate may enter (ARCHITECTURE.md, "Doors between rooms"), imported at the
// root so that every crate names a room the same way: `crate::target::…`.
#![warn(unreachable_pub)]
use poplar_core::{codelet, dtype, entity, fp, isa, target};
use poplar_exe::{exe, profile};

pub mod dist;
pub mod engine;

pub use engine::{Engine, EngineError, EngineOptions, GroupedRun, Interleave};
