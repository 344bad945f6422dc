//! The monodomain solver: the set-up shared by both implementations, the native reference over
//! global arrays ([`native`]) and the solver on the poplar framework ([`device`]).
//!
//! Operator splitting per ODE step of `dt_ode`: `p` explicit diffusion steps `v ← Z v` with
//! `dt_pde = dt_ode / p`, then one TP06 step of every cell (forward Euler, Rush–Larsen on m) with
//! the stimulus current applied while `t ∈ [stim_start, stim_start + stim_duration)`, then the
//! activation check: the first upward crossing of 0 mV between the previous check and now,
//! interpolated linearly in time. Both implementations do exactly these f32 operations in the same
//! order per cell and per matrix row, so they agree bit for bit.

pub mod codelets;
pub mod device;
pub mod native;
pub mod native64;
pub mod precision;

use crate::matrix::{assemble_operator, Conductivity, Ellpack, MatrixError};
use crate::mesh::{CellType, TetMesh};
use crate::tp06;

/// Everything both solvers need, in the mesh's own cell numbering.
#[derive(Debug, Clone)]
pub struct Setup {
    pub n: usize,
    /// `Z = I + dt_pde·L` in ELLPACK form.
    pub ell: Ellpack,
    pub dt_ode: f32,
    /// Diffusion steps per ODE step.
    pub pde_steps: usize,
    pub dt_pde: f64,
    /// Largest stable `dt_pde` of the assembled operator (ms).
    pub dt_stable: f64,
    pub cell_types: Vec<u8>,
    /// Stimulus current per cell while the stimulus is on (TP06 units, pA/pF; negative
    /// depolarises); 0 outside the stimulus region.
    pub stim_current: Vec<f32>,
    pub stim_start: f32,
    pub stim_duration: f32,
    /// Pacing: a pulse every `stim_period` ms (0: one pulse), `stim_count` pulses in all.
    pub stim_period: f32,
    pub stim_count: f32,
    /// Repolarisation level (mV): the downward crossing that ends an action potential.
    pub repol_level: f32,
    /// Face neighbours per cell (for partitioning).
    pub adjacency: Vec<[u32; 4]>,
    /// Cell centroids (mm).
    pub centroids: Vec<[f64; 3]>,
}

/// Stimulus definition.
#[derive(Debug, Clone)]
pub struct Stimulus {
    /// Cells stimulated.
    pub cells: Vec<u32>,
    /// Current density (µA/mm³) injected while on.
    pub density: f64,
    pub start: f64,
    pub duration: f64,
    /// Pacing cycle length (ms); 0 for a single pulse.
    pub period: f64,
    /// Pulses delivered (beats); at least 1.
    pub count: u32,
}

/// Default repolarisation level (mV): TP06 rests near −86 mV and peaks near +40 mV, so −70 mV
/// is about 87 % repolarisation (openCARP's usual threshold for repolarisation times).
pub const REPOL_LEVEL_MV: f64 = -70.0;

impl Stimulus {
    /// The Niederer benchmark's stimulus protocol (50 µA/mm³ for 2 ms from t = 0) on `cells`.
    pub fn protocol(cells: Vec<u32>) -> Stimulus {
        Stimulus {
            cells,
            density: NIEDERER_STIM_DENSITY,
            start: 0.0,
            duration: NIEDERER_STIM_DURATION,
            period: 0.0,
            count: 1,
        }
    }

    /// The Niederer benchmark's stimulus: the protocol on the cells whose centroids lie in the
    /// corner cube [0, 1.5]³ mm of the slab.
    pub fn niederer(mesh: &crate::mesh::TetMesh) -> Stimulus {
        Stimulus::protocol(mesh.cells_in_box([0.0; 3], NIEDERER_STIM_CUBE))
    }
}

/// Stimulus current density of the Niederer benchmark (µA/mm³).
pub const NIEDERER_STIM_DENSITY: f64 = 50.0;
/// Stimulus duration of the Niederer benchmark (ms).
pub const NIEDERER_STIM_DURATION: f64 = 2.0;
/// Far corner of the Niederer stimulus cube (mm); the near corner is the origin.
pub const NIEDERER_STIM_CUBE: [f64; 3] = [1.5; 3];

/// Errors of the set-up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Matrix(#[from] MatrixError),
    #[error("dt_ode {0} ms must be positive and finite")]
    BadDt(f64),
    #[error("stimulus cell {cell} is out of range (mesh has {n} cells)")]
    BadStimulusCell { cell: u32, n: usize },
}

