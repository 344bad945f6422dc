//! All-reduce figures.
//!
//! 1. Modelled all-reduce bandwidth per chip, 1 KB … 256 MB per replica, R = 2 … 64 replicas
//!    of one chip on a Pod64, against the link-bound limit. The time is the static estimate of
//!    the compiled program (`poplar::profile::estimate_program`, checked against the profile in
//!    `tests/collectives.rs`); the bandwidth is GCL's metric, `S · 2(R−1)/R / time`; the
//!    limit is the links the method drives: `B` per direction between neighbouring chips
//!    (`Target::link_bytes_per_cycle`), once for a one-way ring, twice for the two-way
//!    methods (each chip sends to both neighbours at once).
//! 2. Host time of a simulated all-reduce of 64 MB over 16 replicas against copying the bytes
//!    it moves over the links with the same threads, in the same run (medians of 5), with the
//!    engine's interleaving of exchange and compute on and off.
//!
//! `cargo bench -p collectives --bench allreduce` (`-- quick`: part 1 up to 4 MB only;
//! `-- host`: part 2 only).

use std::time::Instant;

use collectives::{Group, Method, Op, Options};
use poplar::profile::{estimate_program, CycleModel};
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Target};

/// A Pod64 of GC200 chips, one chip per replica.
fn pod() -> Target {
    Target::pod64()
}

/// Builds and compiles the in-place all-reduce of `bytes` of f32 per replica, spread over all
/// tiles of a chip; returns the executable and the method chosen.
fn build(replicas: u32, bytes: u64) -> (poplar::Executable, Method, f64) {
    build_on(&pod(), replicas, bytes)
}

fn build_on(machine: &Target, replicas: u32, bytes: u64) -> (poplar::Executable, Method, f64) {
    let t0 = Instant::now();
    let mut g = Graph::new_replicated(machine, replicas, 1).expect("replicated graph");
    let n = (bytes / 4) as usize;
    let x = g.add_variable(DType::F32, &[n], "grads");
    let tiles = g.target().num_tiles();
    g.map_linearly_over(&x, 1, 0..tiles).expect("mapping");
    g.create_host_read_write("grads", &x).expect("host handle");
    // METHOD=clockwise|anticlockwise|bidir|mitm overrides the automatic choice.
    let method = match std::env::var("METHOD").as_deref() {
        Ok("clockwise") => Method::Clockwise,
        Ok("anticlockwise") => Method::Anticlockwise,
        Ok("bidir") => Method::BidirectionalRingPair,
        Ok("mitm") => Method::MeetInTheMiddle,
        _ => Method::Auto,
    };
    let opts = Options {
        method,
        ..Default::default()
    };
    let c = collectives::all_reduce_in_place(&mut g, &[x], Op::Add, Group::All, &opts, "grads")
        .expect("all-reduce");
    let exe = compile(&g, &[c.program], &CompileOptions::default()).expect("compile");
    (exe, c.plan.method, t0.elapsed().as_secs_f64())
}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MB", bytes >> 20)
    } else {
        format!("{} KB", bytes >> 10)
    }
}

fn bandwidth_table(quick: bool) {
    let target = pod();
    let b = target.link_bytes_per_cycle * target.clock_hz;
    println!("== modelled all-reduce bandwidth per chip on a Pod64 (one chip per replica, f32, automatic method)");
    println!("   link-bound limit: B = {:.2} GB/s per direction between neighbouring chips, doubled for two-way methods", b / 1e9);
    println!(
        "{:>8} {:>4} | {:>24} {:>12} {:>10} {:>10} {:>9} {:>8}",
        "size", "R", "method", "cycles", "µs", "GB/s", "fraction", "compile"
    );
    let mut sizes: Vec<u64> = vec![1 << 10, 16 << 10, 256 << 10, 4 << 20, 64 << 20, 256 << 20];
    if quick {
        sizes.truncate(4);
    }
    for &s in &sizes {
        for r in [2u32, 4, 8, 16, 32, 64] {
            let (exe, method, secs) = build(r, s);
            let (flat, _) = exe.expand_replicas();
            let model = CycleModel::new(&flat);
            let est = estimate_program(&flat, &model, 0).expect("program 0");
            let time = est.cycles as f64 / target.clock_hz;
            let moved = s as f64 * 2.0 * f64::from(r - 1) / f64::from(r);
            let bw = moved / time;
            let directions = match method {
                Method::BidirectionalRingPair | Method::MeetInTheMiddle => 2.0,
                _ => 1.0,
            };
            println!(
                "{:>8} {:>4} | {:>24} {:>12} {:>10.1} {:>10.2} {:>9.3} {:>7.1}s",
                human(s),
                r,
                method.name(),
                est.cycles,
                time * 1e6,
                bw / 1e9,
                bw / (b * directions),
                secs
            );
        }
    }
}

