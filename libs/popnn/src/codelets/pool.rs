//! The pooling vertices, over a block of planes `(n, c)` of a `[N, C, *field]` tensor: each
//! list field holds one sub-vector per plane (the plane row-major, field padded to 3-D with
//! leading sizes of 1), all of one vertex's planes of one geometry.
//!
//! | codelet | fields | does | split over the workers |
//! |---|---|---|---|
//! | `popnn::MaxPool<T>` | `input` → `out` (lists) | `out[o]` = the max of `o`'s window | the block's outputs, plane-major |
//! | `popnn::AvgPool<T>` | `input` → `out` | the mean of the window's real (not padding) elements | the outputs |
//! | `popnn::MaxPoolGrad<T>` | `input`, `grad` → `out` | `out[i] = Σ grad[o]` over the outputs `o` whose *first* maximal window element is `i` | the block's input rows ([`PoolGeom::rows`]), plane-major |
//! | `popnn::AvgPoolGrad<T>` | `grad` → `out` | `out[i] = Σ grad[o] / count(o)` over the windows holding `i` | the input rows |
//!
//! `T` is `float` or `half`; every value is computed in f32 (a `half` is widened exactly,
//! sums accumulate in f32 in ascending output order, each result is rounded once to `half`).
//! `geom` (`State<Vector<u32>>`, [`POOL_GEOM_WORDS`] words) holds per field dimension (3) the
//! input size, output size, kernel size, stride and lower padding. A window of output `o` in a
//! dimension covers input positions `o·stride − pad_lower ..+ kernel`, clipped to the input:
//! padding never takes part (max: as `-inf`; average: not counted, ONNX `count_include_pad =
//! 0`). The max is the first (row-major) element not smaller than the others, and a NaN in
//! the window wins (the first NaN), so NaN propagates.
//!
//! **Cycle estimates** (not measured; poplibs' pooling vertices work on channel groups with
//! vector instructions, these are scalar over planes): one worker's share of `o` outputs over
//! `r` planes costs `OVERHEAD + r·ROW_OVERHEAD + o·(OUTPUT + taps)` (`MaxPool`) or
//! `… + o·(OUTPUT + taps + DIVIDE)` (`AvgPool`), one cycle a tap (a load and a max or add);
//! the gradients split the rows of the planes (along the outermost field dimension of more
//! than one element) over the workers; each worker visits the outputs whose windows reach its
//! rows (the max recomputed, or the average's share added, for its rows only), with the cost
//! of [`grad_cycles`].

use codelets::cycles::{OVERHEAD, ROW_OVERHEAD};
use poplar_core::codelet::*;
use poplar_core::fp::canonical_nan;

/// Words of the `geom` state: five per field dimension.
pub const POOL_GEOM_WORDS: usize = 3 * 5;
/// Cycles per output of the window set-up, the result and its store.
pub const OUTPUT: u64 = 4;
/// Cycles of the average's divide.
pub const DIVIDE: u64 = 5;

/// One field dimension of a pooling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolDim {
    pub input: usize,
    pub output: usize,
    pub kernel: usize,
    pub stride: usize,
    pub pad_lower: usize,
}

impl PoolDim {
    /// The input positions of output `o`'s window, clipped to the input.
    #[inline]
    pub fn window(&self, o: usize) -> std::ops::Range<usize> {
        let start = (o * self.stride) as i64 - self.pad_lower as i64;
        let lo = start.max(0) as usize;
        let hi = (start + self.kernel as i64).clamp(0, self.input as i64) as usize;
        lo..hi.max(lo)
    }
}

/// The geometry of a pooling: three field dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolGeom {
    pub dims: [PoolDim; 3],
}

impl PoolGeom {
    /// The `geom` state's words.
    pub fn words(&self) -> Vec<u32> {
        self.dims
            .iter()
            .flat_map(|d| [d.input, d.output, d.kernel, d.stride, d.pad_lower])
            .map(|v| v as u32)
            .collect()
    }

