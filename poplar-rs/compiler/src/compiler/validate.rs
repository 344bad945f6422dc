//! Validation pass: everything the later passes rely on, reported all at once.
//!
//! (About 700 lines. One concept, the validation pass: one check a function, all of them
//! feeding one list of errors in a fixed order.)
//!
//! On success it returns what it learned (the resolved codelet of every vertex), in the spirit
//! of a validator that returns information rather than just a verdict.

use std::collections::HashSet;

use super::error::ValidationError as E;
use crate::codelet::{lookup, CodeletDesc, FieldDir, FieldShape, FieldSpec};
use crate::dtype::DType;
use crate::entity::PrimaryMap;
use crate::graph::program::{CrossReplicaCopy, Program};
use crate::graph::{nearest_name, VertexName};
use crate::graph::{Binding, Graph, Region, Tensor, VarId, VertexInfo, VertexKey};

/// What validation learned.
pub(crate) struct Validated {
    /// Per vertex, its codelet.
    pub codelets: PrimaryMap<VertexKey, &'static CodeletDesc>,
}

/// One field access of a vertex, for race checks.
#[derive(Clone, Copy)]
struct Access {
    var: VarId,
    start: u64,
    end: u64,
    vertex: VertexKey,
    write: bool,
}

/// How errors name vertex `vi`.
fn vertex_name(graph: &Graph, vi: VertexKey) -> VertexName {
    let v = &graph.vertices[vi];
    VertexName {
        id: vi.as_u32(),
        codelet: v.codelet.clone(),
        compute_set: graph.compute_set_name(v.cs).unwrap_or("?").to_string(),
        tile: v.tile,
    }
}

/// The variable a tensor views (its first region's), for messages.
fn tensor_name(graph: &Graph, t: &Tensor) -> Option<String> {
    t.regions
        .first()
        .and_then(|r| graph.vars.get(r.var))
        .map(|v| v.name.clone())
}

pub(crate) fn validate(graph: &Graph, programs: &[Program]) -> Result<Validated, Vec<E>> {
    let mut errs = Vec::new();
    check_mappings(graph, &mut errs);
    let codelets: Vec<_> = graph
        .vertices
        .iter()
        .filter_map(|(vi, v)| check_vertex(graph, vi, v, &mut errs).map(|d| (vi, d)))
        .collect();
    check_races(graph, &codelets, &mut errs);
    super::validate_io::vertices_off_io_tiles(graph, &mut errs, |vi| vertex_name(graph, vi));
    check_programs(graph, programs, &mut errs);
    if errs.is_empty() {
        Ok(Validated {
            codelets: codelets.into_iter().map(|(_, d)| d).collect(),
        })
    } else {
        Err(errs)
    }
}

/// Every element of every variable is mapped, to a tile of the target.
fn check_mappings(graph: &Graph, errs: &mut Vec<E>) {
    let nt = graph.target.num_tiles();
    for var in &graph.vars {
        let mut next = 0u64;
        for (r, tile) in var.mapping.iter() {
            if r.start > next {
                errs.push(E::UnmappedElements {
                    var: var.name.clone(),
                    start: next,
                    end: r.start,
                });
            }
            if tile.as_u32() >= nt {
                errs.push(E::TileOutOfRange {
                    what: format!("variable '{}'", var.name),
                    tile,
                    num_tiles: nt,
                });
            }
            next = r.end;
        }
        if next < var.len {
            errs.push(E::UnmappedElements {
                var: var.name.clone(),
                start: next,
                end: var.len,
            });
        }
    }
}

