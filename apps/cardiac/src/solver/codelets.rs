//! The app's codelets: ELLPACK SpMV over a tile's halo-extended local vector, and the TP06 step
//! with the activation-time update over a tile's cells.
//!
//! All four are multi-worker codelets. On the chip, worker `w` of a tile's six takes the rows
//! (SpMV) or cells (TP06) `w.split(n)`, and the cycle estimates are one worker's share,
//! calibrated on the instruction counts and measurements of the paper ("Ultra-fast
//! unstructured-mesh simulation on IPUs", §4.3; the constants below say what comes from where).
//! On the host, the last worker's call runs the whole vertex and the other calls return at once:
//! every row and cell is computed by the same operations whatever the split, so the results are
//! the same bits (the tests `*_worker_split_gives_the_same_bits` run the six ranges one after
//! another against one sweep), and one sweep is what the host runs fast. In-process A/B runs
//! of the engine on this host (same executable, the split switched between runs):
//! - TP06: the batch kernel steps a tile's cells in blocks of 64 and takes whole state rows, so
//!   six calls would each gather their columns into a buffer of their own and step them in
//!   short, partly padded 8-cell blocks: a step of the 0.2 mm slab (≈ 214 cells per tile) was
//!   27–29 % slower that way;
//! - SpMV: six calls over each worker's rows made a step of the 0.5 mm slab (≈ 14 rows per
//!   tile) 2.6–3.4 % slower (the calls' fixed costs), and of the 0.2 mm slab 3.9 % slower when
//!   each took its rows as slices of their own (each call began on rows its prefetch had not
//!   asked for yet).

use std::ops::Range;

use poplar::codelet::*;
use poplar::profile::model::LOCAL_COPY_BYTES_PER_CYCLE;

use crate::matrix::{ell_rows, ColIndex, ELL_WIDTH};
use crate::tp06;

/// Worker cycles per ELLPACK row of the SpMV: the paper's measurement (§4.3.1: 107
/// execution-context cycles counted in the `popc -O3` assembly of its inner loop, 106
/// measured). Its rows have the same shape as ours: a separate diagonal and 16 off-diagonal
/// slots (`ELL_WIDTH`), a tetrahedron and its face and second-tier neighbours. Ours index the
/// local vector with 16-bit columns (`cardiac::EllSpmv16`) where the paper's code loaded 32-bit
/// ones; the count is used for both widths.
pub const SPMV_ROW_CYCLES: u64 = 106;
/// Worker cycles of one SpMV call besides its rows: the paper's one-time start and teardown
/// overhead (§4.3.1: 153 instructions), counted once per worker since each worker runs the loop
/// over its own rows.
pub const SPMV_START_CYCLES: u64 = 153;
/// Worker cycles per cell of the TP06 step: the paper's measurement (§4.3.2: 1,401 cycles
/// counted for the model's 1,077 instruction bundles with the latencies of its math functions,
/// 1,418 with the loop overhead, 1,415 measured). Not added: the activation and crossing
/// updates and the `v_prev` copy after the step, which the paper's step did not have (a few
/// dozen instructions per cell: compares, selects and three guarded divisions; a few per cent
/// of this on a chip).
pub const TP06_CELL_CYCLES: u64 = 1_415;
/// Worker cycles of one TP06 call besides its cells. The paper publishes none for the ODE
/// vertex; assumed equal to the SpMV's start and teardown (153), which also covers the few
/// stimulus-class currents each worker sums.
pub const TP06_START_CYCLES: u64 = 153;

/// Worker cycles of the `v_in` copy of `cardiac::Tp06StepFrom` over `cells` cells: one f32 per
/// cell at the cycle model's on-tile copy rate (a 64-bit load and store per cycle, i.e. two
/// cells). The paper's code copied the voltage elsewhere; ours is folded into the ODE vertex.
fn v_in_copy_cycles(cells: u64) -> u64 {
    (4 * cells).div_ceil(LOCAL_COPY_BYTES_PER_CYCLE)
}

