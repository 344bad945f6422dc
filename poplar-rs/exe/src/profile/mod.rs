//! Cycle model, profiles and memory reports: where the time and the memory go, per tile and
//! per phase.
//!
//! - [`model`]: the cycle model, a pure function of an [`Executable`](crate::exe::Executable) and its
//!   target (`docs/cycle-model.md`);
//! - [`Profile`]: what the engine records when profiling is on
//!   (`Engine::enable_profiling`), aggregated per phase, per
//!   label and per tile, with a text summary, a versioned JSON form and a Chrome trace
//!   (`docs/profile-schema.md`);
//! - [`MemoryReport`]: per tile always-live and temporary bytes by variable and category, and
//!   Streaming Memory per chip and per remote buffer;
//! - [`estimate_program`]: a static (bulk-synchronous) estimate of one program's time, for
//!   configurations too large to simulate.

mod data;
pub mod estimate;
mod memory;
pub mod model;
mod record;
mod report;
mod timeline;
mod transfer;

pub use data::*;
pub use estimate::{estimate_program, ProgramEstimate};
pub use memory::{
    CategoryBytes, ChipStreamingMemory, MemoryReport, RemoteBufferBytes, StreamingMemory,
    TileMemory,
};
pub use model::CycleModel;
#[cfg(test)]
use record::SEGMENT_LIMIT;
pub use record::{ProfileOptions, Recorder, RunEvent};
pub use report::{ProfileError, MAX_PROFILE_CYCLES};
pub(crate) use transfer::{remote_copy_cost, stream_cost};
pub use transfer::{TransferCost, TransferKind};

#[cfg(test)]
mod tests;
