//! A static estimate of one program's modelled time, without running it: the program's steps
//! walked with the cycle model's per-phase costs, as if every tile waited for the slowest at
//! every phase (bulk-synchronous). For programs whose control flow is `Repeat` and sequences,
//! such as the collectives, this needs no data; `If` and `Switch` take their costliest branch
//! and `RepeatWhileTrue` counts one iteration (the estimate says so in `assumed`).
//!
//! It is an upper bound of the profile's replay (which lets tiles run ahead between syncs)
//! and equal to it when each phase's busiest tile is the same tile; use it to compare
//! configurations too large to simulate (an all-reduce of 256 MB over 64 replicas).

use super::model::CycleModel;
use crate::exe::{Executable, Step, SyncKind};

/// The estimate of a program, in cycles.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProgramEstimate {
    pub cycles: u64,
    pub compute: u64,
    pub exchange: u64,
    pub sync: u64,
    /// Transfers to and from Streaming Memory and the host waited for.
    pub transfer: u64,
    /// Exchange phases executed.
    pub exchange_phases: u64,
    /// Bytes delivered to tiles of other chips, over all exchange phases executed.
    pub inter_chip_bytes: u64,
    /// Control flow whose cost depends on data (`If`, `Switch`, `While`) was met.
    pub assumed: bool,
}

impl ProgramEstimate {
    fn add(&mut self, o: &ProgramEstimate) {
        self.cycles += o.cycles;
        self.compute += o.compute;
        self.exchange += o.exchange;
        self.sync += o.sync;
        self.transfer += o.transfer;
        self.exchange_phases += o.exchange_phases;
        self.inter_chip_bytes += o.inter_chip_bytes;
        self.assumed |= o.assumed;
    }

    fn times(&self, n: u64) -> ProgramEstimate {
        ProgramEstimate {
            cycles: self.cycles.saturating_mul(n),
            compute: self.compute.saturating_mul(n),
            exchange: self.exchange.saturating_mul(n),
            sync: self.sync.saturating_mul(n),
            transfer: self.transfer.saturating_mul(n),
            exchange_phases: self.exchange_phases.saturating_mul(n),
            inter_chip_bytes: self.inter_chip_bytes.saturating_mul(n),
            assumed: self.assumed,
        }
    }
}

/// The estimate of top-level program `index` of a flat (not replicated, or expanded with
/// [`Executable::expand_replicas`]) executable, with its cycle model. `None` if there is no
/// such program.
pub fn estimate_program(
    exe: &Executable,
    model: &CycleModel,
    index: usize,
) -> Option<ProgramEstimate> {
    let step = exe.programs.get(index)?;
    Some(walk(exe, model, step, 0))
}

/// If `s` is a transfer, or a sequence of transfers only: adds each transfer's cycles to
/// the chips it touches (`chips`) and returns true; otherwise leaves `chips` alone.
fn transfer_chips(
    exe: &Executable,
    model: &CycleModel,
    s: &Step,
    chips: &mut std::collections::BTreeMap<u32, u64>,
) -> bool {
    let cost = match s {
        Step::StreamIn { stream, runs } | Step::StreamOut { stream, runs }
            if (*stream as usize) < exe.streams.len() =>
        {
            super::stream_cost(exe, *stream, runs)
        }
        Step::Remote(id) => match model.transfers.get(id.as_u32() as usize) {
            Some(t) => t.clone(),
            None => return false,
        },
        Step::Seq(v) if !v.is_empty() => {
            let mut mine = chips.clone();
            if !v.iter().all(|c| transfer_chips(exe, model, c, &mut mine)) {
                return false;
            }
            *chips = mine;
            return true;
        }
        _ => return false,
    };
    let mut touched: Vec<u32> = cost.tiles.iter().map(|&t| model.target.ipu_of(t)).collect();
    touched.dedup();
    for c in touched {
        *chips.entry(c).or_default() += cost.cycles;
    }
    true
}

fn walk(exe: &Executable, model: &CycleModel, step: &Step, depth: u32) -> ProgramEstimate {
    let mut e = ProgramEstimate::default();
    if depth > 64 {
        // Calls nest at most as deep as the executable's check allows (no recursion).
        e.assumed = true;
        return e;
    }
    match step {
        Step::Seq(v) => {
            // Transfers one after another on different chips run side by side (each chip
            // has its own link): a stretch of them costs its busiest chip's sum.
            let mut chips: std::collections::BTreeMap<u32, u64> = Default::default();
            let flush = |e: &mut ProgramEstimate,
                         chips: &mut std::collections::BTreeMap<u32, u64>| {
                let t = chips.values().copied().max().unwrap_or(0);
                e.transfer += t;
                e.cycles += t;
                chips.clear();
            };
            for s in v {
                if !transfer_chips(exe, model, s, &mut chips) {
                    flush(&mut e, &mut chips);
                    e.add(&walk(exe, model, s, depth));
                }
            }
            flush(&mut e, &mut chips);
        }
        Step::Label { body, .. } => e = walk(exe, model, body, depth),
        Step::Sync(kind) => {
            let c = u64::from(match kind {
                SyncKind::Internal => model.target.internal_sync_cycles,
                SyncKind::Global => model.target.global_sync_cycles,
            });
            e.sync = c;
            e.cycles = c;
        }
        Step::Exchange(id) => {
            if let Some(x) = model.exchanges.get(id.as_u32() as usize) {
                e.exchange = x.max;
                e.cycles = x.max;
                e.exchange_phases = 1;
                e.inter_chip_bytes = x.inter_chip_bytes;
            }
        }
        Step::Compute(id) => {
            if let Some(c) = model.computes.get(id.as_u32() as usize) {
                e.compute = c.max;
                e.cycles = c.max;
            }
        }
        Step::Repeat { count, body } => e = walk(exe, model, body, depth).times(u64::from(*count)),
        Step::While { cond, body, .. } => {
            e = walk(exe, model, cond, depth);
            e.add(&walk(exe, model, body, depth));
            e.add(&walk(exe, model, cond, depth));
            e.assumed = true;
        }
        Step::If { then, else_, .. } => {
            let (a, b) = (
                walk(exe, model, then, depth),
                walk(exe, model, else_, depth),
            );
            e = if a.cycles >= b.cycles { a } else { b };
            e.assumed = true;
        }
        Step::Switch { cases, default, .. } => {
            e = walk(exe, model, default, depth);
            for (_, c) in cases {
                let x = walk(exe, model, c, depth);
                if x.cycles > e.cycles {
                    e = x;
                }
            }
            e.assumed = true;
        }
        Step::Call(f) => {
            if let Some(body) = exe.functions.get(*f) {
                e = walk(exe, model, body, depth + 1);
            }
        }
        Step::StreamIn { .. } | Step::StreamOut { .. } | Step::Remote(_) => {
            let mut chips = Default::default();
            if transfer_chips(exe, model, step, &mut chips) {
                e.transfer = chips.values().copied().max().unwrap_or(0);
                e.cycles = e.transfer;
            }
        }
        Step::OverlapIo { io, compute } => {
            // Side by side: the compute, and whatever of the transfers outlasts it.
            let io = walk(exe, model, io, depth);
            e = walk(exe, model, compute, depth);
            let extra = io.cycles.saturating_sub(e.cycles);
            e.transfer += extra;
            e.cycles += extra;
        }
    }
    e
}
