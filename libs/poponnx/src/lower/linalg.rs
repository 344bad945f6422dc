//! Matrix products: `MatMul` (numpy's rules: 1-D operands promoted, batch dimensions
//! broadcast), `Gemm` and the matmul-like `Einsum` equations, each one planned `poplin`
//! multiply of `[groups, m, k] · [groups, k, n]` (f32, or f16 operands with f32 partials; an
//! f16 model's result is cast back to f16).

use poplar::{DType, Tensor};
use popops::expr::{_1, _2};

use super::shape::{broadcast_shapes, broadcast_to};
use super::{Cx, NodeCx, Outputs, Value};
use crate::error::Result;
use crate::host::{ElemType, HostTensor};

pub(super) fn lower(cx: &mut Cx, n: &NodeCx) -> Option<Outputs> {
    Some(match n.node.op.as_str() {
        "MatMul" => matmul(cx, n),
        "Gemm" => gemm(cx, n),
        "DFT" => dft(cx, n),
        "Einsum" => einsum(cx, n),
        _ => return None,
    })
}

/// Gemm's operand `i`, a matrix, transposed when `transpose` (on the host when it is a host
/// value).
fn gemm_operand(cx: &mut Cx, n: &NodeCx, i: usize, transpose: bool) -> Result<(Tensor, ElemType)> {
    let v = cx.value(n, i)?;
    if v.shape().len() != 2 {
        return Err(n.input_error(i, format!("is {:?}; Gemm takes matrices", v.shape())));
    }
    match v {
        Value::Host(h) if transpose && matches!(h.ty, ElemType::Float | ElemType::Float16) => {
            let ht = crate::fold::transpose(&h, &[1, 0]);
            let name = cx.name(n, "transposed");
            Ok((cx.constant(n, &ht, &name)?, h.ty))
        }
        _ => {
            let (t, ty) = cx.float_tensor(n, i)?;
            let t = if transpose {
                t.transpose().map_err(|e| n.lowering(e))?
            } else {
                t
            };
            Ok((t, ty))
        }
    }
}

/// `a[g, m, k] · b[g, k, n]` as one planned multiply (any views): the f32 `[g, m, n]`
/// product, its program pushed.
pub(super) fn product(cx: &mut Cx, n: &NodeCx, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (sa, sb) = (a.shape(), b.shape());
    let params = poplin::MatMulParams {
        groups: sa[0],
        m: sa[1],
        k: sa[2],
        n: sb[2],
    };
    let opts = poplin::MatMulOptions {
        input_type: a.dtype(),
        ..Default::default()
    };
    let b = if b.dtype() == a.dtype() {
        b.clone()
    } else {
        cx.map(n, &_1.cast(a.dtype()), &[b], "cast")?
    };
    let plan = poplin::plan(cx.graph.target(), params, &opts).map_err(|e| n.lowering(e))?;
    let name = cx.name(n, "matmul");
    let (c, prog) = poplin::matmul(cx.graph, a, &b, &plan, &name).map_err(|e| n.lowering(e))?;
    cx.prog.push(prog);
    Ok(c)
}

/// An f32 result as a value of type `ty` (cast back to f16 for an f16 model).
fn result(cx: &mut Cx, n: &NodeCx, t: Tensor, ty: ElemType) -> Result<Value> {
    let t = if ty == ElemType::Float16 && t.dtype() != DType::F16 {
        cx.map(n, &_1.cast(DType::F16), &[&t], "cast")?
    } else {
        t
    };
    Ok(Value::Device { t, ty })
}

/// Zeros of `shape` and type `ty` (a product with an empty dimension).
fn zeros(cx: &mut Cx, n: &NodeCx, ty: ElemType, shape: &[usize]) -> Result<Value> {
    cx.fill(n, &HostTensor::float(ty, &[1], vec![0.0]), shape)
}

