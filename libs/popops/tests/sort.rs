//! Sorts, argsorts and top-k against a host reference written here (each element's rank by
//! counting the elements that go before it, an O(n²) definition of the stable order with NaN
//! last): ±0, ±inf, NaNs, repeats, the integer extremes, rows straddling tiles, a
//! non-contiguous view, empty tensors and typed errors.

#[path = "../../../codelets/tests/common/mod.rs"]
mod common;
mod support;

use common::Rng;
use poplar::{DType, Element, Graph, Target, Tensor};
use popops::OpError;
use support::{input, run};

fn target() -> Target {
    Target::custom(16, 256 * 1024)
}

/// A value the reference can order: `None` is NaN.
trait Key: Element + Copy + std::fmt::Debug {
    fn key(self) -> Option<f64>;
    fn bits(self) -> u64;
}

impl Key for f32 {
    fn key(self) -> Option<f64> {
        (!self.is_nan()).then_some(f64::from(self))
    }
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl Key for i32 {
    fn key(self) -> Option<f64> {
        Some(f64::from(self))
    }
    fn bits(self) -> u64 {
        self as u32 as u64
    }
}

impl Key for u32 {
    fn key(self) -> Option<f64> {
        Some(f64::from(self))
    }
    fn bits(self) -> u64 {
        u64::from(self)
    }
}

/// Whether element `j` goes before element `i` of `row`: a number before NaN, then by value
/// (descending or not; -0 equals +0), then by position.
fn before<T: Key>(row: &[T], j: usize, i: usize, descending: bool) -> bool {
    match (row[j].key(), row[i].key()) {
        (Some(a), Some(b)) if a != b => (a < b) != descending,
        (Some(_), None) => true,
        (None, Some(_)) => false,
        _ => j < i,
    }
}

/// The first `k` positions of each row of `len` in sorted order.
fn host_order<T: Key>(data: &[T], len: usize, k: usize, descending: bool) -> Vec<u32> {
    let mut out = Vec::new();
    for row in data.chunks(len.max(1)).filter(|_| len > 0) {
        let mut order = vec![0u32; len];
        for i in 0..len {
            let rank = (0..len)
                .filter(|&j| j != i && before(row, j, i, descending))
                .count();
            order[rank] = i as u32;
        }
        out.extend_from_slice(&order[..k]);
    }
    out
}

fn check<T: Key>(g: &mut Graph, t: &Tensor, host: &[T], k: usize, largest: bool, what: &str) {
    let len = *t.shape().last().unwrap();
    let last = t.rank() - 1;
    let mut prog = Vec::new();
    let (v, i) = popops::top_k(g, t, last, k, largest, &mut prog, "top").unwrap();
    let (sv, si) = popops::sort_with_indices(g, t, last, &mut prog, "sort").unwrap();
    let s = popops::sort(g, t, last, &mut prog, "sort_values").unwrap();
    let a = popops::argsort(g, t, last, &mut prog, "argsort").unwrap();
    for (n, x) in [
        ("v", &v),
        ("i", &i),
        ("sv", &sv),
        ("si", &si),
        ("s", &s),
        ("a", &a),
    ] {
        g.create_host_read(n, x).unwrap();
    }
    let e = run(g, prog);
    let values = |order: &[u32], k: usize| -> Vec<u64> {
        order
            .iter()
            .enumerate()
            .map(|(p, &o)| host[(p / k.max(1)) * len + o as usize].bits())
            .collect()
    };
    let bits = |n: &str| {
        e.read_tensor::<T>(n)
            .unwrap()
            .into_iter()
            .map(T::bits)
            .collect::<Vec<_>>()
    };
    let top = host_order(host, len, k, largest);
    assert_eq!(
        e.read_tensor::<u32>("i").unwrap(),
        top,
        "{what}: top-{k} positions"
    );
    assert_eq!(bits("v"), values(&top, k), "{what}: top-{k} values");
    let all = host_order(host, len, len, false);
    assert_eq!(
        e.read_tensor::<u32>("si").unwrap(),
        all,
        "{what}: sort positions"
    );
    assert_eq!(e.read_tensor::<u32>("a").unwrap(), all, "{what}: argsort");
    assert_eq!(bits("sv"), values(&all, len), "{what}: sorted values");
    assert_eq!(bits("s"), values(&all, len), "{what}: sort");
}

fn edge_f32s(rng: &mut Rng, n: usize) -> Vec<f32> {
    let specials = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        1.0,
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
    ];
    (0..n)
        .map(|_| {
            let r = rng.next_u64();
            if r.is_multiple_of(3) {
                specials[(r / 3 % specials.len() as u64) as usize]
            } else {
                // Few distinct values: many ties.
                ((r >> 8) % 9) as f32 - 4.0
            }
        })
        .collect()
}

