//! The monodomain diffusion operator: cell-centred finite volumes on tetrahedra, assembled into
//! the ELLPACK matrix `Z = I + Δt·L` that one explicit PDE step multiplies with (paper §3.3).
//!
//! (About 750 lines. One concept, the discrete operator: its assembly, its stable time step and
//! its ELLPACK form are derived from the same per-face coefficients and tested against each
//! other.)
//!
//! # Scheme
//! `L v ≈ (1/(χ·Cm)) ∇·(M∇v)` with `M = σt·I + (σl − σt)·f fᵀ` per cell (`f` the unit fibre).
//! For cell `i` with volume `Vᵢ` and centroid `cᵢ`:
//!
//! 1. **Cell gradient** `gᵢ` by weighted least squares (weights `1/|d|²`) over the four faces:
//!    an interior face contributes the row `gᵢ·(cⱼ − cᵢ) = vⱼ − vᵢ`; a boundary face contributes
//!    a *mirror ghost*, the reflection of `cᵢ` across the face plane carrying the value `vᵢ`,
//!    i.e. the row `gᵢ·(2 δ n̂) = 0` — the discrete form of the no-flux wall `∂v/∂n = 0`. Every
//!    row is a difference of values, so a constant field has `gᵢ = 0` exactly (the
//!    constant-field property), and the 3×3 normal matrix is always invertible for a
//!    non-degenerate tet (four independent directions even at a corner cell).
//! 2. **Face gradient** on the interior face `(i, j)`: the average `ĝ = (gᵢ + gⱼ)/2`, with its
//!    component along `e = (cⱼ − cᵢ)/|cⱼ − cᵢ|` replaced by the two-point difference:
//!    `g_f = ĝ + ((vⱼ − vᵢ)/|d| − ĝ·e) e`. The two-point part keeps the stencil compact and
//!    dominant; the averaged gradients only carry the non-orthogonal part.
//! 3. **Flux** `F = S·M_f g_f`, `S` the face's area vector (outward from `i`), `M_f = (Mᵢ + Mⱼ)/2`.
//!    Boundary faces carry no flux (no-flux walls).
//! 4. `(L v)ᵢ = (1/(χ Cm Vᵢ)) Σ_faces F`.
//!
//! Row `i` therefore couples `i` to its ≤ 4 face neighbours (two-point part and their
//! gradients) and to *their* face neighbours (through `gⱼ`): at most 4 + 4·3 = 16 off-diagonals,
//! the paper's ELLPACK width.
//!
//! # Guaranteed properties (tested in `tests/matrix.rs`)
//! * **Constant preservation**: every row of `L` sums to zero (up to rounding), so `Z`
//!   preserves constants.
//! * **Conservation**: each face flux is computed once and added to one cell and subtracted
//!   from the other, so `Σᵢ Vᵢ (L v)ᵢ = 0` for every `v` (column sums of `diag(V)·L` vanish).
//! * `L` is *not* an M-matrix in general (second-tier coefficients can be negative), so no
//!   discrete maximum principle is claimed; see [`Operator::stable_dt`] for the step bound.
//!
//! # Accuracy (measured in `tests/matrix.rs`)
//! Linear fields are reproduced exactly away from walls. The pointwise truncation error for a
//! smooth field does *not* vanish under refinement (first-order face gradients divided by the
//! cell size — as for compact cell-centred schemes on tetrahedra generally), but the error in
//! weak norms and in the time-dependent solution converges at second order (supraconvergence):
//! that is what a simulation sees.
//!
//! # Step size
//! On the Kuhn-split Niederer slab the bound of [`Operator::stable_dt`] is about 0.146, 0.0234
//! and 0.00585 ms at dx = 0.5, 0.2 and 0.1 mm — roughly 7× below the hexahedral-grid formula,
//! because the six tets of a hex are small and sliver-like. Runs with Δt_ODE = 0.05 ms
//! therefore sub-step the PDE (paper §3.3's multi-stepping).
//!
//! Units: mm, ms, mV; σ in S/m (= mS/mm), χ in mm⁻¹, Cm in µF/mm², so `σ/(χ Cm)` is in mm²/ms.

use crate::mesh::geometry::{cross, dot, sub};
use crate::mesh::TetMesh;

/// `c / x`, or infinity when `x` is 0 (a row that bounds no step).
fn reciprocal(x: f64, c: f64) -> f64 {
    if x > 0.0 {
        c / x
    } else {
        f64::INFINITY
    }
}