/// One operand: its letters the output drops summed (a product with ones), the rest
/// transposed into the output's order.
fn einsum1(cx: &mut Cx, n: &NodeCx, eq: &Equation, t: &Tensor, ty: ElemType) -> Result<Value> {
    let (s, so) = (&eq.inputs[0], &eq.output);
    let keep: Vec<char> = so.chars().collect();
    let summed: Vec<char> = s.chars().filter(|&c| !so.contains(c)).collect();
    let size = |c: char| s.find(c).map_or(1, |i| t.shape()[i]);
    let m: usize = keep.iter().map(|&c| size(c)).product();
    let k: usize = summed.iter().map(|&c| size(c)).product();
    let a = arrange(n, t, s, &[&vec![], &keep, &vec![]], &summed)?;
    let a = sum_out(cx, n, a, [1, m, 1], k)?;
    let shape: Vec<usize> = keep.iter().map(|&c| size(c)).collect();
    let a = a.reshape(&shape).map_err(|e| n.lowering(e))?;
    let a = if summed.is_empty() {
        cx.copy(n, &a, "einsum")?
    } else {
        a
    };
    Ok(Value::Device { t: a, ty })
}

/// numpy's `matmul` shapes of `a` and `b` (ranks ≥ 1): the batch (broadcast), `m`, `k`, `n`
/// and the result's shape (without the dimension of a promoted 1-D operand).
fn matmul_shapes(n: &NodeCx, a: &[usize], b: &[usize]) -> Result<MatMulShapes> {
    if a.is_empty() || b.is_empty() {
        return Err(n.input_error(0, "MatMul takes no scalars"));
    }
    let a2 = if a.len() == 1 {
        [&[1], a].concat()
    } else {
        a.to_vec()
    };
    let b2 = if b.len() == 1 {
        [b, &[1]].concat()
    } else {
        b.to_vec()
    };
    let (ra, rb) = (a2.len(), b2.len());
    let (m, k, kb, nn) = (a2[ra - 2], a2[ra - 1], b2[rb - 2], b2[rb - 1]);
    if k != kb {
        return Err(n.input_error(1, format!("shapes {a:?} and {b:?} do not multiply")));
    }
    let batch = broadcast_shapes(&a2[..ra - 2], &b2[..rb - 2]).ok_or_else(|| {
        n.input_error(
            1,
            format!("batch dimensions of {a:?} and {b:?} do not broadcast"),
        )
    })?;
    let mut out = batch.clone();
    if a.len() > 1 {
        out.push(m);
    }
    if b.len() > 1 {
        out.push(nn);
    }
    Ok(MatMulShapes {
        batch,
        a: a2,
        b: b2,
        m,
        k,
        n: nn,
        out,
    })
}

/// What [`matmul_shapes`] gives.
struct MatMulShapes {
    batch: Vec<usize>,
    /// The operands' shapes, 1-D ones promoted.
    a: Vec<usize>,
    b: Vec<usize>,
    m: usize,
    k: usize,
    n: usize,
    out: Vec<usize>,
}

/// numpy's `matmul` of device tensors: `[.., m, k] · [.., k, n]`, 1-D operands promoted (and
/// their dimension removed from the result), the batch dimensions broadcast; of type `ty`.
pub(super) fn batched_matmul(
    cx: &mut Cx,
    n: &NodeCx,
    a: &Tensor,
    b: &Tensor,
    ty: ElemType,
) -> Result<Value> {
    let s = matmul_shapes(n, a.shape(), b.shape())?;
    let g: usize = s.batch.iter().product();
    if g == 0 || s.m == 0 || s.n == 0 || s.k == 0 {
        return zeros(cx, n, ty, &s.out);
    }
    let view = |t: &Tensor, promoted: &[usize], rows: usize, cols: usize| -> Result<Tensor> {
        let t = t.reshape(promoted).map_err(|e| n.lowering(e))?;
        let full = [s.batch.clone(), vec![rows, cols]].concat();
        broadcast_to(n, &t, &full)?
            .reshape(&[g, rows, cols])
            .map_err(|e| n.lowering(e))
    };
    let a3 = view(a, &s.a, s.m, s.k)?;
    let b3 = view(b, &s.b, s.k, s.n)?;
    let c = product(cx, n, &a3, &b3)?;
    let c = c.reshape(&s.out).map_err(|e| n.lowering(e))?;
    result(cx, n, c, ty)
}

fn matmul(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (a, ty) = cx.float_tensor(n, 0)?;
    let (b, _) = cx.float_tensor(n, 1)?;
    Ok(vec![batched_matmul(cx, n, &a, &b, ty)?])
}

