//! The training graph of a [`Sequential`] network: the forward pass, the softmax
//! cross-entropy of the logits, the backward pass layer by layer and the SGD update, each
//! layer the library's op.
//!
//! Host tensors: `x` (`[batch, channels, height, width]`, f32) and `labels` (`[batch]`, i32)
//! written before a run; `logits` (`[batch, classes]`) and `loss` (`[batch]`, per sample)
//! read after; `p{i}` the parameters and `g{i}` their gradients of the last step (of the mean
//! loss over the batch), in the order of [`Sequential::all_param_shapes`].
//!
//! Programs: [`TRAIN`] (forward, loss, backward, `p -= lr · g`) and [`EVALUATE`] (forward and
//! loss only).

use poplar_compiler::compiler::{compile, CompileOptions};
use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{Graph, Tensor};
use poplar_core::dtype::DType;
use poplar_core::target::Target;
use poplar_exe::exe::Executable;
use poplin::{ConvOptions, ConvParams, ConvPass, ConvPlan, MatMulOptions, MatMulParams};
use popops::expr::{_1, _2};
use popops::Operation;

use super::{Layer, Sequential, SequentialError, Shape};
use crate::ops::{cross_entropy, non_linearity, non_linearity_input_gradient, pool};
use crate::ops::{
    pool_input_gradient, CrossEntropyInput, NonLinearityType, PoolParams, PoolingType,
};

/// Program index of one training step.
pub const TRAIN: usize = 0;
/// Program index of the forward pass and loss alone.
pub const EVALUATE: usize = 1;

/// A network built and compiled for a batch size and learning rate.
#[derive(Debug, Clone)]
pub struct CompiledSequential {
    pub exe: Executable,
    pub model: Sequential,
    pub batch: usize,
    pub lr: f32,
}

/// What the backward pass of a layer needs from its forward pass.
enum Saved {
    Conv {
        x: Tensor,
        w: Tensor,
        input_gradient: Option<Box<ConvPlan>>,
        weight_update: Box<ConvPlan>,
    },
    Relu {
        y: Tensor,
    },
    Pool {
        params: PoolParams,
        x: Tensor,
    },
    Dense {
        x: Tensor,
        w: Tensor,
        shape: Vec<usize>,
        first: bool,
    },
}

/// The graph as it is built.
struct Net<'a> {
    graph: Graph,
    target: &'a Target,
    batch: usize,
    params: Vec<Tensor>,
    grads: Vec<Tensor>,
}

/// Builds and compiles the training graph of `model` for batches of `batch` samples and SGD
/// with learning rate `lr` on `target` (one chip).
pub fn build(
    target: &Target,
    model: &Sequential,
    batch: usize,
    lr: f32,
) -> Result<CompiledSequential, SequentialError> {
    if batch == 0 {
        return Err(SequentialError::Options {
            what: "batch",
            reason: "must be at least 1".into(),
        });
    }
    if !(lr.is_finite() && lr > 0.0) {
        return Err(SequentialError::Options {
            what: "lr",
            reason: format!("{lr} is not a positive number"),
        });
    }
    crate::link();
    let mut net = Net {
        graph: Graph::new(target),
        target,
        batch,
        params: Vec::new(),
        grads: Vec::new(),
    };
    let mut fwd = Vec::new();
    let x = net.input(model)?;
    let mut act = x.clone();
    let mut saved = Vec::with_capacity(model.layers().len());
    for (l, layer) in model.layers().iter().enumerate() {
        let (y, s) = net.forward(l, layer, model.shape(l), &act, &mut fwd)?;
        saved.push(s);
        act = y;
    }
    let labels = net.graph.add_variable(DType::I32, &[batch], "labels");
    net.graph.set_tile_mapping(&labels, 0)?;
    let ce = cross_entropy(
        &mut net.graph,
        CrossEntropyInput::Logits,
        &act,
        &labels,
        &mut fwd,
        "loss",
    )?;
    let mut bwd = Vec::new();
    let scale = 1.0 / batch as f32;
    let mut dy = popops::map(
        &mut net.graph,
        &(_1 * scale),
        &[&ce.grad],
        &mut bwd,
        "dlogits",
    )?;
    for (l, s) in saved.iter().enumerate().rev() {
        dy = net.backward(l, s, &dy, &mut bwd)?;
    }
    net.update(lr, &mut bwd)?;
    let g = &mut net.graph;
    g.create_host_write("x", &x)?;
    g.create_host_write("labels", &labels)?;
    g.create_host_read("logits", &act)?;
    g.create_host_read("loss", &ce.loss)?;
    for (i, (p, d)) in net.params.iter().zip(&net.grads).enumerate() {
        g.create_host_read_write(&format!("p{i}"), p)?;
        g.create_host_read(&format!("g{i}"), d)?;
    }
    let train = Program::seq(fwd.iter().cloned().chain(bwd).collect());
    let evaluate = Program::seq(fwd);
    let exe = compile(&net.graph, &[train, evaluate], &CompileOptions::default())?;
    Ok(CompiledSequential {
        exe,
        model: model.clone(),
        batch,
        lr,
    })
}

