//! Errors of `compile`: the validation problems, a verifier's broken invariant, memory.

use crate::dtype::DType;
use crate::graph::VertexName;
use crate::target::TileId;

/// ` (did you mean 'x'?)` when there is a suggestion.
fn suggest(s: &Option<String>) -> String {
    match s {
        Some(x) => format!(" (did you mean '{x}'?)"),
        None => String::new(),
    }
}

/// ` (tensor of 'x')` when the tensor's variable is known.
fn of_tensor(t: &Option<String>) -> String {
    match t {
        Some(x) => format!(" (a view of variable '{x}')"),
        None => String::new(),
    }
}

/// One problem found by the validation pass.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ValidationError {
    /// The vertex's codelet is not in the registry.
    #[error("{vertex}: codelet '{}' is not registered{} (is the crate that defines it linked? call codelets::link())", .vertex.codelet, suggest(.did_you_mean))]
    UnknownCodelet {
        vertex: VertexName,
        did_you_mean: Option<String>,
    },
    /// A connection or state value names a field the codelet does not have.
    #[error("{vertex}: no field named '{field}'{}", suggest(.did_you_mean))]
    UnknownField {
        vertex: VertexName,
        field: String,
        did_you_mean: Option<String>,
    },
    /// A tensor field has no connection.
    #[error("{vertex}: field '{field}' is not connected")]
    UnconnectedField { vertex: VertexName, field: String },
    /// A state field has no value (`Graph::set_vertex_state`).
    #[error("{vertex}: state field '{field}' has no initial value")]
    MissingState { vertex: VertexName, field: String },
    /// A field got the wrong kind of binding (tensor, list, state value, scalar or vector).
    #[error("{vertex}: field '{field}' expects {expected} but was given {got}")]
    WrongBinding {
        vertex: VertexName,
        field: String,
        expected: &'static str,
        got: &'static str,
    },
    /// A tensor of one element type is connected to a field of another.
    #[error("{vertex}: field '{field}' has type {expected}, connected to a {got} tensor{}", of_tensor(.tensor))]
    DTypeMismatch {
        vertex: VertexName,
        field: String,
        expected: DType,
        got: DType,
        /// The variable the tensor views (its first region's).
        tensor: Option<String>,
    },
    /// A state value of one element type is given to a state field of another.
    #[error("{vertex}: state field '{field}' has type {expected} but its value is {got}: give the value with its type (for example `5{}` or `5.0f32`)", expected.rust_suffix())]
    StateDType {
        vertex: VertexName,
        field: String,
        expected: DType,
        got: DType,
    },
    /// A scalar field is connected to a tensor of more or fewer than one element.
    #[error("{vertex}: scalar field '{field}' connected to {elements} elements{}", of_tensor(.tensor))]
    NotScalar {
        vertex: VertexName,
        field: String,
        elements: usize,
        tensor: Option<String>,
    },
    /// A vertex was never given a tile.
    #[error("{vertex} has no tile mapping")]
    UnmappedVertex { vertex: VertexName },
    /// A tile number beyond the target.
    #[error("{what}: tile {tile} is out of range (target has {num_tiles} tiles)")]
    TileOutOfRange {
        what: String,
        tile: TileId,
        num_tiles: u32,
    },
    /// Elements of a variable have no tile.
    #[error("variable '{var}': elements {start}..{end} have no tile mapping")]
    UnmappedElements { var: String, start: u64, end: u64 },
    /// A tensor of another graph is used.
    #[error("{what} uses a tensor of another graph")]
    ForeignTensor { what: String },
    /// Two vertices of one compute set touch the same elements and one of them writes.
    #[error("data race in compute set '{compute_set}': {writer} writes '{var}'[{start}..{end}] which {other} also {access}")]
    DataRace {
        compute_set: String,
        writer: VertexName,
        other: VertexName,
        access: &'static str,
        var: String,
        start: u64,
        end: u64,
    },
    /// A written field of a vertex overlaps another of its fields.
    #[error("{vertex}: written field '{field}' overlaps field '{other}' of the same vertex ('{var}'[{start}..{end}])")]
    AliasedField {
        vertex: VertexName,
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
    /// A cross-replica copy that cannot be lowered: the graph is not replicated, the source
    /// and destination differ in type or size or share elements, or the replica map names a
    /// replica that does not exist or one twice.
    #[error("cross-replica copy: {reason}")]
    BadCrossReplicaCopy { reason: String },
    /// A destination that names one element twice.
    #[error("{what}: destination aliases the same element more than once")]
    AliasedDestination { what: String },
    /// A control-flow predicate that is not one element of bool, i32 or u32.
    #[error("{what}: predicate must be one element of bool, i32 or u32, got {dtype}{shape:?}")]
    BadPredicate {
        what: String,
        dtype: DType,
        shape: Vec<usize>,
    },
    /// A copy to or from a remote buffer that cannot run (the reason says why).
    #[error("remote buffer '{buffer}': {reason}")]
    BadRemoteCopy { buffer: String, reason: String },
    /// An `overlap_io` program that does not keep transfers on the I/O tiles and compute off
    /// them.
    #[error("overlap_io: {reason}")]
    BadOverlapIo { reason: String },
    /// A vertex placed on an I/O tile, which the target reserves for transfers.
    #[error("{vertex}: tile {tile} is an I/O tile (the target reserves its last {io_tiles} tiles of each chip for transfers)")]
    VertexOnIoTile {
        vertex: VertexName,
        tile: u32,
        io_tiles: u32,
    },
    /// A stream used in a way its declaration does not allow.
    #[error("stream '{stream}': {reason}")]
    BadStream { stream: String, reason: String },
    /// A program names a compute set that does not exist.
    #[error("{what}: compute set {id} does not exist")]
    NoSuchComputeSet { what: String, id: u32 },
    /// A call names a function that does not exist.
    #[error("call: function {id} does not exist")]
    NoSuchFunction { id: u32 },
    /// A function calls itself, directly or not.
    #[error("function {id} calls itself (recursion is not supported)")]
    RecursiveCall { id: u32 },
    /// A field longer than 2^32 - 1 elements.
    #[error("{vertex}: field '{field}': {elements} elements exceed the 2^32-1 field limit")]
    FieldTooLarge {
        vertex: VertexName,
        field: String,
        elements: u64,
    },
}

