//! Data movement at offsets held in device memory, in the style of popops' `DynamicSlice.hpp`:
//! [`dynamic_slice`] / [`dynamic_update`] (a slab at a device offset per sliced dimension) and
//! [`multi_slice`] / [`multi_update`] / [`multi_update_add`] (rows of a table at a list of
//! device indices: embedding lookups and their gradients), with the table spread over tiles
//! by a [`SlicePlan`] ([`plan_multi_slice`], [`create_sliceable_tensor`]).
//!
//! **Out-of-range offsets**, as poplibs documents them: a dynamic slice of `size` rows at an
//! offset `o < dim` takes rows `o, o + 1, …` modulo `dim` (poplibs' `DynamicSlice2D` wraps);
//! an offset `≥ dim` is taken as 0 with [`SliceOptions::remap_out_of_bound_indices`], and
//! otherwise gives a slice of zeros (poplibs leaves that output undefined) and an update that
//! writes nothing. A multi-slice index `≥ rows` gives a row of zeros (poplibs' `multiSlice`
//! with host indices documents zeros) and multi-updates ignore it (poplibs: "offsets\[i\] >=
//! t.dim(0) are ignored"); with `remap_out_of_bound_indices` it is taken as 0. Equal indices
//! of a multi-update are applied in index order (the last write wins; adds accumulate in
//! order).
//!
//! ```
//! use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
//! use popops::slice::{create_sliceable_tensor, multi_slice, plan_multi_slice};
//!
//! codelets::link();
//! let target = Target::custom(8, 64 * 1024);
//! let mut graph = Graph::new(&target);
//! let plan = plan_multi_slice(&target, DType::F32, 100, 16, 3);
//! let table = create_sliceable_tensor(&mut graph, DType::F32, 100, 16, &plan, "table")?;
//! let data: Vec<f32> = (0..1600).map(|i| i as f32).collect();
//! graph.set_initial_value(&table, &data)?;
//! let idx = graph.add_constant(&[3], &[7u32, 0, 99], "idx")?;
//! graph.set_tile_mapping(&idx, 0)?;
//! let mut prog = Vec::new();
//! let rows = multi_slice(&mut graph, &table, &idx, &plan, &Default::default(), &mut prog, "lookup")?;
//! graph.create_host_read("rows", &rows)?;
//! let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
//! let mut engine = Engine::new(&exe, EngineOptions::default())?;
//! engine.run(0)?;
//! let got = engine.read_tensor::<f32>("rows")?;
//! assert_eq!(&got[..16], &data[7 * 16..8 * 16]);
//! assert_eq!(&got[32..], &data[99 * 16..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ops::Range;

use codelets::slice::cost;
use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{ComputeSet, Graph, Tensor};
use poplar_core::dtype::DType;
use poplar_core::target::{Target, TileId};

use crate::error::shape_err;
use crate::{codelet_name, mapped_regions, split_between_workers, OpError};

/// Options of the dynamic and multi slices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SliceOptions {
    /// Take an out-of-range offset or index as 0 (poplibs' `remapOutOfBoundIndices`).
    pub remap_out_of_bound_indices: bool,
}

fn check_offsets(t: &Tensor, n: usize, what: &str, op: &str) -> Result<(), OpError> {
    if t.dtype() != DType::U32 || t.num_elements() != n {
        return Err(shape_err(
            op,
            format!(
                "'{what}' must be {n} elements of u32, got {}{:?}",
                t.dtype(),
                t.shape()
            ),
        ));
    }
    Ok(())
}

/// `t` viewed as `[dim d, everything else]` (dimension `d` moved to the front).
fn rows_view(t: &Tensor, d: usize) -> Result<Tensor, OpError> {
    let shape = t.shape();
    let rows = shape[d];
    let cols = t.num_elements().checked_div(rows).unwrap_or(0);
    let moved = if d == 0 {
        t.clone()
    } else {
        let mut perm = vec![d];
        perm.extend((0..shape.len()).filter(|&k| k != d));
        t.dim_shuffle(&perm)?
    };
    Ok(moved.reshape(&[rows, cols])?)
}

