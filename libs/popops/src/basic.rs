//! Element-wise functions over the single-op codelets (`Add<float>`, `Fill<int>`, …), a vertex
//! per worker piece of the output's tile mapping, in a compute set the caller gives.

use std::ops::Range;

use poplar_compiler::graph::{ComputeSet, Graph, StateValue, Tensor, VertexRef};
use poplar_core::dtype::{DType, Element};
use poplar_core::target::TileId;

use crate::error::{shape_err, OpError};
use crate::pieces::{codelet_name, mapped_regions, split_between_workers, worker_pieces};
use crate::{BinaryOp, UnaryOp};

/// `t` flattened to `n` elements: as is, or broadcast if it has one element.
pub(crate) fn operand(
    t: &Tensor,
    n: usize,
    dtype: DType,
    field: &str,
    op: &str,
) -> Result<Tensor, OpError> {
    if t.dtype() != dtype {
        return Err(shape_err(
            op,
            format!(
                "operand '{field}' is {} but the output is {dtype}",
                t.dtype()
            ),
        ));
    }
    let m = t.num_elements();
    if m == n {
        Ok(t.flatten())
    } else if m == 1 && n > 0 {
        Ok(t.flatten().broadcast(n, 0)?)
    } else {
        Err(shape_err(
            op,
            format!("operand '{field}' has {m} elements but the output has {n}"),
        ))
    }
}
/// Adds `codelet` vertices over the tile mapping of `out`, its elements on each tile split
/// between the workers ([`worker_pieces`]): each vertex connects `out_field` to its range of
/// `out` and each `(field, tensor)` of `inputs` to the same range of the tensor; `state` is set
/// on every vertex. The general form of the helpers below.
pub fn elementwise(
    graph: &mut Graph,
    cs: ComputeSet,
    codelet: &str,
    out_field: &str,
    out: &Tensor,
    inputs: &[(&str, &Tensor)],
    state: &[(&str, StateValue)],
) -> Result<Vec<VertexRef>, OpError> {
    let n = out.num_elements();
    let flat_out = out.flatten();
    let operands = inputs
        .iter()
        .map(|&(f, t)| Ok((f, operand(t, n, out.dtype(), f, codelet)?)))
        .collect::<Result<Vec<_>, OpError>>()?;
    let mut vertices = Vec::new();
    for (tile, range) in worker_pieces(graph, out, codelet)? {
        let v = graph.add_vertex(cs, codelet)?;
        graph.connect(v, out_field, &flat_out.slice(range.clone())?)?;
        for (f, t) in &operands {
            graph.connect(v, f, &t.slice(range.clone())?)?;
        }
        for (f, s) in state {
            graph.set_vertex_state(v, f, s.clone())?;
        }
        graph.set_tile_mapping(v, tile)?;
        vertices.push(v);
    }
    Ok(vertices)
}

/// `out = a op b`, element-wise, over the tile mapping of `out`.
pub fn binary(
    graph: &mut Graph,
    cs: ComputeSet,
    op: BinaryOp,
    a: &Tensor,
    b: &Tensor,
    out: &Tensor,
) -> Result<Vec<VertexRef>, OpError> {
    let name = codelet_name(op.name(), out.dtype())?;
    elementwise(graph, cs, &name, "out", out, &[("in1", a), ("in2", b)], &[])
}

/// `a = a op b`, element-wise, over the tile mapping of `a`.
pub fn binary_in_place(
    graph: &mut Graph,
    cs: ComputeSet,
    op: BinaryOp,
    a: &Tensor,
    b: &Tensor,
) -> Result<Vec<VertexRef>, OpError> {
    let name = codelet_name(&format!("{}InPlace", op.name()), a.dtype())?;
    elementwise(graph, cs, &name, "a", a, &[("b", b)], &[])
}

/// `out = a + b`.
pub fn add(
    graph: &mut Graph,
    cs: ComputeSet,
    a: &Tensor,
    b: &Tensor,
    out: &Tensor,
) -> Result<Vec<VertexRef>, OpError> {
    binary(graph, cs, BinaryOp::Add, a, b, out)
}

/// `out = a - b`.
pub fn sub(
    graph: &mut Graph,
    cs: ComputeSet,
    a: &Tensor,
    b: &Tensor,
    out: &Tensor,
) -> Result<Vec<VertexRef>, OpError> {
    binary(graph, cs, BinaryOp::Sub, a, b, out)
}

/// `out = a * b`.
pub fn mul(
    graph: &mut Graph,
    cs: ComputeSet,
    a: &Tensor,
    b: &Tensor,
    out: &Tensor,
) -> Result<Vec<VertexRef>, OpError> {
    binary(graph, cs, BinaryOp::Mul, a, b, out)
}

