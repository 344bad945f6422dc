//! The records `cardiac run` keeps between device runs (per-beat maps, traces, snapshots, the
//! pseudo-ECG) and its checkpoints: the run loop's hooks ([`LoopHooks`]).

use anyhow::{ensure, Result};

use crate::app::checkpoint::{self, Checkpointer, HostRecords};
use crate::app::output::{Beats, ResultWriter, Snapshots, Traces};
use crate::app::run::{Flow, LoopHooks};
use crate::ecg::EcgRecord;
use crate::mesh::TetMesh;
use crate::solver::device::DeviceRun;

/// The records a run keeps between device runs, and its checkpoints: the run loop's hooks.
pub(crate) struct RunRecords<'a> {
    pub(crate) beats: Option<Beats>,
    pub(crate) traces: &'a mut Traces,
    pub(crate) snapshots: Snapshots,
    /// Where the snapshots go.
    pub(crate) out: &'a ResultWriter,
    pub(crate) mesh: &'a TetMesh,
    /// The pseudo-ECG's record, and its sampling interval in ODE steps (runs with electrodes).
    pub(crate) ecg: Option<EcgRecord>,
    pub(crate) ecg_every: Option<u64>,
    pub(crate) checkpoints: Checkpointer,
    /// The checkpoint to start from (taken by `start`).
    pub(crate) resume: Option<checkpoint::Checkpoint>,
}

/// The host records of a checkpoint.
fn host_records(
    beats: Option<&Beats>,
    traces: &Traces,
    snapshots: &Snapshots,
    ecg: Option<&EcgRecord>,
) -> HostRecords {
    HostRecords {
        beats: beats.cloned(),
        traces: (!traces.is_empty()).then(|| traces.rows().to_vec()),
        snapshots: Some(snapshots.schedule()),
        ecg: ecg.cloned(),
    }
}

impl RunRecords<'_> {
    /// Takes a checkpoint's host records over.
    fn restore(&mut self, r: HostRecords) -> Result<()> {
        ensure!(
            r.beats.is_some() == self.beats.is_some(),
            "the checkpoint's run {} per-beat maps; this one {}",
            if r.beats.is_some() { "kept" } else { "kept no" },
            if self.beats.is_some() {
                "does"
            } else {
                "does not"
            }
        );
        ensure!(
            r.ecg.is_some() == self.ecg.is_some(),
            "the checkpoint's run {} an ECG; this one {}",
            if r.ecg.is_some() {
                "recorded"
            } else {
                "recorded no"
            },
            if self.ecg.is_some() {
                "does"
            } else {
                "does not"
            }
        );
        self.beats = r.beats;
        self.ecg = r.ecg;
        self.traces.restore_rows(r.traces.unwrap_or_default())?;
        if let Some(s) = r.snapshots {
            self.snapshots.restore(s, self.out.dir(), self.mesh)?;
        }
        Ok(())
    }
}

impl LoopHooks for RunRecords<'_> {
    fn start(&mut self, run: &mut DeviceRun) -> Result<()> {
        let Some(c) = self.resume.take() else {
            return Ok(());
        };
        checkpoint::restore(run, &c)?;
        let restored = self.restore(c.records);
        poplar::dist::agree(restored.map_err(|e| format!("{e:#}")))?;
        say!(
            "resumed from {} at t = {:.3} ms (step {}; written by {} rank(s))",
            c.path.display(),
            c.header.time_ms,
            c.header.step,
            c.header.ranks
        );
        Ok(())
    }

    fn after_run(&mut self, run: &mut DeviceRun) -> Result<()> {
        if let (Some(r), Some(every)) = (self.ecg.as_mut(), self.ecg_every) {
            if run.steps().is_multiple_of(every) {
                let t = run.steps() as f64 * f64::from(run.info.dt_ode);
                r.push(t, &run.sample_ecg()?)?;
            }
        }
        if run.steps() == 0 {
            return Ok(()); // the ECG's sample at t = 0 only
        }
        if let Some(b) = self.beats.as_mut() {
            let (up, down) = run.last_crossings()?;
            b.record(&up, &down);
        }
        if !self.traces.is_empty() {
            let t = run.steps() as f64 * f64::from(run.info.dt_ode);
            self.traces.record(t, &run.voltage()?);
        }
        self.snapshots.after_chunk(run, self.mesh, self.out)
    }

    fn boundary(&mut self, run: &DeviceRun, chunk_end: bool) -> Result<Flow> {
        let RunRecords {
            beats,
            traces,
            snapshots,
            ecg,
            checkpoints,
            ..
        } = self;
        checkpoints.boundary(run, chunk_end, || {
            host_records(beats.as_ref(), traces, snapshots, ecg.as_ref())
        })
    }
}
