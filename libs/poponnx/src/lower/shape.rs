//! Ops that change a value's shape or only name it: `Identity`, `Constant`, `Shape`, `Size`,
//! `Reshape`, `Flatten`, `Squeeze`, `Unsqueeze`, `Transpose`, `Expand`, `ConstantOfShape`.
//! On the chip they are views of the input (no copy); on host values they are evaluated.

use super::{axis, Cx, NodeCx, Outputs, Value};
use crate::error::Result;
use crate::fold;
use crate::host::{ElemType, HostTensor};

pub(super) fn lower(cx: &mut Cx, n: &NodeCx) -> Option<Outputs> {
    Some(match n.node.op.as_str() {
        "Identity" | "Dropout" => identity(cx, n),
        "Constant" => constant(n),
        "Shape" => shape(cx, n),
        "Size" => {
            let v = cx.value(n, 0);
            v.map(|v| {
                vec![Value::Host(HostTensor::int(
                    ElemType::Int64,
                    &[],
                    vec![v.shape().iter().product::<usize>() as i64],
                ))]
            })
        }
        "Reshape" => reshape(cx, n),
        "Flatten" => flatten(cx, n),
        "Squeeze" => squeeze(cx, n),
        "Unsqueeze" => unsqueeze(cx, n),
        "Transpose" => transpose(cx, n),
        "Expand" => expand(cx, n),
        "ConstantOfShape" => constant_of_shape(cx, n),
        "HannWindow" | "HammingWindow" | "BlackmanWindow" => window(cx, n),
        // Their output's size depends on the input's values: no static shape.
        "NonZero" | "Unique" | "Compress" | "NonMaxSuppression" => {
            Err(crate::error::OnnxError::DynamicShape {
                what: format!("{}: output 0", n.at),
                axis: 0,
                reason: "its size depends on the values of the input".into(),
            })
        }
        _ => return None,
    })
}

/// `Identity`, and `Dropout` at inference (`training_mode` false: the input as it is, and a
/// mask of ones).
fn identity(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let v = cx.value(n, 0)?;
    if n.node.op != "Dropout" {
        return Ok(vec![v]);
    }
    n.ignore("seed");
    if let Some(t) = cx.opt_value(n, 2)? {
        let Value::Host(t) = t else {
            return Err(crate::error::OnnxError::NotConstant {
                at: n.at.clone(),
                index: 2,
                input: n.input_name(2).into(),
            });
        };
        if t.to_i64().first().copied().unwrap_or(0) != 0 {
            return Err(n.input_error(2, "training mode is not supported (inference only)"));
        }
    }
    let mask = cx.fill(
        n,
        &HostTensor::int(ElemType::Bool, &[1], vec![1]),
        &v.shape(),
    )?;
    Ok(vec![v, mask])
}

fn constant(n: &NodeCx) -> Outputs {
    if let Some(t) = n.tensor("value")? {
        return Ok(vec![Value::Host(t)]);
    }
    if let Some(f) = n.opt_float("value_float")? {
        return Ok(vec![Value::Host(HostTensor::float(
            ElemType::Float,
            &[],
            vec![f as f64],
        ))]);
    }
    if let Some(v) = n.floats("value_floats")? {
        let len = v.len();
        return Ok(vec![Value::Host(HostTensor::float(
            ElemType::Float,
            &[len],
            v.into_iter().map(f64::from).collect(),
        ))]);
    }
    if let Some(i) = n.opt_int("value_int")? {
        return Ok(vec![Value::Host(HostTensor::int(
            ElemType::Int64,
            &[],
            vec![i],
        ))]);
    }
    if let Some(v) = n.ints("value_ints")? {
        return Ok(vec![Value::Host(HostTensor::int(
            ElemType::Int64,
            &[v.len()],
            v,
        ))]);
    }
    for a in ["sparse_value", "value_string", "value_strings"] {
        n.ignore(a);
        if n.node.attributes.iter().any(|(k, _)| k == a) {
            return Err(n.attr_error(a, "strings and sparse tensors are not supported"));
        }
    }
    Err(n.attr_error("value", "a Constant needs a value"))
}

fn shape(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let s: Vec<i64> = cx.value(n, 0)?.shape().iter().map(|&d| d as i64).collect();
    let r = s.len() as i64;
    let clampi = |v: i64| if v < 0 { (v + r).clamp(0, r) } else { v.clamp(0, r) } as usize;
    let start = clampi(n.int("start", 0)?);
    let end = clampi(n.opt_int("end")?.unwrap_or(r));
    let v = s[start..end.max(start)].to_vec();
    Ok(vec![Value::Host(HostTensor::int(
        ElemType::Int64,
        &[v.len()],
        v,
    ))])
}

