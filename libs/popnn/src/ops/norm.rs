//! Batch, layer and group normalisation, forward and backward (poplibs' `popnn::bn`,
//! `popnn::ln`, `popnn::gn`), over `popops` maps and reductions, for an input laid out
//! `[batch, channels, *field]` (ONNX layout, rank ≥ 2; `[N, C]` has an empty field).
//!
//! Each normalises `x` over a *statistics set* with its mean `μ` and inverse standard
//! deviation `σ⁻¹ = 1 / √(var + ε)` (the biased variance, divided by the set's size `M`), then
//! scales and offsets per channel: `y = γ[c] · (x − μ) σ⁻¹ + β[c]`.
//!
//! | op | statistics set | statistics shape | `M` |
//! |---|---|---|---|
//! | [`batch_norm`] | per channel, over batch and field | `[C]` | `N · F` |
//! | [`layer_norm`] | per sample, over channels and field | `[N]` | `C · F` |
//! | [`group_norm`] | per sample and group of `C / G` consecutive channels | `[N, G]` | `C / G · F` |
//!
//! (`F` the product of the field's sizes.) `γ` and `β` are `[C]` of `x`'s type for all three
//! (poplibs' layer norm is its group norm with one group, and keeps per-channel `γ`, `β`).
//! The statistics are `f32` whatever `x`'s type; `f16` data is computed in f32 inside each
//! fused map and rounded once. Batch norm is the training form (the batch's own statistics);
//! running averages for inference are not kept.

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{Graph, Tensor};
use poplar_core::dtype::DType;
use popops::expr::{_1, _2, _3, _4, _5};
use popops::{Operation, ReduceParams};

use super::{check_float, check_like, down, param_err, shape_err, up, NnOpError};

/// The statistics a forward pass saves for its backward pass, both `f32`: the mean `μ` and
/// the inverse standard deviation `1 / √(var + ε)` of each statistics set (shapes in the
/// module's table).
#[derive(Debug, Clone)]
pub struct NormStats {
    pub mean: Tensor,
    pub inv_std: Tensor,
}

/// The gradients of a normalisation: w.r.t. its input (`x`'s type and shape), `γ` and `β`
/// (`[C]`, `γ`'s type).
#[derive(Debug, Clone)]
pub struct NormGradients {
    pub input: Tensor,
    pub gamma: Tensor,
    pub beta: Tensor,
}

/// How `x` splits into statistics sets: viewed as `[N, G, Cg, F]`, statistics per `(n, g)`
/// (`per_sample`) or per `g` (batch norm: `G = C`, `Cg = 1`).
#[derive(Debug, Clone, Copy)]
struct Sets {
    n: usize,
    g: usize,
    cg: usize,
    f: usize,
    per_sample: bool,
    /// Layer norm: the statistics are `[N]` rather than `[N, 1]`.
    flat: bool,
}

impl Sets {
    fn view(&self) -> [usize; 4] {
        [self.n, self.g, self.cg, self.f]
    }
    /// The statistics as they broadcast against the view.
    fn stat4(&self) -> [usize; 4] {
        [if self.per_sample { self.n } else { 1 }, self.g, 1, 1]
    }
    /// The public statistics shape.
    fn stat_shape(&self) -> Vec<usize> {
        match (self.per_sample, self.flat) {
            (false, _) => vec![self.g],
            (true, true) => vec![self.n],
            (true, false) => vec![self.n, self.g],
        }
    }
    /// The view's axes a statistics set spans.
    fn stat_dims(&self) -> &'static [usize] {
        if self.per_sample {
            &[2, 3]
        } else {
            &[0, 2, 3]
        }
    }
    /// Elements per set.
    fn m(&self) -> usize {
        let per = self.cg * self.f;
        if self.per_sample {
            per
        } else {
            per * self.n
        }
    }
}