#[test]
fn sorts_and_top_k_of_f32_with_edge_values_match_the_host() {
    let mut rng = Rng::new(1);
    let (rows, len) = (37, 13);
    let data = edge_f32s(&mut rng, rows * len);
    for (k, largest) in [(0, true), (1, true), (5, false), (5, true), (13, true)] {
        let mut g = Graph::new(&target());
        // Grains of 7: most rows straddle two tiles.
        let t = input(&mut g, "t", &[rows, len], &data, 7);
        check(
            &mut g,
            &t,
            &data,
            k,
            largest,
            &format!("f32 k={k} largest={largest}"),
        );
    }
}

#[test]
fn sorts_and_top_k_of_integers_match_the_host() {
    let mut rng = Rng::new(2);
    let mut ints = rng.small_i32s(3 * 4 * 9);
    ints[..4].copy_from_slice(&[i32::MIN, i32::MAX, 0, -1]);
    let mut g = Graph::new(&target());
    let t = input(&mut g, "t", &[3, 4, 9], &ints, 5);
    check(&mut g, &t, &ints, 4, true, "i32");
    let mut u: Vec<u32> = rng.u32s(5 * 8).into_iter().map(|x| x % 6).collect();
    u[..3].copy_from_slice(&[u32::MAX, 0, u32::MAX]);
    let mut g = Graph::new(&target());
    let t = input(&mut g, "t", &[5, 8], &u, 3);
    check(&mut g, &t, &u, 3, false, "u32");
}

#[test]
fn sorts_of_a_non_contiguous_view_and_of_empty_tensors() {
    let mut rng = Rng::new(3);
    let data = edge_f32s(&mut rng, 6 * 10);
    let mut g = Graph::new(&target());
    let big = input(&mut g, "big", &[6, 10], &data, 4);
    // Columns 1..9, transposed: rows of 6 strided elements.
    let view = big.slice_dim(1, 1..9).unwrap().transpose().unwrap();
    let host: Vec<f32> = (0..8)
        .flat_map(|c| (0..6).map(move |r| (r, c + 1)))
        .map(|(r, c)| data[r * 10 + c])
        .collect();
    check(&mut g, &view, &host, 2, true, "view");
    let mut g = Graph::new(&target());
    for shape in [&[0, 5][..], &[4, 0][..], &[0][..]] {
        let e = g.add_variable(DType::F32, shape, "e");
        let (v, i) =
            popops::top_k(&mut g, &e, shape.len() - 1, 0, true, &mut Vec::new(), "t").unwrap();
        let mut want = shape[..shape.len() - 1].to_vec();
        want.push(0);
        assert_eq!((v.shape(), i.shape()), (&want[..], &want[..]));
        let s = popops::sort(&mut g, &e, shape.len() - 1, &mut Vec::new(), "s").unwrap();
        assert_eq!(s.shape(), shape);
    }
}

#[test]
fn sort_mistakes_are_typed_errors() {
    let mut g = Graph::new(&target());
    let t = input(&mut g, "t", &[2, 3], &[0.0f32; 6], 3);
    let mut p = Vec::new();
    let e = popops::top_k(&mut g, &t, 1, 4, true, &mut p, "x")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("k = 4 is above the length 3 of axis 1 of 't'"),
        "{e}"
    );
    let e = popops::top_k(&mut g, &t, 0, 3, true, &mut p, "x")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("k = 3 is above the length 2 of axis 0 of 't'"),
        "{e}"
    );
    let e = popops::sort(&mut g, &t, 2, &mut p, "x").unwrap_err();
    assert!(
        matches!(
            e,
            OpError::Axis {
                axis: 2,
                rank: 2,
                ..
            }
        ),
        "{e}"
    );
    let h = g.add_variable(DType::F16, &[2, 3], "h");
    let e = popops::sort(&mut g, &h, 1, &mut p, "x").unwrap_err();
    assert!(
        matches!(
            e,
            OpError::DType {
                got: DType::F16,
                ..
            }
        ),
        "{e}"
    );
    let s = g.add_variable(DType::F32, &[], "s");
    let e = popops::argsort(&mut g, &s, 0, &mut p, "x").unwrap_err();
    assert!(matches!(e, OpError::Axis { rank: 0, .. }), "{e}");
}

