//! popops' element-wise operations and fused `map`, through the whole pipeline, against host
//! references written here (f64 where it matters).
//!
//! Tolerances (in f32 ulps against the f64 reference rounded to f32, `half` in half ulps):
//! exact (0) for `+ - * /`, `sqrt`, `abs`, `neg`, `sign`, `square`, `inverse`, `floor`,
//! `ceil`, `round`, `trunc`, `min`, `max`, `rem`, the comparisons, the `is_*` tests, the casts
//! and all integer and `bool` operations; the libm functions and the compositions at
//! [`ulp_bound`]. NaN must give NaN, and every NaN is the quiet NaN of positive sign.

#[path = "../../../codelets/tests/common/mod.rs"]
mod common;
mod support;

use common::Rng;
use poplar::Target;
use poplar::{compile, f16, CompileOptions, DType, Engine, EngineOptions, Graph, Program};
use popops::elementwise::{self as ew};
use popops::expr::{BinaryOpType as B, UnaryOpType as U, _1, _2, _3, _4};
use popops::OpError;
use support::{f32_inputs, input, run, target, ulp_bound, ulps, unary_table};

#[test]
fn every_unary_float_op_against_f64() {
    let xs = f32_inputs(1);
    let n = xs.len();
    let table = unary_table();
    let mut g = Graph::new(&target(false));
    codelets::link();
    let x = input(&mut g, "x", &[n], &xs, 2);
    let h: Vec<f16> = xs.iter().map(|&v| f16::from_f32(v)).collect();
    let xh = input(&mut g, "xh", &[n], &h, 4);
    let mut prog = Vec::new();
    for (op, _, _) in &table {
        let y = ew::unary(&mut g, *op, &x, &mut prog, &format!("{op:?}")).unwrap();
        g.create_host_read(&format!("{op:?}"), &y).unwrap();
        let yh = ew::unary(&mut g, *op, &xh, &mut prog, &format!("{op:?}_h")).unwrap();
        g.create_host_read(&format!("{op:?}_h"), &yh).unwrap();
    }
    for (op, _) in [(U::IsFinite, 0), (U::IsInf, 1), (U::IsNan, 2)] {
        let y = ew::unary(&mut g, op, &x, &mut prog, &format!("{op:?}")).unwrap();
        assert_eq!(y.dtype(), DType::Bool);
        g.create_host_read(&format!("{op:?}"), &y).unwrap();
    }
    let e = run(&g, prog);
    let mut report = Vec::new();
    for (op, f, bound) in &table {
        let got = e.read_tensor::<f32>(&format!("{op:?}")).unwrap();
        let goth = e.read_tensor::<f16>(&format!("{op:?}_h")).unwrap();
        let mut worst = 0;
        for i in 0..n {
            let want = f(f64::from(xs[i])) as f32;
            let d = ulps(got[i], want);
            assert!(
                d <= *bound,
                "{op:?}({:e} = {:#x}) = {:e}, want {want:e} ({d} ulps > {bound})",
                xs[i],
                xs[i].to_bits(),
                got[i]
            );
            if *bound == 0 && !want.is_nan() {
                assert_eq!(got[i].to_bits(), want.to_bits(), "{op:?}({:e}) sign", xs[i]);
            }
            if got[i].is_nan() {
                assert_eq!(
                    got[i].to_bits(),
                    f32::NAN.to_bits(),
                    "{op:?}: canonical NaN"
                );
            }
            worst = worst.max(d);
            // half: computed in f32 from the f16 operand, rounded once to f16.
            let hx = h[i].to_f32();
            let want_h = f16::from_f32(f(f64::from(hx)) as f32);
            let dh = ulps(goth[i].to_f32(), want_h.to_f32());
            // An f32 ulp error can move the f16 rounding by one half ulp at most.
            let hb = if *bound == 0 { 0 } else { 1 << 13 };
            assert!(
                dh <= hb,
                "{op:?}<half>({hx:e}) = {}, want {want_h}",
                goth[i]
            );
        }
        report.push(format!("{op:?} {worst}"));
    }
    println!("max ulps: {}", report.join(", "));
    let tests: [(U, Pred1); 3] = [
        (U::IsFinite, f32::is_finite),
        (U::IsInf, f32::is_infinite),
        (U::IsNan, f32::is_nan),
    ];
    for (op, f) in tests {
        let got = e.read_tensor::<bool>(&format!("{op:?}")).unwrap();
        let want: Vec<bool> = xs.iter().map(|&v| f(v)).collect();
        assert_eq!(got, want, "{op:?}");
    }
    assert_eq!(ulp_bound(U::Exp), 1);
}

