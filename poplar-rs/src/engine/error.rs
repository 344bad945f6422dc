//! Errors of building and running an engine.

use crate::dtype::DType;
use crate::exe::ExecutableError;
use crate::exe::StreamDir;
use crate::target::TileId;

/// Errors of building or running an engine. Each names the thing at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    #[error("invalid executable: {0}")]
    Executable(#[from] ExecutableError),
    #[error("tile {tile} needs {bytes} bytes but the target has {budget} bytes per tile")]
    TileOutOfMemory {
        tile: TileId,
        bytes: u32,
        budget: u32,
    },
    /// The host could not allocate a tile's simulated memory.
    #[error("the host cannot allocate the {bytes} bytes of tile {tile}'s memory")]
    HostOutOfMemory { tile: TileId, bytes: u32 },
    #[error("cannot build the engine's thread pool: {0}")]
    ThreadPool(String),
    #[error("no program {index} (the executable has {count})")]
    NoSuchProgram { index: usize, count: usize },
    #[error("no host tensor named '{name}'")]
    UnknownTensor { name: String },
    #[error("no stream named '{name}'")]
    UnknownStream { name: String },
    #[error("{what} '{name}' holds {expected}, accessed as {got}")]
    WrongDType {
        what: &'static str,
        name: String,
        expected: DType,
        got: DType,
    },
    #[error("host tensor '{name}' has {expected} elements, given {got}")]
    WrongLength {
        name: String,
        expected: usize,
        got: usize,
    },
    #[error("host tensor '{name}' is not writable")]
    NotWritable { name: String },
    #[error("host tensor '{name}' is not readable")]
    NotReadable { name: String },
    #[error("stream '{name}' is {dir:?}, not usable this way")]
    WrongStreamDirection { name: String, dir: StreamDir },
    #[error("stream '{name}' is not connected (or connected to an empty buffer) but the program reads it")]
    StreamNotConnected { name: String },
    #[error("vertex {vertex} ({codelet}) on tile {tile} in compute set '{compute_set}' failed: {message}")]
    VertexFailed {
        vertex: u32,
        codelet: String,
        tile: TileId,
        compute_set: String,
        message: String,
    },
    #[error("vertex {vertex} ({codelet}) on tile {tile} in compute set '{compute_set}' wrote {value} to element {element} of field {field}")]
    NonFinite {
        vertex: u32,
        codelet: String,
        field: usize,
        tile: TileId,
        compute_set: String,
        element: u64,
        value: f32,
    },
    #[error("tile {tile}: bytes {offset}..{offset}+{len} are outside its memory")]
    MemoryRange {
        tile: TileId,
        offset: usize,
        len: usize,
    },
}
