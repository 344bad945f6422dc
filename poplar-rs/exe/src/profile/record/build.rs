//! Building the [`Profile`] from what the recorder stored: the segments replayed and counted,
//! the timeline's steps replayed and drawn, and the profile of every phase and label.

use super::replay::{replay, Acc, LabelAcc};
use super::Recorder;
use crate::exe::{ComputePhaseId, ExchangePhaseId};
use crate::profile::data::*;
use crate::profile::model::{ComputeCost, ExchangeCost};
use crate::profile::timeline::{timeline_layout, TraceBuilder};

impl Recorder {
    /// The profile of everything recorded so far (built on first call after a run, then
    /// cached).
    pub fn profile(&self) -> &Profile {
        self.cache.get_or_init(|| self.build())
    }

    fn build(&self) -> Profile {
        let m = &self.model;
        let n = m.target.num_tiles() as usize;
        let mut clk = vec![0u64; n];
        let acc = self.replay_segments(&mut clk);
        let timeline = self.replay_timeline(&mut clk);
        let mut phases: Vec<PhaseProfile> = m
            .computes
            .iter()
            .enumerate()
            .filter_map(|(i, c)| self.compute_profile(i, c, n))
            .collect();
        phases.extend(
            m.exchanges
                .iter()
                .enumerate()
                .filter_map(|(i, e)| self.exchange_profile(i, e, n)),
        );
        phases.extend(
            m.transfers
                .iter()
                .enumerate()
                .filter_map(|(i, t)| self.transfer_profile(i, t, n)),
        );
        let labels = self
            .label_names
            .iter()
            .enumerate()
            .map(|(l, name)| self.label_profile(l, name, &acc.labels[l], n))
            .collect();
        Profile {
            schema: PROFILE_SCHEMA.to_string(),
            version: PROFILE_SCHEMA_VERSION,
            target: m.target.clone(),
            executable_checksum: Some(self.executable_checksum),
            runs: self.runs,
            elapsed: acc.elapsed,
            wall_ns: self.run_wall_ns,
            syncs: self.syncs,
            tiles: TileTotals {
                compute: acc.compute,
                exchange: acc.exchange,
                sync: acc.sync,
                transfer: acc.transfer,
            },
            phases,
            labels,
            timeline,
        }
    }

    /// The cycles of everything recorded: the replays of segments that filled up, plus each
    /// memoised segment replayed once from equal clocks and counted as often as it occurred.
    /// `clk` is scratch space of one clock per tile.
    fn replay_segments(&self, clk: &mut [u64]) -> Acc {
        let mut acc = self.base.clone().unwrap_or_default();
        acc.ensure(clk.len(), self.label_names.len());
        for (seg, &count) in &self.segments {
            clk.iter_mut().for_each(|c| *c = 0);
            replay(&self.model, seg, clk, count, &mut acc, None);
        }
        acc
    }

    /// The timeline: the steps kept for it replayed once and drawn. `clk` is scratch space of
    /// one clock per tile.
    fn replay_timeline(&self, clk: &mut [u64]) -> Timeline {
        let m = &self.model;
        let mut timeline = timeline_layout(&m.target, self.options.timeline_tracks);
        timeline.names = self.label_names.clone();
        timeline.truncated = self.truncated;
        {
            let mut tb = TraceBuilder::new(&m.target, &mut timeline);
            let mut tacc = Acc::default();
            clk.iter_mut().for_each(|c| *c = 0);
            replay(m, &self.prefix, clk, 1, &mut tacc, Some(&mut tb));
        }
        timeline
    }

    /// The profile of compute phase `i` (static cost `c`), or `None` if it never ran. `n`:
    /// tiles of the target.
    fn compute_profile(&self, i: usize, c: &ComputeCost, n: usize) -> Option<PhaseProfile> {
        let executions = self.compute_exec[ComputePhaseId::from_u32(i as u32)];
        if executions == 0 {
            return None;
        }
        let mut per = vec![0u64; n];
        for t in &c.tiles {
            per[t.tile.index()] = t.cycles;
        }
        Some(PhaseProfile {
            kind: PhaseKind::Compute,
            index: i as u32,
            name: self.phase_name(PhaseKind::Compute, i),
            executions,
            tile_cycles: c
                .tiles
                .iter()
                .map(|t| [u64::from(t.tile), t.cycles])
                .collect(),
            per_execution: Stats::of(&per),
            cycles: executions.saturating_mul(c.max),
            items: c.vertices,
            default_estimates: c.default_estimates,
            bytes: 0,
            inter_chip_bytes: 0,
            wall_ns: self.wall_ns[ComputePhaseId::from_u32(i as u32)],
        })
    }

