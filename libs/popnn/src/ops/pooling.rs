//! Max and average pooling over the 1-, 2- or 3-D field of a `[batch, channels, *field]`
//! tensor (ONNX layout), and their input gradients (poplibs' `popnn::pooling::pool` and
//! `poolInputGradient`), on popnn's pooling vertices ([`crate::codelets::pool`]).
//!
//! Each plane `(n, c)` (the field of one sample and channel, contiguous in the input) is
//! pooled by a vertex on the tile that holds the plane's first input element: one vertex per
//! tile over all its planes, its outputs on that tile.

use std::collections::BTreeMap;

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{Graph, Tensor, VertexRef};
use poplar_core::dtype::DType;
use popops::Sequence;

use super::{check_float, param_err, shape_err, NnOpError};
use crate::codelets::pool::{self as cp, PoolDim, PoolGeom};

/// The pooling operations (poplibs' `PoolingType::MAX`, `AVG`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PoolingType {
    /// The max of each window (padding takes no part); the gradient goes to the window's
    /// first (row-major) maximal element. A NaN in a window gives NaN.
    Max,
    /// The mean of each window's real elements: padding is not counted (ONNX
    /// `count_include_pad = 0`); the gradient is spread evenly over those elements.
    Avg,
}

/// A pooling's kind and window per field dimension (as many as the input's field has, 1 to
/// 3): kernel size, stride, and the padding before (`pad_lower`) and after (`pad_upper`) the
/// field. Output size per dimension: `⌊(in + pad_lower + pad_upper − kernel) / stride⌋ + 1`
/// (ONNX `ceil_mode = 0`). Each padding must be smaller than the kernel, so that every window
/// holds a real element.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PoolParams {
    pub kind: PoolingType,
    pub kernel: Vec<usize>,
    pub stride: Vec<usize>,
    pub pad_lower: Vec<usize>,
    pub pad_upper: Vec<usize>,
}

impl PoolParams {
    /// A pooling of `kind` with `kernel`, stride 1 and no padding.
    ///
    /// ```
    /// use popnn::ops::{PoolParams, PoolingType};
    /// let p = PoolParams::new(PoolingType::Max, &[3, 3]).with_stride(&[2, 2]).with_padding(&[1, 1], &[1, 1]);
    /// assert_eq!(p.output_shape(&[8, 4, 7, 6]).unwrap(), vec![8, 4, 4, 3]);
    /// ```
    pub fn new(kind: PoolingType, kernel: &[usize]) -> PoolParams {
        PoolParams {
            kind,
            kernel: kernel.to_vec(),
            stride: vec![1; kernel.len()],
            pad_lower: vec![0; kernel.len()],
            pad_upper: vec![0; kernel.len()],
        }
    }

    /// With these strides.
    #[must_use]
    pub fn with_stride(mut self, stride: &[usize]) -> PoolParams {
        self.stride = stride.to_vec();
        self
    }

    /// With this padding before and after the field.
    #[must_use]
    pub fn with_padding(mut self, lower: &[usize], upper: &[usize]) -> PoolParams {
        self.pad_lower = lower.to_vec();
        self.pad_upper = upper.to_vec();
        self
    }

    /// The output's shape for an input of shape `input`, or why the parameters do not fit
    /// it (the error [`pool`] would give).
    pub fn output_shape(&self, input: &[usize]) -> Result<Vec<usize>, NnOpError> {
        let (_, out) = self.geometry("output_shape", "x", input, None)?;
        Ok(out)
    }

    /// Checks the parameters against an input of shape `shape` (named `what`): the vertex
    /// geometry and the output shape.
    fn geometry(
        &self,
        op: &str,
        what: &str,
        shape: &[usize],
        t: Option<&Tensor>,
    ) -> Result<(PoolGeom, Vec<usize>), NnOpError> {
        let err = |axis: usize, reason: String| NnOpError::Shape {
            op: op.into(),
            tensor: what.into(),
            shape: t.map_or_else(|| shape.to_vec(), |t| t.shape().to_vec()),
            axis,
            reason,
        };
        if !(3..=5).contains(&shape.len()) {
            let reason = format!(
                "must be [batch, channels, *field] with a field of 1 to 3 dimensions, not rank {}",
                shape.len()
            );
            return Err(err(shape.len().saturating_sub(1), reason));
        }
        if let Some(axis) = shape.iter().position(|&d| d == 0) {
            return Err(err(axis, "is empty".into()));
        }
        let field = &shape[2..];
        let r = field.len();
        for (p, v) in [
            ("kernel", &self.kernel),
            ("stride", &self.stride),
            ("pad_lower", &self.pad_lower),
            ("pad_upper", &self.pad_upper),
        ] {
            if v.len() != r {
                let reason = format!(
                    "has {} values, the field of '{what}' {r} dimensions",
                    v.len()
                );
                return Err(param_err(op, p, reason));
            }
        }
        let mut dims = [PoolDim {
            input: 1,
            output: 1,
            kernel: 1,
            stride: 1,
            pad_lower: 0,
        }; 3];
        let mut out = shape[..2].to_vec();
        for d in 0..r {
            let (k, s, pl, pu) = (
                self.kernel[d],
                self.stride[d],
                self.pad_lower[d],
                self.pad_upper[d],
            );
            if k == 0 || s == 0 {
                let p = if k == 0 { "kernel" } else { "stride" };
                return Err(param_err(op, p, format!("is 0 in dimension {d}")));
            }
            if pl >= k || pu >= k {
                let reason = format!(
                    "padding {pl}, {pu} of dimension {d} is not smaller than the kernel {k} (a window of padding only)"
                );
                return Err(param_err(op, "padding", reason));
            }
            let padded = field[d] + pl + pu;
            if k > padded {
                let reason = format!(
                    "the kernel {k} is larger than the padded field {padded} ({pl} + {} + {pu})",
                    field[d]
                );
                return Err(err(2 + d, reason));
            }
            let o = (padded - k) / s + 1;
            dims[3 - r + d] = PoolDim {
                input: field[d],
                output: o,
                kernel: k,
                stride: s,
                pad_lower: pl,
            };
            out.push(o);
        }
        Ok((PoolGeom { dims }, out))
    }
}

