//! ONNX gathers and scatters and one-hot encoding against host references written here:
//! every axis, negative indices, `i32` and `u32` indices, f32/f16/i32/u32 data spread over
//! many tiles, non-contiguous views, empty index tensors, repeated scatter indices, run-time
//! errors for out-of-range indices and typed errors for shape, type and axis mistakes.

#[path = "../../../codelets/tests/common/mod.rs"]
mod common;
mod support;

use common::Rng;
use poplar::{f16, DType, Element, Graph, Program, Target, Tensor};
use popops::gather::ScatterReduction;
use popops::OpError;
use support::{input, run};

fn target() -> Target {
    Target::custom(16, 256 * 1024)
}

/// Row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

/// The coordinates of flat position `i` of `shape`.
fn coords(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        c[d] = i % shape[d];
        i /= shape[d];
    }
    c
}

fn flat(c: &[usize], shape: &[usize]) -> usize {
    c.iter().zip(strides(shape)).map(|(a, s)| a * s).sum()
}

fn norm(i: i64, dim: usize) -> usize {
    (if i < 0 { i + dim as i64 } else { i }) as usize
}

/// ONNX `Gather` on the host.
fn host_gather<T: Copy>(
    data: &[T],
    shape: &[usize],
    idx: &[i64],
    ishape: &[usize],
    axis: usize,
) -> Vec<T> {
    let mut oshape = shape[..axis].to_vec();
    oshape.extend_from_slice(ishape);
    oshape.extend_from_slice(&shape[axis + 1..]);
    let n: usize = oshape.iter().product();
    (0..n)
        .map(|o| {
            let c = coords(o, &oshape);
            let ic = &c[axis..axis + ishape.len()];
            let mut dc = c[..axis].to_vec();
            dc.push(norm(idx[flat(ic, ishape)], shape[axis]));
            dc.extend_from_slice(&c[axis + ishape.len()..]);
            data[flat(&dc, shape)]
        })
        .collect()
}

/// ONNX `GatherElements` on the host.
fn host_gather_elements<T: Copy>(
    data: &[T],
    shape: &[usize],
    idx: &[i64],
    ishape: &[usize],
    axis: usize,
) -> Vec<T> {
    (0..idx.len())
        .map(|p| {
            let mut c = coords(p, ishape);
            c[axis] = norm(idx[p], shape[axis]);
            data[flat(&c, shape)]
        })
        .collect()
}

/// ONNX `ScatterElements` on the host, in row-major order of the indices.
fn host_scatter<T: Copy>(
    data: &[T],
    shape: &[usize],
    idx: &[i64],
    ishape: &[usize],
    upd: &[T],
    axis: usize,
    f: impl Fn(T, T) -> T,
) -> Vec<T> {
    let mut out = data.to_vec();
    for p in 0..idx.len() {
        let mut c = coords(p, ishape);
        c[axis] = norm(idx[p], shape[axis]);
        let at = flat(&c, shape);
        out[at] = f(out[at], upd[p]);
    }
    out
}

/// Random indices in `[-dim, dim)` (or `[0, dim)` for `u32`) as i64, and the index tensor.
fn indices(
    g: &mut Graph,
    rng: &mut Rng,
    shape: &[usize],
    dim: usize,
    signed: bool,
) -> (Vec<i64>, Tensor) {
    let n: usize = shape.iter().product();
    let v: Vec<i64> = (0..n)
        .map(|_| {
            let r = (rng.next_u64() % (2 * dim as u64)) as i64;
            if signed {
                r - dim as i64
            } else {
                r / 2
            }
        })
        .collect();
    let t = if signed {
        let d: Vec<i32> = v.iter().map(|&x| x as i32).collect();
        input(g, "idx", shape, &d, 3)
    } else {
        let d: Vec<u32> = v.iter().map(|&x| x as u32).collect();
        input(g, "idx", shape, &d, 3)
    };
    (v, t)
}

fn check_gather<T: Element + Copy + PartialEq + std::fmt::Debug>(data: Vec<T>, seed: u64) {
    let shape = [4, 5, 6];
    for axis in 0..3 {
        for signed in [true, false] {
            let mut g = Graph::new(&target());
            let mut rng = Rng::new(seed + axis as u64);
            let t = input(&mut g, "data", &shape, &data, 5);
            let ishape = [2, 3];
            let (idx, it) = indices(&mut g, &mut rng, &ishape, shape[axis], signed);
            let mut prog = Vec::new();
            let out = popops::gather(&mut g, &t, &it, axis, &mut prog, "g").unwrap();
            g.create_host_read("out", &out).unwrap();
            let e = run(&g, prog);
            let want = host_gather(&data, &shape, &idx, &ishape, axis);
            assert_eq!(
                e.read_tensor::<T>("out").unwrap(),
                want,
                "axis {axis}, signed {signed}"
            );
        }
    }
}