type Ref2 = fn(f64, f64) -> f64;
type Pred1 = fn(f32) -> bool;
type Pred2 = fn(&f32, &f32) -> bool;

#[test]
fn every_binary_float_op_against_f64() {
    // Every pair of a set of edge and random values.
    let base: Vec<f32> = f32_inputs(2).into_iter().step_by(3).collect();
    let m = base.len();
    let xs: Vec<f32> = (0..m * m).map(|i| base[i / m]).collect();
    let ys: Vec<f32> = (0..m * m).map(|i| base[i % m]).collect();
    let n = xs.len();
    let table: Vec<(B, Ref2, u64)> = vec![
        (B::Add, |a, b| a + b, 0),
        (B::Sub, |a, b| a - b, 0),
        (B::Mul, |a, b| a * b, 0),
        (B::Div, |a, b| a / b, 0),
        (B::Rem, |a, b| a % b, 0),
        (B::Min, f64::min, 0),
        (B::Max, f64::max, 0),
        (B::Pow, f64::powf, 1),
        (B::Atan2, f64::atan2, 1),
    ];
    let mut g = Graph::new(&target(false));
    codelets::link();
    let x = input(&mut g, "x", &[n], &xs, 2);
    let y = input(&mut g, "y", &[n], &ys, 6);
    let mut prog = Vec::new();
    for (op, _, _) in &table {
        let z = ew::binary(&mut g, *op, &x, &y, &mut prog, &format!("{op:?}")).unwrap();
        g.create_host_read(&format!("{op:?}"), &z).unwrap();
    }
    let cmps: [(B, Pred2); 6] = [
        (B::Eq, f32::eq),
        (B::Ne, f32::ne),
        (B::Lt, f32::lt),
        (B::Le, f32::le),
        (B::Gt, f32::gt),
        (B::Ge, f32::ge),
    ];
    for (op, _) in &cmps {
        let z = ew::binary(&mut g, *op, &x, &y, &mut prog, &format!("{op:?}")).unwrap();
        g.create_host_read(&format!("{op:?}"), &z).unwrap();
    }
    let e = run(&g, prog);
    for (op, f, bound) in &table {
        let got = e.read_tensor::<f32>(&format!("{op:?}")).unwrap();
        for i in 0..n {
            let (a, b) = (f64::from(xs[i]), f64::from(ys[i]));
            // f32::min/max: a NaN operand yields the other, as f64's do.
            let want = f(a, b) as f32;
            let d = ulps(got[i], want);
            assert!(
                d <= *bound,
                "{op:?}({:e}, {:e}) = {:e}, want {want:e}",
                xs[i],
                ys[i],
                got[i]
            );
            if *bound == 0 && !want.is_nan() && !(matches!(op, B::Min | B::Max) && want == 0.0) {
                assert_eq!(got[i].to_bits(), want.to_bits(), "{op:?}({a:e}, {b:e})");
            }
        }
    }
    for (op, f) in &cmps {
        let got = e.read_tensor::<bool>(&format!("{op:?}")).unwrap();
        for i in 0..n {
            assert_eq!(got[i], f(&xs[i], &ys[i]), "{op:?}({}, {})", xs[i], ys[i]);
        }
    }
}

/// `a^b` modulo 2³² by square-and-multiply on `u64` bits (the low 32 bits are those of the
/// exact power); a negative power truncates `1 / a^|b|` toward zero.
fn pow_mod_2_32(a: i64, b: i64) -> i64 {
    if b < 0 {
        return match a {
            1 => 1,
            -1 if b % 2 == 0 => 1,
            -1 => -1,
            _ => 0,
        };
    }
    let (mut base, mut e, mut acc) = (a as u64 & 0xFFFF_FFFF, b as u64, 1u64);
    while e > 0 {
        if e & 1 == 1 {
            acc = (acc * base) & 0xFFFF_FFFF;
        }
        base = (base * base) & 0xFFFF_FFFF;
        e >>= 1;
    }
    acc as i64
}

