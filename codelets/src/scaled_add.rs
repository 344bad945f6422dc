//! `ScaledAdd<float>` (`a[i] += scale * b[i]`) and its multi-worker variant.
//!
//! Fields: `a: InOut<Vector<f32>>`, `b: Input<Vector<f32>>` of equal length, `scale:
//! State<f32>`. The product and sum are separate f32 operations (no fused multiply-add), so a
//! host loop `a[i] += scale * b[i]` gives bit-identical results.
//!
//! Cycle estimates: poplibs' `ScaledAdd2D` ([`cycles::scaled_add`]) and `ScaledAddSupervisor`'s
//! worker ([`cycles::SCALED_ADD_MULTI_WORKER`]).

use poplar::codelet::*;
use poplar::Element;

use crate::cycles;
use crate::util::same_len;

poplar::codelet! {
    /// `ScaledAdd<float>`: `a[i] += scale * b[i]`.
    pub struct ScaledAddF32 as "ScaledAdd<float>" {
        a: InOut<Vector<f32>>,
        b: Input<Vector<f32>>,
        scale: State<f32>,
    }
}

impl Vertex for ScaledAddF32<'_> {
    fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
        same_len("ScaledAdd<float>", "b", self.b.len(), "a", self.a.len())?;
        for (a, &b) in self.a.iter_mut().zip(self.b.iter()) {
            *a += self.scale * b;
        }
        Ok(())
    }

    /// `ScaledAdd2D`: `30 + 3 · ceil(n / 2)`.
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(cycles::scaled_add(f32::DTYPE).cycles(ctx.elements(Self::a)))
    }
}

poplar::codelet! {
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
