//! Binary element-wise codelets, out-of-place and in-place.
//!
//! | name | result |
//! |---|---|
//! | `Add<T>` | `x + y` (wrapping for integers) |
//! | `Sub<T>` | `x - y` (wrapping for integers) |
//! | `Mul<T>` | `x * y` (wrapping for integers) |
//! | `Max<T>` | `x.max(y)` (for `float`, a NaN operand yields the other one) |
//! | `Min<T>` | `x.min(y)` |
//! | `Div<float>` | `x / y` |
//!
//! `T` is `float`, `int` or `unsigned`, and `half` for all but `Div` (computed in f32 and
//! rounded once, [`crate::arith`]). Out-of-place fields: `in1`, `in2`:
//! `Input<Vector<T>>`, `out: Output<Vector<T>>` with `out[i] = in1[i] op in2[i]`. In-place
//! (`AddInPlace<T>`, …): `a: InOut<Vector<T>>`, `b: Input<Vector<T>>` with `a[i] = a[i] op
//! b[i]`. All lengths must agree. `AddMulti<float>` is `Add<float>` split over the workers.
//!
//! The loops run at the host's vector width (`poplar_core::isa_dispatch!`), the same bits at every
//! level. A `float` sum, difference, product or quotient that is NaN is stored as the one quiet
//! NaN (`poplar_core::fp::canonical_nan`): which of two NaN operands an `x + y` returns depends on
//! the code the compiler chose for the level.
//!
//! Cycle estimates: poplibs' `BinaryOp2D` (out of place), `BinaryOp2DInPlace` and
//! `BinaryOp1D` (the multi-worker one), see [`cycles::binary`].

use poplar_core::codelet::*;
use poplar_core::dtype::Element;
use poplar_core::f16;
use poplar_core::fp::canonical_nan;

use crate::arith::Arith;
use crate::cycles;
use crate::family::BinaryOp;
use crate::util::same_len;

macro_rules! binary_codelets {
    ($($name:ident as $cname:literal, $inplace:ident as $iname:literal: $t:ty,
        |$x:ident, $y:ident| $body:expr, op $op:ident;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: `out[i] = ", stringify!($body), "` with `",
                stringify!($x), " = in1[i]`, `", stringify!($y), " = in2[i]`.")]
            pub struct $name as $cname {
                in1: Input<Vector<$t>>,
                in2: Input<Vector<$t>>,
                out: Output<Vector<$t>>,
            }
        }

        impl $name<'_> {
            /// The operation on one pair of operands (for `half`, in f32 before rounding).
            #[inline]
            pub fn op($x: <$t as Arith>::Wide, $y: <$t as Arith>::Wide) -> <$t as Arith>::Wide {
                $body
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                same_len($cname, "in2", self.in2.len(), "in1", self.in1.len())?;
                same_len($cname, "out", self.out.len(), "in1", self.in1.len())?;
                poplar_core::isa_dispatch! {
                    fn kernel(out: &mut [$t], in1: &[$t], in2: &[$t]) {
                        for (i, ((o, &x), &y)) in out.iter_mut().zip(in1).zip(in2).enumerate() {
                            *o = <$t>::narrow($name::op(x.widen(), y.widen()), i);
                        }
                    }
                }
                kernel(self.out, self.in1, self.in2);
                Ok(())
            }

            /// `BinaryOp2D`: `5 + ceil(n / width) · cycles per vector`.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let l = cycles::binary(BinaryOp::$op, <$t as Element>::DTYPE, false);
                Some(l.cycles(ctx.elements(Self::out)))
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`", $iname, "`: `a[i] = ", stringify!($body), "` with `",
                stringify!($x), " = a[i]`, `", stringify!($y), " = b[i]`.")]
            pub struct $inplace as $iname {
                a: InOut<Vector<$t>>,
                b: Input<Vector<$t>>,
            }
        }

        impl Vertex for $inplace<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                same_len($iname, "b", self.b.len(), "a", self.a.len())?;
                poplar_core::isa_dispatch! {
                    fn kernel(a: &mut [$t], b: &[$t]) {
                        for (i, (a, &y)) in a.iter_mut().zip(b).enumerate() {
                            *a = <$t>::narrow($name::op(a.widen(), y.widen()), i);
                        }
                    }
                }
                kernel(self.a, self.b);
                Ok(())
            }

            /// `BinaryOp2DInPlace`: `20 + ceil(n / width) · cycles per vector`.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let l = cycles::binary(BinaryOp::$op, <$t as Element>::DTYPE, true);
                Some(l.cycles(ctx.elements(Self::a)))
            }
        }
    )*};
}

