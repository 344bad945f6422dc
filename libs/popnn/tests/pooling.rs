//! `popnn::ops::pool` and `pool_input_gradient` on the simulator against an f64 host
//! reference written here, and the reference's gradient against central differences of its
//! forward pass: max and average, 1-, 2- and 3-D fields, random kernels, strides and
//! paddings, batch > 1, planes cut between the 4 tiles, f32 and f16; ties (the first maximal
//! element takes the gradient); where the outputs live; typed errors.
//!
//! Tolerances: f32 max pooling and its gradient (sums of at most a few `dy` in f32) within
//! `1e-6·(1 + |want|)`, f32 averages within `2e-6·(1 + |want|)`; f16 results (f16 inputs,
//! the reference on the same f16 values in f64) within `2^-10·|want| + 2^-14` (one f16 ulp:
//! the f32 value rounded once is within half of one); the reference's gradient within 1e-6
//! of central differences with h = 1e-5 of `L(x) = Σ dy · pool(x)` (exact for the piecewise
//! linear pools away from ties: the test data's values are at least 0.01 apart).

mod sim;

use sim::*;

use poplar::{DType, Graph, Target};
use popnn::ops::{self, NnOpError, PoolParams, PoolingType as PT};

// ---- the f64 reference ----

/// A pooling's geometry: `[N, C]`, the field, and per dimension (in, out, kernel, stride,
/// pad_lower).
struct Geo {
    planes: usize,
    dims: Vec<(usize, usize, usize, usize, usize)>,
}

impl Geo {
    fn new(shape: &[usize], p: &PoolParams) -> Geo {
        let dims = (0..shape.len() - 2)
            .map(|d| {
                let (i, k, s) = (shape[2 + d], p.kernel[d], p.stride[d]);
                let o = (i + p.pad_lower[d] + p.pad_upper[d] - k) / s + 1;
                (i, o, k, s, p.pad_lower[d])
            })
            .collect();
        Geo {
            planes: shape[0] * shape[1],
            dims,
        }
    }
    fn in_len(&self) -> usize {
        self.dims.iter().map(|d| d.0).product()
    }
    fn out_len(&self) -> usize {
        self.dims.iter().map(|d| d.1).product()
    }
    /// The in-plane input indices of output `o`'s window (real elements), row-major.
    fn window(&self, o: usize) -> Vec<usize> {
        let mut rem = o;
        let mut ranges = vec![];
        for (d, &(_, out, ..)) in self.dims.iter().enumerate() {
            let after: usize = self.dims[d + 1..].iter().map(|d| d.1).product();
            let od = rem / after;
            rem %= after;
            let _ = out;
            let (i, _, k, s, pl) = self.dims[d];
            let lo = (od * s) as i64 - pl as i64;
            ranges.push((
                lo.max(0) as usize..((lo + k as i64).min(i as i64)) as usize,
                i,
            ));
        }
        let mut idx = vec![0usize];
        for (r, i) in ranges {
            idx = idx
                .iter()
                .flat_map(|&b| r.clone().map(move |q| b * i + q))
                .collect();
        }
        idx
    }
}

/// The forward pass in f64, and per output the index (in the whole input) of its first
/// maximal element.
fn pool_ref(kind: PT, g: &Geo, x: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let (il, ol) = (g.in_len(), g.out_len());
    let (mut y, mut arg) = (vec![0.0; g.planes * ol], vec![0; g.planes * ol]);
    for p in 0..g.planes {
        for o in 0..ol {
            let w = g.window(o);
            assert!(!w.is_empty());
            let (mut best, mut at, mut sum) = (f64::NEG_INFINITY, 0, 0.0);
            for &i in &w {
                let v = x[p * il + i];
                sum += v;
                if v > best {
                    best = v;
                    at = p * il + i;
                }
            }
            y[p * ol + o] = match kind {
                PT::Max => best,
                _ => sum / w.len() as f64,
            };
            arg[p * ol + o] = at;
        }
    }
    (y, arg)
}