/// Several Pods: the three-phase all-reduce (inside each Pod, across Pods over the GW-Links,
/// inside again), 64 MB per replica, one chip per replica.
fn pods_table() {
    println!("\n== several Pods (three-phase all-reduce), 64 MB per replica");
    println!(
        "{:>12} {:>4} | {:>12} {:>10} {:>10}  limit (IPU-Links inside, GW share across)",
        "machine", "R", "cycles", "ms", "GB/s"
    );
    for pods in [2u32, 4] {
        let t = Target::pods(pods, 64);
        let r = pods * 64;
        let bytes: u64 = 64 << 20;
        let (exe, _, secs) = build_on(&t, r, bytes);
        let (flat, _) = exe.expand_replicas();
        let model = CycleModel::new(&flat);
        let est = estimate_program(&flat, &model, 0).expect("program 0");
        let time = est.cycles as f64 / t.clock_hz;
        let moved = bytes as f64 * 2.0 * f64::from(r - 1) / f64::from(r);
        // Inside the Pod at the IPU-Link limit, across Pods 1/64 of the data per chip at the
        // GW share: 2(P−1)/P · S/(2B) + 2(D−1)/D · (S/64)/G, meet in the middle both ways.
        let b = t.link_bytes_per_cycle * t.clock_hz;
        let gw = t.gw_link_bytes_per_cycle * t.clock_hz;
        let d = f64::from(pods);
        let limit = 2.0 * 63.0 / 64.0 * bytes as f64 / (2.0 * b)
            + 2.0 * (d - 1.0) / d * (bytes as f64 / 64.0) / gw;
        println!(
            "{:>12} {:>4} | {:>12} {:>10.2} {:>10.2}  {:.2} ms ({:.2}x), compiled in {secs:.1} s",
            format!("{pods} x Pod64"),
            r,
            est.cycles,
            time * 1e3,
            moved / time / 1e9,
            limit * 1e3,
            time / limit
        );
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn host_time() {
    let replicas = 16u32;
    let bytes: u64 = 64 << 20;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("\n== host time: simulated all-reduce of {} over {replicas} replicas vs copying the bytes it moves ({threads} threads)", human(bytes));
    let (exe, method, secs) = build(replicas, bytes);
    let t = Instant::now();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(threads)).expect("engine");
    let setup = t.elapsed().as_secs_f64();
    // The same executable with every exchange run to its end before the compute after it
    // (`poplar::Interleave::Never`): the A/B of the
    // interleaving, in the same run.
    let mut apart = Engine::from_executable(
        exe,
        EngineOptions {
            interleave: poplar::Interleave::Never,
            ..EngineOptions::with_threads(threads)
        },
    )
    .expect("engine");
    let n = (bytes / 4) as usize;
    let data: Vec<f32> = (0..n * replicas as usize)
        .map(|i| (i % 1000) as f32 * 1e-3)
        .collect();
    // The bytes over the links: each replica sends 2(R−1)/R of its data.
    let moved = (bytes as f64 * 2.0 * f64::from(replicas - 1)) as usize;
    let src = vec![1u8; 64 << 20];
    let mut dst = vec![0u8; 64 << 20];
    let (mut sim, mut sep, mut copy) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        e.write_tensor_all_replicas("grads", &data).expect("write");
        let t = Instant::now();
        e.run(0).expect("run");
        sim.push(t.elapsed().as_secs_f64());
        apart
            .write_tensor_all_replicas("grads", &data)
            .expect("write");
        let t = Instant::now();
        apart.run(0).expect("run");
        sep.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let mut left = moved;
        while left > 0 {
            let k = left.min(src.len());
            // The same threads as the engine, each copying its share.
            use rayon::prelude::*;
            dst[..k]
                .par_chunks_mut(k.div_ceil(threads))
                .zip(src[..k].par_chunks(k.div_ceil(threads)))
                .for_each(|(d, s)| d.copy_from_slice(s));
            left -= k;
        }
        copy.push(t.elapsed().as_secs_f64());
        std::hint::black_box(&dst);
    }
    let (s, p, c) = (median(sim), median(sep), median(copy));
    // Both engines against the host sum, before anything else runs on them.
    let want: Vec<f32> = (0..n)
        .map(|i| (0..replicas as usize).map(|r| data[r * n + i]).sum::<f32>())
        .collect();
    for (what, eng) in [("interleaved", &e), ("separate", &apart)] {
        let check: Vec<f32> = eng.read_tensor_replica("grads", 5).expect("read");
        let worst = check
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        println!("{what}: largest |device - host sum| on replica 5: {worst:.3e}");
    }
    if std::env::args().any(|a| a == "why") {
        e.enable_profiling(poplar::profile::ProfileOptions::default());
        e.run(0).expect("run");
        println!("{}", e.profile().expect("profile").text_summary());
    }
    println!(
        "method {}, compiled in {secs:.1} s, engine built in {setup:.1} s, {} exchange-compute pairs interleaved",
        method.name(),
        e.interleaved_phases().len()
    );
    println!(
        "copy of the {:.2} GB moved: median {c:.3} s (5 runs)",
        moved as f64 / 1e9
    );
    println!(
        "simulated all-reduce, interleaved (default): median {s:.3} s; ratio {:.2} (target <= 3)",
        s / c
    );
    println!(
        "simulated all-reduce, phases apart: median {p:.3} s; ratio {:.2}",
        p / c
    );
}

fn main() {
    collectives::link();
    let quick = std::env::args().any(|a| a == "quick");
    let host_only = std::env::args().any(|a| a == "host");
    if !host_only {
        bandwidth_table(quick);
        if !quick {
            pods_table();
        }
    }
    if !quick {
        host_time();
    }
}
