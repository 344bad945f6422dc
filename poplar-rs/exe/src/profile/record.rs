//! Recording during a run and building the [`Profile`] afterwards.
//!
//! (About 750 lines. One concept, the recorder: what it stores during a run and the replay that
//! builds the profile from it share one event encoding; split, that encoding would have to be
//! public.)
//!
//! The engine drives the recorder through one door, [`Recorder::record`], with one
//! [`RunEvent`] per step it runs (a few integer operations each). The modelled
//! time of tiles is not advanced during the run: the recorder keeps the step sequence of the
//! current *segment* (the steps since the last sync after which every tile's clock is equal,
//! i.e. a global sync, an internal sync on one chip, or the start of a run) and, at its end,
//! counts it in a map from segment to occurrences. A loop that runs the same supersteps N
//! times stores one segment and a count. [`Recorder::profile`] replays each distinct segment
//! once on per-tile clocks with the [`CycleModel`]'s static costs and multiplies by its count,
//! which gives exactly what replaying the whole run would. Segments longer than
//! [`SEGMENT_LIMIT`] steps (long loops with no global sync) are replayed when they fill up,
//! carrying the tiles' clocks into the next segment.

use crate::entity::PrimaryMap;
use crate::exe::{ComputePhaseId, ExchangePhaseId, MemRun, RemoteCopyId, StreamDesc};
use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use super::data::*;
use super::model::{ComputeCost, CycleModel, ExchangeCost};
use super::timeline::{timeline_layout, TraceBuilder};
use crate::exe::{Executable, SyncKind};

/// Steps after which a segment is replayed at once instead of memoised.
pub const SEGMENT_LIMIT: usize = 4096;

/// Options of `Engine::enable_profiling`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileOptions {
    /// Steps (compute, exchange, sync and label events) of the first runs kept for the
    /// timeline (the Chrome trace); later steps are counted but not drawn.
    pub timeline_steps: usize,
    /// Most tracks of tiles in the timeline; tiles of a chip are grouped to fit.
    pub timeline_tracks: u32,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        ProfileOptions {
            timeline_steps: 2000,
            timeline_tracks: 64,
        }
    }
}

/// What a running engine tells its [`Recorder`]: one event per step it runs, in program
/// order, each with the host time it took where that is measured. A run is `RunStart`, the
/// events of its steps, then `RunEnd`; a labelled body is `Enter` … `Exit` (`Exit` also when
/// the body failed, so that the labels stay balanced).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RunEvent<'a> {
    /// A run of a top-level program begins: every tile's clock starts where the slowest was.
    RunStart,
    /// The run ended after `wall` of host time.
    RunEnd { wall: Duration },
    /// A labelled body begins.
    Enter { label: &'a str },
    /// The innermost labelled body ends.
    Exit,
    /// A sync of the tiles (of a chip, or of every chip).
    Sync(SyncKind),
    /// Compute phase `phase` ran.
    Compute {
        phase: ComputePhaseId,
        wall: Duration,
    },
    /// Exchange phase `phase` ran.
    Exchange {
        phase: ExchangePhaseId,
        wall: Duration,
    },
    /// Remote-buffer copy `copy` ran.
    RemoteCopy { copy: RemoteCopyId, wall: Duration },
    /// A copy of stream `stream` into or out of `runs` ran. `site` names the copy in the
    /// program: the same number at every execution of that copy, another for every other
    /// copy (the recorder prices a site once, when it first runs).
    StreamCopy {
        site: u32,
        stream: u32,
        runs: &'a [MemRun],
        wall: Duration,
    },
    /// Overlapped I/O begins: until it ends, syncs leave the I/O tiles out.
    OverlapBegin,
    /// Overlapped I/O ends.
    OverlapEnd,
}

const COMPUTE: u32 = 0;
const EXCHANGE: u32 = 1;
const SYNC_INTERNAL: u32 = 2;
const SYNC_GLOBAL: u32 = 3;
const ENTER: u32 = 4;
const EXIT: u32 = 5;
/// Re-entering a label at the start of a segment (not an execution of the label).
const RESUME: u32 = 6;
const RUN_START: u32 = 7;
/// A transfer to or from Streaming Memory or the host (`CycleModel::transfers`).
const TRANSFER: u32 = 8;
/// Overlapped I/O begins: until `OVERLAP_END`, syncs leave the I/O tiles out.
const OVERLAP_BEGIN: u32 = 9;
const OVERLAP_END: u32 = 10;

fn ev(kind: u32, arg: u32) -> u32 {
    debug_assert!(arg < 1 << 28);
    (kind << 28) | (arg & ((1 << 28) - 1))
}

fn kind_of(e: u32) -> (u32, u32) {
    (e >> 28, e & ((1 << 28) - 1))
}

