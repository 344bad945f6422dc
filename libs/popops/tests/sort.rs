//! Sorts, argsorts and top-k against a host reference written here (each element's rank by
//! counting the elements that go before it, an O(n²) definition of the stable order with NaN
//! last): ±0, ±inf, NaNs, repeats, the integer extremes, rows straddling tiles, a
//! non-contiguous view, empty tensors and typed errors; `f16`; and rows long enough to take the
//! split path (blocks sorted on their tiles, then merged over them), checked against a host
//! stable sort, with 1 and 2 engine threads.

#[path = "../../../codelets/tests/common/mod.rs"]
mod common;
mod support;

use common::Rng;
use poplar::{f16, DType, Element, Graph, Target, Tensor};
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

impl Key for f16 {
    fn key(self) -> Option<f64> {
        (!self.is_nan()).then_some(f64::from(self.to_f32()))
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

/// The first `k` positions of each row of `len` in sorted order: the rank definition for
/// short rows, a stable sort of the `f64` keys for long ones.
fn host_order<T: Key>(data: &[T], len: usize, k: usize, descending: bool) -> Vec<u32> {
    if len > 64 {
        return stable_order(data, len, k, descending);
    }
    rank_order(data, len, k, descending)
}

/// The first `k` positions of each row by a stable sort of `(NaN, key)` with NaN last.
fn stable_order<T: Key>(data: &[T], len: usize, k: usize, descending: bool) -> Vec<u32> {
    let mut out = Vec::new();
    for row in data.chunks(len.max(1)).filter(|_| len > 0) {
        let mut order: Vec<u32> = (0..len as u32).collect();
        order.sort_by(
            |&i, &j| match (row[i as usize].key(), row[j as usize].key()) {
                (Some(a), Some(b)) if descending => b.partial_cmp(&a).unwrap(),
                (Some(a), Some(b)) => a.partial_cmp(&b).unwrap(),
                (a, b) => a.is_none().cmp(&b.is_none()),
            },
        );
        out.extend_from_slice(&order[..k]);
    }
    out
}

/// The first `k` positions of each row of `len`, by each element's rank.
fn rank_order<T: Key>(data: &[T], len: usize, k: usize, descending: bool) -> Vec<u32> {
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
    let h = g.add_variable(DType::U8, &[2, 3], "h");
    let e = popops::sort(&mut g, &h, 1, &mut p, "x").unwrap_err();
    assert!(matches!(e, OpError::DType { got: DType::U8, .. }), "{e}");
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

#[test]
fn the_two_host_references_agree() {
    let mut rng = Rng::new(5);
    let data = edge_f32s(&mut rng, 40 * 30);
    for descending in [false, true] {
        assert_eq!(
            stable_order(&data, 30, 30, descending),
            rank_order(&data, 30, 30, descending)
        );
    }
}

/// `n` halves: the edge values (±0, ±inf, NaNs, the smallest and largest subnormals, the
/// extremes) and few distinct small values, so many ties.
fn edge_f16s(rng: &mut Rng, n: usize) -> Vec<f16> {
    let specials = [
        f16::ZERO,
        f16::NEG_ZERO,
        f16::INFINITY,
        f16::NEG_INFINITY,
        f16::NAN,
        -f16::NAN,
        f16::from_bits(0x0001),
        f16::from_bits(0x8001),
        f16::from_bits(0x03ff),
        f16::MAX,
        f16::MIN,
        f16::MIN_POSITIVE,
    ];
    (0..n)
        .map(|_| {
            let r = rng.next_u64();
            if r.is_multiple_of(3) {
                specials[(r / 3 % specials.len() as u64) as usize]
            } else {
                f16::from_f32(((r >> 8) % 9) as f32 * 0.25 - 1.0)
            }
        })
        .collect()
}

#[test]
fn sorts_and_top_k_of_f16_with_edge_values_match_the_host() {
    let mut rng = Rng::new(6);
    let (rows, len) = (23, 17);
    let data = edge_f16s(&mut rng, rows * len);
    for (k, largest) in [(3, true), (6, false), (17, true)] {
        let mut g = Graph::new(&target());
        let t = input(&mut g, "t", &[rows, len], &data, 5);
        check(
            &mut g,
            &t,
            &data,
            k,
            largest,
            &format!("f16 k={k} largest={largest}"),
        );
    }
}

/// A target whose tiles are small enough that rows of a few thousand elements take the split
/// path (more than an eighth of a tile's memory for a one-tile sort).
fn small_tiles(tiles: u32) -> Target {
    Target::custom(tiles, 160 * 1024)
}

/// Values with many repeats and NaNs (one in eight), as `T`.
fn dup_f32s(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| match rng.next_u64() % 64 {
            0..=7 => f32::NAN,
            8 => -0.0,
            9 => f32::NEG_INFINITY,
            r => (r % 23) as f32 - 11.0,
        })
        .collect()
}

/// A 1-D `data` mapped over `tiles` tiles in pieces of random lengths, the pieces dealt to
/// the tiles out of order and some tiles given two pieces (a non-contiguous mapping with
/// unequal blocks).
fn scattered<T: Element>(g: &mut Graph, data: &[T], tiles: u32, rng: &mut Rng) -> Tensor {
    let t = g.add_variable(T::DTYPE, &[data.len()], "t");
    let pieces = tiles as usize + tiles as usize / 2;
    let mut cuts: Vec<usize> = (0..pieces - 1)
        .map(|_| (rng.next_u64() % data.len() as u64) as usize)
        .collect();
    cuts.extend([0, data.len()]);
    cuts.sort();
    for (p, w) in cuts.windows(2).enumerate() {
        let tile = (p * 7 + 3) as u32 % tiles;
        g.set_tile_mapping(&t.slice(w[0]..w[1]).unwrap(), tile)
            .unwrap();
    }
    g.set_initial_value(&t, data).unwrap();
    t
}

#[test]
fn long_rows_over_tiles_match_a_host_stable_sort() {
    let mut rng = Rng::new(7);
    // Row lengths that are not multiples of the tile count; 12 tiles spanned → 8 blocks.
    for (tiles, len, grain) in [(8, 3001, 1), (12, 2500, 7), (64, 4099, 3)] {
        let data = dup_f32s(&mut rng, len);
        let mut g = Graph::new(&small_tiles(tiles));
        let t = input(&mut g, "t", &[len], &data, grain);
        check(
            &mut g,
            &t,
            &data,
            37,
            true,
            &format!("f32 {len} over {tiles}"),
        );
    }
    let data = dup_f32s(&mut rng, 3333);
    let mut g = Graph::new(&small_tiles(16));
    let t = scattered(&mut g, &data, 16, &mut rng);
    check(&mut g, &t, &data, 100, false, "f32 scattered over 16");
}

#[test]
fn long_rows_of_f16_and_integers_match_a_host_stable_sort() {
    let mut rng = Rng::new(8);
    let halves = edge_f16s(&mut rng, 4001);
    let mut g = Graph::new(&small_tiles(16));
    let t = scattered(&mut g, &halves, 16, &mut rng);
    check(&mut g, &t, &halves, 50, true, "f16 over 16");
    let mut ints: Vec<i32> = rng.i32s(2999).into_iter().map(|x| x % 40).collect();
    ints[..3].copy_from_slice(&[i32::MIN, i32::MAX, i32::MIN]);
    let mut g = Graph::new(&small_tiles(32));
    let t = input(&mut g, "t", &[2999], &ints, 5);
    check(&mut g, &t, &ints, 11, true, "i32 over 32");
    let mut u: Vec<u32> = rng.u32s(2100).into_iter().map(|x| x % 30).collect();
    u[7] = u32::MAX;
    let mut g = Graph::new(&small_tiles(9));
    let t = input(&mut g, "t", &[2100], &u, 1);
    check(&mut g, &t, &u, 2100, false, "u32 over 9");
}

/// Several long rows at once, strided (a transposed view): each row sorted on its own tiles,
/// the rounds of all rows sharing compute sets.
#[test]
fn long_strided_rows_match_a_host_stable_sort() {
    let mut rng = Rng::new(9);
    let (len, cols) = (2048, 3);
    let data = dup_f32s(&mut rng, len * cols);
    let mut g = Graph::new(&small_tiles(24));
    let big = input(&mut g, "big", &[len, cols], &data, 5);
    let view = big.transpose().unwrap();
    let host: Vec<f32> = (0..cols)
        .flat_map(|c| (0..len).map(move |r| r * cols + c))
        .map(|f| data[f])
        .collect();
    check(&mut g, &view, &host, 9, true, "strided rows over 24");
}

/// A row of 20,000 `f32` over 64 tiles of 32 KiB: a one-tile sort needs ten times a tile's
/// memory, so this compiles only on the split path; it runs in the 21 rounds of a bitonic
/// network over 64 blocks, and no tile holds much more than its share of the row; the bits are the same with 1 and 2 threads.
#[test]
fn a_row_too_long_for_a_tile_is_split_and_the_same_at_any_thread_count() {
    let (len, tiles) = (20_000, 64u32);
    let mut rng = Rng::new(10);
    let data = dup_f32s(&mut rng, len);
    let mut g = Graph::new(&Target::custom(tiles, 32 * 1024));
    let t = input(&mut g, "t", &[len], &data, 1);
    let mut prog = Vec::new();
    let (v, i) = popops::sort_with_indices(&mut g, &t, 0, &mut prog, "s").unwrap();
    g.create_host_read("v", &v).unwrap();
    g.create_host_read("i", &i).unwrap();
    let exe = poplar::compile(&g, &[poplar::Program::seq(prog)], &Default::default()).unwrap();
    let merges = exe
        .computes
        .values()
        .filter(|c| c.name.starts_with("s/split/merge") && !c.name.ends_with("_values"))
        .count();
    // One block a tile: the vertices of two a tile over 28 rounds would not fit an eighth
    // of 32 KiB.
    assert_eq!(
        merges,
        6 * 7 / 2,
        "rounds of a bitonic network over 64 blocks"
    );
    let block = len.div_ceil(tiles as usize) as u32;
    let worst = exe.tiles.iter().map(|t| t.memory_bytes).max().unwrap();
    // Keys and positions in two buffers each (and the compiler's receive slack for them),
    // the partner's block, the merge indices, the position constant, the outputs and the
    // input's share: 15 of its shares of 4 bytes and the vertices, against 64 for the row.
    assert!(
        worst < 20 * 4 * block,
        "fullest tile {worst} bytes, blocks of {block}"
    );
    let want = stable_order(&data, len, len, false);
    let mut seen = Vec::new();
    for threads in [1, 2] {
        let mut e =
            poplar::Engine::new(&exe, poplar::EngineOptions::with_threads(threads)).unwrap();
        e.run(0).unwrap();
        let (got_i, got_v) = (
            e.read_tensor::<u32>("i").unwrap(),
            e.read_tensor::<f32>("v").unwrap(),
        );
        assert_eq!(got_i, want, "{threads} threads: positions");
        let bits: Vec<u32> = got_v.iter().map(|x| x.to_bits()).collect();
        let want_bits: Vec<u32> = want.iter().map(|&o| data[o as usize].to_bits()).collect();
        assert_eq!(bits, want_bits, "{threads} threads: values");
        seen.push(bits);
    }
    assert_eq!(seen[0], seen[1]);
}

#[test]
fn empty_long_rows_and_f16_errors() {
    let mut g = Graph::new(&small_tiles(8));
    let e = g.add_variable(DType::F32, &[0, 5000], "e");
    g.map_linearly(&e, 1).unwrap();
    let (v, i) = popops::top_k(&mut g, &e, 1, 10, true, &mut Vec::new(), "t").unwrap();
    assert_eq!((v.shape(), i.shape()), (&[0, 10][..], &[0, 10][..]));
    let h = g.add_variable(DType::F16, &[2, 3], "h");
    let e = popops::top_k(&mut g, &h, 1, 4, true, &mut Vec::new(), "x").unwrap_err();
    assert!(matches!(e, OpError::Shape { .. }), "{e}");
}

/// A long row held by one tile is sorted there (the one-tile path: no split buffers), and
/// long lines along the first axis of a 2-D tensor (the axis moved last by a view; 1,500 ×
/// 16 bytes is above an eighth of a tile) are split.
#[test]
fn a_long_row_on_one_tile_and_long_lines_along_axis_0() {
    let mut rng = Rng::new(11);
    let data = dup_f32s(&mut rng, 3000);
    let mut g = Graph::new(&small_tiles(4));
    let t = g.add_variable(DType::F32, &[3000], "t");
    g.set_tile_mapping(&t, 2).unwrap();
    g.set_initial_value(&t, &data).unwrap();
    let mut prog = Vec::new();
    let (v, i) = popops::sort_with_indices(&mut g, &t, 0, &mut prog, "s").unwrap();
    g.create_host_read("v", &v).unwrap();
    g.create_host_read("i", &i).unwrap();
    let exe = poplar::compile(&g, &[poplar::Program::seq(prog)], &Default::default()).unwrap();
    let names: Vec<&str> = exe.computes.values().map(|c| c.name.as_str()).collect();
    assert!(
        names.contains(&"s/argsort") && !names.iter().any(|n| n.contains("split")),
        "{names:?}"
    );
    let mut e = poplar::Engine::new(&exe, poplar::EngineOptions::with_threads(2)).unwrap();
    e.run(0).unwrap();
    let want = stable_order(&data, 3000, 3000, false);
    assert_eq!(e.read_tensor::<u32>("i").unwrap(), want);
    let bits: Vec<u32> = e
        .read_tensor::<f32>("v")
        .unwrap()
        .iter()
        .map(|x| x.to_bits())
        .collect();
    let want_bits: Vec<u32> = want.iter().map(|&o| data[o as usize].to_bits()).collect();
    assert_eq!(bits, want_bits);

    let (len, cols) = (1500, 2);
    let ints: Vec<i32> = rng.i32s(len * cols).into_iter().map(|x| x % 17).collect();
    let mut g = Graph::new(&small_tiles(16));
    let t = input(&mut g, "t", &[len, cols], &ints, 3);
    let mut prog = Vec::new();
    let (v, i) = popops::top_k(&mut g, &t, 0, 700, true, &mut prog, "top").unwrap();
    assert_eq!(v.shape(), [700, 2]);
    g.create_host_read("v", &v).unwrap();
    g.create_host_read("i", &i).unwrap();
    let e = run(&g, prog);
    let (got_v, got_i) = (
        e.read_tensor::<i32>("v").unwrap(),
        e.read_tensor::<u32>("i").unwrap(),
    );
    for c in 0..cols {
        let line: Vec<i32> = (0..len).map(|r| ints[r * cols + c]).collect();
        let want = stable_order(&line, len, 700, true);
        let got: Vec<u32> = (0..700).map(|r| got_i[r * cols + c]).collect();
        assert_eq!(got, want, "column {c}: positions");
        let vals: Vec<i32> = (0..700).map(|r| got_v[r * cols + c]).collect();
        let want_v: Vec<i32> = want.iter().map(|&o| line[o as usize]).collect();
        assert_eq!(vals, want_v, "column {c}: values");
    }
}

/// The brief's case: 10⁶ `f32` (2% NaN, 1,000 distinct values) mapped linearly over a GC200,
/// sorted over 1,024 of its tiles; the same as a host stable sort, and the modelled cycles of
/// the program (10.1 M when written) far below the one-tile `ArgSort` estimate alone (5.9 G).
#[test]
fn a_million_f32_over_a_gc200() {
    let n = 1_000_000usize;
    let mut g = Graph::new(&Target::gc200());
    let mut rng = Rng::new(12);
    let data: Vec<f32> = (0..n)
        .map(|_| match rng.next_u64() % 1000 {
            0..=19 => f32::NAN,
            r => r as f32 - 500.0,
        })
        .collect();
    let t = input(&mut g, "t", &[n], &data, 1);
    let mut prog = Vec::new();
    let (v, i) = popops::sort_with_indices(&mut g, &t, 0, &mut prog, "s").unwrap();
    g.create_host_read("v", &v).unwrap();
    g.create_host_read("i", &i).unwrap();
    let exe = poplar::compile(&g, &[poplar::Program::seq(prog)], &Default::default()).unwrap();
    let model = poplar::profile::CycleModel::new(&exe);
    let cycles = poplar::profile::estimate_program(&exe, &model, 0)
        .unwrap()
        .cycles;
    assert!(
        cycles < 12_000_000 && cycles * 100 < codelets::sort::cost::arg_sort(1, n as u64),
        "{cycles} cycles"
    );
    let mut e = poplar::Engine::new(&exe, poplar::EngineOptions::with_threads(2)).unwrap();
    e.run(0).unwrap();
    let want = stable_order(&data, n, n, false);
    assert_eq!(e.read_tensor::<u32>("i").unwrap(), want);
    let bits: Vec<u32> = e
        .read_tensor::<f32>("v")
        .unwrap()
        .iter()
        .map(|x| x.to_bits())
        .collect();
    let want_bits: Vec<u32> = want.iter().map(|&o| data[o as usize].to_bits()).collect();
    assert_eq!(bits, want_bits);
}

/// `top_k` of a long row with `k` within a block merges the blocks' first `k` up a tree
/// (`log₂B` rounds: 8 tiles of 2 blocks, 4 rounds) instead of the whole bitonic network (10);
/// a `k` past a block takes the network.
#[test]
fn top_k_of_a_long_row_merges_up_a_tree_when_k_fits_a_block() {
    let mut rng = Rng::new(13);
    let data = dup_f32s(&mut rng, 3001);
    for (k, tree, rounds) in [(37, true, 4), (188, true, 4), (189, false, 10)] {
        let mut g = Graph::new(&small_tiles(8));
        let t = input(&mut g, "t", &[3001], &data, 1);
        let mut prog = Vec::new();
        let (v, i) = popops::top_k(&mut g, &t, 0, k, true, &mut prog, "top").unwrap();
        g.create_host_read("v", &v).unwrap();
        g.create_host_read("i", &i).unwrap();
        let exe = poplar::compile(&g, &[poplar::Program::seq(prog)], &Default::default()).unwrap();
        let count = |kind: &str| {
            exe.computes
                .values()
                .filter(|c| c.name.starts_with(kind) && !c.name.ends_with("_values"))
                .count()
        };
        let (tops, merges) = (count("top/split/top"), count("top/split/merge"));
        assert_eq!(
            (tops, merges),
            if tree { (rounds, 0) } else { (0, rounds) },
            "k = {k}"
        );
        let mut e = poplar::Engine::new(&exe, poplar::EngineOptions::with_threads(1)).unwrap();
        e.run(0).unwrap();
        let want = stable_order(&data, 3001, k, true);
        assert_eq!(e.read_tensor::<u32>("i").unwrap(), want, "k = {k}");
        let bits: Vec<u32> = e
            .read_tensor::<f32>("v")
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect();
        let want_bits: Vec<u32> = want.iter().map(|&o| data[o as usize].to_bits()).collect();
        assert_eq!(bits, want_bits, "k = {k}");
    }
}
