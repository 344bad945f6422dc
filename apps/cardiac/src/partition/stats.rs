//! Table-1 statistics of a plan (paper §7.1): halo sizes, ranges and unused values.

use super::*;

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
