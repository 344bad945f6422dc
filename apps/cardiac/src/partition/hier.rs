//! Two-level partitioning (the paper's future work, §8.1): the cells across the chips first,
//! then each chip's cells across its own tiles.
//!
//! Both levels are METIS k-way (see [`Partitioning::Hierarchical`] for why METIS per level
//! rather than Scotch's tree-leaf mapping or KaHIP's process mapping, and why no second
//! balance constraint for the halo); between them the chip parts are placed on the chips by
//! the target's links ([`ChipLinks`]).

use super::*;
use poplar::rand::SplitMix64;
use rayon::prelude::*;

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
    /// Two levels: METIS k-way over the chips, minimising the total communication volume
    /// (METIS' `objtype vol`: the cells sent, which is what crosses the links, rather than
    /// the edges cut), each chip's share of the cells in proportion to its tiles within 0.1 %;
    /// the chip parts placed on the chips so that the slowest chip's busiest link time plus
    /// its farthest hop's latency is least ([`ChipLinks::cost`]); then METIS k-way over each
    /// chip's cells into its tiles (minimum edge cut and minimum connectivity, 3 %, one
    /// initial partitioning), no tile over the workers' even share ([`cap_part_sizes`]), the
    /// chips on rayon's threads with the same result on any thread count. Tile `t` is on chip
    /// `t / tiles_per_chip`.
    ///
    /// Measured on the heart04-size mesh at 4 and 16 chips (docs/cardiac.md): the volume
    /// objective sends 1–5 % fewer bytes between chips than the edge cut, and the placement
    /// brings the farthest message from 7 hops to 4 at 16 chips (the exchange's slowest tile
    /// waits for its busiest link and the latency of its farthest hop). Rejected: the chip level
    /// with METIS' default 3 % (tiles then exceed a whole TP06 block, +4.5 % ODE time at 16
    /// chips); chips as rungs of the ladder (slices along the heart's long axis: at most 2
    /// hops, but 1.7 times the inter-chip bytes; a snake of slices along the ladder: 1 hop,
    /// but 1.8 and 3.3 times the bytes at 4 and 16 chips and a slower exchange); a greedy pass
    /// evening the tiles' halos.
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
/// of the `k` tiles), chips joined as GC200 chips in a ladder ([`ChipLinks::of`]), six workers
/// a tile. Each chip's parts are then capped at the workers' even share ([`cap_part_sizes`])
/// and rounded to multiples of `multiple` within the chip ([`round_part_sizes_within`]; 1:
/// none), so no cell changes chip.
///
/// Parts may come back empty (a chip with fewer cells than tiles, or METIS asked for too many
/// parts); [`partition_hierarchical`] refuses that.
pub fn hierarchical_parts(
    adjacency: &[[u32; 4]],
    tiles_per_chip: usize,
    k: usize,
    multiple: usize,
) -> Result<Vec<u32>, PartitionError> {
    let chips = k.div_ceil(tiles_per_chip.max(1)).max(1);
    let target = poplar::Target::gc200_multi(chips as u32);
    let links = ChipLinks::of(&target);
    let shape = TileShape {
        per_chip: tiles_per_chip,
        workers: target.workers_per_tile as usize,
        multiple,
    };
    hierarchical_parts_on(adjacency, &links, shape, k)
}

/// What the tile level needs to know of the tiles: how many a chip has, the worker contexts
/// that share a tile's cells (the slowest worker's share sets the tile's ODE time), and the
/// multiple its cell count is rounded to (1: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileShape {
    pub per_chip: usize,
    pub workers: usize,
    pub multiple: usize,
}

/// [`hierarchical_parts`] for chips joined by `links` (one entry per chip the `k` tiles fill)
/// with tiles of `shape`.
pub fn hierarchical_parts_on(
    adjacency: &[[u32; 4]],
    links: &ChipLinks,
    shape: TileShape,
    k: usize,
) -> Result<Vec<u32>, PartitionError> {
    let tiles_per_chip = shape.per_chip;
    let n = adjacency.len();
    if k == 0 || tiles_per_chip == 0 {
        return Err(PartitionError::ZeroParts);
    }
    if k > n {
        return Err(PartitionError::TooManyParts { k, n });
    }
    let t0 = std::time::Instant::now();
    let graph = Csr::new(adjacency)?;
    let tiles = chip_tiles(k, tiles_per_chip);
    let mut chip = chip_level(&graph, &tiles)?;
    let t1 = t0.elapsed();
    place_chips(adjacency, &mut chip, &tiles, links);
    let t2 = t0.elapsed();
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
    // The chips' tile levels are independent: they run on rayon's threads, each METIS call
    // with its own (thread-local, reseeded) random numbers, so the parts do not depend on the
    // thread count (third_party/metis-sys/PATCHED.md).
    let tile_of: Vec<Vec<u32>> = cells_of
        .par_iter()
        .enumerate()
        .map(|(c, cells)| {
            let sub = chip_adjacency(adjacency, &chip, &local, c as u32, cells);
            tile_level(&sub, tiles[c], shape)
        })
        .collect::<Result<_, _>>()?;
    tracing::debug!(
        chip_level = ?t1,
        placement = ?(t2 - t1),
        tile_level = ?(t0.elapsed() - t2),
        "hierarchical partition"
    );
    let mut parts = vec![0u32; n];
    for (c, (cells, tile)) in cells_of.iter().zip(&tile_of).enumerate() {
        for (&x, &t) in cells.iter().zip(tile) {
            parts[x as usize] = (c * tiles_per_chip) as u32 + t;
        }
    }
    Ok(parts)
}

