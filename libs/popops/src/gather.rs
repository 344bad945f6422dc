//! Gathers and scatters with ONNX semantics ([`gather`]: ONNX `Gather` with an axis;
//! [`gather_elements`]: `GatherElements`; [`scatter_elements`]: `ScatterElements`;
//! [`gather_nd`]: `GatherND` with `batch_dims`; [`scatter_nd`]: `ScatterND`; the scatters
//! with every opset-18 reduction, `none`, `add`, `mul`, `min`, `max`: see
//! [`ScatterReduction`]) and one-hot encoding ([`encode_one_hot`], [`one_hot`]: poplibs'
//! `encodeOneHot`), on indices held in device memory.
//!
//! **Order and NaN.** A scatter applies its updates one at a time in row-major order of the
//! indices: of equal indices the last wins (`none`; ONNX leaves it undefined) or they
//! combine in that order. `mul` of `f16` computes in f32 and rounds once per update; a NaN
//! result of a float `mul`/`min`/`max` is the canonical NaN. `min`/`max` are IEEE 754-2019
//! `minimum`/`maximum`, as numpy's `minimum`/`maximum`: NaN when either side is NaN, and
//! `-0` below `+0` (so the result does not depend on which of two zeros came first).
//! Integers wrap.
//!
//! **Indices** are `i32` or `u32` tensors. A negative `i32` index counts from the end of the
//! axis (ONNX: `-dim ≤ i < 0` means `i + dim`). An index outside `[-dim, dim)` is an error
//! of the run (ONNX calls it an error; poplibs' slices, see [`slice`](crate::slice), give
//! zeros instead): the first compute set of each op (`"{name}/{op}_indices"`, one
//! `NormaliseIndices<I>` vertex per worker piece of the indices) fails the engine's run with
//! the index, its position in the indices and the length of the axis (the ND ops' first
//! compute set, of `NormaliseIndicesNd<I>` vertices, names the axis of `data` too), and the
//! engine's error names the compute set. One-hot encoding follows poplibs instead: an index outside
//! `[0, depth)` gives a row of zeros.
//!
//! ```
//! use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
//!
//! codelets::link();
//! let mut graph = Graph::new(&Target::custom(4, 64 * 1024));
//! let data = graph.add_variable(DType::F32, &[3, 2], "data");
//! graph.map_linearly(&data, 2)?;
//! graph.set_initial_value(&data, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! let idx = graph.add_constant(&[2], &[-1i32, 0], "idx")?;
//! graph.set_tile_mapping(&idx, 1)?;
//! let mut prog = Vec::new();
//! let rows = popops::gather(&mut graph, &data, &idx, 0, &mut prog, "rows")?;
//! graph.create_host_read("rows", &rows)?;
//! let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
//! let mut engine = Engine::new(&exe, EngineOptions::default())?;
//! engine.run(0)?;
//! assert_eq!(engine.read_tensor::<f32>("rows")?, [5.0, 6.0, 1.0, 2.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ops::Range;

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{Graph, Tensor};
use poplar_core::codelet::lookup;
use poplar_core::dtype::DType;
use poplar_core::target::TileId;

use crate::error::{check_axis, dtype_err, shape_err};
use crate::slice::{multi_slice, plan_multi_slice, SliceOptions};
use crate::{codelet_name, mapped_regions, OpError};

/// How [`scatter_elements`] and [`scatter_nd`] combine an update with the element it lands on
/// (ONNX's `reduction` attribute, opset 18). Updates apply one at a time in row-major order
/// of the indices, so equal indices combine in that order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ScatterReduction {
    /// The update replaces the element; of equal indices the last (in row-major order of
    /// the indices) wins, where ONNX leaves the result undefined.
    #[default]
    None,
    /// The updates are added to the element (`f32`; `f16` in f32 rounded once per add; `i32`
    /// wrapping).
    Add,
    /// The element is multiplied by the updates (`f16` in f32 rounded once per update, a NaN
    /// result the canonical NaN; `i32`, `u32` wrapping).
    Mul,
    /// The smaller of the element and the update, IEEE 754-2019 `minimum` (as numpy's
    /// `minimum`): NaN (the canonical NaN) when either side is NaN, `-0` below `+0`.
    Min,
    /// The larger of the element and the update, IEEE 754-2019 `maximum` (as numpy's
    /// `maximum`): NaN when either side is NaN, `+0` above `-0`.
    Max,
}

impl ScatterReduction {
    /// The codelet family of this reduction among `{base}`, `{base}Add`, ….
    fn codelet(self, base: &str) -> String {
        let op = match self {
            ScatterReduction::None => "",
            ScatterReduction::Add => "Add",
            ScatterReduction::Mul => "Mul",
            ScatterReduction::Min => "Min",
            ScatterReduction::Max => "Max",
        };
        format!("{base}{op}")
    }
}

