//! Building a planned convolution into a graph: operands laid out as the plan wants them, the
//! pass as `ConvPartial` vertices (and `SumBlocks` when the input channels are split), and the
//! program that runs them.
//!
//! The user's tensors have the layouts of [`ConvParams`] (ONNX's): the input
//! `x[batch, input_channels, *field]`, the weights `w[output_channels, input_channels / groups,
//! *kernel]` and the output or its gradient `y[batch, output_channels, *output_field]`. Each
//! pass reads two of them as the operands of its canonical convolution ([`PassShape`]) through
//! views (reshape, dimension shuffle, reverse), so no operand is copied before the exchange
//! that feeds the vertices:
//!
//! | pass | canonical input `[n, g, ci, f]` | canonical weights `[g, co, ci, k]` | result |
//! |---|---|---|---|
//! | [`ConvPass::Forward`] | `x` | `w` | `y` |
//! | [`ConvPass::InputGradient`] | `dy` | `w`, `ci`/`co` swapped, flipped | `dx` |
//! | [`ConvPass::WeightUpdate`] | `x`, batch and channels swapped | `dy`, batch as `ci` | `dw` |

use std::ops::Range;

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{ComputeSet, Graph, GraphError, StateValue, Tensor};
use poplar_core::dtype::DType;
use poplar_core::target::TileId;

use super::codelets::Geom;
use super::params::{ConvParams, ConvPass, PassShape};
use super::plan::ConvPlan;

/// Errors of building a convolution.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConvError {
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// An operand whose shape is not the one the plan's parameters give.
    #[error("convolution ({pass:?} pass): {what} is {got:?}, the plan's parameters give {want:?}")]
    Shape {
        what: &'static str,
        pass: ConvPass,
        got: Vec<usize>,
        want: Vec<usize>,
    },
    /// An operand of another type than the plan's.
    #[error("convolution ({pass:?} pass): {what} is {got:?}, the plan is for {want:?} operands")]
    Type {
        what: &'static str,
        pass: ConvPass,
        got: DType,
        want: DType,
    },
    /// A plan of another pass than the operation computes.
    #[error("convolution: {op} needs a plan of the {need:?} pass, not of the {plan:?} pass")]
    Pass {
        op: &'static str,
        plan: ConvPass,
        need: ConvPass,
    },
    /// An operand the plan's pass does not read.
    #[error("convolution: the {pass:?} pass does not read the {what}; plan the pass that does")]
    NotAnOperand { what: &'static str, pass: ConvPass },
}

/// The user's tensors of a convolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// `x[batch, input_channels, *field]`.
    Input,
    /// `w[output_channels, input_channels / groups, *kernel]`.
    Weights,
    /// `y` or `dy`, `[batch, output_channels, *output_field]`.
    Output,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Weights => "weights",
            Role::Output => "output gradient",
        }
    }

    /// Its shape in the user's layout.
    fn shape(self, p: &ConvParams) -> Vec<usize> {
        let (lead, field) = match self {
            Role::Input => ([p.batch, p.input_channels], p.input_field.clone()),
            Role::Weights => (
                [p.output_channels, p.input_channels / p.groups],
                p.kernel.clone(),
            ),
            Role::Output => ([p.batch, p.output_channels], p.output_field()),
        };
        lead.into_iter().chain(field).collect()
    }

    /// Its shape with the channels split by group and the field lifted to three dimensions:
    /// `[n, g, ci, f]`, `[g, co, ci, k]` or `[n, g, co, o]`.
    fn grouped(self, p: &ConvParams) -> [usize; 6] {
        let lift = |v: &[usize]| {
            let mut a = [1; 3];
            a[3 - v.len()..].copy_from_slice(v);
            a
        };
        let (ci, co) = (p.input_channels / p.groups, p.output_channels / p.groups);
        let (lead, f) = match self {
            Role::Input => ([p.batch, p.groups, ci], lift(&p.input_field)),
            Role::Weights => ([p.groups, co, ci], lift(&p.kernel)),
            Role::Output => ([p.batch, p.groups, co], lift(&p.output_field())),
        };
        [lead[0], lead[1], lead[2], f[0], f[1], f[2]]
    }
}

