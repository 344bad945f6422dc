//! A small two-chip executable with an exchange between the chips, and a profile of it.

use codelets::ops;
use poplar::profile::{Profile, ProfileOptions};
use poplar::{
    compile, CompileOptions, DType, Engine, EngineOptions, Executable, Graph, Program, Target,
};

/// 2 chips × 16 tiles of 64 KiB.
pub fn target() -> Target {
    Target {
        num_ipus: 2,
        tiles_per_ipu: 16,
        bytes_per_tile: 64 * 1024,
        ..Target::gc200()
    }
}

/// `y = x + x` three times (x and y mapped differently, so the add needs an exchange, part of
/// it between the chips), then `s = sum(y)`; `x` is written by the host.
pub fn sample() -> (Executable, Profile) {
    codelets::link();
    let target = target();
    let mut graph = Graph::new(&target);
    let n = 3000;
    let x = graph.add_variable(DType::F32, &[n], "x");
    let y = graph.add_variable(DType::F32, &[n], "y");
    let s = graph.add_variable(DType::F32, &[1], "s");
    graph.map_linearly(&x, 100).expect("map x");
    graph.map_linearly(&y, 220).expect("map y");
    graph.set_tile_mapping(&s, 31).expect("map s");
    graph.create_host_write("x", &x).expect("host x");
    graph.create_host_read("s", &s).expect("host s");
    let cs = graph.add_compute_set("y = x + x");
    ops::add(&mut graph, cs, &x, &x, &y).expect("add");
    let sum = ops::reduce_sum(&mut graph, &y, &s, "sum y").expect("sum");
    let program = Program::labelled(
        "main",
        vec![
            Program::repeat(3, Program::labelled("add", vec![Program::execute(cs)])),
            sum,
        ],
    );
    let exe = compile(&graph, &[program], &CompileOptions::default()).expect("compile");
    let mut engine = Engine::new(&exe, EngineOptions::default()).expect("engine");
    engine.enable_profiling(ProfileOptions::default());
    let xs: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    engine.write_tensor("x", &xs).expect("write x");
    engine.run(0).expect("run");
    let profile = engine.profile().expect("profiling is on").clone();
    (exe, profile)
}