/// Fails unless `indices` is `i32` or `u32`.
pub(crate) fn check_index_type(op: &str, what: &str, indices: &Tensor) -> Result<(), OpError> {
    match indices.dtype() {
        DType::I32 | DType::U32 => Ok(()),
        d => Err(dtype_err(op, what, d, "indices are i32 or u32")),
    }
}

/// Maps the variable `dst` (of `src`'s shape) as `src` is mapped.
pub(crate) fn map_like(
    graph: &mut Graph,
    dst: &Tensor,
    src: &Tensor,
    op: &str,
) -> Result<(), OpError> {
    let flat = dst.flatten();
    for (tile, r) in mapped_regions(graph, &src.flatten(), op)? {
        graph.set_tile_mapping(&flat.slice(r)?, tile)?;
    }
    Ok(())
}

/// `t` viewed as `[everything else, dim axis]` (the axis moved last).
pub(crate) fn last_axis_view(t: &Tensor, axis: usize) -> Result<Tensor, OpError> {
    let shape = t.shape();
    let len = shape[axis];
    let rows: usize = shape
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != axis)
        .map(|(_, &s)| s)
        .product();
    let mut perm: Vec<usize> = (0..shape.len()).filter(|&d| d != axis).collect();
    perm.push(axis);
    Ok(t.dim_shuffle(&perm)?.reshape(&[rows, len])?)
}

/// The row pieces of `view` (`[rows, len]`) that single-worker vertices take: runs of rows
/// whose first element is on the same tile, each split between the tile's workers.
pub(crate) fn row_pieces(
    graph: &Graph,
    view: &Tensor,
    op: &str,
) -> Result<Vec<(TileId, Range<usize>)>, OpError> {
    let (rows, len) = (view.shape()[0], view.shape()[1]);
    if rows == 0 || len == 0 {
        return Ok(Vec::new());
    }
    let mut owner = vec![TileId::new(0); rows];
    for (tile, r) in mapped_regions(graph, view, op)? {
        let rows = r.start.div_ceil(len)..(r.end - 1) / len + 1;
        owner[rows].fill(tile);
    }
    let workers = graph.target().workers_per_tile.max(1) as usize;
    let mut out = Vec::new();
    let mut start = 0;
    while start < rows {
        let tile = owner[start];
        let end = start + owner[start..].iter().take_while(|&&t| t == tile).count();
        let n = end - start;
        let pieces = n.min(workers);
        for p in 0..pieces {
            out.push((tile, start + n * p / pieces..start + n * (p + 1) / pieces));
        }
        start = end;
    }
    Ok(out)
}

/// The indices as `u32` below `dim` (compute set `"{name}/{op}_indices"`, mapped as
/// `indices`); a bad index fails the run.
/// Compute set `"{name}/{op}"`: one `codelet` vertex per piece of the rows of `rows_of`
/// ([`row_pieces`]) on the piece's tile, each field connected to those rows of its tensor
/// (all of them `[rows, …]` views) and the one `state` set.
fn row_vertices(
    graph: &mut Graph,
    codelet: &str,
    fields: &[(&str, &Tensor)],
    rows_of: &Tensor,
    state: (&str, u32),
    op: &str,
    name: &str,
) -> Result<Program, OpError> {
    let cs = graph.add_compute_set(&format!("{name}/{op}"));
    for (tile, rows) in row_pieces(graph, rows_of, op)? {
        let v = graph.add_vertex(cs, codelet)?;
        for (field, t) in fields {
            graph.connect(v, field, &t.slice(rows.clone())?)?;
        }
        graph.set_vertex_state(v, state.0, state.1)?;
        graph.set_tile_mapping(v, tile)?;
    }
    Ok(Program::execute(cs))
}

fn normalise(
    graph: &mut Graph,
    indices: &Tensor,
    dim: usize,
    op: &str,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    let codelet = codelet_name("NormaliseIndices", indices.dtype())?;
    let flat = indices.flatten();
    let out = graph.add_variable(DType::U32, indices.shape(), &format!("{name}/indices"));
    let of = out.flatten();
    let cs = graph.add_compute_set(&format!("{name}/{op}_indices"));
    for (tile, r) in crate::worker_pieces(graph, &flat, op)? {
        graph.set_tile_mapping(&of.slice(r.clone())?, tile)?;
        let v = graph.add_vertex(cs, &codelet)?;
        graph.connect(v, "input", &flat.slice(r.clone())?)?;
        graph.connect(v, "out", &of.slice(r.clone())?)?;
        graph.set_vertex_state(v, "dim", dim as u32)?;
        graph.set_vertex_state(v, "first", r.start as u32)?;
        graph.set_tile_mapping(v, tile)?;
    }
    prog.push(Program::execute(cs));
    Ok(out)
}

