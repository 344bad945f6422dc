//! The cardiac solver over MPI ranks (needs the feature `mpi` and `mpiexec`):
//!
//! ```text
//! cargo bench -p cardiac --features mpi --bench ranks            # both parts
//! cargo bench -p cardiac --features mpi --bench ranks -- ab      # 2 ranks × 1 thread vs 1 × 2
//! cargo bench -p cardiac --features mpi --bench ranks -- plan    # 0.1 mm on 16 chips, estimate
//! ```
//!
//! `ab`: the 0.2 mm slab on 2 chips, `cardiac exec` of one saved executable, alternately as
//! 1 rank × 2 threads (A) and `mpiexec -n 2` × 1 thread (B), `RUNS` times each in the same run;
//! it prints the medians of the simulation loop's time (as `cardiac exec` reports it) and of the
//! whole process, and the ratio B / A (target ≤ 1.3).
//!
//! `plan`: the 0.1 mm slab on 16 chips split over 2, 4, 8 and 16 ranks: messages and bytes
//! between ranks per ODE step, from the engine's plans (`poplar::engine::program_traffic`), and
//! from them, with the host time per step measured here on one rank, an estimate of the 500 ms
//! run on 16 hosts like this one joined by a 100 Gb/s network, against one host
//! (docs/distributed.md derives it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cardiac");
const RUNS: usize = 5;

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-ranks");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compiles the slab at `dx` on `chips` chips into `dir()` once (kept between bench runs).
fn executable(dx: &str, chips: u32) -> PathBuf {
    let f = dir().join(format!("slab-{dx}-{chips}chips.pexe"));
    if !f.exists() {
        eprintln!(
            "compiling the {dx} mm slab on {chips} chips into {}",
            f.display()
        );
        let o = Command::new(BIN)
            .args([
                "compile",
                "--dx",
                dx,
                "--chips",
                &chips.to_string(),
                "--output",
            ])
            .arg(&f)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    f
}

/// Runs `cardiac exec exe --t-end t_end --threads threads` on `ranks` ranks; returns the
/// simulation loop's seconds (from its report) and the whole process's.
fn exec(exe: &Path, t_end: f64, ranks: usize, threads: usize) -> (f64, f64) {
    let t = t_end.to_string();
    let th = threads.to_string();
    let args = [
        "exec",
        exe.to_str().unwrap(),
        "--t-end",
        &t,
        "--threads",
        &th,
    ];
    let start = Instant::now();
    let o = if ranks == 1 {
        Command::new(BIN).args(args).output().unwrap()
    } else {
        poplar::dist::mpiexec(ranks, Path::new(BIN), &args, Duration::from_secs(3600))
            .unwrap()
            .0
    };
    let whole = start.elapsed().as_secs_f64();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{ranks} ranks: {}{out}",
        String::from_utf8_lossy(&o.stderr)
    );
    // "simulated 2.00 ms in 3.21 s; …"
    let secs = out
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix("simulated ")?;
            let (_, after) = rest.split_once(" ms in ")?;
            after.split(' ').next()?.parse::<f64>().ok()
        })
        .unwrap_or_else(|| panic!("no 'simulated … in … s' line in:\n{out}"));
    (secs, whole)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

fn ab() {
    let exe = executable("0.2", 2);
    let t_end = 2.0;
    // One warm-up of each (page cache, MPI start-up paths), not counted.
    exec(&exe, 0.1, 1, 2);
    exec(&exe, 0.1, 2, 1);
    let (mut a, mut b, mut aw, mut bw) = (vec![], vec![], vec![], vec![]);
    for k in 0..RUNS {
        let (s, w) = exec(&exe, t_end, 1, 2);
        a.push(s);
        aw.push(w);
        let (s, w) = exec(&exe, t_end, 2, 1);
        b.push(s);
        bw.push(w);
        eprintln!("  pair {}: A {:.2} s, B {:.2} s", k + 1, a[k], b[k]);
    }
    let steps = (t_end / 0.02).round();
    let (ma, mb) = (median(a), median(b));
    println!("cardiac 0.2 mm slab, 2 chips, {t_end} ms ({steps} ODE steps), {RUNS} runs each, interleaved:");
    println!(
        "  A  1 rank  × 2 threads: simulation {ma:.2} s ({:.1} ms per step), whole process {:.2} s",
        1e3 * ma / steps,
        median(aw)
    );
    println!(
        "  B  2 ranks × 1 thread : simulation {mb:.2} s ({:.1} ms per step), whole process {:.2} s",
        1e3 * mb / steps,
        median(bw)
    );
    println!(
        "  ratio B / A (simulation medians): {:.3}  (target ≤ 1.3)",
        mb / ma
    );
}

