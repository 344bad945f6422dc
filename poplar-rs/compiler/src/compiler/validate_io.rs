//! Validation of Streaming Memory and overlapped I/O: copies to and from remote buffers,
//! `overlap_io` programs, and no vertex on an I/O tile. Part of the validation pass
//! (`validate.rs`), which calls these and gathers their errors.

use super::error::ValidationError as E;
use crate::dtype::DType;
use crate::exe::MAX_TRANSFER_BYTES;
use crate::graph::program::Program;
use crate::graph::{Graph, RemoteBuffer, Tensor, VertexName};
use crate::target::TileId;

/// The tiles holding the elements of `t` (unmapped elements are reported elsewhere).
pub(crate) fn tiles_of(graph: &Graph, t: &Tensor) -> Vec<TileId> {
    let mut tiles: Vec<TileId> = t
        .regions()
        .iter()
        .flat_map(|r| {
            graph.vars[r.var]
                .mapping
                .pieces(r.start..r.end())
                .map(|(_, tile)| tile)
        })
        .collect();
    tiles.sort_unstable();
    tiles.dedup();
    tiles
}

/// A copy between `t` and `buffer`, rows chosen by `offset` (rows `0..k` without).
pub(crate) fn remote_copy(
    graph: &Graph,
    buffer: RemoteBuffer,
    t: &Tensor,
    offset: Option<&Tensor>,
    errs: &mut Vec<E>,
) {
    if graph.check_remote_buffer(buffer).is_err() {
        errs.push(E::BadRemoteCopy {
            buffer: format!("#{}", buffer.index()),
            reason: "is not a remote buffer of this graph".into(),
        });
        return;
    }
    let b = &graph.remote_buffers[buffer.key()];
    let mut bad = |reason: String| {
        errs.push(E::BadRemoteCopy {
            buffer: b.name.clone(),
            reason,
        })
    };
    if t.dtype() != b.dtype {
        bad(format!("holds {} but the tensor is {}", b.dtype, t.dtype()));
    }
    let n = t.num_elements() as u64;
    let rows = match offset {
        Some(o) => {
            if o.rank() > 1
                || o.num_elements() == 0
                || !matches!(o.dtype(), DType::I32 | DType::U32)
            {
                bad(format!(
                    "the offset must be a scalar or 1-D tensor of i32 or u32 with at least one entry; it is {}{:?}",
                    o.dtype(),
                    o.shape()
                ));
                return;
            }
            o.num_elements() as u64
        }
        None => n / b.elements,
    };
    if n != rows * b.elements || (offset.is_none() && rows == 0) {
        bad(format!(
            "the tensor has {n} elements, not {} row(s) of {}",
            rows.max(1),
            b.elements
        ));
    } else if offset.is_none() && rows > b.rows {
        bad(format!(
            "the tensor holds {rows} rows; the buffer has {}",
            b.rows
        ));
    }
    let bytes = n * b.dtype.size() as u64;
    if bytes > MAX_TRANSFER_BYTES {
        bad(format!(
            "one copy moves {bytes} bytes; a transfer moves at most {MAX_TRANSFER_BYTES} (128 MiB)"
        ));
    }
    let tpi = graph.target.tiles_per_ipu;
    let mut tensors = vec![("tensor", t)];
    tensors.extend(offset.map(|o| ("offset", o)));
    for (what, x) in tensors {
        if let Some(tile) = tiles_of(graph, x)
            .into_iter()
            .find(|&tile| tile.as_u32() / tpi != b.chip)
        {
            bad(format!(
                "the {what} has elements on tile {tile} of chip {}; the buffer is in the Streaming Memory of chip {}",
                tile.as_u32() / tpi,
                b.chip
            ));
        }
    }
}

