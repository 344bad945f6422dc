//! Reductions over any set of axes, in two or more stages across tiles (poplibs'
//! `popops::reduce`).
//!
//! **Semantics.** `reduce(graph, input, out_dtype, dims, params, prog, name)` reduces `input`
//! over the axes `dims` (any subset, in any order, each at most once; `&[]` reduces nothing)
//! with `params.op`; the output's shape is the input's with those axes removed (`[]` when all
//! are, a one-element output of shape `[1]` is accepted too). With `params.update` false,
//! `out = scale · r`; with it, `out = out + scale · r` (poplibs' `ReduceParams`). An output
//! element with nothing to reduce (an axis of size 0) is `scale` times the identity (`0`, `1`,
//! `-inf`/lowest, `+inf`/highest, `true`, `false`).
//!
//! **Types.** `Add`, `SquareAdd`, `Mul`, `Max`, `Min` take `f32` (into `f32`), `f16` (into
//! `f16` or `f32`, accumulated in f32 and rounded once at the end), `i32` and `u32` (wrapping;
//! `scale` must then be an integer, applied as one); `LogicalAnd`, `LogicalOr` take `bool`
//! (`scale` 1, no update). Anything else is an [`OpError::DType`].
//!
//! **Plan.** Stage 1 (compute set `"{name}/partials"`): each tile's elements of `input` are
//! split between its workers ([`split_between_workers`]); each worker's vertex reduces its
//! elements into one partial per output element it touches (a new variable
//! `"{name}/partials"` on that tile, in the accumulator type); a worker's piece with nothing
//! to reduce (each of its outputs fed by one run of exactly its length, already of the
//! accumulator type) gets no vertex, the next stage reads it in place.
//!
//! Intermediate cross-tile stages (compute sets `"{name}/spread0"`, `"{name}/spread1"`, …, at
//! most three; poplibs' intermediate partials): the partials' tiles, in tile order, are
//! the *units*; a level puts `g` consecutive units in a group, and in each group the outputs
//! fed by two or more of the group's partials are cut into equal contiguous shares (whole
//! 64-bit vectors), one per tile of the group (in the order the group's partials name them),
//! each share into up to `workers` vertices on that tile, which reduce the group's partials
//! of those outputs into one partial each (a new variable `"{name}/spread"`); outputs fed by
//! one partial of the group pass on as they are. The groups are the next level's units. The
//! group size `g` (2, 4, 8, … below the number of units) and whether to add a level at all
//! are chosen by the modelled cycles of the level and of the final stage after it, against
//! the final stage without it: per phase, the busiest receiver's messages (`setup +
//! ⌈bytes / bytes per cycle⌉` each, the cycle model's exchange cost: one message per
//! partial slice from another tile), the busiest tile's vertex schedule (`workers ×
//! max(largest vertex, ⌈Σ / workers⌉)`, each vertex poplibs' estimate), and two syncs. A
//! reduction whose outputs take partials from few tiles adds no level. The hidden switch
//! [`set_two_stage_only`] builds the plan without these levels, for comparison.
//!
//! Stage 2 (compute set `"{name}/final"`): on the tile of each output element, split between
//! the workers again, a vertex reduces that element's partials, scales and writes (or
//! updates) it. When a tile has fewer output groups than workers and at least twice as many
//! partials per output as it would split them, an intermediate compute set
//! `"{name}/intermediate"` first splits each output's partials into that many contiguous
//! runs, one worker each. All stages use the generic `Reduce{Op}<P,O>` vertex of
//! `codelets::reduction` (poplibs' `Reduce`): output regions, each fed by partials that are
//! a whole number of region lengths, so a reduction over an outer axis is read as contiguous
//! rows, not element by element.
//!
//! **Order (deterministic).** Within a stage-1 vertex, an output element's value is folded
//! left to right over the worker's elements in `input`'s row-major order; each intermediate
//! cross-tile level folds a group's partials in list order (tile order, then worker order;
//! at later levels, the earlier groups' order); stage 2 folds the partials in list order
//! (with an on-tile intermediate stage: each contiguous run of them in that order, then the
//! runs in order). The grouping depends only on the shapes, the tile mapping and the target,
//! never on the engine's thread count or ISA level, so the bits are the same on every run.
//! Float sums are therefore reassociated relative to a left-to-right sum: bound their error
//! by `(k + p₁ + p₂ + … ) · ε · Σ|x|` for `k` elements per worker and `pᵢ` partials per
//! output at each later stage, at most `(n + 1) · 2⁻²³ · Σ|x|` for `n` elements per output.
//! `f16` partials stay f32 at every stage.
//!
//! **Output mapping.** [`reduce`] creates the output; [`reduce_with_output`] writes a tensor
//! of the caller's. An output with no element mapped (either way) is mapped linearly, in
//! grains of the output type's vector, over the range of tiles that hold `input`, so the
//! second stage is spread over the tiles; a partly mapped output is an error.
//!
//! **Cost.** Every vertex's estimate is poplibs' `getCyclesEstimateForReduce` for its region
//! sizes ([`codelets::reduction::cost::reduce`]).

