//! The optimizers' vertices (`crate::optim` states the arithmetic). Each reads the summed
//! gradient, updates its elements and zeroes the gradient:
//!
//! | codelet | fields | does | split over the workers |
//! |---|---|---|---|
//! | `popnn::Sgd` | `params` (in/out), `grad` (in/out), `scale` | `params[i] −= scale · grad[i]`, then `grad[i] = 0` | the elements |
//! | `popnn::Momentum` | `params`, `grad`, `velocity` (in/out), `momentum`, `lr`, `scale` | `v = μ·v + scale·g`, `params −= lr·v`, `g = 0` | the elements |
//! | `popnn::AdamStep` | `powers` (in/out, 2), `beta1`, `beta2` | `powers = [β₁ᵗ, β₂ᵗ]`, one step on | single worker |
//! | `popnn::Adam` | `params`, `grad`, `m`, `v` (in/out), `powers` (2), `lr`, `scale`, `beta1`, `beta2`, `eps` | [`crate::optim::adam_element`], `g = 0` | the elements |
//!
//! **Cycle estimates** (one worker's share of `n` elements, `⌈n/6⌉`; not measured):
//! - `Sgd`: `ScaledAddSupervisor`'s worker plus `Fill`'s 1 cycle per 2 floats to zero the
//!   gradient;
//! - `Momentum`: two `ScaledAdd` loops (the velocity, then the parameters) and the zeroing;
//! - `Adam`: per element pair what the standard loops cost for the same operations — two
//!   `ScaledAdd`s (`m`, and `v` after a square), two divides (the bias corrections), a square
//!   root, an add of ε, a divide and a `ScaledAdd` for the parameter — and the zeroing;
//! - `AdamStep`: 20 (assumed).

use codelets::cycles;
use codelets::family::{BinaryOp, UnaryOp};
use poplar_core::codelet::*;
use poplar_core::dtype::DType;

use super::share_of;

poplar_core::codelet! {
    /// `popnn::Sgd`: `params -= scale · grad`, then `grad = 0`.
    pub struct Sgd as "popnn::Sgd", multi_worker {
        params: InOut<Vector<f32>>,
        grad: InOut<Vector<f32>>,
        scale: State<f32>,
    }
}

impl Vertex for Sgd<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        if self.params.len() != self.grad.len() {
            return Err(VertexError::new(
                "popnn::Sgd: params and grad differ in length",
            ));
        }
        let s = self.scale;
        let r = w.split(self.params.len());
        for (p, g) in self.params[r.clone()]
            .iter_mut()
            .zip(self.grad[r].iter_mut())
        {
            *p -= s * *g;
            *g = 0.0;
        }
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let n = ctx.elements(Self::params);
        let zero = share_of(n, ctx.workers).div_ceil(2);
        Some(cycles::SCALED_ADD_MULTI_WORKER.worker_share(n, ctx.workers) + zero)
    }
}

poplar_core::codelet! {
    /// `popnn::Momentum`: `velocity = momentum·velocity + scale·grad`, `params -= lr·velocity`,
    /// then `grad = 0`.
    pub struct Momentum as "popnn::Momentum", multi_worker {
        params: InOut<Vector<f32>>,
        grad: InOut<Vector<f32>>,
        velocity: InOut<Vector<f32>>,
        momentum: State<f32>,
        lr: State<f32>,
        scale: State<f32>,
    }
}

impl Vertex for Momentum<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let n = self.params.len();
        if self.grad.len() != n || self.velocity.len() != n {
            return Err(VertexError::new(
                "popnn::Momentum: params, grad and velocity differ in length",
            ));
        }
        let (mu, lr, s) = (self.momentum, self.lr, self.scale);
        let r = w.split(n);
        for ((p, g), v) in self.params[r.clone()]
            .iter_mut()
            .zip(self.grad[r.clone()].iter_mut())
            .zip(self.velocity[r].iter_mut())
        {
            *v = mu * *v + s * *g;
            *p -= lr * *v;
            *g = 0.0;
        }
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let n = ctx.elements(Self::params);
        let zero = share_of(n, ctx.workers).div_ceil(2);
        Some(2 * cycles::SCALED_ADD_MULTI_WORKER.worker_share(n, ctx.workers) + zero)
    }
}

poplar_core::codelet! {
    /// `popnn::AdamStep`: `powers = [powers[0]·beta1, powers[1]·beta2]` (Adam's `β₁ᵗ`, `β₂ᵗ`).
    pub struct AdamStep as "popnn::AdamStep" {
        powers: InOut<Vector<f32>>,
        beta1: State<f32>,
        beta2: State<f32>,
    }
}

impl Vertex for AdamStep<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        if self.powers.len() != 2 {
            return Err(VertexError::new("popnn::AdamStep: powers holds 2 values"));
        }
        self.powers[0] *= self.beta1;
        self.powers[1] *= self.beta2;
        Ok(())
    }

    fn cycles(_ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(20)
    }
}

poplar_core::codelet! {
    /// `popnn::Adam`: bias-corrected Adam on each element ([`crate::optim::adam_element`]), then
    /// `grad = 0`.
    pub struct Adam as "popnn::Adam", multi_worker {
        params: InOut<Vector<f32>>,
        grad: InOut<Vector<f32>>,
        m: InOut<Vector<f32>>,
        v: InOut<Vector<f32>>,
        powers: Input<Vector<f32>>,
        lr: State<f32>,
        scale: State<f32>,
        beta1: State<f32>,
        beta2: State<f32>,
        eps: State<f32>,
    }
}

impl Vertex for Adam<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let n = self.params.len();
        if self.grad.len() != n || self.m.len() != n || self.v.len() != n || self.powers.len() != 2
        {
            return Err(VertexError::new(
                "popnn::Adam: params, grad, m and v differ in length, or powers is not 2 values",
            ));
        }
        let c = [1.0 - self.powers[0], 1.0 - self.powers[1]];
        let (lr, s, b) = (self.lr, self.scale, [self.beta1, self.beta2, self.eps]);
        let r = w.split(n);
        for (((p, g), m), v) in self.params[r.clone()]
            .iter_mut()
            .zip(self.grad[r.clone()].iter_mut())
            .zip(self.m[r.clone()].iter_mut())
            .zip(self.v[r].iter_mut())
        {
            crate::optim::adam_element(p, s * *g, m, v, lr, b, c);
            *g = 0.0;
        }
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let n = share_of(ctx.elements(Self::params), ctx.workers);
        let f = DType::F32;
        let per = |l: cycles::Loop| l.cycles(n) - l.overhead;
        let sa = cycles::SCALED_ADD_MULTI_WORKER;
        let div = cycles::binary(BinaryOp::Div, f, false);
        let add = cycles::binary(BinaryOp::Add, f, false);
        let sqrt = cycles::unary(UnaryOp::Sqrt, f);
        Some(
            sa.overhead
                + 3 * per(sa)
                + per(cycles::binary(BinaryOp::Mul, f, false))
                + 3 * per(div)
                + per(sqrt)
                + per(add)
                + n.div_ceil(2),
        )
    }
}
