//! Straight runs of supersteps whose tiles fall into groups that never exchange with one
//! another, run group by group.
//!
//! A ring all-reduce over R replicas is 2(R − 1) supersteps, and each moves a fragment from
//! every tile to the same tile of the neighbouring replica. Run superstep by superstep, every
//! step streams all of the replicas' data through the host's caches once: 64 MB over 16
//! replicas is 1 GB per step. But tile t of every replica only ever talks to tile t of the
//! others, so the same steps can run for the 16 tiles numbered t, all of them, before the
//! tiles numbered t + 1: 16 × 58 KB stays in the cache for the whole all-reduce.
//!
//! A *run* is a maximal stretch of one `Seq` made only of exchanges, compute phases, syncs,
//! and `Seq`, `Repeat` and `Label` steps holding only those ([`straight`]). Its *groups* are
//! the connected components of its tiles, joined by every copy of every exchange in it (a
//! copy joins its source and destination tile). Compute touches only its own tile, and no
//! copy leaves a group, so a group's memory after the run depends only on the group: running
//! each group through all the steps in program order (its copies of a phase, then its tiles'
//! share of the next compute phase, …) gives the bytes of the phases run apart. Groups run in
//! parallel, each on one thread, and never share a tile.
//!
//! Stochastic rounding keys: every compute phase of the run takes the epoch it would have
//! taken run alone (the run reserves them all before it starts). Failures: each group stops
//! at its own first failing vertex, every other group runs to the end of the run, and the
//! error reported is the one of the earliest failing compute phase (program order, repeats
//! counted), at its lowest failing tile — the error of the phases run apart, for any number
//! of threads. Tile memory after a failure then differs from the phases run apart (groups
//! other than the failing ones went on), which [`super::Engine::run`] does not promise;
//! [`super::Interleave::Never`] runs phase by phase.
//!
//! Used only where it pays: at least [`MIN_PHASES`] compute phases per pass, at least
//! [`GROUPS_PER_THREAD`] groups per thread, the largest group's tile memory at most
//! [`GROUP_MAX_BYTES`], and at least the interleaving threshold of bytes copied per pass. Not
//! used when profiling or over several ranks.

use std::collections::HashMap;
use std::ops::Range;

use super::options::Interleave;
use super::plan::{guided, CopyOp, Planned, COPY_OVERHEAD};
use super::schedule::{Block, Op, OpIndex, Schedule};
use crate::exe::{ComputePhaseId, ExchangePhaseId};
use crate::target::TileId;

/// The largest group (the sum of its tiles' memories) worth running group by group: it
/// should stay in a core's L2 cache (1 MiB on the CI host, 0.5–2 MiB on common ones) or its
/// share of the L3 while it runs all the steps. A ring all-reduce over 16 replicas of 1,472
/// tiles with 64 MB per replica has groups of 16 × 58 KB = 0.9 MiB.
pub(crate) const GROUP_MAX_BYTES: u64 = 2 << 20;

/// Groups are the tasks of a grouped run; fewer than this many per thread leave threads idle
/// at the end.
pub(crate) const GROUPS_PER_THREAD: usize = 4;

/// A stretch of fewer compute phases (repeats counted) reads each group's memory only a few
/// times, and interleaving (`interleave.rs`) already keeps an exchange's bytes cached for the
/// compute after it: measured on the sparse layer's Fwd at 1024² (a stretch of 3 phases in
/// 23 groups), grouped was 4–20 % slower in 3 alternated runs; hdiff's stretches of 1 and 2
/// phases were unchanged. A ring all-reduce over 16 replicas has 37.
pub(crate) const MIN_PHASES: u64 = 4;

/// A group's items of one phase: `items[starts[g]..starts[g + 1]]`.
pub(crate) struct ByGroup<T> {
    items: Vec<T>,
    starts: Vec<u32>,
}

impl<T> ByGroup<T> {
    #[inline]
    pub(crate) fn of(&self, g: usize) -> &[T] {
        &self.items[self.starts[g] as usize..self.starts[g + 1] as usize]
    }

    /// `items` sorted by group (stable), with `group(item)` < `groups`.
    fn new(mut items: Vec<T>, groups: usize, group: impl Fn(&T) -> usize) -> ByGroup<T> {
        items.sort_by_key(|t| group(t));
        let mut starts = vec![0u32; groups + 1];
        for t in &items {
            starts[group(t) + 1] += 1;
        }
        for g in 0..groups {
            starts[g + 1] += starts[g];
        }
        ByGroup { items, starts }
    }
}

