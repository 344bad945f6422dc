//! The training vertices. All are multi-worker: the six worker contexts of a tile share each
//! vertex's work, every element of every output written by one worker, with the same f32
//! operations in the same order as [`crate::model::sample_grad`] (so the device's results do
//! not depend on the split).
//!
//! A micro-batch's `n` samples on a tile take three vertices, in three compute sets (a
//! worker cannot wait for another inside a vertex, and the logits need every hidden unit):
//!
//! | codelet | fields | does | split over the workers |
//! |---|---|---|---|
//! | `mlp::Hidden` | `w1` (`h × d`), `b1` (`h`), `x` (`n × d`) → `act` (`n × h`) | `act[s, j] = max(b1[j] + Σ_i W1[j, i]·x[s, i], 0)` ([`crate::model::hidden_unit`]) | the `n·h` activations |
//! | `mlp::Logits` | `w2` (`c × h`), `b2` (`c`), `act` → `logits` (`n × c`) | `logits[s, k] = b2[k] + Σ_j W2[k, j]·act[s, j]` ([`crate::model::logit`]) | the `n·c` logits |
//! | `mlp::Backward` | `w2`, `x`, `y` (`n`), `act`, `logits` → `grad` (P), `stats` (2) | `grad = Σ` of the samples' gradients in sample order, `stats = [Σ loss, Σ correct]` | the hidden units (each worker its units' rows of `W1`, `b1` and columns of `W2`; worker 0 also `b2` and `stats`) |
//! | `mlp::Accumulate` | `parts` (list) → `acc` (in/out) | `acc[i] = acc[i] + parts[0][i] + parts[1][i] + …`, left to right | the elements |
//! | `mlp::Sgd` | `params` (in/out), `grad` (in/out), `scale` | `params[i] −= scale · grad[i]`, then `grad[i] = 0` | the elements |
//! | `mlp::Momentum` | `params`, `grad`, `velocity` (in/out), `momentum`, `lr`, `scale` | `v = μ·v + scale·g`, `params −= lr·v`, `g = 0` ([`crate::optim`]) | the elements |
//! | `mlp::AdamStep` | `powers` (in/out, 2), `beta1`, `beta2` | `powers = [β₁ᵗ, β₂ᵗ]`, one step on | single worker |
//! | `mlp::Adam` | `params`, `grad`, `m`, `v` (in/out), `powers` (2), `lr`, `scale`, `beta1`, `beta2`, `eps` | [`crate::optim::adam_element`], `g = 0` | the elements |
//!
//! **Cycle estimates** (one worker's share, worker cycles; `codelets::cycles`): poplibs has no
//! counterpart of these vertices, so they are built from the standard library's estimates of
//! the same loops, not measured:
//!
//! - `Hidden`: a `MatVec<float>` over its share of the activations as rows of `d` columns,
//!   plus 1 cycle per ReLU: `17 + r·(8 + 4·⌈d/4⌉) + r`, `r = ⌈n·h/6⌉`;
//! - `Logits`: `MatVec<float>` over `⌈n·c/6⌉` rows of `h` columns;
//! - `Backward`: per sample the softmax, `2·c + 6·⌈c/2⌉ + 10·⌈c/2⌉` (max and sum; exp at
//!   `UnaryOp2D`'s 6 per 2 floats; divide at `BinaryOp2D`'s 10 per 2), and per sample and
//!   hidden unit of the share (`⌈h/6⌉`, every unit counted active): 8 cycles of row overhead,
//!   the `W2` column `3·c` (`ScaledAdd2D`'s 3 per vector, strided so one element a vector),
//!   `dj` `2·c` (the dot estimate's 4 per vector of 2, strided), the bias 1, the `W1` row
//!   `3·⌈d/2⌉` (`ScaledAdd2D`); worker 0 adds `b2` (`c`) and the loss (20) per sample; 17 of
//!   vertex overhead;
//! - `Accumulate`: what popops' `addInPlace` of each part in turn would cost (the same
//!   additions in the same order), in one vertex: `BinaryOp1DInPlace`'s worker overhead (58)
//!   and 3 cycles per 2 floats per part over the worker's `⌈P/6⌉` elements (poplibs' generic
//!   `Reduce`, `codelets::cycles::partials`, fetches each part's pointer for every 4 outputs
//!   and would cost several times as much);
//! - `Sgd`: `ScaledAddSupervisor`'s worker over `⌈P/6⌉` elements plus `Fill`'s 1 cycle per 2
//!   floats to zero the gradient.
//! - `Momentum`: two `ScaledAdd` loops over the worker's `⌈P/6⌉` elements (the velocity, then
//!   the parameters) and the zeroing; `Adam`: per element pair what the standard loops cost for
//!   the same operations — two `ScaledAdd`s (`m`, and `v` after a square), two divides (the
//!   bias corrections), a square root, an add of ε, a divide and a `ScaledAdd` for the
//!   parameter — and the zeroing; `AdamStep`: 20 (assumed). Not measured.