/// Off-diagonal slots per ELLPACK row (4 face neighbours + 12 second-tier neighbours).
pub const ELL_WIDTH: usize = 16;

/// Safety factor applied by [`Operator::stable_dt`] to the bounds of [`StabilityBounds`].
pub const STABILITY_SAFETY: f64 = 0.9;

/// Errors of the operator assembly. Each names the offending cell so a bad mesh can be fixed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MatrixError {
    #[error("conductivity parameters must be finite and > 0: {0}")]
    BadConductivity(String),
    #[error("orthotropic conductivity (σn ≠ σt) needs sheet directions, but the mesh has none")]
    MissingSheets,
    #[error("anisotropic conductivity (σl ≠ σt) needs fibres, but the mesh has none")]
    MissingFibres,
    #[error("mesh has {got} {what} for {cells} cells")]
    LengthMismatch {
        what: &'static str,
        got: usize,
        cells: usize,
    },
    #[error("cell {cell}: fibre {fibre:?} is not a finite non-zero vector")]
    BadFibre { cell: usize, fibre: [f64; 3] },
    #[error("cell {cell}: node index {node} out of range ({nodes} nodes)")]
    BadNode {
        cell: usize,
        node: u32,
        nodes: usize,
    },
    #[error("cell {cell}: degenerate tetrahedron (volume {volume:e} mm³)")]
    DegenerateCell { cell: usize, volume: f64 },
    #[error("cell {cell}: face neighbour {neighbour} out of range")]
    BadNeighbour { cell: usize, neighbour: u32 },
    #[error("cell {cell}: neighbour {neighbour} does not list it back (asymmetric adjacency)")]
    AsymmetricAdjacency { cell: usize, neighbour: u32 },
    #[error("cell {cell}: least-squares gradient is singular (coincident centroids?)")]
    SingularGradient { cell: usize },
    #[error("cell {cell}: row needs {count} off-diagonals, ELLPACK holds {ELL_WIDTH}")]
    RowTooWide { cell: usize, count: usize },
    #[error("mesh has more than u32::MAX cells")]
    TooManyCells,
}

/// Conductivities and membrane constants (units: S/m = mS/mm, mm⁻¹, µF/mm²).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conductivity {
    /// Monodomain conductivity along the fibre.
    pub sigma_l: f64,
    /// Monodomain conductivity across the fibre (along the sheet when the mesh has sheets).
    pub sigma_t: f64,
    /// Monodomain conductivity along the sheet normal (orthotropic tissue; needs a mesh with
    /// sheets unless it equals `sigma_t`, the transversely isotropic case).
    pub sigma_n: f64,
    /// Surface-to-volume ratio χ.
    pub chi: f64,
    /// Membrane capacitance per area Cm.
    pub cm: f64,
}

impl Conductivity {
    /// The Niederer benchmark values: monodomain σ = σi σe / (σi + σe) from σi = (0.17, 0.019)
    /// and σe = (0.62, 0.24) S/m (≈ 0.1334 and 0.0176 S/m), χ = 140 mm⁻¹, Cm = 0.01 µF/mm².
    /// Computed from the bidomain values rather than typed rounded so the operator matches
    /// other benchmark codes to all digits.
    pub fn niederer() -> Self {
        let harmonic = |si: f64, se: f64| si * se / (si + se);
        Conductivity {
            sigma_l: harmonic(0.17, 0.62),
            sigma_t: harmonic(0.019, 0.24),
            sigma_n: harmonic(0.019, 0.24),
            chi: 140.0,
            cm: 0.01,
        }
    }

    /// Isotropic tissue `M = σ·I` (fibres are then ignored), with the Niederer χ and Cm.
    pub fn isotropic(sigma: f64) -> Self {
        Conductivity {
            sigma_l: sigma,
            sigma_t: sigma,
            sigma_n: sigma,
            ..Self::niederer()
        }
    }

    /// True when `σl == σt == σn`, i.e. fibres do not matter.
    pub fn is_isotropic(&self) -> bool {
        self.sigma_l == self.sigma_t && self.sigma_t == self.sigma_n
    }

    /// True when `σn ≠ σt`: the tensor needs sheets.
    pub fn is_orthotropic(&self) -> bool {
        self.sigma_n != self.sigma_t
    }

