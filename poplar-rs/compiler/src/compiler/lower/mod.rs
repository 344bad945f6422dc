//! Exchange inference and BSP lowering: turns programs into supersteps.
//!
//! (Over 600 lines, on purpose: binding a vertex's fields, inferring the exchange that fills
//! them and placing the superstep's temporaries are one decision per field, made with one
//! per-superstep state; split, each part would need all of that state.)
//!
//! An `Execute(cs)` becomes, per tile, the vertices' field bindings. A field whose elements are
//! all on the vertex's tile and contiguous in its memory is bound in place. So is a read-only
//! field gathered around a local piece that has receive slack beside it (see
//! [`super::in_place`]): the other pieces are received or copied into the slack. Any other field
//! gets a contiguous temporary buffer on the tile: remote elements are received straight into it by
//! the exchange before the compute phase (each remote region is fetched once per tile, however
//! many vertices read it; later readers copy on-tile), local elements are gathered by on-tile
//! copies, and written elements go back by on-tile copies or by an exchange after the compute
//! phase. Transfers of the same source range to several tiles become one broadcast; adjacent
//! single-destination ranges are coalesced. A sync precedes every exchange and nothing else.

use std::collections::{BTreeMap, HashMap};

use crate::codelet::{CodeletDesc, CycleCtx, FieldDir, FieldLoc, FieldShape};
use crate::entity::{PrimaryMap, TileMap};
use crate::exe::{
    CodeletRef, ComputePhase, ExchangePhase, LocalCopy, MemRun, RemoteDir, ScalarLoc, Step,
    SyncKind, TileCompute, Transfer, VertexInst,
};
use crate::graph::program::Program;
use crate::graph::{Binding, ComputeSet, Graph, Region, Tensor, VarId, VertexKey};
use crate::target::TileId;

mod remote;

use super::in_place::{anchor, Anchors};
use super::layout::{Layout, Piece, TempArena};

/// Default cycle estimate for a codelet that gives none: a fixed overhead plus one cycle per
/// element of every non-state field.
pub(crate) const DEFAULT_VERTEX_OVERHEAD_CYCLES: u64 = 20;

/// A point-to-point move found by inference, before grouping into transfers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Move {
    src_tile: TileId,
    src_off: u64,
    bytes: u64,
    dst_tile: TileId,
    dst_off: u64,
}

/// The result of lowering (see [`Lowerer::finish`]).
pub(crate) struct Lowered {
    /// Per program of `compile`'s list: its steps.
    pub programs: Vec<Step>,
    /// Per graph function: its steps.
    pub functions: Vec<Step>,
    /// Per host tensor (the graph's order): its memory runs.
    pub host_tensor_runs: Vec<Vec<MemRun>>,
    /// Per replica constant (the graph's order; none when not replicated): its memory runs.
    pub replica_constant_runs: Vec<Vec<MemRun>>,
    pub codelet_refs: Vec<CodeletRef>,
    pub computes: Vec<ComputePhase>,
    pub exchanges: Vec<ExchangePhase>,
    /// Per tile: where temporaries start (above the always-live area, aligned).
    pub temp_base: TileMap<u64>,
    /// Per tile: the peak bytes of temporaries.
    pub temp_peak: TileMap<u64>,
    /// The replica maps of the cross-replica copies (`exe::Replication::maps`).
    pub replica_maps: Vec<Vec<u32>>,
    /// Copies between tiles and remote buffers (`exe::Executable::remote_copies`).
    pub remote_copies: Vec<crate::exe::RemoteCopy>,
}

/// The lowering pass: exchange inference and BSP lowering of every program and function, and
/// the memory runs of every host tensor and replica constant.
pub(crate) fn lower(
    graph: &Graph,
    programs: &[Program],
    layout: &Layout,
    anchors: &Anchors,
    codelets: &PrimaryMap<VertexKey, &'static CodeletDesc>,
) -> Lowered {
    let mut lw = Lowerer::new(graph, layout, anchors, codelets);
    let programs = programs.iter().map(|p| lw.program(p)).collect();
    let functions = graph.functions.values().map(|p| lw.program(p)).collect();
    let host_tensor_runs = graph
        .host_tensors
        .values()
        .map(|h| lw.runs(&h.tensor))
        .collect();
    let replica_constant_runs = match &graph.replication {
        None => Vec::new(),
        Some(_) => graph
            .replica_constants
            .iter()
            .map(|(var, _)| {
                let v = &graph.vars[*var];
                lw.runs(&graph.whole(*var, v.dtype, &[v.len as usize]))
            })
            .collect(),
    };
    Lowered {
        programs,
        functions,
        host_tensor_runs,
        replica_constant_runs,
        ..lw.finish()
    }
}

