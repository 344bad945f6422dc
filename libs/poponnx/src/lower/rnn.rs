//! The recurrent ops `RNN`, `GRU` and `LSTM`, unrolled over the sequence: the input's
//! projection of every step as one planned matmul, then per step the recurrent matmul and one
//! fused `popops::map` per gate equation, in ONNX's gate order (GRU `z r h`, LSTM `i o f c`).

use poplar::{DType, Tensor};
use popops::expr::{select, Expr, _1, _2, _3, _4, _5};

use super::linalg::product;
use super::{Cx, NodeCx, Outputs, Value};
use crate::error::Result;
use crate::host::ElemType;

pub(super) fn lower(cx: &mut Cx, n: &NodeCx) -> Option<Outputs> {
    let cell = match n.node.op.as_str() {
        "RNN" => Cell::Rnn,
        "GRU" => Cell::Gru,
        "LSTM" => Cell::Lstm,
        _ => return None,
    };
    Some(recurrent(cx, n, cell))
}

#[derive(Clone, Copy, PartialEq)]
enum Cell {
    Rnn,
    Gru,
    Lstm,
}

impl Cell {
    fn gates(self) -> usize {
        match self {
            Cell::Rnn => 1,
            Cell::Gru => 3,
            Cell::Lstm => 4,
        }
    }

    fn default_activations(self) -> &'static [&'static str] {
        match self {
            Cell::Rnn => &["Tanh"],
            Cell::Gru => &["Sigmoid", "Tanh"],
            Cell::Lstm => &["Sigmoid", "Tanh", "Tanh"],
        }
    }
}

/// An activation of ONNX's recurrent ops applied to `x`, with its alpha and beta.
fn activation(
    n: &NodeCx,
    name: &str,
    alpha: Option<f32>,
    beta: Option<f32>,
    x: Expr,
) -> Result<Expr> {
    let a = |d: f32| alpha.unwrap_or(d) as f64;
    let b = |d: f32| beta.unwrap_or(d) as f64;
    Ok(match name {
        "Sigmoid" => x.sigmoid(),
        "Tanh" => x.tanh(),
        "Relu" => x.max(0.0),
        "HardSigmoid" => (x * a(0.2) + b(0.5)).min(1.0).max(0.0),
        "LeakyRelu" => select(x.clone(), x.clone() * a(0.01), x.ge(0.0)),
        "ThresholdedRelu" => select(x.clone(), 0.0, x.gt(a(1.0))),
        "ScaledTanh" => (x * b(1.0)).tanh() * a(1.0),
        "Affine" => x * a(1.0) + b(0.0),
        "Elu" => select(x.clone(), x.clone().expm1() * a(1.0), x.gt(0.0)),
        "Softsign" => x.clone() / (x.abs() + 1.0),
        "Softplus" => x.exp().log1p(),
        other => {
            return Err(n.attr_error(
                "activations",
                format!("'{other}' is not a recurrent activation"),
            ))
        }
    })
}

/// An activation's name with its alpha and beta.
type Activation = (String, Option<f32>, Option<f32>);

/// The node's attributes and shapes.
struct Spec {
    cell: Cell,
    hidden: usize,
    dirs: usize,
    reverse_only: bool,
    layout: i64,
    clip: Option<f64>,
    linear_before_reset: bool,
    /// Per direction, the activations (f, g, h as the op uses them) with alpha and beta.
    acts: Vec<Vec<Activation>>,
}

