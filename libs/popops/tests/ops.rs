//! The popops helpers: vertices over the tile mapping of the output, through the full pipeline.

// The codelets' test harness (one target, a seeded generator, vertex runners), shared by path.
#[path = "../../../codelets/tests/common/mod.rs"]
mod common;

use common::*;
use poplar::{compile, CompileOptions, DType, Graph, Program};
use popops::{self as ops, BinaryOp, OpError, Operation, UnaryOp};

/// A graph on the test target with `x`, `y` (host-writable) and `z` (host-readable), each of
/// `n` floats mapped linearly with `grain` (so several tiles and regions are involved).
fn graph3(n: usize, grain: usize) -> (Graph, poplar::Tensor, poplar::Tensor, poplar::Tensor) {
    codelets::link();
    let mut g = Graph::new(&target());
    let x = g.add_variable(DType::F32, &[n], "x");
    let y = g.add_variable(DType::F32, &[n], "y");
    let z = g.add_variable(DType::F32, &[n], "z");
    g.map_linearly(&x, grain).unwrap();
    // y is mapped differently from z, so operands travel between tiles.
    g.map_linearly(&y, grain * 3).unwrap();
    g.map_linearly(&z, grain).unwrap();
    g.create_host_read_write("x", &x).unwrap();
    g.create_host_write("y", &y).unwrap();
    g.create_host_read("z", &z).unwrap();
    (g, x, y, z)
}

/// The host version of a binary operation.
type HostOp = fn(f32, f32) -> f32;

#[test]
fn binary_ops_over_the_mapping() {
    let n = 103;
    let mut r = Rng::new(20);
    let xs = r.f32s(n);
    let ys: Vec<f32> = (0..n).map(|_| r.f32_in(0.5, 2.0)).collect();
    let ops: [(BinaryOp, HostOp); 6] = [
        (BinaryOp::Add, |a, b| a + b),
        (BinaryOp::Sub, |a, b| a - b),
        (BinaryOp::Mul, |a, b| a * b),
        (BinaryOp::Div, |a, b| a / b),
        (BinaryOp::Max, f32::max),
        (BinaryOp::Min, f32::min),
    ];
    for (op, f) in ops {
        let (mut g, x, y, z) = graph3(n, 5);
        let cs = g.add_compute_set("binary");
        let vs = ops::binary(&mut g, cs, op, &x, &y, &z).unwrap();
        // z's 103 floats lie on the tiles as 30, 30, 30 and 13: split between the 6 workers in
        // whole vectors of 2 and at least 4 elements, 5 pieces of 6 and 4 of 4, 4, 4, 1.
        assert_eq!(vs.len(), 3 * 5 + 4, "vertices over the workers");
        assert_eq!(ops::worker_pieces(&g, &z, "z").unwrap().len(), vs.len());
        let exe = compile(&g, &[Program::execute(cs)], &CompileOptions::default()).unwrap();
        let mut e = engine(&exe);
        e.write_tensor("x", &xs).unwrap();
        e.write_tensor("y", &ys).unwrap();
        e.run(0).unwrap();
        let want: Vec<f32> = xs.iter().zip(&ys).map(|(&a, &b)| f(a, b)).collect();
        assert_bits_eq(&e.read_tensor::<f32>("z").unwrap(), &want, op.name());
    }
}

#[test]
fn in_place_unary_fill_copy_and_scalar_broadcast() {
    let n = 50;
    let mut r = Rng::new(21);
    let xs = r.f32s(n);
    let ys = r.f32s(n);
    let (mut g, x, y, z) = graph3(n, 4);
    let s = g.add_constant(&[1], &[3.0f32], "three").unwrap();
    g.set_tile_mapping(&s, 0).unwrap();
    let cs1 = g.add_compute_set("x+=y");
    ops::add_in_place(&mut g, cs1, &x, &y).unwrap();
    let cs2 = g.add_compute_set("z=|x|");
    ops::unary(&mut g, cs2, UnaryOp::Abs, &x, &z).unwrap();
    let cs3 = g.add_compute_set("z*=3");
    ops::binary_in_place(&mut g, cs3, BinaryOp::Mul, &z, &s).unwrap();
    let cs4 = g.add_compute_set("fill");
    let w = g.add_variable(DType::I32, &[n], "w");
    g.map_linearly(&w, 7).unwrap();
    g.create_host_read("w", &w).unwrap();
    ops::fill(&mut g, cs4, &w, 42i32).unwrap();
    let cs5 = g.add_compute_set("copy");
    let c = g.add_variable(DType::F32, &[n], "c");
    g.map_linearly(&c, 9).unwrap();
    g.create_host_read("c", &c).unwrap();
    ops::copy(&mut g, cs5, &y, &c).unwrap();
    let prog = Program::seq([cs1, cs2, cs3, cs4, cs5].map(Program::execute).to_vec());
    let exe = compile(&g, &[prog], &CompileOptions::default()).unwrap();
    let mut e = engine(&exe);
    e.write_tensor("x", &xs).unwrap();
    e.write_tensor("y", &ys).unwrap();
    e.run(0).unwrap();
    let x1: Vec<f32> = xs.iter().zip(&ys).map(|(a, b)| a + b).collect();
    assert_bits_eq(&e.read_tensor::<f32>("x").unwrap(), &x1, "x");
    let z1: Vec<f32> = x1.iter().map(|a| a.abs() * 3.0).collect();
    assert_bits_eq(&e.read_tensor::<f32>("z").unwrap(), &z1, "z");
    assert_eq!(e.read_tensor::<i32>("w").unwrap(), vec![42; n]);
    assert_bits_eq(&e.read_tensor::<f32>("c").unwrap(), &ys, "c");
}