struct Lowerer<'a> {
    graph: &'a Graph,
    layout: &'a Layout,
    anchors: &'a Anchors,
    codelets: &'a PrimaryMap<VertexKey, &'static CodeletDesc>,
    codelet_refs: Vec<CodeletRef>,
    codelet_index: HashMap<&'static str, u32>,
    computes: Vec<ComputePhase>,
    exchanges: Vec<ExchangePhase>,
    temp_base: TileMap<u64>,
    temp_peak: TileMap<u64>,
    cs_cache: HashMap<ComputeSet, Step>,
    replica_maps: Vec<Vec<u32>>,
    remote_copies: Vec<crate::exe::RemoteCopy>,
}

fn u32_of(x: u64) -> u32 {
    // Offsets beyond 4 GiB only arise for graphs far over any tile budget; the memory check
    // reports those before the executable is used.
    u32::try_from(x).unwrap_or(u32::MAX)
}

impl<'a> Lowerer<'a> {
    fn new(
        graph: &'a Graph,
        layout: &'a Layout,
        anchors: &'a Anchors,
        codelets: &'a PrimaryMap<VertexKey, &'static CodeletDesc>,
    ) -> Self {
        let temp_base = TileMap::from_fn(graph.target.num_tiles(), |t| {
            layout.tiles[t].next.next_multiple_of(layout.align)
        });
        Lowerer {
            graph,
            layout,
            anchors,
            codelets,
            codelet_refs: Vec::new(),
            codelet_index: HashMap::new(),
            computes: Vec::new(),
            exchanges: Vec::new(),
            temp_base,
            temp_peak: TileMap::filled(graph.target.num_tiles(), 0),
            cs_cache: HashMap::new(),
            replica_maps: Vec::new(),
            remote_copies: Vec::new(),
        }
    }

    fn codelet_id(&mut self, d: &'static CodeletDesc) -> u32 {
        if let Some(&i) = self.codelet_index.get(d.name) {
            return i;
        }
        let i = self.codelet_refs.len() as u32;
        self.codelet_refs.push(CodeletRef {
            name: d.name.to_string(),
            signature: d.signature(),
            fields: d.fields.iter().map(Into::into).collect(),
            multi_worker: d.multi_worker,
        });
        self.codelet_index.insert(d.name, i);
        i
    }

    fn pieces(&self, t: &Tensor) -> Vec<Piece> {
        let elem = t.dtype.size() as u64;
        let mut out = Vec::new();
        for r in t.regions.iter() {
            self.layout.pieces(r, elem, &mut out);
        }
        out
    }

    fn finish_arena(&mut self, arena: TempArena<'_>) {
        for (t, used) in arena.usage() {
            let p = &mut self.temp_peak[t];
            *p = (*p).max(used);
        }
    }

    fn sync_kind(&self, transfers: &[Transfer]) -> SyncKind {
        let tg = &self.graph.target;
        let crosses = transfers.iter().any(|t| {
            t.dsts
                .iter()
                .any(|&(d, _)| tg.ipu_of(d) != tg.ipu_of(t.src_tile))
        });
        if crosses {
            SyncKind::Global
        } else {
            SyncKind::Internal
        }
    }

    /// Appends `[Sync, Exchange]` for `moves` to `steps`, if there are any.
    fn exchange(&mut self, name: String, moves: Vec<Move>, steps: &mut Vec<Step>) {
        if moves.is_empty() {
            return;
        }
        let transfers = group_transfers(moves);
        steps.push(Step::Sync(self.sync_kind(&transfers)));
        steps.push(Step::Exchange(crate::exe::ExchangePhaseId::from_u32(
            self.exchanges.len() as u32,
        )));
        self.exchanges.push(ExchangePhase {
            name,
            transfers,
            cross_replica: Vec::new(),
        });
    }

