//! Reductions and scans: the `Reduce*` family, `ArgMax`/`ArgMin`, `CumSum`, `TopK` and
//! `Hardmax`, onto `popops::reduce`, `popops::scan` and `popops::top_k`, with element-wise
//! steps before and after (`ReduceL2 = sqrt(Σ x²)`, `ReduceLogSumExp` with the maximum
//! subtracted first).

use poplar::{DType, Tensor};
use popops::expr::{Expr, _1, _2};
use popops::{Operation, ReduceParams};

use super::index::{axis_of, narrowed, widened};
use super::shape::broadcast_to;
use super::{Cx, NodeCx, Outputs, Value};
use crate::error::Result;
use crate::host::{ElemType, HostTensor};

pub(super) fn lower(cx: &mut Cx, n: &NodeCx) -> Option<Outputs> {
    let op = n.node.op.as_str();
    if let Some(kind) = Kind::of(op) {
        return Some(reduce(cx, n, kind));
    }
    Some(match op {
        "ArgMax" => arg(cx, n, true),
        "ArgMin" => arg(cx, n, false),
        "CumSum" => cumsum(cx, n),
        "TopK" => top_k(cx, n),
        "Hardmax" => hardmax(cx, n),
        _ => return None,
    })
}

/// One of the `Reduce*` ops.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
    L1,
    L2,
    LogSum,
    LogSumExp,
    SumSquare,
}

impl Kind {
    fn of(op: &str) -> Option<Kind> {
        Some(match op {
            "ReduceSum" => Kind::Sum,
            "ReduceMean" => Kind::Mean,
            "ReduceMax" => Kind::Max,
            "ReduceMin" => Kind::Min,
            "ReduceProd" => Kind::Prod,
            "ReduceL1" => Kind::L1,
            "ReduceL2" => Kind::L2,
            "ReduceLogSum" => Kind::LogSum,
            "ReduceLogSumExp" => Kind::LogSumExp,
            "ReduceSumSquare" => Kind::SumSquare,
            _ => return None,
        })
    }

    /// The reduction's operation.
    fn operation(self) -> Operation {
        match self {
            Kind::Max => Operation::Max,
            Kind::Min => Operation::Min,
            Kind::Prod => Operation::Mul,
            Kind::L2 | Kind::SumSquare => Operation::SquareAdd,
            _ => Operation::Add,
        }
    }

    /// The element-wise step before the reduction, if any.
    fn pre(self) -> Option<Expr> {
        match self {
            Kind::L1 => Some(_1.abs()),
            _ => None,
        }
    }

    /// The element-wise step after the reduction, if any.
    fn post(self) -> Option<Expr> {
        match self {
            Kind::L2 => Some(_1.sqrt()),
            Kind::LogSum => Some(_1.log()),
            _ => None,
        }
    }

    /// The result of reducing no elements.
    fn empty(self) -> f64 {
        match self {
            Kind::Max | Kind::LogSumExp | Kind::LogSum => f64::NEG_INFINITY,
            Kind::Min => f64::INFINITY,
            Kind::Prod => 1.0,
            Kind::Mean => f64::NAN,
            _ => 0.0,
        }
    }
}

/// The axes a `Reduce*` op reduces (the `axes` input, or before opset 13/18 the attribute),
/// sorted; `None` for none at all with `noop_with_empty_axes`.
fn reduce_axes(cx: &Cx, n: &NodeCx, rank: usize) -> Result<Option<Vec<usize>>> {
    let noop = n.int("noop_with_empty_axes", 0)? != 0;
    let given = match n.ints("axes")? {
        Some(a) => Some(a),
        None => cx.opt_ints(n, 1)?,
    };
    let given = given.unwrap_or_default();
    if given.is_empty() {
        return Ok((!noop).then(|| (0..rank).collect()));
    }
    let mut axes = given
        .iter()
        .map(|&a| axis_of(n, "axes", a, rank))
        .collect::<Result<Vec<_>>>()?;
    axes.sort_unstable();
    axes.dedup();
    Ok(Some(axes))
}

