//! popops' reductions over axes against a host reference written here: f32 sums within a
//! stated bound of an f64 sum, everything else exact; every op and dtype, scale and update,
//! empty axes and tensors, ±inf/NaN, non-contiguous views, many tiles, typed errors.

#[path = "../../../codelets/tests/common/mod.rs"]
mod common;
mod support;

use common::Rng;
use poplar::{f16, DType, Element, EngineOptions, Graph, Program, Target, Tensor};
use popops::{reduce, reduce_with_output, OpError, Operation, ReduceParams};
use support::{check_f32, host_arg, host_reduce, input, ref_f64, run, target};

const OPS: [Operation; 5] = [
    Operation::Add,
    Operation::SquareAdd,
    Operation::Mul,
    Operation::Max,
    Operation::Min,
];

/// Reduces `x` (already in `g`) over `dims` with `params` into a new tensor read back as "out".
fn reduce_run<T: Element>(
    mut g: Graph,
    x: &Tensor,
    out_dtype: DType,
    dims: &[usize],
    params: ReduceParams,
) -> Vec<T> {
    let mut prog = Vec::new();
    let out = reduce(&mut g, x, out_dtype, dims, params, &mut prog, "r").unwrap();
    g.create_host_read("out", &out).unwrap();
    run(&g, prog).read_tensor::<T>("out").unwrap()
}

const SHAPE: [usize; 3] = [3, 5, 7];
const AXES: [&[usize]; 8] = [&[0], &[1], &[2], &[0, 2], &[2, 0], &[1, 2], &[0, 1, 2], &[]];

/// Every f32 op over the first, middle, last, several, all and no axes of a [3, 5, 7] tensor
/// spread over 4 tiles in grains of 3 (rows cut between tiles).
#[test]
fn f32_ops_over_axes() {
    let mut r = Rng::new(52);
    let data: Vec<f32> = (0..105).map(|_| r.f32_in(0.5, 1.5)).collect();
    for op in OPS {
        for dims in AXES {
            let mut g = Graph::new(&target(false));
            let x = input(&mut g, "x", &SHAPE, &data, 3);
            let got: Vec<f32> = reduce_run(g, &x, DType::F32, dims, op.into());
            let n: usize = dims.iter().map(|&d| SHAPE[d]).product();
            check_f32(
                op,
                &got,
                &ref_f64(op, &data, &SHAPE, dims),
                n,
                &format!("{op:?} {dims:?}"),
            );
        }
    }
}

/// Integers are exact (wrapping): full-range values for add, mul and square-add.
#[test]
fn integer_ops_exact() {
    let mut r = Rng::new(7);
    let di = r.i32s(105);
    let du = r.u32s(105);
    for op in OPS {
        for dims in AXES {
            let mut g = Graph::new(&target(false));
            let x = input(&mut g, "x", &SHAPE, &di, 5);
            let got: Vec<i32> = reduce_run(g, &x, DType::I32, dims, op.into());
            let init = match op {
                Operation::Mul => 1,
                Operation::Max => i32::MIN,
                Operation::Min => i32::MAX,
                _ => 0,
            };
            let want = host_reduce(&di, &SHAPE, dims, init, |a: i32, x| match op {
                Operation::Add => a.wrapping_add(x),
                Operation::SquareAdd => a.wrapping_add(x.wrapping_mul(x)),
                Operation::Mul => a.wrapping_mul(x),
                Operation::Max => a.max(x),
                _ => a.min(x),
            });
            assert_eq!(got, want, "i32 {op:?} {dims:?}");

            let mut g = Graph::new(&target(false));
            let x = input(&mut g, "x", &SHAPE, &du, 2);
            let got: Vec<u32> = reduce_run(g, &x, DType::U32, dims, op.into());
            let init = match op {
                Operation::Mul => 1,
                Operation::Max => 0,
                Operation::Min => u32::MAX,
                _ => 0,
            };
            let want = host_reduce(&du, &SHAPE, dims, init, |a: u32, x| match op {
                Operation::Add => a.wrapping_add(x),
                Operation::SquareAdd => a.wrapping_add(x.wrapping_mul(x)),
                Operation::Mul => a.wrapping_mul(x),
                Operation::Max => a.max(x),
                _ => a.min(x),
            });
            assert_eq!(got, want, "u32 {op:?} {dims:?}");
        }
    }
}