    /// The orthotropic tensor `σt·I + (σl − σt) f fᵀ + (σn − σt) n nᵀ` for a unit fibre `f`
    /// and a unit sheet `s` orthogonal to it, `n = f × s`: `M f = σl f`, `M s = σt s`,
    /// `M n = σn n`. With `σn = σt` it is [`Conductivity::tensor`], bit for bit.
    pub fn tensor_orthotropic(&self, f: [f64; 3], s: [f64; 3]) -> [[f64; 3]; 3] {
        let mut m = self.tensor(f);
        let n = cross(f, s);
        for (a, row) in m.iter_mut().enumerate() {
            for (b, e) in row.iter_mut().enumerate() {
                *e += (self.sigma_n - self.sigma_t) * n[a] * n[b];
            }
        }
        m
    }

    /// The conductivity tensor `σt·I + (σl − σt) f fᵀ` for a unit fibre `f`.
    pub fn tensor(&self, f: [f64; 3]) -> [[f64; 3]; 3] {
        let mut m = [[0.0; 3]; 3];
        for (a, row) in m.iter_mut().enumerate() {
            for (b, e) in row.iter_mut().enumerate() {
                *e = (self.sigma_l - self.sigma_t) * f[a] * f[b];
                if a == b {
                    *e += self.sigma_t;
                }
            }
        }
        m
    }

    fn validate(&self) -> Result<(), MatrixError> {
        for (name, v) in [
            ("sigma_l", self.sigma_l),
            ("sigma_t", self.sigma_t),
            ("sigma_n", self.sigma_n),
            ("chi", self.chi),
            ("cm", self.cm),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(MatrixError::BadConductivity(format!("{name} = {v}")));
            }
        }
        Ok(())
    }
}

impl Default for Conductivity {
    fn default() -> Self {
        Self::niederer()
    }
}

/// The assembled `L` in f64: a diagonal plus ≤ 16 off-diagonals per row (CSR), with the cell
/// geometry the scheme used (handy for sources, probes and tests).
///
/// Off-diagonals of a row are sorted by column; this order is the ELLPACK slot order and hence
/// the summation order of [`Ellpack::spmv`].
#[derive(Debug, Clone, PartialEq)]
pub struct Operator {
    n: usize,
    diag: Vec<f64>,
    row_ptr: Vec<usize>,
    cols: Vec<u32>,
    vals: Vec<f64>,
    volumes: Vec<f64>,
    centroids: Vec<[f64; 3]>,
}

/// The two step bounds [`Operator::stable_dt`] combines (ms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StabilityBounds {
    /// `1 / maxᵢ |Lᵢᵢ|`: the largest Δt with every diagonal entry of `Z` non-negative.
    pub dt_diagonal: f64,
    /// `2 / ρ_G` with `ρ_G = maxᵢ (|Lᵢᵢ| + Σⱼ |Lᵢⱼ|)` the Gershgorin bound on the spectral
    /// radius: forward Euler is stable for a real non-positive spectrum when `Δt·ρ ≤ 2`.
    pub dt_gershgorin: f64,
}

/// The ELLPACK form of `Z = I + Δt·L` in f32 (paper §3.3): diagonal `D` separate, off-diagonals
/// in `n × 16` row-major arrays. Padding slots have `col = row` and value `0`.
#[derive(Debug, Clone, PartialEq)]
pub struct Ellpack {
    pub n: usize,
    pub diag: Vec<f32>,
    pub values: Vec<f32>,
    pub cols: Vec<u32>,
}

impl Ellpack {
    /// `y = D∘x + Σ A x[I]` in f32, in a fixed order: `acc = D[i]*x[i]`, then
    /// `acc = acc + A[i,s]*x[I[i,s]]` for `s = 0..16` — separate multiply and add (no FMA).
    /// The framework codelet does exactly this, so host and tile results agree bit for bit.
    ///
    /// # Panics
    /// If `x.len()` or `y.len()` differ from `n` (a caller bug, not bad data).
    pub fn spmv(&self, x: &[f32], y: &mut [f32]) {
        assert_eq!(x.len(), self.n, "Ellpack::spmv: x has the wrong length");
        assert_eq!(y.len(), self.n, "Ellpack::spmv: y has the wrong length");
        ell_rows(y, &self.diag, &self.values, &self.cols, x, 0);
    }

    /// The off-diagonal columns of row `i` that are real couplings (padding skipped).
    pub fn row_cols(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        self.cols[i * ELL_WIDTH..(i + 1) * ELL_WIDTH]
            .iter()
            .copied()
            .filter(move |&c| c as usize != i)
    }
}

