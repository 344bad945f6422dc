//! What a convolution is: the user's [`ConvParams`] (ONNX's and poplibs' vocabulary), the
//! three passes of training ([`ConvPass`]), and the one canonical convolution every pass is
//! turned into ([`PassShape`]).

use poplar_core::dtype::DType;

/// A grouped convolution of `input[batch, input_channels, *input_field]` with
/// `weights[output_channels, input_channels / groups, *kernel]` into
/// `output[batch, output_channels, *output_field]` (the layouts of ONNX `Conv` and PyTorch):
/// output channel `oc` of group `g = oc / (output_channels / groups)` sums over the input
/// channels of group `g`, and
///
/// `out[b, oc, o] = Σ_{c, k} in[b, g·ci + c, o·stride + k·dilation − padding_lower] · w[oc, c, k]`
///
/// per field dimension, the input being zero outside `0..input_field` (padding contributes no
/// products). `output_field[d] = ⌊(input_field[d] + padding_lower[d] + padding_upper[d] −
/// dilation[d]·(kernel[d] − 1) − 1) / stride[d]⌋ + 1`. One to three field dimensions;
/// depth-wise convolution is `groups == input_channels == output_channels`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvParams {
    pub batch: usize,
    /// Input channels of all groups.
    pub input_channels: usize,
    /// Output channels of all groups.
    pub output_channels: usize,
    pub groups: usize,
    pub input_field: Vec<usize>,
    pub kernel: Vec<usize>,
    pub stride: Vec<usize>,
    /// The kernel's dilation (ONNX `dilations`).
    pub dilation: Vec<usize>,
    pub padding_lower: Vec<usize>,
    pub padding_upper: Vec<usize>,
    /// Type of the input and weights: `F32`, or `F16` with f32 partials. The output (and every
    /// gradient) is f32.
    pub input_type: DType,
}

impl ConvParams {
    /// A convolution with one group, unit strides and dilations, no padding, f32.
    pub fn new(
        batch: usize,
        input_channels: usize,
        output_channels: usize,
        input_field: &[usize],
        kernel: &[usize],
    ) -> ConvParams {
        let ones = vec![1; input_field.len()];
        ConvParams {
            batch,
            input_channels,
            output_channels,
            groups: 1,
            input_field: input_field.to_vec(),
            kernel: kernel.to_vec(),
            stride: ones.clone(),
            dilation: ones,
            padding_lower: vec![0; input_field.len()],
            padding_upper: vec![0; input_field.len()],
            input_type: DType::F32,
        }
    }

    pub fn with_groups(mut self, groups: usize) -> ConvParams {
        self.groups = groups;
        self
    }

    pub fn with_stride(mut self, stride: &[usize]) -> ConvParams {
        self.stride = stride.to_vec();
        self
    }

    pub fn with_dilation(mut self, dilation: &[usize]) -> ConvParams {
        self.dilation = dilation.to_vec();
        self
    }

    pub fn with_padding(mut self, lower: &[usize], upper: &[usize]) -> ConvParams {
        self.padding_lower = lower.to_vec();
        self.padding_upper = upper.to_vec();
        self
    }

    pub fn with_type(mut self, input_type: DType) -> ConvParams {
        self.input_type = input_type;
        self
    }

    /// The output field (meaningful once [`ConvParams::check`] passes).
    pub fn output_field(&self) -> Vec<usize> {
        (0..self.input_field.len())
            .map(|d| {
                let padded = self.input_field[d] + self.padding_lower[d] + self.padding_upper[d];
                let extent = self.dilation[d] * (self.kernel[d].max(1) - 1) + 1;
                padded.saturating_sub(extent) / self.stride[d].max(1) + 1
            })
            .collect()
    }

    /// Multiply-accumulates of the forward pass (each gradient pass has as many).
    pub fn macs(&self) -> u64 {
        let prod = |v: &[usize]| v.iter().map(|&x| x as u64).product::<u64>();
        let per_group_in = (self.input_channels / self.groups.max(1)) as u64;
        self.batch as u64
            * self.output_channels as u64
            * prod(&self.output_field())
            * per_group_in
            * prod(&self.kernel)
    }

    /// A 1×1 kernel with unit stride and no padding: every output reads one input position.
    pub fn is_pointwise(&self) -> bool {
        let ones = |v: &[usize]| v.iter().all(|&x| x == 1);
        let zeros = |v: &[usize]| v.iter().all(|&x| x == 0);
        ones(&self.kernel)
            && ones(&self.stride)
            && zeros(&self.padding_lower)
            && zeros(&self.padding_upper)
    }

    pub(crate) fn any_zero(&self) -> bool {
        [
            self.batch,
            self.input_channels,
            self.output_channels,
            self.groups,
        ]
        .contains(&0)
            || self.input_field.contains(&0)
            || self.kernel.contains(&0)
    }

