//! Memory pass, always-live part: places every tile's variables, constants and vertex state,
//! and accounts for vertex descriptors and code. Temporaries are placed later, per superstep,
//! above the always-live area (see [`TempArena`]), except the receive slack beside a variable's
//! segment that [`super::in_place`] asks for.

use std::collections::BTreeMap;

use crate::codelet::{CodeletDesc, FieldDir};
use crate::entity::{PrimaryMap, TileMap};
use crate::exe::{InitBlock, MemoryCategory};
use crate::graph::VertexKey;
use crate::graph::{Graph, Region, VarId};
use crate::target::TileId;

/// Bytes of code assumed per distinct codelet on a tile.
pub(crate) const CODE_BYTES_PER_CODELET: u64 = 512;
/// Bytes of descriptor assumed per vertex, plus per field and per list entry.
pub(crate) const DESCRIPTOR_BYTES_PER_VERTEX: u64 = 8;
pub(crate) const DESCRIPTOR_BYTES_PER_FIELD: u64 = 4;

/// Where a run of variable elements lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seg {
    pub start: u64,
    pub end: u64,
    pub tile: TileId,
    /// Byte offset of element `start` in the tile's memory.
    pub offset: u64,
}

/// One piece of a tensor region resolved to memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Piece {
    pub var: VarId,
    pub start: u64,
    pub len: u64,
    pub tile: TileId,
    pub offset: u64,
}

/// Allocation state of one tile.
#[derive(Debug, Default, Clone)]
pub(crate) struct TileAlloc {
    pub next: u64,
    pub init: Vec<InitBlock>,
    /// (name, category) -> bytes
    pub items: BTreeMap<(String, MemoryCategory), u64>,
}

impl TileAlloc {
    /// Reserves `bytes` at the next aligned offset.
    pub(crate) fn alloc(&mut self, bytes: u64, align: u64, name: &str, cat: MemoryCategory) -> u64 {
        let old = self.next;
        let off = old.next_multiple_of(align);
        self.next = off + bytes;
        // Alignment padding is charged to the item that needed it.
        *self.items.entry((name.to_string(), cat)).or_default() += bytes + (off - old);
        off
    }

    /// Accounts for bytes that hold no addressable data (descriptors, code).
    pub(crate) fn reserve(&mut self, bytes: u64, align: u64, name: &str, cat: MemoryCategory) {
        self.alloc(bytes, align, name, cat);
    }
}

/// Receive space reserved right before and right after one segment, in bytes (see
/// [`super::in_place`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Slack {
    pub before: u64,
    pub after: u64,
}

/// The always-live layout of a graph.
pub(crate) struct Layout {
    /// Per variable: its segments sorted by `start`.
    pub segs: PrimaryMap<VarId, Vec<Seg>>,
    /// Per variable, per segment: the receive slack reserved around it.
    pub slack: Vec<Vec<Slack>>,
    pub tiles: TileMap<TileAlloc>,
    /// Per vertex, per state field (declaration order; `None` for non-state fields): offset and
    /// element count.
    pub state: PrimaryMap<VertexKey, Vec<Option<(u64, u64)>>>,
    pub align: u64,
}

impl Layout {
    /// Resolves `region` into memory pieces, in element order. Elements with no mapping are
    /// skipped (validation has already rejected unmapped elements).
    pub(crate) fn pieces(&self, region: &Region, elem: u64, out: &mut Vec<Piece>) {
        pieces(&self.segs, region, elem, out);
    }
}

/// [`Layout::pieces`] over any segment table (also the one of [`segments`], before offsets
/// are assigned: all offsets 0, so pieces then never merge across segments).
pub(crate) fn pieces(
    segs: &PrimaryMap<VarId, Vec<Seg>>,
    region: &Region,
    elem: u64,
    out: &mut Vec<Piece>,
) {
    let segs = &segs[region.var];
    let (s, e) = (region.start, region.end());
    let mut i = segs.partition_point(|g| g.end <= s);
    while i < segs.len() && segs[i].start < e {
        let g = segs[i];
        let ps = g.start.max(s);
        let pe = g.end.min(e);
        let offset = g.offset + (ps - g.start) * elem;
        match out.last_mut() {
            Some(p)
                if p.tile == g.tile
                    && p.var == region.var
                    && p.start + p.len == ps
                    && p.offset + p.len * elem == offset =>
            {
                p.len += pe - ps;
            }
            _ => out.push(Piece {
                var: region.var,
                start: ps,
                len: pe - ps,
                tile: g.tile,
                offset,
            }),
        }
        i += 1;
    }
}

/// The tile segments of every variable, in mapping order, with offsets not yet assigned (0).
pub(crate) fn segments(graph: &Graph) -> PrimaryMap<VarId, Vec<Seg>> {
    graph
        .vars
        .values()
        .map(|var| {
            var.mapping
                .iter()
                .map(|(range, tile)| Seg {
                    start: range.start,
                    end: range.end,
                    tile,
                    offset: 0,
                })
                .collect()
        })
        .collect()
}

