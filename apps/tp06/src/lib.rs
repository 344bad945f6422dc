//! ten Tusscher–Panfilov 2006 (TP06) human ventricular cell model.
//!
//! (About 700 lines. One concept, the cell model: the f64 reference and the f32 batch kernel
//! must perform the same equations, and stay side by side so that a change to one is seen with
//! the other.)
//!
//! Implemented from the CellML specification in `shared/reference/tp06/` (Chaste's annotated
//! `tt06_epi`, `tt06_M`, `tt06_endo`), with the three cell types in one code path
//! ([`params::CellParams`]).
//!
//! Two integrators of the same equations ([`model`], written once and generic over the float
//! type):
//! * [`step_cell_f64`] — plain `f64`, one cell: the reference.
//! * [`step_batch`] — `f32`, many cells in state-major layout, branch-free so that the loop over
//!   cells auto-vectorises (SSE2 is enough; no target-cpu flags), with its own `exp`/`ln`
//!   ([`real`]) because libm calls do not vectorise.
//!
//! Both use the paper's scheme (§2): Rush–Larsen on the m gate (τm ≈ 1 µs at rest would make
//! forward Euler unstable above Δt ≈ 2 µs), forward Euler on V and the other 17 states.
//!
//! # Units and sign convention
//! V in mV, t in ms, currents in pA/pF, concentrations in mM. Stimulus currents follow TP06's
//! convention: dV/dt = −(I_ion + I_stim), so a *negative* stimulus depolarises (the standard
//! pacing stimulus is −52 pA/pF for 1 ms). As in the CellML, I_stim is also carried by K⁺
//! (it appears in dK_i/dt).
//!
//! # Accuracy (measured by cardiac's `tests/tp06_reference.rs` against myokit 1.39.2 / CVODES)
//! * Currents, fluxes and all 19 state derivatives at 69 states (23 per cell type) (rest, stimulus,
//!   upstroke, plateau, repolarisation, and V placed on/around 15 mV): within 8e-9 relative of
//!   myokit's evaluation of the same CellML, except inside the ±1 µV window around 15 mV where
//!   the CellML replaces I_CaL by the average of its end values (≤ 4e-5 relative there).
//! * Five beats at BCL 1000 ms (−52 pA/pF, 1 ms) with [`step_cell_f64`] at Δt = 0.02 ms versus
//!   the converged CVODES solution: APD90 −0.02 … −0.06 %, plateau V ≤ 0.02 mV, resting V
//!   ≤ 0.001 mV, activation time +0.029 ms, last-beat trace RMS 0.03–0.07 mV. Forward Euler
//!   overshoots the peak by +1.06 … +1.32 mV at Δt = 0.02 ms (+0.29 mV at Δt = 0.005 ms: the
//!   first-order discretisation error, not a model error).
//!
//! # Single versus double precision (same protocol, [`step_batch`] in f32 vs [`step_cell_f64`])
//! * Currents: the f32 evaluation (own `exp`/`ln`) is within 4e-6 relative of myokit's f64.
//! * V: in the first beat (one activation, as in the Niederer benchmark) max |ΔV| is
//!   0.003–0.03 mV. It then grows by ≈ 0.1 mV per beat (0.27–0.56 mV in beat 5), always in the
//!   fast final repolarisation: an APD shift (0.04–0.06 % after five beats) caused by the
//!   concentration drift below.
//! * Ca_i and Ca_ss need no special care: their per-step increments are many ulp (Ca_i ≈ 1e-4 mM
//!   has an ulp of 7e-12 mM).
//! * Na_i and K_i do: their per-step increments at Δt = 0.02 ms are *below* one f32 ulp for most
//!   of the cycle (at rest Na_i ≈ 10 mM moves by ≈ 0.25 ulp per step and K_i ≈ 138 mM by
//!   ≈ 0.04 ulp), so round-to-nearest drops them and f32 only follows the large upstroke and
//!   plateau fluxes; Ca_SR (≈ 4 mM) moves by only a few ulp per step in diastole, so its
//!   rounding is a large relative error too. After five beats Na_i is 0.2–0.5 % and K_i
//!   0.01–0.04 % off the f64 value (E_Na by ≈ 0.1 mV, E_K by ≈ 0.01 mV) and Ca_SR 2–6e-4.
//!   Irrelevant for single activations, but it accumulates.
//! * [`step_batch_compensated`] fixes this with compensated summation (Fast2Sum) of Na_i, K_i
//!   and Ca_SR, at the price of 3 extra f32 per cell kept by the caller: then max |ΔV| ≤ 0.003 mV
//!   in every one of the five beats and Na_i, K_i, Ca_SR agree with f64 to ≤ 2e-6 relative.

