//! Exchange and compute interleaved tile by tile, where that cannot change a result.
//!
//! A superstep's exchange ends before its compute begins: that is the model. On the host,
//! running it so means that every byte an exchange delivers has left the caches by the time
//! the compute phase reads it, whenever a phase moves more than the caches hold (an
//! all-reduce of 64 MB over 16 replicas moves 64 MB per step). Where an exchange phase is
//! followed directly by compute phases (only syncs between them), the engine may instead run,
//! for each tile in turn, the copies that land on it and then its share of those compute
//! phases, so the compute reads what was just copied while it is still cached.
//!
//! The compute phases of one interleaving ([`interleaving_at`]) are any number of phases without
//! vertices (on-tile copies only: what a `Copy` program leaves on its tiles after the
//! exchange), then at most one phase with vertices. A tile's share of each phase runs in
//! program order, and a phase touches only its own tile's memory, so the interleaving gives the
//! bytes of the phases run apart exactly when no vertex (or on-tile copy) of the interleaving writes
//! a byte that one of the exchange's copies reads: all copies into a tile run before its
//! compute, copies never write what another copy reads (`check()`: ExchangeOverlap), so the
//! only thing the interleaving could change is a copy reading a source that some tile's
//! compute already overwrote. [`interleavable`] checks that, byte range against byte range, when
//! the engine is built; interleavings that fail it run phase by phase. Only the last phase can fail
//! (a phase without vertices cannot), and after a failure every copy of the exchange and
//! every on-tile copy of the earlier phases still runs (they would have completed before the
//! failing phase began); the failing phase stops as it would alone.
//!
//! Not used when profiling (each phase keeps its own host wall time) or over several ranks
//! (copies between ranks travel as messages after the local ones); [`Interleave`]
//! chooses which exchanges (by default those of [`INTERLEAVE_MIN_BYTES`] or more).

use std::collections::HashMap;
use std::ops::Range;

use super::options::Interleave;
use super::plan::{guided, ComputePlan, CopyOp, ExchangePlan, Planned, Resolved, COPY_OVERHEAD};
use super::schedule::{Block, Op, OpIndex, Schedule};
use crate::codelet::{FieldDir, FieldShape};
use crate::entity::PrimaryMap;
use crate::exe::{CodeletId, ComputePhaseId, ExchangePhaseId, Executable};
use crate::target::TileId;

/// Below this many bytes an exchange gains nothing from being interleaved with its compute
/// (what it delivers is still in the L2 caches, 0.5 to 2 MiB a core on common hosts, when the
/// compute phase starts): [`Interleave::Large`]. Measured on the sparse layer's Fwd
/// (`popsparse` bench), whose distribution delivers 4.1 MB: interleaved, 17 % less host time;
/// the cardiac and hdiff runs are unchanged with every exchange interleaved.
pub(crate) const INTERLEAVE_MIN_BYTES: u64 = 1 << 20;

/// One tile of an interleaving: the copies that land on it, then its share of each
/// compute phase of the interleaving, in program order.
pub(crate) struct InterleavedUnit {
    /// Range of [`InterleavedPlan::ops`].
    pub(crate) ops: Range<u32>,
    /// Range of [`InterleavedPlan::tiles`].
    pub(crate) tiles: Range<u32>,
}

/// A tile's share of one compute phase of a interleaving.
#[derive(Clone, Copy)]
pub(crate) struct InterleavedTile {
    /// Position of the phase in [`InterleavedPlan::computes`].
    pub(crate) phase: u32,
    /// Index into that phase's compute plan `tiles`.
    pub(crate) tile: u32,
}

/// An exchange phase and the compute phases after it, interleaved tile by tile.
pub(crate) struct InterleavedPlan {
    pub(crate) exchange: ExchangePhaseId,
    /// The interleaving's compute phases in program order: phases without vertices, then at most one
    /// with vertices ([`interleaving_at`]).
    pub(crate) computes: Vec<ComputePhaseId>,
    /// The exchange's copies, grouped by destination tile in tile order.
    pub(crate) ops: Vec<CopyOp>,
    /// One per tile that receives copies or runs compute, in tile order.
    pub(crate) units: Vec<InterleavedUnit>,
    /// Each unit's tile shares (see [`InterleavedUnit::tiles`]).
    pub(crate) tiles: Vec<InterleavedTile>,
    /// Ranges of `units` run as one parallel task each.
    pub(crate) chunks: Vec<Range<usize>>,
}