/// Places all always-live data: the variables' `segs` (from [`segments`]) with the receive
/// `slack` around each (same shape as `segs`, or empty for none), vertex state, descriptors
/// and code.
pub(crate) fn layout(
    graph: &Graph,
    codelets: &PrimaryMap<VertexKey, &'static CodeletDesc>,
    mut segs: PrimaryMap<VarId, Vec<Seg>>,
    slack: &[Vec<Slack>],
) -> Layout {
    let nt = graph.target.num_tiles();
    let align = u64::from(graph.target.alignment);
    let mut tiles = TileMap::filled(nt, TileAlloc::default());
    // No slack (the in-place pass did not run): none beside any segment.
    let slack: Vec<Vec<Slack>> = if slack.is_empty() {
        segs.values()
            .map(|vs| vec![Slack::default(); vs.len()])
            .collect()
    } else {
        slack.to_vec()
    };
    for ((var, vs), slack) in graph.vars.values().zip(segs.values_mut()).zip(&slack) {
        let elem = var.dtype.size() as u64;
        let cat = if var.is_constant {
            MemoryCategory::Constant
        } else {
            MemoryCategory::Variable
        };
        for (seg, sl) in vs.iter_mut().zip(slack) {
            let (range, tile) = (seg.start..seg.end, seg.tile);
            let t = &mut tiles[tile];
            let bytes = (range.end - range.start) * elem;
            let slack_name = || format!("{} (receive slack)", var.name);
            if sl.before > 0 {
                // Rounded up so that the segment stays aligned right after it.
                t.alloc(
                    sl.before.next_multiple_of(align),
                    align,
                    &slack_name(),
                    MemoryCategory::ReceiveSlack,
                );
            }
            let offset = t.alloc(bytes, align, &var.name, cat);
            if sl.after > 0 {
                t.alloc(sl.after, 1, &slack_name(), MemoryCategory::ReceiveSlack);
            }
            if let Some(init) = &var.init {
                let data = &init[(range.start * elem) as usize..(range.end * elem) as usize];
                t.init.push(InitBlock {
                    offset: offset as u32,
                    len: data.len() as u32,
                    data: data.into(),
                });
            }
            seg.offset = offset;
        }
    }
    let mut state = PrimaryMap::with_capacity(graph.vertices.len());
    let mut code: TileMap<std::collections::BTreeSet<&str>> =
        TileMap::filled(nt, Default::default());
    for (vi, v) in graph.vertices.iter() {
        let (Some(desc), Some(tile)) = (codelets.get(vi).copied(), v.tile) else {
            state.push(Vec::new());
            continue;
        };
        let t = &mut tiles[tile];
        code[tile].insert(desc.name);
        let mut fields = Vec::with_capacity(desc.fields.len());
        let mut desc_bytes = DESCRIPTOR_BYTES_PER_VERTEX;
        for f in desc.fields {
            desc_bytes += DESCRIPTOR_BYTES_PER_FIELD;
            if f.dir != FieldDir::State {
                fields.push(None);
                continue;
            }
            let val = &v.state[f.name];
            let off = t.alloc(
                val.bytes.len() as u64,
                align,
                "vertex state",
                MemoryCategory::VertexState,
            );
            t.init.push(InitBlock {
                offset: off as u32,
                len: val.bytes.len() as u32,
                data: val.bytes.as_slice().into(),
            });
            fields.push(Some((off, val.len() as u64)));
        }
        if let Some(crate::graph::Binding::List(l)) = desc.fields.iter().find_map(|f| {
            v.conns
                .get(f.name)
                .filter(|_| f.shape == crate::codelet::FieldShape::VectorList)
        }) {
            desc_bytes += DESCRIPTOR_BYTES_PER_FIELD * l.len() as u64;
        }
        t.reserve(
            desc_bytes,
            4,
            "vertex descriptors",
            MemoryCategory::VertexDescriptors,
        );
        state.push(fields);
    }
    for (tile, names) in code.iter() {
        for name in names {
            tiles[tile].reserve(CODE_BYTES_PER_CODELET, align, name, MemoryCategory::Code);
        }
    }
    Layout {
        segs,
        slack,
        tiles,
        state,
        align,
    }
}

/// Temporary allocation for one lowered construct (an Execute or a Copy): buffers live from
/// the construct's first exchange to its last compute, then the space is reused.
pub(crate) struct TempArena<'a> {
    base: &'a TileMap<u64>,
    align: u64,
    used: BTreeMap<TileId, u64>,
}

impl<'a> TempArena<'a> {
    pub(crate) fn new(base: &'a TileMap<u64>, align: u64) -> Self {
        TempArena {
            base,
            align,
            used: BTreeMap::new(),
        }
    }

    /// A buffer of `bytes` on `tile`.
    pub(crate) fn alloc(&mut self, tile: TileId, bytes: u64) -> u64 {
        let base = self.base[tile];
        let u = self.used.entry(tile).or_insert(0);
        let off = (base + *u).next_multiple_of(self.align);
        *u = off + bytes - base;
        off
    }

    /// Bytes used per tile by this construct.
    pub(crate) fn usage(&self) -> impl Iterator<Item = (TileId, u64)> + '_ {
        self.used.iter().map(|(&t, &u)| (t, u))
    }
}
