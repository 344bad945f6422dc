//! The framework solver equals the native reference bit for bit on the 0.5 mm Niederer slab, on
//! 1, 2 and 4 chips, for every halo strategy.

use cardiac::matrix::Conductivity;
use cardiac::mesh::TetMesh;
use cardiac::partition::Strategy;
use cardiac::solver::device::{self, DeviceConfig, DeviceRun};
use cardiac::solver::native::NativeSolver;
use cardiac::solver::{Setup, Stimulus};
use poplar::EngineOptions;

/// ODE steps compared: 1.5 ms, past the first activations in the stimulus cube.
const STEPS: u32 = 75;

fn slab_setup() -> Setup {
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 0.5);
    let stim = Stimulus::niederer(&mesh);
    Setup::new(&mesh, &Conductivity::niederer(), 0.02, &stim).unwrap()
}

#[test]
fn framework_equals_native_on_1_2_4_chips_for_all_strategies() {
    let setup = slab_setup();
    let mut native = NativeSolver::new(&setup);
    for _ in 0..STEPS {
        native.step();
    }
    let want = native.results();
    let activated = want.activation.iter().filter(|&&a| a >= 0.0).count();
    assert!(
        activated > 50,
        "the comparison window must include activations ({activated})"
    );
    for chips in [1u32, 2, 4] {
        for strategy in Strategy::ALL {
            let mut cfg = DeviceConfig::chips(chips, strategy);
            cfg.chunk_steps = STEPS;
            let prob = device::build(&setup, &cfg).unwrap();
            let exe = device::compile_problem(&prob).unwrap();
            let mut run =
                DeviceRun::new(&exe, prob.info.clone(), EngineOptions::default()).unwrap();
            run.run_chunk().unwrap();
            let got = run.results().unwrap();
            let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&got.v),
                bits(&want.v),
                "voltage, {chips} chip(s), {}",
                strategy.name()
            );
            assert_eq!(
                bits(&got.activation),
                bits(&want.activation),
                "activation, {chips} chip(s), {}",
                strategy.name()
            );
            assert_eq!(got.t.to_bits(), want.t.to_bits());
        }
    }
}

/// A 4 × 2 × 1 mm slab at 0.5 mm with the stimulus in its 1 mm corner cube, at `dt_ode`.
fn small_slab_setup(dt_ode: f64) -> Setup {
    let mesh = TetMesh::slab(4.0, 2.0, 1.0, 0.5);
    let stim = Stimulus::protocol(mesh.cells_in_box([0.0; 3], [1.0; 3]));
    Setup::new(&mesh, &Conductivity::niederer(), dt_ode, &stim).unwrap()
}

#[test]
fn odd_and_even_pde_step_counts_with_either_index_width() {
    // dt_ode above the stable dt (0.146 ms) forces p = 2 (0.2 ms) and p = 3 (0.3 ms) diffusion
    // steps per ODE step. Even p ends in the V rows of the states (`cardiac::Tp06Step`); odd p
    // ends in the ping-pong buffer, which `cardiac::Tp06StepFrom` reads.
    for (dt, p, ode) in [
        (0.2, 2, "cardiac::Tp06Step"),
        (0.3, 3, "cardiac::Tp06StepFrom"),
    ] {
        let setup = small_slab_setup(dt);
        assert_eq!(setup.pde_steps, p, "dt {dt}");
        let mut native = NativeSolver::new(&setup);
        for _ in 0..10 {
            native.step();
        }
        let want = native.results();
        assert!(
            want.activation.iter().any(|&a| a >= 0.0),
            "the window must include activations"
        );
        // Both column-index widths: 16-bit (the default) and 32-bit (forced).
        for (wide, spmv) in [(false, "cardiac::EllSpmv16"), (true, "cardiac::EllSpmv")] {
            let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
            cfg.tiles = 8;
            cfg.chunk_steps = 10;
            cfg.wide_indices = wide;
            let prob = device::build(&setup, &cfg).unwrap();
            let exe = device::compile_problem(&prob).unwrap();
            let names: Vec<&str> = exe.codelets.values().map(|c| c.name.as_str()).collect();
            for prefix in ["cardiac::EllSpmv", "cardiac::Tp06"] {
                assert_eq!(
                    names.iter().filter(|n| n.starts_with(prefix)).count(),
                    1,
                    "{names:?}"
                );
            }
            assert!(names.contains(&spmv) && names.contains(&ode), "{names:?}");
            let mut run =
                DeviceRun::new(&exe, prob.info.clone(), EngineOptions::default()).unwrap();
            run.run_chunk().unwrap();
            let got = run.results().unwrap();
            let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got.v), bits(&want.v), "p {p}, wide indices: {wide}");
            assert_eq!(
                bits(&got.activation),
                bits(&want.activation),
                "p {p}, wide indices: {wide}"
            );
        }
    }
}

#[test]
fn halos_are_received_in_place_unless_tile_memory_is_too_tight() {
    // p = 2: both diffusion buffers are concatenated with a halo. In place, each gets receive
    // slack beside it (always-live); gathered, they share one temporary. On a target just big
    // enough for the gathered layout, `compile_problem` must fall back to it and still equal
    // the native solver.
    let setup = small_slab_setup(0.2);
    assert_eq!(setup.pde_steps, 2);
    let mut native = NativeSolver::new(&setup);
    for _ in 0..10 {
        native.step();
    }
    let want = native.results();
    let slack = |exe: &poplar::Executable| -> u64 {
        exe.tiles
            .iter()
            .flat_map(|t| &t.breakdown)
            .filter(|m| m.name.ends_with("(receive slack)"))
            .map(|m| u64::from(m.bytes))
            .sum()
    };
    let max_mem = |exe: &poplar::Executable| exe.tiles.iter().map(|t| t.memory_bytes).max();
    let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
    cfg.tiles = 8;
    cfg.chunk_steps = 10;
    let prob = device::build(&setup, &cfg).unwrap();
    let roomy = device::compile_problem(&prob).unwrap();
    let gathered = poplar::compile(
        &prob.graph,
        &prob.programs,
        &poplar::CompileOptions {
            in_place_concat: poplar::InPlaceConcat::Never,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(slack(&roomy) > 0, "halos bound in place on a roomy target");
    let tight = max_mem(&gathered).unwrap();
    assert!(
        max_mem(&roomy).unwrap() > tight,
        "two slacks cost more than one shared temporary here"
    );
    cfg.target = poplar::Target::custom(cfg.target.num_tiles(), tight);
    let prob = device::build(&setup, &cfg).unwrap();
    let exe = device::compile_problem(&prob).unwrap();
    assert!(max_mem(&exe).unwrap() <= tight);
    for exe in [&roomy, &exe] {
        let mut run = DeviceRun::new(exe, prob.info.clone(), EngineOptions::default()).unwrap();
        run.run_chunk().unwrap();
        let got = run.results().unwrap();
        let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got.v), bits(&want.v));
        assert_eq!(bits(&got.activation), bits(&want.activation));
    }
}
