//! Data movement: joining, cutting and picking elements (`Concat`, `Split`, `Slice`, `Pad`,
//! `Tile`), index ops (`Gather`, `GatherElements`, `GatherND`, `ScatterElements`,
//! `ScatterND`, `OneHot`) and generated values (`Range`, `Trilu`, `EyeLike`).
//!
//! Views of the input (slices, reversals, joins) are used where they suffice; the index ops
//! go to `popops::gather`. Shape arithmetic on host values (`Shape` → `Gather` → `Concat` →
//! `Reshape`) is evaluated on the host.

use poplar::{DType, Tensor};
use popops::expr::{select, Expr, _1, _2, _3};
use popops::gather::ScatterReduction;

use super::shape::broadcast_to;
use super::{axis, Cx, NodeCx, Outputs, Value};
use crate::error::Result;
use crate::fold;
use crate::host::{ElemType, HostTensor};

pub(super) fn lower(cx: &mut Cx, n: &NodeCx) -> Option<Outputs> {
    Some(match n.node.op.as_str() {
        "Concat" => concat(cx, n),
        "Split" => split(cx, n),
        "Slice" => slice(cx, n),
        "Pad" => pad(cx, n),
        "Tile" => tile(cx, n),
        "Range" => range(cx, n),
        "Gather" => gather(cx, n),
        "GatherElements" => gather_elements(cx, n),
        "GatherND" => gather_nd(cx, n),
        "ScatterElements" => scatter_elements(cx, n),
        "ScatterND" => scatter_nd(cx, n),
        "OneHot" => one_hot(cx, n),
        "Trilu" => trilu(cx, n),
        "EyeLike" => eye_like(cx, n),
        _ => return None,
    })
}

/// An axis of a tensor of rank ≥ 1 (ONNX's negative axes count from the end).
pub(super) fn axis_of(n: &NodeCx, attr: &str, a: i64, rank: usize) -> Result<usize> {
    if rank == 0 {
        return Err(n.attr_error(attr, "a scalar has no axis"));
    }
    axis(n, attr, a, rank)
}

/// `t` in a type the gathers, scatters and constant padding take: `bool`, `u8` and `u16` are
/// widened to `i32`; with the type to narrow the result back to.
pub(super) fn widened(cx: &mut Cx, n: &NodeCx, t: Tensor) -> Result<(Tensor, Option<DType>)> {
    match t.dtype() {
        d @ (DType::Bool | DType::U8 | DType::U16) => {
            let w = cx.map(n, &_1.cast(DType::I32), &[&t], "widen")?;
            Ok((w, Some(d)))
        }
        _ => Ok((t, None)),
    }
}

/// A result of [`widened`] operands back in their type.
pub(super) fn narrowed(cx: &mut Cx, n: &NodeCx, t: Tensor, back: Option<DType>) -> Result<Tensor> {
    match back {
        Some(d) => cx.map(n, &_1.cast(d), &[&t], "narrow"),
        None => Ok(t),
    }
}

/// Input `i` on the chip, [`widened`].
fn wide_input(cx: &mut Cx, n: &NodeCx, i: usize) -> Result<(Tensor, ElemType, Option<DType>)> {
    let (t, ty) = cx.tensor(n, i)?;
    let (t, back) = widened(cx, n, t)?;
    Ok((t, ty, back))
}

/// A value on the chip.
fn device(t: Tensor, ty: ElemType) -> Value {
    Value::Device { t, ty }
}

/// The elements of `t` at positions `idx` along `axis`, as a view: runs of consecutive
/// positions become slices, a descending list a reversed one.
fn pick_view(n: &NodeCx, t: &Tensor, axis: usize, idx: &[usize]) -> Result<Tensor> {
    let err = |e| n.lowering(e);
    let dim = t.shape()[axis];
    if idx.is_empty() {
        return t.slice_dim(axis, 0..0).map_err(err);
    }
    let descending = idx.len() > 1 && idx.windows(2).all(|w| w[1] < w[0]);
    let (src, idx): (Tensor, Vec<usize>) = if descending {
        let r = t.reverse(axis).map_err(err)?;
        (r, idx.iter().map(|&i| dim - 1 - i).collect())
    } else {
        (t.clone(), idx.to_vec())
    };
    let mut parts = Vec::new();
    let mut start = idx[0];
    for k in 1..=idx.len() {
        if k == idx.len() || idx[k] != idx[k - 1] + 1 {
            parts.push(src.slice_dim(axis, start..idx[k - 1] + 1).map_err(err)?);
            if k < idx.len() {
                start = idx[k];
            }
        }
    }
    if parts.len() == 1 {
        return Ok(parts.remove(0));
    }
    Tensor::concat_dim(&parts, axis).map_err(err)
}

