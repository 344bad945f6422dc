//! Image ops: `Resize` and the deprecated `Upsample` (nearest, n-linear and cubic
//! interpolation, separable: each resized axis in turn), `DepthToSpace`, `SpaceToDepth` and
//! `CenterCropPad`.
//!
//! A resize along one axis is planned on the host: for each output position, the source
//! positions it reads and their weights (as ONNX's reference computes them). On the chip each
//! tap is a gather along the axis, made of slice views, and the taps are combined with their
//! weights (constants broadcast along the axis) in `popops::map`s. A nearest resize is one
//! gather (views only) and a copy.

use poplar::{DType, Tensor};
use popops::expr::{Expr, _1};

use super::{axis, Cx, NodeCx, Outputs, Value};
use crate::error::Result;
use crate::host::{ElemType, HostTensor};

pub(super) fn lower(cx: &mut Cx, n: &NodeCx) -> Option<Outputs> {
    Some(match n.node.op.as_str() {
        "Resize" => resize(cx, n),
        "Upsample" => upsample(cx, n),
        "DepthToSpace" => depth_to_space(cx, n),
        "SpaceToDepth" => space_to_depth(cx, n),
        "CenterCropPad" => center_crop_pad(cx, n),
        _ => return None,
    })
}

/// How a nearest resize rounds a source coordinate.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Rounding {
    PreferFloor,
    PreferCeil,
    Floor,
    Ceil,
    /// `Upsample` and `Resize`-10: down when upsampling, up when downsampling.
    Simple,
}

/// The interpolation of a resize.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Nearest(Rounding),
    Linear,
    /// Cubic convolution with coefficient `a`.
    Cubic(f64),
}

/// Where an output position is in the input (`coordinate_transformation_mode`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Coord {
    HalfPixel,
    HalfPixelSymmetric,
    PytorchHalfPixel,
    AlignCorners,
    Asymmetric,
    TfCropAndResize,
}

/// Everything a resize needs besides the sizes.
#[derive(Debug, Clone, Copy)]
struct Interp {
    mode: Mode,
    coord: Coord,
    antialias: bool,
    exclude_outside: bool,
    extrapolation: f64,
}

/// The plan of a resize along one axis: for each output position, its taps (input index,
/// weight) and a constant added (the extrapolation value outside a crop's region).
struct AxisPlan {
    taps: Vec<Vec<(usize, f64)>>,
    extra: Vec<f64>,
}

/// The output of a resize: per axis its size, its scale and its region of interest.
struct Sizes {
    out: Vec<usize>,
    scale: Vec<f64>,
    roi: Vec<(f64, f64)>,
}

/// `Resize` (opsets 10 to 19): `X`, then `scales` (opset 10) or `roi`, `scales`, `sizes`.
fn resize(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (x, ty) = cx.tensor(n, 0)?;
    let shape = x.shape().to_vec();
    let (interp, axes, policy) = resize_attrs(n, shape.len(), cx.opset)?;
    let given = resize_given(cx, n)?;
    let roi = if cx.opset >= 11 && interp.coord == Coord::TfCropAndResize {
        host_floats(cx, n, 1)?.map(|(v, _)| v)
    } else {
        None
    };
    let (out, scale) = out_sizes(n, &shape, &axes, given, &policy)?;
    let roi = full_roi(n, roi, &axes, shape.len())?;
    let sizes = Sizes { out, scale, roi };
    let y = resize_axes(cx, n, &x, ty, &interp, &sizes, &axes)?;
    Ok(vec![Value::Device { t: y, ty }])
}

