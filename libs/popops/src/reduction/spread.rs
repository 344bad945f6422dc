//! The intermediate cross-tile stages of a reduction (poplibs' intermediate partials, in
//! `ReductionStages.cpp`): when an output's partials come from many tiles, groups of `g`
//! consecutive source *units* (at first the tiles holding partials) reduce their partials
//! first, each group's outputs spread over the group's tiles, so that the final stage
//! receives one partial per group instead of one per tile. The group size is chosen with a
//! cost model (module notes of [`reduction`](super)); levels repeat, tree-like, while they
//! pay.

use std::cell::Cell;

use codelets::reduction::cost;
use codelets::reduction::Operation;
use poplar_compiler::graph::{ComputeSet, Graph};
use poplar_core::dtype::DType;
use poplar_core::target::{Target, TileId};

use super::{add_reduce_vertex, Region, Types};
use crate::error::OpError;

thread_local! {
    static TWO_STAGE_ONLY: Cell<bool> = const { Cell::new(false) };
}

/// Turns the intermediate cross-tile stages off (`true`) or back on (`false`) for the
/// reductions built on this thread afterwards: the two-stage plan, for comparing the plans
/// (tests and benchmarks).
///
/// ```
/// popops::reduction::set_two_stage_only(true);
/// // … reductions built here use stage 1 and stage 2 only …
/// popops::reduction::set_two_stage_only(false);
/// ```
#[doc(hidden)]
pub fn set_two_stage_only(on: bool) {
    TWO_STAGE_ONLY.with(|c| c.set(on));
}

pub(super) fn two_stage_only() -> bool {
    TWO_STAGE_ONLY.with(|c| c.get())
}

/// Levels at most (each at least halves the units).
const MAX_LEVELS: usize = 3;

/// A partial as the planner sees it: outputs `o..o + len` on `tile`, from source `unit`
/// (nondecreasing along the list).
#[derive(Clone, Copy, Debug)]
pub(super) struct Part {
    pub tile: TileId,
    pub o: usize,
    pub len: usize,
    pub unit: usize,
}

/// One vertex of a level: on `tile`, regions `(o, len, covering parts in list order)`.
struct PlannedVertex {
    tile: TileId,
    regions: Vec<(usize, usize, Vec<usize>)>,
}

/// Where a part of the next level comes from: a slice of old part `k` from its element
/// `at` (`Pass`), or vertex `v`'s output from its element `at` (`Made`).
enum Source {
    Pass(usize, usize),
    Made(usize, usize),
}

/// One intermediate level: its vertices and the next level's parts.
struct Level {
    vertices: Vec<PlannedVertex>,
    next: Vec<(Part, Source)>,
}

/// The elementary output intervals of the parts `idx` of `parts`: `(start, end, covering)`,
/// covering in list order; intervals no part covers are left out.
fn intervals(parts: &[Part], idx: &[usize]) -> Vec<(usize, usize, Vec<usize>)> {
    let mut bounds: Vec<usize> = idx
        .iter()
        .flat_map(|&k| [parts[k].o, parts[k].o + parts[k].len])
        .collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut out: Vec<(usize, usize, Vec<usize>)> = bounds
        .windows(2)
        .map(|w| (w[0], w[1], Vec::new()))
        .collect();
    for &k in idx {
        let p = parts[k];
        let mut i = bounds.partition_point(|&b| b <= p.o) - 1;
        while i < out.len() && out[i].0 < p.o + p.len {
            out[i].2.push(k);
            i += 1;
        }
    }
    out.retain(|iv| !iv.2.is_empty());
    out
}

