//! Scans and index reductions along one axis: [`cumsum`], [`arg_max`], [`arg_min`].
//!
//! The input is read as *lines* along `axis` (every index of the other axes gives one line).
//!
//! **Whole lines.** A line shorter than [`CROSS_TILE_MIN_LINE`] elements, or held by one
//! tile, is worked whole, left to right, by one worker on the tile that holds the line's
//! first element (the compiler exchanges the rest of the line in and the results out): the
//! order of a float cumulative sum is exactly sequential. A tile's lines are split between
//! its workers in equal runs. Codelets: `CumSum<T>`, `ArgMax<T>`, `ArgMin<T>`.
//!
//! **Long lines across tiles.** A line of at least [`CROSS_TILE_MIN_LINE`] elements spread
//! over two or more tiles is cut into *segments*: each maximal run of it on one tile, cut
//! again into up to `workers` equal pieces when its tile holds few such runs (about
//! `√n` segments per line in all, which balances the segment work against the carry work on
//! one tile). No element of the line leaves its tile:
//!
//! - `cumsum`: (1) in the line's compute set `name`, each segment's prefix sums from 0
//!   (`CumSum<T>`, on the segment's tile); (2) `"{name}/carries"`: on the tile of the line's
//!   first element, the segments' totals (each segment's last prefix, plus its last element
//!   for an exclusive sum: one or two elements exchanged in per segment) summed left to right
//!   into each segment's carry, the sum of the totals before it (`CumSumCarries<T>`); (3)
//!   `"{name}/add_carries"`: each segment but the first adds its carry (`AddCarry<T>`, one
//!   element exchanged in). Integers wrap, so the result is exactly the one-tile result. A
//!   float `out[j]` in segment `s` is `fl(local_j + carry_s)`: `local_j` the left-to-right
//!   sum of the segment's elements up to `j`, `carry_s` the left-to-right sum of the totals
//!   (each a left-to-right sum) of segments `0..s`; the first segment is exactly the
//!   one-tile result. Each `out[j]` is a sum of its `j + 1` elements in a tree of depth at
//!   most `n`, so `|out[j] − Σ_{k≤j} x_k| ≤ (n + 1)·2⁻²³·Σ_{k≤j}|x_k|` for a line of `n`.
//! - `arg_max`/`arg_min`: (1) in the compute set `name`, each segment's candidate: its first
//!   extreme element (as bits) and its index in the line (`ArgMaxSegment<T>`); (2) `"{name}/combine"`: on the
//!   tile of the line's first element, the first extreme of the candidates in segment order
//!   (`ArgMaxCombine<T>`). The candidates compare by the same rule as the elements (a
//!   segment's best NaN is its first NaN, an earlier segment wins ties), so the index is
//!   exactly the one-tile answer.
//!
//! The segments, and so every grouping and every order, depend only on the shape, the tile
//! mapping and the target's workers: the bits are the same at any engine thread count.
//! Estimates: `codelets::scan::cost` (ours, as poplibs has no scan vertex).

use std::collections::BTreeMap;
use std::ops::Range;

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{ComputeSet, Graph, Tensor};
use poplar_core::dtype::DType;
use poplar_core::target::TileId;

use crate::error::OpError;
use crate::pieces::{codelet_name, mapped_regions};
use crate::reduction::{check_axes, tensor_name};

/// Lines of at least this many elements spread over two or more tiles are scanned across
/// their tiles (module notes). Below it the line's exchange to one tile and one worker's
/// `3·n` cycles cost less than the two extra compute sets and their exchanges (each some
/// hundreds of cycles of sync and exchange set-up).
pub const CROSS_TILE_MIN_LINE: usize = 256;

/// The shortest piece a tile's run of a line is cut into for its workers.
const MIN_PIECE: usize = 32;

/// One segment of a long line: `range` of the line's elements, on `tile`.
struct Segment {
    tile: TileId,
    range: Range<usize>,
}

