//! ONNX `GatherND` and `ScatterND` against host loops written here: random shapes (data of
//! rank 1 to 4, 0 to 2 batch dims, every tuple length `m`), f32/f16/i32/u32 data spread over
//! many tiles with the indices on other tiles, negative indices, repeated tuples under every
//! reduction, NaN/±0/±inf for min and max, a non-contiguous view of `data`, empty index
//! tensors and empty slices, run-time errors for out-of-range indices and a typed error for
//! each mistake. Every graph runs with 1 and 2 engine threads and gives the same bits.

#[path = "../../../codelets/tests/common/mod.rs"]
mod common;
mod support;

use common::Rng;
use poplar::{
    compile, f16, CompileOptions, DType, Element, Engine, EngineOptions, Graph, Program, Target,
    Tensor,
};
use popops::gather::ScatterReduction as R;
use popops::OpError;
use support::input;

fn target() -> Target {
    Target::custom(16, 256 * 1024)
}

/// An element type under test: its bits, a value pool with the edge values and the host's
/// reductions (floats: NaN if either is NaN, −0 below +0; half in f32, rounded once).
trait Elem: Element + Copy + std::fmt::Debug {
    fn bits(self) -> u64;
    fn pick(rng: &mut Rng) -> Self;
    fn reduce(r: R, a: Self, u: Self) -> Self;
}

const POOL: [f32; 12] = [
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
    7.0,
    -0.25,
];

fn pick_f32(rng: &mut Rng) -> f32 {
    let r = rng.next_u64();
    if r.is_multiple_of(3) {
        rng.f32_in(-4.0, 4.0)
    } else {
        POOL[(r / 3) as usize % POOL.len()]
    }
}

fn host_f32(r: R, a: f32, u: f32) -> f32 {
    let nan = a.is_nan() || u.is_nan();
    match r {
        R::None => u,
        R::Add | R::Mul => {
            let v = if r == R::Add { a + u } else { a * u };
            if v.is_nan() {
                f32::NAN
            } else {
                v
            }
        }
        _ if nan => f32::NAN,
        R::Min if a == 0.0 && u == 0.0 => {
            if a.is_sign_negative() || u.is_sign_negative() {
                -0.0
            } else {
                0.0
            }
        }
        R::Max if a == 0.0 && u == 0.0 => {
            if a.is_sign_positive() || u.is_sign_positive() {
                0.0
            } else {
                -0.0
            }
        }
        R::Min => {
            if u < a {
                u
            } else {
                a
            }
        }
        R::Max => {
            if u > a {
                u
            } else {
                a
            }
        }
    }
}

impl Elem for f32 {
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn pick(rng: &mut Rng) -> f32 {
        pick_f32(rng)
    }
    fn reduce(r: R, a: f32, u: f32) -> f32 {
        host_f32(r, a, u)
    }
}

impl Elem for f16 {
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn pick(rng: &mut Rng) -> f16 {
        f16::from_f32(pick_f32(rng))
    }
    fn reduce(r: R, a: f16, u: f16) -> f16 {
        match r {
            R::None => u,
            // As the existing half adds: the f32 sum rounded, its NaN not made canonical.
            R::Add => f16::from_f32(a.to_f32() + u.to_f32()),
            _ => f16::from_f32(host_f32(r, a.to_f32(), u.to_f32())),
        }
    }
}

impl Elem for i32 {
    fn bits(self) -> u64 {
        u64::from(self as u32)
    }
    fn pick(rng: &mut Rng) -> i32 {
        let r = rng.next_u64();
        if r.is_multiple_of(4) {
            r as i32
        } else {
            (r % 11) as i32 - 5
        }
    }
    fn reduce(r: R, a: i32, u: i32) -> i32 {
        match r {
            R::None => u,
            R::Add => a.wrapping_add(u),
            R::Mul => a.wrapping_mul(u),
            R::Min => a.min(u),
            R::Max => a.max(u),
        }
    }
}

