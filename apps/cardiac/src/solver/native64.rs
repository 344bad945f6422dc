//! The double-precision baseline: the same scheme in f64 (the paper's CPU baseline computed in
//! double precision), to measure what the chip's f32 arithmetic — with or without subnormal
//! flushing — changes in a simulation.
//!
//! The same mesh, operator, time steps, stimulus and activation rule as the f32 solvers, in f64
//! throughout: `L` as assembled (f64, not rounded to f32), each of the `p` diffusion steps
//! `v ← v + Δt_pde · L v`, then the reaction with [`tp06::step_cell_f64`] (the f64 reference
//! of the TP06 model, the standard library's `exp`/`ln`), then the activation update. It is
//! not bit-comparable with the f32 solvers by design; [`compare`](super::precision::compare)
//! measures how far they are.

use rayon::prelude::*;

use super::{Setup, SetupError, Stimulus};
use crate::matrix::{assemble_operator, Conductivity, Operator};
use crate::mesh::TetMesh;
use crate::tp06;

/// State of an f64 run.
pub struct NativeF64 {
    op: Operator,
    dt: f64,
    dt_pde: f64,
    pde_steps: usize,
    states: Vec<[f64; tp06::N_STATES]>,
    /// The set-up's cell models in f64, and each cell's index into them.
    models: Vec<tp06::CellParams<f64>>,
    cell_model: Vec<u8>,
    /// Stimulus current (pA/pF) of each cell while the stimulus is on.
    stim: Vec<f64>,
    stim_start: f64,
    stim_duration: f64,
    v: Vec<f64>,
    /// `v` at the start of the step (before diffusion): the activation rule's `v_old`, as in
    /// the f32 solvers.
    v_prev: Vec<f64>,
    lv: Vec<f64>,
    act: Vec<f64>,
    t: f64,
    steps: u64,
}

impl NativeF64 {
    /// The f64 baseline of the problem `setup` was built from (the same mesh, conductivity and
    /// stimulus).
    pub fn new(
        mesh: &TetMesh,
        cond: &Conductivity,
        stim: &Stimulus,
        setup: &Setup,
    ) -> Result<NativeF64, SetupError> {
        let op = assemble_operator(mesh, cond)?;
        let n = setup.n;
        let states: Vec<[f64; tp06::N_STATES]> = (0..n)
            .map(|i| tp06::initial_state(setup.cell_type(i)))
            .collect();
        let models = setup
            .models
            .iter()
            .map(tp06::CellParams::<f64>::from_model)
            .collect();
        let amp = -(stim.density / (cond.chi * cond.cm));
        let mut stim_current = vec![0.0; n];
        for &c in &stim.cells {
            stim_current[c as usize] = amp;
        }
        let v: Vec<f64> = states.iter().map(|s| s[tp06::V]).collect();
        Ok(NativeF64 {
            op,
            dt: f64::from(setup.dt_ode),
            dt_pde: setup.dt_pde,
            pde_steps: setup.pde_steps,
            states,
            models,
            cell_model: setup.cell_model.clone(),
            stim: stim_current,
            stim_start: stim.start,
            stim_duration: stim.duration,
            lv: vec![0.0; n],
            v_prev: v.clone(),
            v,
            act: vec![-1.0; n],
            t: 0.0,
            steps: 0,
        })
    }

    /// One ODE step with its `p` diffusion steps.
    pub fn step(&mut self) {
        self.v_prev.copy_from_slice(&self.v);
        for _ in 0..self.pde_steps {
            self.op.apply_f64(&self.v, &mut self.lv);
            let dt = self.dt_pde;
            self.v
                .par_iter_mut()
                .zip(&self.lv)
                .for_each(|(v, &lv)| *v += dt * lv);
        }
        let (t, dt) = (self.t, self.dt);
        // Decided at the step's midpoint, as `solver::stim_time` does for the f32 solvers.
        let tm = t + 0.5 * dt;
        let on = tm >= self.stim_start && tm < self.stim_start + self.stim_duration;
        let stim = &self.stim;
        let (models, cell_model) = (&self.models, &self.cell_model);
        let v_prev = &self.v_prev;
        self.states
            .par_iter_mut()
            .zip(self.v.par_iter_mut())
            .zip(self.act.par_iter_mut())
            .enumerate()
            .for_each(|(i, ((s, v), act))| {
                s[tp06::V] = *v;
                let i_stim = if on { stim[i] } else { 0.0 };
                tp06::step_cell_f64_with(s, &models[usize::from(cell_model[i])], i_stim, dt);
                let (v0, v1) = (v_prev[i], s[tp06::V]);
                if *act < 0.0 && v0 < 0.0 && v1 >= 0.0 {
                    *act = t + dt * (-v0 / (v1 - v0));
                }
                *v = v1;
            });
        self.steps += 1;
        self.t = self.steps as f64 * dt;
    }

    pub fn voltage(&self) -> &[f64] {
        &self.v
    }

    /// Activation times (ms); negative where a cell has not activated.
    pub fn activation(&self) -> &[f64] {
        &self.act
    }

    pub fn time(&self) -> f64 {
        self.t
    }
}

/// How far an f32 run is from the f64 baseline.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Difference {
    /// Largest `|v32 − v64|` (mV) over all cells and all compared times.
    pub max_v: f64,
    /// The time (ms) and cell where it occurred.
    pub max_v_at: (f64, usize),
    /// Largest `|act32 − act64|` (ms) over the cells both activated.
    pub max_activation: f64,
    /// Cells activated in one run and not in the other.
    pub activation_mismatches: usize,
}

impl Difference {
    /// Folds in the voltages at time `t`.
    pub fn voltages(&mut self, t: f64, v32: &[f32], v64: &[f64]) {
        for (i, (&a, &b)) in v32.iter().zip(v64).enumerate() {
            let d = (f64::from(a) - b).abs();
            // NaN on either side is the largest difference there is.
            if d > self.max_v || d.is_nan() {
                self.max_v = if d.is_nan() { f64::INFINITY } else { d };
                self.max_v_at = (t, i);
            }
        }
    }

    /// Sets the activation figures.
    pub fn activations(&mut self, a32: &[f32], a64: &[f64]) {
        for (&a, &b) in a32.iter().zip(a64) {
            match (a >= 0.0, b >= 0.0) {
                (true, true) => {
                    self.max_activation = self.max_activation.max((f64::from(a) - b).abs())
                }
                (false, false) => {}
                _ => self.activation_mismatches += 1,
            }
        }
    }
}
