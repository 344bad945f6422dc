//! The options of an engine: threads, flushing, rounding, ranks, how far the host may reorder
//! its work ([`Interleave`]), Streaming Memory and the instruction-set level.

use super::streaming::StreamingMemoryBudget;
use crate::dist::Ranks;

/// Options of [`Engine::new`](super::Engine::new).
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// Worker threads of the engine's pool; `None` uses one per core.
    pub threads: Option<usize>,
    /// After each vertex, check its written `f32` fields for NaN and infinity.
    pub check_finite: bool,
    /// Flush subnormals as the chip does (`Some(true)`), keep IEEE arithmetic (`Some(false)`),
    /// or follow the executable's target (`None`, the default; on for the GC200 presets). See
    /// [`crate::fp`]: hardware modes on x86-64 and aarch64, a software fallback elsewhere.
    pub flush_subnormals: Option<bool>,
    /// When flushing, use the software fallback even where the host has hardware modes (it
    /// flushes only what vertices write: a way to see what the fallback changes).
    pub flush_in_software: bool,
    /// Round f32 results to f16 stochastically, with this seed (`codelet::rounding`); `None`
    /// (the default) rounds to nearest. The same seed, program and inputs give the same bits
    /// for any thread count.
    pub stochastic_rounding: Option<u64>,
    /// The ranks to run over ([`crate::dist`]); `None` (the default) is the MPI world when
    /// [`crate::dist::init`] has initialized MPI, else this process alone. Every rank of a
    /// job creates the engine with the same executable; each holds and runs only its own
    /// tiles ([`RankSplit`](crate::dist::RankSplit)).
    pub ranks: Option<Ranks>,
    /// Which exchange phases run interleaved, tile by tile, with the compute phases after them
    /// (the same bits as running them apart; `engine/interleave.rs`).
    pub interleave: Interleave,
    /// How much of Streaming Memory (remote buffers) the host keeps in its memory, and where
    /// it spills the rest (`engine/streaming.rs`): 4 GiB and the system's temporary
    /// directory by default.
    pub streaming_memory: StreamingMemoryBudget,
    /// The instruction-set level the dispatching codelet kernels of this engine's runs use
    /// ([`crate::isa`]): `None` (the default) takes `POPLAR_ISA` when it is set, else follows
    /// the process's level ([`crate::isa::active`]) at each run. The level belongs to the
    /// engine: it holds on the engine's threads while it runs, so engines with different
    /// levels can live and run in one process. Every level gives the same bits.
    pub isa: Option<crate::isa::IsaLevel>,
}

/// How far the engine may reorder the host's work across the phases of a superstep, where
/// that cannot change a result; never when profiling or over several ranks.
///
/// * *Interleaving* (`engine/interleave.rs`): an exchange interleaved with the compute phase after it (and
///   the on-tile copy phases between, which a `Copy` program with parts on their own tile
///   leaves): for each tile, the copies that land on it, then its on-tile copies and vertices,
///   so the host reads the copied bytes while they are still cached. Only where no vertex or
///   on-tile copy of those phases writes a byte the exchange reads, so the results are the same
///   bits as running the phases apart.
/// * *Grouped runs* (`engine/grouped.rs`): a stretch of a sequence made only of exchanges,
///   compute phases and syncs (also inside `Repeat`s) whose tiles fall into groups that no copy
///   joins, such as the same tile of every replica in a ring all-reduce, runs group by group
///   through all its steps: the same bits, since no byte crosses between groups. After a
///   failing vertex the error is the same too, but groups without a failure have gone on to
///   the end of the stretch ([`Engine::grouped_runs`](super::Engine::grouped_runs)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Interleave {
    /// Interleaving of exchanges of 1 MiB or more (smaller ones are still cached when their compute
    /// starts), and grouped runs of 4 compute phases or more (repeats counted) that copy 1 MiB
    /// or more per pass, with at least 4 groups per thread and at most 2 MiB of tile memory in
    /// a group.
    #[default]
    Large,
    /// Every interleaving and grouped run there can be (of 2 groups or more; for tests).
    All,
    /// Interleaving as [`Interleave::Large`], no grouped runs (for A/B measurements).
    NoGroupedRuns,
    /// None: every phase runs to its end before the next (for A/B measurements).
    Never,
}

impl EngineOptions {
    /// Default options with `threads` worker threads.
    #[must_use]
    pub fn with_threads(threads: usize) -> Self {
        EngineOptions {
            threads: Some(threads),
            ..Default::default()
        }
    }
}
