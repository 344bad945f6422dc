//! Loss ops: `NegativeLogLikelihoodLoss` and `SoftmaxCrossEntropyLoss` (the latter a
//! log-softmax over the classes, axis 1, then the former).
//!
//! The score of each element's target class is picked with a one-hot mask (a broadcast iota
//! of the classes compared with the labels in one `popops::map`) and a sum over the class
//! axis; `ignore_index` and the class weights enter the same mask. The reductions are
//! `popops::reduce`.

use poplar::{DType, Tensor};
use popops::expr::{select, Expr, _1, _2, _3, _4};
use popops::{Operation, ReduceParams};

use super::{Cx, NodeCx, Outputs, Value};
use crate::error::Result;
use crate::host::{ElemType, HostTensor};

pub(super) fn lower(cx: &mut Cx, n: &NodeCx) -> Option<Outputs> {
    Some(match n.node.op.as_str() {
        "NegativeLogLikelihoodLoss" => loss(cx, n, false),
        "SoftmaxCrossEntropyLoss" => loss(cx, n, true),
        _ => return None,
    })
}

/// How the per-element losses are combined (`reduction`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Reduction {
    None,
    Sum,
    /// The sum divided by the sum of the weights of the elements not ignored.
    Mean,
}

/// `NegativeLogLikelihoodLoss` (`softmax` false: the scores are log-probabilities) and
/// `SoftmaxCrossEntropyLoss` (`softmax` true: the log-softmax of the scores over axis 1,
/// also the optional second output `log_prob`). Scores `[N, C, d…]`, labels `[N, d…]`,
/// optional class weights `[C]`; the loss is `-w[t]·x[t]` per element, 0 where the label is
/// `ignore_index`.
fn loss(cx: &mut Cx, n: &NodeCx, softmax: bool) -> Outputs {
    let reduction = parse_reduction(n)?;
    let ignore = n.opt_int("ignore_index")?;
    let (x, ty) = cx.tensor(n, 0)?;
    let (labels, weights) = loss_inputs(cx, n, &x, ty)?;
    let log_prob = if softmax {
        Some(log_softmax(cx, n, &x)?)
    } else {
        None
    };
    let scores = log_prob.as_ref().unwrap_or(&x);
    let (iota, labels) = class_operands(cx, n, x.shape()[1], x.rank(), &labels)?;
    let weights = weights.map(|w| weight_view(n, &w, x.rank())).transpose()?;
    let classes = Classes {
        iota,
        labels,
        weights,
        ignore,
    };
    let picked = pick(cx, n, scores, &classes)?;
    let counted = if reduction == Reduction::Mean && (classes.weights.is_some() || ignore.is_some())
    {
        Some(counted_weights(cx, n, &x, &classes)?)
    } else {
        None
    };
    let out = reduce_loss(cx, n, &picked, counted.as_ref(), reduction)?;
    let mut outs = vec![Value::Device { t: out, ty }];
    if let Some(lp) = log_prob {
        outs.push(Value::Device { t: lp, ty });
    }
    Ok(outs)
}

fn parse_reduction(n: &NodeCx) -> Result<Reduction> {
    Ok(match n.string("reduction", "mean")?.as_str() {
        "none" => Reduction::None,
        "sum" => Reduction::Sum,
        "mean" => Reduction::Mean,
        other => {
            return Err(n.attr_error("reduction", format!("'{other}' is not none, sum or mean")))
        }
    })
}

/// The labels (`[N, d…]`, integers) and the optional class weights (`[C]`), checked against
/// the scores `x`.
fn loss_inputs(
    cx: &mut Cx,
    n: &NodeCx,
    x: &Tensor,
    ty: ElemType,
) -> Result<(Tensor, Option<Tensor>)> {
    if !ty.is_float() {
        return Err(n.type_error("input 0", ty, "is not a floating type"));
    }
    let shape = x.shape();
    if shape.len() < 2 {
        return Err(n.input_error(0, format!("shape {shape:?} is not [N, C, d…]")));
    }
    let (labels, lty) = cx.tensor(n, 1)?;
    if labels.dtype() != DType::I32 {
        return Err(n.type_error("input 1", lty, "is not int32 or int64"));
    }
    let want: Vec<usize> = [&shape[..1], &shape[2..]].concat();
    if labels.shape() != want.as_slice() {
        return Err(n.input_error(
            1,
            format!(
                "shape {:?} is not {want:?} for scores {shape:?}",
                labels.shape()
            ),
        ));
    }
    let weights = if n.has_input(2) {
        Some(cx.tensor(n, 2)?.0)
    } else {
        None
    };
    if let Some(w) = &weights {
        if w.shape() != [shape[1]] || w.dtype() != x.dtype() {
            return Err(n.input_error(
                2,
                format!(
                    "shape {:?} is not [{}] of the scores' type",
                    w.shape(),
                    shape[1]
                ),
            ));
        }
    }
    Ok((labels, weights))
}

/// `popops::reduce` of `t` over `dims`.
fn reduce(
    cx: &mut Cx,
    n: &NodeCx,
    t: &Tensor,
    dims: &[usize],
    params: ReduceParams,
    what: &str,
) -> Result<Tensor> {
    let name = cx.name(n, what);
    popops::reduce(cx.graph, t, t.dtype(), dims, params, &mut cx.prog, &name)
        .map_err(|e| n.lowering(e))
}