/// An `overlap_io` program: the target has I/O tiles, `io` holds only stream and remote
/// copies whose tensors (and offsets) live on them, and `compute` reads and writes no element
/// on them (`Executable::check` checks the lowered program again).
pub(crate) fn overlap_io(graph: &Graph, io: &Program, compute: &Program, errs: &mut Vec<E>) {
    let t = &graph.target;
    if t.io_tiles == 0 {
        errs.push(E::BadOverlapIo {
            reason: "the target reserves no I/O tiles (set Target::io_tiles)".into(),
        });
        return;
    }
    let mut tensors = Vec::new();
    if let Err(kind) = transfer_tensors(io, &mut tensors) {
        errs.push(E::BadOverlapIo {
            reason: format!(
                "its I/O part holds {kind}; only stream and remote-buffer copies overlap compute"
            ),
        });
    }
    for x in tensors {
        if let Some(tile) = tiles_of(graph, x)
            .into_iter()
            .find(|&tile| !t.is_io_tile(tile))
        {
            errs.push(E::BadOverlapIo {
                reason: format!(
                    "a transfer of its I/O part reaches tile {tile}, not an I/O tile (the last {} of each chip)",
                    t.io_tiles
                ),
            });
            return;
        }
    }
    let mut tensors = Vec::new();
    let mut seen = std::collections::HashSet::new();
    tensors_of(graph, compute, &mut tensors, &mut seen);
    for x in &tensors {
        if let Some(tile) = tiles_of(graph, x)
            .into_iter()
            .find(|&tile| t.is_io_tile(tile))
        {
            errs.push(E::BadOverlapIo {
                reason: format!(
                    "its compute part touches I/O tile {tile}, where its transfers may be writing"
                ),
            });
            return;
        }
    }
}

/// Every tensor a program reads or writes: vertex fields of its compute sets, copies,
/// transfers, predicates and controls, and those of the functions it calls (each once).
fn tensors_of(
    graph: &Graph,
    p: &Program,
    out: &mut Vec<Tensor>,
    seen: &mut std::collections::HashSet<u32>,
) {
    match p {
        Program::Execute(cs) if graph.check_compute_set(*cs).is_ok() => {
            for v in &graph.compute_sets[cs.key()].vertices {
                for b in graph.vertices[v.key()].conns.values() {
                    match b {
                        crate::graph::Binding::Tensor(t) => out.push(t.clone()),
                        crate::graph::Binding::List(l) => out.extend(l.iter().cloned()),
                    }
                }
            }
        }
        Program::Copy { src, dst } => out.extend([src.clone(), dst.clone()]),
        Program::StreamToDevice { dst: t, .. } | Program::StreamFromDevice { src: t, .. } => {
            out.push(t.clone())
        }
        Program::CopyFromRemote { dst: t, offset, .. }
        | Program::CopyToRemote { src: t, offset, .. } => {
            out.push(t.clone());
            out.extend(offset.iter().cloned());
        }
        Program::CrossReplicaCopy(copies) => {
            out.extend(copies.iter().flat_map(|c| [c.src.clone(), c.dst.clone()]))
        }
        Program::RepeatWhileTrue { predicate: x, .. }
        | Program::If { predicate: x, .. }
        | Program::Switch { control: x, .. } => out.push(x.clone()),
        Program::Call(f) if graph.check_function(*f).is_ok() && seen.insert(f.index()) => {
            tensors_of(graph, &graph.functions[f.key()], out, seen);
        }
        _ => {}
    }
    p.for_each_child(|c| tensors_of(graph, c, out, seen));
}

/// The tensors (and offsets) of the transfers in `p`; `Err` names what is not a transfer.
fn transfer_tensors<'p>(p: &'p Program, out: &mut Vec<&'p Tensor>) -> Result<(), &'static str> {
    match p {
        Program::Sequence { body, .. } => body.iter().try_for_each(|c| transfer_tensors(c, out)),
        Program::StreamToDevice { dst: t, .. } | Program::StreamFromDevice { src: t, .. } => {
            out.push(t);
            Ok(())
        }
        Program::CopyFromRemote { dst: t, offset, .. }
        | Program::CopyToRemote { src: t, offset, .. } => {
            out.push(t);
            out.extend(offset);
            Ok(())
        }
        Program::Execute(_) => Err("a compute set"),
        Program::Copy { .. } | Program::CrossReplicaCopy(_) => Err("an exchange"),
        _ => Err("control flow"),
    }
}

/// No vertex on an I/O tile.
pub(crate) fn vertices_off_io_tiles(
    graph: &Graph,
    errs: &mut Vec<E>,
    name: impl Fn(crate::graph::VertexKey) -> VertexName,
) {
    let t = &graph.target;
    if t.io_tiles == 0 {
        return;
    }
    for (vi, v) in graph.vertices.iter() {
        if let Some(tile) = v
            .tile
            .filter(|&tile| tile.as_u32() < t.num_tiles() && t.is_io_tile(tile))
        {
            errs.push(E::VertexOnIoTile {
                vertex: name(vi),
                tile: tile.as_u32(),
                io_tiles: t.io_tiles,
            });
        }
    }
}