#[test]
fn logical_ops_on_bool() {
    let mut r = Rng::new(3);
    // Mostly true, so that `and` is not always false.
    let data: Vec<bool> = (0..105).map(|_| !r.next_u64().is_multiple_of(8)).collect();
    for (op, init) in [(Operation::LogicalAnd, true), (Operation::LogicalOr, false)] {
        for dims in AXES {
            let mut g = Graph::new(&target(false));
            let x = input(&mut g, "x", &SHAPE, &data, 4);
            let got: Vec<bool> = reduce_run(g, &x, DType::Bool, dims, op.into());
            let want = host_reduce(&data, &SHAPE, dims, init, |a, x| match op {
                Operation::LogicalAnd => a && x,
                _ => a || x,
            });
            assert_eq!(got, want, "{op:?} {dims:?}");
        }
    }
}

/// f16 accumulates in f32: into f32 the f32 bound holds; into f16 the result is that value
/// rounded once (within half an f16 ulp of it, plus the f32 bound).
#[test]
fn half_accumulates_in_f32() {
    let mut r = Rng::new(11);
    let data: Vec<f16> = (0..105)
        .map(|_| f16::from_f32(r.f32_in(-4.0, 4.0)))
        .collect();
    let wide: Vec<f32> = data.iter().map(|h| h.to_f32()).collect();
    for dims in AXES {
        let n: usize = dims.iter().map(|&d| SHAPE[d]).product();
        let want = ref_f64(Operation::Add, &wide, &SHAPE, dims);
        let mut g = Graph::new(&target(false));
        let x = input(&mut g, "x", &SHAPE, &data, 4);
        let got: Vec<f32> = reduce_run(g, &x, DType::F32, dims, Operation::Add.into());
        check_f32(Operation::Add, &got, &want, n, &format!("f16→f32 {dims:?}"));
        let mut g = Graph::new(&target(false));
        let x = input(&mut g, "x", &SHAPE, &data, 4);
        let got: Vec<f16> = reduce_run(g, &x, DType::F16, dims, Operation::Add.into());
        for (i, (h, &(w, mag))) in got.iter().zip(&want).enumerate() {
            let h = f64::from(h.to_f32());
            let half_ulp = w.abs().max(f64::from(f16::MIN_POSITIVE.to_f32())) * 2f64.powi(-11);
            let bound = half_ulp + (n as f64 + 1.0) * f64::from(f32::EPSILON) * mag;
            assert!(
                (h - w).abs() <= bound * 1.001,
                "f16 {dims:?} {i}: {h} vs {w}"
            );
        }
        // Max of halves is exact.
        let mut g = Graph::new(&target(false));
        let x = input(&mut g, "x", &SHAPE, &data, 4);
        let got: Vec<f16> = reduce_run(g, &x, DType::F16, dims, Operation::Max.into());
        let want = host_reduce(&wide, &SHAPE, dims, f32::NEG_INFINITY, f32::max);
        let got: Vec<f32> = got.iter().map(|h| h.to_f32()).collect();
        assert_eq!(got, want, "f16 max {dims:?}");
    }
}

