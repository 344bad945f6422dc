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
//! Bool invariant: [`Element`] lets codelets view memory as `bool`, which is sound only for bytes
//! 0 and 1. Host writes and streams store bools as 0/1; for anything else that reaches a bool
//! field (init blocks, exchanged bytes of a hand-made executable) the engine normalizes the bool
//! fields of a vertex (non-zero becomes 1) before calling it.
//!
//! Profiling: with [`Engine::enable_profiling`], `RunCtx::step` tells a
//! [`Recorder`] about every compute, exchange, sync and label step
//! (and the host wall time of each compute and exchange phase); when profiling is off the only cost is one
//! `Option` test per step.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};

mod team;

use team::{Job, StopOnDrop, Team};

use crate::codelet::{
    self, CodeletDesc, FieldDir, FieldLoc, FieldShape, LineRun, VertexError, VertexIo, Worker,
};
use crate::dtype::{self, DType, Element};
use crate::exe::StreamDir;
use crate::exe::{Executable, ExecutableError, MemRun, ScalarLoc, Step};
use crate::profile::{Profile, ProfileOptions, Recorder};
use crate::target::TileId;

/// Options of [`Engine::new`].
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// Worker threads of the engine's pool; `None` uses one per core.
    pub threads: Option<usize>,
    /// After each vertex, check its written `f32` fields for NaN and infinity.
    pub check_finite: bool,
}

impl EngineOptions {
    /// Default options with `threads` worker threads.
    pub fn with_threads(threads: usize) -> Self {
        EngineOptions {
            threads: Some(threads),
            ..Default::default()
        }
    }
}

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

// ---------------------------------------------------------------------------------------------
// Tile memory

/// One tile's memory: a leaked `Box<[u64]>` accessed only through its raw pointer (so that no
/// reference to the whole buffer ever coexists with the per-field views handed to codelets).
struct TileMem {
    ptr: *mut u8,
    words: usize,
    bytes: usize,
}

impl TileMem {
    fn new(bytes: usize) -> TileMem {
        let words = bytes.div_ceil(8);
        let b: Box<[u64]> = vec![0u64; words].into_boxed_slice();
        let ptr = Box::into_raw(b).cast::<u8>();
        TileMem { ptr, words, bytes }
    }
}

impl Drop for TileMem {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `Box::into_raw` of a `Box<[u64]>` of `words` elements in
        // `TileMem::new` and is freed only here, once.
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.ptr.cast::<u64>(),
                self.words,
            )));
        }
    }
}

/// All tile memories.
struct Memory {
    tiles: Vec<TileMem>,
}

// SAFETY: `Memory` owns its allocations. Concurrent access happens only inside `Engine::run`
// (which holds `&mut Engine`), where each compute task touches only the tiles of its own
// disjoint chunk (a tile appears at most once per compute phase: `check()`), and exchange tasks
// write only destination ranges that overlap no source and no other destination (`check()`).
unsafe impl Send for Memory {}
// SAFETY: as above.
unsafe impl Sync for Memory {}

impl Memory {
    #[inline]
    fn base(&self, tile: TileId) -> *mut u8 {
        self.tiles[tile as usize].ptr
    }

    fn in_bounds(&self, tile: TileId, offset: usize, len: usize) -> bool {
        self.tiles
            .get(tile as usize)
            .is_some_and(|t| offset.checked_add(len).is_some_and(|e| e <= t.bytes))
    }

    /// Copies bytes out of a tile. Caller guarantees the range is in bounds and no writer runs.
    fn read(&self, tile: TileId, offset: usize, out: &mut [u8]) {
        assert!(self.in_bounds(tile, offset, out.len()));
        // SAFETY: range checked just above; no concurrent writer (callers hold `&Engine` outside
        // `run`, or are the single thread interpreting control flow between phases).
        unsafe {
            std::ptr::copy_nonoverlapping(self.base(tile).add(offset), out.as_mut_ptr(), out.len())
        }
    }