use std::collections::HashMap;
use std::ops::Range;

use codelets::cycles::data_path_width;
use codelets::reduction::cost;
pub use codelets::reduction::Operation;
use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{Graph, Tensor, VertexRef};
use poplar_core::dtype::DType;
use poplar_core::target::TileId;

use crate::error::{shape_err, OpError};
use crate::pieces::{mapped_regions, split_between_workers};

mod spread;
pub use spread::set_two_stage_only;

/// What a reduction computes (poplibs' `popops::ReduceParams`): `out = scale · r`, or
/// `out += scale · r` with `update`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReduceParams {
    pub op: Operation,
    /// 1 by default.
    pub scale: f32,
    /// Add to the output instead of overwriting it.
    pub update: bool,
}

impl ReduceParams {
    /// `op` with scale 1, no update.
    pub fn new(op: Operation) -> ReduceParams {
        ReduceParams {
            op,
            scale: 1.0,
            update: false,
        }
    }

    /// The same with `scale`.
    pub fn with_scale(self, scale: f32) -> ReduceParams {
        ReduceParams { scale, ..self }
    }

    /// The same with `update`.
    pub fn with_update(self, update: bool) -> ReduceParams {
        ReduceParams { update, ..self }
    }
}

impl From<Operation> for ReduceParams {
    fn from(op: Operation) -> ReduceParams {
        ReduceParams::new(op)
    }
}

/// `'var'` for a tensor's first variable, for messages.
pub(crate) fn tensor_name(graph: &Graph, t: &Tensor) -> String {
    match t.element(0) {
        Some((var, _)) => format!("'{}'", graph.var_name(var)),
        None => "(empty tensor)".to_string(),
    }
}

/// Checks `dims` against `input`: each in range, none repeated. Returns the mask of reduced
/// axes.
pub(crate) fn check_axes(
    graph: &Graph,
    input: &Tensor,
    dims: &[usize],
    op: &str,
) -> Result<Vec<bool>, OpError> {
    let mut mask = vec![false; input.rank()];
    for &d in dims {
        let reason = if d >= input.rank() {
            format!("is out of range (shape {:?})", input.shape())
        } else if mask[d] {
            "is repeated".to_string()
        } else {
            mask[d] = true;
            continue;
        };
        return Err(OpError::Axis {
            op: op.to_string(),
            tensor: tensor_name(graph, input),
            axis: d,
            rank: input.rank(),
            reason,
        });
    }
    Ok(mask)
}

/// The codelets of the two stages and the accumulator type.
struct Types {
    acc: DType,
    first: String,
    /// Partials to partials (an intermediate stage).
    mid: String,
    last: String,
}

fn dtype_err(op: &str, what: String, got: DType, expected: &str) -> OpError {
    OpError::DType {
        op: op.to_string(),
        what,
        got,
        expected: expected.to_string(),
    }
}

