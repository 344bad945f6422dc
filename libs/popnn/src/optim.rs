//! The optimizers: plain SGD, SGD with momentum and Adam, with f32 state on the device.
//!
//! Each update reads the summed gradient `g` (all replicas, all micro-batches of the step) and
//! first scales it to `ĝ = s·g`, `s = 1` for `Reduction::Sum` and `1/B` for `Reduction::Mean`
//! (`B` the global batch). Then, element by element, in f32:
//!
//! | optimizer | state | update |
//! |---|---|---|
//! | `sgd` | none | `p −= lr·ĝ` (as `p −= k·g` with `k` = `lr` or `lr / B`, one multiply) |
//! | `momentum` (PyTorch's, no dampening) | `v` | `v = μ·v + ĝ`; `p −= lr·v` |
//! | `adam` (Kingma & Ba, bias-corrected) | `m`, `v`, `β₁ᵗ`, `β₂ᵗ` | `m = β₁·m + (1−β₁)·ĝ`; `v = β₂·v + (1−β₂)·ĝ²`; `p −= lr·(m/(1−β₁ᵗ)) / (√(v/(1−β₂ᵗ)) + ε)` |
//!
//! and the gradient accumulator is zeroed. Adam's powers `β₁ᵗ`, `β₂ᵗ` are state too (two f32,
//! multiplied by `β₁`, `β₂` at the start of each update: `popnn::AdamStep`), so the device and
//! [`update_f32`] perform the same f32 operations in the same order. [`Oracle`] is the same
//! algorithm in f64, for the tolerance checks.

use serde::Serialize;

/// An optimizer and its hyper-parameters (the learning rate is given with the update).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Optimizer {
    Sgd,
    Momentum { momentum: f32 },
    Adam { beta1: f32, beta2: f32, eps: f32 },
}

impl Optimizer {
    /// Adam with the paper's defaults: β₁ 0.9, β₂ 0.999, ε 1e-8.
    pub fn adam() -> Optimizer {
        Optimizer::Adam {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        }
    }

    /// f32 state elements per parameter (0, 1 or 2).
    pub fn state_per_param(&self) -> usize {
        match self {
            Optimizer::Sgd => 0,
            Optimizer::Momentum { .. } => 1,
            Optimizer::Adam { .. } => 2,
        }
    }

    /// Its name on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Optimizer::Sgd => "sgd",
            Optimizer::Momentum { .. } => "momentum",
            Optimizer::Adam { .. } => "adam",
        }
    }

    /// Whether its hyper-parameters are usable; otherwise the option at fault, its value and
    /// what is allowed.
    pub fn check(&self) -> Result<(), (&'static str, f32, &'static str)> {
        let unit = |v: f32| v.is_finite() && (0.0..1.0).contains(&v);
        const UNIT: &str = "a finite value in [0, 1)";
        match *self {
            Optimizer::Sgd => Ok(()),
            Optimizer::Momentum { momentum } if !unit(momentum) => {
                Err(("momentum", momentum, UNIT))
            }
            Optimizer::Adam { beta1, .. } if !unit(beta1) => Err(("beta1", beta1, UNIT)),
            Optimizer::Adam { beta2, .. } if !unit(beta2) => Err(("beta2", beta2, UNIT)),
            Optimizer::Adam { eps, .. } if !(eps.is_finite() && eps > 0.0) => {
                Err(("eps", eps, "a finite value above 0"))
            }
            _ => Ok(()),
        }
    }
}

/// The optimizer's state on the host: `a` (momentum's `v`, Adam's `m`), `b` (Adam's `v`), and
/// Adam's powers `[β₁ᵗ, β₂ᵗ]` (1 before the first step).
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    pub a: Vec<f32>,
    pub b: Vec<f32>,
    pub powers: [f32; 2],
}

impl State {
    /// Zero state for `params` parameters.
    pub fn new(opt: Optimizer, params: usize) -> State {
        let n = |k: usize| if opt.state_per_param() > k { params } else { 0 };
        State {
            a: vec![0.0; n(0)],
            b: vec![0.0; n(1)],
            powers: [1.0, 1.0],
        }
    }
}

