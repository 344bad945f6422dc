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

use common::Rng;
use poplar::profile::ProfileOptions;
use poplar::{compile, f16, CompileOptions, DType, Element, Engine, EngineOptions, Graph, Program};
use poplar::{Target, Tensor};
use popops::elementwise::{self as ew};
use popops::expr::{select, BinaryOpType as B, Expr, UnaryOpType as U, _1, _2, _3, _4};
use popops::OpError;

/// A 4-tile IEEE target (subnormal flushing off), or with flushing.
fn target(flush: bool) -> Target {
    Target {
        flush_subnormals: flush,
        ..Target::custom(4, 256 * 1024)
    }
}

/// A variable of `data`, spread over the tiles in grains of `grain` elements.
fn input<T: Element>(
    g: &mut Graph,
    name: &str,
    shape: &[usize],
    data: &[T],
    grain: usize,
) -> Tensor {
    let t = g.add_variable(T::DTYPE, shape, name);
    g.map_linearly(&t, grain).unwrap();
    g.set_initial_value(&t, data).unwrap();
    t
}

fn run(g: &Graph, prog: Vec<Program>) -> Engine {
    let exe = compile(g, &[Program::seq(prog)], &CompileOptions::default())
        .unwrap_or_else(|e| panic!("compile: {e}"));
    let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
    e.run(0).unwrap();
    e
}

/// Edge values (±0, subnormals, ±inf, NaN, the extremes), values near the ops' interesting
/// points, random values of moderate size and random bit patterns.
fn f32_inputs(seed: u64) -> Vec<f32> {
    let mut v: Vec<f32> = poplar::isa::EDGE_VALUES.to_vec();
    v.extend([
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
        0.5,
        -0.5,
        1.5,
        -2.5,
        1.0,
        -1.0,
        1e-3,
        -1e-6,
        88.7,
        -103.0,
        1e10,
        -3e30,
        12.0,
        0.1,
    ]);
    let mut r = Rng::new(seed);
    for _ in 0..80 {
        v.push(r.f32_in(-8.0, 8.0));
    }
    for _ in 0..40 {
        v.push(f32::from_bits(r.next_u64() as u32));
    }
    v
}

/// Distance in units in the last place (f32), NaN only near NaN.
fn ulps(a: f32, b: f32) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    let o = |x: f32| {
        let b = x.to_bits();
        if b >> 31 == 1 {
            -i64::from(b & 0x7fff_ffff)
        } else {
            i64::from(b)
        }
    };
    (o(a) - o(b)).unsigned_abs()
}

/// erf in f64 by the series `2/√π · e^{-x²} · Σ 2ⁿ x^{2n+1} / (1·3···(2n+1))` (no
/// cancellation; independent of the codelet's alternating Taylor series).
fn erf_ref(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.abs() > 6.0 {
        return x.signum();
    }
    let mut term = x;
    let mut sum = x;
    let mut k = 1.0;
    while term.abs() > 1e-18 * sum.abs() {
        k += 2.0;
        term *= 2.0 * x * x / k;
        sum += term;
    }
    2.0 / std::f64::consts::PI.sqrt() * (-x * x).exp() * sum
}

fn sign_ref(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x
    }
}

/// The bound of each unary float op (ulps), with its f64 reference.
type Ref1 = fn(f64) -> f64;
fn unary_table() -> Vec<(U, Ref1, u64)> {
    vec![
        (U::Abs, f64::abs, 0),
        (U::Sign, sign_ref, 0),
        (U::Neg, |x| -x, 0),
        (U::Sqrt, f64::sqrt, 0),
        (U::Rsqrt, |x| 1.0 / x.sqrt(), 2),
        (U::Cbrt, f64::cbrt, 1),
        (U::Exp, f64::exp, 1),
        (U::Exp2, f64::exp2, 1),
        (U::Expm1, f64::exp_m1, 1),
        (U::Log, f64::ln, 1),
        (U::Log1p, f64::ln_1p, 1),
        (U::Sin, f64::sin, 1),
        (U::Cos, f64::cos, 1),
        (U::Tan, f64::tan, 1),
        (U::Tanh, f64::tanh, 2),
        (U::Sigmoid, |x| 1.0 / (1.0 + (-x).exp()), 3),
        (U::Erf, erf_ref, 1),
        (U::Floor, f64::floor, 0),
        (U::Ceil, f64::ceil, 0),
        (U::Round, f64::round, 0),
        (U::Trunc, f64::trunc, 0),
        (U::Square, |x| x * x, 0),
        (U::Inverse, |x| 1.0 / x, 0),
    ]
}