/// A column index of an ELLPACK row: `u32` for global rows, `u16` for a tile's local rows
/// (a tile's local vector is far shorter than 65,536 cells, and half-width indices halve the
/// index bytes an SpMV streams).
pub trait ColIndex: Copy + Send + Sync + 'static {
    fn index(self) -> usize;
}
impl ColIndex for u32 {
    #[inline]
    fn index(self) -> usize {
        self as usize
    }
}
impl ColIndex for u16 {
    #[inline]
    fn index(self) -> usize {
        usize::from(self)
    }
}

/// One ELLPACK row in the canonical order: `D[i]·x[i]`, then the 16 slots. Every SpMV of the
/// app (global, per-tile, native, codelet) goes through this function, whatever the index
/// width, so all produce identical bits.
#[inline]
pub fn ell_row<C: ColIndex>(d: f32, xi: f32, vals: &[f32], cols: &[C], x: &[f32]) -> f32 {
    let mut acc = d * xi;
    for (&a, &c) in vals.iter().zip(cols) {
        acc += a * x[c.index()];
    }
    acc
}

/// Rows ahead of the current one whose matrix slots [`ell_rows`] asks the CPU to prefetch.
const PREFETCH_ROWS: usize = 32;

/// `y[i] = ell_row(diag[i], x[own + i], row i of values/cols, x)` for every row of `y`: the
/// SpMV loop of both solvers (native chunks, with `own` the chunk's first global row; tile
/// codelets, with `own` the halo length, since a local vector is `[halo | own cells]`).
///
/// It prefetches the slots of the row 32 ahead. On a tile's arrays (a few
/// thousand rows between other tile data) the hardware prefetcher alone left the loop waiting
/// on memory: per-tile blocks ran at 2.2x the time of the same rows in global arrays (0.2 mm
/// slab, one thread, host experiment), 1.4x with this hint; global arrays are unaffected.
///
/// # Panics
/// If the slices are shorter than `y` implies, or an index is outside `x` (caller bug).
#[inline]
pub fn ell_rows<C: ColIndex>(
    y: &mut [f32],
    diag: &[f32],
    values: &[f32],
    cols: &[C],
    x: &[f32],
    own: usize,
) {
    // The loop below prefetches 32 rows ahead; ask for the first 32 now, and for the short
    // `diag` and `y` streams whole (a tile's are a few hundred rows, so each call would
    // otherwise start with a run of misses).
    for line in values.iter().take(PREFETCH_ROWS * ELL_WIDTH).step_by(16) {
        poplar::codelet::prefetch(line);
    }
    let col_line = 64 / std::mem::size_of::<C>();
    for line in cols
        .iter()
        .take(PREFETCH_ROWS * ELL_WIDTH)
        .step_by(col_line)
    {
        poplar::codelet::prefetch(line);
    }
    for (d, y) in diag.iter().zip(y.iter()).step_by(16) {
        poplar::codelet::prefetch(d);
        poplar::codelet::prefetch(y);
    }
    let rows = y.iter_mut().zip(diag).zip(
        values
            .chunks_exact(ELL_WIDTH)
            .zip(cols.chunks_exact(ELL_WIDTH)),
    );
    for (i, ((y, &d), (vals, cs))) in rows.enumerate() {
        let ahead = (i + PREFETCH_ROWS) * ELL_WIDTH;
        if let (Some(v), Some(c)) = (values.get(ahead), cols.get(ahead)) {
            poplar::codelet::prefetch(v);
            poplar::codelet::prefetch(c);
        }
        *y = ell_row(d, x[own + i], vals, cs, x);
    }
}

impl Operator {
    /// Number of cells (rows).
    pub fn n(&self) -> usize {
        self.n
    }

    /// Diagonal of `L` (1/ms).
    pub fn diag(&self) -> &[f64] {
        &self.diag
    }