#[test]
fn gather_matches_the_host_on_every_axis_and_type() {
    let mut rng = Rng::new(1);
    check_gather(rng.f32s(120), 10);
    check_gather(rng.i32s(120), 20);
    check_gather(rng.u32s(120), 30);
    check_gather(
        rng.f32s(120)
            .into_iter()
            .map(f16::from_f32)
            .collect::<Vec<_>>(),
        40,
    );
}

#[test]
fn gather_of_a_non_contiguous_view_and_of_no_indices() {
    let mut g = Graph::new(&target());
    let mut rng = Rng::new(2);
    let data = rng.f32s(7 * 9);
    let big = input(&mut g, "big", &[7, 9], &data, 4);
    // The transpose of columns 2..8: [6, 7], every element strided.
    let view = big.slice_dim(1, 2..8).unwrap().transpose().unwrap();
    let host_view: Vec<f32> = (0..6)
        .flat_map(|c| (0..7).map(move |r| (r, c + 2)))
        .map(|(r, c)| data[r * 9 + c])
        .collect();
    let (idx, it) = indices(&mut g, &mut rng, &[5], 7, true);
    let empty = g.add_variable(DType::U32, &[0, 2], "none");
    let mut prog = Vec::new();
    let out = popops::gather(&mut g, &view, &it, 1, &mut prog, "g").unwrap();
    let none = popops::gather(&mut g, &view, &empty, 0, &mut prog, "n").unwrap();
    assert_eq!(none.shape(), [0, 2, 7]);
    let ge = popops::gather_elements(
        &mut g,
        &view,
        &empty.reshape(&[2, 0]).unwrap(),
        0,
        &mut prog,
        "ge",
    )
    .unwrap();
    assert_eq!(ge.shape(), [2, 0]);
    g.create_host_read("out", &out).unwrap();
    let e = run(&g, prog);
    assert_eq!(
        e.read_tensor::<f32>("out").unwrap(),
        host_gather(&host_view, &[6, 7], &idx, &[5], 1)
    );
}

#[test]
fn gather_elements_matches_the_host_with_shorter_indices() {
    let shape = [6, 5, 4];
    let mut rng = Rng::new(3);
    let data = rng.i32s(120);
    for axis in 0..3 {
        let mut g = Graph::new(&target());
        let t = input(&mut g, "data", &shape, &data, 3);
        // Longer than data on the axis, shorter on the others.
        let mut ishape = [5, 4, 3];
        ishape[axis] = 9;
        let (idx, it) = indices(&mut g, &mut rng, &ishape, shape[axis], axis != 1);
        let mut prog = Vec::new();
        let out = popops::gather_elements(&mut g, &t, &it, axis, &mut prog, "ge").unwrap();
        assert_eq!(out.shape(), ishape);
        g.create_host_read("out", &out).unwrap();
        let e = run(&g, prog);
        let want = host_gather_elements(&data, &shape, &idx, &ishape, axis);
        assert_eq!(e.read_tensor::<i32>("out").unwrap(), want, "axis {axis}");
    }
}

fn check_scatter<T: Element + Copy + PartialEq + std::fmt::Debug>(
    data: Vec<T>,
    upd: Vec<T>,
    reduction: ScatterReduction,
    add: impl Fn(T, T) -> T,
) {
    let shape = [5, 6];
    let ishape = [4, 6];
    for axis in 0..2 {
        let mut g = Graph::new(&target());
        let mut rng = Rng::new(4 + axis as u64);
        let t = input(&mut g, "data", &shape, &data, 4);
        // Small axes and 24 indices: many repeats.
        let (idx, it) = indices(&mut g, &mut rng, &ishape, shape[axis], true);
        let u = input(&mut g, "upd", &ishape, &upd, 5);
        let mut prog = Vec::new();
        let out =
            popops::scatter_elements(&mut g, &t, &it, &u, axis, reduction, &mut prog, "s").unwrap();
        g.create_host_read("out", &out).unwrap();
        g.create_host_read("data", &t).unwrap();
        let e = run(&g, prog);
        let want = match reduction {
            ScatterReduction::None => {
                host_scatter(&data, &shape, &idx, &ishape, &upd, axis, |_, u| u)
            }
            _ => host_scatter(&data, &shape, &idx, &ishape, &upd, axis, &add),
        };
        assert_eq!(
            e.read_tensor::<T>("out").unwrap(),
            want,
            "axis {axis}, {reduction:?}"
        );
        assert_eq!(
            e.read_tensor::<T>("data").unwrap(),
            data,
            "data is left alone"
        );
    }
}