/// The tile of each of `planes` planes of `len` elements of `x`: the tile of its first
/// element, else (unmapped) the planes spread evenly over the tiles.
fn plane_tiles(graph: &Graph, x: &Tensor, planes: usize, len: usize) -> BTreeMap<u32, Vec<usize>> {
    let mut tile_of: Vec<Option<u32>> = vec![None; planes];
    if let Ok(mapping) = graph.tile_mapping(x) {
        for (tile, ranges) in mapping.iter().enumerate() {
            for r in ranges {
                let mut p = r.start.div_ceil(len);
                while p < planes && p * len < r.end {
                    tile_of[p] = Some(tile as u32);
                    p += 1;
                }
            }
        }
    }
    let tiles = graph.target().num_tiles().max(1) as usize;
    let mut by_tile: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (p, t) in tile_of.into_iter().enumerate() {
        let t = t.unwrap_or((p * tiles / planes) as u32);
        by_tile.entry(t).or_default().push(p);
    }
    by_tile
}

/// The plane slices `planes` of `t` (planes of `len` elements).
fn planes_of(t: &Tensor, planes: &[usize], len: usize) -> Result<Vec<Tensor>, NnOpError> {
    let flat = t.flatten();
    Ok(planes
        .iter()
        .map(|&p| flat.slice(p * len..(p + 1) * len))
        .collect::<Result<_, _>>()?)
}

/// A new vertex of the codelet of `kind`, `grad` or forward, for `dt`.
fn add_pool_vertex(
    graph: &mut Graph,
    cs: poplar_compiler::graph::ComputeSet,
    kind: PoolingType,
    grad: bool,
    dt: DType,
) -> Result<VertexRef, NnOpError> {
    use crate::codelets::pool::*;
    let half = dt == DType::F16;
    Ok(match (kind, grad, half) {
        (PoolingType::Max, false, false) => graph.add_vertex_of::<MaxPoolF32>(cs)?,
        (PoolingType::Max, false, true) => graph.add_vertex_of::<MaxPoolF16>(cs)?,
        (PoolingType::Avg, false, false) => graph.add_vertex_of::<AvgPoolF32>(cs)?,
        (PoolingType::Avg, false, true) => graph.add_vertex_of::<AvgPoolF16>(cs)?,
        (PoolingType::Max, true, false) => graph.add_vertex_of::<MaxPoolGradF32>(cs)?,
        (PoolingType::Max, true, true) => graph.add_vertex_of::<MaxPoolGradF16>(cs)?,
        (PoolingType::Avg, true, false) => graph.add_vertex_of::<AvgPoolGradF32>(cs)?,
        (PoolingType::Avg, true, true) => graph.add_vertex_of::<AvgPoolGradF16>(cs)?,
    })
}