    /// Off-diagonal columns and values of row `i` (sorted by column).
    pub fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let r = self.row_ptr[i]..self.row_ptr[i + 1];
        (&self.cols[r.clone()], &self.vals[r])
    }

    /// Cell volumes (mm³).
    pub fn volumes(&self) -> &[f64] {
        &self.volumes
    }

    /// Cell centroids (mm): the points where the cell values live.
    pub fn centroids(&self) -> &[[f64; 3]] {
        &self.centroids
    }

    /// `out = L v` in f64.
    ///
    /// # Panics
    /// If the slices are not `n` long (a caller bug).
    pub fn apply_f64(&self, v: &[f64], out: &mut [f64]) {
        assert_eq!(
            v.len(),
            self.n,
            "Operator::apply_f64: v has the wrong length"
        );
        assert_eq!(
            out.len(),
            self.n,
            "Operator::apply_f64: out has the wrong length"
        );
        for (i, o) in out.iter_mut().enumerate() {
            let (cols, vals) = self.row(i);
            let mut acc = self.diag[i] * v[i];
            for (&c, &a) in cols.iter().zip(vals) {
                acc += a * v[c as usize];
            }
            *o = acc;
        }
    }

    /// Row `i`'s `|Lᵢᵢ|` and Gershgorin radius `|Lᵢᵢ| + Σⱼ|Lᵢⱼ|`; `None` when a coefficient is
    /// not finite (conductivities overflowing f64).
    fn row_magnitudes(&self, i: usize) -> Option<(f64, f64)> {
        let d = self.diag[i].abs();
        let off: f64 = self.row(i).1.iter().map(|a| a.abs()).sum();
        (d.is_finite() && off.is_finite()).then_some((d, d + off))
    }

    /// The two bounds behind [`Operator::stable_dt`]. Coefficients that are not finite
    /// (conductivities overflowing f64) are stable at no step: both bounds are then 0.
    pub fn stability_bounds(&self) -> StabilityBounds {
        let mut max_diag = 0.0f64;
        let mut rho = 0.0f64;
        for i in 0..self.n {
            let Some((d, r)) = self.row_magnitudes(i) else {
                return StabilityBounds {
                    dt_diagonal: 0.0,
                    dt_gershgorin: 0.0,
                };
            };
            max_diag = max_diag.max(d);
            rho = rho.max(r);
        }
        StabilityBounds {
            dt_diagonal: reciprocal(max_diag, 1.0),
            dt_gershgorin: reciprocal(rho, 2.0),
        }
    }

    /// Each cell's own share of [`Operator::stable_dt`]: `STABILITY_SAFETY × min(1/|Lᵢᵢ|,
    /// 2/(|Lᵢᵢ| + Σⱼ|Lᵢⱼ|))` (ms), whose minimum is the operator's stable step. A cell far below
    /// the median is one whose volume is small against its faces (a sliver): it alone bounds
    /// the step of the whole mesh. Not finite coefficients give 0.
    pub fn cell_stable_dt(&self) -> Vec<f64> {
        (0..self.n)
            .map(|i| {
                self.row_magnitudes(i).map_or(0.0, |(d, r)| {
                    STABILITY_SAFETY * reciprocal(d, 1.0).min(reciprocal(r, 2.0))
                })
            })
            .collect()
    }

    /// Largest PDE step (ms) we trust for explicit Euler:
    /// `STABILITY_SAFETY × min(1/maxᵢ|Lᵢᵢ|, 2/ρ_G)` (see [`StabilityBounds`]).
    ///
    /// Why both: the diagonal criterion (`Z` diagonal ≥ 0) is the one the paper's code and
    /// the Niederer note use, and on a regular grid it is exactly the classic
    /// `dx²/(2(D_L + 2D_T))`; the Gershgorin term additionally bounds the spectral radius, which
    /// is what forward-Euler stability needs (`Δt·ρ ≤ 2` for a real non-positive spectrum).
    /// Our `L` is not an M-matrix, so neither alone is a proof; the 0.9 safety factor covers
    /// the gap, and `tests/matrix.rs` checks it empirically by power iteration and by running
    /// `Z` for many steps.
    pub fn stable_dt(&self) -> f64 {
        let b = self.stability_bounds();
        STABILITY_SAFETY * b.dt_diagonal.min(b.dt_gershgorin)
    }

    /// `Z = I + dt·L` rounded to f32 in ELLPACK form, slots in this operator's column order.
    pub fn to_ellpack(&self, dt: f64) -> Ellpack {
        let n = self.n;
        let mut diag = Vec::with_capacity(n);
        let mut values = vec![0.0f32; n * ELL_WIDTH];
        let mut cols = vec![0u32; n * ELL_WIDTH];
        for i in 0..n {
            diag.push((1.0 + dt * self.diag[i]) as f32);
            let (rc, rv) = self.row(i);
            let slots = i * ELL_WIDTH..(i + 1) * ELL_WIDTH;
            // Padding: column = the row itself with value 0, so padded slots read a value the
            // tile owns anyway and add exactly zero.
            cols[slots].fill(i as u32);
            for (s, (&c, &a)) in rc.iter().zip(rv).enumerate() {
                values[i * ELL_WIDTH + s] = (dt * a) as f32;
                cols[i * ELL_WIDTH + s] = c;
            }
        }
        Ellpack {
            n,
            diag,
            values,
            cols,
        }
    }
}

