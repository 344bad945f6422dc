//! Tiles, separators and halos (paper §3.4, §4.1): METIS k-way partitioning of the cells, a
//! renumbering that makes every tile's cells one contiguous range laid out
//! `[interior | separator]`, and the halo ranges each tile concatenates before its own slice
//! under the paper's three separator strategies and a fourth, `runs`.
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
//! then the clean blocks. [`Strategy::Runs`] has no mixed block: cells with equal `D` are
//! contiguous, and those groups are ordered so that each destination's cells form few runs
//! (see `runs_layout`).
//!
//! # What a destination receives from a source tile `q`
//! * [`Strategy::Full`]: `q`'s whole separator (mixed + all clean blocks);
//! * [`Strategy::Ranged`]: the smallest range of `q`'s numbering enclosing the cells it needs;
//! * [`Strategy::MixedClean`]: `q`'s whole mixed block if it needs any mixed cell (the same
//!   range for every such destination, so the framework can broadcast it), plus its own clean
//!   block, which contains no unused value.
//! * [`Strategy::Runs`] (not in the paper): the runs of `q`'s numbering made of cells it
//!   needs, one range each, where runs at most [`RUN_GAP`] cells apart are bridged into one.
//!
//! Provable orderings, asserted in `tests/partition.rs`: per (source, destination) pair
//! `needed ≤ ranged ≤ full` and `needed ≤ mixed-clean ≤ full`; the only unused halo values
//! under mixed-clean are mixed-block cells, under runs the bridged gaps. Ranged vs mixed-clean,
//! and ranged vs runs (laid out differently), depend on the mesh.

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
    /// Not in the paper: one range per run of needed cells, bridging gaps of at most
    /// [`RUN_GAP`] unneeded cells (more, shorter ranges; fewer unused values).
    Runs,
}

impl Strategy {
    /// All strategies: the paper's three in its order, then [`Strategy::Runs`].
    pub const ALL: [Strategy; 4] = [
        Strategy::Full,
        Strategy::Ranged,
        Strategy::MixedClean,
        Strategy::Runs,
    ];

