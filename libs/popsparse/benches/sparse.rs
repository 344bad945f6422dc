//! Sparse against dense on one GC200 chip, modelled; best and worst patterns on the simulator;
//! host time of the simulated sparse Fwd against a plain host CSR product (at 1024 × 1024 and at
//! the 4096 × 4096 of the table); host time of Fwd, GradA and GradW at every instruction-set
//! level the host supports (`poplar::isa`), all levels in the same run.
//!
//! `cargo bench -p popsparse --bench sparse` (`-- host`: the host times only; `-- isa`: the
//! per-level times only; `-- why`: also a profile of one Fwd run with each phase's host time;
//! `REPS=n`: timed runs, 25 by default).

use std::time::Instant;

use poplar::profile::ProfileOptions;
use poplar::rand::SplitMix64;
use poplar::{compile, CompileOptions, Engine, EngineOptions, Graph, Target};
use popsparse::{FcOptions, FcParams};

/// A value in [−1, 1] in steps of 0.001.
fn unit(rng: &mut SplitMix64) -> f32 {
    rng.below(2001) as f32 / 1000.0 - 1.0
}

fn dense_cycles(
    target: &Target,
    m: usize,
    k: usize,
    n: usize,
    dtype: poplar::DType,
) -> Option<u64> {
    let p = poplin::MatMulParams { groups: 1, m, k, n };
    let opts = poplin::MatMulOptions {
        input_type: dtype,
        ..Default::default()
    };
    poplin::plan(target, p, &opts)
        .ok()
        .map(|pl| pl.estimate.total())
}

/// `Y = W·X` with `W` in compressed sparse rows (`row_ptr`, `cols`, `vals`) and `X`, `Y`
/// row-major with `batch` columns: the plain host product the simulator is timed against (a
/// function of its own, so that its code does not change with the rest of the bench).
#[inline(never)]
fn csr_product(
    row_ptr: &[usize],
    cols: &[u32],
    vals: &[f32],
    x: &[f32],
    batch: usize,
    out: &mut [f32],
) {
    out.fill(0.0);
    for (r, y) in out.chunks_exact_mut(batch).enumerate() {
        for k in row_ptr[r]..row_ptr[r + 1] {
            let (c, v) = (cols[k] as usize, vals[k]);
            for (o, &xv) in y.iter_mut().zip(&x[c * batch..(c + 1) * batch]) {
                *o += v * xv;
            }
        }
    }
}