binary_codelets! {
    AddF32 as "Add<float>", AddInPlaceF32 as "AddInPlace<float>": f32, |x, y| canonical_nan(x + y), op Add;
    AddI32 as "Add<int>", AddInPlaceI32 as "AddInPlace<int>": i32, |x, y| x.wrapping_add(y), op Add;
    AddU32 as "Add<unsigned>", AddInPlaceU32 as "AddInPlace<unsigned>": u32, |x, y| x.wrapping_add(y), op Add;
    SubF32 as "Sub<float>", SubInPlaceF32 as "SubInPlace<float>": f32, |x, y| canonical_nan(x - y), op Sub;
    SubI32 as "Sub<int>", SubInPlaceI32 as "SubInPlace<int>": i32, |x, y| x.wrapping_sub(y), op Sub;
    SubU32 as "Sub<unsigned>", SubInPlaceU32 as "SubInPlace<unsigned>": u32, |x, y| x.wrapping_sub(y), op Sub;
    MulF32 as "Mul<float>", MulInPlaceF32 as "MulInPlace<float>": f32, |x, y| canonical_nan(x * y), op Mul;
    MulI32 as "Mul<int>", MulInPlaceI32 as "MulInPlace<int>": i32, |x, y| x.wrapping_mul(y), op Mul;
    MulU32 as "Mul<unsigned>", MulInPlaceU32 as "MulInPlace<unsigned>": u32, |x, y| x.wrapping_mul(y), op Mul;
    MaxF32 as "Max<float>", MaxInPlaceF32 as "MaxInPlace<float>": f32, |x, y| x.max(y), op Max;
    MaxI32 as "Max<int>", MaxInPlaceI32 as "MaxInPlace<int>": i32, |x, y| x.max(y), op Max;
    MaxU32 as "Max<unsigned>", MaxInPlaceU32 as "MaxInPlace<unsigned>": u32, |x, y| x.max(y), op Max;
    MinF32 as "Min<float>", MinInPlaceF32 as "MinInPlace<float>": f32, |x, y| x.min(y), op Min;
    MinI32 as "Min<int>", MinInPlaceI32 as "MinInPlace<int>": i32, |x, y| x.min(y), op Min;
    MinU32 as "Min<unsigned>", MinInPlaceU32 as "MinInPlace<unsigned>": u32, |x, y| x.min(y), op Min;
    DivF32 as "Div<float>", DivInPlaceF32 as "DivInPlace<float>": f32, |x, y| canonical_nan(x / y), op Div;
    AddF16 as "Add<half>", AddInPlaceF16 as "AddInPlace<half>": f16, |x, y| x + y, op Add;
    SubF16 as "Sub<half>", SubInPlaceF16 as "SubInPlace<half>": f16, |x, y| x - y, op Sub;
    MulF16 as "Mul<half>", MulInPlaceF16 as "MulInPlace<half>": f16, |x, y| x * y, op Mul;
    MaxF16 as "Max<half>", MaxInPlaceF16 as "MaxInPlace<half>": f16, |x, y| x.max(y), op Max;
    MinF16 as "Min<half>", MinInPlaceF16 as "MinInPlace<half>": f16, |x, y| x.min(y), op Min;
}

poplar_core::codelet! {
    /// `AddMulti<float>`: `out[i] = in1[i] + in2[i]`, each worker taking `worker.split(n)`.
    pub struct AddMultiF32 as "AddMulti<float>", multi_worker {
        in1: Input<Vector<f32>>,
        in2: Input<Vector<f32>>,
        out: Output<Vector<f32>>,
    }
}

impl Vertex for AddMultiF32<'_> {
    fn compute(&mut self, worker: Worker) -> Result<(), VertexError> {
        const NAME: &str = "AddMulti<float>";
        same_len(NAME, "in2", self.in2.len(), "in1", self.in1.len())?;
        same_len(NAME, "out", self.out.len(), "in1", self.in1.len())?;
        let r = worker.split(self.out.len());
        for ((o, &x), &y) in self.out[r.clone()]
            .iter_mut()
            .zip(&self.in1[r.clone()])
            .zip(&self.in2[r])
        {
            *o = x + y;
        }
        Ok(())
    }

    /// One worker's share (`BinaryOp1D`'s worker): `29 + ceil(ceil(n / workers) / 2) · 3`.
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let l = cycles::binary_multi_worker(BinaryOp::Add, f32::DTYPE);
        Some(l.worker_share(ctx.elements(Self::out), ctx.workers))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Worker = Worker { id: 0, count: 1 };

    #[test]
    fn binary_ops_and_length_checks() {
        let mut out = [0u32; 3];
        vertex!(SubU32 {
            in1: &[1, 5, 7],
            in2: &[2, 3, 7],
            out: &mut out,
        })
        .compute(W)
        .unwrap();
        assert_eq!(out, [u32::MAX, 2, 0]);

        let e = vertex!(AddF32 {
            in1: &[1.0, 2.0],
            in2: &[1.0],
            out: &mut [0.0; 2],
        })
        .compute(W)
        .unwrap_err();
        assert!(e.0.contains("Add<float>") && e.0.contains("'in2'"), "{e}");

        let e = vertex!(AddF32 {
            in1: &[1.0, 2.0],
            in2: &[1.0, 2.0],
            out: &mut [0.0; 3],
        })
        .compute(W)
        .unwrap_err();
        assert!(e.0.contains("'out'"), "{e}");
    }

    #[test]
    fn in_place() {
        let mut a = [1, -2, 3];
        vertex!(MaxInPlaceI32 {
            a: &mut a,
            b: &[0, 0, 4],
        })
        .compute(W)
        .unwrap();
        assert_eq!(a, [1, 0, 4]);
        let e = vertex!(DivInPlaceF32 {
            a: &mut [1.0],
            b: &[],
        })
        .compute(W)
        .unwrap_err();
        assert!(
            e.0.contains("DivInPlace<float>") && e.0.contains("'b'"),
            "{e}"
        );
    }

    #[test]
    fn multi_matches_single() {
        let x: Vec<f32> = (0..23).map(|i| i as f32 * 0.37).collect();
        let y: Vec<f32> = (0..23).map(|i| 1.0 / (i as f32 + 1.0)).collect();
        let mut single = vec![0.0; 23];
        vertex!(AddF32 {
            in1: &x,
            in2: &y,
            out: &mut single,
        })
        .compute(W)
        .unwrap();
        let mut multi = vec![0.0; 23];
        for id in 0..6 {
            vertex!(AddMultiF32 {
                in1: &x,
                in2: &y,
                out: &mut multi,
            })
            .compute(Worker { id, count: 6 })
            .unwrap();
        }
        assert_eq!(single, multi);
    }
}