/// One straight run, run group by group.
pub(crate) struct GroupedRunPlan {
    /// The run's window of the plain schedule (part of one block), which every task walks.
    pub(crate) body: Block,
    /// Compute phases the run executes, repeats counted (the epochs it takes).
    pub(crate) phases: u64,
    /// Number of groups.
    pub(crate) groups: usize,
    /// Per exchange phase of the run: its copies by group, then destination tile (each
    /// group's copies in the exchange plan's order otherwise).
    pub(crate) exchanges: HashMap<ExchangePhaseId, ByGroup<CopyOp>>,
    /// Per compute phase of the run: indices into its plan's `tiles`, by group, in tile order.
    pub(crate) computes: HashMap<ComputePhaseId, ByGroup<u32>>,
    /// Ranges of groups run as one parallel task each.
    pub(crate) chunks: Vec<Range<usize>>,
    /// The largest group's tile memory.
    pub(crate) largest_bytes: u64,
    /// Bytes copied by one pass of the run, repeats counted.
    pub(crate) moved: u64,
}

/// What one grouped run of an engine looks like (for tests and benchmarks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupedRun {
    /// Top-level steps of the `Seq` the run covers.
    pub steps: usize,
    /// Compute phases it executes, repeats counted.
    pub phases: u64,
    /// Groups of tiles that never exchange with one another within it.
    pub groups: usize,
    /// The tile memory of the largest group, in bytes.
    pub largest_group_bytes: u64,
    /// Bytes copied by the exchanges of one pass, repeats counted.
    pub bytes_copied: u64,
}

/// How [`find`] chooses.
#[derive(Clone, Copy)]
pub(crate) struct Rule {
    pub(crate) min_bytes: u64,
    pub(crate) min_phases: u64,
    pub(crate) min_groups: usize,
    pub(crate) max_group_bytes: u64,
}

impl Rule {
    /// The rule `mode` asks for; `None`: no grouped runs.
    pub(crate) fn for_mode(mode: Interleave, threads: usize) -> Option<Rule> {
        match mode {
            Interleave::Never | Interleave::NoGroupedRuns => None,
            Interleave::Large => Some(Rule {
                min_bytes: super::interleave::INTERLEAVE_MIN_BYTES,
                min_phases: MIN_PHASES,
                min_groups: GROUPS_PER_THREAD * threads,
                max_group_bytes: GROUP_MAX_BYTES,
            }),
            Interleave::All => Some(Rule {
                min_bytes: 0,
                min_phases: 0,
                min_groups: 2,
                max_group_bytes: u64::MAX,
            }),
        }
    }
}

/// Every straight run of the plain schedule that passes `rule`, in the order the
/// programs and then the functions are read, outer runs first.
pub(crate) fn find(inp: &Planned<'_>, rule: Rule) -> Vec<GroupedRunPlan> {
    let mut out = Vec::new();
    let mut take = |run: Block| -> bool {
        match grouped_run(inp, rule, run) {
            Some(r) => {
                out.push(r);
                true
            }
            None => false,
        }
    };
    for root in inp.schedule.plain_roots() {
        // A program or function that is itself a straight `Repeat` (or `Label`) is a block
        // of one instruction, and so a run of one.
        runs_in_block(inp.schedule, root, &mut take);
    }
    out
}

/// What each run looks like, for [`super::Engine::grouped_runs`].
pub(crate) fn describe(plans: &[GroupedRunPlan]) -> Vec<GroupedRun> {
    plans
        .iter()
        .map(|r| GroupedRun {
            steps: r.body.len(),
            phases: r.phases,
            groups: r.groups,
            largest_group_bytes: r.largest_bytes,
            bytes_copied: r.moved,
        })
        .collect()
}

/// Whether `op` is made only of exchanges, compute phases and syncs (in `Seq`, `Repeat` and
/// `Label` instructions): no control flow, no host streams, no calls.
pub(crate) fn straight(s: &Schedule, op: &Op) -> bool {
    match op {
        Op::Exchange(_) | Op::Compute(_) | Op::Sync(_) => true,
        Op::Seq(b) => s.ops[b.range()].iter().all(|o| straight(s, o)),
        Op::Repeat { body, .. } | Op::Label { body, .. } => straight(s, &s.ops[*body as usize]),
        _ => false,
    }
}