#[test]
fn scaled_add_uses_multi_worker_for_large_regions() {
    let mut r = Rng::new(22);
    for (n, grain) in [(40, 1), (1000, 1)] {
        let xs = r.f32s(n);
        let ys = r.f32s(n);
        let (mut g, x, y, _) = graph3(n, grain);
        let cs = g.add_compute_set("axpy");
        ops::scaled_add(&mut g, cs, &x, &y, -0.75).unwrap();
        let exe = compile(&g, &[Program::execute(cs)], &CompileOptions::default()).unwrap();
        let multi = exe
            .codelets
            .values()
            .any(|c| c.name == "ScaledAddMulti<float>");
        assert_eq!(
            multi,
            n / TILES as usize >= ops::MULTI_WORKER_MIN_ELEMENTS,
            "n={n}"
        );
        let mut e = engine(&exe);
        e.write_tensor("x", &xs).unwrap();
        e.write_tensor("y", &ys).unwrap();
        e.run(0).unwrap();
        let want: Vec<f32> = xs.iter().zip(&ys).map(|(&a, &b)| a + -0.75 * b).collect();
        assert_bits_eq(&e.read_tensor::<f32>("x").unwrap(), &want, "scaled_add");
    }
}

#[test]
fn two_stage_reductions() {
    let mut r = Rng::new(23);
    for (n, grain) in [(1, 1), (10, 100), (257, 3)] {
        let xs = r.f32s(n);
        let (mut g, x, _, _) = graph3(n, grain);
        let s = g.add_variable(DType::F32, &[], "s");
        let m = g.add_variable(DType::F32, &[1], "m");
        g.set_tile_mapping(&s, 1).unwrap();
        g.set_tile_mapping(&m, 2).unwrap();
        g.create_host_read("s", &s).unwrap();
        g.create_host_read("m", &m).unwrap();
        let p1 = ops::reduce_sum(&mut g, &x, &s, "sum").unwrap();
        let p2 = ops::reduce_all(&mut g, Operation::Max, &x, &m, "max").unwrap();
        let exe = compile(
            &g,
            &[Program::seq(vec![p1, p2])],
            &CompileOptions::default(),
        )
        .unwrap();
        let mut e = engine(&exe);
        e.write_tensor("x", &xs).unwrap();
        e.run(0).unwrap();
        // The sum is grouped by tile region, so compare with a tolerance relative to the sum
        // of magnitudes (a few ulps per addition); the max is exact.
        let want: f64 = xs.iter().map(|&v| f64::from(v)).sum();
        let mag: f64 = xs.iter().map(|&v| f64::from(v.abs())).sum();
        let got = f64::from(e.read_tensor::<f32>("s").unwrap()[0]);
        assert!(
            (got - want).abs() <= 1e-6 * mag.max(1.0),
            "n={n}: {got} vs {want}"
        );
        let max = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        assert_eq!(e.read_tensor::<f32>("m").unwrap(), vec![max], "n={n}");
    }
}

