//! Nearly as many tiles as cells: METIS leaves some parts empty (the checked `partition_cells`
//! refuses that), and the device build must leave those tiles idle (a tile with no cells would
//! get zero-length constants) and still equal native.

use cardiac::matrix::Conductivity;
use cardiac::mesh::TetMesh;
use cardiac::partition::{kway_parts, partition_cells, PartitionError, Strategy};
use cardiac::solver::device::{self, DeviceConfig, DeviceRun};
use cardiac::solver::native::NativeSolver;
use cardiac::solver::{Setup, Stimulus};
use poplar::EngineOptions;

#[test]
fn empty_metis_parts_are_dropped_and_results_equal_native() {
    // 1 mm slab: 2,520 cells; 2 chips: 2,944 tiles, so one part per cell is asked for.
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 1.0);
    let stim = Stimulus::niederer(&mesh);
    let setup = Setup::new(&mesh, &Conductivity::niederer(), 0.02, &stim).unwrap();
    let parts = kway_parts(&setup.adjacency, setup.n).unwrap();
    let mut used = vec![false; setup.n];
    for &p in &parts {
        used[p as usize] = true;
    }
    let empty = used.iter().filter(|&&u| !u).count();
    assert!(
        empty > 0,
        "the case must exercise empty parts (METIS left none empty)"
    );
    assert_eq!(
        partition_cells(&setup.adjacency, setup.n),
        Err(PartitionError::EmptyParts {
            k: setup.n,
            n: setup.n,
            empty
        })
    );

    let mut cfg = DeviceConfig::chips(2, Strategy::MixedClean);
    cfg.chunk_steps = 100;
    let prob = device::build(&setup, &cfg).expect("build with empty METIS parts");
    assert!(
        prob.plan.tiles.iter().all(|t| !t.cells.is_empty()),
        "no tile without cells"
    );
    assert_eq!(prob.plan.tiles.len(), setup.n - empty);
    let exe = device::compile_problem(&prob).unwrap();
    let mut run = DeviceRun::new(&exe, prob.info.clone(), EngineOptions::default()).unwrap();
    run.run_chunk().unwrap();
    let got = run.results().unwrap();
    let mut native = NativeSolver::new(&setup);
    for _ in 0..100 {
        native.step();
    }
    let want = native.results();
    let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got.v), bits(&want.v));
    assert_eq!(bits(&got.activation), bits(&want.activation));
    assert_eq!(got.t.to_bits(), want.t.to_bits());
}
