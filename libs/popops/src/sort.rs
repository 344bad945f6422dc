//! Sorting along an axis ([`sort`], [`sort_with_indices`], [`argsort`]; poplibs' `Sort.hpp`)
//! and the `k` largest or smallest elements with their positions ([`top_k`]; poplibs'
//! `TopK.hpp`, ONNX `TopK` with its `axis`).
//!
//! **Order.** Stable (equal elements keep their order of position, so ties go by index),
//! ascending for the sorts, descending for the `k` largest; NaN after every number in both
//! directions (so `top_k` of the largest takes NaNs only when fewer than `k` numbers are
//! left); `-0` and `+0` are equal. Types `f32`, `f16` (by its exact value), `i32`, `u32`.
//!
//! **How.** The axis is moved last (a view, [`Tensor::dim_shuffle`]), so that a row is the
//! line along it; the results are new tensors returned as views with the axis back in its
//! place. Two paths, with the same results (the stable order), chosen by the row length:
//!
//! - *One tile*, when sorting a row on one tile (the row, its positions, its sorted values
//!   and the row received there: `n · (3 · size + 4)` bytes) takes at most an eighth of a
//!   tile's memory, or when every row is held by one tile. Each row is sorted on the tile of its first element: compute set
//!   `"{name}/argsort"` (one `ArgSort<T>` vertex per worker piece of the rows, poplibs'
//!   `HeapSortVertexKV` estimate per row) writes the positions, compute set `"{name}/values"`
//!   (`GatherElements<T>`) the values at them, both with rows on the tiles of the input's
//!   rows.
//! - *Split over tiles*, for longer rows when some row spans several tiles: the row is cut into equal blocks over the tiles it
//!   spans (a power of two of them, up to a power of two of blocks a tile for its workers),
//!   each block sorted on its tile by key and row position (`"{name}/split/blocks"`, runs
//!   merged on the tile in `"{name}/split/block_merge{l}"`), then a bitonic network over the
//!   blocks, `log₂B · (log₂B + 1) / 2` rounds of one exchange of a block and a
//!   `MergeSplit<T>` keeping the lower or upper block (`"{name}/split/merge{i}"`), comparing
//!   (key, position) with padding and NaN last, so the result is the stable sort exactly and
//!   no tile holds more than a few blocks. Results are on the blocks' tiles. `top_k` with a
//!   `k` within a block merges the blocks' first `k` up a tree instead (`log₂B` rounds of
//!   `k`, `"{name}/split/top{i}"`, the result on the row's first tile); a larger `k` sorts
//!   the whole row and keeps the first `k`. See `docs/popops-slices.md` for the costs.
//!
//! ```
//! use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
//!
//! codelets::link();
//! let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
//! let t = graph.add_variable(DType::F32, &[2, 4], "t");
//! graph.map_linearly(&t, 4)?;
//! graph.set_initial_value(&t, &[3.0f32, f32::NAN, 1.0, 3.0, -1.0, 0.5, 2.0, -4.0])?;
//! let mut prog = Vec::new();
//! let (v, i) = popops::top_k(&mut graph, &t, 1, 2, true, &mut prog, "top2")?;
//! graph.create_host_read("v", &v)?;
//! graph.create_host_read("i", &i)?;
//! let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
//! let mut engine = Engine::new(&exe, EngineOptions::default())?;
//! engine.run(0)?;
//! assert_eq!(engine.read_tensor::<f32>("v")?, [3.0, 3.0, 2.0, 0.5]);
//! assert_eq!(engine.read_tensor::<u32>("i")?, [0, 3, 2, 1]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A row of 6,000 over 8 tiles of 64 KiB takes the split path (8 tiles of blocks, merged in
//! rounds); the result is the same stable sort:
//!
//! ```
//! use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
//!
//! codelets::link();
//! let mut graph = Graph::new(&Target::custom(8, 64 * 1024));
//! let t = graph.add_variable(DType::I32, &[6000], "t");
//! graph.map_linearly(&t, 1)?;
//! let data: Vec<i32> = (0..6000).map(|i| (i * 7919) % 100).collect();
//! graph.set_initial_value(&t, &data)?;
//! let mut prog = Vec::new();
//! let (v, i) = popops::sort_with_indices(&mut graph, &t, 0, &mut prog, "s")?;
//! graph.create_host_read("v", &v)?;
//! graph.create_host_read("i", &i)?;
//! let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
//! assert!(exe.computes.values().any(|c| c.name == "s/split/merge0"));
//! let mut engine = Engine::new(&exe, EngineOptions::default())?;
//! engine.run(0)?;
//! let mut order: Vec<u32> = (0..6000).collect();
//! order.sort_by_key(|&j| data[j as usize]); // stable
//! assert_eq!(engine.read_tensor::<u32>("i")?, order);
//! let sorted: Vec<i32> = order.iter().map(|&j| data[j as usize]).collect();
//! assert_eq!(engine.read_tensor::<i32>("v")?, sorted);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use codelets::sort::cost;
use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{Graph, Tensor};
use poplar_core::dtype::DType;

