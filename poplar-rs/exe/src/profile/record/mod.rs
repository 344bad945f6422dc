//! Recording during a run and building the [`Profile`] afterwards.
//!
//! One concept, the recorder, by concern: `event` is what the engine tells it (a
//! [`RunEvent`]) and the compact encoding in which it stores the steps; `run` is what it does
//! during a run; `build` builds the profile from what it stored; `replay` is the hot loop that
//! replays stored steps on the tiles' clocks. The encoding is shared by recording and replay
//! and stays inside the crate.
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

mod build;
mod event;
mod replay;
mod run;

use crate::entity::PrimaryMap;
use crate::exe::{ComputePhaseId, ExchangePhaseId, Executable, StreamDesc};
use std::collections::HashMap;
use std::sync::OnceLock;

use super::data::*;
use super::model::CycleModel;
use replay::Acc;

pub use event::RunEvent;

/// Steps after which a segment is replayed at once instead of memoised.
pub(crate) const SEGMENT_LIMIT: usize = 4096;

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
}
