//! hdiff benchmarks; prints figures.
//!
//! `cargo bench -p hdiff --bench throughput [-- modelled|host|all] [--reps N]`
//!
//! - modelled: modelled throughput (GFLOP/s at 18 flop per point, points/s, fraction of the
//!   chip's compute bound) of each mapping on 1 and 4 chips, for the seed's 256 × 256 × 64 grid
//!   and for 1024 × 1024 × 64, which fills a chip's tile memory with the single-stage mapping;
//!   then weak scaling from 1 to 4 chips (4× the planes on 4 chips).
//! - host: host wall time per iteration of the simulator (single-stage, the planner's
//!   decomposition) against the native loop on the same threads, in rounds of 10 iterations a
//!   side, alternating; medians and the median of the paired ratios (target ≤ 1.2).

use std::time::Instant;

use hdiff::device::Device;
use hdiff::grid::{test_input, Coefficient, Grid};
use hdiff::plan::{Mapping, PlanRequest};
use hdiff::reference::Native;
use hdiff::run::{compile, run, RunOptions};
use hdiff::HdiffError;
use poplar::Target;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Modelled seconds per iteration of `mapping` on `grid` and `chips`, with a line printed.
fn modelled(grid: Grid, chips: u32, mapping: Mapping) -> Option<f64> {
    let target = Target::gc200_multi(chips);
    let compiled = match compile(grid, &target, PlanRequest::auto(mapping)) {
        Ok(c) => c,
        Err(e @ (HdiffError::BlockTooLarge { .. } | HdiffError::TooManyTiles { .. })) => {
            println!(
                "  {:<12} {chips} chip(s)  does not fit: {e}",
                mapping.name()
            );
            return None;
        }
        Err(e) => panic!("{e}"),
    };
    // The modelled cycles do not depend on the values: a cheap field.
    let input = vec![1.0f32; grid.len()];
    let coeff = vec![0.025f32; grid.len()];
    let (f, _) = run(
        &compiled,
        &target,
        (&input, &coeff),
        RunOptions {
            iterations: 1,
            threads: None,
            compare: false,
        },
        |_, _| {},
    )
    .expect("run");
    let m = &f.modelled;
    println!(
        "  {:<12} {chips} chip(s)  {:>8.0} GFLOP/s  {:.3e} points/s  {:5.1} % of the bound ({:.3e})  cycles {} = compute {} + exchange {} + sync {}  memory max {:.0} KiB  [{}]",
        mapping.name(),
        m.gflops,
        m.points_per_s,
        100.0 * m.fraction_of_bound,
        m.bound_points_per_s,
        m.cycles,
        m.compute_cycles,
        m.exchange_cycles,
        m.sync_cycles,
        f.memory.max as f64 / 1024.0,
        f.plan
    );
    Some(m.seconds)
}

fn bench_modelled() {
    for (ni, nj, nk) in [(256, 256, 64), (1024, 1024, 64)] {
        let grid = Grid::new(ni, nj, nk).expect("grid");
        println!("== modelled: {grid}, 18 flop per output point");
        for chips in [1, 4] {
            for mapping in Mapping::ALL {
                modelled(grid, chips, mapping);
            }
        }
    }
    for (ni, nj, nk) in [(256, 256, 64), (1024, 1024, 64)] {
        let one = Grid::new(ni, nj, nk).expect("grid");
        let four = Grid::new(ni, nj, 4 * nk).expect("grid");
        println!(
            "== weak scaling: {one} on 1 chip → {four} on 4 chips (modelled time per iteration)"
        );
        for mapping in Mapping::ALL {
            let (Some(t1), Some(t4)) = (modelled(one, 1, mapping), modelled(four, 4, mapping))
            else {
                continue;
            };
            println!(
                "  {:<12} {:.2} µs → {:.2} µs: efficiency {:.3}",
                mapping.name(),
                t1 * 1e6,
                t4 * 1e6,
                t1 / t4
            );
        }
    }
}

fn bench_host(reps: usize) {
    const ROUND: u64 = 10;
    for (ni, nj, nk) in [(256, 256, 64), (512, 512, 64), (1024, 1024, 64)] {
        let grid = Grid::new(ni, nj, nk).expect("grid");
        let target = Target::gc200();
        let compiled = compile(grid, &target, PlanRequest::auto(Mapping::Single)).expect("compile");
        let input = test_input(&grid);
        let coeff = Coefficient::Constant(0.025).field(&grid);
        let mut dev = Device::new(&compiled.exe, grid, None).expect("engine");
        let threads = dev.engine.threads();
        let native = Native::with_flush(grid, threads, dev.engine.flushes());
        dev.load(&input, &coeff).expect("load");
        // Warm up both sides.
        dev.iterate(2, |_| {}).expect("run");
        let mut a = input.clone();
        let mut b = input.clone();
        native.step(&a, &coeff, &mut b);
        let (mut sim, mut nat, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..reps {
            let t = Instant::now();
            dev.iterate(ROUND, |_| {}).expect("run");
            let s = t.elapsed().as_secs_f64() / ROUND as f64;
            let t = Instant::now();
            for _ in 0..ROUND {
                native.step(&a, &coeff, &mut b);
                std::mem::swap(&mut a, &mut b);
            }
            let n = t.elapsed().as_secs_f64() / ROUND as f64;
            sim.push(s);
            nat.push(n);
            ratio.push(s / n);
        }
        println!(
            "== host: {grid}, single-stage [{}], {threads} thread(s), {reps} rounds of {ROUND} iterations a side",
            compiled.plan.describe()
        );
        println!(
            "  simulator {:.2} ms per iteration, native loop {:.2} ms (medians); median paired ratio {:.3} (min {:.3}, max {:.3})",
            median(sim) * 1e3,
            median(nat) * 1e3,
            median(ratio.clone()),
            ratio.iter().cloned().fold(f64::INFINITY, f64::min),
            ratio.iter().cloned().fold(0.0, f64::max)
        );
    }
}

fn main() {
    hdiff::codelets::link();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut what = "all".to_string();
    let mut reps = 9usize;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--reps" => {
                reps = args
                    .get(i + 1)
                    .and_then(|s| s.parse().ok())
                    .expect("--reps N");
                i += 1;
            }
            "modelled" | "host" | "all" => what = args[i].clone(),
            "--bench" => {}
            other => panic!("unknown argument {other}: expected modelled|host|all, --reps N"),
        }
        i += 1;
    }
    if what == "modelled" || what == "all" {
        bench_modelled();
    }
    if what == "host" || what == "all" {
        bench_host(reps.max(1));
    }
}