/// `out = scale · r` and `out += scale · r`, f32 and an integer scale on i32.
#[test]
fn scale_and_update() {
    let mut r = Rng::new(5);
    let data = r.f32s(105);
    let init = r.f32s(15);
    let mut g = Graph::new(&target(false));
    let x = input(&mut g, "x", &SHAPE, &data, 3);
    let out = input(&mut g, "out", &[3, 5], &init, 2);
    let scaled = g.add_variable(DType::F32, &[5, 7], "scaled");
    g.create_host_read("out", &out).unwrap();
    g.create_host_read("scaled", &scaled).unwrap();
    let mut prog = Vec::new();
    let p = ReduceParams::new(Operation::Add)
        .with_scale(-0.5)
        .with_update(true);
    reduce_with_output(&mut g, &x, &out, &[2], p, &mut prog, "upd").unwrap();
    let p = ReduceParams::new(Operation::Max).with_scale(3.0);
    reduce_with_output(&mut g, &x, &scaled, &[0], p, &mut prog, "sc").unwrap();
    let e = run(&g, prog);
    let sums = ref_f64(Operation::Add, &data, &SHAPE, &[2]);
    let got = e.read_tensor::<f32>("out").unwrap();
    for i in 0..15 {
        let want = f64::from(init[i]) - 0.5 * sums[i].0;
        let bound = 8.0 * f64::from(f32::EPSILON) * (sums[i].1 + f64::from(init[i].abs()));
        assert!((f64::from(got[i]) - want).abs() <= bound, "update {i}");
    }
    let maxes = host_reduce(&data, &SHAPE, &[0], f32::NEG_INFINITY, f32::max);
    let want: Vec<f32> = maxes.iter().map(|m| 3.0 * m).collect();
    assert_eq!(e.read_tensor::<f32>("scaled").unwrap(), want);

    // i32: out += -3 · sum, wrapping.
    let di = r.i32s(105);
    let oi = r.i32s(21);
    let mut g = Graph::new(&target(false));
    let x = input(&mut g, "x", &SHAPE, &di, 3);
    let out = input(&mut g, "out", &[3, 7], &oi, 3);
    g.create_host_read("out", &out).unwrap();
    let mut prog = Vec::new();
    let p = ReduceParams::new(Operation::Add)
        .with_scale(-3.0)
        .with_update(true);
    reduce_with_output(&mut g, &x, &out, &[1], p, &mut prog, "i").unwrap();
    let sums = host_reduce(&di, &SHAPE, &[1], 0i32, i32::wrapping_add);
    let want: Vec<i32> = oi
        .iter()
        .zip(&sums)
        .map(|(&o, &s)| o.wrapping_add(s.wrapping_mul(-3)))
        .collect();
    assert_eq!(run(&g, prog).read_tensor::<i32>("out").unwrap(), want);
}

/// An axis of size 0 gives scale × the identity; an empty output is no work.
#[test]
fn empty_axes_and_tensors() {
    for (op, want) in [
        (Operation::Add, 0.0),
        (Operation::Mul, 2.0),
        (Operation::Max, f32::NEG_INFINITY),
        (Operation::Min, f32::INFINITY),
    ] {
        let mut g = Graph::new(&target(false));
        let x = g.add_variable(DType::F32, &[4, 0], "x");
        let got: Vec<f32> = reduce_run(
            g,
            &x,
            DType::F32,
            &[1],
            ReduceParams::new(op).with_scale(2.0),
        );
        assert_eq!(got, vec![want; 4], "{op:?}");
    }
    let mut g = Graph::new(&target(false));
    let x = input(&mut g, "x", &[0, 3], &[] as &[f32], 1);
    let mut prog = Vec::new();
    let out = reduce(&mut g, &x, DType::F32, &[1], Operation::Add, &mut prog, "r").unwrap();
    assert_eq!(out.shape(), [0]);
    assert!(prog.is_empty());
}

/// ±inf and NaN: sums give inf or NaN as IEEE does, max/min propagate NaN.
#[test]
fn infinities_and_nan() {
    let inf = f32::INFINITY;
    let data = [
        1.0,
        inf,
        2.0, // row 0: sum inf, max inf
        inf,
        -inf,
        0.0, // row 1: sum NaN
        1.0,
        f32::NAN,
        3.0, // row 2: NaN everywhere
        -inf,
        -1.0,
        -2.0, // row 3: sum -inf, min -inf, max -1
    ];
    for op in [Operation::Add, Operation::Max, Operation::Min] {
        let mut g = Graph::new(&target(false));
        let x = input(&mut g, "x", &[4, 3], &data, 2);
        let got: Vec<f32> = reduce_run(g, &x, DType::F32, &[1], op.into());
        check_f32(
            op,
            &got,
            &ref_f64(op, &data, &[4, 3], &[1]),
            3,
            &format!("{op:?}"),
        );
        assert!(got[2].is_nan(), "{op:?}: {got:?}");
    }
}