#[test]
fn integer_and_bool_ops_against_i64() {
    let mut r = Rng::new(3);
    let mut a = vec![0, 1, -1, i32::MIN, i32::MAX, 7, -7, 31, 32, 33];
    a.extend(r.i32s(30));
    a.extend(r.small_i32s(20));
    let m = a.len();
    let xs: Vec<i32> = (0..m * m).map(|i| a[i / m]).collect();
    let ys: Vec<i32> = (0..m * m).map(|i| a[i % m]).collect();
    let n = xs.len();
    let xu: Vec<u32> = xs.iter().map(|&v| v as u32).collect();
    let yu: Vec<u32> = ys.iter().map(|&v| v as u32).collect();
    let mut g = Graph::new(&target(false));
    codelets::link();
    let x = input(&mut g, "x", &[n], &xs, 1);
    let y = input(&mut g, "y", &[n], &ys, 3);
    let xu_t = input(&mut g, "xu", &[n], &xu, 5);
    let yu_t = input(&mut g, "yu", &[n], &yu, 2);
    let ops = [
        B::Add,
        B::Sub,
        B::Mul,
        B::Div,
        B::Rem,
        B::Pow,
        B::Min,
        B::Max,
        B::BitwiseAnd,
        B::BitwiseOr,
        B::BitwiseXor,
        B::ShiftLeft,
        B::ShiftRight,
        B::Lt,
        B::Ge,
        B::Eq,
    ];
    let mut prog = Vec::new();
    for op in ops {
        let z = ew::binary(&mut g, op, &x, &y, &mut prog, &format!("i{op:?}")).unwrap();
        g.create_host_read(&format!("i{op:?}"), &z).unwrap();
        let z = ew::binary(&mut g, op, &xu_t, &yu_t, &mut prog, &format!("u{op:?}")).unwrap();
        g.create_host_read(&format!("u{op:?}"), &z).unwrap();
    }
    for op in [U::Abs, U::Neg, U::Sign, U::Square, U::BitwiseNot] {
        let z = ew::unary(&mut g, op, &x, &mut prog, &format!("i{op:?}")).unwrap();
        g.create_host_read(&format!("i{op:?}"), &z).unwrap();
    }
    // bool: and, or, xor (as &, |, ^), not, equality.
    let bx: Vec<bool> = xs.iter().map(|v| v & 1 == 1).collect();
    let by: Vec<bool> = ys.iter().map(|v| v & 2 == 2).collect();
    let bxt = input(&mut g, "bx", &[n], &bx, 8);
    let byt = input(&mut g, "by", &[n], &by, 4);
    let logic = popops::map(
        &mut g,
        &((_1 & _2) ^ (!_1 | _2)).equal(_1.not_equal(_2)),
        &[&bxt, &byt],
        &mut prog,
        "logic",
    )
    .unwrap();
    g.create_host_read("logic", &logic).unwrap();
    let e = run(&g, prog);

    // Host references in i64, reduced to 32 bits (wrapping); division by zero gives 0.
    let wrap = |v: i64| v as i32;
    for op in ops {
        let got = e.read_tensor::<i32>(&format!("i{op:?}"));
        let gotb = e.read_tensor::<bool>(&format!("i{op:?}"));
        let gotu = e.read_tensor::<u32>(&format!("u{op:?}"));
        let gotub = e.read_tensor::<bool>(&format!("u{op:?}"));
        for i in 0..n {
            let (a, b) = (i64::from(xs[i]), i64::from(ys[i]));
            let (ua, ub) = (i64::from(xu[i]), i64::from(yu[i]));
            let sh = (b & 31) as u32;
            let (wi, wu): (i64, i64) = match op {
                B::Add => (a + b, ua + ub),
                B::Sub => (a - b, ua - ub),
                B::Mul => (a.wrapping_mul(b), ua.wrapping_mul(ub)),
                B::Div => (
                    if b == 0 { 0 } else { a / b },
                    if ub == 0 { 0 } else { ua / ub },
                ),
                B::Rem => (
                    if b == 0 { 0 } else { a % b },
                    if ub == 0 { 0 } else { ua % ub },
                ),
                B::Pow => (pow_mod_2_32(a, b), pow_mod_2_32(ua, ub)),
                B::Min => (a.min(b), ua.min(ub)),
                B::Max => (a.max(b), ua.max(ub)),
                B::BitwiseAnd => (a & b, ua & ub),
                B::BitwiseOr => (a | b, ua | ub),
                B::BitwiseXor => (a ^ b, ua ^ ub),
                B::ShiftLeft => (a << sh, ua << sh),
                B::ShiftRight => (a >> sh, ua >> sh),
                B::Lt => (i64::from(a < b), i64::from(ua < ub)),
                B::Ge => (i64::from(a >= b), i64::from(ua >= ub)),
                B::Eq => (i64::from(a == b), i64::from(ua == ub)),
                _ => unreachable!(),
            };
            if matches!(op, B::Lt | B::Ge | B::Eq) {
                assert_eq!(gotb.as_ref().unwrap()[i], wi == 1, "{op:?}({a}, {b})");
                assert_eq!(gotub.as_ref().unwrap()[i], wu == 1, "{op:?}u({ua}, {ub})");
            } else {
                assert_eq!(got.as_ref().unwrap()[i], wrap(wi), "{op:?}({a}, {b})");
                assert_eq!(gotu.as_ref().unwrap()[i], wu as u32, "{op:?}u({ua}, {ub})");
            }
        }
    }
    for op in [U::Abs, U::Neg, U::Sign, U::Square, U::BitwiseNot] {
        let got = e.read_tensor::<i32>(&format!("i{op:?}")).unwrap();
        for i in 0..n {
            let a = i64::from(xs[i]);
            let w = match op {
                U::Abs => a.abs(),
                U::Neg => -a,
                U::Sign => a.signum(),
                U::Square => a.wrapping_mul(a),
                U::BitwiseNot => -a - 1,
                _ => unreachable!(),
            };
            assert_eq!(got[i], wrap(w), "{op:?}({a})");
        }
    }
    let got = e.read_tensor::<bool>("logic").unwrap();
    for i in 0..n {
        let (p, q) = (bx[i], by[i]);
        let w = ((p && q) != (!p || q)) == (p != q);
        assert_eq!(got[i], w, "logic({p}, {q})");
    }
}