/// The plan of a scan: the lines worked whole (by tile) and the long lines cut into segments
/// (line, segments in order).
struct LinePlan {
    whole: BTreeMap<TileId, Vec<usize>>,
    cross: Vec<(usize, Vec<Segment>)>,
}

/// Splits the lines of `view` (`[lines, n]`, `n > 0`) into whole lines and long lines across
/// tiles (module notes).
fn plan_lines(graph: &Graph, view: &Tensor, name: &str) -> Result<LinePlan, OpError> {
    let n = view.shape()[1];
    let workers = graph.target().workers_per_tile as usize;
    let mut regions = mapped_regions(graph, view, name)?;
    regions.sort_by_key(|r| r.1.start);
    // Each line's maximal runs on one tile, as ranges of the line.
    let mut runs: Vec<Vec<(TileId, Range<usize>)>> = vec![Vec::new(); view.shape()[0]];
    for (tile, r) in regions {
        let mut at = r.start;
        while at < r.end {
            let (l, j) = (at / n, at % n);
            let end = r.end.min((l + 1) * n);
            let line = &mut runs[l];
            match line.last_mut() {
                Some((t, rr)) if *t == tile && rr.end == j => rr.end = j + end - at,
                _ => line.push((tile, j..j + end - at)),
            }
            at = end;
        }
    }
    let mut plan = LinePlan {
        whole: BTreeMap::new(),
        cross: Vec::new(),
    };
    let long = |line: &Vec<(TileId, Range<usize>)>| n >= CROSS_TILE_MIN_LINE && line.len() >= 2;
    let mut per_tile: BTreeMap<TileId, usize> = BTreeMap::new();
    for line in runs.iter().filter(|l| long(l)) {
        for (t, _) in line {
            *per_tile.entry(*t).or_default() += 1;
        }
    }
    let root = (n as f64).sqrt();
    for (l, line) in runs.into_iter().enumerate() {
        if !long(&line) {
            plan.whole.entry(line[0].0).or_default().push(l);
            continue;
        }
        let want = (root / line.len() as f64).round().max(1.0) as usize;
        let mut segs = Vec::new();
        for (tile, r) in line {
            let k = want
                .min((workers / per_tile[&tile]).max(1))
                .min(r.len().div_ceil(MIN_PIECE))
                .max(1);
            let len = r.len();
            for p in 0..k {
                let range = r.start + p * len / k..r.start + (p + 1) * len / k;
                segs.push(Segment { tile, range });
            }
        }
        plan.cross.push((l, segs));
    }
    Ok(plan)
}

/// `t` as `[lines, n]` along `axis` (the other axes in order, then `axis`).
fn lines_view(t: &Tensor, axis: usize) -> Result<Tensor, OpError> {
    let mut perm: Vec<usize> = (0..t.rank()).filter(|&d| d != axis).collect();
    perm.push(axis);
    let lines = perm[..perm.len() - 1]
        .iter()
        .map(|&d| t.shape()[d])
        .product();
    let n = t.shape()[axis];
    Ok(t.dim_shuffle(&perm)?.reshape(&[lines, n])?)
}

/// One vertex per worker run of each tile's lines: `codelet` over `input` lines (of `view`)
/// into the matching rows of `out` (`[lines, m]`).
#[allow(clippy::too_many_arguments)] // the vertices' fields
fn add_line_vertices(
    graph: &mut Graph,
    cs: ComputeSet,
    codelet: &str,
    view: &Tensor,
    out: &Tensor,
    tiles: BTreeMap<TileId, Vec<usize>>,
    state: &[(&str, poplar_compiler::graph::StateValue)],
) -> Result<(), OpError> {
    let workers = graph.target().workers_per_tile as usize;
    for (tile, lines) in tiles {
        let per = lines.len().div_ceil(workers.max(1));
        for chunk in lines.chunks(per.max(1)) {
            // Runs of consecutive lines.
            let (mut ins, mut outs) = (Vec::new(), Vec::new());
            let mut i = 0;
            while i < chunk.len() {
                let mut j = i + 1;
                while j < chunk.len() && chunk[j] == chunk[j - 1] + 1 {
                    j += 1;
                }
                ins.push(view.slice(chunk[i]..chunk[j - 1] + 1)?.flatten());
                outs.push(out.slice(chunk[i]..chunk[j - 1] + 1)?.flatten());
                i = j;
            }
            let v = graph.add_vertex(cs, codelet)?;
            graph.connect(v, "input", &Tensor::concat(&ins)?)?;
            graph.connect(v, "out", &Tensor::concat(&outs)?)?;
            for (field, value) in state {
                graph.set_vertex_state(v, field, value.clone())?;
            }
            graph.set_tile_mapping(v, tile)?;
        }
    }
    Ok(())
}

