//! Element-wise non-linearities and their input gradients (poplibs' `popnn::nonLinearity`,
//! `nonLinearityInPlace`, `nonLinearityInputGradient`), each one fused `popops::map`.

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{Graph, Tensor};
use poplar_core::dtype::DType;
use popops::expr::{constant, select, Expr, _1, _2};

use super::{check_float, check_like, down, up, NnOpError};

/// `sqrt(2 / π)`, of the tanh approximation of GELU.
pub const GELU_K: f32 = 0.797_884_6;
/// The cubic coefficient of the tanh approximation of GELU.
pub const GELU_A: f32 = 0.044_715;

/// The non-linearities (poplibs' `NonLinearityType`: `RELU`, `GELU`, `SIGMOID`, `TANH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NonLinearityType {
    /// `x < 0 ? 0 : x` (NaN stays NaN). Gradient from the output.
    Relu,
    /// The tanh approximation, as poplibs' `GELU`:
    /// `0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))`, `gelu(-inf) = 0`. Gradient from the
    /// *input* (as poplibs').
    Gelu,
    /// `1 / (1 + exp(-x))`. Gradient from the output: `dy · y (1 - y)`.
    Sigmoid,
    /// `tanh x`. Gradient from the output: `dy · (1 - y²)`.
    Tanh,
}

impl NonLinearityType {
    /// Whether [`non_linearity_input_gradient`] takes the forward *input* (GELU) rather
    /// than the forward output (the others).
    ///
    /// ```
    /// use popnn::ops::NonLinearityType;
    /// assert!(NonLinearityType::Gelu.gradient_takes_input());
    /// assert!(!NonLinearityType::Sigmoid.gradient_takes_input());
    /// ```
    pub fn gradient_takes_input(self) -> bool {
        self == NonLinearityType::Gelu
    }
}

fn forward_expr(kind: NonLinearityType, dt: DType) -> Expr {
    let x = up(_1, dt);
    let f = match kind {
        NonLinearityType::Relu => select(constant(0.0f32), x.clone(), x.lt(0.0f32)),
        NonLinearityType::Sigmoid => x.sigmoid(),
        NonLinearityType::Tanh => x.tanh(),
        NonLinearityType::Gelu => {
            let u = (x.clone() + x.clone() * x.clone() * x.clone() * GELU_A) * GELU_K;
            let g = x.clone() * 0.5f32 * (u.tanh() + 1.0f32);
            select(constant(0.0f32), g, x.equal(f32::NEG_INFINITY))
        }
    };
    down(f, dt)
}

/// `_1` the forward output (input for GELU), `_2` the output gradient.
fn gradient_expr(kind: NonLinearityType, dt: DType) -> Expr {
    let y = up(_1, dt);
    let d = up(_2, dt);
    let g = match kind {
        NonLinearityType::Relu => select(
            d,
            select(y.clone(), constant(0.0f32), y.clone().is_nan()),
            y.gt(0.0f32),
        ),
        NonLinearityType::Sigmoid => d * y.clone() * (constant(1.0f32) - y),
        NonLinearityType::Tanh => d * (constant(1.0f32) - y.clone() * y),
        NonLinearityType::Gelu => {
            let x = y;
            let x2 = x.clone() * x.clone();
            let u = (x.clone() + x2.clone() * x.clone() * GELU_A) * GELU_K;
            let t = u.tanh();
            let half_1pt = (t.clone() + 1.0f32) * 0.5f32;
            let full = half_1pt.clone()
                + x.clone()
                    * 0.5f32
                    * (constant(1.0f32) - t.clone() * t)
                    * GELU_K
                    * (x2 * (3.0 * GELU_A) + 1.0f32);
            d * select(half_1pt, full, x.is_inf())
        }
    };
    down(g, dt)
}

