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
//!    engine's grouped runs (the default), its interleaving only (no grouped runs), and the phases
//!    apart; and against a plain host loop with the simulator's memory access pattern
//!    ([`NativeRing`]), step by step and group by group, which says how much of the ratio is
//!    the pattern itself and how much the simulator.
//! 3. Host time of the same all-reduce at every instruction-set level the host supports
//!    (`poplar::isa`; the f32 combine loops are compiled per level), all levels in the same
//!    run, interleaved round by round; the result is checked to be the same bits at every
//!    level.
//!
//! `cargo bench -p collectives --bench allreduce` (`-- quick`: part 1 up to 4 MB only;
//! `-- model`: part 1 and the several-Pods table, the modelled figures only; `-- host`: parts 2
//! and 3 only; `-- isa`: part 3 only).

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

/// The ring steps of a one-way ring (`chains` = 1) or the ring pair (2) as a plain host loop
/// over the simulator's memory layout: every tile of every replica is one allocation holding
/// its data, then two buffers per chain. Each of the 2(G−1) steps copies each chain's
/// fragment from the neighbouring replica's tile (the next one for chain 0, the previous one
/// for chain 1) into this tile's other buffer, then adds the step's data fragment to it
/// (reduce-scatter) or stores it into the data (all-gather). No simulator: what the host needs
/// for the same bytes in the same places.
struct NativeRing {
    replicas: usize,
    tiles: usize,
    chains: usize,
    /// Elements of one chain's share of a tile's data, and of one fragment of it.
    half: usize,
    frag: usize,
    /// Per tile of each replica (replica-major): data, buffers A, buffers B.
    mem: Vec<Vec<f32>>,
}

impl NativeRing {
    fn new(replicas: usize, tiles: usize, bytes: u64, chains: usize) -> NativeRing {
        let per_tile = (bytes as usize / 4).div_ceil(tiles);
        let half = per_tile.div_ceil(chains);
        let frag = half.div_ceil(replicas);
        let mem = (0..replicas * tiles)
            .map(|i| vec![(i % 7) as f32; chains * (half + 2 * frag)])
            .collect();
        NativeRing {
            replicas,
            tiles,
            chains,
            half,
            frag,
            mem,
        }
    }

    fn run(&mut self, pool: &rayon::ThreadPool) {
        use rayon::prelude::*;
        let (r, tiles, chains, half, frag) =
            (self.replicas, self.tiles, self.chains, self.half, self.frag);
        // Each tile's memory as three disjoint parts: data, buffers A, buffers B.
        let mut data = Vec::with_capacity(self.mem.len());
        let mut a = Vec::with_capacity(self.mem.len());
        let mut b = Vec::with_capacity(self.mem.len());
        for m in self.mem.iter_mut() {
            let (d, bufs) = m.split_at_mut(chains * half);
            let (x, y) = bufs.split_at_mut(chains * frag);
            data.push(d);
            a.push(x);
            b.push(y);
        }
        for step in 0..2 * (r - 1) {
            let reduce = step < r - 1;
            let (src, dst) = if step % 2 == 0 {
                (&a, &mut b)
            } else {
                (&b, &mut a)
            };
            pool.install(|| {
                dst.par_iter_mut()
                    .zip(data.par_iter_mut())
                    .enumerate()
                    .with_min_len(256)
                    .for_each(|(u, (d, own))| {
                        let (rep, t) = (u / tiles, u % tiles);
                        for c in 0..chains {
                            let nb = if c == 0 {
                                (rep + 1) % r
                            } else {
                                (rep + r - 1) % r
                            };
                            let d = &mut d[c * frag..(c + 1) * frag];
                            d.copy_from_slice(&src[nb * tiles + t][c * frag..(c + 1) * frag]);
                            let f = (rep + step + c) % r;
                            let lo = (c * half + f * frag).min(c * half + half);
                            let hi = (lo + frag).min(c * half + half);
                            let k = hi - lo;
                            if reduce {
                                for (x, y) in d[..k].iter_mut().zip(&own[lo..hi]) {
                                    *x += *y;
                                }
                            } else {
                                own[lo..hi].copy_from_slice(&d[..k]);
                            }
                        }
                    });
            });
        }
    }
}