/// A transposed view and a sliced view reduce as the tensors they show.
#[test]
fn non_contiguous_views() {
    let mut r = Rng::new(9);
    let data = r.small_i32s(6 * 10);
    let base_shape = [6, 10];
    // The transpose [10, 6]: element (i, j) is data[j·10 + i].
    let t: Vec<i32> = (0..60).map(|k| data[(k % 6) * 10 + k / 6]).collect();
    // Columns 2..7 of rows 1..5: shape [4, 5].
    let s: Vec<i32> = (1..5)
        .flat_map(|i| (2..7).map(move |j| (i, j)))
        .map(|(i, j)| data[i * 10 + j])
        .collect();
    for dims in [&[0usize][..], &[1], &[0, 1]] {
        let mut g = Graph::new(&target(false));
        let x = input(&mut g, "x", &base_shape, &data, 7);
        let view = x.transpose().unwrap();
        let got: Vec<i32> = reduce_run(g, &view, DType::I32, dims, Operation::Add.into());
        assert_eq!(
            got,
            host_reduce(&t, &[10, 6], dims, 0, |a, x| a + x),
            "T {dims:?}"
        );

        let mut g = Graph::new(&target(false));
        let x = input(&mut g, "x", &base_shape, &data, 7);
        let view = x.slice_dim(0, 1..5).unwrap().slice_dim(1, 2..7).unwrap();
        let got: Vec<i32> = reduce_run(g, &view, DType::I32, dims, Operation::Max.into());
        let want = host_reduce(&s, &[4, 5], dims, i32::MIN, |a, x| a.max(x));
        assert_eq!(got, want, "slice {dims:?}");
    }
}

/// A [64, 100] tensor over 64 tiles in grains of 7, both axes (and a cumulative sum): the
/// same bits with 1 and 4 engine threads and at every ISA level the host supports.
#[test]
fn many_tiles_same_bits_any_threads_and_isa() {
    use poplar::isa::IsaLevel;
    let mut r = Rng::new(13);
    let data = r.f32s(6400);
    let shape = [64, 100];
    let mut runs = vec![(1, IsaLevel::Baseline)];
    runs.extend(poplar::isa::supported().into_iter().map(|l| (4, l)));
    for dims in [&[0usize][..], &[1]] {
        let mut bits = Vec::new();
        for &(threads, isa) in &runs {
            let mut g = Graph::new(&Target::custom(64, 256 * 1024));
            let x = input(&mut g, "x", &shape, &data, 7);
            let mut prog = Vec::new();
            let out = reduce(&mut g, &x, DType::F32, dims, Operation::Add, &mut prog, "r").unwrap();
            let c = popops::cumsum(&mut g, &x, dims[0], false, &mut prog, "c").unwrap();
            g.create_host_read("out", &out).unwrap();
            g.create_host_read("c", &c).unwrap();
            let exe = poplar::compile(&g, &[Program::seq(prog)], &Default::default()).unwrap();
            let opts = EngineOptions {
                threads: Some(threads),
                isa: Some(isa),
                ..Default::default()
            };
            let mut e = poplar::Engine::new(&exe, opts).unwrap();
            e.run(0).unwrap();
            let got = e.read_tensor::<f32>("out").unwrap();
            let n = shape[dims[0]];
            let want = ref_f64(Operation::Add, &data, &shape, dims);
            check_f32(Operation::Add, &got, &want, n, "tiles");
            let mut b: Vec<u32> = got.iter().map(|v| v.to_bits()).collect();
            b.extend(
                e.read_tensor::<f32>("c")
                    .unwrap()
                    .iter()
                    .map(|v| v.to_bits()),
            );
            bits.push(b);
        }
        for (b, run) in bits.iter().zip(&runs) {
            assert!(
                b == &bits[0],
                "{dims:?}: {run:?} differs from 1 thread at the baseline"
            );
        }
    }
}

