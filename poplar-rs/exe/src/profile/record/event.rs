//! What the engine tells the recorder, and the encoding of the steps the recorder stores: one
//! `u32` a step, its kind in the top four bits and its argument (a phase, a label, a transfer)
//! below.

use crate::exe::{ComputePhaseId, ExchangePhaseId, MemRun, RemoteCopyId, SyncKind};
use std::time::Duration;

/// What a running engine tells its [`Recorder`](super::Recorder): one event per step it runs, in program
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

pub(crate) const COMPUTE: u32 = 0;
pub(crate) const EXCHANGE: u32 = 1;
pub(crate) const SYNC_INTERNAL: u32 = 2;
pub(crate) const SYNC_GLOBAL: u32 = 3;
pub(crate) const ENTER: u32 = 4;
pub(crate) const EXIT: u32 = 5;
/// Re-entering a label at the start of a segment (not an execution of the label).
pub(crate) const RESUME: u32 = 6;
pub(crate) const RUN_START: u32 = 7;
/// A transfer to or from Streaming Memory or the host (`CycleModel::transfers`).
pub(crate) const TRANSFER: u32 = 8;
/// Overlapped I/O begins: until `OVERLAP_END`, syncs leave the I/O tiles out.
pub(crate) const OVERLAP_BEGIN: u32 = 9;
pub(crate) const OVERLAP_END: u32 = 10;

pub(crate) fn ev(kind: u32, arg: u32) -> u32 {
    debug_assert!(arg < 1 << 28);
    (kind << 28) | (arg & ((1 << 28) - 1))
}

pub(crate) fn kind_of(e: u32) -> (u32, u32) {
    (e >> 28, e & ((1 << 28) - 1))
}
