//! The sort of rows split over tiles (see the [module notes](super)): each row is cut into
//! `B = T · W` equal blocks of `m` slots, `T` the largest power of two not above the tiles the
//! row spans (nor its length), `W` consecutive blocks on each (a power of two not above its
//! workers, smaller if the vertices of all rounds would not fit an eighth of a tile), padded
//! past the row's end with slots that go last. Every block is sorted on its tile: `S` runs
//! (`ArgSort` and two `GatherElements`, the keys and their row positions) merged pairwise in
//! `log₂S` steps. Then a bitonic network over the blocks: in each of its
//! `log₂B · (log₂B + 1) / 2` rounds every block receives its partner block (one copy, an
//! exchange or an on-tile copy), merges it with its own and keeps the lower or upper `m`
//! (`MergeSplit`, then two `GatherElements`) into the other of two ping-pong buffers. A
//! `top_k` whose `k` fits in a block instead merges the blocks' first `k` up a tree, `log₂B`
//! rounds of `k` elements, the result in block 0.

use codelets::sort::cost;
use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{concat, ComputeSet, Graph, Tensor};
use poplar_core::dtype::DType;
use poplar_core::f16;
use poplar_core::target::{Target, TileId};

use crate::pieces::mapped_regions;
use crate::{codelet_name, OpError};

/// Whether the rows of `tv` (`[rows, len]`) go the split path: when sorting one on a tile
/// (the row, its positions, its sorted values and the row received there) would take more
/// than an eighth of a tile's memory, and some row spans more than one tile (rows each held
/// by one tile are sorted there, in less memory than the split path's buffers).
pub(super) fn wanted(graph: &Graph, tv: &Tensor, op: &str) -> Result<bool, OpError> {
    let len = tv.shape()[1];
    let bytes = len as u64 * (3 * tv.dtype().size() as u64 + 4);
    if bytes <= u64::from(graph.target().bytes_per_tile) / 8 {
        return Ok(false);
    }
    Ok(row_tiles(graph, tv, op)?.iter().any(|t| t.len() > 1))
}

/// One row's blocks: the tile of each and the buffers, each `B·m` slots with block `b` on
/// `tiles[b]`.
struct Row {
    tiles: Vec<TileId>,
    m: usize,
    /// The ping-pong buffers of keys and positions.
    keys: [Tensor; 2],
    pos: [Tensor; 2],
    /// The current keys and positions (after the block sort: the second buffers' first
    /// `len` slots and the padding constants).
    cur: (Tensor, Tensor),
    /// Which buffer the next round writes.
    next: usize,
    /// The merge indices, and the partner's block received.
    sel: Tensor,
    recv: (Tensor, Tensor),
}

impl Row {
    fn blocks(&self) -> usize {
        self.tiles.len()
    }

    fn block(&self, t: &Tensor, b: usize) -> Result<Tensor, OpError> {
        Ok(t.slice(b * self.m..(b + 1) * self.m)?)
    }

    /// The rounds of the tree of `top_k`: the distance of each (1, 2, 4, … below `B`).
    fn top_rounds(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut d = 1;
        while d < self.blocks() {
            out.push(d);
            d *= 2;
        }
        out
    }

    /// The rounds of the bitonic network: `(size, distance)` of each.
    fn rounds(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut size = 2;
        while size <= self.blocks() {
            let mut j = size / 2;
            while j > 0 {
                out.push((size, j));
                j /= 2;
            }
            size *= 2;
        }
        out
    }
}

/// The tiles each row of `tv` (`[rows, len]`) spans, in order of their first element.
fn row_tiles(graph: &Graph, tv: &Tensor, op: &str) -> Result<Vec<Vec<TileId>>, OpError> {
    let (rows, len) = (tv.shape()[0], tv.shape()[1]);
    let mut regions = mapped_regions(graph, tv, op)?;
    regions.sort_by_key(|(_, r)| r.start);
    let mut out = vec![Vec::new(); rows];
    for (tile, r) in regions {
        for tiles in &mut out[r.start / len..(r.end - 1) / len + 1] {
            if !tiles.contains(&tile) {
                tiles.push(tile);
            }
        }
    }
    Ok(out)
}

/// The compiler's descriptor and state of one of the split path's vertices, about 180 bytes
/// as measured, rounded up: what a tile pays per vertex per round.
const VERTEX_BYTES: usize = 192;