/// The stages (1) to (3) of a cross-tile cumulative sum of the long lines `cross` (module
/// notes): segment vertices in `cs`, and the programs of the carries and their addition.
#[allow(clippy::too_many_arguments)] // the plan's pieces
fn cross_cumsum(
    graph: &mut Graph,
    cs: ComputeSet,
    view: &Tensor,
    out_view: &Tensor,
    cross: &[(usize, Vec<Segment>)],
    exclusive: bool,
    name: &str,
) -> Result<Vec<Program>, OpError> {
    let dtype = view.dtype();
    let scan_codelet = codelet_name("CumSum", dtype)?;
    let carries_codelet = codelet_name("CumSumCarries", dtype)?;
    let add_codelet = codelet_name("AddCarry", dtype)?;
    let count: usize = cross.iter().map(|c| c.1.len()).sum();
    let carries = graph.add_variable(dtype, &[count], &format!("{name}/carries"));
    let carry_cs = graph.add_compute_set(&format!("{name}/carries"));
    let add_cs = graph.add_compute_set(&format!("{name}/add_carries"));
    let mut k0 = 0;
    for (l, segs) in cross {
        let x = view.slice(*l..*l + 1)?.flatten();
        let y = out_view.slice(*l..*l + 1)?.flatten();
        let (mut last, mut tail) = (Vec::new(), Vec::new());
        for (i, seg) in segs.iter().enumerate() {
            let r = seg.range.clone();
            let v = graph.add_vertex(cs, &scan_codelet)?;
            graph.connect(v, "input", &x.slice(r.clone())?)?;
            graph.connect(v, "out", &y.slice(r.clone())?)?;
            graph.set_vertex_state(v, "len", r.len() as u32)?;
            graph.set_vertex_state(v, "exclusive", exclusive)?;
            graph.set_tile_mapping(v, seg.tile)?;
            last.push(y.slice(r.end - 1..r.end)?);
            tail.push(x.slice(r.end - 1..r.end)?);
            if i > 0 {
                let v = graph.add_vertex(add_cs, &add_codelet)?;
                graph.connect(v, "out", &y.slice(r)?)?;
                graph.connect(v, "carry", &carries.slice(k0 + i..k0 + i + 1)?)?;
                graph.set_tile_mapping(v, seg.tile)?;
            }
        }
        let s = segs.len();
        let root = segs[0].tile;
        let line_carries = carries.slice(k0..k0 + s)?;
        graph.set_tile_mapping(&line_carries, root)?;
        let v = graph.add_vertex(carry_cs, &carries_codelet)?;
        graph.connect(v, "last", &Tensor::concat(&last)?)?;
        let tail = if exclusive {
            Tensor::concat(&tail)?
        } else {
            x.slice(0..0)?
        };
        graph.connect(v, "tail", &tail)?;
        graph.connect(v, "out", &line_carries)?;
        graph.set_vertex_state(v, "exclusive", exclusive)?;
        graph.set_tile_mapping(v, root)?;
        k0 += s;
    }
    Ok(vec![Program::execute(carry_cs), Program::execute(add_cs)])
}

