//! Element-wise ops (ONNX's unary and binary maths, comparisons, logic, activations, `Where`,
//! `Clip`, the variadic `Sum`/`Mean`/`Max`/`Min`, `Cast`): one fused `popops::map` each, with
//! numpy's broadcasting.

use poplar::{DType, Tensor};
use popops::expr::{select, Expr, _1, _2, _3};

use super::{Cx, NodeCx, Outputs, Value};
use crate::error::Result;
use crate::host::ElemType;

pub(super) fn lower(cx: &mut Cx, n: &NodeCx) -> Option<Outputs> {
    let op = n.node.op.as_str();
    if let Some(folded) = fold_on_host(cx, n, op) {
        return Some(folded);
    }
    if let Some(e) = unary_expr(n, op) {
        return Some(e.and_then(|e| unary(cx, n, &e, false)));
    }
    Some(match op {
        "IsNaN" => unary(cx, n, &_1.is_nan(), true),
        "IsInf" => is_inf(cx, n),
        "Not" => unary(cx, n, &_1.logical_not(), true),
        "BitwiseNot" => unary(cx, n, &_1.bitwise_not(), false),
        "Add" => binary(cx, n, _1 + _2, false),
        "Sub" => binary(cx, n, _1 - _2, false),
        "Mul" => binary(cx, n, _1 * _2, false),
        "Div" => binary(cx, n, _1 / _2, false),
        "Pow" => pow(cx, n),
        "Mod" => modulo(cx, n),
        "PRelu" => binary(cx, n, select(_1 * _2, _1, _1.lt(0.0)), false),
        "Equal" => binary(cx, n, _1.equal(_2), true),
        "Less" => binary(cx, n, _1.lt(_2), true),
        "LessOrEqual" => binary(cx, n, _1.le(_2), true),
        "Greater" => binary(cx, n, _1.gt(_2), true),
        "GreaterOrEqual" => binary(cx, n, _1.ge(_2), true),
        "And" => binary(cx, n, _1.and(_2), true),
        "Or" => binary(cx, n, _1.or(_2), true),
        "Xor" => binary(cx, n, _1 ^ _2, true),
        "BitwiseAnd" => binary(cx, n, _1 & _2, false),
        "BitwiseOr" => binary(cx, n, _1 | _2, false),
        "BitwiseXor" => binary(cx, n, _1 ^ _2, false),
        "BitShift" => bit_shift(cx, n),
        "Sum" => variadic(cx, n, |a, b| a + b, None),
        "Mean" => variadic(cx, n, |a, b| a + b, Some(())),
        "Max" => variadic(cx, n, |a, b| a.max(b), None),
        "Min" => variadic(cx, n, |a, b| a.min(b), None),
        "Where" => where_(cx, n),
        "Clip" => clip(cx, n),
        "QuantizeLinear" => quantize(cx, n),
        "DequantizeLinear" => dequantize(cx, n),
        "Cast" => cast(cx, n),
        "CastLike" => cast_like(cx, n),
        _ => return None,
    })
}

