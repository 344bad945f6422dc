//! The convolution planner: how to split one pass ([`PassShape`]) over tiles.
//!
//! A plan splits the batch `n`, the output channels `co` (per group), the output field along
//! `split_dim` and the input channels `ci` into `pb × pco × pf × pci` blocks (sizes rounded
//! up, the last block of each smaller), as poplibs' planner partitions batch, output
//! channels, field and input channels. Each tile of a group slot computes one output block
//! from one input window and one weights block into a partial; with `pci > 1` the partials of
//! an output block are summed on the tile that holds it (the first of the input-channel
//! split). Groups take disjoint sets of `pb·pco·pf·pci` tiles while tiles last, then share.
//!
//! The planner enumerates the splits whose blocks differ, keeps the fastest whose memory per
//! tile fits the budget, and breaks ties by memory. Its cost model is the matmul's
//! ([`mod@crate::plan`]) with the convolution's blocks:
//! - **multiply compute**: [`super::codelets::block_cycles`] of the largest block, the groups
//!   per tile scheduled by the cycle model's own rule — the same formula the codelet reports,
//!   so this part equals the simulator's modelled vertex cycles — plus, where a field block's
//!   input window straddles tiles, the on-tile copies that gather the tile's own part of each
//!   window run beside its halo ([`ConvPlan::window_copy_cycles`]: per input channel and
//!   batch element, the cycle model's local-copy cost of the own part);
//! - **multiply exchange**: the busiest tile receives its input window (when the output
//!   channels are split, or the halo of its field block when only the field is) and its
//!   weights block (when batch or field is split), over the exchange rate, plus a message
//!   set-up per run received: one per (input channel, batch element) and source tile of the
//!   window, one per output channel of the weights. An estimate of the compiler's exchange
//!   (the receive side only), not the same computation;
//! - **reduce** (`pci > 1`): the `pci − 1` partial blocks and `SumBlocks`, as the matmul's;
//! - a sync per superstep.
//!
//! Memory per tile: per group it serves, the input window, the weights block and the output
//! partial (f32), and with `pci > 1` the received partials and the output block; 8 bytes per
//! sub-vector of the vertex's lists.

use poplar_core::dtype::DType;
use poplar_core::target::{Target, TileId};
use poplar_exe::profile::model::local_copy_cycles;

use super::codelets::block_cycles;
use super::params::{ConvParams, ConvPass, ConvPlanError, PassShape};
use crate::codelets::{macs_per_cycle, sum_cycles};
use crate::plan::{multi_worker_tile_cycles, Estimate, PlanError};

/// Options of the convolution planner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConvOptions {
    /// Share of a tile's memory the pass may use (Poplar's default is 0.6).
    pub available_memory_proportion: f64,
    /// Use at most this many tiles (default: all of the target's).
    pub max_tiles: Option<usize>,
}

impl Default for ConvOptions {
    fn default() -> Self {
        ConvOptions {
            available_memory_proportion: 0.6,
            max_tiles: None,
        }
    }
}

/// A split of the four dimensions: `[batch, output channels, field, input channels]`.
type Split = [usize; 4];

/// A plan of one pass (module notes).
#[derive(Debug, Clone, PartialEq)]
pub struct ConvPlan {
    pub params: ConvParams,
    pub pass: ConvPass,
    pub shape: PassShape,
    /// Splits of batch, output channels, field (along `shape.split_dim`) and input channels.
    pub pb: usize,
    pub pco: usize,
    pub pf: usize,
    pub pci: usize,
    pub group_slots: usize,
    pub groups_per_tile: usize,
    pub tiles_used: usize,
    pub estimate: Estimate,
    /// The part of `estimate.multiply_compute` that gathers input windows straddling tiles
    /// (on-tile copies); the rest is the `ConvPartial` vertices'.
    pub window_copy_cycles: u64,
    pub bytes_per_tile: u64,
    pub budget: u64,
}

fn range(i: usize, parts: usize, total: usize) -> std::ops::Range<usize> {
    let b = total.div_ceil(parts);
    (i * b).min(total)..((i + 1) * b).min(total)
}

impl ConvPlan {
    pub fn tiles_per_group(&self) -> usize {
        self.pb * self.pco * self.pf * self.pci
    }

    /// The tile computing batch block `b`, output-channel block `j`, field block `f` and
    /// input-channel block `l` of group `g`; the output block lives on `tile(g, b, j, f, 0)`.
    pub fn tile(&self, g: usize, b: usize, j: usize, f: usize, l: usize) -> TileId {
        let slot = g % self.group_slots;
        let within = ((b * self.pco + j) * self.pf + f) * self.pci + l;
        TileId::new((slot * self.tiles_per_group() + within) as u32)
    }