/// One vertex: mapped to a tile of the target, its codelet registered, every field it names
/// declared, every declared field bound the way the codelet says, no written field aliased.
/// Returns its codelet when registered.
fn check_vertex(
    graph: &Graph,
    vi: VertexKey,
    v: &VertexInfo,
    errs: &mut Vec<E>,
) -> Option<&'static CodeletDesc> {
    let nt = graph.target.num_tiles();
    let vname = || vertex_name(graph, vi);
    match v.tile {
        None => errs.push(E::UnmappedVertex { vertex: vname() }),
        Some(t) if t.as_u32() >= nt => errs.push(E::TileOutOfRange {
            what: format!("vertex {}", vi.as_u32()),
            tile: t,
            num_tiles: nt,
        }),
        _ => {}
    }
    let Some(desc) = lookup(&v.codelet) else {
        let names = crate::codelet::registered();
        errs.push(E::UnknownCodelet {
            vertex: vname(),
            did_you_mean: nearest_name(&v.codelet, names.iter().map(|d| d.name)),
        });
        return None;
    };
    for name in v.conns.keys().chain(v.state.keys()) {
        if desc.field_index(name).is_none() {
            errs.push(E::UnknownField {
                vertex: vname(),
                field: name.clone(),
                did_you_mean: nearest_name(name, desc.fields.iter().map(|f| f.name)),
            });
        }
    }
    for f in desc.fields {
        if f.dir == FieldDir::State {
            check_state_field(graph, vi, v, f, errs);
        } else {
            check_tensor_field(graph, vi, v, f, errs);
        }
    }
    check_aliasing(graph, vi, v, desc, errs);
    Some(desc)
}

/// A state field: given a value (not a tensor) of the field's type and shape.
fn check_state_field(
    graph: &Graph,
    vi: VertexKey,
    v: &VertexInfo,
    f: &FieldSpec,
    errs: &mut Vec<E>,
) {
    let vname = || vertex_name(graph, vi);
    let field = || f.name.to_string();
    if v.conns.contains_key(f.name) {
        errs.push(E::WrongBinding {
            vertex: vname(),
            field: field(),
            expected: "a state value",
            got: "a tensor",
        });
    }
    let Some(val) = v.state.get(f.name) else {
        errs.push(E::MissingState {
            vertex: vname(),
            field: field(),
        });
        return;
    };
    if val.dtype != f.dtype {
        errs.push(E::StateDType {
            vertex: vname(),
            field: field(),
            expected: f.dtype,
            got: val.dtype,
        });
    }
    let (expected, got) = match (f.shape, val.is_vector) {
        (FieldShape::Scalar, true) => ("a scalar", "a vector"),
        (FieldShape::Vector, false) => ("a vector", "a scalar"),
        _ => return,
    };
    errs.push(E::WrongBinding {
        vertex: vname(),
        field: field(),
        expected,
        got,
    });
}

/// A tensor field: connected (not given a state value), to one tensor or a list as its shape
/// says, each tensor checked by [`check_field_tensor`].
fn check_tensor_field(
    graph: &Graph,
    vi: VertexKey,
    v: &VertexInfo,
    f: &FieldSpec,
    errs: &mut Vec<E>,
) {
    let vname = || vertex_name(graph, vi);
    let field = || f.name.to_string();
    if v.state.contains_key(f.name) {
        errs.push(E::WrongBinding {
            vertex: vname(),
            field: field(),
            expected: "a tensor",
            got: "a state value",
        });
    }
    let Some(b) = v.conns.get(f.name) else {
        errs.push(E::UnconnectedField {
            vertex: vname(),
            field: field(),
        });
        return;
    };
    let tensors: Vec<&Tensor> = match (f.shape, b) {
        (FieldShape::VectorList, Binding::List(l)) => l.iter().collect(),
        (_, Binding::Tensor(t)) if f.shape != FieldShape::VectorList => vec![t],
        (_, b) => {
            let (expected, got) = match b {
                Binding::Tensor(_) => ("a list of tensors", "one tensor"),
                Binding::List(_) => ("one tensor", "a list of tensors"),
            };
            errs.push(E::WrongBinding {
                vertex: vname(),
                field: field(),
                expected,
                got,
            });
            return;
        }
    };
    for t in tensors {
        check_field_tensor(graph, vi, f, t, errs);
    }
}