fn empty_axis(op: &str, axis: usize) -> OpError {
    shape_err(
        op,
        format!("axis {axis} of 'data' is empty, so no index is in range"),
    )
}

/// The slices of `data` at the device `indices` along `axis` (ONNX `Gather`): a new tensor
/// of shape `data.shape[..axis] ++ indices.shape ++ data.shape[axis + 1..]`, `out[…, i…, …] =
/// data[…, indices[i…], …]`. Negative indices count from the end; an index outside `[-dim,
/// dim)` fails the run (see the [module notes](self)). The slices are a
/// [`multi_slice`] of `data` viewed as `[dim, everything else]` (planned by
/// [`plan_multi_slice`], `data` read where it lives), so its cost and layout are those of
/// `multi_slice`. `T` is `f32`, `f16`, `i32` or `u32`.
///
/// ```
/// # use poplar::{DType, Graph, Target};
/// # codelets::link();
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let data = graph.add_variable(DType::F32, &[4, 5, 6], "data");
/// graph.map_linearly(&data, 6)?;
/// let idx = graph.add_variable(DType::I32, &[2, 3], "idx");
/// graph.set_tile_mapping(&idx, 0)?;
/// let mut prog = Vec::new();
/// let out = popops::gather(&mut graph, &data, &idx, 1, &mut prog, "g")?;
/// assert_eq!(out.shape(), [4, 2, 3, 6]);
/// # Ok::<(), popops::OpError>(())
/// ```
pub fn gather(
    graph: &mut Graph,
    data: &Tensor,
    indices: &Tensor,
    axis: usize,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    let op = "gather";
    check_axis(op, "data", data.rank(), axis)?;
    check_index_type(op, "indices", indices)?;
    codelet_name("MultiSlice", data.dtype())?;
    let shape = data.shape();
    let dim = shape[axis];
    let (outer, inner) = (&shape[..axis], &shape[axis + 1..]);
    let mut out_shape = outer.to_vec();
    out_shape.extend_from_slice(indices.shape());
    out_shape.extend_from_slice(inner);
    let n = indices.num_elements();
    if n == 0 || data.num_elements() == 0 {
        if n > 0 && dim == 0 {
            return Err(empty_axis(op, axis));
        }
        return Ok(graph.add_variable(data.dtype(), &out_shape, name));
    }
    let idx = normalise(graph, indices, dim, op, prog, name)?.flatten();
    let mut perm = vec![axis];
    perm.extend((0..data.rank()).filter(|&d| d != axis));
    let cols = data.num_elements() / dim;
    let table = data.dim_shuffle(&perm)?.reshape(&[dim, cols])?;
    let plan = plan_multi_slice(graph.target(), data.dtype(), dim, cols, n);
    let rows = multi_slice(
        graph,
        &table,
        &idx,
        &plan,
        &SliceOptions::default(),
        prog,
        name,
    )?;
    // [n, outer…, inner…] → [outer…, n, inner…] → the index shape in place of n.
    let mut split = vec![n];
    split.extend_from_slice(outer);
    split.extend_from_slice(inner);
    let mut back: Vec<usize> = (1..=outer.len()).collect();
    back.push(0);
    back.extend(outer.len() + 1..split.len());
    Ok(rows
        .reshape(&split)?
        .dim_shuffle(&back)?
        .reshape(&out_shape)?)
}

/// The checks shared by the element-wise gather and scatter: `indices` of `data`'s rank and
/// type i32/u32, no longer than `data` on every other axis, `axis` in range.
fn check_elements(op: &str, data: &Tensor, indices: &Tensor, axis: usize) -> Result<(), OpError> {
    check_axis(op, "data", data.rank(), axis)?;
    check_index_type(op, "indices", indices)?;
    if indices.rank() != data.rank() {
        return Err(shape_err(
            op,
            format!(
                "'indices' {:?} must have the rank {} of 'data' {:?}",
                indices.shape(),
                data.rank(),
                data.shape()
            ),
        ));
    }
    for (d, (&i, &s)) in indices.shape().iter().zip(data.shape()).enumerate() {
        if d != axis && i > s {
            return Err(shape_err(
                op,
                format!("axis {d} of 'indices' ({i}) is longer than axis {d} of 'data' ({s})"),
            ));
        }
    }
    if data.shape()[axis] == 0 && indices.num_elements() > 0 {
        return Err(empty_axis(op, axis));
    }
    Ok(())
}

