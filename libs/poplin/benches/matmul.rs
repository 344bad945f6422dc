//! Dense matmul figures: plans and modelled cycles on one GC200 chip for the sizes of the
//! sparse comparison (m = k = 4096) and of the published dense grid, and one size run on the simulator, its modelled cycles
//! against the plan's estimate and its host time against a plain host product.
//!
//! `cargo bench -p poplin --bench matmul`

use std::time::Instant;

use poplar::profile::ProfileOptions;
use poplar::{compile, CompileOptions, Engine, EngineOptions, Graph, Target};
use poplin::{MatMulOptions, MatMulParams};

/// `pm×pn×pk`, and `/sk` for a serial split of k into `sk` steps.
fn split(plan: &poplin::Plan) -> String {
    let serial = if plan.sk > 1 {
        format!("/{}", plan.sk)
    } else {
        String::new()
    };
    format!("{}×{}×{}{serial}", plan.pm, plan.pn, plan.pk)
}

fn main() {
    poplin::link();
    let target = Target::gc200();
    let clock = target.clock_hz;
    for dtype in [poplar::DType::F32, poplar::DType::F16] {
        println!(
        "== planned dense matmul on one GC200 chip ({} operands, f32 partials; AMP at {} MAC/cycle/tile)",
        dtype.poplar_name(),
        poplin::codelets::macs_per_cycle(dtype)
    );
        println!(
            "{:>6} {:>6} {:>6} {:>6} | {:>14} {:>10} {:>12} {:>9} {:>10} | \
             % exchange / compute / reduce exchange / reduce compute / sync, compute at peak",
            "g", "m", "k", "n", "split m×n×k/sk", "tiles", "cycles", "µs", "TFLOP/s",
        );
        for (g, m, k, n) in [
            (1, 4096, 4096, 1),
            (1, 4096, 4096, 8),
            (1, 4096, 4096, 64),
            (1, 4096, 4096, 256),
            (1, 1024, 1024, 1024),
            (16, 512, 512, 512),
            // The published grid (sparsity-benchmarks, dense_ipu_gpu: m = k, n swept).
            (1, 1024, 1024, 4),
            (1, 1024, 1024, 4096),
            (1, 1024, 1024, 16384),
            (1, 2048, 2048, 2048),
            (1, 4096, 4096, 2048),
            (1, 4096, 4096, 4096),
            (1, 8192, 8192, 1024),
        ] {
            let p = MatMulParams { groups: g, m, k, n };
            let t = Instant::now();
            let opts = MatMulOptions {
                input_type: dtype,
                ..Default::default()
            };
            match poplin::plan(&target, p, &opts) {
                Ok(plan) => {
                    let cyc = plan.estimate.total();
                    let us = cyc as f64 / clock * 1e6;
                    let flops = 2.0 * (g * m * k * n) as f64;
                    let e = &plan.estimate;
                    let pct = |c: u64| 100.0 * c as f64 / cyc as f64;
                    // The multiply's compute at the AMP's peak on every tile of the chip.
                    let macs = poplin::codelets::macs_per_cycle(dtype) as f64;
                    let ideal = flops / 2.0 / macs / f64::from(target.num_tiles());
                    println!(
                    "{g:>6} {m:>6} {k:>6} {n:>6} | {:>14} {:>10} {:>12} {:>9.1} {:>10.2} | {:.0} / {:.0} / {:.0} / {:.0} / {:.0}, {:.0}   (planned in {:.0} ms)",
                    split(&plan),
                    plan.tiles_used,
                    cyc,
                    us,
                    flops / (us * 1e-6) / 1e12,
                    pct(e.multiply_exchange),
                    pct(e.multiply_compute),
                    pct(e.reduce_exchange),
                    pct(e.reduce_compute),
                    pct(e.sync),
                    100.0 * ideal / cyc as f64,
                    t.elapsed().as_secs_f64() * 1e3
                );
                }
                Err(e) => println!("{g:>6} {m:>6} {k:>6} {n:>6} | {e}"),
            }
        }
    }

    // One size on the simulator: modelled cycles against the plan, host time against a host
    // product of the same matrices.
    let p = MatMulParams {
        groups: 1,
        m: 512,
        k: 512,
        n: 64,
    };
    let plan = poplin::plan(&target, p, &MatMulOptions::default()).unwrap();
    println!("\n{plan}");
    let mut graph = Graph::new(&target);
    let a = poplin::create_lhs(&mut graph, &plan, "A").unwrap();
    let b = poplin::create_rhs(&mut graph, &plan, "B").unwrap();
    let (c, prog) = poplin::matmul(&mut graph, &a, &b, &plan, "mm").unwrap();
    graph.create_host_write("a", &a).unwrap();
    graph.create_host_write("b", &b).unwrap();
    graph.create_host_read("c", &c).unwrap();
    let t = Instant::now();
    let exe = compile(&graph, &[prog], &CompileOptions::default()).unwrap();
    let compile_s = t.elapsed().as_secs_f64();
    let mut engine = Engine::new(&exe, EngineOptions::default()).unwrap();
    engine.enable_profiling(ProfileOptions::default());
    let av: Vec<f32> = (0..p.m * p.k)
        .map(|i| ((i * 7919) % 97) as f32 / 97.0 - 0.5)
        .collect();
    let bv: Vec<f32> = (0..p.k * p.n)
        .map(|i| ((i * 104729) % 89) as f32 / 89.0 - 0.5)
        .collect();
    engine.write_tensor("a", &av).unwrap();
    engine.write_tensor("b", &bv).unwrap();
    let reps = 5;
    let mut sim = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        engine.run(0).unwrap();
        sim.push(t.elapsed().as_secs_f64());
    }
    let mut host = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        let (c, _) = poplin::host_matmul(&av, &bv, &p);
        std::hint::black_box(c);
        host.push(t.elapsed().as_secs_f64());
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let profile = engine.profile().expect("profiling on");
    let modelled = profile.total_cycles() / reps as u64;
    println!(
        "simulator: modelled {} cycles per run (plan's estimate {}, ratio {:.2}); compile {:.2} s",
        modelled,
        plan.estimate.total(),
        modelled as f64 / plan.estimate.total() as f64,
        compile_s
    );
    println!(
        "host time per run: simulator {:.1} ms, plain f64 host product {:.1} ms (median of {reps}; ratio {:.1})",
        med(sim.clone()) * 1e3,
        med(host.clone()) * 1e3,
        med(sim) / med(host)
    );
}
