//! The executable: plain data produced by the compiler and consumed by the engine.
//!
//! Nothing here refers to the graph IR. Every location is a byte offset into one tile's memory,
//! assigned by the compiler's memory pass. The types are plain data so that they serialize
//! (see [`file`](mod@file)) and so that an engine can run an executable loaded from disk without the graph.
//!
//! Invariants (checked by [`Executable::check`], which `load` and `Engine::new` run):
//! - every offset range lies inside its tile's `memory_bytes` and is aligned to its element size;
//! - within one exchange phase, no destination byte range overlaps any source byte range or
//!   another destination range;
//! - a vertex's written fields overlap none of its other fields;
//! - codelet indices, compute and exchange indices, stream and function indices are in range.

mod check;
mod check_remote;
mod device;
mod dump;
mod error;
pub mod file;
mod remote;
mod replicate;
pub use remote::{
    RemoteBufferDesc, RemoteBufferId, RemoteCopy, RemoteCopyId, RemoteDir, RowSelect,
    MAX_TRANSFER_BYTES,
};
pub use replicate::ReplicaLayout;

pub use device::Device;

pub use error::{CheckError, ExecutableError, FileError};

use serde::{Deserialize, Serialize};

use crate::codelet::{FieldDir, FieldLoc, FieldShape, FieldSpec};
use crate::dtype::DType;
use crate::entity::PrimaryMap;
use crate::target::{Target, TileId};

crate::entity::entity_id!(
    /// A compute phase of an executable ([`Executable::computes`]).
    pub struct ComputePhaseId, "cp";
);
crate::entity::entity_id!(
    /// An exchange phase of an executable ([`Executable::exchanges`]).
    pub struct ExchangePhaseId, "xp";
);
crate::entity::entity_id!(
    /// A function body of an executable ([`Executable::functions`], run by `Step::Call`).
    pub struct FunctionId, "fn";
);
crate::entity::entity_id!(
    /// A codelet an executable uses ([`Executable::codelets`]).
    pub struct CodeletId, "codelet";
);

/// Version of the executable layout; bumped on any change to these types.
/// 3: application sections ([`Executable::app_sections`]).
/// 4: replication ([`Executable::replication`], [`ExchangePhase::cross_replica`]).
/// 5: Streaming Memory ([`Executable::remote_buffers`], [`Executable::remote_copies`],
/// [`Step::Remote`], [`Step::OverlapIo`], [`StreamDesc::buffering_depth`]); version 3 and 4 files
/// load, with no remote buffers and streams prefetched one deep.
pub const FORMAT_VERSION: u32 = 5;

/// A compiled graph and its programs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Executable {
    /// The whole machine. A replicated executable runs on its first
    /// `replication.factor × replication.chips_per_replica` chips.
    pub target: Target,
    /// `Some` for a graph compiled for several replicas (see [`Replication`]); everything else
    /// in the executable then describes one replica, whose tiles are numbered from 0.
    #[serde(default)]
    pub replication: Option<Replication>,
    /// Codelets used, referred to by index from [`VertexInst::codelet`].
    pub codelets: PrimaryMap<CodeletId, CodeletRef>,
    /// Per tile, `target.num_tiles()` entries.
    pub tiles: Vec<TileImage>,
    pub computes: PrimaryMap<ComputePhaseId, ComputePhase>,
    pub exchanges: PrimaryMap<ExchangePhaseId, ExchangePhase>,
    /// Top-level programs, run by index.
    pub programs: Vec<Step>,
    /// Bodies of `Call`.
    pub functions: PrimaryMap<FunctionId, Step>,
    pub host_tensors: Vec<HostTensor>,
    pub streams: Vec<StreamDesc>,
    /// Remote buffers in Streaming Memory (their description, never their contents).
    #[serde(default)]
    pub remote_buffers: PrimaryMap<RemoteBufferId, RemoteBufferDesc>,
    /// Copies between tile memory and remote buffers, run by [`Step::Remote`].
    #[serde(default)]
    pub remote_copies: PrimaryMap<RemoteCopyId, RemoteCopy>,
    /// Names of the graph's variables, for reports.
    pub variable_names: Vec<String>,
    /// Data an application carries inside the executable file, by name (for example a
    /// simulator's run parameters or mesh), so that one file holds everything needed to run
    /// it and nothing can be mismatched. The compiler leaves it empty; names are free-form
    /// (use a prefix such as `"cardiac."`). Saved as raw sections, never interpreted.
    #[serde(skip)]
    pub app_sections: std::collections::BTreeMap<String, Vec<u8>>,
}