/// Bad axes, output shapes, types and scales are typed errors naming the tensor and the axis.
#[test]
fn typed_errors() {
    let mut g = Graph::new(&target(false));
    let x = input(&mut g, "x", &[2, 3], &[0.0f32; 6], 1);
    let mut prog = Vec::new();
    let e = reduce(&mut g, &x, DType::F32, &[2], Operation::Add, &mut prog, "r").unwrap_err();
    assert!(
        matches!(&e, OpError::Axis { axis: 2, tensor, .. } if tensor == "'x'"),
        "{e}"
    );
    assert!(e.to_string().contains("out of range"), "{e}");
    let e = reduce(
        &mut g,
        &x,
        DType::F32,
        &[1, 1],
        Operation::Add,
        &mut prog,
        "r",
    )
    .unwrap_err();
    assert!(matches!(&e, OpError::Axis { axis: 1, .. }), "{e}");
    assert!(e.to_string().contains("repeated"), "{e}");

    let out = g.add_variable(DType::F32, &[3], "o");
    let e = reduce_with_output(&mut g, &x, &out, &[1], Operation::Add, &mut prog, "r").unwrap_err();
    assert!(
        matches!(&e, OpError::Shape { .. }) && e.to_string().contains("'o'"),
        "{e}"
    );
    let e = reduce(&mut g, &x, DType::I32, &[1], Operation::Add, &mut prog, "r").unwrap_err();
    assert!(
        matches!(
            &e,
            OpError::DType {
                got: DType::I32,
                ..
            }
        ),
        "{e}"
    );
    let e = reduce(
        &mut g,
        &x,
        DType::F32,
        &[1],
        Operation::LogicalOr,
        &mut prog,
        "r",
    )
    .unwrap_err();
    assert!(
        matches!(
            &e,
            OpError::DType {
                got: DType::F32,
                ..
            }
        ),
        "{e}"
    );

    let b = input(&mut g, "b", &[2], &[true, false], 1);
    let e = reduce(
        &mut g,
        &b,
        DType::Bool,
        &[0],
        Operation::Add,
        &mut prog,
        "r",
    )
    .unwrap_err();
    assert!(
        matches!(
            &e,
            OpError::DType {
                got: DType::Bool,
                ..
            }
        ),
        "{e}"
    );
    let i = input(&mut g, "i", &[2], &[1i32, 2], 1);
    let p = ReduceParams::new(Operation::Add).with_scale(0.5);
    let e = reduce(&mut g, &i, DType::I32, &[0], p, &mut prog, "r").unwrap_err();
    assert!(e.to_string().contains("scale 0.5"), "{e}");
    let p = ReduceParams::new(Operation::Add).with_update(true);
    assert!(reduce(&mut g, &x, DType::F32, &[0], p, &mut prog, "r").is_err());
    assert!(prog.is_empty(), "nothing added on error");
    let u = g.add_variable(DType::F32, &[4], "unmapped");
    let e = reduce(&mut g, &u, DType::F32, &[0], Operation::Add, &mut prog, "r").unwrap_err();
    assert!(e.to_string().contains("input 'unmapped'"), "{e}");
}

/// The host's left-to-right prefix sums along `axis` (the vertex's order, so f32 is exact).
fn host_cumsum<T: Copy>(
    data: &[T],
    shape: &[usize],
    axis: usize,
    exclusive: bool,
    zero: T,
    add: impl Fn(T, T) -> T,
) -> Vec<T> {
    let inner: usize = shape[axis + 1..].iter().product();
    let n = shape[axis];
    let mut out = data.to_vec();
    for (f, o) in out.iter_mut().enumerate() {
        let j = (f / inner) % n;
        let start = f - j * inner;
        let upto = if exclusive { j } else { j + 1 };
        *o = (0..upto).fold(zero, |a, k| add(a, data[start + k * inner]));
    }
    out
}