/// The input gradient in f64, written from the definition.
fn grad_ref(kind: PT, g: &Geo, x: &[f64], dy: &[f64]) -> Vec<f64> {
    let (il, ol) = (g.in_len(), g.out_len());
    let (_, arg) = pool_ref(kind, g, x);
    let mut dx = vec![0.0; x.len()];
    for p in 0..g.planes {
        for o in 0..ol {
            let d = dy[p * ol + o];
            match kind {
                PT::Max => dx[arg[p * ol + o]] += d,
                _ => {
                    let w = g.window(o);
                    for &i in &w {
                        dx[p * il + i] += d / w.len() as f64;
                    }
                }
            }
        }
    }
    dx
}

/// A random pooling of a field of `rank` dimensions.
fn random_case(rng: &mut Rng, rank: usize, kind: PT) -> (Vec<usize>, PoolParams) {
    let mut shape = vec![1 + rng.below(3), 1 + rng.below(3)];
    let (mut k, mut s, mut pl, mut pu) = (vec![], vec![], vec![], vec![]);
    for _ in 0..rank {
        let kd = 1 + rng.below(3);
        let (a, b) = (rng.below(kd), rng.below(kd));
        let min_in = kd.saturating_sub(a + b).max(1);
        shape.push(min_in + rng.below(if rank == 3 { 4 } else { 6 }));
        k.push(kd);
        s.push(1 + rng.below(3));
        pl.push(a);
        pu.push(b);
    }
    let p = PoolParams::new(kind, &k)
        .with_stride(&s)
        .with_padding(&pl, &pu);
    (shape, p)
}

/// Runs the forward pass and the gradient of one case on the device; checks them against
/// the reference and returns the largest errors (forward, gradient).
fn device_case(
    rng: &mut Rng,
    shape: &[usize],
    p: &PoolParams,
    dt: DType,
    grain: usize,
) -> (f64, f64) {
    let g = Geo::new(shape, p);
    let n: usize = shape.iter().product();
    let xs = rng.distinct(n);
    let dys: Vec<f32> = (0..g.planes * g.out_len())
        .map(|_| rng.f32_in(-1.0, 1.0))
        .collect();
    let mut graph = Graph::new(&target());
    let x = var(&mut graph, "x", dt, shape, &xs, grain);
    let out_shape = p.output_shape(shape).unwrap();
    let dy = var(&mut graph, "dy", dt, &out_shape, &dys, 3);
    let mut prog = Vec::new();
    let y = ops::pool(&mut graph, p, &x, &mut prog, "pool").unwrap();
    assert_eq!(y.shape(), out_shape.as_slice());
    let dx = ops::pool_input_gradient(&mut graph, p, &x, &dy, &mut prog, "dpool").unwrap();
    graph.create_host_read("y", &y).unwrap();
    graph.create_host_read("dx", &dx).unwrap();
    let mut e = run(&graph, prog);
    let (xv, dyv) = (held(&xs, dt), held(&dys, dt));
    let (want_y, _) = pool_ref(p.kind, &g, &xv);
    let want_dx = grad_ref(p.kind, &g, &xv, &dyv);
    let what = format!("{:?} {dt} {shape:?} {p:?}", p.kind);
    let (abs, rel) = match (dt, p.kind) {
        (DType::F16, _) => (1.0 / 16384.0, 1.0 / 1024.0),
        (_, PT::Max) => (1e-6, 1e-6),
        _ => (2e-6, 2e-6),
    };
    let ey = check(
        &format!("{what} y"),
        &read(&mut e, "y", dt),
        &want_y,
        abs,
        rel,
    );
    let grad_rel = if dt == DType::F16 { rel } else { 1e-6 };
    let edx = check(
        &format!("{what} dx"),
        &read(&mut e, "dx", dt),
        &want_dx,
        abs,
        grad_rel,
    );
    (ey, edx)
}

