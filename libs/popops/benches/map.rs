//! Fused `map` against the op-by-op chain and a plain Rust loop, on 10^7 `float`s over a
//! GC200: modelled cycles of both programs, host time of the engine running them, and host
//! time of the `Map` kernel alone (`codelets::map::run` on host slices) against a plain loop
//! of the same expression. Medians of 5 runs.
//!
//! `cargo bench -p popops --bench map`

mod support;

use std::time::Instant;

use poplar::profile::ProfileOptions;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
use popops::elementwise as ew;
use popops::expr::{BinaryOpType as B, Expr, UnaryOpType as U, _1, _2};
use support::median;

const N: usize = 10_000_000;
const RUNS: usize = 5;

/// Each case: its name, the fused expression (six operations), the op-by-op chain and the
/// plain loop body.
struct Case {
    name: &'static str,
    expr: Expr,
    tanh: bool,
    host: fn(f32, f32) -> f32,
}

/// `tanh(2x + y)·y − x/y` (with `tanh`) or `max((2x + y)·y − x/y, 0)`: six operations.
fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "tanh(2x+y)*y - x/y",
            expr: (_1 * 2.0 + _2).tanh() * _2 - _1 / _2,
            tanh: true,
            host: |x, y| (x * 2.0 + y).tanh() * y - x / y,
        },
        Case {
            name: "max((2x+y)*y - x/y, 0)",
            expr: ((_1 * 2.0 + _2) * _2 - _1 / _2).max(0.0),
            tanh: false,
            host: |x, y| ((x * 2.0 + y) * y - x / y).max(0.0),
        },
    ]
}

/// The chain of single-op element-wise calls, one temporary per operation.
fn chain(g: &mut Graph, c: &Case, x: &poplar::Tensor, y: &poplar::Tensor) -> Vec<Program> {
    let mut p = Vec::new();
    let two = g.add_constant(&[1], &[2.0f32], "two").unwrap();
    g.set_tile_mapping(&two, 0).unwrap();
    let a = ew::binary(g, B::Mul, x, &two, &mut p, "a").unwrap();
    let b = ew::binary(g, B::Add, &a, y, &mut p, "b").unwrap();
    let t = if c.tanh {
        ew::unary(g, U::Tanh, &b, &mut p, "t").unwrap()
    } else {
        b
    };
    let d = ew::binary(g, B::Mul, &t, y, &mut p, "d").unwrap();
    let e = ew::binary(g, B::Div, x, y, &mut p, "e").unwrap();
    let f = ew::binary(g, B::Sub, &d, &e, &mut p, "out").unwrap();
    if !c.tanh {
        let zero = g.add_constant(&[1], &[0.0f32], "zero").unwrap();
        g.set_tile_mapping(&zero, 1).unwrap();
        ew::binary_in_place(g, B::Max, &f, &zero, &mut p, "max").unwrap();
    }
    g.create_host_read("out", &f).unwrap();
    p
}

fn inputs() -> (Vec<f32>, Vec<f32>) {
    let mut r = poplar::rand::SplitMix64::new(7);
    let xs = (0..N).map(|_| r.f32_in(-3.0, 3.0)).collect();
    let ys = (0..N).map(|_| r.f32_in(0.5, 2.0)).collect();
    (xs, ys)
}

/// Compiles and runs one program `RUNS` times: (modelled cycles, median host seconds per run,
/// output).
fn engine_run(
    c: &Case,
    fused: bool,
    xs: &[f32],
    ys: &[f32],
    threads: usize,
) -> (u64, f64, Vec<f32>) {
    let target = Target::gc200();
    let mut g = Graph::new(&target);
    let x = g.add_variable(DType::F32, &[N], "x");
    let y = g.add_variable(DType::F32, &[N], "y");
    g.map_linearly(&x, 2).unwrap();
    g.map_linearly(&y, 2).unwrap();
    g.create_host_write("x", &x).unwrap();
    g.create_host_write("y", &y).unwrap();
    let prog = if fused {
        let mut p = Vec::new();
        let out = popops::map(&mut g, &c.expr, &[&x, &y], &mut p, "out").unwrap();
        g.create_host_read("out", &out).unwrap();
        p
    } else {
        chain(&mut g, c, &x, &y)
    };
    let exe = compile(&g, &[Program::seq(prog)], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(threads)).unwrap();
    e.write_tensor("x", xs).unwrap();
    e.write_tensor("y", ys).unwrap();
    e.enable_profiling(ProfileOptions::default());
    e.run(0).unwrap();
    let cycles = e.profile().unwrap().total_cycles();
    e.disable_profiling();
    let times = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            e.run(0).unwrap();
            t.elapsed().as_secs_f64()
        })
        .collect();
    (cycles, median(times), e.read_tensor::<f32>("out").unwrap())
}

fn main() {
    codelets::link();
    let (xs, ys) = inputs();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("fused map vs op-by-op chain, {N} floats on a GC200 (1,472 tiles), medians of {RUNS}");
    for c in cases() {
        println!("\n== {} ({} operations)", c.name, c.expr.num_ops());
        // The plain loop and the Map kernel alone, on the host.
        let mut out = vec![0f32; N];
        let plain = median(
            (0..RUNS)
                .map(|_| {
                    let t = Instant::now();
                    for ((o, &x), &y) in out.iter_mut().zip(&xs).zip(&ys) {
                        *o = (c.host)(x, y);
                    }
                    std::hint::black_box(&out);
                    t.elapsed().as_secs_f64()
                })
                .collect(),
        );
        let want = out.clone();
        let compiled =
            popops::expr::compile(&c.expr, &[DType::F32, DType::F32], false, "k").unwrap();
        let mut ins = codelets::map::Inputs::default();
        ins.push(codelets::map::Src::F32(&xs));
        ins.push(codelets::map::Src::F32(&ys));
        let kernel = median(
            (0..RUNS)
                .map(|_| {
                    let t = Instant::now();
                    codelets::map::run(&compiled.program, &ins, &mut out).unwrap();
                    std::hint::black_box(&out);
                    t.elapsed().as_secs_f64()
                })
                .collect(),
        );
        assert!(
            out.iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "kernel bits"
        );
        println!(
            "host, one thread: plain loop {:.1} ms, Map kernel {:.1} ms ({:.2}x the loop)",
            plain * 1e3,
            kernel * 1e3,
            kernel / plain
        );
        let (fc, ft, fo) = engine_run(&c, true, &xs, &ys, 1);
        let (cc, ct, co) = engine_run(&c, false, &xs, &ys, 1);
        assert!(
            fo.iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "fused bits"
        );
        assert!(
            co.iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "chain bits"
        );
        println!(
            "modelled: fused {fc} cycles, op by op {cc} cycles ({:.2}x fewer)",
            cc as f64 / fc as f64
        );
        println!(
            "engine, 1 thread: fused {:.1} ms ({:.2}x the plain loop), op by op {:.1} ms",
            ft * 1e3,
            ft / plain,
            ct * 1e3
        );
        if threads > 1 {
            let (_, ftn, _) = engine_run(&c, true, &xs, &ys, threads);
            let (_, ctn, _) = engine_run(&c, false, &xs, &ys, threads);
            println!(
                "engine, {threads} threads: fused {:.1} ms, op by op {:.1} ms",
                ftn * 1e3,
                ctn * 1e3
            );
        }
    }
}
