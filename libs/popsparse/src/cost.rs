//! The cycle costs of the sparse vertices: the builder sets them on each vertex and the planner
//! schedules the same functions, so the plan's estimate and the cycle model of the compiled
//! program agree.
//!
//! They are the terms of poplibs' own estimators for its dynamic sparse vertices
//! (`lib/popsparse/PerformanceEstimation.hpp` in graphcore/poplibs, as its planner
//! `FullyConnectedPlan.cpp` calls them for the best case: one sub-group a bucket, found first),
//! written in this project's units. poplibs' estimators count `supervisor +
//! numWorkerContexts × worker` tile cycles; the cycle model counts `6 × busiest share +
//! SUPERVISOR_CYCLES`, so a function here returns the busiest context's worker cycles plus a
//! sixth of the supervisor's cycles beyond the model's own 51 ([`supervisor_share`]).
//!
//! - **Blocks on the AMP** (Fwd and GradA, [`amp_block`]; poplibs' `sparseDenseBlockMultiply`,
//!   the `SparseDenseMatMulBlock` and `…BlockGradA` vertices): each context takes its share of
//!   the batch columns, `z_w` (`⌈z / 6⌉` or `⌊z / 6⌋`; the costlier share sets the vertex),
//!   of every block. A block costs the supervisor the load of
//!   its weights into the AMP (`b² / 2` cycles for f32, `b² / 4` for f16: 64 bits a cycle) and
//!   `3 + 12` cycles more, and each context `inner + z_w · per_z` (`inner − 3` when the vertex
//!   keeps the output row's state between blocks, as Fwd does and GradA does not); the vertex
//!   costs the supervisor `40 + 102 + 2` cycles and each context its `vertex` cycles. The terms
//!   by block ([`AmpBlock`]):
//!
//!   | block | type | `per_z` | `inner` (z_w = 1, 2, more) | `vertex` |
//!   |---|---|---|---|---|
//!   | 4 × 4 | f32 | 4 | 14 | 26 |
//!   | 4 × 4 | f16 | 2 | 17, 18, 19 | 26 |
//!   | 8 × 8 | f32 | 8: one f32 AMP row (`poplin`'s [`Amp`](poplin::codelets::Amp)) | 22, 22, 23 | 23 |
//!   | 8 × 8 | f16 | 4 | 22, 23, 23 | 20 |
//!   | 16 × 16 | f16 | 4: one f16 AMP row | 24, 25, 24 | 23 |
//!   | 16 × 16 | f32 | four 8 × 8 blocks | | |
//!
//!   poplibs has no f32 16 × 16 block kernel: its planner takes f32 blocks of 16 as 8 × 8
//!   (`getBlockDimensionsToUse`: f32 blocks 4 and 8, f16 4, 8 and 16). A 16 × 16 f16 block with
//!   f32 partials is one weight load with 16 conv units (`numWeightLoadsPerBlock`, 2 with 8),
//!   the conv-unit count that `poplin`'s dense f16 pass assumes too.
//! - **Element sparsity** (Fwd and GradA, [`element`]; poplibs'
//!   `sparseDenseElementwiseMultiply` and `sparseDenseGradAElementwiseMultiply`, the
//!   `SparseDenseMatMulElementWise` and `SparseDenseMatMulGradAElementWise` vertices): the
//!   vector path. Each context takes `z_w` batch columns of every non-zero; the non-zeros are
//!   processed by output row, each row costing a fixed `row` (its set-up and the loops'
//!   entries) and each non-zero `entry` cycles: 3 per 4 columns (f32) or per 8 (f16), then
//!   the remainder columns (by 2 and 1 for f32; by 4, and 2 a column below 4, for f16). The
//!   supervisor costs `30 + 93` cycles (`30 + 92` for GradA). [`ElementTerms`] lists them.
//! - **GradW** ([`grad_w_cycles`]; poplibs' `sparseDenseBlockMultiplyGradW` and
//!   `sparseDenseGradWElementwiseMultiply`, the `SparseDenseMatMulBlockGradW` and
//!   `SparseDenseMatMulGradWElementWise` vertices): each context takes its share of the
//!   non-zeros, `⌈entries / 6⌉`, over the whole batch: `vertex + rows · x + entries · (y +
//!   z · per_z)` for blocks ([`GradWBlock`]), a dot product over `z` per non-zero for
//!   element sparsity, and `37 + 38 + 26` supervisor cycles.
//!
//! The rows a bucket's non-zeros fall in are those of a uniform pattern, as poplibs' planner
//! counts them ([`rows_touched`], its `getNumGroupsGivenUniformSparsityPattern`). The
//! buckets of this crate are unsorted: the model charges the kernel poplibs runs on its
//! row-sorted meta-info, not this crate's host loop.
//!
//! Deviations from poplibs' estimators: the element Fwd and GradA remainder of two f32
//! columns costs 2 cycles a non-zero (the estimators write `numZ / 2 * 2 * y`, counting every
//! column pair again, where their own `z = 2` case charges 2); GradW uses the vector kernel
//! for blocks too (poplibs also has an AMP GradW for batches that are multiples of 8 or 16,
//! `sparseDenseBlockMultiplyGradWAmp`, which it plans when cheaper); the zeroing of the
//! partials is the standard fill's cost, as elsewhere in this project.

