//! The multilayer perceptron: `x (d) → W1 (h × d), b1 → ReLU → W2 (c × h), b2 → softmax`,
//! cross-entropy loss. Parameters are one flat f32 vector `[W1 | b1 | W2 | b2]` (row-major
//! matrices), so that gradients are one tensor to all-reduce.
//!
//! [`sample_grad`] is the arithmetic of one sample, shared by the device codelet and the host
//! reference trainer, so that both perform the same f32 operations in the same order; the
//! arithmetic itself is checked against central finite differences in f64
//! (`tests/training.rs`).

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
    fn offsets(&self) -> (usize, usize, usize) {
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

/// Logits of one sample into `logits` (`classes`), using `hidden` (`hidden`) as scratch for
/// the ReLU activations.
pub fn forward(shape: Shape, p: &[f32], x: &[f32], hidden: &mut [f32], logits: &mut [f32]) {
    let (b1, w2, b2) = shape.offsets();
    for (j, a) in hidden.iter_mut().enumerate() {
        let row = &p[j * shape.inputs..(j + 1) * shape.inputs];
        let mut z = p[b1 + j];
        for (w, xi) in row.iter().zip(x) {
            z += w * xi;
        }
        *a = z.max(0.0);
    }
    for (k, l) in logits.iter_mut().enumerate() {
        let row = &p[w2 + k * shape.hidden..w2 + (k + 1) * shape.hidden];
        let mut z = p[b2 + k];
        for (w, a) in row.iter().zip(hidden.iter()) {
            z += w * a;
        }
        *l = z;
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
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0f32;
    for (q, &l) in prob.iter_mut().zip(logits.iter()) {
        *q = (l - max).exp();
        sum += *q;
    }
    for q in prob.iter_mut() {
        *q /= sum;
    }
    let best = (0..c).fold(0, |b, k| if logits[k] > logits[b] { k } else { b });
    let loss = -(prob[y].max(1e-30)).ln();
    let (b1, w2, b2) = shape.offsets();
    // dL/dlogit_k = p_k − [k = y]; back through W2 into the hidden layer.
    for k in 0..c {
        let dk = prob[k] - if k == y { 1.0 } else { 0.0 };
        grad[b2 + k] += dk;
        for j in 0..h {
            grad[w2 + k * h + j] += dk * act[j];
        }
    }
    for j in 0..h {
        if act[j] <= 0.0 {
            continue;
        }
        let mut dj = 0f32;
        for k in 0..c {
            let dk = prob[k] - if k == y { 1.0 } else { 0.0 };
            dj += dk * p[w2 + k * h + j];
        }
        grad[b1 + j] += dj;
        for (i, xi) in x.iter().enumerate() {
            grad[j * shape.inputs + i] += dj * xi;
        }
    }
    (loss, best == y)
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
