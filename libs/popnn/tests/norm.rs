//! `popnn::ops` batch, layer and group normalisation, forward and backward, on the
//! simulator against an f64 host reference written here, and the reference's gradients
//! against central differences of its forward pass: random shapes `[N, C, *field]` (field of
//! 0 to 2 dimensions, N up to 4), group counts, epsilons, γ and β; f32 and f16; tensors cut
//! between the 4 tiles; typed errors.
//!
//! Tolerances (each `abs + rel·|want|`): f32 outputs, statistics and gradients `1e-5 + 1e-5`
//! (the inverse standard deviation `rsqrt` is within 2 ulp, sums of ≤ 64 terms in f32); f16
//! outputs and gradients (f16 inputs; the reference on the same f16 values in f64)
//! `2^-10·|want| + 2^-12` (one f16 ulp, plus the f32 error before the rounding, which for the
//! input gradient's cancellation is up to a few 1e-5), f16 statistics (f32) `1e-5 + 1e-5`; the
//! reference's gradients within `1e-6·(1 + |want|)` of central differences with h = 1e-5 of
//! `L = Σ dy · y`.

mod sim;

use sim::*;

use poplar::{DType, Engine, Graph, Program};
use poplar::{Target, Tensor};
use popnn::ops::{self, NnOpError, NormGradients, NormStats};

// ---- the f64 reference ----

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Batch,
    Layer,
    Group(usize),
}

/// `[N, C, F]` of a shape, and the statistics set of element `e` (in the order of the op's
/// statistics tensor) and the channel.
struct Sets {
    n: usize,
    c: usize,
    f: usize,
    kind: Kind,
}

impl Sets {
    fn new(shape: &[usize], kind: Kind) -> Sets {
        Sets {
            n: shape[0],
            c: shape[1],
            f: shape[2..].iter().product(),
            kind,
        }
    }
    fn len(&self) -> usize {
        self.n * self.c * self.f
    }
    fn channel(&self, e: usize) -> usize {
        e / self.f % self.c
    }
    fn set(&self, e: usize) -> usize {
        let n = e / (self.c * self.f);
        match self.kind {
            Kind::Batch => self.channel(e),
            Kind::Layer => n,
            Kind::Group(g) => n * g + self.channel(e) / (self.c / g),
        }
    }
    fn sets(&self) -> usize {
        match self.kind {
            Kind::Batch => self.c,
            Kind::Layer => self.n,
            Kind::Group(g) => self.n * g,
        }
    }
    /// Per set: `Σ v` over its elements, divided by its size.
    fn means(&self, v: &[f64]) -> Vec<f64> {
        let (mut s, mut k) = (vec![0.0; self.sets()], vec![0.0; self.sets()]);
        for (e, &x) in v.iter().enumerate() {
            s[self.set(e)] += x;
            k[self.set(e)] += 1.0;
        }
        s.iter().zip(&k).map(|(s, k)| s / k).collect()
    }
    /// Per channel: `Σ v`.
    fn channel_sums(&self, v: &[f64]) -> Vec<f64> {
        let mut s = vec![0.0; self.c];
        for (e, &x) in v.iter().enumerate() {
            s[self.channel(e)] += x;
        }
        s
    }
}

/// `(y, mean, inv_std)` in f64.
fn forward_ref(s: &Sets, x: &[f64], gamma: &[f64], beta: &[f64], eps: f64) -> [Vec<f64>; 3] {
    let mean = s.means(x);
    let sq: Vec<f64> = (0..s.len())
        .map(|e| (x[e] - mean[s.set(e)]).powi(2))
        .collect();
    let inv: Vec<f64> = s
        .means(&sq)
        .iter()
        .map(|v| 1.0 / (v + eps).sqrt())
        .collect();
    let y = (0..s.len())
        .map(|e| {
            let c = s.channel(e);
            gamma[c] * (x[e] - mean[s.set(e)]) * inv[s.set(e)] + beta[c]
        })
        .collect();
    [y, mean, inv]
}

