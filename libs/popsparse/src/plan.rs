//! The planner of a sparse fully-connected layer: `W` (`[X, Y]`, `nonzeros` non-zeros) times
//! dense `[Y, Z]`, over `P_X × P_Y × P_Z` tiles.
//!
//! Partition `(x, y)` is rows `x·⌈X/P_X⌉..` of `W` and columns `y·⌈Y/P_Y⌉..` (whole blocks).
//! Its `P_Z` tiles, `(x·P_Y + y)·P_Z + z`, consecutive in the ring of tiles, each take batch
//! columns `z·⌈Z/P_Z⌉..`. Every tile has a bucket of the same capacity,
//! `⌈blocks / (P_X·P_Y·P_Z) · (1 + bucket_oversize)⌉` entries (row, column of a non-zero
//! block: `u32`; its `block²` values of the plan's type: 12 bytes an entry for f32 element
//! sparsity). A partition's non-zeros are spread over its `P_Z` buckets, and every one of its
//! tiles must see all of them: the distribution passes the `P_Z` buckets through the `P_Z`
//! tiles.
//!
//! The cost model is that of the best case (every non-zero in a bucket of its own
//! partition; the planner plans for it, as popsparse does), for the Fwd pass:
//! - **distribution exchange**: every tile gets its dense block `X[y-range, z-range]` once
//!   (4 bytes an element over the exchange rate, plus the message set-up, and an on-tile copy
//!   where it lives); the later steps read it in place;
//! - **distribution compute**: `P_Z` multi-worker vertices over a full bucket
//!   ([`crate::cost::vertex_cycles`], the first also zeroing the partials), in tile cycles
//!   by the cycle model's own rule (`poplar_exe::profile::model::schedule_vertices`: six times the
//!   busiest context, plus the supervisor's cycles), and `P_Z − 1` shifts of the buckets within
//!   the partition (three exchanges each: rows, columns, values);
//! - **reduction** over `P_Y` (when > 1), spread over the `P_Y` tiles of a row of partitions:
//!   each receives a chunk of `⌈rows/P_Y⌉` rows of the `P_Y − 1` other partials and sums them
//!   with `poplin`'s multi-worker `SumBlocks<float>`, scheduled the same way;
//! - an internal sync before each exchange, and one global sync for `If(steps)` (the
//!   cycle model charges a global sync to every data-dependent control flow);
//! - the first compute reads the encoded buckets in place and zeroes the partials itself.
//!
//! A propagation step costs the loop's condition (a single-worker `Countdown` vertex) and its
//! global sync, the global sync of the `Switch`, the three shift exchanges (with their syncs)
//! and a compute.
//!
//! Memory per tile: the bucket three times (the encoded one and two propagation buffers), the
//! dense input and output-gradient blocks, and the received partials and output chunk of the
//! larger of the Fwd and GradA reductions. The plan keeps the fastest `(P_X, P_Y, P_Z)` within
//! `available_memory_proportion` of a tile, breaking ties by memory.

use poplar_core::target::Target;
use poplar_exe::profile::model::schedule_vertices;
use poplin::{PlanError, PlanParams};

/// Sizes of the layer: `Y[X, Z] = W[X, Y] · X[Y, Z]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FcParams {
    /// Rows of `W`: the layer's output size (`X`).
    pub output_size: usize,
    /// Columns of `W`: the input size (`Y`).
    pub input_size: usize,
    /// The batch (`Z`).
    pub batch: usize,
    /// The most non-zeros of `W` a pattern may have (elements, whole blocks).
    pub nonzeros: usize,
    /// Block size of the sparsity: 1 (element sparsity), 4, 8 or 16 (`block × block` blocks
    /// at multiples of `block`; `output_size` and `input_size` must be multiples of it).
    pub block: usize,
}