use poplar_exe::profile::model::SUPERVISOR_CYCLES;
use poplin::codelets::{amp, MACS_PER_CYCLE_F16, MACS_PER_CYCLE_F32};

/// The pass a vertex belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// `Y = W·X`: the output rows are `W`'s rows.
    Fwd,
    /// `X' = Wᵀ·Y'`: the output rows are `W`'s columns.
    GradA,
    /// `W' = Y'·Xᵀ` on the pattern.
    GradW,
}

/// A vertex's work: a full bucket of `entries` non-zero `block × block` blocks (elements for
/// block 1) in a partition of `rows × cols` elements of `W`, against `z` batch columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    pub entries: u64,
    pub rows: u64,
    pub cols: u64,
    pub z: u64,
    pub block: u64,
    /// f16 values and dense operands (f32 partials); f32 otherwise.
    pub half: bool,
}

/// Worker cycles, on each of `workers` contexts, of `supervisor` supervisor cycles beyond the
/// cycle model's own `SUPERVISOR_CYCLES`: the contexts wait while it runs.
pub const fn supervisor_share(supervisor: u64, workers: u64) -> u64 {
    supervisor
        .saturating_sub(SUPERVISOR_CYCLES)
        .div_ceil(workers)
}

/// Rows of a `rows × cols` partition (in blocks) holding at least one of `entries` non-zeros
/// spread uniformly: `⌈rows · (1 − (1 − p)^cols)⌉` for the density `p = entries / (rows ·
/// cols)` (poplibs' `getNumGroupsGivenUniformSparsityPattern`), at least 1 and at most
/// `entries`.
pub fn rows_touched(entries: u64, rows: u64, cols: u64) -> u64 {
    if entries == 0 || rows == 0 || cols == 0 {
        return 0;
    }
    let p = (entries as f64 / (rows as f64 * cols as f64)).min(1.0);
    let touched = (rows as f64 * (1.0 - (1.0 - p).powf(cols as f64))).ceil() as u64;
    touched.clamp(1, rows.min(entries))
}

/// The terms of poplibs' AMP block kernel for one block size and type (module notes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AmpBlock {
    /// Kernel blocks per block of the pattern (4 for f32 blocks of 16: four 8 × 8).
    pub sub: u64,
    /// The kernel's block size.
    pub b: u64,
    /// Worker cycles per batch column of a kernel block.
    pub per_z: u64,
    /// Worker cycles per kernel block beyond its columns (with the output row's state kept:
    /// `inner − 3`).
    pub inner: u64,
    /// Worker cycles per vertex.
    pub vertex: u64,
}