/// What the chip level needs to know of the target's links: per ordered pair of chips
/// (`a * chips + b`), the cycles one byte takes on the links from `a` to `b` and the latency of
/// the hops between them (the cycle model's link floor and hop latency).
#[derive(Debug, Clone, PartialEq)]
pub struct ChipLinks {
    pub chips: usize,
    pub cycles_per_byte: Vec<f64>,
    pub latency: Vec<f64>,
}

impl ChipLinks {
    /// The links of `target`'s chips: IPU-Links inside a link domain, GW-Links between.
    pub fn of(target: &poplar::Target) -> ChipLinks {
        let chips = target.num_ipus as usize;
        let mut cycles_per_byte = vec![0.0; chips * chips];
        let mut latency = vec![0.0; chips * chips];
        for a in 0..chips as u32 {
            for b in 0..chips as u32 {
                if a == b {
                    continue;
                }
                let i = a as usize * chips + b as usize;
                let rate = if target.domain_of(a) != target.domain_of(b) {
                    target.gw_link_bytes_per_cycle
                } else {
                    target.link_bytes_per_cycle
                };
                cycles_per_byte[i] = 1.0 / rate.max(1e-9);
                latency[i] = f64::from(target.link_hop_latency_cycles)
                    * f64::from(target.hops(a, b))
                    + f64::from(target.gw_hop_latency_cycles) * f64::from(target.gw_hops(a, b));
            }
        }
        ChipLinks {
            chips,
            cycles_per_byte,
            latency,
        }
    }
}

/// Per ordered pair of chip parts (`a * parts + b`), the cells of `a` that cells of `b` read:
/// those within two face steps of `b` (the ELLPACK coupling), so the values `a` sends `b` in
/// each PDE exchange.
pub fn chip_volumes(adjacency: &[[u32; 4]], chip: &[u32], parts: usize) -> Vec<u64> {
    let mut vol = vec![0u64; parts * parts];
    let mut seen: Vec<u32> = Vec::with_capacity(16);
    for (c, row) in adjacency.iter().enumerate() {
        let a = chip[c];
        seen.clear();
        for &j in row.iter().filter(|&&j| j != u32::MAX) {
            let bj = chip[j as usize];
            if bj != a && !seen.contains(&bj) {
                seen.push(bj);
            }
            for &l in adjacency[j as usize].iter().filter(|&&l| l != u32::MAX) {
                let bl = chip[l as usize];
                if bl != a && !seen.contains(&bl) {
                    seen.push(bl);
                }
            }
        }
        for &b in &seen {
            vol[a as usize * parts + b as usize] += 1;
        }
    }
    vol
}

impl ChipLinks {
    /// The modelled cost of putting chip part `p` on chip `at[p]`, given the values each part
    /// sends each other ([`chip_volumes`], 4 bytes each), as the cycle model prices an
    /// exchange: a tile with inter-chip messages waits for the busiest link among its chip
    /// pairs and then for the latency of its farthest hop. Per chip, the busiest link time
    /// among the pairs it sends or receives over plus the longest latency among them bounds its
    /// tiles; the first figure is the largest such bound, the second the sum over all pairs
    /// of link time plus latency.
    pub fn cost(&self, vol: &[u64], at: &[usize]) -> (f64, f64) {
        self.cost_of(&exchanging_pairs(vol, at.len()), at)
    }