fn scale(s: f64, a: [f64; 3]) -> [f64; 3] {
    [s * a[0], s * a[1], s * a[2]]
}
fn matvec(m: &[[f64; 3]; 3], v: [f64; 3]) -> [f64; 3] {
    [dot(m[0], v), dot(m[1], v), dot(m[2], v)]
}

/// Inverse of a symmetric positive semi-definite 3×3 matrix, or `None` when (relatively)
/// singular.
fn inverse3(m: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let c0 = cross(m[1], m[2]);
    let c1 = cross(m[2], m[0]);
    let c2 = cross(m[0], m[1]);
    let det = dot(m[0], c0);
    let scale_ref = (m[0][0] * m[1][1] * m[2][2]).abs();
    if !(det.is_finite() && det.abs() > 1e-12 * scale_ref && det != 0.0) {
        return None;
    }
    // Rows of the adjugate transpose are the cofactor columns; m symmetric so this is fine.
    let inv = 1.0 / det;
    Some([
        [c0[0] * inv, c1[0] * inv, c2[0] * inv],
        [c0[1] * inv, c1[1] * inv, c2[1] * inv],
        [c0[2] * inv, c1[2] * inv, c2[2] * inv],
    ])
}

/// Per-cell geometry the scheme needs.
struct Geometry {
    centroid: Vec<[f64; 3]>,
    volume: Vec<f64>,
    /// Outward area vector of face k (opposite vertex k).
    face_area: Vec<[[f64; 3]; 4]>,
    face_centroid: Vec<[[f64; 3]; 4]>,
}

fn geometry(mesh: &TetMesh) -> Result<Geometry, MatrixError> {
    let n = mesh.tets.len();
    let mut g = Geometry {
        centroid: Vec::with_capacity(n),
        volume: Vec::with_capacity(n),
        face_area: Vec::with_capacity(n),
        face_centroid: Vec::with_capacity(n),
    };
    for (cell, tet) in mesh.tets.iter().enumerate() {
        let mut p = [[0.0; 3]; 4];
        for (k, &node) in tet.iter().enumerate() {
            p[k] = *mesh.nodes.get(node as usize).ok_or(MatrixError::BadNode {
                cell,
                node,
                nodes: mesh.nodes.len(),
            })?;
        }
        let c = scale(0.25, [0, 1, 2].map(|a| p.iter().map(|q| q[a]).sum::<f64>()));
        let volume = dot(sub(p[1], p[0]), cross(sub(p[2], p[0]), sub(p[3], p[0]))).abs() / 6.0;
        let edge = [1, 2, 3]
            .iter()
            .map(|&k| dot(sub(p[k], p[0]), sub(p[k], p[0])).sqrt())
            .fold(0.0f64, f64::max);
        if !(volume.is_finite() && volume > 1e-12 * edge.powi(3)) {
            return Err(MatrixError::DegenerateCell { cell, volume });
        }
        let mut fa = [[0.0; 3]; 4];
        let mut fc = [[0.0; 3]; 4];
        for k in 0..4 {
            let [a, b, d] = [(k + 1) % 4, (k + 2) % 4, (k + 3) % 4].map(|m| p[m]);
            let centre = scale(1.0 / 3.0, [0, 1, 2].map(|x| a[x] + b[x] + d[x]));
            let mut s = scale(0.5, cross(sub(b, a), sub(d, a)));
            // Orient away from the opposite vertex: independent of the tet's node order.
            if dot(s, sub(centre, p[k])) < 0.0 {
                s = scale(-1.0, s);
            }
            fa[k] = s;
            fc[k] = centre;
        }
        g.centroid.push(c);
        g.volume.push(volume);
        g.face_area.push(fa);
        g.face_centroid.push(fc);
    }
    Ok(g)
}

/// Accumulates one sparse row: the diagonal plus (column, value) pairs, merged on insert.
#[derive(Default)]
struct RowAcc {
    diag: f64,
    off: Vec<(u32, f64)>,
}

