//! The partition plan: renumbering, interior/separator cells, and the halo ranges every tile
//! receives under a strategy.

use super::*;

/// One tile's slice of the renumbered vector and what it receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TilePlan {
    /// The tile's own cells in the new numbering: `[interior | separator]`, the separator laid
    /// out as described in the module documentation.
    pub cells: Range<usize>,
    pub n_interior: usize,
    /// Separator cells (mixed + clean), at the end of `cells`.
    pub n_separator: usize,
    /// The mixed block (cells needed by ≥ 2 tiles) inside the separator, in the new numbering;
    /// the clean blocks lie on either side of it. Empty (at the separator's start) under
    /// [`Strategy::Runs`], whose layout has no mixed block.
    pub mixed: Range<usize>,
    /// The end of [`TilePlan::mixed`] read on other chips (under
    /// [`Strategy::ChipMixedClean`]; empty at `mixed.end` otherwise).
    pub mixed_remote: Range<usize>,
    /// New-numbering ranges concatenated before the own slice, sorted and disjoint.
    pub halo_ranges: Vec<Range<usize>>,
    /// Received cells some row of this tile reads.
    pub halo_used: usize,
    /// Received cells no row of this tile reads.
    pub halo_unused: usize,
}

impl TilePlan {
    /// Cells received (sum of halo range lengths).
    pub fn inbound(&self) -> usize {
        self.halo_used + self.halo_unused
    }

    /// Length of the tile's local vector: own cells then halo.
    pub fn local_len(&self) -> usize {
        self.cells.len() + self.inbound()
    }
}

/// A complete plan: the renumbering and every tile's ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionPlan {
    pub strategy: Strategy,
    pub new_to_old: Vec<u32>,
    pub old_to_new: Vec<u32>,
    pub tiles: Vec<TilePlan>,
}

impl PartitionPlan {
    /// Tile `tile`'s local input vector, gathered from a vector in the new numbering: the halo
    /// ranges followed by the own cells — what the framework's exchange builds on the tile.
    /// (Halo first: the own slice then starts the tile's segment of `s`, the V row, and the
    /// compiler can receive the halo into slack right before it instead of copying the own
    /// slice next to a received halo every step.)
    pub fn gather_local(&self, tile: usize, x_new: &[f32]) -> Vec<f32> {
        let t = &self.tiles[tile];
        let mut v = Vec::with_capacity(t.local_len());
        for r in &t.halo_ranges {
            v.extend_from_slice(&x_new[r.clone()]);
        }
        v.extend_from_slice(&x_new[t.cells.clone()]);
        v
    }

    /// Permutes a vector in the old (mesh) numbering into the new one.
    pub fn to_new<T: Copy>(&self, x_old: &[T]) -> Vec<T> {
        self.new_to_old.iter().map(|&o| x_old[o as usize]).collect()
    }

    /// Permutes a vector in the new numbering back to the old one.
    pub fn to_old<T: Copy>(&self, x_new: &[T]) -> Vec<T> {
        self.old_to_new.iter().map(|&g| x_new[g as usize]).collect()
    }
}

/// What [`plan`] may know beyond the cut: both optional.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanOptions<'a> {
    /// One model id per cell (old numbering): see [`plan`].
    pub cell_model: Option<&'a [u8]>,
    /// The chip of each part (`k` entries). Without it every part is on one chip, and
    /// [`Strategy::ChipMixedClean`] receives what [`Strategy::MixedClean`] receives.
    pub part_chip: Option<&'a [u32]>,
}