/// poplibs' `sparseDenseBlockMultiply` terms for `block × block` blocks with `z_w` columns a
/// context (module notes).
pub fn amp_block_terms(block: u64, half: bool, z_w: u64) -> AmpBlock {
    let pick = |a: u64, b: u64, c: u64| match z_w {
        0 | 1 => a,
        2 => b,
        _ => c,
    };
    let row = |macs: u64| amp(macs).row_cycles;
    let (sub, b, per_z, inner, vertex) = match (block, half) {
        (4, false) => (1, 4, 4, 14, 26),
        (4, true) => (1, 4, 2, pick(17, 18, 19), 26),
        (8, false) => (1, 8, row(MACS_PER_CYCLE_F32), pick(22, 22, 23), 23),
        (8, true) => (1, 8, 4, pick(22, 23, 23), 20),
        (_, true) => (1, 16, row(MACS_PER_CYCLE_F16), pick(24, 25, 24), 23),
        (_, false) => (4, 8, row(MACS_PER_CYCLE_F32), pick(22, 22, 23), 23),
    };
    AmpBlock {
        sub,
        b,
        per_z,
        inner,
        vertex,
    }
}

/// Supervisor cycles of poplibs' block vertices beyond the blocks: 40, the bucket's sub-group
/// search (46 + 56) and 2.
pub const AMP_BLOCK_SUPERVISOR: u64 = 40 + 46 + 56 + 2;
/// Supervisor cycles per kernel block beyond the weights' load: 3, and 12 per weight load.
pub const AMP_BLOCK_LOAD: u64 = 3 + 12;

/// The busiest context's worker cycles of a Fwd (`retain`: the output row's state kept
/// between blocks) or GradA block vertex: `w.rows` are the output rows.
pub fn amp_block(w: Work, retain: bool, workers: u32) -> u64 {
    let n = u64::from(workers.max(1));
    costliest_share(w.z, n, |z_w| amp_block_share(w, retain, z_w, n))
}

/// [`amp_block`] for a context of `z_w` columns among `n`.
fn amp_block_share(w: Work, retain: bool, z_w: u64, n: u64) -> u64 {
    let t = amp_block_terms(w.block, w.half, z_w);
    let kernel_blocks = w.entries * t.sub;
    let per_block = t.inner + z_w * t.per_z - if retain { 3 } else { 0 };
    // The weights' load: 64 bits a cycle.
    let coeffs = t.b * t.b / if w.half { 4 } else { 2 };
    let block_rows = rows_touched(w.entries, w.rows / w.block, w.cols / w.block) * (w.block / t.b);
    let supervisor = AMP_BLOCK_SUPERVISOR
        + kernel_blocks * (coeffs + AMP_BLOCK_LOAD)
        + if retain { block_rows } else { 0 };
    t.vertex + kernel_blocks * per_block + supervisor_share(supervisor, n)
}

/// The terms of poplibs' element-wise kernel for `z_w` columns a context (module notes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElementTerms {
    /// Worker cycles per vertex.
    pub vertex: u64,
    /// Worker cycles per output row.
    pub row: u64,
    /// Worker cycles per non-zero.
    pub entry: u64,
    /// Supervisor cycles per vertex.
    pub supervisor: u64,
}

/// poplibs' `sparseDenseElementwiseMultiply` (Fwd) and `sparseDenseGradAElementwiseMultiply`
/// (GradA) terms for `z_w` columns a context.
pub fn element_terms(z_w: u64, half: bool, grad_a: bool) -> ElementTerms {
    let on = |c: bool, v: u64| if c { v } else { 0 };
    let g = |fwd: u64, ga: u64| if grad_a { ga } else { fwd };
    let (vertex, row, entry) = match (half, z_w) {
        (false, 4) => (g(25, 23), 13, 3),
        (false, 2) => (g(27, 25), 11, 2),
        (false, z) => (
            g(30, 33),
            13 + on(z >= 4, g(12, 10))
                + on(z & 2 != 0, 8)
                + on(z & 1 != 0, 8)
                + if z & 3 != 0 { 3 } else { 1 },
            3 * (z / 4) + on(z & 2 != 0, 2) + on(z & 1 != 0, 2),
        ),
        (true, 8) => (g(28, 26), 15, 3),
        (true, 4) => (g(30, 28), 11, 2),
        (true, z) => (
            g(33, 32),
            g(12, 11) + on(z >= 8, g(16, 14)) + on(z & 4 != 0, 13) + on(z & 3 != 0, g(11, 10)),
            3 * (z / 8) + on(z & 4 != 0, 2) + 2 * (z & 3),
        ),
    };
    ElementTerms {
        vertex,
        row,
        entry,
        supervisor: 30 + g(47, 46) + 46,
    }
}