/// The rounds of a bitonic network over `blocks` (a power of two) blocks.
fn bitonic_rounds(blocks: usize) -> usize {
    let l = blocks.ilog2() as usize;
    l * (l + 1) / 2
}

/// The tile of each block of a row of `len` over `tiles`: the largest power of two `T` of
/// them (not above `len`), each holding `W` consecutive blocks, `W` the largest power of two
/// not above the tile's workers (nor `len / T`) whose vertices over all rounds (three a block)
/// take at most an eighth of a tile's memory, so that a tile's block sorts and merges run on
/// its workers side by side.
fn block_tiles(tiles: &[TileId], len: usize, target: &Target) -> Vec<TileId> {
    let t = 1usize << tiles.len().min(len).max(1).ilog2();
    let workers = target.workers_per_tile.max(1) as usize;
    let mut w = 1usize << workers.min(len / t).max(1).ilog2();
    let budget = target.bytes_per_tile as usize / 8;
    while w > 1 && bitonic_rounds(t * w) * 3 * w * VERTEX_BYTES > budget {
        w /= 2;
    }
    tiles[..t]
        .iter()
        .flat_map(|&tile| std::iter::repeat_n(tile, w))
        .collect()
}

/// `n` zeros of `dtype`, a constant (the padding's keys, which never decide anything).
fn zeros(graph: &mut Graph, dtype: DType, n: usize, name: &str) -> Result<Tensor, OpError> {
    Ok(match dtype {
        DType::F16 => graph.add_constant(&[n], &vec![f16::ZERO; n], name)?,
        DType::I32 => graph.add_constant(&[n], &vec![0i32; n], name)?,
        DType::U32 => graph.add_constant(&[n], &vec![0u32; n], name)?,
        _ => graph.add_constant(&[n], &vec![0f32; n], name)?,
    })
}

/// A pair of compute sets: a step's sorts or merges, then the gathers of their keys and
/// positions.
#[derive(Clone, Copy)]
struct Step {
    cs: ComputeSet,
    val: ComputeSet,
}

impl Step {
    fn new(graph: &mut Graph, name: &str) -> Step {
        Step {
            cs: graph.add_compute_set(name),
            val: graph.add_compute_set(&format!("{name}_values")),
        }
    }

    fn programs(self, prog: &mut Vec<Program>) {
        prog.push(Program::execute(self.cs));
        prog.push(Program::execute(self.val));
    }
}

/// The two `GatherElements` of a step on `tile`: `keys` and `pos` (one row each) at
/// `sel` into `dst`.
fn gathers(
    graph: &mut Graph,
    step: Step,
    tile: TileId,
    sel: &Tensor,
    (keys, pos): (Tensor, Tensor),
    dst: (Tensor, Tensor),
) -> Result<(), OpError> {
    let row_len = keys.num_elements() as u32;
    for (input, out) in [(keys, dst.0), (pos, dst.1)] {
        let g = graph.add_vertex(step.val, &codelet_name("GatherElements", input.dtype())?)?;
        graph.connect(g, "indices", sel)?;
        graph.connect(g, "input", &input)?;
        graph.connect(g, "out", &out)?;
        graph.set_vertex_state(g, "row_len", row_len)?;
        graph.set_tile_mapping(g, tile)?;
    }
    Ok(())
}

/// A `MergeSplit` on `tile` of the runs `keys[..split]` and `keys[split..]` (with `pos`)
/// into `sel`, the lower or `upper` `sel.len()` kept, and their gathers into `dst`.
#[allow(clippy::too_many_arguments)]
fn merge(
    graph: &mut Graph,
    step: Step,
    tile: TileId,
    (keys, pos): (Tensor, Tensor),
    (split, upper, len, descending): (usize, bool, usize, bool),
    sel: &Tensor,
    dst: (Tensor, Tensor),
) -> Result<(), OpError> {
    let v = graph.add_vertex(step.cs, &codelet_name("MergeSplit", keys.dtype())?)?;
    graph.connect(v, "input", &keys)?;
    graph.connect(v, "positions", &pos)?;
    graph.connect(v, "out", sel)?;
    graph.set_vertex_state(v, "split", split as u32)?;
    graph.set_vertex_state(v, "row_len", len as u32)?;
    graph.set_vertex_state(v, "upper", upper)?;
    graph.set_vertex_state(v, "descending", descending)?;
    graph.set_cycle_estimate(v, cost::merge_split(sel.num_elements() as u64))?;
    graph.set_tile_mapping(v, tile)?;
    gathers(graph, step, tile, sel, (keys, pos), dst)
}

