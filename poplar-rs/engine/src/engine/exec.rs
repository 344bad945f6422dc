//! The parallel executor of compute and exchange phases, interleaved plans and grouped runs
//! (`Exec`), which the team's threads share; the interpreter that walks the schedule is
//! `run.rs`'s.
//!
//! (About 650 lines. One concept: a phase's tasks, how a thread runs one, and the vertex
//! loop of a tile with its checks; split, every part would need the others' plans.)

use std::ops::Range;

use super::error::EngineError;
use super::grouped::GroupedRunPlan;
use super::interleave::{InterleavedPlan, InterleavedUnit};
use super::memory::Memory;
use super::plan::*;
use super::schedule::{Op, OpIndex, Schedule};
use super::team::{Job, Team};
use crate::codelet::{rounding, VertexIo, Worker};
use crate::dtype::DType;
use crate::entity::PrimaryMap;
use crate::exe::{CodeletId, ComputePhaseId, ExchangePhaseId, Executable, ScalarLoc};

/// What every thread of a run reads: the plans and tile memory.
#[derive(Clone, Copy)]
pub(crate) struct Exec<'e> {
    pub(crate) exe: &'e Executable,
    pub(crate) mem: &'e Memory,
    pub(crate) codelets: &'e PrimaryMap<CodeletId, Resolved>,
    pub(crate) exchanges: &'e PrimaryMap<ExchangePhaseId, ExchangePlan>,
    pub(crate) computes: &'e PrimaryMap<ComputePhaseId, ComputePlan>,
    /// The engine's program, realised once (`schedule.rs`).
    pub(crate) schedule: &'e Schedule,
    /// Exchange–compute pairs run interleaved tile by tile (`interleave.rs`): the plans of
    /// the schedule's [`Op::Interleaved`] instructions.
    pub(crate) interleaved: &'e [InterleavedPlan],
    /// Straight runs of supersteps run group by group (`grouped.rs`): the plans of the
    /// schedule's [`Op::Grouped`] instructions.
    pub(crate) grouped: &'e [GroupedRunPlan],
    pub(crate) check_finite: bool,
    /// Flush the subnormals each vertex writes to its f32 fields (`fp`'s software fallback).
    pub(crate) soft_flush: bool,
    /// The seed of stochastic rounding to f16, if on (`codelet::rounding`).
    pub(crate) sr_seed: Option<u64>,
    /// Compute phases run by this engine so far (the current one included while it runs):
    /// part of each vertex execution's rounding key.
    pub(crate) epoch: &'e std::sync::atomic::AtomicU64,
    /// Where the replicas lie (control-flow predicates must agree across them).
    pub(crate) replicas: crate::exe::ReplicaLayout,
    /// Running over several ranks: this rank's tiles and the messages between ranks.
    pub(crate) dist: Option<&'e super::ranks::Dist>,
}

