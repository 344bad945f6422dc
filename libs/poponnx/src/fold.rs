//! Host evaluation of ops on values known when the graph is built (shapes, constants).

use crate::host::{round_to, ElemType, HostData, HostTensor};

/// `Cast` on the host, with the chip's rules (floats to integers truncate and saturate, NaN to
/// 0; to `bool`, non-zero is true).
pub(crate) fn cast(h: &HostTensor, to: ElemType) -> HostTensor {
    let data = match (&h.data, to.is_float()) {
        (HostData::Float(v), true) => HostData::Float(v.iter().map(|&x| round_to(to, x)).collect()),
        (HostData::Int(v), true) => {
            HostData::Float(v.iter().map(|&x| round_to(to, x as f64)).collect())
        }
        (HostData::Float(v), false) if to == ElemType::Bool => {
            HostData::Int(v.iter().map(|&x| (x != 0.0) as i64).collect())
        }
        (HostData::Int(v), false) if to == ElemType::Bool => {
            HostData::Int(v.iter().map(|&x| (x != 0) as i64).collect())
        }
        (HostData::Float(v), false) => HostData::Int(v.iter().map(|&x| x as i64).collect()),
        (HostData::Int(v), false) => HostData::Int(v.clone()),
    };
    HostTensor {
        ty: to,
        shape: h.shape.clone(),
        data,
    }
}

/// Row-major strides of `shape`.
pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// The elements of `h` in the order of `perm` (a transpose).
pub(crate) fn transpose(h: &HostTensor, perm: &[usize]) -> HostTensor {
    let shape: Vec<usize> = perm.iter().map(|&p| h.shape[p]).collect();
    let src = strides(&h.shape);
    let n = h.len();
    let order: Vec<usize> = (0..n)
        .map(|mut i| {
            let mut off = 0;
            for d in (0..shape.len()).rev() {
                off += (i % shape[d]) * src[perm[d]];
                i /= shape[d];
            }
            off
        })
        .collect();
    let data = match &h.data {
        HostData::Float(v) => HostData::Float(order.iter().map(|&o| v[o]).collect()),
        HostData::Int(v) => HostData::Int(order.iter().map(|&o| v[o]).collect()),
    };
    HostTensor {
        ty: h.ty,
        shape,
        data,
    }
}

/// The values of `data` at the flat positions `order`.
fn pick(data: &HostData, order: &[usize]) -> HostData {
    match data {
        HostData::Float(v) => HostData::Float(order.iter().map(|&o| v[o]).collect()),
        HostData::Int(v) => HostData::Int(order.iter().map(|&o| v[o]).collect()),
    }
}

/// The slices of `h` at positions `idx` along `axis` (each `< h.shape[axis]`), in that
/// order: a gather of one axis by a list of positions.
pub(crate) fn take(h: &HostTensor, axis: usize, idx: &[usize]) -> HostTensor {
    let outer: usize = h.shape[..axis].iter().product();
    let inner: usize = h.shape[axis + 1..].iter().product();
    let dim = h.shape[axis];
    let mut order = Vec::with_capacity(outer * idx.len() * inner);
    for o in 0..outer {
        for &i in idx {
            let base = (o * dim + i) * inner;
            order.extend(base..base + inner);
        }
    }
    let mut shape = h.shape.clone();
    shape[axis] = idx.len();
    HostTensor {
        ty: h.ty,
        shape,
        data: pick(&h.data, &order),
    }
}