pub mod model;
pub mod params;
pub mod real;

/// Cell (tetrahedron) type of the TP06 model, stored per cell as a `u8`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[repr(u8)]
pub enum CellType {
    Endo = 0,
    Mid = 1,
    Epi = 2,
}

impl CellType {
    /// The file encoding used by the mesh readers (`cell_type` field: 0 endo, 1 mid, 2 epi).
    /// Accepts integral floats because Gmsh stores every field value as a double.
    pub fn from_value(v: f64) -> Option<CellType> {
        match v {
            0.0 => Some(CellType::Endo),
            1.0 => Some(CellType::Mid),
            2.0 => Some(CellType::Epi),
            _ => None,
        }
    }
}

pub use model::Currents;
pub use params::{CellModel, CellParams, Scalings};

/// Number of state variables per cell: V plus 18 gates and concentrations.
pub const N_STATES: usize = 19;

/// Membrane potential (mV).
pub const V: usize = 0;
/// Rapid delayed rectifier activation gate Xr1.
pub const XR1: usize = 1;
/// Rapid delayed rectifier inactivation gate Xr2.
pub const XR2: usize = 2;
/// Slow delayed rectifier activation gate Xs.
pub const XS: usize = 3;
/// Fast sodium activation gate m (integrated with Rush–Larsen).
pub const M: usize = 4;
/// Fast sodium fast-inactivation gate h.
pub const H: usize = 5;
/// Fast sodium slow-inactivation gate j.
pub const J: usize = 6;
/// L-type Ca activation gate d.
pub const D: usize = 7;
/// L-type Ca voltage-dependent inactivation gate f.
pub const FG: usize = 8;
/// L-type Ca slow voltage-dependent inactivation gate f2.
pub const F2: usize = 9;
/// L-type Ca subspace-calcium-dependent inactivation gate fCass.
pub const FCASS: usize = 10;
/// Transient outward inactivation gate s.
pub const S: usize = 11;
/// Transient outward activation gate r.
pub const R_GATE: usize = 12;
/// Free cytosolic Ca²⁺ (mM).
pub const CA_I: usize = 13;
/// Free SR Ca²⁺ (mM).
pub const CA_SR: usize = 14;
/// Free dyadic-subspace Ca²⁺ (mM).
pub const CA_SS: usize = 15;
/// Fraction of closed-but-activatable RyR channels R′.
pub const R_PRIME: usize = 16;
/// Intracellular Na⁺ (mM).
pub const NA_I: usize = 17;
/// Intracellular K⁺ (mM).
pub const K_I: usize = 18;

/// State names in storage order (index 0 is V in mV). The order is the CellML's state order.
pub const STATE_NAMES: [&str; N_STATES] = [
    "V", "Xr1", "Xr2", "Xs", "m", "h", "j", "d", "f", "f2", "fCass", "s", "r", "Ca_i", "Ca_SR",
    "Ca_ss", "R_prime", "Na_i", "K_i",
];

/// Initial state of a cell type: the `initial_value`s of the corresponding CellML file
/// (approximately the resting state after pacing at 1 Hz).
pub fn initial_state(ct: CellType) -> [f64; N_STATES] {
    match ct {
        CellType::Epi => [
            -85.23, 0.00621, 0.4712, 0.0095, 0.00172, 0.7444, 0.7045, 3.373e-5, 0.7888, 0.9755,
            0.9953, 0.999998, 2.42e-8, 0.000126, 3.64, 0.00036, 0.9073, 8.604, 136.89,
        ],
        CellType::Mid => [
            -85.423, 0.0165, 0.473, 0.0174, 0.00165, 0.749, 0.6788, 3.288e-5, 0.7026, 0.9526,
            0.9942, 0.999998, 2.347e-8, 0.000153, 4.272, 0.00042, 0.8978, 10.132, 138.52,
        ],
        CellType::Endo => [
            -86.709, 0.00448, 0.476, 0.0087, 0.00155, 0.7573, 0.7225, 3.164e-5, 0.8009, 0.9778,
            0.9953, 0.3212, 2.235e-8, 0.00013, 3.715, 0.00036, 0.9068, 10.355, 138.4,
        ],
    }
}

