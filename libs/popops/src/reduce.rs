//! Whole-tensor reductions and the dot product, in two stages over the worker pieces.

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{Graph, Tensor};
use poplar_core::dtype::DType;
use poplar_core::target::TileId;

use crate::error::{shape_err, OpError};
use crate::pieces::{codelet_name, mapped_regions, worker_pieces};
use crate::Operation;
use codelets::family::ReduceOp;

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

/// The two-stage pattern of [`reduce_all`] and [`dot`]: a `first` vertex per worker piece
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

/// A program that reduces every element of `input` into the single element `out` with `op`
/// (the whole-tensor reduction, named `reduce` before [`crate::reduce()`] over axes took the
/// name).
///
/// `Add`, `Max` and `Min` run as below; the other operations (`Mul`, the logical ones,
/// `SquareAdd`) as [`crate::reduce_with_output`] over every axis.
///
/// Two stages: compute set `"{name}/partials"` runs one `Reduce*<T>` vertex per worker piece
/// of `input` (each tile's elements split between its workers, [`worker_pieces`]), each
/// writing one element of a new variable `"{name}/partials"` on its tile; compute set
/// `"{name}/final"` reduces those partials on the tile of `out`. If `input` is one piece, a
/// single compute set writes `out` directly. Float sums are therefore grouped by piece (not
/// strictly left to right over `input`).
pub fn reduce_all(
    graph: &mut Graph,
    op: Operation,
    input: &Tensor,
    out: &Tensor,
    name: &str,
) -> Result<Program, OpError> {
    let op = match op {
        Operation::Add => ReduceOp::Sum,
        Operation::Max => ReduceOp::Max,
        Operation::Min => ReduceOp::Min,
        other => {
            let axes: Vec<usize> = (0..input.rank()).collect();
            let mut prog = Vec::new();
            let scalar = out.reshape(&[])?;
            crate::reduce_with_output(graph, input, &scalar, &axes, other, &mut prog, name)?;
            return Ok(Program::seq(prog));
        }
    };
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
/// tile of `out`, as in [`reduce_all`].
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

/// `reduce_all(graph, Operation::Add, input, out, name)`.
pub fn reduce_sum(
    graph: &mut Graph,
    input: &Tensor,
    out: &Tensor,
    name: &str,
) -> Result<Program, OpError> {
    reduce_all(graph, Operation::Add, input, out, name)
}