#[test]
fn scatter_elements_matches_the_host_with_repeated_indices() {
    let mut rng = Rng::new(5);
    let (d, u) = (rng.f32s(30), rng.f32s(24));
    check_scatter(d.clone(), u.clone(), ScatterReduction::None, |a, _| a);
    check_scatter(d, u, ScatterReduction::Add, |a, b| a + b);
    let (d, u) = (rng.i32s(30), rng.i32s(24));
    check_scatter(
        d.clone(),
        u.clone(),
        ScatterReduction::Add,
        i32::wrapping_add,
    );
    check_scatter(rng.u32s(30), rng.u32s(24), ScatterReduction::None, |a, _| a);
    // half adds in f32 and rounds once per add.
    let h = |v: Vec<f32>| v.into_iter().map(f16::from_f32).collect::<Vec<_>>();
    check_scatter(
        h(rng.f32s(30)),
        h(rng.f32s(24)),
        ScatterReduction::Add,
        |a, b| f16::from_f32(a.to_f32() + b.to_f32()),
    );
}

/// Edge values (NaN, ±0, ±inf) and a few ordinary ones, so that scatters collide on them.
const EDGES: [f32; 10] = [
    f32::NAN,
    0.0,
    -0.0,
    f32::INFINITY,
    f32::NEG_INFINITY,
    1.0,
    -1.0,
    2.5,
    -3.0,
    0.5,
];

/// IEEE 754-2019 minimum/maximum and the canonical-NaN product, on the host.
fn host_reduce_f32(r: ScatterReduction, a: f32, u: f32) -> f32 {
    if a.is_nan() || u.is_nan() {
        return f32::NAN;
    }
    let both_zero = a == 0.0 && u == 0.0;
    match r {
        ScatterReduction::Mul => {
            let p = a * u;
            if p.is_nan() {
                f32::NAN
            } else {
                p
            }
        }
        ScatterReduction::Min if both_zero => {
            if a.is_sign_negative() {
                a
            } else {
                u
            }
        }
        ScatterReduction::Max if both_zero => {
            if a.is_sign_positive() {
                a
            } else {
                u
            }
        }
        ScatterReduction::Min => {
            if u < a {
                u
            } else {
                a
            }
        }
        ScatterReduction::Max => {
            if u > a {
                u
            } else {
                a
            }
        }
        _ => unreachable!("only mul, min and max here"),
    }
}

/// `scatter_elements` with `reduction` on every axis against the host, the bits of both
/// engine thread counts compared; `bits` gives an element's bits.
fn check_scatter_bits<T: Element + Copy + std::fmt::Debug>(
    data: Vec<T>,
    upd: Vec<T>,
    reduction: ScatterReduction,
    f: impl Fn(T, T) -> T,
    bits: impl Fn(T) -> u32,
) {
    let shape = [5, 6];
    let ishape = [4, 6];
    let b = |v: &[T]| v.iter().map(|&x| bits(x)).collect::<Vec<_>>();
    for axis in 0..2 {
        let mut g = Graph::new(&target());
        let mut rng = Rng::new(40 + axis as u64);
        let t = input(&mut g, "data", &shape, &data, 2);
        let (idx, it) = indices(&mut g, &mut rng, &ishape, shape[axis], axis == 0);
        let u = input(&mut g, "upd", &ishape, &upd, 3);
        let mut prog = Vec::new();
        let out =
            popops::scatter_elements(&mut g, &t, &it, &u, axis, reduction, &mut prog, "s").unwrap();
        g.create_host_read("out", &out).unwrap();
        let exe = poplar::compile(&g, &[Program::seq(prog)], &Default::default()).unwrap();
        let want = b(&host_scatter(&data, &shape, &idx, &ishape, &upd, axis, &f));
        for threads in [1, 2] {
            let mut e =
                poplar::Engine::new(&exe, poplar::EngineOptions::with_threads(threads)).unwrap();
            e.run(0).unwrap();
            let got = b(&e.read_tensor::<T>("out").unwrap());
            assert_eq!(got, want, "axis {axis}, {reduction:?}, {threads} threads");
        }
    }
}

