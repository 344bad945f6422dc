//! The matmul codelets and their cycle estimates.
//!
//! - `MatMulBlock<float>`: `a` (`mb × kb`, row-major), `b` (`kb × nb`, row-major) → `out`
//!   (`mb × nb`, row-major), `out[r, c] = Σ_kk a[r, kk] · b[kk, c]` accumulated in f32 in
//!   order of `kk`. The block sizes follow from the three lengths (`kb² = |a|·|b| / |out|`).
//! - `MatMulBlock<half>`: the same for f16 `a` and `b`, with an f32 `out` (f32 partials; the
//!   product of two f16 values is exact in f32).
//! - `MatMulBlockAcc<float>` / `MatMulBlockAcc<half>`: `out += a · b` (`out` in-out), each
//!   output continuing its sum in order of `kk`: a plan's serial steps after the first, whose
//!   chunks so give the bits of one whole product.
//! - `SumBlocks<float>`: `partials` (`p` blocks of `len`, concatenated) → `out` (`len`),
//!   `out[i] = Σ_j partials[j·len + i]` in order of `j`: the reduction over the k split.
//!
//! All are multi-worker (`codelet! { .., multi_worker }`), as poplibs' `ConvPartial*`
//! and reduction vertices are supervisor vertices: worker `w` of the tile's six contexts takes
//! the `w`-th even share ([`Worker::split`]) of the block's outputs in row-major order (of
//! `len` for `SumBlocks`). Every output is computed by the same operations in the same order
//! whatever the split, so the results do not depend on it.
//!
//! # Cycle model
//! Estimates are worker-context cycles, and a vertex reports its busiest worker's share; the
//! cycle model runs a multi-worker vertex on all six contexts, which issue in turn, and adds
//! the supervisor's cycles: a tile takes `6 × busiest share + SUPERVISOR_CYCLES` (poplibs'
//! estimators have the same shape, `supervisor + numWorkerContexts × maxWorkerCycles`). The
//! planner costs its vertices with the model's own scheduling function
//! (`poplar_exe::profile::model::schedule_vertices`).
//!
//! The multiply runs on the tile's accumulating matrix product (AMP) unit as poplibs'
//! `ConvPartial1x1` vertex does (its estimator, `getConvPartial1x1SupervisorCycleEstimate`
//! in `lib/poplin/PerformanceEstimation.hpp`, gives the terms): the block's rows are shared
//! between the contexts, and each context streams its rows through one AMP pass per group of
//! input channels and of [`AMP_OUT_CHANS`] output channels. [`amp_cycles`]:
//! `AMP_FIXED + ⌈kb / in⌉ · ⌈nb / 16⌉ · (AMP_PASS + row · ⌈mb / 6⌉)`, in the cheaper
//! orientation. On one tile, `[N,16]·[16,16]` in f16 is `6·(7 + 36 + 4·⌈N/6⌉) + 51 ≈ 4·N +
//! 309` tile cycles, where the chip was measured at `4·N + 331` (tessellate-ipu's "IPU Peak
//! Flops", a correlation row of `tools/cycle-validation`).
//!
//! | constant | value | source |
//! |---|---|---|
//! | [`MACS_PER_CYCLE_F32`] | 16 | published GC200 FP32 peak, 62.5 TFLOP/s = 1,472 tiles × 1.33 GHz × 16 MAC × 2: one AMP instruction per worker cycle, so the tile reaches it only with all six contexts busy |
//! | [`MACS_PER_CYCLE_F16`] | 64 | published GC200 FP16.16 peak, 250 TFLOP/s (64 MAC/tile/cycle); the hardware overview's "up to 64 multiply-accumulate operations per cycle" (`shared/seeds/ipu-hardware-overview.txt`). This vertex keeps f32 partials (FP16.32), for which GC200 publishes no figure; poplibs plans it with a separate conv-unit count (`getFp16InFp32OutConvUnitsPerTile`), so 64 is an upper bound |
//! | [`Amp`] `half` | 16 input channels, 4 cycles a row | poplibs' `ConvPartial1x1` half inner loop (`coreCycles = 4`), 16 × 16 MACs a row: 64 a worker cycle |
//! | [`Amp`] `float` | 8 input channels, 8 cycles a row | its float inner loop (`coreCycles = 8`): 16 MACs a worker cycle |
//! | [`AMP_PASS_CYCLES`] | 36 | poplibs' inner-loop entry (26 worker cycles) and its supervisor's per-pass cycles and weight loads (58 tile cycles) |
//! | [`AMP_FIXED_CYCLES`] | 7 | poplibs' supervisor non-loop cycles (92 tile cycles) less the model's 51 |
//!
//! Small operands waste passes: fewer than 16 (f16) or 8 (f32) input channels, or fewer than
//! 16 output channels, fill only part of a pass, and short rows pay the pass overhead often.
//! The rates give the AMP's peak per tile cycle only when the six contexts are busy: one
//! `MatMulBlock` on one context would take six times as long, which is why the vertex is
//! multi-worker.
//!
//! `SumBlocks<float>` adds two f32 lanes per worker cycle, [`sum_cycles`]:
//! `OVERHEAD + parts·(ROW_OVERHEAD + ⌈len_w / 2⌉)` for a worker's share `len_w = ⌈len / 6⌉`,
//! the throughput of poplibs' strided reduce (`getCyclesEstimateForStridedReduce`, float ADD:
//! one 2-wide add per partial and cycle, about 11 cycles per pair of outputs on top). Not
//! measured.

