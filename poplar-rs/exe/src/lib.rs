//! poplar-rs executables: the lowered program as self-contained plain data ([`exe`]: typed
//! phases, tile images, its consistency check, the versioned file, replica expansion), and
//! [`profile`]s of its runs (the cycle model, the engine's recorder, reports).
//!
//! This crate knows nothing of the graph IR, the compiler or the engine: tools that only read
//! executables and profiles (`poplar-cli`, the viewer) depend on it alone.

// The rooms this crate may enter (ARCHITECTURE.md, "Doors between rooms"), imported at the
// root so that every crate names a room the same way: `crate::target::…`.
#![warn(unreachable_pub)]
use poplar_core::{codelet, dtype, entity, target};

mod atomic;
pub mod exe;
pub mod files;
pub mod profile;

pub use exe::{CheckError, Executable, ExecutableError, FileError};
