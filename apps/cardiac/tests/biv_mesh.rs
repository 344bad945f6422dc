//! Bring your own mesh: the bi-ventricular gmsh mesh biv_0.3.msh (cm, no fibres → isotropic),
//! stimulated on the LV endocardium, run on 64 tiles of the simulator for a few ms.

use std::path::PathBuf;

use cardiac::matrix::Conductivity;
use cardiac::mesh::{read_mesh, ReadOptions};
use cardiac::partition::Strategy;
use cardiac::solver::device::{self, DeviceConfig, DeviceRun};
use cardiac::solver::native::NativeSolver;
use cardiac::solver::{Setup, Stimulus};
use poplar::EngineOptions;

/// 8 ms: the stimulus (2 ms) and the first few ms of spread from the LV endocardium.
const STEPS: u32 = 400;

fn mesh_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/biv_0.3.msh")
}

#[test]
fn biv_mesh_on_64_tiles_activates_from_the_lv_endocardium_and_equals_native() {
    let mesh = read_mesh(mesh_path(), &ReadOptions::with_scale(10.0)).expect("read biv_0.3.msh");
    assert!(
        mesh.fibres.is_none(),
        "the mesh has no fibres: isotropic conduction"
    );
    let lv = mesh.cells_touching_surface("ENDO_LV").expect("ENDO_LV tag");
    let rv = mesh.cells_touching_surface("ENDO_RV").expect("ENDO_RV tag");
    let epi = mesh.cells_touching_surface("EPI").expect("EPI tag");
    assert!(!lv.is_empty() && !rv.is_empty() && !epi.is_empty());
    let sigma = Conductivity::niederer().sigma_l;
    let cond = Conductivity {
        sigma_t: sigma,
        sigma_n: sigma,
        ..Conductivity::niederer()
    };
    let stim = Stimulus::protocol(lv.clone());
    let setup = Setup::new(&mesh, &cond, 0.02, &stim).expect("set-up");

    let mut native = NativeSolver::new(&setup);
    for _ in 0..STEPS {
        native.step();
    }
    let want = native.results();

    let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
    cfg.tiles = 64;
    cfg.chunk_steps = STEPS;
    let prob = device::build(&setup, &cfg).expect("build");
    assert_eq!(prob.plan.tiles.len(), 64);
    let exe = device::compile_problem(&prob).expect("compile");
    let mut run =
        DeviceRun::new(&exe, prob.info.clone(), EngineOptions::default()).expect("engine");
    run.run_chunk().expect("run");
    let got = run.results().expect("results");

    // Framework == native, bit for bit, on an unstructured mesh of the user's.
    let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got.activation), bits(&want.activation), "activation");
    assert_eq!(bits(&got.v), bits(&want.v), "voltage");
    assert!((got.t - 8.0).abs() < 1e-3, "t = {}", got.t);

    // Every stimulated (ENDO_LV) cell activates during the 2 ms stimulus, and before any cell
    // away from the LV endocardium.
    let act = &got.activation;
    let lv_latest = lv.iter().map(|&c| act[c as usize]).fold(f32::MIN, f32::max);
    assert!(
        lv.iter().all(|&c| act[c as usize] >= 0.0),
        "an ENDO_LV cell did not activate"
    );
    assert!(
        lv_latest < 2.5,
        "ENDO_LV cells activate within the stimulus: latest {lv_latest} ms"
    );
    let is_lv = {
        let mut v = vec![false; setup.n];
        for &c in &lv {
            v[c as usize] = true;
        }
        v
    };
    let others_first = (0..setup.n)
        .filter(|&i| !is_lv[i] && act[i] >= 0.0)
        .map(|i| act[i])
        .fold(f32::MAX, f32::min);
    let lv_first = lv.iter().map(|&c| act[c as usize]).fold(f32::MAX, f32::min);
    assert!(
        lv_first < others_first,
        "LV endocardium first ({lv_first} ms) before others ({others_first} ms)"
    );
    // The wave has left the stimulus region but is far from done after 8 ms.
    let spread = (0..setup.n).filter(|&i| !is_lv[i] && act[i] >= 0.0).count();
    assert!(
        spread > 0,
        "no activation outside the LV endocardium after 8 ms"
    );
    assert!(
        spread < setup.n / 2,
        "{spread} cells activated after 8 ms: too fast"
    );
    // The RV endocardium (the free wall, away from the septum) is still mostly at rest.
    let rv_only: Vec<u32> = rv.iter().copied().filter(|&c| !is_lv[c as usize]).collect();
    let rv_active = rv_only.iter().filter(|&&c| act[c as usize] >= 0.0).count();
    assert!(
        rv_active * 2 < rv_only.len(),
        "{rv_active} of {} ENDO_RV cells already active after 8 ms",
        rv_only.len()
    );
    eprintln!(
        "biv_0.3: {} cells, {} on ENDO_LV (latest {lv_latest:.3} ms), {spread} others activated, first at {others_first:.3} ms; ENDO_RV {rv_active}/{}",
        setup.n,
        lv.len(),
        rv_only.len()
    );
}
