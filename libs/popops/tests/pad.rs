//! Padding (constant, edge, reflect), concat and split against host references written here:
//! N-d tensors spread over many tiles, non-contiguous views, empty tensors and axes, and
//! typed errors naming the axis or operand at fault.

#[path = "../../../codelets/tests/common/mod.rs"]
mod common;
mod support;

use common::Rng;
use poplar::{f16, DType, Element, Graph, Target};
use popops::pad::{pad, PadMode};
use popops::OpError;
use support::{input, run};

fn target() -> Target {
    Target::custom(12, 256 * 1024)
}

/// The source coordinate along one axis of length `len` for padded coordinate `p` (before
/// `b`), or `None` for a constant element.
fn source(p: usize, b: usize, len: usize, mode: PadMode) -> Option<usize> {
    let i = p as i64 - b as i64;
    let n = len as i64;
    if (0..n).contains(&i) {
        return Some(i as usize);
    }
    match mode {
        PadMode::Constant(_) => None,
        PadMode::Edge => Some(i.clamp(0, n - 1) as usize),
        PadMode::Reflect => Some(if i < 0 { -i } else { 2 * (n - 1) - i } as usize),
    }
}

/// numpy's `pad` on the host.
fn host_pad<T: Copy>(
    data: &[T],
    shape: &[usize],
    b: &[usize],
    a: &[usize],
    mode: PadMode,
    value: T,
) -> Vec<T> {
    let oshape: Vec<usize> = (0..shape.len()).map(|d| b[d] + shape[d] + a[d]).collect();
    let n: usize = oshape.iter().product();
    (0..n)
        .map(|o| {
            let mut rest = o;
            let mut src = 0;
            let mut stride = 1;
            let mut constant = false;
            for d in (0..shape.len()).rev() {
                let p = rest % oshape[d];
                rest /= oshape[d];
                match source(p, b[d], shape[d], mode) {
                    Some(s) => src += s * stride,
                    None => constant = true,
                }
                stride *= shape[d];
            }
            if constant {
                value
            } else {
                data[src]
            }
        })
        .collect()
}

fn check_pad<T: Element + Copy + PartialEq + std::fmt::Debug>(data: Vec<T>, value: T, v: f64) {
    let shape = [3, 4, 5];
    let cases: [(&[usize], &[usize]); 3] = [
        (&[1, 0, 2], &[2, 3, 0]),
        (&[0, 0, 0], &[0, 0, 0]),
        (&[2, 3, 4], &[2, 3, 4]),
    ];
    for mode in [PadMode::Constant(v), PadMode::Edge, PadMode::Reflect] {
        for (b, a) in cases {
            let mut g = Graph::new(&target());
            let t = input(&mut g, "t", &shape, &data, 3);
            let mut prog = Vec::new();
            let p = pad(&mut g, &t, b, a, mode, &mut prog, "p").unwrap();
            g.create_host_read("p", &p).unwrap();
            let e = run(&g, prog);
            let want = host_pad(&data, &shape, b, a, mode, value);
            assert_eq!(
                e.read_tensor::<T>("p").unwrap(),
                want,
                "{mode:?} {b:?} {a:?}"
            );
        }
    }
}

#[test]
fn pads_match_the_host_in_every_mode_and_type() {
    let mut rng = Rng::new(1);
    check_pad(rng.f32s(60), -2.5f32, -2.5);
    check_pad(rng.i32s(60), 7i32, 7.0);
    check_pad(rng.u32s(60), 0u32, 0.0);
    let h: Vec<f16> = rng.f32s(60).into_iter().map(f16::from_f32).collect();
    check_pad(h, f16::from_f32(0.5), 0.5);
}

#[test]
fn pads_of_a_non_contiguous_view_and_of_empty_tensors() {
    let mut g = Graph::new(&target());
    let mut rng = Rng::new(2);
    let data = rng.f32s(6 * 8);
    let big = input(&mut g, "big", &[6, 8], &data, 5);
    let view = big.slice_dim(1, 1..5).unwrap().transpose().unwrap(); // [4, 6], strided
    let host_view: Vec<f32> = (0..4)
        .flat_map(|c| (0..6).map(move |r| (r, c + 1)))
        .map(|(r, c)| data[r * 8 + c])
        .collect();
    let empty = g.add_variable(DType::F32, &[0, 3], "empty");
    let mut prog = Vec::new();
    let r = pad(
        &mut g,
        &view,
        &[3, 1],
        &[2, 5],
        PadMode::Reflect,
        &mut prog,
        "r",
    )
    .unwrap();
    let c = pad(
        &mut g,
        &empty,
        &[1, 0],
        &[1, 1],
        PadMode::Constant(4.0),
        &mut prog,
        "c",
    )
    .unwrap();
    let n = pad(
        &mut g,
        &empty,
        &[0, 2],
        &[0, 0],
        PadMode::Edge,
        &mut prog,
        "n",
    )
    .unwrap();
    assert_eq!((c.shape(), n.shape()), (&[2, 4][..], &[0, 5][..]));
    g.create_host_read("r", &r).unwrap();
    g.create_host_read("c", &c).unwrap();
    let e = run(&g, prog);
    let want = host_pad(&host_view, &[4, 6], &[3, 1], &[2, 5], PadMode::Reflect, 0.0);
    assert_eq!(e.read_tensor::<f32>("r").unwrap(), want);
    assert_eq!(e.read_tensor::<f32>("c").unwrap(), [4.0; 8]);
}