    /// From the words, or the error naming what is wrong.
    pub fn parse(name: &str, w: &[u32]) -> Result<PoolGeom, VertexError> {
        if w.len() != POOL_GEOM_WORDS {
            return Err(VertexError::new(format!(
                "{name}: field geom has {} words, expected {POOL_GEOM_WORDS}",
                w.len()
            )));
        }
        let dim = |i: usize| {
            let v = &w[5 * i..5 * i + 5];
            PoolDim {
                input: v[0] as usize,
                output: v[1] as usize,
                kernel: v[2] as usize,
                stride: v[3] as usize,
                pad_lower: v[4] as usize,
            }
        };
        let g = PoolGeom {
            dims: [dim(0), dim(1), dim(2)],
        };
        let empty = |d: &PoolDim| (0..d.output).any(|o| d.window(o).is_empty());
        if g.dims
            .iter()
            .any(|d| d.kernel == 0 || d.stride == 0 || empty(d))
        {
            return Err(VertexError::new(format!(
                "{name}: geom has a zero kernel or stride, or a window of padding only: {g:?}"
            )));
        }
        Ok(g)
    }

    /// Elements of an input plane.
    pub fn in_len(&self) -> usize {
        self.dims.iter().map(|d| d.input).product()
    }

    /// Elements of an output plane.
    pub fn out_len(&self) -> usize {
        self.dims.iter().map(|d| d.output).product()
    }

    /// The outermost dimension with more than one input element (the last if none): the
    /// gradients split a plane's rows along it between the workers.
    pub fn row_dim(&self) -> usize {
        (0..3).find(|&d| self.dims[d].input > 1).unwrap_or(2)
    }

    /// The rows of a plane along [`row_dim`](Self::row_dim) and the elements of a row (each
    /// row a contiguous run of the plane).
    pub fn rows(&self) -> (usize, usize) {
        let d = self.row_dim();
        let inner = self.dims[d + 1..].iter().map(|d| d.input).product();
        (self.dims[d].input, inner)
    }

    /// Elements of a window (padding included).
    pub fn taps(&self) -> usize {
        self.dims.iter().map(|d| d.kernel).product()
    }

    /// The window of in-plane output `o`: its ranges per dimension.
    #[inline]
    fn windows(&self, o: usize) -> [std::ops::Range<usize>; 3] {
        let [d0, d1, d2] = &self.dims;
        let (o0, o1, o2) = (
            o / (d1.output * d2.output),
            o / d2.output % d1.output,
            o % d2.output,
        );
        [d0.window(o0), d1.window(o1), d2.window(o2)]
    }

    /// Calls `f` with the in-plane index of each input element of output `o`'s window, in
    /// row-major order.
    #[inline]
    fn each(&self, o: usize, mut f: impl FnMut(usize)) {
        let [r0, r1, r2] = self.windows(o);
        let (i1, i2) = (self.dims[1].input, self.dims[2].input);
        for q0 in r0 {
            for q1 in r1.clone() {
                let row = (q0 * i1 + q1) * i2;
                for q2 in r2.clone() {
                    f(row + q2);
                }
            }
        }
    }

    /// The number of real (not padding) elements of output `o`'s window.
    #[inline]
    fn count(&self, o: usize) -> usize {
        self.windows(o).iter().map(|r| r.len()).product()
    }

    /// The max of output `o`'s window and the index of its first maximal element (a NaN
    /// wins: the first NaN).
    #[inline]
    pub fn max_at<T: Elem>(&self, plane: &[T], o: usize) -> (f32, usize) {
        let mut best: Option<(f32, usize)> = None;
        self.each(o, |i| {
            let v = plane[i].f32();
            best = match best {
                None => Some((v, i)),
                Some((b, _)) if v > b || (v.is_nan() && !b.is_nan()) => Some((v, i)),
                keep => keep,
            };
        });
        best.unwrap_or((f32::NAN, 0))
    }

    /// The mean of output `o`'s window's real elements.
    #[inline]
    pub fn avg_at<T: Elem>(&self, plane: &[T], o: usize) -> f32 {
        let mut s = 0f32;
        self.each(o, |i| s += plane[i].f32());
        s / self.count(o) as f32
    }
}

