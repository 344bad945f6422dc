//! Unary element-wise codelets: `out[i] = f(input[i])`.
//!
//! | name | `f(x)` |
//! |---|---|
//! | `Neg<float>`, `Neg<int>` | `-x` (wrapping for `int`) |
//! | `Abs<float>`, `Abs<int>` | `\|x\|` (wrapping for `int`: `\|i32::MIN\| = i32::MIN`) |
//! | `Square<float>`, `Square<int>`, `Square<unsigned>` | `x * x` (wrapping for integers) |
//! | `Sqrt<float>` | `x.sqrt()` |
//! | `Exp<float>` | `x.exp()` |
//!
//! The loops run at the host's vector width (`poplar_core::isa_dispatch!`), the same bits at every
//! level (`Exp<float>` calls libm, which does not vectorise; glibc picks its code by CPU, not
//! by level).
//!
//! Fields: `input: Input<Vector<T>>`, `out: Output<Vector<T>>` of equal length. Cycle
//! estimates: poplibs' `UnaryOp2D`, see [`cycles::unary`].

use poplar_core::codelet::*;
use poplar_core::dtype::Element;

use crate::cycles;
use crate::family::UnaryOp;
use crate::util::same_len;

macro_rules! unary_codelets {
    ($($name:ident as $cname:literal: $t:ty, |$x:ident| $body:expr, op $op:ident;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: `out[i] = ", stringify!($body), "` with `",
                stringify!($x), " = input[i]`.")]
            pub struct $name as $cname {
                input: Input<Vector<$t>>,
                out: Output<Vector<$t>>,
            }
        }

        impl $name<'_> {
            /// The operation on one element.
            #[inline]
            pub fn op($x: $t) -> $t {
                $body
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                same_len($cname, "out", self.out.len(), "input", self.input.len())?;
                poplar_core::isa_dispatch! {
                    fn kernel(out: &mut [$t], input: &[$t]) {
                        for (o, &x) in out.iter_mut().zip(input) {
                            *o = $name::op(x);
                        }
                    }
                }
                kernel(self.out, self.input);
                Ok(())
            }

            /// `UnaryOp2D`: `20 + ceil(n / width) · cycles per vector`.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let l = cycles::unary(UnaryOp::$op, <$t as Element>::DTYPE);
                Some(l.cycles(ctx.elements(Self::out)))
            }
        }
    )*};
}

unary_codelets! {
    NegF32 as "Neg<float>": f32, |x| -x, op Neg;
    NegI32 as "Neg<int>": i32, |x| x.wrapping_neg(), op Neg;
    AbsF32 as "Abs<float>": f32, |x| x.abs(), op Abs;
    AbsI32 as "Abs<int>": i32, |x| x.wrapping_abs(), op Abs;
    SquareF32 as "Square<float>": f32, |x| x * x, op Square;
    SquareI32 as "Square<int>": i32, |x| x.wrapping_mul(x), op Square;
    SquareU32 as "Square<unsigned>": u32, |x| x.wrapping_mul(x), op Square;
    SqrtF32 as "Sqrt<float>": f32, |x| x.sqrt(), op Sqrt;
    ExpF32 as "Exp<float>": f32, |x| x.exp(), op Exp;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unary_ops() {
        let w = Worker { id: 0, count: 1 };
        let mut out = [0i32; 3];
        vertex!(AbsI32 {
            input: &[-2, 5, i32::MIN],
            out: &mut out,
        })
        .compute(w)
        .unwrap();
        assert_eq!(out, [2, 5, i32::MIN]);
        let mut out = [0f32; 2];
        vertex!(SqrtF32 {
            input: &[4.0, 9.0],
            out: &mut out,
        })
        .compute(w)
        .unwrap();
        assert_eq!(out, [2.0, 3.0]);
        let e = vertex!(ExpF32 {
            input: &[1.0],
            out: &mut out,
        })
        .compute(w)
        .unwrap_err();
        assert!(e.0.contains("Exp<float>") && e.0.contains("'out'"), "{e}");
    }
}