/// The shape of `shape` reduced over `axes`, with them kept as 1 or dropped.
fn reduced_shape(shape: &[usize], axes: &[usize], keep: bool) -> Vec<usize> {
    (0..shape.len())
        .filter_map(|d| match (axes.contains(&d), keep) {
            (false, _) => Some(shape[d]),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

/// A map of `e` over `t`, or `t` itself without one.
fn maybe_map(cx: &mut Cx, n: &NodeCx, e: Option<Expr>, t: Tensor, what: &str) -> Result<Tensor> {
    match e {
        Some(e) => cx.map(n, &e, &[&t], what),
        None => Ok(t),
    }
}

/// `popops::reduce` of `t` over `axes`.
fn reduce_op(
    cx: &mut Cx,
    n: &NodeCx,
    t: &Tensor,
    axes: &[usize],
    params: ReduceParams,
) -> Result<Tensor> {
    let name = cx.name(n, "reduce");
    popops::reduce(cx.graph, t, t.dtype(), axes, params, &mut cx.prog, &name)
        .map_err(|e| n.lowering(e))
}

/// The `Reduce*` ops: optional pre-step, one reduction, optional post-step, then the kept
/// shape. A reduction of no elements is the operation's identity (a host value); one of a
/// host value is evaluated on the host.
fn reduce(cx: &mut Cx, n: &NodeCx, kind: Kind) -> Outputs {
    let keep = n.int("keepdims", 1)? != 0;
    let v = cx.value(n, 0)?;
    let shape = v.shape();
    let ty = v.ty();
    let axes = reduce_axes(cx, n, shape.len())?.filter(|a| !a.is_empty());
    let Some(axes) = axes else {
        return no_axes(cx, n, kind, v);
    };
    let out_shape = reduced_shape(&shape, &axes, keep);
    if let Value::Host(h) = &v {
        let r = host_reduce(h, &axes, kind);
        return Ok(vec![Value::Host(host_tensor(ty, &out_shape, r))]);
    }
    if shape.contains(&0) {
        let one = host_tensor(ty, &[1], vec![kind.empty()]);
        return Ok(vec![cx.fill(n, &one, &out_shape)?]);
    }
    let (t, _) = cx.tensor(n, 0)?;
    let r = if kind == Kind::LogSumExp {
        log_sum_exp(cx, n, &t, &axes)?
    } else {
        device_reduce(cx, n, kind, t, &axes, ty)?
    };
    let t = r.reshape(&out_shape).map_err(|e| n.lowering(e))?;
    Ok(vec![Value::Device { t, ty }])
}

/// A `Reduce*` op over no axes (`noop_with_empty_axes`, or a scalar): the input as it is, as
/// ONNX's reference gives it (squared for `ReduceSumSquare`).
fn no_axes(cx: &mut Cx, n: &NodeCx, kind: Kind, v: Value) -> Outputs {
    if kind != Kind::SumSquare {
        return Ok(vec![v]);
    }
    let (t, ty) = cx.tensor(n, 0)?;
    let t = cx.map(n, &_1.square(), &[&t], "square")?;
    Ok(vec![Value::Device { t, ty }])
}

/// The reduction of `t` (of ONNX type `ty`) over `axes` on the chip, with its steps.
fn device_reduce(
    cx: &mut Cx,
    n: &NodeCx,
    kind: Kind,
    t: Tensor,
    axes: &[usize],
    ty: ElemType,
) -> Result<Tensor> {
    let op = match (kind, ty) {
        (Kind::Max, ElemType::Bool) => Operation::LogicalOr,
        (Kind::Min, ElemType::Bool) => Operation::LogicalAnd,
        _ => kind.operation(),
    };
    let mut params = ReduceParams::new(op);
    if kind == Kind::Mean {
        let count: usize = axes.iter().map(|&a| t.shape()[a]).product();
        params = params.with_scale(1.0 / count as f32);
    }
    let pre = maybe_map(cx, n, kind.pre(), t, "pre")?;
    let r = reduce_op(cx, n, &pre, axes, params)?;
    maybe_map(cx, n, kind.post(), r, "post")
}

/// A host tensor of `ty` holding `values` (integers saturated to the chip's `i32`).
fn host_tensor(ty: ElemType, shape: &[usize], values: Vec<f64>) -> HostTensor {
    if ty.is_float() {
        return HostTensor::float(ty, shape, values);
    }
    let (lo, hi) = (i32::MIN as f64, i32::MAX as f64);
    let ints = values.iter().map(|&x| x.clamp(lo, hi) as i64).collect();
    HostTensor::int(ty, shape, ints)
}

/// A `Reduce*` op of a host value, in `f64`.
fn host_reduce(h: &HostTensor, axes: &[usize], kind: Kind) -> Vec<f64> {
    let count: usize = axes.iter().map(|&a| h.shape[a]).product();
    let init = match kind {
        Kind::Max | Kind::Min | Kind::Prod => kind.empty(),
        _ => 0.0,
    };
    let r = crate::fold::reduce(h, axes, init, |a, x| match kind {
        Kind::Max => a.max(x),
        Kind::Min => a.min(x),
        Kind::Prod => a * x,
        Kind::L1 => a + x.abs(),
        Kind::L2 | Kind::SumSquare => a + x * x,
        Kind::LogSumExp => a + x.exp(),
        Kind::Sum | Kind::Mean | Kind::LogSum => a + x,
    });
    r.into_iter()
        .map(|a| match kind {
            Kind::Mean => a / count as f64,
            Kind::L2 => a.sqrt(),
            Kind::LogSum | Kind::LogSumExp => a.ln(),
            _ => a,
        })
        .collect()
}

/// `log Σ exp(x − m) + m`, `m` the maximum over `axes` (stable for large `x`).
fn log_sum_exp(cx: &mut Cx, n: &NodeCx, t: &Tensor, axes: &[usize]) -> Result<Tensor> {
    let m = reduce_op(cx, n, t, axes, Operation::Max.into())?;
    let kept = reduced_shape(t.shape(), axes, true);
    let mk = m.reshape(&kept).map_err(|e| n.lowering(e))?;
    let mb = broadcast_to(n, &mk, t.shape())?;
    // An infinite maximum would give inf − inf: subtract 0 there instead.
    let shifted = select_finite(_2);
    let e = cx.map(n, &(_1 - shifted.clone()).exp(), &[t, &mb], "exp")?;
    let s = reduce_op(cx, n, &e, axes, Operation::Add.into())?;
    cx.map(n, &(_1.log() + select_finite(_2)), &[&s, &m], "log")
}

/// `x` where it is finite, else 0.
fn select_finite(x: Expr) -> Expr {
    popops::expr::select(x.clone(), 0.0, x.is_finite())
}

/// The `u32` indices of a popops op as ONNX `int64` (held as `i32`), `len − 1 − i` when
/// `flip` (an index counted on the reversed axis).
fn index_out(cx: &mut Cx, n: &NodeCx, idx: &Tensor, flip: Option<usize>) -> Result<Tensor> {
    let e = match flip {
        Some(len) => Expr::from(len as i32 - 1) - _1.cast(DType::I32),
        None => _1.cast(DType::I32),
    };
    cx.map(n, &e, &[idx], "index")
}

/// `ArgMax`/`ArgMin` (`axis`, `keepdims`, `select_last_index`: the last of equal extremes,
/// found on the reversed axis).
fn arg(cx: &mut Cx, n: &NodeCx, max: bool) -> Outputs {
    let (t, _) = cx.tensor(n, 0)?;
    let (t, _) = widened(cx, n, t)?;
    let a = axis_of(n, "axis", n.int("axis", 0)?, t.rank())?;
    let keep = n.int("keepdims", 1)? != 0;
    let last = n.int("select_last_index", 0)? != 0;
    let len = t.shape().get(a).copied().unwrap_or(1);
    let src = if last {
        t.reverse(a).map_err(|e| n.lowering(e))?
    } else {
        t.clone()
    };
    let name = cx.name(n, "arg");
    let idx = if max {
        popops::arg_max(cx.graph, &src, a, &mut cx.prog, &name)
    } else {
        popops::arg_min(cx.graph, &src, a, &mut cx.prog, &name)
    }
    .map_err(|e| n.lowering(e))?;
    let o = index_out(cx, n, &idx, last.then_some(len))?;
    let shape = reduced_shape(t.shape(), &[a], keep);
    let o = o.reshape(&shape).map_err(|e| n.lowering(e))?;
    Ok(vec![Value::Device {
        t: o,
        ty: ElemType::Int64,
    }])
}

/// `CumSum` (`axis` an input; `exclusive`; `reverse`: summed on the reversed axis).
fn cumsum(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (t, ty) = cx.tensor(n, 0)?;
    let (t, back) = match t.dtype() {
        DType::F16 => (
            cx.map(n, &_1.cast(DType::F32), &[&t], "widen")?,
            Some(DType::F16),
        ),
        _ => widened(cx, n, t)?,
    };
    let a = cx.host(n, 1)?.to_i64();
    let a = match a.as_slice() {
        [a] => axis_of(n, "axis", *a, t.rank())?,
        _ => return Err(n.input_error(1, "the axis must be one value")),
    };
    let exclusive = n.int("exclusive", 0)? != 0;
    let reverse = n.int("reverse", 0)? != 0;
    let src = if reverse {
        t.reverse(a).map_err(|e| n.lowering(e))?
    } else {
        t
    };
    let name = cx.name(n, "cumsum");
    let s = popops::cumsum(cx.graph, &src, a, exclusive, &mut cx.prog, &name)
        .map_err(|e| n.lowering(e))?;
    let s = if reverse {
        s.reverse(a).map_err(|e| n.lowering(e))?
    } else {
        s
    };
    let s = narrowed(cx, n, s, back)?;
    Ok(vec![Value::Device { t: s, ty }])
}

/// `TopK` (`k` an input; `axis`, `largest`; `sorted = 0` leaves the order to us: sorted).
fn top_k(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (t, ty) = cx.tensor(n, 0)?;
    let (t, back) = widened(cx, n, t)?;
    let k = match cx.host(n, 1)?.to_i64().as_slice() {
        [k] if *k >= 0 => *k as usize,
        k => return Err(n.input_error(1, format!("k {k:?} is not one value ≥ 0"))),
    };
    let a = axis_of(n, "axis", n.int("axis", -1)?, t.rank())?;
    let largest = n.int("largest", 1)? != 0;
    n.ignore("sorted");
    if k > t.shape()[a] {
        return Err(n.input_error(1, format!("k {k} exceeds axis {a} of {:?}", t.shape())));
    }
    let name = cx.name(n, "top_k");
    let (v, i) = popops::top_k(cx.graph, &t, a, k, largest, &mut cx.prog, &name)
        .map_err(|e| n.lowering(e))?;
    let i = index_out(cx, n, &i, None)?;
    let v = narrowed(cx, n, v, back)?;
    Ok(vec![
        Value::Device { t: v, ty },
        Value::Device {
            t: i,
            ty: ElemType::Int64,
        },
    ])
}

/// `Hardmax`: 1 at the first maximum along `axis`, 0 elsewhere.
fn hardmax(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (t, ty) = cx.tensor(n, 0)?;
    let a = axis_of(n, "axis", n.int("axis", -1)?, t.rank())?;
    if t.num_elements() == 0 {
        return Ok(vec![Value::Device { t, ty }]);
    }
    let name = cx.name(n, "arg");
    let idx = popops::arg_max(cx.graph, &t, a, &mut cx.prog, &name).map_err(|e| n.lowering(e))?;
    let shape = t.shape().to_vec();
    let ik = idx
        .reshape(&reduced_shape(&shape, &[a], true))
        .map_err(|e| n.lowering(e))?;
    let ib = broadcast_to(n, &ik, &shape)?;
    let mut pos_shape = vec![1; shape.len()];
    pos_shape[a] = shape[a];
    let pos = HostTensor::int(ElemType::Uint32, &pos_shape, (0..shape[a] as i64).collect());
    let what = cx.name(n, "positions");
    let pos = cx.constant(n, &pos, &what)?;
    let pb = broadcast_to(n, &pos, &shape)?;
    let e = _1.equal(_2).cast(t.dtype());
    let out = cx.map(n, &e, &[&ib, &pb], "hardmax")?;
    Ok(vec![Value::Device { t: out, ty }])
}