    /// [`ChipLinks::cost`] over the pairs that exchange anything (`(a, b, values)`).
    fn cost_of(&self, pairs: &[(usize, usize, u64)], at: &[usize]) -> (f64, f64) {
        let parts = at.len();
        let mut link = vec![0.0f64; parts];
        let mut lat = vec![0.0f64; parts];
        let mut sum = 0.0f64;
        for &(a, b, v) in pairs {
            let i = at[a] * self.chips + at[b];
            let t = 4.0 * v as f64 * self.cycles_per_byte[i];
            let l = self.latency[i];
            for x in [a, b] {
                link[x] = link[x].max(t);
                lat[x] = lat[x].max(l);
            }
            sum += t + l;
        }
        let max = (0..parts).map(|x| link[x] + lat[x]).fold(0.0, f64::max);
        (max, sum)
    }
}

/// The ordered pairs of `parts` parts with values to exchange in `vol` ([`chip_volumes`]).
fn exchanging_pairs(vol: &[u64], parts: usize) -> Vec<(usize, usize, u64)> {
    let mut pairs = Vec::new();
    for a in 0..parts {
        for b in 0..parts {
            if vol[a * parts + b] > 0 {
                pairs.push((a, b, vol[a * parts + b]));
            }
        }
    }
    pairs
}

