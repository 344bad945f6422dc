//! Fused element-wise expressions: [`map`] compiles an [`Expr`] into a
//! `Map<T>` vertex per worker piece of the output (`codelets::map`), so an expression of any
//! size costs one pass over the data, with no temporary tensors.
//!
//! ```
//! use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
//! use popops::expr::{_1, _2};
//!
//! codelets::link();
//! let mut graph = Graph::new(&Target::custom(4, 64 * 1024));
//! let x = graph.add_variable(DType::F32, &[2, 3], "x");
//! let b = graph.add_variable(DType::F32, &[3], "b"); // broadcast over the rows of x
//! graph.map_linearly(&x, 2)?;
//! graph.set_tile_mapping(&b, 0)?;
//! graph.set_initial_value(&x, &[0.0f32, 1.0, 2.0, -1.0, -2.0, 0.5])?;
//! graph.set_initial_value(&b, &[0.5f32, 0.0, -1.0])?;
//!
//! let mut prog = Vec::new();
//! let y = popops::map(&mut graph, &(_1 * 2.0 + _2).max(0.0), &[&x, &b], &mut prog, "relu")?;
//! graph.create_host_read("y", &y)?;
//! let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
//! let mut engine = Engine::new(&exe, EngineOptions::default())?;
//! engine.run(0)?;
//! assert_eq!(engine.read_tensor::<f32>("y")?, vec![0.5, 2.0, 3.0, 0.0, 0.0, 0.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **Broadcasting.** The inputs broadcast together as in numpy (shapes aligned from the last
//! axis; each pair of sizes equal or one of them 1); the output has the broadcast shape. An
//! input of one element is read once per vertex and broadcast by the codelet; any other
//! broadcast input is a view of the output's shape (its elements exchanged to each tile that
//! reads them).
//!
//! **Work split.** As poplibs' map: one vertex per worker piece of the output's tile mapping
//! ([`worker_pieces`]); [`map`] creates the output with the tile
//! mapping of the first input of the output's shape (or spread linearly over the tiles).
//!
//! **Cycles.** Each vertex gets an explicit estimate: for an expression that is a single
//! operation on inputs (`map(_1 + _2)`), poplibs' single-op vertex
//! ([`codelets::cycles::elementwise_op`]); otherwise the fused program's
//! ([`codelets::cycles::map`]), which counts the tree's operations.

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{ComputeSet, Graph, StateValue, Tensor, VertexRef};
use poplar_core::dtype::DType;

use crate::error::{Broadcast, OpError};
use crate::expr::{compile, Compiled, Expr};
use crate::pieces::worker_pieces;

/// Where a function adds its work: a sequence of programs (a new compute set, executed at the
/// end of the sequence) or a compute set of the caller's.
pub trait Sequence {
    /// The compute set to add vertices to.
    fn compute_set(&mut self, graph: &mut Graph, name: &str) -> ComputeSet;
}

impl Sequence for Vec<Program> {
    fn compute_set(&mut self, graph: &mut Graph, name: &str) -> ComputeSet {
        let cs = graph.add_compute_set(name);
        self.push(Program::execute(cs));
        cs
    }
}

impl Sequence for ComputeSet {
    fn compute_set(&mut self, _graph: &mut Graph, _name: &str) -> ComputeSet {
        *self
    }
}

/// A description of input `i` for messages: `input i ('var')`.
fn describe(graph: &Graph, t: &Tensor, i: usize) -> String {
    match t.element(0) {
        Some((var, _)) => format!("input {i} ('{}')", graph.var_name(var)),
        None => format!("input {i}"),
    }
}