use std::ops::Range;

use poplar_core::codelet::*;
use poplar_core::fp::canonical_nan;

use codelets::cycles::{OVERHEAD, ROW_OVERHEAD};

/// Multiply-accumulates per worker cycle for f32 operands: one AMP instruction (module notes).
pub const MACS_PER_CYCLE_F32: u64 = 16;
/// Multiply-accumulates per worker cycle for f16 operands with f32 partials (module notes:
/// an upper bound).
pub const MACS_PER_CYCLE_F16: u64 = 64;

/// The AMP rate for an input type: 64 for `half`, 16 otherwise.
pub const fn macs_per_cycle(dtype: poplar_core::dtype::DType) -> u64 {
    match dtype {
        poplar_core::dtype::DType::F16 => MACS_PER_CYCLE_F16,
        _ => MACS_PER_CYCLE_F32,
    }
}

/// The share of `0..n` that worker `id` of `workers` takes: [`Worker::split`]'s.
pub fn share(n: usize, id: u32, workers: u32) -> Range<usize> {
    Worker {
        id,
        count: workers.max(1),
    }
    .split(n)
}

/// How the AMP takes a product: per pass, `in_chans` input channels into
/// [`AMP_OUT_CHANS`] output channels of one output row in `row_cycles` worker cycles
/// (poplibs' `ConvPartial1x1` inner loop: 4 cycles a row for `half`, 8 for `float`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Amp {
    pub in_chans: u64,
    pub row_cycles: u64,
}

/// Output channels of one AMP pass (the conv units of an ipu2 tile).
pub const AMP_OUT_CHANS: u64 = 16;
/// Worker cycles of a pass beyond its rows: the worker's loop entry (poplibs' `38 − 3·4` for
/// `n ≥ 3` rows) and the supervisor's share of the pass (its output-group loop, 19 + 7
/// cycles, and the load of the weights into the AMP, 32: 58 tile cycles, about 10 a
/// context).
pub const AMP_PASS_CYCLES: u64 = 36;
/// Worker cycles of a vertex beyond its passes: poplibs' supervisor non-loop cycles (50 +
/// 13 + 11 + 18 = 92 tile cycles) less the model's own 51, about 7 a context.
pub const AMP_FIXED_CYCLES: u64 = 7;

/// The AMP's pass for the operands of the given rate ([`macs_per_cycle`]): `half` 16 input
/// channels at 4 cycles a row, `float` 8 at 8 (both the published peak:
/// `in_chans · 16 / row_cycles` MACs per worker cycle).
pub const fn amp(macs: u64) -> Amp {
    if macs >= MACS_PER_CYCLE_F16 {
        Amp {
            in_chans: 16,
            row_cycles: 4,
        }
    } else {
        Amp {
            in_chans: 8,
            row_cycles: 8,
        }
    }
}