    fn compute(
        &mut self,
        name: String,
        tiles: BTreeMap<TileId, TileCompute>,
        steps: &mut Vec<Step>,
    ) {
        let tiles: Vec<TileCompute> = tiles
            .into_values()
            .filter(|t| {
                !(t.vertices.is_empty() && t.pre_copies.is_empty() && t.post_copies.is_empty())
            })
            .collect();
        if tiles.is_empty() {
            return;
        }
        steps.push(Step::Compute(crate::exe::ComputePhaseId::from_u32(
            self.computes.len() as u32,
        )));
        self.computes.push(ComputePhase { name, tiles });
    }

    fn program(&mut self, p: &Program) -> Step {
        match p {
            Program::Sequence { label, body } => {
                let mut steps = Vec::with_capacity(body.len());
                for c in body {
                    match self.program(c) {
                        Step::Seq(inner) => steps.extend(inner),
                        s => steps.push(s),
                    }
                }
                let seq = Step::Seq(steps);
                match label {
                    Some(name) => Step::Label {
                        name: name.clone(),
                        body: Box::new(seq),
                    },
                    None => seq,
                }
            }
            Program::Execute(cs) => {
                if let Some(s) = self.cs_cache.get(cs) {
                    return s.clone();
                }
                let s = self.execute(*cs);
                self.cs_cache.insert(*cs, s.clone());
                s
            }
            Program::Copy { src, dst } => self.copy(src, dst),
            // A body repeated zero times never runs: lowering it would only reserve its
            // temporaries (and the in-place pre-pass gives it no receive slack either).
            Program::Repeat { count: 0, .. } => Step::Seq(Vec::new()),
            Program::Repeat { count, body } => Step::Repeat {
                count: *count,
                body: Box::new(self.program(body)),
            },
            Program::RepeatWhileTrue {
                cond,
                predicate,
                body,
            } => {
                let cond = Step::Seq(vec![self.program(cond), Step::Sync(SyncKind::Global)]);
                Step::While {
                    cond: Box::new(cond),
                    predicate: self.scalar(predicate),
                    body: Box::new(self.program(body)),
                }
            }
            Program::If {
                predicate,
                then,
                else_,
            } => Step::Seq(vec![
                Step::Sync(SyncKind::Global),
                Step::If {
                    predicate: self.scalar(predicate),
                    then: Box::new(self.program(then)),
                    else_: Box::new(self.program(else_)),
                },
            ]),
            Program::Switch {
                control,
                cases,
                default,
            } => Step::Seq(vec![
                Step::Sync(SyncKind::Global),
                Step::Switch {
                    control: self.scalar(control),
                    cases: cases.iter().map(|(v, c)| (*v, self.program(c))).collect(),
                    default: Box::new(self.program(default)),
                },
            ]),
            Program::Call(f) => Step::Call(crate::exe::FunctionId::from_u32(f.index())),
            Program::StreamToDevice { stream, dst } => Step::StreamIn {
                stream: stream.index(),
                runs: self.runs(dst),
            },
            Program::StreamFromDevice { src, stream } => Step::StreamOut {
                stream: stream.index(),
                runs: self.runs(src),
            },
            Program::CrossReplicaCopy(copies) => self.cross_replica_copy(copies),
            Program::CopyFromRemote {
                buffer,
                dst,
                offset,
            } => self.remote(*buffer, dst, offset.as_ref(), RemoteDir::BufferToTiles),
            Program::CopyToRemote {
                src,
                buffer,
                offset,
            } => self.remote(*buffer, src, offset.as_ref(), RemoteDir::TilesToBuffer),
            Program::OverlapIo { io, compute } => self.overlap_io(io, compute),
        }
    }

    /// One exchange phase of runs contiguous on both sides, each sent from every replica the
    /// copy's map names to its partner (validation checked the maps and that no destination
    /// overlaps a source or another destination, so no staging is needed).
    fn cross_replica_copy(&mut self, copies: &[crate::graph::program::CrossReplicaCopy]) -> Step {
        let r = self.graph.replication_factor() as usize;
        let mut cross = Vec::new();
        for c in copies {
            let moves = self.moves(&c.src, &c.dst);
            if moves.is_empty() || c.map.is_empty() {
                continue;
            }
            let mut dense = vec![crate::exe::NO_REPLICA; r];
            for &(s, d) in &c.map {
                dense[s as usize] = d;
            }
            let index = match self.replica_maps.iter().position(|m| *m == dense) {
                Some(i) => i,
                None => {
                    self.replica_maps.push(dense);
                    self.replica_maps.len() - 1
                }
            } as u32;
            cross.extend(moves.into_iter().map(|m| crate::exe::CrossReplicaTransfer {
                src_tile: m.src_tile,
                src_offset: u32_of(m.src_off),
                bytes: u32_of(m.bytes),
                dst_tile: m.dst_tile,
                dst_offset: u32_of(m.dst_off),
                map: index,
            }));
        }
        if cross.is_empty() {
            return Step::Seq(Vec::new());
        }
        let id = crate::exe::ExchangePhaseId::from_u32(self.exchanges.len() as u32);
        self.exchanges.push(ExchangePhase {
            name: "cross-replica copy".into(),
            transfers: Vec::new(),
            cross_replica: cross,
        });
        Step::Seq(vec![Step::Sync(SyncKind::Global), Step::Exchange(id)])
    }