#[test]
fn cumsum_along_each_axis() {
    let mut r = Rng::new(21);
    let df = r.f32s(105);
    let di = r.i32s(105);
    let du = r.u32s(105);
    for axis in 0..3 {
        for exclusive in [false, true] {
            let mut g = Graph::new(&target(false));
            let x = input(&mut g, "x", &SHAPE, &df, 3);
            let y = input(&mut g, "y", &SHAPE, &di, 4);
            let z = input(&mut g, "z", &SHAPE, &du, 5);
            let mut prog = Vec::new();
            let cx = popops::cumsum(&mut g, &x, axis, exclusive, &mut prog, "cx").unwrap();
            let cy = popops::cumsum(&mut g, &y, axis, exclusive, &mut prog, "cy").unwrap();
            let cz = popops::cumsum(&mut g, &z, axis, exclusive, &mut prog, "cz").unwrap();
            assert_eq!(cx.shape(), SHAPE);
            for (n, t) in [("cx", &cx), ("cy", &cy), ("cz", &cz)] {
                g.create_host_read(n, t).unwrap();
            }
            let e = run(&g, prog);
            let what = format!("axis {axis} exclusive {exclusive}");
            let want = host_cumsum(&df, &SHAPE, axis, exclusive, 0.0f32, |a, b| a + b);
            let got = e.read_tensor::<f32>("cx").unwrap();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "f32 {what}");
            // Against f64 too: each prefix within j · ε · Σ|x| of the exact sum.
            let exact = host_cumsum(
                &df.iter().map(|&v| f64::from(v)).collect::<Vec<_>>(),
                &SHAPE,
                axis,
                exclusive,
                0.0,
                |a, b| a + b,
            );
            for (g, w) in got.iter().zip(&exact) {
                assert!(
                    (f64::from(*g) - w).abs() <= 8.0 * 8.0 * 7.0 * 1.2e-7,
                    "{what}"
                );
            }
            let want = host_cumsum(&di, &SHAPE, axis, exclusive, 0, i32::wrapping_add);
            assert_eq!(e.read_tensor::<i32>("cy").unwrap(), want, "i32 {what}");
            let want = host_cumsum(&du, &SHAPE, axis, exclusive, 0, u32::wrapping_add);
            assert_eq!(e.read_tensor::<u32>("cz").unwrap(), want, "u32 {what}");
        }
    }
}

#[test]
fn arg_max_and_min_ties_and_nan() {
    let mut r = Rng::new(31);
    // Few distinct values, so ties are common; a few NaNs and infinities.
    let mut df: Vec<f32> = (0..105).map(|_| (r.next_u64() % 5) as f32 - 2.0).collect();
    df[17] = f32::NAN;
    df[40] = f32::NAN;
    df[41] = f32::INFINITY;
    df[90] = f32::NEG_INFINITY;
    let di: Vec<i32> = (0..105).map(|_| (r.next_u64() % 7) as i32 - 3).collect();
    let dh: Vec<f16> = df.iter().map(|&v| f16::from_f32(v)).collect();
    let wide = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<_>>();
    for axis in 0..3 {
        for max in [true, false] {
            let mut g = Graph::new(&target(false));
            let x = input(&mut g, "x", &SHAPE, &df, 3);
            let y = input(&mut g, "y", &SHAPE, &di, 4);
            let h = input(&mut g, "h", &SHAPE, &dh, 8);
            let mut prog = Vec::new();
            let f = if max {
                popops::arg_max
            } else {
                popops::arg_min
            };
            let ax = f(&mut g, &x, axis, &mut prog, "ax").unwrap();
            let ay = f(&mut g, &y, axis, &mut prog, "ay").unwrap();
            let ah = f(&mut g, &h, axis, &mut prog, "ah").unwrap();
            let mut want_shape = SHAPE.to_vec();
            want_shape.remove(axis);
            assert_eq!(ax.shape(), want_shape.as_slice());
            assert_eq!(ax.dtype(), DType::U32);
            for (n, t) in [("ax", &ax), ("ay", &ay), ("ah", &ah)] {
                g.create_host_read(n, t).unwrap();
            }
            let e = run(&g, prog);
            let what = format!("axis {axis} max {max}");
            let want = host_arg(&wide(&df), &SHAPE, axis, max);
            assert_eq!(e.read_tensor::<u32>("ax").unwrap(), want, "f32 {what}");
            assert_eq!(e.read_tensor::<u32>("ah").unwrap(), want, "f16 {what}");
            let wi: Vec<f64> = di.iter().map(|&v| f64::from(v)).collect();
            let want = host_arg(&wi, &SHAPE, axis, max);
            assert_eq!(e.read_tensor::<u32>("ay").unwrap(), want, "i32 {what}");
        }
    }
}