    /// Copies bytes into a tile. Caller guarantees no other access runs.
    fn write(&self, tile: TileId, offset: usize, data: &[u8]) {
        assert!(self.in_bounds(tile, offset, data.len()));
        // SAFETY: range checked just above; callers hold `&mut Engine` or are the single thread
        // interpreting control flow between phases, so nothing else accesses tile memory.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.base(tile).add(offset), data.len())
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Precomputed plans

/// A codelet resolved for the hot path.
struct Resolved {
    desc: &'static CodeletDesc,
    compute: fn(&VertexIo<'_>, Worker) -> Result<(), VertexError>,
    multi_worker: bool,
    /// Bool fields (normalized to 0/1 before each call).
    bool_fields: Vec<(usize, FieldShape)>,
    /// Written f32 fields (checked with `check_finite`).
    f32_written: Vec<(usize, FieldShape)>,
}

/// One exchange copy (a transfer to one destination, possibly a piece of it).
#[derive(Clone, Copy)]
struct CopyOp {
    src_tile: TileId,
    src: u32,
    dst_tile: TileId,
    dst: u32,
    bytes: u32,
}

struct ExchangePlan {
    ops: Vec<CopyOp>,
    /// Ranges of `ops` run as one parallel task each; one range means run serially.
    chunks: Vec<Range<usize>>,
}

/// Signature of a codelet's entry point.
type ComputeFn = fn(&VertexIo<'_>, Worker) -> Result<(), VertexError>;

/// One vertex of a compute phase, flattened for the hot loop.
struct HotVertex {
    compute: ComputeFn,
    /// `fields` and `lists` of the `VertexInst`, copied into the phase's flat tables
    /// ([`ComputePlan::fields`], [`ComputePlan::lists`]) in execution order, so that the hot
    /// loop reads them sequentially instead of chasing one small heap block per vertex, and
    /// binds them as safe sub-slices (no measurable speed-up on the cardiac solver).
    fields_at: usize,
    n_fields: usize,
    lists_at: usize,
    n_lists: usize,
    /// 1, or `workers_per_tile` for a multi-worker codelet.
    workers: u32,
    /// Needs the slow path: bool fields to normalize, or written f32 fields to check.
    slow: bool,
}

/// One tile of a compute phase, flattened for the hot loop.
struct HotTile {
    base: *mut u8,
    /// Index into the phase's `tiles`.
    index: u32,
    /// Range of the phase's `vertices`.
    first: u32,
    end: u32,
    /// Has pre- or post-copies.
    copies: bool,
    /// Range of the phase's `runs`: the cache lines of this tile's fields (empty unless the
    /// phase looks ahead).
    runs: Range<u32>,
}

struct ComputePlan {
    tiles: Vec<HotTile>,
    vertices: Vec<HotVertex>,
    /// Field locations of all `vertices`, each vertex's run at `fields_at`.
    fields: Vec<FieldLoc>,
    /// Vector-list entries of all `vertices`, each vertex's run at `lists_at`.
    lists: Vec<FieldLoc>,
    /// Cache-line runs of each tile's fields (see `HotTile::runs`).
    runs: Vec<LineRun>,
    /// Ranges of `tiles` run as one parallel task each.
    chunks: Vec<Range<usize>>,
    /// While running a tile, fetch the next one: the first lines of its fields at once, the
    /// rest as the running vertices report progress (heavy phases only, see
    /// [`LOOKAHEAD_TILE_COST`]).
    lookahead: bool,
}

// SAFETY: the raw pointers of a plan point into tile memories that the same `Engine` owns,
// that outlive the plan and that are never reallocated. Tile memory accesses follow
// `Memory`'s discipline.
unsafe impl Send for ComputePlan {}
// SAFETY: as above.
unsafe impl Sync for ComputePlan {}

/// The cache lines of every field of a tile's vertices, merged into runs (the look-ahead's
/// target when the tile runs next).
fn field_line_runs(tc: &crate::exe::TileCompute, codelets: &[Resolved]) -> Vec<LineRun> {
    let mut ranges = Vec::new();
    for v in &tc.vertices {
        let specs = codelets[v.codelet as usize].desc.fields;
        for (spec, loc) in specs.iter().zip(&v.fields) {
            let size = spec.dtype.size() as u32;
            match spec.shape {
                FieldShape::Scalar | FieldShape::Vector => {
                    ranges.push((loc.offset, loc.len.saturating_mul(size)));
                }
                FieldShape::VectorList => {
                    let (at, n) = (loc.offset as usize, loc.len as usize);
                    for l in v.lists.get(at..at.saturating_add(n)).unwrap_or(&[]) {
                        ranges.push((l.offset, l.len.saturating_mul(size)));
                    }
                }
            }
        }
    }
    codelet::line_runs(ranges.into_iter())
}

/// Guided split of items with the given costs into contiguous ranges for `threads` threads
/// that claim them in order: each range costs `1/(2·threads)` of what is left, down to
/// `total / smallest`. Large first tasks keep each thread on consecutive tiles (the
/// look-ahead's next tile is usually its own); small last ones leave no thread waiting long
/// for another. Measured against equal tasks (≈ 120 per phase) on the 0.2 mm cardiac slab:
/// within noise, with fewer hand-offs.
fn guided(costs: &[u64], threads: usize, smallest: u64) -> Vec<Range<usize>> {
    let total: u64 = costs.iter().sum();
    let floor = (total / smallest.max(1)).max(1);
    let mut out = Vec::new();
    let mut start = 0;
    let mut left = total;
    while start < costs.len() {
        let target = (left / (2 * threads as u64)).max(floor);
        let mut acc = 0u64;
        let mut end = start;
        while end < costs.len() && acc < target {
            acc += costs[end];
            end += 1;
        }
        out.push(start..end);
        left -= acc;
        start = end;
    }
    out
}

/// Below this many bytes an exchange runs on one thread.
const PARALLEL_EXCHANGE_BYTES: u64 = 256 * 1024;
/// Copies ahead whose source and destination the exchange loop prefetches.
const EXCHANGE_PREFETCH_AHEAD: usize = 4;
/// Fixed cost of one copy, in byte-equivalents, for balancing.
const COPY_OVERHEAD: u64 = 64;
/// Below this estimated cost a compute phase runs on one thread.
const PARALLEL_COMPUTE_COST: u64 = 2_000;
/// The smallest task of a parallel compute phase is `1/(this · threads)` of the phase's cost;
/// the last tasks handed out are that small, so the threads finish close together.
const COMPUTE_SMALLEST_TASK: u64 = 256;
/// As [`COMPUTE_SMALLEST_TASK`], for an exchange phase's bytes.
const EXCHANGE_SMALLEST_TASK: u64 = 32;

/// Average estimated cost per tile from which a compute phase prefetches the first
/// [`LOOKAHEAD_LINES`] cache lines of every field of the next tile's vertices while it runs a
/// tile: a tile's fields are short arrays that start cold, and on the host each tile began with
/// a run of misses the hardware prefetcher could not hide. Below it (light phases, e.g. a
/// superstep of empty vertices) the hints would cost more than they save.
const LOOKAHEAD_TILE_COST: u64 = 2_000;
/// Cache lines per field asked for ahead of a tile.
const LOOKAHEAD_LINES: usize = 4;
/// Fields per tile asked for ahead (the first ones, in vertex order).
const LOOKAHEAD_FIELDS: usize = 16;

// ---------------------------------------------------------------------------------------------
// Streams

struct InStream {
    dtype: DType,
    data: Vec<u8>,
    /// Byte position of the next element.
    pos: usize,
}

// ---------------------------------------------------------------------------------------------
// Element <-> byte conversion

fn elems_as_bytes<T: Element>(data: &[T]) -> Cow<'_, [u8]> {
    assert_eq!(std::mem::size_of::<T>(), T::DTYPE.size());
    if cfg!(target_endian = "little") {
        // SAFETY: `Element` is sealed to f32, i32, u32, u8 and bool: no padding, size equal to the
        // dtype size, little-endian in memory on this target; every initialized value is a
        // valid sequence of bytes (bool is 0 or 1).
        Cow::Borrowed(unsafe {
            std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data))
        })
    } else {
        Cow::Owned(dtype::to_le_bytes(data))
    }
}

fn bytes_to_elems<T: Element>(bytes: &[u8]) -> Vec<T> {
    let size = T::DTYPE.size();
    assert_eq!(std::mem::size_of::<T>(), size);
    if cfg!(target_endian = "little") && T::DTYPE != DType::Bool {
        let n = bytes.len() / size;
        let mut v = vec![T::default(); n];
        // SAFETY: T is f32, i32, u32 or u8 (sealed `Element`, bool excluded above): size equal
        // to the dtype size (asserted in `elems_as_bytes`' debug check, true for all of them),
        // no padding, every bit pattern valid; `v` holds exactly n * size bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr().cast::<u8>(), n * size)
        };
        v
    } else {
        dtype::from_le_bytes(bytes)
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
    codelets: Vec<Resolved>,
    exchanges: Vec<ExchangePlan>,
    computes: Vec<ComputePlan>,
    tensor_index: HashMap<String, usize>,
    stream_index: HashMap<String, usize>,
    /// Per stream: the connected host buffer of a host-to-device stream.
    inputs: Vec<Option<InStream>>,
    /// Per stream: bytes appended by device-to-host copies.
    outputs: Vec<Vec<u8>>,
    /// The profiler, when profiling is on.
    recorder: Option<Box<Recorder>>,
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
    /// builds the thread pool. Keeps a copy of the executable (see [`Engine::executable`]); use
    /// [`Engine::from_executable`] to hand it over without the copy.
    pub fn new(exe: &Executable, options: EngineOptions) -> Result<Engine, EngineError> {
        Engine::from_executable(exe.clone(), options)
    }

    /// Like [`Engine::new`], taking ownership of the executable.
    pub fn from_executable(exe: Executable, options: EngineOptions) -> Result<Engine, EngineError> {
        exe.check()?;
        let descs = exe.resolve_codelets()?;
        for (t, img) in exe.tiles.iter().enumerate() {
            if img.memory_bytes > exe.target.bytes_per_tile {
                return Err(EngineError::TileOutOfMemory {
                    tile: t as TileId,
                    bytes: img.memory_bytes,
                    budget: exe.target.bytes_per_tile,
                });
            }
        }
        let threads = options
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1);
        // One thread runs everything on the caller's thread: no pool at all.
        let pool = if threads > 1 {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .stack_size(8 << 20)
                    .thread_name(|i| format!("poplar-engine-{i}"))
                    .build()
                    .map_err(|e| EngineError::ThreadPool(e.to_string()))?,
            )
        } else {
            None
        };