/// `(dx, dgamma, dbeta)` in f64, the closed form.
fn backward_ref(s: &Sets, x: &[f64], gamma: &[f64], dy: &[f64], eps: f64) -> [Vec<f64>; 3] {
    let [_, mean, inv] = forward_ref(s, x, gamma, &vec![0.0; s.c], eps);
    let xhat: Vec<f64> = (0..s.len())
        .map(|e| (x[e] - mean[s.set(e)]) * inv[s.set(e)])
        .collect();
    let dxhat: Vec<f64> = (0..s.len()).map(|e| dy[e] * gamma[s.channel(e)]).collect();
    let p: Vec<f64> = dxhat.iter().zip(&xhat).map(|(a, b)| a * b).collect();
    let (m1, m2) = (s.means(&dxhat), s.means(&p));
    let dx = (0..s.len())
        .map(|e| {
            let k = s.set(e);
            inv[k] * (dxhat[e] - m1[k] - xhat[e] * m2[k])
        })
        .collect();
    let q: Vec<f64> = dy.iter().zip(&xhat).map(|(a, b)| a * b).collect();
    [dx, s.channel_sums(&q), s.channel_sums(dy)]
}

/// The op of `kind` on the device, forward and backward.
#[allow(clippy::too_many_arguments)]
fn device_ops(
    g: &mut Graph,
    kind: Kind,
    [x, gamma, beta, dy]: [&Tensor; 4],
    eps: f32,
    prog: &mut Vec<Program>,
) -> Result<(Tensor, NormStats, NormGradients), NnOpError> {
    let (y, st) = match kind {
        Kind::Batch => ops::batch_norm(g, x, gamma, beta, eps, prog, "bn")?,
        Kind::Layer => ops::layer_norm(g, x, gamma, beta, eps, prog, "ln")?,
        Kind::Group(n) => ops::group_norm(g, x, gamma, beta, n, eps, prog, "gn")?,
    };
    let gr = match kind {
        Kind::Batch => ops::batch_norm_grad(g, x, dy, &st, gamma, prog, "bn.grad")?,
        Kind::Layer => ops::layer_norm_grad(g, x, dy, &st, gamma, prog, "ln.grad")?,
        Kind::Group(n) => ops::group_norm_grad(g, x, dy, &st, gamma, n, prog, "gn.grad")?,
    };
    Ok((y, st, gr))
}

/// A random case: shape, kind, eps.
fn random_case(rng: &mut Rng, kind_of: usize) -> (Vec<usize>, Kind, f32) {
    let (groups, cg) = (1 + rng.below(3), 1 + rng.below(3));
    let mut shape = vec![1 + rng.below(4), groups * cg];
    for _ in 0..rng.below(3) {
        shape.push(1 + rng.below(4));
    }
    let kind = match kind_of {
        0 => {
            if shape[0] * shape[2..].iter().product::<usize>() == 1 {
                shape[0] = 2; // a set of more than one element
            }
            Kind::Batch
        }
        1 => Kind::Layer,
        _ => Kind::Group(groups),
    };
    let eps = [1e-5, 1e-3, 0.1][rng.below(3)];
    (shape, kind, eps)
}

