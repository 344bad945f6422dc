//! The dense layer's vertices, over a tile's block of rows `j0..j1` of a layer (`r` rows) and
//! a micro-batch of `m` samples, activations feature-major:
//!
//! | codelet | fields | does | split over the workers |
//! |---|---|---|---|
//! | `popnn::DenseForward<f>` | `w` (`r × n`), `b` (`r`), `x` (`n × m`) → `z`, `y` (`r × m`) | `z[j,s] = b[j] + Σ_i w[j,i]·x[i,s]`, `y = f(z)` | the `r·m` outputs |
//! | `popnn::DenseGrad<f>` | `dy`, `z` (`r × m`), `x` (`n × m`) → `dz` (`r × m`); `dw` (`r × n`), `db` (`r`) in/out | `dz = dy·f′(z)`, `db[j] += dz[j,0] + dz[j,1] + …`, `dw[j,i] += dz[j,0]·x[i,0] + …` | the rows |
//! | `popnn::DensePartial` | `w` (`r × n`), `dz` (`r × m`) → `dx` (`n × m`) | `dx[i,s] = Σ_j w[j,i]·dz[j,s]` over the tile's rows: one partial of the input gradient | the `n·m` outputs |
//! | `popnn::SumParts` | `parts` (list) → `out` | `out[e] = parts[0][e] + parts[1][e] + …`, left to right | the elements |
//!
//! `f` is the activation (`none`, `relu`, `gelu`: one codelet each, so that the cycle
//! estimates know it). With f16 weights (`TrainOptions::half_weights`) `DenseForward<f,half>`
//! and `DensePartial<half>` read `w` as f16 and widen each weight exactly to f32; everything
//! else is f32. The estimates are the f32 ones (a `MatVec<half>` of f32 products). Every sum runs left to right (rows, inputs, samples and partials in ascending order), and
//! every output element is written by one worker, so results do not depend on the split.
//!
//! **Cycle estimates** (one worker's share; `codelets::cycles`; poplibs builds layers from
//! its matmul and element-wise vertices, not these, so they are assembled from the standard
//! library's estimates of the same loops, not measured): `DenseForward`: a `MatVec<float>`
//! over its `⌈r·m/6⌉` outputs as rows of `n`, plus the activation per output (ReLU 1, GELU
//! 30: the polynomial, a `tanh` assumed at two `Exp` and a divide, and the products);
//! `DenseGrad`: per row of its `⌈r/6⌉`, the row's `dz` (`m` multiplies, plus `f′` at 1 for
//! ReLU, 40 for GELU), the bias (`m/2` vector adds) and a `MatVec<float>` of `n` rows of `m`
//! for the weights (plus `n` adds into `dw`); `DensePartial`: a `MatVec<float>` over its
//! `⌈n·m/6⌉` outputs as rows of `r`; `SumParts`: `BinaryOp1DInPlace`'s 58 and 3 cycles per 2
//! floats per part.

use codelets::cycles;
use codelets::family::BinaryOp;
use poplar_core::codelet::*;
use poplar_core::dtype::DType;

use super::{per, share_of};
use crate::math::Activation;

/// Cycles of the activation (`derivative`: of its derivative) of one element.
const fn act_cycles(f: Activation, derivative: bool) -> u64 {
    match (f, derivative) {
        (Activation::Gelu, false) => 30,
        (Activation::Gelu, true) => 40,
        (Activation::Relu, _) => 1,
        (Activation::None, _) => 0,
    }
}

/// A weight as f32 (f16 weights widen exactly).
pub(crate) trait Weight: Copy {
    fn f32(self) -> f32;
}

impl Weight for f32 {
    #[inline]
    fn f32(self) -> f32 {
        self
    }
}

impl Weight for poplar_core::f16 {
    #[inline]
    fn f32(self) -> f32 {
        self.to_f32()
    }
}

/// `DenseForward`'s work for worker `wk`: its outputs of `z` and `y`.
fn forward<W: Weight>(
    f: Activation,
    w: &[W],
    [b, x]: [&[f32]; 2],
    z: &mut [f32],
    y: &mut [f32],
    wk: Worker,
) -> Result<(), VertexError> {
    let r = b.len();
    let n = per(w.len() as u64, r as u64) as usize;
    let m = per(z.len() as u64, r as u64) as usize;
    if w.len() != r * n || x.len() != n * m || z.len() != r * m || y.len() != r * m {
        return Err(VertexError::new(format!(
            "popnn::DenseForward: w {}, b {r}, x {}, z {}, y {} do not make r × n, n × m, r × m",
            w.len(),
            x.len(),
            z.len(),
            y.len()
        )));
    }
    for q in wk.split(r * m) {
        let (j, s) = (q / m, q % m);
        let mut acc = b[j];
        for (i, wi) in w[j * n..(j + 1) * n].iter().enumerate() {
            acc += wi.f32() * x[i * m + s];
        }
        z[q] = acc;
        y[q] = f.apply(acc);
    }
    Ok(())
}

