//! The engine: runs an executable on the tile simulator.
//!
//! Each tile's memory is one zero-initialized allocation of `memory_bytes` rounded up to whole
//! `u64`s, so every offset aligned in the executable is aligned in host memory. Programs are
//! realised once, in [`Engine::new`], as a flat schedule of typed instructions
//! (`engine/schedule.rs`) in which interleaving and grouped runs ([`Interleave`]) are
//! rewrites, and a run executes that list on one thread of a pool built once too
//! (`engine/run.rs`); during a run the pool's other threads stay with it as a team
//! (`engine/team.rs`). A `Compute` step hands out
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
//! Profiling: with [`Engine::enable_profiling`], the interpreter tells a [`Recorder`] about
//! every step it runs ([`RunEvent`]: compute, exchange, sync, label
//! and transfer steps, with the host wall time of each phase); when profiling is off the only
//! cost is one `Option` test per step.

use std::collections::HashMap;

mod device;
mod error;
mod exec;
mod grouped;
mod host;
mod interleave;
mod job;
mod lookahead;
mod memory;
mod options;
mod panics;
mod plan;
mod ranks;
mod remote;
mod run;
mod schedule;
mod streaming;
mod team;
mod transfer;

pub use error::{is_shared_error, EngineError};
use exec::Exec;
pub use grouped::GroupedRun;
use grouped::GroupedRunPlan;
use host::InStream;
use interleave::InterleavedPlan;
pub use job::job_main;
use memory::Memory;
pub use options::{EngineOptions, Interleave};
use plan::{ComputeInputs, ComputePlan, ExchangePlan, Planned, Resolved, Share};
pub use ranks::{program_traffic, rank_traffic, PhaseTraffic, ProgramTraffic};
pub use remote::StreamingMemoryUse;
use run::RunCtx;
use schedule::{Op, Schedule};
pub use streaming::StreamingMemoryBudget;
use team::{StopOnDrop, Team};

use crate::dist::{RankSplit, Ranks};
use crate::entity::PrimaryMap;
use crate::exe::{CodeletId, ComputePhaseId, ExchangePhaseId, Executable, ReplicaLayout};
use crate::isa::{IsaError, IsaLevel};
use crate::profile::{Profile, ProfileOptions, Recorder, RunEvent};
use crate::target::TileId;

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
    /// The executable's programs realised as one list of instructions (`schedule.rs`).
    schedule: Schedule,
    /// The plans of the schedule's interleaved instructions (`interleave.rs`).
    interleaved: Vec<InterleavedPlan>,
    /// The plans of the schedule's grouped runs (`grouped.rs`).
    grouped: Vec<GroupedRunPlan>,
    /// The instruction-set level of this engine's runs (`None`: the process's, at each run).
    isa: Option<IsaLevel>,
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
        let isa = engine_isa(options.isa)?;
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
        let tile_bytes: Vec<usize> = mem.tiles.iter().map(|t| t.bytes).collect();
        // Over several ranks, every phase runs on its own (copies between ranks travel as
        // messages after the local ones).
        let mode = if alone {
            options.interleave
        } else {
            Interleave::Never
        };
        let (schedule, interleaved, grouped) = realise(
            &exe,
            &codelets,
            &exchanges,
            &computes,
            &tile_bytes,
            threads,
            mode,
        );
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
            schedule,
            interleaved,
            grouped,
            isa,
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
        self.interleaved
            .iter()
            .map(|p| {
                (
                    p.exchange,
                    *p.computes
                        .last()
                        .expect("an interleaving has a compute phase"),
                )
            })
            .collect()
    }

    /// The stretches of this engine's programs that run group by group ([`Interleave`]), in
    /// the order they were found (programs, then functions; outer stretches first).
    pub fn grouped_runs(&self) -> Vec<GroupedRun> {
        grouped::describe(&self.grouped)
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
        if index >= count {
            return Err(EngineError::NoSuchProgram { index, count });
        }
        let x = Exec {
            exe: &self.exe,
            mem: &self.mem,
            codelets: &self.codelets,
            exchanges: &self.exchanges,
            computes: &self.computes,
            schedule: &self.schedule,
            interleaved: &self.interleaved,
            grouped: &self.grouped,
            check_finite: self.options.check_finite,
            soft_flush: self.soft_flush(),
            sr_seed: self.options.stochastic_rounding,
            epoch: &self.epoch,
            replicas: self.replicas,
            dist: self.dist.as_ref(),
        };
        // The hardware modes, unless the software fallback does the flushing.
        let threads = RunThreads {
            flush: self.flushes() && !self.soft_flush(),
            isa: self.isa,
        };
        let team = Team::new(self.threads.saturating_sub(1));
        // A profiled run keeps each phase's own host time: the plain schedule.
        let roots = if self.recorder.is_some() {
            &self.schedule.plain
        } else {
            &self.schedule.fast
        };
        let mut ctx = RunCtx {
            x,
            roots,
            team: None,
            inputs: &mut self.inputs,
            outputs: &mut self.outputs,
            remote_mem: &mut self.remote_mem,
            program: Some(index),
            prof: self.recorder.as_deref_mut(),
        };
        let start = ctx.prof.as_deref_mut().map(|p| {
            p.record(RunEvent::RunStart);
            std::time::Instant::now()
        });
        let (result, prof) = threads.run(self.pool.as_ref(), &team, ctx, index);
        if let (Some(p), Some(start)) = (prof, start) {
            p.record(RunEvent::RunEnd {
                wall: start.elapsed(),
            });
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

    /// The instruction-set level this engine's runs use ([`EngineOptions::isa`]).
    pub fn isa(&self) -> IsaLevel {
        self.isa.unwrap_or_else(crate::isa::active)
    }
}

/// What every thread of a run sets up before it runs codelets: the chip's floating-point
/// rule and the engine's instruction-set level, both undone when the run ends.
#[derive(Clone, Copy)]
struct RunThreads {
    flush: bool,
    isa: Option<IsaLevel>,
}

impl RunThreads {
    /// Runs program `index` with `ctx`: on this thread alone without a pool, else on thread 0
    /// of the pool with the others helping (`team.rs`). Returns the result and the profiler.
    fn run<'e>(
        self,
        pool: Option<&rayon::ThreadPool>,
        team: &'e Team,
        ctx: RunCtx<'e>,
        index: usize,
    ) -> (Result<(), EngineError>, Option<&'e mut Recorder>) {
        let Some(pool) = pool else {
            let _guards = self.enter();
            let mut ctx = ctx;
            return (ctx.program(index), ctx.prof);
        };
        let x = ctx.x;
        // Thread 0 of the pool interprets the program; the others help with every parallel
        // phase until the run ends (`team.rs`). (Not `ThreadPool::scope`: Miri reports its
        // scope teardown, rayon-rs/rayon#952.)
        let interpreter = std::sync::Mutex::new(Some(ctx));
        let mut outcomes = pool.broadcast(|b| {
            let _guards = self.enter();
            if b.index() != 0 {
                team.help(|job, t| x.work(job, t));
                return None;
            }
            let mut ctx = interpreter
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()?;
            let _stop = StopOnDrop(team);
            team.wait_joined();
            ctx.team = Some(team);
            Some((ctx.program(index), ctx.prof))
        });
        outcomes
            .swap_remove(0)
            .expect("thread 0 of the pool interprets the run")
    }

    /// This thread computes with the chip's rule and at the engine's level until the guards
    /// drop.
    fn enter(self) -> (crate::fp::FlushGuard, Option<crate::isa::ScopedLevel>) {
        (
            crate::fp::FlushGuard::new(self.flush),
            // Checked when the engine was built: the host supports the level.
            self.isa.and_then(|l| crate::isa::scoped(l).ok()),
        )
    }
}