/// `Concat` along `axis`: on the host when every input is known, else a view of the inputs.
fn concat(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let first = cx.value(n, 0)?;
    let a = axis_of(n, "axis", n.int("axis", 0)?, first.shape().len())?;
    let values = (0..n.num_inputs())
        .map(|i| cx.value(n, i))
        .collect::<Result<Vec<_>>>()?;
    for (i, v) in values.iter().enumerate() {
        let (s, f) = (v.shape(), first.shape());
        let same = s.len() == f.len() && (0..s.len()).all(|d| d == a || s[d] == f[d]);
        if !same || v.ty() != first.ty() {
            return Err(n.input_error(i, format!("{} {s:?} does not join {f:?}", v.ty())));
        }
    }
    let hosts: Option<Vec<HostTensor>> = values
        .iter()
        .map(|v| match v {
            Value::Host(h) => Some(h.clone()),
            Value::Device { .. } => None,
        })
        .collect();
    if let Some(hs) = hosts {
        return Ok(vec![Value::Host(fold::concat(&hs, a))]);
    }
    let ts = (0..n.num_inputs())
        .map(|i| cx.tensor(n, i).map(|(t, _)| t))
        .collect::<Result<Vec<_>>>()?;
    let t = popops::concat(&ts, a).map_err(|e| n.lowering(e))?;
    Ok(vec![device(t, first.ty())])
}

/// The sizes of `Split`'s pieces: the `split` input or attribute, else `count` pieces of
/// `ceil(len / count)` (the last smaller).
fn split_sizes(cx: &Cx, n: &NodeCx, len: usize) -> Result<Vec<usize>> {
    let given = match n.ints("split")? {
        Some(s) => Some(s),
        None => cx.opt_ints(n, 1)?,
    };
    let count = match n.opt_int("num_outputs")? {
        Some(c) if c > 0 => c as usize,
        Some(c) => return Err(n.attr_error("num_outputs", format!("{c} < 1"))),
        None => n.node.outputs.len().max(1),
    };
    if let Some(s) = given {
        let sizes: Vec<usize> = s.iter().map(|&x| x.max(0) as usize).collect();
        if sizes.iter().sum::<usize>() != len || s.iter().any(|&x| x < 0) {
            return Err(n.input_error(1, format!("sizes {s:?} do not add up to {len}")));
        }
        return Ok(sizes);
    }
    let chunk = len.div_ceil(count);
    Ok((0..count)
        .map(|i| chunk.min(len.saturating_sub(i * chunk)))
        .collect())
}

/// `Split` along `axis` into views (host pieces of a host value).
fn split(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let v = cx.value(n, 0)?;
    let shape = v.shape();
    let a = axis_of(n, "axis", n.int("axis", 0)?, shape.len())?;
    let sizes = split_sizes(cx, n, shape[a])?;
    let mut at = 0;
    let mut out = Vec::with_capacity(sizes.len());
    for s in sizes {
        let idx: Vec<usize> = (at..at + s).collect();
        at += s;
        out.push(match &v {
            Value::Host(h) => Value::Host(fold::take(h, a, &idx)),
            Value::Device { t, ty } => device(pick_view(n, t, a, &idx)?, *ty),
        });
    }
    Ok(out)
}

/// The positions ONNX's `Slice` takes along an axis of length `dim`.
fn slice_positions(start: i64, end: i64, step: i64, dim: usize) -> Vec<usize> {
    let d = dim as i64;
    if d == 0 {
        return Vec::new();
    }
    let norm = |x: i64| if x < 0 { x.saturating_add(d) } else { x };
    let (s, e) = (norm(start), norm(end));
    if step > 0 {
        let (s, e) = (s.clamp(0, d), e.clamp(0, d));
        (s..e).step_by(step as usize).map(|i| i as usize).collect()
    } else {
        let (s, e) = (s.clamp(0, d - 1), e.clamp(-1, d - 1));
        let mut v = Vec::new();
        let mut i = s;
        while i > e {
            v.push(i as usize);
            i = i.saturating_add(step);
        }
        v
    }
}

