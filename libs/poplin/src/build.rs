//! Building a planned multiply into a graph: operands laid out as the plan wants them, the
//! multiply and reduction compute sets, and the program that runs them.

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::ComputeSet;
use poplar_compiler::graph::Graph;
use poplar_compiler::graph::GraphError;
use poplar_compiler::graph::Tensor;
use poplar_core::dtype::DType;

use crate::plan::Plan;

/// Errors of building a multiply.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MatMulError {
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// Operands that do not match the plan (shape, type).
    #[error("matmul: {0}")]
    Shape(String),
}

/// A `[g, rows, cols]` tensor made of one variable per block, each on its tile:
/// `block(g, r, c)` gives the rows, columns and tile of block `(r, c)` of group `g`.
#[allow(clippy::too_many_arguments)]
fn blocked(
    graph: &mut Graph,
    dtype: DType,
    groups: usize,
    row_blocks: usize,
    col_blocks: usize,
    block: impl Fn(usize, usize, usize) -> (std::ops::Range<usize>, std::ops::Range<usize>, u32),
    name: &str,
) -> Result<Tensor, MatMulError> {
    let mut per_group = Vec::with_capacity(groups);
    for g in 0..groups {
        let mut rows = Vec::with_capacity(row_blocks);
        for r in 0..row_blocks {
            let mut cols = Vec::with_capacity(col_blocks);
            for c in 0..col_blocks {
                let (rr, cc, tile) = block(g, r, c);
                if rr.is_empty() || cc.is_empty() {
                    continue; // a serial chunk past the end of a short k block
                }
                let v = graph.add_variable(
                    dtype,
                    &[rr.len(), cc.len()],
                    &format!("{name}[{g}][{r},{c}]"),
                );
                graph.set_tile_mapping(&v, tile)?;
                cols.push(v);
            }
            rows.push(Tensor::concat_dim(&cols, 1)?);
        }
        per_group.push(Tensor::concat_dim(&rows, 0)?.expand(0)?);
    }
    Ok(Tensor::concat_dim(&per_group, 0)?)
}

/// The left operand `A[g, m, k]` laid out for `plan`: chunk `s` of block `(i, l)` of group
/// `g` on `plan.lhs_tile(g, i, l, s)` (the whole block on `plan.tile(g, i, 0, l)` without a
/// serial split).
pub fn create_lhs(graph: &mut Graph, plan: &Plan, name: &str) -> Result<Tensor, MatMulError> {
    blocked(
        graph,
        plan.input_type,
        plan.params.groups,
        plan.pm,
        plan.pk * plan.sk,
        |g, i, c| {
            let (l, s) = (c / plan.sk, c % plan.sk);
            (
                plan.m_range(i),
                plan.k_chunk(l, s),
                plan.lhs_tile(g, i, l, s).as_u32(),
            )
        },
        name,
    )
}

/// The right operand `B[g, k, n]` laid out for `plan`: chunk `s` of block `(l, j)` on
/// `plan.rhs_tile(g, l, j, s)`.
pub fn create_rhs(graph: &mut Graph, plan: &Plan, name: &str) -> Result<Tensor, MatMulError> {
    blocked(
        graph,
        plan.input_type,
        plan.params.groups,
        plan.pk * plan.sk,
        plan.pn,
        |g, c, j| {
            let (l, s) = (c / plan.sk, c % plan.sk);
            (
                plan.k_chunk(l, s),
                plan.n_range(j),
                plan.rhs_tile(g, l, j, s).as_u32(),
            )
        },
        name,
    )
}

/// A `[g, m, n]` view as `[g, m, n]`, or a `[m, n]` one as `[1, m, n]`.
fn batched(t: &Tensor, what: &str) -> Result<Tensor, MatMulError> {
    match t.rank() {
        3 => Ok(t.clone()),
        2 => Ok(t.expand(0)?),
        r => Err(MatMulError::Shape(format!(
            "{what} has rank {r}; expected [rows, cols] or [groups, rows, cols]"
        ))),
    }
}

