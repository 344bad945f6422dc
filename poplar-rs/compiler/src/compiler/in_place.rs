//! In-place concatenation: a read-only field that gathers `[remote…, local piece, remote…]`
//! can be bound around its local piece instead of into a temporary, if the layout reserves
//! receive space ("slack") right before and after that piece's segment. The exchange then
//! writes the remote parts straight into the slack, and the local part needs no on-tile copy.
//!
//! This is the halo-exchange pattern of mesh codes: a tile's local vector is its own slice of a
//! distributed tensor plus halo slices of its neighbours. Without it, every superstep copies the
//! own slice into a buffer next to the received halo.
//!
//! The rule that picks the local piece ([`anchor`]) is used twice: by [`slack_needs`] before
//! the layout, to size the slack, and by the lowering, which binds in place only if the slack
//! it finds is large enough and not already holding another field's data in the same
//! superstep (otherwise the field falls back to a temporary). Slack is always-live memory,
//! reused by every superstep that binds around the same segment; it is charged to the tile as
//! "VAR (receive slack)" in category [`crate::exe::MemoryCategory::ReceiveSlack`].

use std::collections::{BTreeSet, HashMap};

use crate::codelet::{CodeletDesc, FieldDir};
use crate::entity::PrimaryMap;
use crate::graph::program::Program;
use crate::graph::{Binding, ComputeSet, Graph, Region, Tensor};
use crate::graph::{VarId, VertexKey};
use crate::target::TileId;

use super::layout::{pieces, Piece, Seg, Slack};

/// Where a gathered field can be bound in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Anchor {
    /// Index of the local piece the field is bound around.
    pub piece: usize,
    /// The segment holding that piece: variable index and position in its segment list.
    pub var: usize,
    pub seg: usize,
    /// Bytes of the field before and after the piece (they go into the slack).
    pub before: u64,
    pub after: u64,
}

/// Picks the local piece of a multi-piece field on `tile` to bind around: the longest piece on
/// the tile such that everything before it in the field fits before its segment (the piece
/// starts the segment, or nothing comes before it) and likewise after it. `None` if the field
/// has a single piece (bound in place anyway) or no such piece.
pub(crate) fn anchor(
    ps: &[Piece],
    tile: TileId,
    segs: &PrimaryMap<VarId, Vec<Seg>>,
    elem: u64,
) -> Option<Anchor> {
    if ps.len() < 2 {
        return None;
    }
    let total: u64 = ps.iter().map(|p| p.len).sum();
    let mut best: Option<(u64, Anchor)> = None;
    let mut before = 0;
    for (i, p) in ps.iter().enumerate() {
        let after = total - before - p.len;
        if p.tile == tile {
            let vs = &segs[p.var];
            let seg = vs.partition_point(|g| g.end <= p.start);
            let g = vs[seg];
            let fits_before = before == 0 || p.start == g.start;
            let fits_after = after == 0 || p.start + p.len == g.end;
            if fits_before && fits_after && best.is_none_or(|(len, _)| p.len > len) {
                best = Some((
                    p.len,
                    Anchor {
                        piece: i,
                        var: p.var.as_u32() as usize,
                        seg,
                        before: before * elem,
                        after: after * elem,
                    },
                ));
            }
        }
        before += p.len;
    }
    best.map(|(_, a)| a)
}

/// What the in-place pass decided: the receive slack the layout reserves around each segment,
/// and the anchor each read-only gathered field is bound around. Empty when the pass did not
/// run ([`InPlaceConcat::Never`](super::InPlaceConcat::Never)).
#[derive(Debug, Default)]
pub(crate) struct InPlace {
    /// Per variable, per segment (empty: no slack anywhere).
    pub slack: Vec<Vec<Slack>>,
    /// By (tile, regions of the field).
    pub anchors: Anchors,
}

/// The in-place pass: where read-only concatenations are bound around their local piece.
pub(crate) fn plan(
    graph: &Graph,
    programs: &[Program],
    codelets: &PrimaryMap<VertexKey, &'static CodeletDesc>,
    segs: &PrimaryMap<VarId, Vec<Seg>>,
    mode: super::InPlaceConcat,
) -> InPlace {
    use super::InPlaceConcat::*;
    match mode {
        Never => InPlace::default(),
        IfNoLarger | Always => slack_needs(graph, programs, codelets, segs, mode == IfNoLarger),
    }
}

