//! The multilayer perceptron: `x (d) → W1 (h × d), b1 → ReLU → W2 (c × h), b2 → softmax`,
//! cross-entropy loss. Parameters are one flat f32 vector `[W1 | b1 | W2 | b2]` (row-major
//! matrices), so that gradients are one tensor to all-reduce.
//!
//! [`sample_grad`] is the arithmetic of one sample for the host reference trainer. It is made
//! of the pieces the device's vertices use ([`hidden_unit`], [`logit`], [`softmax`],
//! [`add_unit_grad`], …), so that both perform the same f32 operations in the same order: each
//! element of the gradient receives one addition per sample, in sample order, whichever
//! worker context computes it. The arithmetic itself is checked against central finite
//! differences in f64 (`tests/training.rs`).

/// Layer sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Shape {
    pub inputs: usize,
    pub hidden: usize,
    pub classes: usize,
}

impl Shape {
    /// Parameters in all.
    pub fn params(&self) -> usize {
        self.hidden * self.inputs + self.hidden + self.classes * self.hidden + self.classes
    }
    /// Offsets of `b1`, `W2` and `b2` in the flat parameters (`W1` is at 0).
    pub fn offsets(&self) -> (usize, usize, usize) {
        let b1 = self.hidden * self.inputs;
        let w2 = b1 + self.hidden;
        (b1, w2, w2 + self.classes * self.hidden)
    }
}

/// He-initialised weights and zero biases, from `seed`.
pub fn init(shape: Shape, seed: u64) -> Vec<f32> {
    let mut rng = crate::data::Rng::new(seed ^ 0x5EED);
    let mut p = vec![0f32; shape.params()];
    let (b1, w2, b2) = shape.offsets();
    let s1 = (2.0 / shape.inputs as f64).sqrt();
    let s2 = (2.0 / shape.hidden as f64).sqrt();
    for v in &mut p[..b1] {
        *v = (rng.normal() * s1) as f32;
    }
    for v in &mut p[w2..b2] {
        *v = (rng.normal() * s2) as f32;
    }
    p
}

/// The ReLU activation of one hidden unit: `max(b + Σ_i w[i]·x[i], 0)`, summed left to right
/// from `b` (`w`: the unit's row of `W1`, `b`: its bias).
#[inline]
pub fn hidden_unit(w: &[f32], b: f32, x: &[f32]) -> f32 {
    let mut z = b;
    for (w, xi) in w.iter().zip(x) {
        z += w * xi;
    }
    z.max(0.0)
}

/// One logit: `b + Σ_j w[j]·act[j]`, summed left to right from `b` (`w`: the class's row of
/// `W2`, `b`: its bias).
#[inline]
pub fn logit(w: &[f32], b: f32, act: &[f32]) -> f32 {
    let mut z = b;
    for (w, a) in w.iter().zip(act) {
        z += w * a;
    }
    z
}

/// Logits of one sample into `logits` (`classes`), using `hidden` (`hidden`) as scratch for
/// the ReLU activations.
pub fn forward(shape: Shape, p: &[f32], x: &[f32], hidden: &mut [f32], logits: &mut [f32]) {
    let (b1, w2, b2) = shape.offsets();
    for (j, a) in hidden.iter_mut().enumerate() {
        *a = hidden_unit(&p[j * shape.inputs..(j + 1) * shape.inputs], p[b1 + j], x);
    }
    for (k, l) in logits.iter_mut().enumerate() {
        let row = &p[w2 + k * shape.hidden..w2 + (k + 1) * shape.hidden];
        *l = logit(row, p[b2 + k], hidden);
    }
}

/// The softmax of `logits` into `prob`: `exp(l − max)`, summed in order, then divided by the
/// sum.
pub fn softmax(logits: &[f32], prob: &mut [f32]) {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0f32;
    for (q, &l) in prob.iter_mut().zip(logits) {
        *q = (l - max).exp();
        sum += *q;
    }
    for q in prob.iter_mut() {
        *q /= sum;
    }
}