/// `data` cut to the extent of `indices` on every axis but `axis`.
fn cut_to(data: &Tensor, indices: &Tensor, axis: usize) -> Result<Tensor, OpError> {
    let mut t = data.clone();
    for (d, &i) in indices.shape().iter().enumerate() {
        if d != axis && i < t.shape()[d] {
            t = t.slice_dim(d, 0..i)?;
        }
    }
    Ok(t)
}

/// `out[p] = data[p with axis coordinate indices[p]]` for every position `p` of `indices`
/// (ONNX `GatherElements`): a new tensor of `indices`' shape, mapped as `indices`. `indices`
/// has `data`'s rank and may be shorter than `data` on the other axes. Negative indices count
/// from the end; one outside `[-dim, dim)` fails the run. One `GatherElements<T>` vertex per
/// worker piece of the rows along `axis` (a view moves `axis` last), on the tile of the
/// row's first output element (compute set `"{name}/gather_elements"`). `T` is `f32`, `f16`,
/// `i32` or `u32`.
///
/// ```
/// # use poplar::{DType, Graph, Target};
/// # codelets::link();
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let data = graph.add_variable(DType::F32, &[3, 4], "data");
/// graph.map_linearly(&data, 2)?;
/// let idx = graph.add_variable(DType::U32, &[2, 4], "idx");
/// graph.map_linearly(&idx, 2)?;
/// let mut prog = Vec::new();
/// let out = popops::gather_elements(&mut graph, &data, &idx, 0, &mut prog, "ge")?;
/// assert_eq!(out.shape(), [2, 4]);
/// # Ok::<(), popops::OpError>(())
/// ```
pub fn gather_elements(
    graph: &mut Graph,
    data: &Tensor,
    indices: &Tensor,
    axis: usize,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    let op = "gather_elements";
    check_elements(op, data, indices, axis)?;
    let codelet = codelet_name("GatherElements", data.dtype())?;
    let out = graph.add_variable(data.dtype(), indices.shape(), name);
    if indices.num_elements() == 0 {
        return Ok(out);
    }
    map_like(graph, &out, indices, op)?;
    let idx = normalise(graph, indices, data.shape()[axis], op, prog, name)?;
    let dv = last_axis_view(&cut_to(data, indices, axis)?, axis)?;
    let iv = last_axis_view(&idx, axis)?;
    let ov = last_axis_view(&out, axis)?;
    let fields = [("indices", &iv), ("input", &dv), ("out", &ov)];
    let state = ("row_len", dv.shape()[1] as u32);
    prog.push(row_vertices(
        graph, &codelet, &fields, &ov, state, op, name,
    )?);
    Ok(out)
}

/// A copy of `data` with `updates[p]` combined by `reduction` (written, added, multiplied,
/// min, max: see [`ScatterReduction`]) into position `p` with its axis coordinate replaced by
/// `indices[p]`, for every position `p` of `indices` (ONNX `ScatterElements`): a new tensor
/// mapped as `data`. `updates` has `indices`' shape and `data`'s type; updates apply in
/// row-major order of `indices` (so of equal indices the last wins, or they combine in
/// order). Negative indices count from the end; one outside `[-dim, dim)` fails the run. A
/// copy of `data`, then one `ScatterElements<T>` / `ScatterElements{Add,Mul,Min,Max}<T>` vertex
/// per worker piece of the rows along `axis`, on the tile of the row's first element of the
/// result (compute set `"{name}/scatter_elements"`). `T` is `f32`, `f16`, `i32` or `u32`
/// (`Add`: `f32`, `f16`, `i32` only).
///
/// ```
/// # use poplar::{DType, Graph, Target};
/// # codelets::link();
/// use popops::gather::ScatterReduction;
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let data = graph.add_variable(DType::F32, &[3, 4], "data");
/// graph.map_linearly(&data, 2)?;
/// let idx = graph.add_variable(DType::I32, &[3, 2], "idx");
/// let upd = graph.add_variable(DType::F32, &[3, 2], "upd");
/// graph.map_linearly(&idx, 2)?;
/// graph.map_linearly(&upd, 2)?;
/// let mut prog = Vec::new();
/// let out = popops::scatter_elements(
///     &mut graph, &data, &idx, &upd, 1, ScatterReduction::Add, &mut prog, "se",
/// )?;
/// assert_eq!(out.shape(), [3, 4]);
/// # Ok::<(), popops::OpError>(())
/// ```
#[allow(clippy::too_many_arguments)] // ONNX's operands and attributes, and poplibs' tail
pub fn scatter_elements(
    graph: &mut Graph,
    data: &Tensor,
    indices: &Tensor,
    updates: &Tensor,
    axis: usize,
    reduction: ScatterReduction,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    let op = "scatter_elements";
    check_elements(op, data, indices, axis)?;
    if updates.shape() != indices.shape() || updates.dtype() != data.dtype() {
        return Err(shape_err(
            op,
            format!(
                "'updates' is {}{:?} but must be {}{:?} (the type of 'data', the shape of 'indices')",
                updates.dtype(),
                updates.shape(),
                data.dtype(),
                indices.shape()
            ),
        ));
    }
    let codelet = codelet_name(&reduction.codelet("ScatterElements"), data.dtype())?;
    let out = graph.add_variable(data.dtype(), data.shape(), name);
    if data.num_elements() == 0 {
        return Ok(out);
    }
    map_like(graph, &out, data, op)?;
    prog.push(Program::copy(data, &out));
    if indices.num_elements() == 0 {
        return Ok(out);
    }
    let idx = normalise(graph, indices, data.shape()[axis], op, prog, name)?;
    let ov = last_axis_view(&cut_to(&out, indices, axis)?, axis)?;
    let iv = last_axis_view(&idx, axis)?;
    let uv = last_axis_view(updates, axis)?;
    let fields = [("indices", &iv), ("updates", &uv), ("a", &ov)];
    let state = ("row_len", ov.shape()[1] as u32);
    prog.push(row_vertices(
        graph, &codelet, &fields, &ov, state, op, name,
    )?);
    Ok(out)
}

