//! The matmul planner: how to split `C[g, m, n] = A[g, m, k] · B[g, k, n]` over tiles.
//!
//! A plan splits m, n and k into `pm × pn × pk` blocks (sizes `⌈m/pm⌉` etc., the last block
//! of each dimension smaller when it does not divide). Each tile of a group multiplies one
//! `A` block by one `B` block into a partial `C` block, in `sk` serial steps over chunks of
//! `kc` columns of its k block (`sk = 1`: one step), accumulating: only one chunk of each
//! operand is received at a time, which is what lets products larger than the tiles' memory
//! in whole blocks fit. With `pk > 1` the `pk` partials of a `C` block are summed spread
//! over the `pk` tiles of the split: tile `l` sums slice `l` of every partial (a
//! reduce-scatter), and holds that slice of `C`. Groups (the batch) take disjoint sets of
//! `pm·pn·pk` tiles while tiles last, then share them.
//!
//! The planner enumerates every `(pm, pn, pk)` with `pm·pn·pk ≤ tiles`, and serial chunks of
//! 16 · 2ⁱ columns, and keeps the fastest by the cost model below whose memory per tile fits
//! the budget (`available_memory_proportion` of a tile), breaking ties by memory. The cost
//! model, per group slot:
//! - **multiply exchange**, per serial step: every tile receives its `A` and `B` chunks (4 or
//!   2 bytes per element), except those [`crate::create_lhs`]/[`crate::create_rhs`] put on it
//!   (chunk `s` of an `A` block on the tile of column `s mod pn` of its row, of a `B` block
//!   on the tile of row `s mod pm`); the busiest tile's bytes over the exchange rate, plus the
//!   per-message set-up;
//! - **multiply compute**, per serial step: the tile cycles of the groups' `MatMulBlock`
//!   vertices on the tile (each [`crate::codelets::block_cycles_at`] of the largest chunk at
//!   the AMP rate of the input type, a multi-worker vertex), scheduled by the cycle model's
//!   own rule (`poplar_exe::profile::model::schedule_vertices`: six times the busiest context,
//!   plus the supervisor's cycles per multi-worker vertex);
//! - **reduce exchange and compute** (`pk > 1`): `pk − 1` slices of `⌈mb·nb/pk⌉` partials
//!   into each tile of the k split, and the `SumBlocks` vertices
//!   ([`crate::codelets::sum_cycles`]) of one slice, scheduled the same way;
//! - a sync per superstep (`sk`, plus one with `pk > 1`).
//!
//! Memory per tile: the operand chunks the tile holds, the chunks it receives in a step (or,
//! when more, the partial slices it receives for the reduction: both are temporaries of their
//! superstep), its partial block and, with `pk > 1`, its slice of `C`.

use poplar_exe::profile::model::schedule_vertices;
use std::fmt::{Debug, Display};

use poplar_core::target::Target;
use poplar_core::target::TileId;

use crate::codelets::{block_cycles_at, macs_per_cycle, sum_cycles};

/// Tile cycles of `n` copies of a multi-worker vertex of `cycles` worker cycles on one tile,
/// by the cycle model's scheduling rule.
pub fn multi_worker_tile_cycles(cycles: u64, n: u64, workers: u32) -> u64 {
    schedule_vertices((0..n).map(|_| (cycles, true)), workers).tile_cycles
}

/// The sizes of a (batched) multiply `C[g, m, n] = A[g, m, k] · B[g, k, n]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatMulParams {
    pub groups: usize,
    pub m: usize,
    pub k: usize,
    pub n: usize,
}

/// As messages name them: `groups 1, m 30, k 10, n 20`.
impl std::fmt::Display for MatMulParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let MatMulParams { groups, m, k, n } = self;
        write!(f, "groups {groups}, m {m}, k {k}, n {n}")
    }
}

impl PlanParams for MatMulParams {
    const OP: &'static str = "matmul";
    const FIT_HINT: &'static str =
        "raise available_memory_proportion, give more tiles or chips, or split the batch";
    type Rule = std::convert::Infallible;
}

/// The parameters of a planned operation, as a [`PlanError`] names them.
pub trait PlanParams: Debug + Display {
    /// The operation, as messages name it (`"matmul"`, `"sparse fc"`).
    const OP: &'static str;
    /// What to change when even the plan with the least memory per tile does not fit.
    const FIT_HINT: &'static str;
    /// The operation's own rules on its parameters beyond "every size at least 1" (a type
    /// that displays the rule broken); [`std::convert::Infallible`] when there are none.
    type Rule: Debug + Display + Clone + PartialEq;
}

