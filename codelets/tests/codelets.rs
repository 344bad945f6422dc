//! Every codelet against a plain host computation, through graph → compile → Engine.
//!
//! Tolerances: none. Each codelet performs the same f32 operations in the same order as the
//! host loops below (element-wise ops, left-to-right sums and dot products, no fused
//! multiply-add), so float results are compared bit for bit; integer ops wrap on both sides.

mod common;

use common::*;
use poplar::graph::StateValue;
use poplar::DType;

const N: usize = 37;

/// Checks `"{Op}<type>"` and `"{Op}InPlace<type>"` against `f` on random inputs.
macro_rules! check_binary {
    ($rng:ident, $op:literal, $tname:literal, $t:ty, $gen_a:expr, $gen_b:expr, |$x:ident, $y:ident| $f:expr) => {{
        let a: Vec<$t> = $gen_a;
        let b: Vec<$t> = $gen_b;
        let want: Vec<$t> = a.iter().zip(&b).map(|(&$x, &$y)| $f).collect();
        let name = concat!($op, "<", $tname, ">");
        let got: Vec<$t> = out(run_vertex(
            name,
            vec![
                ("in1", Conn::In(a.clone().into())),
                ("in2", Conn::In(b.clone().into())),
                ("out", Conn::Out(<$t as poplar::Element>::DTYPE, N)),
            ],
        ));
        assert_eq!(Data::from(got), Data::from(want.clone()), "{name}");
        let name = concat!($op, "InPlace<", $tname, ">");
        let got: Vec<$t> = out(run_vertex(
            name,
            vec![("a", Conn::InOut(a.into())), ("b", Conn::In(b.into()))],
        ));
        assert_eq!(Data::from(got), Data::from(want), "{name}");
    }};
}

#[test]
fn binary_float() {
    let mut r = Rng::new(1);
    check_binary!(r, "Add", "float", f32, r.f32s(N), r.f32s(N), |x, y| x + y);
    check_binary!(r, "Sub", "float", f32, r.f32s(N), r.f32s(N), |x, y| x - y);
    check_binary!(r, "Mul", "float", f32, r.f32s(N), r.f32s(N), |x, y| x * y);
    check_binary!(
        r,
        "Max",
        "float",
        f32,
        r.f32s(N),
        r.f32s(N),
        |x, y| if x >= y { x } else { y }
    );
    check_binary!(
        r,
        "Min",
        "float",
        f32,
        r.f32s(N),
        r.f32s(N),
        |x, y| if x <= y { x } else { y }
    );
    check_binary!(
        r,
        "Div",
        "float",
        f32,
        r.f32s(N),
        (0..N).map(|_| r.f32_in(0.25, 4.0)).collect(),
        |x, y| x / y
    );
}

#[test]
fn binary_int() {
    let mut r = Rng::new(2);
    check_binary!(r, "Add", "int", i32, r.i32s(N), r.i32s(N), |x, y| x
        .wrapping_add(y));
    check_binary!(r, "Sub", "int", i32, r.i32s(N), r.i32s(N), |x, y| x
        .wrapping_sub(y));
    check_binary!(r, "Mul", "int", i32, r.i32s(N), r.i32s(N), |x, y| x
        .wrapping_mul(y));
    check_binary!(
        r,
        "Max",
        "int",
        i32,
        r.i32s(N),
        r.i32s(N),
        |x, y| if x >= y { x } else { y }
    );
    check_binary!(
        r,
        "Min",
        "int",
        i32,
        r.i32s(N),
        r.i32s(N),
        |x, y| if x <= y { x } else { y }
    );
}