impl Setup {
    /// Assembles the operator and chooses `p` so that `dt_ode / p` is stable.
    pub fn new(
        mesh: &TetMesh,
        cond: &Conductivity,
        dt_ode: f64,
        stim: &Stimulus,
    ) -> Result<Setup, SetupError> {
        if !(dt_ode > 0.0 && dt_ode.is_finite()) {
            return Err(SetupError::BadDt(dt_ode));
        }
        let op = assemble_operator(mesh, cond)?;
        let dt_stable = op.stable_dt();
        let pde_steps = (dt_ode / dt_stable).ceil().max(1.0) as usize;
        let dt_pde = dt_ode / pde_steps as f64;
        let ell = op.to_ellpack(dt_pde);
        let n = mesh.num_cells();
        let cell_types = match &mesh.cell_types {
            Some(ct) => ct.iter().map(|&c| c as u8).collect(),
            None => vec![CellType::Epi as u8; n],
        };
        // Current density over membrane capacitance per volume: I / (χ Cm), in µA/µF = pA/pF.
        let amp = -(stim.density / (cond.chi * cond.cm)) as f32;
        let mut stim_current = vec![0.0f32; n];
        for &c in &stim.cells {
            *stim_current
                .get_mut(c as usize)
                .ok_or(SetupError::BadStimulusCell { cell: c, n })? = amp;
        }
        Ok(Setup {
            n,
            ell,
            dt_ode: dt_ode as f32,
            pde_steps,
            dt_pde,
            dt_stable,
            cell_types,
            stim_current,
            stim_start: stim.start as f32,
            stim_duration: stim.duration as f32,
            stim_period: stim.period as f32,
            stim_count: stim.count.max(1) as f32,
            repol_level: REPOL_LEVEL_MV as f32,
            adjacency: mesh.face_neighbours(),
            centroids: (0..n).map(|t| mesh.centroid(t)).collect(),
        })
    }

    /// Initial TP06 states of every cell, state-major (`[k * n + i]`).
    pub fn initial_states(&self) -> Vec<f32> {
        let mut s = vec![0.0f32; tp06::N_STATES * self.n];
        for (i, &ct) in self.cell_types.iter().enumerate() {
            let init =
                tp06::initial_state(CellType::from_value(f64::from(ct)).unwrap_or(CellType::Epi));
            for (k, &x) in init.iter().enumerate() {
                s[k * self.n + i] = x as f32;
            }
        }
        s
    }

    /// The cell whose centroid is nearest to `p`.
    pub fn nearest_cell(&self, p: [f64; 3]) -> usize {
        let d2 = |c: &[f64; 3]| (0..3).map(|k| (c[k] - p[k]).powi(2)).sum::<f64>();
        (0..self.n)
            .min_by(|&a, &b| d2(&self.centroids[a]).total_cmp(&d2(&self.centroids[b])))
            .unwrap_or(0)
    }
}

/// The time after the ODE step that starts at `t`: `(k + 1)·dt` with `k = round(t / dt)`, the
/// steps taken so far. Computed from the step count rather than summed (`t + dt`), so that
/// the f32 clock does not drift: summing 0.05 ms 129,500 times in f32 ends 6.5 ms early,
/// and pulses of a long paced run would drift with it. `k` is recovered exactly while
/// `k · 2^-24 < 0.5`, beyond 10^6 steps.
pub fn next_time(t: f32, dt: f32) -> f32 {
    ((t / dt).round() + 1.0) * dt
}

/// The time at which the stimulus of the ODE step that starts at `t` is decided: the step's
/// midpoint. Window edges are whole multiples of `dt` in practice, and `k·dt` rounded to f32
/// (or to f64) may land on either side of an edge; the midpoint is half a step from every
/// edge, so a pulse of `duration` ms is on for exactly `round(duration / dt)` steps in the
/// f32 solvers and the f64 baseline alike.
pub fn stim_time(t: f32, dt: f32) -> f32 {
    t + 0.5 * dt
}

/// The stimulus of a pacing protocol at time `t` (a step's [`stim_time`]): 1 while one of the
/// `count` pulses of `duration` ms, every `period` ms from `start`, is on, else 0. With
/// `period <= 0` it is [`stim_scale`] (one pulse), bit for bit.
pub fn stim_scale_paced(t: f32, start: f32, duration: f32, period: f32, count: f32) -> f32 {
    if period <= 0.0 {
        return stim_scale(t, start, duration);
    }
    if t < start {
        return 0.0;
    }
    let beat = ((t - start) / period).floor();
    let within = t - (start + beat * period);
    if beat < count && within < duration {
        1.0
    } else {
        0.0
    }
}

/// The stimulus at time `t` (a step's [`stim_time`]): 1 while on, else 0.
pub fn stim_scale(t: f32, start: f32, duration: f32) -> f32 {
    if t >= start && t < start + duration {
        1.0
    } else {
        0.0
    }
}

/// Results of a run, in the mesh's cell numbering.
#[derive(Debug, Clone, PartialEq)]
pub struct Results {
    /// Activation time (ms) per cell; negative if the cell never activated.
    pub activation: Vec<f32>,
    /// Membrane potential at the end (mV).
    pub v: Vec<f32>,
    /// Simulated time reached (ms).
    pub t: f32,
}
