//! [`Executable::check`]: the structural invariants an engine relies on (the typed errors are
//! in `exe/error.rs`). About 800 lines: one checker, one section per part of the
//! executable (tiles, computes, exchanges, programs, host access), all of which the engine's
//! soundness argument reads together.
//!
//! The engine hands codelets raw views of tile memory and copies between tiles in parallel; its
//! soundness rests entirely on the properties verified here. Everything is computed in `u64`
//! so that no offset arithmetic can overflow, and nothing here panics on any input.

use super::StreamDir;
use crate::codelet::{CodeletDesc, FieldLoc, FieldShape};
use crate::dtype::DType;
use crate::target::TileId;

use super::{
    CheckError, Executable, FieldKind, MemRun, ScalarLoc, Step, TileCompute, Transfer, VertexInst,
};

/// A byte range of a vertex's fields: `start..end`, owning field, written or not.
#[derive(Clone, Copy)]
struct Span {
    start: u64,
    end: u64,
    field: usize,
    written: bool,
}

/// Finds a pair of overlapping spans where at least one is written. Sorts `spans`.
/// Returns (the written span, the span it overlaps).
fn find_written_overlap(spans: &mut [Span]) -> Option<(Span, Span)> {
    spans.sort_unstable_by_key(|s| (s.start, s.end));
    // The span reaching furthest so far among all spans / among written spans.
    let mut any: Option<Span> = None;
    let mut written: Option<Span> = None;
    for &s in spans.iter() {
        if let Some(w) = written {
            if s.start < w.end {
                return Some((w, s));
            }
        }
        if s.written {
            if let Some(a) = any {
                if s.start < a.end {
                    return Some((s, a));
                }
            }
        }
        if any.is_none_or(|a| s.end > a.end) {
            any = Some(s);
        }
        if s.written && written.is_none_or(|w| s.end > w.end) {
            written = Some(s);
        }
    }
    None
}

/// A vertex being checked, for the errors that name it, and its tile's memory.
#[derive(Clone, Copy)]
struct VertexAt {
    compute_phase: usize,
    tile: TileId,
    vertex: u32,
    /// The tile's memory bytes.
    mem: u64,
}

/// The pre- and post-copies of compute phase `p` on one tile stay inside its `mem` bytes.
fn check_copies(p: usize, tc: &TileCompute, mem: u64) -> Result<(), CheckError> {
    for (which, copies) in [("pre", &tc.pre_copies), ("post", &tc.post_copies)] {
        for (i, c) in copies.iter().enumerate() {
            let b = u64::from(c.bytes);
            if u64::from(c.src) + b > mem || u64::from(c.dst) + b > mem {
                return Err(CheckError::CopyOutOfBounds {
                    compute_phase: p,
                    tile: tc.tile,
                    which,
                    index: i,
                    src: c.src,
                    dst: c.dst,
                    bytes: c.bytes,
                    memory_bytes: mem as u32,
                });
            }
        }
    }
    Ok(())
}

/// Checks field `f` of a vertex, at `loc`, and pushes its non-empty byte spans: one for a
/// scalar (which must have length 1) or vector, one per entry for a vector list (whose
/// entries must lie inside the vertex's `lists`).
fn field_spans(
    at: VertexAt,
    f: usize,
    loc: FieldLoc,
    kind: &FieldKind,
    lists: &[FieldLoc],
    spans: &mut Vec<Span>,
) -> Result<(), CheckError> {
    match kind.shape {
        FieldShape::Scalar | FieldShape::Vector => {
            if kind.shape == FieldShape::Scalar && loc.len != 1 {
                return Err(CheckError::ScalarLen {
                    compute_phase: at.compute_phase,
                    tile: at.tile,
                    vertex: at.vertex,
                    field: f,
                    len: loc.len,
                });
            }
            let s = field_span(at, f, loc, kind)?;
            if s.end > s.start {
                spans.push(s);
            }
        }
        FieldShape::VectorList => {
            let start = loc.offset as usize;
            let Some(entries) = start
                .checked_add(loc.len as usize)
                .and_then(|end| lists.get(start..end))
            else {
                return Err(CheckError::ListOutOfRange {
                    compute_phase: at.compute_phase,
                    tile: at.tile,
                    vertex: at.vertex,
                    field: f,
                    start: loc.offset,
                    len: loc.len,
                    lists: lists.len(),
                });
            };
            for l in entries {
                let s = field_span(at, f, *l, kind)?;
                if s.end > s.start {
                    spans.push(s);
                }
            }
        }
    }
    Ok(())
}