/// `Upsample` (opsets 7 to 9): `Resize` with asymmetric coordinates, its scales an attribute
/// (opset 7) or an input.
fn upsample(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (x, ty) = cx.tensor(n, 0)?;
    let shape = x.shape().to_vec();
    let mode = parse_mode(n, &n.string("mode", "nearest")?, Rounding::Simple, -0.75)?;
    let (scales, sty) = match n.floats("scales")? {
        Some(s) => (s.into_iter().map(f64::from).collect(), ElemType::Float),
        None => host_floats(cx, n, 1)?.ok_or_else(|| n.input_error(1, "scales are required"))?,
    };
    let interp = Interp {
        mode,
        coord: Coord::Asymmetric,
        antialias: false,
        exclude_outside: false,
        extrapolation: 0.0,
    };
    let axes: Vec<usize> = (0..shape.len()).collect();
    let given = Given::Scales(1, scales, sty);
    let (out, scale) = out_sizes(n, &shape, &axes, given, "stretch")?;
    let roi = full_roi(n, None, &axes, shape.len())?;
    let sizes = Sizes { out, scale, roi };
    let y = resize_axes(cx, n, &x, ty, &interp, &sizes, &axes)?;
    Ok(vec![Value::Device { t: y, ty }])
}

/// `Resize`'s scales (input 1 at opset 10, 2 after) or sizes (input 3): exactly one of them
/// given and not empty.
fn resize_given(cx: &Cx, n: &NodeCx) -> Result<Given> {
    let scales_at = if cx.opset < 11 { 1 } else { 2 };
    let scales = host_floats(cx, n, scales_at)?;
    let sizes = if cx.opset < 11 {
        None
    } else {
        cx.opt_ints(n, 3)?.filter(|s| !s.is_empty())
    };
    match (scales, sizes) {
        (Some(_), Some(_)) => {
            Err(n.input_error(3, "scales and sizes are both given (one of them must be)"))
        }
        (Some((v, ty)), None) => Ok(Given::Scales(scales_at, v, ty)),
        (None, Some(v)) => Ok(Given::Sizes(3, v)),
        (None, None) => Err(n.input_error(scales_at, "scales or sizes are required")),
    }
}

/// Input `i` as host floats, when given and not empty.
fn host_floats(cx: &Cx, n: &NodeCx, i: usize) -> Result<Option<(Vec<f64>, ElemType)>> {
    if !n.has_input(i) {
        return Ok(None);
    }
    let h = cx.host(n, i)?;
    Ok(Some((h.to_f64(), h.ty)).filter(|(v, _)| !v.is_empty()))
}

fn parse_mode(n: &NodeCx, mode: &str, rounding: Rounding, a: f64) -> Result<Mode> {
    Ok(match mode {
        "nearest" => Mode::Nearest(rounding),
        "linear" | "bilinear" => Mode::Linear,
        "cubic" => Mode::Cubic(a),
        other => {
            return Err(n.attr_error("mode", format!("'{other}' is not nearest, linear or cubic")))
        }
    })
}

fn parse_rounding(n: &NodeCx) -> Result<Rounding> {
    Ok(
        match n.string("nearest_mode", "round_prefer_floor")?.as_str() {
            "round_prefer_floor" => Rounding::PreferFloor,
            "round_prefer_ceil" => Rounding::PreferCeil,
            "floor" => Rounding::Floor,
            "ceil" => Rounding::Ceil,
            other => {
                return Err(n.attr_error(
                    "nearest_mode",
                    format!("'{other}' is not a rounding ONNX defines"),
                ))
            }
        },
    )
}

fn parse_coord(n: &NodeCx) -> Result<Coord> {
    let mode = n.string("coordinate_transformation_mode", "half_pixel")?;
    Ok(match mode.as_str() {
        "half_pixel" => Coord::HalfPixel,
        "half_pixel_symmetric" => Coord::HalfPixelSymmetric,
        "pytorch_half_pixel" => Coord::PytorchHalfPixel,
        "align_corners" => Coord::AlignCorners,
        "asymmetric" => Coord::Asymmetric,
        "tf_crop_and_resize" => Coord::TfCropAndResize,
        other => {
            return Err(n.attr_error(
                "coordinate_transformation_mode",
                format!("'{other}' is not a mode ONNX defines"),
            ))
        }
    })
}