/// The lines of row-major `data` (shape `shape`) along `axis`, each in order along it, and
/// for each line the flat index of its elements.
fn lines_along(shape: &[usize], axis: usize) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let len = shape[axis];
    (0..n)
        .filter(|&f| (f / inner).is_multiple_of(len))
        .map(|f| (0..len).map(|j| f + j * inner).collect())
        .collect()
}

/// Sorting and top-k along every axis of a 3-D tensor spread over the tiles: each line's
/// result is the host order of that line, written back along the same axis.
#[test]
fn sorts_and_top_k_run_along_any_axis() {
    let shape = [5, 4, 6];
    let mut rng = Rng::new(41);
    let data: Vec<f32> = edge_f32s(&mut rng, 120);
    for axis in 0..3 {
        let mut g = Graph::new(&target());
        let t = input(&mut g, "t", &shape, &data, 7);
        let k = shape[axis] - 1;
        let mut prog = Vec::new();
        let (v, i) = popops::top_k(&mut g, &t, axis, k, true, &mut prog, "top").unwrap();
        let s = popops::sort(&mut g, &t, axis, &mut prog, "sort").unwrap();
        let mut want = shape.to_vec();
        want[axis] = k;
        assert_eq!(
            (v.shape(), i.shape()),
            (&want[..], &want[..]),
            "axis {axis}"
        );
        for (n, x) in [("v", &v), ("i", &i), ("s", &s)] {
            g.create_host_read(n, x).unwrap();
        }
        let e = run(&g, prog);
        let (got_v, got_i) = (
            e.read_tensor::<f32>("v").unwrap(),
            e.read_tensor::<u32>("i").unwrap(),
        );
        let got_s = e.read_tensor::<f32>("s").unwrap();
        let (lines, top_lines) = (lines_along(&shape, axis), lines_along(&want, axis));
        for (line, top_line) in lines.iter().zip(&top_lines) {
            let row: Vec<f32> = line.iter().map(|&f| data[f]).collect();
            let top = host_order(&row, row.len(), k, true);
            let all = host_order(&row, row.len(), row.len(), false);
            let at = |order: &[u32]| -> Vec<u32> {
                order.iter().map(|&o| row[o as usize].to_bits()).collect()
            };
            let read = |xs: &[f32], idx: &[usize]| -> Vec<u32> {
                idx.iter().map(|&f| xs[f].to_bits()).collect()
            };
            let got: Vec<u32> = top_line.iter().map(|&f| got_i[f]).collect();
            assert_eq!(got, top, "axis {axis}: top-{k} positions of line {line:?}");
            assert_eq!(
                read(&got_v, top_line),
                at(&top),
                "axis {axis}: top-{k} values"
            );
            assert_eq!(
                read(&got_s, line),
                at(&all),
                "axis {axis}: sorted line {line:?}"
            );
        }
    }
}

/// Each `ArgSort` vertex carries poplibs' `HeapSortVertexKV` estimate for its rows, and the
/// values' `GatherElements` the multi-slice estimate of one-element rows.
#[test]
fn sort_vertices_carry_the_heap_sort_estimate() {
    let t = Target {
        workers_per_tile: 1,
        ..Target::custom(1, 256 * 1024)
    };
    let mut g = Graph::new(&t);
    let x = input(&mut g, "x", &[6, 10], &[0.0f32; 60], 60);
    let mut prog = Vec::new();
    popops::top_k(&mut g, &x, 1, 3, true, &mut prog, "top").unwrap();
    let exe = poplar::compile(&g, &[poplar::Program::seq(prog)], &Default::default()).unwrap();
    let mut cycles: Vec<u64> = exe
        .computes
        .values()
        .flat_map(|c| &c.tiles)
        .flat_map(|t| &t.vertices)
        .map(|v| v.cycles)
        .collect();
    cycles.sort();
    let heap = 6 * 16 * (19 * 10 * 3 + 6 * 10 + 2);
    assert_eq!(codelets::sort::cost::arg_sort(6, 10), heap);
    assert_eq!(
        cycles,
        [codelets::gather::cost::gather(DType::F32, 18), heap]
    );
}
