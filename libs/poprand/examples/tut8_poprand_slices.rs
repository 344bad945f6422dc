//! Tutorial 8 (random numbers and slices): an embedding table initialised with a truncated
//! normal, a lookup of a batch of rows at device indices, dropout on the looked-up rows, the
//! gradient added back with `multi_update_add`, a window of the table at a device offset, and
//! the 3 largest values of each dropped-out row with their positions (`top_k`). Every result is checked against the host; a mismatch exits non-zero.
//!
//! `cargo run -p poprand --example tut8_poprand_slices`

use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
use popops::slice::*;
use poprand::stream::{self, Stream};

const ROWS: usize = 1000;
const COLS: usize = 16;
const BATCH: usize = 8;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    codelets::link();
    let target = Target::custom(64, 256 * 1024);
    let mut graph = Graph::new(&target);

    // The seed lives in device memory: two u32 words, written from the host.
    let seed = graph.add_variable(DType::U32, &[2], "seed");
    graph.set_tile_mapping(&seed, 0)?;
    graph.create_host_write("seed", &seed)?;

    // A table laid out for lookups, its values drawn from a truncated normal.
    let plan = plan_multi_slice(&target, DType::F32, ROWS, COLS, BATCH);
    let layout = create_sliceable_tensor(&mut graph, DType::F32, ROWS, COLS, &plan, "layout")?;
    let mut init = Vec::new();
    let table = poprand::truncated_normal(
        &mut graph,
        &seed,
        1,
        &layout,
        DType::F32,
        0.0,
        0.1,
        2.0,
        &mut init,
        "table",
    )?;

    // A batch of indices from the host: rows of the table gathered on the device.
    let indices = graph.add_variable(DType::U32, &[BATCH], "indices");
    graph.set_tile_mapping(&indices, 0)?;
    graph.create_host_write("indices", &indices)?;
    let mut step = Vec::new();
    let opts = SliceOptions::default();
    let rows = multi_slice(
        &mut graph, &table, &indices, &plan, &opts, &mut step, "lookup",
    )?;

    // Dropout on the looked-up rows (keep 0.75, scale 1/0.75), with modifier 2.
    let dropped = poprand::dropout(
        &mut graph,
        &seed,
        2,
        &rows,
        &rows,
        0.75,
        1.0 / 0.75,
        &mut step,
        "dropout",
    )?;

    // The gradient of the lookup: table[indices[i]] += -0.5 * dropped[i].
    let scale = graph.add_constant(&[1], &[-0.5f32], "scale")?;
    graph.set_tile_mapping(&scale, 0)?;
    multi_update_add(
        &mut graph, &table, &dropped, &indices, &scale, &plan, &opts, &mut step, "grad",
    )?;

    // A window of 4 rows at a device offset (wrapping past the last row).
    let offset = graph.add_variable(DType::U32, &[1], "offset");
    graph.set_tile_mapping(&offset, 0)?;
    graph.create_host_write("offset", &offset)?;
    let window = dynamic_slice(
        &mut graph,
        &table,
        &offset,
        &[0],
        &[4],
        &opts,
        &mut step,
        "window",
    )?;

    // The 3 largest values of each dropped-out row and their columns (stable: of equal values,
    // the lower column first).
    let (top, cols) = popops::top_k(&mut graph, &dropped, 1, 3, true, &mut step, "top3")?;
    graph.create_host_read("top", &top)?;
    graph.create_host_read("top_cols", &cols)?;

    for (name, t) in [
        ("table", &table),
        ("rows", &rows),
        ("dropped", &dropped),
        ("window", &window),
    ] {
        graph.create_host_read(name, t)?;
    }
    let exe = compile(
        &graph,
        &[Program::seq(init), Program::seq(step)],
        &CompileOptions::default(),
    )?;
    let mut engine = Engine::new(&exe, EngineOptions::default())?;
    let seed_words = [2024u32, 12];
    let batch: [u32; BATCH] = [3, 999, 3, 0, 512, 1000, 77, 3];
    engine.write_tensor("seed", &seed_words)?;
    engine.write_tensor("indices", &batch)?;
    engine.write_tensor("offset", &[998u32])?;
    engine.run(0)?;
    let initial = engine.read_tensor::<f32>("table")?;
    engine.run(1)?;

    // The host recomputes everything from the same stream.
    let s1 = Stream::new(seed_words, 1);
    let want_table: Vec<f32> = (0..ROWS * COLS)
        .map(|i| (0.0 + f64::from(0.1f32) * stream::truncated_normal(&s1, i as u64, 2.0)) as f32)
        .collect();
    check("table", &initial, &want_table)?;
    let row_of = |r: u32| -> Vec<f32> {
        match want_table.get(r as usize * COLS..(r as usize + 1) * COLS) {
            Some(row) => row.to_vec(),
            None => vec![0.0; COLS], // an index past the table gives zeros
        }
    };
    let want_rows: Vec<f32> = batch.iter().flat_map(|&r| row_of(r)).collect();
    check("rows", &engine.read_tensor::<f32>("rows")?, &want_rows)?;
    let s2 = Stream::new(seed_words, 2);
    let keep = stream::bernoulli_threshold(f64::from(0.75f32));
    let want_dropped: Vec<f32> = want_rows
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let w = s2.bits(i as u64)[i % 4];
            if stream::bernoulli(w, keep) {
                x * (1.0f32 / 0.75)
            } else {
                0.0
            }
        })
        .collect();
    check(
        "dropped",
        &engine.read_tensor::<f32>("dropped")?,
        &want_dropped,
    )?;
    let mut want_after = want_table.clone();
    for (i, &r) in batch.iter().enumerate() {
        if (r as usize) < ROWS {
            for c in 0..COLS {
                let a = &mut want_after[r as usize * COLS + c];
                *a += -0.5 * want_dropped[i * COLS + c];
            }
        }
    }
    check(
        "table after the update",
        &engine.read_tensor::<f32>("table")?,
        &want_after,
    )?;
    let want_window: Vec<f32> = [998, 999, 0, 1]
        .iter()
        .flat_map(|&r| want_after[r * COLS..(r + 1) * COLS].to_vec())
        .collect();
    check(
        "window",
        &engine.read_tensor::<f32>("window")?,
        &want_window,
    )?;
    let mut want_top = Vec::new();
    let mut want_cols = Vec::new();
    for row in want_dropped.chunks(COLS) {
        let mut order: Vec<usize> = (0..COLS).collect();
        // A stable sort, descending (no NaN here; -0 and +0 are equal, as in `top_k`).
        order.sort_by(|&a, &b| row[b].partial_cmp(&row[a]).expect("no NaN"));
        want_cols.extend(order[..3].iter().map(|&c| c as u32));
        want_top.extend(order[..3].iter().map(|&c| row[c]));
    }
    check(
        "top-3 values",
        &engine.read_tensor::<f32>("top")?,
        &want_top,
    )?;
    if engine.read_tensor::<u32>("top_cols")? != want_cols {
        return Err("top-3 columns differ from the host's".into());
    }
    println!(
        "plan {} x {} blocks; {} table values in ±0.2, lookup, dropout, update, window and top-3 match the host",
        plan.sliced_split,
        plan.unsliced_split,
        initial.iter().filter(|x| x.abs() <= 0.2).count()
    );
    Ok(())
}

fn check(what: &str, got: &[f32], want: &[f32]) -> Result<(), String> {
    match got
        .iter()
        .zip(want)
        .position(|(g, w)| g.to_bits() != w.to_bits())
    {
        None if got.len() == want.len() => Ok(()),
        None => Err(format!(
            "{what}: {} values, expected {}",
            got.len(),
            want.len()
        )),
        Some(i) => Err(format!(
            "{what}: element {i} is {}, expected {}",
            got[i], want[i]
        )),
    }
}