/// `Slice` (`starts`, `ends`, `axes`, `steps` inputs, clamped as ONNX does; negative steps
/// read a reversed view). On the host for a host value; else a copy of the view.
fn slice(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let v = cx.value(n, 0)?;
    let shape = v.shape();
    let starts = cx.host(n, 1)?.to_i64();
    let ends = cx.host(n, 2)?.to_i64();
    let axes = match cx.opt_ints(n, 3)? {
        Some(a) => a,
        None => (0..starts.len() as i64).collect(),
    };
    let steps = cx.opt_ints(n, 4)?.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(n.input_error(2, "starts, ends, axes and steps differ in length"));
    }
    let mut cur = v;
    for i in 0..starts.len() {
        let a = axis_of(n, "axes", axes[i], shape.len())?;
        if steps[i] == 0 {
            return Err(n.input_error(4, "a step of 0"));
        }
        let idx = slice_positions(starts[i], ends[i], steps[i], cur.shape()[a]);
        cur = match cur {
            Value::Host(h) => Value::Host(fold::take(&h, a, &idx)),
            Value::Device { t, ty } => device(pick_view(n, &t, a, &idx)?, ty),
        };
    }
    if let Value::Device { t, ty } = cur {
        let t = cx.copy(n, &t, "slice")?;
        return Ok(vec![device(t, ty)]);
    }
    Ok(vec![cur])
}

/// The source position of position `i` (counted from the start of the padding) of an axis of
/// length `dim` padded by `before`, in mode `edge`, `reflect` or `wrap`.
fn pad_source(mode: &str, i: i64, before: i64, dim: i64) -> usize {
    let j = i - before;
    (match mode {
        "edge" => j.clamp(0, dim - 1),
        "wrap" => j.rem_euclid(dim),
        _ if dim == 1 => 0,
        _ => {
            let period = 2 * (dim - 1);
            let r = j.rem_euclid(period);
            if r < dim {
                r
            } else {
                period - r
            }
        }
    }) as usize
}

/// `Pad`'s amounts before and after each axis (the `pads` input, or attribute before opset
/// 11, over `axes`).
fn pad_amounts(cx: &Cx, n: &NodeCx, rank: usize) -> Result<(Vec<i64>, Vec<i64>)> {
    let pads = match n.ints("pads")? {
        Some(p) => p,
        None => cx.host(n, 1)?.to_i64(),
    };
    let axes: Vec<usize> = match cx.opt_ints(n, 3)? {
        Some(a) => a
            .iter()
            .map(|&x| axis_of(n, "axes", x, rank))
            .collect::<Result<_>>()?,
        None => (0..rank).collect(),
    };
    if pads.len() != 2 * axes.len() {
        return Err(n.input_error(1, format!("{} pads for {} axes", pads.len(), axes.len())));
    }
    let mut before = vec![0i64; rank];
    let mut after = vec![0i64; rank];
    for (k, &a) in axes.iter().enumerate() {
        before[a] = pads[k];
        after[a] = pads[k + axes.len()];
    }
    Ok((before, after))
}

/// `Pad`: negative pads crop. `constant` through `popops::pad`; `edge`, `reflect` and `wrap`
/// as views picking the source positions, copied.
fn pad(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let mode = n.string("mode", "constant")?;
    if !matches!(mode.as_str(), "constant" | "edge" | "reflect" | "wrap") {
        return Err(n.attr_error("mode", format!("'{mode}' is not a mode of Pad")));
    }
    let (t, ty) = cx.tensor(n, 0)?;
    let (before, after) = pad_amounts(cx, n, t.rank())?;
    let mut cur = t;
    for d in 0..cur.rank() {
        let dim = cur.shape()[d] as i64;
        let (b, e) = (before[d], after[d]);
        let idx: Vec<usize> = if mode == "constant" || (dim == 0 && b <= 0 && e <= 0) {
            // Only the negative amounts (crops) here; popops pads the rest.
            ((-b).max(0)..dim - (-e).max(0))
                .map(|i| i as usize)
                .collect()
        } else if dim == 0 {
            let reason = format!("axis {d} is empty: '{mode}' has nothing to repeat");
            return Err(n.input_error(0, reason));
        } else {
            (0..(b + dim + e).max(0))
                .map(|i| pad_source(&mode, i, b, dim))
                .collect()
        };
        cur = pick_view(n, &cur, d, &idx)?;
    }
    if mode != "constant" {
        let out = cx.copy(n, &cur, "pad")?;
        return Ok(vec![device(out, ty)]);
    }
    let out = pad_constant(cx, n, cur, &before, &after)?;
    Ok(vec![device(out, ty)])
}

