//! The native reference: the same solver as plain Rust over global arrays, parallel with rayon.
//! It is the correctness oracle of the framework solver and its performance baseline.

use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::{class_currents, Results, Setup};
use crate::matrix::{ell_rows, ELL_WIDTH};
use crate::tp06;

/// Cells per rayon task.
const CHUNK: usize = 4096;

/// Wall time of one native ODE step, by part.
#[derive(Debug, Clone, Copy, Default)]
pub struct StepTimes {
    /// The `p` SpMVs and the voltage copies between them.
    pub pde: Duration,
    /// The TP06 step with the activation update.
    pub ode: Duration,
}

/// State of a native run.
pub struct NativeSolver<'a> {
    setup: &'a Setup,
    /// TP06 states, cell-major blocks of CHUNK cells each state-major (see `blocks`).
    states: Vec<f32>,
    /// The voltage gathered out of the state blocks: the SpMV's input vector.
    v_gather: Vec<f32>,
    v_tmp: Vec<f32>,
    v_prev: Vec<f32>,
    act: Vec<f32>,
    last_up: Vec<f32>,
    last_down: Vec<f32>,
    t: f32,
    /// Flush subnormals as the chip does (`poplar::fp`), in every rayon task.
    flush: bool,
    /// The stimulus and cell-model tables in the device's layout (`Setup::stim_tables`,
    /// `Setup::model_table`), and the class currents of the current step.
    stim_tables: (Vec<f32>, Vec<u32>, Vec<u8>),
    models: Vec<[f32; tp06::params::N_PARAMS]>,
    class_current: Vec<f32>,
}

/// Splits `0..n` into blocks of CHUNK cells; each block's states are stored state-major so the
/// TP06 kernel sees exactly the layout it sees on a tile.
fn blocks(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n.div_ceil(CHUNK)).map(move |b| (b * CHUNK, ((b + 1) * CHUNK).min(n)))
}

/// Copies the V row of every state block into `v` (length n).
fn gather_voltage(states: &[f32], v: &mut [f32]) {
    for (s, e) in blocks(v.len()) {
        v[s..e].copy_from_slice(&states[tp06::N_STATES * s..][..e - s]);
    }
}

impl<'a> NativeSolver<'a> {
    pub fn new(setup: &'a Setup) -> Self {
        let n = setup.n;
        let init = setup.initial_states();
        let mut states = vec![0.0f32; tp06::N_STATES * n];
        for (s, e) in blocks(n) {
            let m = e - s;
            for k in 0..tp06::N_STATES {
                states[tp06::N_STATES * s + k * m..][..m]
                    .copy_from_slice(&init[k * n + s..k * n + e]);
            }
        }
        let v0: Vec<f32> = init[..n].to_vec();
        NativeSolver {
            setup,
            states,
            v_gather: vec![0.0; n],
            v_tmp: vec![0.0; n],
            v_prev: v0,
            act: vec![-1.0; n],
            last_up: vec![-1.0; n],
            last_down: vec![-1.0; n],
            t: 0.0,
            flush: true,
            stim_tables: setup.stim_tables(),
            models: setup
                .models
                .iter()
                .map(|m| tp06::CellParams::<f32>::from_model(m).to_array())
                .collect(),
            class_current: vec![0.0; setup.classes.len()],
        }
    }

    /// Flush subnormals (`true`, the default: as the framework on the GC200 targets, so that the
    /// two agree bit for bit) or compute with IEEE arithmetic (`false`).
    pub fn with_flush(mut self, flush: bool) -> Self {
        self.flush = flush;
        self
    }

    /// Current membrane potential per cell.
    pub fn voltage(&self) -> Vec<f32> {
        let mut v = vec![0.0f32; self.setup.n];
        gather_voltage(&self.states, &mut v);
        v
    }

    fn spmv_into_states(&mut self) {
        // v_tmp -> V rows of the state blocks.
        let ell = &self.setup.ell;
        let x = &self.v_tmp;
        let n = self.setup.n;
        let flush = self.flush;
        self.states
            .par_chunks_mut(tp06::N_STATES * CHUNK)
            .enumerate()
            .for_each(|(b, blk)| {
                let _fp = poplar::fp::FlushGuard::new(flush);
                let s = b * CHUNK;
                let e = (s + CHUNK).min(n);
                ell_rows(
                    &mut blk[..e - s],
                    &ell.diag[s..e],
                    &ell.values[s * ELL_WIDTH..e * ELL_WIDTH],
                    &ell.cols[s * ELL_WIDTH..e * ELL_WIDTH],
                    x,
                    s,
                );
            });
    }

