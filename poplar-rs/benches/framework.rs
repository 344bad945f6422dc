//! Framework benchmarks; prints figures (medians) rather than asserting them.
//!
//! `cargo bench -p poplar --bench framework [-- compile|superstep|exchange|file|all]`
//!
//! - compile: a halo-exchange graph of 3,000,000 f32 elements with ~20 neighbour ranges per tile,
//!   on 1,472 and on 16 × 1,472 tiles: wall time and peak RSS;
//! - superstep: overhead of one compute superstep of empty vertices on 1,472 tiles;
//! - exchange: throughput of a large halo exchange as a ratio to memcpy in the same run;
//! - file: save and load of the 1,472-tile executable, bulk payload throughput;
//! - profile: run time with profiling off and on (interleaved samples), on the `superstep`
//!   workload and on a labelled halo loop on 2 x 1,472 tiles, and the time to build the profile.

use std::time::Instant;

use poplar::codelet::*;
use poplar::{
    compile, CompileOptions, DType, Engine, EngineOptions, Executable, Graph, Program, Target,
};

poplar::codelet! {
    /// Reads a halo-extended vector and writes the owned part: `out[i] = in[i]`.
    pub struct HaloTouch as "bench::HaloTouch" {
        input: Input<Vector<f32>>,
        out: Output<Vector<f32>>,
    }
}
impl Vertex for HaloTouch<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        let n = self.out.len();
        self.out.copy_from_slice(&self.input[..n]);
        Ok(())
    }
}

poplar::codelet! {
    pub struct Nothing as "bench::Nothing" {}
}
impl Vertex for Nothing<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        Ok(())
    }
}

mod support;
use support::{median, peak_rss_mib};

/// The halo graph: `n` elements of `v` spread evenly over all tiles; every tile reads its own
/// block plus `ranges` ranges of `halo` elements from neighbouring tiles and writes `w`.
fn halo_graph(target: &Target, n: usize, ranges: usize, halo: usize) -> (Graph, Vec<Program>) {
    let mut g = Graph::new(target);
    let tiles = target.num_tiles() as usize;
    let v = g.add_variable(DType::F32, &[n], "v");
    let w = g.add_variable(DType::F32, &[n], "w");
    let block = n.div_ceil(tiles);
    let cs = g.add_compute_set("halo");
    for t in 0..tiles {
        let (s, e) = ((t * block).min(n), ((t + 1) * block).min(n));
        if s == e {
            continue;
        }
        g.set_tile_mapping(&v.slice(s..e).unwrap(), t as u32)
            .unwrap();
        g.set_tile_mapping(&w.slice(s..e).unwrap(), t as u32)
            .unwrap();
        let mut parts = vec![v.slice(s..e).unwrap()];
        for k in 0..ranges {
            // Neighbours t±1, t±2, ... (wrapping), each sending `halo` elements from a place
            // that depends on the receiver, so no two receivers share a range.
            let d = k / 2 + 1;
            let nb = if k % 2 == 0 {
                (t + d) % tiles
            } else {
                (t + tiles - d) % tiles
            };
            let nblock = ((nb + 1) * block).min(n).saturating_sub(nb * block);
            let off = if nblock > halo {
                (t * 131 + k * 17) % (nblock - halo)
            } else {
                0
            };
            let ns = (nb * block + off).min(n);
            let ne = (ns + halo).min(n).min(nb * block + nblock);
            if ne > ns {
                parts.push(v.slice(ns..ne).unwrap());
            }
        }
        let local = poplar::concat(&parts).unwrap();
        let vx = g.add_vertex(cs, "bench::HaloTouch").unwrap();
        g.connect(vx, "input", &local).unwrap();
        g.connect(vx, "out", &w.slice(s..e).unwrap()).unwrap();
        g.set_tile_mapping(vx, t as u32).unwrap();
    }
    g.create_host_read_write("v", &v).unwrap();
    g.create_host_read("w", &w).unwrap();
    // Initial values make the executable carry a bulk payload (12 MB for 3 M elements).
    let init: Vec<f32> = (0..n).map(|i| i as f32).collect();
    g.set_initial_value(&v, &init).unwrap();
    (g, vec![Program::execute(cs)])
}

