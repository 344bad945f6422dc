//! The engine: runs an executable on the tile simulator.
//!
//! Each tile's memory is one zero-initialized allocation of `memory_bytes` rounded up to whole
//! `u64`s, so every offset aligned in the executable is aligned in host memory. Programs are
//! interpreted step by step on one thread of a pool built once in [`Engine::new`]; during a
//! run the pool's other threads stay with it as a team (`engine/team.rs`). A `Compute` step hands out
//! contiguous ranges of its phase's tiles to the team (vertices of one tile in order, on one
//! thread), an `Exchange` step ranges of its copies.
//!
//! Soundness rests on [`Executable::check`], which [`Engine::new`] runs, and on
//! [`Executable::resolve_codelets`]: every location is in bounds and aligned, a tile appears at
//! most once per compute phase, written fields of a vertex alias nothing else of it, and within
//! an exchange phase no destination overlaps a source or another destination. Because `run`
//! takes `&mut self`, host reads and writes never race with a running program.
//!
//! Results are bit-identical for any thread count: tiles are independent within a phase, the
//! vertices of a tile keep their order, and exchange writes are disjoint from everything read.
//!
//! Bool invariant: [`Element`](crate::dtype::Element) lets codelets view memory as `bool`, which is sound only for bytes
//! 0 and 1. Host writes and streams store bools as 0/1; for anything else that reaches a bool
//! field (init blocks, exchanged bytes of a hand-made executable) the engine normalizes the bool
//! fields of a vertex (non-zero becomes 1) before calling it.
//!
//! Profiling: with [`Engine::enable_profiling`], `RunCtx::step` tells a
//! [`Recorder`] about every compute, exchange, sync and label step
//! (and the host wall time of each compute and exchange phase); when profiling is off the only cost is one
//! `Option` test per step.

use std::collections::HashMap;

mod error;
mod exec;
mod grouped;
mod host;
mod interleave;
mod job;
mod lookahead;
mod memory;
mod panics;
mod plan;
mod ranks;
mod remote;
mod streaming;
mod team;
mod transfer;

pub use error::{is_shared_error, EngineError};
use exec::*;
pub use grouped::GroupedRun;
use host::*;
pub use job::job_main;
use memory::*;
use plan::*;
pub use ranks::{program_traffic, rank_traffic, PhaseTraffic, ProgramTraffic};
pub use remote::StreamingMemoryUse;
pub use streaming::StreamingMemoryBudget;
use team::{StopOnDrop, Team};

use crate::dist::{RankSplit, Ranks};
use crate::entity::PrimaryMap;
use crate::exe::{CodeletId, ComputePhaseId, ExchangePhaseId, Executable, ReplicaLayout};
use crate::profile::{Profile, ProfileOptions, Recorder};
use crate::target::TileId;

/// Options of [`Engine::new`].
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
    /// tiles ([`RankSplit`]).
    pub ranks: Option<Ranks>,
    /// Which exchange phases run interleaved, tile by tile, with the compute phases after them
    /// (the same bits as running them apart; `engine/interleave.rs`).
    pub interleave: Interleave,
    /// How much of Streaming Memory (remote buffers) the host keeps in its memory, and where
    /// it spills the rest (`engine/streaming.rs`): 4 GiB and the system's temporary
    /// directory by default.
    pub streaming_memory: StreamingMemoryBudget,
    /// The instruction-set level the dispatching codelet kernels run
    /// ([`crate::isa`]): `None` (the default) keeps the process's level — `POPLAR_ISA` when
    /// set, else the best the host supports. The level is process-wide (the last engine
    /// created sets it); every level gives the same bits.
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
///   the end of the stretch ([`Engine::grouped_runs`]).
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

// ---------------------------------------------------------------------------------------------
// The engine