/// The stated bound of a unary op (also quoted in docs/popops.md).
fn ulp_bound(op: U) -> u64 {
    unary_table()
        .into_iter()
        .find(|r| r.0 == op)
        .map_or(0, |r| r.2)
}

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

/// A value of any element type, for the cast matrix.
#[derive(Debug, Clone, Copy)]
enum V {
    F(f64),
    I(i64),
    B(bool),
}

fn cast_ref(x: V, to: DType) -> V {
    let f = |v: f64| -> V {
        match to {
            DType::F32 => V::F(f64::from(v as f32)),
            DType::F16 => V::F(f64::from(poplar::f16_from_f64(v).to_f32())),
            DType::Bool => V::B(v != 0.0),
            // Truncation toward zero, saturating, NaN → 0.
            DType::I32 => V::I(if v.is_nan() {
                0
            } else {
                v.trunc().clamp(-2147483648.0, 2147483647.0) as i64
            }),
            DType::U32 => V::I(if v.is_nan() {
                0
            } else {
                v.trunc().clamp(0.0, 4294967295.0) as i64
            }),
            DType::U8 => V::I(if v.is_nan() {
                0
            } else {
                v.trunc().clamp(0.0, 255.0) as i64
            }),
            DType::U16 => V::I(if v.is_nan() {
                0
            } else {
                v.trunc().clamp(0.0, 65535.0) as i64
            }),
        }
    };
    match x {
        V::F(v) => f(v),
        V::B(b) => match to {
            DType::Bool => V::B(b),
            DType::F32 | DType::F16 => V::F(f64::from(u8::from(b))),
            _ => V::I(i64::from(b)),
        },
        V::I(i) => match to {
            // Integer → float: to the nearest f32 (then f16: exact below 2^24, and above it
            // the f16 result is infinite either way).
            DType::F32 => V::F(f64::from(i as f32)),
            DType::F16 => V::F(f64::from(f16::from_f32(i as f32).to_f32())),
            DType::Bool => V::B(i != 0),
            // Integer → integer keeps the low bits.
            DType::I32 => V::I(i64::from(i as i32)),
            DType::U32 => V::I(i64::from(i as u32)),
            DType::U8 => V::I(i64::from(i as u8)),
            DType::U16 => V::I(i64::from(i as u16)),
        },
    }
}

const TYPES: [DType; 7] = [
    DType::F32,
    DType::F16,
    DType::I32,
    DType::U32,
    DType::U8,
    DType::U16,
    DType::Bool,
];

fn add_typed(g: &mut Graph, name: &str, dtype: DType, vals: &[V]) -> Tensor {
    let n = vals.len();
    let fv = |v: &V| match *v {
        V::F(f) => f,
        V::I(i) => i as f64,
        V::B(b) => f64::from(u8::from(b)),
    };
    let iv = |v: &V| match *v {
        V::I(i) => i,
        V::F(f) => f as i64,
        V::B(b) => i64::from(b),
    };
    match dtype {
        DType::F32 => input(
            g,
            name,
            &[n],
            &vals.iter().map(|v| fv(v) as f32).collect::<Vec<_>>(),
            2,
        ),
        DType::F16 => input(
            g,
            name,
            &[n],
            &vals
                .iter()
                .map(|v| poplar::f16_from_f64(fv(v)))
                .collect::<Vec<_>>(),
            4,
        ),
        DType::I32 => input(
            g,
            name,
            &[n],
            &vals.iter().map(|v| iv(v) as i32).collect::<Vec<_>>(),
            2,
        ),
        DType::U32 => input(
            g,
            name,
            &[n],
            &vals.iter().map(|v| iv(v) as u32).collect::<Vec<_>>(),
            2,
        ),
        DType::U8 => input(
            g,
            name,
            &[n],
            &vals.iter().map(|v| iv(v) as u8).collect::<Vec<_>>(),
            8,
        ),
        DType::U16 => input(
            g,
            name,
            &[n],
            &vals.iter().map(|v| iv(v) as u16).collect::<Vec<_>>(),
            4,
        ),
        DType::Bool => input(
            g,
            name,
            &[n],
            &vals.iter().map(|v| fv(v) != 0.0).collect::<Vec<_>>(),
            8,
        ),
    }
}