/// Offers every maximal straight run with an exchange in block `b` and the blocks inside it
/// to `take`, outer runs first; the runs nested in one are offered only if `take` refused it
/// (an outer run that is not grouped may still contain grouped ones).
fn runs_in_block(s: &Schedule, b: Block, take: &mut dyn FnMut(Block) -> bool) {
    let (start, end) = (b.start as usize, b.end as usize);
    let mut i = start;
    while i < end {
        let mut j = i;
        while j < end && straight(s, &s.ops[j]) {
            j += 1;
        }
        let run = Block {
            start: i as u32,
            end: j as u32,
        };
        let taken = j > i && s.ops[i..j].iter().any(|o| has_exchange(s, o)) && take(run);
        if !taken {
            for k in i..j.max(i + 1) {
                runs_in_op(s, k as OpIndex, take);
            }
        }
        i = j.max(i + 1);
    }
}

/// [`runs_in_block`] for the blocks inside instruction `i`.
fn runs_in_op(s: &Schedule, i: OpIndex, take: &mut dyn FnMut(Block) -> bool) {
    match &s.ops[i as usize] {
        Op::Seq(b) => runs_in_block(s, *b, take),
        _ => {
            for body in s.bodies(i) {
                runs_in_op(s, body, take);
            }
        }
    }
}

fn has_exchange(s: &Schedule, op: &Op) -> bool {
    match op {
        Op::Exchange(_) => true,
        Op::Seq(b) => s.ops[b.range()].iter().any(|o| has_exchange(s, o)),
        Op::Repeat { body, .. } | Op::Label { body, .. } => has_exchange(s, &s.ops[*body as usize]),
        _ => false,
    }
}

/// The phases of a straight instruction, each with how often one pass runs it (saturating).
fn phases_of(
    s: &Schedule,
    op: &Op,
    times: u64,
    xs: &mut Vec<(ExchangePhaseId, u64)>,
    cs: &mut Vec<(ComputePhaseId, u64)>,
) {
    match op {
        Op::Exchange(x) => xs.push((*x, times)),
        Op::Compute(c) => cs.push((*c, times)),
        Op::Seq(b) => s.ops[b.range()]
            .iter()
            .for_each(|o| phases_of(s, o, times, xs, cs)),
        Op::Repeat { count, body } => phases_of(
            s,
            &s.ops[*body as usize],
            times.saturating_mul(u64::from(*count)),
            xs,
            cs,
        ),
        Op::Label { body, .. } => phases_of(s, &s.ops[*body as usize], times, xs, cs),
        _ => {}
    }
}

/// Union–find root of `t`, halving paths.
fn root(parent: &mut [u32], mut t: u32) -> u32 {
    while parent[t as usize] != t {
        let p = parent[parent[t as usize] as usize];
        parent[t as usize] = p;
        t = p;
    }
    t
}

/// The grouped plan of `run`, if it passes `rule`.
fn grouped_run(inp: &Planned<'_>, rule: Rule, run: Block) -> Option<GroupedRunPlan> {
    let (mut xs, mut cs) = (Vec::new(), Vec::new());
    for op in &inp.schedule.ops[run.range()] {
        phases_of(inp.schedule, op, 1, &mut xs, &mut cs);
    }
    let moved = xs.iter().fold(0u64, |acc, &(x, n)| {
        let bytes: u64 = inp.exchanges[x]
            .ops
            .iter()
            .map(|o| u64::from(o.bytes))
            .sum();
        acc.saturating_add(bytes.saturating_mul(n))
    });
    let phases = cs.iter().fold(0u64, |acc, &(_, n)| acc.saturating_add(n));
    if moved < rule.min_bytes || phases < rule.min_phases {
        return None;
    }
    let xs = distinct(xs.into_iter().map(|(x, _)| x));
    let cs = distinct(cs.into_iter().map(|(c, _)| c));
    let (group_of, bytes) = tile_groups(inp, &xs, &cs);
    let groups = bytes.len();
    let largest_bytes = bytes.iter().copied().max().unwrap_or(0);
    if groups < rule.min_groups.max(2) || largest_bytes > rule.max_group_bytes {
        return None;
    }
    let mut costs = vec![0u64; groups];
    let exchanges = exchanges_by_group(inp, &xs, &group_of, &mut costs);
    let computes = computes_by_group(inp, &cs, &group_of, &mut costs);
    let chunks = if inp.threads > 1 {
        guided(&costs, inp.threads, 64 * inp.threads as u64)
    } else {
        std::iter::once(0..groups).collect()
    };
    Some(GroupedRunPlan {
        body: run,
        phases,
        groups,
        exchanges,
        computes,
        chunks,
        largest_bytes,
        moved,
    })
}