/// `Gemm`: `alpha · A' · B' + beta · C`, `A'`/`B'` transposed as `transA`/`transB` say, `C`
/// (optional) broadcast to `[M, N]`.
///
/// A transposed operand known on the host (a weight, usually `B` with `transB`) is transposed
/// there, so that the matmul reads a contiguous constant rather than a transposed view (whose
/// every element is a region of its own).
fn gemm(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let alpha = n.float("alpha", 1.0)? as f64;
    let beta = n.float("beta", 1.0)? as f64;
    let (ta, tb) = (n.int("transA", 0)? != 0, n.int("transB", 0)? != 0);
    let (a, ty) = gemm_operand(cx, n, 0, ta)?;
    let (b, _) = gemm_operand(cx, n, 1, tb)?;
    let ab = batched_matmul(cx, n, &a, &b, ElemType::Float)?;
    let out_shape = ab.shape();
    let ab = match ab {
        Value::Device { t, .. } => t,
        Value::Host(_) => cx.filled(n, DType::F32, &out_shape, 0.0)?,
    };
    let c = match cx.opt_value(n, 2)? {
        Some(_) => {
            let (c, _) = cx.float_tensor(n, 2)?;
            if broadcast_shapes(c.shape(), &out_shape).as_deref() != Some(&out_shape[..]) {
                return Err(n.input_error(
                    2,
                    format!("{:?} does not broadcast to {out_shape:?}", c.shape()),
                ));
            }
            Some(broadcast_to(n, &c, &out_shape)?)
        }
        None => None,
    };
    let y = match c {
        Some(c) if ab.num_elements() > 0 => {
            let e = _1 * alpha + _2.cast(DType::F32) * beta;
            cx.map(n, &e, &[&ab, &c], "gemm")?
        }
        _ if alpha != 1.0 && ab.num_elements() > 0 => cx.map(n, &(_1 * alpha), &[&ab], "gemm")?,
        _ => ab,
    };
    Ok(vec![result(cx, n, y, ty)?])
}

/// `Einsum` of the matmul-like equations: two operands whose letters are batch (in both and
/// the output), kept (in one operand and the output) or contracted (in both, not in the
/// output) or summed (in one operand only) — one batched multiply between transposes and
/// reshapes; one operand, a transpose or (with letters summed away) a multiply by ones. An
/// ellipsis stands for as many letters as the ranks leave; repeated letters (diagonals) and
/// three or more operands are an `UnsupportedAttribute` error on `equation`.
fn einsum(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let eq = n.string("equation", "")?;
    let ranks = (0..n.num_inputs())
        .map(|i| Ok(cx.value(n, i)?.shape().len()))
        .collect::<Result<Vec<_>>>()?;
    let spec = expand_ellipsis(&eq, &ranks)
        .and_then(|e| Equation::parse(&e, n.num_inputs()))
        .ok_or_else(|| {
            n.attr_error(
                "equation",
                format!(
                    "'{eq}': only two-operand batched products and one-operand transposes or \
                     sums are supported"
                ),
            )
        })?;
    let mut ops = Vec::new();
    let mut ty = ElemType::Float;
    for i in 0..n.num_inputs() {
        let (t, t_ty) = cx.float_tensor(n, i)?;
        if t.rank() != spec.inputs[i].len() {
            return Err(n.input_error(
                i,
                format!("rank {} does not match '{}'", t.rank(), spec.inputs[i]),
            ));
        }
        ty = t_ty;
        ops.push(t);
    }
    if ops.len() == 1 {
        return Ok(vec![einsum1(cx, n, &spec, &ops[0], ty)?]);
    }
    Ok(vec![einsum2(cx, n, &spec, &ops, ty)?])
}

