//! A model: a stack of dense layers with their activations and a softmax cross-entropy loss,
//! and the layout of its parameters.
//!
//! Layer `l` computes `z = W·x + b`, `y = f(z)` with `W` of `outputs × inputs` (row-major) and
//! `b` of `outputs`; the last layer's `y` are the logits (its activation must be
//! [`Activation::None`]). Activations are **feature-major**: a micro-batch of `m` samples of
//! `n` features is an `n × m` matrix, so that a tile owning rows `j..k` of a layer owns rows
//! `j..k` of its outputs as one contiguous piece.

use poplar_core::rand::{SplitMix64, GOLDEN_GAMMA};
use serde::Serialize;

use crate::math::Activation;

/// One dense layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Dense {
    pub inputs: usize,
    pub outputs: usize,
    pub activation: Activation,
}

impl Dense {
    pub fn new(inputs: usize, outputs: usize, activation: Activation) -> Dense {
        Dense {
            inputs,
            outputs,
            activation,
        }
    }

    /// `W` and `b`.
    pub fn params(&self) -> usize {
        self.outputs * (self.inputs + 1)
    }
}

/// A model that does not make sense; names the layer at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("a model needs at least one layer")]
    Empty,
    #[error("layer {layer}: {inputs} inputs, but layer {} has {previous} outputs", layer - 1)]
    Mismatch {
        layer: usize,
        inputs: usize,
        previous: usize,
    },
    #[error("layer {layer}: a dense layer needs at least one input and one output")]
    EmptyLayer { layer: usize },
    #[error("the last layer's outputs are the logits: its activation must be none, not {0}")]
    ActivatedLogits(&'static str),
    #[error("{0} classes: softmax cross-entropy needs at least 2")]
    TooFewClasses(usize),
}

/// A stack of dense layers ending in the logits, trained with softmax cross-entropy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Model {
    layers: Vec<Dense>,
}

impl Model {
    /// Checks that consecutive layers agree and the last one gives unactivated logits.
    pub fn new(layers: Vec<Dense>) -> Result<Model, ModelError> {
        let last = layers.last().ok_or(ModelError::Empty)?;
        if last.activation != Activation::None {
            return Err(ModelError::ActivatedLogits(last.activation.name()));
        }
        if last.outputs < 2 {
            return Err(ModelError::TooFewClasses(last.outputs));
        }
        for (l, d) in layers.iter().enumerate() {
            if d.inputs == 0 || d.outputs == 0 {
                return Err(ModelError::EmptyLayer { layer: l });
            }
            if l > 0 && layers[l - 1].outputs != d.inputs {
                return Err(ModelError::Mismatch {
                    layer: l,
                    inputs: d.inputs,
                    previous: layers[l - 1].outputs,
                });
            }
        }
        Ok(Model { layers })
    }

    /// A multilayer perceptron: `inputs → hidden[0] → … → classes`, with `activation` after
    /// every hidden layer.
    pub fn mlp(
        inputs: usize,
        hidden: &[usize],
        classes: usize,
        activation: Activation,
    ) -> Result<Model, ModelError> {
        let mut sizes = vec![inputs];
        sizes.extend_from_slice(hidden);
        sizes.push(classes);
        let n = sizes.len() - 1;
        Model::new(
            (0..n)
                .map(|l| {
                    let act = if l + 1 == n {
                        Activation::None
                    } else {
                        activation
                    };
                    Dense::new(sizes[l], sizes[l + 1], act)
                })
                .collect(),
        )
    }

    pub fn layers(&self) -> &[Dense] {
        &self.layers
    }

    pub fn inputs(&self) -> usize {
        self.layers[0].inputs
    }

    pub fn classes(&self) -> usize {
        self.layers[self.layers.len() - 1].outputs
    }

    /// Parameters in all.
    pub fn params(&self) -> usize {
        self.layers.iter().map(Dense::params).sum()
    }

    /// He-initialised weights (`N(0, 2/inputs)`) and zero biases, from `seed`: per layer `W`
    /// then `b`.
    pub fn init(&self, seed: u64) -> Vec<LayerParams> {
        let mut rng = SplitMix64::new(seed ^ GOLDEN_GAMMA);
        self.layers
            .iter()
            .map(|d| {
                let s = (2.0 / d.inputs as f64).sqrt();
                LayerParams {
                    w: (0..d.outputs * d.inputs)
                        .map(|_| (rng.normal() * s) as f32)
                        .collect(),
                    b: vec![0.0; d.outputs],
                }
            })
            .collect()
    }
}

/// One layer's parameters (or gradients, or optimizer state of the same shape).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LayerParams {
    /// `outputs × inputs`, row-major.
    pub w: Vec<f32>,
    pub b: Vec<f32>,
}

/// `total` in `parts` balanced runs (the first ones one larger); runs may be empty when
/// `parts > total`.
pub fn blocks(total: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
    let parts = parts.max(1);
    let mut at = 0;
    (0..parts)
        .map(|k| {
            let n = total / parts + usize::from(k < total % parts);
            at += n;
            at - n..at
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_checked() {
        let a = Activation::Relu;
        assert_eq!(Model::new(vec![]), Err(ModelError::Empty));
        let bad = vec![Dense::new(4, 8, a), Dense::new(7, 3, Activation::None)];
        assert!(matches!(
            Model::new(bad),
            Err(ModelError::Mismatch { layer: 1, .. })
        ));
        assert_eq!(
            Model::new(vec![Dense::new(4, 3, a)]),
            Err(ModelError::ActivatedLogits("relu"))
        );
        let m = Model::mlp(64, &[32, 16], 10, Activation::Gelu).unwrap();
        assert_eq!(m.params(), 32 * 65 + 16 * 33 + 10 * 17);
        assert_eq!(m.layers()[2].activation, Activation::None);
    }

    #[test]
    fn blocks_cover_in_order() {
        assert_eq!(blocks(10, 4), vec![0..3, 3..6, 6..8, 8..10]);
        assert_eq!(blocks(2, 3), vec![0..1, 1..2, 2..2]);
    }
}