/// The bytes of `l`, elements of field `f`, checked to lie inside the tile's memory and to be
/// aligned to the element size.
fn field_span(at: VertexAt, f: usize, l: FieldLoc, kind: &FieldKind) -> Result<Span, CheckError> {
    let size = kind.dtype.size();
    let start = u64::from(l.offset);
    let end = start + u64::from(l.len) * size as u64;
    if end > at.mem {
        return Err(CheckError::FieldOutOfBounds {
            compute_phase: at.compute_phase,
            tile: at.tile,
            vertex: at.vertex,
            field: f,
            offset: start,
            bytes: end - start,
            memory_bytes: at.mem as u32,
        });
    }
    if start % size as u64 != 0 {
        return Err(CheckError::FieldMisaligned {
            compute_phase: at.compute_phase,
            tile: at.tile,
            vertex: at.vertex,
            field: f,
            offset: start,
            align: size,
        });
    }
    Ok(Span {
        start,
        end,
        field: f,
        written: kind.dir.writes(),
    })
}

/// Is the predicate / control dtype one the engine reads as an integer?
fn scalar_dtype_ok(d: DType) -> bool {
    matches!(d, DType::Bool | DType::I32 | DType::U32)
}

pub(crate) struct Checker<'a> {
    pub(crate) exe: &'a Executable,
    pub(crate) num_tiles: u32,
}

