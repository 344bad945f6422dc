//! The matmul codelets and their cycle estimates.
//!
//! - `MatMulBlock<float>`: `a` (`mb × kb`, row-major), `b` (`kb × nb`, row-major) → `out`
//!   (`mb × nb`, row-major), `out[r, c] = Σ_kk a[r, kk] · b[kk, c]` accumulated in f32 in
//!   order of `kk`. The block sizes follow from the three lengths (`kb² = |a|·|b| / |out|`).
//! - `MatMulBlock<half>`: the same for f16 `a` and `b`, with an f32 `out` (f32 partials; the
//!   product of two f16 values is exact in f32).
//! - `SumBlocks<float>`: `partials` (`p` blocks of `len`, concatenated) → `out` (`len`),
//!   `out[i] = Σ_j partials[j·len + i]` in order of `j`: the reduction over the k split.
//!
//! All three are multi-worker (`codelet! { .., multi_worker }`), as poplibs' `ConvPartial*`
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
//! The multiply runs on the tile's accumulating matrix product (AMP) unit, one AMP
//! instruction per worker cycle. A worker's share of `o` outputs over `r` rows of the block
//! costs [`share_cycles`]: `OVERHEAD + r·ROW_OVERHEAD + o·⌈kb / MACS⌉`.
//!
//! | constant | value | source |
//! |---|---|---|
//! | [`MACS_PER_CYCLE_F32`] | 16 | published GC200 FP32 peak, 62.5 TFLOP/s = 1,472 tiles × 1.33 GHz × 16 MAC × 2: one AMP instruction per worker cycle, so the tile reaches it only with all six contexts busy |
//! | [`MACS_PER_CYCLE_F16`] | 64 | published GC200 FP16.16 peak, 250 TFLOP/s (64 MAC/tile/cycle); the hardware overview's "up to 64 multiply-accumulate operations per cycle" (`shared/seeds/ipu-hardware-overview.txt`). This vertex keeps f32 partials (FP16.32), for which GC200 publishes no figure; poplibs plans it with a separate conv-unit count (`getFp16InFp32OutConvUnitsPerTile`), so 64 is an upper bound |
//! | `OVERHEAD` | 20 | `codelets::cycles`; poplibs' `getConvPartial1x1SupervisorInnerLoopCycleEstimateHalfFloat` charges a worker `46 + (n − 3)·8` cycles for `n ≥ 3` float outputs, about 22 fixed: close. Not measured |
//! | `ROW_OVERHEAD` | 6 | `codelets::cycles`: pointer set-up per row of the share. No poplibs counterpart (its outer loop charges the supervisor per output-channel pass, 19 + 6 cycles plus the AMP weight loads, which this model does not count). Not measured |
//!
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

/// Worker cycles of one worker's share of a block multiply: `outputs` outputs over `rows`
/// rows of the block, `kb` products each at `macs` per cycle.
pub const fn share_cycles(rows: u64, outputs: u64, kb: u64, macs: u64) -> u64 {
    OVERHEAD + rows * ROW_OVERHEAD + outputs * kb.div_ceil(macs)
}

/// Worker cycles of a `MatMulBlock` vertex of `mb × kb` by `kb × nb` at `macs` per cycle, its
/// outputs shared by `workers` contexts: the busiest worker's [`share_cycles`].
pub fn block_cycles_at(mb: u64, kb: u64, nb: u64, macs: u64, workers: u32) -> u64 {
    busiest_share(mb * nb, nb, workers, |rows, outputs| {
        share_cycles(rows, outputs, kb, macs)
    })
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
/// starting from 0.
///
/// The loops run over `kk` outside and the columns of a row inside, each output keeping its
/// own sum: the same additions in the same order as one dot product per output, so the same
/// bits, but the inner loop runs along rows of `b` and vectorises.
#[inline(always)]
pub fn multiply_outputs<T: Copy>(
    a: &[T],
    b: &[T],
    out: &mut [f32],
    kb: usize,
    nb: usize,
    range: Range<usize>,
    to_f32: impl Fn(T) -> f32,
) {
    let mut idx = range.start;
    while idx < range.end {
        let (r, c0) = (idx / nb, idx % nb);
        let c1 = nb.min(c0 + (range.end - idx));
        let acc = &mut out[r * nb + c0..r * nb + c1];
        acc.fill(0.0);
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
    ) {
        multiply_outputs(a, b, out, kb, nb, range, |x| x)
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
    ) {
        multiply_outputs(a, b, out, kb, nb, range, |x| x.to_f32())
    }
}

/// `out = a · b` for row-major blocks, as the vertex's workers compute it together.
pub fn multiply_block(a: &[f32], b: &[f32], out: &mut [f32], mb: usize, kb: usize, nb: usize) {
    multiply_outputs_f32(a, b, out, kb, nb, 0..mb * nb);
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
    ($($(#[$doc:meta])* $name:ident as $cname:literal: $t:ty, $kernel:ident, $macs:ident;)*) => {$(
        poplar_core::codelet! {
            $(#[$doc])*
            pub struct $name as $cname, multi_worker {
                a: Input<Vector<$t>>,
                b: Input<Vector<$t>>,
                out: Output<Vector<f32>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
                let (mb, kb, nb) =
                    checked_dims($cname, self.a.len(), self.b.len(), self.out.len())?;
                let range = w.split(mb * nb);
                $kernel(self.a, self.b, self.out, kb, nb, range);
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
    MatMulBlockF32 as "MatMulBlock<float>": f32, multiply_outputs_f32, MACS_PER_CYCLE_F32;
    /// `MatMulBlock<half>`: `out = a · b` for one block of f16 operands, with f32 partials: each
    /// product of two f16 values is exact in f32 and is accumulated in f32 in order of `kk`.
    MatMulBlockF16 as "MatMulBlock<half>": poplar_core::f16, multiply_outputs_f16, MACS_PER_CYCLE_F16;
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

    #[test]
    fn the_busiest_share_sets_the_block_estimate() {
        // 12 × 1 outputs over 6 workers: two outputs on two rows each.
        assert_eq!(
            block_cycles_at(12, 32, 1, 16, 6),
            OVERHEAD + 2 * ROW_OVERHEAD + 2 * 2
        );
        // 1 × 7 outputs: one row, at most two outputs (7·5/6..7·6/6 = 5..7).
        assert_eq!(
            block_cycles_at(1, 16, 7, 16, 6),
            OVERHEAD + ROW_OVERHEAD + 2
        );
        // One worker: the whole block, as the single-context formula.
        assert_eq!(
            block_cycles_at(3, 40, 5, 16, 1),
            OVERHEAD + 3 * (ROW_OVERHEAD + 5 * 3)
        );
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
            multiply_outputs(&a, &b, &mut split, kb, nb, share(mb * nb, w, 6), |x| x);
        }
        assert_eq!(whole, split);
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
                    multiply_outputs_f32(&a, &b, &mut out, kb, nb, r.clone());
                    multiply_outputs_f16(&ah, &bh, &mut out_h, kb, nb, r);
                }
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
                assert_eq!(bits(&out), want, "f32 at {level}, {workers} worker(s)");
                assert_eq!(bits(&out_h), want_h, "f16 at {level}, {workers} worker(s)");
            }
        }
        poplar_core::isa::set_active(before).unwrap();
    }
}