/// `Resize`'s attributes: the interpolation, the resized axes and the aspect-ratio policy.
fn resize_attrs(n: &NodeCx, rank: usize, opset: i64) -> Result<(Interp, Vec<usize>, String)> {
    let mode_name = n.string("mode", "nearest")?;
    if opset < 11 {
        let mode = parse_mode(n, &mode_name, Rounding::Simple, -0.75)?;
        let interp = Interp {
            mode,
            coord: Coord::Asymmetric,
            antialias: false,
            exclude_outside: false,
            extrapolation: 0.0,
        };
        return Ok((interp, (0..rank).collect(), "stretch".into()));
    }
    let rounding = parse_rounding(n)?;
    let a = n.float("cubic_coeff_a", -0.75)? as f64;
    let interp = Interp {
        mode: parse_mode(n, &mode_name, rounding, a)?,
        coord: parse_coord(n)?,
        antialias: n.int("antialias", 0)? != 0,
        exclude_outside: n.int("exclude_outside", 0)? != 0,
        extrapolation: n.float("extrapolation_value", 0.0)? as f64,
    };
    if interp.antialias && matches!(interp.mode, Mode::Nearest(_)) {
        return Err(n.attr_error("antialias", "not defined for nearest"));
    }
    let axes = resize_axes_attr(n, rank)?;
    let policy = n.string("keep_aspect_ratio_policy", "stretch")?;
    if !matches!(policy.as_str(), "stretch" | "not_larger" | "not_smaller") {
        return Err(n.attr_error(
            "keep_aspect_ratio_policy",
            format!("'{policy}' is not stretch, not_larger or not_smaller"),
        ));
    }
    Ok((interp, axes, policy))
}

/// Where a resize's scales or sizes come from: input `at`, the values and their type.
enum Given {
    Scales(usize, Vec<f64>, ElemType),
    Sizes(usize, Vec<i64>),
}

/// `Resize`'s `axes` (all by default), each once.
fn resize_axes_attr(n: &NodeCx, rank: usize) -> Result<Vec<usize>> {
    let axes = match n.ints("axes")? {
        Some(a) => a
            .iter()
            .map(|&v| axis(n, "axes", v, rank))
            .collect::<Result<Vec<_>>>()?,
        None => (0..rank).collect(),
    };
    if (1..axes.len()).any(|i| axes[..i].contains(&axes[i])) {
        return Err(n.attr_error("axes", format!("{axes:?} repeats an axis")));
    }
    Ok(axes)
}

/// The output size and scale of every axis, from the scales or sizes (one per resized axis).
fn out_sizes(
    n: &NodeCx,
    shape: &[usize],
    axes: &[usize],
    given: Given,
    policy: &str,
) -> Result<(Vec<usize>, Vec<f64>)> {
    let (out, scale) = match given {
        Given::Sizes(at, sizes) => from_sizes(n, at, shape, axes, &sizes, policy)?,
        Given::Scales(at, scales, ty) => from_scales(n, at, shape, axes, &scales, ty)?,
    };
    check_size(n, &out)?;
    Ok((out, scale))
}

/// Output sizes given, and the aspect-ratio policy applied to them.
fn from_sizes(
    n: &NodeCx,
    at: usize,
    shape: &[usize],
    axes: &[usize],
    sizes: &[i64],
    policy: &str,
) -> Result<(Vec<usize>, Vec<f64>)> {
    if sizes.len() != axes.len() || sizes.iter().any(|&s| s < 0) {
        return Err(n.input_error(at, format!("sizes {sizes:?} for {} axes", axes.len())));
    }
    let mut out = shape.to_vec();
    let mut scale = vec![1.0; shape.len()];
    for (&a, &s) in axes.iter().zip(sizes) {
        out[a] = s as usize;
        scale[a] = s as f64 / shape[a] as f64;
    }
    if policy != "stretch" {
        let pick = axes.iter().map(|&a| scale[a]);
        let s = if policy == "not_larger" {
            pick.fold(f64::INFINITY, f64::min)
        } else {
            pick.fold(f64::NEG_INFINITY, f64::max)
        };
        for &a in axes {
            scale[a] = s;
            out[a] = (s * shape[a] as f64 + 0.5) as usize;
        }
    }
    Ok((out, scale))
}

