//! Neural-network ops: convolutions (`Conv`, and `ConvTranspose` as a convolution's input
//! gradient) on poplin, pooling (`MaxPool`, `AveragePool`, the global ones) and `Softmax`,
//! `LogSoftmax` on popnn, the normalisations (`BatchNormalization` at inference from its
//! running statistics, `LayerNormalization`, `InstanceNormalization`, `GroupNormalization`)
//! on popnn's layer and group norms with the ONNX scale and bias applied after, and `LRN` as
//! shifted sums of squares. Inputs are in ONNX's `[N, C, *field]` layout, which is popnn's and
//! poplin's.

use poplar::{DType, Tensor};
use popnn::ops::{PoolParams, PoolingType};
use popops::expr::{select, Expr, _1, _2, _3, _4};

use super::shape::broadcast_to;
use super::{axis, Cx, NodeCx, Outputs, Value};
use crate::error::Result;
use crate::host::{ElemType, HostTensor};

pub(super) fn lower(cx: &mut Cx, n: &NodeCx) -> Option<Outputs> {
    Some(match n.node.op.as_str() {
        "Conv" => conv(cx, n),
        "ConvTranspose" => conv_transpose(cx, n),
        "MaxPool" => pool(cx, n, PoolingType::Max),
        "AveragePool" => pool(cx, n, PoolingType::Avg),
        "GlobalMaxPool" => global_pool(cx, n, PoolingType::Max),
        "GlobalAveragePool" => global_pool(cx, n, PoolingType::Avg),
        "Softmax" => softmax(cx, n, false),
        "LogSoftmax" => softmax(cx, n, true),
        "BatchNormalization" => batch_norm(cx, n),
        "LayerNormalization" => layer_norm(cx, n),
        "InstanceNormalization" => instance_norm(cx, n),
        "GroupNormalization" => group_norm(cx, n),
        "LRN" => lrn(cx, n),
        "LpPool" => lp_pool(cx, n),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

/// `e` over an input of type `dt`, in f32.
fn up(e: Expr, dt: DType) -> Expr {
    if dt == DType::F32 {
        e
    } else {
        e.cast(DType::F32)
    }
}

/// An f32 expression rounded to `dt`.
fn down(e: Expr, dt: DType) -> Expr {
    if dt == DType::F32 {
        e
    } else {
        e.cast(dt)
    }
}

/// A per-channel vector `[C]` as a view broadcast over `shape` (`[N, C, *field]`).
fn per_channel(n: &NodeCx, v: &Tensor, shape: &[usize], i: usize) -> Result<Tensor> {
    if v.num_elements() != shape.get(1).copied().unwrap_or(0) {
        return Err(n.input_error(
            i,
            format!(
                "is {:?}; expected one value per channel of {shape:?}",
                v.shape()
            ),
        ));
    }
    let mut s = vec![1; shape.len()];
    s[1] = shape[1];
    let v = v.reshape(&s).map_err(|e| n.lowering(e))?;
    broadcast_to(n, &v, shape)
}

/// An error unless only the first `k` outputs are asked for.
fn outputs_at_most(n: &NodeCx, k: usize, why: &str) -> Result<()> {
    match n.node.outputs.iter().skip(k).position(|o| !o.is_empty()) {
        Some(i) => Err(crate::error::OnnxError::attribute(
            &n.at,
            &format!("output {}", i + k),
            why,
        )),
        None => Ok(()),
    }
}

/// A field attribute (`strides`, `dilations`, …): `rank` values, `default` when absent, each
/// at least `min`.
fn field_attr(n: &NodeCx, name: &str, rank: usize, default: usize, min: i64) -> Result<Vec<usize>> {
    match n.ints(name)? {
        None => Ok(vec![default; rank]),
        Some(v) if v.len() == rank && v.iter().all(|&x| x >= min) => {
            Ok(v.iter().map(|&x| x as usize).collect())
        }
        Some(v) => Err(n.attr_error(
            name,
            format!("{v:?}: expected {rank} values of at least {min}"),
        )),
    }
}

/// A total padding split before and after as `auto_pad` says: `SAME_UPPER` puts the odd one
/// after, `SAME_LOWER` (and `NOTSET` with an `output_shape`) before.
fn split_pad(total: usize, upper: bool) -> (usize, usize) {
    if upper {
        (total / 2, total - total / 2)
    } else {
        (total - total / 2, total / 2)
    }
}

/// The `pads` attribute (`[begin…, end…]`, `2 · rank` values ≥ 0), zeros when absent.
fn explicit_pads(n: &NodeCx, pads: Option<Vec<i64>>, r: usize) -> Result<(Vec<usize>, Vec<usize>)> {
    match pads {
        None => Ok((vec![0; r], vec![0; r])),
        Some(p) if p.len() == 2 * r && p.iter().all(|&x| x >= 0) => Ok((
            p[..r].iter().map(|&x| x as usize).collect(),
            p[r..].iter().map(|&x| x as usize).collect(),
        )),
        Some(p) => Err(n.attr_error("pads", format!("{p:?}: expected {} values ≥ 0", 2 * r))),
    }
}

/// The padding before and after each field dimension, from `pads` or `auto_pad`, for windows
/// of `extent` (the dilated kernel) moved by `stride` over `field`.
fn padding(
    n: &NodeCx,
    field: &[usize],
    extent: &[usize],
    stride: &[usize],
) -> Result<(Vec<usize>, Vec<usize>)> {
    let r = field.len();
    let auto = n.string("auto_pad", "NOTSET")?;
    let pads = n.ints("pads")?;
    match auto.as_str() {
        "NOTSET" | "" => explicit_pads(n, pads, r),
        "VALID" => Ok((vec![0; r], vec![0; r])),
        "SAME_UPPER" | "SAME_LOWER" => {
            let (mut lo, mut hi) = (vec![0; r], vec![0; r]);
            for d in 0..r {
                let out = field[d].div_ceil(stride[d]);
                let total = ((out - 1) * stride[d] + extent[d]).saturating_sub(field[d]);
                (lo[d], hi[d]) = split_pad(total, auto == "SAME_UPPER");
            }
            Ok((lo, hi))
        }
        other => Err(n.attr_error("auto_pad", format!("'{other}' is not an auto_pad value"))),
    }
}

/// The `kernel_shape` attribute checked against the weights' kernel, or the weights' kernel
/// (which must not be empty).
fn kernel_shape(n: &NodeCx, w: &[usize]) -> Result<Vec<usize>> {
    if w.contains(&0) {
        return Err(n.input_error(1, format!("the kernel {w:?} is empty")));
    }
    match n.ints("kernel_shape")? {
        Some(k) if k.iter().map(|&x| x as usize).eq(w.iter().copied()) => Ok(w.to_vec()),
        Some(k) => Err(n.attr_error(
            "kernel_shape",
            format!("{k:?} is not the weights' kernel {w:?}"),
        )),
        None => Ok(w.to_vec()),
    }
}

/// A float input `[N, C, *field]` with a field of 1 to 3 dimensions.
fn spatial_input(cx: &mut Cx, n: &NodeCx, i: usize) -> Result<(Tensor, ElemType)> {
    let (x, ty) = cx.float_tensor(n, i)?;
    if !(3..=5).contains(&x.rank()) {
        return Err(n.input_error(
            i,
            format!(
                "is {:?}; expected [N, C, *field] with 1 to 3 field dimensions",
                x.shape()
            ),
        ));
    }
    if x.num_elements() == 0 {
        return Err(n.input_error(i, format!("{:?} is empty", x.shape())));
    }
    Ok((x, ty))
}

// ---------------------------------------------------------------------------------------------
// Convolutions

/// The f32 output `y` plus the optional bias (input 2, per channel), as a value of `ty`.
fn with_bias(cx: &mut Cx, n: &NodeCx, y: Tensor, ty: ElemType) -> Result<Value> {
    let dt = ty.device().unwrap_or(DType::F32);
    let y = match cx.opt_value(n, 2)? {
        Some(_) => {
            let (b, _) = cx.float_tensor(n, 2)?;
            let b = per_channel(n, &b, y.shape(), 2)?;
            let e = down(_1 + up(_2, b.dtype()), dt);
            cx.map(n, &e, &[&y, &b], "bias")?
        }
        None if dt != DType::F32 => cx.map(n, &_1.cast(dt), &[&y], "cast")?,
        None => y,
    };
    Ok(Value::Device { t: y, ty })
}

/// A convolution's operands and window: `x`, the weights (cast to `x`'s type), the kernel,
/// strides, dilations and group count (`ConvTranspose` and `Conv` alike).
struct ConvArgs {
    x: Tensor,
    ty: ElemType,
    w: Tensor,
    kernel: Vec<usize>,
    stride: Vec<usize>,
    dilation: Vec<usize>,
    group: usize,
}

impl ConvArgs {
    fn read(cx: &mut Cx, n: &NodeCx, layout: &str) -> Result<ConvArgs> {
        let (x, ty) = spatial_input(cx, n, 0)?;
        let (w, _) = cx.float_tensor(n, 1)?;
        if w.rank() != x.rank() {
            let s = w.shape();
            return Err(n.input_error(1, format!("is {s:?}; expected {layout}")));
        }
        let w = if w.dtype() == x.dtype() {
            w
        } else {
            cx.map(n, &_1.cast(x.dtype()), &[&w], "cast")?
        };
        let r = x.rank() - 2;
        let group = n.int("group", 1)?;
        if group < 1 {
            return Err(n.attr_error("group", format!("{group} < 1")));
        }
        Ok(ConvArgs {
            kernel: kernel_shape(n, &w.shape()[2..])?,
            stride: field_attr(n, "strides", r, 1, 1)?,
            dilation: field_attr(n, "dilations", r, 1, 1)?,
            group: group as usize,
            x,
            ty,
            w,
        })
    }

    fn extent(&self) -> Vec<usize> {
        (0..self.kernel.len())
            .map(|d| self.dilation[d] * (self.kernel[d] - 1) + 1)
            .collect()
    }

    /// The parameters of the forward convolution from `field` over `channels` into `outputs`.
    fn params(
        &self,
        channels: usize,
        outputs: usize,
        field: &[usize],
        pads: (&[usize], &[usize]),
    ) -> poplin::ConvParams {
        poplin::ConvParams::new(self.x.shape()[0], channels, outputs, field, &self.kernel)
            .with_groups(self.group)
            .with_stride(&self.stride)
            .with_dilation(&self.dilation)
            .with_padding(pads.0, pads.1)
            .with_type(self.x.dtype())
    }
}

/// Plans `pass` of `params` and runs it on `x` and the weights `w`: the f32 result.
fn run_conv(
    cx: &mut Cx,
    n: &NodeCx,
    params: &poplin::ConvParams,
    pass: poplin::ConvPass,
    (x, w): (&Tensor, &Tensor),
) -> Result<Tensor> {
    let opts = poplin::ConvOptions::default();
    let plan = poplin::plan_convolution(cx.graph.target(), params, pass, &opts)
        .map_err(|e| n.lowering(e))?;
    let name = cx.name(n, "conv");
    let (y, prog) = if pass == poplin::ConvPass::Forward {
        poplin::convolution(cx.graph, x, w, &plan, &name)
    } else {
        poplin::convolution_input_gradient(cx.graph, x, w, &plan, &name)
    }
    .map_err(|e| n.lowering(e))?;
    cx.prog.push(prog);
    Ok(y)
}

/// `Conv`: grouped, strided, dilated and padded, 1- to 3-D, with an optional bias.
fn conv(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let a = ConvArgs::read(cx, n, "[M, C/group, *kernel]")?;
    let (x, w) = (&a.x, &a.w);
    let (lo, hi) = padding(n, &x.shape()[2..], &a.extent(), &a.stride)?;
    if w.shape()[1] * a.group != x.shape()[1] {
        return Err(n.input_error(
            1,
            format!(
                "{:?} does not take {} channels in {} group(s)",
                w.shape(),
                x.shape()[1],
                a.group
            ),
        ));
    }
    let params = a.params(x.shape()[1], w.shape()[0], &x.shape()[2..], (&lo, &hi));
    let y = run_conv(cx, n, &params, poplin::ConvPass::Forward, (x, w))?;
    Ok(vec![with_bias(cx, n, y, a.ty)?])
}

/// The padding of a `ConvTranspose` and its output field: from `output_shape` (the padding
/// split as `auto_pad` says) or from `pads`/`auto_pad`.
fn transpose_geometry(
    n: &NodeCx,
    field: &[usize],
    extent: &[usize],
    stride: &[usize],
    out_pad: &[usize],
) -> Result<(Vec<usize>, Vec<usize>, Vec<usize>)> {
    let r = field.len();
    let full: Vec<usize> = (0..r)
        .map(|d| (field[d] - 1) * stride[d] + extent[d] + out_pad[d])
        .collect();
    let auto = n.string("auto_pad", "NOTSET")?;
    let out_shape = n.ints("output_shape")?;
    let pads = n.ints("pads")?;
    let want: Option<Vec<usize>> = match out_shape {
        Some(o) if o.len() == r || o.len() == r + 2 => Some(
            o[o.len() - r..]
                .iter()
                .map(|&x| x.max(1) as usize)
                .collect(),
        ),
        Some(o) => {
            return Err(n.attr_error(
                "output_shape",
                format!("{o:?}: expected {r} (or {}) sizes", r + 2),
            ))
        }
        None if auto.starts_with("SAME") => Some((0..r).map(|d| field[d] * stride[d]).collect()),
        None => None,
    };
    if let Some(want) = want {
        // Padding from the shape wanted; an output larger than the full one is extended
        // after its end (as `output_padding` does).
        let (mut lo, mut hi) = (vec![0; r], vec![0; r]);
        for d in 0..r {
            let total = full[d].saturating_sub(want[d]);
            (lo[d], hi[d]) = split_pad(total, auto == "SAME_UPPER");
        }
        return Ok((lo, hi, want));
    }
    let (lo, hi) = explicit_pads(n, pads, r)?;
    let out: Vec<usize> = (0..r)
        .map(|d| full[d].checked_sub(lo[d] + hi[d]))
        .collect::<Option<_>>()
        .ok_or_else(|| n.attr_error("pads", "pads larger than the output"))?;
    Ok((lo, hi, out))
}

/// `ConvTranspose`: the input gradient of the convolution of its output by the weights
/// (`[C, M/group, *kernel]`), with `output_padding` and `output_shape`.
fn conv_transpose(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let a = ConvArgs::read(cx, n, "[C, M/group, *kernel]")?;
    let (x, w) = (&a.x, &a.w);
    if w.shape()[0] != x.shape()[1] {
        return Err(n.input_error(
            1,
            format!("{:?} does not take {} channels", w.shape(), x.shape()[1]),
        ));
    }
    let r = x.rank() - 2;
    let out_pad = field_attr(n, "output_padding", r, 0, 0)?;
    if let Some(d) = (0..r).find(|&d| out_pad[d] >= a.stride[d].max(a.dilation[d])) {
        return Err(n.attr_error(
            "output_padding",
            format!("{out_pad:?}: too large in dimension {d}"),
        ));
    }
    let (lo, hi, out) = transpose_geometry(n, &x.shape()[2..], &a.extent(), &a.stride, &out_pad)?;
    let params = a.params(w.shape()[1] * a.group, x.shape()[1], &out, (&lo, &hi));
    if params.output_field() != x.shape()[2..] {
        return Err(n.attr_error("pads", "the padding does not give the input's field back"));
    }
    let y = run_conv(cx, n, &params, poplin::ConvPass::InputGradient, (x, w))?;
    Ok(vec![with_bias(cx, n, y, a.ty)?])
}

// ---------------------------------------------------------------------------------------------
// Pooling

/// `x` with `before`/`after` elements of `value` around axis `axis` (a view).
fn pad_axis(
    cx: &mut Cx,
    n: &NodeCx,
    x: &Tensor,
    axis: usize,
    (before, after): (usize, usize),
    value: f64,
) -> Result<Tensor> {
    let mut all = Vec::with_capacity(3);
    for (k, at) in [(before, 0), (after, 2)] {
        if k > 0 {
            let mut s = x.shape().to_vec();
            s[axis] = k;
            all.push((cx.filled(n, x.dtype(), &s, value)?, at));
        }
    }
    all.push((x.clone(), 1));
    all.sort_by_key(|p| p.1);
    let parts: Vec<Tensor> = all.into_iter().map(|p| p.0).collect();
    Tensor::concat_dim(&parts, axis).map_err(|e| n.lowering(e))
}

/// `x` with `lo`/`hi` zeros before and after each field dimension (a copy).
fn zero_pad(cx: &mut Cx, n: &NodeCx, x: &Tensor, lo: &[usize], hi: &[usize]) -> Result<Tensor> {
    let mut t = x.clone();
    for d in 0..lo.len() {
        t = pad_axis(cx, n, &t, d + 2, (lo[d], hi[d]), 0.0)?;
    }
    cx.copy(n, &t, "padded")
}

/// The extra padding after each field dimension that `ceil_mode` adds: the last window may
/// start inside the (padded-before) field and hang over its end.
fn ceil_extra(
    field: &[usize],
    ext: &[usize],
    s: &[usize],
    lo: &[usize],
    hi: &[usize],
) -> Vec<usize> {
    (0..field.len())
        .map(|d| {
            let span = (field[d] + lo[d] + hi[d]).saturating_sub(ext[d]);
            let mut out = span.div_ceil(s[d]) + 1;
            if (out - 1) * s[d] >= field[d] + lo[d] {
                out -= 1;
            }
            ((out - 1) * s[d] + ext[d]).saturating_sub(field[d] + lo[d] + hi[d])
        })
        .collect()
}

/// A pooling's padding: explicit (`pads`, `auto_pad`) before and after, and what
/// `ceil_mode` adds after (never counted by an average).
struct Pads {
    lo: Vec<usize>,
    hi: Vec<usize>,
    extra: Vec<usize>,
}

/// A pooling's window: kernel, stride, dilation per field dimension.
struct Window {
    kernel: Vec<usize>,
    stride: Vec<usize>,
    dilation: Vec<usize>,
}

impl Window {
    fn extent(&self) -> Vec<usize> {
        (0..self.kernel.len())
            .map(|d| self.dilation[d] * (self.kernel[d] - 1) + 1)
            .collect()
    }
}

/// `MaxPool` and `AveragePool` (`count_include_pad` by padding with zeros first; `ceil_mode`
/// as padding after that no window counts; dilated windows gathered tap by tap). `MaxPool` of
/// integers is computed in f32; its optional indices are found tap by tap.
fn pool(cx: &mut Cx, n: &NodeCx, kind: PoolingType) -> Outputs {
    let (x, ty) = cx.tensor(n, 0)?;
    let x = match ty {
        ElemType::Float | ElemType::Float16 => x,
        ElemType::Uint8
        | ElemType::Int32
        | ElemType::Uint16
        | ElemType::Uint32
        | ElemType::Int64
            if kind == PoolingType::Max =>
        {
            cx.map(n, &_1.cast(DType::F32), &[&x], "cast")?
        }
        _ => return Err(n.type_error("input 0", ty, "this pooling does not take")),
    };
    if !(3..=5).contains(&x.rank()) {
        return Err(n.input_error(
            0,
            format!("is {:?}; expected 1 to 3 field dimensions", x.shape()),
        ));
    }
    if x.num_elements() == 0 {
        return Err(n.input_error(0, format!("{:?} is empty", x.shape())));
    }
    let (w, pads, include_pad) = pool_window(n, kind, &x.shape()[2..])?;
    let column_major = n.int("storage_order", 0)? != 0;
    let y = if w.dilation.iter().any(|&d| d != 1) {
        pool_taps(cx, n, &x, kind, &w, &pads, include_pad)?
    } else {
        pool_plain(cx, n, &x, kind, &w, &pads, include_pad)?
    };
    let indices = match n.node.outputs.get(1) {
        Some(o) if !o.is_empty() && kind == PoolingType::Max => {
            let t = max_indices(cx, n, &x, &y, &w, &pads, column_major)?;
            vec![Value::Device {
                t,
                ty: ElemType::Int64,
            }]
        }
        _ => vec![],
    };
    let dt = ty.device().unwrap_or(DType::F32);
    let y = if y.dtype() != dt {
        cx.map(n, &_1.cast(dt), &[&y], "cast")?
    } else {
        y
    };
    Ok([vec![Value::Device { t: y, ty }], indices].concat())
}

/// `LpPool`: `(Σ |x|^p)^(1/p)` over each window (padding counts as zeros), as the average
/// pool of `|x|^p` counting the padding, times the window's size, to the power `1/p`.
fn lp_pool(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let p = n.int("p", 2)?;
    if p < 1 {
        return Err(n.attr_error("p", format!("{p} < 1")));
    }
    let (x, ty) = cx.float_tensor(n, 0)?;
    if !(3..=5).contains(&x.rank()) || x.num_elements() == 0 {
        return Err(n.input_error(
            0,
            format!(
                "is {:?}; expected 1 to 3 non-empty field dimensions",
                x.shape()
            ),
        ));
    }
    let (w, pads, _) = pool_window(n, PoolingType::Avg, &x.shape()[2..])?;
    if pads.extra.iter().any(|&e| e != 0) {
        return Err(n.attr_error("ceil_mode", "1 is not supported for LpPool"));
    }
    let p = p as f64;
    let xp = cx.map(n, &_1.abs().pow(p), &[&x], "|x|^p")?;
    let y = if w.dilation.iter().any(|&d| d != 1) {
        pool_taps(cx, n, &xp, PoolingType::Avg, &w, &pads, true)?
    } else {
        pool_plain(cx, n, &xp, PoolingType::Avg, &w, &pads, true)?
    };
    let k = w.kernel.iter().product::<usize>() as f64;
    let y = cx.map(n, &(_1 * k).pow(1.0 / p), &[&y], "lp")?;
    Ok(vec![Value::Device { t: y, ty }])
}

/// A pooling's window and padding from its attributes, for a field of `field`; whether the
/// average counts the padding.
fn pool_window(n: &NodeCx, kind: PoolingType, field: &[usize]) -> Result<(Window, Pads, bool)> {
    let r = field.len();
    let kernel = match n.ints("kernel_shape")? {
        Some(k) if k.len() == r && k.iter().all(|&v| v >= 1) => {
            k.iter().map(|&v| v as usize).collect::<Vec<_>>()
        }
        k => return Err(n.attr_error("kernel_shape", format!("{k:?}: expected {r} sizes ≥ 1"))),
    };
    let w = Window {
        kernel,
        stride: field_attr(n, "strides", r, 1, 1)?,
        dilation: field_attr(n, "dilations", r, 1, 1)?,
    };
    let ceil = n.int("ceil_mode", 0)? != 0;
    let include_pad = kind == PoolingType::Avg && n.int("count_include_pad", 0)? != 0;
    let ext = w.extent();
    let (lo, hi) = padding(n, field, &ext, &w.stride)?;
    let extra = if ceil {
        ceil_extra(field, &ext, &w.stride, &lo, &hi)
    } else {
        vec![0; r]
    };
    Ok((w, Pads { lo, hi, extra }, include_pad))
}

/// `MaxPool`'s indices (`int64`): per output, the flat index into `x` (row-major, or with
/// the field column-major for `storage_order` 1) of its window's first maximal element — the
/// taps compared with the max `y` from the last to the first, the first equal one kept.
fn max_indices(
    cx: &mut Cx,
    n: &NodeCx,
    x: &Tensor,
    y: &Tensor,
    w: &Window,
    pads: &Pads,
    column_major: bool,
) -> Result<Tensor> {
    let (t, outs) = padded_windows(cx, n, x, w, pads, f64::NEG_INFINITY)?;
    let field = x.shape()[2..].to_vec();
    let r = field.len();
    let fstride = field_strides(&field, column_major);
    let taps: usize = w.kernel.iter().product();
    let mut idx: Option<Tensor> = None;
    for tap in (0..taps).rev() {
        let j = unravel(tap, &w.kernel);
        let mut view = t.clone();
        for d in 0..r {
            let start = j[d] * w.dilation[d];
            view = strided(n, &view, d + 2, start, outs[d], w.stride[d])?;
        }
        let at = tap_positions(w, &pads.lo, &field, &outs, &j, &fstride);
        let h = HostTensor::int(ElemType::Int32, &[vec![1, 1], outs.clone()].concat(), at);
        let name = cx.name(n, "tap");
        let c = cx.constant(n, &h, &name)?;
        let c = broadcast_to(n, &c, y.shape())?;
        idx = Some(match idx {
            None => c,
            Some(prev) => {
                let e = select(_1, _2, _3.equal(_4));
                cx.map(n, &e, &[&c, &prev, &view, y], "argmax")?
            }
        });
    }
    let idx = idx.ok_or_else(|| n.attr_error("kernel_shape", "an empty window"))?;
    let (b, c) = (x.shape()[0], x.shape()[1]);
    let f: usize = field.iter().product();
    let planes: Vec<i64> = (0..b * c).map(|p| (p * f) as i64).collect();
    let mut ps = vec![1; y.rank()];
    ps[..2].copy_from_slice(&[b, c]);
    let name = cx.name(n, "planes");
    let planes = cx.constant(n, &HostTensor::int(ElemType::Int32, &ps, planes), &name)?;
    let planes = broadcast_to(n, &planes, y.shape())?;
    cx.map(n, &(_1 + _2), &[&idx, &planes], "indices")
}

/// The flat index's stride of each field dimension, row- or column-major.
fn field_strides(field: &[usize], column_major: bool) -> Vec<usize> {
    let r = field.len();
    let mut fstride = vec![1usize; r];
    for d in 1..r {
        if column_major {
            fstride[d] = fstride[d - 1] * field[d - 1];
        } else {
            fstride[r - 1 - d] = fstride[r - d] * field[r - d];
        }
    }
    fstride
}

/// Per output position, the flat field index of tap `j` of its window (clamped into the
/// field for padding taps, which are never the max).
fn tap_positions(
    w: &Window,
    lo: &[usize],
    field: &[usize],
    outs: &[usize],
    j: &[usize],
    fstride: &[usize],
) -> Vec<i64> {
    (0..outs.iter().product())
        .map(|o| {
            let o = unravel(o, outs);
            (0..field.len())
                .map(|d| {
                    let p = (o[d] * w.stride[d] + j[d] * w.dilation[d]) as i64 - lo[d] as i64;
                    p.clamp(0, field[d] as i64 - 1) * fstride[d] as i64
                })
                .sum()
        })
        .collect()
}

/// The row-major multi-index of `i` in `shape`.
fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut v = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        v[d] = i % shape[d];
        i /= shape[d];
    }
    v
}

/// `x` padded with `fill` so that every tap of every window (the explicit and `ceil_mode`
/// padding, and the strided views' slack) is in range; the output field.
fn padded_windows(
    cx: &mut Cx,
    n: &NodeCx,
    x: &Tensor,
    w: &Window,
    pads: &Pads,
    fill: f64,
) -> Result<(Tensor, Vec<usize>)> {
    let field = x.shape()[2..].to_vec();
    let ext = w.extent();
    let mut t = x.clone();
    let mut outs = Vec::new();
    for d in 0..field.len() {
        let (k, s, dil) = (w.kernel[d], w.stride[d], w.dilation[d]);
        let padded = field[d] + pads.lo[d] + pads.hi[d] + pads.extra[d];
        if padded < ext[d] {
            return Err(n.attr_error("kernel_shape", "the window is larger than the padded input"));
        }
        let out = (padded - ext[d]) / s + 1;
        let need = ((k - 1) * dil + out * s).max(padded);
        t = pad_axis(
            cx,
            n,
            &t,
            d + 2,
            (pads.lo[d], need - field[d] - pads.lo[d]),
            fill,
        )?;
        outs.push(out);
    }
    Ok((t, outs))
}

/// The view of `t` at `start + o·s` (`o < out`) along `axis`.
fn strided(
    n: &NodeCx,
    t: &Tensor,
    axis: usize,
    start: usize,
    out: usize,
    s: usize,
) -> Result<Tensor> {
    let le = |e| n.lowering(e);
    let v = t.slice_dim(axis, start..start + out * s).map_err(le)?;
    let mut split = t.shape().to_vec();
    split.splice(axis..=axis, [out, s]);
    let v = v.reshape(&split).map_err(le)?;
    let v = v.slice_dim(axis + 1, 0..1).map_err(le)?;
    let mut shape = t.shape().to_vec();
    shape[axis] = out;
    v.reshape(&shape).map_err(le)
}

/// An undilated pooling on popnn (padding with zeros first for `count_include_pad`).
fn pool_plain(
    cx: &mut Cx,
    n: &NodeCx,
    x: &Tensor,
    kind: PoolingType,
    w: &Window,
    pads: &Pads,
    include_pad: bool,
) -> Result<Tensor> {
    let r = pads.lo.len();
    let counted = include_pad && pads.lo.iter().chain(&pads.hi).any(|&p| p > 0);
    let (x, lo, hi) = if counted {
        let x = zero_pad(cx, n, x, &pads.lo, &pads.hi)?;
        (x, vec![0; r], pads.extra.clone())
    } else {
        let hi = (0..r).map(|d| pads.hi[d] + pads.extra[d]).collect();
        (x.clone(), pads.lo.clone(), hi)
    };
    if let Some(d) = (0..r).find(|&d| lo[d] >= w.kernel[d] || hi[d] >= w.kernel[d]) {
        return Err(n.attr_error(
            "pads",
            format!("padding in dimension {d} is not smaller than the kernel"),
        ));
    }
    pool_bands(cx, n, &x, kind, w, &lo, &hi)
}

/// A plane of more elements than this is pooled in bands of output rows: `popnn`'s pooling
/// puts each plane whole on one tile (with its vertex), which a 112×112 plane overfills.
const POOL_PLANE_ELEMENTS: usize = 4096;

/// `popnn::ops::pool` of `x` padded by `lo`/`hi`, in bands along the first field dimension
/// when its planes are large: each band reads the input rows its windows cover (with the
/// padding of the field's edges it touches), and the bands' outputs are joined.
fn pool_bands(
    cx: &mut Cx,
    n: &NodeCx,
    x: &Tensor,
    kind: PoolingType,
    w: &Window,
    lo: &[usize],
    hi: &[usize],
) -> Result<Tensor> {
    let lens = |e| n.lowering(e);
    let field = &x.shape()[2..];
    let plane: usize = field.iter().product();
    let (h, k, s) = (field[0] as i64, w.kernel[0] as i64, w.stride[0] as i64);
    let out_rows = ((h + lo[0] as i64 + hi[0] as i64 - k) / s + 1).max(0) as usize;
    let bands = plane
        .div_ceil(POOL_PLANE_ELEMENTS)
        .clamp(1, out_rows.max(1));
    let mut outs = Vec::with_capacity(bands);
    for b in 0..bands {
        let (o0, o1) = (
            (b * out_rows / bands) as i64,
            ((b + 1) * out_rows / bands) as i64,
        );
        if o0 == o1 {
            continue;
        }
        let start = o0 * s - lo[0] as i64;
        let end = (o1 - 1) * s - lo[0] as i64 + k;
        let (blo, bhi) = ((-start).max(0) as usize, (end - h).max(0) as usize);
        let rows = start.max(0) as usize..end.min(h) as usize;
        let xb = if bands == 1 {
            x.clone()
        } else {
            x.slice_dim(2, rows).map_err(lens)?
        };
        let (mut l, mut u) = (lo.to_vec(), hi.to_vec());
        (l[0], u[0]) = (blo, bhi);
        let p = PoolParams::new(kind, &w.kernel)
            .with_stride(&w.stride)
            .with_padding(&l, &u);
        let name = cx.name(n, "pool");
        let y =
            popnn::ops::pool(cx.graph, &p, &xb, &mut cx.prog, &name).map_err(|e| n.lowering(e))?;
        outs.push(y);
    }
    if outs.len() == 1 {
        return Ok(outs.pop().expect("one band"));
    }
    Tensor::concat_dim(&outs, 2).map_err(lens)
}

/// A dilated pooling: along each field dimension, the `kernel` taps of every window gathered
/// side by side (strided views of the padded input), then one undilated pooling of windows
/// `kernel` long and as far apart. Padding holds −∞ (max) or zeros (average, the mean then
/// rescaled by how many elements each window counts: the real ones, or also the explicit
/// padding and what `ceil_mode` adds with `count_include_pad`, as ONNX's reference does).
fn pool_taps(
    cx: &mut Cx,
    n: &NodeCx,
    x: &Tensor,
    kind: PoolingType,
    w: &Window,
    pads: &Pads,
    include_pad: bool,
) -> Result<Tensor> {
    let fill = if kind == PoolingType::Max {
        f64::NEG_INFINITY
    } else {
        0.0
    };
    let field = x.shape()[2..].to_vec();
    let (mut t, outs) = padded_windows(cx, n, x, w, pads, fill)?;
    for (d, &out) in outs.iter().enumerate() {
        let taps = (w.kernel[d], w.stride[d], w.dilation[d], out);
        t = gather_taps(n, &t, d + 2, taps)?;
    }
    let t = cx.copy(n, &t, "windows")?;
    let p = PoolParams::new(kind, &w.kernel).with_stride(&w.kernel);
    let name = cx.name(n, "pool");
    let y = popnn::ops::pool(cx.graph, &p, &t, &mut cx.prog, &name).map_err(|e| n.lowering(e))?;
    // With count_include_pad every tap counts (as in ONNX's reference, also those ceil_mode
    // adds); otherwise the mean over all taps is rescaled to the real elements'.
    if kind == PoolingType::Max || include_pad {
        return Ok(y);
    }
    let scale = avg_rescale(w, &pads.lo, &field, &outs);
    let shape = [vec![1, 1], outs].concat();
    let name = cx.name(n, "count");
    let sc = cx.constant(n, &HostTensor::float(ElemType::Float, &shape, scale), &name)?;
    let sc = broadcast_to(n, &sc, y.shape())?;
    let e = down(up(_1, y.dtype()) * _2, y.dtype());
    cx.map(n, &e, &[&y, &sc], "rescale")
}

/// Per output position, the number of taps over the number of real elements of its window
/// (which starts `lo` before the field): the factor from a mean over all taps to a mean over
/// the real elements.
fn avg_rescale(w: &Window, lo: &[usize], field: &[usize], outs: &[usize]) -> Vec<f64> {
    let counted = |d: usize, o: usize| {
        (0..w.kernel[d])
            .filter(|j| (lo[d]..lo[d] + field[d]).contains(&(o * w.stride[d] + j * w.dilation[d])))
            .count()
    };
    let taps: usize = w.kernel.iter().product();
    (0..outs.iter().product())
        .map(|i| {
            let o = unravel(i, outs);
            let c: usize = (0..outs.len()).map(|d| counted(d, o[d])).product();
            taps as f64 / c.max(1) as f64
        })
        .collect()
}

/// Along `axis`, the `k` taps `o·s + j·dil` of each of `out` windows side by side (`out · k`
/// long), as views.
fn gather_taps(
    n: &NodeCx,
    t: &Tensor,
    axis: usize,
    (k, s, dil, out): (usize, usize, usize, usize),
) -> Result<Tensor> {
    let taps = (0..k)
        .map(|j| {
            strided(n, t, axis, j * dil, out, s)?
                .expand(axis + 1)
                .map_err(|e| n.lowering(e))
        })
        .collect::<Result<Vec<_>>>()?;
    let g = Tensor::concat_dim(&taps, axis + 1).map_err(|e| n.lowering(e))?;
    let mut merged = t.shape().to_vec();
    merged[axis] = out * k;
    g.reshape(&merged).map_err(|e| n.lowering(e))
}

/// `GlobalMaxPool`, `GlobalAveragePool`: one window over the whole field (flattened).
fn global_pool(cx: &mut Cx, n: &NodeCx, kind: PoolingType) -> Outputs {
    let (x, ty) = cx.float_tensor(n, 0)?;
    if x.rank() < 2 {
        return Err(n.input_error(0, format!("is {:?}; expected [N, C, *field]", x.shape())));
    }
    let (b, c) = (x.shape()[0], x.shape()[1]);
    let f: usize = x.shape()[2..].iter().product();
    let flat = x.reshape(&[b, c, f]).map_err(|e| n.lowering(e))?;
    let p = PoolParams::new(kind, &[f]);
    let name = cx.name(n, "globalpool");
    let y =
        popnn::ops::pool(cx.graph, &p, &flat, &mut cx.prog, &name).map_err(|e| n.lowering(e))?;
    let mut shape = vec![1; x.rank()];
    shape[..2].copy_from_slice(&[b, c]);
    let y = y.reshape(&shape).map_err(|e| n.lowering(e))?;
    Ok(vec![Value::Device { t: y, ty }])
}

// ---------------------------------------------------------------------------------------------
// Softmax

/// `Softmax`, `LogSoftmax` along `axis` (opset 13: one axis), moved last for popnn and back.
fn softmax(cx: &mut Cx, n: &NodeCx, log: bool) -> Outputs {
    let (x, ty) = cx.float_tensor(n, 0)?;
    let rank = x.rank();
    if rank == 0 {
        return Err(n.input_error(0, "is a scalar; softmax needs an axis"));
    }
    let a = axis(n, "axis", n.int("axis", -1)?, rank)?;
    if x.num_elements() == 0 {
        return Ok(vec![Value::Device { t: x, ty }]);
    }
    let perm: Vec<usize> = (0..rank).filter(|&d| d != a).chain([a]).collect();
    let mut inverse = vec![0; rank];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p] = i;
    }
    let moved = x.dim_shuffle(&perm).map_err(|e| n.lowering(e))?;
    let name = cx.name(n, if log { "logsoftmax" } else { "softmax" });
    let f = if log {
        popnn::ops::log_softmax
    } else {
        popnn::ops::softmax
    };
    let y = f(cx.graph, &moved, &mut cx.prog, &name).map_err(|e| n.lowering(e))?;
    let y = y.dim_shuffle(&inverse).map_err(|e| n.lowering(e))?;
    Ok(vec![Value::Device { t: y, ty }])
}