        let mem = Memory {
            tiles: exe
                .tiles
                .iter()
                .map(|img| TileMem::new(img.memory_bytes as usize))
                .collect(),
        };
        for (t, img) in exe.tiles.iter().enumerate() {
            for b in &img.init {
                // In bounds and data.len() == len: `check()` (InitOutOfBounds, InitLength).
                mem.write(t as TileId, b.offset as usize, &b.data);
            }
        }

        let codelets: Vec<Resolved> = descs
            .iter()
            .map(|d| {
                let pick = |f: &dyn Fn(&crate::codelet::FieldSpec) -> bool| {
                    d.fields
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| f(s))
                        .map(|(i, s)| (i, s.shape))
                        .collect()
                };
                Resolved {
                    desc: d,
                    compute: d.compute,
                    multi_worker: d.multi_worker,
                    bool_fields: pick(&|s| s.dtype == DType::Bool),
                    f32_written: pick(&|s| {
                        s.dtype == DType::F32 && matches!(s.dir, FieldDir::Output | FieldDir::InOut)
                    }),
                }
            })
            .collect();

        // A transfer larger than 1/(4·threads) of its phase is cut into pieces of that size,
        // so that one large copy does not hold up the others.
        let parts = threads * 4;
        let exchanges = exe
            .exchanges
            .iter()
            .map(|ph| {
                let total: u64 = ph
                    .transfers
                    .iter()
                    .map(|t| u64::from(t.bytes) * t.dsts.len() as u64)
                    .sum();
                let piece = if threads > 1 && total >= PARALLEL_EXCHANGE_BYTES {
                    total.div_ceil(parts as u64).max(4096)
                } else {
                    u64::MAX
                };
                let mut ops = Vec::new();
                for t in &ph.transfers {
                    for &(dst_tile, dst) in &t.dsts {
                        let mut done = 0u64;
                        let bytes = u64::from(t.bytes);
                        while done < bytes {
                            let n = (bytes - done).min(piece);
                            ops.push(CopyOp {
                                src_tile: t.src_tile,
                                src: t.src_offset + done as u32,
                                dst_tile,
                                dst: dst + done as u32,
                                bytes: n as u32,
                            });
                            done += n;
                        }
                    }
                }
                let chunks = if piece == u64::MAX {
                    std::iter::once(0..ops.len()).collect()
                } else {
                    let costs: Vec<u64> = ops
                        .iter()
                        .map(|o| u64::from(o.bytes) + COPY_OVERHEAD)
                        .collect();
                    guided(&costs, threads, EXCHANGE_SMALLEST_TASK * threads as u64)
                };
                ExchangePlan { ops, chunks }
            })
            .collect();

        let computes = exe
            .computes
            .iter()
            .map(|ph| {
                let mut tiles = Vec::with_capacity(ph.tiles.len());
                let mut vertices = Vec::new();
                let mut fields = Vec::new();
                let mut lists = Vec::new();
                let mut costs = Vec::with_capacity(ph.tiles.len());
                for (index, tc) in ph.tiles.iter().enumerate() {
                    let first = vertices.len() as u32;
                    for v in &tc.vertices {
                        let rc: &Resolved = &codelets[v.codelet as usize];
                        vertices.push(HotVertex {
                            compute: rc.compute,
                            fields_at: fields.len(),
                            n_fields: v.fields.len(),
                            lists_at: lists.len(),
                            n_lists: v.lists.len(),
                            workers: if rc.multi_worker {
                                exe.target.workers_per_tile
                            } else {
                                1
                            },
                            slow: !rc.bool_fields.is_empty()
                                || (options.check_finite && !rc.f32_written.is_empty()),
                        });
                        fields.extend_from_slice(&v.fields);
                        lists.extend_from_slice(&v.lists);
                    }
                    tiles.push(HotTile {
                        base: mem.base(tc.tile),
                        index: index as u32,
                        first,
                        end: vertices.len() as u32,
                        copies: !tc.pre_copies.is_empty() || !tc.post_copies.is_empty(),
                        runs: 0..0,
                    });
                    let copies: u64 = tc
                        .pre_copies
                        .iter()
                        .chain(&tc.post_copies)
                        .map(|c| u64::from(c.bytes) / 8 + 4)
                        .sum();
                    let verts: u64 = tc
                        .vertices
                        .iter()
                        .map(|v| v.cycles.clamp(1, 1 << 40) + 8)
                        .sum();
                    costs.push(4 + copies + verts);
                }
                let total: u64 = costs.iter().sum();
                let chunks = if threads > 1 && total >= PARALLEL_COMPUTE_COST {
                    guided(&costs, threads, COMPUTE_SMALLEST_TASK * threads as u64)
                } else {
                    std::iter::once(0..ph.tiles.len()).collect()
                };
                let lookahead = total >= LOOKAHEAD_TILE_COST * ph.tiles.len() as u64;
                // The field lines of every tile, only where the look-ahead will ask for them.
                let mut runs = Vec::new();
                if lookahead {
                    for (ht, tc) in tiles.iter_mut().zip(&ph.tiles) {
                        let at = runs.len() as u32;
                        runs.extend(field_line_runs(tc, &codelets));
                        ht.runs = at..runs.len() as u32;
                    }
                }
                ComputePlan {
                    tiles,
                    vertices,
                    fields,
                    lists,
                    runs,
                    chunks,
                    lookahead,
                }
            })
            .collect();

        let tensor_index = exe
            .host_tensors
            .iter()
            .enumerate()
            .map(|(i, h)| (h.name.clone(), i))
            .collect();
        let stream_index = exe
            .streams
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i))
            .collect();
        let n_streams = exe.streams.len();
        Ok(Engine {
            exe,
            options,
            threads,
            pool,
            mem,
            codelets,
            exchanges,
            computes,
            tensor_index,
            stream_index,
            inputs: (0..n_streams).map(|_| None).collect(),
            outputs: vec![Vec::new(); n_streams],
            recorder: None,
        })
    }

    /// The executable this engine runs.
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

    fn host_tensor<T: Element>(&self, name: &str) -> Result<usize, EngineError> {
        let &i = self
            .tensor_index
            .get(name)
            .ok_or_else(|| EngineError::UnknownTensor { name: name.into() })?;
        let h = &self.exe.host_tensors[i];
        if h.dtype != T::DTYPE {
            return Err(EngineError::WrongDType {
                what: "host tensor",
                name: name.into(),
                expected: h.dtype,
                got: T::DTYPE,
            });
        }
        Ok(i)
    }

    /// Writes a whole host-writable tensor.
    pub fn write_tensor<T: Element>(&mut self, name: &str, data: &[T]) -> Result<(), EngineError> {
        let i = self.host_tensor::<T>(name)?;
        let h = &self.exe.host_tensors[i];
        if !h.writable {
            return Err(EngineError::NotWritable { name: name.into() });
        }
        let expected: usize = h.shape.iter().product();
        if data.len() != expected {
            return Err(EngineError::WrongLength {
                name: name.into(),
                expected,
                got: data.len(),
            });
        }
        let bytes = elems_as_bytes(data);
        // Runs are in bounds and total `expected` elements: `check()` (BadRun, RunTotal).
        let mut pos = 0;
        for r in &h.runs {
            let n = r.bytes as usize;
            self.mem
                .write(r.tile, r.offset as usize, &bytes[pos..pos + n]);
            pos += n;
        }
        Ok(())
    }

    /// Reads a whole host-readable tensor.
    pub fn read_tensor<T: Element>(&self, name: &str) -> Result<Vec<T>, EngineError> {
        let i = self.host_tensor::<T>(name)?;
        let h = &self.exe.host_tensors[i];
        if !h.readable {
            return Err(EngineError::NotReadable { name: name.into() });
        }
        Ok(bytes_to_elems(&gather_runs(&self.mem, &h.runs)))
    }

    /// Raw bytes of a tile's memory (for tests and debugging).
    pub fn read_memory(
        &self,
        tile: TileId,
        offset: usize,
        len: usize,
    ) -> Result<Vec<u8>, EngineError> {
        if !self.mem.in_bounds(tile, offset, len) {
            return Err(EngineError::MemoryRange { tile, offset, len });
        }
        let mut out = vec![0u8; len];
        self.mem.read(tile, offset, &mut out);
        Ok(out)
    }

    fn stream<T: Element>(&self, name: &str, dir: StreamDir) -> Result<usize, EngineError> {
        let &i = self
            .stream_index
            .get(name)
            .ok_or_else(|| EngineError::UnknownStream { name: name.into() })?;
        let s = &self.exe.streams[i];
        if s.dtype != T::DTYPE {
            return Err(EngineError::WrongDType {
                what: "stream",
                name: name.into(),
                expected: s.dtype,
                got: T::DTYPE,
            });
        }
        if s.dir != dir {
            return Err(EngineError::WrongStreamDirection {
                name: name.into(),
                dir: s.dir,
            });
        }
        Ok(i)
    }

    /// Connects a host buffer to a host-to-device stream. Each stream copy takes the next
    /// `len` elements, wrapping around to the start of the buffer.
    pub fn connect_stream<T: Element>(
        &mut self,
        name: &str,
        data: Vec<T>,
    ) -> Result<(), EngineError> {
        let i = self.stream::<T>(name, StreamDir::HostToDevice)?;
        let bytes = elems_as_bytes(&data).into_owned();
        self.inputs[i] = Some(InStream {
            dtype: T::DTYPE,
            data: bytes,
            pos: 0,
        });
        Ok(())
    }

    /// Everything a device-to-host stream has produced so far.
    pub fn stream_output<T: Element>(&self, name: &str) -> Result<Vec<T>, EngineError> {
        let i = self.stream::<T>(name, StreamDir::DeviceToHost)?;
        Ok(bytes_to_elems(&self.outputs[i]))
    }

    /// Like [`Engine::stream_output`], and clears the stream's output.
    pub fn take_stream_output<T: Element>(&mut self, name: &str) -> Result<Vec<T>, EngineError> {
        let i = self.stream::<T>(name, StreamDir::DeviceToHost)?;
        Ok(bytes_to_elems(&std::mem::take(&mut self.outputs[i])))
    }

    /// Runs top-level program `index`. On error the run stops; tile memory then holds whatever
    /// was computed up to that point, and the engine can run again.
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
            check_finite: self.options.check_finite,
        };
        let team = Team::new(self.threads.saturating_sub(1));
        let mut ctx = RunCtx {
            x,
            team: None,
            inputs: &mut self.inputs,
            outputs: &mut self.outputs,
            prof: self.recorder.as_deref_mut(),
        };
        let start = ctx.prof.is_some().then(|| {
            if let Some(p) = ctx.prof.as_deref_mut() {
                p.begin_run();
            }
            std::time::Instant::now()
        });
        let (result, prof) = match &self.pool {
            None => (ctx.step(step), ctx.prof),
            Some(pool) => {
                // Thread 0 of the pool interprets the program; the others help with every
                // parallel phase until the run ends (`team.rs`). (Not `ThreadPool::scope`:
                // Miri reports its scope teardown, rayon-rs/rayon#952.)
                let interpreter = std::sync::Mutex::new(Some(ctx));
                let mut outcomes = pool.broadcast(|b| {
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
        }
        result
    }
}

fn gather_runs(mem: &Memory, runs: &[MemRun]) -> Vec<u8> {
    let total: usize = runs.iter().map(|r| r.bytes as usize).sum();
    let mut out = vec![0u8; total];
    let mut pos = 0;
    for r in runs {
        let n = r.bytes as usize;
        mem.read(r.tile, r.offset as usize, &mut out[pos..pos + n]);
        pos += n;
    }
    out
}

#[cold]
#[inline(never)]
fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        format!("panicked: {s}")
    } else if let Some(s) = p.downcast_ref::<String>() {
        format!("panicked: {s}")
    } else {
        "panicked".to_string()
    }
}

