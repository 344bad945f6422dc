//! The 20-line example of README.md (kept identical to it).

use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    codelets::link();
    let mut g = Graph::new(&Target::custom(2, 64 * 1024));
    let x = g.add_variable(DType::F32, &[4], "x");
    let y = g.add_variable(DType::F32, &[4], "y");
    g.set_tile_mapping(&x, 0)?;
    g.set_tile_mapping(&y, 1)?;
    let cs = g.add_compute_set("scale");
    let v = g.add_vertex(cs, "Mul<float>")?;
    g.connect(v, "in1", &x)?;
    g.connect(v, "in2", &x)?;
    g.connect(v, "out", &y)?;
    g.set_tile_mapping(v, 1)?;
    g.create_host_write("x", &x)?;
    g.create_host_read("y", &y)?;
    let exe = compile(&g, &[Program::execute(cs)], &CompileOptions::default())?;
    let mut engine = Engine::new(&exe, EngineOptions::default())?;
    engine.write_tensor("x", &[1.0f32, 2.0, 3.0, 4.0])?;
    engine.run(0)?;
    assert_eq!(engine.read_tensor::<f32>("y")?, vec![1.0, 4.0, 9.0, 16.0]);
    Ok(())
}
