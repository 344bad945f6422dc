//! Reductions.
//!
//! - `ReduceSum<T>`, `ReduceMax<T>`, `ReduceMin<T>` (`T` = `float`, `int`, `unsigned`):
//!   `input: Input<Vector<T>>` → `out: Output<T>` (a scalar); `ReduceSum<half>` sums in f32
//!   into `out: Output<f32>`. Sums run left to right (integers
//!   wrap); the result of an empty input is the identity (`0`, the lowest value, the highest
//!   value; `-inf`/`+inf` for `float`).
//! - `ReduceSumPartials<T>`, `ReduceMaxPartials<T>`: `partials: Input<VectorList<T>>` →
//!   `out: Output<Vector<T>>` with `out[i] = partials[0][i] op partials[1][i] op …`, in list
//!   order. Every partial must have `out.len()` elements. This is the second stage of a
//!   two-stage reduction (partials computed per tile, then reduced on the output's tile).
//!
//! Cycle estimates: poplibs' reduction estimators, the single-input path for the reductions to
//! one value ([`cycles::reduce`]) and the generic `Reduce` vertex for the partials
//! ([`cycles::partials`]).

use poplar_core::codelet::*;
use poplar_core::dtype::Element;
use poplar_core::f16;

use crate::arith::Arith;
use crate::cycles;
use crate::family::ReduceOp;

macro_rules! reduce_codelets {
    ($($name:ident as $cname:literal: $t:ty, $op:ident, $init:expr, |$acc:ident, $x:ident| $body:expr;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: `out = fold(", stringify!($init), ", |", stringify!($acc),
                ", ", stringify!($x), "| ", stringify!($body), ")` over `input`.")]
            pub struct $name as $cname {
                input: Input<Vector<$t>>,
                out: Output<<$t as Arith>::Wide>,
            }
        }

        impl $name<'_> {
            /// The reduction of `xs`, as the vertex computes it (for `half`, in f32).
            pub fn reduce(xs: &[$t]) -> <$t as Arith>::Wide {
                xs.iter().fold($init, |$acc, &x| {
                    let $x = x.widen();
                    $body
                })
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                *self.out = Self::reduce(self.input);
                Ok(())
            }

            /// `getCyclesEstimateForSingleInput` over the input ([`cycles::reduce`]).
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let l = cycles::reduce(ReduceOp::$op, <$t as Element>::DTYPE);
                Some(l.cycles(ctx.elements(Self::input)))
            }
        }
    )*};
}

reduce_codelets! {
    ReduceSumF32 as "ReduceSum<float>": f32, Sum, 0.0, |a, x| a + x;
    ReduceSumI32 as "ReduceSum<int>": i32, Sum, 0, |a, x| a.wrapping_add(x);
    ReduceSumU32 as "ReduceSum<unsigned>": u32, Sum, 0, |a, x| a.wrapping_add(x);
    ReduceMaxF32 as "ReduceMax<float>": f32, Max, f32::NEG_INFINITY, |a, x| a.max(x);
    ReduceMaxI32 as "ReduceMax<int>": i32, Max, i32::MIN, |a, x| a.max(x);
    ReduceMaxU32 as "ReduceMax<unsigned>": u32, Max, u32::MIN, |a, x| a.max(x);
    ReduceMinF32 as "ReduceMin<float>": f32, Min, f32::INFINITY, |a, x| a.min(x);
    ReduceMinI32 as "ReduceMin<int>": i32, Min, i32::MAX, |a, x| a.min(x);
    ReduceMinU32 as "ReduceMin<unsigned>": u32, Min, u32::MAX, |a, x| a.min(x);
    ReduceSumF16 as "ReduceSum<half>": f16, Sum, 0.0, |a, x| a + x;
}

macro_rules! partials_codelets {
    ($($name:ident as $cname:literal: $t:ty, $op:ident, $init:expr, |$acc:ident, $x:ident| $body:expr;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: `out[i] = fold over k of partials[k][i]` with `|",
                stringify!($acc), ", ", stringify!($x), "| ", stringify!($body), "`.")]
            pub struct $name as $cname {
                partials: Input<VectorList<$t>>,
                out: Output<Vector<$t>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                for (k, p) in self.partials.iter().enumerate() {
                    if p.len() != self.out.len() {
                        return Err(VertexError::new(format!(
                            "{}: field 'partials'[{k}] has {} elements but field 'out' has {}",
                            $cname,
                            p.len(),
                            self.out.len()
                        )));
                    }
                }
                self.out.fill($init);
                for p in self.partials.iter() {
                    for (o, &$x) in self.out.iter_mut().zip(p) {
                        let $acc = *o;
                        *o = $body;
                    }
                }
                Ok(())
            }

            /// `getCyclesEstimateForReduce` ([`cycles::partials`]).
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let parts = u64::from(ctx.sizes.get(Self::partials).copied().unwrap_or(0));
                let len = ctx.elements(Self::out);
                Some(cycles::partials(ReduceOp::$op, <$t as Element>::DTYPE, parts, len))
            }
        }
    )*};
}

partials_codelets! {
    ReduceSumPartialsF32 as "ReduceSumPartials<float>": f32, Sum, 0.0, |a, x| a + x;
    ReduceSumPartialsI32 as "ReduceSumPartials<int>": i32, Sum, 0, |a, x| a.wrapping_add(x);
    ReduceSumPartialsU32 as "ReduceSumPartials<unsigned>": u32, Sum, 0, |a, x| a.wrapping_add(x);
    ReduceMaxPartialsF32 as "ReduceMaxPartials<float>": f32, Max, f32::NEG_INFINITY, |a, x| a.max(x);
    ReduceMaxPartialsI32 as "ReduceMaxPartials<int>": i32, Max, i32::MIN, |a, x| a.max(x);
    ReduceMaxPartialsU32 as "ReduceMaxPartials<unsigned>": u32, Max, u32::MIN, |a, x| a.max(x);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_helpers() {
        assert_eq!(ReduceSumI32::reduce(&[1, 2, 3]), 6);
        assert_eq!(ReduceMaxF32::reduce(&[]), f32::NEG_INFINITY);
        assert_eq!(ReduceMinU32::reduce(&[4, 2, 9]), 2);
        let mut out = 0.0;
        vertex!(ReduceSumF32 {
            input: &[0.5, 0.25],
            out: &mut out,
        })
        .compute(Worker { id: 0, count: 1 })
        .unwrap();
        assert_eq!(out, 0.75);
    }
}