    /// The command-line name (`full`, `ranged`, `mixed-clean`, `runs`).
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Full => "full",
            Strategy::Ranged => "ranged",
            Strategy::MixedClean => "mixed-clean",
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

/// Cuts the face-adjacency graph into `k` parts with METIS k-way (minimum edge cut), 3 %
/// imbalance tolerance and a fixed seed so runs are reproducible. `k = 1` needs no METIS.
pub fn partition_cells(adjacency: &[[u32; 4]], k: usize) -> Result<Vec<u32>, PartitionError> {
    let n = adjacency.len();
    if k == 0 {
        return Err(PartitionError::ZeroParts);
    }
    if k > n {
        return Err(PartitionError::TooManyParts { k, n });
    }
    let mut xadj: Vec<metis::Idx> = Vec::with_capacity(n + 1);
    let mut adjncy: Vec<metis::Idx> = Vec::with_capacity(4 * n);
    xadj.push(0);
    for (cell, row) in adjacency.iter().enumerate() {
        for &j in row {
            if j == u32::MAX {
                continue;
            }
            if j as usize >= n || j as usize == cell {
                return Err(PartitionError::BadNeighbour { cell, neighbour: j });
            }
            if !adjacency[j as usize].contains(&(cell as u32)) {
                return Err(PartitionError::AsymmetricAdjacency { cell, neighbour: j });
            }
            adjncy.push(j as metis::Idx);
        }
        let len = metis::Idx::try_from(adjncy.len())
            .map_err(|_| PartitionError::TooLarge(adjncy.len()))?;
        xadj.push(len);
    }
    if k == 1 {
        return Ok(vec![0; n]);
    }
    let nparts = metis::Idx::try_from(k).map_err(|_| PartitionError::TooLarge(k))?;
    let mut part = vec![0 as metis::Idx; n];
    // METIS draws from a process-global random state (GKlib's), so two partitions computed at
    // once on different threads (e.g. tests side by side) came out different from run to run.
    static METIS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = METIS.lock().unwrap_or_else(|p| p.into_inner());
    metis::Graph::new(1, nparts, &xadj, &adjncy)
        .map_err(|e| PartitionError::Metis(e.to_string()))?
        .set_option(metis::option::UFactor(30))
        .set_option(metis::option::Seed(1))
        .part_kway(&mut part)
        .map_err(|e| PartitionError::Metis(e.to_string()))?;
    Ok(part.into_iter().map(|p| p as u32).collect())
}

/// Moves a few boundary cells between adjacent parts so that every part's size is a multiple
/// of `multiple`, except one part per connected group of parts, which keeps the remainder.
///
/// Why: the TP06 kernel steps cells in blocks (64, then 8 for a tile's tail); a tile whose
/// cell count is not a multiple of 8 computes a padded last block. Kernel-only on the host,
/// tiles of 200–232 cells cost 2.3 % more per cell when their count is not a multiple of 8
/// (`cargo bench`-style experiment, best of 7). Each part settles its remainder with its parent
/// in a depth-first tree of the part adjacency, leaves first: it gives `r ≤ multiple / 2`
/// cells or takes `multiple − r`, chosen among the cells touching the other part (lowest index
/// first). No part grows beyond METIS' largest part or 3 % over the mean, whichever is larger;
/// a part shrinks by at most `multiple` for itself and as much for each child, so apply this
/// only to parts much larger than `multiple`. Deterministic; a move that would exceed that cap
/// or finds too few candidate cells is skipped (that part keeps its remainder).
pub fn round_part_sizes(
    adjacency: &[[u32; 4]],
    mut parts: Vec<u32>,
    k: usize,
    multiple: usize,
) -> Vec<u32> {
    if multiple <= 1 || k <= 1 {
        return parts;
    }
    // No part may grow beyond the larger of METIS' largest part and 3 % over the mean (the
    // partition's load-imbalance tolerance).
    let mut sizes = vec![0usize; k];
    for &p in &parts {
        sizes[p as usize] += 1;
    }
    let cap = sizes
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(parts.len() * 103 / (100 * k));
    // A second and third pass settle most remainders the first could not move (a part
    // touching its tree parent along too few cells); each pass rebuilds the tree.
    for _ in 0..3 {
        let before = parts.clone();
        parts = round_part_sizes_once(adjacency, parts, k, multiple, cap);
        if parts == before {
            break;
        }
    }
    parts
}

fn round_part_sizes_once(
    adjacency: &[[u32; 4]],
    mut parts: Vec<u32>,
    k: usize,
    multiple: usize,
    cap: usize,
) -> Vec<u32> {
    let mut size = vec![0usize; k];
    // Each part's cells (a moved cell is appended to its new part and skipped in its old one).
    let mut cells_of: Vec<Vec<usize>> = vec![Vec::new(); k];
    for (c, &p) in parts.iter().enumerate() {
        size[p as usize] += 1;
        cells_of[p as usize].push(c);
    }
    // The part adjacency, sorted for a deterministic tree.
    let mut nbrs: Vec<Vec<u32>> = vec![Vec::new(); k];
    for (c, row) in adjacency.iter().enumerate() {
        for &j in row.iter().filter(|&&j| j != u32::MAX) {
            let (a, b) = (parts[c], parts[j as usize]);
            if a != b {
                nbrs[a as usize].push(b);
            }
        }
    }
    for v in &mut nbrs {
        v.sort_unstable();
        v.dedup();
    }
    // Depth-first tree over the parts (iterative), recording the post-order.
    let mut parent = vec![u32::MAX; k];
    let mut seen = vec![false; k];
    let mut post = Vec::with_capacity(k);
    for root in 0..k {
        if seen[root] || size[root] == 0 {
            continue;
        }
        seen[root] = true;
        let mut stack = vec![(root, 0usize)];
        while let Some((p, i)) = stack.last_mut() {
            let p = *p;
            if let Some(&q) = nbrs[p].get(*i) {
                *i += 1;
                if !seen[q as usize] {
                    seen[q as usize] = true;
                    parent[q as usize] = p as u32;
                    stack.push((q as usize, 0));
                }
            } else {
                post.push(p);
                stack.pop();
            }
        }
    }
    for &p in &post {
        let q = parent[p];
        if q == u32::MAX {
            continue; // a root keeps its group's remainder
        }
        let q = q as usize;
        let r = size[p] % multiple;
        if r == 0 {
            continue;
        }
        // Give `r` cells to the parent or take `multiple - r` from it, the smaller move first,
        // the other if the first would push the receiving part over `cap`.
        let give = (p, q, r);
        let take = (q, p, multiple - r);
        let order = if r <= multiple / 2 {
            [give, take]
        } else {
            [take, give]
        };
        let Some((from, to, count)) = order
            .into_iter()
            .find(|&(from, to, count)| size[to] + count <= cap && size[from] > count)
        else {
            continue;
        };
        // Cells of `from` touching `to`, lowest index first.
        let mut moved: Vec<usize> = cells_of[from]
            .iter()
            .copied()
            .filter(|&c| {
                parts[c] as usize == from
                    && adjacency[c]
                        .iter()
                        .any(|&j| j != u32::MAX && parts[j as usize] as usize == to)
            })
            .collect();
        if moved.len() < count {
            continue;
        }
        moved.sort_unstable();
        moved.truncate(count);
        for &c in &moved {
            parts[c] = to as u32;
        }
        cells_of[to].extend(moved);
        size[from] -= count;
        size[to] += count;
    }
    parts
}

/// Orders one tile's separator cells as `[clean blocks L][mixed][clean blocks R]` and returns
/// the order and the mixed block's position within it.
///
/// Why this shape: mixed-clean needs the mixed block and every destination's clean block to
/// be contiguous; ranged wants each destination's cells close together. Destinations are sorted
/// by clean-block size and dealt alternately to the left and right of the mixed block, smallest
/// innermost (a destination's enclosing range also spans the clean blocks between it and the
/// mixed block, so those should be short). Each destination gets a coordinate (−1, −2, … on the
/// left, +1, +2, … on the right) and mixed groups are sorted by the mean coordinate of their
/// destination set, so a destination's mixed cells lean towards its own clean block.
fn separator_layout(separator: &[u32], dests: &[Vec<u32>]) -> (Vec<u32>, Range<usize>) {
    let mut clean_size: Vec<(u32, usize)> = Vec::new();
    for &c in separator {
        if let [p] = dests[c as usize][..] {
            match clean_size.iter_mut().find(|e| e.0 == p) {
                Some(e) => e.1 += 1,
                None => clean_size.push((p, 1)),
            }
        }
    }
    // Destinations that only need mixed cells still get a coordinate.
    for &c in separator {
        for &p in &dests[c as usize] {
            if !clean_size.iter().any(|e| e.0 == p) {
                clean_size.push((p, 0));
            }
        }
    }
    clean_size.sort_by_key(|&(p, size)| (size, p));
    let coord = |p: u32| -> f64 {
        let i = clean_size.iter().position(|e| e.0 == p).unwrap_or(0);
        let rank = (i / 2 + 1) as f64;
        if i % 2 == 0 {
            -rank
        } else {
            rank
        }
    };
    let key = |c: u32| -> f64 {
        let d = &dests[c as usize];
        d.iter().map(|&p| coord(p)).sum::<f64>() / d.len() as f64
    };
    let mut keyed: Vec<(f64, u32)> = separator.iter().map(|&c| (key(c), c)).collect();
    // Clean cells sit at their destination's coordinate, mixed cells at the mean; sort clean
    // blocks outside the mixed block by pushing them out by the number of destinations.
    let span = clean_size.len() as f64 + 1.0;
    for (k, c) in keyed.iter_mut() {
        if dests[*c as usize].len() == 1 {
            *k += k.signum() * span;
        }
    }
    keyed.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then_with(|| dests[a.1 as usize].cmp(&dests[b.1 as usize]))
            .then(a.1.cmp(&b.1))
    });
    let order: Vec<u32> = keyed.iter().map(|e| e.1).collect();
    let first = order.iter().position(|&c| dests[c as usize].len() >= 2);
    let mixed = match first {
        Some(a) => {
            let b = order
                .iter()
                .rposition(|&c| dests[c as usize].len() >= 2)
                .unwrap_or(a)
                + 1;
            a..b
        }
        None => {
            let left = keyed.iter().filter(|e| e.0 < 0.0).count();
            left..left
        }
    };

    // The one-sided alternative `[mixed sorted by (max D, D)][clean blocks by destination]`
    // wins on very small tiles (nearly everything mixed); keep whichever gives the shorter
    // ranged ranges. Only this tile's outgoing ranges depend on its layout, so choosing per
    // tile is optimal among the two.
    let mut one_sided: Vec<u32> = separator.to_vec();
    one_sided.sort_by(|&a, &b| {
        let (da, db) = (&dests[a as usize], &dests[b as usize]);
        let ka = (da.len() == 1, da.last(), da, a);
        let kb = (db.len() == 1, db.last(), db, b);
        ka.cmp(&kb)
    });
    let n_mixed = one_sided
        .iter()
        .take_while(|&&c| dests[c as usize].len() >= 2)
        .count();
    if ranged_cost(&one_sided, dests) < ranged_cost(&order, dests) {
        return (one_sided, 0..n_mixed);
    }
    (order, mixed)
}