#[test]
fn random_pools_match_the_reference_f32_and_f16() {
    popnn::link();
    let mut rng = Rng::new(7);
    let mut worst = [[0f64; 2]; 2];
    let mut cases = 0;
    for rank in 1..=3 {
        for kind in [PT::Max, PT::Avg] {
            for dt in [DType::F32, DType::F16] {
                for _ in 0..3 {
                    let (shape, p) = random_case(&mut rng, rank, kind);
                    // A grain that cuts planes between the tiles.
                    let grain = 1 + rng.below(7);
                    let (ey, edx) = device_case(&mut rng, &shape, &p, dt, grain);
                    let d = usize::from(dt == DType::F16);
                    worst[d][0] = worst[d][0].max(ey);
                    worst[d][1] = worst[d][1].max(edx);
                    cases += 1;
                }
            }
        }
    }
    eprintln!(
        "{cases} cases; largest errors f32 (y, dx) {:?}, f16 {:?}",
        worst[0], worst[1]
    );
}

#[test]
fn fixed_2d_pools_with_stride_and_padding() {
    popnn::link();
    let mut rng = Rng::new(11);
    for kind in [PT::Max, PT::Avg] {
        // ONNX-style 3×3, stride 2, padding 1 on a 2 × 3 × 7 × 6 input.
        let p = PoolParams::new(kind, &[3, 3])
            .with_stride(&[2, 2])
            .with_padding(&[1, 1], &[1, 1]);
        device_case(&mut rng, &[2, 3, 7, 6], &p, DType::F32, 16);
        // Asymmetric padding and kernel, 3-D.
        let p = PoolParams::new(kind, &[2, 3, 1])
            .with_stride(&[1, 2, 3])
            .with_padding(&[1, 0, 0], &[0, 2, 0]);
        device_case(&mut rng, &[2, 2, 3, 4, 5], &p, DType::F16, 10);
        // One plane on one tile: its 40 rows split between the workers, windows overlapping
        // the splits.
        let p = PoolParams::new(kind, &[3, 2])
            .with_stride(&[1, 2])
            .with_padding(&[1, 1], &[2, 0]);
        device_case(&mut rng, &[1, 1, 40, 3], &p, DType::F32, 1024);
    }
}

#[test]
fn reference_gradients_match_central_differences() {
    let mut rng = Rng::new(3);
    for rank in 1..=3 {
        for kind in [PT::Max, PT::Avg] {
            for _ in 0..4 {
                let (shape, p) = random_case(&mut rng, rank, kind);
                let g = Geo::new(&shape, &p);
                let x: Vec<f64> = rng
                    .distinct(shape.iter().product())
                    .iter()
                    .map(|&v| f64::from(v))
                    .collect();
                let dy: Vec<f64> = (0..g.planes * g.out_len())
                    .map(|_| f64::from(rng.f32_in(-1.0, 1.0)))
                    .collect();
                let loss = |x: &[f64]| -> f64 {
                    pool_ref(kind, &g, x)
                        .0
                        .iter()
                        .zip(&dy)
                        .map(|(y, d)| y * d)
                        .sum()
                };
                let analytic = grad_ref(kind, &g, &x, &dy);
                const H: f64 = 1e-5;
                for i in 0..x.len() {
                    let mut xp = x.clone();
                    xp[i] += H;
                    let mut xm = x.clone();
                    xm[i] -= H;
                    let num = (loss(&xp) - loss(&xm)) / (2.0 * H);
                    assert!(
                        (num - analytic[i]).abs() <= 1e-6,
                        "{kind:?} {shape:?} {p:?}: element {i}: central {num}, analytic {}",
                        analytic[i]
                    );
                }
            }
        }
    }
}