/// The roles a pass reads as its canonical input and weights, and the role of its result.
fn roles(pass: ConvPass) -> (Role, Role, Role) {
    match pass {
        ConvPass::Forward => (Role::Input, Role::Weights, Role::Output),
        ConvPass::InputGradient => (Role::Output, Role::Weights, Role::Input),
        ConvPass::WeightUpdate => (Role::Input, Role::Output, Role::Weights),
    }
}

/// The dimension order taking a grouped tensor of `role` to the canonical operand of `pass`
/// (it is its own inverse but for `WeightUpdate`'s weights), and whether the kernel is
/// flipped.
fn to_canonical_perm(role: Role, pass: ConvPass) -> ([usize; 6], bool) {
    match (pass, role) {
        (ConvPass::WeightUpdate, Role::Input) => ([2, 1, 0, 3, 4, 5], false),
        (ConvPass::WeightUpdate, Role::Output) => ([1, 2, 0, 3, 4, 5], false),
        (ConvPass::InputGradient, Role::Weights) => ([0, 2, 1, 3, 4, 5], true),
        _ => ([0, 1, 2, 3, 4, 5], false),
    }
}

/// The inverse of a permutation.
fn inverse(perm: [usize; 6]) -> [usize; 6] {
    let mut inv = [0; 6];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    inv
}

fn flip(t: Tensor) -> Result<Tensor, GraphError> {
    t.reverse(3)?.reverse(4)?.reverse(5)
}

/// The user's tensor `t` of `role` as the canonical operand of `plan`'s pass.
fn to_canonical(t: &Tensor, role: Role, plan: &ConvPlan) -> Result<Tensor, GraphError> {
    let (perm, flipped) = to_canonical_perm(role, plan.pass);
    let c = t.reshape(&role.grouped(&plan.params))?.dim_shuffle(&perm)?;
    let c = if flipped { flip(c)? } else { c };
    if plan.shape.folded {
        // `[a, g, n, f0, f1, f2]` → `[a, g, n·f, 1, 1, 1]`.
        let s = c.shape().to_vec();
        return c.reshape(&[s[0], s[1], s[2] * s[3] * s[4] * s[5], 1, 1, 1]);
    }
    Ok(c)
}

/// The canonical operand `c` of `plan`'s pass as the user's tensor of `role`.
fn from_canonical(c: Tensor, role: Role, plan: &ConvPlan) -> Result<Tensor, GraphError> {
    let (perm, flipped) = to_canonical_perm(role, plan.pass);
    let grouped = role.grouped(&plan.params);
    let c = if plan.shape.folded {
        c.reshape(&perm.map(|d| grouped[d]))?
    } else {
        c
    };
    let c = if flipped { flip(c)? } else { c };
    c.dim_shuffle(&inverse(perm))?
        .reshape(&role.shape(&plan.params))
}

/// The canonical result `[n, g, co, o]` of `pass` as the user's tensor.
fn result_view(c: &Tensor, pass: ConvPass, p: &ConvParams) -> Result<Tensor, GraphError> {
    // The weight update's result is `[ci, g, co, k]`; the weights are `[g, co, ci, k]`.
    let perm = match pass {
        ConvPass::WeightUpdate => [1, 2, 0, 3, 4, 5],
        _ => [0, 1, 2, 3, 4, 5],
    };
    c.dim_shuffle(&perm)?.reshape(&roles(pass).2.shape(p))
}

/// The blocks of one dimension of a canonical tensor: `(block index, range)`, empty blocks
/// left out.
type Axis = Vec<(usize, Range<usize>)>;

fn axis(parts: usize, range: impl Fn(usize) -> Range<usize>) -> Axis {
    (0..parts)
        .map(|i| (i, range(i)))
        .filter(|(_, r)| !r.is_empty())
        .collect()
}