fn plan() {
    let exe_path = executable("0.1", 16);
    let exe = poplar::Executable::load_unlinked(&exe_path).unwrap();
    // Program 1 is one ODE step (program 0 a chunk of them).
    let steps_500ms = 500.0 / 0.02;
    println!(
        "cardiac 0.1 mm slab on 16 chips ({} tiles, {} exchange phases): traffic between ranks per ODE step",
        exe.target.num_tiles(),
        exe.exchanges.len()
    );
    println!(
        "  {:>5} | {:>9} {:>9} {:>12} | {:>14} {:>14} | {:>11}",
        "ranks", "phases", "messages", "bytes", "busiest bytes", "busiest msgs", "all-reduces"
    );
    let mut rows = Vec::new();
    for ranks in [2usize, 4, 8, 16] {
        let t = poplar::engine::program_traffic(&exe, ranks, 1).unwrap();
        println!(
            "  {:>5} | {:>9} {:>9} {:>12} | {:>14} {:>14} | {:>11}",
            ranks,
            t.crossing_phases,
            t.messages,
            t.bytes,
            t.critical_bytes,
            t.critical_messages,
            t.collectives
        );
        rows.push((ranks, t));
    }
    println!("  per exchange phase (messages, bytes, most bytes one rank sends, most messages one rank sends):");
    for ranks in [2usize, 4, 8, 16] {
        let phases: Vec<String> = poplar::engine::rank_traffic(&exe, ranks)
            .iter()
            .enumerate()
            .filter(|(_, p)| p.messages > 0)
            .map(|(i, p)| {
                format!(
                    "phase {i}: {} msgs, {} B, {} B, {} msgs",
                    p.messages, p.bytes, p.max_rank_send_bytes, p.max_rank_messages
                )
            })
            .collect();
        println!("  {ranks:>5} ranks: {}", phases.join("; "));
    }
    drop(exe);
    // Host time per ODE step of the whole 16-chip executable on this machine, one rank.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let t_end = 0.2;
    let (secs, _) = exec(&exe_path, t_end, 1, threads);
    let per_step = secs / (t_end / 0.02).round();
    println!(
        "one host (this machine, {threads} threads, 1 rank): {:.1} ms per ODE step (measured over {} steps)",
        1e3 * per_step,
        (t_end / 0.02).round()
    );
    // A 100 Gb/s network: 12.5 GB/s per link, and 2 µs per message (RDMA; ~15 µs over TCP).
    let (bw, lat) = (12.5e9, 2e-6);
    println!("estimate on P hosts like this one, 100 Gb/s (12.5 GB/s, 2 µs per message): per step = host time / P + communication");
    for (ranks, t) in &rows {
        let comm = t.seconds(*ranks, bw, lat);
        let step = per_step / *ranks as f64 + comm;
        println!(
            "  {:>2} hosts: {:.2} ms compute + {:.3} ms communication = {:.2} ms per step; 500 ms run ({} steps): {:.2} h (one host: {:.2} h), speed-up {:.1}×",
            ranks,
            1e3 * per_step / *ranks as f64,
            1e3 * comm,
            1e3 * step,
            steps_500ms,
            step * steps_500ms / 3600.0,
            per_step * steps_500ms / 3600.0,
            per_step / step
        );
    }
}

fn main() {
    let what: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let all = what.is_empty();
    if all || what.iter().any(|w| w == "ab") {
        ab();
    }
    if all || what.iter().any(|w| w == "plan") {
        plan();
    }
}
