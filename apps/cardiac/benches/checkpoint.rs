//! Checkpoint write and read on the slab; prints medians.
//!
//! `cargo bench -p cardiac --bench checkpoint [-- --dx 0.1] [--reps N]`
//!
//! The slab (default 0.1 mm, the case) on one chip, run for one chunk, then `N`
//! (default 5) rounds of a checkpoint as `cardiac run` takes it: the state snapshotted into
//! memory (what the run waits for), then written by the background writer (the payload's
//! CRC-32 on a second thread while the file is written to a temporary, `fsync`, rename, the
//! folder's sync), read back and checked (CRC-32s, records decoded), and its state written
//! into the engine. Prints the state's bytes (the device tensors), the file's size and their
//! ratio (goal ≤ 1.2), the median times and rates of each part (goal: write ≥ 1 GB/s), and,
//! for the disk's own bound, the time of `dd if=/dev/zero bs=16M count=16 conv=fsync` into
//! the same folder. Reads come from the page cache (the file was just written): the rate of a
//! cold read is the disk's.

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

/// The Niederer slab at `dx` compiled for one chip (chunks of 50 steps).
fn compiled_slab(dx: f64) -> (Setup, poplar::Executable, device::RunInfo) {
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, dx);
    let stim = Stimulus::niederer(&mesh);
    let setup = Setup::new(&mesh, &Conductivity::niederer(), 0.02, &stim).expect("setup");
    let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
    cfg.chunk_steps = 50;
    let prob = device::build(&setup, &cfg).expect("build");
    let exe = device::compile_problem(&prob).expect("compile");
    (setup, exe, prob.info.clone())
}

/// The disk's own rate for a durable write of the same order of size: seconds of `reps` runs
/// of `dd` writing 256 MiB with `conv=fsync` into `dir` (none if `dd` cannot run).
fn dd_seconds(dir: &std::path::Path, reps: usize) -> Vec<f64> {
    let dd_file = dir.join("dd.bin");
    let mut dd_s = vec![];
    for _ in 0..reps {
        let t = Instant::now();
        let dd = std::process::Command::new("dd")
            .arg("if=/dev/zero")
            .arg(format!("of={}", dd_file.display()))
            .args(["bs=16M", "count=16", "conv=fsync"])
            .output();
        match dd {
            Ok(o) if o.status.success() => dd_s.push(t.elapsed().as_secs_f64()),
            _ => break,
        }
        let _ = std::fs::remove_file(&dd_file);
    }
    dd_s
}

fn main() {
    let dx: f64 = arg("--dx").map_or(0.1, |s| s.parse().expect("--dx"));
    let reps: usize = arg("--reps").map_or(5, |s| s.parse().expect("--reps"));
    let t = Instant::now();
    let (setup, exe, info) = compiled_slab(dx);
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
    let (mut snapshot_s, mut durable_s, mut read_s, mut restore_s) =
        (vec![], vec![], vec![], vec![]);
    let (mut crc_s, mut file_s, mut sync_s) = (vec![], vec![], vec![]);
    let (mut state_bytes, mut file_bytes) = (0u64, 0u64);
    let mut writer = checkpoint::BackgroundWriter::new(dir.clone(), 1);
    let mut buffer = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        let (header, payload) =
            checkpoint::snapshot(&run, &identity, &records, std::mem::take(&mut buffer))
                .expect("snapshot");
        snapshot_s.push(t.elapsed().as_secs_f64());
        state_bytes = header.tensors.iter().map(|t| 4 * t.elements).sum();
        let (path, _) = writer.start(header, payload).expect("start the write");
        let w = writer.wait().expect("write").expect("a write");
        durable_s.push(w.secs);
        crc_s.push(w.times.crc_s);
        file_s.push(w.times.write_s);
        sync_s.push(w.times.sync_s);
        buffer = w.buffer;
        file_bytes = std::fs::metadata(&path).expect("size").len();
        assert_eq!(file_bytes, w.times.file_bytes);
        let t = Instant::now();
        let c = checkpoint::read_file(&path).expect("read");
        read_s.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        checkpoint::restore(&mut run, &c).expect("restore");
        restore_s.push(t.elapsed().as_secs_f64());
    }
    drop(buffer);
    let dd_s = dd_seconds(&dir, reps.min(3));
    let _ = std::fs::remove_dir_all(&dir);
    let gb = state_bytes as f64 / 1e9;
    let serial: Vec<f64> = snapshot_s
        .iter()
        .zip(&durable_s)
        .map(|(a, b)| a + b)
        .collect();
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
    let row = |what: &str, s: &[f64], bytes: f64| {
        let m = median(s.to_vec());
        println!(
            "  {what:<52} median {:8.3} s  {:6.2} GB/s",
            m,
            bytes / 1e9 / m
        );
    };
    println!("medians of {reps} rounds (rates: of the state's bytes):");
    row("run blocked: snapshot into memory", &snapshot_s, gb * 1e9);
    row(
        "durable write in the background (goal >= 1 GB/s)",
        &durable_s,
        gb * 1e9,
    );
    row("  of which: write (CRC-32 beside it)", &file_s, gb * 1e9);
    row("  of which: fsync, rename, folder sync", &sync_s, gb * 1e9);
    row(
        "  CRC-32 (its own thread, within the write)",
        &crc_s,
        gb * 1e9,
    );
    row(
        "snapshot + durable write, were they serial",
        &serial,
        gb * 1e9,
    );
    row("read and check the file (page cache)", &read_s, gb * 1e9);
    row("restore into the engine", &restore_s, gb * 1e9);
    row("load = read + restore", &load, gb * 1e9);
    if dd_s.is_empty() {
        println!("  (dd not run: its rate is not known)");
    } else {
        row(
            "the disk: dd 256 MiB conv=fsync, same folder",
            &dd_s,
            (256u64 << 20) as f64,
        );
    }
}