#[test]
fn binary_unsigned() {
    let mut r = Rng::new(3);
    check_binary!(r, "Add", "unsigned", u32, r.u32s(N), r.u32s(N), |x, y| x
        .wrapping_add(y));
    check_binary!(r, "Sub", "unsigned", u32, r.u32s(N), r.u32s(N), |x, y| x
        .wrapping_sub(y));
    check_binary!(r, "Mul", "unsigned", u32, r.u32s(N), r.u32s(N), |x, y| x
        .wrapping_mul(y));
    check_binary!(
        r,
        "Max",
        "unsigned",
        u32,
        r.u32s(N),
        r.u32s(N),
        |x, y| if x >= y { x } else { y }
    );
    check_binary!(
        r,
        "Min",
        "unsigned",
        u32,
        r.u32s(N),
        r.u32s(N),
        |x, y| if x <= y { x } else { y }
    );
}

fn unary<T: FromData>(name: &str, input: Data) -> Vec<T> {
    let (dtype, n) = (input.dtype(), input.len());
    out(run_vertex(
        name,
        vec![("input", Conn::In(input)), ("out", Conn::Out(dtype, n))],
    ))
}

#[test]
fn unary_ops() {
    let mut r = Rng::new(4);
    let x = r.f32s(N);
    let i = r.i32s(N);
    let u = r.u32s(N);
    assert_bits_eq(
        &unary("Neg<float>", x.clone().into()),
        &host(&x, |v| -v),
        "Neg",
    );
    assert_bits_eq(
        &unary("Abs<float>", x.clone().into()),
        &host(&x, f32::abs),
        "Abs",
    );
    assert_bits_eq(
        &unary("Square<float>", x.clone().into()),
        &host(&x, |v| v * v),
        "Square",
    );
    let pos = host(&x, f32::abs);
    assert_bits_eq(
        &unary("Sqrt<float>", pos.clone().into()),
        &host(&pos, f32::sqrt),
        "Sqrt",
    );
    assert_bits_eq(
        &unary("Exp<float>", x.clone().into()),
        &host(&x, f32::exp),
        "Exp",
    );
    let mut i_edge = i.clone();
    i_edge[0] = i32::MIN;
    assert_eq!(
        unary::<i32>("Neg<int>", i_edge.clone().into()),
        host(&i_edge, i32::wrapping_neg)
    );
    assert_eq!(
        unary::<i32>("Abs<int>", i_edge.clone().into()),
        host(&i_edge, i32::wrapping_abs)
    );
    assert_eq!(
        unary::<i32>("Square<int>", i.clone().into()),
        host(&i, |v| v.wrapping_mul(v))
    );
    assert_eq!(
        unary::<u32>("Square<unsigned>", u.clone().into()),
        host(&u, |v| v.wrapping_mul(v))
    );
}

#[test]
fn copy_and_fill() {
    let mut r = Rng::new(5);
    let cases: Vec<(&str, Data)> = vec![
        ("Copy<float>", r.f32s(N).into()),
        ("Copy<int>", r.i32s(N).into()),
        ("Copy<unsigned>", r.u32s(N).into()),
        ("Copy<bool>", r.bools(N).into()),
        ("Copy<unsigned char>", r.bytes(N).into()),
        ("Copy<unsigned short>", r.u16s(N).into()),
    ];
    for (name, d) in cases {
        let (dtype, n) = (d.dtype(), d.len());
        let got = run_vertex(
            name,
            vec![("input", Conn::In(d.clone())), ("out", Conn::Out(dtype, n))],
        )
        .unwrap();
        assert_eq!(got[0].1, d, "{name}");
    }
    let fills: Vec<(&str, StateValue, Data)> = vec![
        ("Fill<float>", 2.5f32.into(), vec![2.5f32; N].into()),
        (
            "FillMulti<float>",
            (-1.25f32).into(),
            vec![-1.25f32; N].into(),
        ),
        ("Fill<int>", (-7i32).into(), vec![-7i32; N].into()),
        ("Fill<unsigned>", 9u32.into(), vec![9u32; N].into()),
        ("Fill<bool>", true.into(), vec![true; N].into()),
        ("Fill<unsigned char>", 200u8.into(), vec![200u8; N].into()),
        (
            "Fill<unsigned short>",
            60_000u16.into(),
            vec![60_000u16; N].into(),
        ),
    ];
    for (name, value, want) in fills {
        let got = run_vertex(
            name,
            vec![
                ("out", Conn::Out(want.dtype(), N)),
                ("value", Conn::State(value)),
            ],
        )
        .unwrap();
        assert_eq!(got[0].1, want, "{name}");
    }
}

