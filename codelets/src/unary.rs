//! Unary element-wise codelets: `out[i] = f(input[i])`.
//!
//! | name | `f(x)` | cost per vector |
//! |---|---|---|
//! | `Neg<float>`, `Neg<int>` | `-x` (wrapping for `int`) | 1 |
//! | `Abs<float>`, `Abs<int>` | `\|x\|` (wrapping for `int`: `\|i32::MIN\| = i32::MIN`) | 1 |
//! | `Square<float>`, `Square<int>`, `Square<unsigned>` | `x * x` (wrapping for integers) | 1 |
//! | `Sqrt<float>` | `x.sqrt()` | 8 per element |
//! | `Exp<float>` | `x.exp()` | 10 per element |
//!
//! Fields: `input: Input<Vector<T>>`, `out: Output<Vector<T>>` of equal length.

use poplar::codelet::*;
use poplar::Element;

use crate::cycles;
use crate::util::same_len;

macro_rules! unary_codelets {
    ($($name:ident as $cname:literal: $t:ty, |$x:ident| $body:expr, cost $cost:expr;)*) => {$(
        poplar::codelet! {
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
                for (o, &x) in self.out.iter_mut().zip(self.input.iter()) {
                    *o = Self::op(x);
                }
                Ok(())
            }

            /// `OVERHEAD + cost * ceil(n / width)`.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::elementwise(ctx.elements(Self::out), <$t as Element>::DTYPE, $cost))
            }
        }
    )*};
}

unary_codelets! {
    NegF32 as "Neg<float>": f32, |x| -x, cost 1;
    NegI32 as "Neg<int>": i32, |x| x.wrapping_neg(), cost 1;
    AbsF32 as "Abs<float>": f32, |x| x.abs(), cost 1;
    AbsI32 as "Abs<int>": i32, |x| x.wrapping_abs(), cost 1;
    SquareF32 as "Square<float>": f32, |x| x * x, cost 1;
    SquareI32 as "Square<int>": i32, |x| x.wrapping_mul(x), cost 1;
    SquareU32 as "Square<unsigned>": u32, |x| x.wrapping_mul(x), cost 1;
    // Transcendentals are not vectorised: cost is per element, so width 2 is undone by 2x.
    SqrtF32 as "Sqrt<float>": f32, |x| x.sqrt(), cost 16;
    ExpF32 as "Exp<float>": f32, |x| x.exp(), cost 20;
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
