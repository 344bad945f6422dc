//! Half-precision (`half`, [`poplar::f16`]) arithmetic.
//!
//! One module for the f16 members of several op families, because they share one rule: every
//! f16 result is computed in f32 from the f16 operands (exact: an f16 sum, difference or product
//! of two f16 values is exact in f32 except for rare sums whose exponents differ widely, where
//! f32's rounding is far below f16's) and rounded to f16 once, with
//! [`poplar::codelet::to_f16`]: to nearest, or stochastically when the engine runs with
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

use poplar::codelet::*;
use poplar::{f16, DType};

use crate::cycles;
use crate::ops::{BinaryOp, ReduceOp};
use crate::util::same_len;

macro_rules! half_binary {
    ($($name:ident as $cname:literal, $inplace:ident as $iname:literal, $op:ident, |$x:ident, $y:ident| $body:expr;)*) => {$(
        poplar::codelet! {
            #[doc = concat!("`", $cname, "`: `out[i] = round(", stringify!($body), ")` in f32.")]
            pub struct $name as $cname {
                in1: Input<Vector<f16>>,
                in2: Input<Vector<f16>>,
                out: Output<Vector<f16>>,
            }
        }

        impl $name<'_> {
            /// The operation in f32, before rounding.
            #[inline]
            pub fn op($x: f32, $y: f32) -> f32 {
                $body
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                same_len($cname, "in2", self.in2.len(), "in1", self.in1.len())?;
                same_len($cname, "out", self.out.len(), "in1", self.in1.len())?;
                for (i, ((o, x), y)) in self.out.iter_mut().zip(self.in1.iter()).zip(self.in2.iter()).enumerate() {
                    *o = to_f16(Self::op(x.to_f32(), y.to_f32()), i);
                }
                Ok(())
            }

            /// `BinaryOp2D` for `half`.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::binary(BinaryOp::$op, DType::F16, false).cycles(ctx.elements(Self::out)))
            }
        }

        poplar::codelet! {
            #[doc = concat!("`", $iname, "`: `a[i] = round(", stringify!($body), ")` in f32.")]
            pub struct $inplace as $iname {
                a: InOut<Vector<f16>>,
                b: Input<Vector<f16>>,
            }
        }

        impl Vertex for $inplace<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                same_len($iname, "b", self.b.len(), "a", self.a.len())?;
                for (i, (a, y)) in self.a.iter_mut().zip(self.b.iter()).enumerate() {
                    *a = to_f16($name::op(a.to_f32(), y.to_f32()), i);
                }
                Ok(())
            }

            /// `BinaryOp2DInPlace` for `half`.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::binary(BinaryOp::$op, DType::F16, true).cycles(ctx.elements(Self::a)))
            }
        }
    )*};
}

half_binary! {
    AddF16 as "Add<half>", AddInPlaceF16 as "AddInPlace<half>", Add, |x, y| x + y;
    SubF16 as "Sub<half>", SubInPlaceF16 as "SubInPlace<half>", Sub, |x, y| x - y;
    MulF16 as "Mul<half>", MulInPlaceF16 as "MulInPlace<half>", Mul, |x, y| x * y;
    MaxF16 as "Max<half>", MaxInPlaceF16 as "MaxInPlace<half>", Max, |x, y| x.max(y);
    MinF16 as "Min<half>", MinInPlaceF16 as "MinInPlace<half>", Min, |x, y| x.min(y);
}

poplar::codelet! {
    /// `ScaledAdd<half>`: `a[i] = round(a[i] + scale * b[i])`, the product and sum in f32.
    pub struct ScaledAddF16 as "ScaledAdd<half>" {
        a: InOut<Vector<f16>>,
        b: Input<Vector<f16>>,
        scale: State<f32>,
    }
}

impl Vertex for ScaledAddF16<'_> {
    fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
        same_len("ScaledAdd<half>", "b", self.b.len(), "a", self.a.len())?;
        for (i, (a, b)) in self.a.iter_mut().zip(self.b.iter()).enumerate() {
            *a = to_f16(a.to_f32() + self.scale * b.to_f32(), i);
        }
        Ok(())
    }

    /// `ScaledAdd2D` for `half`: `30 + 3 · ceil(n / 4)`.
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(cycles::scaled_add(DType::F16).cycles(ctx.elements(Self::a)))
    }
}

poplar::codelet! {
    /// `ReduceSum<half>`: the sum of `input` in f32 (f32 partials), left to right.
    pub struct ReduceSumF16 as "ReduceSum<half>" {
        input: Input<Vector<f16>>,
        out: Output<f32>,
    }
}

impl ReduceSumF16<'_> {
    /// The sum as the vertex computes it.
    pub fn reduce(xs: &[f16]) -> f32 {
        xs.iter().fold(0.0f32, |s, x| s + x.to_f32())
    }
}

impl Vertex for ReduceSumF16<'_> {
    fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
        *self.out = Self::reduce(self.input);
        Ok(())
    }

    /// `getCyclesEstimateForSingleInput`, `half` partials, `float` out: `17 + 2 · ceil(n / 8)`.
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let l = cycles::reduce(ReduceOp::Sum, DType::F16);
        Some(l.cycles(ctx.elements(Self::input)))
    }
}

poplar::codelet! {
    /// `Dot<half>`: `out = Σ a[i] · b[i]` in f32, left to right.
    pub struct DotF16 as "Dot<half>" {
        a: Input<Vector<f16>>,
        b: Input<Vector<f16>>,
        out: Output<f32>,
    }
}

impl DotF16<'_> {
    /// The dot product as the vertex computes it (each f16 product is exact in f32).
    pub fn dot(a: &[f16], b: &[f16]) -> f32 {
        a.iter()
            .zip(b)
            .fold(0.0f32, |s, (x, y)| s + x.to_f32() * y.to_f32())
    }
}

impl Vertex for DotF16<'_> {
    fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
        same_len("Dot<half>", "b", self.b.len(), "a", self.a.len())?;
        *self.out = Self::dot(self.a, self.b);
        Ok(())
    }

    /// No poplibs estimator: [`cycles::dot`], `17 + 4 · ceil(n / 8)`.
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(cycles::dot(DType::F16).cycles(ctx.elements(Self::a)))
    }
}

poplar::codelet! {
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

poplar::codelet! {
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
