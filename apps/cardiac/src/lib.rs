//! The monodomain cardiac simulator of "unstructured-mesh computations on Graphcore IPUs",
//! written only against the public API of `poplar` and `codelets`.

pub mod mesh;
pub mod tp06;
