//! The convolution codelets and their cycle estimates.
//!
//! `ConvPartial<float>` and `ConvPartial<half>` (multi-worker) compute one block of the
//! canonical convolution ([`PassShape`](super::PassShape)) on a tile:
//! - `in`: one sub-vector per input channel of the block, each the input window
//!   `[nb, w0, w1, w2]` (row-major) the block's outputs read;
//! - `weights`: one sub-vector per output channel of the block, each `[cib, k0, k1, k2]`;
//! - `out` (f32): one sub-vector per output plane `(n, co)` of the block (`n` outer), each
//!   `[ob0, ob1, ob2]`;
//! - `geom` (`State<Vector<u32>>`, [`GEOM_WORDS`] words): `nb`, then per field dimension the
//!   window size, kernel size, stride, kernel dilation, input dilation, first output index,
//!   block output count and the window's base `pad_lower + window_start · input_dilation`
//!   (as `i32` bits).
//!
//! Output `(n, co, o)` is `Σ_ci Σ_k in[ci][n, q(o, k) / input_dilation] · weights[co][ci, k]`
//! with `q = (o_start + o)·stride + k·dilation − base`, over the `k` whose `q` is a multiple
//! of the input dilation inside the window, accumulated in f32 from 0 in order of `ci`, then
//! `k0, k1, k2`; f16 operands are widened (their products are exact in f32). Worker `w` takes
//! the `w`-th even share of the block's outputs in plane-major order; every output is the same
//! sum whatever the split, so the bits do not depend on it, nor on the ISA level (NaN
//! canonical).
//!
//! # Cycle model
//! The multiply runs on the AMP as the matmul's does ([`crate::codelets`], poplibs'
//! `ConvPartial1x1` estimator's terms): [`block_cycles`] is [`mac_cycles`] of the batch's
//! output positions as the rows and the block's output channels as the columns: one AMP
//! pass per kernel tap, group of input channels and group of 16 output channels, or the
//! vector path where that is cheaper. A 1×1
//! convolution is then costed exactly as the matmul `out[co, pos] = w[co, ci] · in[ci, pos]`.
//! poplibs' `ConvPartialnx1` vertex has its own, larger per-tap costs, which this model does
//! not copy; small `cib` (the first layer of an image network: 3 channels) wastes most of
//! each pass, as on the chip without poplibs' channel expansion.

use poplar_core::codelet::*;
use poplar_core::fp::canonical_nan;

use crate::codelets::{mac_cycles, macs_per_cycle};

/// Words of the `geom` state: `nb` and eight per field dimension.
pub const GEOM_WORDS: usize = 1 + 3 * 8;

/// Worker cycles of a `ConvPartial` vertex: `planes` planes (batch × output channels, `cob`
/// of them a batch element) of `positions` outputs, each summing `taps` AMP passes over `cib`
/// input channels, shared by `workers` contexts: [`mac_cycles`] with the batch's positions as
/// the rows and `cob` as the output channels.
pub fn block_cycles(
    planes: u64,
    cob: u64,
    positions: u64,
    taps: u64,
    cib: u64,
    macs: u64,
    workers: u32,
) -> u64 {
    let rows = planes / cob.max(1) * positions;
    mac_cycles(rows, taps, cib, cob, macs, workers)
}

/// One field dimension of a block, as `geom` holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DimGeom {
    pub window: usize,
    pub kernel: usize,
    pub stride: usize,
    pub dilation: usize,
    pub input_dilation: usize,
    pub out_start: usize,
    pub outs: usize,
    pub base: i64,
}

impl DimGeom {
    /// The window position of output `o` (block-local) and tap `k`, if it reads an element.
    #[inline(always)]
    fn at(&self, o: usize, k: usize) -> Option<usize> {
        let q = ((self.out_start + o) * self.stride + k * self.dilation) as i64 - self.base;
        let id = self.input_dilation as i64;
        (q >= 0 && q % id == 0 && q / id < self.window as i64).then(|| (q / id) as usize)
    }