/// A value with a new shape of the same elements.
pub(crate) fn reshaped(n: &NodeCx, v: Value, shape: &[usize]) -> Outputs {
    Ok(vec![match v {
        Value::Device { t, ty } => Value::Device {
            t: t.reshape(shape).map_err(|e| n.lowering(e))?,
            ty,
        },
        Value::Host(mut h) => {
            h.shape = shape.to_vec();
            Value::Host(h)
        }
    }])
}

fn reshape(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let v = cx.value(n, 0)?;
    let allowzero = n.int("allowzero", 0)? != 0;
    let spec = cx.host(n, 1)?.to_i64();
    let from = v.shape();
    let total: usize = from.iter().product(); // bounded: every value's shape is (MAX_ELEMENTS)
    let mut shape = Vec::with_capacity(spec.len());
    let mut infer = None;
    for (i, &d) in spec.iter().enumerate() {
        match d {
            0 if !allowzero => shape.push(*from.get(i).ok_or_else(|| {
                n.input_error(
                    1,
                    format!("0 at axis {i} copies a dimension the input lacks"),
                )
            })?),
            -1 if infer.is_none() => {
                infer = Some(i);
                shape.push(1);
            }
            d if d >= 0 => shape.push(d as usize),
            d => return Err(n.input_error(1, format!("dimension {d} (only one -1 is allowed)"))),
        }
    }
    if let Some(i) = infer {
        let rest = super::checked_len(&shape).unwrap_or(0);
        if rest == 0 || !total.is_multiple_of(rest) {
            return Err(n.input_error(
                1,
                format!("cannot infer -1: {total} elements into {spec:?}"),
            ));
        }
        shape[i] = total / rest;
    }
    if super::checked_len(&shape) != Some(total) {
        return Err(n.input_error(
            1,
            format!("shape {spec:?} does not hold the {total} elements of {from:?}"),
        ));
    }
    reshaped(n, v, &shape)
}

fn flatten(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let v = cx.value(n, 0)?;
    let s = v.shape();
    let a = n.int("axis", 1)?;
    let a = if a < 0 { a + s.len() as i64 } else { a };
    if a < 0 || a > s.len() as i64 {
        return Err(n.attr_error("axis", format!("{a} outside 0..={}", s.len())));
    }
    let (outer, inner) = s.split_at(a as usize);
    reshaped(
        n,
        v.clone(),
        &[outer.iter().product(), inner.iter().product()],
    )
}

/// The axes of `Squeeze`/`Unsqueeze`: an input since opset 13.
fn axes_input(cx: &Cx, n: &NodeCx) -> Result<Option<Vec<i64>>> {
    cx.opt_ints(n, 1)
}

fn squeeze(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let v = cx.value(n, 0)?;
    let s = v.shape();
    let axes: Vec<usize> = match axes_input(cx, n)? {
        Some(a) => a
            .iter()
            .map(|&a| axis(n, "axes", a, s.len()))
            .collect::<Result<_>>()?,
        None => (0..s.len()).filter(|&i| s[i] == 1).collect(),
    };
    if let Some(&a) = axes.iter().find(|&&a| s[a] != 1) {
        return Err(n.input_error(1, format!("axis {a} has size {}, not 1", s[a])));
    }
    let shape: Vec<usize> = (0..s.len())
        .filter(|i| !axes.contains(i))
        .map(|i| s[i])
        .collect();
    reshaped(n, v, &shape)
}

fn unsqueeze(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let v = cx.value(n, 0)?;
    let s = v.shape();
    let a = axes_input(cx, n)?.ok_or_else(|| n.input_error(1, "axes are required"))?;
    let rank = s.len() + a.len();
    let mut axes = a
        .iter()
        .map(|&x| axis(n, "axes", x, rank))
        .collect::<Result<Vec<_>>>()?;
    axes.sort_unstable();
    if axes.windows(2).any(|w| w[0] == w[1]) {
        return Err(n.input_error(1, format!("repeated axis in {a:?}")));
    }
    let mut rest = s.iter();
    let shape: Vec<usize> = (0..rank)
        .map(|i| {
            if axes.contains(&i) {
                1
            } else {
                *rest.next().unwrap_or(&1)
            }
        })
        .collect();
    reshaped(n, v, &shape)
}