/// Plans one level: groups of `g` consecutive units; in each, the outputs with two or more
/// partials cut into equal contiguous shares, one per tile of the group (first appearance
/// order), each share into up to `workers` vertices; the others passed on as they are.
fn plan_level(parts: &[Part], g: usize, workers: usize, grain: usize) -> Level {
    let mut level = Level {
        vertices: Vec::new(),
        next: Vec::new(),
    };
    let mut at = 0;
    let mut group_index = 0;
    while at < parts.len() {
        let first = parts[at].unit;
        let n = parts[at..]
            .iter()
            .take_while(|p| p.unit < first + g)
            .count();
        let idx: Vec<usize> = (at..at + n).collect();
        at += n;
        let mut tiles: Vec<TileId> = Vec::new();
        for &k in &idx {
            if !tiles.contains(&parts[k].tile) {
                tiles.push(parts[k].tile);
            }
        }
        let ivs = intervals(parts, &idx);
        let work: usize = ivs
            .iter()
            .filter(|iv| iv.2.len() >= 2)
            .map(|iv| iv.1 - iv.0)
            .sum();
        // Cut positions of the flattened work: tile t's share, then its workers' pieces.
        let mut cuts: Vec<(usize, usize)> = Vec::new(); // (position, tile index)
        let align = |x: usize| x / grain * grain;
        for t in 0..tiles.len() {
            let (a, b) = (
                align(t * work / tiles.len()),
                align((t + 1) * work / tiles.len()),
            );
            for w in 0..workers {
                cuts.push((align(a + w * (b - a) / workers), t));
            }
        }
        cuts.push((work, tiles.len()));
        cuts.dedup_by_key(|c| c.0);
        let (mut done, mut chunk, mut vertex) = (0, 0, None);
        for (s, e, cover) in ivs {
            if cover.len() == 1 {
                let k = cover[0];
                let part = Part {
                    o: s,
                    len: e - s,
                    unit: group_index,
                    ..parts[k]
                };
                level.next.push((part, Source::Pass(k, s - parts[k].o)));
                continue;
            }
            let mut s = s;
            while s < e {
                while cuts[chunk + 1].0 <= done {
                    chunk += 1;
                    vertex = None;
                }
                let end = e.min(s + cuts[chunk + 1].0 - done);
                let tile = tiles[cuts[chunk].1];
                let v = *vertex.get_or_insert_with(|| {
                    level.vertices.push(PlannedVertex {
                        tile,
                        regions: Vec::new(),
                    });
                    level.vertices.len() - 1
                });
                let pv = &mut level.vertices[v];
                let offset: usize = pv.regions.iter().map(|r| r.1).sum();
                pv.regions.push((s, end - s, cover.clone()));
                let part = Part {
                    tile,
                    o: s,
                    len: end - s,
                    unit: group_index,
                };
                level.next.push((part, Source::Made(v, offset)));
                done += end - s;
                s = end;
            }
        }
        group_index += 1;
    }
    level
}

/// The cost model's constants and the vertex costs of one reduction.
struct Model<'a> {
    target: &'a Target,
    op: Operation,
    acc: DType,
    bytes: u64,
}

impl Model<'_> {
    /// Receiving one message of `n` elements: `setup + ⌈bytes / bytes per cycle⌉` (the cycle
    /// model's exchange cost).
    fn message(&self, n: usize) -> u64 {
        u64::from(self.target.exchange_setup_cycles)
            + (n as u64 * self.bytes).div_ceil(u64::from(self.target.exchange_bytes_per_cycle))
    }

    /// A vertex's worker cycles for regions `(len, partials)` (poplibs' estimator).
    fn vertex(&self, regions: &[(usize, usize)]) -> u64 {
        let sizes: Vec<u64> = regions
            .iter()
            .flat_map(|&(l, m)| std::iter::repeat_n(l as u64, m))
            .collect();
        let lens: Vec<u64> = regions.iter().map(|r| r.0 as u64).collect();
        let nps: Vec<u64> = regions.iter().map(|r| r.1 as u64).collect();
        cost::reduce(self.op, self.acc, self.acc, false, &sizes, &lens, &nps)
    }

    /// One phase's tile cycles from per-tile `(receive, vertex worker cycles…)`: the busiest
    /// receiver, plus the busiest tile's vertex schedule (`workers × max(largest vertex,
    /// ⌈sum / workers⌉)`), plus two syncs.
    fn phase(&self, tiles: &std::collections::BTreeMap<TileId, (u64, Vec<u64>)>) -> u64 {
        let w = u64::from(self.target.workers_per_tile).max(1);
        let recv = tiles.values().map(|t| t.0).max().unwrap_or(0);
        let comp = tiles
            .values()
            .map(|t| {
                let sum: u64 = t.1.iter().sum();
                w * t.1.iter().copied().max().unwrap_or(0).max(sum.div_ceil(w))
            })
            .max()
            .unwrap_or(0);
        recv + comp + 2 * u64::from(self.target.internal_sync_cycles)
    }

    /// A level's modelled cycles.
    fn level(&self, parts: &[Part], level: &Level) -> u64 {
        let mut tiles = std::collections::BTreeMap::new();
        for v in &level.vertices {
            let e: &mut (u64, Vec<u64>) = tiles.entry(v.tile).or_default();
            for (_, len, cover) in &v.regions {
                e.0 += cover
                    .iter()
                    .filter(|&&k| parts[k].tile != v.tile)
                    .map(|_| self.message(*len))
                    .sum::<u64>();
            }
            let regions: Vec<(usize, usize)> = v.regions.iter().map(|r| (r.1, r.2.len())).collect();
            e.1.push(self.vertex(&regions));
        }
        self.phase(&tiles)
    }

    /// The final stage's modelled cycles: each output tile receives the slices of the parts
    /// over its outputs and reduces them, spread over its workers.
    fn last(&self, parts: &[Part], out: &[(TileId, std::ops::Range<usize>)]) -> u64 {
        let mut tiles: std::collections::BTreeMap<TileId, (u64, Vec<u64>)> = Default::default();
        for p in parts {
            let mut i = out.partition_point(|r| r.1.end <= p.o);
            while i < out.len() && out[i].1.start < p.o + p.len {
                let (tile, r) = (&out[i].0, &out[i].1);
                let n = r.end.min(p.o + p.len) - r.start.max(p.o);
                let e = tiles.entry(*tile).or_default();
                if p.tile != *tile {
                    e.0 += self.message(n);
                }
                // The marginal cost of one more partial of `n`.
                e.1.push(self.vertex(&[(n, 2)]) - self.vertex(&[(n, 1)]));
                i += 1;
            }
        }
        self.phase(&tiles)
    }
}