/// Builds the plan for `parts` (one part per cell, `< k`), reading coupling from the ELLPACK
/// sparsity of `ell` (old numbering).
///
/// With `options.cell_model` (one model id per cell, old numbering), each tile's cells that
/// share a destination set (all its interior cells; each clean block; each group of mixed
/// cells) are ordered by model, so that the TP06 kernel's blocks of consecutive cells are of
/// one model wherever the tile allows (a block of one model fills its parameters once instead
/// of gathering them per lane). Such a reordering moves no cell across a range boundary, so the
/// halo ranges, and every result, are the same with and without it.
pub fn plan(
    parts: &[u32],
    k: usize,
    ell: &Ellpack,
    strategy: Strategy,
    options: &PlanOptions,
) -> Result<PartitionPlan, PartitionError> {
    let n = parts.len();
    let cell_model = options.cell_model;
    check_inputs(parts, k, ell, options)?;
    let dests = destination_sets(parts, ell)?;

    // Cells of each tile in old order, then the layout interior | mixed | clean.
    let mut by_tile: Vec<Vec<u32>> = vec![Vec::new(); k];
    for (c, &p) in parts.iter().enumerate() {
        by_tile[p as usize].push(c as u32);
    }
    let one_chip = vec![0u32; k];
    let part_chip = options.part_chip.unwrap_or(&one_chip);
    let mut new_to_old = Vec::with_capacity(n);
    let mut tiles = Vec::with_capacity(k);
    // Per tile, under chip-mixed-clean: for each other chip, the span of the tile's remote
    // mixed part that the chip reads.
    let mut chip_spans: Vec<Vec<(u32, Range<usize>)>> = vec![Vec::new(); k];
    for (t, cells) in by_tile.iter().enumerate() {
        let start = new_to_old.len();
        let mut interior: Vec<u32> = cells
            .iter()
            .copied()
            .filter(|&c| dests[c as usize].is_empty())
            .collect();
        let separator: Vec<u32> = cells
            .iter()
            .copied()
            .filter(|&c| !dests[c as usize].is_empty())
            .collect();
        // Runs need no mixed block; their layout groups cells by destination set instead.
        let (mut order, mixed, remote) = match strategy {
            Strategy::Runs => (runs_layout(&separator, &dests), 0..0, 0),
            Strategy::ChipMixedClean => chip_layout(&separator, &dests, part_chip, part_chip[t]),
            _ => {
                let (order, mixed) = separator_layout(&separator, &dests);
                let end = mixed.end;
                (order, mixed, end)
            }
        };
        if let Some(model) = cell_model {
            group_by_model(&mut interior, &dests, model);
            group_by_model(&mut order, &dests, model);
        }
        new_to_old.extend_from_slice(&interior);
        let sep_start = new_to_old.len();
        new_to_old.extend_from_slice(&order);
        let remote_part = if strategy == Strategy::ChipMixedClean {
            &order[remote..]
        } else {
            &[]
        };
        for (pos, &c) in (remote..).zip(remote_part) {
            for chip in remote_chips(&dests[c as usize], part_chip, part_chip[t]) {
                let g = sep_start + pos;
                match chip_spans[t].iter_mut().find(|e| e.0 == chip) {
                    Some(e) => e.1.end = g + 1,
                    None => chip_spans[t].push((chip, g..g + 1)),
                }
            }
        }
        tiles.push(TilePlan {
            cells: start..new_to_old.len(),
            n_interior: interior.len(),
            n_separator: order.len(),
            mixed: sep_start + mixed.start..sep_start + mixed.end,
            mixed_remote: sep_start + remote..sep_start + mixed.end,
            halo_ranges: Vec::new(),
            halo_used: 0,
            halo_unused: 0,
        });
    }
    let mut old_to_new = vec![0u32; n];
    for (g, &o) in new_to_old.iter().enumerate() {
        old_to_new[o as usize] = g as u32;
    }

    add_halos(
        parts,
        ell,
        &old_to_new,
        strategy,
        part_chip,
        &chip_spans,
        &mut tiles,
    );
    Ok(PartitionPlan {
        strategy,
        new_to_old,
        old_to_new,
        tiles,
    })
}

/// The plan's inputs agree: `k` parts, one per cell below `k`, the operator's rows and the
/// options' tables of the same sizes.
fn check_inputs(
    parts: &[u32],
    k: usize,
    ell: &Ellpack,
    options: &PlanOptions,
) -> Result<(), PartitionError> {
    let n = parts.len();
    let cell_model = options.cell_model;
    if k == 0 {
        return Err(PartitionError::ZeroParts);
    }
    for (what, got, expected) in [
        ("Ellpack rows", ell.n, n),
        ("Ellpack diag", ell.diag.len(), n),
        ("Ellpack cols", ell.cols.len(), n * ELL_WIDTH),
        ("Ellpack values", ell.values.len(), n * ELL_WIDTH),
        ("cell models", cell_model.map_or(n, <[u8]>::len), n),
        ("part chips", options.part_chip.map_or(k, <[u32]>::len), k),
    ] {
        if got != expected {
            return Err(PartitionError::LengthMismatch {
                what,
                got,
                expected,
            });
        }
    }
    if let Some((cell, &part)) = parts.iter().enumerate().find(|(_, &p)| p as usize >= k) {
        return Err(PartitionError::PartOutOfRange { cell, part, k });
    }
    if n > u32::MAX as usize {
        return Err(PartitionError::TooLarge(n));
    }

    Ok(())
}

