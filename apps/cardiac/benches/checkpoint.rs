//! Checkpoint write and read on the slab; prints medians.
//!
//! `cargo bench -p cardiac --bench checkpoint [-- --dx 0.1] [--reps N]`
//!
//! The slab (default 0.1 mm, the case) on one chip, run for one chunk, then `N`
//! (default 5) rounds of: a checkpoint written as `cardiac run` writes it (the device tensors
//! gathered, the payload's CRC-32, the file written to a temporary, `fsync`ed and renamed),
//! read back and checked (CRC-32s, records decoded), and its state written into the engine.
//! Prints the state's bytes (the device tensors), the file's size and their ratio (goal ≤ 1.2),
//! and the median times and rates of each part (goal: write ≥ 1 GB/s). Reads come from the page
//! cache (the file was just written): the rate of a cold read is the disk's.

use std::time::Instant;

use cardiac::app::checkpoint::{self, HostRecords, Identity};
use cardiac::app::output::SnapshotSchedule;
use cardiac::matrix::Conductivity;
use cardiac::mesh::TetMesh;
use cardiac::partition::Strategy;
use cardiac::solver::device::{self, DeviceConfig, DeviceRun};
use cardiac::solver::{Setup, Stimulus};
use poplar::EngineOptions;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let dx: f64 = arg("--dx").map_or(0.1, |s| s.parse().expect("--dx"));
    let reps: usize = arg("--reps").map_or(5, |s| s.parse().expect("--reps"));
    let t = Instant::now();
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, dx);
    let stim = Stimulus::niederer(&mesh);
    let setup = Setup::new(&mesh, &Conductivity::niederer(), 0.02, &stim).expect("setup");
    let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
    cfg.chunk_steps = 50;
    let prob = device::build(&setup, &cfg).expect("build");
    let exe = device::compile_problem(&prob).expect("compile");
    let info = prob.info.clone();
    drop(prob);
    println!(
        "== checkpoint: slab dx {dx} mm, {} cells, 1 chip (set-up and compile {:.1} s)",
        setup.n,
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let checksum = exe.checksum();
    let checksum_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let identity = Identity::new(serde_json::json!({ "bench": dx }), &setup, &info, checksum);
    let identity_s = t.elapsed().as_secs_f64();
    let mut run = DeviceRun::from_executable(exe, info, EngineOptions::default()).expect("engine");
    run.run_chunk().expect("run");
    let records = HostRecords {
        snapshots: Some(SnapshotSchedule {
            next: 10.0,
            written: Vec::new(),
        }),
        ..Default::default()
    };
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("checkpoint_bench_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("bench folder");
    let (mut encode_s, mut file_s, mut read_s, mut restore_s) = (vec![], vec![], vec![], vec![]);
    let (mut state_bytes, mut file_bytes) = (0u64, 0u64);
    for _ in 0..reps {
        let t = Instant::now();
        let (header, payload) = checkpoint::encode(&run, &identity, &records).expect("encode");
        encode_s.push(t.elapsed().as_secs_f64());
        state_bytes = header.tensors.iter().map(|t| 4 * t.elements).sum();
        let path = dir.join(checkpoint::file_name(header.step));
        let t = Instant::now();
        checkpoint::write_file(&path, &header, &payload).expect("write");
        file_s.push(t.elapsed().as_secs_f64());
        drop(payload);
        file_bytes = std::fs::metadata(&path).expect("size").len();
        let t = Instant::now();
        let c = checkpoint::read_file(&path).expect("read");
        read_s.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        checkpoint::restore(&mut run, &c).expect("restore");
        restore_s.push(t.elapsed().as_secs_f64());
    }
    let _ = std::fs::remove_dir_all(&dir);
    let gb = state_bytes as f64 / 1e9;
    let write: Vec<f64> = encode_s.iter().zip(&file_s).map(|(a, b)| a + b).collect();
    let load: Vec<f64> = read_s.iter().zip(&restore_s).map(|(a, b)| a + b).collect();
    println!(
        "state {:.1} MB (the device tensors), file {:.1} MB: {:.4} × the state (goal <= 1.2)",
        state_bytes as f64 / 1e6,
        file_bytes as f64 / 1e6,
        file_bytes as f64 / state_bytes as f64
    );
    println!(
        "once per run: executable checksum {checksum_s:.3} s, identity digests {identity_s:.3} s"
    );
    let row = |what: &str, s: &[f64]| {
        let m = median(s.to_vec());
        println!(
            "  {what:<44} median {:8.3} s  {:6.2} GB/s of state",
            m,
            gb / m
        );
    };
    println!("medians of {reps} rounds:");
    row("encode (gather tensors, bytes, CRC-32)", &encode_s);
    row("file (write, fsync, rename)", &file_s);
    row("write = encode + file (goal >= 1 GB/s)", &write);
    row("read and check the file (page cache)", &read_s);
    row("restore into the engine", &restore_s);
    row("load = read + restore", &load);
}
