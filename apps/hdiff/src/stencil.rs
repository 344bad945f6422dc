//! The stencil's arithmetic, shared by the codelets and the native loop.
//!
//! The four stages are written once, as row functions over slices ([`lap_row`], [`flx_row`],
//! [`fly_row`], [`out_row`]), in the gridtools reference's order of operations:
//!
//! ```text
//! lap(i,j) = 4·in(i,j) − (((in(i+1,j) + in(i−1,j)) + in(i,j+1)) + in(i,j−1))
//! flx(i,j) = lap(i+1,j) − lap(i,j);   0 if flx·(in(i+1,j) − in(i,j)) > 0
//! fly(i,j) = lap(i,j+1) − lap(i,j);   0 if fly·(in(i,j+1) − in(i,j)) > 0
//! out(i,j) = in(i,j) − coeff(i,j)·(((flx(i,j) − flx(i−1,j)) + fly(i,j)) − fly(i,j−1))
//! ```
//!
//! Every mapping computes each value with these functions, each product and sum a separate f32
//! operation (Rust never fuses them), so every mapping, the native loop and the point-wise
//! oracle of [`crate::reference`] give the same bits. The limiter's tie (`flx·Δin == 0`) keeps
//! the flux, as gridtools does (`> 0`); SPARTA's kernels use `>=` in places.
//!
//! The block kernels ([`fused`], [`lap_block`], [`flux_out`], [`flx_block`], [`fly_out`]) are
//! compiled for every instruction-set level and run at the host's (`poplar::isa_dispatch!`;
//! the same bits at each, by the rule above). They work
//! on a *window*: a rectangle of output points of one plane, given by [`Plane`] views whose
//! `origin` is the window's point `(0, 0)`; they read and write only inside the window and the
//! halo their stage needs.

use std::cell::RefCell;

use poplar::profile::model::schedule_vertices;

/// Floating-point operations per output point, as every GFLOP/s figure counts them: the
/// Laplacian 5 (a multiply and four adds), each flux 4 (two subtracts, the limiter's multiply
/// and its compare), the update 5 (three adds, a multiply, a subtract). The limiter's select is
/// not counted. The Laplacian at the edges of a block or worker window, computed twice, is not
/// counted either: this is the work of the stencil, not of a mapping.
pub const FLOPS_PER_POINT: u64 = 18;

/// Vector instructions per point of each stage in the cycle model (the flops, plus the
/// limiter's select in each flux), one per worker cycle, with the loads and stores co-issued
/// beside them. A count of the kernels' arithmetic, not a measurement; poplibs' element-wise
/// estimators (`binaryOpInnerLoopCycles` in `popopsCycleEstimators.cpp`) charge a stand-alone
/// f32 operation its instruction plus about 2 cycles of loads, stores and loop per vector,
/// which a fused stencil keeping its intermediates in registers mostly avoids.
pub const LAP_OPS: u64 = 5;
pub const FLX_OPS: u64 = 5;
pub const FLY_OPS: u64 = 5;
pub const OUT_OPS: u64 = 5;
/// f32 lanes of one vector instruction (`codelets::cycles::vector_width(F32)`; poplibs'
/// `target.getVectorWidth(FLOAT)` is 2 as well).
pub const WIDTH: u64 = 2;
/// Worker cycles per output point when nothing is computed twice. The six contexts issue in
/// turn, one instruction per tile cycle between them, so this is also a tile's cycles per
/// point with every context busy: the stencil's compute bound per tile, 18 flops in 10
/// cycles (1.8 flops per tile cycle, against the 4 of the f32 vector peak: two lanes of
/// multiply-add).
pub const CYCLES_PER_POINT: f64 = (LAP_OPS + FLX_OPS + FLY_OPS + OUT_OPS) as f64 / WIDTH as f64;

/// A read-only view of one plane: element `(r, c)` of the window is
/// `data[origin + r * stride + c]`, for `r`, `c` possibly negative (the halo).
#[derive(Clone, Copy)]
pub struct Plane<'a> {
    pub data: &'a [f32],
    pub stride: usize,
    pub origin: usize,
}