/// Runs an [`Executable`] on the tile simulator.
pub struct Engine {
    exe: Executable,
    options: EngineOptions,
    threads: usize,
    /// Built once, reused by every run; `None` when running on one thread.
    pool: Option<rayon::ThreadPool>,
    mem: Memory,
    codelets: PrimaryMap<CodeletId, Resolved>,
    exchanges: PrimaryMap<ExchangePhaseId, ExchangePlan>,
    computes: PrimaryMap<ComputePhaseId, ComputePlan>,
    /// Exchange–compute pairs run interleaved (`interleave.rs`).
    interleaving: interleave::Interleaving,
    /// Straight runs of supersteps run group by group (`grouped.rs`).
    grouped: grouped::GroupedRuns,
    tensor_index: HashMap<String, usize>,
    stream_index: HashMap<String, usize>,
    /// Remote buffer names of replica 0 and their index.
    remote_index: HashMap<String, usize>,
    /// The rows of every remote buffer (on rank 0 when running over several ranks).
    remote_mem: streaming::StreamingMemory,
    /// Per stream: the connected host buffer of a host-to-device stream.
    inputs: Vec<Option<InStream>>,
    /// Per stream: bytes appended by device-to-host copies.
    outputs: Vec<Vec<u8>>,
    /// The profiler, when profiling is on.
    recorder: Option<Box<Recorder>>,
    /// Compute phases run so far (stochastic rounding's keys depend on it).
    epoch: std::sync::atomic::AtomicU64,
    /// How the replicas of a replicated executable lie in the flat one the engine runs.
    replicas: ReplicaLayout,
    /// Running over several ranks: this rank's share and the messages between ranks.
    dist: Option<ranks::Dist>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("tiles", &self.mem.tiles.len())
            .field("threads", &self.threads)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Checks the executable, resolves its codelets, allocates and initializes tile memory and
    /// builds the thread pool. The engine runs a copy of `exe` that shares its initial data
    /// (nothing is copied: [`InitBlock::data`](crate::exe::InitBlock::data) is shared) and
    /// drops that share once tile memory holds the data (see [`Engine::executable`]).
    ///
    /// A replicated executable ([`Executable::replication`]) is expanded into the flat
    /// executable of all its replicas, which the engine then runs (and
    /// [`Engine::executable`] returns); host tensors and streams are then addressed per
    /// replica (`*_replica`, `*_all_replicas`).
    pub fn new(exe: &Executable, options: EngineOptions) -> Result<Engine, EngineError> {
        Engine::from_executable(exe.clone(), options)
    }

    /// Like [`Engine::new`], taking ownership of the executable: its initial data are freed
    /// as soon as tile memory holds them, so a large executable is never held twice.
    pub fn from_executable(exe: Executable, options: EngineOptions) -> Result<Engine, EngineError> {
        let ranks = options.ranks.clone().unwrap_or_else(Ranks::world);
        if ranks.size() > 1 {
            // First of all, so that every rank checks the same executable and fails alike.
            ranks::agree_on_executable(&ranks, &exe)?;
        }
        if exe.replication.is_none() {
            let replicas = exe.expand_layout();
            return Engine::build(exe, options, replicas);
        }
        exe.check()?;
        let (flat, replicas) = exe.expand_replicas();
        Engine::build(flat, options, replicas)
    }

    /// The one constructor: `exe` is flat (replicas expanded), and becomes the engine's own.
    fn build(
        mut exe: Executable,
        options: EngineOptions,
        replicas: ReplicaLayout,
    ) -> Result<Engine, EngineError> {
        exe.check()?; // validates the target too (every count below is bounded)
        match options.isa {
            Some(level) => crate::isa::set_active(level)?,
            None => {
                // A bad POPLAR_ISA is an error here, not a silent fallback.
                if let Some(level) = crate::isa::from_env()? {
                    crate::isa::set_active(level)?;
                }
            }
        }
        panics::install();
        crate::codelet::set_progress_hook(lookahead::ahead_progress);
        let codelets = plan::resolve(&exe.resolve_codelets()?);
        check_tile_budgets(&exe)?;
        let ranks = options.ranks.clone().unwrap_or_else(Ranks::world);
        let split = RankSplit::new(&exe.target, ranks.size());
        let mine = split.tiles(ranks.rank());
        let mine = mine.start..mine.end;
        let threads = options
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1);
        let share = Share {
            mine: &mine,
            threads,
        };
        let pool = team::pool(threads)?;
        let mem = Memory::allocate(&exe, &mine);
        // A rank that cannot allocate fails every rank (none waits for it later).
        ranks::agree_at_creation(
            &ranks,
            &split,
            mem.as_ref().map(|_| ()).map_err(Clone::clone),
        )?;
        let mem = mem?;
        mem.load_init(&mut exe, &mine);
        let exe = exe;