#[test]
fn clamp_and_select() {
    let xs = f32_inputs(4);
    let n = xs.len();
    let mut g = Graph::new(&target(false));
    codelets::link();
    let x = input(&mut g, "x", &[n], &xs, 2);
    let lo = input(&mut g, "lo", &[1], &[-1.5f32], 1);
    let hi = input(&mut g, "hi", &[1], &[2.0f32], 1);
    let c: Vec<bool> = (0..n).map(|i| i % 3 == 0).collect();
    let ct = input(&mut g, "c", &[n], &c, 8);
    let mut prog = Vec::new();
    let cl = ew::clamp(&mut g, &x, &lo, &hi, &mut prog, "clamp").unwrap();
    let neg = popops::map(&mut g, &-_1, &[&x], &mut prog, "neg").unwrap();
    let se = ew::select(&mut g, &x, &neg, &ct, &mut prog, "select").unwrap();
    // Integers, through an expression with constants.
    let is: Vec<i32> = (0..n as i32).map(|i| i * 37 - 1000).collect();
    let it = input(&mut g, "i", &[n], &is, 3);
    let ic = popops::map(&mut g, &_1.clamp(-100, 250), &[&it], &mut prog, "iclamp").unwrap();
    for (name, t) in [("clamp", &cl), ("select", &se), ("iclamp", &ic)] {
        g.create_host_read(name, t).unwrap();
    }
    let e = run(&g, prog);
    let got = e.read_tensor::<f32>("clamp").unwrap();
    for i in 0..n {
        let want = if xs[i].is_nan() {
            // max(NaN, lo) = lo.
            -1.5
        } else {
            xs[i].clamp(-1.5, 2.0)
        };
        assert_eq!(got[i].to_bits(), want.to_bits(), "clamp({})", xs[i]);
    }
    let got = e.read_tensor::<f32>("select").unwrap();
    for i in 0..n {
        let want = if c[i] { xs[i] } else { -xs[i] };
        assert_eq!(ulps(got[i], want), 0, "select({})", xs[i]);
    }
    let got = e.read_tensor::<i32>("iclamp").unwrap();
    let want: Vec<i32> = is.iter().map(|&v| v.clamp(-100, 250)).collect();
    assert_eq!(got, want);
}

/// Row-major index of `shape` element `i` into an operand of `oshape` broadcast to `shape`.
fn bcast_index(i: usize, shape: &[usize], oshape: &[usize]) -> usize {
    let mut rem = i;
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = rem % shape[d];
        rem /= shape[d];
    }
    let off = shape.len() - oshape.len();
    let mut j = 0;
    for (k, &s) in oshape.iter().enumerate() {
        j = j * s + if s == 1 { 0 } else { idx[off + k] };
    }
    j
}