/// `t` reduced over axis 1, viewed with that axis kept (of size 1).
fn reduce_classes(cx: &mut Cx, n: &NodeCx, t: &Tensor, op: Operation) -> Result<Tensor> {
    let r = reduce(cx, n, t, &[1], ReduceParams::new(op), "classes")?;
    let mut keep = t.shape().to_vec();
    keep[1] = 1;
    r.reshape(&keep).map_err(|e| n.lowering(e))
}

/// The log-softmax of `x` over axis 1: `x - max - log Σ exp(x - max)`.
fn log_softmax(cx: &mut Cx, n: &NodeCx, x: &Tensor) -> Result<Tensor> {
    let m = reduce_classes(cx, n, x, Operation::Max)?;
    let e = cx.map(n, &(_1 - _2).exp(), &[x, &m], "exp")?;
    let s = reduce_classes(cx, n, &e, Operation::Add)?;
    cx.map(n, &(_1 - _2 - _3.log()), &[x, &m, &s], "log_softmax")
}

/// The classes `0..C` as an `i32` constant shaped `[C, 1, …]` to broadcast along axis 1 of a
/// rank-`rank` tensor, and the labels viewed as `[N, 1, d…]`.
fn class_operands(
    cx: &mut Cx,
    n: &NodeCx,
    classes: usize,
    rank: usize,
    labels: &Tensor,
) -> Result<(Tensor, Tensor)> {
    let mut shape = vec![classes];
    shape.extend(std::iter::repeat_n(1, rank - 2));
    let iota = HostTensor::int(ElemType::Int32, &shape, (0..classes as i64).collect());
    let name = cx.name(n, "classes");
    let iota = cx.constant(n, &iota, &name)?;
    let mut lshape = labels.shape().to_vec();
    lshape.insert(1, 1);
    let l = labels.reshape(&lshape).map_err(|e| n.lowering(e))?;
    Ok((iota, l))
}

/// Whether class `iota` (`_a`) is the label (`_b`), and the label is not `ignore`.
fn is_target(a: Expr, b: Expr, ignore: Option<i64>) -> Expr {
    let eq = a.equal(b.clone());
    match ignore {
        Some(i) => eq.and(b.not_equal(i as f64)),
        None => eq,
    }
}

/// The class weights viewed as `[C, 1, …]` for a rank-`rank` tensor.
fn weight_view(n: &NodeCx, w: &Tensor, rank: usize) -> Result<Tensor> {
    let mut shape = w.shape().to_vec();
    shape.extend(std::iter::repeat_n(1, rank - 2));
    w.reshape(&shape).map_err(|e| n.lowering(e))
}

/// The operands of the one-hot masks: the classes, the labels and the class weights (all
/// shaped to broadcast with the scores), and the label ignored.
struct Classes {
    iota: Tensor,
    labels: Tensor,
    weights: Option<Tensor>,
    ignore: Option<i64>,
}

/// `-w[t]·x[t]` per element `[N, d…]` (0 where the label is ignored).
fn pick(cx: &mut Cx, n: &NodeCx, x: &Tensor, c: &Classes) -> Result<Tensor> {
    let target = is_target(_2, _3, c.ignore);
    let masked = match &c.weights {
        Some(w) => {
            let e = select(-(_1 * _4), 0.0, target);
            cx.map(n, &e, &[x, &c.iota, &c.labels, w], "pick")?
        }
        None => {
            let e = select(-_1, 0.0, target);
            cx.map(n, &e, &[x, &c.iota, &c.labels], "pick")?
        }
    };
    let add = ReduceParams::new(Operation::Add);
    reduce(cx, n, &masked, &[1], add, "picked")
}

/// The weight of each element's target class `[N, d…]`: 1 or `weights[t]`, 0 where the label
/// is ignored.
fn counted_weights(cx: &mut Cx, n: &NodeCx, x: &Tensor, c: &Classes) -> Result<Tensor> {
    let w = match &c.weights {
        Some(w) => w.clone(),
        None => {
            let classes = x.shape()[1];
            let ty = ElemType::of_device(x.dtype());
            let ones = HostTensor::float(ty, &[classes], vec![1.0; classes]);
            let name = cx.name(n, "ones");
            let ones = cx.constant(n, &ones, &name)?;
            weight_view(n, &ones, x.rank())?
        }
    };
    let e = select(_1, 0.0, is_target(_2, _3, c.ignore));
    let masked = cx.map(n, &e, &[&w, &c.iota, &c.labels], "weights")?;
    let add = ReduceParams::new(Operation::Add);
    reduce(cx, n, &masked, &[1], add, "counted")
}

/// The per-element losses combined by `reduction`; a mean divides by the sum of `counted`,
/// or by the number of elements when it is `None`.
fn reduce_loss(
    cx: &mut Cx,
    n: &NodeCx,
    picked: &Tensor,
    counted: Option<&Tensor>,
    reduction: Reduction,
) -> Result<Tensor> {
    let all: Vec<usize> = (0..picked.rank()).collect();
    let add = ReduceParams::new(Operation::Add);
    match (reduction, counted) {
        (Reduction::None, _) => Ok(picked.clone()),
        (Reduction::Sum, _) => reduce(cx, n, picked, &all, add, "sum"),
        (Reduction::Mean, None) => {
            let count = picked.num_elements().max(1) as f32;
            reduce(cx, n, picked, &all, add.with_scale(1.0 / count), "mean")
        }
        (Reduction::Mean, Some(w)) => {
            let s = reduce(cx, n, picked, &all, add, "sum")?;
            let ws = reduce(cx, n, w, &all, add, "weight_sum")?;
            cx.map(n, &(_1 / _2), &[&s, &ws], "mean")
        }
    }
}