/// Scales given: each output size is the floor of the scaled input size.
fn from_scales(
    n: &NodeCx,
    at: usize,
    shape: &[usize],
    axes: &[usize],
    scales: &[f64],
    ty: ElemType,
) -> Result<(Vec<usize>, Vec<f64>)> {
    if scales.len() != axes.len() || scales.iter().any(|&s| s.is_nan() || s <= 0.0) {
        return Err(n.input_error(at, format!("scales {scales:?} for {} axes", axes.len())));
    }
    // Scales held in f16 (`ImportOptions::fp16`) lost their last bits, which could drop an
    // output position: their products are rounded up within f16's precision first.
    let slack = if ty == ElemType::Float16 {
        1.0 + 1.0 / 1024.0
    } else {
        1.0
    };
    let mut out = shape.to_vec();
    let mut scale = vec![1.0; shape.len()];
    for (&a, &s) in axes.iter().zip(scales) {
        scale[a] = s;
        out[a] = (s * shape[a] as f64 * slack) as usize;
    }
    Ok((out, scale))
}

/// The largest output a resize plans (the chip's tensors are indexed in 32 bits).
const MAX_ELEMENTS: usize = 1 << 31;

fn check_size(n: &NodeCx, out: &[usize]) -> Result<()> {
    let total = out
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&t| t <= MAX_ELEMENTS);
    match total {
        Some(_) => Ok(()),
        None => Err(n.input_error(0, format!("the output {out:?} is too large"))),
    }
}

/// The region of interest of every axis (start, end), `[0, 1]` where not given.
fn full_roi(
    n: &NodeCx,
    roi: Option<Vec<f64>>,
    axes: &[usize],
    rank: usize,
) -> Result<Vec<(f64, f64)>> {
    let mut full = vec![(0.0, 1.0); rank];
    if let Some(roi) = roi {
        let k = axes.len();
        if roi.len() != 2 * k {
            return Err(n.input_error(1, format!("roi of {} values for {k} axes", roi.len())));
        }
        for (i, &a) in axes.iter().enumerate() {
            full[a] = (roi[i], roi[k + i]);
        }
    }
    Ok(full)
}

/// Resizes `x` along each of `axes` (the last first, as ONNX's reference nests them). An
/// integer image that is interpolated (not only gathered) is computed in `f32` and cast back
/// (truncated, as the reference's `astype`).
fn resize_axes(
    cx: &mut Cx,
    n: &NodeCx,
    x: &Tensor,
    ty: ElemType,
    interp: &Interp,
    sizes: &Sizes,
    axes: &[usize],
) -> Result<Tensor> {
    let mut order = axes.to_vec();
    order.sort_unstable();
    let Sizes { out, scale, roi } = sizes;
    let mut plans = Vec::with_capacity(order.len());
    for &a in order.iter().rev() {
        let n_in = x.shape()[a];
        if n_in == 0 && out[a] > 0 {
            return Err(n.input_error(0, format!("axis {a} is empty and cannot be resized")));
        }
        plans.push((a, plan_axis(interp, n_in, out[a], scale[a], roi[a])));
    }
    let in_float = !ty.is_float() && plans.iter().any(|(_, p)| !is_gather(p));
    let (mut y, work) = if in_float {
        let f = cx.map(n, &_1.cast(DType::F32), &[x], "to_float")?;
        (f, ElemType::Float)
    } else {
        (x.clone(), ty)
    };
    let mut fresh = false;
    for (a, plan) in &plans {
        if let Some(t) = apply_axis(cx, n, &y, work, *a, plan)? {
            fresh = !is_gather(plan);
            y = t;
        }
    }
    if in_float {
        cx.map(n, &_1.cast(x.dtype()), &[&y], "from_float")
    } else if fresh {
        Ok(y)
    } else {
        cx.copy(n, &y, "resize")
    }
}

/// Whether every output position reads one input position with weight 1.
fn is_gather(plan: &AxisPlan) -> bool {
    plan.extra.iter().all(|&e| e == 0.0) && plan.taps.iter().all(|t| t.len() == 1 && t[0].1 == 1.0)
}