/// `x` pooled over its field (`[N, C, *field]`, a field of 1 to 3 dimensions, `f32`/`f16`)
/// into `[N, C, *out]` of `x`'s type (see [`PoolParams`], [`PoolingType`]): one compute set,
/// one vertex per tile holding planes of `x`. `f16` is computed in f32 and rounded once.
/// Bad input is an `NnOpError`: `Shape` on `x` (rank, an empty axis, a kernel larger than the
/// padded field), `Param` (a parameter list of the wrong length, a zero kernel or stride, a
/// padding not smaller than the kernel), `DType`.
///
/// ```
/// use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
/// use popnn::ops::{pool, PoolParams, PoolingType};
///
/// popnn::link();
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let x = graph.add_variable(DType::F32, &[1, 1, 4], "x");
/// graph.map_linearly(&x, 2)?;
/// graph.set_initial_value(&x, &[1.0f32, 5.0, 2.0, 4.0])?;
/// let mut prog = Vec::new();
/// let p = PoolParams::new(PoolingType::Avg, &[2]).with_stride(&[2]).with_padding(&[1], &[1]);
/// let y = pool(&mut graph, &p, &x, &mut prog, "avg")?;
/// graph.create_host_read("y", &y)?;
/// let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
/// let mut engine = Engine::new(&exe, EngineOptions::default())?;
/// engine.run(0)?;
/// assert_eq!(engine.read_tensor::<f32>("y")?, vec![1.0, 3.5, 4.0]); // padding not counted
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn pool(
    graph: &mut Graph,
    params: &PoolParams,
    x: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, NnOpError> {
    check_float(name, "x", x)?;
    let (geom, out_shape) = params.geometry(name, "x", x.shape(), Some(x))?;
    let dt = x.dtype();
    let planes = x.shape()[0] * x.shape()[1];
    let (il, ol) = (geom.in_len(), geom.out_len());
    let out = graph.add_variable(dt, &out_shape, name);
    let workers = graph.target().workers_per_tile;
    let by_tile = plane_tiles(graph, x, planes, il);
    let cs = prog.compute_set(graph, name);
    for (tile, ps) in by_tile {
        let v = add_pool_vertex(graph, cs, params.kind, false, dt)?;
        let outs = planes_of(&out, &ps, ol)?;
        for o in &outs {
            graph.set_tile_mapping(o, tile)?;
        }
        graph.connect_list(v, "input", &planes_of(x, &ps, il)?)?;
        graph.connect_list(v, "out", &outs)?;
        graph.set_vertex_state(v, "geom", geom.words())?;
        graph.set_tile_mapping(v, tile)?;
        let avg = params.kind == PoolingType::Avg;
        let cycles =
            cp::forward_cycles(ps.len() as u64, ol as u64, geom.taps() as u64, avg, workers);
        graph.set_cycle_estimate(v, cycles)?;
    }
    Ok(out)
}

/// The gradient of [`pool`] w.r.t. its input `x` from the output gradient `dy` (`x`'s type,
/// [`pool`]'s output shape), of `x`'s type and shape (poplibs' `poolInputGradient`): max —
/// each `dy` added to its window's first maximal element of `x` (the max is recomputed from
/// `x`; poplibs also takes the pooled output); average — each `dy` divided evenly among its
/// window's real elements (`x` gives only the shape and mapping). Sums accumulate in f32 and
/// are rounded once. The vertices take the planes of `x` where `x` lives, `dx` mapped with
/// them. Errors as [`pool`], and `dy` of the wrong type or shape.
pub fn pool_input_gradient(
    graph: &mut Graph,
    params: &PoolParams,
    x: &Tensor,
    dy: &Tensor,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, NnOpError> {
    check_float(name, "x", x)?;
    let (geom, out_shape) = params.geometry(name, "x", x.shape(), Some(x))?;
    let dt = x.dtype();
    if dy.dtype() != dt {
        return Err(NnOpError::DType {
            op: name.into(),
            tensor: "dy".into(),
            got: dy.dtype(),
            expected: format!("the type of 'x', {dt}"),
        });
    }
    if dy.shape() != out_shape.as_slice() {
        let axis = (0..dy.rank().max(out_shape.len()))
            .find(|&k| dy.shape().get(k) != out_shape.get(k))
            .unwrap_or(0);
        let reason = format!("must be the pooled shape {out_shape:?}");
        return Err(shape_err(name, "dy", dy, axis, reason));
    }
    let planes = x.shape()[0] * x.shape()[1];
    let (il, ol) = (geom.in_len(), geom.out_len());
    let dx = graph.add_variable(dt, x.shape(), name);
    let workers = graph.target().workers_per_tile;
    let by_tile = plane_tiles(graph, x, planes, il);
    let cs = prog.compute_set(graph, name);
    for (tile, ps) in by_tile {
        let v = add_pool_vertex(graph, cs, params.kind, true, dt)?;
        let outs = planes_of(&dx, &ps, il)?;
        for o in &outs {
            graph.set_tile_mapping(o, tile)?;
        }
        if params.kind == PoolingType::Max {
            graph.connect_list(v, "input", &planes_of(x, &ps, il)?)?;
        }
        graph.connect_list(v, "grad", &planes_of(dy, &ps, ol)?)?;
        graph.connect_list(v, "out", &outs)?;
        graph.set_vertex_state(v, "geom", geom.words())?;
        graph.set_tile_mapping(v, tile)?;
        let cycles = cp::grad_cycles(&geom, ps.len() as u64, workers);
        graph.set_cycle_estimate(v, cycles)?;
    }
    Ok(dx)
}
