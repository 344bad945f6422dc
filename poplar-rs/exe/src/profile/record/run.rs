//! What the recorder does during a run: each [`RunEvent`] counted and its step stored in the
//! current segment, which is memoised (or replayed when it fills up) where every tile's clock
//! is equal.

use std::sync::OnceLock;
use std::time::Duration;

use super::event::*;
use super::replay::{replay, Acc};
use super::{Recorder, SEGMENT_LIMIT};
use crate::exe::{MemRun, SyncKind};

impl Recorder {
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
        let cost = crate::profile::transfer::stream_copy_cost(
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
}
