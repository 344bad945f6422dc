//! Sequential networks of convolution, non-linearity, pooling and dense layers over images,
//! built from the library's ops (`poplin::convolution` and its gradients, `poplin::matmul`,
//! [`crate::ops`]: non-linearities, pooling, cross-entropy) into one training graph on one chip, trained with SGD on softmax
//! cross-entropy ([`build`], [`SequentialTrainer`]).
//!
//! Where [`crate::Model`] (dense layers with fused vertices, pipelined over chips and
//! replicated) is the trainer of large MLPs, this is the model builder of small convolutional
//! networks: one replica, one chip, f32, each layer the op a Poplar user would call.
//!
//! ```
//! use popnn::sequential::{Layer, Sequential};
//!
//! let net = Sequential::new(
//!     [1, 8, 8],
//!     vec![
//!         Layer::conv(8, 3, 1, 1),
//!         Layer::Relu,
//!         Layer::Dense { outputs: 10 },
//!     ],
//! )?;
//! assert_eq!(net.classes(), 10);
//! assert_eq!(net.params(), 8 * 9 + 8 + 8 * 64 * 10 + 10);
//! # Ok::<(), popnn::sequential::SequentialError>(())
//! ```

mod build;
mod trainer;

pub use build::{build, CompiledSequential};
pub use trainer::{BatchStats, SequentialTrainer};

use poplar_core::rand::SplitMix64;

/// One layer of a [`Sequential`] network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Layer {
    /// A 2-D convolution with a bias per output channel: `channels` outputs, a square
    /// `kernel`, `stride` and zero `padding` on every side.
    Conv {
        channels: usize,
        kernel: usize,
        stride: usize,
        padding: usize,
    },
    /// `max(x, 0)`.
    Relu,
    /// Max pooling over square windows of `kernel` every `stride` (no padding).
    MaxPool { kernel: usize, stride: usize },
    /// Average pooling over square windows of `kernel` every `stride` (no padding).
    AvgPool { kernel: usize, stride: usize },
    /// A dense layer with a bias, on the flattened input.
    Dense { outputs: usize },
}

impl Layer {
    pub fn conv(channels: usize, kernel: usize, stride: usize, padding: usize) -> Layer {
        Layer::Conv {
            channels,
            kernel,
            stride,
            padding,
        }
    }
}

/// The shape of one sample between layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `[channels, height, width]`.
    Image([usize; 3]),
    /// `[features]`.
    Flat(usize),
}

impl Shape {
    pub fn elements(self) -> usize {
        match self {
            Shape::Image(s) => s.iter().product(),
            Shape::Flat(k) => k,
        }
    }
}