/// A vertex element: widened to f32 and rounded from it.
pub trait Elem: poplar_core::dtype::Element + Copy {
    fn f32(self) -> f32;
    /// `x` rounded to this type; `index` is the element's index in the output.
    fn round(x: f32, index: usize) -> Self;
}

impl Elem for f32 {
    #[inline]
    fn f32(self) -> f32 {
        self
    }
    #[inline]
    fn round(x: f32, _: usize) -> f32 {
        canonical_nan(x)
    }
}

impl Elem for poplar_core::f16 {
    #[inline]
    fn f32(self) -> f32 {
        self.to_f32()
    }
    #[inline]
    fn round(x: f32, index: usize) -> poplar_core::f16 {
        to_f16(x, index)
    }
}

/// Fails unless every sub-vector of each list has its length and the lists one count.
fn check_lists(name: &str, lists: &[(&str, Vec<usize>, usize)]) -> Result<(), VertexError> {
    let planes = lists.first().map_or(0, |l| l.1.len());
    for (field, lens, want) in lists {
        if lens.len() != planes {
            return Err(VertexError::new(format!(
                "{name}: field {field} has {} planes, {} has {planes}",
                lens.len(),
                lists[0].0
            )));
        }
        if let Some((i, len)) = lens.iter().enumerate().find(|(_, &l)| l != *want) {
            return Err(VertexError::new(format!(
                "{name}: field {field}[{i}] has {len} elements, the geometry needs {want}"
            )));
        }
    }
    Ok(())
}

/// The forward pass over a worker's share: `max` or the average of each window.
pub fn pool_share<T: Elem>(
    g: &PoolGeom,
    max: bool,
    input: &[&[T]],
    out: &mut ListMut<'_, T>,
    w: Worker,
) {
    let per = g.out_len();
    for (p, r) in w.split_planes(input.len(), per) {
        let (plane, o_plane) = (input[p], out.get_mut(p));
        for o in r {
            let v = if max {
                g.max_at(plane, o).0
            } else {
                g.avg_at(plane, o)
            };
            o_plane[o] = T::round(v, p * per + o);
        }
    }
}

/// The input gradient of rows `rows` (of [`PoolGeom::rows`]) of one plane: `grad`'s outputs
/// spread to the first maximal elements of `input` (`Some`) or evenly over their windows'
/// real elements (`None`), only those in the rows. Every element sums its contributions in
/// ascending output order, so the bits do not depend on how the rows are split. `first` is
/// the plane's first element in the vertex's output (for the rounding).
pub fn grad_rows<T: Elem>(
    g: &PoolGeom,
    input: Option<&[T]>,
    grad: &[T],
    rows: std::ops::Range<usize>,
    acc: &mut Vec<f32>,
    out: &mut [T],
    first: usize,
) {
    let rd = g.row_dim();
    let (_, inner) = g.rows();
    let (lo, hi) = (rows.start * inner, rows.end * inner);
    acc.clear();
    acc.resize(hi - lo, 0.0);
    let d = &g.dims[rd];
    // The output rows whose windows reach `rows`.
    let od_lo = (rows.start + d.pad_lower)
        .checked_sub(d.kernel)
        .map_or(0, |v| v / d.stride + 1);
    let od_hi = (rows.end + d.pad_lower).div_ceil(d.stride).min(d.output);
    let per_row: usize = g.dims[rd + 1..].iter().map(|d| d.output).product();
    let outer: usize = g.dims[..rd].iter().map(|d| d.output).product();
    for a in 0..outer {
        for od in od_lo..od_hi {
            let base = (a * d.output + od) * per_row;
            for (o, dv) in (base..).zip(&grad[base..base + per_row]) {
                let dv = dv.f32();
                match input {
                    Some(x) => {
                        let i = g.max_at(x, o).1;
                        if (lo..hi).contains(&i) {
                            acc[i - lo] += dv;
                        }
                    }
                    None => {
                        let share = dv / g.count(o) as f32;
                        g.each(o, |i| {
                            if (lo..hi).contains(&i) {
                                acc[i - lo] += share;
                            }
                        });
                    }
                }
            }
        }
    }
    for (i, (o, a)) in out[lo..hi].iter_mut().zip(acc.iter()).enumerate() {
        *o = T::round(*a, first + lo + i);
    }
}