// ---------------------------------------------------------------------------------------------
// Normalisation

/// `BatchNormalization` at inference: `(x − mean) / √(var + ε) · scale + B` per channel, one
/// fused map over broadcast views (`training_mode` 1 is not supported).
fn batch_norm(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let eps = n.float("epsilon", 1e-5)? as f64;
    let momentum = n.float("momentum", 0.9)? as f64;
    n.ignore("spatial"); // opsets before 9; 1 (its default) is the only layout here
    if n.int("training_mode", 0)? != 0 {
        return batch_norm_training(cx, n, eps, momentum);
    }
    outputs_at_most(n, 1, "the running statistics are outputs of training only")?;
    let (x, ty) = cx.float_tensor(n, 0)?;
    if x.rank() < 2 {
        return Err(n.input_error(0, format!("is {:?}; expected [N, C, ...]", x.shape())));
    }
    let shape = x.shape().to_vec();
    let mut views = vec![x.clone()];
    for i in 1..5 {
        let (v, _) = cx.float_tensor(n, i)?;
        views.push(per_channel(n, &v, &shape, i)?);
    }
    let u = |i: usize| up(Expr::Placeholder(i + 1), views[i].dtype());
    let e = (u(0) - u(3)) / (u(4) + eps).sqrt() * u(1) + u(2);
    let refs: Vec<&Tensor> = views.iter().collect();
    let y = cx.map(n, &down(e, x.dtype()), &refs, "batchnorm")?;
    Ok(vec![Value::Device { t: y, ty }])
}