fn spec(n: &NodeCx, cell: Cell) -> Result<Spec> {
    let hidden = n
        .opt_int("hidden_size")?
        .ok_or_else(|| n.attr_error("hidden_size", "is required"))?;
    let hidden = usize::try_from(hidden)
        .ok()
        .filter(|&h| h > 0)
        .ok_or_else(|| n.attr_error("hidden_size", format!("{hidden} is not positive")))?;
    let direction = n.string("direction", "forward")?;
    let (dirs, reverse_only) = match direction.as_str() {
        "forward" => (1, false),
        "reverse" => (1, true),
        "bidirectional" => (2, false),
        other => return Err(n.attr_error("direction", format!("'{other}'"))),
    };
    let per = cell.default_activations().len();
    let names = n.strings("activations")?;
    let alphas = n.floats("activation_alpha")?.unwrap_or_default();
    let betas = n.floats("activation_beta")?.unwrap_or_default();
    let mut acts = Vec::new();
    for d in 0..dirs {
        let mut v = Vec::new();
        for k in 0..per {
            let i = d * per + k;
            let name = names
                .as_ref()
                .and_then(|v| v.get(i).cloned())
                .unwrap_or_else(|| cell.default_activations()[k].to_string());
            v.push((name, alphas.get(i).copied(), betas.get(i).copied()));
        }
        acts.push(v);
    }
    if cell == Cell::Lstm && n.int("input_forget", 0)? != 0 {
        return Err(n.attr_error(
            "input_forget",
            "coupled input and forget gates are not supported",
        ));
    }
    let linear_before_reset = cell == Cell::Gru && n.int("linear_before_reset", 0)? != 0;
    Ok(Spec {
        cell,
        hidden,
        dirs,
        reverse_only,
        layout: n.int("layout", 0)?,
        clip: n.opt_float("clip")?.map(f64::from),
        linear_before_reset,
        acts,
    })
}

fn recurrent(cx: &mut Cx, n: &NodeCx, cell: Cell) -> Outputs {
    let s = spec(n, cell)?;
    let (x, ty) = cx.tensor(n, 0)?;
    if !matches!(ty, ElemType::Float | ElemType::Float16) {
        return Err(n.type_error(
            "input 0",
            ty,
            "a recurrent op does not take (float, float16)",
        ));
    }
    if x.rank() != 3 {
        return Err(n.input_error(0, format!("shape {:?} is not rank 3", x.shape())));
    }
    // x as [seq, batch, input].
    let x = if s.layout == 1 {
        x.dim_shuffle(&[1, 0, 2]).map_err(|e| n.lowering(e))?
    } else {
        x
    };
    let (seq, batch, input) = (x.shape()[0], x.shape()[1], x.shape()[2]);
    check_sequence_lens(cx, n, seq, batch)?;
    let x32 = to_f32(cx, n, &x)?;
    let g = s.cell.gates() * s.hidden;
    let (w, _) = cx.tensor(n, 1)?;
    let (r, _) = cx.tensor(n, 2)?;
    expect_shape(n, 1, &w, &[s.dirs, g, input])?;
    expect_shape(n, 2, &r, &[s.dirs, g, s.hidden])?;
    let bias = bias(cx, n, &s, g)?;
    let mut ys = Vec::new();
    let mut finals = Vec::new();
    for d in 0..s.dirs {
        let reverse = s.reverse_only || d == 1;
        let (y, h, c) = direction(
            cx,
            n,
            &s,
            d,
            reverse,
            &x32,
            &w,
            &r,
            bias.as_ref(),
            (seq, batch),
        )?;
        ys.push(y);
        finals.push((h, c));
    }
    outputs(cx, n, &s, ty, ys, finals, (seq, batch))
}

/// `sequence_lens`, when given, must be the whole sequence for every batch entry.
fn check_sequence_lens(cx: &Cx, n: &NodeCx, seq: usize, batch: usize) -> Result<()> {
    if let Some(lens) = cx.opt_ints(n, 4)? {
        if lens.len() != batch || lens.iter().any(|&l| l != seq as i64) {
            return Err(n.input_error(
                4,
                format!("sequence lengths {lens:?}: only full sequences ({seq}) are supported"),
            ));
        }
    }
    Ok(())
}

fn expect_shape(n: &NodeCx, i: usize, t: &Tensor, want: &[usize]) -> Result<()> {
    if t.shape() != want {
        return Err(n.input_error(i, format!("shape {:?}, expected {want:?}", t.shape())));
    }
    Ok(())
}