/// The stages (1) and (2) of a cross-tile arg-max/arg-min (`stem`) of the long lines `cross`
/// into `out` (one element per line, mapped): segment vertices in `cs`, and the program of
/// the combination.
fn cross_arg(
    graph: &mut Graph,
    cs: ComputeSet,
    stem: &str,
    view: &Tensor,
    out: &Tensor,
    cross: &[(usize, Vec<Segment>)],
    name: &str,
) -> Result<Program, OpError> {
    let dtype = view.dtype();
    let seg_codelet = codelet_name(&format!("{stem}Segment"), dtype)?;
    let comb_codelet = codelet_name(&format!("{stem}Combine"), dtype)?;
    let count: usize = cross.iter().map(|c| c.1.len()).sum();
    let cands = graph.add_variable(DType::U32, &[2 * count], &format!("{name}/candidates"));
    let comb_cs = graph.add_compute_set(&format!("{name}/combine"));
    let mut k0 = 0;
    for (l, segs) in cross {
        let x = view.slice(*l..*l + 1)?.flatten();
        for (i, seg) in segs.iter().enumerate() {
            let k = k0 + i;
            let cand = cands.slice(2 * k..2 * k + 2)?;
            graph.set_tile_mapping(&cand, seg.tile)?;
            let v = graph.add_vertex(cs, &seg_codelet)?;
            graph.connect(v, "input", &x.slice(seg.range.clone())?)?;
            graph.connect(v, "out", &cand)?;
            graph.set_vertex_state(v, "base", seg.range.start as u32)?;
            graph.set_tile_mapping(v, seg.tile)?;
        }
        let s = segs.len();
        let v = graph.add_vertex(comb_cs, &comb_codelet)?;
        graph.connect(v, "candidates", &cands.slice(2 * k0..2 * (k0 + s))?)?;
        graph.connect(v, "out", &out.slice(*l..*l + 1)?)?;
        graph.set_tile_mapping(v, segs[0].tile)?;
        k0 += s;
    }
    Ok(Program::execute(comb_cs))
}