impl Checker<'_> {
    fn mem(&self, tile: TileId) -> u64 {
        self.exe
            .tiles
            .get(tile.index())
            .map_or(0, |t| u64::from(t.memory_bytes))
    }

    fn tile_ok(&self, what: impl FnOnce() -> String, tile: TileId) -> Result<(), CheckError> {
        if tile.as_u32() >= self.num_tiles {
            return Err(CheckError::TileOutOfRange {
                what: what(),
                tile,
                num_tiles: self.num_tiles,
            });
        }
        Ok(())
    }

    fn check_tiles(&self) -> Result<(), CheckError> {
        for (t, img) in self.exe.tiles.iter().enumerate() {
            let tile = TileId::new(t as u32);
            if img.always_live_bytes > img.memory_bytes {
                return Err(CheckError::AlwaysLiveOverMemory {
                    tile,
                    always_live: img.always_live_bytes,
                    memory: img.memory_bytes,
                });
            }
            for (b, blk) in img.init.iter().enumerate() {
                if blk.data.len() != blk.len as usize {
                    return Err(CheckError::InitLength {
                        tile,
                        block: b,
                        len: blk.len,
                        data_len: blk.data.len(),
                    });
                }
                if u64::from(blk.offset) + u64::from(blk.len) > u64::from(img.memory_bytes) {
                    return Err(CheckError::InitOutOfBounds {
                        tile,
                        block: b,
                        offset: blk.offset,
                        len: blk.len,
                        memory_bytes: img.memory_bytes,
                    });
                }
            }
        }
        Ok(())
    }

    fn check_computes(&self) -> Result<(), CheckError> {
        let mut spans = Vec::new();
        for (p, phase) in self.exe.computes.values().enumerate() {
            let mut prev: Option<TileId> = None;
            for tc in &phase.tiles {
                let tile = tc.tile;
                self.tile_ok(|| format!("compute phase {p} ('{}')", phase.name), tile)?;
                if prev.is_some_and(|pt| tile <= pt) {
                    return Err(CheckError::ComputeTileOrder {
                        compute_phase: p,
                        tile,
                    });
                }
                prev = Some(tile);
                let mem = self.mem(tile);
                check_copies(p, tc, mem)?;
                for v in &tc.vertices {
                    let at = VertexAt {
                        compute_phase: p,
                        tile,
                        vertex: v.id,
                        mem,
                    };
                    self.check_vertex(at, v, &mut spans)?;
                }
            }
        }
        Ok(())
    }

    /// A vertex's codelet exists and the vertex has its fields, each inside the tile, aligned
    /// and (for a list) with its entries present, and no written field overlaps another.
    /// `spans` is scratch space.
    fn check_vertex(
        &self,
        at: VertexAt,
        v: &VertexInst,
        spans: &mut Vec<Span>,
    ) -> Result<(), CheckError> {
        let Some(cref) = self.exe.codelets.get(v.codelet) else {
            return Err(CheckError::NoSuchCodelet {
                compute_phase: at.compute_phase,
                tile: at.tile,
                vertex: v.id,
                codelet: v.codelet.as_u32(),
                count: self.exe.codelets.len(),
            });
        };
        if v.fields.len() != cref.fields.len() {
            return Err(CheckError::FieldCount {
                compute_phase: at.compute_phase,
                tile: at.tile,
                vertex: v.id,
                codelet: cref.name.clone(),
                expected: cref.fields.len(),
                found: v.fields.len(),
            });
        }
        spans.clear();
        for (f, (loc, kind)) in v.fields.iter().zip(&cref.fields).enumerate() {
            field_spans(at, f, *loc, kind, &v.lists, spans)?;
        }
        if let Some((w, o)) = find_written_overlap(spans) {
            return Err(CheckError::AliasedField {
                compute_phase: at.compute_phase,
                tile: at.tile,
                vertex: v.id,
                field: w.field,
                other: o.field,
            });
        }
        Ok(())
    }

    fn check_replica_constants(&self) -> Result<(), CheckError> {
        let Some(rep) = &self.exe.replication else {
            return Ok(());
        };
        for c in &rep.constants {
            let bad = |reason: String| {
                Err(CheckError::BadReplication {
                    reason: format!("replica constant '{}' {reason}", c.name),
                })
            };
            let mut total = 0u64;
            for run in &c.runs {
                self.tile_ok(|| format!("replica constant '{}'", c.name), run.tile)?;
                if u64::from(run.offset) + u64::from(run.bytes) > self.mem(run.tile) {
                    return bad(format!(
                        "lies outside tile {}'s memory (bytes {}..+{})",
                        run.tile, run.offset, run.bytes
                    ));
                }
                total += u64::from(run.bytes);
            }
            if c.values.len() != rep.factor as usize {
                return bad(format!(
                    "has {} values for {} replicas",
                    c.values.len(),
                    rep.factor
                ));
            }
            if let Some((r, v)) = c
                .values
                .iter()
                .enumerate()
                .find(|(_, v)| v.len() as u64 != total)
            {
                return bad(format!(
                    "has {} bytes for replica {r}, its runs cover {total}",
                    v.len()
                ));
            }
        }
        Ok(())
    }

    fn check_exchanges(&self) -> Result<(), CheckError> {
        // (tile, start, end, transfer, is_destination)
        let mut ranges: Vec<(TileId, u64, u64, usize, bool)> = Vec::new();
        let mut spans: Vec<Span> = Vec::new();
        for (p, phase) in self.exe.exchanges.values().enumerate() {
            ranges.clear();
            if !phase.cross_replica.is_empty() {
                let maps = self.exe.replication.as_ref().map_or(0, |r| r.maps.len());
                if let Some(c) = phase.cross_replica.iter().find(|c| c.map as usize >= maps) {
                    return Err(CheckError::BadReplication {
                        reason: format!(
                            "exchange phase {p} ('{}') uses replica map {} of {maps}",
                            phase.name, c.map
                        ),
                    });
                }
            }
            // Cross-replica transfers count as transfers numbered after the ordinary ones;
            // their ends are replica-local, and every replica both sends and receives them, so
            // sources and destinations are checked against each other as if on one tile.
            let cross = phase.cross_replica.iter().map(|c| Transfer {
                src_tile: c.src_tile,
                src_offset: c.src_offset,
                bytes: c.bytes,
                dsts: vec![(c.dst_tile, c.dst_offset)],
            });
            let all: Vec<std::borrow::Cow<'_, Transfer>> = phase
                .transfers
                .iter()
                .map(std::borrow::Cow::Borrowed)
                .chain(cross.map(std::borrow::Cow::Owned))
                .collect();
            for (i, t) in all.iter().enumerate() {
                let ends = std::iter::once((t.src_tile, t.src_offset, false))
                    .chain(t.dsts.iter().map(|&(tile, off)| (tile, off, true)));
                for (tile, off, dst) in ends {
                    self.tile_ok(
                        || format!("exchange phase {p} ('{}') transfer {i}", phase.name),
                        tile,
                    )?;
                    let mem = self.mem(tile);
                    let start = u64::from(off);
                    let end = start + u64::from(t.bytes);
                    if end > mem {
                        return Err(CheckError::TransferOutOfBounds {
                            exchange_phase: p,
                            transfer: i,
                            tile,
                            offset: off,
                            bytes: t.bytes,
                            memory_bytes: mem as u32,
                        });
                    }
                    if end > start {
                        ranges.push((tile, start, end, i, dst));
                    }
                }
            }
            ranges.sort_unstable_by_key(|r| (r.0, r.1, r.2));
            let mut k = 0;
            while k < ranges.len() {
                let tile = ranges[k].0;
                let mut j = k;
                while j < ranges.len() && ranges[j].0 == tile {
                    j += 1;
                }
                spans.clear();
                spans.extend(
                    ranges[k..j]
                        .iter()
                        .map(|&(_, start, end, transfer, dst)| Span {
                            start,
                            end,
                            field: transfer,
                            written: dst,
                        }),
                );
                if let Some((w, o)) = find_written_overlap(&mut spans) {
                    let what = if o.written {
                        "a destination"
                    } else {
                        "the source"
                    };
                    return Err(CheckError::ExchangeOverlap {
                        exchange_phase: p,
                        tile,
                        transfer: w.field,
                        other: o.field,
                        what,
                    });
                }
                k = j;
            }
        }
        Ok(())
    }

    pub(crate) fn check_scalar(
        &self,
        owner: &str,
        what: &'static str,
        s: &ScalarLoc,
    ) -> Result<(), CheckError> {
        self.tile_ok(|| format!("{owner}: {what}"), s.tile)?;
        let bad = |reason: String| CheckError::BadScalar {
            owner: owner.to_string(),
            what,
            tile: s.tile,
            offset: s.offset,
            dtype: s.dtype,
            reason,
        };
        if !scalar_dtype_ok(s.dtype) {
            return Err(bad("must be bool, i32 or u32".into()));
        }
        let size = s.dtype.size() as u64;
        let mem = self.mem(s.tile);
        if u64::from(s.offset) + size > mem {
            return Err(bad(format!("exceeds the tile's {mem} bytes")));
        }
        if u64::from(s.offset) % size != 0 {
            return Err(bad(format!("not aligned to {size}")));
        }
        Ok(())
    }

    /// Checks runs in bounds and aligned to `align`; returns their total bytes.
    pub(crate) fn check_runs(
        &self,
        owner: &str,
        runs: &[MemRun],
        align: u64,
    ) -> Result<u64, CheckError> {
        let mut total = 0u64;
        for (i, r) in runs.iter().enumerate() {
            self.tile_ok(|| format!("{owner}: run {i}"), r.tile)?;
            let bad = |reason: String| CheckError::BadRun {
                owner: owner.to_string(),
                run: i,
                tile: r.tile,
                offset: r.offset,
                bytes: r.bytes,
                reason,
            };
            let mem = self.mem(r.tile);
            if u64::from(r.offset) + u64::from(r.bytes) > mem {
                return Err(bad(format!("exceeds the tile's {mem} bytes")));
            }
            if u64::from(r.offset) % align != 0 || u64::from(r.bytes) % align != 0 {
                return Err(bad(format!("not aligned to the element size {align}")));
            }
            total += u64::from(r.bytes);
        }
        Ok(total)
    }

    pub(crate) fn check_step(
        &self,
        owner: &str,
        step: &Step,
        calls: &mut Vec<u32>,
    ) -> Result<(), CheckError> {
        let idx = |what: &'static str, index: u32, count: usize| {
            if index as usize >= count {
                Err(CheckError::StepIndex {
                    owner: owner.to_string(),
                    what,
                    index,
                    count,
                })
            } else {
                Ok(())
            }
        };
        match step {
            Step::Seq(v) => {
                for s in v {
                    self.check_step(owner, s, calls)?;
                }
            }
            Step::Label { body, .. } | Step::Repeat { body, .. } => {
                self.check_step(owner, body, calls)?
            }
            Step::Sync(_) => {}
            Step::Exchange(i) => idx("exchange phase", i.as_u32(), self.exe.exchanges.len())?,
            Step::Compute(i) => idx("compute phase", i.as_u32(), self.exe.computes.len())?,
            Step::While {
                cond,
                predicate,
                body,
            } => {
                self.check_scalar(owner, "while predicate", predicate)?;
                self.check_step(owner, cond, calls)?;
                self.check_step(owner, body, calls)?;
            }
            Step::If {
                predicate,
                then,
                else_,
            } => {
                self.check_scalar(owner, "if predicate", predicate)?;
                self.check_step(owner, then, calls)?;
                self.check_step(owner, else_, calls)?;
            }
            Step::Switch {
                control,
                cases,
                default,
            } => {
                self.check_scalar(owner, "switch control", control)?;
                for (_, s) in cases {
                    self.check_step(owner, s, calls)?;
                }
                self.check_step(owner, default, calls)?;
            }
            Step::Call(f) => {
                idx("function", f.as_u32(), self.exe.functions.len())?;
                calls.push(f.as_u32());
            }
            Step::Remote(i) => {
                idx("remote copy", i.as_u32(), self.exe.remote_copies.len())?;
                self.check_remote_copy(owner, *i)?;
            }
            Step::OverlapIo { io, compute } => {
                self.check_step(owner, io, calls)?;
                self.check_step(owner, compute, calls)?;
                self.check_overlap_io(owner, io, compute)?;
            }
            Step::StreamIn { stream, runs } | Step::StreamOut { stream, runs } => {
                idx("stream", *stream, self.exe.streams.len())?;
                let sd = &self.exe.streams[*stream as usize];
                let want = if matches!(step, Step::StreamIn { .. }) {
                    StreamDir::HostToDevice
                } else {
                    StreamDir::DeviceToHost
                };
                if sd.dir != want {
                    return Err(CheckError::StreamDirection {
                        owner: owner.to_string(),
                        stream: *stream,
                        name: sd.name.clone(),
                    });
                }
                let what = format!("{owner}: stream '{}'", sd.name);
                let size = sd.dtype.size() as u64;
                let total = self.check_runs(&what, runs, size)?;
                let expected =
                    (sd.len as u64)
                        .checked_mul(size)
                        .ok_or_else(|| CheckError::SizeOverflow {
                            what: "stream",
                            name: sd.name.clone(),
                        })?;
                if total != expected {
                    return Err(CheckError::RunTotal {
                        owner: what,
                        expected,
                        found: total,
                    });
                }
            }
        }
        Ok(())
    }

    fn check_programs(&self) -> Result<(), CheckError> {
        let mut calls = Vec::new();
        for (i, p) in self.exe.programs.iter().enumerate() {
            self.check_step(&format!("program {i}"), p, &mut calls)?;
        }
        // Call graph of functions, then reject cycles.
        let mut edges: Vec<Vec<u32>> = Vec::with_capacity(self.exe.functions.len());
        for (i, f) in self.exe.functions.values().enumerate() {
            calls.clear();
            self.check_step(&format!("function {i}"), f, &mut calls)?;
            edges.push(calls.clone());
        }
        // Iterative DFS with colours: 0 unvisited, 1 on stack, 2 done.
        let n = edges.len();
        let mut colour = vec![0u8; n];
        for root in 0..n {
            if colour[root] != 0 {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            colour[root] = 1;
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                if let Some(&callee) = edges[node].get(*next) {
                    *next += 1;
                    let c = callee as usize;
                    match colour[c] {
                        0 => {
                            colour[c] = 1;
                            stack.push((c, 0));
                        }
                        1 => return Err(CheckError::RecursiveCall { function: callee }),
                        _ => {}
                    }
                } else {
                    colour[node] = 2;
                    stack.pop();
                }
            }
        }
        Ok(())
    }

    fn check_host(&self) -> Result<(), CheckError> {
        let mut names = std::collections::HashSet::new();
        for h in &self.exe.host_tensors {
            if !names.insert(h.name.as_str()) {
                return Err(CheckError::DuplicateName {
                    kind: "host tensor",
                    name: h.name.clone(),
                });
            }
            let owner = format!("host tensor '{}'", h.name);
            let size = h.dtype.size() as u64;
            let total = self.check_runs(&owner, &h.runs, size)?;
            let expected = h
                .shape
                .iter()
                .try_fold(size, |acc, &d| acc.checked_mul(d as u64))
                .ok_or_else(|| CheckError::SizeOverflow {
                    what: "host tensor",
                    name: h.name.clone(),
                })?;
            if total != expected {
                return Err(CheckError::RunTotal {
                    owner,
                    expected,
                    found: total,
                });
            }
        }
        names.clear();
        let device_bytes = u64::from(self.num_tiles) * u64::from(self.exe.target.bytes_per_tile);
        for s in &self.exe.streams {
            if (s.len as u64).saturating_mul(s.dtype.size() as u64) > device_bytes {
                return Err(CheckError::StreamTooLong {
                    name: s.name.clone(),
                    len: s.len,
                });
            }
            if !names.insert(s.name.as_str()) {
                return Err(CheckError::DuplicateName {
                    kind: "stream",
                    name: s.name.clone(),
                });
            }
        }
        Ok(())
    }
}