/// The stages' codelets for `input` → `out` with `params`, or a typed error.
fn plan_types(
    graph: &Graph,
    input: &Tensor,
    out: &Tensor,
    params: &ReduceParams,
    name: &str,
) -> Result<Types, OpError> {
    let (i, o, op) = (input.dtype(), out.dtype(), params.op);
    let input_what = format!("input {}", tensor_name(graph, input));
    let (acc, out_ok) = match i {
        DType::Bool if op.is_logical() => (DType::Bool, o == DType::Bool),
        DType::Bool => {
            return Err(dtype_err(
                name,
                input_what,
                i,
                &format!("{op:?} takes f32, f16, i32 or u32"),
            ))
        }
        _ if op.is_logical() => {
            return Err(dtype_err(
                name,
                input_what,
                i,
                &format!("{op:?} takes bool"),
            ))
        }
        DType::F32 => (DType::F32, o == DType::F32),
        DType::F16 => (DType::F32, matches!(o, DType::F16 | DType::F32)),
        DType::I32 | DType::U32 => (i, o == i),
        _ => {
            return Err(dtype_err(
                name,
                input_what,
                i,
                "a reduction takes f32, f16, i32, u32 or bool",
            ))
        }
    };
    if !out_ok {
        let expected = if i == DType::F16 {
            "f16 or f32 for an f16 input".to_string()
        } else {
            format!("{i}, the input's type")
        };
        return Err(dtype_err(
            name,
            format!("output {}", tensor_name(graph, out)),
            o,
            &expected,
        ));
    }
    let s = params.scale;
    let scale_ok = match acc {
        DType::Bool => s == 1.0 && !params.update,
        DType::I32 | DType::U32 => s.fract() == 0.0 && s.abs() < 2_147_483_648.0,
        _ => true,
    };
    if !scale_ok {
        return Err(shape_err(
            name,
            format!(
                "scale {s} (update {}) is not valid for a {acc} reduction: integers take an \
                 integer scale, bool takes scale 1 and no update",
                params.update
            ),
        ));
    }
    let first = pair_codelet(op.codelet(), i, acc)?;
    let mid = pair_codelet(op.of_partials().codelet(), acc, acc)?;
    let last = pair_codelet(op.of_partials().codelet(), acc, o)?;
    Ok(Types {
        acc,
        first,
        mid,
        last,
    })
}

/// The registered codelet `"{stem}<{p},{o}>"`.
fn pair_codelet(stem: &str, p: DType, o: DType) -> Result<String, OpError> {
    codelets::link();
    let name = format!("{stem}<{},{}>", p.poplar_name(), o.poplar_name());
    match poplar_core::codelet::lookup(&name) {
        Some(_) => Ok(name),
        None => Err(OpError::Unsupported { codelet: name }),
    }
}

/// Checks `out`'s shape against `input` reduced over `mask`.
fn check_out_shape(
    graph: &Graph,
    input: &Tensor,
    out: &Tensor,
    mask: &[bool],
    name: &str,
) -> Result<(), OpError> {
    let want: Vec<usize> = input
        .shape()
        .iter()
        .zip(mask)
        .filter(|(_, &m)| !m)
        .map(|(&s, _)| s)
        .collect();
    if out.shape() == want.as_slice() || (want.is_empty() && out.shape() == [1]) {
        return Ok(());
    }
    Err(shape_err(
        name,
        format!(
            "output {} has shape {:?}, but input {} of shape {:?} reduced over its axes {:?} \
             has shape {want:?}",
            tensor_name(graph, out),
            out.shape(),
            tensor_name(graph, input),
            input.shape(),
            mask.iter()
                .enumerate()
                .filter(|(_, &m)| m)
                .map(|(d, _)| d)
                .collect::<Vec<_>>()
        ),
    ))
}

/// The shape after removing the axes of `mask`.
fn reduced_shape(shape: &[usize], mask: &[bool]) -> Vec<usize> {
    shape
        .iter()
        .zip(mask)
        .filter(|(_, &m)| !m)
        .map(|(&s, _)| s)
        .collect()
}

/// The input's axes merged into alternating kept/reduced blocks (axes of size 1 dropped):
/// how a flat input index maps to an output index.
struct Geometry {
    /// `(size, reduced)` per block, outermost first.
    blocks: Vec<(usize, bool)>,
    /// Input elements inside one element of each block.
    inner: Vec<usize>,
    /// Output elements inside one element of each kept block.
    out_inner: Vec<usize>,
}

