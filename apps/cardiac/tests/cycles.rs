//! The modelled compute cycles of a tile: the ODE and PDE vertices run on all six worker
//! contexts of the tile (multi-worker codelets), with the per-worker estimates calibrated on the
//! paper's instruction counts (§4.3: TP06 1,415 cycles per cell, SpMV 106 per row and 153 of
//! start-up; `solver/codelets.rs`). Compiled only, not run.

use cardiac::matrix::Conductivity;
use cardiac::mesh::TetMesh;
use cardiac::partition::Strategy;
use cardiac::solver::device::{self, DeviceConfig, DeviceProblem};
use cardiac::solver::{Setup, Stimulus};
use poplar::profile::model::{ComputeCost, TileComputeCost};
use poplar::profile::CycleModel;

/// The problem's compute phase named `name`.
fn phase<'a>(model: &'a CycleModel, name: &str) -> &'a ComputeCost {
    model
        .computes
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no compute phase {name}"))
}

/// The vertices of the executable's compute phase `name`, by codelet name.
fn codelets(exe: &poplar::Executable, name: &str) -> Vec<String> {
    let cs = exe.computes.values().find(|c| c.name == name).unwrap();
    let mut names: Vec<String> = cs
        .tiles
        .iter()
        .flat_map(|t| &t.vertices)
        .map(|v| exe.codelets[v.codelet].name.clone())
        .collect();
    names.dedup();
    names
}

/// A cube of 7 × 7 × 7 hexahedra of 0.5 mm, 6 tetrahedra each: 2,058 cells, the paper's median
/// load per tile on one IPU (heart04 mesh, §6), all on one tile.
fn paper_load(dt_ode: f64) -> (DeviceProblem, poplar::Executable) {
    let mesh = TetMesh::slab(3.5, 3.5, 3.5, 0.5);
    let stim = Stimulus::protocol(mesh.cells_in_box([0.0; 3], [1.0; 3]));
    let setup = Setup::new(&mesh, &Conductivity::niederer(), dt_ode, &stim).unwrap();
    assert_eq!(setup.n, 2058);
    let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
    cfg.tiles = 1;
    cfg.chunk_steps = 1;
    let prob = device::build(&setup, &cfg).unwrap();
    assert_eq!(prob.info.tile_cells.len(), 1);
    assert_eq!(prob.info.tile_cells[0], 0..2058);
    let exe = device::compile_problem(&prob).unwrap();
    (prob, exe)
}

/// The single tile's cost in a phase.
fn tile(c: &ComputeCost) -> TileComputeCost {
    assert_eq!(c.tiles.len(), 1, "{}", c.name);
    assert_eq!(c.vertices, 1, "{}: one vertex", c.name);
    assert_eq!(c.default_estimates, 0, "{}: the codelets estimate", c.name);
    c.tiles[0]
}

#[test]
fn ode_and_pde_compute_of_a_tile_at_the_papers_load() {
    // 2,058 cells = 6 workers × 343. Hand-computed, per worker context:
    //   TP06:  153 + 343 × 1,415 = 485,498 worker cycles (+ 172 for the v_in copy, 343 × 4 B
    //          at 8 B per cycle, when the voltage comes from the ping-pong buffer);
    //   SpMV:  153 + 343 × 106 = 36,511 worker cycles.
    // A tile's time is 6 × the busiest context (the barrel) + 51 supervisor cycles.
    // The paper (§6, heart04 on one IPU, median 2,058 cells per tile): ODE 2.7–2.9 M cycles per
    // tile (mean 2.8 M), PDE 231–245 K (mean 238 K).
    const PDE: u64 = 6 * 36_511 + 51; // 219,117
                                      // All rows on one context instead: 1,309,806.
    const PDE_ONE_WORKER: u64 = 6 * (153 + 2058 * 106);

    // dt_ode 0.05 ms: p = 1 diffusion step (odd: Tp06StepFrom); 0.2 ms: p = 2 (Tp06Step).
    for (dt, p, ode_codelet, ode) in [
        (0.05, 1, "cardiac::Tp06StepFrom", 6 * (485_498 + 172) + 51), // 2,914,071
        (0.2, 2, "cardiac::Tp06Step", 6 * 485_498 + 51),              // 2,913,039
    ] {
        let (prob, exe) = paper_load(dt);
        assert_eq!(prob.info.pde_steps, p);
        let model = CycleModel::new(&exe);
        assert_eq!(model.target.workers_per_tile, 6);

        let o = tile(phase(&model, "ODE"));
        assert_eq!(codelets(&exe, "ODE"), [ode_codelet]);
        assert_eq!(o.cycles, ode, "dt {dt}");
        assert_eq!((o.copy_cycles, o.supervisor_cycles), (0, 51));
        assert_eq!(
            o.worker_cycles,
            o.cycles - 51,
            "every context busy throughout"
        );

        // The PDE compute phase: the SpMV vertex alone (no on-tile copies, no other vertex).
        let d = tile(phase(&model, "PDE V->w"));
        assert_eq!(codelets(&exe, "PDE V->w"), ["cardiac::EllSpmv16"]);
        assert_eq!(d.cycles, PDE, "dt {dt}");
        assert_eq!((d.copy_cycles, d.supervisor_cycles), (0, 51));
        // Six workers share the rows: a sixth of what one context would take (+ supervisor).
        let ratio = d.cycles as f64 / PDE_ONE_WORKER as f64;
        assert!((ratio - 1.0 / 6.0).abs() < 0.001, "ratio {ratio}");
    }
}

#[test]
fn every_tile_of_a_slab_gets_the_formula_for_its_cell_count() {
    // The 0.5 mm Niederer slab on one chip: 20,160 cells on 1,472 tiles, 11 to 16 cells each
    // (not multiples of six: the busiest worker has ceil(n / 6)).
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 0.5);
    let stim = Stimulus::niederer(&mesh);
    let setup = Setup::new(&mesh, &Conductivity::niederer(), 0.05, &stim).unwrap();
    let cfg = DeviceConfig::chips(1, Strategy::MixedClean);
    let prob = device::build(&setup, &cfg).unwrap();
    let exe = device::compile_problem(&prob).unwrap();
    let model = CycleModel::new(&exe);
    let (ode, pde) = (phase(&model, "ODE"), phase(&model, "PDE V->w"));
    let cells = &prob.info.tile_cells;
    assert_eq!(
        (ode.tiles.len(), pde.tiles.len()),
        (cells.len(), cells.len())
    );
    assert!(cells.iter().any(|c| c.len() % 6 != 0));
    for ((o, d), c) in ode.tiles.iter().zip(&pde.tiles).zip(cells) {
        let per_worker = c.len().div_ceil(6) as u64;
        // Tp06StepFrom (p = 1): its v_in copy is ceil(4 × cells / 8) per worker.
        let tp06 = 153 + 1415 * per_worker + (4 * per_worker).div_ceil(8);
        assert_eq!(
            o.cycles,
            6 * tp06 + 51,
            "tile {} ({} cells)",
            o.tile,
            c.len()
        );
        assert_eq!(d.vertex_cycles, 6 * (153 + 106 * per_worker) + 51);
    }
}