use codelets::cycles;
use codelets::ops::{BinaryOp, UnaryOp};
use poplar::codelet::*;
use poplar::DType;

use crate::model::{add_unit_grad, best_class, dlogit, hidden_unit, logit, loss, softmax, Shape};

/// `n / d`, 0 when `d` is 0.
fn per(n: u64, d: u64) -> u64 {
    n.checked_div(d).unwrap_or(0)
}

/// A worker's share of `n` rows (`⌈n / workers⌉`).
fn share_of(n: u64, workers: u32) -> u64 {
    n.div_ceil(u64::from(workers.max(1)))
}

poplar::codelet! {
    /// `mlp::Hidden`: the hidden layer's activations of a block of samples.
    pub struct Hidden as "mlp::Hidden", multi_worker {
        w1: Input<Vector<f32>>,
        b1: Input<Vector<f32>>,
        x: Input<Vector<f32>>,
        act: Output<Vector<f32>>,
    }
}

impl Vertex for Hidden<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let h = self.b1.len();
        let d = per(self.w1.len() as u64, h as u64) as usize;
        let n = per(self.act.len() as u64, h as u64) as usize;
        if self.w1.len() != h * d || self.act.len() != n * h || self.x.len() != n * d {
            return Err(VertexError::new(format!(
                "mlp::Hidden: w1 {}, b1 {h}, x {}, act {} do not make h × d, n × d, n × h",
                self.w1.len(),
                self.x.len(),
                self.act.len()
            )));
        }
        for q in w.split(n * h) {
            let (s, j) = (q / h, q % h);
            self.act[q] = hidden_unit(
                &self.w1[j * d..(j + 1) * d],
                self.b1[j],
                &self.x[s * d..(s + 1) * d],
            );
        }
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let h = ctx.elements(Self::b1);
        let d = per(ctx.elements(Self::w1), h);
        let rows = share_of(ctx.elements(Self::act), ctx.workers);
        Some(cycles::matvec(rows, d) + rows)
    }
}

poplar::codelet! {
    /// `mlp::Logits`: the output layer's logits of a block of samples.
    pub struct Logits as "mlp::Logits", multi_worker {
        w2: Input<Vector<f32>>,
        b2: Input<Vector<f32>>,
        act: Input<Vector<f32>>,
        logits: Output<Vector<f32>>,
    }
}

impl Vertex for Logits<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let c = self.b2.len();
        let h = per(self.w2.len() as u64, c as u64) as usize;
        let n = per(self.logits.len() as u64, c as u64) as usize;
        if self.w2.len() != c * h || self.logits.len() != n * c || self.act.len() != n * h {
            return Err(VertexError::new(format!(
                "mlp::Logits: w2 {}, b2 {c}, act {}, logits {} do not make c × h, n × h, n × c",
                self.w2.len(),
                self.act.len(),
                self.logits.len()
            )));
        }
        for q in w.split(n * c) {
            let (s, k) = (q / c, q % c);
            self.logits[q] = logit(
                &self.w2[k * h..(k + 1) * h],
                self.b2[k],
                &self.act[s * h..(s + 1) * h],
            );
        }
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let c = ctx.elements(Self::b2);
        let h = per(ctx.elements(Self::w2), c);
        let rows = share_of(ctx.elements(Self::logits), ctx.workers);
        Some(cycles::matvec(rows, h))
    }
}

poplar::codelet! {
    /// `mlp::Backward`: the summed gradient and loss statistics of a block of samples.
    pub struct Backward as "mlp::Backward", multi_worker {
        w2: Input<Vector<f32>>,
        x: Input<Vector<f32>>,
        y: Input<Vector<i32>>,
        act: Input<Vector<f32>>,
        logits: Input<Vector<f32>>,
        grad: Output<Vector<f32>>,
        stats: Output<Vector<f32>>,
    }
}