/// The `[g, m, n]` f32 result laid out for `plan`: block `(i, j)` on `plan.tile(g, i, j, 0)`,
/// or with `pk > 1` its slice `plan.c_slice(len, l)` on `plan.tile(g, i, j, l)`.
fn create_output(graph: &mut Graph, plan: &Plan, name: &str) -> Result<Tensor, MatMulError> {
    let c = f32_blocks(graph, plan, 0, &format!("{name}/C"))?;
    if plan.pk > 1 {
        for (g, i, j) in blocks(plan) {
            let flat = block(&c, g, plan.m_range(i), plan.n_range(j))?;
            for l in 1..plan.pk {
                let r = plan.c_slice(flat.num_elements(), l);
                if !r.is_empty() {
                    graph.set_tile_mapping(&flat.slice(r)?, plan.tile(g, i, j, l))?;
                }
            }
        }
    }
    Ok(c)
}

/// A `[g, m, n]` f32 tensor of one variable per output block, block `(i, j)` on the tile of
/// k part `l`, `plan.tile(g, i, j, l)`.
fn f32_blocks(graph: &mut Graph, plan: &Plan, l: usize, name: &str) -> Result<Tensor, MatMulError> {
    blocked(
        graph,
        DType::F32,
        plan.params.groups,
        plan.pm,
        plan.pn,
        |g, i, j| {
            (
                plan.m_range(i),
                plan.n_range(j),
                plan.tile(g, i, j, l).as_u32(),
            )
        },
        name,
    )
}

/// Every output block `(g, i, j)` of a plan.
fn blocks(plan: &Plan) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    let (pm, pn) = (plan.pm, plan.pn);
    (0..plan.params.groups).flat_map(move |g| (0..pm * pn).map(move |b| (g, b / pn, b % pn)))
}

/// Block `(r, c)` of group `g` of a `[g, rows, cols]` tensor, flattened.
fn block(
    t: &Tensor,
    g: usize,
    r: std::ops::Range<usize>,
    c: std::ops::Range<usize>,
) -> Result<Tensor, GraphError> {
    Ok(t.index(g)?.slice_dim(0, r)?.slice_dim(1, c)?.flatten())
}

/// Serial step `s` of the multiply: every tile multiplies chunk `s` of its `A` and `B`
/// blocks into its partial block (`out[l]`, or `out[0]` = `C` without a k split), writing
/// it in the first step and adding to it after.
fn multiply_step(
    graph: &mut Graph,
    plan: &Plan,
    a3: &Tensor,
    b3: &Tensor,
    out: &[Tensor],
    s: usize,
    name: &str,
) -> Result<Program, MatMulError> {
    let step = if plan.sk > 1 {
        format!("/{s}")
    } else {
        String::new()
    };
    let cs = graph.add_compute_set(&format!("{name}/multiply{step}"));
    let codelet = match (plan.input_type, s) {
        (DType::F16, 0) => "MatMulBlock<half>",
        (DType::F16, _) => "MatMulBlockAcc<half>",
        (_, 0) => "MatMulBlock<float>",
        _ => "MatMulBlockAcc<float>",
    };
    for (g, i, j) in blocks(plan) {
        for l in 0..plan.pk {
            let (mr, nr, kr) = (plan.m_range(i), plan.n_range(j), plan.k_chunk(l, s));
            if kr.is_empty() {
                continue;
            }
            let v = graph.add_vertex(cs, codelet)?;
            graph.connect(v, "a", &block(a3, g, mr.clone(), kr.clone())?)?;
            graph.connect(v, "b", &block(b3, g, kr, nr.clone())?)?;
            graph.connect(v, "out", &block(&out[l.min(out.len() - 1)], g, mr, nr)?)?;
            graph.set_tile_mapping(v, plan.tile(g, i, j, l))?;
        }
    }
    Ok(Program::execute(cs))
}