/// Each tile's halo ranges and their counts (cells used and received unused), from the
/// halo cells each (destination, source) pair of tiles needs (the rows' columns) under
/// `strategy`; `chip_spans`: per tile, the span of its remote mixed part each other chip reads.
fn add_halos(
    parts: &[u32],
    ell: &Ellpack,
    old_to_new: &[u32],
    strategy: Strategy,
    part_chip: &[u32],
    chip_spans: &[Vec<(u32, Range<usize>)>],
    tiles: &mut [TilePlan],
) {
    let n = parts.len();
    // Needed halo cells per (destination, source), in new numbering, from the rows' columns.
    // Each entry is (dest, source, new index); sorting groups them per pair.
    let mut needs: Vec<(u32, u32, u32)> = Vec::new();
    for i in 0..n {
        for c in ell.row_cols(i) {
            let (pi, pc) = (parts[i], parts[c as usize]);
            if pi != pc {
                needs.push((pi, pc, old_to_new[c as usize]));
            }
        }
    }
    needs.sort_unstable();
    needs.dedup();

    let mut a = 0;
    while a < needs.len() {
        let (dest, src) = (needs[a].0, needs[a].1);
        let mut b = a;
        while b < needs.len() && needs[b].0 == dest && needs[b].1 == src {
            b += 1;
        }
        let cells: Vec<usize> = needs[a..b].iter().map(|e| e.2 as usize).collect();
        let s = &tiles[src as usize];
        let mut ranges = halo_ranges(
            strategy,
            &cells,
            s,
            part_chip[dest as usize] == part_chip[src as usize],
            || {
                let chip = part_chip[dest as usize];
                chip_spans[src as usize]
                    .iter()
                    .find(|e| e.0 == chip)
                    .map(|e| e.1.clone())
            },
        );
        // Keep a tile's halo ranges sorted (a clean block may precede the mixed block).
        ranges.sort_by_key(|r| r.start);
        let received: usize = ranges.iter().map(|r| r.len()).sum();
        let t = &mut tiles[dest as usize];
        t.halo_ranges.extend(ranges);
        t.halo_used += cells.len();
        t.halo_unused += received - cells.len();
        a = b;
    }
}

/// The other tiles whose rows read each cell (sorted, without repeats).
fn destination_sets(parts: &[u32], ell: &Ellpack) -> Result<Vec<Vec<u32>>, PartitionError> {
    let n = parts.len();
    let mut dests: Vec<Vec<u32>> = vec![Vec::new(); n];
    for i in 0..n {
        for c in ell.row_cols(i) {
            if c as usize >= n {
                return Err(PartitionError::BadColumn { cell: i, col: c });
            }
            if parts[c as usize] != parts[i] {
                dests[c as usize].push(parts[i]);
            }
        }
    }
    for d in &mut dests {
        d.sort_unstable();
        d.dedup();
    }
    Ok(dests)
}

/// The ranges of the source tile `s` (new numbering) that a destination receives to have the
/// halo `cells` it needs (sorted, without repeats), under `strategy`; `same_chip`: whether
/// the destination is on the source's chip; `chip_span`: the span of the source's remote
/// mixed part that the destination's chip reads (chip-mixed-clean).
fn halo_ranges(
    strategy: Strategy,
    cells: &[usize],
    s: &TilePlan,
    same_chip: bool,
    chip_span: impl FnOnce() -> Option<Range<usize>>,
) -> Vec<Range<usize>> {
    let sep = s.cells.end - s.n_separator..s.cells.end;
    let mixed = s.mixed.clone();
    let mut ranges = Vec::new();
    match strategy {
        Strategy::Full => ranges.push(sep),
        Strategy::Ranged => ranges.push(cells[0]..cells[cells.len() - 1] + 1),
        Strategy::Runs => {
            // `cells` is sorted and duplicate-free: cut where more than RUN_GAP cells
            // nobody here needs lie between two needed ones.
            let mut start = cells[0];
            for w in cells.windows(2) {
                if w[1] - w[0] - 1 > RUN_GAP {
                    ranges.push(start..w[0] + 1);
                    start = w[1];
                }
            }
            ranges.push(start..cells[cells.len() - 1] + 1);
        }
        Strategy::MixedClean | Strategy::ChipMixedClean => {
            let remote = s.mixed_remote.clone();
            let local = mixed.start..remote.start;
            let needs_any = |r: &Range<usize>| cells.iter().any(|c| r.contains(c));
            // (Under mixed-clean `remote` is empty and `local` the whole mixed block.)
            if strategy == Strategy::MixedClean || same_chip {
                // The part read only on this chip, then the part read on others too (each
                // the same range for all its readers on this chip, so it is broadcast).
                ranges.extend([local, remote].into_iter().filter(|r| needs_any(r)));
            } else if needs_any(&remote) {
                // Another chip's destination needs only cells its chip reads.
                ranges.extend(chip_span());
            }
            // Clean cells for this destination form one block: find its bounds.
            let clean: Vec<usize> = cells
                .iter()
                .copied()
                .filter(|&c| !mixed.contains(&c))
                .collect();
            if let (Some(&lo), Some(&hi)) = (clean.first(), clean.last()) {
                ranges.push(lo..hi + 1);
            }
        }
    }
    ranges
}

/// Stable-sorts each run of consecutive `cells` with the same destination set by `model`:
/// a permutation inside a run keeps every cell inside the same halo ranges (each range of every
/// strategy starts and ends at a change of destination set).
fn group_by_model(cells: &mut [u32], dests: &[Vec<u32>], model: &[u8]) {
    let mut a = 0;
    while a < cells.len() {
        let sig = &dests[cells[a] as usize];
        let b = a + cells[a..]
            .iter()
            .take_while(|&&c| dests[c as usize] == *sig)
            .count();
        cells[a..b].sort_by_key(|&c| model[c as usize]);
        a = b;
    }
}