impl<'a> Plane<'a> {
    /// `n` values of row `r` from column `c`.
    #[inline]
    pub fn row(&self, r: isize, c: isize, n: usize) -> &'a [f32] {
        let s = (self.origin as isize + r * self.stride as isize + c) as usize;
        &self.data[s..s + n]
    }
}

/// A writable view of one plane, indexed as [`Plane`].
pub struct PlaneMut<'a> {
    pub data: &'a mut [f32],
    pub stride: usize,
    pub origin: usize,
}

impl PlaneMut<'_> {
    /// `n` values of row `r` from column `c`.
    #[inline]
    pub fn row(&mut self, r: isize, c: isize, n: usize) -> &mut [f32] {
        let s = (self.origin as isize + r * self.stride as isize + c) as usize;
        &mut self.data[s..s + n]
    }
}

/// `lap` at `n` consecutive points of a row. `mid` holds that row from one column before the
/// first point to one after the last (`n + 2` values); `up` (row `j + 1`) and `down` (row
/// `j − 1`) hold the `n` points' columns.
#[inline]
pub fn lap_row(out: &mut [f32], mid: &[f32], up: &[f32], down: &[f32]) {
    let n = out.len();
    let (mid, up, down) = (&mid[..n + 2], &up[..n], &down[..n]);
    for c in 0..n {
        out[c] = 4.0 * mid[c + 1] - (((mid[c + 2] + mid[c]) + up[c]) + down[c]);
    }
}

/// The limiter: the flux, or zero where it runs up the gradient of `in`.
#[inline(always)]
pub fn limit(flux: f32, din: f32) -> f32 {
    if flux * din > 0.0 {
        0.0
    } else {
        flux
    }
}

/// `flx` at `n` consecutive points of a row: `lap` and `inp` hold `n + 1` values, from the
/// first point's column to one after the last.
#[inline]
pub fn flx_row(out: &mut [f32], lap: &[f32], inp: &[f32]) {
    let n = out.len();
    let (lap, inp) = (&lap[..n + 1], &inp[..n + 1]);
    for c in 0..n {
        out[c] = limit(lap[c + 1] - lap[c], inp[c + 1] - inp[c]);
    }
}

/// `fly` at `n` points of row `j`, from `lap` and `in` of rows `j` and `j + 1`.
#[inline]
pub fn fly_row(out: &mut [f32], lap: &[f32], lap_up: &[f32], inp: &[f32], inp_up: &[f32]) {
    let n = out.len();
    let (lap, lap_up, inp, inp_up) = (&lap[..n], &lap_up[..n], &inp[..n], &inp_up[..n]);
    for c in 0..n {
        out[c] = limit(lap_up[c] - lap[c], inp_up[c] - inp[c]);
    }
}

/// `out` at `n` points of row `j`: `flx` holds `n + 1` values from the column before the first
/// point; `fly` is row `j`'s and `fly_down` row `j − 1`'s.
#[inline]
pub fn out_row(
    out: &mut [f32],
    inp: &[f32],
    coeff: &[f32],
    flx: &[f32],
    fly: &[f32],
    fly_down: &[f32],
) {
    let n = out.len();
    let (inp, coeff, flx, fly, fly_down) = (
        &inp[..n],
        &coeff[..n],
        &flx[..n + 1],
        &fly[..n],
        &fly_down[..n],
    );
    for c in 0..n {
        out[c] = inp[c] - coeff[c] * (((flx[c + 1] - flx[c]) + fly[c]) - fly_down[c]);
    }
}

/// A rectangle of a window: rows `r0..r1`, columns `c0..c1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub r0: usize,
    pub r1: usize,
    pub c0: usize,
    pub c1: usize,
}

impl Rect {
    pub fn whole(rows: usize, cols: usize) -> Rect {
        Rect {
            r0: 0,
            r1: rows,
            c0: 0,
            c1: cols,
        }
    }
    pub fn rows(&self) -> usize {
        self.r1 - self.r0
    }
    pub fn cols(&self) -> usize {
        self.c1 - self.c0
    }
    pub fn is_empty(&self) -> bool {
        self.rows() == 0 || self.cols() == 0
    }
}

thread_local! {
    static SCRATCH: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with a zeroed-or-stale scratch buffer of at least `n` values of this thread.
#[inline(always)]
fn with_scratch<R>(n: usize, f: impl FnOnce(&mut [f32]) -> R) -> R {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < n {
            s.resize(n, 0.0);
        }
        f(&mut s[..n])
    })
}