/// The slack to reserve around every segment (`segs` from [`super::layout::segments`]) so that
/// every read-only gathered field of every compute set the programs execute can be bound in
/// place: per segment, the largest need of any such field. With `no_larger`, a tile whose
/// slack would exceed the gathered buffers it saves (the largest total over one compute set)
/// gets none.
fn slack_needs(
    graph: &Graph,
    programs: &[Program],
    codelets: &PrimaryMap<VertexKey, &'static CodeletDesc>,
    segs: &PrimaryMap<VarId, Vec<Seg>>,
    no_larger: bool,
) -> InPlace {
    let mut anchors = Anchors::new();
    let mut slack: Vec<Vec<Slack>> = segs
        .values()
        .map(|vs| vec![Slack::default(); vs.len()])
        .collect();
    let mut executed = BTreeSet::new();
    for p in programs.iter().chain(&graph.functions) {
        executed_compute_sets(p, &mut executed);
    }
    let mut ps = Vec::new();
    // Per tile: the largest bytes of in-place-able buffers one compute set gathers.
    let mut saved: HashMap<TileId, u64> = HashMap::new();
    for cs in executed {
        // Buffers of this compute set by (tile, regions): a region list read by several
        // vertices of a tile is gathered once.
        let mut gathered: HashMap<(TileId, Vec<Region>), u64> = HashMap::new();
        for &vr in &graph.compute_sets[cs.key()].vertices {
            let v = &graph.vertices[vr.key()];
            let Some(tile) = v.tile else { continue };
            for f in codelets[vr.key()].fields {
                if f.dir == FieldDir::State || f.dir.writes() {
                    continue;
                }
                let tensors: &[Tensor] = match v.conns.get(f.name) {
                    Some(Binding::Tensor(t)) => std::slice::from_ref(t),
                    Some(Binding::List(ts)) => ts,
                    None => &[],
                };
                for t in tensors {
                    let elem = t.dtype.size() as u64;
                    ps.clear();
                    for r in t.regions.iter() {
                        pieces(segs, r, elem, &mut ps);
                    }
                    if let Some(a) = anchor(&ps, tile, segs, elem) {
                        anchors.insert((tile, t.regions.to_vec()), a);
                        let s = &mut slack[a.var][a.seg];
                        s.before = s.before.max(a.before);
                        s.after = s.after.max(a.after);
                        let bytes = t.num_elements() as u64 * elem;
                        gathered.insert((tile, t.regions.to_vec()), bytes);
                    }
                }
            }
        }
        let mut per_tile: HashMap<TileId, u64> = HashMap::new();
        for ((tile, _), bytes) in gathered {
            *per_tile.entry(tile).or_default() += bytes;
        }
        for (tile, bytes) in per_tile {
            let s = saved.entry(tile).or_default();
            *s = (*s).max(bytes);
        }
    }
    if no_larger {
        let mut cost: HashMap<TileId, u64> = HashMap::new();
        for (vs, sl) in segs.values().zip(&slack) {
            for (g, s) in vs.iter().zip(sl) {
                *cost.entry(g.tile).or_default() += s.before + s.after;
            }
        }
        for (vs, sl) in segs.values().zip(&mut slack) {
            for (g, s) in vs.iter().zip(sl) {
                if cost.get(&g.tile).copied().unwrap_or(0)
                    > saved.get(&g.tile).copied().unwrap_or(0)
                {
                    *s = Slack::default();
                }
            }
        }
    }
    InPlace { slack, anchors }
}

/// The anchors the in-place pass chose, by (tile, regions of the field): the lowerer binds a
/// field around the recorded anchor instead of choosing again.
pub(crate) type Anchors = HashMap<(TileId, Vec<Region>), Anchor>;

/// Adds every compute set `p` executes (at any depth) to `out`.
fn executed_compute_sets(p: &Program, out: &mut BTreeSet<ComputeSet>) {
    match p {
        Program::Execute(cs) => {
            out.insert(*cs);
        }
        // A body repeated zero times never runs: no slack for it.
        Program::Repeat { count: 0, .. } => {}
        _ => p.for_each_child(|c| executed_compute_sets(c, out)),
    }
}
