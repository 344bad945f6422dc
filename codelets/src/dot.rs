//! Dot products and a dense matrix-vector block.
//!
//! - `Dot<float>`, `Dot<int>`: `a`, `b`: `Input<Vector<T>>` of equal length → `out:
//!   Output<T>` = `sum_i a[i] * b[i]`, accumulated left to right (integers wrap); `Dot<half>`
//!   accumulates in f32 into `out: Output<f32>`.
//! - `MatVec<float>`: `matrix: Input<Vector<f32>>` (a `rows × cols` block, row-major), `vec:
//!   Input<Vector<f32>>` (`cols` elements) → `out: Output<Vector<f32>>` (`rows` elements),
//!   `out[r] = Dot(matrix[r, ..], vec)`. `matrix` must have `out.len() * vec.len()` elements.
//!
//! Cycle estimates: poplibs has no dot-product vertex (poplin's matrix products use the AMP
//! vertices); [`cycles::dot`] costs one as the reduction estimator's single-input sum with
//! twice the loads, and [`cycles::matvec`] one such dot per row.

use poplar_core::codelet::*;
use poplar_core::dtype::Element;
use poplar_core::f16;

use crate::arith::Arith;
use crate::cycles;
use crate::util::same_len;

macro_rules! dot_codelets {
    ($($name:ident as $cname:literal: $t:ty, |$acc:ident, $x:ident, $y:ident| $body:expr;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: `out = sum_i a[i] * b[i]`.")]
            pub struct $name as $cname {
                a: Input<Vector<$t>>,
                b: Input<Vector<$t>>,
                out: Output<<$t as Arith>::Wide>,
            }
        }

        impl $name<'_> {
            /// The dot product as the vertex computes it (left to right; for `half`, in f32,
            /// where each product of two f16 values is exact).
            pub fn dot(a: &[$t], b: &[$t]) -> <$t as Arith>::Wide {
                a.iter().zip(b).fold(Default::default(), |$acc, (&x, &y)| {
                    let ($x, $y) = (x.widen(), y.widen());
                    $body
                })
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                same_len($cname, "b", self.b.len(), "a", self.a.len())?;
                *self.out = Self::dot(self.a, self.b);
                Ok(())
            }

            /// No poplibs estimator: see [`cycles::dot`] (`17 + 4 · ceil(n / 4)` for `float`).
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::dot(<$t as Element>::DTYPE).cycles(ctx.elements(Self::a)))
            }
        }
    )*};
}

dot_codelets! {
    DotF32 as "Dot<float>": f32, |s, x, y| s + x * y;
    DotI32 as "Dot<int>": i32, |s, x, y| s.wrapping_add(x.wrapping_mul(y));
    DotF16 as "Dot<half>": f16, |s, x, y| s + x * y;
}

poplar_core::codelet! {
    /// `MatVec<float>`: `out[r] = sum_c matrix[r * cols + c] * vec[c]`.
    pub struct MatVecF32 as "MatVec<float>" {
        matrix: Input<Vector<f32>>,
        vec: Input<Vector<f32>>,
        out: Output<Vector<f32>>,
    }
}

impl Vertex for MatVecF32<'_> {
    fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
        let (rows, cols) = (self.out.len(), self.vec.len());
        if self.matrix.len() != rows * cols {
            return Err(VertexError::new(format!(
                "MatVec<float>: field 'matrix' has {} elements but 'out' x 'vec' is {rows} x {cols}",
                self.matrix.len()
            )));
        }
        if cols == 0 {
            self.out.fill(0.0);
            return Ok(());
        }
        for (o, row) in self.out.iter_mut().zip(self.matrix.chunks_exact(cols)) {
            *o = DotF32::dot(row, self.vec);
        }
        Ok(())
    }

    /// No poplibs estimator: `17 + rows · (8 + 4 · ceil(cols / 4))` ([`cycles::matvec`]).
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(cycles::matvec(
            ctx.elements(Self::out),
            ctx.elements(Self::vec),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Worker = Worker { id: 0, count: 1 };

    #[test]
    fn dot_and_matvec() {
        let mut out = 0;
        vertex!(DotI32 {
            a: &[1, 2, 3],
            b: &[4, 5, 6],
            out: &mut out,
        })
        .compute(W)
        .unwrap();
        assert_eq!(out, 32);
        let mut out = [0.0; 2];
        vertex!(MatVecF32 {
            matrix: &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            vec: &[1.0, 0.0, -1.0],
            out: &mut out,
        })
        .compute(W)
        .unwrap();
        assert_eq!(out, [-2.0, -2.0]);
        let e = vertex!(MatVecF32 {
            matrix: &[1.0, 2.0],
            vec: &[1.0, 0.0, -1.0],
            out: &mut out,
        })
        .compute(W)
        .unwrap_err();
        assert!(e.0.contains("'matrix'"), "{e}");
    }
}