poplar::isa_dispatch! {
/// The whole stencil on `rect` of a window: `inp` must reach two points beyond `rect` in both
/// directions, `coeff` and `out` cover `rect`. The Laplacian is kept for three rows, the fluxes
/// for one or two, so the kernel streams through `inp` once.
pub fn fused(inp: Plane, coeff: Plane, out: &mut PlaneMut, rect: Rect) {
    if rect.is_empty() {
        return;
    }
    let n = rect.cols();
    let c0 = rect.c0 as isize;
    // lap rows cover columns c0−1..=c1 (n + 2 values); fly rows c0..c1; flx c0−1..c1.
    with_scratch(3 * (n + 2) + 2 * n + (n + 1), |s| {
        let (lap_a, rest) = s.split_at_mut(n + 2);
        let (lap_b, rest) = rest.split_at_mut(n + 2);
        let (lap_c, rest) = rest.split_at_mut(n + 2);
        let (fly_a, rest) = rest.split_at_mut(n);
        let (fly_b, flx) = rest.split_at_mut(n);
        let lap_of = |dst: &mut [f32], r: isize| {
            lap_row(
                dst,
                inp.row(r, c0 - 2, n + 4),
                inp.row(r + 1, c0 - 1, n + 2),
                inp.row(r - 1, c0 - 1, n + 2),
            )
        };
        let r0 = rect.r0 as isize;
        let (mut lap_m, mut lap_0, mut lap_p) = (lap_a, lap_b, lap_c);
        let (mut fly_m, mut fly_0) = (fly_a, fly_b);
        lap_of(lap_m, r0 - 1);
        lap_of(lap_0, r0);
        fly_row(
            fly_m,
            &lap_m[1..],
            &lap_0[1..],
            inp.row(r0 - 1, c0, n),
            inp.row(r0, c0, n),
        );
        for r in r0..rect.r1 as isize {
            lap_of(lap_p, r + 1);
            flx_row(flx, lap_0, inp.row(r, c0 - 1, n + 2));
            fly_row(
                fly_0,
                &lap_0[1..],
                &lap_p[1..],
                inp.row(r, c0, n),
                inp.row(r + 1, c0, n),
            );
            out_row(
                out.row(r, c0, n),
                inp.row(r, c0, n),
                coeff.row(r, c0, n),
                flx,
                fly_0,
                fly_m,
            );
            std::mem::swap(&mut lap_m, &mut lap_0);
            std::mem::swap(&mut lap_0, &mut lap_p);
            std::mem::swap(&mut fly_m, &mut fly_0);
        }
    });
}
}

poplar::isa_dispatch! {
/// The Laplacian stage: `lap` at the points of `rect`, a rectangle of the *Laplacian block*
/// (the window grown by one point on each side, so its row and column 0 are the window's −1).
/// `inp` is indexed in window coordinates; `lap` in Laplacian-block coordinates.
pub fn lap_block(inp: Plane, lap: &mut PlaneMut, rect: Rect) {
    let n = rect.cols();
    if rect.is_empty() {
        return;
    }
    for rb in rect.r0..rect.r1 {
        let r = rb as isize - 1;
        let c = rect.c0 as isize - 1;
        lap_row(
            lap.row(rb as isize, rect.c0 as isize, n),
            inp.row(r, c - 1, n + 2),
            inp.row(r + 1, c, n),
            inp.row(r - 1, c, n),
        );
    }
}
}