#[test]
fn scatter_elements_mul_min_max_match_the_host_with_nan_zeros_and_infinities() {
    let mut rng = Rng::new(6);
    let mut edgy = |n: usize| -> Vec<f32> {
        (0..n)
            .map(|_| {
                let r = rng.next_u64();
                if r.is_multiple_of(4) {
                    rng.f32_in(-4.0, 4.0)
                } else {
                    EDGES[(r / 4) as usize % EDGES.len()]
                }
            })
            .collect()
    };
    let h = |v: Vec<f32>| v.into_iter().map(f16::from_f32).collect::<Vec<_>>();
    for r in [
        ScatterReduction::Mul,
        ScatterReduction::Min,
        ScatterReduction::Max,
    ] {
        let (d, u) = (edgy(30), edgy(24));
        check_scatter_bits(d, u, r, |a, b| host_reduce_f32(r, a, b), f32::to_bits);
        let (d, u) = (h(edgy(30)), h(edgy(24)));
        check_scatter_bits(
            d,
            u,
            r,
            |a, b| f16::from_f32(host_reduce_f32(r, a.to_f32(), b.to_f32())),
            |x| u32::from(x.to_bits()),
        );
    }
    let mut rng = Rng::new(7);
    let small = |rng: &mut Rng, n: usize| -> Vec<i32> {
        (0..n)
            .map(|i| {
                let r = rng.next_u64();
                if i.is_multiple_of(5) {
                    r as i32
                } else {
                    (r % 9) as i32 - 4
                }
            })
            .collect()
    };
    let (d, u) = (small(&mut rng, 30), small(&mut rng, 24));
    let as_u = |v: &[i32]| v.iter().map(|&x| x as u32).collect::<Vec<_>>();
    let id = |x: i32| x as u32;
    check_scatter_bits(
        d.clone(),
        u.clone(),
        ScatterReduction::Mul,
        i32::wrapping_mul,
        id,
    );
    check_scatter_bits(
        d.clone(),
        u.clone(),
        ScatterReduction::Min,
        std::cmp::min,
        id,
    );
    check_scatter_bits(
        d.clone(),
        u.clone(),
        ScatterReduction::Max,
        std::cmp::max,
        id,
    );
    let (du, uu) = (as_u(&d), as_u(&u));
    let idu = |x: u32| x;
    check_scatter_bits(
        du.clone(),
        uu.clone(),
        ScatterReduction::Mul,
        u32::wrapping_mul,
        idu,
    );
    check_scatter_bits(
        du.clone(),
        uu.clone(),
        ScatterReduction::Min,
        std::cmp::min,
        idu,
    );
    check_scatter_bits(du, uu, ScatterReduction::Max, std::cmp::max, idu);
}

/// An index outside `[-dim, dim)` fails the run, naming the op's compute set and the index.
#[test]
fn out_of_range_indices_fail_the_run_naming_the_op_and_index() {
    for (op, bad) in [
        ("gather", 5i32),
        ("gather", -6),
        ("gather_elements", 5),
        ("scatter_elements", -6),
    ] {
        let mut g = Graph::new(&target());
        let t = input(&mut g, "data", &[5, 2], &[1.0f32; 10], 2);
        let it = input(&mut g, "idx", &[3, 2], &[0i32, 1, -5, bad, 4, 2], 2);
        let u = input(&mut g, "upd", &[3, 2], &[0.0f32; 6], 2);
        let mut prog = Vec::new();
        let r = match op {
            "gather" => popops::gather(&mut g, &t, &it, 0, &mut prog, "x"),
            "gather_elements" => popops::gather_elements(&mut g, &t, &it, 0, &mut prog, "x"),
            _ => popops::scatter_elements(
                &mut g,
                &t,
                &it,
                &u,
                0,
                ScatterReduction::None,
                &mut prog,
                "x",
            ),
        };
        r.unwrap();
        let exe = poplar::compile(&g, &[Program::seq(prog)], &Default::default()).unwrap();
        let mut e = poplar::Engine::new(&exe, Default::default()).unwrap();
        let err = e.run(0).unwrap_err().to_string();
        assert!(err.contains(&format!("x/{op}_indices")), "{err}");
        assert!(
            err.contains(&format!("index {bad} (element 3 of the indices)")),
            "{err}"
        );
        assert!(err.contains("axis of 5"), "{err}");
    }
}

