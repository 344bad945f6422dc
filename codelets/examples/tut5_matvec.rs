//! Tutorial 5: matrix-vector product `y = A x`, rows of `A` distributed over the tiles.
//!
//! Run: `cargo run -p codelets --example tut5_matvec`

use poplar::profile::CycleModel;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};

const ROWS: usize = 64;
const COLS: usize = 48;
const TILES: u32 = 8;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    codelets::link();
    let target = Target::custom(TILES, 256 * 1024);
    let mut graph = Graph::new(&target);

    let a = graph.add_variable(DType::F32, &[ROWS, COLS], "A");
    let x = graph.add_variable(DType::F32, &[COLS], "x");
    let y = graph.add_variable(DType::F32, &[ROWS], "y");
    graph.create_host_write("A", &a)?;
    graph.create_host_write("x", &x)?;
    graph.create_host_read("y", &y)?;

    // x lives on tile 0; every tile reads all of it, so the compiler broadcasts it.
    graph.set_tile_mapping(&x, 0)?;

    // Row block `t` of A and of y live on tile `t`. Its rows are split over the tile's worker
    // contexts: one MatVec<float> vertex per share computes the dot product of each of its
    // rows with x.
    let cs = graph.add_compute_set("matvec");
    let rows_per_tile = ROWS.div_ceil(TILES as usize);
    let workers = target.workers_per_tile as usize;
    for tile in 0..TILES {
        let r0 = (tile as usize * rows_per_tile).min(ROWS);
        let r1 = (r0 + rows_per_tile).min(ROWS);
        if r0 == r1 {
            continue;
        }
        graph.set_tile_mapping(&a.slice(r0..r1)?, tile)?;
        graph.set_tile_mapping(&y.slice(r0..r1)?, tile)?;
        for w in 0..workers {
            // Worker w's rows, cut as `Worker::split` cuts: 8 rows give 1, 1, 2, 1, 1, 2.
            let w0 = r0 + (r1 - r0) * w / workers;
            let w1 = r0 + (r1 - r0) * (w + 1) / workers;
            if w0 == w1 {
                continue;
            }
            let v = graph.add_vertex(cs, "MatVec<float>")?;
            graph.connect(v, "matrix", &a.slice(w0..w1)?.flatten())?;
            graph.connect(v, "vec", &x)?;
            graph.connect(v, "out", &y.slice(w0..w1)?)?;
            graph.set_tile_mapping(v, tile)?;
        }
    }

    let exe = compile(&graph, &[Program::execute(cs)], &CompileOptions::default())?;

    // Cost summary: bytes exchanged, and the modelled tile cycles of the busiest tile per
    // compute set (the cycle model: six worker contexts, see tutorial 4).
    let exchanged: u64 = exe
        .exchanges
        .values()
        .flat_map(|e| &e.transfers)
        .map(|t| u64::from(t.bytes) * t.dsts.len() as u64)
        .sum();
    let model = CycleModel::new(&exe);
    let cycles: Vec<u64> = model.computes.iter().map(|c| c.max).collect();
    println!("exchanged {exchanged} B; busiest tile per compute set: {cycles:?} cycles");
    let mut engine = Engine::new(&exe, EngineOptions::default())?;
    let a_host: Vec<f32> = (0..ROWS * COLS)
        .map(|i| ((i * 7 % 13) as f32 - 6.0) * 0.25)
        .collect();
    let x_host: Vec<f32> = (0..COLS).map(|j| 1.0 / (j as f32 + 1.0)).collect();
    engine.write_tensor("A", &a_host)?;
    engine.write_tensor("x", &x_host)?;
    engine.run(0)?;
    let y_dev = engine.read_tensor::<f32>("y")?;

    // Host: the same dot products in the same order, so the results are bit-identical.
    let y_host: Vec<f32> = a_host
        .chunks(COLS)
        .map(|row| {
            row.iter()
                .zip(&x_host)
                .fold(0.0f32, |s, (&a, &x)| s + a * x)
        })
        .collect();
    println!("y[0..4] = {:?}", &y_dev[..4]);
    if y_dev != y_host {
        eprintln!("tut5: MISMATCH against the host computation");
        std::process::exit(1);
    }
    println!("tut5: OK");
    Ok(())
}