/// `a += b`.
pub fn add_in_place(
    graph: &mut Graph,
    cs: ComputeSet,
    a: &Tensor,
    b: &Tensor,
) -> Result<Vec<VertexRef>, OpError> {
    binary_in_place(graph, cs, BinaryOp::Add, a, b)
}

/// `out = op(input)`, element-wise, over the tile mapping of `out`.
pub fn unary(
    graph: &mut Graph,
    cs: ComputeSet,
    op: UnaryOp,
    input: &Tensor,
    out: &Tensor,
) -> Result<Vec<VertexRef>, OpError> {
    let name = codelet_name(op.name(), out.dtype())?;
    elementwise(graph, cs, &name, "out", out, &[("input", input)], &[])
}

/// `out = input` with `Copy<T>` vertices (a compute-set copy; `Program::copy` is usually the
/// better way to copy).
pub fn copy(
    graph: &mut Graph,
    cs: ComputeSet,
    input: &Tensor,
    out: &Tensor,
) -> Result<Vec<VertexRef>, OpError> {
    let name = codelet_name("Copy", out.dtype())?;
    elementwise(graph, cs, &name, "out", out, &[("input", input)], &[])
}

/// Every element of `t` set to `value`, over the tile mapping of `t`.
pub fn fill<T: Element + Into<StateValue>>(
    graph: &mut Graph,
    cs: ComputeSet,
    t: &Tensor,
    value: T,
) -> Result<Vec<VertexRef>, OpError> {
    if t.dtype() != T::DTYPE {
        return Err(shape_err(
            "fill",
            format!("value is {} but the tensor is {}", T::DTYPE, t.dtype()),
        ));
    }
    let name = codelet_name("Fill", t.dtype())?;
    elementwise(graph, cs, &name, "out", t, &[], &[("value", value.into())])
}

/// Regions of at least this many elements get the multi-worker `ScaledAddMulti<float>`.
pub const MULTI_WORKER_MIN_ELEMENTS: usize = 96;

/// `a += scale * b` (`float` only), over the tile mapping of `a`. Regions of at least
/// [`MULTI_WORKER_MIN_ELEMENTS`] elements use the multi-worker codelet (as popops' supervisor
/// `ScaledAdd` over a region); the rest of a tile's elements are split between its workers as
/// single-worker `ScaledAdd<float>` vertices.
pub fn scaled_add(
    graph: &mut Graph,
    cs: ComputeSet,
    a: &Tensor,
    b: &Tensor,
    scale: f32,
) -> Result<Vec<VertexRef>, OpError> {
    if a.dtype() != DType::F32 {
        return Err(OpError::Unsupported {
            codelet: format!("ScaledAdd<{}>", a.dtype().poplar_name()),
        });
    }
    codelets::link();
    let n = a.num_elements();
    let flat_a = a.flatten();
    let flat_b = operand(b, n, DType::F32, "b", "ScaledAdd<float>")?;
    let workers = graph.target().workers_per_tile as usize;
    let mut pieces: Vec<(&str, TileId, Range<usize>)> = Vec::new();
    let regions = mapped_regions(graph, a, "ScaledAdd<float>")?;
    for (k, (tile, range)) in regions.iter().enumerate() {
        if range.len() >= MULTI_WORKER_MIN_ELEMENTS {
            pieces.push(("ScaledAddMulti<float>", *tile, range.clone()));
        }
        // The small regions of a tile, split between its workers once its last region is seen.
        let last_of_tile = regions.get(k + 1).is_none_or(|r| r.0 != *tile);
        if last_of_tile {
            let small: Vec<Range<usize>> = regions
                .iter()
                .filter(|r| r.0 == *tile && r.1.len() < MULTI_WORKER_MIN_ELEMENTS)
                .map(|r| r.1.clone())
                .collect();
            for group in split_between_workers(&small, workers, 2, 4) {
                pieces.extend(group.into_iter().map(|r| ("ScaledAdd<float>", *tile, r)));
            }
        }
    }
    let mut vertices = Vec::new();
    for (name, tile, range) in pieces {
        let v = graph.add_vertex(cs, name)?;
        graph.connect(v, "a", &flat_a.slice(range.clone())?)?;
        graph.connect(v, "b", &flat_b.slice(range)?)?;
        graph.set_vertex_state(v, "scale", scale)?;
        graph.set_tile_mapping(v, tile)?;
        vertices.push(v);
    }
    Ok(vertices)
}
