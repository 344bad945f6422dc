//! METIS k-way partitioning of the cells, and the rounding of part sizes to whole TP06 blocks.

use super::*;

/// Cuts the face-adjacency graph into `k` parts with METIS k-way (minimum edge cut), 3 %
/// imbalance tolerance and a fixed seed so runs are reproducible. `k = 1` needs no METIS.
///
/// Every part is non-empty: with too many parts for the graph METIS leaves some empty without
/// reporting an error (it only prints "too many parts" on stderr), and that is refused
/// here as [`PartitionError::EmptyParts`]. [`kway_parts`] is the same cut without the check,
/// for callers that drop empty parts themselves (the device build does, see
/// `solver::device::build`).
pub fn partition_cells(adjacency: &[[u32; 4]], k: usize) -> Result<Vec<u32>, PartitionError> {
    let parts = kway_parts(adjacency, k)?;
    check_non_empty(&parts, k)?;
    Ok(parts)
}

/// [`partition_cells`] without the check that every part is non-empty: METIS may leave parts
/// empty when `k` nears the cell count.
pub fn kway_parts(adjacency: &[[u32; 4]], k: usize) -> Result<Vec<u32>, PartitionError> {
    let n = adjacency.len();
    if k == 0 {
        return Err(PartitionError::ZeroParts);
    }
    if k > n {
        return Err(PartitionError::TooManyParts { k, n });
    }
    let graph = Csr::new(adjacency)?;
    if k == 1 {
        return Ok(vec![0; n]);
    }
    metis_kway(&graph, &Weights::default(), k)
}

/// Refuses a partition into `k` parts in which some part has no cell.
pub fn check_non_empty(parts: &[u32], k: usize) -> Result<(), PartitionError> {
    let mut used = vec![false; k];
    for (cell, &p) in parts.iter().enumerate() {
        *used
            .get_mut(p as usize)
            .ok_or(PartitionError::PartOutOfRange { cell, part: p, k })? = true;
    }
    match used.iter().filter(|&&u| !u).count() {
        0 => Ok(()),
        empty => Err(PartitionError::EmptyParts {
            k,
            n: parts.len(),
            empty,
        }),
    }
}

/// The face-adjacency graph in METIS' compressed rows, checked (in range, no self loops,
/// symmetric).
pub(super) struct Csr {
    pub(super) xadj: Vec<::metis::Idx>,
    pub(super) adjncy: Vec<::metis::Idx>,
}

impl Csr {
    pub(super) fn new(adjacency: &[[u32; 4]]) -> Result<Csr, PartitionError> {
        let n = adjacency.len();
        let mut xadj: Vec<::metis::Idx> = Vec::with_capacity(n + 1);
        let mut adjncy: Vec<::metis::Idx> = Vec::with_capacity(4 * n);
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
                adjncy.push(j as ::metis::Idx);
            }
            let len = ::metis::Idx::try_from(adjncy.len())
                .map_err(|_| PartitionError::TooLarge(adjncy.len()))?;
            xadj.push(len);
        }
        Ok(Csr { xadj, adjncy })
    }

    /// Vertices.
    pub(super) fn len(&self) -> usize {
        self.xadj.len() - 1
    }
}

/// Vertex weights (`ncon` per vertex, vertex-major; none: one constraint, weight 1), target
/// part weights (one per part; none: equal) and per-constraint imbalance tolerances (none:
/// METIS' `ufactor`, 3 %).
#[derive(Default)]
pub(super) struct Weights {
    pub(super) ncon: usize,
    pub(super) vwgt: Option<Vec<::metis::Idx>>,
    pub(super) tpwgts: Option<Vec<::metis::Real>>,
    pub(super) ubvec: Option<Vec<::metis::Real>>,
    /// METIS' objective: total communication volume instead of edge cut.
    pub(super) volume: bool,
    /// Initial partitionings METIS tries (`METIS_OPTION_NIPARTS`; none: its default, 4 when
    /// the graph is too small to coarsen for `k` parts, else 5).
    pub(super) initial_cuts: Option<usize>,
    /// Also minimise the most parts any part borders (`METIS_OPTION_MINCONN`): fewer
    /// neighbours for the tiles with the most, so fewer messages at the busiest ports.
    pub(super) min_connectivity: bool,
}