/// `eq` with each `...` spelt as letters it does not use, right-aligned over the operands'
/// ranks (`None` when the ranks leave an ellipsis a negative length). An implicit output
/// puts the ellipsis's letters first, as numpy does.
fn expand_ellipsis(eq: &str, ranks: &[usize]) -> Option<String> {
    let eq: String = eq.chars().filter(|c| !c.is_whitespace()).collect();
    if !eq.contains("...") {
        return Some(eq);
    }
    let (lhs, out) = match eq.split_once("->") {
        Some((l, o)) => (l.to_string(), Some(o.to_string())),
        None => (eq.clone(), None),
    };
    let inputs: Vec<&str> = lhs.split(',').collect();
    if inputs.len() != ranks.len() {
        return None;
    }
    let counts: Vec<usize> = inputs
        .iter()
        .zip(ranks)
        .map(|(s, &r)| match s.contains("...") {
            true => r.checked_sub(s.len() - 3),
            false => Some(0),
        })
        .collect::<Option<_>>()?;
    let most = counts.iter().copied().max().unwrap_or(0);
    let pool: String = ('A'..='Z')
        .chain('a'..='z')
        .filter(|c| !eq.contains(*c))
        .take(most)
        .collect();
    if pool.len() < most {
        return None;
    }
    let spelt: Vec<String> = inputs
        .iter()
        .zip(&counts)
        .map(|(s, &c)| s.replace("...", &pool[most - c..]))
        .collect();
    let out = match out {
        Some(o) => o.replace("...", &pool),
        None => {
            let all: String = lhs.replace("...", "").replace(',', "");
            let mut once: Vec<char> = all
                .chars()
                .filter(|&c| all.matches(c).count() == 1)
                .collect();
            once.sort_unstable();
            format!("{pool}{}", once.into_iter().collect::<String>())
        }
    };
    Some(format!("{}->{out}", spelt.join(",")))
}

/// A parsed einsum equation: one string of letters per operand and the output's.
#[derive(Debug, Clone)]
struct Equation {
    inputs: Vec<String>,
    output: String,
}

impl Equation {
    /// `None` for what this lowering does not take (ellipses, repeated letters, three or
    /// more operands, a letter of the output in no operand).
    fn parse(eq: &str, operands: usize) -> Option<Equation> {
        let eq: String = eq.chars().filter(|c| !c.is_whitespace()).collect();
        let (lhs, out) = match eq.split_once("->") {
            Some((l, o)) => (l.to_string(), Some(o.to_string())),
            None => (eq.clone(), None),
        };
        let inputs: Vec<String> = lhs.split(',').map(str::to_string).collect();
        if inputs.len() != operands || !(1..=2).contains(&operands) {
            return None;
        }
        let letters = |s: &str| s.chars().all(|c| c.is_ascii_alphabetic());
        let unique = |s: &str| {
            let mut v: Vec<char> = s.chars().collect();
            v.sort_unstable();
            v.windows(2).all(|w| w[0] != w[1])
        };
        if !inputs.iter().all(|s| letters(s) && unique(s)) {
            return None;
        }
        let output = out.unwrap_or_else(|| {
            // Implicit output: the letters seen once, in alphabetical order.
            let all: String = inputs.concat();
            let mut once: Vec<char> = all
                .chars()
                .filter(|&c| all.matches(c).count() == 1)
                .collect();
            once.sort_unstable();
            once.into_iter().collect()
        });
        if !letters(&output) || !unique(&output) || !output.chars().all(|c| lhs.contains(c)) {
            return None;
        }
        Some(Equation { inputs, output })
    }
}

