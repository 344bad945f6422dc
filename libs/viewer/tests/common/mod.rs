//! A small two-chip executable with an exchange between the chips, and a profile of it.
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
    sample_with(220)
}

/// [`sample`] with `y` mapped in pieces of `y_grain` elements (220 in [`sample`]): another
/// partitioning of the same program.
pub fn sample_with(y_grain: usize) -> (Executable, Profile) {
    codelets::link();
    let target = target();
    let mut graph = Graph::new(&target);
    let n = 3000;
    let x = graph.add_variable(DType::F32, &[n], "x");
    let y = graph.add_variable(DType::F32, &[n], "y");
    let s = graph.add_variable(DType::F32, &[1], "s");
    graph.map_linearly(&x, 100).expect("map x");
    graph.map_linearly(&y, y_grain).expect("map y");
    graph.set_tile_mapping(&s, 31).expect("map s");
    graph.create_host_write("x", &x).expect("host x");
    graph.create_host_read("s", &s).expect("host s");
    let cs = graph.add_compute_set("y = x + x");
    popops::add(&mut graph, cs, &x, &x, &y).expect("add");
    let sum = popops::reduce_sum(&mut graph, &y, &s, "sum y").expect("sum");
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

/// 8 tiles of 64 KiB, tiles 6 and 7 its I/O tiles.
pub fn io_target() -> Target {
    Target {
        io_tiles: 2,
        ..Target::custom(8, 64 * 1024)
    }
}

/// Streaming Memory: `x` (8 × f32, on I/O tile 6) is written to row `row` of remote buffer
/// `store` (8 rows) while `y = y + y` runs on tiles 0–3 (overlapped I/O), then rows 0–1 of
/// `store` are read into `back` (2 × 8 f32 on I/O tile 7); a second buffer `tags` (3 rows of
/// 5 u8) is never copied. `row` (an i32 on I/O tile 7) is the device offset; the host writes
/// `x` and `row`. Returns the executable and a profile of one run.
pub fn streaming() -> (Executable, Profile) {
    codelets::link();
    let mut g = Graph::new(&io_target());
    let store = g
        .add_remote_buffer("store", DType::F32, 8, 8)
        .expect("buffer");
    g.add_remote_buffer("tags", DType::U8, 5, 3)
        .expect("buffer");
    let x = g.add_variable(DType::F32, &[8], "x");
    let row = g.add_variable(DType::I32, &[1], "row");
    let back = g.add_variable(DType::F32, &[2, 8], "back");
    let y = g.add_variable(DType::F32, &[64], "y");
    let y2 = g.add_variable(DType::F32, &[64], "y2");
    g.set_tile_mapping(&x, 6).expect("map x");
    g.set_tile_mapping(&row, 7).expect("map row");
    g.set_tile_mapping(&back, 7).expect("map back");
    g.map_linearly(&y, 16).expect("map y");
    g.map_linearly(&y2, 16).expect("map y2");
    g.create_host_write("x", &x).expect("host x");
    g.create_host_write("row", &row).expect("host row");
    let cs = g.add_compute_set("y2 = y + y");
    popops::add(&mut g, cs, &y, &y, &y2).expect("add");
    let program = Program::labelled(
        "main",
        vec![
            Program::overlap_io(
                Program::copy_to_remote(&x, store, Some(&row)),
                Program::labelled("double", vec![Program::execute(cs)]),
            ),
            Program::copy_from_remote(store, &back, None),
        ],
    );
    let exe = compile(&g, &[program], &CompileOptions::default()).expect("compile");
    let mut engine = Engine::new(&exe, EngineOptions::with_threads(1)).expect("engine");
    engine.enable_profiling(ProfileOptions::default());
    engine.write_tensor("x", &[1.5f32; 8]).expect("write x");
    engine.write_tensor("row", &[1i32]).expect("write row");
    engine.run(0).expect("run");
    let profile = engine.profile().expect("profiling is on").clone();
    (exe, profile)
}