/// The ELLPACK SpMV codelets, one per column-index width: `cardiac::EllSpmv` (u32) and
/// `cardiac::EllSpmv16` (u16, chosen by the app when the local vector is at most 65,536 long).
macro_rules! ell_spmv_codelets {
    ($($name:ident as $cname:literal: $idx:ty, rows $rows:ident;)*) => {$(
        poplar::codelet! {
            /// `y = D∘x[h..] + Σ_s A[·,s] x[I[·,s]]` over the tile's rows (`n = y.len()`); `x`
            /// is the local vector `[halo | own cells]` (`h = x.len() - n`), `I` indexes into it.
            /// Multi-worker: on the chip each worker computes the rows `Worker::split(n)`; on
            /// the host the last worker's call computes them all (see the module's notes).
            pub struct $name as $cname, multi_worker {
                x: Input<Vector<f32>>,
                y: Output<Vector<f32>>,
                diag: Input<Vector<f32>>,
                values: Input<Vector<f32>>,
                cols: Input<Vector<$idx>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
                if w.id + 1 != w.count {
                    return Ok(());
                }
                spmv(self.x, self.y, self.diag, self.values, self.cols, $rows)
            }

            /// One worker's rows (at most `ceil(n / workers)`): [`SPMV_START_CYCLES`] +
            /// [`SPMV_ROW_CYCLES`] per row.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let rows = ctx.elements(Self::y).div_ceil(u64::from(ctx.workers.max(1)));
                Some(SPMV_START_CYCLES + SPMV_ROW_CYCLES * rows)
            }
        }
    )*};
}

ell_spmv_codelets! {
    EllSpmv as "cardiac::EllSpmv": u32, rows ell_rows32;
    EllSpmv16 as "cardiac::EllSpmv16": u16, rows ell_rows16;
}

poplar::isa_dispatch! {
    /// [`ell_rows`] with 32-bit column indices, at the active instruction-set level.
    fn ell_rows32(y: &mut [f32], diag: &[f32], values: &[f32], cols: &[u32], x: &[f32], own: usize) {
        ell_rows(y, diag, values, cols, x, own)
    }
}

poplar::isa_dispatch! {
    /// [`ell_rows`] with 16-bit column indices, at the active instruction-set level.
    fn ell_rows16(y: &mut [f32], diag: &[f32], values: &[f32], cols: &[u16], x: &[f32], own: usize) {
        ell_rows(y, diag, values, cols, x, own)
    }
}

/// The rows of an SpMV: `y`, `diag`, `values`, `cols`, the local vector `x` and where its own
/// cells start.
type RowsFn<C> = fn(&mut [f32], &[f32], &[f32], &[C], &[f32], usize);

/// Worker cycles per cell of the ECG partial (`cardiac::EcgPartial`): the SpMV row's
/// [`SPMV_ROW_CYCLES`] (the same 16 slots of indices, values and gathered voltages) plus one
/// cycle per slot for the subtraction `V_j − V_i`. An estimate, not a measurement.
pub const ECG_CELL_CYCLES: u64 = SPMV_ROW_CYCLES + ELL_WIDTH as u64;
/// Worker cycles per cell and electrode of the ECG partial: load the weight, multiply-add.
pub const ECG_ELECTRODE_CYCLES: u64 = 2;

/// The ECG partial codelets, one per column-index width: `cardiac::EcgPartial` (u32) and
/// `cardiac::EcgPartial16` (u16), chosen like the tile's SpMV.
macro_rules! ecg_codelets {
    ($($name:ident as $cname:literal: $idx:ty;)*) => {$(
        poplar::codelet! {
            /// The tile's share of the pseudo-ECG (`crate::ecg`): `out[e] = Σ_i w[e·n + i] ·
            /// Σ_s A[i,s] (x[I[i,s]] − x[h + i])` over the tile's `n` cells, in cell order, for
            /// each of the `out.len()` electrodes; `x` is the local vector `[halo | own cells]`
            /// of V, `A`/`I` the off-diagonal slots of the tile's `Z = I + dt·L`.
            /// Multi-worker: on the chip each worker sums the cells `Worker::split(n)` and the
            /// last adds the six partials; on the host the last worker's call sums them all.
            pub struct $name as $cname, multi_worker {
                x: Input<Vector<f32>>,
                values: Input<Vector<f32>>,
                cols: Input<Vector<$idx>>,
                weights: Input<Vector<f32>>,
                out: Output<Vector<f32>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
                if w.id + 1 != w.count {
                    return Ok(());
                }
                ecg_partial(self.x, self.values, self.cols, self.weights, self.out)
            }

            /// One worker's cells: [`SPMV_START_CYCLES`] + ([`ECG_CELL_CYCLES`] +
            /// [`ECG_ELECTRODE_CYCLES`] per electrode) per cell, plus one cycle per electrode
            /// and worker for the sum of the workers' partials.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let workers = u64::from(ctx.workers.max(1));
                let e = ctx.elements(Self::out);
                let n = ctx.elements(Self::weights) / e.max(1);
                let cells = n.div_ceil(workers);
                Some(SPMV_START_CYCLES + cells * (ECG_CELL_CYCLES + ECG_ELECTRODE_CYCLES * e) + e * workers)
            }
        }
    )*};
}