/// Why a network cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SequentialError {
    #[error("a network needs at least one layer")]
    Empty,
    #[error("layer {layer} ({what}): {reason}")]
    Layer {
        layer: usize,
        what: &'static str,
        reason: String,
    },
    #[error("the last layer gives the logits: it must be a dense layer of at least 2 outputs")]
    Logits,
    #[error("{what}: {reason}")]
    Options { what: &'static str, reason: String },
    /// The device running the network failed (its message).
    #[error("device: {0}")]
    Device(String),
    #[error(transparent)]
    Graph(#[from] poplar_compiler::graph::GraphError),
    #[error(transparent)]
    Op(#[from] crate::ops::NnOpError),
    #[error(transparent)]
    Popops(#[from] popops::OpError),
    #[error(transparent)]
    Conv(#[from] poplin::ConvError),
    #[error(transparent)]
    ConvPlan(#[from] poplin::ConvPlanError),
    #[error(transparent)]
    MatMul(#[from] poplin::MatMulError),
    #[error(transparent)]
    MatMulPlan(#[from] poplin::PlanError<poplin::MatMulParams>),
    #[error(transparent)]
    Compile(#[from] poplar_compiler::compiler::CompileError),
}

/// A network: the sample shape it takes and its layers, the last giving the logits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sequential {
    input: [usize; 3],
    layers: Vec<Layer>,
    /// The sample shape before each layer, and after the last.
    shapes: Vec<Shape>,
}

impl Sequential {
    /// Checks each layer against the shape it receives (`input` is `[channels, height,
    /// width]`).
    pub fn new(input: [usize; 3], layers: Vec<Layer>) -> Result<Sequential, SequentialError> {
        if layers.is_empty() {
            return Err(SequentialError::Empty);
        }
        let mut shapes = vec![Shape::Image(input)];
        for (l, layer) in layers.iter().enumerate() {
            let next = next_shape(l, layer, *shapes.last().expect("at least the input"))?;
            shapes.push(next);
        }
        match (layers.last(), shapes.last()) {
            (Some(Layer::Dense { .. }), Some(&Shape::Flat(c))) if c >= 2 => {}
            _ => return Err(SequentialError::Logits),
        }
        Ok(Sequential {
            input,
            layers,
            shapes,
        })
    }

    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    pub fn input(&self) -> [usize; 3] {
        self.input
    }

    /// The sample shape entering layer `l` (`l == layers().len()`: the logits).
    pub fn shape(&self, l: usize) -> Shape {
        self.shapes[l]
    }

    pub fn classes(&self) -> usize {
        self.shapes.last().map_or(0, |s| s.elements())
    }

    /// The shapes of layer `l`'s parameters, weights then bias (none for a layer without).
    pub fn param_shapes(&self, l: usize) -> Vec<Vec<usize>> {
        match (self.layers[l], self.shapes[l]) {
            (
                Layer::Conv {
                    channels, kernel, ..
                },
                Shape::Image([c, _, _]),
            ) => {
                vec![vec![channels, c, kernel, kernel], vec![channels]]
            }
            (Layer::Dense { outputs }, s) => vec![vec![s.elements(), outputs], vec![outputs]],
            _ => Vec::new(),
        }
    }

    /// Every parameter tensor's shape, layer by layer.
    pub fn all_param_shapes(&self) -> Vec<Vec<usize>> {
        (0..self.layers.len())
            .flat_map(|l| self.param_shapes(l))
            .collect()
    }

    /// Parameters in all.
    pub fn params(&self) -> usize {
        self.all_param_shapes()
            .iter()
            .map(|s| s.iter().product::<usize>())
            .sum()
    }

    /// He-uniform weights (`U(±√(6 / fan_in))`) and zero biases, drawn from `seed`, in the
    /// order of [`Sequential::all_param_shapes`] (row-major each).
    pub fn init(&self, seed: u64) -> Vec<Vec<f32>> {
        let mut rng = SplitMix64::new(seed);
        self.all_param_shapes()
            .iter()
            .map(|s| {
                let n: usize = s.iter().product();
                if s.len() == 1 {
                    return vec![0.0; n];
                }
                // Weights: fan-in is all but the output dimension.
                let fan_in = if s.len() == 4 { n / s[0] } else { s[0] };
                let a = (6.0 / fan_in as f32).sqrt();
                (0..n).map(|_| rng.f32_in(-a, a)).collect()
            })
            .collect()
    }
}

/// The shape after `layer` (layer number `l`) of input `shape`.
fn next_shape(l: usize, layer: &Layer, shape: Shape) -> Result<Shape, SequentialError> {
    let bad = |what, reason: String| SequentialError::Layer {
        layer: l,
        what,
        reason,
    };
    match *layer {
        Layer::Relu => Ok(shape),
        Layer::MaxPool { kernel, stride } | Layer::AvgPool { kernel, stride } => {
            let Shape::Image([c, h, w]) = shape else {
                return Err(bad(
                    "pool",
                    "follows a dense layer: its input is flat".into(),
                ));
            };
            if kernel == 0 || stride == 0 || kernel > h || kernel > w {
                return Err(bad(
                    "pool",
                    format!("kernel {kernel} and stride {stride} must be > 0 and the kernel within {h}×{w}"),
                ));
            }
            Ok(Shape::Image([
                c,
                (h - kernel) / stride + 1,
                (w - kernel) / stride + 1,
            ]))
        }
        Layer::Dense { outputs } => {
            if outputs == 0 {
                return Err(bad("dense", "has no outputs".into()));
            }
            Ok(Shape::Flat(outputs))
        }
        Layer::Conv {
            channels,
            kernel,
            stride,
            padding,
        } => {
            let Shape::Image([_, h, w]) = shape else {
                return Err(bad(
                    "conv",
                    "follows a dense layer: its input is flat".into(),
                ));
            };
            if channels == 0 || kernel == 0 || stride == 0 {
                return Err(bad(
                    "conv",
                    format!("channels {channels}, kernel {kernel} and stride {stride} must be > 0"),
                ));
            }
            let out = |x: usize| {
                (x + 2 * padding)
                    .checked_sub(kernel)
                    .map(|s| s / stride + 1)
            };
            match (out(h), out(w)) {
                (Some(oh), Some(ow)) => Ok(Shape::Image([channels, oh, ow])),
                _ => Err(bad(
                    "conv",
                    format!(
                        "kernel {kernel} is larger than the padded input {h}×{w} + 2·{padding}"
                    ),
                )),
            }
        }
    }
}