/// One tensor bound to a field: of this graph, of the field's type, one element for a scalar,
/// at most 2³² − 1 elements, and no constant if the field writes.
fn check_field_tensor(graph: &Graph, vi: VertexKey, f: &FieldSpec, t: &Tensor, errs: &mut Vec<E>) {
    let vname = || vertex_name(graph, vi);
    let field = || f.name.to_string();
    if t.graph != graph.id {
        errs.push(E::ForeignTensor {
            what: format!("vertex {} field '{}'", vi.as_u32(), f.name),
        });
        return;
    }
    if t.dtype != f.dtype {
        errs.push(E::DTypeMismatch {
            vertex: vname(),
            field: field(),
            expected: f.dtype,
            got: t.dtype,
            tensor: tensor_name(graph, t),
        });
    }
    if f.shape == FieldShape::Scalar && t.num_elements() != 1 {
        errs.push(E::NotScalar {
            vertex: vname(),
            field: field(),
            elements: t.num_elements(),
            tensor: tensor_name(graph, t),
        });
    }
    if t.num_elements() as u64 > u64::from(u32::MAX) {
        errs.push(E::FieldTooLarge {
            vertex: vname(),
            field: field(),
            elements: t.num_elements() as u64,
        });
    }
    if f.dir.writes() {
        if let Some(r) = t.regions.iter().find(|r| graph.vars[r.var].is_constant) {
            errs.push(E::WriteToConstant {
                what: format!("vertex {} field '{}'", vi.as_u32(), f.name),
                var: graph.vars[r.var].name.clone(),
            });
        }
    }
}

/// The tensors bound to a vertex's field (none for a state field or an unbound one).
fn field_tensors<'g>(v: &'g VertexInfo, f: &FieldSpec) -> Vec<&'g Tensor> {
    if f.dir == FieldDir::State {
        return Vec::new();
    }
    match v.conns.get(f.name) {
        Some(Binding::Tensor(t)) => vec![t],
        Some(Binding::List(l)) => l.iter().collect(),
        None => Vec::new(),
    }
}

/// A written field overlaps nothing else of the same vertex (nor itself).
fn check_aliasing(
    graph: &Graph,
    vi: VertexKey,
    v: &VertexInfo,
    desc: &CodeletDesc,
    errs: &mut Vec<E>,
) {
    let mut acc: Vec<(VarId, u64, u64, usize, bool)> = Vec::new();
    for (fi, f) in desc.fields.iter().enumerate() {
        for t in field_tensors(v, f)
            .into_iter()
            .filter(|t| t.graph == graph.id)
        {
            for r in t.regions.iter() {
                acc.push((r.var, r.start, r.end(), fi, f.dir.writes()));
            }
        }
    }
    acc.sort_by_key(|a| (a.0, a.1));
    let mut reported = HashSet::new();
    for i in 0..acc.len() {
        let a = acc[i];
        for b in acc[i + 1..].iter().take_while(|b| b.0 == a.0 && b.1 < a.2) {
            if (a.4 || b.4) && reported.insert((a.3.min(b.3), a.3.max(b.3))) {
                let (w, o) = if a.4 { (a.3, b.3) } else { (b.3, a.3) };
                errs.push(E::AliasedField {
                    vertex: vertex_name(graph, vi),
                    field: desc.fields[w].name.into(),
                    other: desc.fields[o].name.into(),
                    var: graph.vars[a.0].name.clone(),
                    start: b.1,
                    end: a.2.min(b.2),
                });
            }
        }
    }
}

