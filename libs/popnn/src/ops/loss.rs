//! Per-sample losses with their gradients w.r.t. the input (poplibs' `popnn::calcLoss` with
//! `CROSS_ENTROPY_LOSS` and `SUM_SQUARED_LOSS`).

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{Graph, Tensor};
use poplar_core::dtype::DType;
use popops::expr::{constant, select, Expr, _1, _2, _3, _4};
use popops::{Operation, ReduceParams};

use super::softmax::{as_column, stable_exp};
use super::{check_float, check_like, down, shape_err, up, NnOpError};

/// A loss: `loss` per sample (`f32`, shape `[N]`) and `grad`, its gradient w.r.t. the input
/// (the input's type and shape).
#[derive(Debug, Clone)]
pub struct Loss {
    pub loss: Tensor,
    pub grad: Tensor,
}

/// What [`cross_entropy`]'s input holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CrossEntropyInput {
    /// Probabilities `p` (a softmax's output): loss `-log p[label]`, gradient w.r.t. `p`:
    /// `-1 / p[label]` at the label, 0 elsewhere.
    Probabilities,
    /// Logits `x`: loss `logsumexp(x) - x[label]` (stable: the row max subtracted), gradient
    /// w.r.t. `x`: `softmax(x) - onehot(label)`, which is poplibs' `deltas` of `calcLoss`.
    Logits,
}

/// `[N, C]`, float: its `(N, C)`.
fn check_2d(op: &str, what: &str, t: &Tensor) -> Result<(usize, usize), NnOpError> {
    check_float(op, what, t)?;
    if t.rank() != 2 {
        return Err(shape_err(
            op,
            what,
            t,
            t.rank().saturating_sub(1),
            format!("must be [samples, classes] (rank 2), not rank {}", t.rank()),
        ));
    }
    if t.shape()[1] == 0 {
        return Err(shape_err(op, what, t, 1, "the class axis is empty"));
    }
    Ok((t.shape()[0], t.shape()[1]))
}

/// Whether the label `l` (a placeholder of type `dt`) is a class below `c`.
fn valid(l: Expr, dt: DType, c: usize) -> Expr {
    let below = l.clone().lt(c as u32);
    if dt == DType::I32 {
        l.ge(0i32).and(below)
    } else {
        below
    }
}