/// How a canonical tensor is cut into variables: the blocks of each of its six dimensions,
/// the tile of each block (given the block indices), and the order of the dimensions in each
/// block's memory (`order[k]` is the canonical dimension stored `k`-th outermost).
struct Blocks<'a> {
    axes: Vec<Axis>,
    tile: &'a dyn Fn(&[usize]) -> TileId,
    order: [usize; 6],
}

/// Blocks stored in the canonical order.
const ROW_MAJOR: [usize; 6] = [0, 1, 2, 3, 4, 5];

/// A tensor made of one variable per block, each on its tile.
fn blocked(
    graph: &mut Graph,
    dtype: DType,
    b: &Blocks<'_>,
    name: &str,
) -> Result<Tensor, GraphError> {
    fn go(
        graph: &mut Graph,
        dtype: DType,
        b: &Blocks<'_>,
        name: &str,
        at: &mut Vec<usize>,
    ) -> Result<Tensor, GraphError> {
        let d = at.len();
        if d == b.axes.len() {
            let shape: Vec<usize> = b.order.iter().map(|&k| b.axes[k][at[k]].1.len()).collect();
            let blocks: Vec<usize> = (0..d).map(|k| b.axes[k][at[k]].0).collect();
            let v = graph.add_variable(dtype, &shape, &format!("{name}{blocks:?}"));
            graph.set_tile_mapping(&v, (b.tile)(&blocks))?;
            return v.dim_shuffle(&inverse(b.order));
        }
        let mut parts = Vec::with_capacity(b.axes[d].len());
        for i in 0..b.axes[d].len() {
            at.push(i);
            parts.push(go(graph, dtype, b, name, at)?);
            at.pop();
        }
        Tensor::concat_dim(&parts, d)
    }
    go(graph, dtype, b, name, &mut Vec::new())
}

/// The canonical output's (or a partial's) blocks: batch, group, output channels and the
/// three field dimensions, the field split along `split_dim`.
fn output_axes(plan: &ConvPlan) -> Vec<Axis> {
    let s = &plan.shape;
    let mut axes = vec![
        axis(plan.pb, |b| plan.n_range(b)),
        axis(s.g, |g| g..g + 1),
        axis(plan.pco, |j| plan.co_range(j)),
    ];
    for d in 0..3 {
        let parts = if d == s.split_dim { plan.pf } else { 1 };
        axes.push(axis(parts, |f| plan.out_range(f, d)));
    }
    axes
}

/// Field block of a block index list (the split dimension's entry, at `3 + split_dim`).
fn field_block(plan: &ConvPlan, at: &[usize]) -> usize {
    at[3 + plan.shape.split_dim]
}

/// The canonical operand of `role` laid out for `plan`: the input's block `(b, g, l, f)` on
/// `plan.tile(g, b, 0, f, l)` (the field split evenly along `split_dim`), the weights' block
/// `(g, j, l)` on `plan.tile(g, 0, j, 0, l)`.
fn create_canonical(
    graph: &mut Graph,
    plan: &ConvPlan,
    input: bool,
    name: &str,
) -> Result<Tensor, GraphError> {
    let s = &plan.shape;
    let dtype = plan.params.input_type;
    if input {
        let mut axes = vec![
            axis(plan.pb, |b| plan.n_range(b)),
            axis(s.g, |g| g..g + 1),
            axis(plan.pci, |l| plan.ci_range(l)),
        ];
        for d in 0..3 {
            let parts = if d == s.split_dim { plan.pf } else { 1 };
            axes.push(axis(parts, |f| plan.in_range(f, d)));
        }
        let tile = |at: &[usize]| plan.tile(at[1], at[0], 0, field_block(plan, at), at[2]);
        // Channel-major within a block: a channel's window over the block's batch is one run.
        let order = [1, 2, 0, 3, 4, 5];
        blocked(
            graph,
            dtype,
            &Blocks {
                axes,
                tile: &tile,
                order,
            },
            name,
        )
    } else {
        let mut axes = vec![
            axis(s.g, |g| g..g + 1),
            axis(plan.pco, |j| plan.co_range(j)),
            axis(plan.pci, |l| plan.ci_range(l)),
        ];
        axes.extend((0..3).map(|d| axis(1, |_| 0..s.kernel[d])));
        let tile = |at: &[usize]| plan.tile(at[0], 0, at[1], 0, at[2]);
        let order = ROW_MAJOR;
        blocked(
            graph,
            dtype,
            &Blocks {
                axes,
                tile: &tile,
                order,
            },
            name,
        )
    }
}