fn to_f32(cx: &mut Cx, n: &NodeCx, t: &Tensor) -> Result<Tensor> {
    if t.dtype() == DType::F32 {
        Ok(t.clone())
    } else {
        cx.map(n, &_1.cast(DType::F32), &[t], "f32")
    }
}

/// The biases `[dirs, 2·gates·hidden]` (W's then R's), when given, in f32.
fn bias(cx: &mut Cx, n: &NodeCx, s: &Spec, g: usize) -> Result<Option<Tensor>> {
    if !n.has_input(3) {
        return Ok(None);
    }
    let (b, _) = cx.tensor(n, 3)?;
    expect_shape(n, 3, &b, &[s.dirs, 2 * g])?;
    to_f32(cx, n, &b).map(Some)
}

/// Initial state `i` (`initial_h` or `initial_c`) of direction `d`, `[batch, hidden]` in f32;
/// zeros when not given.
fn initial(
    cx: &mut Cx,
    n: &NodeCx,
    i: usize,
    d: usize,
    batch: usize,
    hidden: usize,
) -> Result<Tensor> {
    if !n.has_input(i) {
        return cx.filled(n, DType::F32, &[batch, hidden], 0.0);
    }
    let (h, _) = cx.tensor(n, i)?;
    let dirs = h.shape().first().copied().unwrap_or(0);
    if h.shape() != [dirs, batch, hidden] || d >= dirs {
        return Err(n.input_error(
            i,
            format!(
                "shape {:?}, expected [directions, {batch}, {hidden}]",
                h.shape()
            ),
        ));
    }
    let h = h.index(d).map_err(|e| n.lowering(e))?;
    to_f32(cx, n, &h)
}

/// Gate `k`'s columns of a `[rows, gates·hidden]` tensor.
fn gate(n: &NodeCx, t: &Tensor, k: usize, hidden: usize) -> Result<Tensor> {
    t.slice_dim(1, k * hidden..(k + 1) * hidden)
        .map_err(|e| n.lowering(e))
}

/// `e` clipped to `[-clip, clip]` when the node sets `clip`.
fn clipped(s: &Spec, e: Expr) -> Expr {
    match s.clip {
        Some(c) => e.clamp(-c, c),
        None => e,
    }
}

/// One direction over the sequence: the outputs of every step `[seq, batch, hidden]`, and the
/// final hidden (and cell) state.
#[allow(clippy::too_many_arguments)]
fn direction(
    cx: &mut Cx,
    n: &NodeCx,
    s: &Spec,
    d: usize,
    reverse: bool,
    x: &Tensor,
    w: &Tensor,
    r: &Tensor,
    bias: Option<&Tensor>,
    (seq, batch): (usize, usize),
) -> Result<(Tensor, Tensor, Option<Tensor>)> {
    let (hs, g) = (s.hidden, s.cell.gates() * s.hidden);
    let input = x.shape()[2];
    let lens = |e| n.lowering(e);
    // The input projection of every step at once: [seq·batch, input] · Wᵀ → [seq·batch, g].
    let wd = to_f32(cx, n, &w.index(d).map_err(lens)?)?;
    let rd = to_f32(cx, n, &r.index(d).map_err(lens)?)?;
    let xs = x.reshape(&[1, seq * batch, input]).map_err(lens)?;
    let wt = wd
        .transpose()
        .map_err(lens)?
        .reshape(&[1, input, g])
        .map_err(lens)?;
    let xw = product(cx, n, &xs, &wt)?
        .reshape(&[seq * batch, g])
        .map_err(lens)?;
    // Both biases folded into the projection (GRU's h gate with linear_before_reset keeps Rb apart).
    let (wb, rb) = match bias {
        Some(b) => {
            let bd = b.index(d).map_err(lens)?;
            (
                Some(bd.slice(0..g).map_err(lens)?),
                Some(bd.slice(g..2 * g).map_err(lens)?),
            )
        }
        None => (None, None),
    };
    let xw = match &wb {
        Some(wb) => cx.map(n, &(_1 + _2), &[&xw, wb], "xw+b")?,
        None => xw,
    };
    let rt = rd
        .transpose()
        .map_err(lens)?
        .reshape(&[1, hs, g])
        .map_err(lens)?;
    let mut h = initial(cx, n, 5, d, batch, hs)?;
    let mut c = if s.cell == Cell::Lstm {
        Some(initial(cx, n, 6, d, batch, hs)?)
    } else {
        None
    };
    let peep = peepholes(cx, n, s, d)?;
    let mut steps = vec![None; seq];
    for k in 0..seq {
        let t = if reverse { seq - 1 - k } else { k };
        let xt = xw.slice_dim(0, t * batch..(t + 1) * batch).map_err(lens)?;
        let hr = product(cx, n, &h.reshape(&[1, batch, hs]).map_err(lens)?, &rt)?
            .reshape(&[batch, g])
            .map_err(lens)?;
        let state = State {
            h: &h,
            c: c.as_ref(),
            rb: rb.as_ref(),
            peep: peep.as_ref(),
            rt: &rt,
        };
        let (h2, c2) = step(cx, n, s, d, &xt, &hr, &state)?;
        h = h2;
        c = c2;
        steps[t] = Some(h.reshape(&[1, batch, hs]).map_err(lens)?);
    }
    let all: Vec<Tensor> = steps
        .into_iter()
        .map(|s| s.expect("every step ran"))
        .collect();
    let y = Tensor::concat_dim(&all, 0).map_err(lens)?;
    Ok((y, h, c))
}