/// Lines spread over many tiles (rows cut between tiles) and a transposed view.
#[test]
fn scans_over_many_tiles_and_views() {
    let mut r = Rng::new(41);
    let data = r.small_i32s(64 * 50);
    let shape = [64, 50];
    let mut g = Graph::new(&Target::custom(32, 256 * 1024));
    let x = input(&mut g, "x", &shape, &data, 7);
    let t = x.transpose().unwrap();
    let mut prog = Vec::new();
    let c = popops::cumsum(&mut g, &x, 1, false, &mut prog, "c").unwrap();
    let a = popops::arg_max(&mut g, &t, 1, &mut prog, "a").unwrap();
    g.create_host_read("c", &c).unwrap();
    g.create_host_read("a", &a).unwrap();
    let e = run(&g, prog);
    let want = host_cumsum(&data, &shape, 1, false, 0, |a, b| a + b);
    assert_eq!(e.read_tensor::<i32>("c").unwrap(), want);
    // arg_max over axis 1 of the transpose is arg_max over axis 0 of x.
    let wi: Vec<f64> = data.iter().map(|&v| f64::from(v)).collect();
    assert_eq!(
        e.read_tensor::<u32>("a").unwrap(),
        host_arg(&wi, &shape, 0, true)
    );
}

#[test]
fn scan_typed_errors() {
    let mut g = Graph::new(&target(false));
    let x = input(&mut g, "x", &[2, 3], &[0.0f32; 6], 1);
    let b = input(&mut g, "b", &[2], &[true, false], 1);
    let z = g.add_variable(DType::F32, &[2, 0], "z");
    let mut prog = Vec::new();
    let e = popops::cumsum(&mut g, &x, 2, false, &mut prog, "c").unwrap_err();
    assert!(
        matches!(&e, OpError::Axis { axis: 2, tensor, .. } if tensor == "'x'"),
        "{e}"
    );
    let e = popops::cumsum(&mut g, &b, 0, false, &mut prog, "c").unwrap_err();
    assert!(
        matches!(
            &e,
            OpError::DType {
                got: DType::Bool,
                ..
            }
        ),
        "{e}"
    );
    let e = popops::arg_min(&mut g, &x, 5, &mut prog, "a").unwrap_err();
    assert!(matches!(&e, OpError::Axis { axis: 5, .. }), "{e}");
    let e = popops::arg_max(&mut g, &z, 1, &mut prog, "a").unwrap_err();
    assert!(
        matches!(&e, OpError::Axis { axis: 1, .. }) && e.to_string().contains("size 0"),
        "{e}"
    );
    assert!(prog.is_empty());
    // An empty cumulative sum is an empty tensor and no work.
    let c = popops::cumsum(&mut g, &z, 1, true, &mut prog, "c").unwrap();
    assert_eq!(c.shape(), [2, 0]);
    assert!(prog.is_empty());
}

/// The whole-tensor `reduce_all` takes every `Operation`: add, max and min on its own two
/// stages, the rest through the reduction over every axis; each against the host.
#[test]
fn reduce_all_takes_every_operation() {
    let xs: Vec<f32> = (1..=6).map(|v| v as f32).collect();
    let mut g = Graph::new(&target(false));
    let x = input(&mut g, "x", &[2, 3], &xs, 2);
    let mut progs = Vec::new();
    let ops = [
        (Operation::Add, 21.0),
        (Operation::Max, 6.0),
        (Operation::Min, 1.0),
        (Operation::Mul, 720.0),
        (Operation::SquareAdd, 91.0),
    ];
    for (op, _) in ops {
        let out = g.add_variable(DType::F32, &[1], &format!("{op:?}"));
        g.set_tile_mapping(&out, 3).unwrap();
        g.create_host_read(&format!("{op:?}"), &out).unwrap();
        progs.push(popops::reduce_all(&mut g, op, &x, &out, &format!("{op:?}")).unwrap());
    }
    let e = run(&g, progs);
    for (op, want) in ops {
        assert_eq!(
            e.read_tensor::<f32>(&format!("{op:?}")).unwrap(),
            [want],
            "{op:?}"
        );
    }
}
