//! Tutorial 6: matrix-vector product with a 2-D decomposition and partial sums.
//!
//! Tiles form a `ROW_BLOCKS x COL_BLOCKS` grid. Compute set 1: tile `(i, j)` multiplies block
//! `(i, j)` of `A` by column block `j` of `x`, giving a partial `y` for row block `i`. Compute
//! set 2: the partials of row block `i` are summed, each of the `COL_BLOCKS` tiles of that row
//! reducing a slice of the rows.
//!
//! Run: `cargo run -p codelets --example tut6_matvec_opt`

use poplar::profile::CycleModel;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};

const ROWS: usize = 64;
const COLS: usize = 96;
const ROW_BLOCKS: usize = 4;
const COL_BLOCKS: usize = 4;
const BR: usize = ROWS / ROW_BLOCKS; // rows per block
const BC: usize = COLS / COL_BLOCKS; // columns per block

fn tile(i: usize, j: usize) -> u32 {
    (i * COL_BLOCKS + j) as u32
}

// Long: a tutorial's program, read top to bottom alongside its text in docs/tutorials.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    codelets::link();
    let target = Target::custom((ROW_BLOCKS * COL_BLOCKS) as u32, 256 * 1024);
    let mut graph = Graph::new(&target);

    let a = graph.add_variable(DType::F32, &[ROWS, COLS], "A");
    let x = graph.add_variable(DType::F32, &[COLS], "x");
    let y = graph.add_variable(DType::F32, &[ROWS], "y");
    // partials[j, r]: the sum over column block j for row r.
    let partials = graph.add_variable(DType::F32, &[COL_BLOCKS, ROWS], "partials");
    graph.create_host_write("A", &a)?;
    graph.create_host_write("x", &x)?;
    graph.create_host_read("y", &y)?;

    // Compute set 1: partial products, the rows of each block split over the tile's workers,
    // one MatVec<float> vertex per share.
    let cs1 = graph.add_compute_set("partials");
    let workers = target.workers_per_tile as usize;
    for i in 0..ROW_BLOCKS {
        for j in 0..COL_BLOCKS {
            let rows = i * BR..(i + 1) * BR;
            let cols = j * BC..(j + 1) * BC;
            let block = a.slice(rows.clone())?.slice_dim(1, cols.clone())?;
            let part = partials.index(j)?.slice(rows)?;
            graph.set_tile_mapping(&block, tile(i, j))?;
            graph.set_tile_mapping(&part, tile(i, j))?;
            if i == 0 {
                // Column block j of x starts on the first tile of column j.
                graph.set_tile_mapping(&x.slice(cols.clone())?, tile(0, j))?;
            }
            for w in 0..workers {
                // Worker w's rows of the block: 16 rows give 2, 3, 3, 2, 3, 3.
                let share = BR * w / workers..BR * (w + 1) / workers;
                let v = graph.add_vertex(cs1, "MatVec<float>")?;
                graph.connect(v, "matrix", &block.slice(share.clone())?.flatten())?;
                graph.connect(v, "vec", &x.slice(cols.clone())?)?;
                graph.connect(v, "out", &part.slice(share)?)?;
                graph.set_tile_mapping(v, tile(i, j))?;
            }
        }
    }

    // Compute set 2: reduce the partials; tile (i, j) sums rows slice j of row block i. Its 4
    // rows are one 4-float vector of the reduction's accumulators: one vertex, as splitting
    // them over the workers would not be faster.
    let cs2 = graph.add_compute_set("reduce");
    let per = BR.div_ceil(COL_BLOCKS);
    for i in 0..ROW_BLOCKS {
        for j in 0..COL_BLOCKS {
            let r0 = (i * BR + j * per).min((i + 1) * BR);
            let r1 = (r0 + per).min((i + 1) * BR);
            if r0 == r1 {
                continue;
            }
            let out = y.slice(r0..r1)?;
            graph.set_tile_mapping(&out, tile(i, j))?;
            let parts: Vec<_> = (0..COL_BLOCKS)
                .map(|k| partials.index(k)?.slice(r0..r1))
                .collect::<Result<_, _>>()?;
            let v = graph.add_vertex(cs2, "ReduceSumPartials<float>")?;
            graph.connect_list(v, "partials", &parts)?;
            graph.connect(v, "out", &out)?;
            graph.set_tile_mapping(v, tile(i, j))?;
        }
    }

    let program = Program::seq(vec![Program::execute(cs1), Program::execute(cs2)]);
    let exe = compile(&graph, &[program], &CompileOptions::default())?;

    // Cost summary: bytes exchanged, and the modelled tile cycles of the busiest tile per
    // compute set.
    let exchanged: u64 = exe
        .exchanges
        .values()
        .flat_map(|e| &e.transfers)
        .map(|t| u64::from(t.bytes) * t.dsts.len() as u64)
        .sum();
    let model = CycleModel::new(&exe);
    let cycles: Vec<u64> = model.computes.iter().map(|c| c.max).collect();
    println!("exchanged {exchanged} B; busiest tile per compute set: {cycles:?} cycles");
    // For comparison: splitting only the rows over the same tiles (tutorial 5) sends all of x
    // to every tile but the one holding it.
    let tiles = ROW_BLOCKS * COL_BLOCKS;
    println!(
        "a row-only split over {tiles} tiles would broadcast {} B of x",
        (tiles - 1) * COLS * 4
    );
    let mut engine = Engine::new(&exe, EngineOptions::default())?;
    let a_host: Vec<f32> = (0..ROWS * COLS)
        .map(|i| ((i * 7 % 13) as f32 - 6.0) * 0.25)
        .collect();
    let x_host: Vec<f32> = (0..COLS).map(|j| 1.0 / (j as f32 + 1.0)).collect();
    engine.write_tensor("A", &a_host)?;
    engine.write_tensor("x", &x_host)?;
    engine.run(0)?;
    let y_dev = engine.read_tensor::<f32>("y")?;

    // Host: the same blocking (per-block dot products, then partials summed from 0 in block
    // order), so the results are bit-identical; the plain row-by-row product differs only by
    // rounding.
    let mut max_diff = 0.0f32;
    let mut ok = true;
    for r in 0..ROWS {
        let row = &a_host[r * COLS..(r + 1) * COLS];
        let blocked = (0..COL_BLOCKS).fold(0.0f32, |acc, j| {
            let cols = j * BC..(j + 1) * BC;
            acc + row[cols.clone()]
                .iter()
                .zip(&x_host[cols])
                .fold(0.0f32, |s, (&a, &x)| s + a * x)
        });
        let plain = row
            .iter()
            .zip(&x_host)
            .fold(0.0f32, |s, (&a, &x)| s + a * x);
        ok &= y_dev[r] == blocked;
        max_diff = max_diff.max((y_dev[r] - plain).abs());
    }
    println!(
        "y[0..4] = {:?}; max |y - row-by-row y| = {max_diff:e}",
        &y_dev[..4]
    );
    if !ok || max_diff > 1e-4 {
        eprintln!("tut6: MISMATCH against the host computation");
        std::process::exit(1);
    }
    println!("tut6: OK");
    Ok(())
}