#[test]
fn scaled_add_single_and_multi_worker() {
    let mut r = Rng::new(6);
    let a = r.f32s(101);
    let b = r.f32s(101);
    let want: Vec<f32> = a.iter().zip(&b).map(|(&x, &y)| x + 0.375 * y).collect();
    for name in ["ScaledAdd<float>", "ScaledAddMulti<float>"] {
        let got: Vec<f32> = out(run_vertex(
            name,
            vec![
                ("a", Conn::InOut(a.clone().into())),
                ("b", Conn::In(b.clone().into())),
                ("scale", Conn::State(0.375f32.into())),
            ],
        ));
        assert_bits_eq(&got, &want, name);
    }
}

#[test]
fn multi_worker_equals_single_worker() {
    let mut r = Rng::new(7);
    for n in [0, 1, 5, 6, 7, 64, 1000] {
        let a = r.f32s(n);
        let b = r.f32s(n);
        let run = |name: &str| -> Vec<f32> {
            out(run_vertex(
                name,
                vec![
                    ("in1", Conn::In(a.clone().into())),
                    ("in2", Conn::In(b.clone().into())),
                    ("out", Conn::Out(DType::F32, n)),
                ],
            ))
        };
        assert_bits_eq(
            &run("AddMulti<float>"),
            &run("Add<float>"),
            &format!("n={n}"),
        );
        let sa = |name: &str| -> Vec<f32> {
            out(run_vertex(
                name,
                vec![
                    ("a", Conn::InOut(a.clone().into())),
                    ("b", Conn::In(b.clone().into())),
                    ("scale", Conn::State((-2.5f32).into())),
                ],
            ))
        };
        assert_bits_eq(
            &sa("ScaledAddMulti<float>"),
            &sa("ScaledAdd<float>"),
            &format!("n={n}"),
        );
    }
}

fn reduce<T: FromData>(name: &str, input: Data) -> T {
    let dtype = input.dtype();
    let mut v = out::<T>(run_vertex(
        name,
        vec![("input", Conn::In(input)), ("out", Conn::OutScalar(dtype))],
    ));
    assert_eq!(v.len(), 1);
    v.remove(0)
}

#[test]
fn reductions() {
    let mut r = Rng::new(8);
    let x = r.f32s(N);
    let i = r.i32s(N);
    let u = r.u32s(N);
    // Left to right, as the codelet documents.
    let sum = x.iter().fold(0.0f32, |a, &v| a + v);
    assert_eq!(
        reduce::<f32>("ReduceSum<float>", x.clone().into()).to_bits(),
        sum.to_bits()
    );
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    assert_eq!(reduce::<f32>("ReduceMax<float>", x.clone().into()), max);
    let min = x.iter().copied().fold(f32::INFINITY, f32::min);
    assert_eq!(reduce::<f32>("ReduceMin<float>", x.clone().into()), min);
    let isum = i.iter().fold(0i32, |a, &v| a.wrapping_add(v));
    assert_eq!(reduce::<i32>("ReduceSum<int>", i.clone().into()), isum);
    assert_eq!(
        reduce::<i32>("ReduceMax<int>", i.clone().into()),
        *i.iter().max().unwrap()
    );
    assert_eq!(
        reduce::<i32>("ReduceMin<int>", i.clone().into()),
        *i.iter().min().unwrap()
    );
    let usum = u.iter().fold(0u32, |a, &v| a.wrapping_add(v));
    assert_eq!(reduce::<u32>("ReduceSum<unsigned>", u.clone().into()), usum);
    assert_eq!(
        reduce::<u32>("ReduceMax<unsigned>", u.clone().into()),
        *u.iter().max().unwrap()
    );
    assert_eq!(
        reduce::<u32>("ReduceMin<unsigned>", u.clone().into()),
        *u.iter().min().unwrap()
    );
    // Empty input: the identity.
    assert_eq!(reduce::<i32>("ReduceSum<int>", Vec::<i32>::new().into()), 0);
    assert_eq!(
        reduce::<u32>("ReduceMin<unsigned>", Vec::<u32>::new().into()),
        u32::MAX
    );
}