impl Backward<'_> {
    /// The layer sizes and the sample count, from the field sizes (checked).
    fn shape(&self) -> Result<(Shape, usize), VertexError> {
        let n = self.y.len();
        let h = per(self.act.len() as u64, n as u64) as usize;
        let c = per(self.logits.len() as u64, n as u64) as usize;
        let d = per(self.x.len() as u64, n as u64) as usize;
        let shape = Shape {
            inputs: d,
            hidden: h,
            classes: c,
        };
        if n == 0
            || self.act.len() != n * h
            || self.logits.len() != n * c
            || self.x.len() != n * d
            || self.w2.len() != c * h
            || self.grad.len() != shape.params()
            || self.stats.len() != 2
        {
            return Err(VertexError::new(format!(
                "mlp::Backward: y {n}, x {}, act {}, logits {}, w2 {}, grad {}, stats {} do not \
                 make n samples of d inputs, h hidden units and c classes",
                self.x.len(),
                self.act.len(),
                self.logits.len(),
                self.w2.len(),
                self.grad.len(),
                self.stats.len()
            )));
        }
        Ok((shape, n))
    }
}

impl Vertex for Backward<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let (shape, n) = self.shape()?;
        let (d, h, c) = (shape.inputs, shape.hidden, shape.classes);
        let (b1, w2_at, b2) = shape.offsets();
        let units = w.split(h);
        let first = w.id == 0;
        // This worker's elements of the gradient start at 0.
        for j in units.clone() {
            self.grad[j * d..(j + 1) * d].fill(0.0);
            self.grad[b1 + j] = 0.0;
            for k in 0..c {
                self.grad[w2_at + k * h + j] = 0.0;
            }
        }
        if first {
            self.grad[b2..b2 + c].fill(0.0);
        }
        let mut prob = vec![0f32; c];
        let (mut total, mut right) = (0f32, 0f32);
        for s in 0..n {
            let y = self.y[s];
            if y < 0 || y as usize >= c {
                return Err(VertexError::new(format!(
                    "mlp::Backward: label {y} of sample {s} is not a class"
                )));
            }
            let y = y as usize;
            let logits = &self.logits[s * c..(s + 1) * c];
            softmax(logits, &mut prob);
            let (act, x) = (&self.act[s * h..(s + 1) * h], &self.x[s * d..(s + 1) * d]);
            for j in units.clone() {
                add_unit_grad(shape, self.w2, &prob, y, act[j], x, j, self.grad);
            }
            if first {
                for k in 0..c {
                    self.grad[b2 + k] += dlogit(&prob, k, y);
                }
                total += loss(&prob, y);
                right += f32::from(u8::from(best_class(logits) == y));
            }
        }
        if first {
            self.stats[0] = total;
            self.stats[1] = right;
        }
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let n = ctx.elements(Self::y);
        let h = per(ctx.elements(Self::act), n);
        let c = per(ctx.elements(Self::logits), n);
        let d = per(ctx.elements(Self::x), n);
        let units = share_of(h, ctx.workers);
        // Max and sum 1 cycle per class; exp and divide at their loops' rates.
        let (exp, div) = (
            cycles::unary(UnaryOp::Exp, DType::F32),
            cycles::binary(BinaryOp::Div, DType::F32, false),
        );
        let softmax = 2 * c + exp.cycles(c) - exp.overhead + div.cycles(c) - div.overhead;
        let unit = cycles::MATVEC_ROW_OVERHEAD + 3 * c + 2 * c + 1 + 3 * d.div_ceil(2);
        let first = c + 20;
        Some(17 + n * (softmax + units * unit + first))
    }
}

poplar::codelet! {
    /// `mlp::Accumulate`: `acc[i] += parts[0][i] + parts[1][i] + …`.
    pub struct Accumulate as "mlp::Accumulate", multi_worker {
        parts: Input<VectorList<f32>>,
        acc: InOut<Vector<f32>>,
    }
}