/// A two-operand einsum as `[batch, a-kept, contracted] · [batch, contracted, b-kept]`.
fn einsum2(cx: &mut Cx, n: &NodeCx, eq: &Equation, ops: &[Tensor], ty: ElemType) -> Result<Value> {
    let (sa, sb, so) = (&eq.inputs[0], &eq.inputs[1], &eq.output);
    let size = |c: char| -> Result<usize> {
        for (s, t) in [(sa, &ops[0]), (sb, &ops[1])] {
            if let Some(i) = s.find(c) {
                return Ok(t.shape()[i]);
            }
        }
        Err(n.attr_error("equation", format!("letter '{c}' is in no operand")))
    };
    let in_a = |c: char| sa.contains(c);
    let in_b = |c: char| sb.contains(c);
    let in_o = |c: char| so.contains(c);
    let batch: Vec<char> = so.chars().filter(|&c| in_a(c) && in_b(c)).collect();
    let keep_a: Vec<char> = so.chars().filter(|&c| in_a(c) && !in_b(c)).collect();
    let keep_b: Vec<char> = so.chars().filter(|&c| in_b(c) && !in_a(c)).collect();
    let contract: Vec<char> = sa.chars().filter(|&c| in_b(c) && !in_o(c)).collect();
    // Letters of one operand only that the output drops are summed first (a product with
    // ones): here they are treated as contracted with a broadcast of ones on the other side.
    let sum_a: Vec<char> = sa.chars().filter(|&c| !in_b(c) && !in_o(c)).collect();
    let sum_b: Vec<char> = sb.chars().filter(|&c| !in_a(c) && !in_o(c)).collect();
    for (i, t) in ops.iter().enumerate() {
        let s = &eq.inputs[i];
        for (j, c) in s.chars().enumerate() {
            if t.shape()[j] != size(c)? {
                return Err(n.input_error(i, format!("letter '{c}' has another size")));
            }
        }
    }
    let prod =
        |v: &[char]| -> Result<usize> { v.iter().map(|&c| size(c)).product::<Result<usize>>() };
    let (g, m, nn) = (prod(&batch)?, prod(&keep_a)?, prod(&keep_b)?);
    let k = prod(&contract)?;
    let a = arrange(n, &ops[0], sa, &[&batch, &keep_a, &contract], &sum_a)?;
    let b = arrange(n, &ops[1], sb, &[&batch, &contract, &keep_b], &sum_b)?;
    let (a, b) = (
        sum_out(cx, n, a, [g, m, k], prod(&sum_a)?)?,
        sum_out(cx, n, b, [g, k, nn], prod(&sum_b)?)?,
    );
    let order: Vec<char> = [batch.clone(), keep_a.clone(), keep_b.clone()].concat();
    let shape: Vec<usize> = order.iter().map(|&c| size(c)).collect::<Result<_>>()?;
    if g == 0 || m == 0 || nn == 0 || k == 0 {
        let shape = so.chars().map(size).collect::<Result<Vec<_>>>()?;
        return zeros(cx, n, ty, &shape);
    }
    let c = product(cx, n, &a, &b)?;
    let c = c.reshape(&shape).map_err(|e| n.lowering(e))?;
    let perm: Vec<usize> = so
        .chars()
        .map(|c| order.iter().position(|&o| o == c).unwrap_or(0))
        .collect();
    let c = c.dim_shuffle(&perm).map_err(|e| n.lowering(e))?;
    result(cx, n, c, ty)
}

/// `t` (letters `s`) with its axes in the order of `groups` then `summed`, each group flattened:
/// `[g0, g1, g2, summed]`.
fn arrange(
    n: &NodeCx,
    t: &Tensor,
    s: &str,
    groups: &[&Vec<char>],
    summed: &[char],
) -> Result<Tensor> {
    let order: Vec<char> = groups
        .iter()
        .flat_map(|g| g.iter().copied())
        .chain(summed.iter().copied())
        .collect();
    let perm: Vec<usize> = order.iter().filter_map(|&c| s.find(c)).collect();
    if perm.len() != t.rank() {
        return Err(n.attr_error("equation", format!("letters of '{s}' are not all placed")));
    }
    let p = t.dim_shuffle(&perm).map_err(|e| n.lowering(e))?;
    let sizes: Vec<usize> = groups
        .iter()
        .map(|g| {
            g.iter()
                .map(|&c| s.find(c).map_or(1, |i| t.shape()[i]))
                .product()
        })
        .collect();
    let rest: usize = summed
        .iter()
        .filter_map(|&c| s.find(c))
        .map(|i| t.shape()[i])
        .product();
    p.reshape(&[sizes[0], sizes[1], sizes[2], rest])
        .map_err(|e| n.lowering(e))
}

/// `t[g, x, y, s]` summed over `s` into `want` (`[g, x, y]`): a product with ones.
fn sum_out(cx: &mut Cx, n: &NodeCx, t: Tensor, want: [usize; 3], s: usize) -> Result<Tensor> {
    if s == 1 {
        return t.reshape(&want).map_err(|e| n.lowering(e));
    }
    // [g, x·y, s] · [g, s, 1] with ones.
    let flat = t
        .reshape(&[want[0], want[1] * want[2], s])
        .map_err(|e| n.lowering(e))?;
    if flat.num_elements() == 0 || s == 0 {
        return cx.filled(n, t.dtype(), &want, 0.0);
    }
    let one = cx.filled(n, t.dtype(), &[1], 1.0)?;
    let ones = broadcast_to(n, &one, &[want[0], s, 1])?;
    let r = product(cx, n, &flat, &ones)?;
    let r = if r.dtype() != t.dtype() {
        cx.map(n, &_1.cast(t.dtype()), &[&r], "cast")?
    } else {
        r
    };
    r.reshape(&want).map_err(|e| n.lowering(e))
}