poplar::isa_dispatch! {
/// The flux-and-update stage of the dual-stage mapping on `rect` of the window: `lap` is the
/// Laplacian block (window coordinates, reaching one point beyond the window), `inp` reaches
/// one point beyond the window.
pub fn flux_out(inp: Plane, lap: Plane, coeff: Plane, out: &mut PlaneMut, rect: Rect) {
    if rect.is_empty() {
        return;
    }
    let n = rect.cols();
    let c0 = rect.c0 as isize;
    with_scratch(3 * n + 1, |s| {
        let (fly_a, rest) = s.split_at_mut(n);
        let (fly_b, flx) = rest.split_at_mut(n);
        let r0 = rect.r0 as isize;
        let (mut fly_m, mut fly_0) = (fly_a, fly_b);
        fly_row(
            fly_m,
            lap.row(r0 - 1, c0, n),
            lap.row(r0, c0, n),
            inp.row(r0 - 1, c0, n),
            inp.row(r0, c0, n),
        );
        for r in r0..rect.r1 as isize {
            flx_row(flx, lap.row(r, c0 - 1, n + 2), inp.row(r, c0 - 1, n + 2));
            fly_row(
                fly_0,
                lap.row(r, c0, n),
                lap.row(r + 1, c0, n),
                inp.row(r, c0, n),
                inp.row(r + 1, c0, n),
            );
            out_row(
                out.row(r, c0, n),
                inp.row(r, c0, n),
                coeff.row(r, c0, n),
                flx,
                fly_0,
                fly_m,
            );
            std::mem::swap(&mut fly_m, &mut fly_0);
        }
    });
}
}

poplar::isa_dispatch! {
/// The flux-x stage of the tri-stage mapping: `flx` at the points of `rect`, a rectangle of
/// the *flux-x block* (the window's rows, its columns −1..cols−1, so column 0 is the window's
/// −1).
/// `lap` and `inp` in window coordinates; `flx` in flux-x-block coordinates.
pub fn flx_block(inp: Plane, lap: Plane, flx: &mut PlaneMut, rect: Rect) {
    let n = rect.cols();
    if rect.is_empty() {
        return;
    }
    for r in rect.r0 as isize..rect.r1 as isize {
        let c = rect.c0 as isize - 1;
        flx_row(
            flx.row(r, rect.c0 as isize, n),
            lap.row(r, c, n + 1),
            inp.row(r, c, n + 1),
        );
    }
}
}

poplar::isa_dispatch! {
/// The flux-y-and-update stage of the tri-stage mapping on `rect` of the window: `flx` is the
/// flux-x block in window coordinates (its origin at the window's column 0, reaching column
/// −1).
pub fn fly_out(inp: Plane, lap: Plane, flx: Plane, coeff: Plane, out: &mut PlaneMut, rect: Rect) {
    if rect.is_empty() {
        return;
    }
    let n = rect.cols();
    let c0 = rect.c0 as isize;
    with_scratch(2 * n, |s| {
        let (fly_a, fly_b) = s.split_at_mut(n);
        let r0 = rect.r0 as isize;
        let (mut fly_m, mut fly_0) = (fly_a, fly_b);
        fly_row(
            fly_m,
            lap.row(r0 - 1, c0, n),
            lap.row(r0, c0, n),
            inp.row(r0 - 1, c0, n),
            inp.row(r0, c0, n),
        );
        for r in r0..rect.r1 as isize {
            fly_row(
                fly_0,
                lap.row(r, c0, n),
                lap.row(r + 1, c0, n),
                inp.row(r, c0, n),
                inp.row(r + 1, c0, n),
            );
            out_row(
                out.row(r, c0, n),
                inp.row(r, c0, n),
                coeff.row(r, c0, n),
                flx.row(r, c0 - 1, n + 1),
                fly_0,
                fly_m,
            );
            std::mem::swap(&mut fly_m, &mut fly_0);
        }
    });
}
}

/// A stage of a mapping, for the cycle model and the worker split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Everything (single-stage).
    Fused,
    /// The Laplacian (dual and tri).
    Lap,
    /// Both fluxes and the update (dual).
    FluxOut,
    /// The flux in `i` (tri).
    Flx,
    /// The flux in `j` and the update (tri).
    FlyOut,
}

/// Fixed cost of a vertex and extra cost per row, as the standard library's
/// `codelets::cycles::{OVERHEAD, ROW_OVERHEAD}`.
pub const OVERHEAD: u64 = codelets::cycles::OVERHEAD;
pub const ROW_OVERHEAD: u64 = codelets::cycles::ROW_OVERHEAD;