/// The shapes of an ND gather or scatter: `b` batch dims, index tuples of `m`, `n` of them
/// (`batch_rows` per batch), and `data` as a table of `rows` rows of `len` elements.
struct Nd {
    b: usize,
    m: usize,
    n: usize,
    batch_rows: usize,
    rows: usize,
    len: usize,
}

/// The checks of [`gather_nd`] and [`scatter_nd`]: `i32`/`u32` indices of rank `q ≥ 1`,
/// `batch_dims` below both ranks and equal on both, `1 ≤ m ≤ rank − batch_dims`, no empty
/// indexed axis when there are indices.
fn check_nd(op: &str, data: &Tensor, indices: &Tensor, b: usize) -> Result<Nd, OpError> {
    check_index_type(op, "indices", indices)?;
    let (ds, is) = (data.shape(), indices.shape());
    let (r, q) = (ds.len(), is.len());
    if q == 0 || b >= q.min(r) {
        return Err(shape_err(
            op,
            format!(
                "batch_dims {b} must be below the ranks of 'data' ({r}) and 'indices' ({q}), \
                 and 'indices' must have a rank of at least 1"
            ),
        ));
    }
    let m = is[q - 1];
    if m == 0 || m > r - b {
        return Err(OpError::Axis {
            op: op.to_string(),
            tensor: "'indices'".to_string(),
            axis: q - 1,
            rank: q,
            reason: format!(
                "holds index tuples of {m}, which must be 1 to {} (the rank of 'data' {ds:?} \
                 after {b} batch dims)",
                r - b
            ),
        });
    }
    if let Some(d) = (0..b).find(|&d| is[d] != ds[d]) {
        return Err(OpError::Axis {
            op: op.to_string(),
            tensor: "'indices'".to_string(),
            axis: d,
            rank: q,
            reason: format!(
                "is {} but, a batch dim, must match axis {d} of 'data' ({})",
                is[d], ds[d]
            ),
        });
    }
    let n: usize = is[..q - 1].iter().product();
    if n > 0 {
        if let Some(j) = (b..b + m).find(|&d| ds[d] == 0) {
            return Err(empty_axis(op, j));
        }
    }
    let rows: usize = ds[..b + m].iter().product();
    if u32::try_from(rows).is_err() {
        return Err(shape_err(
            op,
            format!("'data' {ds:?} has more than 2^32 indexed slices"),
        ));
    }
    Ok(Nd {
        b,
        m,
        n,
        batch_rows: is[b..q - 1].iter().product(),
        rows,
        len: ds[b + m..].iter().product(),
    })
}