/// `DFT` (opsets 17–20): the transform along `axis` of a real (`[…, N, 1]`) or complex
/// (`[…, N, 2]`) signal, as one real matmul with the transform's matrix built on the host
/// (`[N·C, K·2]`: cosines and signed sines, `1/L` for the inverse); `dft_length` truncates or
/// zero-pads the signal to `L`, `onesided` keeps `K = L/2 + 1` frequencies.
fn dft(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let (x, ty) = cx.float_tensor(n, 0)?;
    let r = x.rank();
    let c = *x.shape().last().unwrap_or(&0);
    if r < 2 || !(c == 1 || c == 2) {
        return Err(n.input_error(
            0,
            format!(
                "is {:?}; the last axis holds 1 (real) or 2 (complex) parts",
                x.shape()
            ),
        ));
    }
    let axis = match cx.opt_ints(n, 2)? {
        Some(a) => a.first().copied().unwrap_or(-2),
        None => n.int("axis", if cx.opset >= 20 { -2 } else { 1 })?,
    };
    let axis = super::axis(n, "axis", axis, r)?;
    if axis == r - 1 {
        return Err(n.attr_error("axis", "the last axis holds the real and imaginary parts"));
    }
    let big_n = x.shape()[axis];
    let len = match cx.opt_ints(n, 1)? {
        Some(l) => usize::try_from(l.first().copied().unwrap_or(0))
            .ok()
            .filter(|&l| l > 0)
            .ok_or_else(|| n.input_error(1, "dft_length must be positive"))?,
        None => big_n,
    };
    let inverse = n.int("inverse", 0)? != 0;
    let k = if n.int("onesided", 0)? != 0 {
        len / 2 + 1
    } else {
        len
    };
    let rows = big_n.min(len);
    // x as [M, rows·C], the signal axis and its parts last.
    let mut perm: Vec<usize> = (0..r - 1).filter(|&d| d != axis).collect();
    let outer: Vec<usize> = perm.iter().map(|&d| x.shape()[d]).collect();
    perm.extend([axis, r - 1]);
    let lens = |e| n.lowering(e);
    let xs = x.dim_shuffle(&perm).map_err(lens)?;
    let xs = xs.slice_dim(outer.len(), 0..rows).map_err(lens)?;
    let m: usize = outer.iter().product();
    let xs = cx
        .copy(n, &xs, "signal")?
        .reshape(&[1, m, rows * c])
        .map_err(lens)?;
    let w = dft_matrix(rows, c, k, len, inverse);
    let wt = crate::host::HostTensor::float(ElemType::Float, &[1, rows * c, k * 2], w);
    let name = cx.name(n, "dft_matrix");
    let wt = cx.constant(n, &wt, &name)?;
    let xs = if xs.dtype() == DType::F32 {
        xs
    } else {
        cx.map(n, &_1.cast(DType::F32), &[&xs], "f32")?
    };
    let y = product(cx, n, &xs, &wt)?;
    // Back to the input's order, the transform's axis where the signal's was.
    let mut shape = outer.clone();
    shape.extend([k, 2]);
    let y = y.reshape(&shape).map_err(lens)?;
    let mut back = vec![0; r];
    for (i, &d) in perm.iter().enumerate() {
        back[d] = i;
    }
    let y = y.dim_shuffle(&back).map_err(lens)?;
    Ok(vec![result(cx, n, y, ty)?])
}

/// The real matrix of the transform: row `n·c + part` (input part 0 real, 1 imaginary),
/// column `k·2 + part`.
fn dft_matrix(rows: usize, c: usize, k: usize, len: usize, inverse: bool) -> Vec<f64> {
    let s = if inverse { 1.0 } else { -1.0 };
    let scale = if inverse { 1.0 / len as f64 } else { 1.0 };
    let mut w = vec![0.0; rows * c * k * 2];
    for t in 0..rows {
        for f in 0..k {
            let theta = 2.0 * std::f64::consts::PI * ((t * f) % len) as f64 / len as f64;
            let (sin, cos) = theta.sin_cos();
            let at = |part_in: usize, part_out: usize| (t * c + part_in) * k * 2 + f * 2 + part_out;
            w[at(0, 0)] = cos * scale;
            w[at(0, 1)] = s * sin * scale;
            if c == 2 {
                w[at(1, 0)] = -s * sin * scale;
                w[at(1, 1)] = cos * scale;
            }
        }
    }
    w
}