/// What every thread of a run reads: the plans and tile memory.
#[derive(Clone, Copy)]
struct Exec<'e> {
    exe: &'e Executable,
    mem: &'e Memory,
    codelets: &'e [Resolved],
    exchanges: &'e [ExchangePlan],
    computes: &'e [ComputePlan],
    check_finite: bool,
}

/// The state of one `run` on the interpreting thread: the shared part, the helper threads
/// (none on one thread), and the host stream buffers and profiler.
struct RunCtx<'e> {
    x: Exec<'e>,
    team: Option<&'e Team>,
    inputs: &'e mut [Option<InStream>],
    outputs: &'e mut [Vec<u8>],
    prof: Option<&'e mut Recorder>,
}

impl RunCtx<'_> {
    fn read_scalar(&self, s: &ScalarLoc) -> i64 {
        let mut b = [0u8; 4];
        let n = s.dtype.size();
        // In bounds, aligned, dtype bool/i32/u32: `check()` (BadScalar).
        self.x.mem.read(s.tile, s.offset as usize, &mut b[..n]);
        match s.dtype {
            DType::I32 => i64::from(i32::from_le_bytes(b)),
            DType::U32 => i64::from(u32::from_le_bytes(b)),
            _ => i64::from(b[0] != 0),
        }
    }

    fn step(&mut self, step: &Step) -> Result<(), EngineError> {
        match step {
            Step::Seq(v) => {
                for s in v {
                    self.step(s)?;
                }
            }
            Step::Label { name, body } => match self.prof.as_deref_mut() {
                None => self.step(body)?,
                Some(p) => {
                    p.enter(name);
                    let r = self.step(body);
                    // Leave the label even when the body failed, so the label stack stays
                    // balanced for later runs.
                    if let Some(p) = self.prof.as_deref_mut() {
                        p.exit();
                    }
                    r?;
                }
            },
            Step::Sync(kind) => {
                if let Some(p) = self.prof.as_deref_mut() {
                    p.sync(*kind);
                }
            }
            Step::Exchange(i) => {
                if self.prof.is_none() {
                    self.exchange(*i as usize);
                } else {
                    let start = std::time::Instant::now();
                    self.exchange(*i as usize);
                    if let Some(p) = self.prof.as_deref_mut() {
                        p.exchange(*i as usize, start.elapsed());
                    }
                }
            }
            Step::Compute(i) => {
                if self.prof.is_none() {
                    self.compute(*i as usize)?;
                } else {
                    let start = std::time::Instant::now();
                    let r = self.compute(*i as usize);
                    if let Some(p) = self.prof.as_deref_mut() {
                        p.compute(*i as usize, start.elapsed());
                    }
                    r?;
                }
            }
            Step::Repeat { count, body } => {
                for _ in 0..*count {
                    self.step(body)?;
                }
            }
            Step::While {
                cond,
                predicate,
                body,
            } => {
                self.step(cond)?;
                while self.read_scalar(predicate) != 0 {
                    self.step(body)?;
                    self.step(cond)?;
                }
            }
            Step::If {
                predicate,
                then,
                else_,
            } => {
                if self.read_scalar(predicate) != 0 {
                    self.step(then)?;
                } else {
                    self.step(else_)?;
                }
            }
            Step::Switch {
                control,
                cases,
                default,
            } => {
                let v = self.read_scalar(control);
                match cases.iter().find(|(c, _)| *c == v) {
                    Some((_, s)) => self.step(s)?,
                    None => self.step(default)?,
                }
            }
            Step::Call(f) => {
                let exe = self.x.exe;
                self.step(&exe.functions[*f as usize])?;
            }
            Step::StreamIn { stream, runs } => self.stream_in(*stream as usize, runs)?,
            Step::StreamOut { stream, runs } => {
                let data = gather_runs(self.x.mem, runs);
                self.outputs[*stream as usize].extend_from_slice(&data);
            }
        }
        Ok(())
    }

    fn stream_in(&mut self, stream: usize, runs: &[MemRun]) -> Result<(), EngineError> {
        let desc = &self.x.exe.streams[stream];
        let need: usize = runs.iter().map(|r| r.bytes as usize).sum();
        if need == 0 {
            return Ok(());
        }
        let Some(src) = self.inputs[stream].as_mut().filter(|s| !s.data.is_empty()) else {
            return Err(EngineError::StreamNotConnected {
                name: desc.name.clone(),
            });
        };
        debug_assert_eq!(src.dtype, desc.dtype);
        for r in runs {
            let mut off = r.offset as usize;
            let mut left = r.bytes as usize;
            while left > 0 {
                let n = left.min(src.data.len() - src.pos);
                // Runs in bounds and element-aligned: `check()` (BadRun, RunTotal).
                self.x
                    .mem
                    .write(r.tile, off, &src.data[src.pos..src.pos + n]);
                src.pos = (src.pos + n) % src.data.len();
                off += n;
                left -= n;
            }
        }
        Ok(())
    }

    fn exchange(&self, i: usize) {
        let x = self.x;
        let plan = &x.exchanges[i];
        match self.team {
            Some(team) if plan.chunks.len() > 1 => {
                // No exchange task fails.
                let _ = team.run(Job::Exchange(i as u32), |job, t| x.work(job, t));
            }
            _ => x.exchange_ops(&plan.ops),
        }
    }

    fn compute(&self, i: usize) -> Result<(), EngineError> {
        let x = self.x;
        let plan = &x.computes[i];
        match self.team {
            Some(team) if plan.chunks.len() > 1 => {
                team.run(Job::Compute(i as u32), |job, t| x.work(job, t))
            }
            // Serially, the first failure ends the phase.
            _ => plan.chunks.iter().try_for_each(|r| x.compute_tiles(i, r)),
        }
    }
}