/// Creates the user's tensor of `role` laid out for `plan`, if its pass reads it.
fn create(graph: &mut Graph, plan: &ConvPlan, role: Role, name: &str) -> Result<Tensor, ConvError> {
    let (input, weights, _) = roles(plan.pass);
    if role != input && role != weights {
        return Err(ConvError::NotAnOperand {
            what: role.name(),
            pass: plan.pass,
        });
    }
    let c = create_canonical(graph, plan, role == input, name)?;
    Ok(from_canonical(c, role, plan)?)
}

/// The input `x[batch, input_channels, *field]` laid out for a [`ConvPass::Forward`] or
/// [`ConvPass::WeightUpdate`] plan (poplibs' `createInput`): each tile holds the input
/// channels and field block it reads first.
pub fn create_conv_input(
    graph: &mut Graph,
    plan: &ConvPlan,
    name: &str,
) -> Result<Tensor, ConvError> {
    create(graph, plan, Role::Input, name)
}

/// The weights `w[output_channels, input_channels / groups, *kernel]` laid out for a
/// [`ConvPass::Forward`] or [`ConvPass::InputGradient`] plan (poplibs' `createWeights`).
pub fn create_conv_weights(
    graph: &mut Graph,
    plan: &ConvPlan,
    name: &str,
) -> Result<Tensor, ConvError> {
    create(graph, plan, Role::Weights, name)
}

/// The output gradient `dy[batch, output_channels, *output_field]` laid out for a
/// [`ConvPass::InputGradient`] or [`ConvPass::WeightUpdate`] plan.
pub fn create_conv_output_gradient(
    graph: &mut Graph,
    plan: &ConvPlan,
    name: &str,
) -> Result<Tensor, ConvError> {
    create(graph, plan, Role::Output, name)
}

/// `t`, if it has the shape and type `role` has in `plan`.
fn checked(t: &Tensor, role: Role, plan: &ConvPlan) -> Result<(), ConvError> {
    let want = role.shape(&plan.params);
    if t.shape() != want {
        return Err(ConvError::Shape {
            what: role.name(),
            pass: plan.pass,
            got: t.shape().to_vec(),
            want,
        });
    }
    if t.dtype() != plan.params.input_type {
        return Err(ConvError::Type {
            what: role.name(),
            pass: plan.pass,
            got: t.dtype(),
            want: plan.params.input_type,
        });
    }
    Ok(())
}

/// The pass of `plan` with operands `a` and `b`: the two tensors the pass reads, in the
/// order of [`ConvPass`]'s table (module notes). Returns the result in the user's layout (f32)
/// and the program computing it.
fn run_pass(
    graph: &mut Graph,
    a: &Tensor,
    b: &Tensor,
    plan: &ConvPlan,
    name: &str,
) -> Result<(Tensor, Program), ConvError> {
    let (ra, rb, _) = roles(plan.pass);
    checked(a, ra, plan)?;
    checked(b, rb, plan)?;
    let p = &plan.params;
    let input = to_canonical(a, ra, plan)?;
    let weights = to_canonical(b, rb, plan)?;
    let (out, prog) = convolve(graph, &input, &weights, plan, name)?;
    Ok((result_view(&out, plan.pass, p)?, prog))
}