impl Executable {
    /// Number of replicas (1 when not replicated).
    pub fn replicas(&self) -> u32 {
        self.replication.as_ref().map_or(1, |r| r.factor)
    }

    /// Tiles the executable describes: one replica's when replicated, else the target's.
    pub(crate) fn tiles_described(&self) -> u64 {
        match &self.replication {
            Some(r) => u64::from(r.chips_per_replica) * u64::from(self.target.tiles_per_ipu),
            None => u64::from(self.target.num_ipus) * u64::from(self.target.tiles_per_ipu),
        }
    }
}

/// A codelet as the executable names it: the loader checks it is registered with this layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeletRef {
    pub name: String,
    /// [`crate::codelet::CodeletDesc::signature`] at compile time.
    pub signature: String,
    pub fields: Vec<FieldKind>,
    pub multi_worker: bool,
}

/// Field kind without its name (names live in the signature).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldKind {
    pub dir: FieldDir,
    pub shape: FieldShape,
    pub dtype: DType,
}

impl From<&FieldSpec> for FieldKind {
    fn from(f: &FieldSpec) -> Self {
        FieldKind {
            dir: f.dir,
            shape: f.shape,
            dtype: f.dtype,
        }
    }
}

/// What one tile holds when the engine starts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TileImage {
    /// Bytes the engine allocates for the tile (always-live data plus the temporaries' peak).
    pub memory_bytes: u32,
    /// Bytes live for the whole run: variables, constants, vertex state.
    pub always_live_bytes: u32,
    /// Peak bytes of temporaries (receive and gather buffers), reused across supersteps.
    pub temporary_bytes: u32,
    /// Initial contents: constants, variables' initial values, vertex state.
    pub init: Vec<InitBlock>,
    /// Where the memory goes, largest first.
    pub breakdown: Vec<MemoryItem>,
}

/// Bytes to place at `offset` before the first run.
///
/// The bytes are shared and immutable (`Arc<[u8]>`): cloning an executable, expanding its
/// replicas or handing it to an engine copies no initial data, and an engine drops its share
/// once tile memory holds them, so they are freed as soon as nothing else holds the
/// executable.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct InitBlock {
    pub offset: u32,
    #[serde(skip)]
    pub data: std::sync::Arc<[u8]>,
    /// Length of `data`, kept in the manifest; the bytes travel in a binary section.
    pub len: u32,
}

/// Category of a memory item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum MemoryCategory {
    Variable,
    Constant,
    VertexState,
    /// Vertex descriptors and field pointers, estimated per vertex.
    VertexDescriptors,
    /// Estimated code size of the codelets used on the tile.
    Code,
    /// Receive, gather and staging buffers of one superstep.
    Temporary,
    /// Always-live receive space beside a variable's segment, for concatenations bound in
    /// place (`CompileOptions::in_place_concat`, `InPlaceConcat`).
    ReceiveSlack,
}

/// One contributor to a tile's memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryItem {
    pub name: String,
    pub category: MemoryCategory,
    pub bytes: u32,
}

/// An on-tile copy of `bytes` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalCopy {
    pub src: u32,
    pub dst: u32,
    pub bytes: u32,
}

