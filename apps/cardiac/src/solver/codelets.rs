//! The app's codelets: ELLPACK SpMV over a tile's halo-extended local vector, and the TP06 step
//! with the activation-time update over a tile's cells.

use poplar::codelet::*;

use crate::matrix::{ell_rows, ColIndex, ELL_WIDTH};
use crate::tp06;

/// The ELLPACK SpMV codelets, one per column-index width: `cardiac::EllSpmv` (u32) and
/// `cardiac::EllSpmv16` (u16, chosen by the app when the local vector is at most 65,536 long).
macro_rules! ell_spmv_codelets {
    ($($name:ident as $cname:literal: $idx:ty;)*) => {$(
        poplar::codelet! {
            /// `y = D∘x[..n] + Σ_s A[·,s] x[I[·,s]]` over the tile's rows (`n = y.len()`); `x`
            /// is the local vector `[own cells | halo]`, `I` indexes into it.
            pub struct $name as $cname {
                x: Input<Vector<f32>>,
                y: Output<Vector<f32>>,
                diag: Input<Vector<f32>>,
                values: Input<Vector<f32>>,
                cols: Input<Vector<$idx>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
                spmv(self.x, self.y, self.diag, self.values, self.cols)
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                // Per row: 17 multiply-adds with an indexed load each, ~2 cycles per slot on
                // one worker.
                Some(30 + ctx.elements(1) * (2 * (ELL_WIDTH as u64 + 1) + 4))
            }
        }
    )*};
}

ell_spmv_codelets! {
    EllSpmv as "cardiac::EllSpmv": u32;
    EllSpmv16 as "cardiac::EllSpmv16": u16;
}

/// The body of both SpMV codelets.
fn spmv<C: ColIndex>(
    x: &[f32],
    y: &mut [f32],
    diag: &[f32],
    values: &[f32],
    cols: &[C],
) -> Result<(), VertexError> {
    let n = y.len();
    if diag.len() != n
        || values.len() != n * ELL_WIDTH
        || cols.len() != n * ELL_WIDTH
        || x.len() < n
    {
        return Err(VertexError::new(format!(
            "field sizes disagree: y {n}, diag {}, values {}, cols {}, x {}",
            diag.len(),
            values.len(),
            cols.len(),
            x.len()
        )));
    }
    // Column indices are not scanned here (that pass cost as much as the product): an index
    // outside the local vector panics in the bounds-checked load, which the engine reports as a
    // failure of this vertex. `partition::localize` produces only valid indices.
    // Host-side only: the local vector was just written by the exchange for every tile and has
    // left this core's caches; touching one element per cache line first lets the prefetcher
    // stream it in, instead of paying a miss on each random `x[col]` below (measured 5.7 -> 4.1
    // ms per SpMV on the 0.2 mm slab). No effect on results or on the modelled cycles.
    let mut warm = 0.0f32;
    for v in x.iter().step_by(16) {
        warm += v;
    }
    std::hint::black_box(warm);
    ell_rows(y, diag, values, cols, x, 0);
    Ok(())
}

poplar::codelet! {
    /// One TP06 step of the tile's cells (states state-major: `s[k * n + i]`), then the
    /// activation check against `v_prev`, then `time += dt`.
    pub struct Tp06Step as "cardiac::Tp06Step" {
        s: InOut<Vector<f32>>,
        v_prev: InOut<Vector<f32>>,
        act: InOut<Vector<f32>>,
        cell_type: Input<Vector<u8>>,
        stim: Input<Vector<f32>>,
        time: InOut<f32>,
        dt: State<f32>,
        stim_start: State<f32>,
        stim_duration: State<f32>,
    }
}

impl Vertex for Tp06Step<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        let n = self.v_prev.len();
        if self.s.len() != tp06::N_STATES * n
            || self.act.len() != n
            || self.cell_type.len() != n
            || self.stim.len() != n
        {
            return Err(VertexError::new(format!(
                "field sizes disagree: {n} cells, s {}, act {}, cell_type {}, stim {}",
                self.s.len(),
                self.act.len(),
                self.cell_type.len(),
                self.stim.len()
            )));
        }
        let t = *self.time;
        let scale = super::stim_scale(t, self.stim_start, self.stim_duration);
        tp06::step_batch(self.s, n, self.cell_type, self.stim, scale, self.dt);
        let v = &self.s[..n];
        tp06::update_activation(self.v_prev, v, t, self.dt, self.act);
        self.v_prev.copy_from_slice(v);
        *self.time = t + self.dt;
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        // Measured-style estimate: ~400 cycles per cell per step on one worker (19 states,
        // ~12 exponentials), plus overhead.
        Some(100 + ctx.elements(1) * 400)
    }
}

/// Keeps this module's registrations linked.
pub fn link() {}
