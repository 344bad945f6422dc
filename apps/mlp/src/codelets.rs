//! The training vertices.
//!
//! | codelet | fields | does |
//! |---|---|---|
//! | `mlp::FwdBwd` | `params`, `x` (`n × d`), `y` (`n`) → `grad` (P), `stats` (2) | `grad = Σ` of the samples' gradients in order, `stats = [Σ loss, Σ correct]` ([`crate::model::sample_grad`]) |
//! | `mlp::Accumulate` | `parts` (list) → `acc` (in/out) | `acc[i] = acc[i] + parts[0][i] + parts[1][i] + …`, left to right |
//! | `mlp::Sgd` | `params` (in/out), `grad` (in/out), `scale` | `params[i] −= scale · grad[i]`, then `grad[i] = 0` |
//!
//! Cycle estimates: one multiply-add per cycle on one worker (scalar f32 code, not the AMP),
//! `FwdBwd` about `2·h·d + 4·c·h + 20·c` per sample plus the vertex overhead.

use poplar::codelet::*;

use crate::model::{sample_grad, scratch_len, Shape};

poplar::codelet! {
    /// `mlp::FwdBwd`: the gradient of a block of samples.
    pub struct FwdBwd as "mlp::FwdBwd" {
        params: Input<Vector<f32>>,
        x: Input<Vector<f32>>,
        y: Input<Vector<i32>>,
        grad: Output<Vector<f32>>,
        stats: Output<Vector<f32>>,
        inputs: State<u32>,
        hidden: State<u32>,
        classes: State<u32>,
    }
}

impl FwdBwd<'_> {
    fn shape(&self) -> Shape {
        Shape {
            inputs: self.inputs as usize,
            hidden: self.hidden as usize,
            classes: self.classes as usize,
        }
    }
}

impl Vertex for FwdBwd<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        let shape = self.shape();
        let n = self.y.len();
        if self.params.len() != shape.params()
            || self.grad.len() != shape.params()
            || self.x.len() != n * shape.inputs
            || self.stats.len() != 2
        {
            return Err(VertexError::new(format!(
                "mlp::FwdBwd: {} params, {} grad, {} x for {n} samples of {} inputs, {} stats",
                self.params.len(),
                self.grad.len(),
                self.x.len(),
                shape.inputs,
                self.stats.len()
            )));
        }
        self.grad.fill(0.0);
        let mut scratch = vec![0f32; scratch_len(shape)];
        let (mut loss, mut right) = (0f32, 0f32);
        for s in 0..n {
            let y = self.y[s];
            if y < 0 || y as usize >= shape.classes {
                return Err(VertexError::new(format!(
                    "mlp::FwdBwd: label {y} of sample {s} is not a class"
                )));
            }
            let x = &self.x[s * shape.inputs..(s + 1) * shape.inputs];
            let (l, ok) = sample_grad(shape, self.params, x, y as usize, self.grad, &mut scratch);
            loss += l;
            right += f32::from(u8::from(ok));
        }
        self.stats[0] = loss;
        self.stats[1] = right;
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let n = ctx.elements(Self::y);
        let p = ctx.elements(Self::grad);
        // Without the state at hand, the per-sample work is bounded by the parameter count:
        // forward and backward touch every weight about three times.
        Some(codelets::cycles::OVERHEAD + p + n * 3 * p)
    }
}

poplar::codelet! {
    /// `mlp::Accumulate`: `acc[i] += parts[0][i] + parts[1][i] + …`.
    pub struct Accumulate as "mlp::Accumulate" {
        parts: Input<VectorList<f32>>,
        acc: InOut<Vector<f32>>,
    }
}

impl Vertex for Accumulate<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        let n = self.acc.len();
        for k in 0..self.parts.len() {
            if self.parts.get(k).len() != n {
                return Err(VertexError::new(format!(
                    "mlp::Accumulate: part {k} has {} elements, acc {n}",
                    self.parts.get(k).len()
                )));
            }
        }
        for i in 0..n {
            let mut s = self.acc[i];
            for k in 0..self.parts.len() {
                s += self.parts.get(k)[i];
            }
            self.acc[i] = s;
        }
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let n = ctx.elements(Self::acc);
        let parts = u64::from(ctx.sizes.get(Self::parts).copied().unwrap_or(1));
        Some(codelets::cycles::OVERHEAD + n * parts / 2)
    }
}

poplar::codelet! {
    /// `mlp::Sgd`: `params -= scale · grad`, then `grad = 0`.
    pub struct Sgd as "mlp::Sgd" {
        params: InOut<Vector<f32>>,
        grad: InOut<Vector<f32>>,
        scale: State<f32>,
    }
}

impl Vertex for Sgd<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        if self.params.len() != self.grad.len() {
            return Err(VertexError::new(
                "mlp::Sgd: params and grad differ in length",
            ));
        }
        let s = self.scale;
        for (p, g) in self.params.iter_mut().zip(self.grad.iter_mut()) {
            *p -= s * *g;
            *g = 0.0;
        }
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(codelets::cycles::OVERHEAD + ctx.elements(Self::params))
    }
}
