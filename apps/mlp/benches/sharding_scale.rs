//! How compiling the sharded training graph scales with the replicas: Adam with the master
//! weights and the state sharded over all `R` replicas (`--shard R`; at `R = 1` a group of
//! one, which `run::build` and popnn accept though the command line does not), for
//! `R = 1, 2, 8, 64`. Each configuration runs in a fresh process (this binary with
//! `--one R`), which compiles three times and reports the median compile seconds and its
//! peak resident memory (`VmHWM` of `/proc/self/status`), so the peaks do not mix. Prints
//! figures and the ratios to `R = 1`; asserts nothing.
//!
//! `cargo bench -p mlp --bench sharding_scale`

use mlp::config::Config;

const REPLICAS: [u32; 4] = [1, 2, 8, 64];
const RUNS: usize = 3;

/// The configuration at `replicas`, sharded over all of them.
fn config(replicas: u32) -> Config {
    Config {
        shard: Some(replicas),
        ..Config::adam_bench(replicas)
    }
}

/// Peak resident memory of this process in KiB (`VmHWM`), if the kernel reports it.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The child: compiles `replicas`' graph `RUNS` times; prints the median seconds, the peak
/// KiB and the fullest tile's bytes.
fn one(replicas: u32) {
    mlp::link();
    let c = config(replicas);
    let mut secs = Vec::new();
    let mut fullest = 0;
    for _ in 0..RUNS {
        let t0 = std::time::Instant::now();
        match mlp::run::build(&c) {
            Ok(compiled) => {
                let tiles = &compiled.popnn.exe.tiles;
                fullest = tiles.iter().map(|t| t.memory_bytes).max().unwrap_or(0);
            }
            Err(e) => {
                eprintln!("R = {replicas}: {e:#}");
                std::process::exit(1);
            }
        }
        secs.push(t0.elapsed().as_secs_f64());
    }
    secs.sort_by(f64::total_cmp);
    println!(
        "{} {} {fullest}",
        secs[RUNS / 2],
        peak_rss_kib().unwrap_or(0)
    );
}

/// Runs one configuration in a child process; its median seconds, peak KiB and the fullest
/// tile's bytes.
fn measure(replicas: u32) -> Option<(f64, u64, u64)> {
    let exe = std::env::current_exe().ok()?;
    let out = std::process::Command::new(exe)
        .args(["--one", &replicas.to_string()])
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut it = text.split_whitespace();
    Some((
        it.next()?.parse().ok()?,
        it.next()?.parse().ok()?,
        it.next()?.parse().ok()?,
    ))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--one") {
        let r = args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(1);
        one(r);
        return;
    }
    let p = config(1).shape.params();
    println!("== Adam, {p} parameters, sharded over all R replicas: compile time (median of {RUNS}) and peak RSS, one process per R");
    println!(
        "  {:>4} {:>12} {:>14} {:>10} {:>10} {:>10}",
        "R", "compile ms", "peak RSS MiB", "fullest B", "ms / R=1", "RSS / R=1"
    );
    let mut first = None;
    for r in REPLICAS {
        let Some((s, kib, fullest)) = measure(r) else {
            println!("  {r:>4} failed");
            continue;
        };
        let (s1, k1) = *first.get_or_insert((s, kib));
        println!(
            "  {r:>4} {:>12.3} {:>14.1} {fullest:>10} {:>10.2} {:>10.2}",
            s * 1e3,
            kib as f64 / 1024.0,
            s / s1,
            kib as f64 / k1.max(1) as f64
        );
    }
}