fn check_one_hot<T: Element + Copy + PartialEq + std::fmt::Debug>(one: T, zero: T) {
    let depth = 7;
    let raw: Vec<i64> = vec![0, 6, 3, -1, 7, 100, 2, 2, 5, -7, 1, 4, 6];
    for signed in [true, false] {
        let mut g = Graph::new(&target());
        let it = if signed {
            let v: Vec<i32> = raw.iter().map(|&x| x as i32).collect();
            input(&mut g, "idx", &[raw.len()], &v, 2)
        } else {
            let v: Vec<u32> = raw.iter().map(|&x| x as u32).collect();
            input(&mut g, "idx", &[raw.len()], &v, 2)
        };
        let mut prog = Vec::new();
        let enc = popops::one_hot(&mut g, &it, depth, T::DTYPE, &mut prog, "oh").unwrap();
        g.create_host_read("enc", &enc).unwrap();
        let e = run(&g, prog);
        let want: Vec<T> = raw
            .iter()
            .flat_map(|&i| (0..depth as i64).map(move |c| if c == i { one } else { zero }))
            .collect();
        assert_eq!(
            e.read_tensor::<T>("enc").unwrap(),
            want,
            "{} signed {signed}",
            T::DTYPE
        );
    }
}

#[test]
fn one_hot_matches_the_host_with_out_of_range_rows_zero() {
    check_one_hot(1.0f32, 0.0);
    check_one_hot(f16::ONE, f16::ZERO);
    check_one_hot(1i32, 0);
    let mut g = Graph::new(&target());
    let it = g.add_variable(DType::U32, &[0], "none");
    let enc = popops::one_hot(&mut g, &it, 4, DType::F32, &mut Vec::new(), "oh").unwrap();
    assert_eq!(enc.shape(), [0, 4]);
}

#[test]
fn shape_type_and_axis_mistakes_are_typed_errors() {
    let mut g = Graph::new(&target());
    let t = input(&mut g, "data", &[4, 3], &[0.0f32; 12], 3);
    let it = input(&mut g, "idx", &[2, 3], &[0i32; 6], 3);
    let ft = input(&mut g, "fidx", &[2, 3], &[0.0f32; 6], 3);
    let mut p = Vec::new();
    match popops::gather(&mut g, &t, &it, 2, &mut p, "x").unwrap_err() {
        OpError::Axis {
            op,
            tensor,
            axis,
            rank,
            ..
        } => {
            assert_eq!(
                (op.as_str(), tensor.as_str(), axis, rank),
                ("gather", "'data'", 2, 2)
            )
        }
        e => panic!("{e}"),
    }
    let e = popops::gather_elements(&mut g, &t, &ft, 0, &mut p, "x").unwrap_err();
    assert!(
        matches!(
            e,
            OpError::DType {
                got: DType::F32,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("'indices'"), "{e}");
    let long = input(&mut g, "long", &[2, 5], &[0i32; 10], 3);
    let e = popops::gather_elements(&mut g, &t, &long, 0, &mut p, "x").unwrap_err();
    assert!(e.to_string().contains("axis 1 of 'indices' (5)"), "{e}");
    let u = input(&mut g, "u", &[2, 2], &[0.0f32; 4], 3);
    let e = popops::scatter_elements(&mut g, &t, &it, &u, 0, ScatterReduction::None, &mut p, "x")
        .unwrap_err();
    assert!(e.to_string().contains("'updates'"), "{e}");
    let ut = input(&mut g, "ut", &[4, 3], &[0u32; 12], 3);
    let uu = input(&mut g, "uu", &[2, 3], &[0u32; 6], 3);
    let e = popops::scatter_elements(&mut g, &ut, &it, &uu, 0, ScatterReduction::Add, &mut p, "x")
        .unwrap_err();
    assert!(matches!(e, OpError::Unsupported { .. }), "{e}");
    let e = popops::one_hot(&mut g, &it, 3, DType::F32, &mut p, "x").unwrap_err();
    assert!(e.to_string().contains("must be a vector"), "{e}");
    let enc = g.add_variable(DType::U32, &[6, 3], "enc");
    let e = popops::encode_one_hot(&mut g, &it.flatten(), &enc, &mut p, "x").unwrap_err();
    assert!(
        matches!(
            e,
            OpError::DType {
                got: DType::U32,
                ..
            }
        ),
        "{e}"
    );
    let empty = g.add_variable(DType::F32, &[0, 3], "empty");
    let e = popops::gather(&mut g, &empty, &it, 0, &mut p, "x").unwrap_err();
    assert!(e.to_string().contains("axis 0 of 'data' is empty"), "{e}");
}