impl Geometry {
    fn new(shape: &[usize], mask: &[bool]) -> Geometry {
        let mut blocks: Vec<(usize, bool)> = Vec::new();
        for (&s, &m) in shape.iter().zip(mask) {
            if s == 1 {
                continue;
            }
            match blocks.last_mut() {
                Some(b) if b.1 == m => b.0 *= s,
                _ => blocks.push((s, m)),
            }
        }
        if blocks.is_empty() {
            blocks.push((1, false));
        }
        let k = blocks.len();
        let (mut inner, mut out_inner) = (vec![1; k], vec![1; k]);
        for b in (0..k - 1).rev() {
            inner[b] = inner[b + 1] * blocks[b + 1].0;
            let next = blocks[b + 1];
            out_inner[b] = out_inner[b + 1] * if next.1 { 1 } else { next.0 };
        }
        Geometry {
            blocks,
            inner,
            out_inner,
        }
    }

    /// The output index of flat input element `f`.
    fn out_index(&self, f: usize) -> usize {
        self.blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| !b.1)
            .map(|(i, b)| (f / self.inner[i]) % b.0 * self.out_inner[i])
            .sum()
    }

    /// The longest piece of input starting at `f` (and ending by `end`) that feeds one run of
    /// outputs: `(first output, region length L, input elements m·L)`.
    fn piece(&self, f: usize, end: usize) -> (usize, usize, usize) {
        let o = self.out_index(f);
        let k = self.blocks.len();
        let (last, reduced) = self.blocks[k - 1];
        let left = end - f;
        if reduced {
            return (o, 1, (last - f % last).min(left));
        }
        let c = f % last;
        if c != 0 || left < last {
            let l = (last - c).min(left);
            return (o, l, l);
        }
        let rows = if k >= 2 {
            let r = (f / self.inner[k - 2]) % self.blocks[k - 2].0;
            (left / last).min(self.blocks[k - 2].0 - r)
        } else {
            1
        };
        (o, last, rows * last)
    }
}

/// One output region of a vertex: outputs `o..o + len` from the input (or partial) pieces
/// `parts`.
struct Region {
    o: usize,
    len: usize,
    parts: Vec<Tensor>,
}

/// A vertex of either stage: `regions` written to `out`.
#[allow(clippy::too_many_arguments)] // the vertex's fields
fn add_reduce_vertex(
    graph: &mut Graph,
    cs: poplar_compiler::graph::ComputeSet,
    codelet: &str,
    op: Operation,
    (p_type, o_type): (DType, DType),
    regions: &[Region],
    out: &Tensor,
    params: (f32, bool),
    tile: TileId,
) -> Result<VertexRef, OpError> {
    let v = graph.add_vertex(cs, codelet)?;
    let parts: Vec<Tensor> = regions.iter().flat_map(|r| r.parts.clone()).collect();
    let lens: Vec<u32> = regions.iter().map(|r| r.len as u32).collect();
    let nps: Vec<u32> = regions.iter().map(|r| r.parts.len() as u32).collect();
    let cycles = cost::reduce(
        op,
        p_type,
        o_type,
        params.1,
        &parts
            .iter()
            .map(|p| p.num_elements() as u64)
            .collect::<Vec<_>>(),
        &lens.iter().map(|&l| u64::from(l)).collect::<Vec<_>>(),
        &nps.iter().map(|&n| u64::from(n)).collect::<Vec<_>>(),
    );
    graph.connect_list(v, "partials", &parts)?;
    graph.connect(v, "out", out)?;
    graph.set_vertex_state(v, "out_lens", lens)?;
    graph.set_vertex_state(v, "num_partials", nps)?;
    graph.set_vertex_state(v, "scale", params.0)?;
    graph.set_vertex_state(v, "update", params.1)?;
    graph.set_tile_mapping(v, tile)?;
    graph.set_cycle_estimate(v, cycles)?;
    Ok(v)
}

/// The tile mapping as `(tile, ranges)` per tile, in tile order.
fn by_tile(regions: Vec<(TileId, Range<usize>)>) -> Vec<(TileId, Vec<Range<usize>>)> {
    let mut out: Vec<(TileId, Vec<Range<usize>>)> = Vec::new();
    for (tile, r) in regions {
        match out.last_mut() {
            Some((t, rs)) if *t == tile => rs.push(r),
            _ => out.push((tile, vec![r])),
        }
    }
    out
}