#[test]
fn ties_give_the_gradient_to_the_first_maximal_element() {
    popnn::link();
    let mut graph = Graph::new(&target());
    // One plane [1, 1, 2, 4]: windows 2×2 stride 2 over [[3, 3, 1, 2], [3, 1, 2, 2]].
    let x = var(
        &mut graph,
        "x",
        DType::F32,
        &[1, 1, 2, 4],
        &[3.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 2.0],
        3,
    );
    let dy = var(&mut graph, "dy", DType::F32, &[1, 1, 1, 2], &[1.0, 10.0], 1);
    let p = PoolParams::new(PT::Max, &[2, 2]).with_stride(&[2, 2]);
    let mut prog = Vec::new();
    let y = ops::pool(&mut graph, &p, &x, &mut prog, "pool").unwrap();
    let dx = ops::pool_input_gradient(&mut graph, &p, &x, &dy, &mut prog, "dpool").unwrap();
    graph.create_host_read("y", &y).unwrap();
    graph.create_host_read("dx", &dx).unwrap();
    let e = run(&graph, prog);
    assert_eq!(e.read_tensor::<f32>("y").unwrap(), vec![3.0, 2.0]);
    assert_eq!(
        e.read_tensor::<f32>("dx").unwrap(),
        vec![1.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 0.0]
    );
}

#[test]
fn nan_propagates_through_max_pooling() {
    popnn::link();
    let mut graph = Graph::new(&target());
    let x = var(
        &mut graph,
        "x",
        DType::F32,
        &[1, 1, 4],
        &[1.0, f32::NAN, 2.0, 0.0],
        4,
    );
    let p = PoolParams::new(PT::Max, &[2]).with_stride(&[2]);
    let mut prog = Vec::new();
    let y = ops::pool(&mut graph, &p, &x, &mut prog, "pool").unwrap();
    graph.create_host_read("y", &y).unwrap();
    let e = run(&graph, prog);
    let y = e.read_tensor::<f32>("y").unwrap();
    assert!(y[0].is_nan() && y[1] == 2.0, "{y:?}");
}

#[test]
fn outputs_live_on_the_tiles_of_their_input_planes() {
    popnn::link();
    let mut graph = Graph::new(&target());
    // 8 planes of 6, 12 elements a tile: planes 2 per tile.
    let x = graph.add_variable(DType::F32, &[2, 4, 6], "x");
    graph.map_linearly(&x, 12).unwrap();
    let p = PoolParams::new(PT::Avg, &[2]).with_stride(&[2]);
    let mut prog = Vec::new();
    let y = ops::pool(&mut graph, &p, &x, &mut prog, "pool").unwrap();
    // dy all on tile 3: dx still follows x.
    let dy = graph.add_variable(DType::F32, &[2, 4, 3], "dy");
    graph.set_tile_mapping(&dy, 3).unwrap();
    let dx = ops::pool_input_gradient(&mut graph, &p, &x, &dy, &mut prog, "dpool").unwrap();
    for (t, per) in [(&y, 3), (&dx, 6)] {
        let m = graph.tile_mapping(t).unwrap();
        for (tile, ranges) in m.iter().enumerate() {
            let n: usize = ranges.iter().map(|r| r.len()).sum();
            assert_eq!(n, 2 * per, "tile {tile}: {ranges:?}");
            let (lo, hi) = (2 * per * tile, 2 * per * (tile + 1));
            assert!(
                ranges.iter().all(|r| r.start >= lo && r.end <= hi),
                "{ranges:?}"
            );
        }
    }
}

fn err_of(shape: &[usize], dt: DType, p: &PoolParams) -> NnOpError {
    let mut graph = Graph::new(&target());
    let x = graph.add_variable(dt, shape, "x");
    graph.map_linearly(&x, 4).unwrap();
    let mut prog = Vec::new();
    ops::pool(&mut graph, p, &x, &mut prog, "mypool").unwrap_err()
}