    pub fn n_range(&self, b: usize) -> std::ops::Range<usize> {
        range(b, self.pb, self.shape.n)
    }
    pub fn co_range(&self, j: usize) -> std::ops::Range<usize> {
        range(j, self.pco, self.shape.co)
    }
    pub fn ci_range(&self, l: usize) -> std::ops::Range<usize> {
        range(l, self.pci, self.shape.ci)
    }
    /// Outputs of field block `f` in dimension `d` (all of them but along `split_dim`).
    pub fn out_range(&self, f: usize, d: usize) -> std::ops::Range<usize> {
        if d == self.shape.split_dim {
            range(f, self.pf, self.shape.out(d))
        } else {
            0..self.shape.out(d)
        }
    }
    /// Inputs of field block `f` in dimension `d`, as the input is spread for the plan: the
    /// input split evenly along `split_dim`.
    pub fn in_range(&self, f: usize, d: usize) -> std::ops::Range<usize> {
        if d == self.shape.split_dim {
            range(f, self.pf, self.shape.field[d])
        } else {
            0..self.shape.field[d]
        }
    }
}

impl std::fmt::Display for ConvPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "convolution plan ({:?}): {}", self.pass, self.params)?;
        writeln!(
            f,
            "  split batch {} × out channels {} × field {} × in channels {}; {} tiles per \
             group, {} group slot(s), {} group(s) per tile, {} tiles used",
            self.pb,
            self.pco,
            self.pf,
            self.pci,
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

/// What the cost model needs of the target and the pass.
struct Costing<'a> {
    target: &'a Target,
    shape: &'a PassShape,
    elem: u64,
    macs: u64,
    tiles: usize,
}

/// The input the field blocks of a split into `pf` read along the split dimension, the
/// largest of each over the blocks: the window, the part of it other tiles hold (the halo),
/// the part the block's own tiles hold where a halo comes too, the source tiles, and the
/// source tiles of the halo.
#[derive(Debug, Default)]
struct SplitWindow {
    rows: u64,
    halo: u64,
    local: u64,
    sources: u64,
    halo_sources: u64,
}

fn split_window(s: &PassShape, pf: usize) -> SplitWindow {
    let sd = s.split_dim;
    let (outs, field) = (s.out(sd), s.field[sd]);
    let per = field.div_ceil(pf).max(1);
    let mut w = SplitWindow::default();
    for f in 0..pf {
        let o = range(f, pf, outs);
        if o.is_empty() {
            continue;
        }
        let win = s.window(sd, o);
        let own = range(f, pf, field);
        let local = win
            .end
            .min(own.end)
            .saturating_sub(win.start.max(own.start)) as u64;
        let sources = ((win.end - 1) / per - win.start / per + 1) as u64;
        let halo = win.len() as u64 - local;
        w.rows = w.rows.max(win.len() as u64);
        w.halo = w.halo.max(halo);
        if halo > 0 {
            w.local = w.local.max(local);
        }
        w.sources = w.sources.max(sources);
        w.halo_sources = w.halo_sources.max(sources - u64::from(local > 0));
    }
    w
}

/// What one split costs.
struct Evaluation {
    estimate: Estimate,
    bytes: u64,
    slots: usize,
    gpt: usize,
    window_copies: u64,
}