/// `BatchNormalization` in training mode: normalised by the batch's own statistics (popnn's
/// batch norm), with the running mean and (biased) variance updated by `momentum`.
fn batch_norm_training(cx: &mut Cx, n: &NodeCx, eps: f64, momentum: f64) -> Outputs {
    let (x, ty) = cx.float_tensor(n, 0)?;
    let mut params = Vec::new();
    for i in 1..3 {
        let (v, _) = cx.float_tensor(n, i)?;
        let v = if v.dtype() == x.dtype() {
            v
        } else {
            cx.map(n, &_1.cast(x.dtype()), &[&v], "cast")?
        };
        params.push(v);
    }
    let name = cx.name(n, "batchnorm");
    let (y, stats) = popnn::ops::batch_norm(
        cx.graph,
        &x,
        &params[0],
        &params[1],
        eps as f32,
        &mut cx.prog,
        &name,
    )
    .map_err(|e| n.lowering(e))?;
    let mut out = vec![Value::Device { t: y, ty }];
    let var = (_2 * _2).inverse() - eps;
    for (i, batch) in [(3, _2), (4, var)] {
        let (r, rty) = cx.float_tensor(n, i)?;
        let e = down(
            up(_1, r.dtype()) * momentum + batch * (1.0 - momentum),
            r.dtype(),
        );
        let src = if i == 3 { &stats.mean } else { &stats.inv_std };
        let t = cx.map(n, &e, &[&r, src], "running")?;
        out.push(Value::Device { t, ty: rty });
    }
    Ok(out)
}

