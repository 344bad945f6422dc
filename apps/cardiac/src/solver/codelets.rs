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
            /// `y = D∘x[h..] + Σ_s A[·,s] x[I[·,s]]` over the tile's rows (`n = y.len()`); `x`
            /// is the local vector `[halo | own cells]` (`h = x.len() - n`), `I` indexes into it.
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
                Some(30 + ctx.elements(Self::y) * (2 * (ELL_WIDTH as u64 + 1) + 4))
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
    // left this core's caches; asking for every cache line of it first streams it in, instead
    // of paying a miss on each random `x[col]` below (measured 5.7 -> 4.1 ms per SpMV on the
    // 0.2 mm slab with a touch loop, which then stalled on its own loads; a prefetch does
    // not wait). No effect on results or on the modelled cycles.
    for v in x.iter().step_by(16) {
        poplar::codelet::prefetch(v);
    }
    ell_rows(y, diag, values, cols, x, x.len() - n);
    Ok(())
}

/// The TP06 codelets: `cardiac::Tp06Step`, and `cardiac::Tp06StepFrom` with a `v_in` field.
macro_rules! tp06_codelets {
    ($($(#[$doc:meta])* $name:ident as $cname:literal $(, voltage from $vin:ident)?;)*) => {$(
        poplar::codelet! {
            $(#[$doc])*
            pub struct $name as $cname {
                s: InOut<Vector<f32>>,
                v_prev: InOut<Vector<f32>>,
                act: InOut<Vector<f32>>,
                last_up: InOut<Vector<f32>>,
                last_down: InOut<Vector<f32>>,
                cell_model: Input<Vector<u8>>,
                models: Input<Vector<f32>>,
                stim_class: Input<Vector<u8>>,
                sites: Input<Vector<f32>>,
                class_start: Input<Vector<u32>>,
                class_sites: Input<Vector<u8>>,
                time: InOut<f32>,
                dt: State<f32>,
                act_threshold: State<f32>,
                repol_level: State<f32>,
                $($vin: Input<Vector<f32>>,)?
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
                let n = self.v_prev.len();
                let v_in: Option<&[f32]> = None $(.or(Some(self.$vin)))?;
                check_ode_sizes(
                    n,
                    self.s.len(),
                    self.act.len().min(self.last_up.len()).min(self.last_down.len()),
                    self.cell_model.len(),
                    self.stim_class.len(),
                    v_in.map(<[f32]>::len),
                )?;
                check_tables(
                    self.models.len(),
                    self.sites.len(),
                    self.class_start,
                    self.class_sites.len(),
                )?;
                if let Some(v) = v_in {
                    self.s[..n].copy_from_slice(v);
                }
                tp06_step(w, OdeFields {
                    s: self.s,
                    v_prev: self.v_prev,
                    act: self.act,
                    last_up: self.last_up,
                    last_down: self.last_down,
                    cell_model: self.cell_model,
                    models: self.models,
                    stim_class: self.stim_class,
                    sites: self.sites,
                    class_start: self.class_start,
                    class_sites: self.class_sites,
                    time: self.time,
                    dt: self.dt,
                    act_threshold: self.act_threshold,
                    repol_level: self.repol_level,
                })
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                // Measured-style estimate: ~400 cycles per cell per step on one worker (19
                // states, ~12 exponentials), plus overhead; the v_in copy of Tp06StepFrom
                // (~1 cycle per cell) is within its precision. Field 1 is v_prev (n cells).
                Some(100 + ctx.elements(Self::v_prev) * 400)
            }
        }
    )*};
}

tp06_codelets! {
    /// One TP06 step of the tile's cells (states state-major: `s[k * n + i]`), then the
    /// activation check against `v_prev`, then `time += dt`.
    Tp06Step as "cardiac::Tp06Step";
    /// [`Tp06Step`] whose voltage comes from a separate buffer `v_in` (the diffusion's
    /// ping-pong buffer after an odd number of PDE steps): it is first written into the V row
    /// of `s`. This replaces a copy program between diffusion and reaction: the tile's voltage
    /// is copied while its states are being brought in anyway.
    Tp06StepFrom as "cardiac::Tp06StepFrom", voltage from v_in;
}

/// The fields of both TP06 codelets.
struct OdeFields<'a> {
    s: &'a mut [f32],
    v_prev: &'a mut [f32],
    act: &'a mut [f32],
    last_up: &'a mut [f32],
    last_down: &'a mut [f32],
    cell_model: &'a [u8],
    models: &'a [f32],
    stim_class: &'a [u8],
    sites: &'a [f32],
    class_start: &'a [u32],
    class_sites: &'a [u8],
    time: &'a mut f32,
    dt: f32,
    act_threshold: f32,
    repol_level: f32,
}

/// Most stimulus classes a TP06 vertex computes currents for (class ids are `u8`).
const MAX_CLASSES: usize = 256;

/// The body of both TP06 codelets, after `s`'s V row holds the voltage to step from.
fn tp06_step(w: Worker, f: OdeFields<'_>) -> Result<(), VertexError> {
    let n = f.v_prev.len();
    // Host-side hint: bring in the activation inputs now, so they are cached when the check
    // below runs (they are two short per-tile arrays the hardware prefetcher does not pick up;
    // their loads stalled for most of the check's time).
    for (a, v) in f.act.iter().zip(f.v_prev.iter()).step_by(16) {
        poplar::codelet::prefetch(a);
        poplar::codelet::prefetch(v);
    }
    let t = *f.time;
    let classes = (f.class_start.len() - 1).min(MAX_CLASSES);
    // A few classes in practice: a small stack buffer (zeroing 256 floats per tile and step
    // cost measurably on tiles of a dozen cells).
    let mut small = [0.0f32; 8];
    let mut large = Vec::new();
    let class_current: &mut [f32] = if classes <= small.len() {
        &mut small[..classes]
    } else {
        large.resize(classes, 0.0);
        &mut large
    };
    super::class_currents(
        super::stim_time(t, f.dt),
        f.sites,
        f.class_start,
        f.class_sites,
        class_current,
    );
    let (models, _) = f.models.as_chunks::<{ tp06::params::N_PARAMS }>();
    let batch = tp06::Batch {
        models,
        model: f.cell_model,
        stim: tp06::Stim::Classes {
            class: f.stim_class,
            current: class_current,
        },
        dt: f.dt,
    };
    // The blocks report their progress so that the engine fetches the next tile meanwhile.
    tp06::step_batch_of(f.s, n, &batch, &mut |end| w.progress(end, n));
    let v = &f.s[..n];
    let th = f.act_threshold;
    tp06::update_activation(f.v_prev, v, t, f.dt, th, f.act);
    tp06::update_crossings(
        f.v_prev,
        v,
        t,
        f.dt,
        th,
        f.repol_level,
        f.last_up,
        f.last_down,
    );
    f.v_prev.copy_from_slice(v);
    *f.time = super::next_time(t, f.dt);
    Ok(())
}

/// Checks the field sizes of a TP06 vertex over `n` cells.
fn check_ode_sizes(
    n: usize,
    s: usize,
    act: usize,
    cell_model: usize,
    stim_class: usize,
    v_in: Option<usize>,
) -> Result<(), VertexError> {
    if s != tp06::N_STATES * n
        || act != n
        || cell_model != n
        || stim_class != n
        || v_in.is_some_and(|v| v != n)
    {
        let v_in = v_in.map_or(String::new(), |v| format!(", v_in {v}"));
        return Err(VertexError::new(format!(
            "field sizes disagree: {n} cells, s {s}, act {act}, cell_model {cell_model}, stim_class {stim_class}{v_in}"
        )));
    }
    Ok(())
}

/// Checks the model and stimulus tables of a TP06 vertex: whole models and sites, at least
/// one model, class starts that rise from 0 to the class sites' length (at most 256 classes).
fn check_tables(
    models: usize,
    sites: usize,
    class_start: &[u32],
    class_sites: usize,
) -> Result<(), VertexError> {
    let np = tp06::params::N_PARAMS;
    let sf = super::SITE_FIELDS;
    let starts_ok = class_start.first() == Some(&0)
        && class_start
            .last()
            .is_some_and(|&e| e as usize <= class_sites)
        && class_start.windows(2).all(|w| w[0] <= w[1])
        && class_start.len() <= MAX_CLASSES + 1;
    if models == 0 || !models.is_multiple_of(np) || !sites.is_multiple_of(sf) || !starts_ok {
        return Err(VertexError::new(format!(
            "tables disagree: models {models} (a multiple of {np}, not 0), sites {sites} (a \
             multiple of {sf}), class_start {} entries (rising from 0 to at most class_sites' {class_sites}, \
             at most {} entries)",
            class_start.len(),
            MAX_CLASSES + 1
        )));
    }
    Ok(())
}

/// Keeps this module's registrations linked.
pub fn link() {}