    /// The profile of exchange phase `i` (static cost `e`), or `None` if it never ran. `n`:
    /// tiles of the target.
    fn exchange_profile(&self, i: usize, e: &ExchangeCost, n: usize) -> Option<PhaseProfile> {
        let executions = self.exchange_exec[ExchangePhaseId::from_u32(i as u32)];
        if executions == 0 {
            return None;
        }
        let mut per = vec![0u64; n];
        for t in &e.tiles {
            per[t.tile.index()] = t.cycles;
        }
        Some(PhaseProfile {
            kind: PhaseKind::Exchange,
            index: i as u32,
            name: self.phase_name(PhaseKind::Exchange, i),
            executions,
            tile_cycles: e
                .tiles
                .iter()
                .map(|t| [u64::from(t.tile), t.cycles])
                .collect(),
            per_execution: Stats::of(&per),
            cycles: executions.saturating_mul(e.max),
            items: e.transfers,
            default_estimates: 0,
            bytes: e.bytes,
            inter_chip_bytes: e.inter_chip_bytes,
            wall_ns: self.exchange_wall_ns[ExchangePhaseId::from_u32(i as u32)],
        })
    }

    /// The profile of transfer `i` (static cost `t`), or `None` if it never ran. `n`: tiles
    /// of the target.
    fn transfer_profile(
        &self,
        i: usize,
        t: &crate::profile::TransferCost,
        n: usize,
    ) -> Option<PhaseProfile> {
        let executions = self.transfer_exec[i];
        if executions == 0 {
            return None;
        }
        let mut per = vec![0u64; n];
        for &tile in &t.tiles {
            per[tile.index()] = t.cycles;
        }
        Some(PhaseProfile {
            kind: PhaseKind::Transfer,
            index: i as u32,
            name: t.name.clone(),
            executions,
            tile_cycles: t
                .tiles
                .iter()
                .map(|&tile| [u64::from(tile), t.cycles])
                .collect(),
            per_execution: Stats::of(&per),
            cycles: executions.saturating_mul(t.cycles),
            items: 1,
            default_estimates: 0,
            bytes: t.bytes,
            inter_chip_bytes: 0,
            wall_ns: self.transfer_wall_ns[i],
        })
    }

    /// The profile of label `l`, named `name`, from its accumulated cycles `la`. `n`: tiles of
    /// the target.
    fn label_profile(&self, l: usize, name: &str, la: &LabelAcc, n: usize) -> LabelProfile {
        let elapsed = la.elapsed.total();
        let busy: f64 = la
            .compute
            .iter()
            .zip(&la.exchange)
            .map(|(&c, &e)| (c + e) as f64)
            .sum::<f64>()
            / n.max(1) as f64;
        LabelProfile {
            name: name.to_string(),
            executions: self.label_exec[l],
            elapsed: la.elapsed,
            compute: Stats::of(&la.compute),
            exchange: Stats::of(&la.exchange),
            sync: Stats::of(&la.sync),
            transfer: Stats::of(&la.transfer),
            effectiveness: if elapsed == 0 {
                0.0
            } else {
                busy / elapsed as f64
            },
            exchange_phases: la.exchange_phases,
            inter_chip_bytes: la.inter_chip_bytes,
            links: la.links.len() as u64,
            max_link_bytes: la.links.values().copied().max().unwrap_or(0),
        }
    }

    fn phase_name(&self, kind: PhaseKind, i: usize) -> String {
        match kind {
            PhaseKind::Compute => self.model.computes[i].name.clone(),
            PhaseKind::Exchange => self.model.exchanges[i].name.clone(),
            PhaseKind::Transfer => self.model.transfers[i].name.clone(),
        }
    }
}