/// The distinct ids of `ids`, sorted.
fn distinct<T: Ord>(ids: impl Iterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = ids.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The tile of a compute plan's tile `ht` in phase `c`.
fn tile_of(inp: &Planned<'_>, c: ComputePhaseId, ht: &super::plan::HotTile) -> TileId {
    inp.exe.computes[c].tiles[ht.index as usize].tile
}

/// Each tile's group (`u32::MAX` for a tile the run does not touch), groups numbered in the
/// order of their smallest tile, and each group's tile memory: tiles are joined by every copy
/// of the run's exchanges (union–find).
fn tile_groups(
    inp: &Planned<'_>,
    xs: &[ExchangePhaseId],
    cs: &[ComputePhaseId],
) -> (Vec<u32>, Vec<u64>) {
    let n = inp.tile_bytes.len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    let mut used = vec![false; n];
    for &x in xs {
        for o in &inp.exchanges[x].ops {
            let (a, b) = (
                root(&mut parent, o.src_tile.as_u32()),
                root(&mut parent, o.dst_tile.as_u32()),
            );
            parent[a.max(b) as usize] = a.min(b);
            used[o.src_tile.index()] = true;
            used[o.dst_tile.index()] = true;
        }
    }
    for &c in cs {
        for ht in &inp.computes[c].tiles {
            used[tile_of(inp, c, ht).index()] = true;
        }
    }
    let mut group_of = vec![u32::MAX; n];
    let mut group_root: HashMap<u32, u32> = HashMap::new();
    let mut bytes: Vec<u64> = Vec::new();
    for t in (0..n).filter(|&t| used[t]) {
        let r = root(&mut parent, t as u32);
        let next = group_root.len() as u32;
        let g = *group_root.entry(r).or_insert(next);
        if g as usize == bytes.len() {
            bytes.push(0);
        }
        group_of[t] = g;
        bytes[g as usize] += inp.tile_bytes[t] as u64;
    }
    (group_of, bytes)
}

/// Each exchange's copies by the group of their destination, adding their cost to `costs`.
fn exchanges_by_group(
    inp: &Planned<'_>,
    xs: &[ExchangePhaseId],
    group_of: &[u32],
    costs: &mut [u64],
) -> HashMap<ExchangePhaseId, ByGroup<CopyOp>> {
    let mut out = HashMap::new();
    for &x in xs {
        let mut ops = inp.exchanges[x].ops.clone();
        // Stable: a tile's copies keep the exchange plan's order.
        ops.sort_by_key(|o| o.dst_tile);
        let by = ByGroup::new(ops, costs.len(), |o| group_of[o.dst_tile.index()] as usize);
        for (g, cost) in costs.iter_mut().enumerate() {
            *cost += by
                .of(g)
                .iter()
                .map(|o| u64::from(o.bytes) / 4 + COPY_OVERHEAD / 4)
                .sum::<u64>();
        }
        out.insert(x, by);
    }
    out
}

/// Each compute phase's tiles (indices into its plan, in tile order) by group, adding their
/// cost to `costs`.
fn computes_by_group(
    inp: &Planned<'_>,
    cs: &[ComputePhaseId],
    group_of: &[u32],
    costs: &mut [u64],
) -> HashMap<ComputePhaseId, ByGroup<u32>> {
    let mut out = HashMap::new();
    for &c in cs {
        let plan = &inp.computes[c];
        let mut ks: Vec<u32> = (0..plan.tiles.len() as u32).collect();
        ks.sort_by_key(|&k| tile_of(inp, c, &plan.tiles[k as usize]));
        let by = ByGroup::new(ks, costs.len(), |&k| {
            group_of[tile_of(inp, c, &plan.tiles[k as usize]).index()] as usize
        });
        for (g, cost) in costs.iter_mut().enumerate() {
            *cost += by
                .of(g)
                .iter()
                .map(|&k| plan.costs[k as usize])
                .sum::<u64>();
        }
        out.insert(c, by);
    }
    out
}