/// Orders one tile's separator cells for [`Strategy::Runs`]: cells with the same destination
/// set form one group, and the groups are ordered so that consecutive groups' destination sets
/// differ little, so that each destination's cells form few runs.
///
/// A destination's runs start or end wherever the order enters or leaves a group it reads, so
/// the number of runs summed over destinations is half the summed size of the symmetric
/// differences between consecutive destination sets, with an empty set before the first group
/// and after the last. Ordering the groups is then a travelling-salesman tour through an empty
/// "depot" under that Hamming distance: nearest neighbour, then 2-opt and or-opt moves until
/// none shortens it (all deterministic).
fn runs_layout(separator: &[u32], dests: &[Vec<u32>]) -> Vec<u32> {
    let mut sorted = separator.to_vec();
    sorted.sort_by(|&a, &b| dests[a as usize].cmp(&dests[b as usize]).then(a.cmp(&b)));
    // Groups as ranges of `sorted`; node 0 is the depot (empty set).
    let mut groups: Vec<Range<usize>> = std::iter::once(0..0).collect();
    let mut a = 0;
    while a < sorted.len() {
        let sig = &dests[sorted[a] as usize];
        let mut b = a + 1;
        while b < sorted.len() && dests[sorted[b] as usize] == *sig {
            b += 1;
        }
        groups.push(a..b);
        a = b;
    }
    let m = groups.len();
    // Up to 3 groups any order is optimal. The search below is quadratic in the groups per
    // round (or-opt cubic); tiles have tens of destination sets (at most 109 on the 0.1 mm
    // slab), so past 1,024 the sorted order stays, and or-opt runs up to 256.
    if m <= 3 || m > 1024 {
        return sorted;
    }
    let sig = |g: usize| -> &[u32] {
        if g == 0 {
            &[]
        } else {
            &dests[sorted[groups[g].start] as usize]
        }
    };
    let mut dist = vec![0u32; m * m];
    for i in 0..m {
        for j in i + 1..m {
            let d = symmetric_difference(sig(i), sig(j));
            dist[i * m + j] = d;
            dist[j * m + i] = d;
        }
    }
    let d = |i: usize, j: usize| dist[i * m + j];
    // Nearest neighbour from the depot (ties: lowest index).
    let mut tour = vec![0usize];
    let mut used = vec![false; m];
    used[0] = true;
    for _ in 1..m {
        let last = *tour.last().unwrap_or(&0);
        let next = (0..m)
            .filter(|&j| !used[j])
            .min_by_key(|&j| (d(last, j), j))
            .unwrap_or(0);
        used[next] = true;
        tour.push(next);
    }
    // 2-opt and or-opt moves on the closed tour (the depot stays at position 0), until none
    // shortens it (at most 100 rounds).
    let mut improved = true;
    let mut rounds = 0;
    while improved && rounds < 100 {
        improved = false;
        rounds += 1;
        // 2-opt: reverse tour[i+1..=j].
        for i in 0..m - 1 {
            for j in i + 2..m {
                let (a, b) = (tour[i], tour[i + 1]);
                let (c, e) = (tour[j], tour[(j + 1) % m]);
                if a != e && d(a, c) + d(b, e) < d(a, b) + d(c, e) {
                    tour[i + 1..=j].reverse();
                    improved = true;
                }
            }
        }
        // Or-opt: move the segment tour[i..i+len] (either way round) to the best other edge.
        let w = |a: usize, b: usize| i64::from(d(a, b));
        for len in (1..=3usize).filter(|_| m <= 256) {
            let mut i = 1;
            while i + len <= m {
                let (p, q) = (tour[i - 1], tour[(i + len) % m]);
                let (s0, s1) = (tour[i], tour[i + len - 1]);
                let saved = w(p, s0) + w(s1, q) - w(p, q);
                let rest: Vec<usize> = tour[..i].iter().chain(&tour[i + len..]).copied().collect();
                let mut best: Option<(i64, usize, bool)> = None;
                for k in 0..rest.len() {
                    let (x, y) = (rest[k], rest[(k + 1) % rest.len()]);
                    for reversed in [false, true] {
                        let (first, last) = if reversed { (s1, s0) } else { (s0, s1) };
                        let cost = w(x, first) + w(last, y) - w(x, y);
                        if cost < saved && best.is_none_or(|b| cost < b.0) {
                            best = Some((cost, k, reversed));
                        }
                    }
                }
                if let Some((_, k, reversed)) = best {
                    let mut segment = tour[i..i + len].to_vec();
                    if reversed {
                        segment.reverse();
                    }
                    let mut moved = rest[..=k].to_vec();
                    moved.extend(segment);
                    moved.extend_from_slice(&rest[k + 1..]);
                    // The depot back at position 0 (it is in `rest`, never in a segment).
                    let z = moved.iter().position(|&g| g == 0).unwrap_or(0);
                    moved.rotate_left(z);
                    tour = moved;
                    improved = true;
                }
                i += 1;
            }
        }
    }
    tour[1..]
        .iter()
        .flat_map(|&g| sorted[groups[g].clone()].iter().copied())
        .collect()
}