    /// The tensor's bytes as memory runs, in element order.
    fn runs(&self, t: &Tensor) -> Vec<MemRun> {
        let elem = t.dtype.size() as u64;
        let mut out: Vec<MemRun> = Vec::new();
        for p in self.pieces(t) {
            let bytes = p.len * elem;
            match out.last_mut() {
                Some(r)
                    if r.tile == p.tile && u64::from(r.offset) + u64::from(r.bytes) == p.offset =>
                {
                    r.bytes += u32_of(bytes)
                }
                _ => out.push(MemRun {
                    tile: p.tile,
                    offset: u32_of(p.offset),
                    bytes: u32_of(bytes),
                }),
            }
        }
        out
    }

    fn scalar(&self, t: &Tensor) -> ScalarLoc {
        let p = self.pieces(t)[0];
        ScalarLoc {
            tile: p.tile,
            offset: u32_of(p.offset),
            dtype: t.dtype,
        }
    }

    fn execute(&mut self, cs: ComputeSet) -> Step {
        let graph = self.graph;
        let info = &graph.compute_sets[cs.key()];
        let temp_base = std::mem::take(&mut self.temp_base);
        let mut arena = TempArena::new(&temp_base, self.layout.align);
        let mut st = ExecState::default();
        for &vr in &info.vertices {
            let v = &graph.vertices[vr.key()];
            let desc = self.codelets[vr.key()];
            let tile = v.tile.expect("validated: every vertex is mapped");
            let mut fields = Vec::with_capacity(desc.fields.len());
            let mut lists = Vec::new();
            let mut sizes = Vec::with_capacity(desc.fields.len());
            let mut totals = Vec::with_capacity(desc.fields.len());
            for (fi, f) in desc.fields.iter().enumerate() {
                if f.dir == FieldDir::State {
                    let (off, n) = self.layout.state[vr.key()][fi].expect("validated: state set");
                    fields.push(FieldLoc {
                        offset: u32_of(off),
                        len: u32_of(n),
                    });
                    sizes.push(u32_of(n));
                    totals.push(n);
                    continue;
                }
                let b = &v.conns[f.name];
                match (f.shape, b) {
                    (FieldShape::VectorList, Binding::List(ts)) => {
                        let first = lists.len();
                        let mut total = 0;
                        for t in ts {
                            lists.push(self.bind(&mut st, &mut arena, tile, t, f.dir));
                            total += t.num_elements() as u64;
                        }
                        fields.push(FieldLoc {
                            offset: first as u32,
                            len: ts.len() as u32,
                        });
                        sizes.push(ts.len() as u32);
                        totals.push(total);
                    }
                    (_, Binding::Tensor(t)) => {
                        fields.push(self.bind(&mut st, &mut arena, tile, t, f.dir));
                        sizes.push(t.num_elements() as u32);
                        totals.push(t.num_elements() as u64);
                    }
                    _ => unreachable!("validated: binding matches field shape"),
                }
            }
            let ctx = CycleCtx {
                sizes: &sizes,
                total_elements: &totals,
                workers: graph.target.workers_per_tile,
            };
            let (cycles, estimated) = match v.cycles.or_else(|| (desc.cycles)(&ctx)) {
                Some(c) => (c, true),
                None => {
                    let elems: u64 = desc
                        .fields
                        .iter()
                        .zip(&totals)
                        .filter(|(f, _)| f.dir != FieldDir::State)
                        .map(|(_, &n)| n)
                        .sum();
                    (DEFAULT_VERTEX_OVERHEAD_CYCLES + elems, false)
                }
            };
            let codelet = self.codelet_id(desc);
            st.tile(tile).vertices.push(VertexInst {
                codelet: crate::exe::CodeletId::from_u32(codelet),
                id: vr.index(),
                fields,
                lists,
                cycles,
                cycles_estimated: estimated,
            });
        }
        self.finish_arena(arena);
        self.temp_base = temp_base;
        let mut steps = Vec::new();
        self.exchange(format!("{} (in)", info.name), st.recv, &mut steps);
        self.compute(info.name.clone(), st.tiles, &mut steps);
        self.exchange(format!("{} (out)", info.name), st.send, &mut steps);
        Step::Seq(steps)
    }

