//! Streaming Memory benchmarks; prints figures (medians) rather than asserting them.
//!
//! `cargo bench -p poplar --bench streaming_memory [-- bound|overlap|rate|big|all]`
//!
//! - bound: modelled time of one transfer of 1 KiB … 128 MiB to and from Streaming Memory on a
//!   GC200, as a fraction of the configured rate's bound (`bytes / rate`);
//! - overlap: a loop that computes on chunk i while chunk i+1 comes to the I/O tiles, against
//!   the same loop without transfers (compute only) and without compute (transfers only);
//! - rate: host time of remote-buffer copies against `memcpy` of the same bytes, in one run;
//! - big (not in `all`): 16 GiB of remote rows written with a 2 GiB host budget: wall time,
//!   peak RSS, bytes resident and spilled.

use std::time::Instant;

use poplar::codelet::*;
use poplar::engine::StreamingMemoryBudget;
use poplar::profile::{CycleModel, ProfileOptions};
use poplar::{
    compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target, Tensor,
};

poplar::codelet! {
    /// `rows[i] += 1`: the next row, computed on the device.
    pub struct NextRow as "bench::NextRow" {
        rows: InOut<Vector<i32>>,
    }
}
impl Vertex for NextRow<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        self.rows.iter_mut().for_each(|r| *r += 1);
        Ok(())
    }
}

poplar::codelet! {
    /// `acc[i] += x[i]`, one element per cycle per worker context (an assumption of the bench).
    pub struct Accumulate as "bench::Accumulate" {
        acc: InOut<Vector<f32>>,
        x: Input<Vector<f32>>,
    }
}
impl Vertex for Accumulate<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        for (a, x) in self.acc.iter_mut().zip(self.x.iter()) {
            *a += x;
        }
        Ok(())
    }
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(10 + ctx.elements(Self::acc))
    }
}

mod support;
use support::{median, peak_rss_mib};

fn mib(b: u64) -> f64 {
    b as f64 / (1 << 20) as f64
}

/// A variable of `n` f32 spread evenly over tiles `tiles`.
fn spread(g: &mut Graph, n: usize, tiles: std::ops::Range<u32>, name: &str) -> Tensor {
    let t = g.add_variable(DType::F32, &[n], name);
    let per = n.div_ceil((tiles.end - tiles.start) as usize).max(1);
    g.map_linearly_over(&t, per, tiles).unwrap();
    t
}

fn bench_bound() {
    println!("== bound: one transfer to / from Streaming Memory, modelled, GC200 (11.84 B/cycle)");
    println!(
        "  {:>10} {:>12} {:>12} {:>9} {:>9}",
        "bytes", "read cyc", "write cyc", "read", "write"
    );
    let t = Target::gc200();
    for shift in [10u32, 14, 17, 20, 22, 24, 26, 27] {
        let bytes = 1u64 << shift;
        let n = (bytes / 4) as usize;
        let mut g = Graph::new(&t);
        let buf = g.add_remote_buffer("b", DType::F32, n as u64, 1).unwrap();
        let x = spread(&mut g, n, 0..t.tiles_per_ipu, "x");
        let progs = [
            Program::copy_from_remote(buf, &x, None),
            Program::copy_to_remote(&x, buf, None),
        ];
        let exe = compile(&g, &progs, &CompileOptions::default()).unwrap();
        let m = CycleModel::new(&exe);
        let bound = bytes as f64 / t.streaming_memory_bytes_per_cycle;
        let (r, w) = (m.transfers[0].cycles, m.transfers[1].cycles);
        println!(
            "  {:>10} {:>12} {:>12} {:>9.3} {:>9.3}",
            bytes,
            r,
            w,
            bound / r as f64,
            bound / w as f64
        );
    }
}