/// As users give them: `W 1024 × 1024, batch 16, 65536 non-zeros in 1×1 blocks`.
impl std::fmt::Display for FcParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "W {} × {}, batch {}, {} non-zeros in {}×{} blocks",
            self.output_size, self.input_size, self.batch, self.nonzeros, self.block, self.block
        )
    }
}

impl FcParams {
    /// `nonzeros` from a density (rounded up).
    pub fn with_density(
        output_size: usize,
        input_size: usize,
        batch: usize,
        density: f64,
    ) -> FcParams {
        FcParams {
            output_size,
            input_size,
            batch,
            nonzeros: ((output_size * input_size) as f64 * density).ceil() as usize,
            block: 1,
        }
    }

    /// The same layer with block sparsity of `block × block` (`nonzeros` rounded up to whole
    /// blocks).
    #[must_use]
    pub fn with_block(self, block: usize) -> FcParams {
        let bb = (block * block).max(1);
        FcParams {
            block,
            nonzeros: self.nonzeros.div_ceil(bb) * bb,
            ..self
        }
    }

    /// Non-zero blocks (elements for element sparsity).
    pub fn nonzero_blocks(&self) -> usize {
        self.nonzeros.div_ceil((self.block * self.block).max(1))
    }
}

/// Options of the planner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FcOptions {
    /// Share of a tile's memory the layer may use (0.6 as popsparse).
    pub available_memory_proportion: f64,
    /// Extra bucket space beyond an even share of the non-zeros (0.3 as popsparse's
    /// `metaInfoBucketOversizeProportion`): room for uneven patterns before spilling.
    pub bucket_oversize: f64,
    /// Use at most this many tiles.
    pub max_tiles: Option<usize>,
    /// Use this `[P_X, P_Y, P_Z]` instead of searching (it must fit the tiles and the
    /// memory budget).
    pub partition: Option<[usize; 3]>,
    /// Type of the weights and dense operands: `F32`, or `F16` (products rounded to f16,
    /// partials and outputs in f32).
    pub data_type: poplar_core::dtype::DType,
}

impl Default for FcOptions {
    fn default() -> Self {
        FcOptions {
            available_memory_proportion: 0.6,
            bucket_oversize: 0.3,
            max_tiles: None,
            partition: None,
            data_type: poplar_core::dtype::DType::F32,
        }
    }
}

/// Modelled cycles of the Fwd pass in the best case, by phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FcEstimate {
    pub distribution_exchange: u64,
    pub distribution_compute: u64,
    pub reduction_exchange: u64,
    pub reduction_compute: u64,
    pub sync: u64,
    /// Cycles of one propagation step (a shift of every bucket and a compute), for patterns
    /// that spill: the worst case takes `P_X·P_Y − 1` of them.
    pub propagation_step: u64,
}

impl FcEstimate {
    /// The best case (no propagation).
    pub fn total(&self) -> u64 {
        self.distribution_exchange
            + self.distribution_compute
            + self.reduction_exchange
            + self.reduction_compute
            + self.sync
    }
}

/// A plan (module notes).
#[derive(Debug, Clone, PartialEq)]
pub struct FcPlan {
    pub params: FcParams,
    pub px: usize,
    pub py: usize,
    /// Splits of the batch: the `P_Z` tiles of a partition each take `zb` columns of it.
    pub pz: usize,
    /// Rows and columns of a partition (multiples of the block; the last ones may be smaller),
    /// and batch columns of a tile.
    pub xb: usize,
    pub yb: usize,
    pub zb: usize,
    /// Entries (blocks) per bucket.
    pub capacity: usize,
    pub estimate: FcEstimate,
    pub bytes_per_tile: u64,
    pub budget: u64,
    /// Type of the weights and dense operands (partials and outputs are f32).
    pub data_type: poplar_core::dtype::DType,
}

