//! Softmax and log-softmax along the last axis, in the numerically stable form (the row max
//! subtracted before `exp`), and their input gradients (poplibs' `SOFTMAX_STABLE`,
//! `nonLinearityInputGradient` with `SOFTMAX`).

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{Graph, Tensor};
use poplar_core::dtype::DType;
use popops::expr::{_1, _2, _3};
use popops::Operation;

use super::{check_float, check_like, down, shape_err, up, NnOpError};

/// Fails unless `t` is a float tensor of rank ≥ 1 whose last axis is not empty.
pub(crate) fn check_rows(op: &str, what: &str, t: &Tensor) -> Result<usize, NnOpError> {
    check_float(op, what, t)?;
    if t.rank() == 0 {
        return Err(shape_err(op, what, t, 0, "needs rank ≥ 1 (a last axis)"));
    }
    let last = t.rank() - 1;
    if t.shape()[last] == 0 {
        return Err(shape_err(op, what, t, last, "the last axis is empty"));
    }
    Ok(last)
}

/// `r` (the input's shape without its last axis) as `[.., 1]`, to broadcast along the rows.
pub(crate) fn as_column(r: &Tensor, full: &Tensor) -> Result<Tensor, NnOpError> {
    let mut shape = full.shape().to_vec();
    *shape.last_mut().expect("rank ≥ 1") = 1;
    Ok(r.reshape(&shape)?)
}