/// Adds the intermediate levels that lower the modelled cycles (module notes): returns the
/// partials the final stage reads, and the compute sets added (in order).
#[allow(clippy::too_many_arguments)] // the plan's pieces
pub(super) fn spread(
    graph: &mut Graph,
    mut parts: Vec<Part>,
    mut regions: Vec<Region>,
    out_regions: &[(TileId, std::ops::Range<usize>)],
    types: &Types,
    op: Operation,
    name: &str,
) -> Result<(Vec<Region>, Vec<ComputeSet>), OpError> {
    let mut sets = Vec::new();
    if two_stage_only() {
        return Ok((regions, sets));
    }
    let mut out: Vec<(TileId, std::ops::Range<usize>)> = out_regions.to_vec();
    out.sort_by_key(|r| r.1.start);
    let target = graph.target().clone();
    let workers = target.workers_per_tile.max(1) as usize;
    let grain = codelets::cycles::data_path_width(types.acc) as usize;
    let model = Model {
        target: &target,
        op,
        acc: types.acc,
        bytes: types.acc.size() as u64,
    };
    for depth in 0..MAX_LEVELS {
        let units = parts.last().map_or(0, |p| p.unit + 1);
        let now = model.last(&parts, &out);
        let mut best: Option<(u64, Level)> = None;
        let mut g = 2;
        while g < units {
            let level = plan_level(&parts, g, workers, grain);
            let next: Vec<Part> = level.next.iter().map(|n| n.0).collect();
            let c = model.level(&parts, &level) + model.last(&next, &out);
            if c < now && best.as_ref().is_none_or(|b| c < b.0) {
                best = Some((c, level));
            }
            g *= 2;
        }
        let Some((_, level)) = best else { break };
        let cs = graph.add_compute_set(&format!("{name}/spread{depth}"));
        let made = materialize(graph, cs, &level, &parts, &regions, types, op, name)?;
        parts = level.next.iter().map(|n| n.0).collect();
        regions = made;
        sets.push(cs);
    }
    Ok((regions, sets))
}

/// Builds a level's vertices in `cs` and returns the next level's partials.
#[allow(clippy::too_many_arguments)] // the plan's pieces
fn materialize(
    graph: &mut Graph,
    cs: ComputeSet,
    level: &Level,
    parts: &[Part],
    regions: &[Region],
    types: &Types,
    op: Operation,
    name: &str,
) -> Result<Vec<Region>, OpError> {
    let mut outs = Vec::new();
    for v in &level.vertices {
        let total: usize = v.regions.iter().map(|r| r.1).sum();
        let var = graph.add_variable(types.acc, &[total], &format!("{name}/spread"));
        graph.set_tile_mapping(&var, v.tile)?;
        let mut regs = Vec::new();
        for (s, len, cover) in &v.regions {
            let mut list = Vec::new();
            for &k in cover {
                let from = s - parts[k].o;
                list.push(regions[k].parts[0].slice(from..from + len)?);
            }
            regs.push(Region {
                o: *s,
                len: *len,
                parts: list,
            });
        }
        add_reduce_vertex(
            graph,
            cs,
            &types.mid,
            op,
            (types.acc, types.acc),
            &regs,
            &var,
            (1.0, false),
            v.tile,
        )?;
        outs.push(var);
    }
    let mut next = Vec::new();
    for (p, src) in &level.next {
        let t = match *src {
            Source::Pass(k, at) => regions[k].parts[0].slice(at..at + p.len)?,
            Source::Made(v, at) => outs[v].slice(at..at + p.len)?,
        };
        next.push(Region {
            o: p.o,
            len: p.len,
            parts: vec![t],
        });
    }
    Ok(next)
}