/// The numpy broadcast of the shapes of `inputs`, or the typed error naming the first pair
/// that does not broadcast.
pub fn broadcast_shape(
    graph: &Graph,
    inputs: &[&Tensor],
    name: &str,
) -> Result<Vec<usize>, OpError> {
    let rank = inputs.iter().map(|t| t.rank()).max().unwrap_or(0);
    let mut shape = vec![1usize; rank];
    // Which input set each axis (for the message).
    let mut from = vec![None::<usize>; rank];
    for (i, t) in inputs.iter().enumerate() {
        let off = rank - t.rank();
        for (k, &s) in t.shape().iter().enumerate() {
            let axis = off + k;
            if s == shape[axis] || s == 1 {
                continue;
            }
            if shape[axis] == 1 {
                shape[axis] = s;
                from[axis] = Some(i);
                continue;
            }
            let j = from[axis].unwrap_or(0);
            return Err(OpError::Broadcast(Box::new(Broadcast {
                op: name.to_string(),
                tensor: describe(graph, t, i),
                shape: t.shape().to_vec(),
                other: describe(graph, inputs[j], j),
                other_shape: inputs[j].shape().to_vec(),
                axis,
                size: s,
                other_size: shape[axis],
            })));
        }
    }
    Ok(shape)
}

/// `t` as a view of `shape` (numpy broadcasting; `shape` is a broadcast of `t`'s).
fn broadcast_to(t: &Tensor, shape: &[usize]) -> Result<Tensor, OpError> {
    let mut v = t.clone();
    while v.rank() < shape.len() {
        v = v.expand(0)?;
    }
    for (axis, &s) in shape.iter().enumerate() {
        if v.shape()[axis] == 1 && s != 1 {
            v = v.broadcast(s, axis)?;
        }
    }
    Ok(v)
}

/// Adds the vertices of `compiled` writing `out` (already of the broadcast shape) in `cs`.
fn add_vertices(
    graph: &mut Graph,
    compiled: &Compiled,
    inputs: &[&Tensor],
    out: &Tensor,
    in_place: bool,
    cs: ComputeSet,
) -> Result<Vec<VertexRef>, OpError> {
    let n = out.num_elements();
    let dtype = out.dtype();
    let codelet = crate::pieces::codelet_name(if in_place { "MapInPlace" } else { "Map" }, dtype)?;
    // Each read input as the flat view the pieces slice (`None`: one element, broadcast by
    // the codelet).
    let mut views: Vec<Option<(usize, Tensor, bool)>> = Vec::new();
    for (i, t) in inputs.iter().enumerate() {
        let Some((ty, idx)) = compiled.slots[i] else {
            views.push(None);
            continue;
        };
        let _ = (ty, idx);
        let whole = t.num_elements() == 1 && n != 1;
        let v = if whole {
            t.flatten()
        } else {
            broadcast_to(t, out.shape())?.flatten()
        };
        views.push(Some((i, v, whole)));
    }
    let words = compiled.program.encode();
    let flat_out = out.flatten();
    let mut vertices = Vec::new();
    let pieces = if n == 0 {
        Vec::new()
    } else {
        worker_pieces(graph, out, &codelet)?
    };
    for (tile, range) in pieces {
        let v = graph.add_vertex(cs, &codelet)?;
        graph.set_vertex_state(v, "prog", StateValue::vector(&words))?;
        let mut lists: [Vec<Tensor>; 7] = Default::default();
        for (i, t, whole) in views.iter().flatten() {
            let (ty, _) = compiled.slots[*i].expect("a read input has a slot");
            let piece = if *whole {
                t.clone()
            } else {
                t.slice(range.clone())?
            };
            lists[codelets::map::type_code(ty) as usize].push(piece);
        }
        for (k, list) in lists.iter().enumerate() {
            let field = [
                "in_f32", "in_f16", "in_i32", "in_u32", "in_u8", "in_u16", "in_bool",
            ][k];
            graph.connect_list(v, field, list)?;
        }
        graph.connect(v, "out", &flat_out.slice(range.clone())?)?;
        graph.set_tile_mapping(v, tile)?;
        let len = range.len() as u64;
        let cycles = match compiled.single_op {
            Some((op, ty)) => codelets::cycles::elementwise_op(op, ty, in_place).cycles(len),
            None => codelets::cycles::map(&compiled.program, len),
        };
        graph.set_cycle_estimate(v, cycles)?;
        vertices.push(v);
    }
    Ok(vertices)
}

fn dtypes(inputs: &[&Tensor]) -> Vec<DType> {
    inputs.iter().map(|t| t.dtype()).collect()
}