impl Vertex for Accumulate<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let n = self.acc.len();
        for k in 0..self.parts.len() {
            if self.parts.get(k).len() != n {
                return Err(VertexError::new(format!(
                    "mlp::Accumulate: part {k} has {} elements, acc {n}",
                    self.parts.get(k).len()
                )));
            }
        }
        for i in w.split(n) {
            let mut s = self.acc[i];
            for k in 0..self.parts.len() {
                s += self.parts.get(k)[i];
            }
            self.acc[i] = s;
        }
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let len = share_of(ctx.elements(Self::acc), ctx.workers);
        let parts = u64::from(ctx.sizes.get(Self::parts).copied().unwrap_or(1));
        let add = cycles::binary(BinaryOp::Add, DType::F32, true);
        Some(58 + parts * (add.cycles(len) - add.overhead))
    }
}

poplar::codelet! {
    /// `mlp::Sgd`: `params -= scale · grad`, then `grad = 0`.
    pub struct Sgd as "mlp::Sgd", multi_worker {
        params: InOut<Vector<f32>>,
        grad: InOut<Vector<f32>>,
        scale: State<f32>,
    }
}

impl Vertex for Sgd<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        if self.params.len() != self.grad.len() {
            return Err(VertexError::new(
                "mlp::Sgd: params and grad differ in length",
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

poplar::codelet! {
    /// `mlp::Momentum`: `velocity = momentum·velocity + scale·grad`, `params -= lr·velocity`,
    /// then `grad = 0`.
    pub struct Momentum as "mlp::Momentum", multi_worker {
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
                "mlp::Momentum: params, grad and velocity differ in length",
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

poplar::codelet! {
    /// `mlp::AdamStep`: `powers = [powers[0]·beta1, powers[1]·beta2]` (Adam's `β₁ᵗ`, `β₂ᵗ`).
    pub struct AdamStep as "mlp::AdamStep" {
        powers: InOut<Vector<f32>>,
        beta1: State<f32>,
        beta2: State<f32>,
    }
}

impl Vertex for AdamStep<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        if self.powers.len() != 2 {
            return Err(VertexError::new("mlp::AdamStep: powers holds 2 values"));
        }
        self.powers[0] *= self.beta1;
        self.powers[1] *= self.beta2;
        Ok(())
    }

    fn cycles(_ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(20)
    }
}

poplar::codelet! {
    /// `mlp::Adam`: bias-corrected Adam on each element ([`crate::optim::adam_element`]), then
    /// `grad = 0`.
    pub struct Adam as "mlp::Adam", multi_worker {
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
                "mlp::Adam: params, grad, m and v differ in length, or powers is not 2 values",
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx<'a>(sizes: &'a [u32], totals: &'a [u64]) -> CycleCtx<'a> {
        CycleCtx {
            sizes,
            total_elements: totals,
            workers: 6,
        }
    }

    #[test]
    fn estimates_by_hand() {
        // Hidden: 4 samples × 16 units of 8 inputs: 64 activations, 11 per worker, each a
        // MatVec row of 8 columns: 17 + 11·(8 + 4·2) + 11 ReLUs.
        let s = [128, 16, 32, 64];
        let t = s.map(u64::from);
        assert_eq!(
            <Hidden as Vertex>::cycles(&ctx(&s, &t)),
            Some(17 + 176 + 11)
        );
        // Logits: 4 samples × 4 classes over 16 units: 3 rows per worker.
        let s = [64, 4, 64, 16];
        let t = s.map(u64::from);
        assert_eq!(
            <Logits as Vertex>::cycles(&ctx(&s, &t)),
            Some(17 + 3 * (8 + 16))
        );
        // Backward: 2 samples, d 8, h 16, c 4: 3 units per worker; softmax 8 + 12 + 20.
        let s = [64, 16, 2, 32, 8, 8 * 16 + 16 + 4 * 16 + 4, 2];
        let t = s.map(u64::from);
        let unit = 8 + 12 + 8 + 1 + 12;
        assert_eq!(
            <Backward as Vertex>::cycles(&ctx(&s, &t)),
            Some(17 + 2 * (40 + 3 * unit + 24))
        );
        // Accumulate: 3 parts of 100 elements, 17 per worker: 58 + 3 · 9 vectors · 3.
        let s = [3, 100];
        let t = [300, 100];
        assert_eq!(<Accumulate as Vertex>::cycles(&ctx(&s, &t)), Some(58 + 81));
        // Sgd: 100 parameters, 17 per worker: 22 + 3·9, then 9 to zero the gradient.
        let s = [100, 100, 1];
        let t = s.map(u64::from);
        assert_eq!(<Sgd as Vertex>::cycles(&ctx(&s, &t)), Some(22 + 27 + 9));
    }
}