#[test]
fn integer_reduce_is_exact() {
    let mut r = Rng::new(24);
    let n = 300;
    let xs = r.i32s(n);
    codelets::link();
    let mut g = Graph::new(&target());
    let x = g.add_variable(DType::I32, &[n], "x");
    g.map_linearly(&x, 8).unwrap();
    g.create_host_write("x", &x).unwrap();
    let s = g.add_variable(DType::I32, &[1], "s");
    g.set_tile_mapping(&s, 3).unwrap();
    g.create_host_read("s", &s).unwrap();
    let p = ops::reduce_sum(&mut g, &x, &s, "sum").unwrap();
    let exe = compile(&g, &[p], &CompileOptions::default()).unwrap();
    let mut e = engine(&exe);
    e.write_tensor("x", &xs).unwrap();
    e.run(0).unwrap();
    let want = xs.iter().fold(0i32, |a, &v| a.wrapping_add(v));
    assert_eq!(e.read_tensor::<i32>("s").unwrap(), vec![want]);
}

#[test]
fn helper_errors() {
    codelets::link();
    let (mut g, x, _, _) = graph3(10, 2);
    let cs = g.add_compute_set("bad");
    let short = g.add_variable(DType::F32, &[3], "short");
    g.set_tile_mapping(&short, 0).unwrap();
    match ops::add(&mut g, cs, &x, &short, &x) {
        Err(OpError::Shape { op, reason }) => {
            assert_eq!(op, "Add<float>");
            assert!(reason.contains("'in2'") && reason.contains('3'), "{reason}");
        }
        other => panic!("expected a shape error, got {other:?}"),
    }
    let ints = g.add_variable(DType::I32, &[4], "ints");
    g.set_tile_mapping(&ints, 0).unwrap();
    assert_eq!(
        ops::binary(&mut g, cs, BinaryOp::Div, &ints, &ints, &ints),
        Err(OpError::Unsupported {
            codelet: "Div<int>".into()
        })
    );
    assert!(matches!(
        ops::add(&mut g, cs, &ints, &x, &ints),
        Err(OpError::Shape { .. })
    ));
    assert!(matches!(
        ops::fill(&mut g, cs, &ints, 1.0f32),
        Err(OpError::Shape { .. })
    ));
    let unmapped = g.add_variable(DType::F32, &[10], "unmapped");
    let e = ops::add(&mut g, cs, &x, &x, &unmapped).unwrap_err();
    assert!(e.to_string().contains("mapped"), "{e}");
}

#[test]
fn dot_product() {
    let mut r = Rng::new(25);
    for (n, grain) in [(3, 10), (203, 7)] {
        let xs = r.f32s(n);
        let ys = r.f32s(n);
        let (mut g, x, y, _) = graph3(n, grain);
        let d = g.add_variable(DType::F32, &[1], "d");
        g.set_tile_mapping(&d, 3).unwrap();
        g.create_host_read("d", &d).unwrap();
        let p = ops::dot(&mut g, &x, &y, &d, "dot").unwrap();
        let exe = compile(&g, &[p], &CompileOptions::default()).unwrap();
        let mut e = engine(&exe);
        e.write_tensor("x", &xs).unwrap();
        e.write_tensor("y", &ys).unwrap();
        e.run(0).unwrap();
        let want: f64 = xs
            .iter()
            .zip(&ys)
            .map(|(&a, &b)| f64::from(a) * f64::from(b))
            .sum();
        let mag: f64 = xs
            .iter()
            .zip(&ys)
            .map(|(&a, &b)| f64::from((a * b).abs()))
            .sum();
        let got = f64::from(e.read_tensor::<f32>("d").unwrap()[0]);
        assert!(
            (got - want).abs() <= 1e-6 * mag.max(1.0),
            "n={n}: {got} vs {want}"
        );
    }
    // Integers: exact.
    codelets::link();
    let mut g = Graph::new(&target());
    let a = g.add_variable(DType::I32, &[50], "a");
    g.map_linearly(&a, 4).unwrap();
    g.create_host_write("a", &a).unwrap();
    let d = g.add_variable(DType::I32, &[1], "d");
    g.set_tile_mapping(&d, 0).unwrap();
    g.create_host_read("d", &d).unwrap();
    let p = ops::dot(&mut g, &a, &a, &d, "norm2").unwrap();
    let exe = compile(&g, &[p], &CompileOptions::default()).unwrap();
    let mut e = engine(&exe);
    let av = r.small_i32s(50);
    e.write_tensor("a", &av).unwrap();
    e.run(0).unwrap();
    assert_eq!(
        e.read_tensor::<i32>("d").unwrap(),
        vec![av.iter().map(|v| v * v).sum::<i32>()]
    );
    // Mismatched operands.
    let short = g.add_variable(DType::I32, &[5], "short");
    assert!(matches!(
        ops::dot(&mut g, &a, &short, &d, "bad"),
        Err(OpError::Shape { .. })
    ));
}