/// Adam's update of one element, in the order the device computes it.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn adam_element(
    p: &mut f32,
    g: f32,
    m: &mut f32,
    v: &mut f32,
    lr: f32,
    [beta1, beta2, eps]: [f32; 3],
    [c1, c2]: [f32; 2],
) {
    *m = beta1 * *m + (1.0 - beta1) * g;
    *v = beta2 * *v + (1.0 - beta2) * (g * g);
    let mhat = *m / c1;
    let vhat = *v / c2;
    *p -= lr * mhat / (vhat.sqrt() + eps);
}

/// How an update scales: plain SGD's one factor (`lr` or `lr / B`),
/// and the others' gradient scale `s` (1 or `1/B`) and learning rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scales {
    pub sgd: f32,
    pub grad: f32,
    pub lr: f32,
}

/// One update of `p` from the summed gradient `g` (then zeroed): the device's f32 operations
/// in its order.
pub fn update_f32(opt: Optimizer, st: &mut State, p: &mut [f32], g: &mut [f32], k: Scales) {
    let (s, lr) = (k.grad, k.lr);
    match opt {
        Optimizer::Sgd => {
            let scale = k.sgd;
            for (w, gi) in p.iter_mut().zip(g.iter_mut()) {
                *w -= scale * *gi;
                *gi = 0.0;
            }
        }
        Optimizer::Momentum { momentum } => {
            for ((w, gi), v) in p.iter_mut().zip(g.iter_mut()).zip(st.a.iter_mut()) {
                *v = momentum * *v + s * *gi;
                *w -= lr * *v;
                *gi = 0.0;
            }
        }
        Optimizer::Adam { beta1, beta2, eps } => {
            st.powers = [st.powers[0] * beta1, st.powers[1] * beta2];
            let c = [1.0 - st.powers[0], 1.0 - st.powers[1]];
            for (((w, gi), m), v) in p
                .iter_mut()
                .zip(g.iter_mut())
                .zip(st.a.iter_mut())
                .zip(st.b.iter_mut())
            {
                adam_element(w, s * *gi, m, v, lr, [beta1, beta2, eps], c);
                *gi = 0.0;
            }
        }
    }
}

/// The same optimizer in f64: an independent oracle for the tolerance checks.
#[derive(Debug, Clone)]
pub struct Oracle {
    pub opt: Optimizer,
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    pub t: i32,
}

impl Oracle {
    pub fn new(opt: Optimizer, params: usize) -> Oracle {
        Oracle {
            opt,
            a: vec![0.0; params],
            b: vec![0.0; params],
            t: 0,
        }
    }

    /// One update of `p` by the scaled gradient `g_hat` (already `s·g`).
    pub fn update(&mut self, p: &mut [f64], g_hat: &[f64], lr: f64) {
        self.t += 1;
        match self.opt {
            Optimizer::Sgd => p.iter_mut().zip(g_hat).for_each(|(w, g)| *w -= lr * g),
            Optimizer::Momentum { momentum } => {
                let mu = f64::from(momentum);
                for ((w, g), v) in p.iter_mut().zip(g_hat).zip(&mut self.a) {
                    *v = mu * *v + g;
                    *w -= lr * *v;
                }
            }
            Optimizer::Adam { beta1, beta2, eps } => {
                let (b1, b2, e) = (f64::from(beta1), f64::from(beta2), f64::from(eps));
                let (c1, c2) = (1.0 - b1.powi(self.t), 1.0 - b2.powi(self.t));
                for (((w, g), m), v) in p.iter_mut().zip(g_hat).zip(&mut self.a).zip(&mut self.b) {
                    *m = b1 * *m + (1.0 - b1) * g;
                    *v = b2 * *v + (1.0 - b2) * g * g;
                    *w -= lr * (*m / c1) / ((*v / c2).sqrt() + e);
                }
            }
        }
    }
}