    /// The block-local outputs `lo..hi` within `range` that tap `k` reaches with an input
    /// dilation of 1 (a contiguous run), and the window position of output 0.
    #[inline(always)]
    fn run(&self, k: usize, range: std::ops::Range<usize>) -> (usize, usize, i64) {
        let s = self.stride as i64;
        // q(o) = o·s + c, with c the position of block output 0.
        let c = (self.out_start * self.stride + k * self.dilation) as i64 - self.base;
        let lo = if c >= 0 {
            0
        } else {
            (-c as u64).div_ceil(s as u64) as i64
        };
        let hi = if (self.window as i64) > c {
            ((self.window as i64 - c) as u64).div_ceil(s as u64) as i64
        } else {
            0
        };
        let lo = (lo as usize).max(range.start);
        let hi = (hi.max(0) as usize).min(range.end);
        (lo, hi.max(lo), c)
    }
}

/// The block geometry: `nb` and the three dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geom {
    pub nb: usize,
    pub dims: [DimGeom; 3],
}

impl Geom {
    /// The `geom` state's words.
    pub fn words(&self) -> Vec<u32> {
        let mut w = vec![self.nb as u32];
        for d in &self.dims {
            w.extend([
                d.window as u32,
                d.kernel as u32,
                d.stride as u32,
                d.dilation as u32,
                d.input_dilation as u32,
                d.out_start as u32,
                d.outs as u32,
                d.base as i32 as u32,
            ]);
        }
        w
    }

    /// From the words, or the error naming what is wrong.
    pub fn parse(name: &str, w: &[u32]) -> Result<Geom, VertexError> {
        if w.len() != GEOM_WORDS {
            return Err(VertexError::new(format!(
                "{name}: field geom has {} words, expected {GEOM_WORDS}",
                w.len()
            )));
        }
        let dim = |i: usize| {
            let v = &w[1 + 8 * i..9 + 8 * i];
            DimGeom {
                window: v[0] as usize,
                kernel: v[1] as usize,
                stride: v[2] as usize,
                dilation: v[3] as usize,
                input_dilation: v[4] as usize,
                out_start: v[5] as usize,
                outs: v[6] as usize,
                base: i64::from(v[7] as i32),
            }
        };
        let g = Geom {
            nb: w[0] as usize,
            dims: [dim(0), dim(1), dim(2)],
        };
        if g.dims.iter().any(|d| {
            d.window == 0
                || d.kernel == 0
                || d.stride == 0
                || d.dilation == 0
                || d.input_dilation == 0
        }) {
            return Err(VertexError::new(format!(
                "{name}: geom has a zero window, kernel, stride or dilation: {g:?}"
            )));
        }
        Ok(g)
    }

    fn window_len(&self) -> usize {
        self.dims.iter().map(|d| d.window).product()
    }

    fn positions(&self) -> usize {
        self.dims.iter().map(|d| d.outs).product()
    }

    fn taps(&self) -> usize {
        self.dims.iter().map(|d| d.kernel).product()
    }

    /// True when output `o` of the block reads window element `o` and nothing else: a 1×1
    /// kernel with unit stride and input dilation whose window is the block's outputs.
    pub fn is_pointwise(&self) -> bool {
        self.dims.iter().all(|d| {
            d.kernel == 1
                && d.stride == 1
                && d.input_dilation == 1
                && d.window == d.outs
                && d.out_start as i64 == d.base
        })
    }
}

/// The fields' sizes against the geometry, or the error naming the field.
fn check_fields(
    name: &str,
    g: &Geom,
    ins: &[usize],
    weights: &[usize],
    outs: &[usize],
) -> Result<(), VertexError> {
    let (cib, cob) = (ins.len(), weights.len());
    let bad = |field: &str, i: usize, len: usize, want: usize| {
        VertexError::new(format!(
            "{name}: field {field}[{i}] has {len} elements, the geometry needs {want}"
        ))
    };
    if outs.len() != g.nb * cob {
        return Err(VertexError::new(format!(
            "{name}: field out has {} planes, expected nb {} × {cob} output channels",
            outs.len(),
            g.nb
        )));
    }
    for (field, lens, want) in [
        ("in", ins, g.nb * g.window_len()),
        ("weights", weights, cib * g.taps()),
        ("out", outs, g.positions()),
    ] {
        if let Some((i, &len)) = lens.iter().enumerate().find(|(_, &l)| l != want) {
            return Err(bad(field, i, len, want));
        }
    }
    Ok(())
}

