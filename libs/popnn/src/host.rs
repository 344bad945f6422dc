//! The host reference: the model's forward and backward passes in `f64`, sample by sample, an
//! oracle independent of the device's layout (tiles, stages, schedules) and precision. Its
//! gradient is checked against central differences of its own loss (`tests`), and the device's
//! parameters after training steps against [`Reference`] with stated tolerances.

use crate::math::{best_class, cross_entropy, softmax};
use crate::model::{LayerParams, Model};
use crate::optim::{Optimizer, Oracle};

/// One layer's parameters or gradients in f64: `w` (`outputs × inputs`), `b`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layer64 {
    pub w: Vec<f64>,
    pub b: Vec<f64>,
}

impl Layer64 {
    pub fn from_f32(p: &LayerParams) -> Layer64 {
        Layer64 {
            w: p.w.iter().map(|&v| f64::from(v)).collect(),
            b: p.b.iter().map(|&v| f64::from(v)).collect(),
        }
    }

    fn zeros_like(&self) -> Layer64 {
        Layer64 {
            w: vec![0.0; self.w.len()],
            b: vec![0.0; self.b.len()],
        }
    }
}

/// Every layer's pre-activations `z` and outputs `y` of one sample (`y` of the last layer are
/// the logits).
pub fn forward(model: &Model, p: &[Layer64], x: &[f64]) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let (mut zs, mut ys): (Vec<Vec<f64>>, Vec<Vec<f64>>) = (vec![], vec![]);
    for (l, d) in model.layers().iter().enumerate() {
        let input = if l == 0 { x } else { &ys[l - 1] };
        let z: Vec<f64> = (0..d.outputs)
            .map(|j| {
                let row = &p[l].w[j * d.inputs..(j + 1) * d.inputs];
                row.iter()
                    .zip(input)
                    .fold(p[l].b[j], |acc, (w, v)| acc + w * v)
            })
            .collect();
        ys.push(z.iter().map(|&v| d.activation.apply(v)).collect());
        zs.push(z);
    }
    (zs, ys)
}

/// The loss of one sample, whether its prediction is right, and its gradient added to
/// `grads`.
pub fn sample_grad(
    model: &Model,
    p: &[Layer64],
    x: &[f64],
    y: usize,
    grads: &mut [Layer64],
) -> (f64, bool) {
    let (zs, ys) = forward(model, p, x);
    let logits = &ys[ys.len() - 1];
    let mut prob = vec![0.0; logits.len()];
    softmax(logits, &mut prob);
    let mut dy: Vec<f64> = (0..prob.len())
        .map(|k| prob[k] - if k == y { 1.0 } else { 0.0 })
        .collect();
    for (l, d) in model.layers().iter().enumerate().rev() {
        let input = if l == 0 { x } else { &ys[l - 1] };
        let dz: Vec<f64> = (0..d.outputs)
            .map(|j| dy[j] * d.activation.derivative(zs[l][j]))
            .collect();
        let mut dx = vec![0.0; d.inputs];
        for (j, &g) in dz.iter().enumerate() {
            grads[l].b[j] += g;
            let row = &p[l].w[j * d.inputs..(j + 1) * d.inputs];
            for i in 0..d.inputs {
                grads[l].w[j * d.inputs + i] += g * input[i];
                dx[i] += row[i] * g;
            }
        }
        dy = dx;
    }
    (cross_entropy(&prob, y), best_class(logits) == y)
}

/// The mean loss over samples `(x, y)` (for finite differences and evaluation).
pub fn mean_loss(model: &Model, p: &[Layer64], xs: &[Vec<f64>], ys: &[usize]) -> f64 {
    let total: f64 = xs
        .iter()
        .zip(ys)
        .map(|(x, &y)| {
            let (_, outs) = forward(model, p, x);
            let logits = &outs[outs.len() - 1];
            let mut prob = vec![0.0; logits.len()];
            softmax(logits, &mut prob);
            cross_entropy(&prob, y)
        })
        .sum();
    total / xs.len().max(1) as f64
}

/// Accuracy of f32 parameters on samples given sample-major (`x`: `n × inputs`).
pub fn accuracy(model: &Model, p: &[LayerParams], x: &[f32], y: &[i32]) -> f64 {
    let p64: Vec<Layer64> = p.iter().map(Layer64::from_f32).collect();
    let d = model.inputs();
    let right = y
        .iter()
        .enumerate()
        .filter(|&(s, &label)| {
            let xs: Vec<f64> = x[s * d..(s + 1) * d].iter().map(|&v| v.into()).collect();
            let (_, outs) = forward(model, &p64, &xs);
            best_class(&outs[outs.len() - 1]) == label as usize
        })
        .count();
    right as f64 / y.len().max(1) as f64
}