impl Exec<'_> {
    /// A thread's share of `job`: tasks claimed one by one until none is left. The tasks of
    /// a phase are its `chunks` (tile or copy ranges, split by cost in `Engine::new`).
    fn work(&self, job: Job, team: &Team) {
        match job {
            Job::Compute(i) => {
                let i = i as usize;
                let chunks = &self.computes[i].chunks;
                while let Some(c) = team.claim(chunks.len()) {
                    if let Err(e) = self.compute_tiles(i, &chunks[c]) {
                        team.fail(c, e);
                    }
                }
            }
            Job::Exchange(i) => {
                let plan = &self.exchanges[i as usize];
                while let Some(c) = team.claim(plan.chunks.len()) {
                    self.exchange_ops(&plan.ops[plan.chunks[c].clone()]);
                }
            }
            Job::Stop => {}
        }
    }

    fn exchange_ops(&self, ops: &[CopyOp]) {
        let mem = self.mem;
        for (k, o) in ops.iter().enumerate() {
            // Host-side hint: start fetching a later copy's source while this one runs
            // (copies are a few hundred bytes, scattered over many tiles).
            if let Some(next) = ops.get(k + EXCHANGE_PREFETCH_AHEAD) {
                let src = mem.base(next.src_tile).wrapping_add(next.src as usize);
                let dst = mem.base(next.dst_tile).wrapping_add(next.dst as usize);
                crate::codelet::prefetch_ptr(src);
                crate::codelet::prefetch_ptr(dst);
            }
            // SAFETY: both ranges are in bounds of their tiles (`check()`:
            // TransferOutOfBounds; pieces are sub-ranges of transfers), and within one
            // exchange phase no destination range overlaps any source range or another
            // destination range (`check()`: ExchangeOverlap), so concurrent copies of this
            // phase never write bytes another copy reads or writes.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    mem.base(o.src_tile).add(o.src as usize),
                    mem.base(o.dst_tile).add(o.dst as usize),
                    o.bytes as usize,
                );
            }
        }
    }

    /// Runs tiles `r` of compute phase `i` (one task), stopping at the first failure.
    fn compute_tiles(&self, i: usize, r: &Range<usize>) -> Result<(), EngineError> {
        let plan = &self.computes[i];
        let run_tiles = || -> Result<(), EngineError> {
            for j in r.clone() {
                let ht = &plan.tiles[j];
                if plan.lookahead {
                    // The next tile, also across the end of this task (often the next task
                    // of this thread too; a wasted hint costs little).
                    match plan.tiles.get(j + 1) {
                        Some(next) => {
                            Self::prefetch_tile_heads(plan, next);
                            let runs = &plan.runs[next.runs.start as usize..next.runs.end as usize];
                            codelet::ahead_begin(next.base, runs, ht.end - ht.first);
                        }
                        None => codelet::ahead_end(),
                    }
                }
                self.run_tile(i, plan, ht)?;
            }
            Ok(())
        };
        let result = run_tiles();
        if plan.lookahead {
            codelet::ahead_end();
        }
        result
    }

    /// Byte ranges of field `f` of vertex `v` (one for scalars and vectors, one per sub-vector
    /// for lists), for element size `size`.
    fn field_ranges<'v>(
        v: &'v crate::exe::VertexInst,
        f: usize,
        shape: FieldShape,
    ) -> impl Iterator<Item = FieldLoc> + 'v {
        let loc = v.fields[f];
        let lists: &[FieldLoc] = match shape {
            FieldShape::VectorList => {
                &v.lists[loc.offset as usize..loc.offset as usize + loc.len as usize]
            }
            _ => std::slice::from_ref(&v.fields[f]),
        };
        lists.iter().copied()
    }

    /// Asks the CPU for the first cache lines of the fields of `ht`'s vertices (a hint: no
    /// memory is read or written, whatever the addresses; for a vector-list field the offset
    /// is a list-table index, and the hint is merely wasted).
    fn prefetch_tile_heads(plan: &ComputePlan, ht: &HotTile) {
        let fields = plan.vertices[ht.first as usize..ht.end as usize]
            .iter()
            .flat_map(|hv| &plan.fields[hv.fields_at..][..hv.n_fields])
            .take(LOOKAHEAD_FIELDS);
        for f in fields {
            for line in 0..LOOKAHEAD_LINES {
                crate::codelet::prefetch_ptr(ht.base.wrapping_add(f.offset as usize + 64 * line));
            }
        }
    }

    fn local_copies(base: *mut u8, copies: &[crate::exe::LocalCopy]) {
        for c in copies {
            // SAFETY: src and dst ranges are in bounds of this tile (`check()`: CopyOutOfBounds);
            // `ptr::copy` allows overlap; this tile is touched only by this task (a tile
            // appears at most once per compute phase: `check()`: ComputeTileOrder).
            unsafe {
                std::ptr::copy(
                    base.add(c.src as usize),
                    base.add(c.dst as usize),
                    c.bytes as usize,
                )
            };
        }
    }

    fn run_tile(&self, cs: usize, plan: &ComputePlan, ht: &HotTile) -> Result<(), EngineError> {
        let base = ht.base;
        if ht.copies {
            Self::local_copies(
                base,
                &self.exe.computes[cs].tiles[ht.index as usize].pre_copies,
            );
        }
        for (k, hv) in plan.vertices[ht.first as usize..ht.end as usize]
            .iter()
            .enumerate()
        {
            if hv.slow {
                self.normalize_bools(cs, ht, k);
            }
            if plan.lookahead && k > 0 {
                codelet::ahead_vertex(k as u32);
            }
            // SAFETY: the field and list runs are copies of this vertex's `VertexInst` tables
            // (built with the plan, never mutated). `base` is this tile's
            // memory, used only by this task for the duration of the phase (tile unique per
            // phase: `check()` ComputeTileOrder); every field and list entry is in bounds and
            // aligned for its dtype (`check()`: FieldOutOfBounds, FieldMisaligned,
            // ListOutOfRange, ScalarLen; host memory is 8-aligned), the field count and kinds
            // match the registered codelet (`check()` FieldCount, `resolve_codelets`
            // CodeletLayout), written fields overlap no other field (`check()`: AliasedField),
            // and bool fields hold 0/1 (`normalize_bools` above).
            let io = unsafe {
                VertexIo::new(
                    base,
                    &plan.fields[hv.fields_at..][..hv.n_fields],
                    &plan.lists[hv.lists_at..][..hv.n_lists],
                )
            };
            for id in 0..hv.workers {
                let w = Worker {
                    id,
                    count: hv.workers,
                };
                let message = match panic::catch_unwind(AssertUnwindSafe(|| (hv.compute)(&io, w))) {
                    Ok(Ok(())) => continue,
                    Ok(Err(e)) => e.0,
                    Err(p) => panic_message(p),
                };
                return Err(self.vertex_failed(cs, ht, k, message));
            }
            if hv.slow && self.check_finite {
                self.check_vertex_finite(cs, ht, k)?;
            }
        }
        if ht.copies {
            Self::local_copies(
                base,
                &self.exe.computes[cs].tiles[ht.index as usize].post_copies,
            );
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn vertex_failed(&self, cs: usize, ht: &HotTile, k: usize, message: String) -> EngineError {
        let tc = &self.exe.computes[cs].tiles[ht.index as usize];
        let v = &tc.vertices[k];
        EngineError::VertexFailed {
            vertex: v.id,
            codelet: self.codelets[v.codelet as usize].desc.name.to_string(),
            tile: tc.tile,
            compute_set: self.exe.computes[cs].name.clone(),
            message,
        }
    }

    /// Sets every byte of the vertex's bool fields to 0 or 1.
    #[inline(never)]
    fn normalize_bools(&self, cs: usize, ht: &HotTile, k: usize) {
        let v = &self.exe.computes[cs].tiles[ht.index as usize].vertices[k];
        for &(f, shape) in &self.codelets[v.codelet as usize].bool_fields {
            for l in Self::field_ranges(v, f, shape) {
                // SAFETY: the field's bytes (1 per bool) are in bounds (`check()`:
                // FieldOutOfBounds, ListOutOfRange); this task has exclusive access to the tile
                // (tile unique per phase: `check()` ComputeTileOrder) and no vertex borrow is live.
                let bytes = unsafe {
                    std::slice::from_raw_parts_mut(ht.base.add(l.offset as usize), l.len as usize)
                };
                for b in bytes {
                    *b = u8::from(*b != 0);
                }
            }
        }
    }

    #[inline(never)]
    fn check_vertex_finite(&self, cs: usize, ht: &HotTile, k: usize) -> Result<(), EngineError> {
        let tc = &self.exe.computes[cs].tiles[ht.index as usize];
        let v = &tc.vertices[k];
        let rc = &self.codelets[v.codelet as usize];
        let (base, tile) = (ht.base, tc.tile);
        for &(f, shape) in &rc.f32_written {
            let mut element = 0u64;
            for l in Self::field_ranges(v, f, shape) {
                // SAFETY: in bounds and 4-aligned for f32 (`check()`: FieldOutOfBounds,
                // FieldMisaligned); the vertex's borrows ended when `compute` returned and this
                // task has exclusive access to the tile.
                let xs = unsafe {
                    std::slice::from_raw_parts(
                        base.add(l.offset as usize).cast::<f32>(),
                        l.len as usize,
                    )
                };
                if let Some(k) = xs.iter().position(|x| !x.is_finite()) {
                    return Err(EngineError::NonFinite {
                        vertex: v.id,
                        codelet: rc.desc.name.to_string(),
                        field: f,
                        tile,
                        compute_set: self.exe.computes[cs].name.clone(),
                        element: element + k as u64,
                        value: xs[k],
                    });
                }
                element += u64::from(l.len);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guided_tasks_cover_every_item_once_in_order_and_shrink() {
        let costs: Vec<u64> = (0..1000u64).map(|i| 50 + (i * 37) % 100).collect();
        let total: u64 = costs.iter().sum();
        for threads in 1..=4 {
            let r = guided(&costs, threads, 256 * threads as u64);
            assert_eq!(r.first().map(|r| r.start), Some(0));
            assert_eq!(r.last().map(|r| r.end), Some(costs.len()));
            assert!(r
                .windows(2)
                .all(|w| w[0].end == w[1].start && w[0].start < w[0].end));
            let cost = |r: &Range<usize>| costs[r.clone()].iter().sum::<u64>();
            // The first task is about half of one thread's share, ...
            let first = cost(&r[0]);
            let share = total / (2 * threads as u64);
            assert!((share..share + 150).contains(&first), "{threads}: {first}");
            // ... every task stops at the first item reaching 1/(2·threads) of what was left
            // or the floor, and the last one is small.
            let floor = total / (256 * threads as u64);
            let mut left = total;
            for t in &r {
                let target = (left / (2 * threads as u64)).max(floor);
                let c = cost(t);
                assert!(
                    c >= target.min(left) && c < target + 150,
                    "{threads}: {t:?}"
                );
                left -= c;
            }
            assert!(cost(r.last().unwrap()) < floor + 150, "{threads}: {r:?}");
            assert!(r.len() < 256 * threads, "{threads}: {} tasks", r.len());
        }
        assert!(guided(&[], 2, 512).is_empty());
        assert_eq!(guided(&[0, 0, 0], 2, 512), vec![0..3usize]);
    }
}
