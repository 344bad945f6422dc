//! What the poplar-rs applications (cardiac, hdiff, mlp) share, written once:
//!
//! - [`output`]: the output folder of a run, checked before any work and locked for the run
//!   (created if missing; refused if it is a file, cannot be written, is in use by another
//!   run, or holds an earlier run's files unless forced, which removes them), files written
//!   atomically (a temporary file beside them, synced, then renamed; every file created
//!   exclusively, never through a planted link), and the rule of single-file outputs (no
//!   overwrite unless forced, never an input, a folder that exists and takes files);
//! - [`bounds`]: what every app refuses before any work: `--threads 0`, and estimated work
//!   past a bound unless `--force`;
//! - [`input`]: every file the user gives opened only if it is a regular file (a FIFO or a
//!   device is refused instead of blocking);
//! - [`launcher`]: a build without MPI support refuses to run as the N copies an MPI launcher
//!   would start;
//! - [`vtk`]: the pieces of a VTK XML file the apps' writers share: the header and footer,
//!   and base64 binary data arrays with their 64-bit size prefix;
//! - `npy` (feature `npy`): the one `.npy` reader, which checks every size its header claims
//!   against the file (overflow included) before it allocates or indexes;
//! - `fonts` (feature `plot`): the embedded DejaVu Sans registered once for plotters;
//! - `testing` (feature `testing`): an app's binary run on N ranks under `mpiexec`, for the
//!   multi-rank tests.

pub mod bounds;
pub mod input;
pub mod launcher;
pub mod output;
pub mod vtk;

#[cfg(feature = "plot")]
pub mod fonts;

#[cfg(feature = "npy")]
pub mod npy;

#[cfg(feature = "testing")]
pub mod testing;