/// One case on the device against the reference: the largest errors (y, stats, dx, dγ/dβ).
fn device_case(rng: &mut Rng, shape: &[usize], kind: Kind, eps: f32, dt: DType) -> [f64; 4] {
    let s = Sets::new(shape, kind);
    let (xs, dys) = (rng.vec(s.len(), -2.0, 2.0), rng.vec(s.len(), -1.0, 1.0));
    let (gs, bs) = (rng.vec(s.c, 0.5, 1.5), rng.vec(s.c, -0.5, 0.5));
    let mut g = Graph::new(&target());
    let grain = 1 + rng.below(7);
    let x = var(&mut g, "x", dt, shape, &xs, grain);
    let dy = var(&mut g, "dy", dt, shape, &dys, grain + 1);
    let gamma = var(&mut g, "gamma", dt, &[s.c], &gs, 1);
    let beta = var(&mut g, "beta", dt, &[s.c], &bs, 2);
    let mut prog = Vec::new();
    let (y, st, gr) = device_ops(&mut g, kind, [&x, &gamma, &beta, &dy], eps, &mut prog).unwrap();
    assert_eq!(y.shape(), shape);
    let stat_shape = match kind {
        Kind::Batch => vec![s.c],
        Kind::Layer => vec![s.n],
        Kind::Group(n) => vec![s.n, n],
    };
    assert_eq!(st.mean.shape(), stat_shape.as_slice());
    assert_eq!(st.inv_std.shape(), stat_shape.as_slice());
    for (n, t) in [
        ("y", &y),
        ("mean", &st.mean),
        ("inv", &st.inv_std),
        ("dx", &gr.input),
        ("dgamma", &gr.gamma),
        ("dbeta", &gr.beta),
    ] {
        g.create_host_read(n, t).unwrap();
    }
    let mut e = run(&g, prog);
    let (xv, dyv, gv, bv) = (held(&xs, dt), held(&dys, dt), held(&gs, dt), held(&bs, dt));
    let [wy, wm, wi] = forward_ref(&s, &xv, &gv, &bv, f64::from(eps));
    let [wdx, wdg, wdb] = backward_ref(&s, &xv, &gv, &dyv, f64::from(eps));
    let what = format!("{kind:?} {dt} {shape:?} eps {eps}");
    let (abs, rel) = if dt == DType::F16 {
        (1.0 / 4096.0, 1.0 / 1024.0)
    } else {
        (1e-5, 1e-5)
    };
    let ck = |e: &mut Engine, n: &str, dt: DType, want: &[f64], abs: f64, rel: f64| {
        check(&format!("{what} {n}"), &read(e, n, dt), want, abs, rel)
    };
    let ey = ck(&mut e, "y", dt, &wy, abs, rel);
    let em = ck(&mut e, "mean", DType::F32, &wm, 1e-5, 1e-5);
    let ei = ck(&mut e, "inv", DType::F32, &wi, 1e-5, 1e-5);
    let edx = ck(&mut e, "dx", dt, &wdx, abs, rel);
    let edg = ck(&mut e, "dgamma", dt, &wdg, abs, rel);
    let edb = ck(&mut e, "dbeta", dt, &wdb, abs, rel);
    [ey, em.max(ei), edx, edg.max(edb)]
}

#[test]
fn random_norms_match_the_reference_f32_and_f16() {
    popnn::link();
    let mut rng = Rng::new(5);
    let mut worst = [[0f64; 4]; 2];
    let mut cases = 0;
    for kind_of in 0..3 {
        for dt in [DType::F32, DType::F16] {
            for _ in 0..4 {
                let (shape, kind, eps) = random_case(&mut rng, kind_of);
                let errs = device_case(&mut rng, &shape, kind, eps, dt);
                let d = usize::from(dt == DType::F16);
                for (w, e) in worst[d].iter_mut().zip(errs) {
                    *w = w.max(e);
                }
                cases += 1;
            }
        }
    }
    eprintln!(
        "{cases} cases; largest errors (y, stats, dx, dgamma/dbeta) f32 {:?}, f16 {:?}",
        worst[0], worst[1]
    );
}

#[test]
fn fixed_shapes_of_each_norm() {
    popnn::link();
    let mut rng = Rng::new(9);
    device_case(&mut rng, &[4, 3, 5, 2], Kind::Batch, 1e-5, DType::F32);
    device_case(&mut rng, &[3, 6], Kind::Layer, 1e-5, DType::F32);
    device_case(&mut rng, &[2, 6, 7], Kind::Group(3), 1e-3, DType::F16);
    device_case(&mut rng, &[2, 4, 3, 3], Kind::Group(4), 1e-5, DType::F32);
}