/// The plan of one axis: for each output position, ONNX's reference's taps and weights.
fn plan_axis(interp: &Interp, n_in: usize, n_out: usize, scale: f64, roi: (f64, f64)) -> AxisPlan {
    let mut taps = Vec::with_capacity(n_out);
    let mut extra = Vec::with_capacity(n_out);
    for j in 0..n_out {
        let x = source(interp.coord, j as f64, scale, n_in, n_out, roi);
        let outside = interp.coord == Coord::TfCropAndResize && (x < 0.0 || x > n_in as f64 - 1.0);
        if outside {
            taps.push(Vec::new());
            extra.push(interp.extrapolation);
        } else {
            taps.push(position_taps(interp, x, scale, n_in));
            extra.push(0.0);
        }
    }
    AxisPlan { taps, extra }
}

/// The source coordinate of output position `x` (`coordinate_transformation_mode`).
fn source(coord: Coord, x: f64, scale: f64, n_in: usize, n_out: usize, roi: (f64, f64)) -> f64 {
    let len_in = n_in as f64;
    let width = scale * len_in;
    match coord {
        Coord::AlignCorners if width == 1.0 => 0.0,
        Coord::AlignCorners => x * (len_in - 1.0) / (width - 1.0),
        Coord::Asymmetric => x / scale,
        Coord::TfCropAndResize => {
            let span = (roi.1 - roi.0) * (len_in - 1.0);
            let at = if width == 1.0 {
                span / 2.0
            } else {
                x * span / (width - 1.0)
            };
            at + roi.0 * (len_in - 1.0)
        }
        Coord::PytorchHalfPixel if width == 1.0 => -0.5,
        Coord::PytorchHalfPixel | Coord::HalfPixel => (x + 0.5) / scale - 0.5,
        Coord::HalfPixelSymmetric => {
            let adjustment = n_out as f64 / width;
            let offset = len_in / 2.0 * (1.0 - adjustment);
            offset + (x + 0.5) / scale - 0.5
        }
    }
}

/// The taps of source coordinate `x`: the coefficients of its mode, on the window of input
/// positions nearest `x` (the edge repeated beyond the input), equal positions merged and
/// zero weights left out.
fn position_taps(interp: &Interp, x: f64, scale: f64, n_in: usize) -> Vec<(usize, f64)> {
    let (floor, ratio) = if x.fract() == 0.0 {
        (x as i64 - 1, 1.0)
    } else {
        (x.floor() as i64, x - x.floor())
    };
    let mut coeffs = coefficients(interp, ratio, scale);
    let half = (coeffs.len() / 2) as i64;
    let start = (floor + 1).clamp(0, n_in as i64) - half;
    let last = n_in as i64 - 1;
    if interp.exclude_outside {
        for (k, c) in coeffs.iter_mut().enumerate() {
            let i = start + k as i64;
            if i < 0 || i > last {
                *c = 0.0;
            }
        }
        let sum: f64 = coeffs.iter().sum();
        if sum != 0.0 {
            coeffs.iter_mut().for_each(|c| *c /= sum);
        }
    }
    let mut taps: Vec<(usize, f64)> = Vec::with_capacity(coeffs.len());
    for (k, &c) in coeffs.iter().enumerate() {
        if c == 0.0 {
            continue;
        }
        let i = (start + k as i64).clamp(0, last.max(0)) as usize;
        match taps.iter_mut().find(|t| t.0 == i) {
            Some(t) => t.1 += c,
            None => taps.push((i, c)),
        }
    }
    taps
}