/// Size of the symmetric difference of two sorted, duplicate-free lists.
fn symmetric_difference(a: &[u32], b: &[u32]) -> u32 {
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (a.len() + b.len() - 2 * common) as u32
}

/// Total length of the smallest enclosing range per destination for a separator order.
fn ranged_cost(order: &[u32], dests: &[Vec<u32>]) -> usize {
    let mut span: Vec<(u32, usize, usize)> = Vec::new();
    for (pos, &c) in order.iter().enumerate() {
        for &p in &dests[c as usize] {
            match span.iter_mut().find(|e| e.0 == p) {
                Some(e) => e.2 = pos,
                None => span.push((p, pos, pos)),
            }
        }
    }
    span.iter().map(|e| e.2 - e.1 + 1).sum()
}

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

/// Builds the plan for `parts` (one part per cell, `< k`), reading coupling from the ELLPACK
/// sparsity of `ell` (old numbering).
pub fn plan(
    parts: &[u32],
    k: usize,
    ell: &Ellpack,
    strategy: Strategy,
) -> Result<PartitionPlan, PartitionError> {
    let n = parts.len();
    if k == 0 {
        return Err(PartitionError::ZeroParts);
    }
    for (what, got, expected) in [
        ("Ellpack rows", ell.n, n),
        ("Ellpack diag", ell.diag.len(), n),
        ("Ellpack cols", ell.cols.len(), n * ELL_WIDTH),
        ("Ellpack values", ell.values.len(), n * ELL_WIDTH),
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

    // Destination set of every cell: the other tiles whose rows read it.
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

    // Cells of each tile in old order, then the layout interior | mixed | clean.
    let mut by_tile: Vec<Vec<u32>> = vec![Vec::new(); k];
    for (c, &p) in parts.iter().enumerate() {
        by_tile[p as usize].push(c as u32);
    }
    let mut new_to_old = Vec::with_capacity(n);
    let mut tiles = Vec::with_capacity(k);
    for cells in &by_tile {
        let start = new_to_old.len();
        let interior: Vec<u32> = cells
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
        let (order, mixed) = if strategy == Strategy::Runs {
            (runs_layout(&separator, &dests), 0..0)
        } else {
            separator_layout(&separator, &dests)
        };
        new_to_old.extend_from_slice(&interior);
        let sep_start = new_to_old.len();
        new_to_old.extend_from_slice(&order);
        tiles.push(TilePlan {
            cells: start..new_to_old.len(),
            n_interior: interior.len(),
            n_separator: order.len(),
            mixed: sep_start + mixed.start..sep_start + mixed.end,
            halo_ranges: Vec::new(),
            halo_used: 0,
            halo_unused: 0,
        });
    }
    let mut old_to_new = vec![0u32; n];
    for (g, &o) in new_to_old.iter().enumerate() {
        old_to_new[o as usize] = g as u32;
    }

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
            Strategy::MixedClean => {
                if cells.iter().any(|c| mixed.contains(c)) {
                    ranges.push(mixed.clone());
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
        // Keep a tile's halo ranges sorted (a clean block may precede the mixed block).
        ranges.sort_by_key(|r| r.start);
        let received: usize = ranges.iter().map(|r| r.len()).sum();
        let t = &mut tiles[dest as usize];
        t.halo_ranges.extend(ranges);
        t.halo_used += cells.len();
        t.halo_unused += received - cells.len();
        a = b;
    }
    Ok(PartitionPlan {
        strategy,
        new_to_old,
        old_to_new,
        tiles,
    })
}

/// One tile's share of `Z`: its rows in its new order, columns pointing into its local vector
/// (`halo ranges ++ [own cells]`, see [`PartitionPlan::gather_local`]). Slot order is the
/// global row's, so [`LocalEllpack::spmv`] reproduces [`Ellpack::spmv`] bit for bit.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalEllpack {
    /// Rows (own cells).
    pub n_own: usize,
    /// Length of the local input vector.
    pub n_local: usize,
    /// Position of the own cells in the local vector (after the halo): `n_local - n_own`.
    pub own_offset: usize,
    pub diag: Vec<f32>,
    pub values: Vec<f32>,
    pub cols: Vec<u32>,
}

impl LocalEllpack {
    /// `y = D∘x + Σ A x[I]` over the local vector, in [`Ellpack::spmv`]'s order.
    ///
    /// # Panics
    /// If `x` is not `n_local` long or `y` not `n_own` long (caller bug).
    pub fn spmv(&self, x: &[f32], y: &mut [f32]) {
        assert_eq!(
            x.len(),
            self.n_local,
            "LocalEllpack::spmv: x has the wrong length"
        );
        assert_eq!(
            y.len(),
            self.n_own,
            "LocalEllpack::spmv: y has the wrong length"
        );
        ell_rows(y, &self.diag, &self.values, &self.cols, x, self.own_offset);
    }
}

/// Splits `ell` (old numbering) into per-tile local matrices following `plan`.
pub fn localize(ell: &Ellpack, plan: &PartitionPlan) -> Result<Vec<LocalEllpack>, PartitionError> {
    let n = plan.new_to_old.len();
    if ell.n != n || ell.cols.len() != n * ELL_WIDTH || ell.values.len() != n * ELL_WIDTH {
        return Err(PartitionError::LengthMismatch {
            what: "Ellpack rows",
            got: ell.n,
            expected: n,
        });
    }
    let mut out = Vec::with_capacity(plan.tiles.len());
    for (tile, t) in plan.tiles.iter().enumerate() {
        // Local offset of each halo range, for binary search by start.
        let mut offsets = Vec::with_capacity(t.halo_ranges.len());
        let mut off = 0;
        for r in &t.halo_ranges {
            offsets.push(off);
            off += r.len();
        }
        let own = off;
        let locate = |g: usize| -> Option<usize> {
            if t.cells.contains(&g) {
                return Some(own + g - t.cells.start);
            }
            let idx = t.halo_ranges.partition_point(|r| r.start <= g);
            let r = t.halo_ranges.get(idx.checked_sub(1)?)?;
            r.contains(&g).then(|| offsets[idx - 1] + g - r.start)
        };
        let m = t.cells.len();
        let mut le = LocalEllpack {
            n_own: m,
            n_local: own + m,
            own_offset: own,
            diag: Vec::with_capacity(m),
            values: Vec::with_capacity(m * ELL_WIDTH),
            cols: Vec::with_capacity(m * ELL_WIDTH),
        };
        for (r, g) in t.cells.clone().enumerate() {
            let old = plan.new_to_old[g] as usize;
            le.diag.push(ell.diag[old]);
            for s in old * ELL_WIDTH..(old + 1) * ELL_WIDTH {
                let c = ell.cols[s] as usize;
                let lc = if c == old {
                    own + r // padding (or a self-reference) stays on the row itself
                } else {
                    let gc = *plan.old_to_new.get(c).ok_or(PartitionError::BadColumn {
                        cell: old,
                        col: c as u32,
                    })? as usize;
                    locate(gc).ok_or(PartitionError::MissingHalo {
                        tile,
                        col: gc as u32,
                    })?
                };
                le.cols.push(lc as u32);
                le.values.push(ell.values[s]);
            }
        }
        out.push(le);
    }
    Ok(out)
}

/// Per-tile figures of a plan (the paper's Table 1 columns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileStats {
    /// Own cells (interior + separator).
    pub cells: usize,
    pub interior: usize,
    pub separator: usize,
    /// Received halo cells (sum of halo range lengths).
    pub inbound: usize,
    /// Received cells no row uses.
    pub unused: usize,
    /// Own + inbound: the tile's local vector length.
    pub total: usize,
    /// Distinct ranges other tiles take from this tile (a broadcast range counts once).
    pub outgoing_ranges: usize,
    /// Tiles this tile receives from.
    pub neighbours: usize,
}