/// Checks `x` and `γ` (and `β`), and splits `x` into sets of `groups` (`None`: batch norm).
fn sets(
    op: &str,
    x: &Tensor,
    gamma: &Tensor,
    beta: Option<&Tensor>,
    groups: Option<usize>,
    flat: bool,
) -> Result<Sets, NnOpError> {
    check_float(op, "x", x)?;
    if x.rank() < 2 {
        return Err(shape_err(
            op,
            "x",
            x,
            x.rank().saturating_sub(1),
            format!(
                "must be [batch, channels, *field] (rank ≥ 2), not rank {}",
                x.rank()
            ),
        ));
    }
    if let Some(axis) = x.shape().iter().position(|&d| d == 0) {
        return Err(shape_err(op, "x", x, axis, "is empty"));
    }
    let (n, c) = (x.shape()[0], x.shape()[1]);
    let f: usize = x.shape()[2..].iter().product();
    let g = match groups {
        None => c,
        Some(0) => return Err(param_err(op, "groups", "must be at least 1")),
        Some(g) if c % g != 0 => {
            return Err(shape_err(
                op,
                "x",
                x,
                1,
                format!("{c} channels are not divisible into {g} groups"),
            ))
        }
        Some(g) => g,
    };
    let mut params = vec![("gamma", gamma)];
    params.extend(beta.map(|b| ("beta", b)));
    for (what, p) in params {
        if p.dtype() != x.dtype() {
            return Err(NnOpError::DType {
                op: op.into(),
                tensor: what.into(),
                got: p.dtype(),
                expected: format!("the type of 'x', {}", x.dtype()),
            });
        }
        if p.shape() != [c] {
            return Err(shape_err(
                op,
                what,
                p,
                if p.rank() == 1 { 0 } else { p.rank().min(1) },
                format!("must be [{c}], one value per channel of 'x'"),
            ));
        }
    }
    Ok(Sets {
        n,
        g,
        cg: c / g,
        f,
        per_sample: groups.is_some(),
        flat,
    })
}

