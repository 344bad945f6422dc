//! The application around the solver: what `cardiac run`, `compile` and `exec` do, as library
//! code the binary only dispatches to (and tests call directly).
//!
//! - [`problem`]: a problem description (mesh, stimulus, time step, machine) checked and
//!   assembled into a [`Setup`](crate::solver::Setup) and a device configuration;
//! - [`protocol`]: stimulus regions and their cells, sites with their own timing, S1–S2, cell
//!   lists, and regions with their own cell type and TP06 scalings;
//! - [`advice`]: what a modeller should know about a problem before trusting its results;
//! - [`probes`]: which cells are the benchmark points and the diagonal samples;
//! - [`bundle`]: what an executable carries besides the program (run info, probes, mesh) as
//!   application sections of the executable file;
//! - [`output`]: the output folder (checked before any work) and its one writer of result
//!   files; snapshots, traces and per-beat maps;
//! - [`results`]: `results.json`, the typed record of a run;
//! - [`single`]: the files of `cardiac cell` (one paced cell);
//! - [`run`]: the run loop, stopping exactly at the requested time;
//! - [`console`]: what the commands print about a run (machine, points, phase breakdown);
//! - [`run_cmd`]: `cardiac run`, in named steps;
//! - [`checkpoint`]: checkpoints of `cardiac run` (`--checkpoint-every`, a signal) and
//!   `--resume`;
//! - [`saved`]: `cardiac compile` and `cardiac exec` (an executable saved to a file);
//! - [`partition_table`]: `cardiac partition` (the paper's Table 1);
//! - [`diagonal_plot`]: `cardiac plot-diagonal`.

pub mod advice;
pub mod bundle;
pub mod checkpoint;
pub mod console;
pub mod diagonal_plot;
pub mod output;
pub mod partition_table;
pub mod probes;
pub mod problem;
pub mod protocol;
pub mod results;
pub mod run;
pub mod run_cmd;
pub mod run_records;
pub mod saved;
pub mod single;
pub mod study;
pub mod study_plot;