/// The column pieces of `view` (`[rows, cols]`) that vertices take: the tile mapping of its
/// first row, each tile's columns split between its workers.
fn column_pieces(
    graph: &Graph,
    view: &Tensor,
    op: &str,
) -> Result<Vec<(TileId, Range<usize>)>, OpError> {
    if view.shape()[0] == 0 || view.shape()[1] == 0 {
        return Ok(Vec::new());
    }
    let first = view.index(0)?;
    let workers = graph.target().workers_per_tile as usize;
    let grain = codelets::cycles::data_path_width(view.dtype()) as usize;
    let mut out = Vec::new();
    for (tile, r) in mapped_regions(graph, &first, op)? {
        for group in split_between_workers(&[r], workers, grain, 2 * grain) {
            out.extend(group.into_iter().map(|r| (tile, r)));
        }
    }
    Ok(out)
}

/// One dimension of a dynamic slice or update, as a compute set.
struct Step<'a> {
    t: &'a Tensor,
    offset: Tensor,
    dim: usize,
    remap: bool,
}

fn slice_step(
    graph: &mut Graph,
    cs: ComputeSet,
    s: &Step<'_>,
    size: usize,
    name: &str,
) -> Result<Tensor, OpError> {
    let codelet = codelet_name("DynamicSlice", s.t.dtype())?;
    let mut shape = s.t.shape().to_vec();
    let rows = shape[s.dim];
    shape[s.dim] = size;
    let out = graph.add_variable(s.t.dtype(), &shape, name);
    let tv = rows_view(s.t, s.dim)?;
    let ov = rows_view(&out, s.dim)?;
    for (tile, cols) in column_pieces(graph, &tv, &codelet)? {
        let o = ov.slice_dim(1, cols.clone())?;
        graph.set_tile_mapping(&o, tile)?;
        if size == 0 {
            continue;
        }
        let v = graph.add_vertex(cs, &codelet)?;
        graph.connect(v, "offset", &s.offset)?;
        graph.connect(v, "input", &tv.slice_dim(1, cols.clone())?)?;
        graph.connect(v, "out", &o)?;
        graph.set_vertex_state(v, "num_base", rows as u32)?;
        graph.set_vertex_state(v, "num_sub", size as u32)?;
        graph.set_vertex_state(v, "remap", s.remap)?;
        let c = cost::dynamic_slice(s.t.dtype(), size as u64, cols.len() as u64, false);
        graph.set_cycle_estimate(v, c)?;
        graph.set_tile_mapping(v, tile)?;
    }
    Ok(out)
}

fn update_step(
    graph: &mut Graph,
    cs: ComputeSet,
    s: &Step<'_>,
    slab: &Tensor,
) -> Result<(), OpError> {
    let codelet = codelet_name("DynamicUpdateSlice", s.t.dtype())?;
    let rows = s.t.shape()[s.dim];
    let size = slab.shape()[s.dim];
    let tv = rows_view(s.t, s.dim)?;
    let sv = rows_view(slab, s.dim)?;
    if size == 0 {
        return Ok(());
    }
    for (tile, cols) in column_pieces(graph, &tv, &codelet)? {
        let v = graph.add_vertex(cs, &codelet)?;
        graph.connect(v, "offset", &s.offset)?;
        graph.connect(v, "a", &tv.slice_dim(1, cols.clone())?)?;
        graph.connect(v, "slices", &sv.slice_dim(1, cols.clone())?)?;
        graph.set_vertex_state(v, "num_base", rows as u32)?;
        graph.set_vertex_state(v, "num_sub", size as u32)?;
        graph.set_vertex_state(v, "remap", s.remap)?;
        let c = cost::dynamic_slice(s.t.dtype(), size as u64, cols.len() as u64, true);
        graph.set_cycle_estimate(v, c)?;
        graph.set_tile_mapping(v, tile)?;
    }
    Ok(())
}