mod split;

use crate::error::{check_axis, dtype_err, shape_err};
use crate::gather::row_pieces;
use crate::{codelet_name, OpError};

/// The first `k` of each line of `t` along `axis` in order, and their positions: `t` is
/// checked, the axis moved last for [`sorted_rows`], and the results' axis moved back.
#[allow(clippy::too_many_arguments)]
fn sorted(
    graph: &mut Graph,
    t: &Tensor,
    axis: usize,
    k: usize,
    descending: bool,
    op: &str,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(Tensor, Tensor), OpError> {
    check_axis(op, "t", t.rank(), axis)?;
    if !matches!(t.dtype(), DType::F32 | DType::F16 | DType::I32 | DType::U32) {
        return Err(dtype_err(
            op,
            "t",
            t.dtype(),
            "sorts take f32, f16, i32 or u32",
        ));
    }
    let len = t.shape()[axis];
    if k > len {
        return Err(shape_err(
            op,
            format!("k = {k} is above the length {len} of axis {axis} of 't'"),
        ));
    }
    let last = t.rank() - 1;
    if axis == last {
        return sorted_rows(graph, t, k, descending, op, prog, name);
    }
    // perm: the other axes in order, then `axis`; back: where each axis went.
    let mut perm: Vec<usize> = (0..t.rank()).filter(|&d| d != axis).collect();
    perm.push(axis);
    let mut back = vec![0; perm.len()];
    for (pos, &d) in perm.iter().enumerate() {
        back[d] = pos;
    }
    let (v, i) = sorted_rows(graph, &t.dim_shuffle(&perm)?, k, descending, op, prog, name)?;
    Ok((v.dim_shuffle(&back)?, i.dim_shuffle(&back)?))
}

/// The first `k` of each row (the last axis) of the checked `t` in order, and their
/// positions.
fn sorted_rows(
    graph: &mut Graph,
    t: &Tensor,
    k: usize,
    descending: bool,
    op: &str,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(Tensor, Tensor), OpError> {
    let len = *t.shape().last().expect("checked: rank ≥ 1");
    let arg = codelet_name("ArgSort", t.dtype())?;
    let gather = codelet_name("GatherElements", t.dtype())?;
    let rows = t.num_elements().checked_div(len).unwrap_or(0);
    let mut shape = t.shape().to_vec();
    *shape.last_mut().expect("rank ≥ 1") = k;
    let rows = if len == 0 {
        shape[..shape.len() - 1].iter().product()
    } else {
        rows
    };
    let idx = graph.add_variable(DType::U32, &shape, &format!("{name}/indices"));
    let values = graph.add_variable(t.dtype(), &shape, name);
    if rows * k == 0 {
        return Ok((values, idx));
    }
    let tv = t.reshape(&[rows, len])?;
    let iv = idx.reshape(&[rows, k])?;
    let vv = values.reshape(&[rows, k])?;
    if split::wanted(graph, &tv, op)? {
        split::sorted_rows(graph, &tv, &vv, &iv, descending, op, prog, name)?;
        return Ok((values, idx));
    }
    let pieces = row_pieces(graph, &tv, op)?;
    let cs_arg = graph.add_compute_set(&format!("{name}/argsort"));
    let cs_val = graph.add_compute_set(&format!("{name}/values"));
    for (tile, r) in pieces {
        graph.set_tile_mapping(&iv.slice(r.clone())?, tile)?;
        graph.set_tile_mapping(&vv.slice(r.clone())?, tile)?;
        let v = graph.add_vertex(cs_arg, &arg)?;
        graph.connect(v, "input", &tv.slice(r.clone())?)?;
        graph.connect(v, "out", &iv.slice(r.clone())?)?;
        graph.set_vertex_state(v, "row_len", len as u32)?;
        graph.set_vertex_state(v, "k", k as u32)?;
        graph.set_vertex_state(v, "descending", descending)?;
        graph.set_cycle_estimate(v, cost::arg_sort(r.len() as u64, len as u64))?;
        graph.set_tile_mapping(v, tile)?;
        let g = graph.add_vertex(cs_val, &gather)?;
        graph.connect(g, "indices", &iv.slice(r.clone())?)?;
        graph.connect(g, "input", &tv.slice(r.clone())?)?;
        graph.connect(g, "out", &vv.slice(r)?)?;
        graph.set_vertex_state(g, "row_len", len as u32)?;
        graph.set_tile_mapping(g, tile)?;
    }
    prog.push(Program::execute(cs_arg));
    prog.push(Program::execute(cs_val));
    Ok((values, idx))
}

/// `t` sorted along `axis`, ascending (poplibs' `sort(graph, t, dim, prog)`): a tensor of
/// `t`'s shape (see the [module notes](self) for the order and layout).
///
/// ```
/// # use poplar::{DType, Graph, Target};
/// # codelets::link();
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let t = graph.add_variable(DType::I32, &[3, 8], "t");
/// graph.map_linearly(&t, 8)?;
/// let mut prog = Vec::new();
/// let s = popops::sort(&mut graph, &t, 1, &mut prog, "s")?;
/// assert_eq!(s.shape(), [3, 8]);
/// # Ok::<(), popops::OpError>(())
/// ```
pub fn sort(
    graph: &mut Graph,
    t: &Tensor,
    axis: usize,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    let len = t.shape().get(axis).copied().unwrap_or(0);
    Ok(sorted(graph, t, axis, len, false, "sort", prog, name)?.0)
}

/// `t` sorted along `axis`, ascending, and the `u32` position along the axis of each sorted
/// element (poplibs' `sortKeyValue` with the positions as values).
///
/// ```
/// # use poplar::{DType, Graph, Target};
/// # codelets::link();
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let t = graph.add_variable(DType::F32, &[4, 6], "t");
/// graph.map_linearly(&t, 6)?;
/// let mut prog = Vec::new();
/// let (values, positions) = popops::sort_with_indices(&mut graph, &t, 1, &mut prog, "s")?;
/// assert_eq!((values.shape(), positions.dtype()), (&[4, 6][..], DType::U32));
/// # Ok::<(), popops::OpError>(())
/// ```
pub fn sort_with_indices(
    graph: &mut Graph,
    t: &Tensor,
    axis: usize,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(Tensor, Tensor), OpError> {
    let len = t.shape().get(axis).copied().unwrap_or(0);
    sorted(graph, t, axis, len, false, "sort_with_indices", prog, name)
}

/// The `u32` positions that sort each line of `t` along `axis` ascending (numpy's
/// `argsort(t, axis, kind="stable")`). It adds the values' compute set too (see
/// [`sort_with_indices`]), whose result it drops.
///
/// ```
/// # use poplar::{DType, Graph, Target};
/// # codelets::link();
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let t = graph.add_variable(DType::U32, &[10], "t");
/// graph.map_linearly(&t, 10)?;
/// let mut prog = Vec::new();
/// let order = popops::argsort(&mut graph, &t, 0, &mut prog, "order")?;
/// assert_eq!(order.shape(), [10]);
/// # Ok::<(), popops::OpError>(())
/// ```
pub fn argsort(
    graph: &mut Graph,
    t: &Tensor,
    axis: usize,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    let len = t.shape().get(axis).copied().unwrap_or(0);
    Ok(sorted(graph, t, axis, len, false, "argsort", prog, name)?.1)
}

/// The `k` largest (`largest`) or smallest elements of each line of `t` along `axis`, in
/// that order, and their `u32` positions along it (poplibs' `topKWithPermutation` with a
/// stable sort order; ONNX `TopK` with `axis` and `sorted = 1`): two tensors of `t`'s shape
/// with `k` as the length of `axis`. Ties go to the lower position; NaN comes after every number.
///
/// ```
/// # use poplar::{DType, Graph, Target};
/// # codelets::link();
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let t = graph.add_variable(DType::F32, &[5, 100], "t");
/// graph.map_linearly(&t, 100)?;
/// let mut prog = Vec::new();
/// let (v, i) = popops::top_k(&mut graph, &t, 1, 3, false, &mut prog, "smallest")?;
/// assert_eq!((v.shape(), i.shape()), (&[5, 3][..], &[5, 3][..]));
/// # Ok::<(), popops::OpError>(())
/// ```
pub fn top_k(
    graph: &mut Graph,
    t: &Tensor,
    axis: usize,
    k: usize,
    largest: bool,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(Tensor, Tensor), OpError> {
    sorted(graph, t, axis, k, largest, "top_k", prog, name)
}