/// Worker cycles of the busiest context for `in_groups` input-channel groups into `cols`
/// output channels of `rows` output rows, the rows shared by `workers` contexts, in the
/// cheaper of the two orientations (poplin may take the product transposed, so that the
/// longer side is the AMP's field of rows).
pub fn amp_cycles(rows: u64, in_groups: u64, cols: u64, amp: Amp, workers: u32) -> u64 {
    let w = u64::from(workers.max(1));
    let orient = |rows: u64, cols: u64| {
        in_groups
            * cols.div_ceil(AMP_OUT_CHANS)
            * (AMP_PASS_CYCLES + amp.row_cycles * rows.div_ceil(w))
    };
    AMP_FIXED_CYCLES + orient(rows, cols).min(orient(cols, rows))
}

/// Worker cycles of a vertex beyond its rows on the vector path: poplibs'
/// `ConvPartialHorizontalMac` worker non-loop and per-list cycles (16 + 19) and its
/// supervisor's group loops (23 + 15 + 10 tile cycles, about 8 a context).
pub const HMAC_FIXED_CYCLES: u64 = 43;
/// Worker cycles per output row on the vector path (poplibs' `7` per position).
pub const HMAC_ROW_CYCLES: u64 = 7;
/// Worker cycles per dot product beyond its vectors (the loop's entry and the store).
pub const HMAC_DOT_CYCLES: u64 = 2;

/// Worker cycles of the busiest context on the vector path (poplibs'
/// `ConvPartialHorizontalMac`, which its planner takes when the AMP's passes would be mostly
/// empty): each of the `rows` output rows (shared by `workers`) computes `cols` outputs of
/// `dots` dot products of `len` products, `lanes` a cycle (one 64-bit load: 4 `half`, 2
/// `float`), in the cheaper orientation.
pub fn hmac_cycles(rows: u64, dots: u64, len: u64, cols: u64, lanes: u64, workers: u32) -> u64 {
    let w = u64::from(workers.max(1));
    let dot = dots * (HMAC_DOT_CYCLES + len.div_ceil(lanes.max(1)));
    let orient = |rows: u64, cols: u64| rows.div_ceil(w) * (HMAC_ROW_CYCLES + cols * dot);
    HMAC_FIXED_CYCLES + orient(rows, cols).min(orient(cols, rows))
}

/// Worker cycles of a product of `rows` output rows by `cols` output channels, each the sum
/// of `taps` dot products of `k` products at `macs` per cycle: the cheaper of the AMP's
/// passes ([`amp_cycles`]) and the vector path ([`hmac_cycles`]), as poplibs' planner picks
/// a vertex type per partition. The simulator runs one kernel either way; the bits do not
/// depend on the choice.
pub fn mac_cycles(rows: u64, taps: u64, k: u64, cols: u64, macs: u64, workers: u32) -> u64 {
    let a = amp(macs);
    let lanes = if macs >= MACS_PER_CYCLE_F16 { 4 } else { 2 };
    amp_cycles(rows, taps * k.div_ceil(a.in_chans), cols, a, workers)
        .min(hmac_cycles(rows, taps, k, cols, lanes, workers))
}

/// Worker cycles of a `MatMulBlock` vertex of `mb × kb` by `kb × nb` at `macs` per cycle,
/// shared by `workers` contexts: [`mac_cycles`] of `mb` rows of `nb` outputs of `kb` products.
pub fn block_cycles_at(mb: u64, kb: u64, nb: u64, macs: u64, workers: u32) -> u64 {
    mac_cycles(mb, 1, kb, nb, macs, workers)
}

/// The largest `cost(rows, outputs)` over the even shares ([`share`]) of `outputs` outputs,
/// in rows of `per_row`, among `workers` contexts: `rows` counts the rows a share touches.
pub fn busiest_share(
    outputs: u64,
    per_row: u64,
    workers: u32,
    cost: impl Fn(u64, u64) -> u64,
) -> u64 {
    let (n, per) = (outputs as usize, per_row.max(1) as usize);
    (0..workers.max(1))
        .map(|w| {
            let r = share(n, w, workers);
            let rows = if r.is_empty() {
                0
            } else {
                (r.end - 1) / per - r.start / per + 1
            };
            cost(rows as u64, r.len() as u64)
        })
        .max()
        .unwrap_or(OVERHEAD)
}