/// Why no plan was found for the parameters `P` (by default a dense multiply's).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError<P: PlanParams = MatMulParams> {
    /// A size is zero.
    #[error("{} ({}): every size must be at least 1", P::OP, .0)]
    Empty(P),
    /// An element type the operation does not take.
    #[error("{}: operands of type {:?}; f32 and f16 are supported", P::OP, .0)]
    Type(poplar_core::dtype::DType),
    /// Parameters that break one of the operation's own rules (`rule` says which).
    #[error("{} ({params}): {rule}", P::OP)]
    Unsupported { params: P, rule: P::Rule },
    /// Even the plan with the least memory per tile needs more than the budget.
    #[error(
        "{} ({params}) does not fit: the smallest plan needs {least_bytes_per_tile} bytes per \
         tile, the budget is {budget} ({})",
        P::OP,
        P::FIT_HINT
    )]
    DoesNotFit {
        params: P,
        least_bytes_per_tile: u64,
        budget: u64,
    },
}

/// Options of the planner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatMulOptions {
    /// Share of a tile's memory the multiply may use (Poplar's default is 0.6).
    pub available_memory_proportion: f64,
    /// Use at most this many tiles (default: all of the target's).
    pub max_tiles: Option<usize>,
    /// Type of the operands `A` and `B`: `F32`, or `F16` (64 MAC per cycle, f32 partials).
    /// `C` is f32 either way.
    pub input_type: poplar_core::dtype::DType,
}

impl Default for MatMulOptions {
    fn default() -> Self {
        MatMulOptions {
            available_memory_proportion: 0.6,
            max_tiles: None,
            input_type: poplar_core::dtype::DType::F32,
        }
    }
}

/// Modelled cycles of a plan, by phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Estimate {
    pub multiply_exchange: u64,
    pub multiply_compute: u64,
    pub reduce_exchange: u64,
    pub reduce_compute: u64,
    pub sync: u64,
}

/// `modelled cycles: multiply exchange 1 + compute 2, reduce exchange 0 + compute 0, sync 3 = 6`.
impl std::fmt::Display for Estimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "modelled cycles: multiply exchange {} + compute {}, reduce exchange {} + compute {}, sync {} = {}",
            self.multiply_exchange,
            self.multiply_compute,
            self.reduce_exchange,
            self.reduce_compute,
            self.sync,
            self.total()
        )
    }
}

impl Estimate {
    pub fn total(&self) -> u64 {
        self.multiply_exchange
            + self.multiply_compute
            + self.reduce_exchange
            + self.reduce_compute
            + self.sync
    }
}

/// A plan (see the module notes).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub params: MatMulParams,
    pub pm: usize,
    pub pn: usize,
    pub pk: usize,
    /// Block sizes (the last block of a dimension may be smaller).
    pub mb: usize,
    pub nb: usize,
    pub kb: usize,
    /// Serial steps over each tile's k block (1: none), and the columns of `A` (rows of `B`)
    /// each step multiplies: chunks of `kc`, the last of a block smaller when `kc` does not
    /// divide it.
    pub sk: usize,
    pub kc: usize,
    /// Groups placed side by side on disjoint tiles, and groups per tile.
    pub group_slots: usize,
    pub groups_per_tile: usize,
    pub tiles_used: usize,
    pub estimate: Estimate,
    /// Estimated bytes per tile, and the budget it was planned under.
    pub bytes_per_tile: u64,
    pub budget: u64,
    /// Type of `A` and `B` (`C` is f32).
    pub input_type: poplar_core::dtype::DType,
}

impl Plan {
    /// Tiles of one group slot (`pm·pn·pk`).
    pub fn tiles_per_group(&self) -> usize {
        self.pm * self.pn * self.pk
    }

    /// The tile computing block `(i, j)` of the k part `l` of group `g`. With `pk = 1` the `C`
    /// block `(i, j)` lives on `tile(g, i, j, 0)`; with `pk > 1` its flattened slice
    /// [`Plan::c_slice`]`(l)` lives on `tile(g, i, j, l)`.
    pub fn tile(&self, g: usize, i: usize, j: usize, l: usize) -> TileId {
        let slot = g % self.group_slots;
        TileId::new((slot * self.tiles_per_group() + (i * self.pn + j) * self.pk + l) as u32)
    }

    /// Rows of m block `i`, columns of n block `j`, range of k block `l`.
    pub fn m_range(&self, i: usize) -> std::ops::Range<usize> {
        range(i, self.mb, self.params.m)
    }
    pub fn n_range(&self, j: usize) -> std::ops::Range<usize> {
        range(j, self.nb, self.params.n)
    }
    pub fn k_range(&self, l: usize) -> std::ops::Range<usize> {
        range(l, self.kb, self.params.k)
    }