#[test]
fn broadcasting_shapes_and_errors() {
    let mut r = Rng::new(5);
    let a_shape = [2usize, 3, 4];
    let b_shape = [3usize, 1];
    let c_shape = [4usize];
    let av = r.f32s(24);
    let bv = r.f32s(3);
    let cv = r.f32s(4);
    let mut g = Graph::new(&target(false));
    codelets::link();
    let a = input(&mut g, "a", &a_shape, &av, 2);
    let b = input(&mut g, "b", &b_shape, &bv, 1);
    let c = input(&mut g, "c", &c_shape, &cv, 4);
    let s = input(&mut g, "s", &[], &[0.25f32], 1);
    let mut prog = Vec::new();
    let expr = (_1 - _2) * _3 + _4;
    let y = popops::map(&mut g, &expr, &[&a, &b, &c, &s], &mut prog, "y").unwrap();
    assert_eq!(y.shape(), &a_shape);
    // [3, 1] against [4] alone: [3, 4].
    let z = ew::binary(&mut g, B::Mul, &b, &c, &mut prog, "z").unwrap();
    assert_eq!(z.shape(), &[3, 4]);
    g.create_host_read("y", &y).unwrap();
    g.create_host_read("z", &z).unwrap();
    // In place, with a broadcast operand.
    let w = input(&mut g, "w", &a_shape, &av, 3);
    popops::map_in_place(&mut g, &(_1 * _2), &[&w, &c], &mut prog, "w*=c").unwrap();
    g.create_host_read("w", &w).unwrap();

    // Shapes that do not broadcast: typed, naming both tensors and the axis.
    let bad = g.add_variable(DType::F32, &[2, 5], "bad");
    g.map_linearly(&bad, 1).unwrap();
    match popops::map(&mut g, &(_1 + _2), &[&a, &bad], &mut prog, "oops") {
        Err(OpError::Broadcast(b)) => {
            let popops::Broadcast {
                op,
                tensor,
                other,
                axis,
                size,
                other_size,
                ..
            } = *b;
            assert_eq!(op, "oops");
            assert!(
                tensor.contains("'bad'") && other.contains("'a'"),
                "{tensor} / {other}"
            );
            // Aligned from the last axis, [2, 5] meets [2, 3, 4] at axes 1 and 2: 2 against 3.
            assert_eq!((axis, size, other_size), (1, 2, 3));
        }
        other => panic!("expected a broadcast error, got {other:?}"),
    }
    // In place into a tensor smaller than the broadcast shape.
    let e = popops::map_in_place(&mut g, &(_1 + _2), &[&c, &a], &mut prog, "small").unwrap_err();
    assert!(matches!(&e, OpError::Broadcast(b) if b.axis == 0), "{e}");
    let e = ew::binary(
        &mut g,
        B::Add,
        &a,
        &w.reshape(&[24]).unwrap(),
        &mut prog,
        "r",
    )
    .unwrap_err();
    assert!(e.to_string().contains("axis 2"), "{e}");

    let e = run(&g, prog);
    let got = e.read_tensor::<f32>("y").unwrap();
    for i in 0..24 {
        let (x1, x2, x3) = (
            av[i],
            bv[bcast_index(i, &a_shape, &b_shape)],
            cv[bcast_index(i, &a_shape, &c_shape)],
        );
        let want = (x1 - x2) * x3 + 0.25;
        assert_eq!(got[i].to_bits(), want.to_bits(), "y[{i}]");
    }
    let got = e.read_tensor::<f32>("z").unwrap();
    for i in 0..12 {
        let want = bv[i / 4] * cv[i % 4];
        assert_eq!(got[i].to_bits(), want.to_bits(), "z[{i}]");
    }
    let got = e.read_tensor::<f32>("w").unwrap();
    for i in 0..24 {
        assert_eq!(got[i].to_bits(), (av[i] * cv[i % 4]).to_bits(), "w[{i}]");
    }
}