    /// Binds one tensor to a field of a vertex on `tile`.
    fn bind(
        &self,
        st: &mut ExecState,
        arena: &mut TempArena<'_>,
        tile: TileId,
        t: &Tensor,
        dir: FieldDir,
    ) -> FieldLoc {
        let n = t.num_elements() as u64;
        if n == 0 {
            return FieldLoc { offset: 0, len: 0 };
        }
        let pieces = self.pieces(t);
        if pieces.len() == 1 && pieces[0].tile == tile {
            return FieldLoc {
                offset: u32_of(pieces[0].offset),
                len: u32_of(n),
            };
        }
        let (reads, writes) = (dir.reads(), dir.writes());
        let key = (tile, t.regions.to_vec());
        if !writes {
            if let Some(&off) = st.buffers.get(&key) {
                return FieldLoc {
                    offset: u32_of(off),
                    len: u32_of(n),
                };
            }
        }
        let elem = t.dtype.size() as u64;
        let buf = match (!writes)
            .then(|| self.in_place(st, tile, &pieces, elem, &key))
            .flatten()
        {
            Some(off) => off,
            None => arena.alloc(tile, n * elem),
        };
        let mut pos = buf;
        for p in pieces {
            let bytes = p.len * elem;
            if p.tile == tile && p.offset == pos {
                // The anchor of an in-place binding: already where the field wants it.
            } else if p.tile == tile {
                if reads {
                    st.tile(tile).pre_copies.push(LocalCopy {
                        src: u32_of(p.offset),
                        dst: u32_of(pos),
                        bytes: u32_of(bytes),
                    });
                }
                if writes {
                    st.tile(tile).post_copies.push(LocalCopy {
                        src: u32_of(pos),
                        dst: u32_of(p.offset),
                        bytes: u32_of(bytes),
                    });
                }
            } else {
                if reads {
                    st.receive(tile, &p, pos, elem);
                }
                if writes {
                    st.send.push(Move {
                        src_tile: tile,
                        src_off: pos,
                        bytes,
                        dst_tile: p.tile,
                        dst_off: p.offset,
                    });
                }
            }
            pos += bytes;
        }
        if !writes {
            st.buffers.insert(key, buf);
        }
        FieldLoc {
            offset: u32_of(buf),
            len: u32_of(n),
        }
    }

    /// The offset of a read-only field bound in place around one of its local pieces, if the
    /// layout reserved enough slack beside that piece's segment and no other field of this
    /// superstep has claimed the same slack for different data.
    fn in_place(
        &self,
        st: &mut ExecState,
        tile: TileId,
        pieces: &[Piece],
        elem: u64,
        key: &(TileId, Vec<Region>),
    ) -> Option<u64> {
        // The anchor the in-place pass chose for this field (recorded in the layout).
        let a = *self.anchors.get(key)?;
        debug_assert_eq!(Some(a), anchor(pieces, tile, &self.layout.segs, elem));
        let room = self.layout.slack[a.var][a.seg];
        if a.before > room.before || a.after > room.after {
            return None;
        }
        for (side, bytes) in [(false, a.before), (true, a.after)] {
            if bytes > 0 {
                let claim = st.slack_claims.get(&(a.var, a.seg, side));
                if claim.is_some_and(|k| k != key) {
                    return None;
                }
            }
        }
        for (side, bytes) in [(false, a.before), (true, a.after)] {
            if bytes > 0 {
                st.slack_claims.insert((a.var, a.seg, side), key.clone());
            }
        }
        Some(pieces[a.piece].offset - a.before)
    }