/// The index tuples of `indices` (`[n, m]` as [`Nd`] says) as flat row indices of `data`'s
/// `[rows, len]` table (a `u32` vector of `n`): compute set `"{name}/{op}_indices"`, one
/// `NormaliseIndicesNd<I>` vertex per worker piece of the tuples ([`row_pieces`]), each index
/// made non-negative and checked against its own axis (a bad one fails the run).
fn normalise_nd(
    graph: &mut Graph,
    data: &Tensor,
    indices: &Tensor,
    nd: &Nd,
    (op, name): (&str, &str),
    prog: &mut Vec<Program>,
) -> Result<Tensor, OpError> {
    let codelet = codelet_name("NormaliseIndicesNd", indices.dtype())?;
    let tuples = indices.reshape(&[nd.n, nd.m])?;
    let out = graph.add_variable(DType::U32, &[nd.n], &format!("{name}/indices"));
    let dims: Vec<u32> = data.shape()[nd.b..nd.b + nd.m]
        .iter()
        .map(|&d| d as u32)
        .collect();
    let batch_stride: usize = data.shape()[nd.b..nd.b + nd.m].iter().product();
    let cs = graph.add_compute_set(&format!("{name}/{op}_indices"));
    for (tile, r) in row_pieces(graph, &tuples, op)? {
        let o = out.slice(r.clone())?;
        graph.set_tile_mapping(&o, tile)?;
        let v = graph.add_vertex(cs, &codelet)?;
        graph.connect(v, "input", &tuples.slice(r.clone())?)?;
        graph.connect(v, "out", &o)?;
        graph.set_vertex_state(v, "dims", dims.clone())?;
        graph.set_vertex_state(v, "first", r.start as u32)?;
        graph.set_vertex_state(v, "batch_rows", nd.batch_rows as u32)?;
        graph.set_vertex_state(v, "batch_stride", batch_stride as u32)?;
        graph.set_vertex_state(v, "first_axis", nd.b as u32)?;
        graph.set_tile_mapping(v, tile)?;
    }
    prog.push(Program::execute(cs));
    Ok(out)
}

/// The slices of `data` at the device index tuples of `indices` (ONNX `GatherND`): with
/// `b = batch_dims` and `m` the last axis of `indices`, a new tensor of shape
/// `indices.shape[..-1] ++ data.shape[b + m..]` with `out[i…, j…] = data[i[..b]…,
/// indices[i…]…, j…]` — each tuple indexes axes `b..b + m` of `data` within the batch of its
/// leading `b` coordinates. `1 ≤ m ≤ rank(data) − b`, and the batch axes of both agree.
/// Negative `i32` indices count from the end of their axis; one outside `[-dim, dim)` fails
/// the run naming the index, its position in `indices` and the axis (compute set
/// `"{name}/gather_nd_indices"`, see the [module notes](self)).
///
/// How: the tuples become flat row indices of `data` viewed as `[batch · Π dims indexed,
/// slice]` (one `NormaliseIndicesNd<I>` vertex per worker piece of the tuples), then a
/// [`multi_slice`] of that table, planned by [`plan_multi_slice`] — the way [`gather`] works,
/// and for the same reason: the table is read where it lives and the cost and layout are
/// those of poplibs' multi-slice (poplibs has no GatherND vertex). With no tuples or empty
/// slices the result is an empty tensor and no compute set is added (the indices are then
/// not checked). `T` is `f32`, `f16`, `i32` or `u32`.
///
/// ```
/// # use poplar::{DType, Graph, Target};
/// # codelets::link();
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let data = graph.add_variable(DType::F32, &[2, 4, 5, 6], "data");
/// graph.map_linearly(&data, 6)?;
/// // Batches of 2; 3 tuples of 2 indices per batch, each picking a row of 6.
/// let idx = graph.add_variable(DType::I32, &[2, 3, 2], "idx");
/// graph.set_tile_mapping(&idx, 0)?;
/// let mut prog = Vec::new();
/// let out = popops::gather_nd(&mut graph, &data, &idx, 1, &mut prog, "g")?;
/// assert_eq!(out.shape(), [2, 3, 6]);
/// # Ok::<(), popops::OpError>(())
/// ```
pub fn gather_nd(
    graph: &mut Graph,
    data: &Tensor,
    indices: &Tensor,
    batch_dims: usize,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    let op = "gather_nd";
    let nd = check_nd(op, data, indices, batch_dims)?;
    codelet_name("MultiSlice", data.dtype())?;
    let q = indices.rank();
    let mut out_shape = indices.shape()[..q - 1].to_vec();
    out_shape.extend_from_slice(&data.shape()[nd.b + nd.m..]);
    if nd.n == 0 || nd.len == 0 {
        return Ok(graph.add_variable(data.dtype(), &out_shape, name));
    }
    let idx = normalise_nd(graph, data, indices, &nd, (op, name), prog)?;
    let table = data.reshape(&[nd.rows, nd.len])?;
    let plan = plan_multi_slice(graph.target(), data.dtype(), nd.rows, nd.len, nd.n);
    let rows = multi_slice(
        graph,
        &table,
        &idx,
        &plan,
        &SliceOptions::default(),
        prog,
        name,
    )?;
    Ok(rows.reshape(&out_shape)?)
}

