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

// The façade names every item it re-exports, module by module, so that the public API is a
// choice made here and not the union of the four crates: an item a user needs is added to its
// module's list (and shows in `api/poplar.txt`); everything else stays inside its crate. What
// the framework's crates share only among themselves (the recorder's interface to the engine,
// the engine's hooks into codelets, the pricing functions of the cycle model) is not here.

/// The machine a graph is compiled for: chips, tiles, memory and the cost constants.
pub mod target {
    pub use poplar_core::target::{
        sync_latency_cycles, Assumed, Assumption, ChipTopology, Moves, Target, TargetError, TileId,
        TileRange, EXCHANGE_SETUP_CYCLES, GW_HOP_LATENCY_CYCLES, GW_LINK_BYTES_PER_CYCLE,
        HOST_ROUND_TRIP_CYCLES, INTERNAL_SYNC_CYCLES, IPU_LINKS_PER_RAIL, IPU_LINKS_PER_RUNG,
        IPU_LINK_BYTES_PER_CYCLE, IPU_LINK_BYTES_PER_SECOND, IPU_LINK_EFFICIENCY,
        LINK_HOP_LATENCY_CYCLES, MAX_BYTES_PER_TILE, MAX_CHIPS, MAX_STREAMING_MEMORY_BYTES,
        MAX_TILES, MAX_TILES_PER_CHIP, MAX_WORKERS, STREAMING_MEMORY_BYTES,
        STREAMING_MEMORY_BYTES_PER_CYCLE, STREAMING_MEMORY_LATENCY_CYCLES,
        SYNC_LATENCY_PER_HOP_SECONDS,
    };
}

/// Element types and their little-endian bytes.
pub mod dtype {
    pub use poplar_core::dtype::{from_le_bytes, to_le_bytes, DType, Element};
}

/// The host's floating-point modes (subnormal flushing as the chip does it) and f16 helpers.
pub mod fp {
    pub use poplar_core::fp::{
        canonical_nan, f16_from_f64, flush_f32, flush_slice, flushing, hardware_flush, FlushGuard,
    };
}

/// The host's vector instruction-set level and the kernels compiled for each.
pub mod isa {
    pub use poplar_core::isa::{
        active, from_env, scoped, set_active, supported, IsaError, IsaLevel, ScopedLevel,
        EDGE_VALUES, ENV,
    };
}

/// Codelets: the vertex types that run on tiles, their fields and their registry. A codelet is
/// declared with [`codelet!`](crate::codelet!) and implements [`Vertex`](codelet::Vertex).
pub mod codelet {
    pub use poplar_core::codelet::{
        duplicates, lookup, prefetch, registered, to_f16, Codelet, CodeletDesc, CycleCtx,
        DuplicateCodelet, Field, FieldDir, FieldLoc, FieldShape, FieldSpec, InOut, Input, ListMut,
        ListRef, Output, State, Vector, VectorList, Vertex, VertexError, VertexIo, Worker,
    };

    /// Rounding f32 to f16 in codelets: to nearest, or stochastically when the engine is told
    /// to (`EngineOptions::stochastic_rounding`).
    pub mod rounding {
        pub use poplar_core::codelet::rounding::{rounding, to_f16, Rounding};
    }
}

/// Declares a codelet: a struct of fields bound to tile memory, registered under a name.
///
/// `[attrs] vis struct Name as "registered name" [, multi_worker] { field: Kind, ... }`, each
/// `Kind` one of [`Input`](codelet::Input), [`Output`](codelet::Output),
/// [`InOut`](codelet::InOut) and [`State`](codelet::State) of an element type,
/// [`Vector`](codelet::Vector) or [`VectorList`](codelet::VectorList); the type then implements
/// [`Vertex`](codelet::Vertex). The macro adds `Name::NAME` (the registered name), one constant
/// per field with its index (for [`CycleCtx::elements`](codelet::CycleCtx::elements)) and an
/// implementation of [`Codelet`](codelet::Codelet). See the module [`codelet`](mod@codelet).
#[macro_export]
macro_rules! codelet {
    ($($body:tt)*) => {
        $crate::__codelet! { $($body)* }
    };
}
#[doc(hidden)]
pub use poplar_core::__codelet;
#[doc(hidden)]
pub use poplar_core::isa_dispatch;