    /// The rule the parameters break, if any (sizes of zero are [`PlanError::Empty`]'s).
    ///
    /// [`PlanError::Empty`]: crate::PlanError::Empty
    pub fn check(&self) -> Result<(), ConvRule> {
        let rank = self.input_field.len();
        if !(1..=3).contains(&rank) {
            return Err(ConvRule::FieldRank(rank));
        }
        for (what, len) in [
            ("kernel", self.kernel.len()),
            ("stride", self.stride.len()),
            ("dilation", self.dilation.len()),
            ("padding_lower", self.padding_lower.len()),
            ("padding_upper", self.padding_upper.len()),
        ] {
            if len != rank {
                return Err(ConvRule::Length { what, len, rank });
            }
        }
        for (what, v) in [("stride", &self.stride), ("dilation", &self.dilation)] {
            if let Some(dim) = v.iter().position(|&x| x == 0) {
                return Err(ConvRule::Zero { what, dim });
            }
        }
        for (what, channels) in [
            ("input_channels", self.input_channels),
            ("output_channels", self.output_channels),
        ] {
            if !channels.is_multiple_of(self.groups) {
                return Err(ConvRule::Groups {
                    what,
                    channels,
                    groups: self.groups,
                });
            }
        }
        for d in 0..rank {
            let padded = self.input_field[d] + self.padding_lower[d] + self.padding_upper[d];
            let extent = self.dilation[d] * (self.kernel[d] - 1) + 1;
            if extent > padded {
                return Err(ConvRule::KernelLarger {
                    dim: d,
                    extent,
                    padded,
                });
            }
        }
        Ok(())
    }
}

/// As messages name them: `batch 2, channels 3 → 8 in 1 group(s), field [9, 9], kernel
/// [3, 3], stride [1, 1], dilation [1, 1], padding [1, 1] / [1, 1], f32`.
impl std::fmt::Display for ConvParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "batch {}, channels {} → {} in {} group(s), field {:?}, kernel {:?}, stride {:?}, \
             dilation {:?}, padding {:?} / {:?}, {}",
            self.batch,
            self.input_channels,
            self.output_channels,
            self.groups,
            self.input_field,
            self.kernel,
            self.stride,
            self.dilation,
            self.padding_lower,
            self.padding_upper,
            self.input_type.poplar_name()
        )
    }
}

/// Boxed in errors, so that a `Result` of a plan stays small.
impl crate::plan::PlanParams for Box<ConvParams> {
    const OP: &'static str = "convolution";
    const FIT_HINT: &'static str =
        "raise available_memory_proportion, give more tiles, or split the batch";
    type Rule = ConvRule;
}

/// Why a convolution could not be planned (the parameters boxed).
pub type ConvPlanError = crate::plan::PlanError<Box<ConvParams>>;

/// A rule of [`ConvParams`] broken (the error names the parameter and dimension).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConvRule {
    #[error("the input field has {0} dimensions; 1, 2 or 3 are supported")]
    FieldRank(usize),
    #[error("{what} has {len} entries, the input field {rank}")]
    Length {
        what: &'static str,
        len: usize,
        rank: usize,
    },
    #[error("{what} is 0 in field dimension {dim}")]
    Zero { what: &'static str, dim: usize },
    #[error("{what} ({channels}) is not a multiple of groups ({groups})")]
    Groups {
        what: &'static str,
        channels: usize,
        groups: usize,
    },
    #[error(
        "in field dimension {dim} the dilated kernel spans {extent}, more than the padded \
         input ({padded})"
    )]
    KernelLarger {
        dim: usize,
        extent: usize,
        padded: usize,
    },
}

/// The passes of training a convolution layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConvPass {
    /// `output = conv(input, weights)`.
    Forward,
    /// The input gradient from the output gradient and the weights (poplibs' backward pass).
    InputGradient,
    /// The weights' gradient from the input and the output gradient (poplibs' weight update).
    WeightUpdate,
}

/// The convolution a pass computes, in the canonical form every pass is built as:
/// `input[n, g, ci, f0, f1, f2]`, `weights[g, co, ci, k0, k1, k2]`, `output[n, g, co, o0, o1,
/// o2]`, with per dimension `d` a stride, a kernel dilation, an input dilation
/// (`input_dilation − 1` zeros between input elements) and signed padding (negative padding
/// truncates):
///
/// `out[n, g, co, o] = Σ_{ci, k} in'[n, g, ci, o·stride + k·dilation − pad_lower] ·
/// w[g, co, ci, k]`, where `in'[p] = in[p / input_dilation]` when `p` is a multiple of
/// `input_dilation` inside the dilated input, else 0.
///
/// Fields of fewer than three dimensions are padded in front with dimensions of size 1;
/// `split_dim` is the outermost dimension of the user's field (the one the planner splits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassShape {
    pub n: usize,
    pub g: usize,
    pub ci: usize,
    pub co: usize,
    pub field: [usize; 3],
    pub kernel: [usize; 3],
    pub stride: [usize; 3],
    pub dilation: [usize; 3],
    pub input_dilation: [usize; 3],
    pub pad_lower: [i64; 3],
    pub pad_upper: [i64; 3],
    pub split_dim: usize,
    /// A weight update of a pointwise convolution (1×1 kernel, unit stride, no padding) with
    /// the field folded into the reduction: the input channels of the canonical convolution
    /// are `batch × field positions` (batch outer) and its field is one position, so the AMP
    /// sums over the positions too, as poplibs folds such a pass into a matrix product.
    pub folded: bool,
}