/// A copy of `data` with the slices `updates[i…]` combined by `reduction` into `data` at the
/// device index tuples `indices[i…]` (ONNX `ScatterND`, opset 18): with `m` the last axis of
/// `indices` (`1 ≤ m ≤ rank(data)`), `updates` has shape `indices.shape[..-1] ++
/// data.shape[m..]` and `data`'s type, and `out[indices[i…]…, j…] = reduction(out[…],
/// updates[i…, j…])`. The updates apply in row-major order of the tuples: with
/// [`ScatterReduction::None`] the last of equal tuples wins (ONNX leaves it undefined), the
/// others combine in that order (see [`ScatterReduction`] for NaN and rounding). Negative
/// `i32` indices count from the end of their axis; one outside `[-dim, dim)` fails the run
/// (compute set `"{name}/scatter_nd_indices"`). The result is a new tensor mapped as `data`.
///
/// How: a copy of `data`, the tuples made flat row indices of the copy viewed as `[Π dims
/// indexed, slice]` (`NormaliseIndicesNd<I>`), then compute set `"{name}/scatter_nd"`: one
/// `ScatterNd<T>` / `ScatterNd{Add,Mul,Min,Max}<T>` vertex per worker piece of the table's
/// rows (runs of rows on one tile split between its workers), each taking all
/// tuples and updates and applying, in order, those that land in its rows — poplibs'
/// `MultiUpdate` layout (each vertex owns a part of the table and skips the offsets outside
/// it), which keeps the order of equal tuples without serialising the scatter. `T` is `f32`,
/// `f16`, `i32` or `u32` (`Add`: `f32`, `f16`, `i32`).
///
/// ```
/// # use poplar::{DType, Graph, Target};
/// # codelets::link();
/// use popops::gather::ScatterReduction;
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let data = graph.add_variable(DType::F32, &[4, 5, 6], "data");
/// graph.map_linearly(&data, 6)?;
/// // 3 tuples of 2 indices, each updating a row of 6.
/// let idx = graph.add_variable(DType::I32, &[3, 2], "idx");
/// let upd = graph.add_variable(DType::F32, &[3, 6], "upd");
/// graph.map_linearly(&idx, 2)?;
/// graph.map_linearly(&upd, 6)?;
/// let mut prog = Vec::new();
/// let out = popops::scatter_nd(
///     &mut graph, &data, &idx, &upd, ScatterReduction::Max, &mut prog, "s",
/// )?;
/// assert_eq!(out.shape(), [4, 5, 6]);
/// # Ok::<(), popops::OpError>(())
/// ```
pub fn scatter_nd(
    graph: &mut Graph,
    data: &Tensor,
    indices: &Tensor,
    updates: &Tensor,
    reduction: ScatterReduction,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    let op = "scatter_nd";
    let nd = check_nd(op, data, indices, 0)?;
    check_nd_updates(op, data, indices, updates, nd.m)?;
    let codelet = codelet_name(&reduction.codelet("ScatterNd"), data.dtype())?;
    let out = graph.add_variable(data.dtype(), data.shape(), name);
    if data.num_elements() == 0 {
        return Ok(out);
    }
    map_like(graph, &out, data, op)?;
    prog.push(Program::copy(data, &out));
    if nd.n == 0 {
        return Ok(out);
    }
    let idx = normalise_nd(graph, data, indices, &nd, (op, name), prog)?;
    let table = out.reshape(&[nd.rows, nd.len])?;
    let upd = updates.reshape(&[nd.n * nd.len])?;
    let cs = graph.add_compute_set(&format!("{name}/{op}"));
    for (tile, r) in row_pieces(graph, &table, op)? {
        let v = graph.add_vertex(cs, &codelet)?;
        graph.connect(v, "indices", &idx)?;
        graph.connect(v, "updates", &upd)?;
        graph.connect(v, "a", &table.slice(r.clone())?)?;
        graph.set_vertex_state(v, "row_len", nd.len as u32)?;
        graph.set_vertex_state(v, "first", r.start as u32)?;
        graph.set_tile_mapping(v, tile)?;
    }
    prog.push(Program::execute(cs));
    Ok(out)
}