#[test]
fn reference_gradients_match_central_differences() {
    let mut rng = Rng::new(13);
    const H: f64 = 1e-5;
    for kind_of in 0..3 {
        for _ in 0..4 {
            let (shape, kind, eps) = random_case(&mut rng, kind_of);
            let s = Sets::new(&shape, kind);
            let f = |v: Vec<f32>| -> Vec<f64> { v.iter().map(|&x| f64::from(x)).collect() };
            let (x, dy) = (
                f(rng.vec(s.len(), -2.0, 2.0)),
                f(rng.vec(s.len(), -1.0, 1.0)),
            );
            let (gm, bt) = (f(rng.vec(s.c, 0.5, 1.5)), f(rng.vec(s.c, -0.5, 0.5)));
            let eps = f64::from(eps);
            let loss = |x: &[f64], gm: &[f64], bt: &[f64]| -> f64 {
                let [y, ..] = forward_ref(&s, x, gm, bt, eps);
                y.iter().zip(&dy).map(|(y, d)| y * d).sum()
            };
            let [dx, dg, db] = backward_ref(&s, &x, &gm, &dy, eps);
            let central = |which: usize, i: usize| {
                let mut vs = [x.clone(), gm.clone(), bt.clone()];
                vs[which][i] += H;
                let up = loss(&vs[0], &vs[1], &vs[2]);
                vs[which][i] -= 2.0 * H;
                let down = loss(&vs[0], &vs[1], &vs[2]);
                (up - down) / (2.0 * H)
            };
            for (which, analytic) in [(0, &dx), (1, &dg), (2, &db)] {
                for (i, &a) in analytic.iter().enumerate() {
                    let num = central(which, i);
                    assert!(
                        (num - a).abs() <= 1e-6 * (1.0 + a.abs()),
                        "{kind:?} {shape:?} eps {eps}: tensor {which} element {i}: central {num}, analytic {a}"
                    );
                }
            }
        }
    }
}

/// The error of the op `kind` on `x` of `shape` with γ of `gshape` (β as γ).
fn err_of(kind: Kind, shape: &[usize], gshape: &[usize], gdt: DType, eps: f32) -> NnOpError {
    let mut g = Graph::new(&target());
    let x = g.add_variable(DType::F32, shape, "x");
    let gamma = g.add_variable(gdt, gshape, "gamma");
    let beta = g.add_variable(gdt, gshape, "beta");
    let mut prog = Vec::new();
    let r = match kind {
        Kind::Batch => ops::batch_norm(&mut g, &x, &gamma, &beta, eps, &mut prog, "mynorm"),
        Kind::Layer => ops::layer_norm(&mut g, &x, &gamma, &beta, eps, &mut prog, "mynorm"),
        Kind::Group(n) => ops::group_norm(&mut g, &x, &gamma, &beta, n, eps, &mut prog, "mynorm"),
    };
    let e = r.map(|_| ()).unwrap_err();
    assert!(prog.is_empty(), "{e}: no programs added");
    e
}