impl Stage {
    /// Modelled cycles of one worker computing an `r × c` rectangle of this stage's block (what
    /// the kernels above do, counted in vector instructions of [`WIDTH`] lanes).
    pub fn cycles(self, r: usize, c: usize) -> u64 {
        if r == 0 || c == 0 {
            return 0;
        }
        let (r, c) = (r as u64, c as u64);
        let ops = match self {
            Stage::Fused => {
                LAP_OPS * (r + 2) * (c + 2)
                    + FLX_OPS * r * (c + 1)
                    + FLY_OPS * (r + 1) * c
                    + OUT_OPS * r * c
            }
            Stage::Lap => LAP_OPS * r * c,
            Stage::FluxOut => FLX_OPS * r * (c + 1) + FLY_OPS * (r + 1) * c + OUT_OPS * r * c,
            Stage::Flx => FLX_OPS * r * c,
            Stage::FlyOut => FLY_OPS * (r + 1) * c + OUT_OPS * r * c,
        };
        let rows = if self == Stage::Fused { r + 2 } else { r };
        OVERHEAD + rows * ROW_OVERHEAD + ops.div_ceil(WIDTH)
    }

    /// How `workers` contexts share a `rows × cols` block: `(wr, wc)` with `wr · wc ≤ workers`,
    /// chosen to minimise the largest worker's cycles (fewest row groups on ties).
    pub fn split(self, rows: usize, cols: usize, workers: u32) -> (usize, usize) {
        let w = workers.max(1) as usize;
        let mut best = (1, 1, u64::MAX);
        for wr in 1..=w {
            let wc = w / wr;
            let cost = self.cycles(rows.div_ceil(wr), cols.div_ceil(wc));
            if cost < best.2 {
                best = (wr, wc, cost);
            }
        }
        (best.0, best.1)
    }

    /// The rectangle of a `rows × cols` block that worker `id` of `workers` computes (empty for
    /// workers the split leaves idle).
    pub fn worker_rect(self, rows: usize, cols: usize, id: u32, workers: u32) -> Rect {
        let (wr, wc) = self.split(rows, cols, workers);
        let id = id as usize;
        if id >= wr * wc {
            return Rect::whole(0, 0);
        }
        let (ri, ci) = (id / wc, id % wc);
        Rect {
            r0: rows * ri / wr,
            r1: rows * (ri + 1) / wr,
            c0: cols * ci / wc,
            c1: cols * (ci + 1) / wc,
        }
    }

    /// Modelled worker cycles of a multi-worker vertex computing a `rows × cols` block: its
    /// slowest worker (the vertex's cycle estimate).
    pub fn vertex_cycles(self, rows: usize, cols: usize, workers: u32) -> u64 {
        (0..workers.max(1))
            .map(|w| {
                let r = self.worker_rect(rows, cols, w, workers);
                self.cycles(r.rows(), r.cols())
            })
            .max()
            .unwrap_or(0)
    }

    /// Modelled tile cycles of that vertex, by the cycle model's own rule
    /// (`poplar::profile::model::schedule_vertices`): the contexts issue in turn, so `workers`
    /// times the slowest worker, plus the supervisor's cycles.
    pub fn tile_cycles(self, rows: usize, cols: usize, workers: u32) -> u64 {
        let v = self.vertex_cycles(rows, cols, workers);
        schedule_vertices([(v, true)], workers).tile_cycles
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_rects_tile_the_block() {
        for stage in [
            Stage::Fused,
            Stage::Lap,
            Stage::FluxOut,
            Stage::Flx,
            Stage::FlyOut,
        ] {
            for (rows, cols) in [(1, 1), (3, 252), (11, 252), (40, 7), (64, 64), (2, 1)] {
                let mut seen = vec![0u8; rows * cols];
                for w in 0..6 {
                    let r = stage.worker_rect(rows, cols, w, 6);
                    for i in r.r0..r.r1 {
                        for j in r.c0..r.c1 {
                            seen[i * cols + j] += 1;
                        }
                    }
                }
                assert!(seen.iter().all(|&s| s == 1), "{stage:?} {rows}x{cols}");
            }
        }
    }

    #[test]
    fn splits_favour_the_long_side() {
        // 3 rows of 252: six column groups, not three row groups.
        assert_eq!(Stage::Fused.split(3, 252, 6), (1, 6));
        // 252 rows of 3: row groups.
        assert_eq!(Stage::Fused.split(252, 3, 6).0, 6);
    }
}