/// Adds `w · row[q(o)]` to `acc[o − first]` for the block-local outputs `range` of the last
/// dimension that tap `k2` reaches.
#[inline(always)]
fn tap_row(
    acc: &mut [f32],
    first: usize,
    row: &[f32],
    w: f32,
    d: &DimGeom,
    k2: usize,
    range: std::ops::Range<usize>,
) {
    if d.input_dilation == 1 {
        let (lo, hi, c) = d.run(k2, range);
        if lo >= hi {
            return;
        }
        let start = (lo as i64 * d.stride as i64 + c) as usize;
        let acc = &mut acc[lo - first..hi - first];
        if d.stride == 1 {
            let len = acc.len();
            for (a, &x) in acc.iter_mut().zip(&row[start..start + len]) {
                *a += w * x;
            }
        } else {
            for (a, &x) in acc.iter_mut().zip(row[start..].iter().step_by(d.stride)) {
                *a += w * x;
            }
        }
    } else {
        for o in range {
            if let Some(q) = d.at(o, k2) {
                acc[o - first] += w * row[q];
            }
        }
    }
}

/// Outputs `range` (indices into the plane) of output plane `(n, co)`, `plane` the whole
/// plane: `ins` are the block's input windows, `weights` output channel `co`'s `[cib, taps]`,
/// all widened to f32.
pub fn conv_plane(
    g: &Geom,
    ins: &[&[f32]],
    weights: &[f32],
    n: usize,
    plane: &mut [f32],
    range: std::ops::Range<usize>,
) {
    if g.is_pointwise() {
        return pointwise_plane(g, ins, weights, n, plane, range);
    }
    let [d0, d1, d2] = &g.dims;
    let taps = g.taps();
    let (win_n, w12) = (g.window_len(), d1.window * d2.window);
    let mut segs = Vec::with_capacity(taps);
    let mut pos = range.start;
    while pos < range.end {
        // One line of the last dimension at a time: outputs `c0..c1` of line (o0, o1).
        let (o0, o1, c0) = (
            pos / (d1.outs * d2.outs),
            pos / d2.outs % d1.outs,
            pos % d2.outs,
        );
        let c1 = d2.outs.min(c0 + (range.end - pos));
        let line = &mut plane[(o0 * d1.outs + o1) * d2.outs..][..d2.outs];
        let acc = &mut line[c0..c1];
        acc.fill(0.0);
        if d2.input_dilation == 1 {
            line_segments(g, o0, o1, c0..c1, &mut segs);
            for (input, wts) in ins.iter().zip(weights.chunks_exact(taps)) {
                let input = &input[n * win_n..(n + 1) * win_n];
                for s in &segs {
                    let a = &mut acc[s.lo - c0..s.hi - c0];
                    let w = wts[s.tap];
                    if d2.stride == 1 {
                        let len = a.len();
                        for (a, &x) in a.iter_mut().zip(&input[s.start..s.start + len]) {
                            *a += w * x;
                        }
                    } else {
                        let xs = input[s.start..].iter().step_by(d2.stride);
                        for (a, &x) in a.iter_mut().zip(xs) {
                            *a += w * x;
                        }
                    }
                }
            }
        } else {
            for (ci, input) in ins.iter().enumerate() {
                let input = &input[n * win_n..(n + 1) * win_n];
                let wts = &weights[ci * taps..(ci + 1) * taps];
                for k0 in 0..d0.kernel {
                    let Some(q0) = d0.at(o0, k0) else { continue };
                    for k1 in 0..d1.kernel {
                        let Some(q1) = d1.at(o1, k1) else { continue };
                        let row = &input[q0 * w12 + q1 * d2.window..][..d2.window];
                        for k2 in 0..d2.kernel {
                            let w = wts[(k0 * d1.kernel + k1) * d2.kernel + k2];
                            tap_row(acc, c0, row, w, d2, k2, c0..c1);
                        }
                    }
                }
            }
        }
        for s in acc.iter_mut() {
            *s = canonical_nan(*s);
        }
        pos += c1 - c0;
    }
}

/// One tap's contribution to a line: outputs `lo..hi` of the line read the window from
/// `start` on (every `stride`-th element), times weight `tap` of the channel.
struct Segment {
    start: usize,
    lo: usize,
    hi: usize,
    tap: usize,
}