/// The reduction of a k split: tile `l` of each block's split sums slice `l` of the `pk`
/// partials into its slice of `C`.
fn reduce_step(
    graph: &mut Graph,
    plan: &Plan,
    parts: &[Tensor],
    c: &Tensor,
    name: &str,
) -> Result<Program, MatMulError> {
    let sum: ComputeSet = graph.add_compute_set(&format!("{name}/reduce"));
    for (g, i, j) in blocks(plan) {
        let (mr, nr) = (plan.m_range(i), plan.n_range(j));
        let out = block(c, g, mr.clone(), nr.clone())?;
        for l in 0..plan.pk {
            let r = plan.c_slice(out.num_elements(), l);
            if r.is_empty() {
                continue;
            }
            let slices = parts
                .iter()
                .map(|t| block(t, g, mr.clone(), nr.clone())?.slice(r.clone()))
                .collect::<Result<Vec<_>, _>>()?;
            let v = graph.add_vertex(sum, "SumBlocks<float>")?;
            graph.connect(v, "partials", &Tensor::concat(&slices)?)?;
            graph.connect(v, "out", &out.slice(r)?)?;
            graph.set_tile_mapping(v, plan.tile(g, i, j, l))?;
        }
    }
    Ok(Program::execute(sum))
}

/// `C = A · B` as planned: `a` is `[g, m, k]` (or `[m, k]` for one group), `b` is
/// `[g, k, n]`, any views (transposed operands are `x.transpose()` or `dim_shuffle` views;
/// operands not laid out by [`create_lhs`]/[`create_rhs`] are fetched by exchange). Returns
/// `C` (`[g, m, n]`, or `[m, n]` for rank-2 operands, laid out as [`Plan::tile`] says) and
/// the program computing it: `sk` multiply compute sets, and a reduction with `pk > 1`.
pub fn matmul(
    graph: &mut Graph,
    a: &Tensor,
    b: &Tensor,
    plan: &Plan,
    name: &str,
) -> Result<(Tensor, Program), MatMulError> {
    let p = plan.params;
    let (a3, b3) = (batched(a, "A")?, batched(b, "B")?);
    for (t, what, want) in [
        (&a3, "A", [p.groups, p.m, p.k]),
        (&b3, "B", [p.groups, p.k, p.n]),
    ] {
        if t.shape() != want {
            return Err(MatMulError::Shape(format!(
                "{what} is {:?}, the plan is for {want:?}",
                t.shape()
            )));
        }
        if t.dtype() != plan.input_type {
            return Err(MatMulError::Shape(format!(
                "{what} is {:?}; the plan is for {:?} operands",
                t.dtype(),
                plan.input_type
            )));
        }
    }
    let c = create_output(graph, plan, name)?;
    // With a k split, each tile writes a partial block; the tiles of the split sum them.
    let partials: Option<Vec<Tensor>> = if plan.pk > 1 {
        let parts = (0..plan.pk).map(|l| f32_blocks(graph, plan, l, &format!("{name}/partial{l}")));
        Some(parts.collect::<Result<_, _>>()?)
    } else {
        None
    };
    let mut steps = Vec::with_capacity(plan.sk + 1);
    for s in 0..plan.sk {
        let out = partials.as_deref().map_or(std::slice::from_ref(&c), |v| v);
        steps.push(multiply_step(graph, plan, &a3, &b3, out, s, name)?);
    }
    if let Some(parts) = &partials {
        steps.push(reduce_step(graph, plan, parts, &c, name)?);
    }
    let c = if a.rank() == 2 { c.index(0)? } else { c };
    Ok((c, Program::labelled(name, steps)))
}

/// The host product `C = A · B` of row-major `[g, m, k]` and `[g, k, n]` in f64 (the test
/// oracle), and per element the sum `Σ |a|·|b|` that bounds the f32 rounding error.
pub fn host_matmul(a: &[f32], b: &[f32], p: &crate::MatMulParams) -> (Vec<f64>, Vec<f64>) {
    let (m, k, n) = (p.m, p.k, p.n);
    let mut c = vec![0.0f64; p.groups * m * n];
    let mut mag = vec![0.0f64; p.groups * m * n];
    for g in 0..p.groups {
        for r in 0..m {
            for col in 0..n {
                let (mut s, mut t) = (0.0f64, 0.0f64);
                for kk in 0..k {
                    let x = f64::from(a[(g * m + r) * k + kk]);
                    let y = f64::from(b[(g * k + kk) * n + col]);
                    s += x * y;
                    t += (x * y).abs();
                }
                c[(g * m + r) * n + col] = s;
                mag[(g * m + r) * n + col] = t;
            }
        }
    }
    (c, mag)
}