fn check_dims(
    t: &Tensor,
    offset: &Tensor,
    dims: &[usize],
    sizes: &[usize],
    op: &str,
) -> Result<(), OpError> {
    if dims.len() != sizes.len() || dims.is_empty() {
        return Err(shape_err(
            op,
            format!("'dims' ({dims:?}) and 'sizes' ({sizes:?}) must be equally long and not empty"),
        ));
    }
    check_offsets(offset, dims.len(), "offset", op)?;
    for (k, (&d, &size)) in dims.iter().zip(sizes).enumerate() {
        if d >= t.rank() || dims[..k].contains(&d) {
            return Err(shape_err(
                op,
                format!(
                    "dimension {d} of 'dims' is repeated or not below the rank {} of 't'",
                    t.rank()
                ),
            ));
        }
        if size > t.shape()[d] {
            return Err(shape_err(
                op,
                format!(
                    "size {size} of dimension {d} is above its length {}",
                    t.shape()[d]
                ),
            ));
        }
    }
    Ok(())
}

/// The slab of `t` of `sizes[k]` elements of dimension `dims[k]` from device offset
/// `offset[k]` (a `u32` tensor of `dims.len()` elements), for every `k` (poplibs'
/// `dynamicSlice`): a new tensor of `t`'s shape with `sizes` in `dims`, mapped as `t`'s first
/// slab. One compute set per sliced dimension (`"{name}/d{dim}"`), one `DynamicSlice<T>`
/// vertex per worker piece of `t`'s columns; offsets wrap or are out of range as the
/// [module notes](self) say. `T` is `f32`, `f16`, `i32` or `u32`.
#[allow(clippy::too_many_arguments)] // poplibs' signature
pub fn dynamic_slice(
    graph: &mut Graph,
    t: &Tensor,
    offset: &Tensor,
    dims: &[usize],
    sizes: &[usize],
    options: &SliceOptions,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    check_dims(t, offset, dims, sizes, "dynamic_slice")?;
    let flat = offset.flatten();
    let mut cur = t.clone();
    for (k, (&d, &size)) in dims.iter().zip(sizes).enumerate() {
        let cs = graph.add_compute_set(&format!("{name}/d{d}"));
        let step = Step {
            t: &cur,
            offset: flat.slice(k..k + 1)?,
            dim: d,
            remap: options.remap_out_of_bound_indices,
        };
        cur = slice_step(graph, cs, &step, size, &format!("{name}/d{d}"))?;
        prog.push(Program::execute(cs));
    }
    Ok(cur)
}

/// Writes `s` into `t` at device offsets `offset[k]` of dimensions `dims[k]` (poplibs'
/// `dynamicUpdate`; `s` has `t`'s shape with `sizes` in `dims`). With several dimensions the
/// outer slabs are sliced out, updated and written back (poplibs' way), so wrapping and
/// out-of-range offsets behave as in [`dynamic_slice`]: an out-of-range offset without remapping
/// writes nothing.
#[allow(clippy::too_many_arguments)] // poplibs' signature
pub fn dynamic_update(
    graph: &mut Graph,
    t: &Tensor,
    s: &Tensor,
    offset: &Tensor,
    dims: &[usize],
    sizes: &[usize],
    options: &SliceOptions,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(), OpError> {
    let op = "dynamic_update";
    check_dims(t, offset, dims, sizes, op)?;
    let mut want = t.shape().to_vec();
    for (&d, &size) in dims.iter().zip(sizes) {
        want[d] = size;
    }
    if s.shape() != want.as_slice() || s.dtype() != t.dtype() {
        return Err(shape_err(
            op,
            format!(
                "'s' is {}{:?} but must be {}{want:?}",
                s.dtype(),
                s.shape(),
                t.dtype()
            ),
        ));
    }
    let flat = offset.flatten();
    let remap = options.remap_out_of_bound_indices;
    // The outer slabs, sliced out in order.
    let mut slabs = vec![t.clone()];
    for (k, (&d, &size)) in dims.iter().zip(sizes).enumerate().take(dims.len() - 1) {
        let cs = graph.add_compute_set(&format!("{name}/slice_d{d}"));
        let step = Step {
            t: slabs.last().expect("a slab"),
            offset: flat.slice(k..k + 1)?,
            dim: d,
            remap,
        };
        let slab = slice_step(graph, cs, &step, size, &format!("{name}/slab_d{d}"))?;
        prog.push(Program::execute(cs));
        slabs.push(slab);
    }
    // Update the innermost with `s`, then each slab into the one it came from.
    let mut src = s.clone();
    for k in (0..dims.len()).rev() {
        let cs = graph.add_compute_set(&format!("{name}/update_d{}", dims[k]));
        let step = Step {
            t: &slabs[k],
            offset: flat.slice(k..k + 1)?,
            dim: dims[k],
            remap,
        };
        update_step(graph, cs, &step, &src)?;
        prog.push(Program::execute(cs));
        src = slabs[k].clone();
    }
    Ok(())
}

/// How [`multi_slice`] and the multi-updates spread a `[rows, cols]` table over tiles, after
/// poplibs' `SlicePlan` (`slicedDimSplit`, `unslicedDimSplit`; no lookup or group split):
/// blocks of `ceil(rows / sliced_split)` rows × `ceil(cols / unsliced_split)` columns, block
/// `(s, h)` on tile `start_tile + s · unsliced_split + h` (modulo the tiles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlicePlan {
    /// Splits of the rows (the sliced dimension). Above 1, a slice takes two stages: every
    /// block slices every index into its own partial (zeros where it does not hold the row),
    /// then `MultiSliceSelect` picks each index's row from the partial of its block.
    pub sliced_split: usize,
    /// Splits of the columns (the embedding dimension).
    pub unsliced_split: usize,
    /// The first tile.
    pub start_tile: u32,
}