#[test]
fn reduce_partials() {
    let mut r = Rng::new(9);
    let parts: Vec<Vec<f32>> = (0..5).map(|_| r.f32s(11)).collect();
    let mut sum = vec![0.0f32; 11];
    let mut max = vec![f32::NEG_INFINITY; 11];
    for p in &parts {
        for k in 0..11 {
            sum[k] += p[k];
            max[k] = max[k].max(p[k]);
        }
    }
    let run = |name: &str, ps: Vec<Data>, dtype: DType, n: usize| {
        run_vertex(
            name,
            vec![("partials", Conn::List(ps)), ("out", Conn::Out(dtype, n))],
        )
    };
    let fparts: Vec<Data> = parts.iter().cloned().map(Data::from).collect();
    let got: Vec<f32> = out(run(
        "ReduceSumPartials<float>",
        fparts.clone(),
        DType::F32,
        11,
    ));
    assert_bits_eq(&got, &sum, "ReduceSumPartials<float>");
    let got: Vec<f32> = out(run("ReduceMaxPartials<float>", fparts, DType::F32, 11));
    assert_bits_eq(&got, &max, "ReduceMaxPartials<float>");

    let iparts: Vec<Vec<i32>> = (0..3).map(|_| r.i32s(6)).collect();
    let isum: Vec<i32> = (0..6)
        .map(|k| iparts.iter().fold(0i32, |a, p| a.wrapping_add(p[k])))
        .collect();
    let imax: Vec<i32> = (0..6)
        .map(|k| iparts.iter().map(|p| p[k]).max().unwrap())
        .collect();
    let d: Vec<Data> = iparts.iter().cloned().map(Data::from).collect();
    assert_eq!(
        out::<i32>(run("ReduceSumPartials<int>", d.clone(), DType::I32, 6)),
        isum
    );
    assert_eq!(
        out::<i32>(run("ReduceMaxPartials<int>", d, DType::I32, 6)),
        imax
    );

    let uparts: Vec<Vec<u32>> = (0..3).map(|_| r.u32s(6)).collect();
    let usum: Vec<u32> = (0..6)
        .map(|k| uparts.iter().fold(0u32, |a, p| a.wrapping_add(p[k])))
        .collect();
    let umax: Vec<u32> = (0..6)
        .map(|k| uparts.iter().map(|p| p[k]).max().unwrap())
        .collect();
    let d: Vec<Data> = uparts.iter().cloned().map(Data::from).collect();
    assert_eq!(
        out::<u32>(run("ReduceSumPartials<unsigned>", d.clone(), DType::U32, 6)),
        usum
    );
    assert_eq!(
        out::<u32>(run("ReduceMaxPartials<unsigned>", d, DType::U32, 6)),
        umax
    );

    // A partial of the wrong length is reported with its index.
    let bad = vec![Data::from(vec![1.0f32; 4]), Data::from(vec![1.0f32; 3])];
    let e = run("ReduceSumPartials<float>", bad, DType::F32, 4).unwrap_err();
    assert!(e.contains("'partials'[1]"), "{e}");
}