impl FcPlan {
    pub fn tiles(&self) -> usize {
        self.px * self.py * self.pz
    }
    /// Partitions `(x, y)` (groups of `P_Z` tiles).
    pub fn groups(&self) -> usize {
        self.px * self.py
    }
    /// f32 values per bucket entry (`block²`).
    pub fn block_values(&self) -> usize {
        self.params.block * self.params.block
    }
    /// The tile of partition `(x, y)` and batch part `z`: `(x·P_Y + y)·P_Z + z`, so the
    /// `P_Z` tiles of a partition are consecutive in the ring.
    pub fn tile(&self, x: usize, y: usize, z: usize) -> usize {
        (x * self.py + y) * self.pz + z
    }
    /// `(x, y, z)` of a tile.
    pub fn coords(&self, tile: usize) -> (usize, usize, usize) {
        let g = tile / self.pz;
        (g / self.py, g % self.py, tile % self.pz)
    }
    pub fn z_range(&self, z: usize) -> std::ops::Range<usize> {
        (z * self.zb).min(self.params.batch)..((z + 1) * self.zb).min(self.params.batch)
    }
    pub fn x_range(&self, x: usize) -> std::ops::Range<usize> {
        (x * self.xb).min(self.params.output_size)..((x + 1) * self.xb).min(self.params.output_size)
    }
    pub fn y_range(&self, y: usize) -> std::ops::Range<usize> {
        (y * self.yb).min(self.params.input_size)..((y + 1) * self.yb).min(self.params.input_size)
    }
    /// The partition (group of tiles) that holds `W[row, col]`.
    pub fn home(&self, row: usize, col: usize) -> usize {
        (row / self.xb) * self.py + col / self.yb
    }
}

impl std::fmt::Display for FcPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = &self.params;
        let e = &self.estimate;
        writeln!(
            f,
            "sparse fc plan: W [{} × {}] with {} non-zeros in {}×{} blocks ({:.4} dense) · X [{} × {}], {} values, f32 partials",
            p.output_size,
            p.input_size,
            p.nonzeros,
            p.block,
            p.block,
            p.nonzeros as f64 / (p.output_size * p.input_size) as f64,
            p.input_size,
            p.batch,
            self.data_type.poplar_name()
        )?;
        writeln!(
            f,
            "  P_X {} × P_Y {} × P_Z {} = {} tiles; partitions {} × {}, batch parts of {}; buckets of {} entries ({} bytes)",
            self.px,
            self.py,
            self.pz,
            self.tiles(),
            self.xb,
            self.yb,
            self.zb,
            self.capacity,
            (8 + self.data_type.size() * self.block_values()) * self.capacity
        )?;
        writeln!(
            f,
            "  memory per tile: {} of {} bytes budgeted",
            self.bytes_per_tile, self.budget
        )?;
        write!(
            f,
            "  modelled Fwd cycles, best case: distribution exchange {} + compute {}, reduction exchange {} + compute {}, sync {} = {}; each propagation step {}",
            e.distribution_exchange,
            e.distribution_compute,
            e.reduction_exchange,
            e.reduction_compute,
            e.sync,
            e.total(),
            e.propagation_step
        )
    }
}

/// Why no plan was found (poplin's plan error, for a sparse layer).
pub type FcPlanError = PlanError<FcParams>;

/// The sparse layer's rules on its parameters, beyond "every size at least 1".
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FcRule {
    /// A block size other than 1, 4, 8, 16, or sizes that are not multiples of it.
    #[error("the block must be 1, 4, 8 or 16, and output_size and input_size multiples of it")]
    Block,
    /// `output_size` or `input_size` of 2³¹ or more: bucket coordinates are `u32` with the
    /// top bit marking spilled entries (`codelets::SPILLED`).
    #[error("output_size and input_size must be below 2^31 (bucket coordinates are 31-bit)")]
    TooLarge,
}

impl PlanParams for FcParams {
    const OP: &'static str = "sparse fc";
    const FIT_HINT: &'static str = "raise available_memory_proportion or give more tiles";
    type Rule = FcRule;
}

