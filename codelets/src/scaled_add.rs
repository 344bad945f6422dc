//! `ScaledAdd<float>` (`a[i] += scale * b[i]`), its multi-worker variant, and `ScaledAdd<half>`
//! (computed in f32 and rounded once, [`crate::arith`]).
//!
//! Fields: `a: InOut<Vector<T>>`, `b: Input<Vector<T>>` of equal length, `scale:
//! State<f32>`. The product and sum are separate f32 operations (no fused multiply-add), so a
//! host loop `a[i] += scale * b[i]` gives bit-identical results.
//!
//! Cycle estimates: poplibs' `ScaledAdd2D` ([`cycles::scaled_add`]) and `ScaledAddSupervisor`'s
//! worker ([`cycles::SCALED_ADD_MULTI_WORKER`]).

use poplar_core::codelet::*;
use poplar_core::dtype::Element;
use poplar_core::f16;

use crate::arith::Arith;
use crate::cycles;
use crate::util::same_len;

macro_rules! scaled_add_codelets {
    ($($name:ident as $cname:literal: $t:ty;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: `a[i] = a[i] + scale * b[i]`, the product and sum in f32.")]
            pub struct $name as $cname {
                a: InOut<Vector<$t>>,
                b: Input<Vector<$t>>,
                scale: State<f32>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                same_len($cname, "b", self.b.len(), "a", self.a.len())?;
                for (i, (a, &b)) in self.a.iter_mut().zip(self.b.iter()).enumerate() {
                    *a = <$t>::narrow(a.widen() + self.scale * b.widen(), i);
                }
                Ok(())
            }

            /// `ScaledAdd2D`: `30 + 3 · ceil(n / 2)` for `float`, `ceil(n / 4)` for `half`.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::scaled_add(<$t as Element>::DTYPE).cycles(ctx.elements(Self::a)))
            }
        }
    )*};
}

scaled_add_codelets! {
    ScaledAddF32 as "ScaledAdd<float>": f32;
    ScaledAddF16 as "ScaledAdd<half>": f16;
}

poplar_core::codelet! {
    /// `ScaledAddMulti<float>`: `a[i] += scale * b[i]`, each worker taking `worker.split(n)`.
    pub struct ScaledAddMultiF32 as "ScaledAddMulti<float>", multi_worker {
        a: InOut<Vector<f32>>,
        b: Input<Vector<f32>>,
        scale: State<f32>,
    }
}

impl Vertex for ScaledAddMultiF32<'_> {
    fn compute(&mut self, worker: Worker) -> Result<(), VertexError> {
        same_len(
            "ScaledAddMulti<float>",
            "b",
            self.b.len(),
            "a",
            self.a.len(),
        )?;
        let r = worker.split(self.a.len());
        for (a, &b) in self.a[r.clone()].iter_mut().zip(&self.b[r]) {
            *a += self.scale * b;
        }
        Ok(())
    }

    /// One worker's share (`ScaledAddSupervisor`'s worker): `22 + 3 · ceil(ceil(n / workers) / 2)`.
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let n = ctx.elements(Self::a);
        Some(cycles::SCALED_ADD_MULTI_WORKER.worker_share(n, ctx.workers))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_matches_single() {
        let b: Vec<f32> = (0..31).map(|i| (i as f32).sin()).collect();
        let mut single: Vec<f32> = (0..31).map(|i| i as f32 * 0.1).collect();
        let mut multi = single.clone();
        vertex!(ScaledAddF32 {
            a: &mut single,
            b: &b,
            scale: 0.3,
        })
        .compute(Worker { id: 0, count: 1 })
        .unwrap();
        for id in 0..6 {
            vertex!(ScaledAddMultiF32 {
                a: &mut multi,
                b: &b,
                scale: 0.3,
            })
            .compute(Worker { id, count: 6 })
            .unwrap();
        }
        assert_eq!(single, multi);
        let e = vertex!(ScaledAddF32 {
            a: &mut single,
            b: &b[1..],
            scale: 1.0,
        })
        .compute(Worker { id: 0, count: 1 })
        .unwrap_err();
        assert!(
            e.0.contains("ScaledAdd<float>") && e.0.contains("'b'"),
            "{e}"
        );
    }
}