/// `DenseGrad`'s work for worker `wk`: its rows of `dz`, `dw` and `db`.
fn grad(
    f: Activation,
    [dy, z, x]: [&[f32]; 3],
    dz: &mut [f32],
    dw: &mut [f32],
    db: &mut [f32],
    wk: Worker,
) -> Result<(), VertexError> {
    let r = db.len();
    let m = per(z.len() as u64, r as u64) as usize;
    let n = per(dw.len() as u64, r as u64) as usize;
    if dy.len() != r * m
        || dz.len() != r * m
        || z.len() != r * m
        || dw.len() != r * n
        || x.len() != n * m
    {
        return Err(VertexError::new(format!(
            "popnn::DenseGrad: dy {}, z {}, dz {}, dw {}, db {r}, x {} do not make r × m, r × n, n × m",
            dy.len(),
            z.len(),
            dz.len(),
            dw.len(),
            x.len()
        )));
    }
    for j in wk.split(r) {
        let row = j * m..(j + 1) * m;
        let mut acc = db[j];
        for s in row.clone() {
            let g = dy[s] * f.derivative(z[s]);
            dz[s] = g;
            acc += g;
        }
        db[j] = acc;
        for i in 0..n {
            let mut acc = dw[j * n + i];
            for (g, xi) in dz[row.clone()].iter().zip(&x[i * m..(i + 1) * m]) {
                acc += g * xi;
            }
            dw[j * n + i] = acc;
        }
    }
    Ok(())
}

/// The forward codelet of one activation and weight type.
macro_rules! forward_codelet {
    ($fwd:ident, $fwd_name:literal, $act:expr, $w:ty) => {
        poplar_core::codelet! {
            /// A block of rows of a dense layer over a micro-batch (see the module's table).
            pub struct $fwd as $fwd_name, multi_worker {
                w: Input<Vector<$w>>,
                b: Input<Vector<f32>>,
                x: Input<Vector<f32>>,
                z: Output<Vector<f32>>,
                y: Output<Vector<f32>>,
            }
        }

        impl Vertex for $fwd<'_> {
            fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
                forward(
                    $act,
                    &self.w[..],
                    [&self.b[..], &self.x[..]],
                    self.z,
                    self.y,
                    w,
                )
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let r = ctx.elements(Self::b);
                let n = per(ctx.elements(Self::w), r);
                let outs = share_of(ctx.elements(Self::z), ctx.workers);
                Some(cycles::matvec(outs, n) + outs * act_cycles($act, false))
            }
        }
    };
}

/// The gradient codelet of one activation.
macro_rules! grad_codelet {
    ($grad:ident, $grad_name:literal, $act:expr) => {
        poplar_core::codelet! {
            /// A block of rows' `dz`, and their weight and bias gradients added to the
            /// accumulators (see the module's table).
            pub struct $grad as $grad_name, multi_worker {
                dy: Input<Vector<f32>>,
                z: Input<Vector<f32>>,
                x: Input<Vector<f32>>,
                dz: Output<Vector<f32>>,
                dw: InOut<Vector<f32>>,
                db: InOut<Vector<f32>>,
            }
        }

        impl Vertex for $grad<'_> {
            fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
                grad(
                    $act,
                    [&self.dy[..], &self.z[..], &self.x[..]],
                    self.dz,
                    self.dw,
                    self.db,
                    w,
                )
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let r = ctx.elements(Self::db);
                let m = per(ctx.elements(Self::z), r);
                let n = per(ctx.elements(Self::dw), r);
                let rows = share_of(r, ctx.workers);
                let dz = m * (1 + act_cycles($act, true));
                Some(rows * (dz + m.div_ceil(2) + cycles::matvec(n, m) + n))
            }
        }
    };
}

