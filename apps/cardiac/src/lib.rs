//! The monodomain cardiac simulator of "unstructured-mesh computations on Graphcore IPUs",
//! written only against the public API of `poplar` and `codelets`.

pub mod app;
pub mod cell;
pub mod matrix;
pub mod mesh;
pub mod partition;
pub mod plot;
pub mod report;
pub mod solver;
pub mod tp06;
