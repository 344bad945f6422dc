//! Graph-building element-wise ops, fills and reductions in the style of popops, over the
//! vertices of the standard codelets (`codelets`).
//!
//! Each helper adds vertices of the standard codelets to a compute set over the tile mapping of
//! the output (the tensor written), with every operand sliced to the same flat element range.
//! As popops does (`splitRegionsBetweenWorkers`), each tile's elements are split between its
//! worker contexts ([`split_between_workers`]): up to `workers_per_tile` pieces of about equal
//! size, whole 64-bit vectors except at the end of a region, each a single-worker vertex, so
//! that the six barrel-threaded contexts share the work (one vertex doing a tile's work alone
//! takes six times as long, see `docs/cycle-model.md`). Operands may live on other tiles (the
//! compiler adds the exchange) and an operand of exactly one element is broadcast. They use
//! only the graph IR (`poplar-compiler`) and the codelets: a graph-building library links no
//! engine.
//!
//! ```
//! use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
//!
//! codelets::link();
//! let mut graph = Graph::new(&Target::custom(4, 64 * 1024));
//! let x = graph.add_variable(DType::F32, &[100], "x");
//! let y = graph.add_variable(DType::F32, &[100], "y");
//! let s = graph.add_variable(DType::F32, &[1], "s");
//! graph.map_linearly(&x, 8)?;
//! graph.map_linearly(&y, 8)?;
//! graph.set_tile_mapping(&s, 0)?;
//! graph.create_host_read("s", &s)?;
//!
//! let init = graph.add_compute_set("init");
//! popops::fill(&mut graph, init, &x, 1.0f32)?; // x = 1
//! popops::fill(&mut graph, init, &y, 2.0f32)?; // y = 2
//! let step = graph.add_compute_set("step");
//! popops::scaled_add(&mut graph, step, &x, &y, 0.5)?; // x += 0.5 * y
//! let sum = popops::reduce_sum(&mut graph, &x, &s, "sum")?; // s = sum(x), a Program
//!
//! let prog = Program::seq(vec![Program::execute(init), Program::execute(step), sum]);
//! let exe = compile(&graph, &[prog], &CompileOptions::default())?;
//! let mut engine = Engine::new(&exe, EngineOptions::default())?;
//! engine.run(0)?;
//! assert_eq!(engine.read_tensor::<f32>("s")?, vec![200.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ops::Range;

use codelets::cycles::data_path_width;
use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{ComputeSet, Graph, GraphError, StateValue, Tensor, VertexRef};
use poplar_core::codelet::lookup;
use poplar_core::dtype::{DType, Element};
use poplar_core::target::TileId;

pub mod slice;

pub use slice::{
    create_sliceable_tensor, dynamic_slice, dynamic_update, estimate_multi_slice, multi_slice,
    multi_update, multi_update_add, plan_multi_slice, SliceOptions, SlicePlan,
};

/// The op families, named here with the helpers that take them.
pub use codelets::family::{BinaryOp, ReduceOp, UnaryOp};

/// Errors of the helpers.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OpError {
    /// A view or mapping operation of the graph failed.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// Operands that do not fit together (element counts, types, mapping).
    #[error("{op}: {reason}")]
    Shape { op: String, reason: String },
    /// No codelet of this name is registered (the operation is not provided for the type).
    #[error("codelet '{codelet}' is not provided by the codelet library")]
    Unsupported { codelet: String },
}

fn shape_err(op: &str, reason: impl Into<String>) -> OpError {
    OpError::Shape {
        op: op.to_string(),
        reason: reason.into(),
    }
}

/// The templated codelet name `"{op}<{type}>"`, if registered.
pub fn codelet_name(op: &str, dtype: DType) -> Result<String, OpError> {
    codelets::link();
    let name = format!("{op}<{}>", dtype.poplar_name());
    match lookup(&name) {
        Some(_) => Ok(name),
        None => Err(OpError::Unsupported { codelet: name }),
    }
}

/// The tile mapping of `t` as `(tile, flat range)` pieces; every element must be mapped.
pub fn mapped_regions(
    graph: &Graph,
    t: &Tensor,
    op: &str,
) -> Result<Vec<(TileId, Range<usize>)>, OpError> {
    let mapping = graph.tile_mapping(t)?;
    let mut out = Vec::new();
    let mut covered = 0;
    for (tile, ranges) in mapping.into_iter().enumerate() {
        for r in ranges {
            covered += r.len();
            out.push((TileId::new(tile as u32), r));
        }
    }
    if covered != t.num_elements() {
        return Err(shape_err(
            op,
            format!(
                "only {covered} of the {} elements of the output are mapped to tiles",
                t.num_elements()
            ),
        ));
    }
    Ok(out)
}

