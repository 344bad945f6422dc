//! popops' fused `map`: the bits of the op-by-op chain, fewer modelled cycles, in place,
//! typed errors, the same bits at every ISA level.

#[path = "../../../codelets/tests/common/mod.rs"]
mod common;
mod support;

use common::Rng;
use poplar::profile::ProfileOptions;
use poplar::Target;
use poplar::{compile, f16, CompileOptions, DType, Engine, EngineOptions, Graph, Program};
use popops::elementwise::{self as ew};
use popops::expr::{select, BinaryOpType as B, Expr, UnaryOpType as U, _1, _2, _3};
use popops::OpError;
use support::{input, run, target, unary_table};

/// The benchmark's expression, and a few more, fused: the bits of the same operations applied
/// one by one on the host, in f32 and in half (each result rounded to half), and fewer
/// modelled cycles than the op-by-op chain of single-op vertices with temporaries.
#[test]
fn fused_map_matches_op_by_op_and_costs_less() {
    let n = 4000;
    let mut r = Rng::new(9);
    let xs: Vec<f32> = (0..n).map(|_| r.f32_in(-3.0, 3.0)).collect();
    let ys: Vec<f32> = (0..n).map(|_| r.f32_in(0.5, 2.0)).collect();
    // tanh(x·2 + y) · y − x / y, then max with 0: seven operations.
    let fused = ((_1 * 2.0 + _2).tanh() * _2 - _1 / _2).max(0.0);
    assert_eq!(fused.num_ops(), 7);
    let host_f32 = |x: f32, y: f32| ((x * 2.0 + y).tanh() * y - x / y).max(0.0);
    let rh = |v: f32| f16::from_f32(v).to_f32();
    let host_f16 = |x: f32, y: f32| {
        let a = rh(x * 2.0);
        let b = rh(a + y);
        let c = rh(b.tanh());
        let d = rh(c * y);
        let e = rh(x / y);
        rh(rh(d - e).max(0.0))
    };
    for dtype in [DType::F32, DType::F16] {
        // Fused.
        let build = |fuse: bool| {
            let mut g = Graph::new(&target(true));
            codelets::link();
            let (x, y) = if dtype == DType::F32 {
                (
                    input(&mut g, "x", &[n], &xs, 2),
                    input(&mut g, "y", &[n], &ys, 2),
                )
            } else {
                let xh: Vec<f16> = xs.iter().map(|&v| f16::from_f32(v)).collect();
                let yh: Vec<f16> = ys.iter().map(|&v| f16::from_f32(v)).collect();
                (
                    input(&mut g, "x", &[n], &xh, 4),
                    input(&mut g, "y", &[n], &yh, 4),
                )
            };
            let mut prog = Vec::new();
            let out = if fuse {
                popops::map(&mut g, &fused, &[&x, &y], &mut prog, "fused").unwrap()
            } else {
                // The chain: one single-op vertex set and one temporary per operation.
                let (two, zero) = if dtype == DType::F32 {
                    (
                        g.add_constant(&[1], &[2.0f32], "two").unwrap(),
                        g.add_constant(&[1], &[0.0f32], "zero").unwrap(),
                    )
                } else {
                    (
                        g.add_constant(&[1], &[f16::from_f32(2.0)], "two").unwrap(),
                        g.add_constant(&[1], &[f16::from_f32(0.0)], "zero").unwrap(),
                    )
                };
                g.set_tile_mapping(&two, 0).unwrap();
                g.set_tile_mapping(&zero, 1).unwrap();
                let a = ew::binary(&mut g, B::Mul, &x, &two, &mut prog, "a").unwrap();
                let b = ew::binary(&mut g, B::Add, &a, &y, &mut prog, "b").unwrap();
                let c = ew::unary(&mut g, U::Tanh, &b, &mut prog, "c").unwrap();
                let d = ew::binary(&mut g, B::Mul, &c, &y, &mut prog, "d").unwrap();
                let e = ew::binary(&mut g, B::Div, &x, &y, &mut prog, "e").unwrap();
                let f = ew::binary(&mut g, B::Sub, &d, &e, &mut prog, "f").unwrap();
                ew::binary_in_place(&mut g, B::Max, &f, &zero, &mut prog, "g").unwrap();
                f
            };
            g.create_host_read("out", &out).unwrap();
            let exe = compile(&g, &[Program::seq(prog)], &CompileOptions::default()).unwrap();
            let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
            e.enable_profiling(ProfileOptions::default());
            e.run(0).unwrap();
            let cycles = e.profile().unwrap().total_cycles();
            let bits: Vec<u32> = if dtype == DType::F32 {
                e.read_tensor::<f32>("out")
                    .unwrap()
                    .iter()
                    .map(|v| v.to_bits())
                    .collect()
            } else {
                e.read_tensor::<f16>("out")
                    .unwrap()
                    .iter()
                    .map(|v| v.to_f32().to_bits())
                    .collect()
            };
            (bits, cycles)
        };
        let (fused_bits, fused_cycles) = build(true);
        let (chain_bits, chain_cycles) = build(false);
        for i in 0..n {
            let (x, y) = if dtype == DType::F32 {
                (xs[i], ys[i])
            } else {
                (rh(xs[i]), rh(ys[i]))
            };
            let want = if dtype == DType::F32 {
                host_f32(x, y)
            } else {
                host_f16(x, y)
            };
            assert_eq!(
                fused_bits[i],
                want.to_bits(),
                "{dtype} fused[{i}] ({x}, {y})"
            );
            assert_eq!(chain_bits[i], want.to_bits(), "{dtype} chain[{i}]");
        }
        println!("{dtype}: fused {fused_cycles} cycles, op by op {chain_cycles}");
        assert!(
            fused_cycles < chain_cycles,
            "{dtype}: fused {fused_cycles} >= chain {chain_cycles}"
        );
    }
}