impl Elem for u32 {
    fn bits(self) -> u64 {
        u64::from(self)
    }
    fn pick(rng: &mut Rng) -> u32 {
        let r = rng.next_u64();
        if r.is_multiple_of(4) {
            r as u32
        } else {
            (r % 9) as u32
        }
    }
    fn reduce(r: R, a: u32, u: u32) -> u32 {
        match r {
            R::None => u,
            R::Add => a.wrapping_add(u),
            R::Mul => a.wrapping_mul(u),
            R::Min => a.min(u),
            R::Max => a.max(u),
        }
    }
}

fn bits<T: Elem>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.bits()).collect()
}

/// Compiles once and runs with 1 and 2 engine threads; the host tensor `out` of both runs,
/// which must agree bit for bit.
fn run_both<T: Elem>(g: &Graph, prog: Vec<Program>) -> Vec<T> {
    let exe = compile(g, &[Program::seq(prog)], &CompileOptions::default())
        .unwrap_or_else(|e| panic!("compile: {e}"));
    let mut outs = Vec::new();
    for threads in [1, 2] {
        let mut e = Engine::new(&exe, EngineOptions::with_threads(threads)).unwrap();
        e.run(0).unwrap();
        outs.push(e.read_tensor::<T>("out").unwrap());
    }
    assert_eq!(bits(&outs[0]), bits(&outs[1]), "1 and 2 threads differ");
    outs.pop().unwrap()
}

fn coords(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        c[d] = i % shape[d];
        i /= shape[d];
    }
    c
}

fn flat(c: &[usize], shape: &[usize]) -> usize {
    c.iter().zip(shape).fold(0, |acc, (&x, &s)| acc * s + x)
}

fn norm(i: i64, dim: usize) -> usize {
    (if i < 0 { i + dim as i64 } else { i }) as usize
}

/// ONNX `GatherND` on the host: every output position, its tuple looked up in `idx`.
fn host_gather_nd<T: Copy>(
    data: &[T],
    shape: &[usize],
    idx: &[i64],
    ishape: &[usize],
    b: usize,
) -> Vec<T> {
    let q = ishape.len();
    let m = ishape[q - 1];
    let mut oshape = ishape[..q - 1].to_vec();
    oshape.extend_from_slice(&shape[b + m..]);
    let n: usize = oshape.iter().product();
    (0..n)
        .map(|o| {
            let c = coords(o, &oshape);
            let (i, j) = c.split_at(q - 1);
            let t = flat(i, &ishape[..q - 1]) * m;
            let mut dc = i[..b].to_vec();
            for k in 0..m {
                dc.push(norm(idx[t + k], shape[b + k]));
            }
            dc.extend_from_slice(j);
            data[flat(&dc, shape)]
        })
        .collect()
}

/// ONNX `ScatterND` on the host, the tuples in row-major order.
fn host_scatter_nd<T: Elem>(
    data: &[T],
    shape: &[usize],
    idx: &[i64],
    ishape: &[usize],
    upd: &[T],
    r: R,
) -> Vec<T> {
    let m = ishape[ishape.len() - 1];
    let slice: Vec<usize> = shape[m..].to_vec();
    let len: usize = slice.iter().product();
    let mut out = data.to_vec();
    for e in 0..idx.len() / m {
        for j in 0..len {
            let mut dc: Vec<usize> = (0..m).map(|k| norm(idx[e * m + k], shape[k])).collect();
            dc.extend(coords(j, &slice));
            let at = flat(&dc, shape);
            out[at] = T::reduce(r, out[at], upd[e * len + j]);
        }
    }
    out
}

