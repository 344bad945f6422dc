//! The matmul planner: how to split `C[g, m, n] = A[g, m, k] · B[g, k, n]` over tiles.
//!
//! A plan splits m, n and k into `pm × pn × pk` blocks (sizes `⌈m/pm⌉` etc., the last block
//! of each dimension smaller when it does not divide). Each tile of a group multiplies one
//! `A` block by one `B` block into a partial `C` block; with `pk > 1` the `pk` partials of a
//! `C` block are summed on the tile that holds it (the first of the k split). Groups (the
//! batch) take disjoint sets of `pm·pn·pk` tiles while tiles last, then share them.
//!
//! The planner enumerates every `(pm, pn, pk)` with `pm·pn·pk ≤ tiles` and keeps the fastest
//! by the cost model below whose memory per tile fits the budget (`available_memory_proportion`
//! of a tile), breaking ties by memory. The cost model, per group slot and superstep:
//! - **multiply exchange**: every tile receives its `A` and `B` blocks (4 or 2 bytes per element),
//!   except those of the operands [`crate::create_lhs`]/[`crate::create_rhs`] put on it; the
//!   busiest tile's bytes over the exchange rate, plus the per-message set-up;
//! - **multiply compute**: the tile cycles of the groups' `MatMulBlock` vertices on the tile
//!   (each [`crate::codelets::block_cycles_at`] of the largest block at the AMP rate of the
//!   input type, a multi-worker vertex), scheduled by the cycle model's own rule
//!   (`poplar_exe::profile::model::schedule_vertices`: six times the busiest context, plus the
//!   supervisor's cycles per multi-worker vertex);
//! - **reduce exchange and compute** (`pk > 1`): `pk − 1` partial blocks to the first tile of
//!   the k split, and the `SumBlocks` vertices ([`crate::codelets::sum_cycles`]) scheduled
//!   the same way;
//! - a sync per superstep.
//!
//! Memory per tile: the `A`, `B` and partial blocks of every group the tile serves, and with
//! `pk > 1` the received partials and the output block.

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

    /// The tile computing block `(i, j)` of the k part `l` of group `g`; the `C` block `(i, j)`
    /// lives on `tile(g, i, j, 0)`.
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
            "  split m {} × n {} × k {} (blocks {} × {} × {}); {} tiles per group, {} group slot(s), {} group(s) per tile, {} tiles used",
            self.pm,
            self.pn,
            self.pk,
            self.mb,
            self.nb,
            self.kb,
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

/// Cost and memory of one candidate split.
#[allow(clippy::too_many_arguments)]
fn evaluate(
    target: &Target,
    p: &MatMulParams,
    elem: u64,
    macs: u64,
    tiles: usize,
    pm: usize,
    pn: usize,
    pk: usize,
) -> (Estimate, u64, usize, usize) {
    let (mb, nb, kb) = (p.m.div_ceil(pm), p.n.div_ceil(pn), p.k.div_ceil(pk));
    let tpg = pm * pn * pk;
    let slots = (tiles / tpg).max(1).min(p.groups);
    let gpt = p.groups.div_ceil(slots) as u64;
    let (mb, nb, kb) = (mb as u64, nb as u64, kb as u64);
    let rate = u64::from(target.exchange_bytes_per_cycle.max(1));
    let setup = u64::from(target.exchange_setup_cycles);
    // A block (i, l) is held by tile (i, 0, l) and needed by the pn tiles (i, *, l); B block
    // (l, j) by tile (0, j, l) and needed by (*, j, l). The busiest receiver gets both blocks;
    // the busiest sender sends its A block once (a broadcast) and its B block once.
    let a_bytes = elem * mb * kb;
    let b_bytes = elem * kb * nb;
    let recv = if pn > 1 { a_bytes } else { 0 } + if pm > 1 { b_bytes } else { 0 };
    let messages = u64::from(pn > 1) + u64::from(pm > 1);
    let multiply_exchange = gpt * (recv.div_ceil(rate) + messages * setup);
    let w = target.workers_per_tile;
    let multiply_compute = multi_worker_tile_cycles(block_cycles_at(mb, kb, nb, macs, w), gpt, w);
    let (reduce_exchange, reduce_compute) = if pk > 1 {
        let part = 4 * mb * nb;
        (
            gpt * (((pk as u64 - 1) * part).div_ceil(rate) + (pk as u64 - 1) * setup),
            multi_worker_tile_cycles(sum_cycles(pk as u64, mb * nb, w), gpt, w),
        )
    } else {
        (0, 0)
    };
    let supersteps = 1 + u64::from(pk > 1);
    let est = Estimate {
        multiply_exchange,
        multiply_compute,
        reduce_exchange,
        reduce_compute,
        sync: supersteps * u64::from(target.internal_sync_cycles),
    };
    let mut bytes = elem * (mb * kb + kb * nb) + 4 * mb * nb;
    if pk > 1 {
        // Received partials and the output block on the first tile of the k split.
        bytes += 4 * (pk as u64 - 1) * mb * nb + 4 * mb * nb;
    }
    (est, gpt * bytes, slots, gpt as usize)
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
    for pm in 1..=p.m.min(tiles) {
        for pn in 1..=p.n.min(tiles / pm) {
            for pk in 1..=p.k.min(tiles / (pm * pn)) {
                // Splits whose last block would be empty duplicate a smaller split.
                if (pm - 1) * p.m.div_ceil(pm) >= p.m
                    || (pn - 1) * p.n.div_ceil(pn) >= p.n
                    || (pk - 1) * p.k.div_ceil(pk) >= p.k
                {
                    continue;
                }
                let (est, bytes, slots, gpt) = evaluate(target, &p, elem, macs, tiles, pm, pn, pk);
                least = least.min(bytes);
                if bytes > budget {
                    continue;
                }
                let key = (est.total(), bytes);
                if best.as_ref().is_some_and(|(c, b, _)| (*c, *b) <= key) {
                    continue;
                }
                let tpg = pm * pn * pk;
                best = Some((
                    key.0,
                    key.1,
                    Plan {
                        params: p,
                        pm,
                        pn,
                        pk,
                        mb: p.m.div_ceil(pm),
                        nb: p.n.div_ceil(pn),
                        kb: p.k.div_ceil(pk),
                        group_slots: slots,
                        groups_per_tile: gpt,
                        tiles_used: tpg * slots,
                        estimate: est,
                        bytes_per_tile: bytes,
                        budget,
                        input_type: t,
                    },
                ));
            }
        }
    }
    best.map(|(_, _, plan)| plan).ok_or(PlanError::DoesNotFit {
        params: p,
        least_bytes_per_tile: least,
        budget,
    })
}
