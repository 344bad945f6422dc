//! The application layer's guards (`cardiac::app`): what the run loop needs from an
//! executable, a run that stops exactly at its end time and never loops on a program that does
//! not advance time, time steps the cell model cannot take, stimulus regions, meshes with
//! inverted cells or disconnected parts, and output folders.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cardiac::app::bundle;
use cardiac::app::output;
use cardiac::app::problem::{self, ProblemSpec};
use cardiac::app::protocol::{self, StimRegion};
use cardiac::app::run::check_dt;
use cardiac::app::run::run_device;
use cardiac::matrix::Conductivity;
use cardiac::mesh::{vtu::VtuEncoding, TetMesh};
use cardiac::partition::Strategy;
use cardiac::solver::device::{self, DeviceConfig, DeviceProblem};
use cardiac::solver::{Setup, Stimulus};
use poplar::exe::Step;
use poplar::Executable;

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("app_{}_{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A 1 mm slab on 4 tiles: small and quick.
fn small() -> (Setup, DeviceProblem, Executable) {
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 1.0);
    let setup = Setup::new(
        &mesh,
        &Conductivity::niederer(),
        0.02,
        &Stimulus::niederer(&mesh),
    )
    .unwrap();
    let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
    cfg.tiles = 4;
    cfg.chunk_steps = 50;
    let prob = device::build(&setup, &cfg).unwrap();
    let exe = device::compile_problem(&prob).unwrap();
    (setup, prob, exe)
}

#[test]
fn the_run_stops_exactly_at_t_end() {
    let (_, prob, exe) = small();
    // 1.3 ms = 65 steps: one chunk of 50, then 15 single steps (not a second chunk: 2 ms).
    let (res, _, _) = run_device(
        exe,
        prob.info.clone(),
        1.3,
        Some(1),
        false,
        None,
        Default::default(),
    )
    .unwrap();
    assert!((res.t - 1.3).abs() < 1e-4, "stopped at {} ms", res.t);
}

/// An executable whose `time` tensor is empty used to panic (index out of bounds) in `exec`,
/// and one whose program does not advance time looped forever.
#[test]
fn executables_the_loop_cannot_run_are_refused_not_panicked_on_or_looped_on() {
    let (_, prob, exe) = small();
    let file = PathBuf::from("test.popexe");
    bundle::check(&exe, &prob.info, &file).unwrap();

    let mut no_time = exe.clone();
    let t = no_time
        .host_tensors
        .iter_mut()
        .find(|h| h.name == "time")
        .unwrap();
    t.shape = vec![0];
    t.runs.clear();
    let e = bundle::check(&no_time, &prob.info, &file)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("host tensor `time`") && e.contains("test.popexe"),
        "{e}"
    );

    let mut one_program = exe.clone();
    one_program.programs.truncate(1);
    let e = bundle::check(&one_program, &prob.info, &file)
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 program(s)"), "{e}");

    // A program that does nothing: the loop stops with an error at the first device run.
    let mut idle = exe.clone();
    idle.programs = vec![Step::Seq(vec![]), Step::Seq(vec![])];
    let start = Instant::now();
    let e = run_device(
        idle,
        prob.info.clone(),
        50.0,
        Some(1),
        false,
        None,
        Default::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("does not advance simulated time"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn time_steps_the_cell_model_cannot_take_are_refused_and_doubtful_ones_warned() {
    assert!(check_dt(1.0)
        .unwrap_err()
        .to_string()
        .contains("at most 0.2 ms"));
    assert!(check_dt(0.5).is_err());
    assert!(check_dt(-0.02).is_err());
    assert!(check_dt(f64::NAN).is_err());
    assert!(check_dt(0.1).unwrap().unwrap().contains("warning"));
    assert_eq!(check_dt(0.02).unwrap(), None);
    assert_eq!(check_dt(0.05).unwrap(), None);
}

#[test]
fn stimulus_regions_are_checked() {
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 1.0);
    for r in [-1.0, 0.0, f64::NAN] {
        let e = protocol::stimulus_cells(&mesh, &StimRegion::Sphere([1.0; 3], r)).unwrap_err();
        assert!(e.to_string().contains("must be positive"), "{e}");
    }
    assert!(protocol::stimulus_cells(&mesh, &StimRegion::Sphere([1.0; 3], 2.0)).is_ok());
    let e = protocol::stimulus_cells(&mesh, &StimRegion::Box([5.0; 3], [1.0; 3])).unwrap_err();
    assert!(e.to_string().contains("min corner"), "{e}");
}

/// Two tets sharing no face, the second inverted: the mesh loads with two warnings.
#[test]
fn inverted_cells_and_disconnected_parts_are_reported() {
    let d = tmp("mesh");
    let mut m = TetMesh::slab(1.0, 1.0, 1.0, 1.0);
    let first = m.tets[0];
    m.tets = vec![first];
    let n0 = m.nodes.len() as u32;
    for &node in &first {
        let p = m.nodes[node as usize];
        m.nodes.push([p[0] + 10.0, p[1], p[2]]);
    }
    // The far copy with two vertices swapped: negative volume.
    m.tets.push([n0 + 1, n0, n0 + 2, n0 + 3]);
    m.surfaces.clear();
    m.fibres = None;
    m.cell_types = None;
    let path = d.join("two.vtu");
    let mut bytes = Vec::new();
    cardiac::mesh::vtu::write_vtu_to(&mut bytes, &m, &[], &[], VtuEncoding::Ascii).unwrap();
    std::fs::write(&path, bytes).unwrap();
    let spec = ProblemSpec {
        mesh: Some(path),
        ..ProblemSpec::slab(0.5)
    };
    let (mesh, warnings) = problem::load_mesh(&spec).unwrap();
    assert_eq!(mesh.num_cells(), 2);
    let all = warnings.join("\n");
    assert!(all.contains("1 of 2 tetrahedra were inverted"), "{all}");
    assert!(all.contains("2 disconnected parts (cells: 1, 1)"), "{all}");
    // The slab has neither.
    let (_, none) = problem::load_mesh(&ProblemSpec::slab(1.0)).unwrap();
    assert!(none.is_empty(), "{none:?}");
}

#[test]
fn output_folders_are_checked_before_the_run_and_earlier_results_kept() {
    let d = tmp("out");
    let file = d.join("f");
    std::fs::write(&file, b"keep").unwrap();
    assert!(output::ResultWriter::prepare(&file, false)
        .unwrap_err()
        .to_string()
        .contains("is a file"));
    assert!(output::ResultWriter::prepare(&file.join("x"), true).is_err());
    let dir = d.join("run");
    drop(output::ResultWriter::prepare(&dir, false).unwrap());
    assert!(dir.is_dir());
    drop(output::ResultWriter::prepare(&dir, false).unwrap()); // empty: fine
    std::fs::write(dir.join("results.json"), b"{}").unwrap();
    std::fs::write(dir.join("notes.txt"), b"mine").unwrap();
    let e = output::ResultWriter::prepare(&dir, false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("results.json") && e.contains("--force"), "{e}");
    assert_eq!(std::fs::read(dir.join("results.json")).unwrap(), b"{}");
    // Forced: the earlier run's files go, nothing else.
    let lock = output::ResultWriter::prepare(&dir, true).unwrap();
    assert!(!dir.join("results.json").exists());
    assert_eq!(std::fs::read(dir.join("notes.txt")).unwrap(), b"mine");
    // While the lock is held, another run is refused.
    let e = output::ResultWriter::prepare(&dir, true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("in use by another run"), "{e}");
    drop(lock);
    assert_eq!(std::fs::read(&file).unwrap(), b"keep");
}