impl SlicePlan {
    /// The plan of one block on tile 0.
    pub const fn single() -> SlicePlan {
        SlicePlan {
            sliced_split: 1,
            unsliced_split: 1,
            start_tile: 0,
        }
    }

    /// Rows per row split and the number of non-empty row splits.
    fn row_blocks(&self, rows: usize) -> (usize, usize) {
        let per = rows.div_ceil(self.sliced_split.max(1)).max(1);
        (per, rows.div_ceil(per))
    }

    /// Columns per column split and the number of non-empty column splits.
    fn col_blocks(&self, cols: usize) -> (usize, usize) {
        let per = cols.div_ceil(self.unsliced_split.max(1)).max(1);
        (per, cols.div_ceil(per))
    }

    fn tile(&self, target: &Target, s: usize, h: usize, splits_h: usize) -> TileId {
        let n = target.num_tiles() as usize;
        TileId::new(((self.start_tile as usize + s * splits_h + h) % n) as u32)
    }
}

/// The modelled tile cycles of a multi-slice of `n` indices under a plan of `splits_s × splits_h`
/// blocks of `rs × ch` (the planner's objective): stage 0, every index on every block
/// (`MultiSlice`, split over the workers) after receiving the indices; with `splits_s > 1`,
/// stage 1 (`MultiSliceSelect` of `ceil(n / splits_s)` indices per block) after receiving its
/// partials. Exchange at the target's bytes per cycle, plus a sync per exchange.
fn plan_cycles(target: &Target, dtype: DType, n: usize, splits_s: usize, ch: usize) -> u64 {
    let w = u64::from(target.workers_per_tile.max(1));
    let bytes = dtype.size() as u64;
    let rate = u64::from(target.exchange_bytes_per_cycle.max(1));
    let sync = u64::from(target.internal_sync_cycles);
    let (n, ch) = (n as u64, ch as u64);
    let stage0 =
        w * cost::multi_slice(dtype, ch, n.div_ceil(w), false) + (4 * n).div_ceil(rate) + sync;
    if splits_s <= 1 {
        return stage0;
    }
    let nc = n.div_ceil(splits_s as u64);
    let received = splits_s as u64 * nc * ch * bytes;
    stage0
        + w * cost::multi_slice(dtype, ch, nc.div_ceil(w), false)
        + received.div_ceil(rate)
        + sync
}