/// `METIS_OPTION_NIPARTS`'s index in METIS 5.1's options array (the `metis` crate has no type
/// for it).
const OPTION_NIPARTS: usize = 6;
/// `METIS_OPTION_MINCONN`'s index in METIS 5.1's options array (no type for it either).
const OPTION_MINCONN: usize = 11;

/// METIS k-way on `graph` into `k ≥ 2` parts: minimum edge cut (or communication volume,
/// [`Weights::volume`]), 3 % tolerance unless `ubvec` says otherwise, seed 1. Parts
/// may come back empty (METIS does not report it).
pub(super) fn metis_kway(graph: &Csr, w: &Weights, k: usize) -> Result<Vec<u32>, PartitionError> {
    let nparts = ::metis::Idx::try_from(k).map_err(|_| PartitionError::TooLarge(k))?;
    let ncon =
        ::metis::Idx::try_from(w.ncon.max(1)).map_err(|_| PartitionError::TooLarge(w.ncon))?;
    let mut part = vec![0 as ::metis::Idx; graph.len()];
    // No lock: METIS' random numbers are per thread and reseeded by every call
    // (third_party/metis-sys/PATCHED.md), so calls at once on several threads give the parts
    // each gives alone.
    use ::metis::option::{ObjType, Opt, Seed, UFactor};
    let mut options = [-1; ::metis::NOPTIONS];
    options[UFactor::INDEX] = UFactor(30).value();
    options[Seed::INDEX] = Seed(1).value();
    if w.volume {
        options[ObjType::INDEX] = ObjType::Vol.value();
    }
    if w.min_connectivity {
        options[OPTION_MINCONN] = 1;
    }
    if let Some(n) = w.initial_cuts {
        options[OPTION_NIPARTS] =
            ::metis::Idx::try_from(n).map_err(|_| PartitionError::TooLarge(n))?;
    }
    let mut g = ::metis::Graph::new(ncon, nparts, &graph.xadj, &graph.adjncy)
        .map_err(|e| PartitionError::Metis(e.to_string()))?
        .set_options(&options);
    if let Some(v) = &w.vwgt {
        g = g.set_vwgt(v);
    }
    if let Some(t) = &w.tpwgts {
        g = g.set_tpwgts(t);
    }
    if let Some(u) = &w.ubvec {
        g = g.set_ubvec(u);
    }
    g.part_kway(&mut part)
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
    parts: Vec<u32>,
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
    round_part_sizes_within(adjacency, parts, k, multiple, cap)
}

/// [`round_part_sizes`] with no part growing beyond `cap` cells.
pub fn round_part_sizes_within(
    adjacency: &[[u32; 4]],
    mut parts: Vec<u32>,
    k: usize,
    multiple: usize,
    cap: usize,
) -> Vec<u32> {
    if multiple <= 1 || k <= 1 {
        return parts;
    }
    // A second and third pass settle most remainders the first could not move (a part
    // touching its tree parent along too few cells); each pass rebuilds the tree.
    for _ in 0..3 {
        if round_part_sizes_once(adjacency, &mut parts, k, multiple, cap) == 0 {
            break;
        }
    }
    parts
}

/// One pass of [`round_part_sizes_within`] over a tree of the parts: each part's remainder
/// moves to or from its tree parent. Returns the cells moved.
fn round_part_sizes_once(
    adjacency: &[[u32; 4]],
    parts: &mut [u32],
    k: usize,
    multiple: usize,
    cap: usize,
) -> usize {
    let mut moves = 0;
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
        moves += count;
    }
    moves
}
