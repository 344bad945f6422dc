//! Tutorial 2: using the standard codelet library, by hand and through `popops`.
//!
//! Run: `cargo run -p codelets --example tut2_using_codelets`
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Makes sure the library is linked, so its codelets are registered.
    codelets::link();

    let target = Target::custom(4, 256 * 1024);
    let mut graph = Graph::new(&target);
    let n = 1000;
    let x = graph.add_variable(DType::F32, &[n], "x");
    let y = graph.add_variable(DType::F32, &[n], "y");
    let z = graph.add_variable(DType::F32, &[n], "z");
    // Spread each vector over the 4 tiles in blocks of at least 16 elements.
    for t in [&x, &y, &z] {
        graph.map_linearly(t, 16)?;
    }
    graph.create_host_write("x", &x)?;
    graph.create_host_read("z", &z)?;

    // By hand: one "FillMulti<float>" vertex per tile region sets y to 0.5. A vertex has a
    // codelet, its fields connected to tensors (or given state), and a tile. A multi-worker
    // codelet splits its work over the tile's six worker contexts.
    let fill_cs = graph.add_compute_set("fill y");
    for (tile, ranges) in graph.tile_mapping(&y)?.into_iter().enumerate() {
        for range in ranges {
            let v = graph.add_vertex(fill_cs, "FillMulti<float>")?;
            graph.connect(v, "out", &y.slice(range)?)?;
            graph.set_vertex_state(v, "value", 0.5f32)?;
            graph.set_tile_mapping(v, tile as u32)?;
        }
    }

    // With the helpers: z = x + y, then z += -2 * x, then s = sum(z).
    let add_cs = graph.add_compute_set("z = x + y");
    popops::add(&mut graph, add_cs, &x, &y, &z)?;
    let axpy_cs = graph.add_compute_set("z += -2x");
    popops::scaled_add(&mut graph, axpy_cs, &z, &x, -2.0)?;
    let s = graph.add_variable(DType::F32, &[1], "s");
    graph.set_tile_mapping(&s, 0)?;
    graph.create_host_read("s", &s)?;
    let sum = popops::reduce_sum(&mut graph, &z, &s, "sum z")?;

    let program = Program::seq(vec![
        Program::execute(fill_cs),
        Program::execute(add_cs),
        Program::execute(axpy_cs),
        sum,
    ]);
    let exe = compile(&graph, &[program], &CompileOptions::default())?;
    let mut engine = Engine::new(&exe, EngineOptions::default())?;
    let xs: Vec<f32> = (0..n).map(|i| (i as f32 * 0.01).sin()).collect();
    engine.write_tensor("x", &xs)?;
    engine.run(0)?;
    let z_dev = engine.read_tensor::<f32>("z")?;
    let s_dev = engine.read_tensor::<f32>("s")?[0];

    // The host computation: element-wise results are bit-identical; the sum is reduced per
    // worker piece of each tile first, so it is compared with a tolerance.
    let z_host: Vec<f32> = xs.iter().map(|&x| (x + 0.5) + -2.0 * x).collect();
    let s_host: f64 = z_host.iter().map(|&v| f64::from(v)).sum();
    println!("z[0..4] = {:?}, sum = {s_dev} (host {s_host})", &z_dev[..4]);
    if z_dev != z_host || (f64::from(s_dev) - s_host).abs() > 1e-4 * s_host.abs().max(1.0) {
        eprintln!("tut2: MISMATCH against the host computation");
        std::process::exit(1);
    }
    println!("tut2: OK");
    Ok(())
}