/// The expression of a unary op of one float operand (`_1`), with its attributes read.
fn unary_expr(n: &NodeCx, op: &str) -> Option<Result<Expr>> {
    let x = || _1;
    let e = match op {
        "Abs" => x().abs(),
        "Neg" => -x(),
        "Sqrt" => x().sqrt(),
        "Exp" => x().exp(),
        "Log" => x().log(),
        "Sin" => x().sin(),
        "Cos" => x().cos(),
        "Tan" => x().tan(),
        "Tanh" => x().tanh(),
        "Sigmoid" => x().sigmoid(),
        "Erf" => x().erf(),
        "Floor" => x().floor(),
        "Ceil" => x().ceil(),
        "Reciprocal" => x().inverse(),
        "Sign" => x().sign(),
        "Relu" => x().max(0.0),
        "Round" => round_half_even(x()),
        "Asin" => x().atan2((1.0 - x() * x()).sqrt()),
        "Acos" => (1.0 - x() * x()).sqrt().atan2(x()),
        "Atan" => x().atan2(1.0),
        "Sinh" => (x().expm1() - (-x()).expm1()) * 0.5,
        "Cosh" => (x().exp() + (-x()).exp()) * 0.5,
        "Asinh" => x().sign() * (x().abs() + (x() * x() + 1.0).sqrt()).log(),
        "Acosh" => (x() + (x() * x() - 1.0).sqrt()).log(),
        "Atanh" => (2.0 * x() / (1.0 - x())).log1p() * 0.5,
        "Softplus" => x().exp().log1p(),
        "Softsign" => x() / (x().abs() + 1.0),
        "Mish" => x() * x().exp().log1p().tanh(),
        "LeakyRelu" => {
            return Some(
                n.float("alpha", 0.01)
                    .map(|a| select(x(), x() * a as f64, x().ge(0.0))),
            )
        }
        "ThresholdedRelu" => {
            return Some(
                n.float("alpha", 1.0)
                    .map(|a| select(x(), 0.0, x().gt(a as f64))),
            )
        }
        "Elu" => {
            return Some(
                n.float("alpha", 1.0)
                    .map(|a| select(x(), x().expm1() * a as f64, x().gt(0.0))),
            )
        }
        "Selu" => {
            return Some((|| {
                let a = n.float("alpha", 1.673_263_2)? as f64;
                let g = n.float("gamma", 1.050_701)? as f64;
                Ok(select(x() * g, (x().exp() * a - a) * g, x().gt(0.0)))
            })())
        }
        "Celu" => {
            return Some(n.float("alpha", 1.0).map(|a| {
                let a = a as f64;
                x().max(0.0) + ((x() / a).expm1() * a).min(0.0)
            }))
        }
        "HardSigmoid" => {
            return Some((|| {
                let a = n.float("alpha", 0.2)? as f64;
                let b = n.float("beta", 0.5)? as f64;
                Ok((x() * a + b).min(1.0).max(0.0))
            })())
        }
        "HardSwish" => x() * (x() * (1.0 / 6.0) + 0.5).min(1.0).max(0.0),
        "Shrink" => {
            return Some((|| {
                let b = n.float("bias", 0.0)? as f64;
                let l = n.float("lambd", 0.5)? as f64;
                Ok(select(x() + b, select(x() - b, 0.0, x().gt(l)), x().lt(-l)))
            })())
        }
        "Gelu" => {
            return Some(
                n.string("approximate", "none")
                    .and_then(|a| match a.as_str() {
                        "none" => {
                            Ok(x() * 0.5 * ((x() * std::f64::consts::FRAC_1_SQRT_2).erf() + 1.0))
                        }
                        "tanh" => {
                            let c = (2.0 / std::f64::consts::PI).sqrt();
                            Ok(x() * 0.5 * (((x() + x() * x() * x() * 0.044715) * c).tanh() + 1.0))
                        }
                        other => Err(n.attr_error(
                            "approximate",
                            format!("'{other}' is neither 'none' nor 'tanh'"),
                        )),
                    }),
            )
        }
        _ => return None,
    };
    Some(Ok(e))
}

/// A unary op: the output has the input's type, or `bool` for a predicate.
fn unary(cx: &mut Cx, n: &NodeCx, e: &Expr, predicate: bool) -> Outputs {
    let (x, ty) = cx.tensor(n, 0)?;
    let y = widened_map(cx, n, e, &[x], predicate)?;
    Ok(vec![Value::Device {
        t: y,
        ty: if predicate { ElemType::Bool } else { ty },
    }])
}

/// A binary op on two inputs of one type, broadcast.
fn binary(cx: &mut Cx, n: &NodeCx, e: Expr, predicate: bool) -> Outputs {
    let (a, ty) = cx.tensor(n, 0)?;
    let (b, _) = cx.tensor(n, 1)?;
    let y = widened_map(cx, n, &e, &[a, b], predicate)?;
    Ok(vec![Value::Device {
        t: y,
        ty: if predicate { ElemType::Bool } else { ty },
    }])
}

/// `cx.map`, with `u8` and `u16` operands (on which popops defines only copies, casts and
/// selects) computed in `u32` and the result cast back, keeping its low bits as ONNX's
/// wrapping arithmetic on those types does.
fn widened_map(
    cx: &mut Cx,
    n: &NodeCx,
    e: &Expr,
    inputs: &[Tensor],
    predicate: bool,
) -> Result<Tensor> {
    let narrow = inputs
        .first()
        .map(Tensor::dtype)
        .filter(|d| matches!(d, DType::U8 | DType::U16));
    let Some(narrow) = narrow else {
        let refs: Vec<&Tensor> = inputs.iter().collect();
        return cx.map(n, e, &refs, "map");
    };
    let wide = inputs
        .iter()
        .map(|t| cx.map(n, &_1.cast(DType::U32), &[t], "widen"))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&Tensor> = wide.iter().collect();
    let y = cx.map(n, e, &refs, "map")?;
    if predicate {
        return Ok(y);
    }
    cx.map(n, &_1.cast(narrow), &[&y], "narrow")
}