/// All membrane currents (pA/pF) and SR fluxes (mM/ms) at `state`, in `f64`.
pub fn currents(state: &[f64; N_STATES], ct: CellType) -> Currents<f64> {
    model::currents(state, &CellParams::new(ct))
}

/// Every current and flux of a cell model (scaled conductances) at `state`.
pub fn currents_of_model(state: &[f64; N_STATES], m: &CellModel) -> Currents<f64> {
    model::currents(state, &CellParams::from_model(m))
}

/// Time derivatives of all states at `state` (per ms), in `f64`, as defined by the CellML
/// (including dm/dt, although the integrators use Rush–Larsen for m).
pub fn derivatives(state: &[f64; N_STATES], ct: CellType, i_stim: f64) -> [f64; N_STATES] {
    let p = CellParams::new(ct);
    let c = model::currents(state, &p);
    model::derivatives(state, &p, &c, i_stim)
}

macro_rules! current_fns {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        $(
            $(#[$doc])*
            pub fn $name(state: &[f64; N_STATES], ct: CellType) -> f64 {
                currents(state, ct).$name
            }
        )*
    };
}

current_fns!(
    /// Fast sodium current I_Na (pA/pF).
    i_na,
    /// Inward rectifier K⁺ current I_K1 (pA/pF).
    i_k1,
    /// Transient outward current I_to (pA/pF); g_to differs between cell types.
    i_to,
    /// Rapid delayed rectifier I_Kr (pA/pF).
    i_kr,
    /// Slow delayed rectifier I_Ks (pA/pF); g_Ks differs between cell types.
    i_ks,
    /// L-type Ca²⁺ current I_CaL (pA/pF); finite and smooth through V = 15 mV.
    i_cal,
    /// Na⁺/Ca²⁺ exchanger current I_NaCa (pA/pF).
    i_naca,
    /// Na⁺/K⁺ pump current I_NaK (pA/pF).
    i_nak,
    /// Sarcolemmal Ca²⁺ pump current I_pCa (pA/pF).
    i_pca,
    /// K⁺ pump current I_pK (pA/pF).
    i_pk,
    /// Background Na⁺ current I_bNa (pA/pF).
    i_bna,
    /// Background Ca²⁺ current I_bCa (pA/pF).
    i_bca,
    /// SR leak flux I_leak (mM/ms).
    i_leak,
    /// SERCA uptake flux I_up (mM/ms).
    i_up,
    /// RyR release flux I_rel (mM/ms).
    i_rel,
    /// Subspace-to-cytosol flux I_xfer (mM/ms).
    i_xfer,
);

/// Total ionic current I_ion (pA/pF), excluding the stimulus.
pub fn i_ion(state: &[f64; N_STATES], ct: CellType) -> f64 {
    currents(state, ct).i_ion()
}

/// Plain f64 scalar reference: one forward-Euler step (Rush–Larsen on the m gate) of one cell.
/// `i_stim` in pA/pF with TP06's sign convention (negative depolarises); `dt` in ms.
pub fn step_cell_f64(state: &mut [f64; N_STATES], ct: CellType, i_stim: f64, dt: f64) {
    model::step(state, &CellParams::new(ct), i_stim, dt);
}

/// [`step_cell_f64`] of a cell model given by its parameters ([`CellParams::from_model`]).
pub fn step_cell_f64_with(state: &mut [f64; N_STATES], p: &CellParams<f64>, i_stim: f64, dt: f64) {
    model::step(state, p, i_stim, dt);
}

/// Cells per block of [`step_batch`]: the kernel copies a block of cells into a fixed-size,
/// stack-resident state-major buffer, so the inner loop has compile-time bounds (no bounds
/// checks, no aliasing questions) and vectorises. 64 cells × 19 states × 4 B = 4.9 KB.
const BLOCK: usize = 64;

/// Block size for the cells left after the full blocks, so that a tile with a few dozen cells
/// does not compute a whole padded 64-cell block.
pub const TAIL_BLOCK: usize = 8;

/// The stimulus of a batch step (pA/pF, TP06's sign: negative depolarises).
#[derive(Debug, Clone, Copy)]
pub enum Stim<'a> {
    /// Cell `i` gets `current[i] * scale`.
    PerCell { current: &'a [f32], scale: f32 },
    /// Cell `i` gets `current[class[i]]`; a class past the end of `current` gets none. A tissue
    /// run gives each distinct set of stimulus sites a class and computes the class currents
    /// once per step.
    Classes { class: &'a [u8], current: &'a [f32] },
}

