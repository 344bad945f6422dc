//! The errors of the graph-building functions.

use poplar_compiler::graph::GraphError;
use poplar_core::dtype::DType;

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
    /// Shapes that do not broadcast together (numpy's rules), boxed: see [`Broadcast`].
    #[error(transparent)]
    Broadcast(Box<Broadcast>),
    /// An operand or operation of an element type the operation does not take.
    #[error("{op}: {what} is {got}, but {expected}")]
    DType {
        op: String,
        what: String,
        got: DType,
        expected: String,
    },
    /// An axis argument that does not fit the tensor `tensor` (named as the message shows it)
    /// of rank `rank`: out of range, repeated, or empty where the op needs elements.
    #[error("{op}: axis {axis} of {tensor} (rank {rank}) {reason}")]
    Axis {
        op: String,
        tensor: String,
        axis: usize,
        rank: usize,
        reason: String,
    },
    /// An expression that cannot be compiled: a placeholder without an input, a constant its
    /// type cannot hold.
    #[error("{op}: {reason}")]
    Expr { op: String, reason: String },
}

pub(crate) fn shape_err(op: &str, reason: impl Into<String>) -> OpError {
    OpError::Shape {
        op: op.to_string(),
        reason: reason.into(),
    }
}

/// Fails with [`OpError::Axis`] unless `axis` is below the rank of `t` (called `tensor`).
pub(crate) fn check_axis(
    op: &str,
    tensor: &str,
    t_rank: usize,
    axis: usize,
) -> Result<(), OpError> {
    if axis < t_rank {
        return Ok(());
    }
    Err(OpError::Axis {
        op: op.to_string(),
        tensor: format!("'{tensor}'"),
        axis,
        rank: t_rank,
        reason: "is out of range".to_string(),
    })
}

/// An [`OpError::DType`] for operand `what` of `op`.
pub(crate) fn dtype_err(op: &str, what: &str, got: DType, expected: &str) -> OpError {
    OpError::DType {
        op: op.to_string(),
        what: format!("'{what}'"),
        got,
        expected: expected.to_string(),
    }
}

/// Two shapes that do not broadcast together (numpy's rules: aligned from the last axis, each
/// pair of sizes equal or one of them 1). `axis` counts in the result's shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{op}: {tensor} (shape {shape:?}) does not broadcast with {other} (shape {other_shape:?}) \
     at axis {axis} of the result ({size} against {other_size})"
)]
pub struct Broadcast {
    pub op: String,
    pub tensor: String,
    pub shape: Vec<usize>,
    pub other: String,
    pub other_shape: Vec<usize>,
    pub axis: usize,
    pub size: usize,
    pub other_size: usize,
}
