//! Tiles, separators and halos (paper §3.4, §4.1): METIS k-way partitioning of the cells (flat
//! over all tiles, or in two levels, chips then tiles: [`Partitioning`]), a
//! renumbering that makes every tile's cells one contiguous range laid out
//! `[interior | separator]`, and the halo ranges each tile concatenates before its own slice
//! under the paper's three separator strategies and two more, `chip-mixed-clean` and `runs`.
//!
//! Vocabulary (per tile): *interior* cells are read by no other tile; *separator* cells are
//! read by at least one other tile (their *destinations*); *halo* cells are other tiles' cells
//! this tile reads. Coupling is the ELLPACK sparsity: a row reads its face neighbours and their
//! neighbours, so halos are two layers deep.
//!
//! # Separator layout
//! Separator cells are grouped by their destination set `D(c)`. For the paper's three
//! strategies, the **mixed** block ([`TilePlan::mixed`]) holds the cells with `|D| ≥ 2`, and
//! each destination `p` has one **clean** block (cells with `D = {p}`). Both constraints
//! mixed-clean needs (mixed block contiguous, each clean block contiguous) hold for all three;
//! within them the layout is chosen per tile to keep ranged ranges short (see
//! `separator_layout`): either clean blocks on both sides of the mixed block, or mixed first
//! then the clean blocks. [`Strategy::ChipMixedClean`] lays the separator out
//! `[clean blocks | mixed read on this chip only | mixed read on other chips]`
//! ([`TilePlan::mixed_remote`] is the last part), the last sorted by the set of other chips
//! reading each cell (see `chip_layout`; the chips come from [`PlanOptions::part_chip`]).
//! [`Strategy::Runs`] has no mixed block: cells with equal `D` are contiguous, and those
//! groups are ordered so that each destination's cells form few runs (see `runs_layout`).
//!
//! Given the cells' models ([`PlanOptions::cell_model`]), each run of cells with one destination
//! set — the interior, each clean block, each group of mixed cells — is then ordered by model,
//! which moves no range boundary.
//!
//! # What a destination receives from a source tile `q`
//! * [`Strategy::Full`]: `q`'s whole separator (mixed + all clean blocks);
//! * [`Strategy::Ranged`]: the smallest range of `q`'s numbering enclosing the cells it needs;
//! * [`Strategy::MixedClean`]: `q`'s whole mixed block if it needs any mixed cell (the same
//!   range for every such destination, so the framework can broadcast it), plus its own clean
//!   block, which contains no unused value.
//! * [`Strategy::ChipMixedClean`] (not in the paper): on `q`'s chip, as mixed-clean but with
//!   the mixed block's two parts as two ranges, each received only if needed; on another
//!   chip, only the span of `q`'s remote mixed part that its chip reads (the same range for
//!   every tile of that chip, so it crosses between the chips once), plus its clean block.
//! * [`Strategy::Runs`] (not in the paper): the runs of `q`'s numbering made of cells it
//!   needs, one range each, where runs at most [`RUN_GAP`] cells apart are bridged into one.
//!
//! Provable orderings, asserted in `tests/partition.rs`: per (source, destination) pair
//! `needed ≤ ranged ≤ full` and `needed ≤ chip-mixed-clean ≤ mixed-clean ≤ full`; the only
//! unused halo values under (chip-)mixed-clean are mixed-block cells, under runs the bridged
//! gaps. Ranged vs mixed-clean, and ranged vs runs (laid out differently), depend on the mesh.

mod balance;
mod hier;
mod kway;
mod layout;
mod local;
mod plan;
mod stats;

pub use balance::*;
pub use hier::*;
pub use kway::*;
use layout::*;
pub use local::*;
pub use plan::*;
pub use stats::*;

use crate::matrix::{ell_rows, Ellpack, ELL_WIDTH};
use std::ops::Range;

/// How separator values are cut into outgoing ranges (paper §4.1).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Every destination receives the source's whole separator block.
    Full,
    /// One smallest enclosing range per destination.
    Ranged,
    /// A mixed range (cells needed by ≥ 2 destinations, broadcast) plus one clean range each.
    MixedClean,
    /// Not in the paper: mixed-clean with the mixed block split by where its readers are — the
    /// cells read only on the source's chip, then those read on other chips, grouped by those
    /// chips — so that a tile on another chip receives only the cells its chip reads.
    ChipMixedClean,
    /// Not in the paper: one range per run of needed cells, bridging gaps of at most
    /// [`RUN_GAP`] unneeded cells (more, shorter ranges; fewer unused values).
    Runs,
}

impl Strategy {
    /// All strategies: the paper's three in its order, then [`Strategy::ChipMixedClean`] and
    /// [`Strategy::Runs`].
    pub const ALL: [Strategy; 5] = [
        Strategy::Full,
        Strategy::Ranged,
        Strategy::MixedClean,
        Strategy::ChipMixedClean,
        Strategy::Runs,
    ];

    /// The command-line name (`full`, `ranged`, `mixed-clean`, `chip-mixed-clean`, `runs`).
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Full => "full",
            Strategy::Ranged => "ranged",
            Strategy::MixedClean => "mixed-clean",
            Strategy::ChipMixedClean => "chip-mixed-clean",
            Strategy::Runs => "runs",
        }
    }
}