/// No data race between the vertices of one compute set: an element one vertex writes is
/// touched by no other (one race reported per compute set).
fn check_races(graph: &Graph, codelets: &[(VertexKey, &'static CodeletDesc)], errs: &mut Vec<E>) {
    let mut descs: PrimaryMap<VertexKey, Option<&'static CodeletDesc>> =
        vec![None; graph.vertices.len()].into();
    for &(vi, d) in codelets {
        descs[vi] = Some(d);
    }
    for cs in graph.compute_sets.values() {
        let mut acc = Vec::new();
        for &vr in &cs.vertices {
            let v = &graph.vertices[vr.key()];
            let Some(desc) = descs[vr.key()] else {
                continue;
            };
            for f in desc.fields {
                for t in field_tensors(v, f)
                    .into_iter()
                    .filter(|t| t.graph == graph.id)
                {
                    for r in t.regions.iter() {
                        acc.push(Access {
                            var: r.var,
                            start: r.start,
                            end: r.end(),
                            vertex: vr.key(),
                            write: f.dir.writes(),
                        });
                    }
                }
            }
        }
        if let Some(e) = find_race(&mut acc) {
            errs.push(E::DataRace {
                compute_set: cs.name.clone(),
                writer: vertex_name(graph, e.0.vertex),
                other: vertex_name(graph, e.1.vertex),
                access: if e.1.write { "writes" } else { "reads" },
                var: graph.vars[e.0.var].name.clone(),
                start: e.0.start.max(e.1.start),
                end: e.0.end.min(e.1.end),
            });
        }
    }
}

/// The programs and the graph's functions, and no function that calls itself.
fn check_programs(graph: &Graph, programs: &[Program], errs: &mut Vec<E>) {
    let mut pv = ProgramValidator {
        graph,
        errs,
        calls: Vec::new(),
    };
    for p in programs {
        pv.program(p);
    }
    for f in &graph.functions {
        pv.program(f);
    }
    let calls = std::mem::take(&mut pv.calls);
    check_recursion(graph, &calls, errs);
}

/// Finds one pair of accesses by different vertices that overlap with at least one write.
/// Returns (the writer, the other).
fn find_race(acc: &mut [Access]) -> Option<(Access, Access)> {
    acc.sort_by_key(|a| (a.var, a.start));
    // Per kind (any access / write access): the interval reaching furthest, and the one
    // reaching furthest among the other vertices.
    let mut var: Option<VarId> = None;
    let mut any: [Option<Access>; 2] = [None, None];
    let mut wr: [Option<Access>; 2] = [None, None];
    fn hit(best: &[Option<Access>; 2], a: &Access) -> Option<Access> {
        best.iter()
            .flatten()
            .find(|b| b.vertex != a.vertex && b.end > a.start)
            .copied()
    }
    fn insert(best: &mut [Option<Access>; 2], a: Access) {
        match best {
            [Some(b1), _] if b1.vertex == a.vertex => {
                if a.end > b1.end {
                    *b1 = a;
                }
            }
            [Some(b1), b2] if a.end > b1.end => {
                *b2 = Some(*b1);
                *b1 = a;
            }
            [Some(_), Some(b2)] if b2.vertex == a.vertex => {
                if a.end > b2.end {
                    *b2 = a;
                }
            }
            [Some(_), b2] => {
                if b2.is_none_or(|b| a.end > b.end) {
                    *b2 = Some(a);
                }
            }
            [b1 @ None, _] => *b1 = Some(a),
        }
    }
    for a in acc.iter() {
        if var != Some(a.var) {
            var = Some(a.var);
            any = [None, None];
            wr = [None, None];
        }
        if a.write {
            if let Some(b) = hit(&any, a) {
                return Some((*a, b));
            }
        } else if let Some(b) = hit(&wr, a) {
            return Some((b, *a));
        }
        insert(&mut any, *a);
        if a.write {
            insert(&mut wr, *a);
        }
    }
    None
}

struct ProgramValidator<'a> {
    graph: &'a Graph,
    errs: &'a mut Vec<E>,
    /// (caller function or None for top level, callee)
    calls: Vec<u32>,
}

impl ProgramValidator<'_> {
    fn tensor(&mut self, t: &Tensor, what: &str) -> bool {
        if t.graph != self.graph.id {
            self.errs.push(E::ForeignTensor {
                what: what.to_string(),
            });
            return false;
        }
        true
    }

    fn scalar(&mut self, t: &Tensor, what: &str) {
        if self.tensor(t, what)
            && (t.num_elements() != 1 || !matches!(t.dtype, DType::Bool | DType::I32 | DType::U32))
        {
            self.errs.push(E::BadPredicate {
                what: what.to_string(),
                dtype: t.dtype,
                shape: t.shape.clone(),
            });
        }
    }

    fn destination(&mut self, t: &Tensor, what: &str) {
        if !t.is_one_to_one() {
            self.errs.push(E::AliasedDestination {
                what: what.to_string(),
            });
        }
        if let Some(r) = t
            .regions
            .iter()
            .find(|r| self.graph.vars[r.var].is_constant)
        {
            self.errs.push(E::WriteToConstant {
                what: what.to_string(),
                var: self.graph.vars[r.var].name.clone(),
            });
        }
    }

    fn cross_replica_copy(&mut self, src: &Tensor, dst: &Tensor, map: &[(u32, u32)]) {
        let mut bad = |reason: String| self.errs.push(E::BadCrossReplicaCopy { reason });
        let Some(rep) = &self.graph.replication else {
            bad("the graph is not replicated (build it with Graph::new_replicated)".into());
            return;
        };
        if src.dtype != dst.dtype || src.num_elements() != dst.num_elements() {
            bad(format!(
                "source is {}{:?} but destination is {}{:?}",
                src.dtype, src.shape, dst.dtype, dst.shape
            ));
        }
        if Region::lists_overlap(src.regions(), dst.regions()) {
            bad("source and destination share elements (each replica reads its source while another writes its destination)".into());
        }
        let r = rep.factor;
        let (mut from, mut to) = (vec![false; r as usize], vec![false; r as usize]);
        for &(s, d) in map {
            if s >= r || d >= r {
                bad(format!(
                    "the map pairs replica {s} with replica {d}, but there are {r} replicas"
                ));
                return;
            }
            if std::mem::replace(&mut from[s as usize], true) {
                bad(format!("replica {s} is a source twice in the map"));
            }
            if std::mem::replace(&mut to[d as usize], true) {
                bad(format!("replica {d} is a destination twice in the map"));
            }
        }
    }

    fn program(&mut self, p: &Program) {
        match p {
            Program::Sequence { body, .. } => body.iter().for_each(|c| self.program(c)),
            Program::Execute(cs) => {
                if self.graph.check_compute_set(*cs).is_err() {
                    self.errs.push(E::NoSuchComputeSet {
                        what: "execute".into(),
                        id: cs.index(),
                    });
                }
            }
            Program::Copy { src, dst } => self.copy(src, dst),
            Program::Repeat { body, .. } => self.program(body),
            Program::RepeatWhileTrue {
                cond,
                predicate,
                body,
            } => {
                self.scalar(predicate, "repeat_while_true predicate");
                self.program(cond);
                self.program(body);
            }
            Program::If {
                predicate,
                then,
                else_,
            } => {
                self.scalar(predicate, "if predicate");
                self.program(then);
                self.program(else_);
            }
            Program::Switch {
                control,
                cases,
                default,
            } => {
                self.scalar(control, "switch control");
                cases.iter().for_each(|(_, c)| self.program(c));
                self.program(default);
            }
            Program::Call(f) => {
                if self.graph.check_function(*f).is_err() {
                    self.errs.push(E::NoSuchFunction { id: f.index() });
                } else {
                    self.calls.push(f.index());
                }
            }
            Program::StreamToDevice { stream, dst } => {
                self.stream(*stream, dst, crate::graph::StreamDir::HostToDevice);
                if self.tensor(dst, "stream destination") {
                    self.destination(dst, "stream destination");
                }
            }
            Program::StreamFromDevice { src, stream } => {
                self.stream(*stream, src, crate::graph::StreamDir::DeviceToHost)
            }
            Program::CopyFromRemote {
                buffer,
                dst,
                offset,
            } => self.remote_copy(*buffer, dst, offset.as_ref(), true),
            Program::CopyToRemote {
                src,
                buffer,
                offset,
            } => self.remote_copy(*buffer, src, offset.as_ref(), false),
            Program::OverlapIo { io, compute } => {
                self.program(io);
                self.program(compute);
                super::validate_io::overlap_io(self.graph, io, compute, self.errs);
            }
            Program::CrossReplicaCopy(copies) => self.cross_replica_copies(copies),
        }
    }

    fn copy(&mut self, src: &Tensor, dst: &Tensor) {
        if self.tensor(src, "copy source") && self.tensor(dst, "copy destination") {
            if src.dtype != dst.dtype || src.num_elements() != dst.num_elements() {
                self.errs.push(E::CopyMismatch {
                    src_dtype: src.dtype,
                    src_shape: src.shape.clone(),
                    dst_dtype: dst.dtype,
                    dst_shape: dst.shape.clone(),
                });
            }
            self.destination(dst, "copy destination");
        }
    }

    /// A copy between `t` and a remote buffer: from the buffer into `t` when `into_tensor`.
    fn remote_copy(
        &mut self,
        buffer: crate::graph::RemoteBuffer,
        t: &Tensor,
        offset: Option<&Tensor>,
        into_tensor: bool,
    ) {
        let what = if into_tensor {
            "remote copy destination"
        } else {
            "remote copy source"
        };
        if self.tensor(t, what) && offset.is_none_or(|o| self.tensor(o, "remote copy offset")) {
            if into_tensor {
                self.destination(t, what);
            }
            super::validate_io::remote_copy(self.graph, buffer, t, offset, self.errs);
        }
    }

    fn cross_replica_copies(&mut self, copies: &[CrossReplicaCopy]) {
        for c in copies {
            if self.tensor(&c.src, "cross-replica copy source")
                && self.tensor(&c.dst, "cross-replica copy destination")
            {
                self.cross_replica_copy(&c.src, &c.dst, &c.map);
                self.destination(&c.dst, "cross-replica copy destination");
            }
        }
        for (i, a) in copies.iter().enumerate() {
            for b in &copies[i + 1..] {
                let clash = Region::lists_overlap(a.dst.regions(), b.dst.regions())
                    || Region::lists_overlap(a.dst.regions(), b.src.regions())
                    || Region::lists_overlap(a.src.regions(), b.dst.regions());
                if clash {
                    self.errs.push(E::BadCrossReplicaCopy {
                        reason: "two copies of one exchange overlap (a destination with a source or another destination)".into(),
                    });
                }
            }
        }
    }

    fn stream(&mut self, h: crate::graph::Stream, t: &Tensor, dir: crate::graph::StreamDir) {
        if let Err(e) = self.graph.check_stream(h) {
            self.errs.push(E::BadStream {
                stream: format!("#{}", h.index()),
                reason: e.to_string(),
            });
            return;
        }
        let s = &self.graph.streams[h.key()];
        if s.dir != dir {
            self.errs.push(E::BadStream {
                stream: s.name.clone(),
                reason: format!("is {:?}, used the other way", s.dir),
            });
        }
        if s.dtype != t.dtype || s.len != t.num_elements() {
            self.errs.push(E::BadStream {
                stream: s.name.clone(),
                reason: format!(
                    "carries {} x {} but the tensor is {}{:?}",
                    s.len, s.dtype, t.dtype, t.shape
                ),
            });
        }
        self.tensor(t, "stream tensor");
    }
}

