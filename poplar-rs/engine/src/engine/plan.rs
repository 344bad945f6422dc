//! Per-phase plans built once at engine creation: flat tables of vertices and field
//! locations for compute phases, copy lists for exchange phases, both split into guided
//! tile ranges for the team.

use std::ops::Range;

use super::lookahead::LineRun;
use super::memory::Memory;
use crate::codelet::{
    CodeletDesc, FieldDir, FieldLoc, FieldShape, FieldSpec, VertexError, VertexIo, Worker,
};
use crate::dtype::DType;
use crate::entity::PrimaryMap;
use crate::exe::{CodeletId, ComputePhase, ExchangePhase, TileCompute, Transfer, VertexInst};
use crate::target::TileId;

// ---------------------------------------------------------------------------------------------
// Precomputed plans

/// A codelet resolved for the hot path.
pub(crate) struct Resolved {
    pub(crate) desc: &'static CodeletDesc,
    pub(crate) compute: fn(&VertexIo<'_>, Worker) -> Result<(), VertexError>,
    pub(crate) multi_worker: bool,
    /// Bool fields (normalized to 0/1 before each call).
    pub(crate) bool_fields: Vec<(usize, FieldShape)>,
    /// Written f32 fields (checked with `check_finite`).
    pub(crate) f32_written: Vec<(usize, FieldShape)>,
}

/// One exchange copy (a transfer to one destination, possibly a piece of it).
#[derive(Clone, Copy)]
pub(crate) struct CopyOp {
    pub(crate) src_tile: TileId,
    pub(crate) src: u32,
    pub(crate) dst_tile: TileId,
    pub(crate) dst: u32,
    pub(crate) bytes: u32,
}

pub(crate) struct ExchangePlan {
    pub(crate) ops: Vec<CopyOp>,
    /// Ranges of `ops` run as one parallel task each; one range means run serially.
    pub(crate) chunks: Vec<Range<usize>>,
}

/// Signature of a codelet's entry point.
pub(crate) type ComputeFn = fn(&VertexIo<'_>, Worker) -> Result<(), VertexError>;

/// One vertex of a compute phase, flattened for the hot loop.
pub(crate) struct HotVertex {
    pub(crate) compute: ComputeFn,
    /// `fields` and `lists` of the `VertexInst`, copied into the phase's flat tables
    /// ([`ComputePlan::fields`], [`ComputePlan::lists`]) in execution order, so that the hot
    /// loop reads them sequentially instead of chasing one small heap block per vertex, and
    /// binds them as safe sub-slices (no measurable speed-up on the cardiac solver).
    pub(crate) fields_at: usize,
    pub(crate) n_fields: usize,
    pub(crate) lists_at: usize,
    pub(crate) n_lists: usize,
    /// 1, or `workers_per_tile` for a multi-worker codelet.
    pub(crate) workers: u32,
    /// The byte ranges of the vertex's bool fields, `bools[bools_at..][..n_bools]` of the
    /// phase (normalized to 0/1 before each call, from the plan rather than the executable's
    /// scattered vertex records: one phase of an all-reduce spent 7 % of its time there).
    pub(crate) bools_at: u32,
    pub(crate) n_bools: u32,
    /// Needs the slow path: written f32 fields to check or flush.
    pub(crate) slow: bool,
}

/// One tile of a compute phase, flattened for the hot loop.
pub(crate) struct HotTile {
    pub(crate) base: *mut u8,
    /// Index into the phase's `tiles`.
    pub(crate) index: u32,
    /// Range of the phase's `vertices`.
    pub(crate) first: u32,
    pub(crate) end: u32,
    /// Has pre- or post-copies.
    pub(crate) copies: bool,
    /// Range of the phase's `runs`: the cache lines of this tile's fields (empty unless the
    /// phase looks ahead).
    pub(crate) runs: Range<u32>,
}

pub(crate) struct ComputePlan {
    pub(crate) tiles: Vec<HotTile>,
    pub(crate) vertices: Vec<HotVertex>,
    /// Field locations of all `vertices`, each vertex's run at `fields_at`.
    pub(crate) fields: Vec<FieldLoc>,
    /// Vector-list entries of all `vertices`, each vertex's run at `lists_at`.
    pub(crate) lists: Vec<FieldLoc>,
    /// Bool field byte ranges (`offset`, `len` in bytes) of all `vertices`, each vertex's run
    /// at `bools_at`.
    pub(crate) bools: Vec<FieldLoc>,
    /// Cache-line runs of each tile's fields (see `HotTile::runs`).
    pub(crate) runs: Vec<LineRun>,
    /// Ranges of `tiles` run as one parallel task each.
    pub(crate) chunks: Vec<Range<usize>>,
    /// While running a tile, fetch the next one: the first lines of its fields at once, the
    /// rest as the running vertices report progress (heavy phases only, see
    /// [`LOOKAHEAD_TILE_COST`]).
    pub(crate) lookahead: bool,
    /// Estimated cost of each of `tiles` (vertex cycles, copy bytes), for balancing.
    pub(crate) costs: Vec<u64>,
}

// SAFETY: the raw pointers of a plan point into tile memories that the same `Engine` owns,
// that outlive the plan and that are never reallocated. Tile memory accesses follow
// `Memory`'s discipline.
unsafe impl Send for ComputePlan {}
// SAFETY: as above.
unsafe impl Sync for ComputePlan {}

// ---------------------------------------------------------------------------------------------
// Building the plans (once, at engine creation)

/// What the rewrites of the schedule (`interleave.rs`, `grouped.rs`) are found from: the
/// engine's executable, its plain schedule and phase plans, each tile's memory size.
#[derive(Clone, Copy)]
pub(crate) struct Planned<'a> {
    pub(crate) exe: &'a crate::exe::Executable,
    pub(crate) schedule: &'a super::schedule::Schedule,
    pub(crate) codelets: &'a PrimaryMap<CodeletId, Resolved>,
    pub(crate) exchanges: &'a PrimaryMap<crate::exe::ExchangePhaseId, ExchangePlan>,
    pub(crate) computes: &'a PrimaryMap<crate::exe::ComputePhaseId, ComputePlan>,
    pub(crate) tile_bytes: &'a [usize],
    pub(crate) threads: usize,
}

/// Which tiles this rank runs, and how many threads share a phase.
#[derive(Clone, Copy)]
pub(crate) struct Share<'a> {
    /// This rank's tiles (all of them on one rank).
    pub(crate) mine: &'a std::ops::Range<TileId>,
    pub(crate) threads: usize,
}