/// `y = conv(x, w)` as a [`ConvPass::Forward`] plan gives it (poplibs' `convolution`): `x` is
/// `[batch, input_channels, *field]`, `w` `[output_channels, input_channels / groups,
/// *kernel]`, both of the plan's type, any layout (operands not made by
/// [`create_conv_input`]/[`create_conv_weights`] are fetched by exchange). Returns `y`
/// (`[batch, output_channels, *output_field]`, f32) and the program computing it.
pub fn convolution(
    graph: &mut Graph,
    x: &Tensor,
    w: &Tensor,
    plan: &ConvPlan,
    name: &str,
) -> Result<(Tensor, Program), ConvError> {
    expect_pass(plan, ConvPass::Forward, "convolution")?;
    run_pass(graph, x, w, plan, name)
}

/// The input gradient `dx` from the output gradient `dy` and the weights `w`, as a
/// [`ConvPass::InputGradient`] plan gives it (poplibs' backward pass). `dy` and `w` are of
/// the plan's type; `dx` (`[batch, input_channels, *field]`) is f32.
pub fn convolution_input_gradient(
    graph: &mut Graph,
    dy: &Tensor,
    w: &Tensor,
    plan: &ConvPlan,
    name: &str,
) -> Result<(Tensor, Program), ConvError> {
    expect_pass(plan, ConvPass::InputGradient, "convolution_input_gradient")?;
    run_pass(graph, dy, w, plan, name)
}

/// The weights' gradient `dw` from the input `x` and the output gradient `dy`, as a
/// [`ConvPass::WeightUpdate`] plan gives it (poplibs' weight update, without the scaled add:
/// `popops` adds it). `x` and `dy` are of the plan's type; `dw` (`[output_channels,
/// input_channels / groups, *kernel]`) is f32.
pub fn convolution_weight_gradient(
    graph: &mut Graph,
    x: &Tensor,
    dy: &Tensor,
    plan: &ConvPlan,
    name: &str,
) -> Result<(Tensor, Program), ConvError> {
    expect_pass(plan, ConvPass::WeightUpdate, "convolution_weight_gradient")?;
    run_pass(graph, x, dy, plan, name)
}

/// [`ConvError::Pass`] unless `plan` is of `pass`.
fn expect_pass(plan: &ConvPlan, pass: ConvPass, op: &'static str) -> Result<(), ConvError> {
    if plan.pass == pass {
        Ok(())
    } else {
        Err(ConvError::Pass {
            op,
            plan: plan.pass,
            need: pass,
        })
    }
}

/// The block of a canonical six-dimensional tensor given by a range per dimension (a range
/// covering its dimension is not sliced).
fn block(t: &Tensor, ranges: [Range<usize>; 6]) -> Result<Tensor, GraphError> {
    let mut b = t.clone();
    for (d, r) in ranges.into_iter().enumerate() {
        if r.len() != b.shape()[d] {
            b = b.slice_dim(d, r)?;
        }
    }
    Ok(b)
}

/// `[n, g, c, f0, f1, f2]` ranges.
fn ranges6(n: Range<usize>, g: usize, c: Range<usize>, f: &[Range<usize>; 3]) -> [Range<usize>; 6] {
    [n, g..g + 1, c, f[0].clone(), f[1].clone(), f[2].clone()]
}