/// The larger `cost` of the two share sizes of `z` batch columns over `n` contexts
/// ([`crate::codelets::z_share`]: `⌈z/n⌉` and `⌊z/n⌋` columns). The estimators are not
/// monotonic in the columns (f16: 8 columns cost 3 cycles a non-zero, 7 cost 8), so the
/// busiest context is the costliest share, not always the widest.
fn costliest_share(z: u64, n: u64, cost: impl Fn(u64) -> u64) -> u64 {
    let (wide, narrow) = (z.div_ceil(n), z / n);
    let c = cost(wide.max(1));
    if narrow > 0 && narrow != wide {
        c.max(cost(narrow))
    } else {
        c
    }
}

/// The busiest context's worker cycles of an element-sparse Fwd or GradA vertex: `w.rows`
/// are the output rows.
pub fn element(w: Work, grad_a: bool, workers: u32) -> u64 {
    let n = u64::from(workers.max(1));
    let rows = rows_touched(w.entries, w.rows, w.cols);
    costliest_share(w.z, n, |z_w| {
        let t = element_terms(z_w, w.half, grad_a);
        t.vertex + rows * t.row + w.entries * t.entry + supervisor_share(t.supervisor, n)
    })
}

/// The terms of poplibs' vector GradW kernel for blocks (module notes): worker cycles per
/// vertex, per row of blocks, per kernel block and per batch column of a kernel block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GradWBlock {
    pub sub: u64,
    pub b: u64,
    pub vertex: u64,
    pub x: u64,
    pub y: u64,
    pub per_z: u64,
}

/// poplibs' `sparseDenseBlockMultiplyGradW` terms (f32 partials): for 8 × 8 blocks its row and
/// column loops, `y = 8 + 8 · (5 + 2 · 10)` and `per_z = 8 · 2 · 3` (f32), `y = 9 + 8 · 13` and
/// `per_z = 8 · 3` (f16).
pub const fn grad_w_block_terms(block: u64, half: bool) -> GradWBlock {
    let (sub, b, vertex, x, y, per_z) = match (block, half) {
        (4, false) => (1, 4, 27, 9, 45, 12),
        (4, true) => (1, 4, 26, 9, 33, 6),
        (8, false) => (1, 8, 24, 7, 8 + 8 * (5 + 2 * 10), 8 * 2 * 3),
        (8, true) => (1, 8, 26, 9, 9 + 8 * 13, 8 * 3),
        (_, true) => (1, 16, 27, 9, 505, 96),
        (_, false) => (4, 8, 24, 7, 8 + 8 * (5 + 2 * 10), 8 * 2 * 3),
    };
    GradWBlock {
        sub,
        b,
        vertex,
        x,
        y,
        per_z,
    }
}

/// Supervisor cycles of poplibs' GradW vertices: 37, 38 and the bucket's sub-group search, 26.
pub const GRAD_W_SUPERVISOR: u64 = 37 + 38 + 26;

/// poplibs' `sparseDenseGradWElementwiseMultiply` terms for `z` columns: worker cycles per
/// vertex, per row and per non-zero (a dot product of `z` products).
pub fn grad_w_element_terms(z: u64, half: bool) -> (u64, u64, u64) {
    let on = |c: bool, v: u64| if c { v } else { 0 };
    match (half, z) {
        (false, 4) => (28 + 2, 9, 5),
        (false, 2) => (28 + 4, 7, 4),
        (false, z) => (28 + 6, 9, 9 + z / 2 + on(z & 1 != 0, 1)),
        (true, 8) => (28 + 2, 11, 5),
        (true, 4) => (28 + 4, 10, 4),
        (true, z) => (
            28 + 7,
            8,
            11 + z / 4 + on(z & 2 != 0, 3) + on(z & 1 != 0, 4),
        ),
    }
}