/// Worker cycles of a forward vertex of `planes` planes of `per` outputs.
pub fn forward_cycles(planes: u64, per: u64, taps: u64, avg: bool, workers: u32) -> u64 {
    let outputs = planes * per;
    let share = outputs.div_ceil(u64::from(workers.max(1)));
    // A share may straddle one more plane than it fills.
    let touched = share.div_ceil(per.max(1)) + u64::from(per > 1 && planes > 1);
    let per_out = OUTPUT + taps + if avg { DIVIDE } else { 0 };
    OVERHEAD + touched.min(planes) * ROW_OVERHEAD + share * per_out
}

/// Worker cycles of a gradient vertex of `planes` planes of geometry `g`: the busiest
/// worker's `u = ⌈planes·rows / workers⌉` rows over the `r` planes they touch reach about
/// `v = ⌈u / stride⌉ + r·⌈(kernel − 1) / stride⌉` output rows (of the row dimension, at most
/// `r` times all of them), each of `out_row` outputs: `OVERHEAD + r·ROW_OVERHEAD +
/// v·out_row·(OUTPUT + taps) + 2·u·inner` (the accumulator zeroed and written).
pub fn grad_cycles(g: &PoolGeom, planes: u64, workers: u32) -> u64 {
    let d = g.dims[g.row_dim()];
    let (rows, inner) = g.rows();
    let (rows, inner) = (rows as u64, inner as u64);
    let u = (planes * rows).div_ceil(u64::from(workers.max(1)));
    let r = (u.div_ceil(rows.max(1)) + u64::from(rows > 1 && planes > 1)).min(planes);
    let (k, s, out_rows) = (d.kernel as u64, d.stride as u64, d.output as u64);
    let v = (u.div_ceil(s) + r * (k - 1).div_ceil(s)).min(r * out_rows);
    let out_row = g.out_len() as u64 / out_rows.max(1);
    OVERHEAD + r * ROW_OVERHEAD + v * out_row * (OUTPUT + g.taps() as u64) + 2 * u * inner
}

/// A 1-D geometry of `input` and `per` outputs with a kernel and stride of `input / per`:
/// the codelets' own estimates see only the fields' sizes, not `geom`'s values.
fn guessed_geom(input: u64, per: u64) -> PoolGeom {
    let k = input.checked_div(per).unwrap_or(1).max(1) as usize;
    let one = PoolDim {
        input: 1,
        output: 1,
        kernel: 1,
        stride: 1,
        pad_lower: 0,
    };
    let d = PoolDim {
        input: input.max(1) as usize,
        output: per.max(1) as usize,
        kernel: k,
        stride: k,
        pad_lower: 0,
    };
    PoolGeom {
        dims: [one, one, d],
    }
}

/// `(planes, elements of one sub-vector)` of list field `f`. The codelets' own estimates see
/// only the fields' sizes, not `geom`'s values, so they take the taps as `input / output`
/// elements ([`guessed_geom`]); [`crate::ops::pool`] sets each vertex's estimate from the
/// real geometry.
fn list_size(ctx: &CycleCtx<'_>, f: usize) -> (u64, u64) {
    let planes = u64::from(ctx.sizes.get(f).copied().unwrap_or(0));
    (planes, ctx.elements(f).checked_div(planes).unwrap_or(0))
}

macro_rules! pool_codelets {
    ($($name:ident as $cname:literal: $t:ty, $max:expr;)*) => {$(
        poplar_core::codelet! {
            /// A forward pooling of a block of planes (see the module's table).
            pub struct $name as $cname, multi_worker {
                input: Input<VectorList<$t>>,
                out: Output<VectorList<$t>>,
                geom: State<Vector<u32>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
                let g = PoolGeom::parse($cname, &self.geom)?;
                let input: Vec<&[$t]> = self.input.iter().collect();
                let outs = (0..self.out.len()).map(|i| self.out.get(i).len()).collect();
                check_lists(
                    $cname,
                    &[
                        ("input", input.iter().map(|v| v.len()).collect(), g.in_len()),
                        ("out", outs, g.out_len()),
                    ],
                )?;
                pool_share(&g, $max, &input, &mut self.out, w);
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let (planes, per) = list_size(ctx, Self::out);
                let (_, input) = list_size(ctx, Self::input);
                // The taps are not in the fields' sizes: a window of input/output elements
                // each (at least 1), a lower bound of the kernel for strided pools.
                let taps = input.checked_div(per).unwrap_or(1).max(1);
                Some(forward_cycles(planes, per, taps, !$max, ctx.workers))
            }
        }
    )*};
}