/// The segments of line `(o0, o1)`'s outputs `cols` (input dilation 1 in the last
/// dimension), in order of the taps `k0, k1, k2`: the same for every input channel.
fn line_segments(
    g: &Geom,
    o0: usize,
    o1: usize,
    cols: std::ops::Range<usize>,
    segs: &mut Vec<Segment>,
) {
    let [d0, d1, d2] = &g.dims;
    let w12 = d1.window * d2.window;
    segs.clear();
    for k0 in 0..d0.kernel {
        let Some(q0) = d0.at(o0, k0) else { continue };
        for k1 in 0..d1.kernel {
            let Some(q1) = d1.at(o1, k1) else { continue };
            let row = q0 * w12 + q1 * d2.window;
            for k2 in 0..d2.kernel {
                let (lo, hi, c) = d2.run(k2, cols.clone());
                if lo < hi {
                    segs.push(Segment {
                        start: row + (lo as i64 * d2.stride as i64 + c) as usize,
                        lo,
                        hi,
                        tap: (k0 * d1.kernel + k1) * d2.kernel + k2,
                    });
                }
            }
        }
    }
}

/// [`conv_plane`] of a pointwise block ([`Geom::is_pointwise`]): output `o` reads window
/// element `o`, so a share of the plane is one run per input channel, summed in the same
/// order of channels.
fn pointwise_plane(
    g: &Geom,
    ins: &[&[f32]],
    weights: &[f32],
    n: usize,
    plane: &mut [f32],
    range: std::ops::Range<usize>,
) {
    let win_n = g.window_len();
    let acc = &mut plane[range.clone()];
    acc.fill(0.0);
    for (input, &w) in ins.iter().zip(weights) {
        let x = &input[n * win_n + range.start..n * win_n + range.end];
        for (a, &v) in acc.iter_mut().zip(x) {
            *a += w * v;
        }
    }
    for s in acc.iter_mut() {
        *s = canonical_nan(*s);
    }
}

poplar_core::isa_dispatch! {
    /// [`conv_plane`] at the active instruction-set level.
    pub fn conv_plane_at_level(
        g: &Geom,
        ins: &[&[f32]],
        weights: &[f32],
        n: usize,
        plane: &mut [f32],
        range: std::ops::Range<usize>,
    ) {
        conv_plane(g, ins, weights, n, plane, range)
    }
}

/// The vertex's operands as f32 sub-vectors: borrowed as they are (f32), or widened (f16).
trait Widen: Copy {
    /// Calls `f` with the input and weights sub-vectors as f32. `first` is true for the
    /// vertex's first worker.
    fn with_f32<'a, R>(
        ins: impl Iterator<Item = &'a [Self]>,
        wts: impl Iterator<Item = &'a [Self]>,
        first: bool,
        f: impl FnOnce(&[&[f32]], &[&[f32]]) -> R,
    ) -> R
    where
        Self: 'a;
}

impl Widen for f32 {
    fn with_f32<'a, R>(
        ins: impl Iterator<Item = &'a [f32]>,
        wts: impl Iterator<Item = &'a [f32]>,
        _first: bool,
        f: impl FnOnce(&[&[f32]], &[&[f32]]) -> R,
    ) -> R {
        f(&ins.collect::<Vec<_>>(), &wts.collect::<Vec<_>>())
    }
}

/// The widened operands of the f16 vertex the thread runs: its first sub-vectors' addresses
/// and lengths (the key), then the input and weights sub-vectors in f32.
type Widened = ((usize, usize, usize, usize), Vec<Vec<f32>>, Vec<Vec<f32>>);

std::thread_local! {
    static WIDENED: std::cell::RefCell<Widened> = const {
        std::cell::RefCell::new(((0, 0, 0, 0), Vec::new(), Vec::new()))
    };
}

/// Widens `from` into `to`, reusing its allocations.
fn widen_into<'a>(from: impl Iterator<Item = &'a [poplar_core::f16]>, to: &mut Vec<Vec<f32>>) {
    let mut n = 0;
    for v in from {
        if to.len() == n {
            to.push(Vec::new());
        }
        to[n].clear();
        to[n].extend(v.iter().map(|x| x.to_f32()));
        n += 1;
    }
    to.truncate(n);
}