/// The predicted class: the first largest logit.
pub fn best_class(logits: &[f32]) -> usize {
    (0..logits.len()).fold(0, |b, k| if logits[k] > logits[b] { k } else { b })
}

/// The cross-entropy loss of label `y` under `prob`.
pub fn loss(prob: &[f32], y: usize) -> f32 {
    -(prob[y].max(1e-30)).ln()
}

/// `dL/dlogit_k = p_k − [k = y]`.
#[inline]
pub fn dlogit(prob: &[f32], k: usize, y: usize) -> f32 {
    prob[k] - if k == y { 1.0 } else { 0.0 }
}

/// Adds one sample's gradient for hidden unit `j` to `grad` (the flat gradient): the unit's
/// column of `W2` (`dk · act_j` for every class), and, if the unit is active, its bias (`dj`)
/// and its row of `W1` (`dj · x`), with `dj = Σ_k dk · W2[k, j]` summed in class order. `w2` is
/// `W2` (`classes × hidden`), `prob` the sample's softmax, `act_j` the unit's activation.
#[allow(clippy::too_many_arguments)]
pub fn add_unit_grad(
    shape: Shape,
    w2: &[f32],
    prob: &[f32],
    y: usize,
    act_j: f32,
    x: &[f32],
    j: usize,
    grad: &mut [f32],
) {
    let (h, c) = (shape.hidden, shape.classes);
    let (b1, w2_at, _) = shape.offsets();
    for k in 0..c {
        grad[w2_at + k * h + j] += dlogit(prob, k, y) * act_j;
    }
    if act_j <= 0.0 {
        return;
    }
    let mut dj = 0f32;
    for k in 0..c {
        dj += dlogit(prob, k, y) * w2[k * h + j];
    }
    grad[b1 + j] += dj;
    for (g, xi) in grad[j * shape.inputs..(j + 1) * shape.inputs]
        .iter_mut()
        .zip(x)
    {
        *g += dj * xi;
    }
}

/// Adds the gradient of one sample's cross-entropy loss to `grad` and returns its loss and
/// whether the prediction is right. `scratch` holds `hidden + 2·classes` floats.
pub fn sample_grad(
    shape: Shape,
    p: &[f32],
    x: &[f32],
    y: usize,
    grad: &mut [f32],
    scratch: &mut [f32],
) -> (f32, bool) {
    let (h, c) = (shape.hidden, shape.classes);
    let (act, rest) = scratch.split_at_mut(h);
    let (logits, prob) = rest.split_at_mut(c);
    forward(shape, p, x, act, logits);
    softmax(logits, prob);
    let (_, w2, b2) = shape.offsets();
    // dL/dlogit_k = p_k − [k = y]; back through W2 into the hidden layer.
    for k in 0..c {
        grad[b2 + k] += dlogit(prob, k, y);
    }
    let w2 = &p[w2..b2];
    for (j, &a) in act.iter().enumerate() {
        add_unit_grad(shape, w2, prob, y, a, x, j, grad);
    }
    (loss(prob, y), best_class(logits) == y)
}

/// Scratch floats [`sample_grad`] needs.
pub fn scratch_len(shape: Shape) -> usize {
    shape.hidden + 2 * shape.classes
}

/// Accuracy of `p` on a data set (host forward pass).
pub fn accuracy(shape: Shape, p: &[f32], data: &crate::data::Dataset) -> f64 {
    let mut act = vec![0f32; shape.hidden];
    let mut logits = vec![0f32; shape.classes];
    let mut right = 0usize;
    for i in 0..data.len() {
        let (x, y) = data.sample(i);
        forward(shape, p, x, &mut act, &mut logits);
        let best = (0..shape.classes).fold(0, |b, k| if logits[k] > logits[b] { k } else { b });
        right += usize::from(best == y as usize);
    }
    right as f64 / data.len().max(1) as f64
}
