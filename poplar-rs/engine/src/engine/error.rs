//! Errors of building and running an engine.

use crate::dtype::DType;
use crate::exe::CheckError;
use crate::exe::StreamDir;
use crate::target::TileId;

/// Errors of building or running an engine. Each names the thing at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The instruction-set level asked for (`EngineOptions::isa`, `POPLAR_ISA`) is unknown or
    /// not supported by this host.
    #[error("{0}")]
    Isa(#[from] crate::isa::IsaError),
    /// The executable fails its checks (`Executable::check`, codelet resolution).
    #[error("invalid executable: {0}")]
    Executable(#[from] CheckError),
    /// A tile needs more memory than the target has (compiled with `allow_out_of_memory`).
    #[error("tile {tile} needs {bytes} bytes but the target has {budget} bytes per tile")]
    TileOutOfMemory {
        tile: TileId,
        bytes: u32,
        budget: u32,
    },
    /// The host could not allocate a tile's simulated memory.
    #[error("the host cannot allocate the {bytes} bytes of tile {tile}'s memory")]
    HostOutOfMemory { tile: TileId, bytes: u32 },
    /// The engine's thread pool could not be started.
    #[error("cannot build the engine's thread pool: {0}")]
    ThreadPool(String),
    /// `run` was given a program index the executable does not have.
    #[error("no program {index} (the executable has {count})")]
    NoSuchProgram { index: usize, count: usize },
    /// No host tensor has this name.
    #[error("no host tensor named '{name}'")]
    UnknownTensor { name: String },
    /// No stream has this name.
    #[error("no stream named '{name}'")]
    UnknownStream { name: String },
    /// A host tensor or stream was accessed with another element type.
    #[error("{what} '{name}' holds {expected}, accessed as {got}")]
    WrongDType {
        what: &'static str,
        name: String,
        expected: DType,
        got: DType,
    },
    /// Host data of the wrong number of elements.
    #[error("host tensor '{name}' has {expected} elements, given {got}")]
    WrongLength {
        name: String,
        expected: usize,
        got: usize,
    },
    /// The host tensor was created for reading only.
    #[error("host tensor '{name}' is not writable")]
    NotWritable { name: String },
    /// The host tensor was created for writing only.
    #[error("host tensor '{name}' is not readable")]
    NotReadable { name: String },
    /// A stream was used in the other direction than declared.
    #[error("stream '{name}' is {dir:?}, not usable this way")]
    WrongStreamDirection { name: String, dir: StreamDir },
    /// A program reads a host-to-device stream that has no host buffer.
    #[error("stream '{name}' is not connected (or connected to an empty buffer) but the program reads it")]
    StreamNotConnected { name: String },
    /// A vertex returned an error or panicked (the message says which and where).
    #[error("vertex {vertex} ({codelet}) on tile {tile} in compute set '{compute_set}' failed: {message}")]
    VertexFailed {
        vertex: u32,
        codelet: String,
        tile: TileId,
        compute_set: String,
        message: String,
    },
    /// With `check_finite`, a vertex wrote NaN or infinity.
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
    /// Replicas of one program took different control flow: a predicate or switch control
    /// holds another value on `replica` than on replica 0 (tile and offset are
    /// replica-local).
    #[error("replicas diverged: the control-flow scalar at tile {tile} offset {offset} is {value} on replica {replica} but {replica0_value} on replica 0 (every replica must take the same branch)")]
    ReplicasDiverged {
        tile: TileId,
        offset: u32,
        replica: u32,
        value: i64,
        replica0_value: i64,
    },
    /// A replica index outside `0..replicas`.
    #[error("no replica {replica} (the executable has {replicas})")]
    NoSuchReplica { replica: u32, replicas: u32 },
    /// A whole-engine read of a host tensor or stream of a replicated executable, which holds
    /// one value per replica.
    #[error("{what} '{name}' has one value per replica ({replicas}): read it with the *_replica or *_all_replicas methods")]
    Replicated {
        what: &'static str,
        name: String,
        replicas: u32,
    },
    /// No remote buffer has this name.
    #[error("no remote buffer named '{name}'")]
    UnknownRemoteBuffer { name: String },
    /// A copy (of program `program`, or the host's when `None`) names a row beyond a remote
    /// buffer's rows: nothing was copied (on a replicated executable, on no replica: every
    /// replica's rows are checked before any replica's move), and every buffer can still be
    /// read. `buffer` is the name the buffer was declared with; `replica` the replica whose
    /// rows are at fault (`None` when the executable is not replicated).
    #[error("{}remote buffer '{buffer}'{}: row {row} is out of range (it has {rows} rows); {}", .program.map(|p| format!("program {p}: ")).unwrap_or_default(), .replica.map(|r| format!(" of replica {r}")).unwrap_or_default(), if .program.is_some() { "nothing was copied" } else { "nothing was read or written" })]
    RemoteRowOutOfRange {
        buffer: String,
        replica: Option<u32>,
        row: i64,
        rows: u64,
        program: Option<usize>,
    },
    /// The host's store of Streaming Memory failed (its spill file could not be written or
    /// read).
    #[error("remote buffer '{buffer}': the host's Streaming Memory store failed: {message}")]
    StreamingMemoryIo { buffer: String, message: String },
    /// `read_memory` outside a tile's memory.
    #[error("tile {tile}: bytes {offset}..{offset}+{len} are outside its memory")]
    MemoryRange {
        tile: TileId,
        offset: usize,
        len: usize,
    },
    /// Running over several ranks ([`crate::dist`]): rank `rank` failed, and every rank of the
    /// job reports it. `cause` is that rank's own error, in words (it names the vertex, tile
    /// or stream at fault).
    #[error("rank {rank} of {ranks}: {cause}")]
    OnRank {
        rank: usize,
        ranks: usize,
        cause: String,
    },
    /// Running over several ranks: rank `rank` holds another executable than rank 0 (its
    /// checksum differs), so the ranks would not run the same program.
    #[error("rank {rank} loaded another executable than rank 0 (checksum {checksum:#018x}, rank 0 has {root_checksum:#018x}): every rank must load the same file")]
    RanksDisagree {
        rank: usize,
        checksum: u64,
        root_checksum: u64,
    },
}

impl EngineError {
    /// Whether every rank of the job has this same error (the engine shared it: a failure on
    /// one rank, or ranks holding different executables), so every rank ends alike and none
    /// waits for another. Any other error of a multi-rank job may be this rank's alone.
    pub fn is_shared(&self) -> bool {
        matches!(
            self,
            EngineError::OnRank { .. } | EngineError::RanksDisagree { .. }
        )
    }
}

/// Whether `e` or one of its sources is an error every rank shares (an [`EngineError`] for
/// which [`EngineError::is_shared`] holds, or a [`crate::dist::RankError`]): an application's `main` ends its job with
/// [`crate::dist::Cluster::abort`] when it is not.
pub fn is_shared_error(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if err
            .downcast_ref::<EngineError>()
            .is_some_and(EngineError::is_shared)
            || err.is::<crate::dist::RankError>()
        {
            return true;
        }
        cur = err.source();
    }
    false
}