/// The planner's modelled tile cycles of a [`multi_slice`] of `num_indices` rows from a
/// `[rows, cols]` table under `plan` (compute of both stages, exchange of the indices and the
/// partials, a sync per exchange), for comparison with a profile.
pub fn estimate_multi_slice(
    target: &Target,
    dtype: DType,
    plan: &SlicePlan,
    rows: usize,
    cols: usize,
    num_indices: usize,
) -> u64 {
    let (_, ns) = plan.row_blocks(rows);
    let (ch, _) = plan.col_blocks(cols);
    plan_cycles(target, dtype, num_indices, ns, ch)
}

/// Bytes a tile of the plan holds during a multi-slice: its block, the indices, and its
/// partial and stage-1 buffers (or its share of the output).
fn plan_bytes(dtype: DType, n: usize, splits_s: usize, rs: usize, ch: usize) -> usize {
    let b = dtype.size();
    let block = rs * ch * b;
    let stage = if splits_s > 1 {
        let nc = n.div_ceil(splits_s);
        n * ch * b + (splits_s + 1) * nc * ch * b
    } else {
        n * ch * b
    };
    block + 4 * n + stage
}

/// A plan for [`multi_slice`] of `num_indices` rows from a `[rows, cols]` table of `dtype`
/// (poplibs' `popops::plan`, at a high level): of the splits whose blocks, indices and
/// buffers fit in half a tile's memory, the one of fewest modelled cycles (stage 0 on every
/// block, stage 1 when rows are split, and their exchanges), and of equal cycles the one on
/// fewer tiles. When nothing fits, the plan of least memory per tile.
pub fn plan_multi_slice(
    target: &Target,
    dtype: DType,
    rows: usize,
    cols: usize,
    num_indices: usize,
) -> SlicePlan {
    let tiles = target.num_tiles() as usize;
    let budget = target.bytes_per_tile as usize / 2;
    let n = num_indices.max(1);
    let mut best: Option<(u64, usize, SlicePlan)> = None;
    let mut least: Option<(usize, SlicePlan)> = None;
    let mut ch = cols.max(1);
    loop {
        let splits_h = cols.max(1).div_ceil(ch);
        if splits_h > tiles {
            break;
        }
        let mut s = 1;
        while s <= rows.max(1) && s * splits_h <= tiles {
            let rs = rows.max(1).div_ceil(s);
            let splits_s = rows.max(1).div_ceil(rs);
            if splits_s == s {
                let plan = SlicePlan {
                    sliced_split: s,
                    unsliced_split: splits_h,
                    start_tile: 0,
                };
                let bytes = plan_bytes(dtype, n, s, rs, ch);
                if least.is_none_or(|(b, _)| bytes < b) {
                    least = Some((bytes, plan));
                }
                if bytes <= budget {
                    let c = plan_cycles(target, dtype, n, s, ch);
                    let used = s * splits_h;
                    if best.is_none_or(|(bc, bu, _)| (c, used) < (bc, bu)) {
                        best = Some((c, used, plan));
                    }
                }
            }
            s += 1;
        }
        if ch == 1 {
            break;
        }
        // The next column split that changes the block width.
        let next = cols.div_ceil(splits_h + 1);
        ch = next.min(ch - 1).max(1);
    }
    best.map(|b| b.2)
        .or(least.map(|l| l.1))
        .unwrap_or(SlicePlan::single())
}

/// A new variable stored block-major for column blocks of `ch` (`[lead, H, m, ch]`, the last
/// block padded), and its `[lead, m, cols]` view. Each `(lead, block)` is contiguous in the
/// variable, so the views of whole column blocks are one region each (a row-major variable
/// would need one region per row of every block).
fn column_blocked(
    graph: &mut Graph,
    dtype: DType,
    lead: usize,
    m: usize,
    cols: usize,
    ch: usize,
    name: &str,
) -> Result<(Tensor, Tensor), OpError> {
    let h = cols.div_ceil(ch.max(1)).max(1);
    if h == 1 {
        let t = graph.add_variable(dtype, &[lead, 1, m, cols], name);
        let view = t.reshape(&[lead, m, cols])?;
        return Ok((t, view));
    }
    let t = graph.add_variable(dtype, &[lead, h, m, ch], name);
    let view = t
        .dim_shuffle(&[0, 2, 1, 3])?
        .reshape(&[lead, m, h * ch])?
        .slice_dim(2, 0..cols)?;
    Ok((t, view))
}

