//! The app's codelets: ELLPACK SpMV over a tile's halo-extended local vector, and the TP06 step
//! with the activation-time update over a tile's cells.

use poplar::codelet::*;

use super::native::ell_row;
use crate::matrix::ELL_WIDTH;
use crate::tp06;

poplar::codelet! {
    /// `y = D∘x[..n] + Σ_s A[·,s] x[I[·,s]]` over the tile's rows (`n = y.len()`); `x` is the
    /// local vector `[own cells | halo]`, `I` indexes into it.
    pub struct EllSpmv as "cardiac::EllSpmv" {
        x: Input<Vector<f32>>,
        y: Output<Vector<f32>>,
        diag: Input<Vector<f32>>,
        values: Input<Vector<f32>>,
        cols: Input<Vector<u32>>,
    }
}

impl Vertex for EllSpmv<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        let n = self.y.len();
        if self.diag.len() != n
            || self.values.len() != n * ELL_WIDTH
            || self.cols.len() != n * ELL_WIDTH
            || self.x.len() < n
        {
            return Err(VertexError::new(format!(
                "field sizes disagree: y {n}, diag {}, values {}, cols {}, x {}",
                self.diag.len(),
                self.values.len(),
                self.cols.len(),
                self.x.len()
            )));
        }
        if let Some(&c) = self.cols.iter().find(|&&c| c as usize >= self.x.len()) {
            return Err(VertexError::new(format!(
                "column index {c} outside the local vector of {}",
                self.x.len()
            )));
        }
        for (i, y) in self.y.iter_mut().enumerate() {
            let s = i * ELL_WIDTH..(i + 1) * ELL_WIDTH;
            *y = ell_row(
                self.diag[i],
                self.x[i],
                &self.values[s.clone()],
                &self.cols[s],
                self.x,
            );
        }
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        // Per row: 17 multiply-adds with an indexed load each, ~2 cycles per slot on one worker.
        Some(30 + ctx.elements(1) * (2 * (ELL_WIDTH as u64 + 1) + 4))
    }
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
