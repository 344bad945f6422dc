//! Mappings and their decomposition of the grid over tiles.
//!
//! A plan splits the planes into `groups` (ranges of `k`), the interior of a plane into
//! `blocks_j × blocks_i` blocks, and gives each (group, block) — a *unit* — `stages`
//! consecutive tiles: one for the single-stage mapping, a Laplacian and a flux tile for the
//! dual-stage one, Laplacian, flux-x and flux-y tiles for the tri-stage one (the seed's
//! B-block lane). The unit's last tile holds the block's data (`in`, `out`, `coeff`).
//!
//! Units are spread evenly over the chips in (group, block) order, so when the groups are a
//! multiple of the chips every group lies on one chip and no halo crosses a chip: planes are
//! independent, and weak scaling over chips costs only the syncs.

use std::ops::Range;

use poplar::{Target, TileId};
use serde::Serialize;

use crate::error::HdiffError;
use crate::grid::{Grid, HALO};
use crate::stencil::{Stage, CYCLES_PER_POINT};

/// How the stencil's stages are placed on tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Mapping {
    /// Each tile computes the Laplacian, the fluxes and the update of its block.
    Single,
    /// The Laplacian on one tile, fluxes and update on its neighbour, pipelined over planes.
    Dual,
    /// Laplacian, flux-x, and flux-y with the update on three tiles, pipelined over planes.
    Tri,
}

impl Mapping {
    pub const ALL: [Mapping; 3] = [Mapping::Single, Mapping::Dual, Mapping::Tri];

    /// The stages, in pipeline order.
    pub fn stages(self) -> &'static [Stage] {
        match self {
            Mapping::Single => &[Stage::Fused],
            Mapping::Dual => &[Stage::Lap, Stage::FluxOut],
            Mapping::Tri => &[Stage::Lap, Stage::Flx, Stage::FlyOut],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mapping::Single => "single-stage",
            Mapping::Dual => "dual-stage",
            Mapping::Tri => "tri-stage",
        }
    }
}

impl std::fmt::Display for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How the planes are distributed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Planes {
    /// The planner's choice (lowest estimated cycles per iteration).
    Auto,
    /// Every tile holds all planes of its block (one group).
    All,
    /// Planes over tiles: as many groups as planes (or as units, if fewer).
    Spread,
    /// This many groups.
    Groups(usize),
}

impl std::str::FromStr for Planes {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Planes::Auto),
            "all" => Ok(Planes::All),
            "spread" => Ok(Planes::Spread),
            _ => match s.parse::<usize>() {
                Ok(g) if g > 0 => Ok(Planes::Groups(g)),
                _ => Err(format!(
                    "`{s}` is not `auto`, `all`, `spread` or a number of plane groups > 0"
                )),
            },
        }
    }
}

/// What the user asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanRequest {
    pub mapping: Mapping,
    pub planes: Planes,
    /// Blocks per plane as `(blocks_j, blocks_i)`; `None`: the planner's choice.
    pub blocks: Option<(usize, usize)>,
}

impl PlanRequest {
    pub fn auto(mapping: Mapping) -> PlanRequest {
        PlanRequest {
            mapping,
            planes: Planes::Auto,
            blocks: None,
        }
    }
}

/// One (plane group, block) and its tiles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unit {
    pub group: usize,
    pub block_j: usize,
    pub block_i: usize,
    /// One tile per stage, in pipeline order; the last holds the block's data.
    pub tiles: Vec<TileId>,
}

/// A decomposition of the grid over tiles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub grid: Grid,
    pub mapping: Mapping,
    /// Plane ranges.
    pub groups: Vec<Range<usize>>,
    /// Interior ranges in `j` and `i` of the blocks (inside `[HALO, n − HALO)`).
    pub blocks_j: Vec<Range<usize>>,
    pub blocks_i: Vec<Range<usize>>,
    pub units: Vec<Unit>,
    /// The planner's estimate of one iteration in cycles (the compiled program's cycle model
    /// is the real figure).
    pub estimate_cycles: u64,
}

/// `n` split into `parts` contiguous ranges from `start`, sizes differing by at most one.
fn split(start: usize, n: usize, parts: usize) -> Vec<Range<usize>> {
    (0..parts)
        .map(|p| start + n * p / parts..start + n * (p + 1) / parts)
        .collect()
}