/// One vertex as the engine runs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VertexInst {
    /// Index into [`Executable::codelets`].
    pub codelet: CodeletId,
    /// The graph's vertex id, for error messages.
    pub id: u32,
    /// One per declared field, in declaration order.
    pub fields: Vec<FieldLoc>,
    /// Sub-vector locations of VectorList fields (indexed by their `FieldLoc`).
    pub lists: Vec<FieldLoc>,
    /// Estimated cycles of one run on one worker, and whether it came from the codelet or
    /// vertex (`true`) or the default model (`false`).
    pub cycles: u64,
    pub cycles_estimated: bool,
}

/// The work of one tile in a compute phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TileCompute {
    pub tile: TileId,
    /// On-tile copies before the vertices run (gathering fields that are not contiguous).
    pub pre_copies: Vec<LocalCopy>,
    pub vertices: Vec<VertexInst>,
    /// On-tile copies after the vertices ran (scattering written gathered fields).
    pub post_copies: Vec<LocalCopy>,
}

/// The compute part of a superstep: tiles run in parallel, vertices of a tile in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComputePhase {
    /// The compute set (or `copy` for an on-tile copy phase).
    pub name: String,
    /// Only tiles with work, sorted by tile.
    pub tiles: Vec<TileCompute>,
}

/// Data sent from one source range to one or more destinations (more than one is a broadcast).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transfer {
    pub src_tile: TileId,
    pub src_offset: u32,
    pub bytes: u32,
    pub dsts: Vec<(TileId, u32)>,
}

/// The exchange part of a superstep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExchangePhase {
    /// What caused it: `<compute set> (in)`, `<compute set> (out)`, `copy`,
    /// `cross-replica copy`.
    pub name: String,
    /// Sorted by (src_tile, src_offset).
    pub transfers: Vec<Transfer>,
    /// Copies from each replica to another (replicated executables only): the transfer's
    /// bytes leave `src_tile` of replica `r` and land on `dst_tile` of replica `map[r]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cross_replica: Vec<CrossReplicaTransfer>,
}

/// One contiguous run of a cross-replica copy, in replica-local tile numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrossReplicaTransfer {
    pub src_tile: TileId,
    pub src_offset: u32,
    pub bytes: u32,
    pub dst_tile: TileId,
    pub dst_offset: u32,
    /// Index into [`Replication::maps`].
    pub map: u32,
}

/// How a replicated executable is laid out on the machine.
///
/// Replica `r` occupies chips `r·chips_per_replica .. (r+1)·chips_per_replica`, so its tile
/// `t` (replica-local, `0..chips_per_replica·tiles_per_ipu`) is the machine's tile
/// `r·tiles_per_replica + t`. The program, the compute and exchange phases and the tile images
/// are stored once and run by every replica (SPMD); what differs per replica are the
/// [`ReplicaConstant`]s and where cross-replica copies send.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replication {
    /// Number of replicas R (a power of two).
    pub factor: u32,
    /// Chips of one replica.
    pub chips_per_replica: u32,
    /// Replica maps of cross-replica copies: `maps[m][r]` is the replica that receives what
    /// replica `r` sends, or [`NO_REPLICA`] when replica `r` sends nothing. Each map has
    /// `factor` entries and no two replicas send to the same one.
    pub maps: Vec<Vec<u32>>,
    /// Per-replica data written into tile memory when the engine starts.
    pub constants: Vec<ReplicaConstant>,
}

/// In a [`Replication::maps`] entry: this replica sends nothing.
pub const NO_REPLICA: u32 = u32::MAX;

/// A constant whose value differs per replica (for example the replication index).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaConstant {
    pub name: String,
    /// Where its bytes live in each replica, in element order (replica-local tiles).
    pub runs: Vec<MemRun>,
    /// `factor` values, each as many bytes as `runs` cover.
    pub values: Vec<Vec<u8>>,
}

impl Replication {
    /// Tiles of one replica.
    pub fn tiles_per_replica(&self, target: &Target) -> u32 {
        self.chips_per_replica * target.tiles_per_ipu
    }
}

/// Where a scalar lives (predicates and switch controls).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScalarLoc {
    pub tile: TileId,
    pub offset: u32,
    pub dtype: DType,
}