fn transpose(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let v = cx.value(n, 0)?;
    let rank = v.shape().len();
    let perm: Vec<usize> = match n.ints("perm")? {
        Some(p) => p
            .iter()
            .map(|&a| axis(n, "perm", a, rank))
            .collect::<Result<_>>()?,
        None => (0..rank).rev().collect(),
    };
    let mut sorted = perm.clone();
    sorted.sort_unstable();
    if sorted != (0..rank).collect::<Vec<_>>() {
        return Err(n.attr_error(
            "perm",
            format!("{perm:?} is not a permutation of 0..{rank}"),
        ));
    }
    Ok(vec![match v {
        Value::Device { t, ty } => Value::Device {
            t: t.dim_shuffle(&perm).map_err(|e| n.lowering(e))?,
            ty,
        },
        Value::Host(h) => Value::Host(fold::transpose(&h, &perm)),
    }])
}

/// numpy's broadcast of two shapes, or `None`.
pub(crate) fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    (0..rank)
        .map(|i| {
            let x = if i + a.len() >= rank {
                a[i + a.len() - rank]
            } else {
                1
            };
            let y = if i + b.len() >= rank {
                b[i + b.len() - rank]
            } else {
                1
            };
            match (x, y) {
                (x, y) if x == y => Some(x),
                (1, y) => Some(y),
                (x, 1) => Some(x),
                _ => None,
            }
        })
        .collect()
}

/// A device tensor broadcast (as a view) to `shape`, which must be a numpy broadcast of its
/// shape.
pub(crate) fn broadcast_to(
    n: &NodeCx,
    t: &poplar::Tensor,
    shape: &[usize],
) -> Result<poplar::Tensor> {
    let lead = shape.len() - t.rank();
    let mut b = t
        .reshape(&[vec![1; lead], t.shape().to_vec()].concat())
        .map_err(|e| n.lowering(e))?;
    for (d, &size) in shape.iter().enumerate() {
        if b.shape()[d] != size {
            b = b.broadcast(size, d).map_err(|e| n.lowering(e))?;
        }
    }
    Ok(b)
}

fn expand(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (t, ty) = cx.tensor(n, 0)?;
    let spec: Vec<usize> = cx
        .host(n, 1)?
        .to_i64()
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| n.input_error(1, format!("dimension {d} < 0"))))
        .collect::<Result<_>>()?;
    let shape = broadcast_shapes(t.shape(), &spec).ok_or_else(|| {
        n.input_error(
            1,
            format!("shape {spec:?} does not broadcast with {:?}", t.shape()),
        )
    })?;
    let b = broadcast_to(n, &t, &shape)?;
    let out = cx.copy(n, &b, "expand")?;
    Ok(vec![Value::Device { t: out, ty }])
}

/// Host values larger than this many elements are not made on the host: a fill of a large
/// shape is a broadcast view of one constant element on the chip instead.
pub(crate) const HOST_FOLD_LIMIT: usize = 1 << 16;

fn constant_of_shape(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let shape: Vec<usize> = cx
        .host(n, 0)?
        .to_i64()
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| n.input_error(0, format!("dimension {d} < 0"))))
        .collect::<Result<_>>()?;
    let value = n
        .tensor("value")?
        .unwrap_or_else(|| HostTensor::float(ElemType::Float, &[1], vec![0.0]));
    if value.len() != 1 {
        return Err(n.attr_error(
            "value",
            format!("{} elements, where one is required", value.len()),
        ));
    }
    Ok(vec![cx.fill(n, &value, &shape)?])
}

/// `HannWindow`, `HammingWindow`, `BlackmanWindow`: evaluated on the host (their size must be
/// known), of the requested floating type.
fn window(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let size = cx.host(n, 0)?.to_i64().first().copied().unwrap_or(0);
    let size = usize::try_from(size).map_err(|_| n.input_error(0, format!("size {size} < 0")))?;
    let periodic = n.int("periodic", 1)? != 0;
    let ty = ElemType::from_code(n.int("output_datatype", 1)? as i32);
    if !ty.is_float() && ty.device().is_none() {
        return Err(n.type_error("attribute 'output_datatype'", ty, "no tile holds"));
    }
    let denom = if periodic {
        size
    } else {
        size.saturating_sub(1)
    }
    .max(1) as f64;
    let tau = 2.0 * std::f64::consts::PI;
    let w = |k: usize| {
        let t = tau * k as f64 / denom;
        match n.node.op.as_str() {
            "HannWindow" => 0.5 - 0.5 * t.cos(),
            "HammingWindow" => 25.0 / 46.0 - 21.0 / 46.0 * t.cos(),
            _ => 0.42 - 0.5 * t.cos() + 0.08 * (2.0 * t).cos(),
        }
    };
    let values: Vec<f64> = (0..size).map(w).collect();
    let h = if ty.is_float() {
        HostTensor::float(ty, &[size], values)
    } else {
        HostTensor::int(ty, &[size], values.iter().map(|&v| v as i64).collect())
    };
    Ok(vec![Value::Host(h)])
}