impl RowAcc {
    fn add(&mut self, row: usize, col: u32, v: f64) {
        if col as usize == row {
            self.diag += v;
        } else if let Some(e) = self.off.iter_mut().find(|e| e.0 == col) {
            e.1 += v;
        } else {
            self.off.push((col, v));
        }
    }
}

/// Assembles `L` for `mesh` (see the module docs for the scheme and its guarantees).
pub fn assemble_operator(mesh: &TetMesh, c: &Conductivity) -> Result<Operator, MatrixError> {
    c.validate()?;
    let n = mesh.tets.len();
    if n > u32::MAX as usize - 1 {
        return Err(MatrixError::TooManyCells);
    }
    let geo = geometry(mesh)?;
    let nb = mesh.face_neighbours();
    if nb.len() != n {
        return Err(MatrixError::LengthMismatch {
            what: "face-neighbour rows",
            got: nb.len(),
            cells: n,
        });
    }
    check_adjacency(&nb)?;
    let tensors = cell_tensors(mesh, c)?;
    let grad_w = gradient_weights(&geo, &nb)?;
    let rows = flux_rows(&geo, &nb, &tensors, &grad_w, c);
    into_operator(rows, geo)
}

/// Every face neighbour is another cell of the mesh that has this cell as a neighbour too.
fn check_adjacency(nb: &[[u32; 4]]) -> Result<(), MatrixError> {
    let n = nb.len();
    for (cell, row) in nb.iter().enumerate() {
        for &j in row {
            if j == u32::MAX {
                continue;
            }
            if j as usize >= n || j as usize == cell {
                return Err(MatrixError::BadNeighbour { cell, neighbour: j });
            }
            if !nb[j as usize].contains(&(cell as u32)) {
                return Err(MatrixError::AsymmetricAdjacency { cell, neighbour: j });
            }
        }
    }
    Ok(())
}

/// The conductivity tensor of each cell (along its fibre and sheet when anisotropic).
fn cell_tensors(mesh: &TetMesh, c: &Conductivity) -> Result<Vec<[[f64; 3]; 3]>, MatrixError> {
    let n = mesh.tets.len();
    Ok(if c.is_isotropic() {
        vec![c.tensor([0.0; 3]); n]
    } else {
        let fibres = mesh.fibres.as_ref().ok_or(MatrixError::MissingFibres)?;
        // Sheets only matter (and are only required) when σn ≠ σt.
        let sheets = if c.is_orthotropic() {
            let sh = mesh.sheets.as_ref().ok_or(MatrixError::MissingSheets)?;
            if sh.len() != n {
                return Err(MatrixError::LengthMismatch {
                    what: "sheets",
                    got: sh.len(),
                    cells: n,
                });
            }
            Some(sh)
        } else {
            None
        };
        if fibres.len() != n {
            return Err(MatrixError::LengthMismatch {
                what: "fibres",
                got: fibres.len(),
                cells: n,
            });
        }
        fibres
            .iter()
            .enumerate()
            .map(|(cell, &f)| {
                let len = dot(f, f).sqrt();
                if !(len.is_finite() && len > 0.0) {
                    return Err(MatrixError::BadFibre { cell, fibre: f });
                }
                let f = scale(1.0 / len, f);
                Ok(match sheets {
                    Some(sh) => c.tensor_orthotropic(f, sh[cell]),
                    None => c.tensor(f),
                })
            })
            .collect::<Result<_, _>>()?
    })
}

/// Least-squares gradient weights: gᵢ = Σₖ a[i][k] (v_{nb[i][k]} − vᵢ) over interior faces
/// (boundary mirror-ghost rows have Δv = 0 and only enter the normal matrix).
fn gradient_weights(geo: &Geometry, nb: &[[u32; 4]]) -> Result<Vec<[[f64; 3]; 4]>, MatrixError> {
    let n = nb.len();
    let mut grad_w = vec![[[0.0f64; 3]; 4]; n];
    for i in 0..n {
        let mut dirs = [[0.0; 3]; 4];
        let mut w = [0.0; 4];
        let mut normal = [[0.0f64; 3]; 3];
        for k in 0..4 {
            let d = match nb[i][k] {
                u32::MAX => {
                    let s = geo.face_area[i][k];
                    let nhat = scale(1.0 / dot(s, s).sqrt(), s);
                    scale(
                        2.0 * dot(sub(geo.face_centroid[i][k], geo.centroid[i]), nhat),
                        nhat,
                    )
                }
                j => sub(geo.centroid[j as usize], geo.centroid[i]),
            };
            let d2 = dot(d, d);
            if !(d2 > 0.0 && d2.is_finite()) {
                return Err(MatrixError::SingularGradient { cell: i });
            }
            dirs[k] = d;
            w[k] = 1.0 / d2;
            for (a, row) in normal.iter_mut().enumerate() {
                for (b, e) in row.iter_mut().enumerate() {
                    *e += w[k] * d[a] * d[b];
                }
            }
        }
        let inv = inverse3(&normal).ok_or(MatrixError::SingularGradient { cell: i })?;
        for k in 0..4 {
            if nb[i][k] != u32::MAX {
                grad_w[i][k] = scale(w[k], matvec(&inv, dirs[k]));
            }
        }
    }
    Ok(grad_w)
}

