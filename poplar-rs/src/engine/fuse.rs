//! Exchange and compute interleaved tile by tile, where that cannot change a result.
//!
//! A superstep's exchange ends before its compute begins: that is the model. On the host,
//! running it so means that every byte an exchange delivers has left the caches by the time
//! the compute phase reads it, whenever a phase moves more than the caches hold (an
//! all-reduce of 64 MB over 16 replicas moves 64 MB per step). Where an exchange phase is
//! followed directly by a compute phase (only syncs between them), the engine may instead run,
//! for each tile in turn, the copies that land on it and then its vertices, so the compute
//! reads what was just copied while it is still cached.
//!
//! That gives the same bytes as the model exactly when no vertex (or on-tile copy) of the
//! compute phase writes a byte that one of the exchange's copies reads: a vertex reads and
//! writes only its own tile's memory, all copies into a tile run before its vertices, copies
//! never write what another copy reads (`check()`: ExchangeOverlap), so the only thing the
//! interleaving could change is a copy reading a source that some tile's vertices already
//! overwrote. [`fusible`] checks that, byte range against byte range, when the engine is
//! built; pairs that fail it run as two phases. A failing vertex still lets every copy of
//! the phase run (the exchange completes; the compute stops as it would alone).
//!
//! Not used when profiling (each phase keeps its own host wall time) or over several ranks
//! (copies between ranks travel as messages after the local ones); [`super::Interleave`]
//! chooses which exchanges (by default those of [`FUSE_MIN_BYTES`] or more).

use std::collections::HashMap;
use std::ops::Range;

use super::plan::{guided, ComputePlan, CopyOp, ExchangePlan, Resolved, COPY_OVERHEAD};
use crate::codelet::{FieldDir, FieldShape};
use crate::entity::PrimaryMap;
use crate::exe::{CodeletId, ComputePhaseId, ExchangePhaseId, Executable, Step};
use crate::target::TileId;

/// Below this many bytes an exchange gains nothing from being interleaved with its compute
/// (what it delivers is still cached when the compute phase starts): [`super::Interleave::Large`].
pub(super) const FUSE_MIN_BYTES: u64 = 4 << 20;

/// One tile of an interleaved phase: the copies that land on it, then its vertices.
pub(super) struct FusedUnit {
    /// Range of [`FusedPlan::ops`].
    pub(super) ops: Range<u32>,
    /// Index into the compute plan's `tiles`, if the tile has vertices in the phase.
    pub(super) tile: Option<u32>,
}

/// An exchange phase and the compute phase after it, interleaved tile by tile.
pub(super) struct FusedPlan {
    pub(super) exchange: ExchangePhaseId,
    pub(super) compute: ComputePhaseId,
    /// The exchange's copies, grouped by destination tile in tile order.
    pub(super) ops: Vec<CopyOp>,
    /// One per tile that receives copies or runs vertices, in tile order.
    pub(super) units: Vec<FusedUnit>,
    /// Ranges of `units` run as one parallel task each.
    pub(super) chunks: Vec<Range<usize>>,
}

/// The interleaved phases of an engine, and which exchange–compute pairs they replace.
#[derive(Default)]
pub(super) struct Fusion {
    pub(super) plans: Vec<FusedPlan>,
    by_pair: HashMap<(ExchangePhaseId, ComputePhaseId), u32>,
}

impl Fusion {
    /// The interleaved plan for exchange `x` followed by compute `c`, if there is one.
    pub(super) fn get(&self, x: ExchangePhaseId, c: ComputePhaseId) -> Option<u32> {
        if self.plans.is_empty() {
            return None;
        }
        self.by_pair.get(&(x, c)).copied()
    }

    /// Builds the plans of every pair of `exe`'s programs and functions that runs an exchange
    /// directly followed by a compute phase and passes [`fusible`].
    pub(super) fn build(
        exe: &Executable,
        codelets: &PrimaryMap<CodeletId, Resolved>,
        exchanges: &PrimaryMap<ExchangePhaseId, ExchangePlan>,
        computes: &PrimaryMap<ComputePhaseId, ComputePlan>,
        threads: usize,
        min_bytes: u64,
    ) -> Fusion {
        let mut pairs = Vec::new();
        for s in exe.programs.iter().chain(exe.functions.values()) {
            adjacent_pairs(s, &mut pairs);
        }
        pairs.sort_unstable();
        pairs.dedup();
        let mut f = Fusion::default();
        for (x, c) in pairs {
            let bytes: u64 = exchanges[x].ops.iter().map(|o| u64::from(o.bytes)).sum();
            if bytes < min_bytes || !fusible(exe, codelets, x, c) {
                continue;
            }
            f.by_pair.insert((x, c), f.plans.len() as u32);
            f.plans
                .push(plan(exe, &exchanges[x], &computes[c], x, c, threads));
        }
        f
    }
}