/// The busiest context's worker cycles of a GradW vertex: its share of the entries,
/// `⌈entries / workers⌉`, over the whole batch.
pub fn grad_w_cycles(w: Work, workers: u32) -> u64 {
    let n = u64::from(workers.max(1));
    let mine = w.entries.div_ceil(n);
    let sup = supervisor_share(GRAD_W_SUPERVISOR, n);
    if w.block <= 1 {
        let (vertex, row, entry) = grad_w_element_terms(w.z, w.half);
        return vertex + rows_touched(mine, w.rows, w.cols) * row + mine * entry + sup;
    }
    let t = grad_w_block_terms(w.block, w.half);
    let (rb, cb) = (w.rows / w.block, w.cols / w.block);
    let kernel_rows = rows_touched(mine, rb, cb) * (w.block / t.b);
    t.vertex + kernel_rows * t.x + mine * t.sub * (t.y + w.z * t.per_z) + sup
}

/// The busiest context's worker cycles of a Fwd or GradA vertex (the output rows of GradA are
/// `W`'s columns).
pub fn dense_cycles(w: Work, grad_a: bool, workers: u32) -> u64 {
    let w = if grad_a {
        Work {
            rows: w.cols,
            cols: w.rows,
            ..w
        }
    } else {
        w
    };
    if w.block <= 1 {
        element(w, grad_a, workers)
    } else {
        amp_block(w, !grad_a, workers)
    }
}