/// The weights of the window at `ratio` past the floor of the source coordinate.
fn coefficients(interp: &Interp, ratio: f64, scale: f64) -> Vec<f64> {
    let s = scale.min(1.0);
    match (interp.mode, interp.antialias) {
        (Mode::Nearest(r), _) => nearest(r, ratio, scale),
        (Mode::Linear, false) => vec![1.0 - ratio, ratio],
        (Mode::Linear, true) => {
            let start = (-1.0 / s).floor() as i64 + 1;
            let c = (start..2 - start)
                .map(|i| (1.0 - ((i as f64 - ratio) * s).abs()).clamp(0.0, 1.0))
                .collect();
            normalised(c)
        }
        (Mode::Cubic(a), false) => {
            let r = ratio;
            let q = 1.0 - ratio;
            vec![
                ((a * (r + 1.0) - 5.0 * a) * (r + 1.0) + 8.0 * a) * (r + 1.0) - 4.0 * a,
                ((a + 2.0) * r - (a + 3.0)) * r * r + 1.0,
                ((a + 2.0) * q - (a + 3.0)) * q * q + 1.0,
                ((a * (q + 1.0) - 5.0 * a) * (q + 1.0) + 8.0 * a) * (q + 1.0) - 4.0 * a,
            ]
        }
        (Mode::Cubic(a), true) => {
            let start = (-2.0 / s).floor() as i64 + 1;
            let c = (start..2 - start)
                .map(|i| cubic_kernel(a, s * (i as f64 - ratio)))
                .collect();
            normalised(c)
        }
    }
}

/// Keys' cubic convolution kernel with coefficient `a`.
fn cubic_kernel(a: f64, x: f64) -> f64 {
    let x = x.abs();
    let (x2, x3) = (x * x, x * x * x);
    if x <= 1.0 {
        (a + 2.0) * x3 - (a + 3.0) * x2 + 1.0
    } else if x < 2.0 {
        a * x3 - 5.0 * a * x2 + 8.0 * a * x - 4.0 * a
    } else {
        0.0
    }
}

fn normalised(c: Vec<f64>) -> Vec<f64> {
    let sum: f64 = c.iter().sum();
    if sum == 0.0 {
        return c;
    }
    c.into_iter().map(|v| v / sum).collect()
}

/// The nearest-mode weights of the floor and the ceiling.
fn nearest(r: Rounding, ratio: f64, scale: f64) -> Vec<f64> {
    let up = if ratio == 1.0 {
        true
    } else {
        match r {
            Rounding::PreferFloor => ratio > 0.5,
            Rounding::PreferCeil => ratio >= 0.5,
            Rounding::Floor => false,
            Rounding::Ceil => true,
            Rounding::Simple => scale < 1.0,
        }
    };
    if up {
        vec![0.0, 1.0]
    } else {
        vec![1.0, 0.0]
    }
}

/// The resize of `x` along `axis` by `plan`: `None` when it is the identity, a gather (a
/// view) when each position reads one input position, otherwise the weighted sum of the taps.
fn apply_axis(
    cx: &mut Cx,
    n: &NodeCx,
    x: &Tensor,
    ty: ElemType,
    axis: usize,
    plan: &AxisPlan,
) -> Result<Option<Tensor>> {
    let n_in = x.shape()[axis];
    if is_gather(plan) {
        let idx: Vec<usize> = plan.taps.iter().map(|t| t[0].0).collect();
        if idx.len() == n_in && idx.iter().enumerate().all(|(i, &j)| i == j) {
            return Ok(None);
        }
        return gather_view(n, x, axis, &idx).map(Some);
    }
    if !ty.is_float() {
        return Err(n.type_error("input 0", ty, "is interpolated in floating point only"));
    }
    let k = plan.taps.iter().map(Vec::len).max().unwrap_or(0);
    let trailing = x.rank() - axis - 1;
    let mut terms = Vec::with_capacity(k);
    for tap in 0..k {
        let pick = |t: &Vec<(usize, f64)>| t.get(tap).copied().unwrap_or((0, 0.0));
        let idx: Vec<usize> = plan.taps.iter().map(|t| pick(t).0).collect();
        let w: Vec<f64> = plan.taps.iter().map(|t| pick(t).1).collect();
        let g = gather_view(n, x, axis, &idx)?;
        let w = axis_constant(cx, n, ty, w, trailing, "weight")?;
        terms.push((g, w));
    }
    let extra = if plan.extra.iter().any(|&e| e != 0.0) {
        Some(axis_constant(
            cx,
            n,
            ty,
            plan.extra.clone(),
            trailing,
            "extrapolation",
        )?)
    } else {
        None
    };
    weighted_sum(cx, n, &terms, extra).map(Some)
}