impl Plan {
    /// The plan for `request` on `target`: checked, with the planner's choices filled in.
    pub fn new(grid: Grid, target: &Target, request: PlanRequest) -> Result<Plan, HdiffError> {
        let stages = request.mapping.stages().len();
        let chips = target.num_ipus as usize;
        let tiles_per_chip = target.tiles_per_ipu as usize;
        let units_per_chip = tiles_per_chip / stages;
        let max_units = units_per_chip * chips;
        let (ij, ii) = (grid.interior_j(), grid.interior_i());
        if let Some((bj, bi)) = request.blocks {
            for (what, value, max) in [("--blocks in j", bj, ij), ("--blocks in i", bi, ii)] {
                if value == 0 || value > max {
                    return Err(HdiffError::DecompositionTooFine {
                        what,
                        value,
                        max,
                        why: "each block needs at least one interior point",
                    });
                }
            }
        }
        let groups_of = |g: usize| -> Result<usize, HdiffError> {
            if g > grid.nk {
                return Err(HdiffError::DecompositionTooFine {
                    what: "plane groups",
                    value: g,
                    max: grid.nk,
                    why: "each group needs at least one plane",
                });
            }
            Ok(g)
        };
        // Candidate group counts.
        let candidates: Vec<usize> = match request.planes {
            Planes::All => vec![1],
            Planes::Spread => vec![grid.nk.min(max_units.max(1))],
            Planes::Groups(g) => vec![groups_of(g)?],
            Planes::Auto => {
                let mut c: Vec<usize> = (1..=grid.nk.min(max_units.max(1))).collect();
                // Whole groups per chip keep halos on chip; prefer them when there are enough
                // planes.
                if chips > 1 && grid.nk >= chips {
                    c.retain(|g| g % chips == 0);
                }
                c
            }
        };
        let mut best: Option<(u64, usize, usize, usize)> = None;
        for &g in &candidates {
            let blocks_per_group = max_units / g;
            let choices: Vec<(usize, usize)> = match request.blocks {
                Some(b) => vec![b],
                None if blocks_per_group == 0 => vec![(1, 1)],
                None => (1..=blocks_per_group.min(ii))
                    .map(|bi| ((blocks_per_group / bi).min(ij), bi))
                    .filter(|&(bj, _)| bj >= 1)
                    .collect(),
            };
            for (bj, bi) in choices {
                let cost = estimate(&grid, target, request.mapping, g, bj, bi);
                if best.is_none_or(|b| cost < b.0) {
                    best = Some((cost, g, bj, bi));
                }
            }
        }
        let (_, g, bj, bi) = best.expect("at least one candidate");
        let plan = Plan::build(grid, target, request.mapping, g, bj, bi);
        let needed = plan.units.len() * stages;
        let fits = plan.units.len().div_ceil(chips) <= units_per_chip;
        if !fits || needed > target.num_tiles() as usize {
            return Err(HdiffError::TooManyTiles {
                mapping: request.mapping.to_string(),
                groups: plan.groups.len(),
                blocks_j: plan.blocks_j.len(),
                blocks_i: plan.blocks_i.len(),
                needed,
                available: target.num_tiles() as usize,
            });
        }
        Ok(plan)
    }

    /// The plan with `g` groups of `bj × bi` blocks, tiles assigned, cost estimated.
    fn build(
        grid: Grid,
        target: &Target,
        mapping: Mapping,
        g: usize,
        bj: usize,
        bi: usize,
    ) -> Plan {
        let stages = mapping.stages().len();
        let groups = split(0, grid.nk, g);
        let blocks_j = split(HALO, grid.interior_j(), bj);
        let blocks_i = split(HALO, grid.interior_i(), bi);
        let n_units = g * bj * bi;
        let chips = target.num_ipus as usize;
        let tpc = target.tiles_per_ipu as usize;
        let mut units = Vec::with_capacity(n_units);
        for u in 0..n_units {
            let chip = u * chips / n_units;
            let first_of_chip = (chip * n_units).div_ceil(chips);
            let base = chip * tpc + (u - first_of_chip) * stages;
            units.push(Unit {
                group: u / (bj * bi),
                block_j: (u / bi) % bj,
                block_i: u % bi,
                tiles: (0..stages)
                    .map(|s| TileId::new((base + s) as u32))
                    .collect(),
            });
        }
        Plan {
            grid,
            mapping,
            groups,
            blocks_j,
            blocks_i,
            units,
            estimate_cycles: estimate(&grid, target, mapping, g, bj, bi),
        }
    }

    /// Units whose block is non-empty.
    pub fn stages(&self) -> &'static [Stage] {
        self.mapping.stages()
    }

    /// Tiles the plan uses.
    pub fn tiles_used(&self) -> usize {
        self.units.len() * self.stages().len()
    }

    /// The compute bound of `target` for this stencil, in output points per second: every
    /// tile at [`CYCLES_PER_POINT`] tile cycles per point (its contexts issue in turn, one
    /// instruction per tile cycle between them, so six busy contexts each take six times as
    /// long per point as one alone would).
    pub fn compute_bound_points_per_s(target: &Target) -> f64 {
        f64::from(target.num_tiles()) / CYCLES_PER_POINT * target.clock_hz
    }

    /// One line describing the decomposition.
    pub fn describe(&self) -> String {
        let rows = |r: &[Range<usize>]| {
            let min = r.iter().map(|r| r.len()).min().unwrap_or(0);
            let max = r.iter().map(|r| r.len()).max().unwrap_or(0);
            if min == max {
                format!("{max}")
            } else {
                format!("{min}–{max}")
            }
        };
        format!(
            "{}: {} plane group(s) of {} plane(s), {} × {} blocks of {} × {} points (j × i), {} tiles",
            self.mapping,
            self.groups.len(),
            rows(&self.groups),
            self.blocks_j.len(),
            self.blocks_i.len(),
            rows(&self.blocks_j),
            rows(&self.blocks_i),
            self.tiles_used()
        )
    }
}