/// The busiest context's worker cycles of a vertex of `pass`.
pub fn vertex_cycles(pass: Pass, w: Work, workers: u32) -> u64 {
    match pass {
        Pass::Fwd => dense_cycles(w, false, workers),
        Pass::GradA => dense_cycles(w, true, workers),
        Pass::GradW => grad_w_cycles(w, workers),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(entries: u64, rows: u64, cols: u64, z: u64, block: u64, half: bool) -> Work {
        Work {
            entries,
            rows,
            cols,
            z,
            block,
            half,
        }
    }

    #[test]
    fn rows_touched_is_the_uniform_expectation() {
        // 8 · (1 − 0.975^100) = 8 · 0.9205 = 7.36 → 8.
        assert_eq!(rows_touched(20, 8, 100), 8);
        // 100 · (1 − 0.999^100) = 100 · 0.0952 = 9.52 → 10.
        assert_eq!(rows_touched(10, 100, 100), 10);
        // 100 · (1 − 0.95^10) = 100 · 0.4013 = 40.13 → 41.
        assert_eq!(rows_touched(50, 100, 10), 41);
        assert_eq!(rows_touched(0, 4, 4), 0);
    }

    /// Hand-computed from poplibs' estimators (`lib/popsparse/PerformanceEstimation.hpp`): the
    /// tile cycles `supervisor + 6 × worker`, which the cycle model gives as `6 × share + 51`.
    #[test]
    fn the_costs_are_poplibs_estimators() {
        // sparseDenseBlockMultiply, 16 × 16 f16 blocks, f32 partials, 16 conv units (one
        // weight load), retainX, one bucket of one sub-group: 10 blocks in 4 block rows (64 ×
        // 64 partition: 4 · (1 − 0.375^4) = 3.92 → 4), batch 24 over 6 workers, numZ = 4.
        // Worker: 23 + 10 · (24 + 4 · 4 − 3) = 393. Supervisor: 40 + (46 + 56) + (10 · (256/4
        // + 3 + 12) + 4) + 2 = 938. Share: 393 + ⌈(938 − 51) / 6⌉ = 393 + 148 = 541.
        let w = work(10, 64, 64, 24, 16, true);
        assert_eq!(vertex_cycles(Pass::Fwd, w, 6), 541);
        assert!((6 * 541 + SUPERVISOR_CYCLES).abs_diff(6 * 393 + 938) < 6);
        // GradA (no retainX): worker 23 + 10 · (24 + 16) = 423, supervisor 938 − 4 = 934:
        // 423 + ⌈883 / 6⌉ = 423 + 148 = 571.
        assert_eq!(vertex_cycles(Pass::GradA, w, 6), 571);

        // f32 blocks of 16 run as four 8 × 8 (getBlockDimensionsToUse): 3 blocks = 12 kernel
        // blocks, in 2 · 2 = 4 rows of 8 (32 × 32 partition: 2 · (1 − 0.25²) = 1.88 → 2 rows
        // of 16); batch 12, numZ = 2. Worker: 23 + 12 · (22 + 2 · 8 − 3) = 443. Supervisor:
        // 144 + 12 · (64/2 + 15) + 4 = 712. Share: 443 + ⌈661 / 6⌉ = 443 + 111 = 554.
        assert_eq!(
            vertex_cycles(Pass::Fwd, work(3, 32, 32, 12, 16, false), 6),
            554
        );

        // sparseDenseElementwiseMultiply, f32, numZ = 5 (batch 30 over 6): worker overhead
        // 30, per row 13 + 12 + 8 + 3 = 36, per non-zero 3 · 1 + 2 = 5; 20 non-zeros in 8
        // rows (rows_touched above). Worker: 30 + 8 · 36 + 20 · 5 = 418; supervisor 30 + 47 +
        // 46 = 123: 418 + ⌈72 / 6⌉ = 430.
        assert_eq!(
            vertex_cycles(Pass::Fwd, work(20, 8, 100, 30, 1, false), 6),
            430
        );
        // f16, numZ = 8 (batch 48): overhead 28, per row 15, per non-zero 3; 30 non-zeros in
        // 10 rows (10 · (1 − 0.94^50) = 9.55 → 10). 28 + 150 + 90 + 12 = 280.
        assert_eq!(
            vertex_cycles(Pass::Fwd, work(30, 10, 50, 48, 1, true), 6),
            280
        );
        // Batch 43 over 6: shares of 8 and 7 columns. numZ = 7 is the costlier: overhead 33,
        // per row 12 + 13 + 11 = 36, per non-zero 2 + 2 · 3 = 8: 33 + 360 + 240 + 12 = 645.
        assert_eq!(
            vertex_cycles(Pass::Fwd, work(30, 10, 50, 43, 1, true), 6),
            645
        );

        // sparseDenseBlockMultiplyGradW, 4 × 4 f16, f32 partials: the busiest worker's 3 of
        // 13 blocks, in 3 rows (4 · (1 − 0.8125^4) = 2.26 → 3), numZ = 10. Worker: 26 + 3 · 9
        // + 3 · (33 + 10 · 6) = 332; supervisor 37 + 38 + 26 = 101: 332 + ⌈50 / 6⌉ = 341.
        assert_eq!(
            vertex_cycles(Pass::GradW, work(13, 16, 16, 10, 4, true), 6),
            341
        );
    }

    /// A 16 × 16 f16 block is one AMP pass of 16 input and 16 output channels: each block
    /// costs about what `poplin`'s pass does for the same rows (36 + 4 a row; here 21 + 4 a
    /// row and (64 + 15) / 6 of the supervisor's).
    #[test]
    fn a_16_by_16_f16_block_costs_an_amp_pass() {
        for z in [6, 48, 600] {
            let w = |n| vertex_cycles(Pass::Fwd, work(n, 4096, 4096, z, 16, true), 6);
            let per_block = (w(106) - w(100)) as f64 / 6.0;
            let a = amp(MACS_PER_CYCLE_F16);
            let pass =
                poplin::codelets::amp_cycles(z, 1, 16, a, 6) - poplin::codelets::AMP_FIXED_CYCLES;
            assert!(
                (per_block - pass as f64).abs() < 3.0,
                "{z}: {per_block} vs {pass}"
            );
        }
    }
}