/// `hs` (of one type and rank, equal but for `axis`) joined along `axis`.
pub(crate) fn concat(hs: &[HostTensor], axis: usize) -> HostTensor {
    let first = &hs[0];
    let outer: usize = first.shape[..axis].iter().product();
    let inner: usize = first.shape[axis + 1..].iter().product();
    let mut shape = first.shape.clone();
    shape[axis] = hs.iter().map(|h| h.shape[axis]).sum();
    let mut data = match &first.data {
        HostData::Float(_) => HostData::Float(Vec::new()),
        HostData::Int(_) => HostData::Int(Vec::new()),
    };
    for o in 0..outer {
        for h in hs {
            let run = h.shape[axis] * inner;
            let order: Vec<usize> = (o * run..(o + 1) * run).collect();
            match (&mut data, pick(&h.data, &order)) {
                (HostData::Float(d), HostData::Float(v)) => d.extend(v),
                (HostData::Int(d), HostData::Int(v)) => d.extend(v),
                (HostData::Float(d), HostData::Int(v)) => d.extend(v.iter().map(|&x| x as f64)),
                (HostData::Int(d), HostData::Float(v)) => d.extend(v.iter().map(|&x| x as i64)),
            }
        }
    }
    HostTensor {
        ty: first.ty,
        shape,
        data,
    }
}

/// `h` reduced over `axes` by folding `f` from `init` (in `f64`), in the shape with the axes
/// kept as 1.
pub(crate) fn reduce(
    h: &HostTensor,
    axes: &[usize],
    init: f64,
    f: impl Fn(f64, f64) -> f64,
) -> Vec<f64> {
    let out_shape: Vec<usize> = (0..h.shape.len())
        .map(|d| if axes.contains(&d) { 1 } else { h.shape[d] })
        .collect();
    let out_strides = strides(&out_shape);
    let mut out = vec![init; out_shape.iter().product()];
    for (i, x) in h.to_f64().into_iter().enumerate() {
        let (mut rest, mut o) = (i, 0);
        for d in (0..h.shape.len()).rev() {
            let c = rest % h.shape[d];
            rest /= h.shape[d];
            if !axes.contains(&d) {
                o += c * out_strides[d];
            }
        }
        out[o] = f(out[o], x);
    }
    out
}

/// An element-wise op on host values, numpy-broadcast: `f` on floats, `g` on integers (the
/// result of a predicate is `bool`). `None` when the shapes do not broadcast.
pub(crate) fn elementwise(
    inputs: &[HostTensor],
    out_ty: ElemType,
    f: impl Fn(&[f64]) -> f64,
    g: impl Fn(&[i64]) -> i64,
) -> Option<HostTensor> {
    let mut shape: Vec<usize> = Vec::new();
    for h in inputs {
        shape = crate::lower::broadcast_shapes(&shape, &h.shape)?;
    }
    let n: usize = shape.iter().product();
    let index = |h: &HostTensor, mut i: usize| {
        let (mut off, mut stride) = (0, 1);
        for d in (0..shape.len()).rev() {
            let c = i % shape[d];
            i /= shape[d];
            let hd = d as isize - (shape.len() - h.shape.len()) as isize;
            if hd >= 0 {
                let size = h.shape[hd as usize];
                off += if size == 1 { 0 } else { c * stride };
                stride *= size;
            }
        }
        off
    };
    let floats = inputs.iter().any(|h| h.ty.is_float()) || out_ty.is_float();
    let data = if floats {
        let vals: Vec<Vec<f64>> = inputs.iter().map(HostTensor::to_f64).collect();
        let out = (0..n).map(|i| {
            let args: Vec<f64> = inputs
                .iter()
                .zip(&vals)
                .map(|(h, v)| v[index(h, i)])
                .collect();
            f(&args)
        });
        if out_ty.is_float() {
            HostData::Float(out.map(|v| round_to(out_ty, v)).collect())
        } else {
            HostData::Int(out.map(|v| v as i64).collect())
        }
    } else {
        let vals: Vec<Vec<i64>> = inputs.iter().map(HostTensor::to_i64).collect();
        HostData::Int(
            (0..n)
                .map(|i| {
                    let args: Vec<i64> = inputs
                        .iter()
                        .zip(&vals)
                        .map(|(h, v)| v[index(h, i)])
                        .collect();
                    g(&args)
                })
                .collect(),
        )
    };
    Some(HostTensor {
        ty: out_ty,
        shape,
        data,
    })
}
