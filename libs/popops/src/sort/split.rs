//! The sort of rows split over tiles (see the [module notes](super)): each row is cut into
//! `B = T · W` equal blocks of `m` slots, `T` the largest power of two not above the tiles the
//! row spans (nor its length), `W` blocks on each of them (a power of two not above its
//! workers, smaller if the vertices of all rounds would not fit an eighth of a tile), blocks `bW..(b+1)W` on the row's `b`-th tile; every block is sorted on its
//! tile (`ArgSort` and two `GatherElements`, the keys and their row positions), padded past
//! the row's end with slots that go last; then a bitonic network over the blocks: in each of
//! its `log₂B · (log₂B + 1) / 2` rounds every tile receives its partner's block (one
//! exchange), merges it with its own and keeps the lower or upper `m` (`MergeSplit`, then
//! two `GatherElements`), into the other of two ping-pong buffers.

use codelets::sort::cost;
use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{concat, ComputeSet, Graph, Tensor};
use poplar_core::dtype::DType;
use poplar_core::f16;
use poplar_core::target::{Target, TileId};

use crate::pieces::mapped_regions;
use crate::{codelet_name, OpError};

/// Whether rows of `len` elements of `dtype` go the split path: when sorting one on a
/// tile (the row, its positions, its sorted values and the row received there) would take
/// more than an eighth of a tile's memory.
pub(super) fn wanted(graph: &Graph, dtype: DType, len: usize) -> bool {
    let bytes = len as u64 * (3 * dtype.size() as u64 + 4);
    bytes > u64::from(graph.target().bytes_per_tile) / 8
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

/// Row `r`'s buffers, mapped block by block, and its block sort added to `cs`
/// (`ArgSort`) and `cs_val` (the keys and positions gathered).
#[allow(clippy::too_many_arguments)]
fn block_sort(
    graph: &mut Graph,
    row: &Tensor,
    tiles: Vec<TileId>,
    descending: bool,
    cs: ComputeSet,
    cs_val: ComputeSet,
    name: &str,
) -> Result<Row, OpError> {
    let (len, dtype) = (row.num_elements(), row.dtype());
    let tiles = block_tiles(&tiles, len, graph.target());
    let b_count = tiles.len();
    let m = len.div_ceil(b_count);
    let slots = b_count * m;
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
    let arg = codelet_name("ArgSort", dtype)?;
    let gather = codelet_name("GatherElements", dtype)?;
    let gather_u = codelet_name("GatherElements", DType::U32)?;
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
        let real = slot.start.min(len)..slot.end.min(len);
        let n = real.len();
        if n == 0 {
            continue;
        }
        let local = sel.slice(slot.start..slot.start + n)?;
        let v = graph.add_vertex(cs, &arg)?;
        graph.connect(v, "input", &row.slice(real.clone())?)?;
        graph.connect(v, "out", &local)?;
        graph.set_vertex_state(v, "row_len", n as u32)?;
        graph.set_vertex_state(v, "k", n as u32)?;
        graph.set_vertex_state(v, "descending", descending)?;
        graph.set_cycle_estimate(v, cost::arg_sort(1, n as u64))?;
        graph.set_tile_mapping(v, tile)?;
        for (codelet, input, out) in [
            (
                &gather,
                row.slice(real.clone())?,
                keys[1].slice(real.clone())?,
            ),
            (
                &gather_u,
                iota.slice(real.clone())?,
                pos[1].slice(real.clone())?,
            ),
        ] {
            let g = graph.add_vertex(cs_val, codelet)?;
            graph.connect(g, "indices", &local)?;
            graph.connect(g, "input", &input)?;
            graph.connect(g, "out", &out)?;
            graph.set_vertex_state(g, "row_len", n as u32)?;
            graph.set_tile_mapping(g, tile)?;
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
    Ok(Row {
        tiles,
        m,
        keys,
        pos,
        cur,
        next: 0,
        sel,
        recv,
    })
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

/// Round `(size, j)` of `row`: its partner blocks' copies appended to `copies`, its merges to
/// `cs` and the kept keys and positions to `cs_val`; the row's current state moves on.
#[allow(clippy::too_many_arguments)]
fn merge_round(
    graph: &mut Graph,
    row: &mut Row,
    (size, j): (usize, usize),
    len: usize,
    descending: bool,
    copies: &mut Copies,
    cs: ComputeSet,
    cs_val: ComputeSet,
) -> Result<(), OpError> {
    let dtype = row.cur.0.dtype();
    let merge = codelet_name("MergeSplit", dtype)?;
    let gather = codelet_name("GatherElements", dtype)?;
    let gather_u = codelet_name("GatherElements", DType::U32)?;
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
        let tile = row.tiles[b];
        let v = graph.add_vertex(cs, &merge)?;
        graph.connect(v, "input", &keys)?;
        graph.connect(v, "positions", &pos)?;
        graph.connect(v, "out", &sel)?;
        graph.set_vertex_state(v, "split", m as u32)?;
        graph.set_vertex_state(v, "row_len", len as u32)?;
        graph.set_vertex_state(v, "upper", upper)?;
        graph.set_vertex_state(v, "descending", descending)?;
        graph.set_cycle_estimate(v, cost::merge_split(m as u64))?;
        graph.set_tile_mapping(v, tile)?;
        for (codelet, input, out) in [
            (&gather, keys, row.block(&next_k, b)?),
            (&gather_u, pos, row.block(&next_p, b)?),
        ] {
            let g = graph.add_vertex(cs_val, codelet)?;
            graph.connect(g, "indices", &sel)?;
            graph.connect(g, "input", &input)?;
            graph.connect(g, "out", &out)?;
            graph.set_vertex_state(g, "row_len", 2 * m as u32)?;
            graph.set_tile_mapping(g, tile)?;
        }
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
    let cs = graph.add_compute_set(&format!("{name}/split/blocks"));
    let cs_val = graph.add_compute_set(&format!("{name}/split/block_values"));
    let mut plans = Vec::with_capacity(rows);
    for (r, tiles) in tiles.into_iter().enumerate() {
        let row = tv.slice(r..r + 1)?.reshape(&[len])?;
        let row_name = format!("{name}/split/row{r}");
        plans.push(block_sort(
            graph, &row, tiles, descending, cs, cs_val, &row_name,
        )?);
    }
    prog.push(Program::execute(cs));
    prog.push(Program::execute(cs_val));
    let rounds: Vec<_> = plans.iter().map(Row::rounds).collect();
    let most = rounds.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..most {
        let cs = graph.add_compute_set(&format!("{name}/split/merge{i}"));
        let cs_val = graph.add_compute_set(&format!("{name}/split/merge{i}_values"));
        let mut copies = Copies::default();
        for (row, rounds) in plans.iter_mut().zip(&rounds) {
            if let Some(&round) = rounds.get(i) {
                merge_round(graph, row, round, len, descending, &mut copies, cs, cs_val)?;
            }
        }
        copies.programs(prog)?;
        prog.push(Program::execute(cs));
        prog.push(Program::execute(cs_val));
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