/// A new `[rows, cols]` tensor of `dtype` mapped as `plan` places its blocks (poplibs'
/// `createSliceableTensor`): stored block by block, so that each block is contiguous on its
/// tile (its variable is `[1, column splits, rows, block columns]`, the last column block
/// padded when the splits do not divide the columns).
pub fn create_sliceable_tensor(
    graph: &mut Graph,
    dtype: DType,
    rows: usize,
    cols: usize,
    plan: &SlicePlan,
    name: &str,
) -> Result<Tensor, OpError> {
    let (ch, _) = plan.col_blocks(cols);
    let (storage, view) = column_blocked(graph, dtype, 1, rows, cols, ch, name)?;
    for (_, h, rr, _, tile) in blocks(graph.target(), plan, rows, cols) {
        graph.set_tile_mapping(&storage.index(0)?.index(h)?.slice(rr)?, tile)?;
    }
    Ok(view.reshape(&[rows, cols])?)
}

/// A block of a plan: its row split `s`, column split `h`, rows, columns and tile.
type Block = (usize, usize, Range<usize>, Range<usize>, TileId);

/// The plan's non-empty blocks.
fn blocks(target: &Target, plan: &SlicePlan, rows: usize, cols: usize) -> Vec<Block> {
    let (rs, ns) = plan.row_blocks(rows);
    let (ch, nh) = plan.col_blocks(cols);
    let mut out = Vec::new();
    for s in 0..ns {
        for h in 0..nh {
            let rr = s * rs..((s + 1) * rs).min(rows);
            let cr = h * ch..((h + 1) * ch).min(cols);
            out.push((s, h, rr, cr, plan.tile(target, s, h, nh)));
        }
    }
    out
}

/// `t` as `[rows, cols]` and the checks shared by the multi-slices.
fn table_view(t: &Tensor, offsets: &Tensor, op: &str) -> Result<Tensor, OpError> {
    if t.rank() == 0 || t.shape()[0] == 0 {
        return Err(shape_err(
            op,
            format!("the table 't' {:?} has no rows", t.shape()),
        ));
    }
    if offsets.dtype() != DType::U32 || offsets.rank() != 1 {
        return Err(shape_err(
            op,
            format!(
                "'offsets' must be a vector of u32, got {}{:?}",
                offsets.dtype(),
                offsets.shape()
            ),
        ));
    }
    rows_view(t, 0)
}

/// The indices as the vertices take them: `offsets`, or with remapping a copy (mapped as
/// `offsets`, compute set `"{name}/remap"` of `RemapIndices<unsigned>`) in which every index
/// `≥ rows` is 0.
fn indices(
    graph: &mut Graph,
    offsets: &Tensor,
    rows: usize,
    options: &SliceOptions,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    let flat = offsets.flatten();
    if !options.remap_out_of_bound_indices || flat.num_elements() == 0 {
        return Ok(flat);
    }
    let codelet = codelet_name("RemapIndices", DType::U32)?;
    let out = graph.add_variable(
        DType::U32,
        &[flat.num_elements()],
        &format!("{name}/indices"),
    );
    for (tile, r) in mapped_regions(graph, &flat, &codelet)? {
        graph.set_tile_mapping(&out.slice(r)?, tile)?;
    }
    let cs = graph.add_compute_set(&format!("{name}/remap"));
    crate::elementwise(
        graph,
        cs,
        &codelet,
        "out",
        &out,
        &[("input", &flat)],
        &[("num_rows", (rows as u32).into())],
    )?;
    prog.push(Program::execute(cs));
    Ok(out)
}