/// Random tuples for axes `dims` (`signed`: in `[-dim, dim)`, else `[0, dim)`) as i64, and the
/// index tensor of `ishape`, spread over the tiles from the other end of `data`.
fn tuples(
    g: &mut Graph,
    rng: &mut Rng,
    ishape: &[usize],
    dims: &[usize],
    signed: bool,
) -> (Vec<i64>, Tensor) {
    let n: usize = ishape.iter().product();
    let m = dims.len();
    let v: Vec<i64> = (0..n)
        .map(|e| {
            let dim = dims[e % m] as i64;
            let r = (rng.next_u64() % (2 * dim as u64)) as i64;
            if signed {
                r - dim
            } else {
                r / 2
            }
        })
        .collect();
    let t = g.add_variable(if signed { DType::I32 } else { DType::U32 }, ishape, "idx");
    let tiles = g.target().num_tiles() as usize;
    let flat_t = t.flatten();
    for e in 0..n {
        let tile = tiles - 1 - (e / 2) % tiles;
        g.set_tile_mapping(&flat_t.slice(e..e + 1).unwrap(), tile as u32)
            .unwrap();
    }
    if signed {
        let d: Vec<i32> = v.iter().map(|&x| x as i32).collect();
        g.set_initial_value(&t, &d).unwrap();
    } else {
        let d: Vec<u32> = v.iter().map(|&x| x as u32).collect();
        g.set_initial_value(&t, &d).unwrap();
    }
    (v, t)
}

/// A random case: data shape (rank 1–4, small axes so tuples repeat), batch dims, `m`, and
/// the index shape (`batch ++ 0–2 more axes ++ [m]`).
fn random_case(rng: &mut Rng, batch: bool) -> (Vec<usize>, usize, Vec<usize>) {
    let r = 1 + (rng.next_u64() % 4) as usize;
    let shape: Vec<usize> = (0..r).map(|_| 1 + (rng.next_u64() % 4) as usize).collect();
    let b = if batch {
        (rng.next_u64() % (r.min(3) as u64)) as usize
    } else {
        0
    };
    let m = 1 + (rng.next_u64() % (r - b) as u64) as usize;
    let mut ishape = shape[..b].to_vec();
    for _ in 0..rng.next_u64() % 3 {
        ishape.push(1 + (rng.next_u64() % 4) as usize);
    }
    ishape.push(m);
    (shape, b, ishape)
}

fn check_gather_nd<T: Elem>(seed: u64) {
    let mut rng = Rng::new(seed);
    for case in 0..12 {
        let (shape, b, ishape) = random_case(&mut rng, true);
        let signed = case % 3 != 2;
        let n: usize = shape.iter().product();
        let data: Vec<T> = (0..n).map(|_| T::pick(&mut rng)).collect();
        let mut g = Graph::new(&target());
        let t = input(&mut g, "data", &shape, &data, 2);
        let m = ishape[ishape.len() - 1];
        let (idx, it) = tuples(&mut g, &mut rng, &ishape, &shape[b..b + m], signed);
        let mut prog = Vec::new();
        let out = popops::gather_nd(&mut g, &t, &it, b, &mut prog, "g").unwrap();
        g.create_host_read("out", &out).unwrap();
        let want = host_gather_nd(&data, &shape, &idx, &ishape, b);
        let what = format!("{} {shape:?} b {b} idx {ishape:?}", T::DTYPE);
        if want.is_empty() {
            assert_eq!(out.num_elements(), 0, "{what}");
            continue;
        }
        let got = run_both::<T>(&g, prog);
        assert_eq!(bits(&got), bits(&want), "{what}");
    }
}

#[test]
fn gather_nd_matches_the_host_on_random_shapes_and_types() {
    check_gather_nd::<f32>(1);
    check_gather_nd::<f16>(2);
    check_gather_nd::<i32>(3);
    check_gather_nd::<u32>(4);
}