    /// The runs of a copy of `src` to `dst` that are contiguous on both sides, in element order.
    fn moves(&self, src: &Tensor, dst: &Tensor) -> Vec<Move> {
        let elem = src.dtype.size() as u64;
        let sp = self.pieces(src);
        let dp = self.pieces(dst);
        // Walk both piece lists together: segments contiguous on both sides.
        let mut segs = Vec::new();
        let (mut i, mut j, mut si, mut dj) = (0, 0, 0u64, 0u64);
        while i < sp.len() && j < dp.len() {
            let len = (sp[i].len - si).min(dp[j].len - dj);
            segs.push(Move {
                src_tile: sp[i].tile,
                src_off: sp[i].offset + si * elem,
                bytes: len * elem,
                dst_tile: dp[j].tile,
                dst_off: dp[j].offset + dj * elem,
            });
            si += len;
            dj += len;
            if si == sp[i].len {
                i += 1;
                si = 0;
            }
            if dj == dp[j].len {
                j += 1;
                dj = 0;
            }
        }
        segs
    }

    fn copy(&mut self, src: &Tensor, dst: &Tensor) -> Step {
        let segs = self.moves(src, dst);
        let mut steps = Vec::new();
        if !Region::lists_overlap(src.regions(), dst.regions()) {
            let mut local: BTreeMap<TileId, TileCompute> = BTreeMap::new();
            let mut remote = Vec::new();
            for m in segs {
                if m.src_tile == m.dst_tile {
                    if m.src_off != m.dst_off {
                        tile_compute(&mut local, m.dst_tile)
                            .pre_copies
                            .push(LocalCopy {
                                src: u32_of(m.src_off),
                                dst: u32_of(m.dst_off),
                                bytes: u32_of(m.bytes),
                            });
                    }
                } else {
                    remote.push(m);
                }
            }
            self.exchange("copy".into(), remote, &mut steps);
            self.compute("copy".into(), local, &mut steps);
        } else {
            // Source and destination share elements: stage everything through temporaries on
            // the destination tiles so the copy behaves as if it read all of src first.
            let temp_base = std::mem::take(&mut self.temp_base);
            let mut arena = TempArena::new(&temp_base, self.layout.align);
            let mut first: BTreeMap<TileId, TileCompute> = BTreeMap::new();
            let mut last: BTreeMap<TileId, TileCompute> = BTreeMap::new();
            let mut remote = Vec::new();
            for m in segs {
                let tmp = arena.alloc(m.dst_tile, m.bytes);
                if m.src_tile == m.dst_tile {
                    tile_compute(&mut first, m.dst_tile)
                        .pre_copies
                        .push(LocalCopy {
                            src: u32_of(m.src_off),
                            dst: u32_of(tmp),
                            bytes: u32_of(m.bytes),
                        });
                } else {
                    remote.push(Move { dst_off: tmp, ..m });
                }
                tile_compute(&mut last, m.dst_tile)
                    .pre_copies
                    .push(LocalCopy {
                        src: u32_of(tmp),
                        dst: u32_of(m.dst_off),
                        bytes: u32_of(m.bytes),
                    });
            }
            self.finish_arena(arena);
            self.temp_base = temp_base;
            self.compute("copy (stage)".into(), first, &mut steps);
            self.exchange("copy".into(), remote, &mut steps);
            self.compute("copy".into(), last, &mut steps);
        }
        Step::Seq(steps)
    }

    /// What lowering produced, besides the steps it returned: the phases, the codelets used,
    /// and per tile where temporaries start and their peak.
    fn finish(self) -> Lowered {
        Lowered {
            programs: Vec::new(),
            functions: Vec::new(),
            host_tensor_runs: Vec::new(),
            replica_constant_runs: Vec::new(),
            codelet_refs: self.codelet_refs,
            computes: self.computes,
            exchanges: self.exchanges,
            temp_base: self.temp_base,
            temp_peak: self.temp_peak,
            replica_maps: self.replica_maps,
            remote_copies: self.remote_copies,
        }
    }
}

fn tile_compute(m: &mut BTreeMap<TileId, TileCompute>, tile: TileId) -> &mut TileCompute {
    m.entry(tile).or_insert_with(|| TileCompute {
        tile,
        pre_copies: Vec::new(),
        vertices: Vec::new(),
        post_copies: Vec::new(),
    })
}