impl PassShape {
    /// The pass of `p` (which must pass [`ConvParams::check`]) as a canonical convolution.
    pub fn of(p: &ConvParams, pass: ConvPass) -> PassShape {
        let rank = p.input_field.len();
        let front = 3 - rank;
        let lift = |v: &[usize], fill: usize| -> [usize; 3] {
            let mut a = [fill; 3];
            a[front..].copy_from_slice(v);
            a
        };
        let signed = |v: &[usize]| lift(v, 0).map(|x| x as i64);
        let (field, kernel) = (lift(&p.input_field, 1), lift(&p.kernel, 1));
        let (stride, dilation) = (lift(&p.stride, 1), lift(&p.dilation, 1));
        let (pl, pu) = (signed(&p.padding_lower), signed(&p.padding_upper));
        let out = lift(&p.output_field(), 1);
        let (ci, co) = (p.input_channels / p.groups, p.output_channels / p.groups);
        let ext = |d: usize| (dilation[d] * (kernel[d] - 1)) as i64;
        let shape = match pass {
            ConvPass::Forward => PassShape {
                n: p.batch,
                g: p.groups,
                ci,
                co,
                field,
                kernel,
                stride,
                dilation,
                input_dilation: [1; 3],
                pad_lower: pl,
                pad_upper: pu,
                split_dim: front,
                folded: false,
            },
            // dX = conv(dY dilated by the stride, W flipped with ci and co swapped).
            ConvPass::InputGradient => PassShape {
                n: p.batch,
                g: p.groups,
                ci: co,
                co: ci,
                field: out,
                kernel,
                stride: [1; 3],
                dilation,
                input_dilation: stride,
                pad_lower: [0, 1, 2].map(|d| ext(d) - pl[d]),
                pad_upper: [0, 1, 2]
                    .map(|d| field[d] as i64 - 1 - (stride[d] * (out[d] - 1)) as i64 + pl[d]),
                split_dim: front,
                folded: false,
            },
            // dW[co, ci] = Σ over batch and positions of dY · X: one position, the batch and
            // the field folded into the input channels.
            ConvPass::WeightUpdate if p.is_pointwise() => PassShape {
                n: ci,
                g: p.groups,
                ci: p.batch * field.iter().product::<usize>(),
                co,
                field: [1; 3],
                kernel: [1; 3],
                stride: [1; 3],
                dilation: [1; 3],
                input_dilation: [1; 3],
                pad_lower: [0; 3],
                pad_upper: [0; 3],
                split_dim: front,
                folded: true,
            },
            // dW = conv(X with batch and channels swapped, dY as the kernel), its output
            // field the kernel's.
            ConvPass::WeightUpdate => PassShape {
                n: ci,
                g: p.groups,
                ci: p.batch,
                co,
                field,
                kernel: out,
                stride: dilation,
                dilation: stride,
                input_dilation: [1; 3],
                pad_lower: pl,
                pad_upper: [0, 1, 2].map(|d| {
                    ext(d) + (stride[d] * (out[d] - 1)) as i64 + 1 - field[d] as i64 - pl[d]
                }),
                split_dim: front,
                folded: false,
            },
        };
        debug_assert_eq!(
            shape.out_field(),
            match pass {
                ConvPass::Forward => out,
                ConvPass::InputGradient => field,
                ConvPass::WeightUpdate => kernel,
            }
        );
        shape
    }

    /// The output size of dimension `d`.
    pub fn out(&self, d: usize) -> usize {
        let dilated = (self.input_dilation[d] * (self.field[d] - 1) + 1) as i64;
        let extent = (self.dilation[d] * (self.kernel[d] - 1) + 1) as i64;
        let span = dilated + self.pad_lower[d] + self.pad_upper[d] - extent;
        if span < 0 {
            0
        } else {
            span as usize / self.stride[d] + 1
        }
    }

    pub fn out_field(&self) -> [usize; 3] {
        [self.out(0), self.out(1), self.out(2)]
    }

    /// Kernel positions (taps).
    pub fn taps(&self) -> usize {
        self.kernel.iter().product()
    }

    /// The input elements along dimension `d` that outputs `outs` read (some of them only
    /// through padding positions are left out); never empty, so that every vertex has an
    /// input window (a window larger than needed is harmless: positions are absolute).
    pub fn window(&self, d: usize, outs: std::ops::Range<usize>) -> std::ops::Range<usize> {
        let (s, dl, id) = (
            self.stride[d] as i64,
            self.dilation[d] as i64,
            self.input_dilation[d] as i64,
        );
        let last = self.field[d] as i64 - 1;
        let p_min = outs.start as i64 * s - self.pad_lower[d];
        let p_max =
            (outs.end as i64 - 1) * s + dl * (self.kernel[d] as i64 - 1) - self.pad_lower[d];
        let lo = ((p_min.max(0) as u64).div_ceil(id as u64) as i64).min(last);
        let hi = if p_max < 0 { 0 } else { (p_max / id).min(last) };
        lo as usize..(hi.max(lo) + 1) as usize
    }
}