/// What a batch step needs besides the states.
#[derive(Debug, Clone, Copy)]
pub struct Batch<'a> {
    /// The run's cell models ([`CellParams::to_array`] of [`CellParams::from_model`]);
    /// `model[i]` indexes it, and an index past the end means the last model (the kernel has
    /// no error path; set-ups check).
    pub models: &'a [[f32; params::N_PARAMS]],
    pub model: &'a [u8],
    pub stim: Stim<'a>,
    pub dt: f32,
}

impl<'a> Batch<'a> {
    /// A batch of the published models (`published_models`) with a per-cell stimulus
    /// `stim_current[i] * stim_scale`: what [`step_batch`] runs.
    pub fn published(
        models: &'a [[f32; params::N_PARAMS]],
        cell_types: &'a [u8],
        stim_current: &'a [f32],
        stim_scale: f32,
        dt: f32,
    ) -> Batch<'a> {
        Batch {
            models,
            model: cell_types,
            stim: Stim::PerCell {
                current: stim_current,
                scale: stim_scale,
            },
            dt,
        }
    }
}

/// The published endo, mid and epi models, indexed by `CellType as u8`, as [`Batch::models`].
pub fn published_models() -> [[f32; params::N_PARAMS]; 3] {
    [CellType::Endo, CellType::Mid, CellType::Epi].map(|c| CellParams::<f32>::new(c).to_array())
}

/// The fast f32 batch kernel over `n` cells in state-major layout: `states[k * n + i]` is state
/// `k` of cell `i`. The applied stimulus of cell `i` is `stim_current[i] * stim_scale` (pA/pF,
/// negative depolarises). `cell_types[i]` is a [`CellType`] as `u8` (0 endo, 1 mid, 2 epi; any
/// other value is treated as epi). Same numerics as [`step_cell_f64`], in `f32`; the loop over
/// cells has no per-cell branches and auto-vectorises (≈ 20 M cell-steps per CPU-second with
/// SSE2, `benches/tp06.rs`). For runs over many beats see [`step_batch_compensated`]: plain f32
/// loses the sub-ulp increments of Na_i, K_i and Ca_SR (module notes). [`step_batch_of`] takes
/// a table of cell models (scaled conductances) and stimulus classes instead.
///
/// # Panics
/// If `states.len() < N_STATES * n`, `cell_types.len() < n` or `stim_current.len() < n`.
pub fn step_batch(
    states: &mut [f32],
    n: usize,
    cell_types: &[u8],
    stim_current: &[f32],
    stim_scale: f32,
    dt: f32,
) {
    step_batch_with_progress(
        states,
        n,
        cell_types,
        stim_current,
        stim_scale,
        dt,
        &mut |_| {},
    );
}

/// [`step_batch`] that calls `progress(end)` before each block of cells `..end` (a codelet
/// passes it on as `Worker::progress`, a host-side hint). Same results.
pub fn step_batch_with_progress(
    states: &mut [f32],
    n: usize,
    cell_types: &[u8],
    stim_current: &[f32],
    stim_scale: f32,
    dt: f32,
    progress: &mut dyn FnMut(usize),
) {
    let models = published_models();
    let batch = Batch::published(&models, cell_types, stim_current, stim_scale, dt);
    step_batch_of(states, n, &batch, progress);
}

/// The batch kernel with a table of cell models and any [`Stim`]: cell `i` runs
/// `batch.models[batch.model[i]]`. Calls `progress(end)` before each block of cells `..end`.
/// With [`published_models`] and [`Stim::PerCell`] it is [`step_batch`], bit for bit.
///
/// # Panics
/// If `states.len() < N_STATES * n`, `batch.model.len() < n`, `batch.models` is empty, or the
/// stimulus's per-cell slice is shorter than `n`.
pub fn step_batch_of(
    states: &mut [f32],
    n: usize,
    batch: &Batch<'_>,
    progress: &mut dyn FnMut(usize),
) {
    // The first block's rows, all at once (host hint; the copies below would otherwise ask
    // for them row by row when a tile's states start cold).
    if states.len() >= N_STATES * n {
        prefetch_rows(states, n, 0, BLOCK);
    }
    let split = n / BLOCK * BLOCK;
    let table = ModelTable::new(batch.models);
    run_blocks::<false, BLOCK>(states, &mut [], 0..split, n, batch, &table, progress);
    run_blocks::<false, TAIL_BLOCK>(states, &mut [], split..n, n, batch, &table, progress);
}