#[test]
fn bad_input_gives_typed_errors() {
    let k2 = PoolParams::new(PT::Max, &[2]);
    // Rank 2: no field.
    let e = err_of(&[2, 3], DType::F32, &k2);
    assert!(
        matches!(&e, NnOpError::Shape { op, tensor, axis: 1, .. } if op == "mypool" && tensor == "x"),
        "{e}"
    );
    // Rank 6: a 4-D field.
    let e = err_of(
        &[1, 1, 2, 2, 2, 2],
        DType::F32,
        &PoolParams::new(PT::Avg, &[1, 1, 1, 1]),
    );
    assert!(matches!(&e, NnOpError::Shape { axis: 5, .. }), "{e}");
    // The kernel larger than the padded field.
    let p = PoolParams::new(PT::Avg, &[2, 5]).with_padding(&[0, 1], &[0, 0]);
    let e = err_of(&[1, 2, 4, 3], DType::F32, &p);
    assert!(
        matches!(&e, NnOpError::Shape { tensor, axis: 3, .. } if tensor == "x"),
        "{e}"
    );
    // Padding not smaller than the kernel.
    let p = PoolParams::new(PT::Max, &[2]).with_padding(&[2], &[0]);
    let e = err_of(&[1, 1, 5], DType::F32, &p);
    assert!(
        matches!(&e, NnOpError::Param { param, .. } if param == "padding"),
        "{e}"
    );
    // Parameters for another field rank; a zero stride; a zero kernel.
    let e = err_of(&[1, 1, 5, 5], DType::F32, &k2);
    assert!(
        matches!(&e, NnOpError::Param { param, .. } if param == "kernel"),
        "{e}"
    );
    let e = err_of(&[1, 1, 5], DType::F32, &k2.clone().with_stride(&[0]));
    assert!(
        matches!(&e, NnOpError::Param { param, .. } if param == "stride"),
        "{e}"
    );
    let e = err_of(&[1, 1, 5], DType::F32, &PoolParams::new(PT::Max, &[0]));
    assert!(
        matches!(&e, NnOpError::Param { param, .. } if param == "kernel"),
        "{e}"
    );
    // An empty axis; an integer tensor.
    let e = err_of(&[0, 1, 5], DType::F32, &k2);
    assert!(matches!(&e, NnOpError::Shape { axis: 0, .. }), "{e}");
    let e = err_of(&[1, 1, 5], DType::I32, &k2);
    assert!(
        matches!(&e, NnOpError::DType { tensor, .. } if tensor == "x"),
        "{e}"
    );
    // The gradient: dy of the wrong shape or type.
    let mut graph = Graph::new(&target());
    let x = graph.add_variable(DType::F32, &[1, 2, 5], "x");
    let dy = graph.add_variable(DType::F32, &[1, 2, 3], "dy");
    let dyh = graph.add_variable(DType::F16, &[1, 2, 4], "dyh");
    let mut prog = Vec::new();
    let e = ops::pool_input_gradient(&mut graph, &k2, &x, &dy, &mut prog, "g").unwrap_err();
    assert!(
        matches!(&e, NnOpError::Shape { tensor, axis: 2, .. } if tensor == "dy"),
        "{e}"
    );
    let e = ops::pool_input_gradient(&mut graph, &k2, &x, &dyh, &mut prog, "g").unwrap_err();
    assert!(
        matches!(&e, NnOpError::DType { tensor, .. } if tensor == "dy"),
        "{e}"
    );
    assert!(prog.is_empty());
    // output_shape says the same.
    assert!(PoolParams::new(PT::Max, &[4])
        .output_shape(&[1, 1, 3])
        .is_err());
}

/// The documentation's examples (of `pool` and `PoolParams::new`), run here as well.
#[test]
fn documented_examples() {
    popnn::link();
    let p = PoolParams::new(PT::Max, &[3, 3])
        .with_stride(&[2, 2])
        .with_padding(&[1, 1], &[1, 1]);
    assert_eq!(p.output_shape(&[8, 4, 7, 6]).unwrap(), vec![8, 4, 4, 3]);
    let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
    let x = var(
        &mut graph,
        "x",
        DType::F32,
        &[1, 1, 4],
        &[1.0, 5.0, 2.0, 4.0],
        2,
    );
    let mut prog = Vec::new();
    let p = PoolParams::new(PT::Avg, &[2])
        .with_stride(&[2])
        .with_padding(&[1], &[1]);
    let y = ops::pool(&mut graph, &p, &x, &mut prog, "avg").unwrap();
    graph.create_host_read("y", &y).unwrap();
    let e = run(&graph, prog);
    assert_eq!(e.read_tensor::<f32>("y").unwrap(), vec![1.0, 3.5, 4.0]);
}

