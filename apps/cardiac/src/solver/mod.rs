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
mod step_limit;

pub use step_limit::StepLimit;

use crate::matrix::{assemble_operator, Conductivity, Ellpack, MatrixError};
use crate::mesh::{CellType, TetMesh};
use crate::tp06;
use crate::tp06::CellModel;

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
    /// Which cells bound `dt_stable`, against the median cell.
    pub step_limit: StepLimit,
    /// The run's cell models (TP06 cell type and conductance scalings) and each cell's index
    /// into them. Without regions or scalings: the published endo, mid, epi models, indexed by
    /// `CellType as u8`.
    pub models: Vec<CellModel>,
    pub cell_model: Vec<u8>,
    /// The stimulus sites: each one's current (TP06 units, pA/pF; negative depolarises) and
    /// pulse schedule.
    pub sites: Vec<SiteSchedule>,
    /// Stimulus class per cell: 0 for no stimulus, else an index into `classes`.
    pub stim_class: Vec<u8>,
    /// The sites of each stimulus class (class 0: none), one class per distinct set of sites
    /// a cell belongs to.
    pub classes: Vec<Vec<u8>>,
    /// Activation threshold (mV): activation is the first upward crossing of it.
    pub act_threshold: f32,
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
    /// S1–S2: one more pulse this many ms after the last of the `count` pulses.
    pub s2: Option<f64>,
}

/// A stimulus site's current and pulses, in the solvers' f32.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SiteSchedule {
    /// Current while on (pA/pF; negative depolarises).
    pub current: f32,
    pub start: f32,
    pub duration: f32,
    /// A pulse every `period` ms (0: one pulse), `count` pulses in all.
    pub period: f32,
    pub count: f32,
    /// Start of the S2 pulse (ms); negative: none.
    pub s2_start: f32,
}

/// f32 values per site in the device's `sites` table: current, start, duration, period,
/// count, S2 start.
pub const SITE_FIELDS: usize = 6;

impl SiteSchedule {
    /// Whether the site is on at `t` (a step's [`stim_time`]).
    #[inline]
    pub fn on(&self, t: f32) -> bool {
        stim_scale_paced(t, self.start, self.duration, self.period, self.count) > 0.0
            || (self.s2_start >= 0.0 && t >= self.s2_start && t < self.s2_start + self.duration)
    }

    /// The site as [`SITE_FIELDS`] f32 (the device's table layout).
    pub fn to_fields(&self) -> [f32; SITE_FIELDS] {
        [
            self.current,
            self.start,
            self.duration,
            self.period,
            self.count,
            self.s2_start,
        ]
    }

    /// The inverse of [`SiteSchedule::to_fields`].
    pub fn from_fields(f: &[f32]) -> SiteSchedule {
        SiteSchedule {
            current: f[0],
            start: f[1],
            duration: f[2],
            period: f[3],
            count: f[4],
            s2_start: f[5],
        }
    }

    /// The pulse starts (ms) up to `t_end`, S2 included.
    pub fn pulse_starts(&self) -> Vec<f64> {
        let n = if self.period > 0.0 {
            self.count as usize
        } else {
            1
        };
        let mut v: Vec<f64> = (0..n)
            .map(|k| f64::from(self.start) + k as f64 * f64::from(self.period))
            .collect();
        if self.s2_start >= 0.0 {
            v.push(f64::from(self.s2_start));
        }
        v
    }
}

/// The stimulus current of every class at `t` (a step's [`stim_time`]): class `c` gets the sum
/// of the currents of its sites that are on, added in site order from 0 (class 0: 0). The
/// native solver and the TP06 codelet both call this, so they agree bit for bit.
/// `sites` is in [`SITE_FIELDS`] layout and `class_sites` lists each class's sites,
/// `class_sites[c]` delimited by `class_start[c]..class_start[c + 1]`.
pub fn class_currents(
    t: f32,
    sites: &[f32],
    class_start: &[u32],
    class_sites: &[u8],
    out: &mut [f32],
) {
    for (c, o) in out.iter_mut().enumerate() {
        let mut sum = 0.0f32;
        if c + 1 < class_start.len() {
            let (a, b) = (class_start[c] as usize, class_start[c + 1] as usize);
            for &s in class_sites.get(a..b).unwrap_or(&[]) {
                let f = sites.get(usize::from(s) * SITE_FIELDS..(usize::from(s) + 1) * SITE_FIELDS);
                if let Some(f) = f {
                    let site = SiteSchedule::from_fields(f);
                    if site.on(t) {
                        sum += site.current;
                    }
                }
            }
        }
        *o = sum;
    }
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
            s2: None,
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
    #[error("{what}: at most {max} are supported, this problem has {got}")]
    TooMany {
        what: &'static str,
        max: usize,
        got: usize,
    },
    #[error("cell model table: cell {cell} names model {model}, but there are {n} models")]
    BadModelIndex { cell: usize, model: u8, n: usize },
    #[error("stimulus site {site}: {what}")]
    BadSite { site: usize, what: String },
    /// The explicit diffusion would need more than [`MAX_PDE_STEPS`] substeps per ODE step
    /// (`substeps` is not finite when the stable step is zero or not a number).
    #[error(
        "the diffusion needs {substeps:e} substeps of at most {dt_stable:e} ms (its stable time \
         step) per ODE step of {dt_ode} ms; at most {max} are taken"
    )]
    TooManySubsteps {
        substeps: f64,
        dt_ode: f64,
        dt_stable: f64,
        max: usize,
    },
}

