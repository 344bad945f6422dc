//! The steps that move data between tile memory and the world outside the chip: host stream
//! copies, remote-buffer copies (`remote.rs` does the moving), and overlapped I/O, each told to
//! the profiler when it is on.

use super::exec::RunCtx;
use super::memory::gather_runs;
use super::EngineError;
use crate::exe::{MemRun, RemoteCopyId, Step};

impl RunCtx<'_> {
    /// A host-to-device stream copy.
    pub(super) fn stream_in_step(
        &mut self,
        stream: u32,
        runs: &[MemRun],
    ) -> Result<(), EngineError> {
        let start = self.clock();
        match self.x.dist {
            None => self.stream_in(stream as usize, runs)?,
            Some(d) => self.stream_in_ranks(d, stream as usize, runs)?,
        }
        self.record_stream(stream, runs, start);
        Ok(())
    }

    /// A device-to-host stream copy: the runs' bytes appended to the stream's output.
    pub(super) fn stream_out_step(&mut self, stream: u32, runs: &[MemRun]) {
        let start = self.clock();
        let data = match self.x.dist {
            None => gather_runs(self.x.mem, runs),
            Some(d) => d.gather_runs(self.x.mem, runs),
        };
        self.outputs[stream as usize].extend_from_slice(&data);
        self.record_stream(stream, runs, start);
    }

    /// A copy between tile memory and a remote buffer.
    pub(super) fn remote_step(&mut self, id: RemoteCopyId) -> Result<(), EngineError> {
        let start = self.clock();
        self.remote(id)?;
        if let (Some(p), Some(start)) = (self.prof.as_deref_mut(), start) {
            p.remote(id, start.elapsed());
        }
        Ok(())
    }

    /// The host time now, when profiling (nothing to read otherwise: a stream copy in a loop
    /// is a hot path).
    fn clock(&self) -> Option<std::time::Instant> {
        self.prof.is_some().then(std::time::Instant::now)
    }

    /// Overlapped I/O. The two parts share no data (`Executable::check`): the compute first, so
    /// that the profile's clocks show the transfers hidden behind it.
    pub(super) fn overlap_io(&mut self, io: &Step, compute: &Step) -> Result<(), EngineError> {
        if let Some(p) = self.prof.as_deref_mut() {
            p.overlap_begin();
        }
        let r = self.step(compute).and_then(|()| self.step(io));
        if let Some(p) = self.prof.as_deref_mut() {
            p.overlap_end();
        }
        r
    }

    /// Tells the profiler, if on, of a stream copy that started at `start`.
    fn record_stream(&mut self, stream: u32, runs: &[MemRun], start: Option<std::time::Instant>) {
        let exe = self.x.exe;
        if let (Some(p), Some(start)) = (self.prof.as_deref_mut(), start) {
            p.stream(exe, stream, runs, start.elapsed());
        }
    }

    /// A host-to-device stream copy on one rank: the next bytes of the connected buffer
    /// (wrapping round) into the runs.
    fn stream_in(&mut self, stream: usize, runs: &[MemRun]) -> Result<(), EngineError> {
        let desc = &self.x.exe.streams[stream];
        let need: usize = runs.iter().map(|r| r.bytes as usize).sum();
        if need == 0 {
            return Ok(());
        }
        let Some(src) = self.inputs[stream].as_mut().filter(|s| !s.data.is_empty()) else {
            return Err(EngineError::StreamNotConnected {
                name: desc.name.clone(),
            });
        };
        debug_assert_eq!(src.dtype, desc.dtype);
        for r in runs {
            let mut off = r.offset as usize;
            let mut left = r.bytes as usize;
            while left > 0 {
                let n = left.min(src.data.len() - src.pos);
                // Runs in bounds and element-aligned: `check()` (BadRun, RunTotal).
                self.x
                    .mem
                    .write(r.tile, off, &src.data[src.pos..src.pos + n]);
                src.pos = (src.pos + n) % src.data.len();
                off += n;
                left -= n;
            }
        }
        Ok(())
    }

    /// A host-to-device stream over several ranks: rank 0 reads the connected buffer (it
    /// alone decides whether it is connected) and scatters the bytes to the ranks that own
    /// the runs.
    fn stream_in_ranks(
        &mut self,
        d: &super::ranks::Dist,
        stream: usize,
        runs: &[MemRun],
    ) -> Result<(), EngineError> {
        let need: usize = runs.iter().map(|r| r.bytes as usize).sum();
        if need == 0 {
            return Ok(());
        }
        let mut data = Vec::new();
        let result = if d.rank == 0 {
            match self.inputs[stream].as_mut().filter(|s| !s.data.is_empty()) {
                None => Err(EngineError::StreamNotConnected {
                    name: self.x.exe.streams[stream].name.clone(),
                }),
                Some(src) => {
                    data.reserve(need);
                    while data.len() < need {
                        let n = (need - data.len()).min(src.data.len() - src.pos);
                        data.extend_from_slice(&src.data[src.pos..src.pos + n]);
                        src.pos = (src.pos + n) % src.data.len();
                    }
                    Ok(())
                }
            }
        } else {
            Ok(())
        };
        d.agree(result)?;
        d.scatter_runs(self.x.mem, runs, &data);
        Ok(())
    }
}