/// f16 operands are widened once per vertex, not once per worker: the engine runs a
/// multi-worker vertex's workers one after the other on one thread (`engine::exec`), so the
/// first worker widens into a per-thread buffer and the others read it. The buffer is keyed
/// by the operands' addresses and lengths as well, and widened again on a mismatch.
impl Widen for poplar_core::f16 {
    fn with_f32<'a, R>(
        ins: impl Iterator<Item = &'a [poplar_core::f16]>,
        wts: impl Iterator<Item = &'a [poplar_core::f16]>,
        first: bool,
        f: impl FnOnce(&[&[f32]], &[&[f32]]) -> R,
    ) -> R {
        let (ins, wts): (Vec<_>, Vec<_>) = (ins.collect(), wts.collect());
        let key = |v: &[&[poplar_core::f16]]| {
            v.first()
                .map_or((0, 0), |s| (s.as_ptr() as usize, v.len() * s.len()))
        };
        let (ki, kw) = (key(&ins), key(&wts));
        WIDENED.with(|cell| {
            let mut cache = cell.borrow_mut();
            let cache = &mut *cache;
            let k = (ki.0, ki.1, kw.0, kw.1);
            if first || cache.0 != k {
                widen_into(ins.iter().copied(), &mut cache.1);
                widen_into(wts.iter().copied(), &mut cache.2);
                cache.0 = k;
            }
            let i: Vec<&[f32]> = cache.1.iter().map(|v| &v[..]).collect();
            let w: Vec<&[f32]> = cache.2.iter().map(|v| &v[..]).collect();
            f(&i, &w)
        })
    }
}

/// Worker cycles of a vertex from its fields' sizes (module notes).
fn vertex_cycles(ctx: &CycleCtx<'_>, fields: [usize; 3], macs: u64) -> Option<u64> {
    let [ins, weights, out] = fields;
    let count = |f: usize| u64::from(ctx.sizes.get(f).copied().unwrap_or(0));
    let (cib, cob, planes) = (count(ins), count(weights), count(out));
    if cib == 0 || cob == 0 || planes == 0 {
        return None;
    }
    let taps = ctx.elements(weights) / (cob * cib);
    let positions = ctx.elements(out) / planes;
    Some(block_cycles(
        planes,
        cob,
        positions,
        taps,
        cib,
        macs,
        ctx.workers,
    ))
}

macro_rules! conv_partial_codelets {
    ($($(#[$doc:meta])* $name:ident as $cname:literal: $t:ty;)*) => {$(
        poplar_core::codelet! {
            $(#[$doc])*
            pub struct $name as $cname, multi_worker {
                input: Input<VectorList<$t>>,
                weights: Input<VectorList<$t>>,
                out: Output<VectorList<f32>>,
                geom: State<Vector<u32>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
                let g = Geom::parse($cname, &self.geom)?;
                let out = &mut self.out;
                <$t>::with_f32(self.input.iter(), self.weights.iter(), w.id == 0, |ins, wts| {
                    let lens = |v: &[&[f32]]| v.iter().map(|x| x.len()).collect::<Vec<_>>();
                    let out_lens: Vec<usize> = (0..out.len()).map(|i| out.get(i).len()).collect();
                    check_fields($cname, &g, &lens(ins), &lens(wts), &out_lens)?;
                    let (cob, positions) = (wts.len(), g.positions());
                    for (p, r) in w.split_planes(out.len(), positions) {
                        let (n, co) = (p / cob, p % cob);
                        conv_plane_at_level(&g, ins, wts[co], n, out.get_mut(p), r);
                    }
                    Ok(())
                })
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let macs = macs_per_cycle(<$t as poplar_core::dtype::Element>::DTYPE);
                vertex_cycles(ctx, [Self::input, Self::weights, Self::out], macs)
            }
        }
    )*};
}

conv_partial_codelets! {
    /// `ConvPartial<float>`: one block of a convolution (module notes).
    ConvPartialF32 as "ConvPartial<float>": f32;
    /// `ConvPartial<half>`: one block of a convolution of f16 operands, f32 partials.
    ConvPartialF16 as "ConvPartial<half>": poplar_core::f16;
}

impl Geom {
    /// The geometry of the block of `shape` with batch size `nb` and outputs `outs` per
    /// dimension, its windows as [`PassShape::window`] gives them.
    ///
    /// [`PassShape::window`]: super::PassShape::window
    pub fn for_block(
        shape: &super::PassShape,
        nb: usize,
        outs: [std::ops::Range<usize>; 3],
    ) -> Geom {
        let dim = |d: usize| {
            let w = shape.window(d, outs[d].clone());
            DimGeom {
                window: w.len(),
                kernel: shape.kernel[d],
                stride: shape.stride[d],
                dilation: shape.dilation[d],
                input_dilation: shape.input_dilation[d],
                out_start: outs[d].start,
                outs: outs[d].len(),
                base: shape.pad_lower[d] + (w.start * shape.input_dilation[d]) as i64,
            }
        };
        Geom {
            nb,
            dims: [dim(0), dim(1), dim(2)],
        }
    }
}