ecg_codelets! {
    EcgPartial as "cardiac::EcgPartial": u32;
    EcgPartial16 as "cardiac::EcgPartial16": u16;
}

/// The body of both ECG partial codelets (see [`EcgPartial`]).
pub fn ecg_partial<C: ColIndex>(
    x: &[f32],
    values: &[f32],
    cols: &[C],
    weights: &[f32],
    out: &mut [f32],
) -> Result<(), VertexError> {
    let e = out.len();
    let n = values.len() / ELL_WIDTH;
    if e == 0
        || values.len() != n * ELL_WIDTH
        || cols.len() != n * ELL_WIDTH
        || weights.len() != e * n
        || x.len() < n
    {
        return Err(VertexError::new(format!(
            "field sizes disagree: out {e}, values {}, cols {}, weights {}, x {}",
            values.len(),
            cols.len(),
            weights.len(),
            x.len()
        )));
    }
    let h = x.len() - n;
    out.fill(0.0);
    for (i, (vals, cs)) in values
        .chunks_exact(ELL_WIDTH)
        .zip(cols.chunks_exact(ELL_WIDTH))
        .enumerate()
    {
        let xi = x[h + i];
        let mut d = 0.0f32;
        for (&a, &c) in vals.iter().zip(cs) {
            d += a * (x[c.index()] - xi);
        }
        for (k, o) in out.iter_mut().enumerate() {
            *o += weights[k * n + i] * d;
        }
    }
    Ok(())
}

/// The body of both SpMV codelets: all rows of the tile.
fn spmv<C: ColIndex>(
    x: &[f32],
    y: &mut [f32],
    diag: &[f32],
    values: &[f32],
    cols: &[C],
    rows: RowsFn<C>,
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
    rows(y, diag, values, cols, x, x.len() - n);
    Ok(())
}

