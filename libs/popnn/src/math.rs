//! The arithmetic of one element, written once for `f32` (the device's vertices) and `f64`
//! (the host oracle, [`crate::host`]): activations and their derivatives, the softmax and the
//! cross-entropy. Every sum is left to right, so the vertices and the host perform the same
//! operations in the same order (in their own precision).

use serde::Serialize;

/// The floating-point operations the layers need.
pub trait Real:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::AddAssign
    + std::ops::SubAssign
    + std::fmt::Debug
{
    const ZERO: Self;
    const ONE: Self;
    fn of(v: f64) -> Self;
    fn exp(self) -> Self;
    fn tanh(self) -> Self;
    fn ln(self) -> Self;
    fn sqrt(self) -> Self;
    fn max(self, o: Self) -> Self;
    fn to_f64(self) -> f64;
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline]
            fn of(v: f64) -> Self {
                v as $t
            }
            #[inline]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline]
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            #[inline]
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            #[inline]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline]
            fn max(self, o: Self) -> Self {
                <$t>::max(self, o)
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    };
}
real!(f32);
real!(f64);

/// The non-linearity after a dense layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Activation {
    /// The identity (the logits of the last layer).
    None,
    Relu,
    /// GELU, the tanh approximation of Hendrycks & Gimpel:
    /// `½·z·(1 + tanh(√(2/π)·(z + 0.044715·z³)))`.
    Gelu,
}

/// `√(2/π)`.
const GELU_K: f64 = 0.797_884_560_802_865_4;
/// GELU's cubic coefficient.
const GELU_C: f64 = 0.044_715;

impl Activation {
    /// Its code in vertex state (`0`, `1`, `2`).
    pub fn code(self) -> u32 {
        self as u32
    }

    /// The activation of code `c`, if any.
    pub fn from_code(c: u32) -> Option<Activation> {
        [Activation::None, Activation::Relu, Activation::Gelu]
            .get(c as usize)
            .copied()
    }

    pub fn name(self) -> &'static str {
        match self {
            Activation::None => "none",
            Activation::Relu => "relu",
            Activation::Gelu => "gelu",
        }
    }

    /// `f(z)`.
    #[inline]
    pub fn apply<T: Real>(self, z: T) -> T {
        match self {
            Activation::None => z,
            Activation::Relu => z.max(T::ZERO),
            Activation::Gelu => {
                let u = T::of(GELU_K) * (z + T::of(GELU_C) * z * z * z);
                T::of(0.5) * z * (T::ONE + u.tanh())
            }
        }
    }

    /// `f′(z)` (ReLU's is 0 at 0).
    #[inline]
    pub fn derivative<T: Real>(self, z: T) -> T {
        match self {
            Activation::None => T::ONE,
            Activation::Relu => {
                if z > T::ZERO {
                    T::ONE
                } else {
                    T::ZERO
                }
            }
            Activation::Gelu => {
                let z2 = z * z;
                let t = (T::of(GELU_K) * (z + T::of(GELU_C) * z2 * z)).tanh();
                let du = T::of(GELU_K) * (T::ONE + T::of(3.0 * GELU_C) * z2);
                T::of(0.5) * (T::ONE + t) + T::of(0.5) * z * (T::ONE - t * t) * du
            }
        }
    }
}

/// The softmax of `logits` into `prob`: `exp(l − max)`, summed in order, then divided by the
/// sum.
pub fn softmax<T: Real>(logits: &[T], prob: &mut [T]) {
    let mut max = logits[0];
    for &l in &logits[1..] {
        max = max.max(l);
    }
    let mut sum = T::ZERO;
    for (q, &l) in prob.iter_mut().zip(logits) {
        *q = (l - max).exp();
        sum += *q;
    }
    for q in prob.iter_mut() {
        *q = *q / sum;
    }
}

/// The cross-entropy of label `y` under `prob` (the probability clamped at 1e-30).
pub fn cross_entropy<T: Real>(prob: &[T], y: usize) -> T {
    T::ZERO - prob[y].max(T::of(1e-30)).ln()
}

/// The predicted class: the first largest logit.
pub fn best_class<T: Real>(logits: &[T]) -> usize {
    (0..logits.len()).fold(0, |b, k| if logits[k] > logits[b] { k } else { b })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derivatives agree with central differences in f64.
    #[test]
    fn derivatives_match_central_differences() {
        for act in [Activation::None, Activation::Relu, Activation::Gelu] {
            for z in [-3.0, -0.7, -0.1, 0.2, 1.3, 4.0] {
                let h = 1e-6;
                let fd = (act.apply(z + h) - act.apply(z - h)) / (2.0 * h);
                let d: f64 = act.derivative(z);
                assert!((fd - d).abs() < 1e-7, "{act:?} at {z}: {d} against {fd}");
            }
        }
    }

    /// GELU against values of `x·Φ(x)` it approximates (within the approximation's 1e-3).
    #[test]
    fn gelu_approximates_x_phi() {
        // x·Φ(x) at 1 and −1 (Φ(1) = 0.841344746).
        assert!((Activation::Gelu.apply(1.0f64) - 0.841_344_746).abs() < 1e-3);
        assert!((Activation::Gelu.apply(-1.0f64) + 0.158_655_254).abs() < 1e-3);
    }
}
