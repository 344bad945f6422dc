//! The replay of stored steps on the tiles' clocks, and the accumulators it adds to.

use super::event::*;
use crate::profile::data::*;
use crate::profile::model::CycleModel;
use crate::profile::timeline::TraceBuilder;

/// Per-label accumulators (inclusive of nested labels).
#[derive(Debug, Clone, Default)]
pub(crate) struct LabelAcc {
    pub(crate) elapsed: Split,
    pub(crate) compute: Vec<u64>,
    pub(crate) exchange: Vec<u64>,
    pub(crate) sync: Vec<u64>,
    pub(crate) transfer: Vec<u64>,
    pub(crate) exchange_phases: u64,
    pub(crate) inter_chip_bytes: u64,
    /// Bytes per ordered chip pair.
    pub(crate) links: std::collections::BTreeMap<(u32, u32), u64>,
}

/// Accumulated modelled cycles.
#[derive(Debug, Clone, Default)]
pub(crate) struct Acc {
    pub(crate) elapsed: Split,
    pub(crate) compute: Vec<u64>,
    pub(crate) exchange: Vec<u64>,
    pub(crate) sync: Vec<u64>,
    pub(crate) transfer: Vec<u64>,
    pub(crate) labels: Vec<LabelAcc>,
}

impl Acc {
    pub(crate) fn ensure(&mut self, tiles: usize, labels: usize) {
        for v in [
            &mut self.compute,
            &mut self.exchange,
            &mut self.sync,
            &mut self.transfer,
        ] {
            v.resize(tiles, 0);
        }
        if self.labels.len() < labels {
            self.labels.resize_with(labels, || LabelAcc {
                elapsed: Split::default(),
                compute: vec![0; tiles],
                exchange: vec![0; tiles],
                sync: vec![0; tiles],
                transfer: vec![0; tiles],
                exchange_phases: 0,
                inter_chip_bytes: 0,
                links: Default::default(),
            });
        }
    }
}

/// Which accumulator a phase's cycles go to.
#[derive(Clone, Copy)]
enum Cat {
    Compute,
    Exchange,
    Sync,
    Transfer,
}

fn add(acc: &mut Acc, stack: &[u32], cat: Cat, tile: usize, cycles: u64) {
    let pick = |c: &mut Vec<u64>| {
        c[tile] = c[tile].saturating_add(cycles);
    };
    match cat {
        Cat::Compute => pick(&mut acc.compute),
        Cat::Exchange => pick(&mut acc.exchange),
        Cat::Sync => pick(&mut acc.sync),
        Cat::Transfer => pick(&mut acc.transfer),
    }
    for &l in stack {
        let la = &mut acc.labels[l as usize];
        match cat {
            Cat::Compute => pick(&mut la.compute),
            Cat::Exchange => pick(&mut la.exchange),
            Cat::Sync => pick(&mut la.sync),
            Cat::Transfer => pick(&mut la.transfer),
        }
    }
}

fn add_elapsed(acc: &mut Acc, stack: &[u32], cat: Cat, cycles: u64) {
    let pick = |s: &mut Split| {
        let f = match cat {
            Cat::Compute => &mut s.compute,
            Cat::Exchange => &mut s.exchange,
            Cat::Sync => &mut s.sync,
            Cat::Transfer => &mut s.transfer,
        };
        *f = f.saturating_add(cycles);
    };
    pick(&mut acc.elapsed);
    for &l in stack {
        pick(&mut acc.labels[l as usize].elapsed);
    }
}

