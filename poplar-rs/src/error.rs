//! Typed errors of every stage. Each names the thing at fault.

use crate::dtype::DType;
use crate::target::TileId;

/// Errors while building a graph.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GraphError {
    #[error("invalid {op}: {reason}")]
    BadView { op: &'static str, reason: String },
    #[error("{what} belongs to another graph")]
    ForeignTensor { what: String },
    #[error("{what}: tile {tile} is out of range (target has {num_tiles} tiles)")]
    TileOutOfRange {
        what: String,
        tile: TileId,
        num_tiles: u32,
    },
    #[error("{what}: expected {expected} elements of {dtype}, got {got}")]
    BadData {
        what: String,
        dtype: DType,
        expected: usize,
        got: usize,
    },
    #[error("name '{name}' is already used by another {kind}")]
    DuplicateName { kind: &'static str, name: String },
    #[error("invalid target: {0}")]
    BadTarget(#[from] crate::target::TargetError),
}

/// One problem found by the validation pass.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValidationError {
    #[error("vertex {vertex} in compute set '{compute_set}': codelet '{codelet}' is not registered (is the crate that defines it linked? call codelets::link())")]
    UnknownCodelet {
        vertex: u32,
        compute_set: String,
        codelet: String,
    },
    #[error("vertex {vertex} ({codelet}): no field named '{field}'")]
    UnknownField {
        vertex: u32,
        codelet: String,
        field: String,
    },
    #[error("vertex {vertex} ({codelet}): field '{field}' is not connected")]
    UnconnectedField {
        vertex: u32,
        codelet: String,
        field: String,
    },
    #[error("vertex {vertex} ({codelet}): state field '{field}' has no initial value")]
    MissingState {
        vertex: u32,
        codelet: String,
        field: String,
    },
    #[error("vertex {vertex} ({codelet}): field '{field}' expects {expected} but was given {got}")]
    WrongBinding {
        vertex: u32,
        codelet: String,
        field: String,
        expected: &'static str,
        got: &'static str,
    },
    #[error("vertex {vertex} ({codelet}): field '{field}' has type {expected}, connected to a {got} tensor")]
    DTypeMismatch {
        vertex: u32,
        codelet: String,
        field: String,
        expected: DType,
        got: DType,
    },
    #[error(
        "vertex {vertex} ({codelet}): scalar field '{field}' connected to {elements} elements"
    )]
    NotScalar {
        vertex: u32,
        codelet: String,
        field: String,
        elements: usize,
    },
    #[error("vertex {vertex} in compute set '{compute_set}' has no tile mapping")]
    UnmappedVertex { vertex: u32, compute_set: String },
    #[error("{what}: tile {tile} is out of range (target has {num_tiles} tiles)")]
    TileOutOfRange {
        what: String,
        tile: TileId,
        num_tiles: u32,
    },
    #[error("variable '{var}': elements {start}..{end} have no tile mapping")]
    UnmappedElements { var: String, start: u64, end: u64 },
    #[error("{what} uses a tensor of another graph")]
    ForeignTensor { what: String },
    #[error("data race in compute set '{compute_set}': vertex {writer} writes '{var}'[{start}..{end}] which vertex {other} also {access}")]
    DataRace {
        compute_set: String,
        writer: u32,
        other: u32,
        access: &'static str,
        var: String,
        start: u64,
        end: u64,
    },
    #[error("vertex {vertex} ({codelet}): written field '{field}' overlaps field '{other}' of the same vertex ('{var}'[{start}..{end}])")]
    AliasedField {
        vertex: u32,
        codelet: String,
        field: String,
        other: String,
        var: String,
        start: u64,
        end: u64,
    },
    #[error("{what}: writes to constant '{var}'")]
    WriteToConstant { what: String, var: String },
    #[error(
        "copy: source is {src_dtype}{src_shape:?} but destination is {dst_dtype}{dst_shape:?}"
    )]
    CopyMismatch {
        src_dtype: DType,
        src_shape: Vec<usize>,
        dst_dtype: DType,
        dst_shape: Vec<usize>,
    },
    #[error("{what}: destination aliases the same element more than once")]
    AliasedDestination { what: String },
    #[error("{what}: predicate must be one element of bool, i32 or u32, got {dtype}{shape:?}")]
    BadPredicate {
        what: String,
        dtype: DType,
        shape: Vec<usize>,
    },
    #[error("stream '{stream}': {reason}")]
    BadStream { stream: String, reason: String },
    #[error("{what}: compute set {id} does not exist")]
    NoSuchComputeSet { what: String, id: u32 },
    #[error("call: function {id} does not exist")]
    NoSuchFunction { id: u32 },
    #[error("function {id} calls itself (recursion is not supported)")]
    RecursiveCall { id: u32 },
    #[error("vertex {vertex} ({codelet}) field '{field}': {elements} elements exceed the 2^32-1 field limit")]
    FieldTooLarge {
        vertex: u32,
        codelet: String,
        field: String,
        elements: u64,
    },
}

/// Errors of `compile`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompileError {
    #[error("graph is invalid ({} problem(s)):\n{}", .0.len(), .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<ValidationError>),
    #[error("tile {tile} needs {total} bytes but has {budget}; largest: {}", .largest.iter().map(|(n, b)| format!("{n} ({b} B)")).collect::<Vec<_>>().join(", "))]
    OutOfMemory {
        tile: TileId,
        total: u64,
        budget: u64,
        largest: Vec<(String, u64)>,
    },
    #[error("invalid target: {0}")]
    BadTarget(#[from] crate::target::TargetError),
    #[error("internal compiler error (verifier after pass '{pass}'): {reason}")]
    Verifier { pass: &'static str, reason: String },
}

impl CompileError {
    /// The validation problems, if this is a validation failure.
    pub fn validation_errors(&self) -> &[ValidationError] {
        match self {
            CompileError::Invalid(v) => v,
            _ => &[],
        }
    }
}