#[test]
fn map_in_place_and_typed_errors() {
    let mut g = Graph::new(&target(false));
    codelets::link();
    let xs: Vec<f32> = (0..20).map(|i| i as f32 - 10.0).collect();
    let x = input(&mut g, "x", &[20], &xs, 2);
    let k = input(&mut g, "k", &[20], &(0..20).collect::<Vec<i32>>(), 2);
    let mut prog = Vec::new();
    // x = select(x·x, -x, k even) with an integer test and a cast.
    let e = select(_1 * _1, -_1, (_2 % 2).equal(0));
    popops::map_in_place(&mut g, &e, &[&x, &k], &mut prog, "sel").unwrap();
    let kf = popops::map(&mut g, &(_1.cast(DType::F32) * 0.5), &[&k], &mut prog, "kf").unwrap();
    g.create_host_read("x", &x).unwrap();
    g.create_host_read("kf", &kf).unwrap();

    // Typed errors.
    let h = g.add_variable(DType::F16, &[20], "h");
    g.map_linearly(&h, 4).unwrap();
    let err = popops::map(&mut g, &(_1 + _2), &[&x, &h], &mut prog, "mixed").unwrap_err();
    assert!(
        matches!(&err, OpError::DType { op, got: DType::F16, .. } if op == "mixed"),
        "{err}"
    );
    let err = popops::map(&mut g, &(_1 + _3), &[&x, &h], &mut prog, "ph").unwrap_err();
    assert!(
        matches!(err, OpError::Expr { .. }) && err.to_string().contains("_3"),
        "{err}"
    );
    let err = ew::unary(&mut g, U::Sqrt, &k, &mut prog, "isqrt").unwrap_err();
    assert!(
        matches!(
            err,
            OpError::DType {
                got: DType::I32,
                ..
            }
        ),
        "{err}"
    );
    let err = popops::map(&mut g, &(_1 + 0.5), &[&k], &mut prog, "frac").unwrap_err();
    assert!(err.to_string().contains("0.5"), "{err}");
    // In place into a tensor of the wrong type.
    let err = popops::map_in_place(&mut g, &_1.gt(0.0), &[&x], &mut prog, "cmp").unwrap_err();
    assert!(
        matches!(
            err,
            OpError::DType {
                got: DType::F32,
                ..
            }
        ),
        "{err}"
    );
    let err = popops::map_in_place(&mut g, &_1, &[], &mut prog, "none").unwrap_err();
    assert!(matches!(err, OpError::Expr { .. }), "{err}");

    let e = run(&g, prog);
    let got = e.read_tensor::<f32>("x").unwrap();
    for i in 0..20 {
        let v = xs[i];
        let want = if i % 2 == 0 { v * v } else { -v };
        assert_eq!(got[i], want, "x[{i}]");
    }
    let got = e.read_tensor::<f32>("kf").unwrap();
    assert_eq!(got, (0..20).map(|i| i as f32 * 0.5).collect::<Vec<_>>());
}

