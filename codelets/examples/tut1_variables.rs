//! Tutorial 1: variables, constants, copies between tiles, host read/write handles, streams.
//!
//! Run: `cargo run -p codelets --example tut1_variables`

use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A small chip: 4 tiles of 256 KiB each.
    let target = Target::custom(4, 256 * 1024);
    let mut graph = Graph::new(&target);

    // Variables are typed and shaped; every element must be mapped to a tile.
    let v1 = graph.add_variable(DType::F32, &[4], "v1");
    let v2 = graph.add_variable(DType::F32, &[4], "v2");
    let v3 = graph.add_variable(DType::F32, &[4, 4], "v3");
    graph.set_tile_mapping(&v1, 0)?;
    graph.set_tile_mapping(&v2, 1)?;
    for row in 0..4 {
        // Row `row` of v3 lives on tile `row`.
        graph.set_tile_mapping(&v3.index(row)?, row as u32)?;
    }

    // A constant, mapped like a variable.
    let c1 = graph.add_constant(&[4], &[1.0f32, 1.5, 2.0, 2.5], "c1")?;
    graph.set_tile_mapping(&c1, 0)?;

    // Host handles: the host reads and writes tensors by name.
    graph.create_host_read_write("v1", &v1)?;
    graph.create_host_read("v2", &v2)?;
    graph.create_host_read("v3", &v3)?;

    // Program 0: c1 -> v1 (on tile 0), v1 -> v2 (tile 0 -> tile 1), v2 -> row 3 of v3
    // (tile 1 -> tile 3), and v1 -> column 0 of v3 (tile 0 -> all four tiles).
    let prog0 = Program::seq(vec![
        Program::copy(&c1, &v1),
        Program::copy(&v1, &v2),
        Program::copy(&v2, &v3.index(3)?),
        Program::copy(&v1, &v3.slice_dim(1, 0..1)?.flatten()),
    ]);

    // Program 1: stream 4 floats from the host into v1, copy them into row 0 of v3, and
    // stream row 0 back to the host.
    let input = graph.add_host_to_device_stream("v1-in", DType::F32, 4)?;
    let output = graph.add_device_to_host_stream("row0-out", DType::F32, 4)?;
    let prog1 = Program::seq(vec![
        Program::stream_to_device(input, &v1),
        Program::copy(&v1, &v3.index(0)?),
        Program::stream_from_device(&v3.index(0)?, output),
    ]);

    let exe = compile(&graph, &[prog0, prog1], &CompileOptions::default())?;
    let mut engine = Engine::new(&exe, EngineOptions::default())?;

    engine.run(0)?;
    let v2_host = engine.read_tensor::<f32>("v2")?;
    let v3_host = engine.read_tensor::<f32>("v3")?;
    println!("v2 = {v2_host:?}");
    print_matrix("v3", &v3_host, 4);

    // The host writes v1 directly, then program 1 overwrites it from the stream.
    engine.write_tensor("v1", &[9.0f32, 9.0, 9.0, 9.0])?;
    engine.connect_stream("v1-in", vec![5.0f32, 6.0, 7.0, 8.0])?;
    engine.run(1)?;
    let v1_host = engine.read_tensor::<f32>("v1")?;
    let streamed = engine.stream_output::<f32>("row0-out")?;
    let v3_after = engine.read_tensor::<f32>("v3")?;
    println!("v1 = {v1_host:?}, streamed back: {streamed:?}");
    print_matrix("v3", &v3_after, 4);

    // Check against what the host expects.
    let c = [1.0f32, 1.5, 2.0, 2.5];
    let mut want_v3 = vec![0.0f32; 16];
    want_v3[12..16].copy_from_slice(&c);
    for (row, &x) in c.iter().enumerate() {
        want_v3[row * 4] = x;
    }
    let mut want_after = want_v3.clone();
    want_after[0..4].copy_from_slice(&[5.0, 6.0, 7.0, 8.0]);
    let ok = v2_host == c
        && v3_host == want_v3
        && v1_host == [5.0, 6.0, 7.0, 8.0]
        && streamed == [5.0, 6.0, 7.0, 8.0]
        && v3_after == want_after;
    if !ok {
        eprintln!("tut1: MISMATCH against the host computation");
        std::process::exit(1);
    }
    println!("tut1: OK");
    Ok(())
}

fn print_matrix(name: &str, m: &[f32], cols: usize) {
    println!("{name} =");
    for row in m.chunks(cols) {
        println!("  {row:?}");
    }
}
