//! A dynamic sparse fully-connected layer on poplar-rs, in the manner of Poplar's popsparse
//! (`shared/seeds/popsparse-dynamic-sparse-matmul.txt`): `Y = W·X` (Fwd), `X' = Wᵀ·Y'`
//! (GradA) and `W' = Y'·Xᵀ` on the pattern (GradW), with `W` sparse (element or block
//! sparsity; f32, or f16 values with f32 partials) and its pattern changeable at run time
//! without recompiling. See `docs/sparse.md` for a walk through the API.
//!
//! - [`mod@plan`]: the planner (`P_X × P_Y × P_Z` tiles, bucket capacity) and its cost model;
//! - [`mod@encode`]: the host encoder from COO triplets into buckets, spilling by ring
//!   distance, with a typed overflow error; and the GradW decoder;
//! - [`mod@build`]: the weights and dense operands in a graph, and the three passes
//!   (distribution, propagation with `RepeatWhileTrue` and `Switch` on the active buffer,
//!   reduction);
//! - [`mod@host`]: writing an encoded pattern into an engine (any `Device`);
//! - [`mod@codelets`]: the vertices;
//! - [`mod@cost`]: their cycle costs (poplibs' estimators), shared by the builder and the
//!   planner.
//!
//! Binaries call [`link()`] once (it links `poplin` and the standard codelets too).
//!
//! Element sparsity (the vector path) and blocks of 4, 8 and 16 (on the AMP); f32, or f16
//! values with f32 partials.

pub mod build;
pub mod codelets;
pub mod cost;
pub mod encode;
pub mod host;
pub mod plan;

pub use build::{
    create_input, create_output, create_weights, fwd, grad_a, grad_w, FcError, SparseWeights,
};
pub use encode::{
    decode, decode_grad, encode, encode_blocks, encode_csr, Csr, EncodeError, Encoded,
};
pub use host::write_encoded;
pub use plan::{plan, FcEstimate, FcOptions, FcParams, FcPlan, FcPlanError, FcRule};

/// Keeps this crate's codelet registrations (and `poplin`'s and the standard ones) linked.
pub fn link() {
    poplin::link();
}