        let exchanges = exe
            .exchanges
            .values()
            .map(|ph| ExchangePlan::build(ph, share))
            .collect();
        let inputs = ComputeInputs {
            codelets: &codelets,
            mem: &mem,
            share,
            workers_per_tile: exe.target.workers_per_tile,
            slow_f32: options.check_finite || soft_flush(&options, &exe),
        };
        let computes = exe
            .computes
            .values()
            .map(|ph| ComputePlan::build(ph, &inputs))
            .collect();
        let alone = ranks.size() == 1;
        let interleaving = match options.interleave {
            mode if alone => interleave::Interleaving::for_mode(
                mode, &exe, &codelets, &exchanges, &computes, threads,
            ),
            _ => interleave::Interleaving::default(),
        };
        // From the executable the engine owns (moving it keeps its steps where they are): runs
        // are keyed by the addresses of its steps.
        let grouped = match grouped::Rule::for_mode(options.interleave, threads) {
            Some(rule) if alone => grouped::GroupedRuns::build(&grouped::Inputs {
                exe: &exe,
                exchanges: &exchanges,
                computes: &computes,
                tile_bytes: &mem.tiles.iter().map(|t| t.bytes).collect::<Vec<_>>(),
                threads,
                rule,
            }),
            _ => grouped::GroupedRuns::default(),
        };
        let dist = (!alone).then(|| ranks::Dist::new(ranks, split, &exe));
        Ok(Engine {
            tensor_index: host_names(
                exe.host_tensors.iter().map(|h| &h.name),
                replicas.host_tensors_per_replica,
            ),
            stream_index: host_names(
                exe.streams.iter().map(|s| &s.name),
                replicas.streams_per_replica,
            ),
            remote_index: host_names(
                exe.remote_buffers.values().map(|b| &b.name),
                replicas.remote_buffers_per_replica,
            ),
            remote_mem: streaming::StreamingMemory::new(
                &exe.remote_buffers
                    .values()
                    .map(|b| (b.row_bytes(), b.rows))
                    .collect::<Vec<_>>(),
                options.streaming_memory.clone(),
            ),
            inputs: (0..exe.streams.len()).map(|_| None).collect(),
            outputs: vec![Vec::new(); exe.streams.len()],
            exe,
            options,
            threads,
            pool,
            mem,
            codelets,
            exchanges,
            computes,
            interleaving,
            grouped,
            recorder: None,
            epoch: std::sync::atomic::AtomicU64::new(0),
            replicas,
            dist,
        })
    }

    /// The executable this engine runs, without its initial data (`InitBlock::data` empty,
    /// `len` kept): tile memory holds them from [`Engine::new`] on.
    pub fn executable(&self) -> &Executable {
        &self.exe
    }

    /// Turns profiling on (off by default): later runs record modelled cycles per phase, tile
    /// and label (see [`crate::profile`]). Enabling again starts a new profile.
    pub fn enable_profiling(&mut self, options: ProfileOptions) {
        self.recorder = Some(Box::new(Recorder::new(&self.exe, options)));
    }

    /// Turns profiling off and drops what was recorded.
    pub fn disable_profiling(&mut self) {
        self.recorder = None;
    }

    /// The profile of the runs since profiling was enabled (or last taken), if it is on.
    pub fn profile(&self) -> Option<&Profile> {
        self.recorder.as_deref().map(Recorder::profile)
    }

    /// The profile so far, starting a new one (profiling stays on).
    pub fn take_profile(&mut self) -> Option<Profile> {
        let r = self.recorder.as_deref_mut()?;
        let p = r.profile().clone();
        r.clear();
        Some(p)
    }

    /// Number of top-level programs.
    pub fn num_programs(&self) -> usize {
        self.exe.programs.len()
    }

    /// Worker threads of the engine's pool.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The exchange phases this engine runs interleaved tile by tile with the compute phases
    /// after them, each with the last of those compute phases (`(exchange, compute)` phase
    /// ids; on-tile copy phases between the two are part of the interleaving; see
    /// [`Interleave`]).
    pub fn interleaved_phases(&self) -> Vec<(ExchangePhaseId, ComputePhaseId)> {
        self.interleaving
            .plans
            .iter()
            .map(|p| {
                (
                    p.exchange,
                    *p.computes
                        .last()
                        .expect("a interleaving has a compute phase"),
                )
            })
            .collect()
    }

    /// The stretches of this engine's programs that run group by group ([`Interleave`]), in
    /// the order they were found (programs, then functions; outer stretches first).
    pub fn grouped_runs(&self) -> Vec<GroupedRun> {
        self.grouped.describe()
    }

    /// Whether runs flush subnormals (the option, else the executable's target).
    pub fn flushes(&self) -> bool {
        self.options
            .flush_subnormals
            .unwrap_or(self.exe.target.flush_subnormals)
    }

    /// Whether flushing falls back to software (no hardware modes on this host, or asked).
    fn soft_flush(&self) -> bool {
        soft_flush(&self.options, &self.exe)
    }

    /// Runs top-level program `index`. On error the run stops; tile memory then holds whatever
    /// was computed up to that point (phase by phase; in a grouped run, each group up to its
    /// own failure or the end of the run: [`Interleave`]), and the engine can run again.
    pub fn run(&mut self, index: usize) -> Result<(), EngineError> {
        let count = self.exe.programs.len();
        let step = self
            .exe
            .programs
            .get(index)
            .ok_or(EngineError::NoSuchProgram { index, count })?;
        let x = Exec {
            exe: &self.exe,
            mem: &self.mem,
            codelets: &self.codelets,
            exchanges: &self.exchanges,
            computes: &self.computes,
            interleaving: &self.interleaving,
            grouped: &self.grouped,
            check_finite: self.options.check_finite,
            soft_flush: self.soft_flush(),
            sr_seed: self.options.stochastic_rounding,
            epoch: &self.epoch,
            replicas: self.replicas,
            dist: self.dist.as_ref(),
        };
        // The hardware modes, unless the software fallback does the flushing.
        let flush = self.flushes() && !self.soft_flush();
        let team = Team::new(self.threads.saturating_sub(1));
        let mut ctx = RunCtx {
            x,
            team: None,
            inputs: &mut self.inputs,
            outputs: &mut self.outputs,
            remote_mem: &mut self.remote_mem,
            program: Some(index),
            prof: self.recorder.as_deref_mut(),
        };
        let start = ctx.prof.is_some().then(|| {
            if let Some(p) = ctx.prof.as_deref_mut() {
                p.begin_run();
            }
            std::time::Instant::now()
        });
        let (result, prof) = match &self.pool {
            None => {
                let _fp = crate::fp::FlushGuard::new(flush);
                (ctx.step(step), ctx.prof)
            }
            Some(pool) => {
                // Thread 0 of the pool interprets the program; the others help with every
                // parallel phase until the run ends (`team.rs`). (Not `ThreadPool::scope`:
                // Miri reports its scope teardown, rayon-rs/rayon#952.)
                let interpreter = std::sync::Mutex::new(Some(ctx));
                let mut outcomes = pool.broadcast(|b| {
                    // Every thread that runs codelets computes with the chip's rule; the modes
                    // are restored when the run ends.
                    let _fp = crate::fp::FlushGuard::new(flush);
                    if b.index() != 0 {
                        team.help(|job, t| x.work(job, t));
                        return None;
                    }
                    let mut ctx = interpreter
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .take()?;
                    let _stop = StopOnDrop(&team);
                    team.wait_joined();
                    ctx.team = Some(&team);
                    Some((ctx.step(step), ctx.prof))
                });
                outcomes
                    .swap_remove(0)
                    .expect("thread 0 of the pool interprets the run")
            }
        };
        if let (Some(p), Some(start)) = (prof, start) {
            p.end_run(start.elapsed());
            if let Some(d) = &self.dist {
                // Per phase, the slowest rank's host time (every rank has the same modelled
                // records: they come from the executable).
                let mut walls: Vec<i64> = p.wall_times_mut().map(|w| *w as i64).collect();
                d.ranks.comm.max_i64(&mut walls);
                for (w, m) in p.wall_times_mut().zip(walls) {
                    *w = m as u64;
                }
            }
        }
        result
    }
}

/// Every tile's image fits the target's memory per tile.
fn check_tile_budgets(exe: &Executable) -> Result<(), EngineError> {
    match exe
        .tiles
        .iter()
        .enumerate()
        .find(|(_, img)| img.memory_bytes > exe.target.bytes_per_tile)
    {
        Some((t, img)) => Err(EngineError::TileOutOfMemory {
            tile: TileId::new(t as u32),
            bytes: img.memory_bytes,
            budget: exe.target.bytes_per_tile,
        }),
        None => Ok(()),
    }
}

/// Whether subnormals are flushed in software: the target (or the options) flush, and the
/// host cannot, or the options ask for software.
fn soft_flush(options: &EngineOptions, exe: &Executable) -> bool {
    options
        .flush_subnormals
        .unwrap_or(exe.target.flush_subnormals)
        && (options.flush_in_software || !crate::fp::hardware_flush())
}

/// Host tensor or stream names of replica 0 and their index; replica r's copy of entry i is
/// r·n + i.
fn host_names<'a>(
    names: impl Iterator<Item = &'a String>,
    per_replica: usize,
) -> HashMap<String, usize> {
    names
        .take(per_replica)
        .enumerate()
        .map(|(i, n)| (n.clone(), i))
        .collect()
}