fn check_scatter_nd<T: Elem>(seed: u64, reductions: &[R]) {
    let mut rng = Rng::new(seed);
    for case in 0..10 {
        let (shape, _, ishape) = random_case(&mut rng, false);
        let signed = case % 3 != 2;
        let m = ishape[ishape.len() - 1];
        let mut ushape = ishape[..ishape.len() - 1].to_vec();
        ushape.extend_from_slice(&shape[m..]);
        let n: usize = shape.iter().product();
        let nu: usize = ushape.iter().product();
        let data: Vec<T> = (0..n).map(|_| T::pick(&mut rng)).collect();
        let upd: Vec<T> = (0..nu).map(|_| T::pick(&mut rng)).collect();
        for &r in reductions {
            let mut g = Graph::new(&target());
            let t = input(&mut g, "data", &shape, &data, 2);
            let mut trng = Rng::new(seed * 100 + case);
            let (idx, it) = tuples(&mut g, &mut trng, &ishape, &shape[..m], signed);
            let u = input(&mut g, "upd", &ushape, &upd, 3);
            let mut prog = Vec::new();
            let out = popops::scatter_nd(&mut g, &t, &it, &u, r, &mut prog, "s").unwrap();
            assert_eq!(out.shape(), shape);
            g.create_host_read("out", &out).unwrap();
            let got = run_both::<T>(&g, prog);
            let want = host_scatter_nd(&data, &shape, &idx, &ishape, &upd, r);
            assert_eq!(
                bits(&got),
                bits(&want),
                "{} {shape:?} idx {ishape:?} {r:?}: {got:?} against {want:?}",
                T::DTYPE
            );
        }
    }
}

#[test]
fn scatter_nd_matches_the_host_with_repeated_tuples_under_every_reduction() {
    let all = [R::None, R::Add, R::Mul, R::Min, R::Max];
    check_scatter_nd::<f32>(11, &all);
    check_scatter_nd::<f16>(12, &all);
    check_scatter_nd::<i32>(13, &all);
    check_scatter_nd::<u32>(14, &[R::None, R::Mul, R::Min, R::Max]);
}

/// Every tuple the same: the reductions combine all updates in row-major order, and with
/// `None` the last wins; min/max of NaN, ±0 and ±inf.
#[test]
fn scatter_nd_of_one_repeated_tuple_combines_in_order() {
    let ups = [
        0.0f32,
        -0.0,
        f32::INFINITY,
        f32::NAN,
        -1.0,
        f32::NEG_INFINITY,
        2.0,
    ];
    let mut rev = ups;
    rev.reverse();
    for (r, ups) in [R::None, R::Add, R::Mul, R::Min, R::Max]
        .into_iter()
        .flat_map(|r| [(r, ups), (r, rev)])
    {
        for start in [-0.0f32, 0.0, f32::NAN, 3.0, f32::NEG_INFINITY] {
            // Updates 0..k of the pool at [1, 2] of a [3, 4] (m = 2, one element each).
            for k in 1..=ups.len() {
                let mut g = Graph::new(&target());
                let data = vec![start; 12];
                let t = input(&mut g, "data", &[3, 4], &data, 1);
                let it = input(&mut g, "idx", &[k, 2], &[1i32, -2].repeat(k), 1);
                let u = input(&mut g, "upd", &[k], &ups[..k], 1);
                let mut prog = Vec::new();
                let out = popops::scatter_nd(&mut g, &t, &it, &u, r, &mut prog, "s").unwrap();
                g.create_host_read("out", &out).unwrap();
                let got = run_both::<f32>(&g, prog);
                let mut want = data.clone();
                for &x in &ups[..k] {
                    want[6] = host_f32(r, want[6], x);
                }
                assert_eq!(bits(&got), bits(&want), "{r:?} from {start} over {k}");
            }
        }
    }
}