/// Per-Execute inference state.
#[derive(Default)]
struct ExecState {
    tiles: BTreeMap<TileId, TileCompute>,
    recv: Vec<Move>,
    send: Vec<Move>,
    /// Per (tile, variable): element ranges already received this superstep -> (end, offset).
    received: HashMap<(TileId, VarId), BTreeMap<u64, (u64, u64)>>,
    /// Read-only gather buffers by (tile, regions), shared by every vertex reading the same.
    buffers: HashMap<(TileId, Vec<Region>), u64>,
    /// Receive slack in use this superstep: (variable, segment, after?) -> the field's
    /// (tile, regions).
    slack_claims: HashMap<(usize, usize, bool), (TileId, Vec<Region>)>,
}

impl ExecState {
    fn tile(&mut self, tile: TileId) -> &mut TileCompute {
        tile_compute(&mut self.tiles, tile)
    }

    /// Arranges for remote piece `p` to be at `dst` on `tile` before the compute phase:
    /// parts already received this superstep are copied on-tile, the rest are received.
    fn receive(&mut self, tile: TileId, p: &Piece, dst: u64, elem: u64) {
        let got = self.received.entry((tile, p.var)).or_default();
        let (s, e) = (p.start, p.start + p.len);
        let mut cur = s;
        let mut copies = Vec::new();
        let mut fresh = Vec::new();
        let first = got
            .range(..=s)
            .next_back()
            .filter(|(_, &(ge, _))| ge > s)
            .map(|(&k, _)| k)
            .unwrap_or(s);
        for (&gs, &(ge, goff)) in got.range(first..e) {
            let (os, oe) = (gs.max(s), ge.min(e));
            if os >= oe {
                continue;
            }
            if os > cur {
                fresh.push((cur, os));
            }
            copies.push(LocalCopy {
                src: u32_of(goff + (os - gs) * elem),
                dst: u32_of(dst + (os - s) * elem),
                bytes: u32_of((oe - os) * elem),
            });
            cur = oe;
        }
        if cur < e {
            fresh.push((cur, e));
        }
        for (fs, fe) in fresh {
            got.insert(fs, (fe, dst + (fs - s) * elem));
            self.recv.push(Move {
                src_tile: p.tile,
                src_off: p.offset + (fs - s) * elem,
                bytes: (fe - fs) * elem,
                dst_tile: tile,
                dst_off: dst + (fs - s) * elem,
            });
        }
        self.tile(tile).pre_copies.extend(copies);
    }
}

/// Groups moves into transfers: identical source ranges become one broadcast; adjacent
/// single-destination moves between the same two tiles are coalesced.
fn group_transfers(moves: Vec<Move>) -> Vec<Transfer> {
    let mut by_src: BTreeMap<(TileId, u64, u64), Vec<(TileId, u64)>> = BTreeMap::new();
    for m in moves {
        by_src
            .entry((m.src_tile, m.src_off, m.bytes))
            .or_default()
            .push((m.dst_tile, m.dst_off));
    }
    let mut singles: Vec<Move> = Vec::new();
    let mut out = Vec::new();
    for ((src_tile, src_off, bytes), mut dsts) in by_src {
        dsts.sort_unstable();
        dsts.dedup();
        if dsts.len() == 1 {
            singles.push(Move {
                src_tile,
                src_off,
                bytes,
                dst_tile: dsts[0].0,
                dst_off: dsts[0].1,
            });
        } else {
            out.push(Transfer {
                src_tile,
                src_offset: u32_of(src_off),
                bytes: u32_of(bytes),
                dsts: dsts.into_iter().map(|(t, o)| (t, u32_of(o))).collect(),
            });
        }
    }
    singles.sort_by_key(|m| (m.src_tile, m.dst_tile, m.src_off));
    let mut merged: Vec<Move> = Vec::with_capacity(singles.len());
    for m in singles {
        match merged.last_mut() {
            Some(p)
                if p.src_tile == m.src_tile
                    && p.dst_tile == m.dst_tile
                    && p.src_off + p.bytes == m.src_off
                    && p.dst_off + p.bytes == m.dst_off =>
            {
                p.bytes += m.bytes;
            }
            _ => merged.push(m),
        }
    }
    out.extend(merged.into_iter().map(|m| Transfer {
        src_tile: m.src_tile,
        src_offset: u32_of(m.src_off),
        bytes: u32_of(m.bytes),
        dsts: vec![(m.dst_tile, u32_of(m.dst_off))],
    }));
    out.sort_by_key(|t| (t.src_tile, t.src_offset));
    out
}