/// `y · scale + bias` with `scale`, `bias` (inputs `si`, `bi`; `bias` optional) broadcast to
/// `y`'s shape from the trailing `norm_shape` or per channel, rounded to `dt`.
fn scale_bias(
    cx: &mut Cx,
    n: &NodeCx,
    y: &Tensor,
    si: usize,
    bi: usize,
    dt: DType,
) -> Result<Tensor> {
    let (s, _) = cx.float_tensor(n, si)?;
    let s = fit(n, &s, y.shape(), si)?;
    let (e, mut ins) = (up(_1, y.dtype()) * up(_2, s.dtype()), vec![y.clone(), s]);
    let e = match cx.opt_value(n, bi)? {
        Some(_) => {
            let (b, _) = cx.float_tensor(n, bi)?;
            let b = fit(n, &b, y.shape(), bi)?;
            let bt = b.dtype();
            ins.push(b);
            e + up(_3, bt)
        }
        None => e,
    };
    let refs: Vec<&Tensor> = ins.iter().collect();
    cx.map(n, &down(e, dt), &refs, "scale")
}

/// `v` broadcast (numpy) to `shape`, or an error on input `i`.
fn fit(n: &NodeCx, v: &Tensor, shape: &[usize], i: usize) -> Result<Tensor> {
    let ok = super::shape::broadcast_shapes(v.shape(), shape).as_deref() == Some(shape);
    if !ok {
        return Err(n.input_error(
            i,
            format!("{:?} does not broadcast to {shape:?}", v.shape()),
        ));
    }
    broadcast_to(n, v, shape)
}