fn read_typed(e: &Engine, name: &str, dtype: DType) -> Vec<V> {
    match dtype {
        DType::F32 => e
            .read_tensor::<f32>(name)
            .unwrap()
            .into_iter()
            .map(|v| V::F(f64::from(v)))
            .collect(),
        DType::F16 => e
            .read_tensor::<f16>(name)
            .unwrap()
            .into_iter()
            .map(|v| V::F(f64::from(v.to_f32())))
            .collect(),
        DType::I32 => e
            .read_tensor::<i32>(name)
            .unwrap()
            .into_iter()
            .map(|v| V::I(i64::from(v)))
            .collect(),
        DType::U32 => e
            .read_tensor::<u32>(name)
            .unwrap()
            .into_iter()
            .map(|v| V::I(i64::from(v)))
            .collect(),
        DType::U8 => e
            .read_tensor::<u8>(name)
            .unwrap()
            .into_iter()
            .map(|v| V::I(i64::from(v)))
            .collect(),
        DType::U16 => e
            .read_tensor::<u16>(name)
            .unwrap()
            .into_iter()
            .map(|v| V::I(i64::from(v)))
            .collect(),
        DType::Bool => e
            .read_tensor::<bool>(name)
            .unwrap()
            .into_iter()
            .map(V::B)
            .collect(),
    }
}

fn same(a: V, b: V) -> bool {
    match (a, b) {
        (V::F(x), V::F(y)) => (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits(),
        (V::I(x), V::I(y)) => x == y,
        (V::B(x), V::B(y)) => x == y,
        _ => false,
    }
}

#[test]
fn cast_between_every_pair_of_types() {
    // Source values per type, as the type holds them.
    let floats: Vec<f64> = vec![
        0.0,
        -0.0,
        0.4,
        -0.6,
        1.5,
        2.5,
        -2.5,
        255.9,
        256.0,
        65504.0,
        65520.0,
        70000.0,
        -1.0,
        3e9,
        -3e9,
        1e-8,
        1.0009765625,
        1.00048828125,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        2147483520.0,
        16777217.0,
    ];
    let ints: Vec<i64> = vec![
        0,
        1,
        -1,
        255,
        256,
        65535,
        65536,
        2049,
        16777217,
        i32::MAX as i64,
        i32::MIN as i64,
        70000,
    ];
    let mut g = Graph::new(&target(false));
    codelets::link();
    let mut prog = Vec::new();
    let mut cases = Vec::new();
    for from in TYPES {
        // The source values as `from` holds them (through the host reference's own cast).
        let raw: Vec<V> = match from {
            DType::F32 | DType::F16 => floats.iter().map(|&f| V::F(f)).collect(),
            DType::Bool => vec![V::B(false), V::B(true), V::B(true)],
            _ => ints.iter().map(|&i| V::I(i)).collect(),
        };
        let vals: Vec<V> = raw.into_iter().map(|v| cast_ref(v, from)).collect();
        let t = add_typed(&mut g, &format!("src{from}"), from, &vals);
        for to in TYPES {
            let name = format!("{from}->{to}");
            let out = popops::cast::cast(&mut g, &t, to, &mut prog, &name).unwrap();
            assert_eq!(out.dtype(), to);
            g.create_host_read(&name, &out).unwrap();
            cases.push((name, vals.clone(), to));
        }
    }
    let e = run(&g, prog);
    for (name, vals, to) in cases {
        let got = read_typed(&e, &name, to);
        for (v, gv) in vals.iter().zip(&got) {
            let want = cast_ref(*v, to);
            assert!(same(*gv, want), "{name}: {v:?} gave {gv:?}, want {want:?}");
        }
    }
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