fn is_inf(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let pos = n.int("detect_positive", 1)? != 0;
    let neg = n.int("detect_negative", 1)? != 0;
    let e = match (pos, neg) {
        (true, true) => _1.is_inf(),
        (true, false) => _1.is_inf().and(_1.gt(0.0)),
        (false, true) => _1.is_inf().and(_1.lt(0.0)),
        (false, false) => _1.is_nan().and(_1.is_finite()),
    };
    unary(cx, n, &e, true)
}

/// `Pow`: the exponent may be of another type; it is cast to the base's.
fn pow(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (a, ty) = cx.tensor(n, 0)?;
    let (b, _) = cx.tensor(n, 1)?;
    let e = if a.dtype() == b.dtype() {
        _1.pow(_2)
    } else {
        _1.pow(_2.cast(a.dtype()))
    };
    let y = cx.map(n, &e, &[&a, &b], "pow")?;
    Ok(vec![Value::Device { t: y, ty }])
}

/// `Mod`: `fmod = 1` takes the dividend's sign (C's `fmod`), `fmod = 0` the divisor's
/// (Python's `%`, integers only).
fn modulo(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let fmod = n.int("fmod", 0)?;
    let (_, ty) = cx.tensor(n, 0)?;
    if fmod == 0 && ty.is_float() {
        return Err(n.attr_error(
            "fmod",
            "0 (the divisor's sign) is defined for integers only",
        ));
    }
    let e = if fmod != 0 {
        _1 % _2
    } else {
        let r = _1 % _2;
        let wrong_sign = r
            .clone()
            .not_equal(0)
            .and((r.clone().lt(0)).not_equal(_2.lt(0)));
        select(r.clone() + _2, r, wrong_sign)
    };
    binary(cx, n, e, false).map(|mut v| {
        if let Some(Value::Device { ty: t, .. }) = v.first_mut() {
            *t = ty;
        }
        v
    })
}

fn bit_shift(cx: &mut Cx, n: &NodeCx) -> Outputs {
    match n.string("direction", "")?.as_str() {
        "LEFT" => binary(cx, n, _1 << _2, false),
        "RIGHT" => binary(cx, n, _1 >> _2, false),
        other => Err(n.attr_error("direction", format!("'{other}' is neither LEFT nor RIGHT"))),
    }
}

/// `Sum`, `Mean`, `Max`, `Min` of one or more inputs, folded left to right (at most eight in
/// one map; more are folded in steps).
fn variadic(cx: &mut Cx, n: &NodeCx, f: fn(Expr, Expr) -> Expr, mean: Option<()>) -> Outputs {
    let count = n.num_inputs();
    if count == 0 {
        return Err(n.input_error(0, "at least one input is required"));
    }
    let (mut acc, ty) = cx.tensor(n, 0)?;
    let mut i = 1;
    while i < count {
        let take = (count - i).min(7);
        let mut inputs = vec![acc.clone()];
        for j in 0..take {
            inputs.push(cx.tensor(n, i + j)?.0);
        }
        let mut e = Expr::Placeholder(1);
        for j in 0..take {
            e = f(e, Expr::Placeholder(j + 2));
        }
        acc = widened_map(cx, n, &e, &inputs, false)?;
        i += take;
    }
    if mean.is_some() {
        acc = cx.map(n, &(_1 / count as f64), &[&acc], "mean")?;
    } else if count == 1 {
        acc = cx.copy(n, &acc, "copy")?;
    }
    Ok(vec![Value::Device { t: acc, ty }])
}

fn where_(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (c, _) = cx.tensor(n, 0)?;
    let (a, ty) = cx.tensor(n, 1)?;
    let (b, _) = cx.tensor(n, 2)?;
    let y = cx.map(n, &select(_2, _3, _1), &[&c, &a, &b], "where")?;
    Ok(vec![Value::Device { t: y, ty }])
}

/// `Clip` with optional `min` and `max` inputs (scalars).
fn clip(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (x, ty) = cx.tensor(n, 0)?;
    let lo = if n.has_input(1) {
        Some(cx.tensor(n, 1)?.0)
    } else {
        None
    };
    let hi = if n.has_input(2) {
        Some(cx.tensor(n, 2)?.0)
    } else {
        None
    };
    let mut inputs = vec![&x];
    let mut e = _1;
    if let Some(lo) = &lo {
        inputs.push(lo);
        e = e.max(Expr::Placeholder(inputs.len()));
    }
    if let Some(hi) = &hi {
        inputs.push(hi);
        e = e.min(Expr::Placeholder(inputs.len()));
    }
    let y = cx.map(n, &e, &inputs, "clip")?;
    Ok(vec![Value::Device { t: y, ty }])
}

