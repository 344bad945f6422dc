//! The interpreter of one `run`: walks the engine's schedule (`schedule.rs`) on the
//! interpreting thread, one dispatch per instruction, hands each phase to the executor
//! (`exec.rs`) and the host transfers to `transfer.rs` and `remote.rs`, and tells the profiler,
//! when it is on, what ran ([`RunEvent`]).

use std::time::Instant;

use super::error::EngineError;
use super::exec::Exec;
use super::host::InStream;
use super::schedule::{Block, Op, OpIndex, Roots};
use super::streaming::StreamingMemory;
use super::team::Team;
use crate::exe::{ComputePhaseId, ExchangePhaseId};
use crate::profile::{Recorder, RunEvent};

/// The state of one `run` on the interpreting thread: the shared part, the roots it runs
/// (the plain ones when profiling or over several ranks, else the rewritten ones), the helper
/// threads (none on one thread), and the host stream buffers and profiler.
pub(crate) struct RunCtx<'e> {
    pub(crate) x: Exec<'e>,
    pub(crate) roots: &'e Roots,
    pub(crate) team: Option<&'e Team>,
    pub(crate) inputs: &'e mut [Option<InStream>],
    pub(crate) outputs: &'e mut [Vec<u8>],
    /// The rows of the remote buffers.
    pub(crate) remote_mem: &'e mut StreamingMemory,
    /// The top-level program being run (for errors that name it).
    pub(crate) program: Option<usize>,
    pub(crate) prof: Option<&'e mut Recorder>,
}

impl RunCtx<'_> {
    /// Runs top-level program `index` (which exists).
    pub(crate) fn program(&mut self, index: usize) -> Result<(), EngineError> {
        self.block(self.roots.programs[index])
    }

    fn block(&mut self, b: Block) -> Result<(), EngineError> {
        for i in b.range() {
            self.op(i as OpIndex)?;
        }
        Ok(())
    }

    /// Runs instruction `i`: the interpreter, one short arm per kind of instruction.
    fn op(&mut self, i: OpIndex) -> Result<(), EngineError> {
        let x = self.x;
        let s = x.schedule;
        match &s.ops[i as usize] {
            Op::Compute(c) => self.compute(*c)?,
            Op::Exchange(e) => self.exchange(*e),
            Op::Sync(kind) => self.tell(RunEvent::Sync(*kind)),
            Op::Seq(b) => self.block(*b)?,
            Op::Label { label, body } => self.label(&s.labels[*label as usize], *body)?,
            Op::Repeat { count, body } => {
                for _ in 0..*count {
                    self.op(*body)?;
                }
            }
            Op::While {
                cond,
                predicate,
                body,
            } => {
                self.op(*cond)?;
                while x.read_scalar(predicate)? != 0 {
                    self.op(*body)?;
                    self.op(*cond)?;
                }
            }
            Op::If {
                predicate,
                then,
                else_,
            } => {
                let branch = if x.read_scalar(predicate)? != 0 {
                    then
                } else {
                    else_
                };
                self.op(*branch)?;
            }
            Op::Switch {
                control,
                cases,
                default,
            } => {
                let v = x.read_scalar(control)?;
                let case = s.cases[cases.range()].iter().find(|(c, _)| *c == v);
                self.op(case.map_or(*default, |&(_, op)| op))?;
            }
            Op::Call(f) => self.block(self.roots.functions[*f])?,
            Op::StreamIn(k) => self.stream_in(*k)?,
            Op::StreamOut(k) => self.stream_out(*k),
            Op::Remote(id) => {
                let start = self.clock();
                super::remote::remote_copy(&x, self.remote_mem, self.program, *id)?;
                if let Some(wall) = elapsed(start) {
                    self.tell(RunEvent::RemoteCopy { copy: *id, wall });
                }
            }
            Op::OverlapIo { io, compute } => self.overlap_io(*io, *compute)?,
            Op::Interleaved(f) => x.interleaved(*f, self.team)?,
            Op::Grouped(r) => x.grouped_run(*r, self.team)?,
        }
        Ok(())
    }

    /// Tells the profiler, if on.
    #[inline]
    fn tell(&mut self, event: RunEvent<'_>) {
        if let Some(p) = self.prof.as_deref_mut() {
            p.record(event);
        }
    }

    /// The host time now, when profiling (nothing to read otherwise: a stream copy in a loop
    /// is a hot path).
    #[inline]
    fn clock(&self) -> Option<Instant> {
        self.prof.is_some().then(Instant::now)
    }

    /// A labelled body, entered and left in the profile when profiling.
    fn label(&mut self, name: &str, body: OpIndex) -> Result<(), EngineError> {
        if self.prof.is_none() {
            return self.op(body);
        }
        self.tell(RunEvent::Enter { label: name });
        let r = self.op(body);
        // Leave the label even when the body failed, so the label stack stays balanced for
        // later runs.
        self.tell(RunEvent::Exit);
        r
    }

    /// An exchange phase, its host time recorded when profiling.
    fn exchange(&mut self, phase: ExchangePhaseId) {
        let start = self.clock();
        self.x.exchange(phase, self.team);
        if let Some(wall) = elapsed(start) {
            self.tell(RunEvent::Exchange { phase, wall });
        }
    }

    /// A compute phase, its host time recorded when profiling (also when a vertex failed).
    fn compute(&mut self, phase: ComputePhaseId) -> Result<(), EngineError> {
        let start = self.clock();
        let r = self.x.compute(phase, self.team);
        if let Some(wall) = elapsed(start) {
            self.tell(RunEvent::Compute { phase, wall });
        }
        r
    }

    /// A host-to-device stream copy: [`Schedule::streams`](super::schedule::Schedule)`[k]`.
    fn stream_in(&mut self, k: u32) -> Result<(), EngineError> {
        let start = self.clock();
        let copy = &self.x.schedule.streams[k as usize];
        super::transfer::stream_in(&self.x, self.inputs, copy.stream as usize, &copy.runs)?;
        self.stream_done(k, start);
        Ok(())
    }

    /// A device-to-host stream copy: the runs' bytes appended to the stream's output.
    fn stream_out(&mut self, k: u32) {
        let start = self.clock();
        let copy = &self.x.schedule.streams[k as usize];
        let data = super::transfer::stream_out(&self.x, &copy.runs);
        self.outputs[copy.stream as usize].extend_from_slice(&data);
        self.stream_done(k, start);
    }

    /// Tells the profiler, if on, of stream copy `k` that started at `start`.
    fn stream_done(&mut self, k: u32, start: Option<Instant>) {
        let copy = &self.x.schedule.streams[k as usize];
        if let Some(wall) = elapsed(start) {
            self.tell(RunEvent::StreamCopy {
                site: k,
                stream: copy.stream,
                runs: &copy.runs,
                wall,
            });
        }
    }

    /// Overlapped I/O. The two parts share no data (`Executable::check`): the compute first, so
    /// that the profile's clocks show the transfers hidden behind it.
    fn overlap_io(&mut self, io: OpIndex, compute: OpIndex) -> Result<(), EngineError> {
        self.tell(RunEvent::OverlapBegin);
        let r = self.op(compute).and_then(|()| self.op(io));
        self.tell(RunEvent::OverlapEnd);
        r
    }
}

/// The time since `start`, if there is one.
#[inline]
fn elapsed(start: Option<Instant>) -> Option<std::time::Duration> {
    start.map(|s| s.elapsed())
}