/// The chunk loop on a GC200 with 32 I/O tiles: `(overlapped, compute only, transfers only)`
/// programs over a buffer of `chunks` rows of `n` f32, the compute `reps` passes of
/// `acc += work`.
fn chunk_loop(n: usize, chunks: u32, reps: u32) -> (Graph, Vec<Program>) {
    let t = Target {
        io_tiles: 32,
        ..Target::gc200()
    };
    let compute_tiles = t.tiles_per_ipu - t.io_tiles;
    let mut g = Graph::new(&t);
    let buf = g
        .add_remote_buffer("data", DType::F32, n as u64, u64::from(chunks))
        .unwrap();
    let stage = spread(&mut g, n, compute_tiles..t.tiles_per_ipu, "stage");
    let work = spread(&mut g, n, 0..compute_tiles, "work");
    let acc = spread(&mut g, n, 0..compute_tiles, "acc");
    let row_c = g.add_variable(DType::I32, &[1], "row (compute)");
    let row_io = g.add_variable(DType::I32, &[1], "row (io)");
    g.set_tile_mapping(&row_c, 0).unwrap();
    g.set_tile_mapping(&row_io, compute_tiles).unwrap();
    g.create_host_read("acc", &acc).unwrap();
    g.create_host_write("row (compute)", &row_c).unwrap();
    g.create_host_write("row (io)", &row_io).unwrap();
    let add = g.add_compute_set("acc += work");
    let per = n.div_ceil(compute_tiles as usize);
    for tile in 0..compute_tiles as usize {
        let r = (tile * per).min(n)..((tile + 1) * per).min(n);
        if r.is_empty() {
            continue;
        }
        let v = g.add_vertex(add, "bench::Accumulate").unwrap();
        g.connect(v, "acc", &acc.slice(r.clone()).unwrap()).unwrap();
        g.connect(v, "x", &work.slice(r).unwrap()).unwrap();
        g.set_tile_mapping(v, tile as u32).unwrap();
    }
    let bump = g.add_compute_set("next row");
    let v = g.add_vertex(bump, "bench::NextRow").unwrap();
    g.connect(v, "rows", &row_c).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    let load = Program::copy_from_remote(buf, &stage, Some(&row_io));
    let next = Program::seq(vec![Program::execute(bump), Program::copy(&row_c, &row_io)]);
    let program = |io: Program, compute: Program| {
        Program::repeat(
            chunks,
            Program::seq(vec![
                Program::copy(&stage, &work),
                Program::overlap_io(io, compute),
                next.clone(),
            ]),
        )
    };
    let compute = Program::repeat(reps, Program::execute(add));
    let progs = vec![
        program(load.clone(), compute.clone()),
        program(Program::nop(), compute),
        program(load, Program::nop()),
    ];
    (g, progs)
}

fn bench_overlap() {
    println!(
        "== overlap: chunk i computed while chunk i+1 comes to 32 I/O tiles (GC200, modelled)"
    );
    println!(
        "  {:>10} {:>5} {:>12} {:>12} {:>13} {:>14}",
        "chunk B", "reps", "overlapped", "compute only", "transfer only", "over / larger"
    );
    // A chunk of 256 KiB takes 23,466 cycles to come (1,330 + 262,144 / 11.84); one pass of
    // the compute 6 x (10 + 46) = 336 cycles: the two cross at about 70 passes.
    let n = 1usize << 16;
    for reps in [1u32, 35, 70, 140, 280] {
        let chunks = 8;
        let (g, progs) = chunk_loop(n, chunks, reps);
        let exe = compile(&g, &progs, &CompileOptions::default()).unwrap();
        let mut e = Engine::new(&exe, EngineOptions::default()).unwrap();
        let mut cycles = Vec::new();
        for p in 0..3 {
            e.write_tensor("row (compute)", &[0i32]).unwrap();
            e.write_tensor("row (io)", &[0i32]).unwrap();
            e.enable_profiling(ProfileOptions::default());
            e.run(p).unwrap();
            cycles.push(e.take_profile().unwrap().total_cycles());
        }
        let larger = cycles[1].max(cycles[2]);
        println!(
            "  {:>10} {:>5} {:>12} {:>12} {:>13} {:>14.3}",
            n * 4,
            reps,
            cycles[0],
            cycles[1],
            cycles[2],
            cycles[0] as f64 / larger as f64
        );
    }
}