/// The passes of the pipeline, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pass {
    Validate,
    Layout,
    InPlace,
    Lower,
    Images,
    Check,
}

impl std::fmt::Display for Pass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Pass::Validate => "validate",
            Pass::Layout => "layout",
            Pass::InPlace => "in-place",
            Pass::Lower => "lower",
            Pass::Images => "images",
            Pass::Check => "check",
        })
    }
}

/// An invariant of a pass's output that does not hold (an internal compiler error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("internal compiler error: the verifier after pass '{pass}' found {}{}: {reason}",
    .entity.as_deref().unwrap_or("a problem"),
    .tile.map(|t| format!(" on tile {t}")).unwrap_or_default())]
pub struct VerifierError {
    /// The pass whose output is wrong.
    pub pass: Pass,
    /// The tile concerned, when there is one.
    pub tile: Option<TileId>,
    /// The entity concerned (variable, phase, program), when there is one.
    pub entity: Option<String>,
    /// What does not hold.
    pub reason: String,
}

/// Errors of `compile`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CompileError {
    /// Validation found problems in the graph or programs (all of them).
    #[error("graph is invalid ({} problem(s)):\n{}", .0.len(), .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<ValidationError>),
    /// A tile needs more memory than the target has.
    #[error("tile {tile} needs {total} bytes but has {budget}; largest: {}", .largest.iter().map(|(n, b)| format!("{n} ({b} B)")).collect::<Vec<_>>().join(", "))]
    OutOfMemory {
        tile: TileId,
        total: u64,
        budget: u64,
        largest: Vec<(String, u64)>,
    },
    /// The graph's target is outside the chip model.
    #[error("invalid target: {0}")]
    BadTarget(#[from] crate::target::TargetError),
    /// A verifier between the compiler's passes found a broken invariant (a compiler bug).
    #[error(transparent)]
    Verifier(#[from] VerifierError),
}