/// The rows of `t` (`[rows, …]`, viewed as `[rows, cols]`) at the device indices `offsets`
/// (a `u32` vector of `n`): a new `[n, …]` tensor (poplibs' `multiSlice`, `dims = {0}`,
/// `sizes = {1}`). Each block of `plan` slices every index on its tile (`t` is read where it
/// lives: a table created by [`create_sliceable_tensor`] with the same plan needs no
/// exchange); with rows split a second compute set picks each index's row. An index `≥ rows`
/// gives zeros (or row 0 with remapping). `T` is `f32`, `f16`, `i32` or `u32`.
#[allow(clippy::too_many_arguments)] // poplibs' signature
pub fn multi_slice(
    graph: &mut Graph,
    t: &Tensor,
    offsets: &Tensor,
    plan: &SlicePlan,
    options: &SliceOptions,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    let op = "multi_slice";
    let tv = table_view(t, offsets, op)?;
    let codelet = codelet_name("MultiSlice", t.dtype())?;
    let select = codelet_name("MultiSliceSelect", t.dtype())?;
    let (rows, cols) = (tv.shape()[0], tv.shape()[1]);
    let n = offsets.num_elements();
    let mut shape = t.shape().to_vec();
    shape[0] = n;
    let target = graph.target().clone();
    let blocks = blocks(&target, plan, rows, cols);
    let (rs, ns) = plan.row_blocks(rows);
    let (ch, _) = plan.col_blocks(cols);
    let (out_store, ov) = column_blocked(graph, t.dtype(), 1, n, cols, ch, name)?;
    let ov = ov.reshape(&[n, cols])?;
    let out = ov.reshape(&shape)?;
    if n == 0 || cols == 0 {
        for (_, h, _, _, tile) in &blocks {
            graph.set_tile_mapping(&out_store.index(0)?.index(*h)?, *tile)?;
        }
        return Ok(out);
    }
    let idx = indices(graph, offsets, rows, options, prog, name)?;
    let partials = if ns > 1 {
        Some(column_blocked(
            graph,
            t.dtype(),
            ns,
            n,
            cols,
            ch,
            &format!("{name}/partials"),
        )?)
    } else {
        None
    };
    let cs0 = graph.add_compute_set(&format!("{name}/stage0"));
    for (s, h, rr, cr, tile) in &blocks {
        let dst = match &partials {
            Some((store, view)) => {
                graph.set_tile_mapping(&store.index(*s)?.index(*h)?, *tile)?;
                view.index(*s)?.slice_dim(1, cr.clone())?
            }
            None => {
                graph.set_tile_mapping(&out_store.index(0)?.index(*h)?, *tile)?;
                ov.slice_dim(1, cr.clone())?
            }
        };
        let v = graph.add_vertex(cs0, &codelet)?;
        graph.connect(v, "offsets", &idx)?;
        graph.connect(v, "input", &tv.slice_dim(1, cr.clone())?.slice(rr.clone())?)?;
        graph.connect(v, "out", &dst)?;
        graph.set_vertex_state(v, "base_offset", rr.start as u32)?;
        graph.set_vertex_state(v, "num_base", rr.len() as u32)?;
        graph.set_tile_mapping(v, *tile)?;
    }
    prog.push(Program::execute(cs0));
    let Some((_, p)) = partials else {
        return Ok(out);
    };
    // Stage 1: block (s, h) picks the rows of index chunk s, columns h.
    let nc = n.div_ceil(ns);
    let cs1 = graph.add_compute_set(&format!("{name}/stage1"));
    for (s, h, _, cr, tile) in &blocks {
        let ir = (s * nc).min(n)..((s + 1) * nc).min(n);
        graph.set_tile_mapping(&out_store.index(0)?.index(*h)?.slice(ir.clone())?, *tile)?;
        if ir.is_empty() {
            continue;
        }
        let dst = ov.slice_dim(1, cr.clone())?.slice(ir.clone())?;
        let v = graph.add_vertex(cs1, &select)?;
        graph.connect(v, "offsets", &idx.slice(ir.clone())?)?;
        graph.connect(
            v,
            "partials",
            &p.slice_dim(2, cr.clone())?.slice_dim(1, ir.clone())?,
        )?;
        graph.connect(v, "out", &dst)?;
        graph.set_vertex_state(v, "rows_per_split", rs as u32)?;
        graph.set_vertex_state(v, "num_rows", rows as u32)?;
        graph.set_tile_mapping(v, *tile)?;
    }
    prog.push(Program::execute(cs1));
    Ok(out)
}