/// The level an engine built with `option` runs: the option, else `POPLAR_ISA` when set (a bad
/// value is an error here, not a silent fallback), else `None` (the process's level).
fn engine_isa(option: Option<IsaLevel>) -> Result<Option<IsaLevel>, EngineError> {
    match option {
        Some(level) if !level.is_supported() => Err(IsaError::Unsupported { level }.into()),
        Some(level) => Ok(Some(level)),
        None => Ok(crate::isa::from_env()?),
    }
}

/// The schedule of `exe` with the rewrites `mode` allows, and the plans of its
/// interleaved and grouped instructions. At each position of a block, a grouped run first
/// (it covers whole supersteps), then an interleaving.
fn realise(
    exe: &Executable,
    codelets: &PrimaryMap<CodeletId, Resolved>,
    exchanges: &PrimaryMap<ExchangePhaseId, ExchangePlan>,
    computes: &PrimaryMap<ComputePhaseId, ComputePlan>,
    tile_bytes: &[usize],
    threads: usize,
    mode: Interleave,
) -> (Schedule, Vec<InterleavedPlan>, Vec<GroupedRunPlan>) {
    let mut schedule = Schedule::lower(exe);
    let planned = Planned {
        exe,
        schedule: &schedule,
        codelets,
        exchanges,
        computes,
        tile_bytes,
        threads,
    };
    let interleavings = interleave::Interleavings::for_mode(mode, &planned);
    let grouped = match grouped::Rule::for_mode(mode, threads) {
        Some(rule) => grouped::find(&planned, rule),
        None => Vec::new(),
    };
    if !(interleavings.plans.is_empty() && grouped.is_empty()) {
        // Where each run starts in the plain schedule (only while rewriting).
        let starts: std::collections::HashMap<u32, u32> = grouped
            .iter()
            .enumerate()
            .map(|(k, p)| (p.body.start, k as u32))
            .collect();
        schedule.rewrite(&|s, b, i| {
            if let Some(&k) = starts.get(&(i as u32)) {
                return Some((Op::Grouped(k), grouped[k as usize].body.len()));
            }
            let (f, len) = interleavings.at(s, b, i)?;
            Some((Op::Interleaved(f), len))
        });
    }
    (schedule, interleavings.plans, grouped)
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
