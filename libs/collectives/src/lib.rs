//! Cross-replica collectives on poplar-rs, in the style of Graphcore's GCL: all-reduce,
//! reduce-scatter and all-gather over the replicas of a replicated graph, built only from the
//! public API of `poplar` (replica constants, cross-replica copies, compute sets, `Repeat`).
//!
//! Every replica runs the same program (SPMD). The data are cut into fragments spread over the
//! tiles that hold the inputs; in each step of a ring every replica sends one fragment's share
//! from each tile to the same tile of its ring neighbour (one cross-replica copy, one exchange
//! over the links) and combines what it received with its own data. Which fragment a step
//! touches depends on the replica's ring position (a replica constant) and a step counter, so
//! no control flow differs between replicas and the program does not grow with the number of
//! replicas (`Repeat` over the steps). See `docs/collectives.md`.

pub mod build;
pub mod codelets;
pub mod plan;
pub mod reference;

pub use build::{
    all_gather, all_gather_to, all_reduce, all_reduce_in_place, all_reduce_to, reduce_scatter,
    reduce_scatter_in_place, replicas_per_domain, Collective, Options, Scratch,
};
pub use plan::{Group, Kind, Method, Op, Plan, RingOrder};

use poplar_compiler::graph::GraphError;
use poplar_core::dtype::DType;

/// Keeps this crate's (and the standard library's) codelet registrations in the final
/// binary: call it from every binary and test that compiles a collective.
#[inline(never)]
pub fn link() {
    ::codelets::link();
}

/// Why a collective cannot be built; each names the thing at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CollectiveError {
    /// The group size does not divide the replication factor (or is 0).
    #[error("communication group {group:?} does not divide {replicas} replicas")]
    GroupSize { group: Group, replicas: u32 },
    /// The tensors of one call have different element types.
    #[error("collective '{name}': tensor {index} is {other} but tensor 0 is {first}; one call reduces tensors of one type")]
    MixedTypes {
        name: String,
        index: usize,
        first: DType,
        other: DType,
    },
    /// The operator is not defined for the element type (arithmetic on bool, logic on
    /// numbers, MEAN on int), or the type is not supported at all.
    #[error("collective '{name}': operator {op} is not defined for {dtype}")]
    OpType {
        name: String,
        op: &'static str,
        dtype: DType,
    },
    /// An input has elements not mapped to any tile.
    #[error("collective '{name}': tensor {index} has unmapped elements")]
    Unmapped { name: String, index: usize },
    /// A collective on no tensors, or on tensors of different shapes where one shape is
    /// needed (all-gather outputs).
    #[error("collective '{name}': {reason}")]
    BadInputs { name: String, reason: String },
    /// The graph refused a step of the construction.
    #[error("collective '{name}': {source}")]
    Graph {
        name: String,
        #[source]
        source: GraphError,
    },
}