/// Normalises `x` over its trailing axes from `a` (popnn's layer norm of `[outer, 1, inner]`
/// with unit scale): the normalised f32-computed tensor (of `x`'s type) and the f32 mean and
/// inverse standard deviation, `[outer]`.
fn normalise_trailing(
    cx: &mut Cx,
    n: &NodeCx,
    x: &Tensor,
    a: usize,
    eps: f32,
) -> Result<(Tensor, popnn::ops::NormStats)> {
    let outer: usize = x.shape()[..a].iter().product();
    let inner: usize = x.shape()[a..].iter().product();
    if outer == 0 || inner == 0 {
        return Err(n.input_error(0, format!("{:?} is empty", x.shape())));
    }
    let flat = x.reshape(&[outer, 1, inner]).map_err(|e| n.lowering(e))?;
    let one = cx.filled(n, x.dtype(), &[1], 1.0)?;
    let zero = cx.filled(n, x.dtype(), &[1], 0.0)?;
    let name = cx.name(n, "norm");
    let (y, stats) = popnn::ops::layer_norm(cx.graph, &flat, &one, &zero, eps, &mut cx.prog, &name)
        .map_err(|e| n.lowering(e))?;
    let y = y.reshape(x.shape()).map_err(|e| n.lowering(e))?;
    Ok((y, stats))
}