/// LSTM's peepholes `P[d]` (`[3·hidden]`: i, o, f), when given.
fn peepholes(cx: &mut Cx, n: &NodeCx, s: &Spec, d: usize) -> Result<Option<Tensor>> {
    if s.cell != Cell::Lstm || !n.has_input(7) {
        return Ok(None);
    }
    let (p, _) = cx.tensor(n, 7)?;
    expect_shape(n, 7, &p, &[s.dirs, 3 * s.hidden])?;
    let p = p.index(d).map_err(|e| n.lowering(e))?;
    to_f32(cx, n, &p).map(Some)
}

/// What a step reads besides its input: the previous hidden and cell state, R's biases, the
/// peepholes and `Rᵀ` (`[1, hidden, gates·hidden]`).
struct State<'a> {
    h: &'a Tensor,
    c: Option<&'a Tensor>,
    rb: Option<&'a Tensor>,
    peep: Option<&'a Tensor>,
    rt: &'a Tensor,
}

/// One step of one cell: the new hidden (and cell) state from the step's input projection
/// `xt` (`[batch, g]`, W's biases added) and `hr = H·Rᵀ`.
fn step(
    cx: &mut Cx,
    n: &NodeCx,
    s: &Spec,
    d: usize,
    xt: &Tensor,
    hr: &Tensor,
    st: &State,
) -> Result<(Tensor, Option<Tensor>)> {
    let hs = s.hidden;
    let (h, c, rb, peep) = (st.h, st.c, st.rb, st.peep);
    let act = |k: usize, e: Expr| {
        let (name, a, b) = &s.acts[d][k];
        activation(n, name, *a, *b, e)
    };
    // Recurrent bias of gate k (zeros when absent).
    let mut rbias = |cx: &mut Cx, k: usize| -> Result<Tensor> {
        match rb {
            Some(rb) => rb.slice(k * hs..(k + 1) * hs).map_err(|e| n.lowering(e)),
            None => cx.filled(n, DType::F32, &[hs], 0.0),
        }
    };
    match s.cell {
        Cell::Rnn => {
            let b = rbias(cx, 0)?;
            let (x, r) = (gate(n, xt, 0, hs)?, gate(n, hr, 0, hs)?);
            let e = act(0, clipped(s, _1 + _2 + _3))?;
            Ok((cx.map(n, &e, &[&x, &r, &b], "h")?, None))
        }
        Cell::Gru => gru_step(cx, n, s, d, xt, hr, h, st.rt, &mut rbias),
        Cell::Lstm => lstm_step(
            cx,
            n,
            s,
            d,
            xt,
            hr,
            c.expect("an LSTM has a cell state"),
            &mut rbias,
            peep,
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn gru_step(
    cx: &mut Cx,
    n: &NodeCx,
    s: &Spec,
    d: usize,
    xt: &Tensor,
    hr: &Tensor,
    h: &Tensor,
    rt: &Tensor,
    rbias: &mut dyn FnMut(&mut Cx, usize) -> Result<Tensor>,
) -> Result<(Tensor, Option<Tensor>)> {
    let hs = s.hidden;
    let (f, g) = (&s.acts[d][0], &s.acts[d][1]);
    let f = |e| activation(n, &f.0, f.1, f.2, e);
    let g = |e| activation(n, &g.0, g.1, g.2, e);
    let (bz, br, bh) = (rbias(cx, 0)?, rbias(cx, 1)?, rbias(cx, 2)?);
    let z = cx.map(
        n,
        &f(clipped(s, _1 + _2 + _3))?,
        &[&gate(n, xt, 0, hs)?, &gate(n, hr, 0, hs)?, &bz],
        "z",
    )?;
    let r = cx.map(
        n,
        &f(clipped(s, _1 + _2 + _3))?,
        &[&gate(n, xt, 1, hs)?, &gate(n, hr, 1, hs)?, &br],
        "r",
    )?;
    let xh = gate(n, xt, 2, hs)?;
    let ht = if s.linear_before_reset {
        // h = g(x·Whᵀ + Wbh + r ⊙ (H·Rhᵀ + Rbh))
        cx.map(
            n,
            &g(clipped(s, _1 + _2 * (_3 + _4)))?,
            &[&xh, &r, &gate(n, hr, 2, hs)?, &bh],
            "h",
        )?
    } else {
        // h = g(x·Whᵀ + Wbh + (r ⊙ H)·Rhᵀ + Rbh)
        let rh = cx.map(n, &(_1 * _2), &[&r, h], "r*h")?;
        let rht = rt.slice_dim(2, 2 * hs..3 * hs).map_err(|e| n.lowering(e))?;
        let rhr = product(
            cx,
            n,
            &rh.reshape(&[1, rh.shape()[0], hs])
                .map_err(|e| n.lowering(e))?,
            &rht,
        )?
        .reshape(&[rh.shape()[0], hs])
        .map_err(|e| n.lowering(e))?;
        cx.map(n, &g(clipped(s, _1 + _2 + _3))?, &[&xh, &rhr, &bh], "h")?
    };
    let new = cx.map(n, &((1.0 - _1) * _2 + _1 * _3), &[&z, &ht, h], "H")?;
    Ok((new, None))
}

#[allow(clippy::too_many_arguments)]
fn lstm_step(
    cx: &mut Cx,
    n: &NodeCx,
    s: &Spec,
    d: usize,
    xt: &Tensor,
    hr: &Tensor,
    c: &Tensor,
    rbias: &mut dyn FnMut(&mut Cx, usize) -> Result<Tensor>,
    peep: Option<&Tensor>,
) -> Result<(Tensor, Option<Tensor>)> {
    let hs = s.hidden;
    let a = |k: usize, e| {
        let (name, al, be) = &s.acts[d][k];
        activation(n, name, *al, *be, e)
    };
    let p = |k: usize, cx: &mut Cx| -> Result<Tensor> {
        match peep {
            Some(p) => p.slice(k * hs..(k + 1) * hs).map_err(|e| n.lowering(e)),
            None => cx.filled(n, DType::F32, &[hs], 0.0),
        }
    };
    let mut gate_in = |cx: &mut Cx, k: usize| -> Result<[Tensor; 3]> {
        Ok([gate(n, xt, k, hs)?, gate(n, hr, k, hs)?, rbias(cx, k)?])
    };
    // i = f(x + h + b + Pi ⊙ C), f = f(... + Pf ⊙ C), c~ = g(...), C' = f ⊙ C + i ⊙ c~,
    // o = f(... + Po ⊙ C'), H' = o ⊙ h(C').
    let [xi, hi, bi] = gate_in(cx, 0)?;
    let pi = p(0, cx)?;
    let i = cx.map(
        n,
        &a(0, clipped(s, _1 + _2 + _3 + _4 * _5))?,
        &[&xi, &hi, &bi, &pi, c],
        "i",
    )?;
    let [xf, hf, bf] = gate_in(cx, 2)?;
    let pf = p(2, cx)?;
    let f = cx.map(
        n,
        &a(0, clipped(s, _1 + _2 + _3 + _4 * _5))?,
        &[&xf, &hf, &bf, &pf, c],
        "f",
    )?;
    let [xc, hc, bc] = gate_in(cx, 3)?;
    let ct = cx.map(n, &a(1, clipped(s, _1 + _2 + _3))?, &[&xc, &hc, &bc], "c~")?;
    let c2 = cx.map(n, &(_1 * _2 + _3 * _4), &[&f, c, &i, &ct], "C")?;
    let [xo, ho, bo] = gate_in(cx, 1)?;
    let po = p(1, cx)?;
    let o = cx.map(
        n,
        &a(0, clipped(s, _1 + _2 + _3 + _4 * _5))?,
        &[&xo, &ho, &bo, &po, &c2],
        "o",
    )?;
    let h2 = cx.map(n, &(_1 * a(2, _2)?), &[&o, &c2], "H")?;
    Ok((h2, Some(c2)))
}

/// `Y` (`[seq, dirs, batch, hidden]`, or `[batch, seq, dirs, hidden]` with layout 1), `Y_h`
/// and, for LSTM, `Y_c` (`[dirs, batch, hidden]`, or batch first), of the input's type.
fn outputs(
    cx: &mut Cx,
    n: &NodeCx,
    s: &Spec,
    ty: ElemType,
    ys: Vec<Tensor>,
    finals: Vec<(Tensor, Option<Tensor>)>,
    (seq, batch): (usize, usize),
) -> Outputs {
    let lens = |e| n.lowering(e);
    let hs = s.hidden;
    let ys = ys
        .iter()
        .map(|y| y.reshape(&[seq, 1, batch, hs]).map_err(lens))
        .collect::<Result<Vec<_>>>()?;
    let mut y = Tensor::concat_dim(&ys, 1).map_err(lens)?;
    let stack = |v: Vec<Tensor>| -> Result<Tensor> {
        let v = v
            .iter()
            .map(|t| t.reshape(&[1, batch, hs]).map_err(lens))
            .collect::<Result<Vec<_>>>()?;
        Tensor::concat_dim(&v, 0).map_err(lens)
    };
    let mut yh = stack(finals.iter().map(|f| f.0.clone()).collect())?;
    let mut yc = if s.cell == Cell::Lstm {
        Some(stack(finals.iter().filter_map(|f| f.1.clone()).collect())?)
    } else {
        None
    };
    if s.layout == 1 {
        y = y.dim_shuffle(&[2, 0, 1, 3]).map_err(lens)?;
        yh = yh.dim_shuffle(&[1, 0, 2]).map_err(lens)?;
        yc = yc
            .map(|c| c.dim_shuffle(&[1, 0, 2]))
            .transpose()
            .map_err(lens)?;
    }
    let mut out = vec![y, yh];
    out.extend(yc);
    out.into_iter()
        .map(|t| {
            let e = if ty == ElemType::Float16 {
                _1.cast(DType::F16)
            } else {
                _1
            };
            let t = cx.map(n, &e, &[&t], "out")?;
            Ok(Value::Device { t, ty })
        })
        .collect()
}