/// Number of per-cell compensation terms of [`step_batch_compensated`] (Na_i, K_i, Ca_SR).
pub const N_COMPENSATED: usize = 3;

/// [`step_batch`] with compensated summation of Na_i, K_i and Ca_SR, for long f32 runs.
///
/// In plain f32 the per-step increments of Na_i and K_i are mostly below one ulp and are lost,
/// and those of Ca_SR are only a few ulp (see the module notes), so f32 drifts from f64 by
/// ≈ 0.1 mV per beat in V. This variant keeps each update's rounding error in `residuals`
/// (`residuals[j * n + i]`, j = 0 Na_i, 1 K_i, 2 Ca_SR; start from zeros and keep them with the
/// state) and adds it to the next increment. Measured over five beats at Δt = 0.02 ms: max |ΔV|
/// to the f64 reference ≤ 0.003 mV in every beat (instead of 0.27–0.56 mV in beat 5), Na_i/K_i/
/// Ca_SR within 3e-7/1.4e-7/1.6e-6 relative. Costs a few % of throughput
/// (`benches/tp06.rs`).
///
/// # Panics
/// As [`step_batch`], and if `residuals.len() < N_COMPENSATED * n`.
pub fn step_batch_compensated(
    states: &mut [f32],
    residuals: &mut [f32],
    n: usize,
    cell_types: &[u8],
    stim_current: &[f32],
    stim_scale: f32,
    dt: f32,
) {
    let models = published_models();
    let batch = Batch::published(&models, cell_types, stim_current, stim_scale, dt);
    step_batch_compensated_of(states, residuals, n, &batch);
}

/// [`step_batch_compensated`] with a table of cell models and any [`Stim`] (as
/// [`step_batch_of`]).
pub fn step_batch_compensated_of(
    states: &mut [f32],
    residuals: &mut [f32],
    n: usize,
    batch: &Batch<'_>,
) {
    assert!(
        residuals.len() >= N_COMPENSATED * n,
        "step_batch_compensated: residuals shorter than 3·n"
    );
    let split = n / BLOCK * BLOCK;
    let table = ModelTable::new(batch.models);
    run_blocks::<true, BLOCK>(states, residuals, 0..split, n, batch, &table, &mut |_| {});
    run_blocks::<true, TAIL_BLOCK>(states, residuals, split..n, n, batch, &table, &mut |_| {});
}

/// Fills a block's per-lane stimulus from cells `start..start + len` (lanes past `len`: 0).
#[inline]
fn fill_stim<const B: usize>(stim: &mut [f32; B], s: &Stim<'_>, start: usize, len: usize) {
    match *s {
        Stim::PerCell { current, scale } => {
            for (x, &c) in stim[..len].iter_mut().zip(&current[start..start + len]) {
                *x = c * scale;
            }
        }
        Stim::Classes { class, current } => {
            for (x, &c) in stim[..len].iter_mut().zip(&class[start..start + len]) {
                *x = current.get(usize::from(c)).copied().unwrap_or(0.0);
            }
        }
    }
    stim[len..].fill(0.0);
}

/// The cell models of a batch as the block fill reads them: each model's parameters as an
/// array, and which parameters differ between models (only those are gathered per lane in a
/// block of mixed models; the published endo/mid/epi share 10 of 18).
struct ModelTable<'a> {
    arrays: &'a [[f32; params::N_PARAMS]],
    varying: [usize; params::N_PARAMS],
    n_varying: usize,
}