/// The interleavings of an engine, and (while the schedule is rewritten) which windows of it
/// they replace.
#[derive(Default)]
pub(crate) struct Interleavings {
    pub(crate) plans: Vec<InterleavedPlan>,
    /// Plans by exchange and compute phases (several windows may share one).
    windows: HashMap<(ExchangePhaseId, Vec<ComputePhaseId>), u32>,
    /// Whether each compute phase has vertices (an interleaving ends at the first that does).
    has_vertices: PrimaryMap<ComputePhaseId, bool>,
}

impl Interleavings {
    /// The plan that replaces the window of block `b` starting at instruction `i`, and the
    /// window's length, if there is one.
    pub(crate) fn at(&self, s: &Schedule, b: Block, i: usize) -> Option<(u32, usize)> {
        if self.plans.is_empty() {
            return None;
        }
        let ops = &s.ops[i..b.end as usize];
        let (x, first, last) = interleaving_at(ops, 0, &self.has_vertices)?;
        let key = (x, computes_in(&ops[first..=last]).collect());
        self.windows.get(&key).map(|&f| (f, last + 1))
    }

    /// The plans of every interleaving of the plain schedule ([`interleaving_at`]) that moves
    /// at least the bytes `mode` asks for and passes [`interleavable`] (none for
    /// [`Interleave::Never`]).
    pub(crate) fn for_mode(mode: Interleave, inp: &Planned<'_>) -> Interleavings {
        let min_bytes = match mode {
            Interleave::Never => return Interleavings::default(),
            Interleave::Large | Interleave::NoGroupedRuns => INTERLEAVE_MIN_BYTES,
            Interleave::All => 0,
        };
        Interleavings::build(inp, min_bytes)
    }

    fn build(inp: &Planned<'_>, min_bytes: u64) -> Interleavings {
        let exe = inp.exe;
        let has_vertices: PrimaryMap<ComputePhaseId, bool> = exe
            .computes
            .values()
            .map(|ph| ph.tiles.iter().any(|t| !t.vertices.is_empty()))
            .collect();
        let mut windows = Vec::new();
        for root in inp.schedule.plain_roots() {
            interleavings_in(inp.schedule, root, &has_vertices, &mut windows);
        }
        windows.sort_unstable();
        windows.dedup();
        let mut f = Interleavings {
            has_vertices,
            ..Interleavings::default()
        };
        for (x, cs) in windows {
            let bytes: u64 = inp.exchanges[x]
                .ops
                .iter()
                .map(|o| u64::from(o.bytes))
                .sum();
            if bytes < min_bytes || !cs.iter().all(|&c| interleavable(exe, inp.codelets, x, c)) {
                continue;
            }
            let p = plan(
                exe,
                &inp.exchanges[x],
                inp.computes,
                x,
                cs.clone(),
                inp.threads,
            );
            f.windows.insert((x, cs), f.plans.len() as u32);
            f.plans.push(p);
        }
        f
    }
}

/// If `ops[i]` is an exchange: the exchange, and the indices of the first and the last
/// compute instruction of its interleaving — the compute phases after it (syncs between them
/// do not count: they only matter to the profiler) up to and including the first phase with
/// vertices.
pub(crate) fn interleaving_at(
    ops: &[Op],
    i: usize,
    has_vertices: &PrimaryMap<ComputePhaseId, bool>,
) -> Option<(ExchangePhaseId, usize, usize)> {
    let Op::Exchange(x) = ops[i] else {
        return None;
    };
    let mut ends = None;
    for (j, op) in ops.iter().enumerate().skip(i + 1) {
        match op {
            Op::Sync(_) => {}
            Op::Compute(c) => {
                let first = ends.map_or(j, |(f, _)| f);
                ends = Some((first, j));
                if has_vertices[*c] {
                    break;
                }
            }
            _ => break,
        }
    }
    ends.map(|(first, last)| (x, first, last))
}