/// The cost, memory, group slots and groups per tile of one split.
fn evaluate(c: &Costing<'_>, split: Split) -> Evaluation {
    let (s, t) = (c.shape, c.target);
    let [pb, pco, pf, pci] = split;
    let sd = s.split_dim;
    let nb = s.n.div_ceil(pb) as u64;
    let cob = s.co.div_ceil(pco) as u64;
    let cib = s.ci.div_ceil(pci) as u64;
    let fb = s.out(sd).div_ceil(pf);
    let tpg = pb * pco * pf * pci;
    let slots = (c.tiles / tpg).max(1).min(s.g);
    let gpt = s.g.div_ceil(slots) as u64;
    let mut positions = fb as u64;
    // The window over the dimensions not split: read whole by every block.
    let mut other = 1u64;
    for d in (0..3).filter(|&d| d != sd) {
        positions *= s.out(d) as u64;
        other *= s.window(d, 0..s.out(d)).len() as u64;
    }
    let wc = split_window(s, pf);
    let window = wc.rows * other;
    let taps = s.taps() as u64;
    let rate = u64::from(t.exchange_bytes_per_cycle.max(1));
    let setup = u64::from(t.exchange_setup_cycles);
    let in_bytes = c.elem * nb * cib * window;
    // The input blocks are stored channel-major: a channel's window over the block's batch is
    // one run, or, where it straddles tiles, one run per batch element and source tile.
    let runs = if wc.sources > 1 { cib * nb } else { cib };
    let (recv_in, in_messages) = if pco > 1 {
        (in_bytes, runs * wc.sources)
    } else {
        (c.elem * nb * cib * wc.halo * other, runs * wc.halo_sources)
    };
    // Each output channel's weights, `[cib, taps]`, are one run.
    let (recv_w, w_messages) = if pb * pf > 1 {
        (c.elem * cob * cib * taps, cob)
    } else {
        (0, 0)
    };
    // Where the window straddles tiles, the compiler gathers the tile's own part of each run
    // beside the received halo with an on-tile copy (on the tiles of the first output-channel
    // block, which hold the input).
    let copies = if wc.halo > 0 && wc.local > 0 {
        let bytes = c.elem * wc.local * other;
        runs * local_copy_cycles(bytes)
    } else {
        0
    };
    let w = t.workers_per_tile;
    let out_block = nb * cob * positions;
    let vertices = multi_worker_tile_cycles(
        block_cycles(nb * cob, cob, positions, taps, cib, c.macs, w),
        gpt,
        w,
    );
    let est = Estimate {
        multiply_exchange: gpt
            * ((recv_in + recv_w).div_ceil(rate) + (in_messages + w_messages) * setup),
        multiply_compute: vertices + gpt * copies,
        reduce_exchange: if pci > 1 {
            gpt * ((4 * (pci as u64 - 1) * out_block).div_ceil(rate) + (pci as u64 - 1) * setup)
        } else {
            0
        },
        reduce_compute: if pci > 1 {
            multi_worker_tile_cycles(sum_cycles(pci as u64, out_block, w), gpt, w)
        } else {
            0
        },
        sync: (1 + u64::from(pci > 1)) * u64::from(t.internal_sync_cycles),
    };
    let lists = 8 * (cib + cob + nb * cob);
    let mut bytes = in_bytes + c.elem * cob * cib * taps + 4 * out_block + lists;
    if pci > 1 {
        bytes += 4 * (pci as u64 - 1) * out_block + 4 * out_block;
    }
    Evaluation {
        estimate: est,
        bytes: gpt * bytes,
        slots,
        gpt: gpt as usize,
        window_copies: gpt * copies,
    }
}

/// The split counts of `total` that give distinct block sizes, at most `limit`.
fn splits(total: usize, limit: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (1..=total.min(limit))
        .filter(|&p| (p - 1) * total.div_ceil(p) < total)
        .collect();
    v.dedup_by_key(|p| total.div_ceil(*p));
    v
}

/// The best split so far: its (cycles, bytes) key, split and evaluation.
struct Best {
    key: (u64, u64),
    split: Split,
    eval: Evaluation,
}

/// Plans one pass of a convolution on `target` (module notes).
pub fn plan_convolution(
    target: &Target,
    params: &ConvParams,
    pass: ConvPass,
    opts: &ConvOptions,
) -> Result<ConvPlan, ConvPlanError> {
    if params.any_zero() {
        return Err(PlanError::Empty(Box::new(params.clone())));
    }
    params.check().map_err(|rule| PlanError::Unsupported {
        params: Box::new(params.clone()),
        rule,
    })?;
    let t = params.input_type;
    if t != DType::F32 && t != DType::F16 {
        return Err(PlanError::Type(t));
    }
    let shape = PassShape::of(params, pass);
    let tiles = (target.num_tiles() as usize)
        .min(opts.max_tiles.unwrap_or(usize::MAX))
        .max(1);
    let budget = (f64::from(target.bytes_per_tile)
        * opts.available_memory_proportion.clamp(0.0, 1.0)) as u64;
    let costing = Costing {
        target,
        shape: &shape,
        elem: t.size() as u64,
        macs: macs_per_cycle(t),
        tiles,
    };
    let mut best: Option<Best> = None;
    let mut least = u64::MAX;
    for pb in splits(shape.n, tiles) {
        for pco in splits(shape.co, tiles / pb) {
            for pf in splits(shape.out(shape.split_dim), tiles / (pb * pco)) {
                for pci in splits(shape.ci, tiles / (pb * pco * pf)) {
                    let split = [pb, pco, pf, pci];
                    let eval = evaluate(&costing, split);
                    least = least.min(eval.bytes);
                    let key = (eval.estimate.total(), eval.bytes);
                    if eval.bytes > budget || best.as_ref().is_some_and(|b| b.key <= key) {
                        continue;
                    }
                    best = Some(Best { key, split, eval });
                }
            }
        }
    }
    let Some(Best {
        split: [pb, pco, pf, pci],
        eval,
        ..
    }) = best
    else {
        return Err(PlanError::DoesNotFit {
            params: Box::new(params.clone()),
            least_bytes_per_tile: least,
            budget,
        });
    };
    Ok(ConvPlan {
        params: params.clone(),
        pass,
        shape,
        pb,
        pco,
        pf,
        pci,
        group_slots: eval.slots,
        groups_per_tile: eval.gpt,
        tiles_used: pb * pco * pf * pci * eval.slots,
        estimate: eval.estimate,
        window_copy_cycles: eval.window_copies,
        bytes_per_tile: eval.bytes,
        budget,
    })
}