/// The per-sample cross-entropy of `input` (`[N, C]`, `f32`/`f16`) against `labels` (`[N]`,
/// `u32` or `i32`), with its gradient w.r.t. `input` (see [`CrossEntropyInput`]), in f32
/// (poplibs' `calcLoss` with `CROSS_ENTROPY_LOSS`). A label outside `0..C` gives a NaN loss
/// and a NaN gradient row.
///
/// ```
/// use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
/// use popnn::ops::{cross_entropy, CrossEntropyInput};
///
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let x = graph.add_variable(DType::F32, &[1, 2], "x");
/// let l = graph.add_variable(DType::U32, &[1], "l");
/// graph.map_linearly(&x, 2)?;
/// graph.set_tile_mapping(&l, 0)?;
/// graph.set_initial_value(&x, &[3.0f32, 3.0])?;
/// graph.set_initial_value(&l, &[1u32])?;
/// let mut prog = Vec::new();
/// let ce = cross_entropy(&mut graph, CrossEntropyInput::Logits, &x, &l, &mut prog, "ce")?;
/// graph.create_host_read("loss", &ce.loss)?;
/// graph.create_host_read("grad", &ce.grad)?;
/// let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
/// let mut engine = Engine::new(&exe, EngineOptions::default())?;
/// engine.run(0)?;
/// assert_eq!(engine.read_tensor::<f32>("loss")?, vec![std::f32::consts::LN_2]);
/// assert_eq!(engine.read_tensor::<f32>("grad")?, vec![0.5, -0.5]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn cross_entropy(
    graph: &mut Graph,
    kind: CrossEntropyInput,
    input: &Tensor,
    labels: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Loss, NnOpError> {
    let (n, c) = check_2d(name, "input", input)?;
    let lt = labels.dtype();
    if !matches!(lt, DType::U32 | DType::I32) {
        return Err(NnOpError::DType {
            op: name.into(),
            tensor: "labels".into(),
            got: lt,
            expected: "u32 or i32".into(),
        });
    }
    if labels.rank() != 1 || labels.shape()[0] != n {
        let axis = if labels.rank() == 1 {
            0
        } else {
            labels.rank().min(1)
        };
        return Err(shape_err(
            name,
            "labels",
            labels,
            axis,
            format!("must be [{n}], one label per sample of 'input'"),
        ));
    }
    let dt = input.dtype();
    let classes: Vec<u32> = (0..c as u32).collect();
    let iota = match lt {
        DType::I32 => {
            let v: Vec<i32> = classes.iter().map(|&k| k as i32).collect();
            graph.add_constant(&[c], &v, &format!("{name}/classes"))?
        }
        _ => graph.add_constant(&[c], &classes, &format!("{name}/classes"))?,
    };
    graph.set_tile_mapping(&iota, 0)?;
    let lcol = labels.reshape(&[n, 1])?;
    let nan = constant(f32::NAN);
    // x[label] (or p[label]) per sample, in f32.
    let picked = popops::map(
        graph,
        &select(up(_1, dt), constant(0.0f32), _2.equal(_3)),
        &[input, &lcol, &iota],
        prog,
        &format!("{name}/pick"),
    )?;
    let picked = popops::reduce(
        graph,
        &picked,
        DType::F32,
        &[1],
        Operation::Add,
        prog,
        &format!("{name}/picked"),
    )?;
    match kind {
        CrossEntropyInput::Logits => {
            let (e, s_col, m_col) = stable_exp(graph, input, prog, name)?;
            let s = s_col.reshape(&[n])?;
            let m = m_col.reshape(&[n])?;
            let loss = popops::map(
                graph,
                &select(_1.log() + (up(_2, dt) - _3), nan.clone(), valid(_4, lt, c)),
                &[&s, &m, &picked, labels],
                prog,
                &format!("{name}/loss"),
            )?;
            let onehot = select(constant(1.0f32), constant(0.0f32), _3.equal(_4));
            let g = select(_1 / _2 - onehot, nan, valid(_3, lt, c));
            let grad = popops::map(
                graph,
                &down(g, dt),
                &[&e, &s_col, &lcol, &iota],
                prog,
                &format!("{name}/grad"),
            )?;
            Ok(Loss { loss, grad })
        }
        CrossEntropyInput::Probabilities => {
            let loss = popops::map(
                graph,
                &select(-(_1.log()), nan.clone(), valid(_2, lt, c)),
                &[&picked, labels],
                prog,
                &format!("{name}/loss"),
            )?;
            let pcol = as_column(&picked, input)?;
            let g = select(
                select(-(_1.inverse()), constant(0.0f32), _2.equal(_3)),
                nan,
                valid(_2, lt, c),
            );
            let grad = popops::map(
                graph,
                &down(g, dt),
                &[&pcol, &lcol, &iota],
                prog,
                &format!("{name}/grad"),
            )?;
            Ok(Loss { loss, grad })
        }
    }
}

/// The per-sample sum of squares `0.5 · Σ (input - target)²` over the classes of `input`
/// (`[N, C]`, `f32`/`f16`) against `target` (same type and shape), accumulated in f32, with
/// its gradient `input - target` (poplibs' `calcLoss` with `SUM_SQUARED_LOSS`).
///
/// ```
/// use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
///
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let x = graph.add_variable(DType::F32, &[1, 2], "x");
/// let t = graph.add_variable(DType::F32, &[1, 2], "t");
/// graph.map_linearly(&x, 2)?;
/// graph.map_linearly(&t, 2)?;
/// graph.set_initial_value(&x, &[3.0f32, 1.0])?;
/// graph.set_initial_value(&t, &[1.0f32, 1.0])?;
/// let mut prog = Vec::new();
/// let l = popnn::ops::sum_squared(&mut graph, &x, &t, &mut prog, "mse")?;
/// graph.create_host_read("loss", &l.loss)?;
/// graph.create_host_read("grad", &l.grad)?;
/// let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
/// let mut engine = Engine::new(&exe, EngineOptions::default())?;
/// engine.run(0)?;
/// assert_eq!(engine.read_tensor::<f32>("loss")?, vec![2.0]);
/// assert_eq!(engine.read_tensor::<f32>("grad")?, vec![2.0, 0.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sum_squared(
    graph: &mut Graph,
    input: &Tensor,
    target: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Loss, NnOpError> {
    check_2d(name, "input", input)?;
    check_like(name, "input", input, "target", target)?;
    let dt = input.dtype();
    let d = popops::map(
        graph,
        &(up(_1, dt) - up(_2, dt)),
        &[input, target],
        prog,
        &format!("{name}/diff"),
    )?;
    let p = ReduceParams::new(Operation::SquareAdd).with_scale(0.5);
    let loss = popops::reduce(
        graph,
        &d,
        DType::F32,
        &[1],
        p,
        prog,
        &format!("{name}/loss"),
    )?;
    let grad = popops::map(graph, &down(_1, dt), &[&d], prog, &format!("{name}/grad"))?;
    Ok(Loss { loss, grad })
}
