//! The profile: plain, serializable data (schema in `docs/profile-schema.md`).

use serde::{Deserialize, Serialize};

use crate::target::Target;

/// Name of the schema in [`Profile::schema`].
pub const PROFILE_SCHEMA: &str = "poplar-profile";
/// Version of the JSON schema; bumped on any incompatible change.
/// 2: transfers to and from Streaming Memory and the host (`Split::transfer`,
/// `Split::transfer_overlapped`, `TileTotals::transfer`, `PhaseKind::Transfer`,
/// `SpanKind::Transfer`, `LabelProfile::transfer`); version 1 profiles read with none.
pub const PROFILE_SCHEMA_VERSION: u32 = 2;

/// Modelled cycles split by kind of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Split {
    pub compute: u64,
    pub exchange: u64,
    pub sync: u64,
    /// Transfers to and from Streaming Memory and the host that the program waited for.
    #[serde(default)]
    pub transfer: u64,
    /// Transfer cycles hidden behind compute on other tiles (overlapped I/O): not part of
    /// [`Split::total`].
    #[serde(default)]
    pub transfer_overlapped: u64,
}

impl Split {
    pub fn total(&self) -> u64 {
        self.compute
            .saturating_add(self.exchange)
            .saturating_add(self.sync)
            .saturating_add(self.transfer)
    }
}

impl std::ops::AddAssign for Split {
    /// Field by field (saturating): the split of two blocks together.
    fn add_assign(&mut self, o: Split) {
        for (a, b) in [
            (&mut self.compute, o.compute),
            (&mut self.exchange, o.exchange),
            (&mut self.sync, o.sync),
            (&mut self.transfer, o.transfer),
            (&mut self.transfer_overlapped, o.transfer_overlapped),
        ] {
            *a = a.saturating_add(b);
        }
    }
}

/// Distribution of a per-tile quantity over all tiles of the target (idle tiles count as 0).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Stats {
    pub min: u64,
    pub median: u64,
    pub max: u64,
    pub mean: f64,
    /// Population standard deviation.
    pub std: f64,
    /// Mean busy share of the tiles: `mean / max` (1 when every tile is as busy as the
    /// busiest; 0 when nothing ran).
    pub effectiveness: f64,
}

impl Stats {
    /// Statistics of `values` (one per tile).
    pub fn of(values: &[u64]) -> Stats {
        if values.is_empty() {
            return Stats::default();
        }
        let mut v = values.to_vec();
        v.sort_unstable();
        let n = v.len() as f64;
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n;
        let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
        let max = v[v.len() - 1];
        Stats {
            min: v[0],
            median: v[v.len() / 2],
            max,
            mean,
            std: var.sqrt(),
            effectiveness: if max == 0 { 0.0 } else { mean / max as f64 },
        }
    }
}

/// Per-tile totals over the whole profile, indexed by tile.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TileTotals {
    pub compute: Vec<u64>,
    /// Exchange cycles (send/receive time of the tile).
    pub exchange: Vec<u64>,
    /// Cycles waiting at syncs for slower tiles plus the syncs' own cost.
    pub sync: Vec<u64>,
    /// Cycles of transfers to and from Streaming Memory and the host.
    #[serde(default)]
    pub transfer: Vec<u64>,
}

/// Kind of a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseKind {
    Compute,
    Exchange,
    /// A copy to or from a remote buffer, or a host stream copy.
    Transfer,
}

impl PhaseKind {
    /// The kind as the reports write it: `compute`, `exchange` or `transfer`.
    pub fn name(self) -> &'static str {
        match self {
            PhaseKind::Compute => "compute",
            PhaseKind::Exchange => "exchange",
            PhaseKind::Transfer => "transfer",
        }
    }
}