fn cast_to(cx: &mut Cx, n: &NodeCx, to: ElemType) -> Outputs {
    if let Value::Host(h) = cx.value(n, 0)? {
        if to.device().is_some() || !to.is_float() {
            return Ok(vec![Value::Host(crate::fold::cast(&h, to))]);
        }
    }
    let dtype: DType = to
        .device()
        .ok_or_else(|| n.type_error("attribute 'to'", to, "no tile holds"))?;
    let (x, _) = cx.tensor(n, 0)?;
    let y = cx.map(n, &_1.cast(dtype), &[&x], "cast")?;
    Ok(vec![Value::Device { t: y, ty: to }])
}

fn cast(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let to = ElemType::from_code(n.int("to", 0)? as i32);
    n.ignore("saturate"); // only for float8 targets, which no tile holds
    cast_to(cx, n, to)
}

fn cast_like(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let to = cx.value(n, 1)?.ty();
    n.ignore("saturate");
    cast_to(cx, n, to)
}

/// The element-wise ops models use on shapes and constants, evaluated on the host when every
/// input is a host value (a `Shape` divided by 2, a `Range`'s bounds, a mask built from
/// constants): integers in `i64` as ONNX computes them, floats in `f64` rounded to their type.
fn fold_on_host(cx: &Cx, n: &NodeCx, op: &str) -> Option<Outputs> {
    type F = fn(&[f64]) -> f64;
    type G = fn(&[i64]) -> i64;
    let (f, g, predicate): (F, G, bool) = match op {
        "Add" => (|a| a[0] + a[1], |a| a[0].wrapping_add(a[1]), false),
        "Sub" => (|a| a[0] - a[1], |a| a[0].wrapping_sub(a[1]), false),
        "Mul" => (|a| a[0] * a[1], |a| a[0].wrapping_mul(a[1]), false),
        "Div" => (
            |a| a[0] / a[1],
            |a| {
                if a[1] == 0 {
                    0
                } else {
                    a[0].wrapping_div(a[1])
                }
            },
            false,
        ),
        "Max" => (
            |a| a.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            |a| *a.iter().max().unwrap_or(&0),
            false,
        ),
        "Min" => (
            |a| a.iter().copied().fold(f64::INFINITY, f64::min),
            |a| *a.iter().min().unwrap_or(&0),
            false,
        ),
        "Neg" => (|a| -a[0], |a| a[0].wrapping_neg(), false),
        "Abs" => (|a| a[0].abs(), |a| a[0].wrapping_abs(), false),
        "Sqrt" => (|a| a[0].sqrt(), |a| a[0], false),
        "Floor" => (|a| a[0].floor(), |a| a[0], false),
        "Ceil" => (|a| a[0].ceil(), |a| a[0], false),
        "Equal" => (
            |a| (a[0] == a[1]) as i64 as f64,
            |a| (a[0] == a[1]) as i64,
            true,
        ),
        "Less" => (
            |a| (a[0] < a[1]) as i64 as f64,
            |a| (a[0] < a[1]) as i64,
            true,
        ),
        "Greater" => (
            |a| (a[0] > a[1]) as i64 as f64,
            |a| (a[0] > a[1]) as i64,
            true,
        ),
        "LessOrEqual" => (
            |a| (a[0] <= a[1]) as i64 as f64,
            |a| (a[0] <= a[1]) as i64,
            true,
        ),
        "GreaterOrEqual" => (
            |a| (a[0] >= a[1]) as i64 as f64,
            |a| (a[0] >= a[1]) as i64,
            true,
        ),
        "And" => (
            |a| (a[0] != 0.0 && a[1] != 0.0) as i64 as f64,
            |a| (a[0] != 0 && a[1] != 0) as i64,
            true,
        ),
        "Or" => (
            |a| (a[0] != 0.0 || a[1] != 0.0) as i64 as f64,
            |a| (a[0] != 0 || a[1] != 0) as i64,
            true,
        ),
        "Not" => (
            |a| (a[0] == 0.0) as i64 as f64,
            |a| (a[0] == 0) as i64,
            true,
        ),
        "Where" => (
            |a| if a[0] != 0.0 { a[1] } else { a[2] },
            |a| if a[0] != 0 { a[1] } else { a[2] },
            false,
        ),
        _ => return None,
    };
    if n.node.attributes.iter().any(|_| true) || n.num_inputs() == 0 {
        return None;
    }
    let mut inputs = Vec::new();
    for i in 0..n.num_inputs() {
        match cx.value(n, i) {
            Ok(Value::Host(h)) => inputs.push(h),
            _ => return None,
        }
    }
    // Where's type is its second input's; a predicate's is bool; the rest their first input's.
    let ty = match (op, predicate) {
        (_, true) => ElemType::Bool,
        ("Where", _) => inputs[1].ty,
        _ => inputs[0].ty,
    };
    if op == "Where" {
        // The condition decides, it is not computed with: fold in the values' own domain.
        let mut ins = inputs.clone();
        ins[0] = crate::fold::cast(&inputs[0], inputs[1].ty);
        inputs = ins;
    }
    let folded = crate::fold::elementwise(&inputs, ty, f, g)
        .ok_or_else(|| n.input_error(1, "shapes do not broadcast"));
    Some(folded.map(|h| vec![Value::Host(h)]))
}

