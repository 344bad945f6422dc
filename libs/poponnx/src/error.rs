//! The importer's errors: typed, each naming what is at fault (the file, the node and its op,
//! the input or attribute), never a panic.

use std::path::PathBuf;

/// Where in the model an error is: the node's name (or `#index` when it has none) and its op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    /// The node's name, or `#index` for an unnamed node.
    pub node: String,
    /// The op type, with its domain when it is not the default one.
    pub op: String,
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "node '{}' ({})", self.node, self.op)
    }
}

/// Why a model cannot be read, imported or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OnnxError {
    /// The file (or a file of external data) cannot be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The bytes are not a protobuf message of the expected kind.
    #[error("{what}: not a valid ONNX {kind}: {reason}")]
    Decode {
        what: String,
        kind: &'static str,
        reason: String,
    },
    /// The model is well formed protobuf but breaks a rule of ONNX (a missing graph, a value
    /// defined twice, data that does not match its tensor's shape, …).
    #[error("{what}: {reason}")]
    Invalid { what: String, reason: String },
    /// The model imports an opset this importer does not take.
    #[error("the model imports opset {version} of domain '{domain}'; supported: {supported}")]
    Opset {
        domain: String,
        version: i64,
        supported: String,
    },
    /// An op outside the supported set.
    #[error("{at}: op not supported")]
    UnsupportedOp { at: At },
    /// An attribute (or attribute value) the lowering of this op does not take.
    #[error("{at}: attribute '{attribute}' not supported: {reason}")]
    UnsupportedAttribute {
        at: At,
        attribute: String,
        reason: String,
    },
    /// An element type the chip does not hold (`double`, `string`, …) or the op does not take.
    #[error("{at}: {what} is of type {dtype}, which {reason}")]
    UnsupportedType {
        at: At,
        what: String,
        dtype: String,
        reason: String,
    },
    /// A dimension without a fixed size (`dim_param`, or unknown): the chip's programs have
    /// static shapes.
    #[error(
        "{what}: dimension {axis} has no fixed size ({reason}); give the input a static shape"
    )]
    DynamicShape {
        what: String,
        axis: usize,
        reason: String,
    },
    /// An input that must be known when the graph is built (a shape, axes, pads, …) is
    /// computed on the chip instead. `Session` options can fix a graph input's value.
    #[error("{at}: input {index} ('{input}') must be a constant (an initializer, a Constant node or a fixed input), as it sets a shape")]
    NotConstant { at: At, index: usize, input: String },
    /// A node's inputs or attributes do not fit each other (shapes, ranks, axes).
    #[error("{at}: {what}: {reason}")]
    Shape {
        at: At,
        what: String,
        reason: String,
    },
    /// A node reads a value nothing defines.
    #[error("{at}: input '{input}' is defined by no node, initializer or graph input")]
    Undefined { at: At, input: String },
    /// An array given for a graph input does not match it.
    #[error("input '{input}': {reason}")]
    Input { input: String, reason: String },
    /// The underlying graph library refused a lowering (a bug of the importer's or an op
    /// limitation), with the node it was lowering.
    #[error("{at}: {source}")]
    Lowering {
        at: At,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Compiling or running the lowered graph failed.
    #[error("{stage}: {source}")]
    Poplar {
        stage: &'static str,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl OnnxError {
    /// A lowering failure at `at` from any graph-library error.
    pub(crate) fn lowering(at: &At, e: impl std::error::Error + Send + Sync + 'static) -> Self {
        OnnxError::Lowering {
            at: at.clone(),
            source: Box::new(e),
        }
    }

    /// A shape error at `at`.
    pub(crate) fn shape(at: &At, what: impl Into<String>, reason: impl Into<String>) -> Self {
        OnnxError::Shape {
            at: at.clone(),
            what: what.into(),
            reason: reason.into(),
        }
    }

    /// An unsupported attribute (or value of one) at `at`.
    pub(crate) fn attribute(at: &At, attribute: &str, reason: impl Into<String>) -> Self {
        OnnxError::UnsupportedAttribute {
            at: at.clone(),
            attribute: attribute.into(),
            reason: reason.into(),
        }
    }
}

/// The importer's result.
pub type Result<T, E = OnnxError> = std::result::Result<T, E>;