/// [`block_cycles_at`] for f32 operands.
pub fn block_cycles(mb: u64, kb: u64, nb: u64, workers: u32) -> u64 {
    block_cycles_at(mb, kb, nb, MACS_PER_CYCLE_F32, workers)
}

/// Worker cycles of a `SumBlocks<float>` vertex over `parts` partial blocks of `len` elements
/// shared by `workers` contexts: the largest share, `⌈len / workers⌉`, two f32 adds a cycle.
pub const fn sum_cycles(parts: u64, len: u64, workers: u32) -> u64 {
    let w = if workers == 0 { 1 } else { workers as u64 };
    OVERHEAD + parts * (ROW_OVERHEAD + len.div_ceil(w).div_ceil(2))
}

/// The block sizes `(mb, kb, nb)` of a multiply from its three field lengths, if consistent.
pub fn block_dims(a: usize, b: usize, out: usize) -> Option<(usize, usize, usize)> {
    if a == 0 || b == 0 || out == 0 {
        return None;
    }
    let kk = (a as u128 * b as u128) / out as u128;
    let kb = (kk as f64).sqrt().round() as usize;
    if kb == 0 || !a.is_multiple_of(kb) || !b.is_multiple_of(kb) {
        return None;
    }
    let (mb, nb) = (a / kb, b / kb);
    (mb * nb == out).then_some((mb, kb, nb))
}

/// The outputs `range` (row-major indices into the `mb × nb` block) of `out = a · b` for
/// row-major blocks with `kb` columns of `a` and `nb` of `b`, as a worker computes its share.
/// `out` is the whole block. Each output sums its `kb` products in order of `kk`, in f32,
/// starting from 0, or with `accumulate` from its value in `out`: a product split into
/// chunks of `kk` accumulated one after the other gives the bits of the whole product.
///
/// The loops run over `kk` outside and the columns of a row inside, each output keeping its
/// own sum: the same additions in the same order as one dot product per output, so the same
/// bits, but the inner loop runs along rows of `b` and vectorises.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn multiply_outputs<T: Copy>(
    a: &[T],
    b: &[T],
    out: &mut [f32],
    kb: usize,
    nb: usize,
    range: Range<usize>,
    accumulate: bool,
    to_f32: impl Fn(T) -> f32,
) {
    let mut idx = range.start;
    while idx < range.end {
        let (r, c0) = (idx / nb, idx % nb);
        let c1 = nb.min(c0 + (range.end - idx));
        let acc = &mut out[r * nb + c0..r * nb + c1];
        if !accumulate {
            acc.fill(0.0);
        }
        for (kk, &x) in a[r * kb..(r + 1) * kb].iter().enumerate() {
            let x = to_f32(x);
            for (s, &y) in acc.iter_mut().zip(&b[kk * nb + c0..kk * nb + c1]) {
                *s += x * to_f32(y);
            }
        }
        // Which NaN a sum of NaN products ends as depends on the level's code.
        for s in acc.iter_mut() {
            *s = canonical_nan(*s);
        }
        idx += c1 - c0;
    }
}

poplar_core::isa_dispatch! {
    /// [`multiply_outputs`] of f32 blocks at the active instruction-set level.
    pub fn multiply_outputs_f32(
        a: &[f32],
        b: &[f32],
        out: &mut [f32],
        kb: usize,
        nb: usize,
        range: Range<usize>,
        accumulate: bool,
    ) {
        multiply_outputs(a, b, out, kb, nb, range, accumulate, |x| x)
    }
}

poplar_core::isa_dispatch! {
    /// [`multiply_outputs`] of f16 blocks (f32 products and sums) at the active level.
    pub fn multiply_outputs_f16(
        a: &[poplar_core::f16],
        b: &[poplar_core::f16],
        out: &mut [f32],
        kb: usize,
        nb: usize,
        range: Range<usize>,
        accumulate: bool,
    ) {
        multiply_outputs(a, b, out, kb, nb, range, accumulate, |x| x.to_f32())
    }
}