/// A run of consecutive tensor bytes in one tile's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemRun {
    pub tile: TileId,
    pub offset: u32,
    pub bytes: u32,
}

/// Kind of a sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SyncKind {
    /// Tiles of each chip.
    Internal,
    /// All tiles of all chips.
    Global,
}

/// A lowered program: BSP supersteps and control flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Step {
    Seq(Vec<Step>),
    Label {
        name: String,
        body: Box<Step>,
    },
    Sync(SyncKind),
    Exchange(ExchangePhaseId),
    Compute(ComputePhaseId),
    Repeat {
        count: u32,
        body: Box<Step>,
    },
    While {
        cond: Box<Step>,
        predicate: ScalarLoc,
        body: Box<Step>,
    },
    If {
        predicate: ScalarLoc,
        then: Box<Step>,
        else_: Box<Step>,
    },
    Switch {
        control: ScalarLoc,
        cases: Vec<(i64, Step)>,
        default: Box<Step>,
    },
    Call(FunctionId),
    /// Host-to-device: the next `len` elements of the stream land in `runs`.
    StreamIn {
        stream: u32,
        runs: Vec<MemRun>,
    },
    /// Device-to-host: `runs` are appended to the stream's output.
    StreamOut {
        stream: u32,
        runs: Vec<MemRun>,
    },
    /// A copy between tile memory and a remote buffer in Streaming Memory.
    Remote(RemoteCopyId),
    /// Host and Streaming Memory transfers to the I/O tiles (`io`: stream and remote copies
    /// only) overlapped with `compute`, which touches no I/O tile: the engine runs one after
    /// the other (they share no data), the cycle model runs them side by side.
    OverlapIo {
        io: Box<Step>,
        compute: Box<Step>,
    },
}

impl Step {
    /// The steps directly inside this one, in program order: the body of a `Seq`, `Label` or
    /// `Repeat`, a `While`'s condition and body, an `If`'s branches, a `Switch`'s cases and
    /// default (none for the others).
    pub fn children(&self) -> Vec<&Step> {
        match self {
            Step::Seq(v) => v.iter().collect(),
            Step::Label { body, .. } | Step::Repeat { body, .. } => vec![body],
            Step::While { cond, body, .. } => vec![cond, body],
            Step::If { then, else_, .. } => vec![then, else_],
            Step::OverlapIo { io, compute } => vec![io, compute],
            Step::Switch { cases, default, .. } => cases
                .iter()
                .map(|(_, c)| c)
                .chain(std::iter::once(&**default))
                .collect(),
            Step::Sync(_)
            | Step::Exchange(_)
            | Step::Compute(_)
            | Step::Call(_)
            | Step::StreamIn { .. }
            | Step::StreamOut { .. }
            | Step::Remote(_) => Vec::new(),
        }
    }
}

/// A tensor the host can write or read by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostTensor {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<usize>,
    /// The tensor's bytes, in element order.
    pub runs: Vec<MemRun>,
    pub writable: bool,
    pub readable: bool,
}

/// Direction of a host stream in an executable (the graph has its own
/// `graph::StreamDir`; the compiler maps one to the other, so that the executable
/// refers to nothing of the graph IR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StreamDir {
    /// The host writes, the device reads (`Program::StreamToDevice`).
    HostToDevice,
    /// The device writes, the host reads (`Program::StreamFromDevice`).
    DeviceToHost,
}

/// A host stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamDesc {
    pub name: String,
    pub dtype: DType,
    /// Elements per copy.
    pub len: usize,
    pub dir: StreamDir,
    /// Buffering depth: how many copies the host prepares ahead (Poplar's prefetch, on by
    /// default with depth 1). A prefetched copy does not wait for the host in the cycle
    /// model; with 0 every copy waits [`crate::target::Target::host_round_trip_cycles`].
    #[serde(default = "default_buffering_depth")]
    pub buffering_depth: u32,
}

fn default_buffering_depth() -> u32 {
    1
}