/// The convolution of layer `l` (`c` input channels of `h × w`) as poplin's parameters.
fn conv_params(batch: usize, [c, h, w]: [usize; 3], layer: &Layer) -> ConvParams {
    let Layer::Conv {
        channels,
        kernel,
        stride,
        padding,
    } = *layer
    else {
        unreachable!("conv_params of a conv layer")
    };
    ConvParams::new(batch, c, channels, &[h, w], &[kernel, kernel])
        .with_stride(&[stride, stride])
        .with_padding(&[padding, padding], &[padding, padding])
}

impl Net<'_> {
    fn conv_plan(&self, p: &ConvParams, pass: ConvPass) -> Result<ConvPlan, SequentialError> {
        Ok(poplin::plan_convolution(
            self.target,
            p,
            pass,
            &ConvOptions::default(),
        )?)
    }

    fn matmul_plan(&self, m: usize, k: usize, n: usize) -> Result<poplin::Plan, SequentialError> {
        let p = MatMulParams { groups: 1, m, k, n };
        Ok(poplin::plan(self.target, p, &MatMulOptions::default())?)
    }

    /// The input `x`, laid out for the first layer when it is a convolution.
    fn input(&mut self, model: &Sequential) -> Result<Tensor, SequentialError> {
        let [c, h, w] = model.input();
        if let Some(layer @ Layer::Conv { .. }) = model.layers().first() {
            let p = conv_params(self.batch, [c, h, w], layer);
            let plan = self.conv_plan(&p, ConvPass::Forward)?;
            return Ok(poplin::create_conv_input(&mut self.graph, &plan, "x")?);
        }
        let x = self
            .graph
            .add_variable(DType::F32, &[self.batch, c, h, w], "x");
        self.graph.map_linearly(&x, 16)?;
        Ok(x)
    }

    /// A bias of `n` elements spread over the tiles, as a parameter; added to `y` along
    /// dimension 1.
    fn add_bias(
        &mut self,
        y: &Tensor,
        n: usize,
        prog: &mut Vec<Program>,
        name: &str,
    ) -> Result<Tensor, SequentialError> {
        let b = self
            .graph
            .add_variable(DType::F32, &[n], &format!("{name}/b"));
        self.graph.map_linearly(&b, 4)?;
        let mut view = vec![n];
        view.resize(y.rank() - 1, 1);
        let y = popops::map(
            &mut self.graph,
            &(_1 + _2),
            &[y, &b.reshape(&view)?],
            prog,
            name,
        )?;
        self.params.push(b);
        Ok(y)
    }

    /// Layer `l`'s forward pass on `x` (of sample shape `shape`).
    fn forward(
        &mut self,
        l: usize,
        layer: &Layer,
        shape: Shape,
        x: &Tensor,
        prog: &mut Vec<Program>,
    ) -> Result<(Tensor, Saved), SequentialError> {
        let name = format!("layer{l}");
        match (layer, shape) {
            (Layer::Conv { channels, .. }, Shape::Image(s)) => {
                let p = conv_params(self.batch, s, layer);
                let fwd = self.conv_plan(&p, ConvPass::Forward)?;
                let w = poplin::create_conv_weights(&mut self.graph, &fwd, &format!("{name}/w"))?;
                let (y, conv) = poplin::convolution(&mut self.graph, x, &w, &fwd, &name)?;
                prog.push(conv);
                self.params.push(w.clone());
                let y = self.add_bias(&y, *channels, prog, &format!("{name}/bias"))?;
                let input_gradient = if l > 0 {
                    Some(Box::new(self.conv_plan(&p, ConvPass::InputGradient)?))
                } else {
                    None
                };
                let weight_update = Box::new(self.conv_plan(&p, ConvPass::WeightUpdate)?);
                let saved = Saved::Conv {
                    x: x.clone(),
                    w,
                    input_gradient,
                    weight_update,
                };
                Ok((y, saved))
            }
            (Layer::MaxPool { kernel, stride } | Layer::AvgPool { kernel, stride }, _) => {
                let kind = match layer {
                    Layer::MaxPool { .. } => PoolingType::Max,
                    _ => PoolingType::Avg,
                };
                let params =
                    PoolParams::new(kind, &[*kernel, *kernel]).with_stride(&[*stride, *stride]);
                let y = pool(&mut self.graph, &params, x, prog, &name)?;
                Ok((
                    y,
                    Saved::Pool {
                        params,
                        x: x.clone(),
                    },
                ))
            }
            (Layer::Relu, _) => {
                let y = non_linearity(&mut self.graph, NonLinearityType::Relu, x, prog, &name)?;
                Ok((y.clone(), Saved::Relu { y }))
            }
            (Layer::Dense { outputs }, s) => {
                let k = s.elements();
                let x2 = x.reshape(&[self.batch, k])?;
                let plan = self.matmul_plan(self.batch, k, *outputs)?;
                let w =
                    poplin::create_rhs(&mut self.graph, &plan, &format!("{name}/w"))?.index(0)?;
                let (y, mm) = poplin::matmul(&mut self.graph, &x2, &w, &plan, &name)?;
                prog.push(mm);
                self.params.push(w.clone());
                let y = self.add_bias(&y, *outputs, prog, &format!("{name}/bias"))?;
                let saved = Saved::Dense {
                    x: x2,
                    w,
                    shape: x.shape().to_vec(),
                    first: l == 0,
                };
                Ok((y, saved))
            }
            (Layer::Conv { .. }, Shape::Flat(_)) => unreachable!("checked by Sequential::new"),
        }
    }

    /// Layer `l`'s backward pass: the gradients of its parameters (pushed in the order of its
    /// parameters, before those of the layers after it) and the gradient of its input.
    fn backward(
        &mut self,
        l: usize,
        saved: &Saved,
        dy: &Tensor,
        prog: &mut Vec<Program>,
    ) -> Result<Tensor, SequentialError> {
        let name = format!("layer{l}/grad");
        let g = &mut self.graph;
        match saved {
            Saved::Relu { y } => Ok(non_linearity_input_gradient(
                g,
                NonLinearityType::Relu,
                y,
                dy,
                prog,
                &name,
            )?),
            Saved::Pool { params, x } => Ok(pool_input_gradient(g, params, x, dy, prog, &name)?),
            Saved::Conv {
                x,
                w,
                input_gradient,
                weight_update,
            } => {
                let (dw, p) = poplin::convolution_weight_gradient(
                    g,
                    x,
                    dy,
                    weight_update,
                    &format!("{name}/w"),
                )?;
                prog.push(p);
                let db = popops::reduce(
                    g,
                    dy,
                    DType::F32,
                    &[0, 2, 3],
                    Operation::Add,
                    prog,
                    &format!("{name}/b"),
                )?;
                self.grads.splice(0..0, [dw, db]);
                let Some(plan) = input_gradient else {
                    return Ok(dy.clone());
                };
                let (dx, p) = poplin::convolution_input_gradient(
                    &mut self.graph,
                    dy,
                    w,
                    plan,
                    &format!("{name}/x"),
                )?;
                prog.push(p);
                Ok(dx)
            }
            Saved::Dense { x, w, shape, first } => {
                let (n, k, m) = (self.batch, x.shape()[1], w.shape()[1]);
                let dw_plan = self.matmul_plan(k, n, m)?;
                let g = &mut self.graph;
                let (dw, p) =
                    poplin::matmul(g, &x.transpose()?, dy, &dw_plan, &format!("{name}/w"))?;
                prog.push(p);
                let db = popops::reduce(
                    g,
                    dy,
                    DType::F32,
                    &[0],
                    Operation::Add,
                    prog,
                    &format!("{name}/b"),
                )?;
                self.grads.splice(0..0, [dw, db]);
                if *first {
                    return Ok(dy.clone());
                }
                let dx_plan = self.matmul_plan(n, m, k)?;
                let (dx, p) = poplin::matmul(
                    &mut self.graph,
                    dy,
                    &w.transpose()?,
                    &dx_plan,
                    &format!("{name}/x"),
                )?;
                prog.push(p);
                Ok(dx.reshape(shape)?)
            }
        }
    }

    /// `p -= lr · g` for every parameter.
    fn update(&mut self, lr: f32, prog: &mut Vec<Program>) -> Result<(), SequentialError> {
        for (i, (p, g)) in self.params.iter().zip(&self.grads).enumerate() {
            popops::map_in_place(
                &mut self.graph,
                &(_1 - _2 * lr),
                &[p, g],
                prog,
                &format!("update{i}"),
            )?;
        }
        Ok(())
    }
}