impl<'a> ModelTable<'a> {
    fn new(arrays: &'a [[f32; params::N_PARAMS]]) -> ModelTable<'a> {
        let mut varying = [0; params::N_PARAMS];
        let mut n_varying = 0;
        for k in 0..params::N_PARAMS {
            if arrays
                .iter()
                .any(|a| a[k].to_bits() != arrays[0][k].to_bits())
            {
                varying[n_varying] = k;
                n_varying += 1;
            }
        }
        ModelTable {
            arrays,
            varying,
            n_varying,
        }
    }

    #[inline]
    fn get(&self, m: u8) -> &[f32; params::N_PARAMS] {
        &self.arrays[usize::from(m).min(self.arrays.len() - 1)]
    }

    /// Fills a block's per-lane parameters from the models of cells `start..start + len`
    /// (lanes past `len`: the first cell's model). The rows of parameters that no model
    /// changes are filled once per call ([`ModelTable::fill_common`]) and left alone here.
    /// `uniform` is the model that fills every lane of `pa` already, if one does: a block of
    /// that model leaves `pa` as it is.
    #[inline]
    fn fill<const B: usize>(
        &self,
        pa: &mut [[f32; B]; params::N_PARAMS],
        model: &[u8],
        start: usize,
        len: usize,
        uniform: &mut Option<u8>,
    ) {
        let ids = &model[start..start + len];
        let first = ids[0];
        if ids.iter().all(|&m| m == first) {
            if *uniform != Some(first) {
                let a = self.get(first);
                for &k in &self.varying[..self.n_varying] {
                    pa[k].fill(a[k]);
                }
                *uniform = Some(first);
            }
            return;
        }
        *uniform = None;
        for &k in &self.varying[..self.n_varying] {
            let row = &mut pa[k];
            for (x, &m) in row.iter_mut().zip(ids) {
                *x = self.get(m)[k];
            }
            row[len..].fill(self.get(first)[k]);
        }
    }

    /// Fills the rows of the parameters every model shares.
    fn fill_common<const B: usize>(&self, pa: &mut [[f32; B]; params::N_PARAMS]) {
        for (k, row) in pa.iter_mut().enumerate() {
            row.fill(self.arrays[0][k]);
        }
    }
}

/// Steps `range` in blocks of `B` cells, calling `progress(end)` before each: full blocks of
/// the plain kernel in place ([`step_rows`]), the compensated kernel's blocks and a partial
/// last block through fixed-size buffers ([`step_copied`]). Each cell's arithmetic does not
/// depend on the block it is in or on the path.
#[allow(clippy::too_many_arguments)]
fn run_blocks<const COMPENSATE: bool, const B: usize>(
    states: &mut [f32],
    residuals: &mut [f32],
    range: std::ops::Range<usize>,
    n: usize,
    batch: &Batch<'_>,
    table: &ModelTable<'_>,
    progress: &mut dyn FnMut(usize),
) {
    let &Batch {
        models,
        model,
        ref stim,
        dt,
    } = batch;
    assert!(
        states.len() >= N_STATES * n,
        "step_batch: states shorter than 19·n"
    );
    assert!(model.len() >= n, "step_batch: cell_types shorter than n");
    assert!(!models.is_empty(), "step_batch: no cell models");
    let stim_len = match *stim {
        Stim::PerCell { current, .. } => current.len(),
        Stim::Classes { class, .. } => class.len(),
    };
    assert!(stim_len >= n, "step_batch: stim_current shorter than n");
    let mut buf = [[0.0f32; B]; N_STATES];
    let mut res = [[0.0f32; B]; N_COMPENSATED];
    if range.is_empty() {
        return;
    }
    let mut pa = [[0.0f32; B]; params::N_PARAMS];
    table.fill_common(&mut pa);
    let mut stim_lanes = [0.0f32; B];
    // The model whose parameters fill every lane of `pa` (consecutive blocks of one model
    // skip the refill: about 3 % of the AVX-512 kernel's time on one-model batches).
    let mut uniform = None;
    let mut start = range.start;
    while start < range.end {
        let len = B.min(range.end - start);
        table.fill(&mut pa, model, start, len, &mut uniform);
        fill_stim(&mut stim_lanes, stim, start, len);
        prefetch_after::<B>(states, n, start + B, range.end);
        progress(start + len);
        if len == B && !COMPENSATE {
            // Full block: the kernel reads and writes the state rows where they are. Copying
            // the 19 rows of 256 bytes into a block buffer and back (38 `memcpy` calls a
            // block) took about 15 % of the AVX-512 kernel's time on 20,000-cell batches
            // (`bench tp06 -- --myokit`, three alternating processes, medians 64.9 → 74.6 M
            // cell-steps per CPU-second). Earlier, inline vector copies instead of `memcpy`
            // had gained 5–8 % on 10^5-cell chunks and nothing on 214-cell tiles.
            step_rows_of::<B>(state_rows::<B>(states, n, start), &pa, &stim_lanes, dt);
        } else {
            // The compensated kernel's blocks and the partial last block: through a buffer.
            step_copied::<COMPENSATE, B>(
                states,
                residuals,
                start..start + len,
                n,
                &mut buf,
                &mut res,
                &pa,
                &stim_lanes,
                dt,
            );
        }
        start += len;
    }
}

/// One block through the buffers `buf` and `res`: cells `cells` of every state (and residual)
/// row, `n` cells a row, copied in, stepped ([`step_rows_of`] on the buffer's rows, or
/// [`step_block_compensated`]) and copied back. A partial block is padded with a valid
/// resting cell so that padded lanes compute harmless numbers (no NaN, no subnormals); their
/// results are discarded.
#[allow(clippy::too_many_arguments)]
fn step_copied<const COMPENSATE: bool, const B: usize>(
    states: &mut [f32],
    residuals: &mut [f32],
    cells: std::ops::Range<usize>,
    n: usize,
    buf: &mut [[f32; B]; N_STATES],
    res: &mut [[f32; B]; N_COMPENSATED],
    pa: &[[f32; B]; params::N_PARAMS],
    stim: &[f32; B],
    dt: f32,
) {
    let (start, len) = (cells.start, cells.len());
    let pad = initial_state(CellType::Epi);
    for ((k, row), &p) in buf.iter_mut().enumerate().zip(pad.iter()) {
        row[..len].copy_from_slice(&states[k * n + start..][..len]);
        row[len..].fill(p as f32);
    }
    if COMPENSATE {
        for (j, row) in res.iter_mut().enumerate() {
            row[..len].copy_from_slice(&residuals[j * n + start..][..len]);
            row[len..].fill(0.0);
        }
    }
    if COMPENSATE {
        step_block_compensated::<B>(buf, res, pa, stim, dt);
    } else {
        step_rows_of::<B>(buf.each_mut(), pa, stim, dt);
    }
    for (k, row) in buf.iter().enumerate() {
        states[k * n + start..][..len].copy_from_slice(&row[..len]);
    }
    if COMPENSATE {
        for (j, row) in res.iter().enumerate() {
            residuals[j * n + start..][..len].copy_from_slice(&row[..len]);
        }
    }
}

/// Asks for the block after the one ending at `next` (ask for it while this one computes,
/// ≈ 60 ns per cell: on a tile the 19 rows are short separate streams that the hardware
/// prefetcher does not pick up in time): the next block of the range, or after the range's
/// last block the cells after it (the tail after the full blocks). Host-side hint only.
#[inline]
fn prefetch_after<const B: usize>(states: &[f32], n: usize, next: usize, end: usize) {
    if next < end {
        prefetch_rows(states, n, next, B);
    } else if end < n {
        prefetch_rows(states, n, end, B);
    }
}

/// The cells `start..start + B` of each of the 19 state rows of `states` (state-major, `n`
/// cells a row), as one `&mut` array each.
fn state_rows<const B: usize>(
    states: &mut [f32],
    n: usize,
    start: usize,
) -> [&mut [f32; B]; N_STATES] {
    let mut rows = states[..N_STATES * n].chunks_exact_mut(n).map(|r| {
        <&mut [f32; B]>::try_from(&mut r[start..start + B]).expect("a block inside the row")
    });
    std::array::from_fn(|_| rows.next().expect("19 state rows"))
}

/// Asks the CPU for cells `start..start + len` (clipped to `n`) of every state row.
#[inline]
fn prefetch_rows(states: &[f32], n: usize, start: usize, len: usize) {
    let len = len.min(n.saturating_sub(start));
    for k in 0..N_STATES {
        for line in states[k * n + start..][..len].iter().step_by(16) {
            poplar_core::codelet::prefetch(line);
        }
    }
}

/// [`step_rows`] on the 19 rows of a block: the state rows of a batch in place
/// ([`state_rows`]), or a block buffer's.
#[inline]
fn step_rows_of<const B: usize>(
    rows: [&mut [f32; B]; N_STATES],
    pa: &[[f32; B]; params::N_PARAMS],
    stim: &[f32; B],
    dt: f32,
) {
    let [y0, y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, y11, y12, y13, y14, y15, y16, y17, y18] =
        rows;
    step_rows::<B>(
        y0, y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, y11, y12, y13, y14, y15, y16, y17, y18, pa,
        stim, dt,
    );
}

poplar_core::isa_dispatch! {
/// One block of the plain kernel, compiled for every instruction-set level
/// ([`poplar_core::isa`]; the same bits on each: the model is plain IEEE arithmetic, with its
/// own `exp`/`ln`, no libm and no fused multiply-add). Each state row's block is its own
/// `&mut` parameter, which tells the compiler that the 19 rows do not overlap (references
/// inside an array argument carry no such promise to it), so the lane loop vectorises without
/// overlap checks.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn step_rows<const B: usize>(
    y0: &mut [f32; B],
    y1: &mut [f32; B],
    y2: &mut [f32; B],
    y3: &mut [f32; B],
    y4: &mut [f32; B],
    y5: &mut [f32; B],
    y6: &mut [f32; B],
    y7: &mut [f32; B],
    y8: &mut [f32; B],
    y9: &mut [f32; B],
    y10: &mut [f32; B],
    y11: &mut [f32; B],
    y12: &mut [f32; B],
    y13: &mut [f32; B],
    y14: &mut [f32; B],
    y15: &mut [f32; B],
    y16: &mut [f32; B],
    y17: &mut [f32; B],
    y18: &mut [f32; B],
    pa: &[[f32; B]; params::N_PARAMS],
    stim: &[f32; B],
    dt: f32,
) {
    let mut rows = [
        y0, y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, y11, y12, y13, y14, y15, y16, y17, y18,
    ];
    for i in 0..B {
        let mut y: [f32; N_STATES] = std::array::from_fn(|k| rows[k][i]);
        let p = CellParams::<f32>::from_lane(pa, i);
        model::step(&mut y, &p, stim[i], dt);
        for (row, v) in rows.iter_mut().zip(y) {
            row[i] = v;
        }
    }
}
}

