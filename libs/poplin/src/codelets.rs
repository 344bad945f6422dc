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
//! # Cycle model
//! The multiply runs on the tile's accumulating matrix product (AMP) unit. The hardware
//! overview (`shared/seeds/ipu-hardware-overview.txt`) gives "up to 64 multiply-accumulate
//! operations per cycle" per tile; that is the half-precision rate. Single precision runs at a
//! quarter of it, 16 per cycle: the published GC200 peaks, 250 TFLOP/s for FP16 and
//! 62.5 TFLOP/s for FP32 over 1,472 tiles at 1.33 GHz, are 64 and 16 multiply-accumulates per
//! tile and cycle. [`block_cycles`] charges `OVERHEAD + mb·(ROW_OVERHEAD + nb·⌈kb / 16⌉)`:
//! the AMP takes 16 of the k products of one output per cycle, and each output row costs a
//! little setup.

use poplar::codelet::*;

use codelets::cycles::{OVERHEAD, ROW_OVERHEAD};

/// Multiply-accumulates per cycle and tile for f32 (AMP; see the module notes).
pub const MACS_PER_CYCLE_F32: u64 = 16;
/// Multiply-accumulates per cycle and tile for f16 inputs with f32 partials (AMP).
pub const MACS_PER_CYCLE_F16: u64 = 64;

/// Cycles of one `MatMulBlock<float>` of `mb × kb` by `kb × nb`.
pub const fn block_cycles(mb: u64, kb: u64, nb: u64) -> u64 {
    block_cycles_at(mb, kb, nb, MACS_PER_CYCLE_F32)
}

/// Cycles of one block multiply at `macs` multiply-accumulates per cycle.
pub const fn block_cycles_at(mb: u64, kb: u64, nb: u64, macs: u64) -> u64 {
    OVERHEAD + mb * (ROW_OVERHEAD + nb * kb.div_ceil(macs))
}

/// The AMP rate for an input type: 64 for `half`, 16 otherwise.
pub const fn macs_per_cycle(dtype: poplar::DType) -> u64 {
    match dtype {
        poplar::DType::F16 => MACS_PER_CYCLE_F16,
        _ => MACS_PER_CYCLE_F32,
    }
}

/// Cycles of one `SumBlocks<float>` over `parts` partial blocks of `len` elements: an f32 add
/// is 2 wide (`codelets::cycles`).
pub const fn sum_cycles(parts: u64, len: u64) -> u64 {
    OVERHEAD + parts * (ROW_OVERHEAD + len.div_ceil(2))
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

/// `out = a · b` for row-major blocks, as the vertex computes it.
pub fn multiply_block(a: &[f32], b: &[f32], out: &mut [f32], mb: usize, kb: usize, nb: usize) {
    for r in 0..mb {
        let row = &a[r * kb..(r + 1) * kb];
        for c in 0..nb {
            let mut s = 0.0f32;
            for (kk, &x) in row.iter().enumerate() {
                s += x * b[kk * nb + c];
            }
            out[r * nb + c] = s;
        }
    }
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
fn matmul_cycles(a: u64, b: u64, out: u64, macs: u64) -> Option<u64> {
    let (mb, kb, nb) = block_dims(a as usize, b as usize, out as usize)?;
    Some(block_cycles_at(mb as u64, kb as u64, nb as u64, macs))
}

poplar::codelet! {
    /// `MatMulBlock<float>`: `out = a · b` for one block (module notes).
    pub struct MatMulBlockF32 as "MatMulBlock<float>" {
        a: Input<Vector<f32>>,
        b: Input<Vector<f32>>,
        out: Output<Vector<f32>>,
    }
}

impl Vertex for MatMulBlockF32<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        let (mb, kb, nb) = checked_dims(
            "MatMulBlock<float>",
            self.a.len(),
            self.b.len(),
            self.out.len(),
        )?;
        multiply_block(self.a, self.b, self.out, mb, kb, nb);
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let e = |f| ctx.elements(f);
        matmul_cycles(e(Self::a), e(Self::b), e(Self::out), MACS_PER_CYCLE_F32)
    }
}

poplar::codelet! {
    /// `MatMulBlock<half>`: `out = a · b` for one block of f16 operands, with f32 partials: each
    /// product of two f16 values is exact in f32 and is accumulated in f32 in order of `kk`.
    pub struct MatMulBlockF16 as "MatMulBlock<half>" {
        a: Input<Vector<poplar::f16>>,
        b: Input<Vector<poplar::f16>>,
        out: Output<Vector<f32>>,
    }
}

impl Vertex for MatMulBlockF16<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        let (mb, kb, nb) = checked_dims(
            "MatMulBlock<half>",
            self.a.len(),
            self.b.len(),
            self.out.len(),
        )?;
        let a: Vec<f32> = self.a.iter().map(|x| x.to_f32()).collect();
        let b: Vec<f32> = self.b.iter().map(|x| x.to_f32()).collect();
        multiply_block(&a, &b, self.out, mb, kb, nb);
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let e = |f| ctx.elements(f);
        matmul_cycles(e(Self::a), e(Self::b), e(Self::out), MACS_PER_CYCLE_F16)
    }
}

poplar::codelet! {
    /// `SumBlocks<float>`: `out[i] = Σ_j partials[j·len + i]` (module notes).
    pub struct SumBlocksF32 as "SumBlocks<float>" {
        partials: Input<Vector<f32>>,
        out: Output<Vector<f32>>,
    }
}

impl Vertex for SumBlocksF32<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        let len = self.out.len();
        if len == 0 || !self.partials.len().is_multiple_of(len) {
            return Err(VertexError::new(format!(
                "SumBlocks<float>: partials ({}) is not a whole number of out blocks ({len})",
                self.partials.len()
            )));
        }
        self.out.copy_from_slice(&self.partials[..len]);
        for part in self.partials.chunks_exact(len).skip(1) {
            for (o, &p) in self.out.iter_mut().zip(part) {
                *o += p;
            }
        }
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let len = ctx.elements(Self::out).max(1);
        Some(sum_cycles(ctx.elements(Self::partials) / len, len))
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
}