/// Most explicit diffusion substeps per ODE step. A tissue whose diffusion needs more is
/// thousands of times stiffer than the cell model's step (conductivities, χ or Cm in the wrong
/// units, typically): each ODE step would cost a thousand sparse matrix products, and a
/// saturated count (σ = 10^30 S/m: `u64::MAX`) would never end.
pub const MAX_PDE_STEPS: usize = 1000;

/// The cell models of a run: a table and each cell's index into it.
#[derive(Debug, Clone, PartialEq)]
pub struct CellModels {
    pub models: Vec<CellModel>,
    pub cell_model: Vec<u8>,
}

impl CellModels {
    /// The published model of each cell's type (the mesh's, or epi).
    pub fn published(mesh: &TetMesh) -> CellModels {
        let n = mesh.num_cells();
        CellModels {
            models: [CellType::Endo, CellType::Mid, CellType::Epi]
                .map(CellModel::published)
                .to_vec(),
            cell_model: match &mesh.cell_types {
                Some(ct) => ct.iter().map(|&c| c as u8).collect(),
                None => vec![CellType::Epi as u8; n],
            },
        }
    }
}

/// Optional parts of a set-up beyond the operator, the time step and the stimulus.
#[derive(Debug, Clone, Default)]
pub struct SetupOptions {
    /// More stimulus sites, each with its own timing.
    pub more_sites: Vec<Stimulus>,
    /// Cell models; `None`: [`CellModels::published`].
    pub models: Option<CellModels>,
    /// Activation threshold (mV); `None`: [`ACTIVATION_THRESHOLD_MV`].
    pub act_threshold: Option<f64>,
}

/// Default activation threshold (mV): the upward crossing of 0 mV.
pub const ACTIVATION_THRESHOLD_MV: f64 = 0.0;

/// Most stimulus sites of one run.
pub const MAX_SITES: usize = 32;

impl Setup {
    /// Assembles the operator and chooses `p` so that `dt_ode / p` is stable.
    pub fn new(
        mesh: &TetMesh,
        cond: &Conductivity,
        dt_ode: f64,
        stim: &Stimulus,
    ) -> Result<Setup, SetupError> {
        Setup::with_options(mesh, cond, dt_ode, stim, &SetupOptions::default())
    }

    /// [`Setup::new`] with more stimulus sites, cell models or another activation threshold.
    pub fn with_options(
        mesh: &TetMesh,
        cond: &Conductivity,
        dt_ode: f64,
        stim: &Stimulus,
        opts: &SetupOptions,
    ) -> Result<Setup, SetupError> {
        if !(dt_ode > 0.0 && dt_ode.is_finite()) {
            return Err(SetupError::BadDt(dt_ode));
        }
        let op = assemble_operator(mesh, cond)?;
        let dt_stable = op.stable_dt();
        let step_limit = StepLimit::of(&op.cell_stable_dt());
        // Not a number when the conductivities overflow the operator's coefficients.
        let substeps = (dt_ode / dt_stable).ceil();
        if !(dt_stable > 0.0 && substeps <= MAX_PDE_STEPS as f64) {
            return Err(SetupError::TooManySubsteps {
                substeps,
                dt_ode,
                dt_stable,
                max: MAX_PDE_STEPS,
            });
        }
        let pde_steps = substeps.max(1.0) as usize;
        let dt_pde = dt_ode / pde_steps as f64;
        let ell = op.to_ellpack(dt_pde);
        let n = mesh.num_cells();
        let CellModels { models, cell_model } = opts
            .models
            .clone()
            .unwrap_or_else(|| CellModels::published(mesh));
        if models.is_empty() || models.len() > 256 {
            return Err(SetupError::TooMany {
                what: "cell models",
                max: 256,
                got: models.len(),
            });
        }
        if let Some((cell, &model)) = cell_model
            .iter()
            .enumerate()
            .find(|(_, &m)| usize::from(m) >= models.len())
        {
            return Err(SetupError::BadModelIndex {
                cell,
                model,
                n: models.len(),
            });
        }
        let all: Vec<&Stimulus> = std::iter::once(stim).chain(&opts.more_sites).collect();
        if all.len() > MAX_SITES {
            return Err(SetupError::TooMany {
                what: "stimulus sites",
                max: MAX_SITES,
                got: all.len(),
            });
        }
        // Each cell's set of sites as a bit mask; each distinct non-empty set is a class.
        let mut mask = vec![0u32; n];
        let mut sites = Vec::with_capacity(all.len());
        for (k, st) in all.iter().enumerate() {
            let bad = |what: String| SetupError::BadSite { site: k, what };
            if !(st.duration > 0.0 && st.start >= 0.0 && st.density.is_finite()) {
                return Err(bad(format!(
                    "start {} ms and duration {} ms must be >= 0 and > 0",
                    st.start, st.duration
                )));
            }
            for &c in &st.cells {
                *mask
                    .get_mut(c as usize)
                    .ok_or(SetupError::BadStimulusCell { cell: c, n })? |= 1 << k;
            }
            let count = st.count.max(1);
            let period = if count > 1 { st.period } else { 0.0 };
            let last = st.start + f64::from(count - 1) * period;
            // Current density over membrane capacitance per volume: I / (χ Cm), in µA/µF =
            // pA/pF.
            sites.push(SiteSchedule {
                current: -(st.density / (cond.chi * cond.cm)) as f32,
                start: st.start as f32,
                duration: st.duration as f32,
                period: period as f32,
                count: count as f32,
                s2_start: st.s2.map_or(-1.0, |s2| (last + s2) as f32),
            });
        }
        let (classes, stim_class) = stimulus_classes(&mask)?;
        Ok(Setup {
            n,
            ell,
            dt_ode: dt_ode as f32,
            pde_steps,
            dt_pde,
            dt_stable,
            step_limit,
            models,
            cell_model,
            sites,
            stim_class,
            classes,
            act_threshold: opts.act_threshold.unwrap_or(ACTIVATION_THRESHOLD_MV) as f32,
            repol_level: REPOL_LEVEL_MV as f32,
            adjacency: mesh.face_neighbours(),
            centroids: (0..n).map(|t| mesh.centroid(t)).collect(),
        })
    }