/// Records a run's steps; built by `Engine::enable_profiling`.
#[derive(Debug)]
pub struct Recorder {
    model: CycleModel,
    /// `Executable::checksum` of the executable recorded.
    executable_checksum: u64,
    options: ProfileOptions,
    labels: HashMap<String, u32>,
    label_names: Vec<String>,
    label_exec: Vec<u64>,
    stack: Vec<u32>,
    seg: Vec<u32>,
    segments: HashMap<Vec<u32>, u64>,
    /// Replays of segments that filled up.
    base: Option<Acc>,
    /// The tiles' clocks at the start of the current segment, when they are not all equal.
    clocks: Option<Vec<u64>>,
    prefix: Vec<u32>,
    truncated: bool,
    compute_exec: PrimaryMap<ComputePhaseId, u64>,
    exchange_exec: PrimaryMap<ExchangePhaseId, u64>,
    wall_ns: PrimaryMap<ComputePhaseId, u64>,
    exchange_wall_ns: PrimaryMap<ExchangePhaseId, u64>,
    /// Per entry of the model's transfers: executions and host wall time.
    transfer_exec: Vec<u64>,
    transfer_wall_ns: Vec<u64>,
    /// The model's transfer of each stream copy site met so far ([`RunEvent::StreamCopy`]).
    stream_copies: HashMap<u32, u32>,
    /// The executable's streams (a stream copy's cost is computed when its site first runs).
    streams: Vec<StreamDesc>,
    /// Inside overlapped I/O (no segment ends there: the I/O tiles' clocks differ).
    overlap: u32,
    syncs: SyncCounts,
    runs: u64,
    run_wall_ns: u64,
    cache: OnceLock<Profile>,
}

impl Recorder {
    /// Precomputes the static costs of `exe`.
    pub fn new(exe: &Executable, options: ProfileOptions) -> Recorder {
        Recorder::with_model(
            CycleModel::new(exe),
            exe.checksum(),
            exe.streams.clone(),
            options,
        )
    }

    fn with_model(
        model: CycleModel,
        executable_checksum: u64,
        streams: Vec<StreamDesc>,
        options: ProfileOptions,
    ) -> Recorder {
        Recorder {
            executable_checksum,
            streams,
            compute_exec: vec![0; model.computes.len()].into(),
            exchange_exec: vec![0; model.exchanges.len()].into(),
            wall_ns: vec![0; model.computes.len()].into(),
            exchange_wall_ns: vec![0; model.exchanges.len()].into(),
            transfer_exec: vec![0; model.transfers.len()],
            transfer_wall_ns: vec![0; model.transfers.len()],
            stream_copies: HashMap::new(),
            overlap: 0,
            model,
            options,
            labels: HashMap::new(),
            label_names: Vec::new(),
            label_exec: Vec::new(),
            stack: Vec::new(),
            seg: Vec::new(),
            segments: HashMap::new(),
            base: None,
            clocks: None,
            prefix: Vec::new(),
            truncated: false,
            syncs: SyncCounts::default(),
            runs: 0,
            run_wall_ns: 0,
            cache: OnceLock::new(),
        }
    }

    /// The static costs.
    pub fn model(&self) -> &CycleModel {
        &self.model
    }

    #[inline]
    fn push(&mut self, e: u32) {
        self.seg.push(e);
        if self.prefix.len() < self.options.timeline_steps {
            self.prefix.push(e);
        } else {
            self.truncated = true;
        }
        if self.seg.len() >= SEGMENT_LIMIT {
            self.replay_now(false);
        }
    }

    /// Replays the current segment now; `uniform_end` when it ended where every tile's clock
    /// is equal.
    #[cold]
    fn replay_now(&mut self, uniform_end: bool) {
        let n = self.model.target.num_tiles() as usize;
        let acc = self.base.get_or_insert_with(Acc::default);
        let mut clk = self.clocks.take().unwrap_or_else(|| vec![0; n]);
        replay(&self.model, &self.seg, &mut clk, 1, acc, None);
        if !uniform_end {
            self.clocks = Some(clk);
        }
        self.restart_segment();
    }

    fn restart_segment(&mut self) {
        self.seg.clear();
        for &l in &self.stack {
            self.seg.push(ev(RESUME, l));
        }
    }

    /// Ends the current segment at a point where every tile's clock is equal.
    fn boundary(&mut self) {
        if self.clocks.is_some() {
            self.replay_now(true);
            return;
        }
        if let Some(c) = self.segments.get_mut(self.seg.as_slice()) {
            *c += 1;
        } else {
            self.segments.insert(self.seg.clone(), 1);
        }
        self.restart_segment();
    }

    /// Records one event of a run (the engine's one call into the recorder).
    #[inline]
    pub fn record(&mut self, event: RunEvent<'_>) {
        match event {
            RunEvent::RunStart => self.begin_run(),
            RunEvent::RunEnd { wall } => self.end_run(wall),
            RunEvent::Enter { label } => self.enter(label),
            RunEvent::Exit => {
                self.stack.pop();
                self.push(ev(EXIT, 0));
            }
            RunEvent::Sync(kind) => self.sync(kind),
            RunEvent::Compute { phase, wall } => {
                self.compute_exec[phase] += 1;
                self.wall_ns[phase] += wall.as_nanos() as u64;
                self.push(ev(COMPUTE, phase.as_u32()));
            }
            RunEvent::Exchange { phase, wall } => {
                self.exchange_exec[phase] += 1;
                self.exchange_wall_ns[phase] += wall.as_nanos() as u64;
                self.push(ev(EXCHANGE, phase.as_u32()));
            }
            RunEvent::RemoteCopy { copy, wall } => self.transfer(copy.as_u32() as usize, wall),
            RunEvent::StreamCopy {
                site,
                stream,
                runs,
                wall,
            } => {
                let i = self.stream_transfer(site, stream, runs);
                self.transfer(i, wall);
            }
            RunEvent::OverlapBegin => {
                self.overlap += 1;
                self.push(ev(OVERLAP_BEGIN, 0));
            }
            RunEvent::OverlapEnd => {
                self.overlap = self.overlap.saturating_sub(1);
                self.push(ev(OVERLAP_END, 0));
            }
        }
    }

