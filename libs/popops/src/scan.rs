//! Scans and index reductions along one axis: [`cumsum`], [`arg_max`], [`arg_min`].
//!
//! The input is read as *lines* along `axis` (every index of the other axes gives one line).
//! Each line is worked whole, left to right, by one worker on the tile that holds the line's
//! first element (the compiler exchanges the rest of the line in and the results out): the
//! order of a float cumulative sum is exactly sequential, so its bits do not depend on the
//! mapping, threads or ISA. A tile's lines are split between its workers in equal runs.
//! Codelets: `CumSum<T>`, `ArgMax<T>`, `ArgMin<T>` of `codelets::scan`, with our cycle
//! estimates (poplibs has no scan vertex).

use std::collections::BTreeMap;

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{Graph, Tensor};
use poplar_core::dtype::DType;
use poplar_core::target::TileId;

use crate::error::OpError;
use crate::pieces::{codelet_name, mapped_regions};
use crate::reduction::{check_axes, tensor_name};

/// `t` as `[lines, n]` along `axis` (the other axes in order, then `axis`).
fn lines_view(t: &Tensor, axis: usize) -> Result<Tensor, OpError> {
    let mut perm: Vec<usize> = (0..t.rank()).filter(|&d| d != axis).collect();
    perm.push(axis);
    let lines = perm[..perm.len() - 1]
        .iter()
        .map(|&d| t.shape()[d])
        .product();
    let n = t.shape()[axis];
    Ok(t.dim_shuffle(&perm)?.reshape(&[lines, n])?)
}

/// The lines of `view` (`[lines, n]`, `n > 0`) grouped by the tile of their first element,
/// in tile order, each tile's lines ascending.
fn lines_by_tile(
    graph: &Graph,
    view: &Tensor,
    name: &str,
) -> Result<BTreeMap<TileId, Vec<usize>>, OpError> {
    let n = view.shape()[1];
    let mut regions = mapped_regions(graph, view, name)?;
    regions.sort_by_key(|r| r.1.start);
    let mut out: BTreeMap<TileId, Vec<usize>> = BTreeMap::new();
    for l in 0..view.shape()[0] {
        let f = l * n;
        let k = regions.partition_point(|r| r.1.end <= f);
        out.entry(regions[k].0).or_default().push(l);
    }
    Ok(out)
}

/// One vertex per worker run of each tile's lines: `codelet` over `input` lines (of `view`)
/// into the matching rows of `out` (`[lines, m]`).
fn add_line_vertices(
    graph: &mut Graph,
    codelet: &str,
    view: &Tensor,
    out: &Tensor,
    tiles: BTreeMap<TileId, Vec<usize>>,
    state: &[(&str, poplar_compiler::graph::StateValue)],
    name: &str,
) -> Result<Program, OpError> {
    let cs = graph.add_compute_set(name);
    let workers = graph.target().workers_per_tile as usize;
    for (tile, lines) in tiles {
        let per = lines.len().div_ceil(workers.max(1));
        for chunk in lines.chunks(per.max(1)) {
            // Runs of consecutive lines.
            let (mut ins, mut outs) = (Vec::new(), Vec::new());
            let mut i = 0;
            while i < chunk.len() {
                let mut j = i + 1;
                while j < chunk.len() && chunk[j] == chunk[j - 1] + 1 {
                    j += 1;
                }
                ins.push(view.slice(chunk[i]..chunk[j - 1] + 1)?.flatten());
                outs.push(out.slice(chunk[i]..chunk[j - 1] + 1)?.flatten());
                i = j;
            }
            let v = graph.add_vertex(cs, codelet)?;
            graph.connect(v, "input", &Tensor::concat(&ins)?)?;
            graph.connect(v, "out", &Tensor::concat(&outs)?)?;
            for (field, value) in state {
                graph.set_vertex_state(v, field, value.clone())?;
            }
            graph.set_tile_mapping(v, tile)?;
        }
    }
    Ok(Program::execute(cs))
}