/// `LayerNormalization` over the axes from `axis`, with its optional `Mean` and `InvStdDev`
/// outputs (of `stash_type`, the normalised axes kept as 1).
fn layer_norm(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (x, ty) = cx.float_tensor(n, 0)?;
    let a = axis(n, "axis", n.int("axis", -1)?, x.rank())?;
    let eps = n.float("epsilon", 1e-5)?;
    // The statistics are computed in f32; the Mean and InvStdDev outputs are of the stash type.
    let stash = ElemType::from_code(n.int("stash_type", 1)? as i32);
    if !matches!(stash, ElemType::Float | ElemType::Float16) {
        return Err(n.attr_error(
            "stash_type",
            format!("{stash} is not supported (float, float16)"),
        ));
    }
    let (y, stats) = normalise_trailing(cx, n, &x, a, eps)?;
    let y = scale_bias(cx, n, &y, 1, 2, x.dtype())?;
    let mut stat_shape = x.shape().to_vec();
    stat_shape[a..].iter_mut().for_each(|d| *d = 1);
    let mut out = vec![Value::Device { t: y, ty }];
    for s in [stats.mean, stats.inv_std] {
        let t = s.reshape(&stat_shape).map_err(|e| n.lowering(e))?;
        let t = if stash == ElemType::Float16 {
            cx.map(n, &_1.cast(DType::F16), &[&t], "cast")?
        } else {
            t
        };
        out.push(Value::Device { t, ty: stash });
    }
    Ok(out)
}

