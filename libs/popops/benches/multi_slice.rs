//! `multi_slice` of 4,096 rows from a 50,000 × 768 `f32` embedding spread over one GC200 chip
//! (1,472 tiles): the plan, the modelled cycles of a run (from the profile, by phase) against
//! the planner's estimate, and the host time per run against a plain host gather.
//!
//! `cargo bench -p popops --bench multi_slice`

mod support;

use std::time::Instant;

use poplar::profile::ProfileOptions;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
use popops::slice::*;
use support::{median_seconds, print_phases};

fn main() {
    codelets::link();
    let (rows, cols, n) = (50_000usize, 768usize, 4096usize);
    let target = Target::gc200();
    let t = Instant::now();
    let plan = plan_multi_slice(&target, DType::F32, rows, cols, n);
    let estimate = estimate_multi_slice(&target, DType::F32, &plan, rows, cols, n);
    println!(
        "== multi_slice of {n} rows from a {rows} x {cols} f32 table on one GC200 ({} tiles)",
        target.num_tiles()
    );
    println!(
        "plan: {} row splits x {} column splits = {} tiles (planned in {:.1} ms); estimate {} cycles",
        plan.sliced_split,
        plan.unsliced_split,
        plan.sliced_split * plan.unsliced_split,
        t.elapsed().as_secs_f64() * 1e3,
        estimate
    );
    let t = Instant::now();
    let mut graph = Graph::new(&target);
    let table =
        create_sliceable_tensor(&mut graph, DType::F32, rows, cols, &plan, "table").unwrap();
    let data: Vec<f32> = (0..rows * cols)
        .map(|i| ((i * 7919) % 1009) as f32 - 504.0)
        .collect();
    graph.set_initial_value(&table, &data).unwrap();
    let idx = graph.add_variable(DType::U32, &[n], "indices");
    graph.set_tile_mapping(&idx, 0).unwrap();
    graph.create_host_write("indices", &idx).unwrap();
    let mut prog = Vec::new();
    let out = multi_slice(
        &mut graph,
        &table,
        &idx,
        &plan,
        &SliceOptions::default(),
        &mut prog,
        "lookup",
    )
    .unwrap();
    graph.create_host_read("out", &out).unwrap();
    let build_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default()).unwrap();
    let compile_s = t.elapsed().as_secs_f64();
    let mut engine = Engine::new(&exe, EngineOptions::default()).unwrap();
    let indices: Vec<u32> = (0..n as u64)
        .map(|i| ((i * 2_654_435_761) % rows as u64) as u32)
        .collect();
    engine.write_tensor("indices", &indices).unwrap();
    engine.enable_profiling(ProfileOptions::default());
    let reps = 5;
    let (sim, ()) = median_seconds(reps, || engine.run(0).unwrap());
    let got = engine.read_tensor::<f32>("out").unwrap();
    let (host, want) = median_seconds(reps, || {
        indices
            .iter()
            .flat_map(|&i| data[i as usize * cols..][..cols].iter().copied())
            .collect::<Vec<f32>>()
    });
    assert_eq!(got, want, "the lookup differs from the host gather");
    let profile = engine.profile().expect("profiling on");
    let modelled = profile.total_cycles() / reps as u64;
    print_phases(profile);
    println!(
        "modelled {modelled} cycles per run ({:.1} µs at {:.2} GHz; planner's estimate {estimate}, ratio {:.2})",
        modelled as f64 / target.clock_hz * 1e6,
        target.clock_hz / 1e9,
        modelled as f64 / estimate as f64
    );
    println!(
        "host: graph {build_s:.2} s, compile {compile_s:.2} s; per run: simulator {:.2} ms, plain host gather {:.2} ms (median of {reps})",
        sim * 1e3,
        host * 1e3
    );
}