/// Every (exchange, compute) pair that some sequence runs one right after the other (syncs
/// between them do not count: they only matter to the profiler).
pub(super) fn adjacent_pairs(s: &Step, out: &mut Vec<(ExchangePhaseId, ComputePhaseId)>) {
    match s {
        Step::Seq(v) => {
            for (i, a) in v.iter().enumerate() {
                if let Step::Exchange(x) = a {
                    let next = v[i + 1..].iter().find(|s| !matches!(s, Step::Sync(_)));
                    if let Some(Step::Compute(c)) = next {
                        out.push((*x, *c));
                    }
                }
                adjacent_pairs(a, out);
            }
        }
        Step::Label { body, .. } | Step::Repeat { body, .. } => adjacent_pairs(body, out),
        Step::While { cond, body, .. } => {
            adjacent_pairs(cond, out);
            adjacent_pairs(body, out);
        }
        Step::If { then, else_, .. } => {
            adjacent_pairs(then, out);
            adjacent_pairs(else_, out);
        }
        Step::Switch { cases, default, .. } => {
            for (_, c) in cases {
                adjacent_pairs(c, out);
            }
            adjacent_pairs(default, out);
        }
        Step::Sync(_)
        | Step::Exchange(_)
        | Step::Compute(_)
        | Step::Call(_)
        | Step::StreamIn { .. }
        | Step::StreamOut { .. } => {}
    }
}

/// Whether no byte written by compute phase `c` (written and read-written fields of its
/// vertices, destinations of its on-tile copies) is read by a copy of exchange phase `x`.
pub(super) fn fusible(
    exe: &Executable,
    codelets: &PrimaryMap<CodeletId, Resolved>,
    x: ExchangePhaseId,
    c: ComputePhaseId,
) -> bool {
    // The sources per tile, as sorted, merged byte ranges.
    let mut sources: HashMap<TileId, Vec<(u64, u64)>> = HashMap::new();
    for t in &exe.exchanges[x].transfers {
        let start = u64::from(t.src_offset);
        sources
            .entry(t.src_tile)
            .or_default()
            .push((start, start + u64::from(t.bytes)));
    }
    for r in sources.values_mut() {
        *r = merge(std::mem::take(r));
    }
    let hits = |tile: TileId, start: u64, len: u64| -> bool {
        let Some(r) = sources.get(&tile) else {
            return false;
        };
        // The last range starting before the end of [start, start + len).
        let end = start + len;
        let k = r.partition_point(|&(s, _)| s < end);
        len > 0 && k > 0 && r[k - 1].1 > start
    };
    for tc in exe.computes[c].tiles.iter() {
        if !sources.contains_key(&tc.tile) {
            continue;
        }
        for cp in tc.pre_copies.iter().chain(&tc.post_copies) {
            if hits(tc.tile, u64::from(cp.dst), u64::from(cp.bytes)) {
                return false;
            }
        }
        for v in &tc.vertices {
            let specs = codelets[v.codelet].desc.fields;
            for (f, spec) in specs.iter().enumerate() {
                if !matches!(spec.dir, FieldDir::Output | FieldDir::InOut) {
                    continue;
                }
                let size = spec.dtype.size() as u64;
                let loc = v.fields[f];
                let locs: &[crate::codelet::FieldLoc] = match spec.shape {
                    FieldShape::VectorList => v
                        .lists
                        .get(
                            loc.offset as usize
                                ..(loc.offset as usize).saturating_add(loc.len as usize),
                        )
                        .unwrap_or(&[]),
                    _ => std::slice::from_ref(&v.fields[f]),
                };
                for l in locs {
                    if hits(tc.tile, u64::from(l.offset), u64::from(l.len) * size) {
                        return false;
                    }
                }
            }
        }
    }
    true
}

/// Sorted, overlapping or touching ranges merged.
fn merge(mut r: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    r.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(r.len());
    for (s, e) in r {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// The interleaved plan: copies by destination tile, units in tile order, split for the team.
fn plan(
    exe: &Executable,
    xp: &ExchangePlan,
    cp: &ComputePlan,
    x: ExchangePhaseId,
    c: ComputePhaseId,
    threads: usize,
) -> FusedPlan {
    let mut ops = xp.ops.clone();
    // Stable: within a tile the copies keep the exchange plan's order.
    ops.sort_by_key(|o| o.dst_tile);
    let ph = &exe.computes[c];
    let mut compute_tiles: Vec<(TileId, u32)> = cp
        .tiles
        .iter()
        .enumerate()
        .map(|(k, ht)| (ph.tiles[ht.index as usize].tile, k as u32))
        .collect();
    compute_tiles.sort_unstable();
    let mut units = Vec::new();
    let mut costs = Vec::new();
    let (mut i, mut j) = (0usize, 0usize);
    while i < ops.len() || j < compute_tiles.len() {
        let next_copy = ops.get(i).map(|o| o.dst_tile);
        let next_compute = compute_tiles.get(j).map(|t| t.0);
        let tile = match (next_copy, next_compute) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, b) => b.expect("one of the two is left"),
        };
        let first = i;
        let mut cost = 4u64;
        while i < ops.len() && ops[i].dst_tile == tile {
            cost += u64::from(ops[i].bytes) / 4 + COPY_OVERHEAD / 4;
            i += 1;
        }
        let compute = (next_compute == Some(tile)).then(|| {
            let k = compute_tiles[j].1;
            j += 1;
            k
        });
        if let Some(k) = compute {
            let ht = &cp.tiles[k as usize];
            let tc = &ph.tiles[ht.index as usize];
            cost += tc
                .vertices
                .iter()
                .map(|v| v.cycles.clamp(1, 1 << 40) + 8)
                .sum::<u64>();
        }
        units.push(FusedUnit {
            ops: first as u32..i as u32,
            tile: compute,
        });
        costs.push(cost);
    }
    let chunks = if threads > 1 {
        guided(&costs, threads, 256 * threads as u64)
    } else {
        std::iter::once(0..units.len()).collect()
    };
    FusedPlan {
        exchange: x,
        compute: c,
        ops,
        units,
        chunks,
    }
}