/// Random numbers for tests, benchmarks and data generators: one SplitMix64 for every crate.
pub mod rand {
    pub use poplar_core::rand::{mix64, SplitMix64, GOLDEN_GAMMA};
}

/// The graph users build: variables and constants mapped to tiles, compute sets of vertices,
/// streams, remote buffers and functions.
pub mod graph {
    pub use poplar_compiler::graph::{
        concat, ComputeSet, Function, Graph, GraphError, Mappable, RemoteBuffer, StateValue,
        Stream, StreamDir, Tensor, VertexName, VertexRef,
    };
}

/// Programs: control flow over compute sets, copies and host streams.
pub mod program {
    pub use poplar_compiler::graph::program::{CrossReplicaCopy, Program};
}

/// The compiler: options, the entry point and its errors.
pub mod compiler {
    pub use poplar_compiler::compiler::{
        compile, CompileError, CompileOptions, InPlaceConcat, Pass, ValidationError, VerifierError,
    };
}

/// Executables: the compiled program as plain data (read field by field), its check and its
/// file.
pub mod exe {
    pub use poplar_exe::exe::{
        CheckError, CodeletId, CodeletRef, ComputePhase, ComputePhaseId, CrossReplicaTransfer,
        Device, ExchangePhase, ExchangePhaseId, Executable, ExecutableError, FieldKind, FileError,
        FunctionId, HostTensor, InitBlock, LocalCopy, MemRun, MemoryCategory, MemoryItem,
        RemoteBufferDesc, RemoteBufferId, RemoteCopy, RemoteCopyId, RemoteDir, ReplicaConstant,
        ReplicaLayout, Replication, RowSelect, ScalarLoc, Step, StreamDesc, StreamDir, SyncKind,
        TileCompute, TileImage, Transfer, VertexInst, FORMAT_VERSION, MAX_TRANSFER_BYTES,
        NO_REPLICA,
    };

    /// The executable's file: its magic number and the kinds of its sections.
    pub mod file {
        pub use poplar_exe::exe::file::{MAGIC, SECTION_APP, SECTION_INIT_DATA, SECTION_TARGET};
    }
}

/// Profiles: the cycle model, the memory report, recorded executions and their summaries.
pub mod profile {
    pub use poplar_exe::profile::{
        estimate_program, CategoryBytes, ChipStreamingMemory, CycleModel, LabelProfile,
        LabelSummary, MemoryReport, PhaseKind, PhaseProfile, Profile, ProfileError, ProfileOptions,
        ProgramEstimate, RemoteBufferBytes, Span, SpanKind, Split, Stats, StreamingMemory,
        SyncCounts, TileMemory, TileTotals, Timeline, Track, TransferCost, TransferKind,
        PROFILE_SCHEMA, PROFILE_SCHEMA_VERSION,
    };

    /// The cycle model: the static cost of every phase of an executable
    /// (`docs/cycle-model.md`).
    pub mod model {
        pub use poplar_exe::profile::model::{
            local_copy_cycles, schedule_vertices, ComputeCost, CycleModel, EvenPorts,
            ExchangeBreakdown, ExchangeCost, LinkLoad, TileComputeCost, TileExchangeCost,
            VertexSchedule, LOCAL_COPY_BYTES_PER_CYCLE, LOCAL_COPY_SETUP_CYCLES, SUPERVISOR_CYCLES,
        };
    }
}

/// The engine: runs an executable on the tile simulator.
pub mod engine {
    pub use poplar_engine::engine::{
        is_shared_error, job_main, program_traffic, rank_traffic, Engine, EngineError,
        EngineOptions, GroupedRun, Interleave, PhaseTraffic, ProgramTraffic, StreamingMemoryBudget,
        StreamingMemoryUse,
    };
}

/// One simulation over several processes: the ranks of a job and their agreement.
pub mod dist {
    pub use poplar_engine::dist::{
        agree, any, broadcast_from_root, init, is_root, mpiexec, rank, size, Cluster, DistError,
        RankError, RankSplit, Ranks,
    };
}

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
pub use target::{Target, TileId, TileRange};