/// Puts the chip parts on the chips so that parts exchanging many values sit few hops apart:
/// the placement minimising [`ChipLinks::cost`] (the slowest chip's busiest link plus its
/// farthest hop's latency, ties by the sum over pairs), over all permutations of parts with the
/// same tile count up to 8 chips, else by pairwise swaps from the identity and from fixed
/// pseudo-random starts (63 up to 16 chips, 3 beyond). Deterministic.
fn place_chips(adjacency: &[[u32; 4]], chip: &mut [u32], tiles: &[usize], links: &ChipLinks) {
    let parts = tiles.len();
    if parts <= 2 || links.chips < parts {
        return;
    }
    let pairs = exchanging_pairs(&chip_volumes(adjacency, chip, parts), parts);
    let better =
        |x: (f64, f64), y: (f64, f64)| x.0 < y.0 - 1e-9 || (x.0 <= y.0 + 1e-9 && x.1 < y.1 - 1e-9);
    let swappable = |a: usize, b: usize| tiles[a] == tiles[b];
    let identity: Vec<usize> = (0..parts).collect();
    let mut best = identity.clone();
    let mut best_cost = links.cost_of(&pairs, &best);
    if parts <= 8 {
        // Heap's algorithm over all permutations; keep those that respect the tile counts.
        let mut at = identity.clone();
        let mut c = vec![0usize; parts];
        let mut i = 0;
        while i < parts {
            if c[i] < i {
                if i % 2 == 0 {
                    at.swap(0, i);
                } else {
                    at.swap(c[i], i);
                }
                if (0..parts).all(|p| tiles[p] == tiles[at[p]]) {
                    let cost = links.cost_of(&pairs, &at);
                    if better(cost, best_cost) {
                        best_cost = cost;
                        best.clone_from(&at);
                    }
                }
                c[i] += 1;
                i = 0;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
    } else {
        let mut rng = SplitMix64::new(0x9e37_79b9_7f4a_7c15);
        // Fewer starts for many chips: each sweep tries parts² / 2 swaps.
        let starts = if parts <= 16 { 64 } else { 4 };
        for start in 0..starts {
            let mut at = identity.clone();
            if start > 0 {
                // Fisher-Yates, among parts of equal tile counts.
                for i in (1..parts).rev() {
                    let j = rng.below(i as u64 + 1) as usize;
                    if swappable(i, j) {
                        at.swap(i, j);
                    }
                }
            }
            let mut cost = links.cost_of(&pairs, &at);
            loop {
                let mut step: Option<(usize, usize, (f64, f64))> = None;
                for a in 0..parts {
                    for b in a + 1..parts {
                        if !swappable(a, b) {
                            continue;
                        }
                        at.swap(a, b);
                        let c = links.cost_of(&pairs, &at);
                        at.swap(a, b);
                        if better(c, step.map_or(cost, |s| s.2)) {
                            step = Some((a, b, c));
                        }
                    }
                }
                let Some((a, b, c)) = step else { break };
                at.swap(a, b);
                cost = c;
            }
            if better(cost, best_cost) {
                best_cost = cost;
                best = at;
            }
        }
    }
    for p in chip.iter_mut() {
        *p = best[*p as usize] as u32;
    }
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

/// The chip part of every cell: METIS k-way over the chips minimising the communication
/// volume, each chip's share of the cells in proportion to its tiles within 0.1 %.
///
/// Why 0.1 % and not the tile level's 3 %: a chip 3 % over its share has tiles over their
/// mean, and past a multiple of 8 cells a tile computes one more TP06 block. With 3 % on the
/// heart04-size mesh at 16 chips (129 cells per tile) the largest tile's ODE step took 4.5 %
/// longer (196,311 against 187,815 cycles) and so did the whole step; at 0.1 % it is as the
/// edge cut's.
fn chip_level(graph: &Csr, tiles: &[usize]) -> Result<Vec<u32>, PartitionError> {
    if tiles.len() == 1 {
        return Ok(vec![0; graph.len()]);
    }
    let k: usize = tiles.iter().sum();
    let w = Weights {
        tpwgts: Some(tiles.iter().map(|&t| t as f32 / k as f32).collect()),
        volume: true,
        ubvec: Some(vec![1.001]),
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

/// One chip's cells across its `tiles` tiles: METIS k-way (minimum edge cut and minimum
/// connectivity, 3 %, one initial partitioning), the tiles then capped at the mean rounded up
/// to a multiple of the workers ([`cap_part_sizes`]) and rounded to `shape.multiple` within the
/// chip under the same cap.
/// At most one tile per cell: with fewer cells than tiles the rest stay empty.
///
/// Why the cap: a tile's ODE step takes as long as its busiest worker's share of its cells,
/// `ceil(cells / workers)`; METIS' 3 % lets a tile exceed the even split's share, and then the
/// whole step waits for it. Capped at `workers · ceil(mean / workers)` no tile's share exceeds
/// the even split's: on the heart04-size mesh at 4 chips the slowest ODE tile went from
/// 748,353 to 739,863 cycles and the modelled time per simulated ms down 1.1 %
/// (docs/cardiac.md). METIS' volume objective at this level was tried with the cap and not
/// kept: within 0.4 % of the edge cut's modelled time either way, and a slower partition.
fn tile_level(
    sub: &[[u32; 4]],
    tiles: usize,
    shape: TileShape,
) -> Result<Vec<u32>, PartitionError> {
    let k = tiles.min(sub.len());
    if k <= 1 {
        return Ok(vec![0; sub.len()]);
    }
    // One initial partitioning instead of METIS' 4: a chip's cells are too few to coarsen for
    // its 1,472 parts, so METIS bisects the whole chip recursively per try, and that was most
    // of the set-up at 64 chips. One try: tile level 3× faster, modelled time +0.5 %
    // (docs/cardiac.md, "Set-up at 64 chips").
    // Minimum connectivity: the exchange lasts as long as its busiest port, and a port's
    // messages cost set-up cycles each, so the tiles bordering the most others set it. On the
    // heart04-size mesh on one chip the slowest exchange tile fell 12.5 % (docs/cardiac.md).
    let w = Weights {
        initial_cuts: Some(1),
        min_connectivity: true,
        ..Weights::default()
    };
    let parts = metis_kway(&Csr::new(sub)?, &w, k)?;
    let cap = sub.len().div_ceil(k).next_multiple_of(shape.workers.max(1));
    let parts = cap_part_sizes(sub, parts, k, cap);
    Ok(round_part_sizes_within(sub, parts, k, shape.multiple, cap))
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

    /// The most parts any part touches through a face.
    fn most_neighbours(adjacency: &[[u32; 4]], parts: &[u32], k: usize) -> usize {
        let mut touches = vec![std::collections::BTreeSet::new(); k];
        for (c, row) in adjacency.iter().enumerate() {
            for &j in row.iter().filter(|&&j| j != u32::MAX) {
                let (p, q) = (parts[c], parts[j as usize]);
                if p != q {
                    touches[p as usize].insert(q);
                }
            }
        }
        touches.iter().map(|t| t.len()).max().unwrap_or(0)
    }

    #[test]
    fn the_tile_level_gives_the_busiest_tiles_fewer_neighbours() {
        // The tile level asks METIS for minimum connectivity as well as minimum edge cut: the
        // tile bordering the most others borders fewer than under the edge cut alone (both
        // capped alike). Measured: 9 against 11, 11 against 15, 14 against 21.
        for (dx, k) in [(0.5, 64), (0.5, 256), (0.25, 512)] {
            let adjacency = crate::mesh::TetMesh::slab(20.0, 7.0, 3.0, dx).face_neighbours();
            let shape = TileShape {
                per_chip: k,
                workers: 6,
                multiple: 1,
            };
            let with = tile_level(&adjacency, k, shape).unwrap();
            let edge_cut_only = Weights {
                initial_cuts: Some(1),
                ..Weights::default()
            };
            let without = metis_kway(&Csr::new(&adjacency).unwrap(), &edge_cut_only, k).unwrap();
            let cap = adjacency.len().div_ceil(k).next_multiple_of(6);
            let without = cap_part_sizes(&adjacency, without, k, cap);
            let (a, b) = (
                most_neighbours(&adjacency, &with, k),
                most_neighbours(&adjacency, &without, k),
            );
            assert!(a < b, "dx {dx} mm, {k} tiles: {a} neighbours against {b}");
        }
    }
}