/// `t` padded by the positive amounts with `Pad`'s constant (the `constant_value` input, or
/// the `value` attribute before opset 11; 0 by default).
fn pad_constant(
    cx: &mut Cx,
    n: &NodeCx,
    t: Tensor,
    before: &[i64],
    after: &[i64],
) -> Result<Tensor> {
    let value = match n.opt_float("value")? {
        Some(v) => v as f64,
        None if n.has_input(2) => cx.host(n, 2)?.to_f64().first().copied().unwrap_or(0.0),
        None => 0.0,
    };
    let amount = |v: &[i64]| v.iter().map(|&x| x.max(0) as usize).collect::<Vec<_>>();
    let (t, back) = widened(cx, n, t)?;
    let name = cx.name(n, "pad");
    let out = popops::pad(
        cx.graph,
        &t,
        &amount(before),
        &amount(after),
        popops::pad::PadMode::Constant(value),
        &mut cx.prog,
        &name,
    )
    .map_err(|e| n.lowering(e))?;
    narrowed(cx, n, out, back)
}

/// `Tile` (`repeats` an input): each axis repeated as a view, copied (on the host for a host
/// value).
fn tile(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let v = cx.value(n, 0)?;
    let shape = v.shape();
    let reps = cx.host(n, 1)?.to_i64();
    if reps.len() != shape.len() || reps.iter().any(|&r| r < 0) {
        return Err(n.input_error(1, format!("repeats {reps:?} for {shape:?}")));
    }
    let mut cur = v;
    for (d, &r) in reps.iter().enumerate() {
        let idx: Vec<usize> = (0..r as usize).flat_map(|_| 0..shape[d]).collect();
        cur = match cur {
            Value::Host(h) => Value::Host(fold::take(&h, d, &idx)),
            Value::Device { t, ty } => device(pick_view(n, &t, d, &idx)?, ty),
        };
    }
    if let Value::Device { t, ty } = cur {
        let out = cx.copy(n, &t, "tile")?;
        return Ok(vec![device(out, ty)]);
    }
    Ok(vec![cur])
}

/// `Range` of host scalars `start`, `limit`, `delta` (a host value).
fn range(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let start = cx.host(n, 0)?;
    let limit = cx.host(n, 1)?.to_f64();
    let delta = cx.host(n, 2)?.to_f64();
    let ty = start.ty;
    let (s, l, d) = (
        start.to_f64().first().copied().unwrap_or(0.0),
        limit.first().copied().unwrap_or(0.0),
        delta.first().copied().unwrap_or(0.0),
    );
    if d == 0.0 {
        return Err(n.input_error(2, "a delta of 0"));
    }
    let count = ((l - s) / d).ceil().max(0.0);
    if count > (1u64 << 31) as f64 {
        return Err(n.input_error(1, format!("{count} elements are too many for a range")));
    }
    let count = count as usize;
    Ok(vec![Value::Host(if ty.is_float() {
        HostTensor::float(ty, &[count], (0..count).map(|i| s + i as f64 * d).collect())
    } else {
        let (s, d) = (s as i64, d as i64);
        HostTensor::int(ty, &[count], (0..count as i64).map(|i| s + i * d).collect())
    })])
}

/// Host indices normalised into `0..dim` (negative ones count from the end).
fn host_indices(n: &NodeCx, i: usize, h: &HostTensor, dim: usize) -> Result<Vec<usize>> {
    h.to_i64()
        .iter()
        .map(|&x| {
            let y = if x < 0 { x + dim as i64 } else { x };
            usize::try_from(y)
                .ok()
                .filter(|&y| y < dim)
                .ok_or_else(|| n.input_error(i, format!("index {x} outside an axis of {dim}")))
        })
        .collect()
}

/// Input `i` as chip indices (`i32`; an integer type held otherwise is cast).
fn indices(cx: &mut Cx, n: &NodeCx, i: usize) -> Result<Tensor> {
    let (t, ty) = cx.tensor(n, i)?;
    match t.dtype() {
        DType::I32 | DType::U32 => Ok(t),
        _ if !ty.is_float() && ty != ElemType::Bool => {
            cx.map(n, &_1.cast(DType::I32), &[&t], "idx")
        }
        _ => Err(n.type_error(format!("input {i}"), ty, "indices are integers")),
    }
}