/// Replays `events` on the tiles' clocks `clk`, adding `mult` times their cycles to `acc`
/// (and drawing them into `trace`).
// Long: one function on purpose: the hot loop of building a profile, whose clocks and latest
// time stay in registers; split into methods on a state struct it measured 27 % slower
// (framework bench, `profile`: building the profile 15.1-15.8 ms against 11.8-12.3 ms).
pub(crate) fn replay(
    m: &CycleModel,
    events: &[u32],
    clk: &mut [u64],
    mult: u64,
    acc: &mut Acc,
    mut trace: Option<&mut TraceBuilder<'_>>,
) {
    let n = clk.len();
    acc.ensure(n, 0);
    let mut stack: Vec<u32> = Vec::new();
    let mut f = clk.iter().copied().max().unwrap_or(0);
    let tpi = m.target.tiles_per_ipu.max(1) as usize;
    // Inside overlapped I/O, syncs leave the I/O tiles out.
    let mut overlap = false;
    for &e in events {
        let (k, a) = kind_of(e);
        match k {
            COMPUTE | EXCHANGE => {
                let f0 = f;
                let (cat, kind, name) = if k == COMPUTE {
                    let c = &m.computes[a as usize];
                    for t in &c.tiles {
                        let i = t.tile.index();
                        let before = clk[i];
                        clk[i] = before.saturating_add(t.cycles);
                        f = f.max(clk[i]);
                        add(acc, &stack, Cat::Compute, i, t.cycles.saturating_mul(mult));
                        if let Some(tb) = trace.as_deref_mut() {
                            tb.tile(i, before, clk[i]);
                        }
                    }
                    (Cat::Compute, SpanKind::Compute, c.name.as_str())
                } else {
                    let x = &m.exchanges[a as usize];
                    for &l in &stack {
                        let la = &mut acc.labels[l as usize];
                        la.exchange_phases = la.exchange_phases.saturating_add(mult);
                        la.inter_chip_bytes = la
                            .inter_chip_bytes
                            .saturating_add(x.inter_chip_bytes.saturating_mul(mult));
                        for link in &x.links {
                            let b = la.links.entry((link.src_chip, link.dst_chip)).or_default();
                            *b = b.saturating_add(link.bytes.saturating_mul(mult));
                        }
                    }
                    for t in &x.tiles {
                        let i = t.tile.index();
                        let before = clk[i];
                        clk[i] = before.saturating_add(t.cycles);
                        f = f.max(clk[i]);
                        add(acc, &stack, Cat::Exchange, i, t.cycles.saturating_mul(mult));
                        if let Some(tb) = trace.as_deref_mut() {
                            tb.tile(i, before, clk[i]);
                        }
                    }
                    (Cat::Exchange, SpanKind::Exchange, x.name.as_str())
                };
                add_elapsed(acc, &stack, cat, (f - f0).saturating_mul(mult));
                if let Some(tb) = trace.as_deref_mut() {
                    tb.flush(kind, name);
                }
            }
            SYNC_INTERNAL | SYNC_GLOBAL => {
                let global = k == SYNC_GLOBAL;
                let cost = u64::from(if global {
                    m.target.global_sync_cycles
                } else {
                    m.target.internal_sync_cycles
                });
                let scope = if global { n.max(1) } else { tpi };
                for chip in clk.chunks_mut(scope).enumerate() {
                    let (c, tiles) = chip;
                    let t_end = tiles
                        .iter()
                        .copied()
                        .max()
                        .unwrap_or(0)
                        .saturating_add(cost);
                    let t_end = if overlap {
                        // The I/O tiles' clocks neither wait nor are waited for.
                        (0..tiles.len())
                            .filter(|&j| !m.target.is_io_tile((c * scope + j) as u32))
                            .map(|j| tiles[j])
                            .max()
                            .unwrap_or(0)
                            .saturating_add(cost)
                    } else {
                        t_end
                    };
                    for (j, t) in tiles.iter_mut().enumerate() {
                        let i = c * scope + j;
                        if overlap && m.target.is_io_tile(i as u32) {
                            continue;
                        }
                        add(acc, &stack, Cat::Sync, i, (t_end - *t).saturating_mul(mult));
                        if let Some(tb) = trace.as_deref_mut() {
                            tb.tile(i, *t, t_end);
                        }
                        *t = t_end;
                    }
                }
                f = f.saturating_add(cost);
                add_elapsed(acc, &stack, Cat::Sync, cost.saturating_mul(mult));
                if let Some(tb) = trace.as_deref_mut() {
                    tb.flush(
                        SpanKind::Sync,
                        if global {
                            "sync (global)"
                        } else {
                            "sync (internal)"
                        },
                    );
                }
            }
            TRANSFER => {
                let x = &m.transfers[a as usize];
                let f0 = f;
                let start = x.tiles.iter().map(|&t| clk[t.index()]).max().unwrap_or(f);
                let end = start.saturating_add(x.cycles);
                for &t in &x.tiles {
                    let i = t.index();
                    let before = clk[i];
                    add(
                        acc,
                        &stack,
                        Cat::Transfer,
                        i,
                        (end - before).saturating_mul(mult),
                    );
                    if let Some(tb) = trace.as_deref_mut() {
                        tb.tile(i, before, end);
                    }
                    clk[i] = end;
                }
                f = f.max(end);
                // What the program waited for, and what ran behind compute elsewhere.
                let waited = f - f0;
                add_elapsed(acc, &stack, Cat::Transfer, waited.saturating_mul(mult));
                let hidden = x.cycles.saturating_sub(waited).saturating_mul(mult);
                acc.elapsed.transfer_overlapped =
                    acc.elapsed.transfer_overlapped.saturating_add(hidden);
                for &l in &stack {
                    let s = &mut acc.labels[l as usize].elapsed;
                    s.transfer_overlapped = s.transfer_overlapped.saturating_add(hidden);
                }
                if let Some(tb) = trace.as_deref_mut() {
                    tb.flush(SpanKind::Transfer, &x.name);
                }
            }
            OVERLAP_BEGIN => overlap = true,
            OVERLAP_END => overlap = false,
            ENTER | RESUME => {
                acc.ensure(n, a as usize + 1);
                stack.push(a);
                if let Some(tb) = trace.as_deref_mut() {
                    tb.open.push((a, f));
                }
            }
            EXIT => {
                stack.pop();
                if let Some(tb) = trace.as_deref_mut() {
                    tb.close(f);
                }
            }
            RUN_START => {
                clk.iter_mut().for_each(|c| *c = f);
                if let Some(tb) = trace.as_deref_mut() {
                    while !tb.open.is_empty() {
                        tb.close(f);
                    }
                }
            }
            _ => unreachable!("unknown event kind"),
        }
    }
    if let Some(tb) = trace {
        while !tb.open.is_empty() {
            tb.close(f);
        }
    }
}