/// `op` over the last axis of `t` (rank ≥ 1) into `dtype`, as a column (`t`'s shape with a
/// last length of 1) that broadcasts against `t`'s rows.
pub(crate) fn row_column(
    graph: &mut Graph,
    t: &Tensor,
    dtype: DType,
    op: Operation,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, NnOpError> {
    let last = t.rank() - 1;
    let r = popops::reduce(graph, t, dtype, &[last], op, prog, name)?;
    as_column(&r, t)
}

/// The shifted exponentials `exp(x - max)` in f32 and their row sums (f32), with the row max
/// (of `x`'s type) as a column.
pub(crate) fn stable_exp(
    graph: &mut Graph,
    x: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(Tensor, Tensor, Tensor), NnOpError> {
    let dt = x.dtype();
    let m = row_column(graph, x, dt, Operation::Max, prog, &format!("{name}/max"))?;
    let e = popops::map(
        graph,
        &(up(_1, dt) - up(_2, dt)).exp(),
        &[x, &m],
        prog,
        &format!("{name}/exp"),
    )?;
    let s = row_column(
        graph,
        &e,
        DType::F32,
        Operation::Add,
        prog,
        &format!("{name}/sum"),
    )?;
    Ok((e, s, m))
}

/// `exp(x - max) / Σ exp(x - max)` along the last axis of `x` (`f32`/`f16`, rank ≥ 1): max
/// and exponentials in f32, the sum accumulated in f32, the result rounded once to `x`'s type
/// (poplibs' `nonLinearity` with `SOFTMAX_STABLE`). A row holding a NaN or `+inf` gives NaN;
/// `-inf` entries give 0 (a row of only `-inf` gives NaN).
///
/// ```
/// use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
///
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let x = graph.add_variable(DType::F32, &[2, 2], "x");
/// graph.map_linearly(&x, 2)?;
/// graph.set_initial_value(&x, &[0.0f32, 0.0, 1e4, 1e4])?;
/// let mut prog = Vec::new();
/// let y = popnn::ops::softmax(&mut graph, &x, &mut prog, "softmax")?;
/// graph.create_host_read("y", &y)?;
/// let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
/// let mut engine = Engine::new(&exe, EngineOptions::default())?;
/// engine.run(0)?;
/// assert_eq!(engine.read_tensor::<f32>("y")?, vec![0.5; 4]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn softmax(
    graph: &mut Graph,
    x: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, NnOpError> {
    check_rows(name, "x", x)?;
    let (e, s, _) = stable_exp(graph, x, prog, name)?;
    Ok(popops::map(
        graph,
        &down(_1 / _2, x.dtype()),
        &[&e, &s],
        prog,
        name,
    )?)
}

/// `x - max - log Σ exp(x - max)` along the last axis of `x` (`f32`/`f16`, rank ≥ 1), in
/// f32, rounded once (poplibs' `logSoftmax`). Same edge values as [`softmax`]; `-inf`
/// entries stay `-inf`.
///
/// ```
/// use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
///
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let x = graph.add_variable(DType::F32, &[1, 2], "x");
/// graph.map_linearly(&x, 2)?;
/// graph.set_initial_value(&x, &[-1e4f32, -1e4])?;
/// let mut prog = Vec::new();
/// let y = popnn::ops::log_softmax(&mut graph, &x, &mut prog, "lsm")?;
/// graph.create_host_read("y", &y)?;
/// let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
/// let mut engine = Engine::new(&exe, EngineOptions::default())?;
/// engine.run(0)?;
/// assert_eq!(engine.read_tensor::<f32>("y")?, vec![-std::f32::consts::LN_2; 2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn log_softmax(
    graph: &mut Graph,
    x: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, NnOpError> {
    check_rows(name, "x", x)?;
    let dt = x.dtype();
    let (_, s, m) = stable_exp(graph, x, prog, name)?;
    Ok(popops::map(
        graph,
        &down(up(_1, dt) - up(_2, dt) - _3.log(), dt),
        &[x, &m, &s],
        prog,
        name,
    )?)
}

/// The gradient of [`softmax`] w.r.t. its input from its output `y` and the output gradient
/// `dy` (same type and shape): `y · (dy - Σ dy·y)` along the last axis, in f32 (poplibs'
/// `nonLinearityInputGradient` with `SOFTMAX`, which also takes the output).
///
/// ```
/// use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
///
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let y = graph.add_variable(DType::F32, &[1, 2], "y");
/// let dy = graph.add_variable(DType::F32, &[1, 2], "dy");
/// graph.map_linearly(&y, 2)?;
/// graph.map_linearly(&dy, 2)?;
/// graph.set_initial_value(&y, &[0.5f32, 0.5])?;
/// graph.set_initial_value(&dy, &[1.0f32, 0.0])?;
/// let mut prog = Vec::new();
/// let dx = popnn::ops::softmax_input_gradient(&mut graph, &y, &dy, &mut prog, "dx")?;
/// graph.create_host_read("dx", &dx)?;
/// let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
/// let mut engine = Engine::new(&exe, EngineOptions::default())?;
/// engine.run(0)?;
/// assert_eq!(engine.read_tensor::<f32>("dx")?, vec![0.25, -0.25]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn softmax_input_gradient(
    graph: &mut Graph,
    y: &Tensor,
    dy: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, NnOpError> {
    check_rows(name, "y", y)?;
    check_like(name, "y", y, "dy", dy)?;
    let dt = y.dtype();
    let p = popops::map(
        graph,
        &(up(_1, dt) * up(_2, dt)),
        &[y, dy],
        prog,
        &format!("{name}/dy*y"),
    )?;
    let s = row_column(
        graph,
        &p,
        DType::F32,
        Operation::Add,
        prog,
        &format!("{name}/sum"),
    )?;
    Ok(popops::map(
        graph,
        &down(up(_1, dt) * (up(_2, dt) - _3), dt),
        &[y, dy, &s],
        prog,
        name,
    )?)
}

/// The gradient of [`log_softmax`] w.r.t. its input from its output `y` and the output
/// gradient `dy` (same type and shape): `dy - exp(y) · Σ dy` along the last axis, in f32.
///
/// ```
/// use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
///
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let y = graph.add_variable(DType::F32, &[1, 2], "y");
/// let dy = graph.add_variable(DType::F32, &[1, 2], "dy");
/// graph.map_linearly(&y, 2)?;
/// graph.map_linearly(&dy, 2)?;
/// graph.set_initial_value(&y, &[0.0f32, f32::NEG_INFINITY])?; // probabilities 1 and 0
/// graph.set_initial_value(&dy, &[1.0f32, 1.0])?;
/// let mut prog = Vec::new();
/// let dx = popnn::ops::log_softmax_input_gradient(&mut graph, &y, &dy, &mut prog, "dx")?;
/// graph.create_host_read("dx", &dx)?;
/// let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
/// let mut engine = Engine::new(&exe, EngineOptions::default())?;
/// engine.run(0)?;
/// assert_eq!(engine.read_tensor::<f32>("dx")?, vec![-1.0, 1.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn log_softmax_input_gradient(
    graph: &mut Graph,
    y: &Tensor,
    dy: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, NnOpError> {
    check_rows(name, "y", y)?;
    check_like(name, "y", y, "dy", dy)?;
    let dt = y.dtype();
    let s = row_column(
        graph,
        dy,
        DType::F32,
        Operation::Add,
        prog,
        &format!("{name}/sum"),
    )?;
    Ok(popops::map(
        graph,
        &down(up(_2, dt) - up(_1, dt).exp() * _3, dt),
        &[y, dy, &s],
        prog,
        name,
    )?)
}