/// Maps `out` if none of it is mapped (module notes); leaves it alone otherwise.
fn map_output(graph: &mut Graph, input: &Tensor, out: &Tensor) -> Result<(), OpError> {
    let covered: usize = graph
        .tile_mapping(out)?
        .iter()
        .flatten()
        .map(|r| r.len())
        .sum();
    if covered > 0 || out.num_elements() == 0 {
        return Ok(());
    }
    let grain = data_path_width(out.dtype()) as usize;
    let tiles: Vec<usize> = graph
        .tile_mapping(input)?
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.is_empty())
        .map(|(t, _)| t)
        .collect();
    match (tiles.first(), tiles.last()) {
        (Some(&a), Some(&b)) => graph.map_linearly_over(out, grain, a as u32..b as u32 + 1)?,
        _ => graph.map_linearly(out, grain)?,
    }
    Ok(())
}

/// Reduces `input` over the axes `dims` into a new tensor of `out_dtype` named `name`,
/// adding the programs to `prog` (module notes: [`reduction`](self)). `params` is a
/// [`ReduceParams`] or an [`Operation`]; `update` is refused (a new tensor has nothing to
/// update).
///
/// ```
/// use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
/// use popops::{Operation, ReduceParams};
///
/// codelets::link();
/// let mut graph = Graph::new(&Target::custom(4, 64 * 1024));
/// let x = graph.add_variable(DType::F32, &[2, 3], "x");
/// graph.map_linearly(&x, 1)?;
/// graph.set_initial_value(&x, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let mut prog = Vec::new();
/// // Column sums, doubled: [2·(1+4), 2·(2+5), 2·(3+6)].
/// let cols = popops::reduce(&mut graph, &x, DType::F32, &[0],
///     ReduceParams::new(Operation::Add).with_scale(2.0), &mut prog, "cols")?;
/// // Row maxima: [3, 6].
/// let rows = popops::reduce(&mut graph, &x, DType::F32, &[1], Operation::Max, &mut prog, "rows")?;
/// graph.create_host_read("cols", &cols)?;
/// graph.create_host_read("rows", &rows)?;
///
/// let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
/// let mut engine = Engine::new(&exe, EngineOptions::default())?;
/// engine.run(0)?;
/// assert_eq!(engine.read_tensor::<f32>("cols")?, vec![10.0, 14.0, 18.0]);
/// assert_eq!(engine.read_tensor::<f32>("rows")?, vec![3.0, 6.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn reduce(
    graph: &mut Graph,
    input: &Tensor,
    out_dtype: DType,
    dims: &[usize],
    params: impl Into<ReduceParams>,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    let params = params.into();
    if params.update {
        return Err(shape_err(
            name,
            "update needs an existing output: use reduce_with_output",
        ));
    }
    let mask = check_axes(graph, input, dims, name)?;
    let out = graph.add_variable(out_dtype, &reduced_shape(input.shape(), &mask), name);
    reduce_with_output(graph, input, &out, dims, params, prog, name)?;
    Ok(out)
}