/// A row's buffers over the tiles of its blocks ([`block_tiles`]), mapped block by block.
fn new_row(
    graph: &mut Graph,
    row: &Tensor,
    tiles: &[TileId],
    name: &str,
) -> Result<(Row, Tensor), OpError> {
    let (len, dtype) = (row.num_elements(), row.dtype());
    let tiles = block_tiles(tiles, len, graph.target());
    let m = len.div_ceil(tiles.len());
    let slots = tiles.len() * m;
    let var = |g: &mut Graph, d: DType, what: &str| {
        g.add_variable(d, &[slots], &format!("{name}/{what}"))
    };
    let keys = [var(graph, dtype, "keys0"), var(graph, dtype, "keys1")];
    let pos = [
        var(graph, DType::U32, "pos0"),
        var(graph, DType::U32, "pos1"),
    ];
    let sel = var(graph, DType::U32, "merge");
    let recv = (
        var(graph, dtype, "recv_keys"),
        var(graph, DType::U32, "recv_pos"),
    );
    let iota: Vec<u32> = (0..slots as u32).collect();
    let iota = graph.add_constant(&[slots], &iota, &format!("{name}/positions"))?;
    let pad_keys = zeros(graph, dtype, slots - len, &format!("{name}/padding"))?;
    for (b, &tile) in tiles.iter().enumerate() {
        let slot = b * m..(b + 1) * m;
        for t in [
            &keys[0], &keys[1], &pos[0], &pos[1], &sel, &recv.0, &recv.1, &iota,
        ] {
            graph.set_tile_mapping(&t.slice(slot.clone())?, tile)?;
        }
        if slot.end > len {
            let pad = slot.start.max(len) - len..slot.end - len;
            graph.set_tile_mapping(&pad_keys.slice(pad)?, tile)?;
        }
    }
    let cur = if slots == len {
        (keys[1].clone(), pos[1].clone())
    } else {
        (
            concat(&[keys[1].slice(0..len)?, pad_keys])?,
            concat(&[pos[1].slice(0..len)?, iota.slice(len..slots)?])?,
        )
    };
    let row = Row {
        tiles,
        m,
        keys,
        pos,
        cur,
        next: 0,
        sel,
        recv,
    };
    Ok((row, iota))
}