#[test]
fn the_chain_of_a_single_op_is_costed_as_poplibs_vertex() {
    // map(_1 + _2) over one tile's 100 floats on one worker piece: poplibs' BinaryOp2D,
    // 5 + 50 · 3; a fused two-op expression uses the map estimate.
    let t = Target {
        workers_per_tile: 1,
        ..target(false)
    };
    let mut g = Graph::new(&t);
    codelets::link();
    let x = g.add_variable(DType::F32, &[100], "x");
    g.set_tile_mapping(&x, 0).unwrap();
    let mut cs = g.add_compute_set("cs");
    popops::map(&mut g, &(_1 + 1.0), &[&x], &mut cs, "add").unwrap();
    let add_only = Expr::Binary(B::Add, Box::new(_1), Box::new(_2));
    popops::map(&mut g, &add_only, &[&x, &x], &mut cs, "add2").unwrap();
    let exe = compile(&g, &[Program::execute(cs)], &CompileOptions::default()).unwrap();
    let mut cycles: Vec<u64> = exe
        .computes
        .values()
        .flat_map(|c| &c.tiles)
        .flat_map(|t| &t.vertices)
        .map(|v| v.cycles)
        .collect();
    cycles.sort();
    let prog = popops::expr::compile(&(_1 + 1.0), &[DType::F32], false, "x").unwrap();
    assert_eq!(
        cycles,
        vec![5 + 50 * 3, codelets::cycles::map(&prog.program, 100)]
    );
    // The map estimate: 13 + 3 instructions (load, constant, add) + 50 vectors of (load 1 +
    // add 1 + store 1 + loop 1).
    assert_eq!(codelets::cycles::map(&prog.program, 100), 13 + 3 + 50 * 4);
    let _ = _3;
}

/// Every float operation of `Map`, f32 and half, gives the same bits at every ISA level this
/// host supports, with flushing on and off, on 1 and 2 threads (edge pairs and random bits).
#[test]
fn map_gives_the_same_bits_at_every_isa_level() {
    use poplar::isa::IsaLevel;
    let e = poplar::isa::EDGE_VALUES;
    let m = e.len();
    let mut xs: Vec<f32> = (0..m * m).map(|i| e[i / m]).collect();
    let mut ys: Vec<f32> = (0..m * m).map(|i| e[i % m]).collect();
    let mut r = Rng::new(10);
    while xs.len() < 600 {
        xs.push(f32::from_bits(r.next_u64() as u32));
        ys.push(r.f32_in(-4.0, 4.0));
    }
    let n = xs.len();
    let unary = unary_table();
    let binary = [
        B::Add,
        B::Sub,
        B::Mul,
        B::Div,
        B::Pow,
        B::Rem,
        B::Min,
        B::Max,
        B::Atan2,
    ];
    let run_at = |level: IsaLevel, flush: bool, threads: usize| -> Vec<u32> {
        let mut g = Graph::new(&target(flush));
        codelets::link();
        let x = input(&mut g, "x", &[n], &xs, 2);
        let y = input(&mut g, "y", &[n], &ys, 2);
        let xh: Vec<f16> = xs.iter().map(|&v| f16::from_f32(v)).collect();
        let x16 = input(&mut g, "xh", &[n], &xh, 4);
        let mut cs: Vec<Program> = Vec::new();
        let mut outs = Vec::new();
        for (op, _, _) in &unary {
            outs.push(ew::unary(&mut g, *op, &x, &mut cs, "u").unwrap());
            let h = ew::unary(&mut g, *op, &x16, &mut cs, "uh").unwrap();
            outs.push(popops::cast::cast(&mut g, &h, DType::F32, &mut cs, "c").unwrap());
        }
        for op in binary {
            outs.push(ew::binary(&mut g, op, &x, &y, &mut cs, "b").unwrap());
        }
        outs.push(popops::map(&mut g, &_1.clamp(_2, 1.0), &[&x, &y], &mut cs, "cl").unwrap());
        outs.push(
            popops::map(
                &mut g,
                &select(_1, _2, _1.lt(_2)).cast(DType::F16).cast(DType::F32),
                &[&x, &y],
                &mut cs,
                "s",
            )
            .unwrap(),
        );
        let all = poplar::concat(&outs).unwrap();
        g.create_host_read("all", &all).unwrap();
        let exe = compile(&g, &[Program::seq(cs)], &CompileOptions::default()).unwrap();
        let mut e = Engine::new(
            &exe,
            EngineOptions {
                threads: Some(threads),
                isa: Some(level),
                ..Default::default()
            },
        )
        .unwrap();
        e.run(0).unwrap();
        e.read_tensor::<f32>("all")
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect()
    };
    for flush in [false, true] {
        let base = run_at(IsaLevel::Baseline, flush, 1);
        for level in poplar::isa::supported() {
            for threads in [1, 2] {
                let got = run_at(level, flush, threads);
                if let Some(i) = got.iter().zip(&base).position(|(a, b)| a != b) {
                    panic!(
                        "{level}, flush {flush}, {threads} threads: output {} element {} is \
                         {:#x}, the baseline's {:#x}",
                        i / n,
                        i % n,
                        got[i],
                        base[i]
                    );
                }
            }
        }
    }
}