/// Figures of a whole plan, with max/median helpers.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionStats {
    pub strategy: Strategy,
    pub tiles: Vec<TileStats>,
}

impl PartitionStats {
    pub fn new(plan: &PartitionPlan) -> Self {
        let owner_of = |g: usize| plan.tiles.partition_point(|t| t.cells.end <= g);
        let mut outgoing: Vec<Vec<(usize, usize)>> = vec![Vec::new(); plan.tiles.len()];
        let mut neighbours = vec![0usize; plan.tiles.len()];
        for (p, t) in plan.tiles.iter().enumerate() {
            let mut srcs: Vec<usize> = Vec::new();
            for r in &t.halo_ranges {
                let q = owner_of(r.start);
                outgoing[q].push((r.start, r.end));
                srcs.push(q);
            }
            srcs.dedup(); // ranges are sorted, so a source's ranges are adjacent
            neighbours[p] = srcs.len();
        }
        let tiles = plan
            .tiles
            .iter()
            .enumerate()
            .map(|(p, t)| {
                let out = &mut outgoing[p];
                out.sort_unstable();
                out.dedup();
                TileStats {
                    cells: t.cells.len(),
                    interior: t.n_interior,
                    separator: t.n_separator,
                    inbound: t.inbound(),
                    unused: t.halo_unused,
                    total: t.local_len(),
                    outgoing_ranges: out.len(),
                    neighbours: neighbours[p],
                }
            })
            .collect();
        PartitionStats {
            strategy: plan.strategy,
            tiles,
        }
    }