/// The cycle formulas of `docs/popnn.md`, worked by hand.
#[test]
fn cycle_estimates_follow_the_documented_formulas() {
    use popnn::codelets::pool::{forward_cycles, grad_cycles, PoolDim, PoolGeom};
    // 2 planes of 9 outputs, 3×3 taps, 6 workers: shares of 3 outputs over up to 2 planes.
    assert_eq!(forward_cycles(2, 9, 9, false, 6), 20 + 2 * 6 + 3 * (4 + 9));
    assert_eq!(
        forward_cycles(2, 9, 9, true, 6),
        20 + 2 * 6 + 3 * (4 + 9 + 5)
    );
    // One 6×6 plane, 3×3 kernel, stride 1, padding 1: rows along the first field dimension.
    let one = PoolDim {
        input: 1,
        output: 1,
        kernel: 1,
        stride: 1,
        pad_lower: 0,
    };
    let d = PoolDim {
        input: 6,
        output: 6,
        kernel: 3,
        stride: 1,
        pad_lower: 1,
    };
    let g = PoolGeom { dims: [one, d, d] };
    assert_eq!((g.row_dim(), g.rows()), (1, (6, 6)));
    // 6 workers: a row each, reached by 3 output rows of 6 outputs of 9 taps.
    assert_eq!(grad_cycles(&g, 1, 6), 20 + 6 + 3 * 6 * (4 + 9) + 2 * 6);
    // 1 worker: all 6 rows, all 6 output rows.
    assert_eq!(grad_cycles(&g, 1, 1), 20 + 6 + 6 * 6 * (4 + 9) + 2 * 36);
}

/// A view (axes swapped, so that its planes are not contiguous in the variable) pools as
/// its values say.
#[test]
fn a_view_pools_as_its_values() {
    popnn::link();
    let mut rng = Rng::new(21);
    let (n, c, w) = (3, 2, 5);
    let data = rng.distinct(n * c * w);
    let mut graph = Graph::new(&target());
    // The variable is [C, N, W]; the op sees [N, C, W].
    let v = var(&mut graph, "v", DType::F32, &[c, n, w], &data, 4);
    let x = v.dim_shuffle(&[1, 0, 2]).unwrap();
    let p = PoolParams::new(PT::Max, &[2]).with_padding(&[1], &[0]);
    let dys: Vec<f32> = (0..n * c * w).map(|_| rng.f32_in(-1.0, 1.0)).collect();
    let dy = var(&mut graph, "dy", DType::F32, &[n, c, w], &dys, 3);
    let mut prog = Vec::new();
    let y = ops::pool(&mut graph, &p, &x, &mut prog, "pool").unwrap();
    let dx = ops::pool_input_gradient(&mut graph, &p, &x, &dy, &mut prog, "dpool").unwrap();
    graph.create_host_read("y", &y).unwrap();
    graph.create_host_read("dx", &dx).unwrap();
    let mut e = run(&graph, prog);
    // The view's values in its own order.
    let mut xv = vec![0.0; n * c * w];
    for (ci, nn, wi) in
        (0..c).flat_map(|ci| (0..n).flat_map(move |nn| (0..w).map(move |wi| (ci, nn, wi))))
    {
        xv[(nn * c + ci) * w + wi] = f64::from(data[(ci * n + nn) * w + wi]);
    }
    let g = Geo::new(&[n, c, w], &p);
    let dyv: Vec<f64> = dys.iter().map(|&d| f64::from(d)).collect();
    check(
        "view y",
        &read(&mut e, "y", DType::F32),
        &pool_ref(PT::Max, &g, &xv).0,
        0.0,
        0.0,
    );
    check(
        "view dx",
        &read(&mut e, "dx", DType::F32),
        &grad_ref(PT::Max, &g, &xv, &dyv),
        1e-6,
        1e-6,
    );
}