/// The canonical convolution of `plan` (module notes of [`super::plan`]): `input` is
/// `[n, g, ci, f]`, `weights` `[g, co, ci, k]`; returns the output `[n, g, co, o]` (f32) laid
/// out with block `(b, g, j, f)` on `plan.tile(g, b, j, f, 0)`, and the program.
fn convolve(
    graph: &mut Graph,
    input: &Tensor,
    weights: &Tensor,
    plan: &ConvPlan,
    name: &str,
) -> Result<(Tensor, Program), GraphError> {
    // Output (and partial) block `(b, g, j, f)` on `plan.tile(g, b, j, f, l)`, `l = 0` for the
    // output.
    let on =
        |l: usize| move |at: &[usize]| plan.tile(at[1], at[0], at[2], field_block(plan, at), l);
    let make = |graph: &mut Graph, l: usize, what: String| {
        let tile = on(l);
        let layout = Blocks {
            axes: output_axes(plan),
            tile: &tile,
            order: ROW_MAJOR,
        };
        blocked(graph, DType::F32, &layout, &what)
    };
    let out = make(graph, 0, format!("{name}/out"))?;
    let mut partials = Vec::new();
    if plan.pci > 1 {
        for l in 0..plan.pci {
            partials.push(make(graph, l, format!("{name}/partial{l}"))?);
        }
    }
    let cs = graph.add_compute_set(&format!("{name}/convolve"));
    let codelet = match plan.params.input_type {
        DType::F16 => "ConvPartial<half>",
        _ => "ConvPartial<float>",
    };
    let targets: Vec<&Tensor> = if partials.is_empty() {
        vec![&out]
    } else {
        partials.iter().collect()
    };
    let mut cut = Cut::new(plan, input, weights, &targets);
    for_each_block(plan, |g, b, j, f, l| {
        let blocks = cut.blocks([g, b, j, f, l])?;
        add_partial_vertex(graph, cs, codelet, plan, blocks, [g, b, j, f, l])
    })?;
    let mut steps = vec![Program::execute(cs)];
    if plan.pci > 1 {
        steps.push(Program::execute(reduce(
            graph, plan, &partials, &out, name,
        )?));
    }
    Ok((out, Program::labelled(name, steps)))
}