/// Longest gap of unneeded cells that [`Strategy::Runs`] sends rather than cutting the range.
///
/// Why 16: sixteen `f32` are one 64-byte cache line, so a bridged gap costs at most about one
/// line more to move, while every extra range is one more exchange copy (one more exchange
/// instruction on the chip; on the host a copy costs about as much as a few lines). Measured on
/// the 0.2 mm slab, 1 chip, in one process, spmv + exchange per step with the grouped layout
/// (`runs_layout`): gaps of 4 / 8 / 16 / 32 / 64 cells gave 1.55 / 1.63 / 1.55 / 1.55 / 1.65
/// ms (ranged 1.71): flat from 4 to 32 within noise; 16 receives 470,281 values in 34,117
/// ranges, 4 receives 417,894 in 39,879 and 64 883,414 in 23,433.
pub const RUN_GAP: usize = 16;

/// Errors of partitioning and planning; bad input is reported, never panicked on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PartitionError {
    #[error("number of parts must be ≥ 1")]
    ZeroParts,
    #[error("cannot cut {n} cells into {k} non-empty parts")]
    TooManyParts { k: usize, n: usize },
    /// METIS returned a partition with parts left empty (it does so without an error code
    /// when asked for too many parts for the graph).
    #[error(
        "METIS left {empty} of {k} parts empty cutting {n} cells (too many parts for the graph)"
    )]
    EmptyParts { k: usize, n: usize, empty: usize },
    #[error("graph too large for METIS' 32-bit indices ({0} entries)")]
    TooLarge(usize),
    #[error("cell {cell}: neighbour {neighbour} out of range or self")]
    BadNeighbour { cell: usize, neighbour: u32 },
    #[error("cell {cell}: neighbour {neighbour} does not list it back (asymmetric adjacency)")]
    AsymmetricAdjacency { cell: usize, neighbour: u32 },
    #[error("METIS failed: {0}")]
    Metis(String),
    #[error("{what} has length {got}, expected {expected}")]
    LengthMismatch {
        what: &'static str,
        got: usize,
        expected: usize,
    },
    #[error("cell {cell}: part {part} ≥ k = {k}")]
    PartOutOfRange { cell: usize, part: u32, k: usize },
    #[error("cell {cell}: column {col} out of range")]
    BadColumn { cell: usize, col: u32 },
    #[error("tile {tile}: column {col} (new numbering) is neither owned nor in a halo range")]
    MissingHalo { tile: usize, col: u32 },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs of each destination in a separator order (no bridging).
    fn runs_per_destination(order: &[u32], dests: &[Vec<u32>]) -> Vec<(u32, usize)> {
        let mut all: Vec<u32> = order
            .iter()
            .flat_map(|&c| dests[c as usize].clone())
            .collect();
        all.sort_unstable();
        all.dedup();
        all.iter()
            .map(|&p| {
                let reads = |c: &u32| dests[*c as usize].contains(&p);
                let starts = (0..order.len())
                    .filter(|&i| reads(&order[i]) && (i == 0 || !reads(&order[i - 1])))
                    .count();
                (p, starts)
            })
            .collect()
    }

    #[test]
    fn runs_layout_makes_a_chain_of_destination_sets_one_run_each() {
        // Destination sets forming the chain {3} {1,3} {1} {1,4} {4} {2,4} {2}, given shuffled
        // and with several cells per set: an order exists where every destination's cells are
        // one run, and the tour must find it (sorting the cells by destination set would give
        // 7 runs).
        let sets: [&[u32]; 7] = [&[1, 3], &[2], &[3], &[1, 4], &[2, 4], &[1], &[4]];
        let mut dests: Vec<Vec<u32>> = Vec::new();
        for rep in 0..3 {
            for s in sets.iter().skip(rep) {
                dests.push(s.to_vec());
            }
        }
        for s in sets {
            dests.push(s.to_vec());
        }
        let separator: Vec<u32> = (0..dests.len() as u32).rev().collect();
        let order = runs_layout(&separator, &dests);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..dests.len() as u32).collect::<Vec<_>>(),
            "a permutation"
        );
        for (p, runs) in runs_per_destination(&order, &dests) {
            assert_eq!(runs, 1, "destination {p}: {order:?}");
        }
        // Sorting by destination set is not optimal here.
        let mut by_set = separator.clone();
        by_set.sort_by(|&a, &b| dests[a as usize].cmp(&dests[b as usize]));
        let total = |o: &[u32]| {
            runs_per_destination(o, &dests)
                .iter()
                .map(|r| r.1)
                .sum::<usize>()
        };
        assert_eq!(total(&by_set), 7);
        assert_eq!(total(&order), 4);
    }

    #[test]
    fn symmetric_difference_counts_elements_in_exactly_one_list() {
        assert_eq!(symmetric_difference(&[], &[]), 0);
        assert_eq!(symmetric_difference(&[1, 2, 3], &[]), 3);
        assert_eq!(symmetric_difference(&[1, 2, 3], &[2, 3, 4]), 2);
        assert_eq!(symmetric_difference(&[1, 5], &[2, 3, 4]), 5);
    }
}