forward_codelet!(
    DenseForwardNone,
    "popnn::DenseForward<none>",
    Activation::None,
    f32
);
forward_codelet!(
    DenseForwardRelu,
    "popnn::DenseForward<relu>",
    Activation::Relu,
    f32
);
forward_codelet!(
    DenseForwardGelu,
    "popnn::DenseForward<gelu>",
    Activation::Gelu,
    f32
);
forward_codelet!(
    DenseForwardNoneF16,
    "popnn::DenseForward<none,half>",
    Activation::None,
    poplar_core::f16
);
forward_codelet!(
    DenseForwardReluF16,
    "popnn::DenseForward<relu,half>",
    Activation::Relu,
    poplar_core::f16
);
forward_codelet!(
    DenseForwardGeluF16,
    "popnn::DenseForward<gelu,half>",
    Activation::Gelu,
    poplar_core::f16
);
grad_codelet!(DenseGradNone, "popnn::DenseGrad<none>", Activation::None);
grad_codelet!(DenseGradRelu, "popnn::DenseGrad<relu>", Activation::Relu);
grad_codelet!(DenseGradGelu, "popnn::DenseGrad<gelu>", Activation::Gelu);

/// `√v` when `v` is a perfect square.
fn exact_sqrt(v: u64) -> Option<u64> {
    let r = (v as f64).sqrt().round() as u64;
    (r * r == v).then_some(r)
}

/// `DensePartial`'s work for worker `wk`: its outputs of `dx`.
fn partial<W: Weight>(w: &[W], dz: &[f32], dx: &mut [f32], wk: Worker) -> Result<(), VertexError> {
    // w is r × n, dz r × m and dx n × m, so w·dz / dx = r².
    let (lw, lz, lx) = (w.len(), dz.len(), dx.len());
    let r = (lw as u64 * lz as u64)
        .checked_div(lx as u64)
        .and_then(exact_sqrt)
        .unwrap_or(0) as usize;
    let (n, m) = (
        per(lw as u64, r as u64) as usize,
        per(lz as u64, r as u64) as usize,
    );
    if r == 0 || lw != r * n || lz != r * m || lx != n * m {
        return Err(VertexError::new(format!(
            "popnn::DensePartial: w {lw}, dz {lz}, dx {lx} do not make r × n, r × m, n × m"
        )));
    }
    for q in wk.split(n * m) {
        let (i, s) = (q / m, q % m);
        let mut acc = 0f32;
        for j in 0..r {
            acc += w[j * n + i].f32() * dz[j * m + s];
        }
        dx[q] = acc;
    }
    Ok(())
}

/// The partial codelet of one weight type.
macro_rules! partial_codelet {
    ($name:ident, $text:literal, $w:ty) => {
        poplar_core::codelet! {
            /// A tile's partial of the input gradient, over its rows (see the module's table).
            pub struct $name as $text, multi_worker {
                w: Input<Vector<$w>>,
                dz: Input<Vector<f32>>,
                dx: Output<Vector<f32>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
                partial(&self.w[..], &self.dz[..], self.dx, w)
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let (lw, lz, lx) = (
                    ctx.elements(Self::w),
                    ctx.elements(Self::dz),
                    ctx.elements(Self::dx),
                );
                let r = (lw * lz).checked_div(lx).and_then(exact_sqrt).unwrap_or(0);
                Some(cycles::matvec(share_of(lx, ctx.workers), r))
            }
        }
    };
}

partial_codelet!(DensePartial, "popnn::DensePartial", f32);
partial_codelet!(
    DensePartialF16,
    "popnn::DensePartial<half>",
    poplar_core::f16
);

poplar_core::codelet! {
    /// `popnn::SumParts`: `out[e] = parts[0][e] + parts[1][e] + …`.
    pub struct SumParts as "popnn::SumParts", multi_worker {
        parts: Input<VectorList<f32>>,
        out: Output<Vector<f32>>,
    }
}

impl Vertex for SumParts<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let n = self.out.len();
        if self.parts.is_empty() {
            return Err(VertexError::new("popnn::SumParts: no parts"));
        }
        for k in 0..self.parts.len() {
            if self.parts.get(k).len() != n {
                return Err(VertexError::new(format!(
                    "popnn::SumParts: part {k} has {} elements, out {n}",
                    self.parts.get(k).len()
                )));
            }
        }
        for e in w.split(n) {
            let mut s = self.parts.get(0)[e];
            for k in 1..self.parts.len() {
                s += self.parts.get(k)[e];
            }
            self.out[e] = s;
        }
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let len = share_of(ctx.elements(Self::out), ctx.workers);
        let parts = u64::from(ctx.sizes.get(Self::parts).copied().unwrap_or(1));
        let add = cycles::binary(BinaryOp::Add, DType::F32, true);
        Some(58 + parts * (add.cycles(len) - add.overhead))
    }
}