/// `InstanceNormalization`: per sample and channel over the field, then per-channel scale
/// and bias.
fn instance_norm(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (x, ty) = cx.float_tensor(n, 0)?;
    let eps = n.float("epsilon", 1e-5)?;
    if x.rank() < 3 {
        return Err(n.input_error(0, format!("is {:?}; expected [N, C, *field]", x.shape())));
    }
    let (y, _) = normalise_trailing(cx, n, &x, 2, eps)?;
    let shape = y.shape().to_vec();
    let (s, _) = cx.float_tensor(n, 1)?;
    let (b, _) = cx.float_tensor(n, 2)?;
    let (s, b) = (
        per_channel(n, &s, &shape, 1)?,
        per_channel(n, &b, &shape, 2)?,
    );
    let e = up(_1, y.dtype()) * up(_2, s.dtype()) + up(_3, b.dtype());
    let y = cx.map(n, &down(e, x.dtype()), &[&y, &s, &b], "scale")?;
    Ok(vec![Value::Device { t: y, ty }])
}

/// `GroupNormalization`: per sample and group of channels, then the scale and bias — per
/// channel (opset 21) or per group (opset 18, repeated over the group's channels).
fn group_norm(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (x, ty) = cx.float_tensor(n, 0)?;
    let eps = n.float("epsilon", 1e-5)?;
    n.ignore("stash_type"); // statistics are computed in f32 either way
    let g = n.int("num_groups", 0)?;
    if x.rank() < 2 || g < 1 || x.shape()[1] % g as usize != 0 {
        return Err(n.attr_error(
            "num_groups",
            format!("{g} groups do not divide the channels of {:?}", x.shape()),
        ));
    }
    let (b, c, g) = (x.shape()[0], x.shape()[1], g as usize);
    let rest: usize = x.shape()[2..].iter().product();
    let grouped = x
        .reshape(&[b, g, (c / g) * rest])
        .map_err(|e| n.lowering(e))?;
    let (y, _) = normalise_trailing(cx, n, &grouped, 2, eps)?;
    let y = y.reshape(x.shape()).map_err(|e| n.lowering(e))?;
    let shape = x.shape().to_vec();
    let mut vs = Vec::new();
    for i in [1, 2] {
        let (v, _) = cx.float_tensor(n, i)?;
        let v = if v.num_elements() == g && g != c {
            let r = v.reshape(&[g, 1]).map_err(|e| n.lowering(e))?;
            let r = r.broadcast(c / g, 1).map_err(|e| n.lowering(e))?;
            r.reshape(&[c]).map_err(|e| n.lowering(e))?
        } else {
            v
        };
        vs.push(per_channel(n, &v, &shape, i)?);
    }
    let e = up(_1, y.dtype()) * up(_2, vs[0].dtype()) + up(_3, vs[1].dtype());
    let y = cx.map(n, &down(e, x.dtype()), &[&y, &vs[0], &vs[1]], "scale")?;
    Ok(vec![Value::Device { t: y, ty }])
}