/// Functions may call functions, but not themselves, directly or not.
fn check_recursion(graph: &Graph, _top: &[u32], errs: &mut Vec<E>) {
    fn callees(p: &Program, out: &mut Vec<u32>) {
        match p {
            Program::Call(f) => out.push(f.index()),
            _ => p.for_each_child(|c| callees(c, out)),
        }
    }
    let n = graph.functions.len();
    let edges: Vec<Vec<u32>> = graph
        .functions
        .values()
        .map(|f| {
            let mut v = Vec::new();
            callees(f, &mut v);
            v.retain(|&c| (c as usize) < n);
            v
        })
        .collect();
    // Colour DFS for cycles.
    let mut state = vec![0u8; n];
    fn dfs(i: usize, edges: &[Vec<u32>], state: &mut [u8]) -> Option<u32> {
        state[i] = 1;
        for &c in &edges[i] {
            match state[c as usize] {
                1 => return Some(c),
                0 => {
                    if let Some(x) = dfs(c as usize, edges, state) {
                        return Some(x);
                    }
                }
                _ => {}
            }
        }
        state[i] = 2;
        None
    }
    for i in 0..n {
        if state[i] == 0 {
            if let Some(c) = dfs(i, &edges, &mut state) {
                errs.push(E::RecursiveCall { id: c });
                return;
            }
        }
    }
}