fn bench_compile() -> Option<Executable> {
    println!("== compile: halo graph, 3,000,000 f32, 20 neighbour ranges of 32 elements per tile");
    let mut first = None;
    for ipus in [1u32, 16] {
        let target = Target::gc200_multi(ipus);
        let t0 = Instant::now();
        let (g, progs) = halo_graph(&target, 3_000_000, 20, 32);
        let build = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let exe = compile(&g, &progs, &CompileOptions::default()).expect("compiles");
        let comp = t1.elapsed().as_secs_f64();
        let transfers: usize = exe.exchanges.values().map(|x| x.transfers.len()).sum();
        let max_mem = exe.tiles.iter().map(|t| t.memory_bytes).max().unwrap_or(0);
        println!(
            "  {ipus:>2} x 1472 tiles: graph build {build:.2} s, compile {comp:.2} s, peak RSS so far {:.0} MiB, {transfers} transfers, max tile memory {max_mem} B",
            peak_rss_mib()
        );
        if ipus == 1 {
            first = Some(exe);
        }
        drop(g);
    }
    first
}

/// `reps` compute supersteps of one empty vertex on each of 1,472 tiles, with no syncs.
fn empty_supersteps(reps: u32) -> Executable {
    let target = Target::gc200();
    let mut g = Graph::new(&target);
    let cs = g.add_compute_set("empty");
    for t in 0..target.num_tiles() {
        let v = g.add_vertex(cs, "bench::Nothing").unwrap();
        g.set_tile_mapping(v, t).unwrap();
    }
    let progs = [Program::repeat(reps, Program::execute(cs))];
    compile(&g, &progs, &CompileOptions::default()).unwrap()
}

fn bench_superstep() {
    println!("== superstep: one compute superstep of 1,472 empty vertices (one per tile)");
    let reps = 1000u32;
    let exe = empty_supersteps(reps);
    for threads in [1usize, 2] {
        let mut e = Engine::new(&exe, EngineOptions::with_threads(threads)).unwrap();
        let mut samples = Vec::new();
        for _ in 0..15 {
            let t = Instant::now();
            e.run(0).unwrap();
            samples.push(t.elapsed().as_secs_f64() * 1e6 / f64::from(reps));
        }
        println!(
            "  {threads} thread(s): median {:.2} µs per superstep (target <= 20 µs)",
            median(samples)
        );
    }
}

fn bench_exchange() {
    println!(
        "== exchange: halo exchange of 8 ranges x 4,096 f32 per tile on 1,472 tiles vs memcpy"
    );
    let target = Target::gc200();
    let n = 1472 * 40_000;
    let mut g = Graph::new(&target);
    let v = g.add_variable(DType::F32, &[n], "v");
    let block = n / 1472;
    let mut dsts = Vec::new();
    let mut srcs = Vec::new();
    for t in 0..1472usize {
        g.set_tile_mapping(&v.slice(t * block..(t + 1) * block).unwrap(), t as u32)
            .unwrap();
        for k in 0..8 {
            let nb = (t + 1 + k) % 1472;
            srcs.push(v.slice(nb * block..nb * block + 4096).unwrap());
            let h = g.add_variable(DType::F32, &[4096], &format!("h{t}_{k}"));
            g.set_tile_mapping(&h, t as u32).unwrap();
            dsts.push(h);
        }
    }
    let src = poplar::concat(&srcs).unwrap();
    let dst = poplar::concat(&dsts).unwrap();
    let exe = compile(&g, &[Program::copy(&src, &dst)], &CompileOptions::default()).unwrap();
    let bytes = (src.num_elements() * 4) as f64;
    let mut e = Engine::new(&exe, EngineOptions::default()).unwrap();
    // memcpy of the same bytes in chunks of the same size, single-threaded and 2-threaded.
    let chunk = 4096 * 4;
    let count = 1472 * 8;
    let a = vec![1u8; chunk * count];
    let mut b = vec![0u8; chunk * count];
    let mut ex = Vec::new();
    let mut mc = Vec::new();
    for _ in 0..11 {
        let t = Instant::now();
        e.run(0).unwrap();
        ex.push(bytes / t.elapsed().as_secs_f64() / 1e9);
        let t = Instant::now();
        for (d, s) in b.chunks_mut(chunk).zip(a.chunks(chunk)) {
            d.copy_from_slice(s);
        }
        std::hint::black_box(&mut b);
        mc.push(bytes / t.elapsed().as_secs_f64() / 1e9);
    }
    let (ex, mc) = (median(ex), median(mc));
    println!(
        "  exchange {ex:.2} GB/s, memcpy {mc:.2} GB/s (1 thread), ratio {:.2} (target >= 0.5)",
        ex / mc
    );
}

