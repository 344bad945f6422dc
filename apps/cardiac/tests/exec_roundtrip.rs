//! `cardiac compile -o F` then `cardiac exec F`: the saved executable with its run info, probes
//! and mesh (application sections), loaded back, gives the same results as running the freshly compiled executable, bit for bit; a
//! corrupted executable is refused with an error, not a panic.

use std::path::PathBuf;

use cardiac::matrix::Conductivity;
use cardiac::mesh::TetMesh;
use cardiac::partition::Strategy;
use cardiac::solver::device::{self, DeviceConfig, DeviceRun, RunInfo};
use cardiac::solver::{Results, Setup, Stimulus};
use poplar::{EngineOptions, Executable};

const STEPS: u32 = 100;

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("exec_roundtrip_{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn run(exe: &Executable, info: RunInfo) -> Results {
    let mut r = DeviceRun::new(exe, info, EngineOptions::default()).unwrap();
    r.run_chunk().unwrap();
    r.results().unwrap()
}

#[test]
fn a_saved_and_loaded_executable_gives_the_same_bits_and_a_corrupt_one_an_error() {
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 0.5);
    let stim = Stimulus::niederer(&mesh);
    let setup = Setup::new(&mesh, &Conductivity::niederer(), 0.02, &stim).unwrap();
    let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
    cfg.chunk_steps = STEPS;
    let prob = device::build(&setup, &cfg).unwrap();
    let exe = device::compile_problem(&prob).unwrap();

    // What `cardiac compile` writes: one file, the executable with its sections.
    let file = tmp("slab.popexe");
    let mut with_sections = exe.clone();
    let probes = cardiac::app::probes::Probes::select(&setup, Some(0.5));
    cardiac::app::bundle::attach(&mut with_sections, &prob.info, &probes, &mesh).unwrap();
    with_sections.save(&file).unwrap();

    // What `cardiac exec` reads back.
    let loaded = Executable::load(&file).unwrap();
    let bundle = cardiac::app::bundle::read(&loaded, &file).unwrap();
    assert_eq!(bundle.probes, probes);
    assert_eq!(bundle.mesh.num_cells(), mesh.num_cells());
    assert_eq!(bundle.mesh.tets, mesh.tets);
    let info: RunInfo = bundle.info;
    let direct = run(&exe, prob.info.clone());
    let exec = run(&loaded, info);
    let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert!(
        direct.activation.iter().any(|&a| a >= 0.0),
        "the window must include activations"
    );
    assert_eq!(
        bits(&exec.activation),
        bits(&direct.activation),
        "activation"
    );
    assert_eq!(bits(&exec.v), bits(&direct.v), "voltage");
    assert_eq!(exec.t.to_bits(), direct.t.to_bits());

    // Corruptions: a flipped byte in the middle, a truncated file, and garbage. Each must be a
    // clean error from Executable::load (checksums, lengths), never a panic.
    let bytes = std::fs::read(&file).unwrap();
    let mut flipped = bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x5a;
    let cases: [(&str, Vec<u8>); 3] = [
        ("flipped", flipped),
        ("truncated", bytes[..bytes.len() * 2 / 3].to_vec()),
        ("garbage", b"this is not an executable".to_vec()),
    ];
    for (name, data) in cases {
        let f = tmp(&format!("{name}.popexe"));
        std::fs::write(&f, data).unwrap();
        let r = std::panic::catch_unwind(|| Executable::load(&f));
        match r {
            Ok(Err(e)) => assert!(!e.to_string().is_empty(), "{name}: empty error message"),
            Ok(Ok(_)) => panic!("{name}: a corrupted executable loaded"),
            Err(_) => panic!("{name}: loading a corrupted executable panicked"),
        }
    }
    let _ = std::fs::remove_dir_all(file.parent().unwrap());
}