/// Calls `f(g, b, j, f, l)` for every block of the plan.
fn for_each_block(
    plan: &ConvPlan,
    mut f: impl FnMut(usize, usize, usize, usize, usize) -> Result<(), GraphError>,
) -> Result<(), GraphError> {
    for g in 0..plan.shape.g {
        for b in 0..plan.pb {
            for j in 0..plan.pco {
                for fb in 0..plan.pf {
                    for l in 0..plan.pci {
                        f(g, b, j, fb, l)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// The output ranges of field block `f`.
fn out_ranges(plan: &ConvPlan, f: usize) -> [Range<usize>; 3] {
    [0, 1, 2].map(|d| plan.out_range(f, d))
}

/// The operands cut into the blocks of the plan, each cut made once from the whole tensor
/// (slicing a view costs in proportion to its regions, so each vertex slices its block, not
/// the whole operand).
struct Cut<'a> {
    plan: &'a ConvPlan,
    input: &'a Tensor,
    weights: &'a Tensor,
    targets: &'a [&'a Tensor],
    /// Input `(g, b)`: its blocks per `l`; weights `g`: per `(j, l)`.
    inputs: Option<((usize, usize), Vec<Tensor>)>,
    weight_blocks: Option<(usize, Vec<Tensor>)>,
}

/// A vertex's blocks: the input `[nb, 1, cib, f]` (all of the field), the weights `[1, cob,
/// cib, k]` and the target `[nb, 1, cob, o]` (its field block).
struct VertexBlocks {
    input: Tensor,
    weights: Tensor,
    target: Tensor,
}

impl<'a> Cut<'a> {
    fn new(
        plan: &'a ConvPlan,
        input: &'a Tensor,
        weights: &'a Tensor,
        targets: &'a [&'a Tensor],
    ) -> Cut<'a> {
        Cut {
            plan,
            input,
            weights,
            targets,
            inputs: None,
            weight_blocks: None,
        }
    }

    fn blocks(&mut self, [g, b, j, f, l]: [usize; 5]) -> Result<VertexBlocks, GraphError> {
        let p = self.plan;
        let s = &p.shape;
        let all = [0, 1, 2].map(|d| 0..s.field[d]);
        if self.inputs.as_ref().is_none_or(|(key, _)| *key != (g, b)) {
            let gb = block(self.input, ranges6(p.n_range(b), g, 0..s.ci, &all))?;
            let ls = (0..p.pci)
                .map(|l| block(&gb, ranges6(0..gb.shape()[0], 0, p.ci_range(l), &all)))
                .collect::<Result<_, _>>()?;
            self.inputs = Some(((g, b), ls));
        }
        if self.weight_blocks.as_ref().is_none_or(|(key, _)| *key != g) {
            let k = [0, 1, 2].map(|d| 0..s.kernel[d]);
            let [k0, k1, k2] = k;
            let wg = block(self.weights, [g..g + 1, 0..s.co, 0..s.ci, k0, k1, k2])?;
            let mut v = Vec::with_capacity(p.pco * p.pci);
            for jj in 0..p.pco {
                let wj = wg.slice_dim(1, p.co_range(jj))?;
                for ll in 0..p.pci {
                    v.push(wj.slice_dim(2, p.ci_range(ll))?);
                }
            }
            self.weight_blocks = Some((g, v));
        }
        let target = self.targets[l.min(self.targets.len() - 1)];
        let target = block(
            target,
            ranges6(p.n_range(b), g, p.co_range(j), &out_ranges(p, f)),
        )?;
        Ok(VertexBlocks {
            input: self.inputs.as_ref().expect("cut above").1[l].clone(),
            weights: self.weight_blocks.as_ref().expect("cut above").1[j * p.pci + l].clone(),
            target,
        })
    }
}

/// One `ConvPartial` vertex: block `(g, b, j, f, l)`, its operands' blocks cut by [`Cut`].
fn add_partial_vertex(
    graph: &mut Graph,
    cs: ComputeSet,
    codelet: &str,
    plan: &ConvPlan,
    blocks: VertexBlocks,
    [g, b, j, f, l]: [usize; 5],
) -> Result<(), GraphError> {
    let s: &PassShape = &plan.shape;
    let nb = plan.n_range(b).len();
    let outs = out_ranges(plan, f);
    let win = [0, 1, 2].map(|d| s.window(d, outs[d].clone()));
    let geom = Geom::for_block(s, nb, outs.clone());
    let (cib, cob) = (blocks.input.shape()[2], blocks.weights.shape()[1]);
    let ins = (0..cib)
        .map(|c| Ok(block(&blocks.input, ranges6(0..nb, 0, c..c + 1, &win))?.flatten()))
        .collect::<Result<Vec<_>, GraphError>>()?;
    // Weights `[g, co, ci, k]`: per output channel its `[cib, taps]`.
    let wts = (0..cob)
        .map(|co| Ok(blocks.weights.slice_dim(1, co..co + 1)?.flatten()))
        .collect::<Result<Vec<_>, GraphError>>()?;
    let all = [0, 1, 2].map(|d| 0..outs[d].len());
    let mut planes = Vec::with_capacity(nb * cob);
    for n in 0..nb {
        for co in 0..cob {
            planes.push(block(&blocks.target, ranges6(n..n + 1, 0, co..co + 1, &all))?.flatten());
        }
    }
    let v = graph.add_vertex(cs, codelet)?;
    graph.connect_list(v, "input", &ins)?;
    graph.connect_list(v, "weights", &wts)?;
    graph.connect_list(v, "out", &planes)?;
    graph.set_vertex_state(v, "geom", StateValue::vector(&geom.words()))?;
    graph.set_tile_mapping(v, plan.tile(g, b, j, f, l))
}

/// The compute set summing the input-channel split's partials into `out`, on the tile of each
/// output block.
fn reduce(
    graph: &mut Graph,
    plan: &ConvPlan,
    partials: &[Tensor],
    out: &Tensor,
    name: &str,
) -> Result<ComputeSet, GraphError> {
    let cs = graph.add_compute_set(&format!("{name}/reduce"));
    for_each_block(plan, |g, b, j, f, l| {
        if l > 0 {
            return Ok(());
        }
        let (nr, cor, outs) = (plan.n_range(b), plan.co_range(j), out_ranges(plan, f));
        let view = |t: &Tensor| {
            Ok::<_, GraphError>(block(t, ranges6(nr.clone(), g, cor.clone(), &outs))?.flatten())
        };
        let parts = partials.iter().map(view).collect::<Result<Vec<_>, _>>()?;
        let v = graph.add_vertex(cs, "SumBlocks<float>")?;
        graph.connect(v, "partials", &Tensor::concat(&parts)?)?;
        graph.connect(v, "out", &view(out)?)?;
        graph.set_tile_mapping(v, plan.tile(g, b, j, f, 0))
    })?;
    Ok(cs)
}