#[test]
fn bad_input_gives_typed_errors() {
    let f = DType::F32;
    // Rank 1.
    let e = err_of(Kind::Batch, &[4], &[4], f, 1e-5);
    assert!(
        matches!(&e, NnOpError::Shape { op, tensor, axis: 0, .. } if op == "mynorm" && tensor == "x"),
        "{e}"
    );
    // Channels not divisible by the groups; zero groups.
    let e = err_of(Kind::Group(4), &[2, 6, 3], &[6], f, 1e-5);
    assert!(
        matches!(&e, NnOpError::Shape { tensor, axis: 1, .. } if tensor == "x"),
        "{e}"
    );
    let e = err_of(Kind::Group(0), &[2, 6, 3], &[6], f, 1e-5);
    assert!(
        matches!(&e, NnOpError::Param { param, .. } if param == "groups"),
        "{e}"
    );
    // γ of the wrong shape, rank or type.
    let e = err_of(Kind::Layer, &[2, 6, 3], &[5], f, 1e-5);
    assert!(
        matches!(&e, NnOpError::Shape { tensor, axis: 0, .. } if tensor == "gamma"),
        "{e}"
    );
    let e = err_of(Kind::Batch, &[2, 6, 3], &[1, 6], f, 1e-5);
    assert!(
        matches!(&e, NnOpError::Shape { tensor, .. } if tensor == "gamma"),
        "{e}"
    );
    let e = err_of(Kind::Batch, &[2, 6, 3], &[6], DType::F16, 1e-5);
    assert!(
        matches!(&e, NnOpError::DType { tensor, .. } if tensor == "gamma"),
        "{e}"
    );
    // An empty axis; a negative or NaN epsilon.
    let e = err_of(Kind::Batch, &[0, 6], &[6], f, 1e-5);
    assert!(matches!(&e, NnOpError::Shape { axis: 0, .. }), "{e}");
    let e = err_of(Kind::Batch, &[2, 6], &[6], f, -1.0);
    assert!(
        matches!(&e, NnOpError::Param { param, .. } if param == "eps"),
        "{e}"
    );
    let e = err_of(Kind::Layer, &[2, 6], &[6], f, f32::NAN);
    assert!(
        matches!(&e, NnOpError::Param { param, .. } if param == "eps"),
        "{e}"
    );
    // Backward: dy of another shape; statistics of another shape (batch norm's for a layer
    // norm) or type.
    let mut g = Graph::new(&target());
    let x = g.add_variable(f, &[2, 6, 3], "x");
    let dy = g.add_variable(f, &[2, 6, 2], "dy");
    let gamma = g.add_variable(f, &[6], "gamma");
    let mean = g.add_variable(f, &[6], "mean");
    let meanh = g.add_variable(DType::F16, &[2], "meanh");
    let inv = g.add_variable(f, &[2], "inv");
    let mut prog = Vec::new();
    let st = NormStats {
        mean: mean.clone(),
        inv_std: mean.clone(),
    };
    let e = ops::batch_norm_grad(&mut g, &x, &dy, &st, &gamma, &mut prog, "b").unwrap_err();
    assert!(
        matches!(&e, NnOpError::Shape { tensor, axis: 2, .. } if tensor == "dy"),
        "{e}"
    );
    let e = ops::layer_norm_grad(&mut g, &x, &x, &st, &gamma, &mut prog, "l").unwrap_err();
    assert!(
        matches!(&e, NnOpError::Shape { tensor, axis: 0, .. } if tensor == "mean"),
        "{e}"
    );
    let st = NormStats {
        mean: meanh,
        inv_std: inv,
    };
    let e = ops::layer_norm_grad(&mut g, &x, &x, &st, &gamma, &mut prog, "l").unwrap_err();
    assert!(
        matches!(&e, NnOpError::DType { tensor, .. } if tensor == "mean"),
        "{e}"
    );
    assert!(prog.is_empty());
}

/// The documentation's example of `batch_norm`, run here as well.
#[test]
fn documented_example() {
    let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
    let x = graph.add_variable(DType::F32, &[2, 1, 1], "x");
    let gamma = graph.add_variable(DType::F32, &[1], "gamma");
    let beta = graph.add_variable(DType::F32, &[1], "beta");
    for (t, v) in [(&x, &[1.0f32, 3.0][..]), (&gamma, &[2.0]), (&beta, &[0.5])] {
        graph.set_tile_mapping(t, 0).unwrap();
        graph.set_initial_value(t, v).unwrap();
    }
    let mut prog = Vec::new();
    let (y, stats) = ops::batch_norm(&mut graph, &x, &gamma, &beta, 0.0, &mut prog, "bn").unwrap();
    graph.create_host_read("y", &y).unwrap();
    graph.create_host_read("mean", &stats.mean).unwrap();
    let e = run(&graph, prog);
    assert_eq!(e.read_tensor::<f32>("y").unwrap(), vec![-1.5, 2.5]);
    assert_eq!(e.read_tensor::<f32>("mean").unwrap(), vec![2.0]);
}
