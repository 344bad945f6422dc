//! The monodomain paper's measured kernels (`paper-unstructured-mesh-on-ipus.txt` §4.3, §7.3)
//! against the cardiac app's modelled phases at the paper's load of 2,058 cells per tile.

use cardiac::matrix::Conductivity;
use cardiac::mesh::TetMesh;
use cardiac::partition::Strategy;
use cardiac::solver::device::{self, DeviceConfig};
use cardiac::solver::{Setup, Stimulus};
use poplar::profile::CycleModel;

use crate::row::{Check, Kind, Row};

/// The paper's median interior+separator cells per tile on one chip (heart04, §7.2).
pub const PAPER_CELLS_PER_TILE: usize = 2058;
/// TP06: measured execution-context cycles per cell and time step (§4.3.2).
pub const PAPER_TP06_CYCLES_PER_CELL: f64 = 1415.0;
/// ELLPACK SpMV: measured execution-context cycles per cell (row) (§4.3.1).
pub const PAPER_SPMV_CYCLES_PER_ROW: f64 = 106.0;
/// ODE compute per tile, one chip: mean 2.8 M, from 2.7 M to 2.9 M (§7.3, Table 2).
pub const PAPER_ODE_COMPUTE: f64 = 2.8e6;
/// PDE compute per tile and PDE step, one chip: mean 238 K, from 231 K to 245 K (§7.3).
pub const PAPER_PDE_COMPUTE: f64 = 238e3;

/// Modelled cycles of the cardiac app's phases, per tile, for a problem at the paper's load.
#[derive(Debug, Clone, PartialEq)]
pub struct PaperLoad {
    /// Cells of each tile used.
    pub cells: Vec<usize>,
    /// ODE compute cycles of each tile.
    pub ode: Vec<u64>,
    /// Compute cycles of each tile in one PDE step (the SpMV `V -> w`).
    pub pde: Vec<u64>,
}

impl PaperLoad {
    /// The index of the tile with the median ODE cycles.
    pub fn median_tile(&self) -> usize {
        let mut order: Vec<usize> = (0..self.ode.len()).collect();
        order.sort_by_key(|&t| (self.ode[t], t));
        order[order.len() / 2]
    }
}

/// Compiles a 14 × 14 × 7-cube slab (8,232 tetrahedra) on 4 tiles of a GC200, 2,058 cells per
/// tile on average, and reads the cycle model's ODE and PDE compute phases. Compiling only:
/// nothing runs.
pub fn paper_load() -> PaperLoad {
    let tiles = 4;
    let mesh = TetMesh::slab(3.5, 3.5, 1.75, 0.25);
    assert_eq!(mesh.num_cells(), tiles * PAPER_CELLS_PER_TILE);
    let stim = Stimulus::niederer(&mesh);
    let setup = Setup::new(&mesh, &Conductivity::niederer(), 0.02, &stim).expect("setup");
    let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
    cfg.tiles = tiles;
    let prob = device::build(&setup, &cfg).expect("build");
    let exe = device::compile_problem(&prob).expect("compile");
    let model = CycleModel::new(&exe);
    let per_tile = |name: &str| -> Vec<u64> {
        let phase = model
            .computes
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no compute phase {name:?}"));
        (0..tiles as u32)
            .map(|t| {
                phase
                    .tiles
                    .iter()
                    .find(|c| c.tile == t)
                    .map_or(0, |c| c.cycles)
            })
            .collect()
    };
    PaperLoad {
        cells: prob.info.tile_cells.iter().map(|r| r.len()).collect(),
        ode: per_tile("ODE"),
        pde: per_tile("PDE V->w"),
    }
}

/// The four rows of the paper: per-cell TP06 and SpMV, ODE and PDE compute per tile.
pub fn rows(load: &PaperLoad) -> Vec<Row> {
    let t = load.median_tile();
    let n = load.cells[t] as f64;
    let source = "paper §4.3, §7.3";
    vec![
        Row {
            name: "TP06 step, tile cycles per cell (six contexts busy)".into(),
            modelled: load.ode[t] as f64 / n,
            published: PAPER_TP06_CYCLES_PER_CELL,
            check: Check::Within(0.15),
            kind: Kind::Calibration,
            chip: "Mk2",
            source,
            note: format!("median tile's ODE phase / its {n} cells; measured 1,415 context cycles"),
        },
        Row {
            name: "ELLPACK SpMV, tile cycles per row".into(),
            modelled: load.pde[t] as f64 / n,
            published: PAPER_SPMV_CYCLES_PER_ROW,
            check: Check::Within(0.15),
            kind: Kind::Calibration,
            chip: "Mk2",
            source,
            note: format!("median tile's PDE step / its {n} rows; measured 106 context cycles"),
        },
        Row {
            name: "ODE compute per tile, 2,058 cells per tile".into(),
            modelled: median(&load.ode),
            published: PAPER_ODE_COMPUTE,
            check: Check::Within(0.15),
            kind: Kind::Calibration,
            chip: "Mk2",
            source,
            note: "median of 4 tiles of a slab at 2,058 cells per tile; paper: mean of heart04 \
                   on 1 chip (2.7–2.9 M)"
                .into(),
        },
        Row {
            name: "PDE compute per tile and step, 2,058 cells per tile".into(),
            modelled: median(&load.pde),
            published: PAPER_PDE_COMPUTE,
            check: Check::Within(0.15),
            kind: Kind::Calibration,
            chip: "Mk2",
            source,
            note: "as above; paper: 231–245 K".into(),
        },
    ]
}

fn median(xs: &[u64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_unstable();
    v[v.len() / 2] as f64
}