/// `t` flattened to `n` elements: as is, or broadcast if it has one element.
fn operand(t: &Tensor, n: usize, dtype: DType, field: &str, op: &str) -> Result<Tensor, OpError> {
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

/// Splits one tile's `regions` (flat element ranges, in order) between `workers` worker
/// contexts, in the manner of popops' `splitRegionsBetweenWorkers`: at most `workers` groups
/// of consecutive elements, each a multiple of `grain` elements (but for the last) and, when
/// there are enough elements, at least `min` of them; a group that crosses the end of a region
/// has one range per region. Every element is in exactly one range, in order.
pub fn split_between_workers(
    regions: &[Range<usize>],
    workers: usize,
    grain: usize,
    min: usize,
) -> Vec<Vec<Range<usize>>> {
    let total: usize = regions.iter().map(|r| r.len()).sum();
    if total == 0 {
        return Vec::new();
    }
    let grain = grain.max(1);
    let groups = total.div_ceil(min.max(1)).clamp(1, workers.max(1));
    let per = total.div_ceil(groups).div_ceil(grain) * grain;
    let mut out: Vec<Vec<Range<usize>>> = Vec::new();
    let mut left = 0; // elements the current group can still take
    for r in regions {
        let mut at = r.start;
        while at < r.end {
            if left == 0 {
                out.push(Vec::new());
                left = per;
            }
            let end = (at + left).min(r.end);
            out.last_mut().expect("a group").push(at..end);
            left -= end - at;
            at = end;
        }
    }
    out
}

/// The pieces of `t`'s tile mapping that single-worker vertices take: per tile, its regions
/// split between the target's workers ([`split_between_workers`], 64-bit grains, at least two
/// of them per piece).
pub fn worker_pieces(
    graph: &Graph,
    t: &Tensor,
    op: &str,
) -> Result<Vec<(TileId, Range<usize>)>, OpError> {
    let workers = graph.target().workers_per_tile as usize;
    let grain = data_path_width(t.dtype()) as usize;
    let mut out = Vec::new();
    let regions = mapped_regions(graph, t, op)?;
    let mut i = 0;
    while i < regions.len() {
        let tile = regions[i].0;
        let n = regions[i..].iter().take_while(|r| r.0 == tile).count();
        let ranges: Vec<Range<usize>> = regions[i..i + n].iter().map(|r| r.1.clone()).collect();
        for group in split_between_workers(&ranges, workers, grain, 2 * grain) {
            out.extend(group.into_iter().map(|r| (tile, r)));
        }
        i += n;
    }
    Ok(out)
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

/// Checks that `out` is one element of `dtype` and returns its tile.
fn scalar_out(graph: &Graph, out: &Tensor, dtype: DType, op: &str) -> Result<TileId, OpError> {
    if out.num_elements() != 1 || out.dtype() != dtype {
        return Err(shape_err(
            op,
            format!(
                "output must be one element of {dtype}, got {}{:?}",
                out.dtype(),
                out.shape()
            ),
        ));
    }
    Ok(mapped_regions(graph, out, op)?[0].0)
}

/// The two-stage pattern of [`reduce`] and [`dot`]: a `first` vertex per worker piece
/// ([`worker_pieces`]) of the (flattened, equally long) operands, each writing one partial,
/// then `last` (a `Reduce*` codelet) over the partials on the tile of `out`.
fn two_stage(
    graph: &mut Graph,
    first: &str,
    operands: &[(&str, Tensor)],
    last: &str,
    out: &Tensor,
    name: &str,
) -> Result<Program, OpError> {
    let out_tile = scalar_out(graph, out, operands[0].1.dtype(), first)?;
    let lead = &operands[0].1;
    let regions = if lead.num_elements() == 0 {
        Vec::new()
    } else {
        worker_pieces(graph, lead, first)?
    };
    if regions.len() <= 1 {
        let cs = graph.add_compute_set(name);
        let v = graph.add_vertex(cs, first)?;
        for (f, t) in operands {
            graph.connect(v, f, t)?;
        }
        graph.connect(v, "out", &out.flatten())?;
        graph.set_tile_mapping(v, regions.first().map_or(out_tile, |r| r.0))?;
        return Ok(Program::execute(cs));
    }
    let partials = graph.add_variable(lead.dtype(), &[regions.len()], &format!("{name}/partials"));
    let cs1 = graph.add_compute_set(&format!("{name}/partials"));
    for (i, (tile, range)) in regions.into_iter().enumerate() {
        let p = partials.slice(i..i + 1)?;
        graph.set_tile_mapping(&p, tile)?;
        let v = graph.add_vertex(cs1, first)?;
        for (f, t) in operands {
            graph.connect(v, f, &t.slice(range.clone())?)?;
        }
        graph.connect(v, "out", &p)?;
        graph.set_tile_mapping(v, tile)?;
    }
    let cs2 = graph.add_compute_set(&format!("{name}/final"));
    let v = graph.add_vertex(cs2, last)?;
    graph.connect(v, "input", &partials)?;
    graph.connect(v, "out", &out.flatten())?;
    graph.set_tile_mapping(v, out_tile)?;
    Ok(Program::seq(vec![
        Program::execute(cs1),
        Program::execute(cs2),
    ]))
}

/// A program that reduces every element of `input` into the single element `out`.
///
/// Two stages: compute set `"{name}/partials"` runs one `Reduce*<T>` vertex per worker piece
/// of `input` (each tile's elements split between its workers, [`worker_pieces`]), each
/// writing one element of a new variable `"{name}/partials"` on its tile; compute set
/// `"{name}/final"` reduces those partials on the tile of `out`. If `input` is one piece, a
/// single compute set writes `out` directly. Float sums are therefore grouped by piece (not
/// strictly left to right over `input`).
pub fn reduce(
    graph: &mut Graph,
    op: ReduceOp,
    input: &Tensor,
    out: &Tensor,
    name: &str,
) -> Result<Program, OpError> {
    let codelet = codelet_name(op.name(), input.dtype())?;
    two_stage(
        graph,
        &codelet,
        &[("input", input.flatten())],
        &codelet,
        out,
        name,
    )
}

/// A program computing the dot product of `a` and `b` (equal element counts) into the single
/// element `out`: a `Dot<T>` vertex per worker piece of `a` writing a partial (`b` is sliced
/// to match and exchanged if it lives elsewhere), then `ReduceSum<T>` of the partials on the
/// tile of `out`, as in [`reduce`].
pub fn dot(
    graph: &mut Graph,
    a: &Tensor,
    b: &Tensor,
    out: &Tensor,
    name: &str,
) -> Result<Program, OpError> {
    let codelet = codelet_name("Dot", a.dtype())?;
    let sum = codelet_name("ReduceSum", a.dtype())?;
    if b.num_elements() != a.num_elements() || b.dtype() != a.dtype() {
        return Err(shape_err(
            &codelet,
            format!(
                "operand 'b' is {}{:?} but 'a' is {}{:?}",
                b.dtype(),
                b.shape(),
                a.dtype(),
                a.shape()
            ),
        ));
    }
    two_stage(
        graph,
        &codelet,
        &[("a", a.flatten()), ("b", b.flatten())],
        &sum,
        out,
        name,
    )
}

/// `reduce(graph, ReduceOp::Sum, input, out, name)`.
pub fn reduce_sum(
    graph: &mut Graph,
    input: &Tensor,
    out: &Tensor,
    name: &str,
) -> Result<Program, OpError> {
    reduce(graph, ReduceOp::Sum, input, out, name)
}

#[cfg(test)]
mod tests {
    use super::split_between_workers;

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // lists of ranges that happen to hold one
    fn regions_split_between_workers() {
        // 100 floats on one region: 6 pieces of 18 (whole vectors) but the last.
        let g = split_between_workers(&[0..100], 6, 2, 4);
        let lens: Vec<usize> = g.iter().map(|p| p.iter().map(|r| r.len()).sum()).collect();
        assert_eq!(lens, [18, 18, 18, 18, 18, 10]);
        assert_eq!(g[1], [18..36]);
        // Few elements: fewer pieces, at least `min` each but for the last.
        let g = split_between_workers(&[10..15], 6, 2, 4);
        assert_eq!(g, [vec![10..14], vec![14..15]]);
        // Pieces cross region ends: 2 regions of 7, 3 workers, grain 1.
        let g = split_between_workers(&[0..7, 20..27], 3, 1, 1);
        assert_eq!(g, [vec![0..5], vec![5..7, 20..23], vec![23..27]]);
        assert!(split_between_workers(&[3..3], 6, 2, 4).is_empty());
        // One worker: everything in one piece.
        assert_eq!(split_between_workers(&[0..9], 1, 4, 8), [vec![0..9]]);
    }
}