/// The TP06 codelets: `cardiac::Tp06Step`, and `cardiac::Tp06StepFrom` with a `v_in` field.
///
/// On the chip, worker `w` steps the cells `w.split(n)` (its columns of every state row), all
/// from the clock's value before the step, which the last worker then advances; the cycle
/// estimate is one worker's share. On the host, the last worker's call steps every cell of the
/// tile and advances the clock, and the other calls return at once (see the module's notes).
macro_rules! tp06_codelets {
    ($($(#[$doc:meta])* $name:ident as $cname:literal $(, voltage from $vin:ident)?;)*) => {$(
        poplar::codelet! {
            $(#[$doc])*
            pub struct $name as $cname, multi_worker {
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
                // The host runs the whole vertex in the last worker's call.
                if w.id + 1 != w.count {
                    return Ok(());
                }
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
                let t = *self.time;
                tp06_cells(0..n, t, v_in, OdeFields {
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
                    dt: self.dt,
                    act_threshold: self.act_threshold,
                    repol_level: self.repol_level,
                });
                *self.time = super::next_time(t, self.dt);
                Ok(())
            }

            /// One worker's cells (at most `ceil(n / workers)`): [`TP06_START_CYCLES`] +
            /// [`TP06_CELL_CYCLES`] per cell, plus the `v_in` copy for `Tp06StepFrom`.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let cells = ctx.elements(Self::v_prev).div_ceil(u64::from(ctx.workers.max(1)));
                // The `v_in` copy: only in the codelet with that field.
                let copy = 0 $(+ { let _ = Self::$vin; v_in_copy_cycles(cells) })?;
                Some(TP06_START_CYCLES + TP06_CELL_CYCLES * cells + copy)
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

/// The fields of both TP06 codelets, except the clock.
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
    dt: f32,
    act_threshold: f32,
    repol_level: f32,
}

/// Most stimulus classes a TP06 vertex computes currents for (class ids are `u8`).
const MAX_CLASSES: usize = 256;

/// The body of both TP06 codelets over `cells` of the tile, for the step that starts at `t`:
/// the voltage from `v_in` if given, the TP06 step, then the activation and crossing updates.
/// Field sizes are checked by the caller.
fn tp06_cells(cells: Range<usize>, t: f32, v_in: Option<&[f32]>, f: OdeFields<'_>) {
    let n = f.v_prev.len();
    let r = cells;
    if let Some(v) = v_in {
        f.s[r.clone()].copy_from_slice(&v[r.clone()]);
    }
    // Host-side hint: bring in the activation inputs now, so they are cached when the check
    // below runs (they are two short per-tile arrays the hardware prefetcher does not pick up;
    // their loads stalled for most of the check's time).
    for (a, v) in f.act[r.clone()]
        .iter()
        .zip(f.v_prev[r.clone()].iter())
        .step_by(16)
    {
        poplar::codelet::prefetch(a);
        poplar::codelet::prefetch(v);
    }
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
        model: &f.cell_model[r.clone()],
        stim: tp06::Stim::Classes {
            class: &f.stim_class[r.clone()],
            current: class_current,
        },
        dt: f.dt,
    };
    step_cells(f.s, n, r.clone(), &batch);
    let v = &f.s[r.clone()];
    let v_prev = &mut f.v_prev[r.clone()];
    let th = f.act_threshold;
    tp06::update_activation(v_prev, v, t, f.dt, th, &mut f.act[r.clone()]);
    tp06::update_crossings(
        v_prev,
        v,
        t,
        f.dt,
        th,
        f.repol_level,
        &mut f.last_up[r.clone()],
        &mut f.last_down[r],
    );
    v_prev.copy_from_slice(v);
}

/// One TP06 step of `cells` of the `n`-cell state-major states `s` (`s[k * n + i]`), with
/// `batch`'s per-cell slices starting at `cells.start`. The batch kernel steps all `n'` cells of
/// an `n'`-strided array: the whole tile (the host's sweep) is stepped in place; a part of it
/// (one worker's share on the chip: `tp06_worker_split_gives_the_same_bits`) is gathered into
/// a buffer of its own, stepped and written back.
fn step_cells(s: &mut [f32], n: usize, cells: Range<usize>, batch: &tp06::Batch<'_>) {
    let m = cells.len();
    // The blocks report their progress so that the engine fetches the next tile meanwhile; as
    // one worker's, since the host's one call steps the whole tile (a report from worker 5 of
    // 6 would count the tile as five sixths done before it starts).
    let mut progress = |end| Worker { id: 0, count: 1 }.progress(end, m);
    if m == n {
        tp06::step_batch_of(s, n, batch, &mut progress);
        return;
    }
    let ns = tp06::N_STATES;
    let mut part = vec![0.0f32; ns * m];
    for (k, row) in part.chunks_exact_mut(m.max(1)).enumerate() {
        row.copy_from_slice(&s[k * n + cells.start..][..m]);
    }
    tp06::step_batch_of(&mut part, m, batch, &mut progress);
    for (k, row) in part.chunks_exact(m.max(1)).enumerate() {
        s[k * n + cells.start..][..m].copy_from_slice(row);
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::SiteSchedule;

    /// The arrays a TP06 vertex writes.
    #[derive(Clone, PartialEq, Debug)]
    struct Written {
        s: Vec<u32>,
        v_prev: Vec<u32>,
        act: Vec<u32>,
        last_up: Vec<u32>,
        last_down: Vec<u32>,
    }

    /// `steps` TP06 steps of a tile of `n` cells of the three published models, the first ten
    /// stimulated, each step taking its voltage from a `v_in` a little off the V row; each
    /// step over the `ranges` of cells one after another, as the workers would.
    fn run(n: usize, steps: usize, ranges: &[Range<usize>]) -> Written {
        let ns = tp06::N_STATES;
        let mut s = vec![0.0f32; ns * n];
        for i in 0..n {
            let init = tp06::initial_state(tp06::CellType::from_value((i % 3) as f64).unwrap());
            for (k, &x) in init.iter().enumerate() {
                s[k * n + i] = x as f32;
            }
        }
        let mut v_prev = s[..n].to_vec();
        let (mut act, mut last_up, mut last_down) =
            (vec![-1.0f32; n], vec![-1.0; n], vec![-1.0; n]);
        let cell_model: Vec<u8> = (0..n).map(|i| (i % 3) as u8).collect();
        let models: Vec<f32> = tp06::published_models().concat();
        let stim_class: Vec<u8> = (0..n).map(|i| u8::from(i < 10)).collect();
        let site = SiteSchedule {
            current: -52.0,
            start: 0.0,
            duration: 2.0,
            period: 0.0,
            count: 1.0,
            s2_start: -1.0,
        };
        let sites = site.to_fields();
        // Class 0: no sites; class 1: site 0.
        let (class_start, class_sites) = ([0u32, 0, 1], [0u8]);
        let dt = 0.05f32;
        let mut t = 0.0f32;
        for _ in 0..steps {
            let v_in: Vec<f32> = (0..n).map(|i| s[i] + 0.01 * (i % 4) as f32).collect();
            for r in ranges {
                let f = OdeFields {
                    s: &mut s,
                    v_prev: &mut v_prev,
                    act: &mut act,
                    last_up: &mut last_up,
                    last_down: &mut last_down,
                    cell_model: &cell_model,
                    models: &models,
                    stim_class: &stim_class,
                    sites: &sites,
                    class_start: &class_start,
                    class_sites: &class_sites,
                    dt,
                    act_threshold: 0.0,
                    repol_level: -70.0,
                };
                tp06_cells(r.clone(), t, Some(&v_in), f);
            }
            t = crate::solver::next_time(t, dt);
        }
        assert!(
            act[..10].iter().all(|&a| a > 0.0),
            "the stimulated cells activate"
        );
        let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect();
        Written {
            s: bits(&s),
            v_prev: bits(&v_prev),
            act: bits(&act),
            last_up: bits(&last_up),
            last_down: bits(&last_down),
        }
    }

    #[test]
    fn tp06_worker_split_gives_the_same_bits() {
        // 45 cells: neither a multiple of the six workers nor of the kernel's 8-cell blocks, so
        // the chip's split (7 or 8 cells a worker) steps each worker's cells in a block of its
        // own, padded or not, while the host's one sweep steps them in blocks from cell 0.
        let n = 45;
        let split: Vec<Range<usize>> = (0..6).map(|id| Worker { id, count: 6 }.split(n)).collect();
        assert_eq!(split.iter().map(Range::len).max(), Some(8));
        let whole = 0..n;
        assert_eq!(
            run(n, 200, &split),
            run(n, 200, std::slice::from_ref(&whole))
        );
    }

    #[test]
    fn the_ecg_partial_is_the_weighted_sum_of_row_differences() {
        // 7 cells over a local vector with a halo of 5, 3 electrodes; against f64.
        let (n, h, e) = (7usize, 5usize, 3usize);
        let mut rng = poplar::rand::SplitMix64::new(777);
        let mut next = move || rng.next_f32();
        let x: Vec<f32> = (0..h + n).map(|_| -85.0 + 120.0 * next()).collect();
        let values: Vec<f32> = (0..n * ELL_WIDTH).map(|_| next() * 0.01).collect();
        let cols: Vec<u16> = (0..n * ELL_WIDTH)
            .map(|k| ((k * 7 + 3) % (h + n)) as u16)
            .collect();
        let weights: Vec<f32> = (0..e * n).map(|_| next() - 0.5).collect();
        let mut out = vec![0.0f32; e];
        ecg_partial(&x, &values, &cols, &weights, &mut out).unwrap();
        for (k, &o) in out.iter().enumerate() {
            let want: f64 = (0..n)
                .map(|i| {
                    let d: f64 = (0..ELL_WIDTH)
                        .map(|s| {
                            let a = f64::from(values[i * ELL_WIDTH + s]);
                            let c = usize::from(cols[i * ELL_WIDTH + s]);
                            a * (f64::from(x[c]) - f64::from(x[h + i]))
                        })
                        .sum();
                    f64::from(weights[k * n + i]) * d
                })
                .sum();
            assert!(
                (f64::from(o) - want).abs() <= 1e-5 * (1.0 + want.abs()),
                "electrode {k}: {o} against {want}"
            );
        }
        // A uniform voltage gives exactly zero.
        let flat = vec![-85.5f32; h + n];
        ecg_partial(&flat, &values, &cols, &weights, &mut out).unwrap();
        assert_eq!(out, vec![0.0; e]);
        // Fields that disagree are an error naming them, not a panic.
        let err = ecg_partial(&x, &values, &cols, &weights[1..], &mut out).unwrap_err();
        assert!(err.to_string().contains("weights"), "{err}");
    }

    /// `n` pseudo-random ELLPACK rows over a local vector with a halo of `h`: the vector, the
    /// diagonal, the values and the columns.
    fn random_rows(n: usize, h: usize, seed: u64) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<u32>) {
        let mut rng = poplar::rand::SplitMix64::new(seed);
        // 24 random bits, as the values below are scaled for.
        let mut next = move || rng.next_u32() >> 8;
        let x: Vec<f32> = (0..h + n).map(|_| next() as f32 / 1e6 - 8.0).collect();
        let diag: Vec<f32> = (0..n).map(|_| next() as f32 / 1e7).collect();
        let values: Vec<f32> = (0..n * ELL_WIDTH).map(|_| next() as f32 / 1e8).collect();
        let cols: Vec<u32> = (0..n * ELL_WIDTH)
            .map(|_| next() % (h + n) as u32)
            .collect();
        (x, diag, values, cols)
    }

    #[test]
    fn spmv_worker_split_gives_the_same_bits() {
        // 45 rows over a local vector with a halo of 20.
        let (n, h) = (45, 20);
        let (x, diag, values, c32) = random_rows(n, h, 12345);
        let cols: Vec<u16> = c32.iter().map(|&c| c as u16).collect();
        let mut whole = vec![0.0f32; n];
        spmv(&x, &mut whole, &diag, &values, &cols, ell_rows16).unwrap();
        let mut split = vec![0.0f32; n];
        for id in 0..6 {
            let r = Worker { id, count: 6 }.split(n);
            let slots = r.start * ELL_WIDTH..r.end * ELL_WIDTH;
            ell_rows(
                &mut split[r.clone()],
                &diag[r.clone()],
                &values[slots.clone()],
                &cols[slots],
                &x,
                h + r.start,
            );
        }
        let bits = |y: &[f32]| y.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert!(whole.iter().all(|&v| v != 0.0));
        assert_eq!(bits(&split), bits(&whole));
    }

    #[test]
    fn spmv_gives_the_same_bits_at_every_isa_level() {
        let (n, h) = (1000, 300);
        let (mut x, diag, mut values, c32) = random_rows(n, h, 777);
        // Edge operands among the random ones: NaN, ±inf, ±0, subnormals, the largest finite.
        let edges = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            1e-40,
            -3e-39,
            f32::MAX,
            f32::MIN_POSITIVE,
        ];
        for (k, e) in edges.iter().enumerate() {
            x[37 * k + 5] = *e;
            values[977 * k + 11] = *e;
        }
        let c16: Vec<u16> = c32.iter().map(|&c| c as u16).collect();
        let before = poplar::isa::active();
        let mut runs = Vec::new();
        for level in poplar::isa::supported() {
            poplar::isa::set_active(level).unwrap();
            let mut a = vec![0.0f32; n];
            let mut b = vec![0.0f32; n];
            spmv(&x, &mut a, &diag, &values, &c32, ell_rows32).unwrap();
            spmv(&x, &mut b, &diag, &values, &c16, ell_rows16).unwrap();
            let bits: Vec<u32> = a.iter().chain(&b).map(|v| v.to_bits()).collect();
            runs.push((level, bits));
        }
        poplar::isa::set_active(before).unwrap();
        let (_, base) = &runs[0];
        assert_eq!(base[..n], base[n..], "u16 and u32 columns agree");
        for (level, bits) in &runs[1..] {
            assert!(bits == base, "{level} differs from the baseline");
        }
    }

    #[test]
    fn a_column_outside_the_local_vector_is_refused_at_every_isa_level() {
        let (n, h) = (40, 8);
        let (x, diag, values, c32) = random_rows(n, h, 99);
        let mut c16: Vec<u16> = c32.iter().map(|&c| c as u16).collect();
        c16[17 * ELL_WIDTH + 3] = (h + n) as u16; // one past the end
        let before = poplar::isa::active();
        for level in poplar::isa::supported() {
            poplar::isa::set_active(level).unwrap();
            let run = std::panic::catch_unwind(|| {
                let mut y = vec![0.0f32; n];
                ell_rows16(&mut y, &diag, &values, &c16, &x, h);
            });
            assert!(run.is_err(), "{level} read past the local vector");
        }
        poplar::isa::set_active(before).unwrap();
    }
}