/// `kind` applied element-wise to `t` (`f32` or `f16`, any shape) into a new tensor mapped
/// as `t`, one fused compute set added to `prog` (poplibs' `nonLinearity`). `f16` is
/// computed in `f32` and rounded once.
///
/// ```
/// use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
/// use popnn::ops::{non_linearity, NonLinearityType};
///
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let x = graph.add_variable(DType::F32, &[4], "x");
/// graph.map_linearly(&x, 2)?;
/// graph.set_initial_value(&x, &[-2.0f32, -0.5, 0.0, 3.0])?;
/// let mut prog = Vec::new();
/// let y = non_linearity(&mut graph, NonLinearityType::Relu, &x, &mut prog, "relu")?;
/// graph.create_host_read("y", &y)?;
/// let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
/// let mut engine = Engine::new(&exe, EngineOptions::default())?;
/// engine.run(0)?;
/// assert_eq!(engine.read_tensor::<f32>("y")?, vec![0.0, 0.0, 0.0, 3.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn non_linearity(
    graph: &mut Graph,
    kind: NonLinearityType,
    t: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, NnOpError> {
    check_float(name, "t", t)?;
    Ok(popops::map(
        graph,
        &forward_expr(kind, t.dtype()),
        &[t],
        prog,
        name,
    )?)
}

/// As [`non_linearity`], writing `t` (poplibs' `nonLinearityInPlace`).
///
/// ```
/// use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
/// use popnn::ops::{non_linearity_in_place, NonLinearityType};
///
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let x = graph.add_variable(DType::F32, &[2], "x");
/// graph.map_linearly(&x, 2)?;
/// graph.set_initial_value(&x, &[0.0f32, 100.0])?;
/// let mut prog = Vec::new();
/// non_linearity_in_place(&mut graph, NonLinearityType::Sigmoid, &x, &mut prog, "sig")?;
/// graph.create_host_read("x", &x)?;
/// let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
/// let mut engine = Engine::new(&exe, EngineOptions::default())?;
/// engine.run(0)?;
/// assert_eq!(engine.read_tensor::<f32>("x")?, vec![0.5, 1.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn non_linearity_in_place(
    graph: &mut Graph,
    kind: NonLinearityType,
    t: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(), NnOpError> {
    check_float(name, "t", t)?;
    popops::map_in_place(graph, &forward_expr(kind, t.dtype()), &[t], prog, name)?;
    Ok(())
}

/// The gradient w.r.t. the non-linearity's input, `out_grad · f'(x)`, from `out_or_act`:
/// the forward *output* for relu, sigmoid and tanh, the forward *input* for GELU (poplibs'
/// `nonLinearityInputGradient`, whose `act` argument is the same). Both tensors of one type
/// (`f32`/`f16`) and shape. Relu: `out > 0 ? dy : 0`, a NaN output gives NaN.
///
/// ```
/// use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
/// use popnn::ops::{non_linearity_input_gradient, NonLinearityType};
///
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let y = graph.add_variable(DType::F32, &[2], "y"); // tanh outputs
/// let dy = graph.add_variable(DType::F32, &[2], "dy");
/// graph.map_linearly(&y, 2)?;
/// graph.map_linearly(&dy, 2)?;
/// graph.set_initial_value(&y, &[0.0f32, 0.5])?;
/// graph.set_initial_value(&dy, &[2.0f32, 2.0])?;
/// let mut prog = Vec::new();
/// let dx = non_linearity_input_gradient(&mut graph, NonLinearityType::Tanh, &y, &dy, &mut prog, "dx")?;
/// graph.create_host_read("dx", &dx)?;
/// let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
/// let mut engine = Engine::new(&exe, EngineOptions::default())?;
/// engine.run(0)?;
/// assert_eq!(engine.read_tensor::<f32>("dx")?, vec![2.0, 1.5]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn non_linearity_input_gradient(
    graph: &mut Graph,
    kind: NonLinearityType,
    out_or_act: &Tensor,
    out_grad: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, NnOpError> {
    check_float(name, "out_or_act", out_or_act)?;
    check_like(name, "out_or_act", out_or_act, "out_grad", out_grad)?;
    Ok(popops::map(
        graph,
        &gradient_expr(kind, out_or_act.dtype()),
        &[out_or_act, out_grad],
        prog,
        name,
    )?)
}
