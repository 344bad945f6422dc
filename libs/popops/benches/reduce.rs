//! `popops::reduce` (add) of a [1024, 4096] `f32` tensor over axis 0 and over axis 1, one row
//! per tile of one GC200 chip (1,024 of its 1,472 tiles): the modelled cycles of a run (from
//! the profile, by phase) against poplibs' estimator formula for the same two-stage plan
//! (computed here from the shapes, compute only), and the host time of a run against a
//! plain host loop.
//!
//! `cargo bench -p popops --bench reduce`

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
fn poplibs_estimate(axis: usize) -> (u64, u64) {
    let f = DType::F32;
    if axis == 1 {
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

fn bench(axis: usize, data: &[f32]) {
    let target = Target::gc200();
    let t = Instant::now();
    let mut graph = Graph::new(&target);
    let x = graph.add_variable(DType::F32, &[ROWS, COLS], "x");
    graph.map_linearly(&x, COLS).unwrap();
    graph.set_initial_value(&x, data).unwrap();
    let mut prog = Vec::new();
    let out = popops::reduce(
        &mut graph,
        &x,
        DType::F32,
        &[axis],
        Operation::Add,
        &mut prog,
        "sum",
    )
    .unwrap();
    graph.create_host_read("out", &out).unwrap();
    let build_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default()).unwrap();
    let compile_s = t.elapsed().as_secs_f64();
    let mut engine = Engine::new(&exe, EngineOptions::default()).unwrap();
    engine.enable_profiling(ProfileOptions::default());
    let reps = 5;
    let (sim, ()) = median_seconds(reps, || engine.run(0).unwrap());
    let got = engine.read_tensor::<f32>("out").unwrap();
    let (host, want) = median_seconds(reps, || -> Vec<f32> {
        if axis == 1 {
            data.chunks(COLS).map(|r| r.iter().sum::<f32>()).collect()
        } else {
            let mut acc = vec![0.0f32; COLS];
            for r in data.chunks(COLS) {
                for (a, &v) in acc.iter_mut().zip(r) {
                    *a += v;
                }
            }
            acc
        }
    });
    // Integer-valued data: every partial sum is exact, so any order gives the same bits.
    assert_eq!(got, want, "the reduction differs from the host loop");
    let profile = engine.profile().expect("profiling on");
    let modelled = profile.total_cycles() / reps as u64;
    println!("== reduce add over axis {axis} of [{ROWS}, {COLS}] f32, one row per tile of a GC200");
    print_phases(profile);
    let (s1, s2) = poplibs_estimate(axis);
    println!(
        "modelled {modelled} cycles per run ({:.2} µs at {:.2} GHz); poplibs' estimator for the \
         plan: stage 1 {s1} + stage 2 {s2} = {} compute cycles (ratio {:.2})",
        modelled as f64 / target.clock_hz * 1e6,
        target.clock_hz / 1e9,
        s1 + s2,
        modelled as f64 / (s1 + s2) as f64
    );
    println!(
        "host: graph {build_s:.2} s, compile {compile_s:.2} s; per run: simulator {:.2} ms, \
         plain host loop {:.2} ms (median of {reps})",
        sim * 1e3,
        host * 1e3
    );
}

fn main() {
    codelets::link();
    let data: Vec<f32> = (0..ROWS * COLS)
        .map(|i| ((i * 7919) % 17) as f32 - 8.0)
        .collect();
    for axis in [1, 0] {
        bench(axis, &data);
    }
}