#[test]
fn empty_tensors_and_non_contiguous_views() {
    let mut r = Rng::new(6);
    let mut g = Graph::new(&target(false));
    codelets::link();
    let mut prog = Vec::new();
    // Empty: [0, 4] with [4].
    let e0 = g.add_variable(DType::F32, &[0, 4], "e0");
    let c = input(&mut g, "c", &[4], &[1.0f32, 2.0, 3.0, 4.0], 1);
    let y = popops::map(&mut g, &(_1 + _2).exp(), &[&e0, &c], &mut prog, "empty").unwrap();
    assert_eq!(y.shape(), &[0, 4]);
    // A transposed matrix and a strided slice as inputs; in place into a column slice.
    let mv = r.f32s(6 * 5);
    let m = input(&mut g, "m", &[6, 5], &mv, 3);
    let mt = m.transpose().unwrap(); // [5, 6]
    let v = input(&mut g, "v", &[5, 6], &r.f32s(30), 4);
    let t = popops::map(&mut g, &(_1 * _2 - 1.0), &[&mt, &v], &mut prog, "t").unwrap();
    g.create_host_read("t", &t).unwrap();
    let col = m.slice_dim(1, 2..3).unwrap(); // [6, 1], not contiguous
    popops::map_in_place(&mut g, &(_1.abs() + 10.0), &[&col], &mut prog, "col").unwrap();
    g.create_host_read("m", &m).unwrap();
    let e = run(&g, prog);
    assert_eq!(e.read_tensor::<f32>("t").unwrap().len(), 30);
    let got_m = e.read_tensor::<f32>("m").unwrap();
    for i in 0..6 {
        for j in 0..5 {
            let want = if j == 2 {
                mv[i * 5 + j].abs() + 10.0
            } else {
                mv[i * 5 + j]
            };
            assert_eq!(got_m[i * 5 + j].to_bits(), want.to_bits(), "m[{i}][{j}]");
        }
    }
}

#[test]
fn transposed_operand_values() {
    let mut r = Rng::new(7);
    let mv = r.f32s(6 * 5);
    let vv = r.f32s(30);
    let mut g = Graph::new(&target(false));
    codelets::link();
    let m = input(&mut g, "m", &[6, 5], &mv, 3);
    let v = input(&mut g, "v", &[5, 6], &vv, 4);
    let mut prog = Vec::new();
    let t = popops::map(
        &mut g,
        &(_1 * _2 - 1.0),
        &[&m.transpose().unwrap(), &v],
        &mut prog,
        "t",
    )
    .unwrap();
    g.create_host_read("t", &t).unwrap();
    let e = run(&g, prog);
    let got = e.read_tensor::<f32>("t").unwrap();
    for i in 0..5 {
        for j in 0..6 {
            let want = mv[j * 5 + i] * vv[i * 6 + j] - 1.0;
            assert_eq!(got[i * 6 + j].to_bits(), want.to_bits(), "t[{i}][{j}]");
        }
    }
}

#[test]
fn spread_over_many_tiles_with_flushing() {
    // 64 tiles, subnormal flushing on: the reference flushes inputs and results.
    let t = Target::custom(64, 64 * 1024);
    assert!(t.flush_subnormals);
    let n = 64 * 40;
    let mut r = Rng::new(8);
    let mut xs: Vec<f32> = (0..n).map(|_| r.f32_in(-4.0, 4.0)).collect();
    let mut ys: Vec<f32> = (0..n).map(|_| r.f32_in(-4.0, 4.0)).collect();
    for (i, e) in poplar::isa::EDGE_VALUES.iter().enumerate() {
        xs[i * 7] = *e;
        ys[i * 11] = *e;
        ys[i * 13 + 1] = 1e-38;
    }
    let mut g = Graph::new(&t);
    codelets::link();
    let x = input(&mut g, "x", &[n], &xs, 2);
    let y = input(&mut g, "y", &[n], &ys, 2);
    let mut prog = Vec::new();
    let z = popops::map(
        &mut g,
        &((_1 * _2 - _2) / 3.0 * 1e-3),
        &[&x, &y],
        &mut prog,
        "z",
    )
    .unwrap();
    g.create_host_read("z", &z).unwrap();
    let exe = compile(&g, &[Program::seq(prog)], &CompileOptions::default()).unwrap();
    let tiles: std::collections::BTreeSet<u32> = exe
        .computes
        .values()
        .flat_map(|c| &c.tiles)
        .filter(|t| !t.vertices.is_empty())
        .map(|t| t.tile.as_u32())
        .collect();
    assert_eq!(tiles.len(), 64, "every tile computes");
    let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
    e.run(0).unwrap();
    let flush = |v: f32| {
        if v.is_subnormal() {
            0.0f32.copysign(v)
        } else {
            v
        }
    };
    let got = e.read_tensor::<f32>("z").unwrap();
    for i in 0..n {
        let (a, b) = (flush(xs[i]), flush(ys[i]));
        let want = flush(flush(flush(flush(a * b) - b) / 3.0) * 1e-3);
        assert!(
            got[i].to_bits() == want.to_bits() || (got[i].is_nan() && want.is_nan()),
            "z[{i}] from {a:e}, {b:e}: {:e} want {want:e}",
            got[i]
        );
    }
}