fn bench_rate() {
    println!("== rate: host time of remote-buffer copies against memcpy of the same bytes");
    let t = Target::custom(64, 600 * 1024);
    let n: usize = 8 << 20; // 32 MiB of f32
    let mut g = Graph::new(&t);
    let buf = g
        .add_remote_buffer("b", DType::F32, (n / 4) as u64, 4)
        .unwrap();
    let x = spread(&mut g, n, 0..64, "x");
    g.create_host_write("x", &x).unwrap();
    let rows = x.reshape(&[4, n / 4]).unwrap();
    let progs = [
        Program::copy_to_remote(&rows, buf, None),
        Program::copy_from_remote(buf, &rows, None),
    ];
    let exe = compile(&g, &progs, &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(1)).unwrap();
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    e.write_tensor("x", &data).unwrap();
    e.run(0).unwrap(); // rows allocated once
    let src = vec![1u8; n * 4];
    let mut dst = vec![0u8; n * 4];
    let (mut to, mut from, mut mem) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..9 {
        let s = Instant::now();
        e.run(0).unwrap();
        to.push(s.elapsed().as_secs_f64());
        let s = Instant::now();
        e.run(1).unwrap();
        from.push(s.elapsed().as_secs_f64());
        let s = Instant::now();
        dst.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&dst);
        mem.push(s.elapsed().as_secs_f64());
    }
    let (to, from, mem) = (median(to), median(from), median(mem));
    let gb = |s: f64| (n * 4) as f64 / s / 1e9;
    println!(
        "  32 MiB, medians of 9: tiles->buffer {:.2} ms ({:.2} GB/s), buffer->tiles {:.2} ms ({:.2} GB/s), memcpy {:.2} ms ({:.2} GB/s)",
        to * 1e3,
        gb(to),
        from * 1e3,
        gb(from),
        mem * 1e3,
        gb(mem)
    );
    println!(
        "  ratio to memcpy: tiles->buffer {:.2}x, buffer->tiles {:.2}x",
        to / mem,
        from / mem
    );
}

fn bench_big() {
    let budget: u64 = 2 << 30;
    let row: usize = 128 << 20; // bytes per row: one transfer's most
    let rows: u32 = 128; // 16 GiB
    println!(
        "== big: {} GiB of remote rows ({rows} x 128 MiB) with a {} GiB host budget, GC200",
        (row as u64 * u64::from(rows)) >> 30,
        budget >> 30
    );
    let t = Target::gc200();
    let n = row / 4;
    let mut g = Graph::new(&t);
    let buf = g
        .add_remote_buffer("big", DType::F32, n as u64, u64::from(rows))
        .unwrap();
    let x = spread(&mut g, n, 0..t.tiles_per_ipu, "x");
    g.create_host_write("x", &x).unwrap();
    let row_t = g.add_variable(DType::I32, &[1], "row");
    g.set_tile_mapping(&row_t, 0).unwrap();
    let bump = g.add_compute_set("next row");
    let v = g.add_vertex(bump, "bench::NextRow").unwrap();
    g.connect(v, "rows", &row_t).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    let p = Program::repeat(
        rows,
        Program::seq(vec![
            Program::copy_to_remote(&x, buf, Some(&row_t)),
            Program::execute(bump),
        ]),
    );
    let exe = compile(&g, &[p], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(
        &exe,
        EngineOptions {
            streaming_memory: StreamingMemoryBudget {
                host_bytes: budget,
                spill_dir: None,
            },
            ..EngineOptions::default()
        },
    )
    .unwrap();
    let data: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    e.write_tensor("x", &data).unwrap();
    let rss0 = peak_rss_mib();
    let s = Instant::now();
    e.run(0).unwrap();
    let wall = s.elapsed().as_secs_f64();
    let u = e.streaming_memory_use();
    println!(
        "  wall {wall:.1} s ({:.2} GB/s), {} rows written, resident {:.0} MiB, spilled {:.0} MiB",
        (row as f64 * f64::from(rows)) / wall / 1e9,
        u.rows_written,
        mib(u.resident_bytes),
        mib(u.spilled_bytes)
    );
    println!(
        "  peak RSS {:.0} MiB (before the run {rss0:.0} MiB: tile memory and the host's copy of x)",
        peak_rss_mib()
    );
    // The first (resident) and last (spilled) rows hold x.
    for r in [0, u64::from(rows) - 1] {
        let got = e.read_remote_row::<f32>("big", r).unwrap();
        assert!(got == data, "row {r} differs from what was written");
    }
    println!("  rows 0 and {} read back equal to x", rows - 1);
}

fn main() {
    let which = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_else(|| "all".into());
    let all = which == "all";
    if all || which == "bound" {
        bench_bound();
    }
    if all || which == "overlap" {
        bench_overlap();
    }
    if all || which == "rate" {
        bench_rate();
    }
    if which == "big" {
        bench_big();
    }
}
