//! Tutorial 7: Streaming Memory — a data set twelve times the memory of all the tiles, streamed
//! through them a chunk at a time from a remote buffer; then the same loop with I/O tiles, the
//! transfer of the next chunk overlapped with the compute on this one.
//!
//! Run: `cargo run -p codelets --example tut7_streaming_memory`
use poplar::profile::{MemoryReport, PhaseKind, ProfileOptions};
use poplar::{
    compile, CompileOptions, DType, Engine, EngineError, EngineOptions, Graph, Program, Target,
    Tensor,
};

/// Elements of one chunk (one row of the remote buffers): 64 KiB of `f32`.
const CHUNK: usize = 16384;
/// Chunks in the data set (rows of the remote buffers).
const CHUNKS: usize = 96;

// Long: a tutorial's program, read top to bottom alongside its text in docs/tutorials.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    codelets::link();
    // 16 tiles of 32 KiB; the last 8 are I/O tiles (used by the second part only).
    let target = Target {
        io_tiles: 8,
        ..Target::custom(16, 32 * 1024)
    };
    let compute_tiles = 0..target.tiles_per_ipu - target.io_tiles;
    let io_tiles = target.io_tiles_of(0);
    let mut graph = Graph::new(&target);

    // Streaming Memory: the data set, one chunk a row, and a buffer as large for the results.
    let data = graph.add_remote_buffer("data", DType::F32, CHUNK as u64, CHUNKS as u64)?;
    let results = graph.add_remote_buffer("results", DType::F32, CHUNK as u64, CHUNKS as u64)?;

    // On the compute tiles: the chunk being worked on, exp of it, the running sum of the exps.
    let x = graph.add_variable(DType::F32, &[CHUNK], "x");
    let e = graph.add_variable(DType::F32, &[CHUNK], "e");
    let sum = graph.add_variable(DType::F32, &[CHUNK], "sum");
    for t in [&x, &e, &sum] {
        graph.map_linearly_over(t, 64, compute_tiles.clone())?;
    }
    graph.create_host_read("sum", &sum)?;

    // The rows, counted on the device: [the next row to read, the row of the chunk computed
    // last], both moved on by one vertex after each chunk.
    let rows = graph.add_variable(DType::I32, &[2], "rows");
    graph.set_tile_mapping(&rows, 0)?;
    let ones = graph.add_constant(&[2], &[1i32, 1], "ones")?;
    graph.set_tile_mapping(&ones, 0)?;
    let (read_row, write_row) = (rows.slice(0..1)?, rows.slice(1..2)?);

    // One chunk's work: e = exp(x), then sum += e and rows += 1.
    let exp = graph.add_compute_set("e = exp(x)");
    popops::unary(&mut graph, exp, popops::UnaryOp::Exp, &x, &e)?;
    let add = graph.add_compute_set("sum += e");
    popops::add_in_place(&mut graph, add, &sum, &e)?;
    let next = graph.add_vertex(add, "AddInPlace<int>")?;
    graph.connect(next, "a", &rows)?;
    graph.connect(next, "b", &ones)?;
    graph.set_tile_mapping(next, 0)?;
    let step = Program::seq(vec![Program::execute(exp), Program::execute(add)]);

    // sum = 0 and rows = `first`, at the start of a run.
    let clear = graph.add_compute_set("sum = 0");
    popops::fill(&mut graph, clear, &sum, 0f32)?;
    let mut start = |first: [i32; 2], name: &str| -> Result<Program, Box<dyn std::error::Error>> {
        let c = graph.add_constant(&[2], &first, name)?;
        graph.set_tile_mapping(&c, 0)?;
        Ok(Program::seq(vec![
            Program::execute(clear),
            Program::copy(&c, &rows),
        ]))
    };
    let start_plain = start([0, -1], "rows at the start")?;
    let start_overlapped = start([1, -1], "rows after the first read")?;

    // Part 1, the plain loop: read chunk i into the compute tiles, compute, write exp(chunk i)
    // back to row i of the results.
    let plain = Program::labelled(
        "plain loop",
        vec![
            start_plain.clone(),
            Program::repeat(
                CHUNKS as u32,
                Program::seq(vec![
                    Program::copy_from_remote(data, &x, Some(&read_row)),
                    step.clone(),
                    Program::copy_to_remote(&e, results, Some(&write_row)),
                ]),
            ),
        ],
    );

    // Part 2: buffers on the I/O tiles, and the offsets there too (a transfer reads them).
    let io_in = graph.add_variable(DType::F32, &[CHUNK], "io_in");
    let io_out = graph.add_variable(DType::F32, &[CHUNK], "io_out");
    for t in [&io_in, &io_out] {
        graph.map_linearly_over(t, 64, io_tiles)?;
    }
    let io_rows = graph.add_variable(DType::I32, &[2], "io_rows");
    graph.set_tile_mapping(&io_rows, io_tiles.start)?;
    let (io_read_row, io_write_row) = (io_rows.slice(0..1)?, io_rows.slice(1..2)?);
    let read_next = Program::copy_from_remote(data, &io_in, Some(&io_read_row));
    let write_last = Program::copy_to_remote(&io_out, results, Some(&io_write_row));
    // Between chunks, one exchange: the prefetched chunk to the compute tiles and exp of the
    // chunk just computed to the I/O tiles; then the new row numbers.
    let stage = Program::seq(vec![
        Program::copy(
            &Tensor::concat(&[io_in.clone(), e.clone()])?,
            &Tensor::concat(&[x.clone(), io_out.clone()])?,
        ),
        Program::copy(&rows, &io_rows),
    ]);
    let overlapped = Program::labelled(
        "overlapped loop",
        vec![
            start_overlapped,
            // Chunk 0 (row 0: no offset) comes in before the loop.
            Program::copy_from_remote(data, &io_in, None),
            Program::copy(&io_in, &x),
            Program::copy(&rows, &io_rows),
            // Chunk 0: compute it while chunk 1 comes in.
            Program::overlap_io(read_next.clone(), step.clone()),
            stage.clone(),
            // Chunks 1 to 94: compute chunk i while chunk i + 1 comes in and exp(chunk i - 1)
            // goes out.
            Program::repeat(
                CHUNKS as u32 - 2,
                Program::seq(vec![
                    Program::overlap_io(
                        Program::seq(vec![read_next, write_last.clone()]),
                        step.clone(),
                    ),
                    stage,
                ]),
            ),
            // Chunk 95: nothing left to read.
            Program::overlap_io(write_last.clone(), step.clone()),
            Program::copy(&e, &io_out),
            Program::copy(&rows, &io_rows),
            write_last,
        ],
    );

    // For the comparison: the loop's compute alone, and its transfers alone.
    let compute_only = Program::labelled(
        "compute only",
        vec![start_plain.clone(), Program::repeat(CHUNKS as u32, step)],
    );
    let transfers_only = Program::labelled(
        "transfers only",
        vec![
            start_plain,
            Program::repeat(
                CHUNKS as u32,
                Program::seq(vec![
                    Program::copy_from_remote(data, &x, Some(&read_row)),
                    Program::copy_to_remote(&e, results, Some(&read_row)),
                ]),
            ),
        ],
    );
    // One chunk more than the data set holds, after a loop has left rows at [96, 95].
    let one_more = Program::copy_from_remote(data, &x, Some(&read_row));
    let exe = compile(
        &graph,
        &[plain, overlapped, compute_only, transfers_only, one_more],
        &CompileOptions::default(),
    )?;

    // The sizes: the data set against the memory of all the tiles.
    let data_bytes = (CHUNKS * CHUNK * 4) as u64;
    let tile_bytes = u64::from(target.num_tiles()) * u64::from(target.bytes_per_tile);
    println!(
        "data set: {CHUNKS} chunks of {} B = {data_bytes} B; tile memory: {} tiles x {} B = {tile_bytes} B ({:.1}x)",
        CHUNK * 4,
        target.num_tiles(),
        target.bytes_per_tile,
        data_bytes as f64 / tile_bytes as f64
    );

    let memory = MemoryReport::from_executable(&exe);
    println!(
        "tile memory used: at most {} B of {} B on a tile",
        memory.total.max, memory.bytes_per_tile
    );

    // The host fills the data set row by row, between runs.
    let mut engine = Engine::new(&exe, EngineOptions::default())?;
    engine.enable_profiling(ProfileOptions::default());
    let chunk = |i: usize| -> Vec<f32> {
        (0..CHUNK)
            .map(|j| ((i * 31 + j * 7) % 97) as f32 / 32.0 - 1.5)
            .collect()
    };
    for i in 0..CHUNKS {
        engine.write_remote_row("data", i as u64, &chunk(i))?;
    }
    let used = engine.streaming_memory_use();
    println!(
        "streaming memory held by the host: {} B resident, {} B spilled, {} rows written",
        used.resident_bytes, used.spilled_bytes, used.rows_written
    );

    // The host's result: the same f32 operations in the same order, so equal bit for bit.
    let mut want_sum = vec![0f32; CHUNK];
    let mut want_results = Vec::with_capacity(CHUNKS * CHUNK);
    for i in 0..CHUNKS {
        for (s, v) in want_sum.iter_mut().zip(chunk(i)) {
            *s += v.exp();
            want_results.push(v.exp());
        }
    }

    let mut ok = true;
    for (program, name) in [(0, "plain loop"), (1, "overlapped loop")] {
        engine.write_remote_buffer("results", &vec![0f32; CHUNKS * CHUNK])?;
        engine.run(program)?;
        let got_sum = engine.read_tensor::<f32>("sum")?;
        let got_results = engine.read_remote_buffer::<f32>("results")?;
        let same = got_sum == want_sum && got_results == want_results;
        println!(
            "{name}: sum[0] = {} (host {}), results {}",
            got_sum[0],
            want_sum[0],
            if same { "equal" } else { "DIFFERENT" }
        );
        ok &= same;
    }
    // The two halves of the loop alone (their results are not looked at): the transfers,
    // then the compute, which leaves rows at [96, 95].
    engine.run(3)?;
    engine.run(2)?;

    // The modelled cycles of each version, from the labels of the profile.
    let profile = engine.profile().expect("profiling is on");
    let label = |name: &str| profile.label(name).map(|l| l.elapsed).unwrap_or_default();
    let (compute, transfers) = (label("compute only"), label("transfers only"));
    let (plain, overlapped) = (label("plain loop"), label("overlapped loop"));
    for (name, l) in [
        ("compute only", compute),
        ("transfers only", transfers),
        ("plain loop", plain),
        ("overlapped loop", overlapped),
    ] {
        println!(
            "{name:>16}: {:>9} cycles (compute {}, exchange {}, sync {}, transfer {}, transfer overlapped {})",
            l.total(),
            l.compute,
            l.exchange,
            l.sync,
            l.transfer,
            l.transfer_overlapped
        );
    }
    // Each copy to or from a remote buffer is a phase of kind `Transfer`.
    for p in profile
        .phases
        .iter()
        .filter(|p| p.kind == PhaseKind::Transfer)
    {
        println!(
            "transfer {:<16} {:>4} executions x {:>5} cycles, {} B each, tiles {}..={}",
            p.name,
            p.executions,
            p.per_execution.max,
            p.bytes,
            p.tile_cycles[0][0],
            p.tile_cycles[p.tile_cycles.len() - 1][0]
        );
    }
    let bound = compute.total().max(transfers.total());
    println!(
        "overlapped / max(compute, transfers) = {:.2}; plain / overlapped = {:.2}",
        overlapped.total() as f64 / bound as f64,
        plain.total() as f64 / overlapped.total() as f64
    );

    // A row past the end: the copy names it, the engine refuses it, nothing moves.
    let err = engine.run(4).err();
    let shown = err.as_ref().map_or("no error".into(), |e| e.to_string());
    println!("one chunk more: {shown}");
    let refused = matches!(
        err,
        Some(EngineError::RemoteRowOutOfRange {
            row: 96,
            rows: 96,
            program: Some(4),
            ..
        })
    );
    let host_err = engine
        .read_remote_row::<f32>("data", CHUNKS as u64)
        .unwrap_err();
    println!("the host reads row {CHUNKS}: {host_err}");

    // Overlapped: faster than the plain loop, and within 25% of the longer half alone (the
    // staging exchange and its syncs are the rest).
    let faster = overlapped.total() < plain.total()
        && overlapped.total() as f64 <= 1.25 * bound as f64
        && overlapped.transfer_overlapped > 0;
    if !ok || !refused || !faster || data_bytes < 10 * tile_bytes {
        eprintln!("tut7: MISMATCH against the host computation or the profile");
        std::process::exit(1);
    }
    println!("tut7: OK");
    Ok(())
}