    /// Maximum of a per-tile figure (0 for no tiles).
    pub fn max(&self, f: impl Fn(&TileStats) -> usize) -> usize {
        self.tiles.iter().map(f).max().unwrap_or(0)
    }

    /// Median of a per-tile figure (upper median for even counts; 0 for no tiles).
    pub fn median(&self, f: impl Fn(&TileStats) -> usize) -> usize {
        let mut v: Vec<usize> = self.tiles.iter().map(f).collect();
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    }

    /// Sum of a per-tile figure.
    pub fn sum(&self, f: impl Fn(&TileStats) -> usize) -> usize {
        self.tiles.iter().map(f).sum()
    }

    /// Largest tile over the mean tile size (1.0 = perfect balance).
    pub fn imbalance(&self) -> f64 {
        let n = self.sum(|t| t.cells);
        if n == 0 {
            return 1.0;
        }
        self.max(|t| t.cells) as f64 * self.tiles.len() as f64 / n as f64
    }

    /// Header matching [`PartitionStats::table_row`].
    pub fn table_header() -> String {
        format!(
            "{:<12} {:>13} {:>13} {:>13} {:>13} {:>11} {:>11} {:>9}",
            "strategy",
            "total max/med",
            "inbnd max/med",
            "unused max/md",
            "unused sum",
            "out-rng max",
            "nbrs max/md",
            "imbalance"
        )
    }

    /// One Table-1-like line: total (own + halo), inbound and unused cells (max/median), total
    /// unused, outgoing ranges (max), neighbours (max/median), imbalance.
    pub fn table_row(&self) -> String {
        let mm = |f: fn(&TileStats) -> usize| format!("{}/{}", self.max(f), self.median(f));
        format!(
            "{:<12} {:>13} {:>13} {:>13} {:>13} {:>11} {:>11} {:>9.3}",
            self.strategy.name(),
            mm(|t| t.total),
            mm(|t| t.inbound),
            mm(|t| t.unused),
            self.sum(|t| t.unused),
            self.max(|t| t.outgoing_ranges),
            mm(|t| t.neighbours),
            self.imbalance()
        )
    }
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
