//! The monodomain cardiac simulator of "unstructured-mesh computations on Graphcore IPUs",
//! written only against the public API of `poplar` and `codelets`.

/// `println!` on rank 0 only: under `mpiexec` every rank runs the same code (reads included,
/// which are collective), and one of them talks.
#[macro_export]
macro_rules! say {
    ($($t:tt)*) => {
        if poplar::dist::is_root() {
            println!($($t)*);
        }
    };
}

/// `eprintln!` on rank 0 only (warnings and progress; see [`say!`]).
#[macro_export]
macro_rules! note {
    ($($t:tt)*) => {
        if poplar::dist::is_root() {
            eprintln!($($t)*);
        }
    };
}

pub mod app;
pub mod cell;
pub mod ecg;
pub mod format;
pub mod matrix;
pub mod mesh;
pub mod partition;
pub mod plot;
pub mod report;
pub mod solver;
/// The TP06 cell model (the `tp06` crate), as `cardiac::tp06`.
pub use tp06;
