//! Two-level partitioning (the paper's future work, §8.1): the cells across the chips first,
//! then each chip's cells across its own tiles.
//!
//! Both levels are METIS k-way (see [`Partitioning::Hierarchical`] for why METIS per level
//! rather than Scotch's tree-leaf mapping or KaHIP's process mapping, and why no second
//! balance constraint for the halo).

use super::*;

/// How the cells are cut into tiles.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Partitioning {
    /// METIS k-way over all tiles at once (the paper's): tile `t` is METIS part `t`, so which
    /// parts share a chip is left to METIS' part numbering.
    #[default]
    Flat,
    /// Two levels: METIS k-way over the chips (minimum edge cut, i.e. least inter-chip
    /// traffic; each chip's share of the cells in proportion to its tiles), then METIS k-way
    /// over each chip's cells into its tiles (3 % each level). Tile `t` is on chip
    /// `t / tiles_per_chip`.
    ///
    /// Why METIS per level: it is already linked (Scotch's `tleaf` target and KaHIP's process
    /// mapping would need new system libraries), and both levels are ordinary k-way problems:
    /// few parts at the chip level, few cells at the tile level (a chip's share), so the tile
    /// level coarsens properly where one cut into all tiles barely does (METIS coarsens only
    /// to `30 k` vertices): from 16 chips on the two levels take less time than the flat cut
    /// (about half at 64 chips), and on the 0.1 mm slab at 64 chips they leave no part empty
    /// where the flat cut leaves 16.
    ///
    /// No second balance constraint for the halo: METIS multi-constraint (weight 1 per cell
    /// and 1 per chip-boundary cell) was tried and rejected, measured on the 0.2 mm slab at 4
    /// chips (53 cells per tile): tiles of 4 to 68 cells instead of 51 to 55, and a cut 7
    /// times slower; with the second weight `1 + boundary` the cells stayed balanced but the
    /// largest halo grew from 1,053 to 1,744 cells. See docs/cardiac.md.
    Hierarchical,
}

impl Partitioning {
    /// Both schemes, flat first.
    pub const ALL: [Partitioning; 2] = [Partitioning::Flat, Partitioning::Hierarchical];

    /// The command-line name (`flat`, `hierarchical`).
    pub fn name(self) -> &'static str {
        match self {
            Partitioning::Flat => "flat",
            Partitioning::Hierarchical => "hierarchical",
        }
    }
}

/// Cuts the cells into `k` tile parts in two levels ([`Partitioning::Hierarchical`]): part `p`
/// lies on chip `p / tiles_per_chip`, the chips filled in order (the last one may have fewer
/// of the `k` tiles). Each chip's parts are then rounded to multiples of `multiple` within the
/// chip ([`round_part_sizes`]; 1: none), so no cell changes chip.
///
/// Parts may come back empty (a chip with fewer cells than tiles, or METIS asked for too many
/// parts); [`partition_hierarchical`] refuses that.
pub fn hierarchical_parts(
    adjacency: &[[u32; 4]],
    tiles_per_chip: usize,
    k: usize,
    multiple: usize,
) -> Result<Vec<u32>, PartitionError> {
    let n = adjacency.len();
    if k == 0 || tiles_per_chip == 0 {
        return Err(PartitionError::ZeroParts);
    }
    if k > n {
        return Err(PartitionError::TooManyParts { k, n });
    }
    let graph = Csr::new(adjacency)?;
    let tiles = chip_tiles(k, tiles_per_chip);
    let chip = chip_level(&graph, &tiles)?;
    let mut cells_of: Vec<Vec<u32>> = vec![Vec::new(); tiles.len()];
    for (c, &p) in chip.iter().enumerate() {
        cells_of[p as usize].push(c as u32);
    }
    // Each cell's index among its chip's cells (ascending cell order within a chip).
    let mut local = vec![0u32; n];
    for cells in &cells_of {
        for (i, &c) in cells.iter().enumerate() {
            local[c as usize] = i as u32;
        }
    }
    let mut parts = vec![0u32; n];
    for (c, cells) in cells_of.iter().enumerate() {
        let sub = chip_adjacency(adjacency, &chip, &local, c as u32, cells);
        let tile = tile_level(&sub, tiles[c], multiple)?;
        for (&x, &t) in cells.iter().zip(&tile) {
            parts[x as usize] = (c * tiles_per_chip) as u32 + t;
        }
    }
    Ok(parts)
}

/// [`hierarchical_parts`] without rounding, refusing a partition with an empty part
/// ([`PartitionError::EmptyParts`]).
pub fn partition_hierarchical(
    adjacency: &[[u32; 4]],
    tiles_per_chip: usize,
    k: usize,
) -> Result<Vec<u32>, PartitionError> {
    let parts = hierarchical_parts(adjacency, tiles_per_chip, k, 1)?;
    check_non_empty(&parts, k)?;
    Ok(parts)
}

/// Tiles used on each chip when `k` tiles fill the chips in order.
fn chip_tiles(k: usize, tiles_per_chip: usize) -> Vec<usize> {
    let chips = k.div_ceil(tiles_per_chip);
    (0..chips)
        .map(|c| tiles_per_chip.min(k - c * tiles_per_chip))
        .collect()
}

/// The chip of every cell: METIS k-way over the chips, each chip's share of the cells in
/// proportion to its tiles.
fn chip_level(graph: &Csr, tiles: &[usize]) -> Result<Vec<u32>, PartitionError> {
    if tiles.len() == 1 {
        return Ok(vec![0; graph.len()]);
    }
    let k: usize = tiles.iter().sum();
    let w = Weights {
        tpwgts: Some(tiles.iter().map(|&t| t as f32 / k as f32).collect()),
        ..Weights::default()
    };
    metis_kway(graph, &w, tiles.len())
}

/// The face adjacency among one chip's `cells`, in their local numbering (neighbours on other
/// chips dropped).
fn chip_adjacency(
    adjacency: &[[u32; 4]],
    chip: &[u32],
    local: &[u32],
    this: u32,
    cells: &[u32],
) -> Vec<[u32; 4]> {
    cells
        .iter()
        .map(|&c| {
            adjacency[c as usize].map(|j| {
                if j != u32::MAX && chip[j as usize] == this {
                    local[j as usize]
                } else {
                    u32::MAX
                }
            })
        })
        .collect()
}

/// One chip's cells across its `tiles` tiles: METIS k-way (3 %), then rounded within the chip.
/// At most one tile per cell: with fewer cells than tiles the rest stay empty.
fn tile_level(sub: &[[u32; 4]], tiles: usize, multiple: usize) -> Result<Vec<u32>, PartitionError> {
    let k = tiles.min(sub.len());
    if k <= 1 {
        return Ok(vec![0; sub.len()]);
    }
    let parts = metis_kway(&Csr::new(sub)?, &Weights::default(), k)?;
    Ok(round_part_sizes(sub, parts, k, multiple))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chips_fill_in_order() {
        assert_eq!(chip_tiles(10, 4), [4, 4, 2]);
        assert_eq!(chip_tiles(8, 4), [4, 4]);
        assert_eq!(chip_tiles(3, 4), [3]);
    }
}