/// `out = a · b` for row-major blocks, as the vertex's workers compute it together.
pub fn multiply_block(a: &[f32], b: &[f32], out: &mut [f32], mb: usize, kb: usize, nb: usize) {
    multiply_outputs_f32(a, b, out, kb, nb, 0..mb * nb, false);
}

/// The block sizes of a `MatMulBlock` vertex, or the error naming its fields.
fn checked_dims(
    name: &str,
    a: usize,
    b: usize,
    out: usize,
) -> Result<(usize, usize, usize), VertexError> {
    block_dims(a, b, out).ok_or_else(|| {
        VertexError::new(format!(
            "{name}: fields a ({a}), b ({b}) and out ({out}) are not mb×kb, kb×nb and mb×nb blocks"
        ))
    })
}

/// The cycles of a `MatMulBlock` vertex at `macs` multiply-accumulates per cycle.
fn matmul_cycles(a: u64, b: u64, out: u64, macs: u64, workers: u32) -> Option<u64> {
    let (mb, kb, nb) = block_dims(a as usize, b as usize, out as usize)?;
    Some(block_cycles_at(
        mb as u64, kb as u64, nb as u64, macs, workers,
    ))
}

/// One `MatMulBlock` codelet per operand type: its name, the kernel of its type and the
/// multiply-accumulates per cycle of the cycle model.
macro_rules! matmul_block_codelets {
    ($($(#[$doc:meta])* $name:ident as $cname:literal: $t:ty, $out:ident, $acc:literal, $kernel:ident, $macs:ident;)*) => {$(
        poplar_core::codelet! {
            $(#[$doc])*
            pub struct $name as $cname, multi_worker {
                a: Input<Vector<$t>>,
                b: Input<Vector<$t>>,
                out: $out<Vector<f32>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
                let (mb, kb, nb) =
                    checked_dims($cname, self.a.len(), self.b.len(), self.out.len())?;
                let range = w.split(mb * nb);
                $kernel(self.a, self.b, self.out, kb, nb, range, $acc);
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let e = |f| ctx.elements(f);
                matmul_cycles(e(Self::a), e(Self::b), e(Self::out), $macs, ctx.workers)
            }
        }
    )*};
}

matmul_block_codelets! {
    /// `MatMulBlock<float>`: `out = a · b` for one block (module notes).
    MatMulBlockF32 as "MatMulBlock<float>": f32, Output, false, multiply_outputs_f32, MACS_PER_CYCLE_F32;
    /// `MatMulBlock<half>`: `out = a · b` for one block of f16 operands, with f32 partials: each
    /// product of two f16 values is exact in f32 and is accumulated in f32 in order of `kk`.
    MatMulBlockF16 as "MatMulBlock<half>": poplar_core::f16, Output, false, multiply_outputs_f16, MACS_PER_CYCLE_F16;
    /// `MatMulBlockAcc<float>`: `out += a · b`, each output's products added to it in order of
    /// `kk` (a later serial step of a plan).
    MatMulBlockAccF32 as "MatMulBlockAcc<float>": f32, InOut, true, multiply_outputs_f32, MACS_PER_CYCLE_F32;
    /// `MatMulBlockAcc<half>`: `out += a · b` for f16 operands, in f32.
    MatMulBlockAccF16 as "MatMulBlockAcc<half>": poplar_core::f16, InOut, true, multiply_outputs_f16, MACS_PER_CYCLE_F16;
}

poplar_core::codelet! {
    /// `SumBlocks<float>`: `out[i] = Σ_j partials[j·len + i]` (module notes).
    pub struct SumBlocksF32 as "SumBlocks<float>", multi_worker {
        partials: Input<Vector<f32>>,
        out: Output<Vector<f32>>,
    }
}

impl Vertex for SumBlocksF32<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let len = self.out.len();
        if len == 0 || !self.partials.len().is_multiple_of(len) {
            return Err(VertexError::new(format!(
                "SumBlocks<float>: partials ({}) is not a whole number of out blocks ({len})",
                self.partials.len()
            )));
        }
        let r = w.split(len);
        let out = &mut self.out[r.clone()];
        out.copy_from_slice(&self.partials[r.clone()]);
        for part in self.partials.chunks_exact(len).skip(1) {
            for (o, &p) in out.iter_mut().zip(&part[r.clone()]) {
                *o += p;
            }
        }
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let len = ctx.elements(Self::out).max(1);
        Some(sum_cycles(
            ctx.elements(Self::partials) / len,
            len,
            ctx.workers,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_dims_recover_the_blocks_or_refuse() {
        assert_eq!(block_dims(3 * 5, 5 * 7, 3 * 7), Some((3, 5, 7)));
        assert_eq!(block_dims(1, 1, 1), Some((1, 1, 1)));
        assert_eq!(block_dims(6, 10, 7), None);
        assert_eq!(block_dims(0, 4, 4), None);
    }

    /// The AMP's passes, by hand: groups of input channels times groups of 16 output
    /// channels, each a fixed cost and a row cost per row of the busiest context.
    #[test]
    fn the_amp_passes_set_the_block_estimate() {
        let pass = |rows: u64, row: u64| AMP_PASS_CYCLES + row * rows;
        // f32, 12 × 32 · 32 × 1 on the AMP: 4 input groups of the transposed product (one
        // row of 12 outputs, 1 output group); the vector path is cheaper: 2 rows a context of
        // one 32-long dot product, 2 lanes a cycle.
        let a = amp(16);
        assert_eq!(
            amp_cycles(12, 4, 1, a, 6),
            AMP_FIXED_CYCLES + 4 * pass(1, 8)
        );
        let hmac = HMAC_FIXED_CYCLES + 2 * (HMAC_ROW_CYCLES + HMAC_DOT_CYCLES + 16);
        assert_eq!(hmac_cycles(12, 1, 32, 1, 2, 6), hmac);
        assert_eq!(block_cycles_at(12, 32, 1, 16, 6), hmac);
        // f16, 2048 × 16 · 16 × 16 (tessellate-ipu's product): one AMP pass of ⌈2048/6⌉ rows.
        assert_eq!(
            block_cycles_at(2048, 16, 16, 64, 6),
            AMP_FIXED_CYCLES + pass(342, 4)
        );
        // f16, 40 × 100 · 100 × 33 on one context: 7 input groups × 3 output groups of 40
        // rows, or 7 × 3 of 33 rows transposed.
        assert_eq!(
            block_cycles_at(40, 100, 33, 64, 1),
            AMP_FIXED_CYCLES + 7 * 3 * pass(33, 4)
        );
        // The tile reaches the published peak on long rows: 64 f16 MACs a tile cycle.
        let tile = 6 * block_cycles_at(6 * 4096, 16, 16, 64, 6) + 51;
        let macs = 6.0 * 4096.0 * 256.0;
        assert!((macs / tile as f64) > 63.0 && (macs / tile as f64) <= 64.0);
        assert_eq!(sum_cycles(3, 13, 6), OVERHEAD + 3 * (ROW_OVERHEAD + 2));
    }

    #[test]
    fn worker_shares_give_the_bits_of_the_whole_block() {
        let (mb, kb, nb) = (5, 37, 7);
        let a: Vec<f32> = (0..mb * kb).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..kb * nb).map(|i| (i as f32 * 0.11).cos()).collect();
        let mut whole = vec![0.0; mb * nb];
        multiply_block(&a, &b, &mut whole, mb, kb, nb);
        let mut split = vec![0.0; mb * nb];
        for w in 0..6 {
            multiply_outputs(
                &a,
                &b,
                &mut split,
                kb,
                nb,
                share(mb * nb, w, 6),
                false,
                |x| x,
            );
        }
        assert_eq!(whole, split);
    }

    /// A serial split: the first chunk of `kk` written, the others accumulated, gives the
    /// bits of the whole product (non-finite products included).
    #[test]
    fn accumulated_chunks_give_the_bits_of_the_whole_block() {
        let (mb, kb, nb) = (4, 45, 6);
        let mut a: Vec<f32> = (0..mb * kb)
            .map(|i| (i as f32 * 0.53).sin() * 1e3)
            .collect();
        let b: Vec<f32> = (0..kb * nb).map(|i| (i as f32 * 0.29).cos()).collect();
        a[3] = f32::INFINITY;
        let mut whole = vec![0.0; mb * nb];
        multiply_block(&a, &b, &mut whole, mb, kb, nb);
        let mut chunked = vec![f32::NAN; mb * nb];
        for (s, ks) in [(0, 0..16), (1, 16..32), (2, 32..45)] {
            let ac: Vec<f32> = (0..mb)
                .flat_map(|r| a[r * kb + ks.start..r * kb + ks.end].to_vec())
                .collect();
            let bc = &b[ks.start * nb..ks.end * nb];
            multiply_outputs_f32(&ac, bc, &mut chunked, ks.len(), nb, 0..mb * nb, s > 0);
        }
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&whole), bits(&chunked));
    }

    /// One dot product per output, `kk` in order: the definition the loops must match.
    fn dot_products(a: &[f32], b: &[f32], kb: usize, nb: usize, mb: usize) -> Vec<u32> {
        (0..mb * nb)
            .map(|idx| {
                let (r, c) = (idx / nb, idx % nb);
                let mut s = 0.0f32;
                for kk in 0..kb {
                    s += a[r * kb + kk] * b[kk * nb + c];
                }
                poplar_core::fp::canonical_nan(s).to_bits()
            })
            .collect()
    }

    #[test]
    fn blocks_are_the_dot_products_bit_for_bit_at_every_isa_level() {
        let (mb, kb, nb) = (9, 67, 45);
        let mut rng = poplar_core::rand::SplitMix64::new(1);
        let mut next = move || rng.next_u64();
        // Values of mixed scale and sign, some -0.0 and subnormal.
        let mut value = move || match next() % 16 {
            0 => -0.0,
            1 => f32::from_bits(0x0000_1234),
            k => ((next() % 2001) as f32 - 1000.0) * 2f32.powi(k as i32 - 8),
        };
        let mut a: Vec<f32> = (0..mb * kb).map(|_| value()).collect();
        let mut b: Vec<f32> = (0..kb * nb).map(|_| value()).collect();
        // Edge values along row 0 of `a` and column 0 of `b` (NaN of both signs, ±inf, the
        // extremes, subnormals), and row 1 meeting column 0 shifted by one.
        for (k, &e) in poplar_core::isa::EDGE_VALUES.iter().enumerate() {
            a[k] = e;
            a[kb + k + 1] = e;
            b[k * nb] = e;
        }
        let want = dot_products(&a, &b, kb, nb, mb);
        let ah: Vec<poplar_core::f16> = a.iter().map(|&x| poplar_core::f16::from_f32(x)).collect();
        let bh: Vec<poplar_core::f16> = b.iter().map(|&x| poplar_core::f16::from_f32(x)).collect();
        let af: Vec<f32> = ah.iter().map(|x| x.to_f32()).collect();
        let bf: Vec<f32> = bh.iter().map(|x| x.to_f32()).collect();
        let want_h = dot_products(&af, &bf, kb, nb, mb);
        let before = poplar_core::isa::active();
        for level in poplar_core::isa::supported() {
            poplar_core::isa::set_active(level).unwrap();
            for workers in [1, 6] {
                let mut out = vec![f32::NAN; mb * nb];
                let mut out_h = vec![f32::NAN; mb * nb];
                for w in 0..workers {
                    let r = share(mb * nb, w, workers);
                    multiply_outputs_f32(&a, &b, &mut out, kb, nb, r.clone(), false);
                    multiply_outputs_f16(&ah, &bh, &mut out_h, kb, nb, r, false);
                }
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
                assert_eq!(bits(&out), want, "f32 at {level}, {workers} worker(s)");
                assert_eq!(bits(&out_h), want_h, "f16 at {level}, {workers} worker(s)");
            }
        }
        poplar_core::isa::set_active(before).unwrap();
    }
}
