//! The convolution's definition as direct f64 loops over the user's tensors (the oracle of
//! the convolution tests), and random parameter sets covering every feature.

#![allow(dead_code)] // each test binary uses part of it

pub mod resnet50;

use poplar::rand::SplitMix64;
use poplin::ConvParams;
#[allow(unused_imports)] // used by conv.rs, not conv_graph.rs
pub use resnet50::RESNET50_LAYERS;

/// Row-major index into a `[.., dims]` array.
pub fn at(idx: &[usize], dims: &[usize]) -> usize {
    idx.iter().zip(dims).fold(0, |acc, (&i, &d)| acc * d + i)
}

/// Field, kernel, stride, dilation, lower padding and output field, in three dimensions.
pub type Lifted = (
    [usize; 3],
    [usize; 3],
    [usize; 3],
    [usize; 3],
    [usize; 3],
    [usize; 3],
);

/// The user's parameters lifted to three field dimensions (front dimensions of size 1).
pub fn lift(p: &ConvParams) -> Lifted {
    let l = |v: &[usize], fill: usize| {
        let mut a = [fill; 3];
        a[3 - v.len()..].copy_from_slice(v);
        a
    };
    (
        l(&p.input_field, 1),
        l(&p.kernel, 1),
        l(&p.stride, 1),
        l(&p.dilation, 1),
        l(&p.padding_lower, 0),
        l(&p.output_field(), 1),
    )
}

/// The input position read by output `o` and tap `k` in each dimension, if inside.
pub fn source(o: [usize; 3], k: [usize; 3], p: &ConvParams) -> Option<[usize; 3]> {
    let (f, _, s, dl, pl, _) = lift(p);
    let mut i = [0; 3];
    for d in 0..3 {
        let q = (o[d] * s[d] + k[d] * dl[d]) as i64 - pl[d] as i64;
        if q < 0 || q >= f[d] as i64 {
            return None;
        }
        i[d] = q as usize;
    }
    Some(i)
}

pub fn field_iter(dims: [usize; 3]) -> impl Iterator<Item = [usize; 3]> {
    (0..dims[0])
        .flat_map(move |a| (0..dims[1]).flat_map(move |b| (0..dims[2]).map(move |c| [a, b, c])))
}

/// Calls `f(b, g, c, oc, o, k, i)` for every product of the forward convolution.
pub fn each_product(
    p: &ConvParams,
    mut f: impl FnMut(usize, usize, usize, usize, [usize; 3], [usize; 3], [usize; 3]),
) {
    let (_, kernel, _, _, _, out) = lift(p);
    let (ci, co) = (p.input_channels / p.groups, p.output_channels / p.groups);
    for b in 0..p.batch {
        for g in 0..p.groups {
            for oc in 0..co {
                for c in 0..ci {
                    for o in field_iter(out) {
                        for k in field_iter(kernel) {
                            if let Some(i) = source(o, k, p) {
                                f(b, g, c, oc, o, k, i);
                            }
                        }
                    }
                }
            }
        }
    }
}

pub struct Tensors {
    pub x: Vec<f32>,
    pub w: Vec<f32>,
    pub dy: Vec<f32>,
}

/// Direct f64 loops: `y`, `dx` and `dw` of the definition in [`ConvParams`].
pub fn host(p: &ConvParams, t: &Tensors) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (f, kernel, _, _, _, out) = lift(p);
    let (ci, co) = (p.input_channels / p.groups, p.output_channels / p.groups);
    let xd = [p.batch, p.input_channels, f[0], f[1], f[2]];
    let wd = [p.output_channels, ci, kernel[0], kernel[1], kernel[2]];
    let yd = [p.batch, p.output_channels, out[0], out[1], out[2]];
    let mut y = vec![0.0; yd.iter().product()];
    let mut dx = vec![0.0; t.x.len()];
    let mut dw = vec![0.0; t.w.len()];
    each_product(p, |b, g, c, oc, o, k, i| {
        let xi = at(&[b, g * ci + c, i[0], i[1], i[2]], &xd);
        let wi = at(&[g * co + oc, c, k[0], k[1], k[2]], &wd);
        let yi = at(&[b, g * co + oc, o[0], o[1], o[2]], &yd);
        y[yi] += f64::from(t.x[xi]) * f64::from(t.w[wi]);
        dx[xi] += f64::from(t.dy[yi]) * f64::from(t.w[wi]);
        dw[wi] += f64::from(t.dy[yi]) * f64::from(t.x[xi]);
    });
    (y, dx, dw)
}

pub fn random_params(rng: &mut SplitMix64) -> ConvParams {
    let rank = 1 + (rng.next_u64() % 3) as usize;
    let mut r = |lo: u64, hi: u64| (lo + rng.next_u64() % (hi - lo + 1)) as usize;
    let groups = r(1, 3);
    let (ci, co) = (groups * r(1, 3), groups * r(1, 3));
    let kernel: Vec<usize> = (0..rank).map(|_| r(1, 3)).collect();
    let dilation: Vec<usize> = (0..rank).map(|_| r(1, 2)).collect();
    let stride: Vec<usize> = (0..rank).map(|_| r(1, 3)).collect();
    let lower: Vec<usize> = (0..rank).map(|_| r(0, 2)).collect();
    let upper: Vec<usize> = (0..rank).map(|_| r(0, 2)).collect();
    let field: Vec<usize> = (0..rank)
        .map(|d| (dilation[d] * (kernel[d] - 1) + 1).max(r(1, if rank == 3 { 5 } else { 8 })))
        .collect();
    ConvParams::new(r(1, 2), ci, co, &field, &kernel)
        .with_groups(groups)
        .with_stride(&stride)
        .with_dilation(&dilation)
        .with_padding(&lower, &upper)
}

pub fn values(n: usize, rng: &mut SplitMix64) -> Vec<f32> {
    (0..n).map(|_| rng.f32_in(-1.0, 1.0)).collect()
}
