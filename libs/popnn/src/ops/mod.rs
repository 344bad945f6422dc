//! Graph-building neural-network ops in the style of poplibs' popnn, over `popops`' fused
//! expressions (`popops::map`) and reductions (`popops::reduce`); pooling has vertices of its
//! own ([`crate::codelets::pool`]).
//!
//! - [`nonlinearity`]: relu, gelu (tanh approximation), sigmoid, tanh, their input gradients
//!   (poplibs' `nonLinearity`, `nonLinearityInPlace`, `nonLinearityInputGradient`);
//! - [`softmax`](mod@softmax): the numerically stable softmax and log-softmax along the last
//!   axis and their input gradients;
//! - [`loss`]: cross-entropy (over probabilities or logits, `u32`/`i32` labels) and the sum of
//!   squares, per sample, with the gradient w.r.t. the input (poplibs' `calcLoss`);
//! - [`pooling`]: max and average pooling over 1- to 3-D fields with their input gradients
//!   (poplibs' `popnn::pooling`);
//! - [`norm`]: batch (training mode), layer and group normalisation, forward and backward
//!   (poplibs' `bn`, `ln`, `gn`).
//!
//! `f16` tensors are computed in `f32` inside each fused expression and rounded once; sums
//! accumulate in `f32`. See `docs/popnn.md`.

pub mod loss;
pub mod nonlinearity;
pub mod norm;
pub mod pooling;
pub mod softmax;

use poplar_compiler::graph::{GraphError, Tensor};
use poplar_core::dtype::DType;
use popops::expr::Expr;

pub use loss::{cross_entropy, sum_squared, CrossEntropyInput, Loss};
pub use nonlinearity::{
    non_linearity, non_linearity_in_place, non_linearity_input_gradient, NonLinearityType,
};
pub use norm::{
    batch_norm, batch_norm_grad, group_norm, group_norm_grad, layer_norm, layer_norm_grad,
    NormGradients, NormStats,
};
pub use pooling::{pool, pool_input_gradient, PoolParams, PoolingType};
pub use softmax::{log_softmax, log_softmax_input_gradient, softmax, softmax_input_gradient};

/// The errors of the ops: typed, naming the op (its debug name), the tensor at fault and,
/// for shapes, the axis.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NnOpError {
    /// An error of the underlying popops call.
    #[error(transparent)]
    Op(#[from] popops::OpError),
    /// A view of the graph failed.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// A tensor of an element type the op does not take.
    #[error("{op}: tensor '{tensor}' is {got}, but {expected}")]
    DType {
        op: String,
        tensor: String,
        got: DType,
        expected: String,
    },
    /// A tensor whose shape does not fit: `axis` is the axis of `tensor` at fault.
    #[error("{op}: tensor '{tensor}' (shape {shape:?}) at axis {axis}: {reason}")]
    Shape {
        op: String,
        tensor: String,
        shape: Vec<usize>,
        axis: usize,
        reason: String,
    },
    /// A parameter of the op (not a tensor) that does not fit: `param` names it.
    #[error("{op}: parameter '{param}': {reason}")]
    Param {
        op: String,
        param: String,
        reason: String,
    },
}

pub(crate) fn check_float(op: &str, tensor: &str, t: &Tensor) -> Result<(), NnOpError> {
    match t.dtype() {
        DType::F32 | DType::F16 => Ok(()),
        got => Err(NnOpError::DType {
            op: op.into(),
            tensor: tensor.into(),
            got,
            expected: "f32 or f16".into(),
        }),
    }
}

pub(crate) fn param_err(op: &str, param: &str, reason: impl Into<String>) -> NnOpError {
    NnOpError::Param {
        op: op.into(),
        param: param.into(),
        reason: reason.into(),
    }
}

pub(crate) fn shape_err(
    op: &str,
    tensor: &str,
    t: &Tensor,
    axis: usize,
    reason: impl Into<String>,
) -> NnOpError {
    NnOpError::Shape {
        op: op.into(),
        tensor: tensor.into(),
        shape: t.shape().to_vec(),
        axis,
        reason: reason.into(),
    }
}

/// Fails unless `b` has the shape and type of `a`.
pub(crate) fn check_like(
    op: &str,
    a_name: &str,
    a: &Tensor,
    b_name: &str,
    b: &Tensor,
) -> Result<(), NnOpError> {
    if b.dtype() != a.dtype() {
        return Err(NnOpError::DType {
            op: op.into(),
            tensor: b_name.into(),
            got: b.dtype(),
            expected: format!("the type of '{a_name}', {}", a.dtype()),
        });
    }
    if b.shape() != a.shape() {
        let axis = (0..a.rank().max(b.rank()))
            .find(|&k| a.shape().get(k) != b.shape().get(k))
            .unwrap_or(0);
        return Err(shape_err(
            op,
            b_name,
            b,
            axis,
            format!("must have the shape of '{a_name}', {:?}", a.shape()),
        ));
    }
    Ok(())
}

/// `e` in f32: cast from f16, as is for f32.
pub(crate) fn up(e: Expr, dt: DType) -> Expr {
    if dt == DType::F16 {
        e.cast(DType::F32)
    } else {
        e
    }
}

/// An f32 expression `e` rounded to `dt`.
pub(crate) fn down(e: Expr, dt: DType) -> Expr {
    if dt == DType::F16 {
        e.cast(DType::F16)
    } else {
        e
    }
}