    fn spmv_from_states(&mut self, v: &[f32]) {
        let ell = &self.setup.ell;
        let flush = self.flush;
        self.v_tmp
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(b, out)| {
                let _fp = poplar::fp::FlushGuard::new(flush);
                let s = b * CHUNK;
                let e = s + out.len();
                ell_rows(
                    out,
                    &ell.diag[s..e],
                    &ell.values[s * ELL_WIDTH..e * ELL_WIDTH],
                    &ell.cols[s * ELL_WIDTH..e * ELL_WIDTH],
                    v,
                    s,
                );
            });
    }

    /// Advances one ODE step (with its `p` diffusion steps).
    pub fn step(&mut self) {
        self.step_timed();
    }

    /// [`Self::step`], returning the wall time of its diffusion and reaction parts (for the
    /// benchmark's phase breakdown; two clock reads per step).
    pub fn step_timed(&mut self) -> StepTimes {
        let start = Instant::now();
        let p = self.setup.pde_steps;
        // Ping-pong between the V rows of the states (A) and v_tmp (B), as on the device. The
        // SpMV over A reads a contiguous copy of the V rows (the device's counterpart is the
        // exchange that builds each tile's local vector).
        let mut v = std::mem::take(&mut self.v_gather);
        gather_voltage(&self.states, &mut v);
        for k in 0..p {
            if k % 2 == 0 {
                self.spmv_from_states(&v);
            } else {
                self.spmv_into_states();
                gather_voltage(&self.states, &mut v);
            }
        }
        self.v_gather = v;
        // Odd p: the last result is in v_tmp; each chunk of the reaction copies it into its V
        // row first (as `cardiac::Tp06StepFrom` does on a tile).
        let v_from = (p % 2 == 1).then_some(&self.v_tmp[..]);
        let pde = start.elapsed();
        let setup = self.setup;
        let (t, dt) = (self.t, setup.dt_ode);
        let (sites, starts, flat) = &self.stim_tables;
        class_currents(
            super::stim_time(t, dt),
            sites,
            starts,
            flat,
            &mut self.class_current,
        );
        let (models, class_current) = (&self.models[..], &self.class_current[..]);
        let n = setup.n;
        let flush = self.flush;
        self.states
            .par_chunks_mut(tp06::N_STATES * CHUNK)
            .zip(self.v_prev.par_chunks_mut(CHUNK))
            .zip(self.act.par_chunks_mut(CHUNK))
            .zip(self.last_up.par_chunks_mut(CHUNK))
            .zip(self.last_down.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(|(b, ((((blk, vp), act), up), down))| {
                let _fp = poplar::fp::FlushGuard::new(flush);
                let s = b * CHUNK;
                let e = (s + CHUNK).min(n);
                let m = e - s;
                if let Some(v) = v_from {
                    blk[..m].copy_from_slice(&v[s..e]);
                }
                let batch = tp06::Batch {
                    models,
                    model: &setup.cell_model[s..e],
                    stim: tp06::Stim::Classes {
                        class: &setup.stim_class[s..e],
                        current: class_current,
                    },
                    dt,
                };
                tp06::step_batch_of(&mut blk[..tp06::N_STATES * m], m, &batch, &mut |_| {});
                let th = setup.act_threshold;
                tp06::update_activation(vp, &blk[..m], t, dt, th, act);
                tp06::update_crossings(vp, &blk[..m], t, dt, th, setup.repol_level, up, down);
                vp.copy_from_slice(&blk[..m]);
            });
        self.t = super::next_time(t, dt);
        StepTimes {
            pde,
            ode: start.elapsed() - pde,
        }
    }

    pub fn time(&self) -> f32 {
        self.t
    }

    pub fn activation(&self) -> &[f32] {
        &self.act
    }

    /// The latest upstroke (0 mV upwards) and repolarisation (downwards through the set-up's
    /// level) of every cell, -1 before the first.
    pub fn last_crossings(&self) -> (&[f32], &[f32]) {
        (&self.last_up, &self.last_down)
    }

    pub fn results(&self) -> Results {
        Results {
            activation: self.act.clone(),
            v: self.voltage(),
            t: self.t,
        }
    }
}
