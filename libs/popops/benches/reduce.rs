//! `popops::reduce` (add) of a [1024, 4096] `f32` tensor over axis 1, over axis 0 and over
//! both, one row per tile of one GC200 chip (1,024 of its 1,472 tiles), built twice: with
//! the two-stage plan (`popops::reduction::set_two_stage_only`) and with the planner's
//! choice (intermediate cross-tile stages where they pay). Printed: the modelled cycles of a
//! run of each (from the profile, by phase), poplibs' estimator formula for the two-stage
//! plan (computed here from the shapes, compute only) against its modelled cycles, and the
//! host time of a run against a plain host loop.
//!
//! `cargo bench -p popops --bench reduce` (or `--profile dev` for a quicker build)

mod support;

use std::time::Instant;

use codelets::reduction::cost;
use poplar::profile::ProfileOptions;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
use popops::Operation;
use support::{median_seconds, print_phases};

const ROWS: usize = 1024;
const COLS: usize = 4096;
const WORKERS: u64 = 6;

/// poplibs' estimate of the plan, in tile cycles: per stage, the busiest tile's busiest
/// worker times the 6 contexts. One row per tile, split between 6 workers in pieces of
/// `piece` (`ceil(4096 / 6)` rounded up to whole 64-bit vectors). Stage 2 includes the
/// intermediate stage when there is one.
fn poplibs_estimate(dims: &[usize]) -> (u64, u64) {
    let f = DType::F32;
    if dims.len() == 2 {
        // Stage 1 as over axis 1; stage 2: one output on one tile from 1024 × 6 partials:
        // an intermediate stage of 6 workers of 1024 partials each, then the 6 results.
        let piece = (COLS as u64).div_ceil(WORKERS).div_ceil(2) * 2;
        let s1 = cost::reduce(Operation::Add, f, f, false, &[piece], &[1], &[1]);
        let mid = cost::reduce(Operation::Add, f, f, false, &[1; 1024], &[1], &[1024]);
        let s2 = cost::reduce(Operation::Add, f, f, false, &[1; 6], &[1], &[6]);
        (WORKERS * s1, WORKERS * (mid + s2))
    } else if dims == [1] {
        // Stage 1: a worker sums its piece of a row to one partial (one output, one input).
        let piece = (COLS as u64).div_ceil(WORKERS).div_ceil(2) * 2;
        let s1 = cost::reduce(Operation::Add, f, f, false, &[piece], &[1], &[1]);
        // Stage 2: 1024 outputs over 1024 tiles in grains of 2: a tile has 2 outputs, each
        // from the 6 partials of its row's workers.
        let s2 = cost::reduce(Operation::Add, f, f, false, &[1; 12], &[1, 1], &[6, 6]);
        (WORKERS * s1, WORKERS * s2)
    } else {
        // Stage 1: a worker's piece of its row is one partial of `piece` outputs with nothing
        // to reduce, so no vertex: stage 2 reads the rows in place.
        let s1 = 0;
        // Stage 2: 4096 outputs over 1024 tiles, 4 per tile in 2 worker groups of 2, each
        // from the 1024 rows' partials: an intermediate stage of 3 workers per group, each
        // reducing a run of 341 or 342 partials, then the 3 results.
        let mid = cost::reduce(Operation::Add, f, f, false, &[2; 342], &[2], &[342]);
        let s2 = cost::reduce(Operation::Add, f, f, false, &[2; 3], &[2], &[3]);
        (s1, WORKERS * (mid + s2))
    }
}

/// Builds and runs the reduction over `dims` with the two-stage plan or the planner's: the
/// engine (profiled, `reps` runs) and the host times of graph building and compiling.
fn build_and_run(
    dims: &[usize],
    data: &[f32],
    two_stage: bool,
    reps: usize,
) -> (Engine, f64, f64, f64) {
    let target = Target::gc200();
    let t = Instant::now();
    let mut graph = Graph::new(&target);
    let x = graph.add_variable(DType::F32, &[ROWS, COLS], "x");
    graph.map_linearly(&x, COLS).unwrap();
    graph.set_initial_value(&x, data).unwrap();
    let mut prog = Vec::new();
    popops::reduction::set_two_stage_only(two_stage);
    let out = popops::reduce(
        &mut graph,
        &x,
        DType::F32,
        dims,
        Operation::Add,
        &mut prog,
        "sum",
    );
    popops::reduction::set_two_stage_only(false);
    graph.create_host_read("out", &out.unwrap()).unwrap();
    let build_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default()).unwrap();
    let compile_s = t.elapsed().as_secs_f64();
    let mut engine = Engine::new(&exe, EngineOptions::default()).unwrap();
    engine.enable_profiling(ProfileOptions::default());
    let (sim, ()) = median_seconds(reps, || engine.run(0).unwrap());
    (engine, build_s, compile_s, sim)
}

fn bench(dims: &[usize], data: &[f32]) {
    let target = Target::gc200();
    let reps = 5;
    let (host, want) = median_seconds(reps, || -> Vec<f32> {
        match dims {
            [1] => data.chunks(COLS).map(|r| r.iter().sum::<f32>()).collect(),
            [0] => {
                let mut acc = vec![0.0f32; COLS];
                for r in data.chunks(COLS) {
                    for (a, &v) in acc.iter_mut().zip(r) {
                        *a += v;
                    }
                }
                acc
            }
            _ => vec![data.iter().sum::<f32>()],
        }
    });
    println!(
        "== reduce add over axes {dims:?} of [{ROWS}, {COLS}] f32, one row per tile of a GC200"
    );
    let mut cycles = Vec::new();
    for (two_stage, plan) in [(true, "two-stage plan"), (false, "planner's plan")] {
        let (engine, build_s, compile_s, sim) = build_and_run(dims, data, two_stage, reps);
        let got = engine.read_tensor::<f32>("out").unwrap();
        // Integer-valued data: every partial sum is exact, so any order gives the same bits.
        assert_eq!(got, want, "the reduction differs from the host loop");
        let profile = engine.profile().expect("profiling on");
        let modelled = profile.total_cycles() / reps as u64;
        println!("-- {plan}");
        print_phases(profile);
        println!(
            "modelled {modelled} cycles per run ({:.2} µs at {:.2} GHz)",
            modelled as f64 / target.clock_hz * 1e6,
            target.clock_hz / 1e9
        );
        if two_stage {
            let (s1, s2) = poplibs_estimate(dims);
            println!(
                "poplibs' estimator for the two-stage plan: stage 1 {s1} + stage 2 {s2} = {} \
                 compute cycles (ratio {:.2})",
                s1 + s2,
                modelled as f64 / (s1 + s2) as f64
            );
        }
        println!(
            "host: graph {build_s:.2} s, compile {compile_s:.2} s; per run: simulator {:.2} ms, \
             plain host loop {:.2} ms (median of {reps})",
            sim * 1e3,
            host * 1e3
        );
        cycles.push(modelled);
    }
    println!(
        "planner's plan / two-stage plan: {} / {} modelled cycles ({:.2}×)",
        cycles[1],
        cycles[0],
        cycles[0] as f64 / cycles[1] as f64
    );
}

fn main() {
    codelets::link();
    let data: Vec<f32> = (0..ROWS * COLS)
        .map(|i| ((i * 7919) % 17) as f32 - 8.0)
        .collect();
    for dims in [&[1usize][..], &[0], &[0, 1]] {
        bench(dims, &data);
    }
}