/// A constant of one value per position of an axis, shaped to broadcast along the
/// `trailing` axes after it.
fn axis_constant(
    cx: &mut Cx,
    n: &NodeCx,
    ty: ElemType,
    v: Vec<f64>,
    trailing: usize,
    what: &str,
) -> Result<Tensor> {
    let mut shape = vec![v.len()];
    shape.extend(std::iter::repeat_n(1, trailing));
    let h = HostTensor::float(ty, &shape, v);
    let name = cx.name(n, what);
    cx.constant(n, &h, &name)
}

/// `Σ g·w (+ extra)` over the terms, three terms to a map.
fn weighted_sum(
    cx: &mut Cx,
    n: &NodeCx,
    terms: &[(Tensor, Tensor)],
    extra: Option<Tensor>,
) -> Result<Tensor> {
    let mut acc = extra;
    for chunk in terms.chunks(3) {
        let mut inputs: Vec<&Tensor> = Vec::with_capacity(7);
        let mut e: Option<Expr> = None;
        if let Some(a) = &acc {
            inputs.push(a);
            e = Some(_1);
        }
        for (g, w) in chunk {
            inputs.push(g);
            inputs.push(w);
            let p = Expr::Placeholder(inputs.len() - 1) * Expr::Placeholder(inputs.len());
            e = Some(match e {
                Some(e) => e + p,
                None => p,
            });
        }
        let Some(e) = e else { break };
        let y = cx.map(n, &e, &inputs, "interpolate")?;
        acc = Some(y);
    }
    acc.ok_or_else(|| n.input_error(0, "nothing to interpolate"))
}

/// The positions `idx` of `x` along `axis`, as a view: runs of consecutive positions are
/// one slice, repeats of one position a broadcast.
fn gather_view(n: &NodeCx, x: &Tensor, axis: usize, idx: &[usize]) -> Result<Tensor> {
    let mut parts = Vec::new();
    let mut j = 0;
    while j < idx.len() {
        let start = idx[j];
        let mut end = j + 1;
        if idx.get(end) == Some(&start) {
            while idx.get(end) == Some(&start) {
                end += 1;
            }
            let s = x.slice_dim(axis, start..start + 1);
            let s = s.and_then(|s| s.broadcast(end - j, axis));
            parts.push(s.map_err(|e| n.lowering(e))?);
        } else {
            while idx.get(end) == Some(&(start + end - j)) {
                end += 1;
            }
            let s = x.slice_dim(axis, start..start + end - j);
            parts.push(s.map_err(|e| n.lowering(e))?);
        }
        j = end;
    }
    match parts.len() {
        0 => x.slice_dim(axis, 0..0),
        1 => Ok(parts.remove(0)),
        _ => Tensor::concat_dim(&parts, axis),
    }
    .map_err(|e| n.lowering(e))
}

/// The `blocksize` attribute and the 4-D shape of input 0.
fn block_input(cx: &mut Cx, n: &NodeCx) -> Result<(Tensor, ElemType, usize, [usize; 4])> {
    let (x, ty) = cx.tensor(n, 0)?;
    let b = n.int("blocksize", 0)?;
    if b <= 0 {
        return Err(n.attr_error("blocksize", format!("{b} is not positive")));
    }
    let &[nb, c, h, w] = x.shape() else {
        return Err(n.input_error(0, format!("shape {:?} is not 4-D", x.shape())));
    };
    Ok((x, ty, b as usize, [nb, c, h, w]))
}