/// Training in f64 with the f64 optimizer [`Oracle`]: the reference the device is checked
/// against. Each step sums the gradients of its samples (every replica's micro-batches), scales
/// them by `grad_scale` (1 for a summed reduction, `1/B` for the mean) and updates.
pub struct Reference {
    pub model: Model,
    pub params: Vec<Layer64>,
    opt: Vec<(Oracle, Oracle)>,
    pub lr: f64,
    pub grad_scale: f64,
    /// The passes use the weights rounded to f16 (`TrainOptions::half_weights`); `params`
    /// stays the master copy.
    pub half_weights: bool,
}

impl Reference {
    pub fn new(
        model: &Model,
        init: &[LayerParams],
        optimizer: Optimizer,
        lr: f64,
        grad_scale: f64,
    ) -> Reference {
        let params: Vec<Layer64> = init.iter().map(Layer64::from_f32).collect();
        let opt = params
            .iter()
            .map(|p| {
                (
                    Oracle::new(optimizer, p.w.len()),
                    Oracle::new(optimizer, p.b.len()),
                )
            })
            .collect();
        Reference {
            model: model.clone(),
            params,
            opt,
            lr,
            grad_scale,
            half_weights: false,
        }
    }

    /// One step on the samples `(x, y)` (`x` sample-major); returns the summed loss.
    pub fn step(&mut self, x: &[f32], y: &[i32]) -> f64 {
        let d = self.model.inputs();
        let mut grads: Vec<Layer64> = self.params.iter().map(Layer64::zeros_like).collect();
        let mut loss = 0.0;
        let used = if self.half_weights {
            let mut p = self.params.clone();
            for l in &mut p {
                for w in &mut l.w {
                    *w = poplar_core::fp::f16_from_f64(*w).to_f64();
                }
            }
            p
        } else {
            self.params.clone()
        };
        for (s, &label) in y.iter().enumerate() {
            let xs: Vec<f64> = x[s * d..(s + 1) * d].iter().map(|&v| v.into()).collect();
            loss += sample_grad(&self.model, &used, &xs, label as usize, &mut grads).0;
        }
        for ((p, g), (ow, ob)) in self.params.iter_mut().zip(&grads).zip(&mut self.opt) {
            let gw: Vec<f64> = g.w.iter().map(|v| v * self.grad_scale).collect();
            let gb: Vec<f64> = g.b.iter().map(|v| v * self.grad_scale).collect();
            ow.update(&mut p.w, &gw, self.lr);
            ob.update(&mut p.b, &gb, self.lr);
        }
        loss
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Activation;

    /// The analytic gradient of the f64 reference against central differences of its loss,
    /// for ReLU and GELU stacks.
    #[test]
    fn gradient_matches_central_differences() {
        for act in [Activation::Relu, Activation::Gelu] {
            let model = Model::mlp(5, &[7, 6], 3, act).unwrap();
            let p: Vec<Layer64> = model.init(3).iter().map(Layer64::from_f32).collect();
            let xs: Vec<Vec<f64>> = (0..4)
                .map(|s| (0..5).map(|i| ((s * 5 + i) as f64 * 0.37).sin()).collect())
                .collect();
            let ys = [0, 2, 1, 2];
            let mut g: Vec<Layer64> = p.iter().map(Layer64::zeros_like).collect();
            for (x, &y) in xs.iter().zip(&ys) {
                sample_grad(&model, &p, x, y, &mut g);
            }
            let h = 1e-6;
            for l in 0..p.len() {
                for i in (0..p[l].w.len()).step_by(5) {
                    let mut a = p.clone();
                    a[l].w[i] += h;
                    let mut b = p.clone();
                    b[l].w[i] -= h;
                    let fd = (mean_loss(&model, &a, &xs, &ys) - mean_loss(&model, &b, &xs, &ys))
                        / (2.0 * h)
                        * xs.len() as f64;
                    let an = g[l].w[i];
                    assert!(
                        (fd - an).abs() < 1e-6 * (1.0 + an.abs()),
                        "{act:?} layer {l} w[{i}]: {an} against {fd}"
                    );
                }
            }
        }
    }
}