/// `Gather` along `axis`: on the host when both inputs are known, else `popops::gather`.
fn gather(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let data = cx.value(n, 0)?;
    let shape = data.shape();
    let a = axis_of(n, "axis", n.int("axis", 0)?, shape.len())?;
    let idx_v = cx.value(n, 1)?;
    let mut out_shape = shape[..a].to_vec();
    out_shape.extend(idx_v.shape());
    out_shape.extend(&shape[a + 1..]);
    if let (Value::Host(h), Value::Host(ih)) = (&data, &idx_v) {
        let idx = host_indices(n, 1, ih, shape[a])?;
        let mut g = fold::take(h, a, &idx);
        g.shape = out_shape;
        return Ok(vec![Value::Host(g)]);
    }
    let (t, ty, back) = wide_input(cx, n, 0)?;
    let idx = indices(cx, n, 1)?;
    let flat = idx.flatten();
    let name = cx.name(n, "gather");
    let g =
        popops::gather(cx.graph, &t, &flat, a, &mut cx.prog, &name).map_err(|e| n.lowering(e))?;
    let g = g.reshape(&out_shape).map_err(|e| n.lowering(e))?;
    let g = narrowed(cx, n, g, back)?;
    Ok(vec![device(g, ty)])
}

/// `GatherElements` along `axis` (`popops::gather_elements`; negative indices count from the
/// end, as popops reads `i32` indices).
fn gather_elements(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (t, ty, back) = wide_input(cx, n, 0)?;
    let a = axis_of(n, "axis", n.int("axis", 0)?, t.rank())?;
    let idx = indices(cx, n, 1)?;
    let name = cx.name(n, "gather_elements");
    let g = popops::gather_elements(cx.graph, &t, &idx, a, &mut cx.prog, &name)
        .map_err(|e| n.lowering(e))?;
    let g = narrowed(cx, n, g, back)?;
    Ok(vec![device(g, ty)])
}

/// `GatherND` with `batch_dims` (`popops::gather_nd`).
fn gather_nd(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (t, ty, back) = wide_input(cx, n, 0)?;
    let b = n.int("batch_dims", 0)?;
    let b = usize::try_from(b).map_err(|_| n.attr_error("batch_dims", "is negative"))?;
    let idx = indices(cx, n, 1)?;
    let name = cx.name(n, "gather_nd");
    let g =
        popops::gather_nd(cx.graph, &t, &idx, b, &mut cx.prog, &name).map_err(|e| n.lowering(e))?;
    let g = narrowed(cx, n, g, back)?;
    Ok(vec![device(g, ty)])
}

/// The `reduction` attribute of the scatters.
fn reduction(n: &NodeCx) -> Result<ScatterReduction> {
    Ok(match n.string("reduction", "none")?.as_str() {
        "none" => ScatterReduction::None,
        "add" => ScatterReduction::Add,
        "mul" => ScatterReduction::Mul,
        "max" => ScatterReduction::Max,
        "min" => ScatterReduction::Min,
        other => return Err(n.attr_error("reduction", format!("'{other}' is not one"))),
    })
}

/// `ScatterElements` along `axis` with a `reduction` (`popops::scatter_elements`).
fn scatter_elements(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (t, ty, back) = wide_input(cx, n, 0)?;
    let a = axis_of(n, "axis", n.int("axis", 0)?, t.rank())?;
    let r = reduction(n)?;
    let idx = indices(cx, n, 1)?;
    let (u, _, _) = wide_input(cx, n, 2)?;
    let name = cx.name(n, "scatter_elements");
    let s = popops::scatter_elements(cx.graph, &t, &idx, &u, a, r, &mut cx.prog, &name)
        .map_err(|e| n.lowering(e))?;
    let s = narrowed(cx, n, s, back)?;
    Ok(vec![device(s, ty)])
}

/// `ScatterND` with a `reduction` (`popops::scatter_nd`).
fn scatter_nd(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (t, ty, back) = wide_input(cx, n, 0)?;
    let r = reduction(n)?;
    let idx = indices(cx, n, 1)?;
    let (u, _, _) = wide_input(cx, n, 2)?;
    let name = cx.name(n, "scatter_nd");
    let s = popops::scatter_nd(cx.graph, &t, &idx, &u, r, &mut cx.prog, &name)
        .map_err(|e| n.lowering(e))?;
    let s = narrowed(cx, n, s, back)?;
    Ok(vec![device(s, ty)])
}