/// The update shared by [`multi_update`] and [`multi_update_add`].
#[allow(clippy::too_many_arguments)] // the update's parts
fn update(
    graph: &mut Graph,
    kind: &str,
    t: &Tensor,
    s: &Tensor,
    offsets: &Tensor,
    scale: Option<&Tensor>,
    plan: &SlicePlan,
    options: &SliceOptions,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(), OpError> {
    let tv = table_view(t, offsets, kind)?;
    let codelet = codelet_name(kind, t.dtype())?;
    let (rows, cols) = (tv.shape()[0], tv.shape()[1]);
    let n = offsets.num_elements();
    let mut want = t.shape().to_vec();
    want[0] = n;
    if s.shape() != want.as_slice() || s.dtype() != t.dtype() {
        return Err(shape_err(
            kind,
            format!(
                "'s' is {}{:?} but must be {}{want:?}",
                s.dtype(),
                s.shape(),
                t.dtype()
            ),
        ));
    }
    if let Some(scale) = scale {
        let want = if t.dtype() == DType::I32 {
            DType::I32
        } else {
            DType::F32
        };
        if scale.dtype() != want || scale.num_elements() != 1 {
            return Err(shape_err(
                kind,
                format!(
                    "'scale' must be one element of {want}, got {}{:?}",
                    scale.dtype(),
                    scale.shape()
                ),
            ));
        }
    }
    if n == 0 || cols == 0 {
        return Ok(());
    }
    let sv = s.reshape(&[n, cols])?;
    let idx = indices(graph, offsets, rows, options, prog, name)?;
    let target = graph.target().clone();
    let cs = graph.add_compute_set(name);
    for (_, _, rr, cr, tile) in blocks(&target, plan, rows, cols) {
        let v = graph.add_vertex(cs, &codelet)?;
        graph.connect(v, "offsets", &idx)?;
        graph.connect(v, "slices", &sv.slice_dim(1, cr.clone())?)?;
        graph.connect(v, "a", &tv.slice_dim(1, cr)?.slice(rr.clone())?)?;
        if let Some(scale) = scale {
            graph.connect(v, "scale", &scale.flatten())?;
        }
        graph.set_vertex_state(v, "base_offset", rr.start as u32)?;
        graph.set_vertex_state(v, "num_base", rr.len() as u32)?;
        graph.set_tile_mapping(v, tile)?;
    }
    prog.push(Program::execute(cs));
    Ok(())
}

/// Sets the rows of `t` at the device indices `offsets` to the rows of `s` (`[n, …]`;
/// poplibs' `multiUpdate`): one `MultiUpdate<T>` vertex per block of `plan`, equal indices
/// applied in order (the last wins), indices `≥ rows` ignored (row 0 with remapping).
#[allow(clippy::too_many_arguments)] // poplibs' signature
pub fn multi_update(
    graph: &mut Graph,
    t: &Tensor,
    s: &Tensor,
    offsets: &Tensor,
    plan: &SlicePlan,
    options: &SliceOptions,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(), OpError> {
    update(
        graph,
        "MultiUpdate",
        t,
        s,
        offsets,
        None,
        plan,
        options,
        prog,
        name,
    )
}

/// `t[offsets[i]] += scale · s[i]` for every `i`, in order (poplibs' `multiUpdateAdd`: the
/// gradient of an embedding lookup): `scale` one element of `f32` (`i32` for an `i32` table),
/// in device memory; `f16` tables add in f32 and round once per add; indices `≥ rows` are
/// ignored. `T` is `f32`, `f16` or `i32`.
#[allow(clippy::too_many_arguments)] // poplibs' signature
pub fn multi_update_add(
    graph: &mut Graph,
    t: &Tensor,
    s: &Tensor,
    offsets: &Tensor,
    scale: &Tensor,
    plan: &SlicePlan,
    options: &SliceOptions,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(), OpError> {
    update(
        graph,
        "MultiUpdateAdd",
        t,
        s,
        offsets,
        Some(scale),
        plan,
        options,
        prog,
        name,
    )
}