/// Evaluates `expr` element-wise over `inputs` (placeholder `_k` is `inputs[k - 1]`, the
/// shapes broadcast together) into a new tensor of the broadcast shape, with one `Map` vertex
/// per worker piece of it, added to `prog` (see [`Sequence`]). The new tensor is named
/// `name`, mapped as the first input of its shape (else linearly over the tiles).
pub fn map(
    graph: &mut Graph,
    expr: &Expr,
    inputs: &[&Tensor],
    prog: &mut impl Sequence,
    name: &str,
) -> Result<Tensor, OpError> {
    codelets::link();
    let compiled = compile(expr, &dtypes(inputs), false, name)?;
    let shape = broadcast_shape(graph, inputs, name)?;
    let out = graph.add_variable(compiled.dtype, &shape, name);
    let like = inputs
        .iter()
        .find(|t| t.shape() == shape.as_slice() && graph.tile_mapping(t).is_ok());
    let mut mapped = false;
    if let Some(like) = like {
        let mapping = graph.tile_mapping(like)?;
        let covered: usize = mapping.iter().flatten().map(|r| r.len()).sum();
        if covered == out.num_elements() {
            let flat = out.flatten();
            for (tile, ranges) in mapping.into_iter().enumerate() {
                for r in ranges {
                    graph.set_tile_mapping(&flat.slice(r)?, tile as u32)?;
                }
            }
            mapped = true;
        }
    }
    if !mapped {
        let grain = codelets::cycles::data_path_width(compiled.dtype) as usize;
        graph.map_linearly(&out, grain)?;
    }
    let cs = prog.compute_set(graph, name);
    add_vertices(graph, &compiled, inputs, &out, false, cs)?;
    Ok(out)
}

/// As [`map`], writing the existing tensor `out` (of the broadcast shape and the
/// expression's type) instead of a new one.
pub fn map_into(
    graph: &mut Graph,
    expr: &Expr,
    inputs: &[&Tensor],
    out: &Tensor,
    prog: &mut impl Sequence,
    name: &str,
) -> Result<Vec<VertexRef>, OpError> {
    codelets::link();
    let compiled = compile(expr, &dtypes(inputs), false, name)?;
    check_out(graph, &compiled, inputs, out, name, "the output")?;
    let cs = prog.compute_set(graph, name);
    add_vertices(graph, &compiled, inputs, out, false, cs)
}

/// Evaluates `expr` element-wise and writes the result into `inputs[0]` (which `_1` reads):
/// `inputs[0]` must have the broadcast shape of all the inputs and the expression's type.
pub fn map_in_place(
    graph: &mut Graph,
    expr: &Expr,
    inputs: &[&Tensor],
    prog: &mut impl Sequence,
    name: &str,
) -> Result<Vec<VertexRef>, OpError> {
    codelets::link();
    let Some(&out) = inputs.first() else {
        return Err(OpError::Expr {
            op: name.to_string(),
            reason: "map_in_place needs the tensor to write as input 0".into(),
        });
    };
    let compiled = compile(expr, &dtypes(inputs), true, name)?;
    check_out(
        graph,
        &compiled,
        inputs,
        out,
        name,
        "input 0 (written in place)",
    )?;
    let cs = prog.compute_set(graph, name);
    add_vertices(graph, &compiled, inputs, out, true, cs)
}

fn check_out(
    graph: &Graph,
    compiled: &Compiled,
    inputs: &[&Tensor],
    out: &Tensor,
    name: &str,
    what: &str,
) -> Result<(), OpError> {
    if out.dtype() != compiled.dtype {
        return Err(OpError::DType {
            op: name.to_string(),
            what: what.to_string(),
            got: out.dtype(),
            expected: format!("the expression's type, {}", compiled.dtype),
        });
    }
    let shape = broadcast_shape(graph, inputs, name)?;
    if out.shape() != shape.as_slice() {
        let axis = (0..shape.len().max(out.rank()))
            .find(|&k| out.shape().get(k) != shape.get(k))
            .unwrap_or(0);
        return Err(OpError::Broadcast(Box::new(Broadcast {
            op: name.to_string(),
            tensor: what.to_string(),
            shape: out.shape().to_vec(),
            other: "the broadcast of the inputs".into(),
            other_shape: shape.clone(),
            axis,
            size: out.shape().get(axis).copied().unwrap_or(0),
            other_size: shape.get(axis).copied().unwrap_or(0),
        })));
    }
    Ok(())
}