    /// Columns of `A` (rows of `B`) of serial step `s` of k block `l` (empty past the block).
    pub fn k_chunk(&self, l: usize, s: usize) -> std::ops::Range<usize> {
        let r = self.k_range(l);
        (r.start + s * self.kc).min(r.end)..(r.start + (s + 1) * self.kc).min(r.end)
    }

    /// The tile holding chunk `s` of `A` block `(i, l)` of group `g`.
    pub fn lhs_tile(&self, g: usize, i: usize, l: usize, s: usize) -> TileId {
        self.tile(g, i, s % self.pn, l)
    }

    /// The tile holding chunk `s` of `B` block `(l, j)` of group `g`.
    pub fn rhs_tile(&self, g: usize, l: usize, j: usize, s: usize) -> TileId {
        self.tile(g, s % self.pm, j, l)
    }

    /// The flattened elements of a `C` block of `len` elements that the tile of k part `l`
    /// sums and holds (all of them with `pk = 1`; empty for `l` past a short block).
    pub fn c_slice(&self, len: usize, l: usize) -> std::ops::Range<usize> {
        range(l, len.div_ceil(self.pk), len)
    }
}

fn range(i: usize, b: usize, total: usize) -> std::ops::Range<usize> {
    (i * b).min(total)..((i + 1) * b).min(total)
}

impl std::fmt::Display for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = &self.params;
        writeln!(
            f,
            "matmul plan: {} × [{} × {}] · [{} × {}], {} operands, f32 partials",
            p.groups,
            p.m,
            p.k,
            p.k,
            p.n,
            self.input_type.poplar_name()
        )?;
        writeln!(
            f,
            "  split m {} × n {} × k {} (blocks {} × {} × {}), k serially in {} step(s) of {}; {} tiles per group, {} group slot(s), {} group(s) per tile, {} tiles used",
            self.pm,
            self.pn,
            self.pk,
            self.mb,
            self.nb,
            self.kb,
            self.sk,
            self.kc,
            self.tiles_per_group(),
            self.group_slots,
            self.groups_per_tile,
            self.tiles_used
        )?;
        writeln!(
            f,
            "  memory per tile: {} of {} bytes budgeted",
            self.bytes_per_tile, self.budget
        )?;
        write!(f, "  {}", self.estimate)
    }
}

/// One candidate split: `pm × pn × pk` tiles per group, k in `sk` serial chunks of `kc`.
#[derive(Debug, Clone, Copy)]
struct Split {
    pm: usize,
    pn: usize,
    pk: usize,
    sk: usize,
    kc: usize,
}

/// Chunks of one operand block the busiest tile holds, and whether it receives one more in
/// some step: `steps` chunks stored round-robin over the `sharers` tiles that read them.
fn held_and_received(steps: u64, sharers: u64) -> (u64, u64) {
    let held = steps.div_ceil(sharers);
    (held, u64::from(steps > held))
}

/// Cost and memory of one candidate split: `(estimate, bytes per tile, group slots, groups
/// per tile)`.
fn evaluate(
    target: &Target,
    p: &MatMulParams,
    elem: u64,
    macs: u64,
    tiles: usize,
    sp: Split,
) -> (Estimate, u64, usize, usize) {
    let Split { pm, pn, pk, sk, kc } = sp;
    let tpg = pm * pn * pk;
    let slots = (tiles / tpg).max(1).min(p.groups);
    let gpt = p.groups.div_ceil(slots) as u64;
    let (mb, nb) = (p.m.div_ceil(pm) as u64, p.n.div_ceil(pn) as u64);
    let (sk, kc, pk64) = (sk as u64, kc as u64, pk as u64);
    let rate = u64::from(target.exchange_bytes_per_cycle.max(1));
    let setup = u64::from(target.exchange_setup_cycles);
    let w = target.workers_per_tile;
    // Chunk s of A block (i, l) is held by tile (i, s mod pn, l) and needed by the pn tiles
    // (i, *, l); of B block (l, j) by (s mod pm, j, l), needed by (*, j, l). The busiest
    // receiver gets both chunks in a step; a chunk is sent once (a broadcast).
    let recv = elem * kc * (if pn > 1 { mb } else { 0 } + if pm > 1 { nb } else { 0 });
    let messages = u64::from(pn > 1) + u64::from(pm > 1);
    let step_compute = multi_worker_tile_cycles(block_cycles_at(mb, kc, nb, macs, w), gpt, w);
    let slice = (mb * nb).div_ceil(pk64);
    let (reduce_exchange, reduce_compute) = if pk > 1 {
        (
            gpt * (((pk64 - 1) * slice * 4).div_ceil(rate) + (pk64 - 1) * setup),
            multi_worker_tile_cycles(sum_cycles(pk64, slice, w), gpt, w),
        )
    } else {
        (0, 0)
    };
    let est = Estimate {
        multiply_exchange: sk * gpt * (recv.div_ceil(rate) + messages * setup),
        multiply_compute: sk * step_compute,
        reduce_exchange,
        reduce_compute,
        sync: (sk + u64::from(pk > 1)) * u64::from(target.internal_sync_cycles),
    };
    let (a_held, a_recv) = held_and_received(sk, pn as u64);
    let (b_held, b_recv) = held_and_received(sk, pm as u64);
    let held = elem * kc * (mb * a_held + nb * b_held) + 4 * mb * nb;
    let received = elem * kc * (mb * a_recv + nb * b_recv);
    let bytes = if pk > 1 {
        held + 4 * slice + received.max(4 * (pk64 - 1) * slice)
    } else {
        held + received
    };
    (est, gpt * bytes, slots, gpt as usize)
}