#[test]
fn concat_and_split_are_inverse_views() {
    let mut g = Graph::new(&target());
    let mut rng = Rng::new(3);
    let (da, db) = (rng.i32s(2 * 3 * 4), rng.i32s(2 * 4));
    let a = input(&mut g, "a", &[2, 3, 4], &da, 3);
    let b = input(&mut g, "b", &[2, 1, 4], &db, 3);
    let none = g.add_variable(DType::I32, &[2, 0, 4], "none");
    let c = popops::concat(&[a.clone(), none, b.clone()], 1).unwrap();
    assert_eq!(c.shape(), [2, 4, 4]);
    let parts = popops::split(&c, 1, &[1, 0, 3]).unwrap();
    let want: Vec<i32> = (0..2)
        .flat_map(|i| {
            da[i * 12..(i + 1) * 12]
                .iter()
                .chain(&db[i * 4..(i + 1) * 4])
                .copied()
                .collect::<Vec<_>>()
        })
        .collect();
    let out = g.add_variable(DType::I32, &[2, 4, 4], "out");
    g.map_linearly(&out, 2).unwrap();
    g.create_host_read("out", &out).unwrap();
    g.create_host_read("last", &parts[2]).unwrap();
    let e = run(&g, vec![poplar::Program::copy(&c, &out)]);
    assert_eq!(e.read_tensor::<i32>("out").unwrap(), want);
    let last: Vec<i32> = (0..2)
        .flat_map(|i| want[i * 16 + 4..(i + 1) * 16].to_vec())
        .collect();
    assert_eq!(e.read_tensor::<i32>("last").unwrap(), last);
}

#[test]
fn pad_concat_and_split_mistakes_are_typed_errors() {
    let mut g = Graph::new(&target());
    let t = input(&mut g, "t", &[2, 3], &[0.0f32; 6], 3);
    let f = |e: OpError| e.to_string();
    let mut p = Vec::new();
    let e = f(pad(&mut g, &t, &[1], &[1], PadMode::Edge, &mut p, "x").unwrap_err());
    assert!(e.contains("one amount per axis"), "{e}");
    let e = f(pad(&mut g, &t, &[0, 3], &[0, 0], PadMode::Reflect, &mut p, "x").unwrap_err());
    assert!(e.contains("axis 1") && e.contains("length 3"), "{e}");
    let i = input(&mut g, "i", &[2, 3], &[0i32; 6], 3);
    let e = f(pad(
        &mut g,
        &i,
        &[0, 1],
        &[0, 0],
        PadMode::Constant(0.5),
        &mut p,
        "x",
    )
    .unwrap_err());
    assert!(e.contains("not a value of i32"), "{e}");
    let empty = g.add_variable(DType::F32, &[2, 0], "empty");
    let e = f(pad(&mut g, &empty, &[0, 1], &[0, 0], PadMode::Edge, &mut p, "x").unwrap_err());
    assert!(e.contains("axis 1 of 't' is empty"), "{e}");
    match popops::concat(std::slice::from_ref(&t), 2).unwrap_err() {
        OpError::Axis {
            tensor, axis, rank, ..
        } => assert_eq!((tensor.as_str(), axis, rank), ("'tensors[0]'", 2, 2)),
        e => panic!("{e}"),
    }
    let e = popops::concat(&[t.clone(), i.clone()], 0).unwrap_err();
    assert!(
        matches!(
            e,
            OpError::DType {
                got: DType::I32,
                ..
            }
        ) && f(e.clone()).contains("tensors[1]"),
        "{e}"
    );
    let u = g.add_variable(DType::F32, &[2, 4], "u");
    let e = f(popops::concat(&[t.clone(), u], 0).unwrap_err());
    assert!(e.contains("axis 1 of 'tensors[1]' is 4"), "{e}");
    let e = f(popops::concat(&[], 0).unwrap_err());
    assert!(e.contains("no tensors"), "{e}");
    let e = f(popops::split(&t, 1, &[1, 1]).unwrap_err());
    assert!(e.contains("add up to 2, not the length 3 of axis 1"), "{e}");
    assert!(matches!(
        popops::split(&t, 5, &[1]).unwrap_err(),
        OpError::Axis { axis: 5, .. }
    ));
}