fn bench_file(exe: &Executable) {
    println!("== file: save and load of the 1,472-tile halo executable");
    let dir = std::env::temp_dir().join(format!("poplar-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("halo.popexe");
    let payload: usize = exe
        .tiles
        .iter()
        .flat_map(|t| t.init.iter())
        .map(|b| b.data.len())
        .sum();
    // 15 samples: each save is ~10 ms, and the payload rate is a difference of two medians,
    // so 5 samples on a busy machine gave rates anywhere from 0.8 to 1.8 GB/s.
    let mut save = Vec::new();
    let mut load = Vec::new();
    for _ in 0..15 {
        let t = Instant::now();
        exe.save(&path).unwrap();
        save.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let back = Executable::load(&path).unwrap();
        load.push(t.elapsed().as_secs_f64());
        assert_eq!(back.tiles.len(), exe.tiles.len());
    }
    // The same executable without its initial data: the difference is the bulk payload's cost.
    let mut bare = exe.clone();
    for t in &mut bare.tiles {
        t.init.clear();
    }
    let bare_path = dir.join("bare.popexe");
    let mut save0 = Vec::new();
    let mut load0 = Vec::new();
    for _ in 0..15 {
        let t = Instant::now();
        bare.save(&bare_path).unwrap();
        save0.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        Executable::load(&bare_path).unwrap();
        load0.push(t.elapsed().as_secs_f64());
    }
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let (s, l) = (median(save), median(load));
    let (s0, l0) = (median(save0), median(load0));
    println!(
        "  bulk payload alone (full minus the same file without it): save {:.2} GB/s, load {:.2} GB/s (target >= 1 GB/s)",
        payload as f64 / (s - s0).max(1e-9) / 1e9,
        payload as f64 / (l - l0).max(1e-9) / 1e9
    );
    println!(
        "  file {:.1} MB (bulk payload {:.1} MB): save {:.3} s ({:.2} GB/s of file), load {:.3} s ({:.2} GB/s of file)",
        size as f64 / 1e6,
        payload as f64 / 1e6,
        s,
        size as f64 / s / 1e9,
        l,
        size as f64 / l / 1e9
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Median run times (µs per superstep) of `exe` with profiling off and on, interleaved so that
/// machine noise hits both alike; also the time to build the profile afterwards.
fn profile_off_on(name: &str, exe: &Executable, supersteps: f64, threads: usize) {
    let opts = EngineOptions::with_threads(threads);
    let mut off = Engine::new(exe, opts.clone()).unwrap();
    let mut on = Engine::new(exe, opts).unwrap();
    on.enable_profiling(poplar::profile::ProfileOptions::default());
    let (mut t_off, mut t_on, mut t_build) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..31 {
        // Alternate which engine runs first.
        for profiled in [i % 2 == 0, i % 2 != 0] {
            let (e, out) = if profiled {
                (&mut on, &mut t_on)
            } else {
                (&mut off, &mut t_off)
            };
            let t = Instant::now();
            e.run(0).unwrap();
            out.push(t.elapsed().as_secs_f64() * 1e6 / supersteps);
        }
        let t = Instant::now();
        std::hint::black_box(on.profile().unwrap().total_cycles());
        t_build.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let (a, b) = (median(t_off), median(t_on));
    println!(
        "  {name}, {threads} thread(s): off {a:.2} µs/superstep, on {b:.2} µs/superstep, on/off {:.3}; building the profile {:.2} ms",
        b / a,
        median(t_build)
    );
}

fn bench_profile() {
    println!("== profile: run time with profiling off vs on (medians of 31 interleaved runs)");
    // The `superstep` workload: 1,000 compute supersteps of 1,472 empty vertices, no syncs.
    let reps = 1000u32;
    let exe = empty_supersteps(reps);
    for threads in [1usize, 2] {
        profile_off_on(
            "empty supersteps, 1,472 tiles",
            &exe,
            f64::from(reps),
            threads,
        );
    }
    // A labelled halo loop on two chips: sync, exchange (some of it inter-chip) and compute.
    let target = Target::gc200_multi(2);
    let (g, progs) = halo_graph(&target, 2 * 1472 * 64, 4, 8);
    let reps = 100u32;
    let body = Program::labelled("PDE", vec![progs[0].clone()]);
    let exe = compile(
        &g,
        &[Program::repeat(reps, body)],
        &CompileOptions::default(),
    )
    .unwrap();
    let steps = exe.computes.len() as f64 * f64::from(reps);
    profile_off_on("labelled halo loop, 2 x 1,472 tiles", &exe, steps, 2);
}

fn main() {
    let which = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_else(|| "all".into());
    let all = which == "all";
    let exe = if all || which == "compile" || which == "file" {
        bench_compile()
    } else {
        None
    };
    if all || which == "superstep" {
        bench_superstep();
    }
    if all || which == "exchange" {
        bench_exchange();
    }
    if let (true, Some(exe)) = (all || which == "file", exe.as_ref()) {
        bench_file(exe);
    }
    if all || which == "profile" {
        bench_profile();
    }
}