/// Entries per bucket over `t` tiles.
fn cap_of(p: &FcParams, o: &FcOptions, t: u64) -> u64 {
    ((p.nonzero_blocks() as f64 / t as f64) * (1.0 + o.bucket_oversize.max(0.0)))
        .ceil()
        .max(1.0) as u64
}

fn evaluate(
    target: &Target,
    p: &FcParams,
    o: &FcOptions,
    px: usize,
    py: usize,
    pz: usize,
) -> (FcEstimate, u64, usize) {
    let t = (px * py * pz) as u64;
    let b = p.block.max(1);
    let (xb, yb, z) = (
        (p.output_size.div_ceil(px).div_ceil(b) * b) as u64,
        (p.input_size.div_ceil(py).div_ceil(b) * b) as u64,
        p.batch.div_ceil(pz) as u64,
    );
    let (b, bb) = (b as u64, (b * b) as u64);
    let half = o.data_type == poplar_core::dtype::DType::F16;
    // Bytes of a value (weights, dense operands); partials are f32.
    let e = if half { 2 } else { 4 };
    // Tile cycles of vertices by the cycle model's own rule: `(worker cycles, multi-worker)`.
    let w = target.workers_per_tile;
    let tile = |c: u64, multi: bool| schedule_vertices([(c, multi)], w).tile_cycles;
    // A Fwd vertex over a full bucket: a worker's share of the batch columns.
    let cap = cap_of(p, o, t);
    let work = crate::cost::Work {
        entries: cap,
        rows: xb,
        cols: yb,
        z,
        block: b,
        half,
    };
    let vertex = crate::cost::vertex_cycles(crate::cost::Pass::Fwd, work, w);
    let rate = u64::from(target.exchange_bytes_per_cycle.max(1));
    let setup = u64::from(target.exchange_setup_cycles);
    let sync = u64::from(target.internal_sync_cycles);
    // The dense input block is copied onto every tile once: by exchange to the tiles that do
    // not hold it, on-tile (4 + bytes/8 cycles) where it lives.
    let remote = if px > 1 {
        (e * yb * z).div_ceil(rate) + setup
    } else {
        0
    };
    let input = remote + 4 + (e * yb * z).div_ceil(8);
    let zero = codelets::cycles::multi_worker(xb * z, w, poplar_core::dtype::DType::F32, 1);
    // A shift of every bucket (rows, columns, values: three exchanges with their syncs).
    let shift = 2 * ((4 * cap).div_ceil(rate) + setup + sync)
        + (e * cap * bb).div_ceil(rate)
        + setup
        + sync;
    // Distribution: the P_Z buckets of a partition pass through its P_Z tiles (P_Z computes,
    // the first of which zeroes the partials, and P_Z − 1 shifts within the partition).
    let compute = tile(vertex + zero, true) + (pz as u64 - 1) * (tile(vertex, true) + shift);
    // The reduction over P_Y is spread over the P_Y tiles of a row of partitions: each sums
    // a chunk of ⌈xb/P_Y⌉ rows from the P_Y − 1 others.
    let (rx, rc) = if py > 1 {
        let chunk = xb.div_ceil(py as u64);
        (
            ((py as u64 - 1) * 4 * chunk * z).div_ceil(rate) + (py as u64 - 1) * setup,
            tile(poplin::codelets::sum_cycles(py as u64, chunk * z, w), true),
        )
    } else {
        (0, 0)
    };
    // A propagation step: the loop's condition (a Countdown vertex, then the global sync of
    // the RepeatWhileTrue predicate), the global sync of the Switch on the active buffer, the
    // three shift exchanges and the compute.
    let global = u64::from(target.global_sync_cycles);
    let countdown = tile(codelets::cycles::OVERHEAD, false);
    let step = countdown + 2 * global + shift + tile(vertex, true);
    let est = FcEstimate {
        distribution_exchange: input,
        distribution_compute: compute,
        reduction_exchange: rx,
        reduction_compute: rc,
        // An internal sync before each exchange, and the global sync that every data-dependent
        // control flow costs (here `If(steps)`, evaluated even when nothing spilled).
        sync: sync * (1 + u64::from(py > 1)) + u64::from(target.global_sync_cycles),
        propagation_step: step,
    };
    // Buckets (three buffers), the dense block and the partial of the busiest pass, and the
    // received partials and output chunk of the larger reduction (Fwd over P_Y, GradA over
    // P_X; the passes share the plan).
    let mut bytes = 3 * (8 + e * bb) * cap + e * (xb + yb) * z + 4 * xb.max(yb) * z;
    let reduction = |parts: u64, rows: u64| {
        if parts > 1 {
            let chunk = rows.div_ceil(parts);
            4 * (parts - 1) * chunk * z + 4 * chunk * z
        } else {
            0
        }
    };
    bytes += reduction(py as u64, xb).max(reduction(px as u64, yb));
    (est, bytes, cap as usize)
}