fn dtype_check(graph: &Graph, t: &Tensor, ok: &[DType], op: &str) -> Result<(), OpError> {
    if ok.contains(&t.dtype()) {
        return Ok(());
    }
    Err(OpError::DType {
        op: op.to_string(),
        what: format!("input {}", tensor_name(graph, t)),
        got: t.dtype(),
        expected: format!(
            "one of {}",
            ok.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// The cumulative sum of `input` along `axis` into a new tensor of its shape and type, mapped
/// as `input` (`f32`, `i32`, `u32`; integers wrap): `out[…, j, …] = Σ_{k ≤ j} x[…, k, …]`,
/// or with `exclusive`, `Σ_{k < j}` (0 first). A line is summed left to right on one tile,
/// or, when long and spread over tiles, in segments with carries (module notes). The
/// programs are added to `prog`.
///
/// ```
/// use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
///
/// codelets::link();
/// let mut graph = Graph::new(&Target::custom(8, 64 * 1024));
/// // One line of 1,000 over 8 tiles: scanned across them (segments, carries).
/// let x = graph.add_variable(DType::I32, &[1000], "x");
/// graph.map_linearly(&x, 1)?;
/// graph.set_initial_value(&x, &vec![1i32; 1000])?;
/// let mut prog = Vec::new();
/// let c = popops::cumsum(&mut graph, &x, 0, false, &mut prog, "c")?;
/// let m = popops::arg_max(&mut graph, &c, 0, &mut prog, "m")?;
/// graph.create_host_read("c", &c)?;
/// graph.create_host_read("m", &m)?;
/// let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
/// let mut engine = Engine::new(&exe, EngineOptions::default())?;
/// engine.run(0)?;
/// assert_eq!(engine.read_tensor::<i32>("c")?, (1..=1000).collect::<Vec<i32>>());
/// assert_eq!(engine.read_tensor::<u32>("m")?, vec![999]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn cumsum(
    graph: &mut Graph,
    input: &Tensor,
    axis: usize,
    exclusive: bool,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    check_axes(graph, input, &[axis], name)?;
    dtype_check(graph, input, &[DType::F32, DType::I32, DType::U32], name)?;
    let codelet = codelet_name("CumSum", input.dtype())?;
    let out = graph.add_variable(input.dtype(), input.shape(), name);
    if input.num_elements() == 0 {
        return Ok(out);
    }
    let mapping = graph.tile_mapping(input)?;
    let flat = out.flatten();
    for (tile, ranges) in mapping.into_iter().enumerate() {
        for r in ranges {
            graph.set_tile_mapping(&flat.slice(r)?, tile as u32)?;
        }
    }
    mapped_regions(graph, &out, name)?;
    let view = lines_view(input, axis)?;
    let out_view = lines_view(&out, axis)?;
    let plan = plan_lines(graph, &out_view, name)?;
    let n = input.shape()[axis] as u32;
    let state = [("len", n.into()), ("exclusive", exclusive.into())];
    let cs = graph.add_compute_set(name);
    add_line_vertices(graph, cs, &codelet, &view, &out_view, plan.whole, &state)?;
    let later = if plan.cross.is_empty() {
        Vec::new()
    } else {
        cross_cumsum(graph, cs, &view, &out_view, &plan.cross, exclusive, name)?
    };
    prog.push(Program::execute(cs));
    prog.extend(later);
    Ok(out)
}

fn arg(
    graph: &mut Graph,
    stem: &str,
    input: &Tensor,
    axis: usize,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    check_axes(graph, input, &[axis], name)?;
    dtype_check(
        graph,
        input,
        &[DType::F32, DType::F16, DType::I32, DType::U32],
        name,
    )?;
    let codelet = codelet_name(stem, input.dtype())?;
    let mut shape = input.shape().to_vec();
    let n = shape.remove(axis);
    let out = graph.add_variable(DType::U32, &shape, name);
    if out.num_elements() == 0 {
        return Ok(out);
    }
    if n == 0 {
        return Err(OpError::Axis {
            op: name.to_string(),
            tensor: tensor_name(graph, input),
            axis,
            rank: input.rank(),
            reason: "has size 0: an empty line has no index".to_string(),
        });
    }
    let view = lines_view(input, axis)?;
    let plan = plan_lines(graph, &view, name)?;
    let flat = out.flatten();
    for (tile, lines) in &plan.whole {
        for &l in lines {
            graph.set_tile_mapping(&flat.slice(l..l + 1)?, *tile)?;
        }
    }
    for (l, segs) in &plan.cross {
        graph.set_tile_mapping(&flat.slice(*l..*l + 1)?, segs[0].tile)?;
    }
    let lines = view.shape()[0];
    let out_view = flat.reshape(&[lines, 1])?;
    let cs = graph.add_compute_set(name);
    add_line_vertices(graph, cs, &codelet, &view, &out_view, plan.whole, &[])?;
    let later = if plan.cross.is_empty() {
        None
    } else {
        Some(cross_arg(graph, cs, stem, &view, &flat, &plan.cross, name)?)
    };
    prog.push(Program::execute(cs));
    prog.extend(later);
    Ok(out)
}

/// The index (`u32`) along `axis` of the largest element of each line of `input` (`f32`,
/// `f16`, `i32`, `u32`), in a new tensor of `input`'s shape without `axis`, each element on
/// the tile of its line's first element. Ties give the lowest index; a NaN counts as larger
/// than every number, so a line with a NaN gives its first NaN (numpy's `argmax`). An axis
/// of size 0 is an [`OpError::Axis`] (unless there are no lines).
pub fn arg_max(
    graph: &mut Graph,
    input: &Tensor,
    axis: usize,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    arg(graph, "ArgMax", input, axis, prog, name)
}

/// As [`arg_max`] for the smallest element (ties: the lowest index; a NaN also counts as
/// smaller than every number, so the first NaN, as numpy's `argmin`).
pub fn arg_min(
    graph: &mut Graph,
    input: &Tensor,
    axis: usize,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    arg(graph, "ArgMin", input, axis, prog, name)
}