impl Exec<'_> {
    pub(crate) fn read_scalar_at(&self, tile: crate::target::TileId, s: &ScalarLoc) -> i64 {
        let mut b = [0u8; 4];
        let n = s.dtype.size();
        // In bounds, aligned, dtype bool/i32/u32: `check()` (BadScalar) of the flat
        // executable, whose tiles include every replica's copy of `s.tile`.
        self.mem.read(tile, s.offset as usize, &mut b[..n]);
        match s.dtype {
            DType::I32 => i64::from(i32::from_le_bytes(b)),
            DType::U32 => i64::from(u32::from_le_bytes(b)),
            _ => i64::from(b[0] != 0),
        }
    }

    /// A control-flow predicate or switch control. Every replica runs the same program, so
    /// every replica's copy must hold the same value; a replica that disagrees with replica 0
    /// is an error naming both values, never a silent choice.
    pub(crate) fn read_scalar(&self, s: &ScalarLoc) -> Result<i64, EngineError> {
        let rl = self.replicas;
        let tile_of = |r: u32| s.tile.offset(r * rl.tiles_per_replica);
        // Over several ranks, each replica's copy is read by the rank that owns it and the
        // values are shared, so every rank takes the same branch (or fails alike).
        let values: Vec<i64> = match self.dist {
            None => (0..rl.replicas)
                .map(|r| self.read_scalar_at(tile_of(r), s))
                .collect(),
            Some(d) => d.share_values(
                &(0..rl.replicas)
                    .map(|r| {
                        d.owns(tile_of(r))
                            .then(|| self.read_scalar_at(tile_of(r), s))
                    })
                    .collect::<Vec<_>>(),
            ),
        };
        let v = values[0];
        for r in 1..rl.replicas {
            let w = values[r as usize];
            if w != v {
                return Err(EngineError::ReplicasDiverged {
                    tile: s.tile,
                    offset: s.offset,
                    replica: r,
                    value: w,
                    replica0_value: v,
                });
            }
        }
        Ok(v)
    }

    /// A straight run of supersteps, group by group (`grouped.rs`), on `team` if any.
    pub(crate) fn grouped_run(&self, r: u32, team: Option<&Team>) -> Result<(), EngineError> {
        let run = &self.grouped[r as usize];
        // As `compute`: one epoch per compute phase the run executes, all taken before any
        // task reads them; the run's k-th phase (from 1) uses `base + k`.
        self.epoch
            .fetch_add(run.phases, std::sync::atomic::Ordering::SeqCst);
        match team {
            Some(team) if run.chunks.len() > 1 => {
                team.run(Job::Grouped(r), |job, t| self.work(job, t))
            }
            _ => {
                let mut first: Option<(u128, EngineError)> = None;
                for c in &run.chunks {
                    if let Err((key, e)) = self.grouped_groups(r, c) {
                        super::team::keep_lowest(&mut first, key, e);
                    }
                }
                first.map_or(Ok(()), |(_, e)| Err(e))
            }
        }
    }

    /// An exchange phase and the compute phases after it, interleaved tile by tile.
    pub(crate) fn interleaved(&self, f: u32, team: Option<&Team>) -> Result<(), EngineError> {
        let plan = &self.interleaved[f as usize];
        // As `compute`: one epoch per compute phase, before any task reads it. Only the last
        // phase of an interleaving can have vertices (the others are on-tile copies), and it
        // reads the epoch it would have read run alone.
        self.epoch.fetch_add(
            plan.computes.len() as u64,
            std::sync::atomic::Ordering::SeqCst,
        );
        match team {
            Some(team) if plan.chunks.len() > 1 => {
                team.run(Job::Interleaved(f), |job, t| self.work(job, t))
            }
            _ => {
                // Every task's copies run, also after a failure; the first failure is reported.
                let mut result = Ok(());
                for r in &plan.chunks {
                    let e = self.interleaved_units(f, r);
                    if result.is_ok() {
                        result = e;
                    }
                }
                result
            }
        }
    }

    /// Exchange phase `i`, on `team` if any (and its messages to other ranks).
    pub(crate) fn exchange(&self, i: ExchangePhaseId, team: Option<&Team>) {
        let plan = &self.exchanges[i];
        match team {
            Some(team) if plan.chunks.len() > 1 => {
                // No exchange task fails.
                let _ = team.run(Job::Exchange(i.as_u32()), |job, t| self.work(job, t));
            }
            _ => self.exchange_ops(&plan.ops),
        }
        if let Some(d) = self.dist {
            d.exchange(i, self.mem);
        }
    }

    /// Compute phase `i`, on `team` if any.
    pub(crate) fn compute(
        &self,
        i: ComputePhaseId,
        team: Option<&Team>,
    ) -> Result<(), EngineError> {
        // Before the phase is published to the team: every task of it reads the same value.
        self.epoch.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let plan = &self.computes[i];
        let result = match team {
            Some(team) if plan.chunks.len() > 1 => {
                team.run(Job::Compute(i.as_u32()), |job, t| self.work(job, t))
            }
            // Serially, the first failure ends the phase.
            _ => plan
                .chunks
                .iter()
                .try_for_each(|r| self.compute_tiles(i, r)),
        };
        match self.dist {
            // A failure on any rank ends the phase on every rank.
            Some(d) => d.agree(result),
            None => result,
        }
    }

    /// A thread's share of `job`: tasks claimed one by one until none is left. The tasks of
    /// a phase are its `chunks` (tile or copy ranges, split by cost in `Engine::new`).
    pub(crate) fn work(&self, job: Job, team: &Team) {
        match job {
            Job::Compute(i) => {
                let i = ComputePhaseId::from_u32(i);
                let chunks = &self.computes[i].chunks;
                while let Some(c) = team.claim(chunks.len()) {
                    if let Err(e) = self.compute_tiles(i, &chunks[c]) {
                        team.fail(c as u128, e);
                    }
                }
            }
            Job::Exchange(i) => {
                let plan = &self.exchanges[ExchangePhaseId::from_u32(i)];
                while let Some(c) = team.claim(plan.chunks.len()) {
                    self.exchange_ops(&plan.ops[plan.chunks[c].clone()]);
                }
            }
            Job::Interleaved(f) => {
                let chunks = &self.interleaved[f as usize].chunks;
                while let Some(c) = team.claim(chunks.len()) {
                    if let Err(e) = self.interleaved_units(f, &chunks[c]) {
                        team.fail(c as u128, e);
                    }
                }
            }
            Job::Grouped(r) => {
                let chunks = &self.grouped[r as usize].chunks;
                while let Some(c) = team.claim(chunks.len()) {
                    if let Err((key, e)) = self.grouped_groups(r, &chunks[c]) {
                        team.fail(key, e);
                    }
                }
            }
            Job::Stop => {}
        }
    }

    /// Units `r` of interleaved plan `f` (one task): per tile, the copies that land on it, then
    /// its share of each compute phase. After a vertex fails, the task's remaining copies and
    /// on-tile copies of vertex-free phases still run (they complete before the failing phase
    /// when run apart) but no more vertices.
    pub(crate) fn interleaved_units(&self, f: u32, r: &Range<usize>) -> Result<(), EngineError> {
        let plan = &self.interleaved[f as usize];
        let epoch = self.epoch.load(std::sync::atomic::Ordering::SeqCst);
        // No progress-driven look-ahead: each unit's copy ends and field heads are asked for
        // `INTERLEAVE_PREFETCH_AHEAD` units ahead instead (below).
        super::lookahead::ahead_end();
        let _quiet = super::panics::Quiet::begin();
        let mut result = Ok(());
        let units = &plan.units[r.clone()];
        for next in units.iter().take(INTERLEAVE_PREFETCH_AHEAD) {
            self.prefetch_unit(plan, next);
        }
        for (i, u) in units.iter().enumerate() {
            // A hint (reads and writes nothing): a later tile's copies and fields — its
            // vertices' state, scalars and the first line of its vectors — are cold, a few
            // misses per vertex that nothing else would overlap.
            if let Some(next) = units.get(i + INTERLEAVE_PREFETCH_AHEAD) {
                self.prefetch_unit(plan, next);
            }
            self.exchange_ops(&plan.ops[u.ops.start as usize..u.ops.end as usize]);
            for t in &plan.tiles[u.tiles.start as usize..u.tiles.end as usize] {
                let c = plan.computes[t.phase as usize];
                let cp = &self.computes[c];
                let ht = &cp.tiles[t.tile as usize];
                if (t.phase as usize) + 1 < plan.computes.len() {
                    // A phase before the last: on-tile copies only (`interleave::interleaving_at`), which
                    // cannot fail and run also after a failure.
                    let tc = &self.exe.computes[c].tiles[ht.index as usize];
                    Self::local_copies(ht.base, &tc.pre_copies);
                    Self::local_copies(ht.base, &tc.post_copies);
                } else if result.is_ok() {
                    result = self.run_tile(c, cp, ht, epoch);
                }
            }
        }
        result
    }

    /// Groups `gs` of grouped run `r` (one task): each group through every step of the run, to
    /// its end or to the group's first failing vertex. Every group runs whatever another
    /// does, so what runs does not depend on how the groups are split into tasks. The failure
    /// with the lowest (phase, tile) is returned with that key.
    pub(crate) fn grouped_groups(
        &self,
        r: u32,
        gs: &Range<usize>,
    ) -> Result<(), (u128, EngineError)> {
        let run = &self.grouped[r as usize];
        // `grouped` took the run's epochs before the task started.
        let base = self.epoch.load(std::sync::atomic::Ordering::SeqCst) - run.phases;
        super::lookahead::ahead_end();
        let _quiet = super::panics::Quiet::begin();
        let mut first: Option<(u128, EngineError)> = None;
        for g in gs.clone() {
            let mut k = 0u64;
            for i in run.body.range() {
                if let Err((key, e)) = self.group_step(run, g, i as OpIndex, base, &mut k) {
                    super::team::keep_lowest(&mut first, key, e);
                    break;
                }
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Group `g`'s share of straight instruction `i`; `k` counts the run's compute phases so
    /// far.
    fn group_step(
        &self,
        run: &GroupedRunPlan,
        g: usize,
        i: OpIndex,
        base: u64,
        k: &mut u64,
    ) -> Result<(), (u128, EngineError)> {
        match &self.schedule.ops[i as usize] {
            Op::Seq(b) => {
                for j in b.range() {
                    self.group_step(run, g, j as OpIndex, base, k)?;
                }
            }
            Op::Repeat { count, body } => {
                for _ in 0..*count {
                    self.group_step(run, g, *body, base, k)?;
                }
            }
            Op::Label { body, .. } => self.group_step(run, g, *body, base, k)?,
            Op::Exchange(x) => {
                if let Some(by) = run.exchanges.get(x) {
                    self.exchange_ops(by.of(g));
                }
            }
            Op::Compute(c) => {
                *k += 1;
                let plan = &self.computes[*c];
                if let Some(by) = run.computes.get(c) {
                    for &t in by.of(g) {
                        let ht = &plan.tiles[t as usize];
                        if let Err(e) = self.run_tile(*c, plan, ht, base + *k) {
                            let tile = self.exe.computes[*c].tiles[ht.index as usize].tile;
                            return Err(((u128::from(*k) << 32) | u128::from(tile.as_u32()), e));
                        }
                    }
                }
            }
            // Syncs only matter to the profiler; a run holds no other instruction
            // (`grouped::straight`).
            _ => {}
        }
        Ok(())
    }

    pub(crate) fn exchange_ops(&self, ops: &[CopyOp]) {
        let mem = self.mem;
        for (k, o) in ops.iter().enumerate() {
            // Host-side hint: start fetching a later copy's source while this one runs
            // (copies are a few hundred bytes, scattered over many tiles).
            if let Some(next) = ops.get(k + EXCHANGE_PREFETCH_AHEAD) {
                let src = mem.base(next.src_tile).wrapping_add(next.src as usize);
                let dst = mem.base(next.dst_tile).wrapping_add(next.dst as usize);
                crate::codelet::prefetch_ptr(src);
                crate::codelet::prefetch_ptr(dst);
            }
            // SAFETY: both ranges are in bounds of their tiles (`check()`:
            // TransferOutOfBounds; pieces are sub-ranges of transfers), and within one
            // exchange phase no destination range overlaps any source range or another
            // destination range (`check()`: ExchangeOverlap), so concurrent copies of this
            // phase never write bytes another copy reads or writes.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    mem.base(o.src_tile).add(o.src as usize),
                    mem.base(o.dst_tile).add(o.dst as usize),
                    o.bytes as usize,
                );
            }
        }
    }

    /// Runs tiles `r` of compute phase `i` (one task), stopping at the first failure.
    pub(crate) fn compute_tiles(
        &self,
        i: ComputePhaseId,
        r: &Range<usize>,
    ) -> Result<(), EngineError> {
        let plan = &self.computes[i];
        let epoch = self.epoch.load(std::sync::atomic::Ordering::SeqCst);
        let run_tiles = || -> Result<(), EngineError> {
            for j in r.clone() {
                let ht = &plan.tiles[j];
                if plan.lookahead {
                    // The next tile, also across the end of this task (often the next task
                    // of this thread too; a wasted hint costs little).
                    match plan.tiles.get(j + 1) {
                        Some(next) => {
                            Self::prefetch_tile_heads(plan, next);
                            let runs = &plan.runs[next.runs.start as usize..next.runs.end as usize];
                            super::lookahead::ahead_begin(next.base, runs, ht.end - ht.first);
                        }
                        None => super::lookahead::ahead_end(),
                    }
                }
                self.run_tile(i, plan, ht, epoch)?;
            }
            Ok(())
        };
        // Codelet panics in this task are caught per vertex and reported; the hook stays silent.
        let result = {
            let _quiet = super::panics::Quiet::begin();
            run_tiles()
        };
        if plan.lookahead {
            super::lookahead::ahead_end();
        }
        result
    }

    /// Asks the CPU for the first cache lines of the fields of `ht`'s vertices (a hint: no
    /// memory is read or written, whatever the addresses; for a vector-list field the offset
    /// is a list-table index, and the hint is merely wasted).
    pub(crate) fn prefetch_tile_heads(plan: &ComputePlan, ht: &HotTile) {
        let fields = plan.vertices[ht.first as usize..ht.end as usize]
            .iter()
            .flat_map(|hv| &plan.fields[hv.fields_at..][..hv.n_fields])
            .take(LOOKAHEAD_FIELDS);
        for f in fields {
            for line in 0..LOOKAHEAD_LINES {
                crate::codelet::prefetch_ptr(ht.base.wrapping_add(f.offset as usize + 64 * line));
            }
        }
    }

    /// Asks the CPU for the first cache line of every copy source and destination of an
    /// interleaved unit and of every field of its vertices (a hint: nothing is read or
    /// written; a vector-list field's offset is a table index, and its hint is wasted).
    fn prefetch_unit(&self, plan: &InterleavedPlan, u: &InterleavedUnit) {
        for o in &plan.ops[u.ops.start as usize..u.ops.end as usize] {
            crate::codelet::prefetch_ptr(self.mem.base(o.src_tile).wrapping_add(o.src as usize));
            crate::codelet::prefetch_ptr(self.mem.base(o.dst_tile).wrapping_add(o.dst as usize));
        }
        for t in &plan.tiles[u.tiles.start as usize..u.tiles.end as usize] {
            let cp = &self.computes[plan.computes[t.phase as usize]];
            let ht = &cp.tiles[t.tile as usize];
            for hv in &cp.vertices[ht.first as usize..ht.end as usize] {
                for f in &cp.fields[hv.fields_at..][..hv.n_fields] {
                    crate::codelet::prefetch_ptr(ht.base.wrapping_add(f.offset as usize));
                }
            }
        }
    }

    pub(crate) fn local_copies(base: *mut u8, copies: &[crate::exe::LocalCopy]) {
        for c in copies {
            // SAFETY: src and dst ranges are in bounds of this tile (`check()`: CopyOutOfBounds);
            // `ptr::copy` allows overlap; this tile is touched only by this task (a tile
            // appears at most once per compute phase: `check()`: ComputeTileOrder).
            unsafe {
                std::ptr::copy(
                    base.add(c.src as usize),
                    base.add(c.dst as usize),
                    c.bytes as usize,
                )
            };
        }
    }

    pub(crate) fn run_tile(
        &self,
        cs: ComputePhaseId,
        plan: &ComputePlan,
        ht: &HotTile,
        epoch: u64,
    ) -> Result<(), EngineError> {
        let base = ht.base;
        if ht.copies {
            Self::local_copies(
                base,
                &self.exe.computes[cs].tiles[ht.index as usize].pre_copies,
            );
        }
        let sr = self.sr_seed.map(|seed| {
            let tile = self.exe.computes[cs].tiles[ht.index as usize].tile;
            (seed, epoch, tile)
        });
        // Back to rounding to nearest when the tile is done, also when a vertex fails.
        struct Nearest;
        impl Drop for Nearest {
            fn drop(&mut self) {
                rounding::set_rounding(rounding::Rounding::Nearest);
            }
        }
        let _nearest = sr.map(|_| Nearest);
        for (k, hv) in plan.vertices[ht.first as usize..ht.end as usize]
            .iter()
            .enumerate()
        {
            if hv.n_bools > 0 {
                Self::normalize_bools(plan, ht, hv);
            }
            if plan.lookahead && k > 0 {
                super::lookahead::ahead_vertex(k as u32);
            }
            // SAFETY: the field and list runs are copies of this vertex's `VertexInst` tables
            // (built with the plan, never mutated). `base` is this tile's
            // memory, used only by this task for the duration of the phase (tile unique per
            // phase: `check()` ComputeTileOrder); every field and list entry is in bounds and
            // aligned for its dtype (`check()`: FieldOutOfBounds, FieldMisaligned,
            // ListOutOfRange, ScalarLen; host memory is 8-aligned), the field count and kinds
            // match the registered codelet (`check()` FieldCount, `resolve_codelets`
            // CodeletLayout), written fields overlap no other field (`check()`: AliasedField),
            // and bool fields hold 0/1 (`normalize_bools` above).
            let io = unsafe {
                VertexIo::new(
                    base,
                    &plan.fields[hv.fields_at..][..hv.n_fields],
                    &plan.lists[hv.lists_at..][..hv.n_lists],
                )
            };
            if let Some((seed, epoch, tile)) = sr {
                rounding::set_rounding(rounding::Rounding::Stochastic {
                    key: rounding::vertex_key(seed, epoch, tile.as_u32(), k as u32),
                });
            }
            for id in 0..hv.workers {
                let w = Worker {
                    id,
                    count: hv.workers,
                };
                let message = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    (hv.compute)(&io, w)
                })) {
                    Ok(Ok(())) => continue,
                    Ok(Err(e)) => e.0,
                    Err(p) => super::panics::message(p),
                };
                return Err(self.vertex_failed(cs, ht, k, message));
            }
            if hv.slow && self.soft_flush {
                self.flush_vertex(cs, ht, k);
            }
            if hv.slow && self.check_finite {
                self.check_vertex_finite(cs, ht, k)?;
            }
        }
        if ht.copies {
            Self::local_copies(
                base,
                &self.exe.computes[cs].tiles[ht.index as usize].post_copies,
            );
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn vertex_failed(
        &self,
        cs: ComputePhaseId,
        ht: &HotTile,
        k: usize,
        message: String,
    ) -> EngineError {
        let tc = &self.exe.computes[cs].tiles[ht.index as usize];
        let v = &tc.vertices[k];
        EngineError::VertexFailed {
            vertex: v.id,
            codelet: self.codelets[v.codelet].desc.name.to_string(),
            tile: tc.tile,
            compute_set: self.exe.computes[cs].name.clone(),
            message,
        }
    }

    /// Sets every byte of the vertex's bool fields to 0 or 1.
    #[inline]
    pub(crate) fn normalize_bools(plan: &ComputePlan, ht: &HotTile, hv: &HotVertex) {
        for l in &plan.bools[hv.bools_at as usize..][..hv.n_bools as usize] {
            // SAFETY: the field's bytes (1 per bool) are in bounds (`check()`:
            // FieldOutOfBounds, ListOutOfRange; the plan's ranges are copies of the vertex's
            // bool fields); this task has exclusive access to the tile (tile unique per phase:
            // `check()` ComputeTileOrder) and no vertex borrow is live.
            let bytes = unsafe {
                std::slice::from_raw_parts_mut(ht.base.add(l.offset as usize), l.len as usize)
            };
            for b in bytes {
                // Only bytes that need it are written, so a clean line stays clean.
                if *b > 1 {
                    *b = 1;
                }
            }
        }
    }

    #[inline(never)]
    /// The software fallback of subnormal flushing: the subnormals the vertex wrote to its f32
    /// fields become zeros of the same sign.
    #[cold]
    pub(crate) fn flush_vertex(&self, cs: ComputePhaseId, ht: &HotTile, k: usize) {
        let tc = &self.exe.computes[cs].tiles[ht.index as usize];
        let v = &tc.vertices[k];
        let rc = &self.codelets[v.codelet];
        for &(f, shape) in &rc.f32_written {
            for l in field_ranges(v, f, shape) {
                // SAFETY: in bounds and 4-aligned for f32 (`check()`: FieldOutOfBounds,
                // FieldMisaligned); the vertex's borrows ended when `compute` returned and this
                // task has exclusive access to the tile (tile unique per phase).
                let xs = unsafe {
                    std::slice::from_raw_parts_mut(
                        ht.base.add(l.offset as usize).cast::<f32>(),
                        l.len as usize,
                    )
                };
                crate::fp::flush_slice(xs);
            }
        }
    }

    pub(crate) fn check_vertex_finite(
        &self,
        cs: ComputePhaseId,
        ht: &HotTile,
        k: usize,
    ) -> Result<(), EngineError> {
        let tc = &self.exe.computes[cs].tiles[ht.index as usize];
        let v = &tc.vertices[k];
        let rc = &self.codelets[v.codelet];
        let (base, tile) = (ht.base, tc.tile);
        for &(f, shape) in &rc.f32_written {
            let mut element = 0u64;
            for l in field_ranges(v, f, shape) {
                // SAFETY: in bounds and 4-aligned for f32 (`check()`: FieldOutOfBounds,
                // FieldMisaligned); the vertex's borrows ended when `compute` returned and this
                // task has exclusive access to the tile.
                let xs = unsafe {
                    std::slice::from_raw_parts(
                        base.add(l.offset as usize).cast::<f32>(),
                        l.len as usize,
                    )
                };
                if let Some(k) = xs.iter().position(|x| !x.is_finite()) {
                    return Err(EngineError::NonFinite {
                        vertex: v.id,
                        codelet: rc.desc.name.to_string(),
                        field: f,
                        tile,
                        compute_set: self.exe.computes[cs].name.clone(),
                        element: element + k as u64,
                        value: xs[k],
                    });
                }
                element += u64::from(l.len);
            }
        }
        Ok(())
    }
}