/// `DepthToSpace`: blocks of channels moved into space (`DCR`: depth, column, row order of
/// the channels; `CRD`: column, row, depth), as a reshaped and transposed view, copied.
fn depth_to_space(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (x, ty, b, [nb, c, h, w]) = block_input(cx, n)?;
    let mode = n.string("mode", "DCR")?;
    if c % (b * b) != 0 {
        return Err(n.input_error(0, format!("{c} channels are not a multiple of {}", b * b)));
    }
    let d = c / (b * b);
    let (tmp, perm) = match mode.as_str() {
        "DCR" => ([nb, b, b, d, h, w], [0, 3, 4, 1, 5, 2]),
        "CRD" => ([nb, d, b, b, h, w], [0, 1, 4, 2, 5, 3]),
        other => return Err(n.attr_error("mode", format!("'{other}' is neither DCR nor CRD"))),
    };
    let v = x
        .reshape(&tmp)
        .and_then(|t| t.dim_shuffle(&perm))
        .and_then(|t| t.reshape(&[nb, d, h * b, w * b]))
        .map_err(|e| n.lowering(e))?;
    let y = cx.copy(n, &v, "depth_to_space")?;
    Ok(vec![Value::Device { t: y, ty }])
}

/// `SpaceToDepth`: blocks of space moved into the channels, as a reshaped and transposed
/// view, copied.
fn space_to_depth(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (x, ty, b, [nb, c, h, w]) = block_input(cx, n)?;
    if h % b != 0 || w % b != 0 {
        return Err(n.input_error(0, format!("{h}x{w} is not a multiple of blocksize {b}")));
    }
    let v = x
        .reshape(&[nb, c, h / b, b, w / b, b])
        .and_then(|t| t.dim_shuffle(&[0, 3, 5, 1, 2, 4]))
        .and_then(|t| t.reshape(&[nb, c * b * b, h / b, w / b]))
        .map_err(|e| n.lowering(e))?;
    let y = cx.copy(n, &v, "space_to_depth")?;
    Ok(vec![Value::Device { t: y, ty }])
}

/// `CenterCropPad`: each of `axes` cropped or padded with zeros to its size in `shape`,
/// centred (an odd difference puts the extra element at the end).
fn center_crop_pad(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (x, ty) = cx.tensor(n, 0)?;
    let rank = x.rank();
    let target = cx.host(n, 1)?.to_i64();
    let axes: Vec<usize> = match n.ints("axes")? {
        Some(a) => a
            .iter()
            .map(|&v| axis(n, "axes", v, rank))
            .collect::<Result<_>>()?,
        None => (0..rank).collect(),
    };
    if target.len() != axes.len() || target.iter().any(|&s| s < 0) {
        return Err(n.input_error(1, format!("shape {target:?} for {} axes", axes.len())));
    }
    let mut y = x;
    for (&a, &size) in axes.iter().zip(&target) {
        y = crop_or_pad(cx, n, &y, ty, a, size as usize)?;
    }
    let out = cx.copy(n, &y, "center_crop_pad")?;
    Ok(vec![Value::Device { t: out, ty }])
}

/// `x` cropped or padded with zeros along `axis` to `size`, centred.
fn crop_or_pad(
    cx: &mut Cx,
    n: &NodeCx,
    x: &Tensor,
    ty: ElemType,
    axis: usize,
    size: usize,
) -> Result<Tensor> {
    let dim = x.shape()[axis];
    if size <= dim {
        let lo = (dim - size) / 2;
        return x.slice_dim(axis, lo..lo + size).map_err(|e| n.lowering(e));
    }
    let lo = (size - dim) / 2;
    let hi = size - dim - lo;
    let mut parts = Vec::with_capacity(3);
    for (len, what) in [(lo, "pad_before"), (0, ""), (hi, "pad_after")] {
        if what.is_empty() {
            parts.push(x.clone());
            continue;
        }
        if len == 0 {
            continue;
        }
        let mut shape = x.shape().to_vec();
        shape[axis] = len;
        let count = shape.iter().product();
        let h = if ty.is_float() {
            HostTensor::float(ty, &shape, vec![0.0; count])
        } else {
            HostTensor::int(ty, &shape, vec![0; count])
        };
        let name = cx.name(n, what);
        parts.push(cx.constant(n, &h, &name)?);
    }
    Tensor::concat_dim(&parts, axis).map_err(|e| n.lowering(e))
}