/// A reduction of `t` (of the view's shape) over `dims` into `dtype`, reshaped to `shape`.
#[allow(clippy::too_many_arguments)]
fn reduce_to(
    graph: &mut Graph,
    t: &Tensor,
    dims: &[usize],
    dtype: DType,
    params: ReduceParams,
    shape: &[usize],
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, NnOpError> {
    let r = popops::reduce(graph, t, dtype, dims, params, prog, name)?;
    Ok(r.reshape(shape)?)
}

fn forward(
    graph: &mut Graph,
    s: Sets,
    [x, gamma, beta]: [&Tensor; 3],
    eps: f32,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(Tensor, NormStats), NnOpError> {
    if !(eps.is_finite() && eps >= 0.0) {
        return Err(param_err(
            name,
            "eps",
            format!("{eps} is not finite and ≥ 0"),
        ));
    }
    let dt = x.dtype();
    let (xv, st4, dims) = (x.reshape(&s.view())?, s.stat4(), s.stat_dims());
    let scale = 1.0 / s.m() as f32;
    let mean = reduce_to(
        graph,
        &xv,
        dims,
        DType::F32,
        ReduceParams::new(Operation::Add).with_scale(scale),
        &st4,
        prog,
        &format!("{name}/mean"),
    )?;
    let xc = popops::map(
        graph,
        &(up(_1, dt) - _2),
        &[&xv, &mean],
        prog,
        &format!("{name}/centre"),
    )?;
    let var = reduce_to(
        graph,
        &xc,
        dims,
        DType::F32,
        ReduceParams::new(Operation::SquareAdd).with_scale(scale),
        &st4,
        prog,
        &format!("{name}/var"),
    )?;
    let inv = popops::map(
        graph,
        &(_1 + eps).rsqrt(),
        &[&var],
        prog,
        &format!("{name}/inv_std"),
    )?;
    let p4 = [1, s.g, s.cg, 1];
    let (g4, b4) = (gamma.reshape(&p4)?, beta.reshape(&p4)?);
    let y = popops::map(
        graph,
        &down(_1 * _2 * up(_3, dt) + up(_4, dt), dt),
        &[&xc, &inv, &g4, &b4],
        prog,
        name,
    )?;
    let shape = s.stat_shape();
    let stats = NormStats {
        mean: mean.reshape(&shape)?,
        inv_std: inv.reshape(&shape)?,
    };
    Ok((y.reshape(x.shape())?, stats))
}

/// Fails unless `stats` are f32 tensors of the statistics shape `s` gives.
fn check_stats(op: &str, s: &Sets, stats: &NormStats) -> Result<(), NnOpError> {
    let want = s.stat_shape();
    for (what, t) in [("mean", &stats.mean), ("inv_std", &stats.inv_std)] {
        if t.dtype() != DType::F32 {
            return Err(NnOpError::DType {
                op: op.into(),
                tensor: what.into(),
                got: t.dtype(),
                expected: "f32 (the forward pass's statistics)".into(),
            });
        }
        if t.shape() != want.as_slice() {
            let axis = (0..t.rank().max(want.len()))
                .find(|&k| t.shape().get(k) != want.get(k))
                .unwrap_or(0);
            return Err(shape_err(
                op,
                what,
                t,
                axis,
                format!("must be {want:?}, the statistics shape of 'x'"),
            ));
        }
    }
    Ok(())
}

/// `dx = σ⁻¹ (dx̂ − mean(dx̂) − x̂ · mean(dx̂ · x̂))` over each set, `dx̂ = dy · γ`;
/// `dγ = Σ dy · x̂`, `dβ = Σ dy` per channel.
fn backward(
    graph: &mut Graph,
    s: Sets,
    [x, dy, gamma]: [&Tensor; 3],
    stats: &NormStats,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<NormGradients, NnOpError> {
    check_like(name, "x", x, "dy", dy)?;
    check_stats(name, &s, stats)?;
    let dt = x.dtype();
    let (st4, dims) = (s.stat4(), s.stat_dims());
    let (xv, dyv) = (x.reshape(&s.view())?, dy.reshape(&s.view())?);
    let mean = stats.mean.reshape(&st4)?;
    let inv = stats.inv_std.reshape(&st4)?;
    let g4 = gamma.reshape(&[1, s.g, s.cg, 1])?;
    let n = |what: &str| format!("{name}/{what}");
    let xhat = popops::map(
        graph,
        &((up(_1, dt) - _2) * _3),
        &[&xv, &mean, &inv],
        prog,
        &n("xhat"),
    )?;
    let q = popops::map(
        graph,
        &(up(_1, dt) * _2),
        &[&dyv, &xhat],
        prog,
        &n("dy*xhat"),
    )?;
    let dxhat = popops::map(
        graph,
        &(up(_1, dt) * up(_2, dt)),
        &[&dyv, &g4],
        prog,
        &n("dxhat"),
    )?;
    let p = popops::map(
        graph,
        &(_1 * up(_2, dt)),
        &[&q, &g4],
        prog,
        &n("dxhat*xhat"),
    )?;
    let c = [s.g * s.cg];
    let add = ReduceParams::new(Operation::Add);
    let db = reduce_to(graph, &dyv, &[0, 3], dt, add, &c, prog, &n("dbeta"))?;
    let dg = reduce_to(graph, &q, &[0, 3], DType::F32, add, &c, prog, &n("dgamma"))?;
    let dg = if dt == DType::F32 {
        dg
    } else {
        popops::map(graph, &down(_1, dt), &[&dg], prog, &n("dgamma/round"))?
    };
    let mean_of = add.with_scale(1.0 / s.m() as f32);
    let s1 = reduce_to(
        graph,
        &dxhat,
        dims,
        DType::F32,
        mean_of,
        &st4,
        prog,
        &n("s1"),
    )?;
    let s2 = reduce_to(graph, &p, dims, DType::F32, mean_of, &st4, prog, &n("s2"))?;
    let dx = popops::map(
        graph,
        &down(_3 * (_1 - _4 - _2 * _5), dt),
        &[&dxhat, &xhat, &inv, &s1, &s2],
        prog,
        name,
    )?;
    Ok(NormGradients {
        input: dx.reshape(x.shape())?,
        gamma: dg,
        beta: db,
    })
}

/// Training-mode batch normalisation of `x` (`[N, C, *field]`, `f32`/`f16`): per channel,
/// the batch's and field's mean and inverse standard deviation `1 / √(var + eps)` (biased
/// variance, in f32), then `y = γ (x − μ) σ⁻¹ + β` (poplibs' `bn::batchNormalise` after
/// `bn::batchNormStatistics`). `gamma`, `beta`: `[C]` of `x`'s type. Returns `y` (`x`'s
/// type and shape) and the statistics (`[C]`, f32) for [`batch_norm_grad`].
///
/// ```
/// use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
///
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let x = graph.add_variable(DType::F32, &[2, 1, 1], "x");
/// let gamma = graph.add_variable(DType::F32, &[1], "gamma");
/// let beta = graph.add_variable(DType::F32, &[1], "beta");
/// for (t, v) in [(&x, &[1.0f32, 3.0][..]), (&gamma, &[2.0]), (&beta, &[0.5])] {
///     graph.set_tile_mapping(t, 0)?;
///     graph.set_initial_value(t, v)?;
/// }
/// let mut prog = Vec::new();
/// let (y, stats) = popnn::ops::batch_norm(&mut graph, &x, &gamma, &beta, 0.0, &mut prog, "bn")?;
/// graph.create_host_read("y", &y)?;
/// graph.create_host_read("mean", &stats.mean)?;
/// let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
/// let mut engine = Engine::new(&exe, EngineOptions::default())?;
/// engine.run(0)?;
/// assert_eq!(engine.read_tensor::<f32>("y")?, vec![-1.5, 2.5]);
/// assert_eq!(engine.read_tensor::<f32>("mean")?, vec![2.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn batch_norm(
    graph: &mut Graph,
    x: &Tensor,
    gamma: &Tensor,
    beta: &Tensor,
    eps: f32,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(Tensor, NormStats), NnOpError> {
    let s = sets(name, x, gamma, Some(beta), None, false)?;
    forward(graph, s, [x, gamma, beta], eps, prog, name)
}

/// The gradients of [`batch_norm`] from its input `x`, the output gradient `dy` (same type
/// and shape), the saved `stats` and `gamma` (poplibs' `bn::batchNormGradients` and
/// `bn::batchNormParamGradients`).
pub fn batch_norm_grad(
    graph: &mut Graph,
    x: &Tensor,
    dy: &Tensor,
    stats: &NormStats,
    gamma: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<NormGradients, NnOpError> {
    let s = sets(name, x, gamma, None, None, false)?;
    backward(graph, s, [x, dy, gamma], stats, prog, name)
}

/// Layer normalisation of `x` (`[N, C, *field]`): statistics per sample over its channels and
/// field (`[N]`, f32), per-channel `gamma`, `beta` (`[C]`) — poplibs' `ln::layerNormalise`.
/// As [`batch_norm`] otherwise.
pub fn layer_norm(
    graph: &mut Graph,
    x: &Tensor,
    gamma: &Tensor,
    beta: &Tensor,
    eps: f32,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(Tensor, NormStats), NnOpError> {
    let s = sets(name, x, gamma, Some(beta), Some(1), true)?;
    forward(graph, s, [x, gamma, beta], eps, prog, name)
}

/// The gradients of [`layer_norm`] (as [`batch_norm_grad`]).
pub fn layer_norm_grad(
    graph: &mut Graph,
    x: &Tensor,
    dy: &Tensor,
    stats: &NormStats,
    gamma: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<NormGradients, NnOpError> {
    let s = sets(name, x, gamma, None, Some(1), true)?;
    backward(graph, s, [x, dy, gamma], stats, prog, name)
}

/// Group normalisation of `x` (`[N, C, *field]`) in `groups` groups of `C / groups`
/// consecutive channels: statistics per sample and group (`[N, groups]`, f32), per-channel
/// `gamma`, `beta` (`[C]`) — poplibs' `gn::groupNormalise`. `C` not divisible by `groups` is
/// an `NnOpError::Shape` on `x`'s axis 1; `groups = 0` an `NnOpError::Param`.
#[allow(clippy::too_many_arguments)]
pub fn group_norm(
    graph: &mut Graph,
    x: &Tensor,
    gamma: &Tensor,
    beta: &Tensor,
    groups: usize,
    eps: f32,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(Tensor, NormStats), NnOpError> {
    let s = sets(name, x, gamma, Some(beta), Some(groups), false)?;
    forward(graph, s, [x, gamma, beta], eps, prog, name)
}

/// The gradients of [`group_norm`] (as [`batch_norm_grad`]).
#[allow(clippy::too_many_arguments)]
pub fn group_norm_grad(
    graph: &mut Graph,
    x: &Tensor,
    dy: &Tensor,
    stats: &NormStats,
    gamma: &Tensor,
    groups: usize,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<NormGradients, NnOpError> {
    let s = sets(name, x, gamma, None, Some(groups), false)?;
    backward(graph, s, [x, dy, gamma], stats, prog, name)
}