#[test]
fn dot_and_matvec() {
    let mut r = Rng::new(10);
    let a = r.f32s(N);
    let b = r.f32s(N);
    let want = a.iter().zip(&b).fold(0.0f32, |s, (&x, &y)| s + x * y);
    let got: Vec<f32> = out(run_vertex(
        "Dot<float>",
        vec![
            ("a", Conn::In(a.clone().into())),
            ("b", Conn::In(b.clone().into())),
            ("out", Conn::OutScalar(DType::F32)),
        ],
    ));
    assert_eq!(got[0].to_bits(), want.to_bits());
    let ia = r.i32s(N);
    let ib = r.i32s(N);
    let iwant = ia
        .iter()
        .zip(&ib)
        .fold(0i32, |s, (&x, &y)| s.wrapping_add(x.wrapping_mul(y)));
    let got: Vec<i32> = out(run_vertex(
        "Dot<int>",
        vec![
            ("a", Conn::In(ia.into())),
            ("b", Conn::In(ib.into())),
            ("out", Conn::OutScalar(DType::I32)),
        ],
    ));
    assert_eq!(got, vec![iwant]);

    let (rows, cols) = (7, 9);
    let m = r.f32s(rows * cols);
    let x = r.f32s(cols);
    let want: Vec<f32> = (0..rows)
        .map(|i| (0..cols).fold(0.0f32, |s, j| s + m[i * cols + j] * x[j]))
        .collect();
    let got: Vec<f32> = out(run_vertex(
        "MatVec<float>",
        vec![
            ("matrix", Conn::In(m.into())),
            ("vec", Conn::In(x.into())),
            ("out", Conn::Out(DType::F32, rows)),
        ],
    ));
    assert_bits_eq(&got, &want, "MatVec<float>");
}

/// A codelet, the field expected in the error, and the vertex's connections.
type Case<'a> = (&'a str, &'a str, Vec<(&'a str, Conn)>);

/// Every element-wise codelet with a mismatched operand fails with an error that names the
/// vertex, the codelet and the field (and does not panic).
#[test]
fn length_mismatch_is_an_error_naming_the_field() {
    let f = |n: usize| Data::from(vec![1.0f32; n]);
    let cases: Vec<Case> = vec![
        (
            "Add<float>",
            "in2",
            vec![
                ("in1", Conn::In(f(4))),
                ("in2", Conn::In(f(3))),
                ("out", Conn::Out(DType::F32, 4)),
            ],
        ),
        (
            "Sub<int>",
            "out",
            vec![
                ("in1", Conn::In(vec![1i32; 4].into())),
                ("in2", Conn::In(vec![1i32; 4].into())),
                ("out", Conn::Out(DType::I32, 5)),
            ],
        ),
        (
            "MulInPlace<float>",
            "b",
            vec![("a", Conn::InOut(f(4))), ("b", Conn::In(f(2)))],
        ),
        (
            "Neg<float>",
            "out",
            vec![("input", Conn::In(f(4))), ("out", Conn::Out(DType::F32, 1))],
        ),
        (
            "Copy<float>",
            "out",
            vec![("input", Conn::In(f(2))), ("out", Conn::Out(DType::F32, 3))],
        ),
        (
            "ScaledAdd<float>",
            "b",
            vec![
                ("a", Conn::InOut(f(4))),
                ("b", Conn::In(f(5))),
                ("scale", Conn::State(1.0f32.into())),
            ],
        ),
        (
            "ScaledAddMulti<float>",
            "b",
            vec![
                ("a", Conn::InOut(f(40))),
                ("b", Conn::In(f(5))),
                ("scale", Conn::State(1.0f32.into())),
            ],
        ),
        (
            "AddMulti<float>",
            "in2",
            vec![
                ("in1", Conn::In(f(40))),
                ("in2", Conn::In(f(3))),
                ("out", Conn::Out(DType::F32, 40)),
            ],
        ),
        (
            "Dot<float>",
            "b",
            vec![
                ("a", Conn::In(f(4))),
                ("b", Conn::In(f(3))),
                ("out", Conn::OutScalar(DType::F32)),
            ],
        ),
        (
            "MatVec<float>",
            "matrix",
            vec![
                ("matrix", Conn::In(f(5))),
                ("vec", Conn::In(f(3))),
                ("out", Conn::Out(DType::F32, 2)),
            ],
        ),
    ];
    for (name, field, fields) in cases {
        let e = run_vertex(name, fields).expect_err(name);
        assert!(
            e.contains(name) && e.contains(&format!("'{field}'")) && e.contains("vertex 0"),
            "{name}: error does not name the vertex, codelet and field '{field}': {e}"
        );
    }
}