/// A rough model of one iteration (the busiest unit): compute of the largest block (in tile
/// cycles, [`Stage::tile_cycles`]), the
/// halo it receives at the tile's exchange rate (plus the hop latency when groups straddle
/// chips), the
/// on-tile gathers of two-dimensional blocks, and a sync per exchange. Used only to choose
/// among decompositions.
fn estimate(grid: &Grid, target: &Target, mapping: Mapping, g: usize, bj: usize, bi: usize) -> u64 {
    let kb = grid.nk.div_ceil(g) as u64;
    let rows = grid.interior_j().div_ceil(bj);
    let cols = grid.interior_i().div_ceil(bi);
    let stages = mapping.stages();
    let two_d = bi > 1;
    let straddles = g < target.num_ipus as usize;
    let w = target.workers_per_tile;
    let halo = ((rows + 4) * (cols + 4) - rows * cols) as u64;
    // Each tile's port; across chips the links (shared by the chip's tiles) add their hop
    // latency, and carry the halo of every straddling unit at once.
    let bytes_per_cycle = f64::from(target.exchange_bytes_per_cycle);
    let link = if straddles {
        u64::from(target.link_hop_latency_cycles)
    } else {
        0
    };
    let exchange = (halo as f64 * 4.0 / bytes_per_cycle) as u64 + 4 * 16 + link;
    let gather = if two_d {
        ((rows + 4) * (cols + 4) + 2 * rows * cols) as u64 * 4 / 8
    } else {
        0
    };
    let sync = u64::from(target.internal_sync_cycles);
    if stages.len() == 1 {
        let per_plane = Stage::Fused.tile_cycles(rows, cols, w) + gather;
        kb * (per_plane + exchange) + sync
    } else {
        // Per superstep, the busiest receiver: the Laplacian tile receives its whole input
        // block (it holds no field), the flux-x tile (tri) the Laplacian block and its whole
        // input, the last tile the Laplacian block (and flux-x block) and its input halo.
        let lap = ((rows + 2) * (cols + 2)) as u64;
        let in2 = ((rows + 4) * (cols + 4)) as u64;
        let in1 = ((rows + 2) * (cols + 2)) as u64;
        let halo1 = in1 - (rows * cols) as u64;
        let receive = if stages.len() == 2 {
            in2.max(lap + halo1)
        } else {
            in2.max(lap + in1)
                .max(lap + (rows * (cols + 1)) as u64 + halo1)
        };
        let exchange = (receive as f64 * 4.0 / bytes_per_cycle) as u64 + 4 * 16;
        let slowest = stages
            .iter()
            .map(|s| match s {
                Stage::Lap => s.tile_cycles(rows + 2, cols + 2, w),
                Stage::Flx => s.tile_cycles(rows, cols + 1, w),
                _ => s.tile_cycles(rows, cols, w),
            })
            .max()
            .unwrap_or(0);
        let steps = kb + stages.len() as u64 - 1;
        steps * (slowest + gather + exchange + sync)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_of_a_group_stay_on_one_chip() {
        let grid = Grid::new(64, 64, 8).unwrap();
        let target = Target::gc200_multi(4);
        let plan = Plan::new(
            grid,
            &target,
            PlanRequest {
                mapping: Mapping::Tri,
                planes: Planes::Groups(8),
                blocks: Some((6, 1)),
            },
        )
        .unwrap();
        for u in &plan.units {
            let chips: Vec<u32> = u.tiles.iter().map(|&t| target.ipu_of(t)).collect();
            assert!(
                chips.iter().all(|&c| c as usize == u.group * 4 / 8),
                "{u:?}"
            );
        }
        // Distinct tiles.
        let mut all: Vec<TileId> = plan.units.iter().flat_map(|u| u.tiles.clone()).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), plan.tiles_used());
    }

    #[test]
    fn too_many_tiles_is_a_typed_error() {
        let grid = Grid::new(64, 64, 8).unwrap();
        let target = Target::custom(16, 624 * 1024);
        let err = Plan::new(
            grid,
            &target,
            PlanRequest {
                mapping: Mapping::Dual,
                planes: Planes::Groups(4),
                blocks: Some((3, 1)),
            },
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                HdiffError::TooManyTiles {
                    needed: 24,
                    available: 16,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn blocks_finer_than_the_grid_are_refused() {
        let grid = Grid::new(8, 8, 2).unwrap();
        let err = Plan::new(
            grid,
            &Target::custom(64, 624 * 1024),
            PlanRequest {
                mapping: Mapping::Single,
                planes: Planes::All,
                blocks: Some((5, 1)),
            },
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                HdiffError::DecompositionTooFine {
                    value: 5,
                    max: 4,
                    ..
                }
            ),
            "{err}"
        );
    }
}