/// Fails unless `updates` is of `data`'s type and of shape `indices.shape[..-1] ++
/// data.shape[m..]`, naming the first axis that differs.
fn check_nd_updates(
    op: &str,
    data: &Tensor,
    indices: &Tensor,
    updates: &Tensor,
    m: usize,
) -> Result<(), OpError> {
    if updates.dtype() != data.dtype() {
        return Err(dtype_err(
            op,
            "updates",
            updates.dtype(),
            &format!("must be {}, the type of 'data'", data.dtype()),
        ));
    }
    let q = indices.rank();
    let mut want = indices.shape()[..q - 1].to_vec();
    want.extend_from_slice(&data.shape()[m..]);
    let us = updates.shape();
    if us.len() != want.len() {
        return Err(shape_err(
            op,
            format!(
                "'updates' {us:?} must have the shape {want:?} ('indices'.shape[..-1] ++ \
                 'data'.shape[{m}..]), of rank {}",
                want.len()
            ),
        ));
    }
    if let Some(d) = (0..want.len()).find(|&d| us[d] != want[d]) {
        return Err(OpError::Axis {
            op: op.to_string(),
            tensor: "'updates'".to_string(),
            axis: d,
            rank: us.len(),
            reason: format!(
                "is {} but must be {} (the shape {want:?} = 'indices'.shape[..-1] ++ \
                 'data'.shape[{m}..])",
                us[d], want[d]
            ),
        });
    }
    Ok(())
}

/// Writes the one-hot encoding of the device `indices` (a vector of `n`, `i32` or `u32`) to
/// `encoded` (`[n, depth]` of `f32`, `f16` or `i32`; poplibs' `encodeOneHot`): row `i` is
/// zeros with a 1 at column `indices[i]`, or all zeros when the index is outside `[0,
/// depth)` (poplibs' `MASKED_LABEL_CODE` among them). One `EncodeOneHot<I,T>` vertex per
/// worker piece of `encoded`'s rows, on the tile of the row's first element (compute set
/// `"{name}/encode_one_hot"`).
///
/// ```
/// # use poplar::{DType, Graph, Target};
/// # codelets::link();
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let idx = graph.add_variable(DType::U32, &[8], "idx");
/// let enc = graph.add_variable(DType::F32, &[8, 10], "enc");
/// graph.map_linearly(&idx, 4)?;
/// graph.map_linearly(&enc, 40)?;
/// let mut prog = Vec::new();
/// popops::encode_one_hot(&mut graph, &idx, &enc, &mut prog, "one_hot")?;
/// assert_eq!(prog.len(), 1);
/// # Ok::<(), popops::OpError>(())
/// ```
pub fn encode_one_hot(
    graph: &mut Graph,
    indices: &Tensor,
    encoded: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(), OpError> {
    let op = "encode_one_hot";
    check_index_type(op, "indices", indices)?;
    if indices.rank() != 1 || encoded.rank() != 2 || encoded.shape()[0] != indices.shape()[0] {
        return Err(shape_err(
            op,
            format!(
                "'indices' {:?} must be a vector of n and 'encoded' {:?} a matrix of n rows",
                indices.shape(),
                encoded.shape()
            ),
        ));
    }
    if !matches!(encoded.dtype(), DType::F32 | DType::F16 | DType::I32) {
        return Err(dtype_err(op, "encoded", encoded.dtype(), "f32, f16 or i32"));
    }
    codelets::link();
    let codelet = format!(
        "EncodeOneHot<{},{}>",
        indices.dtype().poplar_name(),
        encoded.dtype().poplar_name()
    );
    if lookup(&codelet).is_none() {
        return Err(OpError::Unsupported { codelet });
    }
    let fields = [("indices", indices), ("out", encoded)];
    let state = ("depth", encoded.shape()[1] as u32);
    prog.push(row_vertices(
        graph, &codelet, &fields, encoded, state, op, name,
    )?);
    Ok(())
}

/// A new `[n, depth]` tensor of `dtype` holding the one-hot encoding of `indices` (see
/// [`encode_one_hot`]), row `i` on the tile of `indices[i]`.
///
/// ```
/// # use poplar::{DType, Graph, Target};
/// # codelets::link();
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let idx = graph.add_variable(DType::I32, &[5], "idx");
/// graph.map_linearly(&idx, 2)?;
/// let mut prog = Vec::new();
/// let enc = popops::one_hot(&mut graph, &idx, 7, DType::F16, &mut prog, "labels")?;
/// assert_eq!(enc.shape(), [5, 7]);
/// # Ok::<(), popops::OpError>(())
/// ```
pub fn one_hot(
    graph: &mut Graph,
    indices: &Tensor,
    depth: usize,
    dtype: DType,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    let op = "one_hot";
    check_index_type(op, "indices", indices)?;
    if indices.rank() != 1 {
        return Err(shape_err(
            op,
            format!("'indices' {:?} must be a vector", indices.shape()),
        ));
    }
    let n = indices.num_elements();
    let encoded = graph.add_variable(dtype, &[n, depth], name);
    if n == 0 || depth == 0 {
        return Ok(encoded);
    }
    for (tile, r) in mapped_regions(graph, indices, op)? {
        graph.set_tile_mapping(&encoded.slice(r)?, tile)?;
    }
    encode_one_hot(graph, indices, &encoded, prog, name)?;
    Ok(encoded)
}