/// `LRN`: `x / (bias + alpha / size · Σ x²)^beta`, the sum over the `size` channels around
/// each (zeros past the ends), as shifted views of the zero-padded squares.
fn lrn(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let alpha = n.float("alpha", 1e-4)? as f64;
    let beta = n.float("beta", 0.75)? as f64;
    let bias = n.float("bias", 1.0)? as f64;
    let size = n.int("size", 0)?;
    if size < 1 {
        return Err(n.attr_error("size", format!("{size}: must be at least 1")));
    }
    let (x, ty) = cx.float_tensor(n, 0)?;
    if x.rank() < 2 {
        return Err(n.input_error(0, format!("is {:?}; expected [N, C, ...]", x.shape())));
    }
    let size = size as usize;
    let (before, after) = ((size - 1) / 2, size - 1 - (size - 1) / 2);
    let sq = cx.map(n, &(up(_1, x.dtype()) * up(_1, x.dtype())), &[&x], "square")?;
    let c = x.shape()[1];
    let mut parts = Vec::new();
    for (k, at) in [(before, 0), (after, 1)] {
        let mut s = sq.shape().to_vec();
        s[1] = k;
        if k > 0 {
            parts.push((cx.filled(n, DType::F32, &s, 0.0)?, at));
        }
    }
    let mut all: Vec<Tensor> = parts
        .iter()
        .filter(|p| p.1 == 0)
        .map(|p| p.0.clone())
        .collect();
    all.push(sq);
    all.extend(parts.iter().filter(|p| p.1 == 1).map(|p| p.0.clone()));
    let padded = Tensor::concat_dim(&all, 1).map_err(|e| n.lowering(e))?;
    let mut sum = padded.slice_dim(1, 0..c).map_err(|e| n.lowering(e))?;
    for j in 1..size {
        let v = padded.slice_dim(1, j..j + c).map_err(|e| n.lowering(e))?;
        sum = cx.map(n, &(_1 + _2), &[&sum, &v], "sum")?;
    }
    let e = up(_1, x.dtype()) / (_2 * (alpha / size as f64) + bias).pow(beta);
    let y = cx.map(n, &down(e, x.dtype()), &[&x, &sum], "lrn")?;
    Ok(vec![Value::Device { t: y, ty }])
}