/// `data` a dim_shuffle'd (and sliced) view: every element strided.
#[test]
fn gather_and_scatter_nd_of_a_non_contiguous_view() {
    let mut rng = Rng::new(7);
    let raw = rng.f32s(4 * 5 * 6);
    let mut g = Graph::new(&target());
    let big = input(&mut g, "big", &[4, 5, 6], &raw, 3);
    // [6, 4, 4]: view[a, b, c] = big[b, c + 1, a].
    let view = big
        .slice_dim(1, 1..5)
        .unwrap()
        .dim_shuffle(&[2, 0, 1])
        .unwrap();
    let vshape = [6, 4, 4];
    let host_view: Vec<f32> = (0..96)
        .map(|i| {
            let c = coords(i, &vshape);
            raw[flat(&[c[1], c[2] + 1, c[0]], &[4, 5, 6])]
        })
        .collect();
    let (idx, it) = tuples(&mut g, &mut rng, &[3, 2, 2], &[6, 4], true);
    let upd = rng.f32s(24);
    let u = input(&mut g, "upd", &[3, 2, 4], &upd, 2);
    let mut prog = Vec::new();
    let gathered = popops::gather_nd(&mut g, &view, &it, 0, &mut prog, "g").unwrap();
    let out = popops::scatter_nd(&mut g, &view, &it, &u, R::Add, &mut prog, "s").unwrap();
    g.create_host_read("gathered", &gathered).unwrap();
    g.create_host_read("out", &out).unwrap();
    let exe = compile(&g, &[Program::seq(prog.clone())], &Default::default()).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
    e.run(0).unwrap();
    assert_eq!(
        e.read_tensor::<f32>("gathered").unwrap(),
        host_gather_nd(&host_view, &vshape, &idx, &[3, 2, 2], 0)
    );
    let got = run_both::<f32>(&g, prog);
    let want = host_scatter_nd(&host_view, &vshape, &idx, &[3, 2, 2], &upd, R::Add);
    assert_eq!(bits(&got), bits(&want));
}

/// No tuples, or slices of no elements: empty results, a plain copy for the scatter.
#[test]
fn empty_indices_and_empty_slices() {
    let mut rng = Rng::new(8);
    let data = rng.f32s(12);
    let mut g = Graph::new(&target());
    let t = input(&mut g, "data", &[3, 4], &data, 2);
    let none = g.add_variable(DType::I32, &[0, 1], "none");
    let no_upd = g.add_variable(DType::F32, &[0, 4], "no_upd");
    let mut prog = Vec::new();
    let gn = popops::gather_nd(&mut g, &t, &none, 0, &mut prog, "g").unwrap();
    assert_eq!(gn.shape(), [0, 4]);
    let out = popops::scatter_nd(&mut g, &t, &none, &no_upd, R::Max, &mut prog, "s").unwrap();
    // Empty slices: data [3, 0], tuples of 1.
    let flat0 = g.add_variable(DType::F32, &[3, 0], "flat0");
    let it = input(&mut g, "idx", &[2, 1], &[0i32, -1], 1);
    let ge = popops::gather_nd(&mut g, &flat0, &it, 0, &mut prog, "ge").unwrap();
    assert_eq!(ge.shape(), [2, 0]);
    let u0 = g.add_variable(DType::F32, &[2, 0], "u0");
    let se = popops::scatter_nd(&mut g, &flat0, &it, &u0, R::Add, &mut prog, "se").unwrap();
    assert_eq!(se.shape(), [3, 0]);
    g.create_host_read("out", &out).unwrap();
    let got = run_both::<f32>(&g, prog);
    assert_eq!(bits(&got), bits(&data));
}