poplar_core::isa_dispatch! {
/// One block of the compensated kernel ([`step_batch_compensated`]) in block buffers, at
/// every instruction-set level as [`step_rows`].
#[inline(never)]
fn step_block_compensated<const B: usize>(
    buf: &mut [[f32; B]; N_STATES],
    res: &mut [[f32; B]; N_COMPENSATED],
    pa: &[[f32; B]; params::N_PARAMS],
    stim: &[f32; B],
    dt: f32,
) {
    for i in 0..B {
        let mut y: [f32; N_STATES] = std::array::from_fn(|k| buf[k][i]);
        let p = CellParams::<f32>::from_lane(pa, i);
        let mut comp = [res[0][i], res[1][i], res[2][i]];
        model::step_compensated(&mut y, &p, stim[i], dt, &mut comp);
        for (row, c) in res.iter_mut().zip(comp) {
            row[i] = c;
        }
        for (row, v) in buf.iter_mut().zip(y) {
            row[i] = v;
        }
    }
}
}

/// Activation time: the first time `v` crosses `threshold` (mV; 0 is the usual choice)
/// upwards, linearly interpolated inside the step from `t_old` to `t_old + dt`. `act[i] < 0`
/// means "not activated yet" and is the only case that is written, so an activation time, once
/// set, is kept. Processes `min(v_old.len(), v_new.len(), act.len())` cells; branch-free so it
/// vectorises.
pub fn update_activation(
    v_old: &[f32],
    v_new: &[f32],
    t_old: f32,
    dt: f32,
    threshold: f32,
    act: &mut [f32],
) {
    for ((a, &v0), &v1) in act.iter_mut().zip(v_old).zip(v_new) {
        let crossed = *a < 0.0 && v0 < threshold && v1 >= threshold;
        // v1 > v0 whenever `crossed`, so the denominator is positive there; elsewhere it is
        // replaced by 1 to keep the discarded lane finite.
        let denom = if crossed { v1 - v0 } else { 1.0 };
        let t = t_old + dt * ((threshold - v0) / denom);
        *a = if crossed { t } else { *a };
    }
}