/// `OneHot`: `popops::one_hot` of the indices (negative ones counted from `depth`), scaled
/// to `values = [off, on]`, the new axis moved to `axis`.
fn one_hot(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (t, _) = cx.tensor(n, 0)?;
    let depth = match cx.host(n, 1)?.to_f64().as_slice() {
        [d] if *d >= 1.0 => *d as usize,
        d => return Err(n.input_error(1, format!("depth {d:?} is not one value ≥ 1"))),
    };
    let (values, ty) = cx.tensor(n, 2)?;
    if values.num_elements() != 2 {
        return Err(n.input_error(2, "values must be [off, on]"));
    }
    let rank = t.rank() + 1;
    let a = axis_of(n, "axis", n.int("axis", -1)?, rank)?;
    let i = _1.cast(DType::I32);
    let norm = select(i.clone() + Expr::from(depth as i32), i.clone(), i.lt(0i32));
    let flat = cx.map(n, &norm, &[&t.flatten()], "indices")?;
    let name = cx.name(n, "one_hot");
    let enc = popops::one_hot(cx.graph, &flat, depth, values.dtype(), &mut cx.prog, &name)
        .map_err(|e| n.lowering(e))?;
    let err = |e| n.lowering(e);
    let v = values.flatten().reshape(&[1, 2]).map_err(err)?;
    let off = broadcast_to(n, &v.slice_dim(1, 0..1).map_err(err)?, enc.shape())?;
    let on = broadcast_to(n, &v.slice_dim(1, 1..2).map_err(err)?, enc.shape())?;
    let out = cx.map(n, &(_1 * (_2 - _3) + _3), &[&enc, &on, &off], "values")?;
    let mut shape = t.shape().to_vec();
    shape.push(depth);
    let out = out.reshape(&shape).map_err(err)?;
    let mut perm: Vec<usize> = (0..rank - 1).collect();
    perm.insert(a, rank - 1);
    let out = out.dim_shuffle(&perm).map_err(err)?;
    Ok(vec![device(out, ty)])
}

/// `Trilu`: the input where `j − i ≥ k` (`upper`) or `≤ k`, 0 elsewhere, by a host-built
/// mask of the last two axes and a `select`.
fn trilu(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (t, ty) = cx.tensor(n, 0)?;
    let upper = n.int("upper", 1)? != 0;
    let k = match cx.opt_ints(n, 1)? {
        Some(v) => v.first().copied().unwrap_or(0),
        None => 0,
    };
    let shape = t.shape().to_vec();
    let r = shape.len();
    if r < 2 {
        return Err(n.input_error(0, format!("rank {r} < 2")));
    }
    if t.num_elements() == 0 {
        return Ok(vec![device(t, ty)]);
    }
    let (rows, cols) = (shape[r - 2], shape[r - 1]);
    let mask: Vec<i64> = (0..rows * cols)
        .map(|p| {
            let d = (p % cols) as i64 - (p / cols) as i64;
            i64::from(if upper { d >= k } else { d <= k })
        })
        .collect();
    let mask = HostTensor::int(ElemType::Bool, &[rows, cols], mask);
    let what = cx.name(n, "mask");
    let m = cx.constant(n, &mask, &what)?;
    let mb = broadcast_to(n, &m, &shape)?;
    let out = cx.map(n, &select(_1, 0.0, _2), &[&t, &mb], "trilu")?;
    Ok(vec![device(out, ty)])
}

/// `EyeLike`: a host value of the input's 2-D shape, ones on diagonal `k`.
fn eye_like(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let v = cx.value(n, 0)?;
    let k = n.int("k", 0)?;
    let ty = match n.opt_int("dtype")? {
        Some(c) => ElemType::from_code(c as i32),
        None => v.ty(),
    };
    let shape = v.shape();
    let [rows, cols] = shape[..] else {
        return Err(n.input_error(0, format!("shape {shape:?} is not 2-D")));
    };
    let ones = (0..rows * cols).map(|p| (p % cols) as i64 - (p / cols) as i64 == k);
    Ok(vec![Value::Host(if ty.is_float() {
        HostTensor::float(ty, &shape, ones.map(|b| f64::from(u8::from(b))).collect())
    } else {
        HostTensor::int(ty, &shape, ones.map(i64::from).collect())
    })])
}