/// An index outside `[-dim, dim)` fails the run, naming the compute set, the index, its
/// position in the indices and the axis.
#[test]
fn out_of_range_indices_fail_the_run_naming_the_index_and_axis() {
    for (op, bad, at) in [
        ("gather_nd", 3i32, 3usize),
        ("gather_nd", -5, 2),
        ("scatter_nd", 4, 3),
        ("scatter_nd", -4, 2),
    ] {
        let mut g = Graph::new(&target());
        // data [2, 3, 4]; tuples of 2 index axes 0 (dim 2… ) and 1: the bad one in column
        // `at % 2`.
        let t = input(&mut g, "data", &[2, 3, 4], &[1.0f32; 24], 2);
        let mut v = vec![0i32, 1, -2, 2];
        v[at] = bad;
        let it = input(&mut g, "idx", &[2, 2], &v, 1);
        let u = input(&mut g, "upd", &[2, 4], &[0.0f32; 8], 2);
        let mut prog = Vec::new();
        if op == "gather_nd" {
            popops::gather_nd(&mut g, &t, &it, 0, &mut prog, "x").unwrap();
        } else {
            popops::scatter_nd(&mut g, &t, &it, &u, R::None, &mut prog, "x").unwrap();
        }
        let exe = compile(&g, &[Program::seq(prog)], &Default::default()).unwrap();
        let mut e = Engine::new(&exe, Default::default()).unwrap();
        let err = e.run(0).unwrap_err().to_string();
        let dim = [2, 3][at % 2];
        assert!(err.contains(&format!("x/{op}_indices")), "{err}");
        assert!(
            err.contains(&format!("index {bad} (element {at} of the indices)")),
            "{err}"
        );
        assert!(
            err.contains(&format!("axis of {dim} (axis {} of the data)", at % 2)),
            "{err}"
        );
    }
}

fn axis_err(e: OpError) -> (String, String, usize, usize) {
    match e {
        OpError::Axis {
            op,
            tensor,
            axis,
            rank,
            ..
        } => (op, tensor, axis, rank),
        e => panic!("not an axis error: {e}"),
    }
}

#[test]
fn each_mistake_is_a_typed_error_naming_the_tensor_and_axis() {
    let mut g = Graph::new(&target());
    let t = input(&mut g, "data", &[2, 3, 4], &[0.0f32; 24], 3);
    let mut p = Vec::new();
    // Float indices.
    let fi = input(&mut g, "fi", &[2, 1], &[0.0f32; 2], 1);
    let e = popops::gather_nd(&mut g, &t, &fi, 0, &mut p, "x").unwrap_err();
    assert!(
        matches!(&e, OpError::DType { what, got: DType::F32, .. } if what == "'indices'"),
        "{e}"
    );
    // m = 0, and m > rank − batch_dims.
    let m0 = g.add_variable(DType::I32, &[2, 0], "m0");
    let e = popops::gather_nd(&mut g, &t, &m0, 0, &mut p, "x").unwrap_err();
    assert_eq!(axis_err(e), ("gather_nd".into(), "'indices'".into(), 1, 2));
    let m3 = input(&mut g, "m3", &[2, 3], &[0i32; 6], 1);
    let e = popops::gather_nd(&mut g, &t, &m3, 1, &mut p, "x").unwrap_err();
    assert!(e.to_string().contains("must be 1 to 2"), "{e}");
    assert_eq!(axis_err(e), ("gather_nd".into(), "'indices'".into(), 1, 2));
    let m4 = input(&mut g, "m4", &[1, 4], &[0i32; 4], 1);
    let u4 = g.add_variable(DType::F32, &[1], "u4");
    let e = popops::scatter_nd(&mut g, &t, &m4, &u4, R::None, &mut p, "x").unwrap_err();
    assert_eq!(axis_err(e), ("scatter_nd".into(), "'indices'".into(), 1, 2));
    // Batch dims that do not match, and too many of them.
    let bi = input(&mut g, "bi", &[3, 1], &[0i32; 3], 1);
    let e = popops::gather_nd(&mut g, &t, &bi, 1, &mut p, "x").unwrap_err();
    assert!(e.to_string().contains("axis 0 of 'data' (2)"), "{e}");
    assert_eq!(axis_err(e), ("gather_nd".into(), "'indices'".into(), 0, 2));
    let e = popops::gather_nd(&mut g, &t, &bi, 2, &mut p, "x").unwrap_err();
    assert!(matches!(e, OpError::Shape { .. }), "{e}");
    assert!(e.to_string().contains("batch_dims 2"), "{e}");
    let scalar = g.add_variable(DType::I32, &[], "scalar");
    let e = popops::gather_nd(&mut g, &t, &scalar, 0, &mut p, "x").unwrap_err();
    assert!(matches!(e, OpError::Shape { .. }), "{e}");
    // Updates of the wrong type, rank and axis length.
    let it = input(&mut g, "it", &[5, 2], &[0i32; 10], 1);
    let ui = input(&mut g, "ui", &[5, 4], &[0i32; 20], 1);
    let e = popops::scatter_nd(&mut g, &t, &it, &ui, R::Add, &mut p, "x").unwrap_err();
    assert!(
        matches!(&e, OpError::DType { what, got: DType::I32, .. } if what == "'updates'"),
        "{e}"
    );
    let ur = input(&mut g, "ur", &[5], &[0.0f32; 5], 1);
    let e = popops::scatter_nd(&mut g, &t, &it, &ur, R::Add, &mut p, "x").unwrap_err();
    assert!(matches!(e, OpError::Shape { .. }), "{e}");
    assert!(e.to_string().contains("'updates' [5]"), "{e}");
    let ua = input(&mut g, "ua", &[5, 3], &[0.0f32; 15], 1);
    let e = popops::scatter_nd(&mut g, &t, &it, &ua, R::Add, &mut p, "x").unwrap_err();
    assert!(e.to_string().contains("is 3 but must be 4"), "{e}");
    assert_eq!(axis_err(e), ("scatter_nd".into(), "'updates'".into(), 1, 2));
    // An empty indexed axis with tuples to look up; u32 data under Add.
    let empty = g.add_variable(DType::F32, &[0, 3], "empty");
    let e = popops::gather_nd(&mut g, &empty, &it, 0, &mut p, "x").unwrap_err();
    assert!(e.to_string().contains("axis 0 of 'data' is empty"), "{e}");
    let tu = input(&mut g, "tu", &[2, 3, 4], &[0u32; 24], 3);
    let uu = input(&mut g, "uu", &[5, 4], &[0u32; 20], 1);
    let e = popops::scatter_nd(&mut g, &tu, &it, &uu, R::Add, &mut p, "x").unwrap_err();
    assert!(matches!(e, OpError::Unsupported { .. }), "{e}");
    assert!(p.is_empty(), "no program from a failed call");
}