/// The compute phases of `ops`, in order (an interleaving's are syncs and compute phases).
fn computes_in(ops: &[Op]) -> impl Iterator<Item = ComputePhaseId> + Clone + '_ {
    ops.iter().filter_map(|op| match op {
        Op::Compute(c) => Some(*c),
        _ => None,
    })
}

/// Every interleaving (exchange, compute phases) that block `b`, or a block inside it, runs.
fn interleavings_in(
    s: &Schedule,
    b: Block,
    has_vertices: &PrimaryMap<ComputePhaseId, bool>,
    out: &mut Vec<(ExchangePhaseId, Vec<ComputePhaseId>)>,
) {
    let ops = &s.ops[b.range()];
    for i in 0..ops.len() {
        if let Some((x, first, last)) = interleaving_at(ops, i, has_vertices) {
            out.push((x, computes_in(&ops[first..=last]).collect()));
        }
        interleavings_inside(s, b.start + i as u32, has_vertices, out);
    }
}

/// [`interleavings_in`] for the blocks inside instruction `i`.
fn interleavings_inside(
    s: &Schedule,
    i: OpIndex,
    has_vertices: &PrimaryMap<ComputePhaseId, bool>,
    out: &mut Vec<(ExchangePhaseId, Vec<ComputePhaseId>)>,
) {
    match &s.ops[i as usize] {
        Op::Seq(b) => interleavings_in(s, *b, has_vertices, out),
        _ => {
            for body in s.bodies(i) {
                interleavings_inside(s, body, has_vertices, out);
            }
        }
    }
}

/// Whether no byte written by compute phase `c` (written and read-written fields of its
/// vertices, destinations of its on-tile copies) is read by a copy of exchange phase `x`.
pub(crate) fn interleavable(
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
    computes: &PrimaryMap<ComputePhaseId, ComputePlan>,
    x: ExchangePhaseId,
    cs: Vec<ComputePhaseId>,
    threads: usize,
) -> InterleavedPlan {
    let mut ops = xp.ops.clone();
    // Stable: within a tile the copies keep the exchange plan's order.
    ops.sort_by_key(|o| o.dst_tile);
    // Every phase's tiles as (tile, phase position, index in the phase's plan), by tile and
    // then program order.
    let mut shares: Vec<(TileId, u32, u32)> = Vec::new();
    for (p, &c) in cs.iter().enumerate() {
        let ph = &exe.computes[c];
        shares.extend(
            computes[c]
                .tiles
                .iter()
                .enumerate()
                .map(|(k, ht)| (ph.tiles[ht.index as usize].tile, p as u32, k as u32)),
        );
    }
    shares.sort_unstable();
    let mut units = Vec::new();
    let mut tiles = Vec::new();
    let mut costs = Vec::new();
    let (mut i, mut j) = (0usize, 0usize);
    while i < ops.len() || j < shares.len() {
        let tile = match (ops.get(i), shares.get(j)) {
            (Some(o), Some(s)) => o.dst_tile.min(s.0),
            (Some(o), None) => o.dst_tile,
            (None, s) => s.expect("one of the two is left").0,
        };
        let (first_op, first_tile) = (i, tiles.len());
        let mut cost = 4u64;
        while i < ops.len() && ops[i].dst_tile == tile {
            cost += u64::from(ops[i].bytes) / 4 + COPY_OVERHEAD / 4;
            i += 1;
        }
        while j < shares.len() && shares[j].0 == tile {
            let (_, phase, k) = shares[j];
            cost += computes[cs[phase as usize]].costs[k as usize];
            tiles.push(InterleavedTile { phase, tile: k });
            j += 1;
        }
        units.push(InterleavedUnit {
            ops: first_op as u32..i as u32,
            tiles: first_tile as u32..tiles.len() as u32,
        });
        costs.push(cost);
    }
    let chunks = if threads > 1 {
        guided(&costs, threads, 256 * threads as u64)
    } else {
        std::iter::once(0..units.len()).collect()
    };
    InterleavedPlan {
        exchange: x,
        computes: cs,
        ops,
        units,
        tiles,
        chunks,
    }
}