/// The latest upstroke and repolarisation of every cell, for paced runs: `last_up` is set to
/// the time of each upward crossing of `threshold` and `last_down` to the time of each
/// downward crossing of `level`, both interpolated linearly inside the step from `t_old` to
/// `t_old + dt` (so a beat's activation and repolarisation times can be read between device
/// runs). Processes `min` of the lengths; branch-free so it vectorises.
#[allow(clippy::too_many_arguments)]
pub fn update_crossings(
    v_old: &[f32],
    v_new: &[f32],
    t_old: f32,
    dt: f32,
    threshold: f32,
    level: f32,
    last_up: &mut [f32],
    last_down: &mut [f32],
) {
    for (((u, d), &v0), &v1) in last_up
        .iter_mut()
        .zip(last_down.iter_mut())
        .zip(v_old)
        .zip(v_new)
    {
        let up = v0 < threshold && v1 >= threshold;
        let denom = if up { v1 - v0 } else { 1.0 };
        let tu = t_old + dt * ((threshold - v0) / denom);
        *u = if up { tu } else { *u };
        let down = v0 > level && v1 <= level;
        let denom = if down { v0 - v1 } else { 1.0 };
        let td = t_old + dt * ((v0 - level) / denom);
        *d = if down { td } else { *d };
    }
}

#[cfg(test)]
mod tests;