pool_codelets! {
    MaxPoolF32 as "popnn::MaxPool<float>": f32, true;
    MaxPoolF16 as "popnn::MaxPool<half>": poplar_core::f16, true;
    AvgPoolF32 as "popnn::AvgPool<float>": f32, false;
    AvgPoolF16 as "popnn::AvgPool<half>": poplar_core::f16, false;
}

macro_rules! max_grad_codelets {
    ($($name:ident as $cname:literal: $t:ty;)*) => {$(
        poplar_core::codelet! {
            /// The input gradient of a max pooling over a block of planes (module table).
            pub struct $name as $cname, multi_worker {
                input: Input<VectorList<$t>>,
                grad: Input<VectorList<$t>>,
                out: Output<VectorList<$t>>,
                geom: State<Vector<u32>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
                let g = PoolGeom::parse($cname, &self.geom)?;
                let lens = |l: &ListRef<'_, $t>| l.iter().map(|v| v.len()).collect();
                let outs = (0..self.out.len()).map(|i| self.out.get(i).len()).collect();
                check_lists(
                    $cname,
                    &[
                        ("input", lens(&self.input), g.in_len()),
                        ("grad", lens(&self.grad), g.out_len()),
                        ("out", outs, g.in_len()),
                    ],
                )?;
                let (rows, mut acc) = (g.rows().0, Vec::new());
                for (p, r) in w.split_planes(self.out.len(), rows) {
                    let (x, d) = (self.input.get(p), self.grad.get(p));
                    let first = p * g.in_len();
                    grad_rows(&g, Some(x), d, r, &mut acc, self.out.get_mut(p), first);
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let (planes, input) = list_size(ctx, Self::out);
                let (_, per) = list_size(ctx, Self::grad);
                Some(grad_cycles(&guessed_geom(input, per), planes, ctx.workers))
            }
        }
    )*};
}

max_grad_codelets! {
    MaxPoolGradF32 as "popnn::MaxPoolGrad<float>": f32;
    MaxPoolGradF16 as "popnn::MaxPoolGrad<half>": poplar_core::f16;
}

macro_rules! avg_grad_codelets {
    ($($name:ident as $cname:literal: $t:ty;)*) => {$(
        poplar_core::codelet! {
            /// The input gradient of an average pooling over a block of planes (module table).
            pub struct $name as $cname, multi_worker {
                grad: Input<VectorList<$t>>,
                out: Output<VectorList<$t>>,
                geom: State<Vector<u32>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
                let g = PoolGeom::parse($cname, &self.geom)?;
                let grads = self.grad.iter().map(|v| v.len()).collect();
                let outs = (0..self.out.len()).map(|i| self.out.get(i).len()).collect();
                check_lists(
                    $cname,
                    &[("grad", grads, g.out_len()), ("out", outs, g.in_len())],
                )?;
                let (rows, mut acc) = (g.rows().0, Vec::new());
                for (p, r) in w.split_planes(self.out.len(), rows) {
                    let (d, first) = (self.grad.get(p), p * g.in_len());
                    grad_rows::<$t>(&g, None, d, r, &mut acc, self.out.get_mut(p), first);
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let (planes, input) = list_size(ctx, Self::out);
                let (_, per) = list_size(ctx, Self::grad);
                Some(grad_cycles(&guessed_geom(input, per), planes, ctx.workers))
            }
        }
    )*};
}

avg_grad_codelets! {
    AvgPoolGradF32 as "popnn::AvgPoolGrad<float>": f32;
    AvgPoolGradF16 as "popnn::AvgPoolGrad<half>": poplar_core::f16;
}
