//! Tutorial 3: writing a codelet with `poplar::codelet!`.
//!
//! Run: `cargo run -p codelets --example tut3_writing_codelets`

use poplar::codelet::*;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};

poplar::codelet! {
    /// Sums a vector into a scalar and scales it: `out = scale * sum(input)`.
    pub struct ScaledSum as "tut3::ScaledSum" {
        input: Input<Vector<f32>>,
        out: Output<f32>,
        scale: State<f32>,
    }
}

impl Vertex for ScaledSum<'_> {
    fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
        if self.input.is_empty() {
            return Err(VertexError::new("tut3::ScaledSum: field 'input' is empty"));
        }
        let sum: f32 = self.input.iter().sum();
        *self.out = self.scale * sum;
        Ok(())
    }

    /// 20 cycles of overhead plus one cycle per element.
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(20 + ctx.elements(Self::input))
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = Target::custom(4, 256 * 1024);
    let mut graph = Graph::new(&target);

    // A 4 x 8 matrix, one row per tile, and a 4-vector of results, all on tile 0.
    let m = graph.add_variable(DType::F32, &[4, 8], "m");
    let sums = graph.add_variable(DType::F32, &[4], "sums");
    graph.set_tile_mapping(&sums, 0)?;
    graph.create_host_write("m", &m)?;
    graph.create_host_read("sums", &sums)?;

    // One vertex per row, on the row's tile; its output element lives on tile 0, so the
    // compiler adds an exchange after the compute set.
    let cs = graph.add_compute_set("row sums");
    for row in 0..4 {
        graph.set_tile_mapping(&m.index(row)?, row as u32)?;
        let v = graph.add_vertex_of::<ScaledSum>(cs)?;
        graph.connect(v, "input", &m.index(row)?)?;
        graph.connect(v, "out", &sums.slice(row..row + 1)?)?;
        graph.set_vertex_state(v, "scale", 0.5f32)?;
        graph.set_tile_mapping(v, row as u32)?;
    }

    let exe = compile(&graph, &[Program::execute(cs)], &CompileOptions::default())?;
    let mut engine = Engine::new(&exe, EngineOptions::default())?;
    let data: Vec<f32> = (0..32).map(|i| i as f32).collect();
    engine.write_tensor("m", &data)?;
    engine.run(0)?;
    let got = engine.read_tensor::<f32>("sums")?;

    let want: Vec<f32> = data
        .chunks(8)
        .map(|row| 0.5 * row.iter().sum::<f32>())
        .collect();
    println!("sums = {got:?} (host {want:?})");
    if got != want {
        eprintln!("tut3: MISMATCH against the host computation");
        std::process::exit(1);
    }
    println!("tut3: OK");
    Ok(())
}