/// A table of 64 rows of 33 over 16 tiles and 300 tuples (many repeats) on the tiles from the
/// other end: the multi-slice's plan and the scatter's pieces of rows on many tiles.
#[test]
fn large_tables_over_many_tiles() {
    let mut rng = Rng::new(9);
    let shape = [8, 8, 33];
    let data: Vec<f32> = (0..8 * 8 * 33).map(|_| pick_f32(&mut rng)).collect();
    let upd: Vec<f32> = (0..300 * 33).map(|_| pick_f32(&mut rng)).collect();
    for r in [R::None, R::Add, R::Mul, R::Min, R::Max] {
        let mut g = Graph::new(&target());
        let t = input(&mut g, "data", &shape, &data, 7);
        let mut trng = Rng::new(10);
        let (idx, it) = tuples(&mut g, &mut trng, &[300, 2], &[8, 8], true);
        let u = input(&mut g, "upd", &[300, 33], &upd, 5);
        let mut prog = Vec::new();
        let gathered = popops::gather_nd(&mut g, &t, &it, 0, &mut prog, "g").unwrap();
        let out = popops::scatter_nd(&mut g, &t, &it, &u, r, &mut prog, "s").unwrap();
        g.create_host_read("gathered", &gathered).unwrap();
        g.create_host_read("out", &out).unwrap();
        let exe = compile(&g, &[Program::seq(prog.clone())], &Default::default()).unwrap();
        let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
        e.run(0).unwrap();
        let want_g = host_gather_nd(&data, &shape, &idx, &[300, 2], 0);
        let got_g = e.read_tensor::<f32>("gathered").unwrap();
        assert_eq!(bits(&got_g), bits(&want_g));
        let got = run_both::<f32>(&g, prog);
        let want = host_scatter_nd(&data, &shape, &idx, &[300, 2], &upd, r);
        assert_eq!(bits(&got), bits(&want), "{r:?}");
    }
}