/// One compute or exchange phase of the executable (a superstep half) and how often it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseProfile {
    pub kind: PhaseKind,
    /// Index into `Executable::computes` or `Executable::exchanges`.
    pub index: u32,
    /// Compute set name (compute) or `<compute set> (in|out)` / `copy` (exchange).
    pub name: String,
    pub executions: u64,
    /// Modelled cycles of one execution per tile taking part: `[tile, cycles]`, sorted by tile.
    pub tile_cycles: Vec<[u64; 2]>,
    /// Distribution over all tiles of one execution's cycles.
    pub per_execution: Stats,
    /// `executions × per_execution.max`.
    pub cycles: u64,
    /// Compute: vertices; exchange: transfers.
    pub items: u64,
    /// Compute: vertices with the default estimate (flagged in summaries).
    pub default_estimates: u64,
    /// Exchange: bytes sent per execution (a broadcast counts once).
    pub bytes: u64,
    /// Exchange: bytes per execution delivered to another chip.
    pub inter_chip_bytes: u64,
    /// Measured host wall time of the simulator over all executions, in nanoseconds.
    pub wall_ns: u64,
}

/// A labelled program block (`Program::labelled`), inclusive of nested labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelProfile {
    pub name: String,
    pub executions: u64,
    /// Modelled elapsed cycles inside the block, attributed to compute, exchange or sync by
    /// what advanced the slowest tile (sums to the block's elapsed time).
    pub elapsed: Split,
    /// Per-tile busy cycles inside the block, distributions over tiles.
    pub compute: Stats,
    pub exchange: Stats,
    pub sync: Stats,
    /// Per-tile transfer cycles inside the block.
    #[serde(default)]
    pub transfer: Stats,
    /// Mean over tiles of (compute + exchange) / elapsed.
    pub effectiveness: f64,
    /// Exchange phases executed inside the block (the steps of a collective).
    #[serde(default)]
    pub exchange_phases: u64,
    /// Bytes delivered to tiles of other chips inside the block (over the links).
    #[serde(default)]
    pub inter_chip_bytes: u64,
    /// Ordered chip pairs whose links the block used.
    #[serde(default)]
    pub links: u64,
    /// Bytes over the busiest of them (a broadcast to several tiles of a chip counted once).
    #[serde(default)]
    pub max_link_bytes: u64,
}

/// Compute, exchange and sync cycles of one label (see [`Profile::summary_by_label`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelSummary {
    pub name: String,
    pub executions: u64,
    pub compute: u64,
    pub exchange: u64,
    pub sync: u64,
    pub total: u64,
}

/// Category of a timeline span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpanKind {
    Compute,
    Exchange,
    Sync,
    Label,
    /// A transfer to or from Streaming Memory or the host.
    Transfer,
}

/// One track of the timeline: a group of consecutive tiles of one chip, or the labels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Track {
    pub name: String,
    /// Chip of the tiles, `None` for the label track.
    pub chip: Option<u32>,
    /// Tiles `first_tile..=last_tile` (global ids).
    pub first_tile: u32,
    pub last_tile: u32,
}

/// One span of the timeline: on its track, from the earliest start to the latest end among
/// the track's tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub track: u32,
    pub kind: SpanKind,
    /// Index into [`Timeline::names`].
    pub name: u32,
    pub start: u64,
    pub dur: u64,
}

/// The modelled timeline of the first steps of the profile.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Timeline {
    pub tracks: Vec<Track>,
    pub names: Vec<String>,
    pub spans: Vec<Span>,
    /// Steps beyond the recording limit were left out.
    pub truncated: bool,
}

/// Counts of syncs executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SyncCounts {
    pub internal: u64,
    pub global: u64,
}

/// What the engine recorded, in modelled cycles (and host wall time), ready to report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// Always [`PROFILE_SCHEMA`].
    pub schema: String,
    /// [`PROFILE_SCHEMA_VERSION`] of the writer.
    pub version: u32,
    pub target: Target,
    /// [`Executable::checksum`](crate::exe::Executable::checksum) of the executable that ran:
    /// tools that pair a profile with an executable (`poplar report`) check it. `None` in
    /// profiles written before it was recorded (they cannot be matched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executable_checksum: Option<u64>,
    /// Runs (`Engine::run` calls) recorded.
    pub runs: u64,
    /// Modelled elapsed cycles over all runs, split by what advanced the slowest tile.
    pub elapsed: Split,
    /// Measured host wall time of the runs, in nanoseconds.
    pub wall_ns: u64,
    pub syncs: SyncCounts,
    pub tiles: TileTotals,
    /// Phases that ran at least once, computes first, by index.
    pub phases: Vec<PhaseProfile>,
    pub labels: Vec<LabelProfile>,
    pub timeline: Timeline,
}