/// As [`reduce`], writing (or with `params.update`, adding to) the caller's tensor `out`, of
/// `input`'s shape without the axes `dims`. An unmapped `out` is mapped as [`reduce`] maps a
/// new one.
pub fn reduce_with_output(
    graph: &mut Graph,
    input: &Tensor,
    out: &Tensor,
    dims: &[usize],
    params: impl Into<ReduceParams>,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(), OpError> {
    let params = params.into();
    let mask = check_axes(graph, input, dims, name)?;
    let types = plan_types(graph, input, out, &params, name)?;
    check_out_shape(graph, input, out, &mask, name)?;
    map_output(graph, input, out)?;
    if out.num_elements() == 0 {
        return Ok(());
    }
    let out_regions = mapped_regions(graph, out, name)?;
    let (partials, tiles) = first_stage(graph, input, &mask, &types, params.op, prog, name)?;
    let mut parts: Vec<spread::Part> = Vec::with_capacity(partials.len());
    for (r, &tile) in partials.iter().zip(&tiles) {
        let unit = match parts.last() {
            Some(p) if p.tile == tile => p.unit,
            Some(p) => p.unit + 1,
            None => 0,
        };
        parts.push(spread::Part {
            tile,
            o: r.o,
            len: r.len,
            unit,
        });
    }
    let op = params.op.of_partials();
    let (partials, sets) = spread::spread(graph, parts, partials, &out_regions, &types, op, name)?;
    prog.extend(sets.into_iter().map(Program::execute));
    second_stage(
        graph,
        out,
        out_regions,
        &partials,
        &types,
        params,
        prog,
        name,
    )
}

/// Stage 1: one vertex per worker piece of each tile's elements of `input`, writing partials
/// (returned as regions of one partial each, in tile and worker order, and each one's tile).
fn first_stage(
    graph: &mut Graph,
    input: &Tensor,
    mask: &[bool],
    types: &Types,
    op: Operation,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(Vec<Region>, Vec<TileId>), OpError> {
    let mut partials = Vec::new();
    let mut tiles = Vec::new();
    if input.num_elements() == 0 {
        return Ok((partials, tiles));
    }
    let covered: usize = graph
        .tile_mapping(input)?
        .iter()
        .flatten()
        .map(|r| r.len())
        .sum();
    if covered != input.num_elements() {
        return Err(shape_err(
            name,
            format!(
                "only {covered} of the {} elements of input {} are mapped to tiles",
                input.num_elements(),
                tensor_name(graph, input)
            ),
        ));
    }
    let geo = Geometry::new(input.shape(), mask);
    let flat = input.flatten();
    let workers = graph.target().workers_per_tile as usize;
    let grain = data_path_width(input.dtype()) as usize;
    let cs = graph.add_compute_set(&format!("{name}/partials"));
    let mut used = false;
    for (tile, ranges) in by_tile(mapped_regions(graph, input, name)?) {
        let groups = split_between_workers(&ranges, workers, grain, 2 * grain);
        // The worker vertices' regions, then one variable for the tile's partials.
        let mut vertices: Vec<Vec<Region>> = Vec::new();
        for group in groups {
            let mut regions: Vec<Region> = Vec::new();
            let mut index: HashMap<(usize, usize), usize> = HashMap::new();
            for r in group {
                let mut f = r.start;
                while f < r.end {
                    let (o, len, n) = geo.piece(f, r.end);
                    let k = *index.entry((o, len)).or_insert_with(|| {
                        regions.push(Region {
                            o,
                            len,
                            parts: Vec::new(),
                        });
                        regions.len() - 1
                    });
                    regions[k].parts.push(flat.slice(f..f + n)?);
                    f += n;
                }
            }
            vertices.push(regions);
        }
        // A worker piece with nothing to reduce (each output from one run of its own length,
        // read as it is) needs no vertex: the next stage reads the input itself.
        let copies = op != Operation::SquareAdd && input.dtype() == types.acc;
        let (plain, work): (Vec<_>, Vec<_>) = vertices.into_iter().partition(|regions| {
            copies
                && regions
                    .iter()
                    .all(|r| r.parts.len() == 1 && r.parts[0].num_elements() == r.len)
        });
        let before = partials.len();
        partials.extend(plain.into_iter().flatten());
        tiles.resize(tiles.len() + partials.len() - before, tile);
        if work.is_empty() {
            continue;
        }
        let total: usize = work.iter().flatten().map(|r| r.len).sum();
        let var = graph.add_variable(types.acc, &[total], &format!("{name}/partials"));
        graph.set_tile_mapping(&var, tile)?;
        let mut at = 0;
        for regions in work {
            let n: usize = regions.iter().map(|r| r.len).sum();
            let dst = var.slice(at..at + n)?;
            add_reduce_vertex(
                graph,
                cs,
                &types.first,
                op,
                (input.dtype(), types.acc),
                &regions,
                &dst,
                (1.0, false),
                tile,
            )?;
            used = true;
            for r in regions {
                partials.push(Region {
                    o: r.o,
                    len: r.len,
                    parts: vec![var.slice(at..at + r.len)?],
                });
                tiles.push(tile);
                at += r.len;
            }
        }
    }
    if used {
        prog.push(Program::execute(cs));
    }
    Ok((partials, tiles))
}

/// Stage 2: on each output tile, split between its workers, the partials of each output
/// element reduced, scaled and written.
#[allow(clippy::too_many_arguments)] // the plan's pieces
fn second_stage(
    graph: &mut Graph,
    out: &Tensor,
    out_regions: Vec<(TileId, Range<usize>)>,
    partials: &[Region],
    types: &Types,
    params: ReduceParams,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(), OpError> {
    // Elementary intervals of the output: between any two boundaries of partial regions.
    let n = out.num_elements();
    let mut bounds: Vec<usize> = partials.iter().flat_map(|p| [p.o, p.o + p.len]).collect();
    bounds.extend([0, n]);
    bounds.sort_unstable();
    bounds.dedup();
    let mut cover: Vec<Vec<usize>> = vec![Vec::new(); bounds.len() - 1];
    for (k, p) in partials.iter().enumerate() {
        let first = bounds.partition_point(|&b| b <= p.o) - 1;
        let mut i = first;
        while i < cover.len() && bounds[i] < p.o + p.len {
            cover[i].push(k);
            i += 1;
        }
    }
    let flat = out.flatten();
    let workers = graph.target().workers_per_tile as usize;
    let grain = data_path_width(out.dtype()) as usize;
    let op = params.op.of_partials();
    let cs = graph.add_compute_set(&format!("{name}/final"));
    let mut mid_cs = None;
    for (tile, ranges) in by_tile(out_regions) {
        let groups = split_between_workers(&ranges, workers, grain, grain);
        let split = workers / groups.len().max(1);
        for group in groups {
            let mut regions = Vec::new();
            let mut dst = Vec::new();
            for r in group {
                let mut i = bounds.partition_point(|&b| b <= r.start) - 1;
                let mut s = r.start;
                while s < r.end {
                    let e = bounds[i + 1].min(r.end);
                    let mut parts = Vec::new();
                    for &k in &cover[i] {
                        let p = &partials[k];
                        parts.push(p.parts[0].slice(s - p.o..e - p.o)?);
                    }
                    regions.push(Region {
                        o: s,
                        len: e - s,
                        parts,
                    });
                    dst.push(flat.slice(s..e)?);
                    s = e;
                    i += 1;
                }
            }
            let fewest = regions.iter().map(|r| r.parts.len()).min().unwrap_or(0);
            if split >= 2 && fewest >= 2 * split {
                let cs_mid = *mid_cs
                    .get_or_insert_with(|| graph.add_compute_set(&format!("{name}/intermediate")));
                intermediate(graph, cs_mid, types, op, &mut regions, split, tile, name)?;
            }
            let dst = Tensor::concat(&dst)?;
            add_reduce_vertex(
                graph,
                cs,
                &types.last,
                op,
                (types.acc, out.dtype()),
                &regions,
                &dst,
                (params.scale, params.update),
                tile,
            )?;
        }
    }
    if let Some(m) = mid_cs {
        prog.push(Program::execute(m));
    }
    prog.push(Program::execute(cs));
    Ok(())
}

/// The intermediate stage of one final vertex whose tile has idle workers (fewer output
/// groups than workers) and many partials per output: `split` vertices on `tile` each reduce
/// the `j`-th contiguous run of every region's partials into a new variable
/// `"{name}/intermediate"`; `regions` is left reading those `split` results, in run order.
#[allow(clippy::too_many_arguments)] // the plan's pieces
fn intermediate(
    graph: &mut Graph,
    cs: poplar_compiler::graph::ComputeSet,
    types: &Types,
    op: Operation,
    regions: &mut [Region],
    split: usize,
    tile: TileId,
    name: &str,
) -> Result<(), OpError> {
    let total: usize = regions.iter().map(|r| r.len).sum();
    let var = graph.add_variable(types.acc, &[split * total], &format!("{name}/intermediate"));
    graph.set_tile_mapping(&var, tile)?;
    let mut next: Vec<Vec<Tensor>> = vec![Vec::new(); regions.len()];
    for j in 0..split {
        let mid: Vec<Region> = regions
            .iter()
            .map(|r| {
                let n = r.parts.len();
                Region {
                    o: r.o,
                    len: r.len,
                    parts: r.parts[j * n / split..(j + 1) * n / split].to_vec(),
                }
            })
            .collect();
        let dst = var.slice(j * total..(j + 1) * total)?;
        add_reduce_vertex(
            graph,
            cs,
            &types.mid,
            op,
            (types.acc, types.acc),
            &mid,
            &dst,
            (1.0, false),
            tile,
        )?;
        let mut at = j * total;
        for (k, r) in regions.iter().enumerate() {
            next[k].push(var.slice(at..at + r.len)?);
            at += r.len;
        }
    }
    for (r, parts) in regions.iter_mut().zip(next) {
        r.parts = parts;
    }
    Ok(())
}