/// Plans the layer (module notes).
pub fn plan(target: &Target, p: FcParams, o: &FcOptions) -> Result<FcPlan, FcPlanError> {
    if p.output_size == 0 || p.input_size == 0 || p.batch == 0 || p.nonzeros == 0 {
        return Err(FcPlanError::Empty(p));
    }
    if o.data_type != poplar_core::dtype::DType::F32
        && o.data_type != poplar_core::dtype::DType::F16
    {
        return Err(FcPlanError::Type(o.data_type));
    }
    if p.output_size.max(p.input_size) >= 1 << 31 {
        return Err(FcPlanError::Unsupported {
            params: p,
            rule: FcRule::TooLarge,
        });
    }
    let b = p.block;
    if ![1, 4, 8, 16].contains(&b)
        || !p.output_size.is_multiple_of(b)
        || !p.input_size.is_multiple_of(b)
    {
        return Err(FcPlanError::Unsupported {
            params: p,
            rule: FcRule::Block,
        });
    }
    let tiles = (target.num_tiles() as usize)
        .min(o.max_tiles.unwrap_or(usize::MAX))
        .max(1);
    let budget =
        (f64::from(target.bytes_per_tile) * o.available_memory_proportion.clamp(0.0, 1.0)) as u64;
    let mut best: Option<((u64, u64), FcPlan)> = None;
    let mut least = u64::MAX;
    // Partition sizes are whole blocks; splits whose last partition would be empty duplicate
    // a smaller split.
    let (xblocks, yblocks) = (p.output_size / b, p.input_size / b);
    for px in 1..=xblocks.min(tiles) {
        if (px - 1) * xblocks.div_ceil(px) >= xblocks {
            continue;
        }
        for py in 1..=yblocks.min(tiles / px) {
            if (py - 1) * yblocks.div_ceil(py) >= yblocks {
                continue;
            }
            for pz in 1..=p.batch.min(tiles / (px * py)) {
                if (pz - 1) * p.batch.div_ceil(pz) >= p.batch {
                    continue;
                }
                if o.partition.is_some_and(|f| f != [px, py, pz]) {
                    continue;
                }
                let (est, bytes, cap) = evaluate(target, &p, o, px, py, pz);
                least = least.min(bytes);
                if bytes > budget {
                    continue;
                }
                let key = (est.total(), bytes);
                if best.as_ref().is_some_and(|(k, _)| *k <= key) {
                    continue;
                }
                best = Some((
                    key,
                    FcPlan {
                        params: p,
                        px,
                        py,
                        pz,
                        xb: xblocks.div_ceil(px) * b,
                        yb: yblocks.div_ceil(py) * b,
                        zb: p.batch.div_ceil(pz),
                        capacity: cap,
                        estimate: est,
                        bytes_per_tile: bytes,
                        budget,
                        data_type: o.data_type,
                    },
                ));
            }
        }
    }
    best.map(|(_, plan)| plan).ok_or(FcPlanError::DoesNotFit {
        params: p,
        least_bytes_per_tile: least,
        budget,
    })
}