impl Executable {
    /// Verifies the structural invariants listed in the [module docs](super): every location in
    /// bounds and aligned, no aliasing of written vertex fields, no overlap of destinations with
    /// sources or other destinations within an exchange phase, every index in range, no
    /// recursive calls. Does not consult the codelet registry (see
    /// [`Executable::resolve_codelets`]).
    pub fn check(&self) -> Result<(), CheckError> {
        self.target.validate()?;
        self.check_replication()?;
        let num_tiles = self.tiles_described();
        if self.tiles.len() as u64 != num_tiles {
            return Err(CheckError::TileCount {
                expected: num_tiles,
                found: self.tiles.len(),
            });
        }
        let c = Checker {
            exe: self,
            num_tiles: num_tiles as u32,
        };
        c.check_tiles()?;
        c.check_computes()?;
        c.check_exchanges()?;
        c.check_programs()?;
        c.check_host()?;
        c.check_remote_buffers()?;
        c.check_replica_constants()?;
        Ok(())
    }

    fn check_replication(&self) -> Result<(), CheckError> {
        let Some(rep) = &self.replication else {
            return Ok(());
        };
        let bad = |reason: String| Err(CheckError::BadReplication { reason });
        if !rep.factor.is_power_of_two() {
            return bad(format!("{} replicas is not a power of two", rep.factor));
        }
        if rep.chips_per_replica == 0 {
            return bad("a replica has no chips".into());
        }
        let chips = u64::from(rep.factor) * u64::from(rep.chips_per_replica);
        if chips > u64::from(self.target.num_ipus) {
            return bad(format!(
                "{} replicas of {} chips need {chips} chips; the target has {}",
                rep.factor, rep.chips_per_replica, self.target.num_ipus
            ));
        }
        if let Some((m, why)) = super::replicate::bad_map(rep) {
            return bad(format!("replica map {m} {why}"));
        }
        Ok(())
    }

    /// Looks every codelet up in the registry and checks it has the layout the executable was
    /// compiled against (signature, field kinds and multi_worker flag). Returns the descriptors,
    /// indexed like [`Executable::codelets`].
    pub fn resolve_codelets(&self) -> Result<Vec<&'static CodeletDesc>, CheckError> {
        self.codelets
            .values()
            .map(|c| {
                let d = crate::codelet::lookup(&c.name).ok_or_else(|| {
                    CheckError::UnregisteredCodelet {
                        name: c.name.clone(),
                    }
                })?;
                let sig = d.signature();
                if sig != c.signature {
                    return Err(CheckError::CodeletSignature {
                        name: c.name.clone(),
                        expected: c.signature.clone(),
                        registered: sig,
                    });
                }
                let same_fields = d.fields.len() == c.fields.len()
                    && d.fields
                        .iter()
                        .zip(&c.fields)
                        .all(|(s, k)| FieldKind::from(s) == *k);
                if !same_fields || d.multi_worker != c.multi_worker {
                    return Err(CheckError::CodeletLayout {
                        name: c.name.clone(),
                    });
                }
                Ok(d)
            })
            .collect()
    }
}