/// The rows of the operator: the flux through every interior face (handled once, from the
/// lower index) as coefficients on cell values, scaled by 1 / (χ Cm V) of each side.
fn flux_rows(
    geo: &Geometry,
    nb: &[[u32; 4]],
    tensors: &[[[f64; 3]; 3]],
    grad_w: &[[[f64; 3]; 4]],
    c: &Conductivity,
) -> Vec<RowAcc> {
    let n = nb.len();
    let inv_chi_cm = 1.0 / (c.chi * c.cm);
    let mut rows: Vec<RowAcc> = (0..n).map(|_| RowAcc::default()).collect();
    let mut flux: Vec<(u32, f64)> = Vec::with_capacity(20);
    for i in 0..n {
        for k in 0..4 {
            let j = nb[i][k];
            if j == u32::MAX || (j as usize) < i {
                continue; // boundary: no flux; interior faces are handled once, from the lower index
            }
            let ju = j as usize;
            let s = geo.face_area[i][k];
            let d = sub(geo.centroid[ju], geo.centroid[i]);
            let dist = dot(d, d).sqrt();
            let e = scale(1.0 / dist, d);
            let mut mf = [[0.0; 3]; 3];
            for a in 0..3 {
                for b in 0..3 {
                    mf[a][b] = 0.5 * (tensors[i][a][b] + tensors[ju][a][b]);
                }
            }
            let q = matvec(&mf, s);
            let qe = dot(q, e);
            let t = sub(q, scale(qe, e));
            // F = t·(gᵢ + gⱼ)/2 + (q·e/|d|)(vⱼ − vᵢ), written as coefficients on cell values.
            flux.clear();
            flux.push((j, qe / dist));
            flux.push((i as u32, -qe / dist));
            for (cell, ws) in [(i, &grad_w[i]), (ju, &grad_w[ju])] {
                for m in 0..4 {
                    let other = nb[cell][m];
                    if other == u32::MAX {
                        continue;
                    }
                    let coef = 0.5 * dot(t, ws[m]);
                    flux.push((other, coef));
                    flux.push((cell as u32, -coef));
                }
            }
            let (si, sj) = (inv_chi_cm / geo.volume[i], inv_chi_cm / geo.volume[ju]);
            for &(col, coef) in &flux {
                rows[i].add(i, col, si * coef);
                rows[ju].add(ju, col, -sj * coef);
            }
        }
    }
    rows
}

/// The operator of the accumulated rows: the diagonal, and the off-diagonal entries of each
/// row sorted by column (at most [`ELL_WIDTH`]).
fn into_operator(rows: Vec<RowAcc>, geo: Geometry) -> Result<Operator, MatrixError> {
    let n = rows.len();
    let mut op = Operator {
        n,
        diag: Vec::with_capacity(n),
        row_ptr: Vec::with_capacity(n + 1),
        cols: Vec::with_capacity(n * ELL_WIDTH),
        vals: Vec::with_capacity(n * ELL_WIDTH),
        volumes: geo.volume,
        centroids: geo.centroid,
    };
    op.row_ptr.push(0);
    for (cell, mut r) in rows.into_iter().enumerate() {
        if r.off.len() > ELL_WIDTH {
            return Err(MatrixError::RowTooWide {
                cell,
                count: r.off.len(),
            });
        }
        r.off.sort_by_key(|e| e.0);
        op.diag.push(r.diag);
        for (col, v) in r.off {
            op.cols.push(col);
            op.vals.push(v);
        }
        op.row_ptr.push(op.cols.len());
    }
    Ok(op)
}