impl NativeRing {
    /// The same steps group by group, as the engine runs them (`engine/grouped.rs`): tile t of
    /// every replica through all the steps, then tile t + 1 (tiles in parallel).
    fn run_grouped(&mut self, pool: &rayon::ThreadPool) {
        use rayon::prelude::*;
        let (r, tiles, chains, half, frag) =
            (self.replicas, self.tiles, self.chains, self.half, self.frag);
        let mut groups: Vec<Vec<&mut Vec<f32>>> = (0..tiles).map(|_| Vec::new()).collect();
        for (u, m) in self.mem.iter_mut().enumerate() {
            groups[u % tiles].push(m);
        }
        // Offsets in a tile's memory: data, then buffers A, then buffers B.
        let buffer = |which: usize, c: usize| chains * half + which * chains * frag + c * frag;
        pool.install(|| {
            groups.par_iter_mut().for_each(|g| {
                let mut link = vec![0f32; frag];
                for step in 0..2 * (r - 1) {
                    let reduce = step < r - 1;
                    let (from, to) = if step % 2 == 0 { (0, 1) } else { (1, 0) };
                    for rep in 0..r {
                        for c in 0..chains {
                            let nb = if c == 0 {
                                (rep + 1) % r
                            } else {
                                (rep + r - 1) % r
                            };
                            let s = buffer(from, c);
                            link.copy_from_slice(&g[nb][s..s + frag]);
                            let f = (rep + step + c) % r;
                            let lo = (c * half + f * frag).min(c * half + half);
                            let hi = (lo + frag).min(c * half + half);
                            let (own, bufs) = g[rep].split_at_mut(chains * half);
                            let d = buffer(to, c) - chains * half;
                            let d = &mut bufs[d..d + frag];
                            d.copy_from_slice(&link);
                            if reduce {
                                for (x, y) in d[..hi - lo].iter_mut().zip(&own[lo..hi]) {
                                    *x += *y;
                                }
                            } else {
                                own[lo..hi].copy_from_slice(&d[..hi - lo]);
                            }
                        }
                    }
                }
            });
        });
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Part 3: the all-reduce on engine `e` (in place over `grads`, from `data` each time) at
/// every level this host supports, `rounds` interleaved rounds after one untimed; medians and
/// the baseline's time over each level's. Restores the level active before.
fn per_level(e: &mut Engine, data: &[f32], rounds: usize) {
    use poplar::isa::{self, IsaLevel};
    let before = isa::active();
    let levels: Vec<IsaLevel> = isa::supported();
    let mut times = vec![Vec::new(); levels.len()];
    let mut bits: Vec<Option<Vec<u32>>> = vec![None; levels.len()];
    for round in 0..=rounds {
        for (l, &level) in levels.iter().enumerate() {
            isa::set_active(level).expect("a supported level");
            e.write_tensor_all_replicas("grads", data).expect("write");
            let t = Instant::now();
            e.run(0).expect("run");
            if round > 0 {
                times[l].push(t.elapsed().as_secs_f64());
            }
            if bits[l].is_none() {
                let out: Vec<f32> = e.read_tensor_replica("grads", 5).expect("read");
                bits[l] = Some(out.iter().map(|v| v.to_bits()).collect());
            }
        }
    }
    isa::set_active(before).expect("the level before");
    for (l, b) in bits.iter().enumerate() {
        assert!(
            b == &bits[0],
            "{}: the all-reduce differs from the baseline's bits",
            levels[l]
        );
    }
    println!(
        "per instruction-set level ({} threads; medians of {rounds} interleaved rounds after one untimed; ×: the baseline's time over this level's; the same bits at every level):",
        e.threads()
    );
    let base = median(times[0].clone());
    for (level, t) in levels.iter().zip(times) {
        let m = median(t);
        println!(
            "  {:<8} ({:>2} f32 lanes)  {m:.3} s  (×{:.2})",
            level.name(),
            level.f32_lanes(),
            base / m
        );
    }
}

// Long: every engine and the native ring are timed in turn in one loop, under one load.
fn host_time(isa_only: bool) {
    let replicas = 16u32;
    let bytes: u64 = 64 << 20;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (exe, method, secs) = build(replicas, bytes);
    let t = Instant::now();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(threads)).expect("engine");
    let setup = t.elapsed().as_secs_f64();
    let n = (bytes / 4) as usize;
    let data: Vec<f32> = (0..n * replicas as usize)
        .map(|i| (i % 1000) as f32 * 1e-3)
        .collect();
    if isa_only {
        println!(
            "\n== host time of a simulated all-reduce of {} over {replicas} replicas (method {}, compiled in {secs:.1} s, engine built in {setup:.1} s)",
            human(bytes),
            method.name()
        );
        per_level(&mut e, &data, 5);
        return;
    }
    println!("\n== host time: simulated all-reduce of {} over {replicas} replicas vs copying the bytes it moves ({threads} threads)", human(bytes));
    // The engine without grouped runs (interleaving only (no grouped runs)), in the same run.
    let mut no_grouped = Engine::new(
        &exe,
        EngineOptions {
            interleave: poplar::Interleave::NoGroupedRuns,
            ..EngineOptions::with_threads(threads)
        },
    )
    .expect("engine");
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
    // The bytes over the links: each replica sends 2(R−1)/R of its data.
    let moved = (bytes as f64 * 2.0 * f64::from(replicas - 1)) as usize;
    let src = vec![1u8; 64 << 20];
    let mut dst = vec![0u8; 64 << 20];
    // The one-way rings run one chain over all the data, the ring pair two over halves; meet
    // in the middle has no loop of its own here.
    let chains = match method {
        Method::BidirectionalRingPair => Some(2),
        Method::Clockwise | Method::Anticlockwise => Some(1),
        _ => None,
    };
    let tiles = pod().tiles_per_ipu as usize;
    let mut native = chains.map(|c| NativeRing::new(replicas as usize, tiles, bytes, c));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    if let Some(nr) = native.as_mut() {
        // Once untimed, as the engines' first touch of their memory is (`write_tensor`).
        nr.run(&pool);
    }
    let (mut sim, mut sep, mut copy, mut nat) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut chained, mut nat_grouped) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        e.write_tensor_all_replicas("grads", &data).expect("write");
        let t = Instant::now();
        e.run(0).expect("run");
        sim.push(t.elapsed().as_secs_f64());
        no_grouped
            .write_tensor_all_replicas("grads", &data)
            .expect("write");
        let t = Instant::now();
        no_grouped.run(0).expect("run");
        chained.push(t.elapsed().as_secs_f64());
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
        if let Some(nr) = native.as_mut() {
            let t = Instant::now();
            nr.run(&pool);
            nat.push(t.elapsed().as_secs_f64());
            std::hint::black_box(&nr.mem);
            let t = Instant::now();
            nr.run_grouped(&pool);
            nat_grouped.push(t.elapsed().as_secs_f64());
            std::hint::black_box(&nr.mem);
        }
    }
    let (s, p, c) = (median(sim), median(sep), median(copy));
    // Both engines against the host sum, before anything else runs on them.
    let want: Vec<f32> = (0..n)
        .map(|i| (0..replicas as usize).map(|r| data[r * n + i]).sum::<f32>())
        .collect();
    for (what, eng) in [
        ("grouped", &e),
        ("no grouped runs", &no_grouped),
        ("separate", &apart),
    ] {
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
        "method {}, compiled in {secs:.1} s, engine built in {setup:.1} s, {} exchange-compute pairs interleaved, grouped runs: {:?}",
        method.name(),
        e.interleaved_phases().len(),
        e.grouped_runs()
    );
    println!(
        "copy of the {:.2} GB moved: median {c:.3} s (5 runs)",
        moved as f64 / 1e9
    );
    println!(
        "simulated all-reduce, grouped runs (default): median {s:.3} s; ratio {:.2} (target <= 3)",
        s / c
    );
    let ch = median(chained);
    println!(
        "simulated all-reduce, interleaving only (no grouped runs): median {ch:.3} s; ratio {:.2}",
        ch / c
    );
    println!(
        "simulated all-reduce, phases apart: median {p:.3} s; ratio {:.2}",
        p / c
    );
    if let Some(nr) = &native {
        let (n, ng) = (median(nat), median(nat_grouped));
        println!(
            "plain host loop, step by step ({} chain(s), fragments of {} B per tile): median {n:.3} s; ratio {:.2}; chains-only simulator / loop {:.2}",
            nr.chains,
            nr.frag * 4,
            n / c,
            ch / n
        );
        println!(
            "plain host loop, group by group: median {ng:.3} s; ratio {:.2}; grouped simulator / loop {:.2}",
            ng / c,
            s / ng
        );
    }
    drop((no_grouped, apart, native));
    println!("\n== host time of the same all-reduce (grouped runs) at each instruction-set level");
    per_level(&mut e, &data, 5);
}

fn main() {
    collectives::link();
    let quick = std::env::args().any(|a| a == "quick");
    let host_only = std::env::args().any(|a| a == "host");
    let model_only = std::env::args().any(|a| a == "model");
    if std::env::args().any(|a| a == "isa") {
        host_time(true);
        return;
    }
    if !host_only {
        bandwidth_table(quick);
        if !quick {
            pods_table();
        }
    }
    if !quick && !model_only {
        host_time(false);
    }
}