fn dtype_check(graph: &Graph, t: &Tensor, ok: &[DType], op: &str) -> Result<(), OpError> {
    if ok.contains(&t.dtype()) {
        return Ok(());
    }
    Err(OpError::DType {
        op: op.to_string(),
        what: format!("input {}", tensor_name(graph, t)),
        got: t.dtype(),
        expected: format!(
            "one of {}",
            ok.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// The cumulative sum of `input` along `axis` into a new tensor of its shape and type, mapped
/// as `input` (`f32`, `i32`, `u32`; integers wrap): `out[…, j, …] = Σ_{k ≤ j} x[…, k, …]`,
/// or with `exclusive`, `Σ_{k < j}` (0 first). Each line is summed strictly left to right
/// (module notes). The program is added to `prog`.
pub fn cumsum(
    graph: &mut Graph,
    input: &Tensor,
    axis: usize,
    exclusive: bool,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    check_axes(graph, input, &[axis], name)?;
    dtype_check(graph, input, &[DType::F32, DType::I32, DType::U32], name)?;
    let codelet = codelet_name("CumSum", input.dtype())?;
    let out = graph.add_variable(input.dtype(), input.shape(), name);
    if input.num_elements() == 0 {
        return Ok(out);
    }
    let mapping = graph.tile_mapping(input)?;
    let flat = out.flatten();
    for (tile, ranges) in mapping.into_iter().enumerate() {
        for r in ranges {
            graph.set_tile_mapping(&flat.slice(r)?, tile as u32)?;
        }
    }
    mapped_regions(graph, &out, name)?;
    let view = lines_view(input, axis)?;
    let out_view = lines_view(&out, axis)?;
    let tiles = lines_by_tile(graph, &out_view, name)?;
    let n = input.shape()[axis] as u32;
    let state = [("len", n.into()), ("exclusive", exclusive.into())];
    prog.push(add_line_vertices(
        graph, &codelet, &view, &out_view, tiles, &state, name,
    )?);
    Ok(out)
}

fn arg(
    graph: &mut Graph,
    stem: &str,
    input: &Tensor,
    axis: usize,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    check_axes(graph, input, &[axis], name)?;
    dtype_check(
        graph,
        input,
        &[DType::F32, DType::F16, DType::I32, DType::U32],
        name,
    )?;
    let codelet = codelet_name(stem, input.dtype())?;
    let mut shape = input.shape().to_vec();
    let n = shape.remove(axis);
    let out = graph.add_variable(DType::U32, &shape, name);
    if out.num_elements() == 0 {
        return Ok(out);
    }
    if n == 0 {
        return Err(OpError::Axis {
            op: name.to_string(),
            tensor: tensor_name(graph, input),
            axis,
            rank: input.rank(),
            reason: "has size 0: an empty line has no index".to_string(),
        });
    }
    let view = lines_view(input, axis)?;
    let tiles = lines_by_tile(graph, &view, name)?;
    let flat = out.flatten();
    for (tile, lines) in &tiles {
        for &l in lines {
            graph.set_tile_mapping(&flat.slice(l..l + 1)?, *tile)?;
        }
    }
    let lines = view.shape()[0];
    let out_view = flat.reshape(&[lines, 1])?;
    prog.push(add_line_vertices(
        graph,
        &codelet,
        &view,
        &out_view,
        tiles,
        &[],
        name,
    )?);
    Ok(out)
}

/// The index (`u32`) along `axis` of the largest element of each line of `input` (`f32`,
/// `f16`, `i32`, `u32`), in a new tensor of `input`'s shape without `axis`, each element on
/// the tile of its line's first element. Ties give the lowest index; a NaN counts as larger
/// than every number, so a line with a NaN gives its first NaN (numpy's `argmax`). An axis
/// of size 0 is an [`OpError::Axis`] (unless there are no lines).
pub fn arg_max(
    graph: &mut Graph,
    input: &Tensor,
    axis: usize,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    arg(graph, "ArgMax", input, axis, prog, name)
}

/// As [`arg_max`] for the smallest element (ties: the lowest index; a NaN also counts as
/// smaller than every number, so the first NaN, as numpy's `argmin`).
pub fn arg_min(
    graph: &mut Graph,
    input: &Tensor,
    axis: usize,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    arg(graph, "ArgMin", input, axis, prog, name)
}