    fn begin_run(&mut self) {
        self.cache = OnceLock::new();
        self.runs += 1;
        self.stack.clear();
        self.seg.clear();
        if self.prefix.len() < self.options.timeline_steps {
            self.prefix.push(ev(RUN_START, 0));
        }
    }

    fn end_run(&mut self, wall: Duration) {
        self.run_wall_ns += wall.as_nanos() as u64;
        self.stack.clear();
        // The next run starts with every tile's clock equal.
        self.boundary();
        self.seg.clear();
    }

    fn enter(&mut self, name: &str) {
        let id = match self.labels.get(name) {
            Some(&id) => id,
            None => {
                let id = self.label_names.len() as u32;
                self.labels.insert(name.to_string(), id);
                self.label_names.push(name.to_string());
                self.label_exec.push(0);
                id
            }
        };
        self.label_exec[id as usize] += 1;
        self.stack.push(id);
        self.push(ev(ENTER, id));
    }

    fn sync(&mut self, kind: SyncKind) {
        match kind {
            SyncKind::Internal => {
                self.syncs.internal += 1;
                self.push(ev(SYNC_INTERNAL, 0));
                if self.model.target.num_ipus == 1 && self.overlap == 0 {
                    self.boundary();
                }
            }
            SyncKind::Global => {
                self.syncs.global += 1;
                self.push(ev(SYNC_GLOBAL, 0));
                if self.overlap == 0 {
                    self.boundary();
                }
            }
        }
    }

    /// The model's transfer of stream copy `site`, priced when the site first runs.
    fn stream_transfer(&mut self, site: u32, stream: u32, runs: &[MemRun]) -> usize {
        if let Some(&i) = self.stream_copies.get(&site) {
            return i as usize;
        }
        let cost = super::transfer::stream_copy_cost(
            &self.model.target,
            &self.streams[stream as usize],
            runs,
        );
        self.model.transfers.push(cost);
        self.transfer_exec.push(0);
        self.transfer_wall_ns.push(0);
        let i = self.model.transfers.len() - 1;
        self.stream_copies.insert(site, i as u32);
        i
    }

    fn transfer(&mut self, i: usize, wall: Duration) {
        self.transfer_exec[i] += 1;
        self.transfer_wall_ns[i] += wall.as_nanos() as u64;
        self.push(ev(TRANSFER, i as u32));
    }

    /// The host wall times recorded so far (per compute phase, per exchange phase, per
    /// transfer, and of whole runs, in that order), for a driver that runs one program over
    /// several processes to replace by the slowest process's (the modelled cycles are the
    /// same on every process).
    pub fn wall_times_mut(&mut self) -> impl Iterator<Item = &mut u64> + '_ {
        self.cache = OnceLock::new();
        self.wall_ns
            .values_mut()
            .chain(self.exchange_wall_ns.values_mut())
            .chain(self.transfer_wall_ns.iter_mut())
            .chain(std::iter::once(&mut self.run_wall_ns))
    }

    /// Forgets everything recorded (keeps the static costs).
    pub fn clear(&mut self) {
        let mut model = std::mem::replace(&mut self.model, CycleModel::empty());
        // Stream copies are interned again as they are met.
        model
            .transfers
            .truncate(model.transfers.len() - self.stream_copies.len());
        let streams = std::mem::take(&mut self.streams);
        *self = Recorder::with_model(model, self.executable_checksum, streams, self.options);
    }

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
        t: &super::TransferCost,
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

/// Per-label accumulators (inclusive of nested labels).
#[derive(Debug, Clone, Default)]
struct LabelAcc {
    elapsed: Split,
    compute: Vec<u64>,
    exchange: Vec<u64>,
    sync: Vec<u64>,
    transfer: Vec<u64>,
    exchange_phases: u64,
    inter_chip_bytes: u64,
    /// Bytes per ordered chip pair.
    links: std::collections::BTreeMap<(u32, u32), u64>,
}

/// Accumulated modelled cycles.
#[derive(Debug, Clone, Default)]
struct Acc {
    elapsed: Split,
    compute: Vec<u64>,
    exchange: Vec<u64>,
    sync: Vec<u64>,
    transfer: Vec<u64>,
    labels: Vec<LabelAcc>,
}

impl Acc {
    fn ensure(&mut self, tiles: usize, labels: usize) {
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
fn replay(
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