/// The block sort of `row` (the input row `input`): each block's real slots cut into `S`
/// runs (`S` a power of two, `S · W` not above the tile's workers), each sorted by an
/// `ArgSort` in `steps[0]`, then merged pairwise in `log₂S` steps (`steps[1..]`, added as
/// needed), the last into the second buffers (the row's state after the block sort).
fn block_sort(
    graph: &mut Graph,
    row: &Row,
    (input, iota): (&Tensor, &Tensor),
    descending: bool,
    steps: &mut Vec<Step>,
    name: &str,
) -> Result<(), OpError> {
    let len = input.num_elements();
    let (m, per_tile) = (
        row.m,
        row.blocks()
            / row
                .tiles
                .iter()
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
    );
    let workers = graph.target().workers_per_tile.max(1) as usize;
    let runs = 1usize << (workers / per_tile).clamp(1, m).ilog2();
    let levels = runs.ilog2() as usize;
    while steps.len() <= levels {
        let i = steps.len();
        steps.push(Step::new(graph, &format!("{name}/split/block_merge{i}")));
    }
    let arg = codelet_name("ArgSort", input.dtype())?;
    // Level `l` writes buffer `(levels + 1 + l) % 2`, so that the last writes buffer 1.
    let buf = |l: usize| (levels + 1 + l) % 2;
    for (b, &tile) in row.tiles.iter().enumerate() {
        let real = (b * m).min(len)..((b + 1) * m).min(len);
        let cut = |i: usize| real.start + real.len() * i / runs;
        for i in 0..runs {
            let r = cut(i)..cut(i + 1);
            if r.is_empty() {
                continue;
            }
            let sel = row.sel.slice(r.clone())?;
            let v = graph.add_vertex(steps[0].cs, &arg)?;
            graph.connect(v, "input", &input.slice(r.clone())?)?;
            graph.connect(v, "out", &sel)?;
            graph.set_vertex_state(v, "row_len", r.len() as u32)?;
            graph.set_vertex_state(v, "k", r.len() as u32)?;
            graph.set_vertex_state(v, "descending", descending)?;
            graph.set_cycle_estimate(v, cost::arg_sort(1, r.len() as u64))?;
            graph.set_tile_mapping(v, tile)?;
            let dst = (
                row.keys[buf(0)].slice(r.clone())?,
                row.pos[buf(0)].slice(r.clone())?,
            );
            gathers(
                graph,
                steps[0],
                tile,
                &sel,
                (input.slice(r.clone())?, iota.slice(r)?),
                dst,
            )?;
        }
        for (l, &step) in steps.iter().enumerate().take(levels + 1).skip(1) {
            let width = 1 << l;
            for i in (0..runs).step_by(width) {
                let (lo, mid, hi) = (cut(i), cut(i + width / 2), cut(i + width));
                if hi == lo {
                    continue;
                }
                let src = (
                    row.keys[buf(l - 1)].slice(lo..hi)?,
                    row.pos[buf(l - 1)].slice(lo..hi)?,
                );
                let dst = (
                    row.keys[buf(l)].slice(lo..hi)?,
                    row.pos[buf(l)].slice(lo..hi)?,
                );
                let sel = row.sel.slice(lo..hi)?;
                merge(
                    graph,
                    step,
                    tile,
                    src,
                    (mid - lo, false, len, descending),
                    &sel,
                    dst,
                )?;
            }
        }
    }
    Ok(())
}

/// The copies of one step, sources and destinations, keys and positions apart (a copy
/// moves one type).
#[derive(Default)]
struct Copies {
    keys: (Vec<Tensor>, Vec<Tensor>),
    pos: (Vec<Tensor>, Vec<Tensor>),
}

impl Copies {
    fn programs(self, prog: &mut Vec<Program>) -> Result<(), OpError> {
        for (src, dst) in [self.keys, self.pos] {
            if !src.is_empty() {
                prog.push(Program::copy(&concat(&src)?, &concat(&dst)?));
            }
        }
        Ok(())
    }
}

/// Round `(size, j)` of `row`: its partner blocks' copies appended to `copies`, its merges
/// and their gathers to `step`; the row's current state moves on.
fn merge_round(
    graph: &mut Graph,
    row: &mut Row,
    (size, j): (usize, usize),
    (len, descending): (usize, bool),
    copies: &mut Copies,
    step: Step,
) -> Result<(), OpError> {
    let m = row.m;
    let (next_k, next_p) = (row.keys[row.next].clone(), row.pos[row.next].clone());
    for b in 0..row.blocks() {
        let partner = b ^ j;
        let ascending = b & size == 0;
        let upper = (b > partner) == ascending;
        copies.keys.0.push(row.block(&row.cur.0, partner)?);
        copies.keys.1.push(row.block(&row.recv.0, b)?);
        copies.pos.0.push(row.block(&row.cur.1, partner)?);
        copies.pos.1.push(row.block(&row.recv.1, b)?);
        let keys = concat(&[row.block(&row.cur.0, b)?, row.block(&row.recv.0, b)?])?;
        let pos = concat(&[row.block(&row.cur.1, b)?, row.block(&row.recv.1, b)?])?;
        let sel = row.block(&row.sel, b)?;
        let dst = (row.block(&next_k, b)?, row.block(&next_p, b)?);
        let how = (m, upper, len, descending);
        merge(graph, step, row.tiles[b], (keys, pos), how, &sel, dst)?;
    }
    row.cur = (next_k, next_p);
    row.next = 1 - row.next;
    Ok(())
}

