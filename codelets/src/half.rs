//! Half-precision (`half`, [`poplar_core::f16`]) arithmetic.
//!
//! The f16 members of the op families are declared with their `float` twins (`binary`,
//! `scaled_add`, `reduce`, `dot`, one macro per family over [`crate::arith::Arith`]); this
//! module has the casts, and the rule they all share: every
//! f16 result is computed in f32 from the f16 operands (exact: an f16 sum, difference or product
//! of two f16 values is exact in f32 except for rare sums whose exponents differ widely, where
//! f32's rounding is far below f16's) and rounded to f16 once, with
//! [`poplar_core::codelet::to_f16`]: to nearest, or stochastically when the engine runs with
//! `EngineOptions::stochastic_rounding`. Reductions and dot products accumulate in f32 and
//! write an f32 result (the chip's f32 partials), so they do not round to f16 at all.
//!
//! | name | fields | computes |
//! |---|---|---|
//! | `Add<half>`, `Sub<half>`, `Mul<half>`, `Max<half>`, `Min<half>` | `in1`, `in2`, `out`: `Vector<f16>` | `out[i] = round(in1[i] op in2[i])` |
//! | `AddInPlace<half>`, … (the same five) | `a: InOut`, `b: Input` | `a[i] = round(a[i] op b[i])` |
//! | `ScaledAdd<half>` | `a: InOut<Vector<f16>>`, `b: Input<Vector<f16>>`, `scale: State<f32>` | `a[i] = round(a[i] + scale · b[i])`, in f32 |
//! | `ReduceSum<half>` | `input: Input<Vector<f16>>`, `out: Output<f32>` | the sum in f32, left to right |
//! | `Dot<half>` | `a`, `b`: `Input<Vector<f16>>`, `out: Output<f32>` | `Σ a[i] · b[i]` in f32, left to right |
//! | `Cast<float,half>` | `input: Input<Vector<f32>>`, `out: Output<Vector<f16>>` | `round(input[i])` |
//! | `Cast<half,float>` | `input: Input<Vector<f16>>`, `out: Output<Vector<f32>>` | exact |
//!
//! Cycle estimates: as the `float` codelets of the same families ([`cycles`]), with vectors of
//! 4 `half`s: `BinaryOp2D`, `BinaryOp2DInPlace`, `ScaledAdd2D`, the single-input reduction
//! (8-wide accumulators), `Cast1DSingleWorker`; `Dot<half>` has no poplibs vertex
//! ([`cycles::dot`]).

use poplar_core::codelet::*;
use poplar_core::dtype::DType;
use poplar_core::f16;

use crate::cycles;
use crate::util::same_len;

poplar_core::codelet! {
    /// `Cast<float,half>`: `out[i] = round(input[i])`.
    pub struct CastF32F16 as "Cast<float,half>" {
        input: Input<Vector<f32>>,
        out: Output<Vector<f16>>,
    }
}

impl Vertex for CastF32F16<'_> {
    fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
        same_len(
            "Cast<float,half>",
            "out",
            self.out.len(),
            "input",
            self.input.len(),
        )?;
        for (i, (o, &x)) in self.out.iter_mut().zip(self.input.iter()).enumerate() {
            *o = to_f16(x, i);
        }
        Ok(())
    }

    /// `Cast1DSingleWorker`: `26 + 2 · ceil(n / 4)`.
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(cycles::cast(DType::F32, DType::F16).cycles(ctx.elements(Self::out)))
    }
}

poplar_core::codelet! {
    /// `Cast<half,float>`: `out[i] = input[i]`, exactly.
    pub struct CastF16F32 as "Cast<half,float>" {
        input: Input<Vector<f16>>,
        out: Output<Vector<f32>>,
    }
}

impl Vertex for CastF16F32<'_> {
    fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
        same_len(
            "Cast<half,float>",
            "out",
            self.out.len(),
            "input",
            self.input.len(),
        )?;
        for (o, x) in self.out.iter_mut().zip(self.input.iter()) {
            *o = x.to_f32();
        }
        Ok(())
    }

    /// `Cast1DSingleWorker`: `25 + ceil(n / 2)`.
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(cycles::cast(DType::F16, DType::F32).cycles(ctx.elements(Self::out)))
    }
}