impl Share<'_> {
    #[inline]
    pub(crate) fn owns(&self, t: TileId) -> bool {
        self.mine.contains(&t)
    }
}

/// Every codelet of the executable resolved for the hot path.
pub(crate) fn resolve(descs: &[&'static CodeletDesc]) -> PrimaryMap<CodeletId, Resolved> {
    descs.iter().map(|&d| Resolved::new(d)).collect()
}

impl Resolved {
    fn new(desc: &'static CodeletDesc) -> Resolved {
        let pick = |f: &dyn Fn(&FieldSpec) -> bool| {
            desc.fields
                .iter()
                .enumerate()
                .filter(|(_, s)| f(s))
                .map(|(i, s)| (i, s.shape))
                .collect()
        };
        Resolved {
            desc,
            compute: desc.compute,
            multi_worker: desc.multi_worker,
            bool_fields: pick(&|s| s.dtype == DType::Bool),
            f32_written: pick(&|s| {
                s.dtype == DType::F32 && matches!(s.dir, FieldDir::Output | FieldDir::InOut)
            }),
        }
    }
}

impl ExchangePlan {
    /// The copies of `ph` between this rank's tiles (copies that cross ranks go as messages,
    /// `ranks.rs`). A transfer larger than 1/(4·threads) of its phase is cut into pieces of
    /// that size, so that one large copy does not hold up the others.
    pub(crate) fn build(ph: &ExchangePhase, share: Share<'_>) -> ExchangePlan {
        let threads = share.threads;
        let total: u64 = ph
            .transfers
            .iter()
            .map(|t| u64::from(t.bytes) * t.dsts.len() as u64)
            .sum();
        let piece = if threads > 1 && total >= PARALLEL_EXCHANGE_BYTES {
            total.div_ceil(threads as u64 * 4).max(4096)
        } else {
            u64::MAX
        };
        let mut ops = Vec::new();
        for t in ph.transfers.iter().filter(|t| share.owns(t.src_tile)) {
            for &(dst_tile, dst) in t.dsts.iter().filter(|d| share.owns(d.0)) {
                push_pieces(&mut ops, t, dst_tile, dst, piece);
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
    }
}

/// One transfer to one destination, as copies of at most `piece` bytes.
fn push_pieces(ops: &mut Vec<CopyOp>, t: &Transfer, dst_tile: TileId, dst: u32, piece: u64) {
    let bytes = u64::from(t.bytes);
    let mut done = 0u64;
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

/// What a compute plan needs besides its phase.
pub(crate) struct ComputeInputs<'a> {
    pub(crate) codelets: &'a PrimaryMap<CodeletId, Resolved>,
    pub(crate) mem: &'a Memory,
    pub(crate) share: Share<'a>,
    pub(crate) workers_per_tile: u32,
    /// Vertices that write f32 fields take the slow path (finite checks, or flushing
    /// subnormals in software).
    pub(crate) slow_f32: bool,
}

impl ComputePlan {
    /// The flat tables of `ph`'s tiles on this rank, split into guided ranges when the phase
    /// is heavy enough to share, with the look-ahead's line runs when it is heavier still.
    pub(crate) fn build(ph: &ComputePhase, inputs: &ComputeInputs<'_>) -> ComputePlan {
        let threads = inputs.share.threads;
        let mut plan = ComputePlan {
            tiles: Vec::with_capacity(ph.tiles.len()),
            vertices: Vec::new(),
            fields: Vec::new(),
            lists: Vec::new(),
            bools: Vec::new(),
            runs: Vec::new(),
            chunks: Vec::new(),
            lookahead: false,
            costs: Vec::with_capacity(ph.tiles.len()),
        };
        for (index, tc) in ph.tiles.iter().enumerate() {
            if inputs.share.owns(tc.tile) {
                plan.push_tile(index as u32, tc, inputs);
            }
        }
        let total: u64 = plan.costs.iter().sum();
        plan.chunks = if threads > 1 && total >= PARALLEL_COMPUTE_COST {
            guided(&plan.costs, threads, COMPUTE_SMALLEST_TASK * threads as u64)
        } else {
            std::iter::once(0..plan.tiles.len()).collect()
        };
        plan.lookahead = total >= LOOKAHEAD_TILE_COST * plan.tiles.len().max(1) as u64;
        if plan.lookahead {
            plan.add_line_runs(ph, inputs.codelets);
        }
        plan
    }

    /// Appends tile `tc` (the `index`-th of its phase): its vertices, their fields, and its
    /// estimated cost.
    fn push_tile(&mut self, index: u32, tc: &TileCompute, inputs: &ComputeInputs<'_>) {
        let first = self.vertices.len() as u32;
        for v in &tc.vertices {
            self.push_vertex(v, inputs);
        }
        self.tiles.push(HotTile {
            base: inputs.mem.base(tc.tile),
            index,
            first,
            end: self.vertices.len() as u32,
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
        self.costs.push(4 + copies + verts);
    }

    fn push_vertex(&mut self, v: &VertexInst, inputs: &ComputeInputs<'_>) {
        let rc = &inputs.codelets[v.codelet];
        let bools_at = self.bools.len() as u32;
        for &(f, shape) in &rc.bool_fields {
            // One byte per bool.
            self.bools.extend(field_ranges(v, f, shape));
        }
        self.vertices.push(HotVertex {
            compute: rc.compute,
            fields_at: self.fields.len(),
            n_fields: v.fields.len(),
            lists_at: self.lists.len(),
            n_lists: v.lists.len(),
            workers: if rc.multi_worker {
                inputs.workers_per_tile
            } else {
                1
            },
            bools_at,
            n_bools: self.bools.len() as u32 - bools_at,
            slow: inputs.slow_f32 && !rc.f32_written.is_empty(),
        });
        self.fields.extend_from_slice(&v.fields);
        self.lists.extend_from_slice(&v.lists);
    }

    /// The field lines of every tile, for the look-ahead to ask for.
    fn add_line_runs(&mut self, ph: &ComputePhase, codelets: &PrimaryMap<CodeletId, Resolved>) {
        for ht in self.tiles.iter_mut() {
            // `index`, not position: over several ranks `tiles` skips the tiles of other ranks.
            let tc = &ph.tiles[ht.index as usize];
            let at = self.runs.len() as u32;
            self.runs.extend(field_line_runs(tc, codelets));
            ht.runs = at..self.runs.len() as u32;
        }
    }
}

/// Byte ranges of field `f` of vertex `v` (one for scalars and vectors, one per sub-vector
/// for lists), for element size `size`.
pub(crate) fn field_ranges<'v>(
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

/// The cache lines of every field of a tile's vertices, merged into runs (the look-ahead's
/// target when the tile runs next).
pub(crate) fn field_line_runs(
    tc: &crate::exe::TileCompute,
    codelets: &crate::entity::PrimaryMap<crate::exe::CodeletId, Resolved>,
) -> Vec<LineRun> {
    let mut ranges = Vec::new();
    for v in &tc.vertices {
        let specs = codelets[v.codelet].desc.fields;
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
    super::lookahead::line_runs(ranges.into_iter())
}

/// Guided split of items with the given costs into contiguous ranges for `threads` threads
/// that claim them in order: each range costs `1/(2·threads)` of what is left, down to
/// `total / smallest`. Large first tasks keep each thread on consecutive tiles (the
/// look-ahead's next tile is usually its own); small last ones leave no thread waiting long
/// for another. Measured against equal tasks (≈ 120 per phase) on the 0.2 mm cardiac slab:
/// within noise, with fewer hand-offs.
pub(crate) fn guided(costs: &[u64], threads: usize, smallest: u64) -> Vec<Range<usize>> {
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
pub(crate) const PARALLEL_EXCHANGE_BYTES: u64 = 256 * 1024;
/// Copies ahead whose source and destination the exchange loop prefetches.
pub(crate) const EXCHANGE_PREFETCH_AHEAD: usize = 4;
/// Units (tiles) ahead whose copies and field heads an interleaved phase asks for.
pub(crate) const INTERLEAVE_PREFETCH_AHEAD: usize = 2;
/// Fixed cost of one copy, in byte-equivalents, for balancing.
pub(crate) const COPY_OVERHEAD: u64 = 64;
/// Below this estimated cost a compute phase runs on one thread.
pub(crate) const PARALLEL_COMPUTE_COST: u64 = 2_000;
/// The smallest task of a parallel compute phase is `1/(this · threads)` of the phase's cost;
/// the last tasks handed out are that small, so the threads finish close together.
pub(crate) const COMPUTE_SMALLEST_TASK: u64 = 256;
/// As [`COMPUTE_SMALLEST_TASK`], for an exchange phase's bytes.
pub(crate) const EXCHANGE_SMALLEST_TASK: u64 = 32;

/// Average estimated cost per tile from which a compute phase prefetches the first
/// [`LOOKAHEAD_LINES`] cache lines of every field of the next tile's vertices while it runs a
/// tile: a tile's fields are short arrays that start cold, and on the host each tile began with
/// a run of misses the hardware prefetcher could not hide. Below it (light phases, e.g. a
/// superstep of empty vertices) the hints would cost more than they save.
pub(crate) const LOOKAHEAD_TILE_COST: u64 = 2_000;
/// Cache lines per field asked for ahead of a tile.
pub(crate) const LOOKAHEAD_LINES: usize = 4;
/// Fields per tile asked for ahead (the first ones, in vertex order).
pub(crate) const LOOKAHEAD_FIELDS: usize = 16;

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