/// Columns per serial step tried for a k block of `kb`: the whole block, and 16 · 2ⁱ below it
/// (whole AMP input-channel groups).
fn k_chunks(kb: usize) -> impl Iterator<Item = usize> {
    std::iter::once(kb).chain((4..12).map(|i| 1usize << i).filter(move |&c| c < kb))
}

/// Whether a split of `n` into `parts` of `⌈n/parts⌉` leaves its last part empty (the same
/// as a smaller split).
fn wasteful(n: usize, parts: usize) -> bool {
    (parts - 1) * n.div_ceil(parts) >= n
}

/// The plan of a chosen split.
#[allow(clippy::too_many_arguments)]
fn plan_of(
    p: &MatMulParams,
    sp: Split,
    estimate: Estimate,
    bytes_per_tile: u64,
    budget: u64,
    group_slots: usize,
    groups_per_tile: usize,
    input_type: poplar_core::dtype::DType,
) -> Plan {
    Plan {
        params: *p,
        pm: sp.pm,
        pn: sp.pn,
        pk: sp.pk,
        mb: p.m.div_ceil(sp.pm),
        nb: p.n.div_ceil(sp.pn),
        kb: p.k.div_ceil(sp.pk),
        sk: sp.sk,
        kc: sp.kc,
        group_slots,
        groups_per_tile,
        tiles_used: sp.pm * sp.pn * sp.pk * group_slots,
        estimate,
        bytes_per_tile,
        budget,
        input_type,
    }
}

/// Plans a multiply on `target` (module notes).
pub fn plan(target: &Target, p: MatMulParams, opts: &MatMulOptions) -> Result<Plan, PlanError> {
    if p.groups == 0 || p.m == 0 || p.k == 0 || p.n == 0 {
        return Err(PlanError::Empty(p));
    }
    let t = opts.input_type;
    if t != poplar_core::dtype::DType::F32 && t != poplar_core::dtype::DType::F16 {
        return Err(PlanError::Type(t));
    }
    let (elem, macs) = (t.size() as u64, macs_per_cycle(t));
    let tiles = (target.num_tiles() as usize)
        .min(opts.max_tiles.unwrap_or(usize::MAX))
        .max(1);
    let budget = (f64::from(target.bytes_per_tile)
        * opts.available_memory_proportion.clamp(0.0, 1.0)) as u64;
    let mut best: Option<(u64, u64, Plan)> = None;
    let mut least = u64::MAX;
    for pm in (1..=p.m.min(tiles)).filter(|&pm| !wasteful(p.m, pm)) {
        for pn in (1..=p.n.min(tiles / pm)).filter(|&pn| !wasteful(p.n, pn)) {
            for pk in (1..=p.k.min(tiles / (pm * pn))).filter(|&pk| !wasteful(p.k, pk)) {
                let kb = p.k.div_ceil(pk);
                for kc in k_chunks(kb) {
                    let sp = Split {
                        pm,
                        pn,
                        pk,
                        sk: kb.div_ceil(kc),
                        kc,
                    };
                    let (est, bytes, slots, gpt) = evaluate(target, &p, elem, macs, tiles, sp);
                    least = least.min(bytes);
                    let key = (est.total(), bytes);
                    if bytes > budget || best.as_ref().is_some_and(|(c, b, _)| (*c, *b) <= key) {
                        continue;
                    }
                    best = Some((
                        key.0,
                        key.1,
                        plan_of(&p, sp, est, bytes, budget, slots, gpt, t),
                    ));
                }
            }
        }
    }
    best.map(|(_, _, plan)| plan).ok_or(PlanError::DoesNotFit {
        params: p,
        least_bytes_per_tile: least,
        budget,
    })
}