/// Round `d` of the `top_k` tree of `row`: every block `b` that is a multiple of `2d` merges
/// its first `k` with those of block `b + d` (copied in) and keeps the first `k`.
fn top_round(
    graph: &mut Graph,
    row: &mut Row,
    d: usize,
    (k, len, descending): (usize, usize, bool),
    copies: &mut Copies,
    step: Step,
) -> Result<(), OpError> {
    let (next_k, next_p) = (row.keys[row.next].clone(), row.pos[row.next].clone());
    let first = |row: &Row, t: &Tensor, b: usize| -> Result<Tensor, OpError> {
        Ok(row.block(t, b)?.slice(0..k)?)
    };
    for b in (0..row.blocks()).step_by(2 * d) {
        copies.keys.0.push(first(row, &row.cur.0, b + d)?);
        copies.keys.1.push(first(row, &row.recv.0, b)?);
        copies.pos.0.push(first(row, &row.cur.1, b + d)?);
        copies.pos.1.push(first(row, &row.recv.1, b)?);
        let keys = concat(&[first(row, &row.cur.0, b)?, first(row, &row.recv.0, b)?])?;
        let pos = concat(&[first(row, &row.cur.1, b)?, first(row, &row.recv.1, b)?])?;
        let sel = first(row, &row.sel, b)?;
        let dst = (first(row, &next_k, b)?, first(row, &next_p, b)?);
        let how = (k, false, len, descending);
        merge(graph, step, row.tiles[b], (keys, pos), how, &sel, dst)?;
    }
    row.cur = (next_k, next_p);
    row.next = 1 - row.next;
    Ok(())
}

/// The first `k` of each row of `tv` (`[rows, len]`) sorted, into `vv` and `iv` (`[rows, k]`,
/// mapped here: slot `s` of a row on the tile of the block holding it).
#[allow(clippy::too_many_arguments)]
pub(super) fn sorted_rows(
    graph: &mut Graph,
    tv: &Tensor,
    vv: &Tensor,
    iv: &Tensor,
    descending: bool,
    op: &str,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(), OpError> {
    let (rows, len, k) = (tv.shape()[0], tv.shape()[1], vv.shape()[1]);
    let tiles = row_tiles(graph, tv, op)?;
    let mut steps = vec![Step::new(graph, &format!("{name}/split/blocks"))];
    let mut plans = Vec::with_capacity(rows);
    for (r, tiles) in tiles.into_iter().enumerate() {
        let input = tv.slice(r..r + 1)?.reshape(&[len])?;
        let (row, iota) = new_row(graph, &input, &tiles, &format!("{name}/split/row{r}"))?;
        block_sort(graph, &row, (&input, &iota), descending, &mut steps, name)?;
        plans.push(row);
    }
    for step in steps {
        step.programs(prog);
    }
    // A `k` within every block: a tree of merges of the blocks' first `k` (log₂B rounds of
    // `k`); otherwise the whole bitonic network.
    let tree = plans.iter().all(|row| k <= row.m);
    let rounds: Vec<usize> = plans
        .iter()
        .map(|row| match tree {
            true => row.top_rounds().len(),
            false => row.rounds().len(),
        })
        .collect();
    let most = rounds.iter().copied().max().unwrap_or(0);
    for i in 0..most {
        let kind = if tree { "top" } else { "merge" };
        let step = Step::new(graph, &format!("{name}/split/{kind}{i}"));
        let mut copies = Copies::default();
        for (row, &n) in plans.iter_mut().zip(&rounds) {
            if i >= n {
                continue;
            }
            if tree {
                let d = row.top_rounds()[i];
                top_round(graph, row, d, (k, len, descending), &mut copies, step)?;
            } else {
                let round = row.rounds()[i];
                merge_round(graph, row, round, (len, descending), &mut copies, step)?;
            }
        }
        copies.programs(prog)?;
        step.programs(prog);
    }
    let mut out = Copies::default();
    for (r, row) in plans.iter().enumerate() {
        for (b, &tile) in row.tiles.iter().enumerate() {
            let slot = (b * row.m).min(k)..((b + 1) * row.m).min(k);
            if slot.is_empty() {
                continue;
            }
            let (v, i) = (
                vv.slice(r..r + 1)?.reshape(&[k])?.slice(slot.clone())?,
                iv.slice(r..r + 1)?.reshape(&[k])?.slice(slot.clone())?,
            );
            graph.set_tile_mapping(&v, tile)?;
            graph.set_tile_mapping(&i, tile)?;
            out.keys.0.push(row.cur.0.slice(slot.clone())?);
            out.keys.1.push(v);
            out.pos.0.push(row.cur.1.slice(slot)?);
            out.pos.1.push(i);
        }
    }
    out.programs(prog)
}