fn reps() -> usize {
    std::env::var("REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(25)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    popsparse::link();
    let target = Target::gc200();
    let (m, k, density) = (4096, 4096, 1.0 / 16.0);
    let isa_only = std::env::args().any(|a| a == "isa");
    if isa_only {
        for block in [1, 16] {
            per_level(&target, m, k, 16, density, block);
        }
        return;
    }
    let host_only = std::env::args().any(|a| a == "host");
    let dtypes: &[poplar::DType] = if host_only {
        &[]
    } else {
        &[poplar::DType::F32, poplar::DType::F16]
    };
    for &dtype in dtypes {
        println!(
        "== sparse ({m} × {k}, density 1/16) against dense, modelled cycles on one GC200, {} values, f32 partials, best-case pattern",
        dtype.poplar_name()
    );
        println!(
            "published (graphcore-research/sparsity-benchmarks, dynamic, best batch): {}",
            if dtype == poplar::DType::F32 {
                "block 1 0.9x, block 16 3.8x"
            } else {
                "block 1 0.4x, block 16 1.9x"
            }
        );
        println!(
            "{:>6} {:>6} | {:>12} {:>12} {:>9}",
            "block", "batch", "sparse", "dense", "speed-up"
        );
        let opts = FcOptions {
            data_type: dtype,
            ..Default::default()
        };
        for block in [1usize, 16] {
            let mut best: Option<(usize, f64)> = None;
            for batch in [1usize, 2, 4, 8, 16, 32, 64, 128] {
                let params = FcParams::with_density(m, k, batch, density).with_block(block);
                let sparse = match popsparse::plan(&target, params, &opts) {
                    Ok(p) => p.estimate.total(),
                    Err(e) => {
                        println!("{block:>6} {batch:>6} | {e}");
                        continue;
                    }
                };
                let Some(dense) = dense_cycles(&target, m, k, batch, dtype) else {
                    println!(
                        "{block:>6} {batch:>6} | {sparse:>12} {:>12}",
                        "does not fit"
                    );
                    continue;
                };
                let s = dense as f64 / sparse as f64;
                println!("{block:>6} {batch:>6} | {sparse:>12} {dense:>12} {s:>8.2}x");
                if best.is_none_or(|(_, b)| s > b) {
                    best = Some((batch, s));
                }
            }
            if let Some((batch, s)) = best {
                // A random pattern at this size: does it spill (the speed-up above is the best
                // case, no propagation)?
                let params = FcParams::with_density(m, k, batch, density).with_block(block);
                let plan = popsparse::plan(&target, params, &opts).unwrap();
                let mut rng = SplitMix64::new(3 + block as u64);
                let (br, bc) = (m / block, k / block);
                let mut seen = std::collections::HashSet::new();
                let mut blocks: Vec<(usize, usize, Vec<f32>)> = Vec::new();
                while blocks.len() < params.nonzero_blocks() {
                    let (r, c) = (
                        (rng.next_u64() as usize) % br * block,
                        (rng.next_u64() as usize) % bc * block,
                    );
                    if seen.insert((r, c)) {
                        blocks.push((r, c, vec![1.0; block * block]));
                    }
                }
                let refs: Vec<(usize, usize, &[f32])> =
                    blocks.iter().map(|(r, c, v)| (*r, *c, &v[..])).collect();
                let enc = popsparse::encode_blocks(&plan, &refs).unwrap();
                println!(
                "  block {block}: best speed-up {s:.2}x at batch {batch}; a random pattern spills {} of {} blocks ({} propagation steps)",
                enc.spilled,
                blocks.len(),
                enc.steps
            );
            }
        }
    }

    // Best and worst pattern on the simulator, and host time against a CSR product: at a size
    // where each tile holds a few dozen non-zeros, and at the size of the table above.
    for size in [1024, 4096] {
        simulate(&target, size, size, 16, density);
    }
    for block in [1, 16] {
        per_level(&target, m, k, 16, density, block);
    }
}

/// Host time of the three passes of an `m × k` layer (`block × block` blocks, `density`,
/// batch `batch`, random pattern, f32) at every instruction-set level this host supports, on
/// one engine: each round runs Fwd, GradA and GradW once per level (levels in turn, so that
/// the machine's drift falls on every level alike; `poplar::isa::set_active` switches the
/// level, as `EngineOptions::isa` does). Medians over the rounds and their ratio to the
/// baseline's; the outputs of every level are checked to be the baseline's bits.
fn per_level(target: &Target, m: usize, k: usize, batch: usize, density: f64, block: usize) {
    use poplar::isa::{self, IsaLevel};
    let params = FcParams::with_density(m, k, batch, density).with_block(block);
    let plan = popsparse::plan(target, params, &FcOptions::default()).unwrap();
    let mut g = Graph::new(target);
    let w = popsparse::create_weights(&mut g, &plan, "W").unwrap();
    let x = popsparse::create_input(&mut g, &plan, "X").unwrap();
    let yg = popsparse::create_output(&mut g, &plan, "Yg").unwrap();
    g.create_host_write("x", &x).unwrap();
    g.create_host_write("yg", &yg).unwrap();
    let (y, fwd) = popsparse::fwd(&mut g, &w, &x, &plan, "fwd").unwrap();
    let (xg, ga) = popsparse::grad_a(&mut g, &w, &yg, &plan, "grada").unwrap();
    let (wg, gw) = popsparse::grad_w(&mut g, &w, &x, &yg, &plan, "gradw").unwrap();
    for (name, t) in [("y", &y), ("xg", &xg), ("wg", &wg)] {
        g.create_host_read(name, t).unwrap();
    }
    let exe = compile(&g, &[fwd, ga, gw], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::default()).unwrap();
    // A random pattern of distinct blocks, random values and operands.
    let mut rng = SplitMix64::new(7 + block as u64);
    let (br, bc) = (m / block, k / block);
    let mut seen = std::collections::HashSet::new();
    let mut blocks: Vec<(usize, usize, Vec<f32>)> = Vec::new();
    while blocks.len() < params.nonzero_blocks() {
        let (r, c) = (
            (rng.next_u64() as usize) % br * block,
            (rng.next_u64() as usize) % bc * block,
        );
        if seen.insert((r, c)) {
            blocks.push((r, c, (0..block * block).map(|_| unit(&mut rng)).collect()));
        }
    }
    let refs: Vec<(usize, usize, &[f32])> =
        blocks.iter().map(|(r, c, v)| (*r, *c, &v[..])).collect();
    let enc = popsparse::encode_blocks(&plan, &refs).unwrap();
    popsparse::write_encoded(&mut e, "W", &plan, &enc).unwrap();
    let xv: Vec<f32> = (0..k * batch).map(|_| unit(&mut rng)).collect();
    let ygv: Vec<f32> = (0..m * batch).map(|_| unit(&mut rng)).collect();
    e.write_tensor("x", &xv).unwrap();
    e.write_tensor("yg", &ygv).unwrap();

    let before = isa::active();
    let levels: Vec<IsaLevel> = isa::supported();
    let reps = reps();
    const PASSES: [&str; 3] = ["Fwd", "GradA", "GradW"];
    // times[level][pass]: one entry per round.
    let mut times = vec![vec![Vec::new(); PASSES.len()]; levels.len()];
    let mut bits: Vec<Option<Vec<u32>>> = vec![None; levels.len()];
    for _ in 0..=reps {
        for (l, &level) in levels.iter().enumerate() {
            isa::set_active(level).expect("a supported level");
            for (p, t) in times[l].iter_mut().enumerate() {
                let t0 = Instant::now();
                e.run(p).unwrap();
                t.push(t0.elapsed().as_secs_f64());
            }
            if bits[l].is_none() {
                let mut out = Vec::new();
                for name in ["y", "xg", "wg"] {
                    out.extend(
                        e.read_tensor::<f32>(name)
                            .unwrap()
                            .iter()
                            .map(|v| v.to_bits()),
                    );
                }
                bits[l] = Some(out);
            }
        }
    }
    isa::set_active(before).expect("the level before");
    for (l, b) in bits.iter().enumerate() {
        assert!(
            b == &bits[0],
            "{}: Fwd, GradA or GradW differs from the baseline's bits",
            levels[l]
        );
    }
    println!(
        "\nper instruction-set level: {m} × {k}, {} non-zeros in {block}×{block} blocks, batch {batch}, f32, {} propagation steps, {} threads; host ms per pass, medians of {reps} interleaved rounds (after one untimed); ×: the baseline's time over this level's; outputs the same bits at every level",
        params.nonzeros,
        enc.steps,
        e.threads()
    );
    let base: Vec<f64> = times[0].iter().map(|t| median(t[1..].to_vec())).collect();
    for (level, t) in levels.iter().zip(&times) {
        let cells: Vec<String> = t
            .iter()
            .zip(&base)
            .zip(PASSES)
            .map(|((t, b), name)| {
                let m = median(t[1..].to_vec());
                format!("{name} {:>7.2} ms (×{:.2})", m * 1e3, b / m)
            })
            .collect();
        println!(
            "  {:<8} ({:>2} f32 lanes)  {}",
            level.name(),
            level.f32_lanes(),
            cells.join("   ")
        );
    }
}

/// Builds, compiles and runs the Fwd of an `m × k` layer (element sparsity, `density`, batch
/// `batch`) on one GC200: the plan; the random and the bad pattern's spills, propagation steps
/// and modelled cycles; and the host time of the simulated Fwd against a plain CSR product of
/// the same matrices, in the same run.
fn simulate(target: &Target, m: usize, k: usize, batch: usize, density: f64) {
    let params = FcParams::with_density(m, k, batch, density);
    let plan = popsparse::plan(target, params, &FcOptions::default()).unwrap();
    println!("\n{plan}");
    let mut g = Graph::new(target);
    let w = popsparse::create_weights(&mut g, &plan, "W").unwrap();
    let x = popsparse::create_input(&mut g, &plan, "X").unwrap();
    g.create_host_write("x", &x).unwrap();
    let (y, fwd) = popsparse::fwd(&mut g, &w, &x, &plan, "fwd").unwrap();
    g.create_host_read("y", &y).unwrap();
    let exe = compile(&g, &[fwd], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::default()).unwrap();
    let mut rng = SplitMix64::new(1);
    let xv: Vec<f32> = (0..k * batch).map(|_| unit(&mut rng)).collect();
    e.write_tensor("x", &xv).unwrap();
    let nz = params.nonzeros;
    // Random: distinct random positions. Bad: the first rows of W dense (as few row blocks as
    // the non-zeros fill), so most buckets spill into the rest of the ring.
    let mut random = Vec::new();
    let mut seen = std::collections::HashSet::new();
    while random.len() < nz {
        let (r, c) = ((rng.next_u64() as usize) % m, (rng.next_u64() as usize) % k);
        if seen.insert((r, c)) {
            random.push((r, c, unit(&mut rng)));
        }
    }
    let bad: Vec<(usize, usize, f32)> = (0..nz).map(|i| (i / k, i % k, unit(&mut rng))).collect();
    for (name, pattern) in [("random", &random), ("bad (first rows dense)", &bad)] {
        let enc = popsparse::encode(&plan, pattern).unwrap();
        popsparse::write_encoded(&mut e, "W", &plan, &enc).unwrap();
        e.enable_profiling(ProfileOptions::default());
        let t = Instant::now();
        e.run(0).unwrap();
        let host = t.elapsed().as_secs_f64();
        let cycles = e.profile().unwrap().total_cycles();
        println!(
            "{name}: {} spilled, {} propagation steps; modelled {cycles} cycles ({:.1} µs); simulator host time {:.1} ms",
            enc.spilled,
            enc.steps,
            cycles as f64 / target.clock_hz * 1e6,
            host * 1e3
        );
    }
    // Host time of the simulated Fwd (random pattern, profiling off) against a CSR product.
    e.disable_profiling();
    let enc = popsparse::encode(&plan, &random).unwrap();
    popsparse::write_encoded(&mut e, "W", &plan, &enc).unwrap();
    let mut sorted = random.clone();
    sorted.sort_by_key(|&(r, c, _)| (r, c));
    let mut row_ptr = vec![0usize; m + 1];
    for &(r, _, _) in &sorted {
        row_ptr[r + 1] += 1;
    }
    for i in 0..m {
        row_ptr[i + 1] += row_ptr[i];
    }
    let cols: Vec<u32> = sorted.iter().map(|&(_, c, _)| c as u32).collect();
    let vals: Vec<f32> = sorted.iter().map(|&(_, _, v)| v).collect();
    let csr = |out: &mut [f32]| csr_product(&row_ptr, &cols, &vals, &xv, batch, out);
    let reps = reps();
    let (mut sim, mut host) = (Vec::new(), Vec::new());
    let mut out = vec![0.0f32; m * batch];
    for _ in 0..reps {
        let t = Instant::now();
        e.run(0).unwrap();
        sim.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        csr(&mut out);
        std::hint::black_box(&out);
        host.push(t.elapsed().as_secs_f64());
    }
    let y_dev = e.read_tensor::<f32>("y").unwrap();
    let maxdiff = y_dev
        .iter()
        .zip(&out)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    let (s, h) = (median(sim), median(host));
    if std::env::args().any(|a| a == "why") {
        e.enable_profiling(ProfileOptions::default());
        e.run(0).unwrap();
        println!("{}", e.profile().unwrap().text_summary());
    }
    println!(
        "host time of Fwd ({m} × {k}, {nz} non-zeros, batch {batch}): simulator {:.2} ms ({} threads), plain CSR {:.2} ms (one thread), medians of {reps} alternating runs: ratio {:.2} (target <= 2); max |y_sim - y_csr| = {maxdiff:e}; {} exchange-compute pairs interleaved, {} grouped runs",
        s * 1e3,
        e.threads(),
        h * 1e3,
        s / h,
        e.interleaved_phases().len(),
        e.grouped_runs().len()
    );
}