/// ONNX's rounding, half to even: a tie is rounded as twice the rounded half.
fn round_half_even(x: Expr) -> Expr {
    select(
        (x.clone() * 0.5).round() * 2.0,
        x.clone().round(),
        (x.clone() - x.trunc()).abs().equal(0.5),
    )
}

/// A quantization parameter (scale or zero point) shaped to broadcast against `x`: a scalar
/// as it is, a 1-D one along `axis` (per-axis quantization). Blocked quantization is refused.
fn quant_param(cx: &mut Cx, n: &NodeCx, i: usize, x: &Tensor, axis: i64) -> Result<Tensor> {
    let (p, _) = cx.tensor(n, i)?;
    if p.num_elements() == 1 {
        return p.reshape(&[]).map_err(|e| n.lowering(e));
    }
    let a = super::axis(n, "axis", axis, x.rank())?;
    if p.rank() != 1 || p.shape()[0] != x.shape()[a] {
        return Err(n.input_error(
            i,
            format!("shape {:?} is neither a scalar nor one per element of axis {a} (blocked quantization is not supported)", p.shape()),
        ));
    }
    let mut shape = vec![1; x.rank()];
    shape[a] = x.shape()[a];
    p.reshape(&shape).map_err(|e| n.lowering(e))
}

/// `QuantizeLinear` to `uint8` or `uint16`: `saturate(round_half_even(x / scale) + zero_point)`.
fn quantize(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let axis = n.int("axis", 1)?;
    if n.int("block_size", 0)? != 0 {
        return Err(n.attr_error("block_size", "blocked quantization is not supported"));
    }
    n.ignore("saturate"); // only for float8 outputs, which no tile holds
    let zp_ty = if n.has_input(2) {
        cx.value(n, 2)?.ty()
    } else {
        ElemType::Uint8
    };
    let out_ty = match n.opt_int("output_dtype")? {
        Some(c) if c != 0 => ElemType::from_code(c as i32),
        _ => zp_ty,
    };
    let max = match out_ty {
        ElemType::Uint8 => 255.0,
        ElemType::Uint16 => 65535.0,
        other => {
            return Err(n.type_error(
                "the output",
                other,
                "is not a quantized type a tile holds (uint8, uint16)",
            ))
        }
    };
    let (x, _) = cx.tensor(n, 0)?;
    let scale = quant_param(cx, n, 1, &x, axis)?;
    let f = x.dtype();
    let mut inputs = vec![x.clone(), scale];
    let mut q = round_half_even(_1 / _2);
    if n.has_input(2) {
        inputs.push(quant_param(cx, n, 2, &x, axis)?);
        q = q + _3.cast(f);
    }
    let e = q
        .clamp(0.0, max)
        .cast(out_ty.device().expect("uint8 and uint16 are held"));
    let refs: Vec<&Tensor> = inputs.iter().collect();
    let y = cx.map(n, &e, &refs, "quantize")?;
    Ok(vec![Value::Device { t: y, ty: out_ty }])
}

/// `DequantizeLinear`: `(x - zero_point) · scale`, of the scale's type.
fn dequantize(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let axis = n.int("axis", 1)?;
    if n.int("block_size", 0)? != 0 {
        return Err(n.attr_error("block_size", "blocked quantization is not supported"));
    }
    let (x, _) = cx.tensor(n, 0)?;
    let scale_ty = cx.value(n, 1)?.ty();
    let scale = quant_param(cx, n, 1, &x, axis)?;
    let f = scale.dtype();
    let mut inputs = vec![x.clone(), scale];
    let mut e = _1.cast(f);
    if n.has_input(2) {
        inputs.push(quant_param(cx, n, 2, &x, axis)?);
        e = e - _3.cast(f);
    }
    let refs: Vec<&Tensor> = inputs.iter().collect();
    let y = cx.map(n, &(e * _2), &refs, "dequantize")?;
    Ok(vec![Value::Device { t: y, ty: scale_ty }])
}