    /// The stimulus tables in the layout of [`class_currents`]: sites ([`SITE_FIELDS`] each),
    /// class starts, class sites.
    pub fn stim_tables(&self) -> (Vec<f32>, Vec<u32>, Vec<u8>) {
        let sites = self.sites.iter().flat_map(|s| s.to_fields()).collect();
        let mut starts = vec![0u32];
        let mut flat = Vec::new();
        for c in &self.classes {
            flat.extend_from_slice(c);
            starts.push(flat.len() as u32);
        }
        (sites, starts, flat)
    }

    /// The cell models' kernel parameters, [`tp06::params::N_PARAMS`] f32 each (the device's
    /// table layout).
    pub fn model_table(&self) -> Vec<f32> {
        self.models
            .iter()
            .flat_map(|m| tp06::CellParams::<f32>::from_model(m).to_array())
            .collect()
    }

    /// Whether cell `i` is stimulated by any site.
    pub fn stimulated(&self, i: usize) -> bool {
        self.stim_class[i] != 0
    }

    /// The cell type of cell `i` (of its model).
    pub fn cell_type(&self, i: usize) -> CellType {
        self.models[usize::from(self.cell_model[i])].cell_type
    }

    /// Initial TP06 states of every cell, state-major (`[k * n + i]`).
    pub fn initial_states(&self) -> Vec<f32> {
        let mut s = vec![0.0f32; tp06::N_STATES * self.n];
        for i in 0..self.n {
            let init = tp06::initial_state(self.cell_type(i));
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

    /// The pulse starts of every site (ms, rising), for per-beat outputs and the length of a
    /// paced run.
    pub fn pulse_starts(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self.sites.iter().flat_map(|s| s.pulse_starts()).collect();
        v.sort_by(f64::total_cmp);
        v
    }

    /// Whether the problem paces (more than one pulse in all), so that per-beat outputs are
    /// kept.
    pub fn paced(&self) -> bool {
        self.pulse_starts().len() > 1
    }
}

/// The stimulus classes of the cells from each cell's set of sites (a bit mask per cell):
/// each distinct non-empty set is a class (class 0: no site), as the sites of each class and
/// each cell's class.
fn stimulus_classes(mask: &[u32]) -> Result<(Vec<Vec<u8>>, Vec<u8>), SetupError> {
    let mut class_of: std::collections::BTreeMap<u32, u8> = Default::default();
    let mut classes: Vec<Vec<u8>> = vec![Vec::new()];
    let mut stim_class = vec![0u8; mask.len()];
    for (c, &m) in mask.iter().enumerate() {
        if m == 0 {
            continue;
        }
        let next = classes.len();
        let id = *class_of.entry(m).or_insert_with(|| {
            classes.push((0..32u8).filter(|b| m & (1 << b) != 0).collect());
            next.min(255) as u8
        });
        stim_class[c] = id;
    }
    if classes.len() > 256 {
        return Err(SetupError::TooMany {
            what: "distinct overlaps of stimulus sites",
            max: 255,
            got: classes.len() - 1,
        });
    }
    Ok((classes, stim_class))
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
