//! The cycle model held against published measurements: the validation table of
//! `docs/cycle-model.md`.
//!
//! Each [`Row`] puts a figure the model gives beside the published figure it should reproduce,
//! with a tolerance (or a bound). `cargo bench -p cycle-validation --bench table` prints the
//! table; `tests/table.rs` fails when a row leaves its tolerance, so that a change to an
//! estimate that drifts from the published figures is caught.

pub mod chip;
pub mod paper;
pub mod peak;
pub mod poplibs;
pub mod row;
pub mod sparse;
pub mod workers;

pub use row::{markdown, summary, Check, Kind, Row, Summary};

/// Every row of the table, in the order of `docs/cycle-model.md`.
pub fn table() -> Vec<Row> {
    let mut rows = chip::rows();
    rows.extend(sparse::rows());
    rows.extend(paper::rows(&paper::paper_load()));
    rows.extend(workers::rows());
    rows.extend(poplibs::rows());
    rows.extend(peak::rows());
    rows
}
