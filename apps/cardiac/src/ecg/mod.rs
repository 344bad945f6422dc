//! The pseudo-ECG: the extracellular potential φ_e at virtual electrodes from the lead-field
//! (Plonsey) integral over the tissue, computed on the device every `--ecg-every` ms, and the
//! limb, augmented and precordial leads of the 12-lead ECG.
//!
//! # Formula and discretisation
//! With the run's monodomain conductivity tensor `M`, a bath of conductivity `σ_b` and
//! `r = |x − x_e|`,
//!
//! ```text
//! φ_e(x_e) = (1 / (4π σ_b)) ∫ (−M∇V)·∇(1/r) dV = (1 / (4π σ_b)) ∫ ∇·(M∇V) / r dV
//! ```
//!
//! (the second form by the divergence theorem and the no-flux walls). `∇·(M∇V)` per cell is
//! what the finite-volume operator already computes: `∫_cell ∇·(M∇V) = Σ_faces F =
//! χ Cm Vol_i (L V)_i` ([`crate::matrix`]), and `L` has zero row sums, so
//!
//! ```text
//! φ_e = Σ_i u_ei Σ_j dt_pde L_ij (V_j − V_i),   u_ei = χ Cm Vol_i / (4π σ_b dt_pde |c_i − x_e|)
//! ```
//!
//! over the off-diagonals `j` of row `i`: the ELLPACK slots of `Z = I + dt_pde L` that every
//! tile already holds. Each tile sums its own cells (the halo of V comes by the same exchange
//! as a diffusion step's) into one partial per electrode; partials are summed over groups of
//! tiles, then the groups on tile 0 ([`crate::solver::device`]), in an order fixed by the
//! executable. Differences `V_j − V_i` are zero in tissue at rest or on a plateau, so the sum
//! is not the small difference of large terms.
//!
//! Units: mm, mV, σ in S/m (= mS/mm), χ in 1/mm, Cm in µF/mm²: φ_e in mV. Sign: a
//! depolarisation front travelling toward an electrode makes it positive.

pub mod plot;

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::matrix::Operator;
use crate::mesh::geometry::{cross, dot, sub};
use crate::mesh::TetMesh;

/// Most electrodes of one run (each costs a weight per cell and an f32 per tile).
pub const MAX_ELECTRODES: usize = 64;

/// Default bath (torso) conductivity σ_b (S/m): the 7 mS/cm commonly taken for blood and
/// saline baths.
pub const DEFAULT_SIGMA_BATH: f64 = 0.7;

/// The bath conductivities σ_b (S/m) accepted: bone's 0.02 to saline's 2 with room on either
/// side. Far outside, the lead field's weights `χ Cm / (4π σ_b)` leave f32 (1e-300 gave an
/// all-NaN ECG, 1e300 an all-zero one).
pub const SIGMA_BATH_RANGE: std::ops::RangeInclusive<f64> = 1e-3..=1e3;

/// Whether `--sigma-bath` is within [`SIGMA_BATH_RANGE`] (NaN is not).
pub fn sigma_bath_ok(sigma: f64) -> bool {
    SIGMA_BATH_RANGE.contains(&sigma)
}

/// Default sampling interval of the ECG (ms).
pub const DEFAULT_ECG_EVERY_MS: f64 = 1.0;

/// An electrode must lie at least this many cell radii (the largest distance from a cell's
/// centroid to its nodes) from every cell centroid: nearer, the one-point quadrature of 1/r
/// over the cell is no longer accurate, and inside a cell it is meaningless.
pub const MIN_DISTANCE_RADII: f64 = 2.0;

/// Errors of the ECG's options and electrodes; each names the electrode, option or file at
/// fault.
#[derive(Debug, thiserror::Error)]
pub enum EcgError {
    #[error("--electrode {0:?}: give NAME=x,y,z with x, y, z in mm (as the mesh, after --scale)")]
    BadSpec(String),
    #[error(
        "electrode name {0:?}: use letters, digits and _ - + . (it names a column of ecg.csv)"
    )]
    BadName(String),
    #[error("{file}, line {line}: {what}")]
    BadFile {
        file: String,
        line: usize,
        what: String,
    },
    #[error("reading the electrode file {file}: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error("electrode {0} is given twice")]
    Duplicate(String),
    #[error("electrode {name}: position {pos:?} is not finite")]
    NonFinite { name: String, pos: [f64; 3] },
    #[error(
        "electrode {name} at ({:.3}, {:.3}, {:.3}) mm is {dist:.3} mm from the centroid of cell \
         {cell}, nearer than {min:.3} mm ({MIN_DISTANCE_RADII} × the cell's radius): the lead \
         field 1/r is not resolved there. Place electrodes outside the tissue",
        pos[0], pos[1], pos[2]
    )]
    TooClose {
        name: String,
        pos: [f64; 3],
        cell: usize,
        dist: f64,
        min: f64,
    },
    #[error("{got} electrodes: at most {MAX_ELECTRODES} are supported")]
    TooMany { got: usize },
    #[error("--sigma-bath {0}: give a conductivity from 0.001 to 1000 S/m (blood and saline baths are 0.7 to 2 S/m)")]
    BadSigma(f64),
    #[error("--ecg-12-lead: {0}")]
    Placement(String),
}

/// A virtual electrode: a name and a position (mm, in the mesh's coordinates after `--scale`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Electrode {
    pub name: String,
    pub pos: [f64; 3],
}

fn check_name(name: &str) -> Result<(), EcgError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-+.".contains(c));
    if ok {
        Ok(())
    } else {
        Err(EcgError::BadName(name.to_string()))
    }
}

fn parse_coords(parts: &[&str]) -> Option<[f64; 3]> {
    if parts.len() != 3 {
        return None;
    }
    let mut p = [0.0; 3];
    for (x, s) in p.iter_mut().zip(parts) {
        *x = s.trim().parse().ok()?;
    }
    Some(p)
}

/// `NAME=x,y,z` (mm) of `--electrode`. Non-finite coordinates are refused by
/// [`check_electrodes`], naming the electrode.
pub fn parse_electrode(text: &str) -> Result<Electrode, EcgError> {
    let (name, coords) = text
        .split_once('=')
        .ok_or_else(|| EcgError::BadSpec(text.to_string()))?;
    let name = name.trim();
    check_name(name)?;
    let parts: Vec<&str> = coords.split(',').collect();
    let pos = parse_coords(&parts).ok_or_else(|| EcgError::BadSpec(text.to_string()))?;
    Ok(Electrode {
        name: name.to_string(),
        pos,
    })
}

/// The electrodes of a CSV file, one `name,x,y,z` (mm) a line; blank lines, `#` comments and
/// a header line `name,x,y,z` are skipped.
pub fn read_electrodes(path: &Path) -> Result<Vec<Electrode>, EcgError> {
    let file = path.display().to_string();
    let text = app_support::input::read_to_string(path).map_err(|source| EcgError::Io {
        file: file.clone(),
        source,
    })?;
    let mut out = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let parts: Vec<&str> = line.split(',').map(str::trim).collect();
        if k == 0 || out.is_empty() {
            let lower: Vec<String> = parts.iter().map(|p| p.to_ascii_lowercase()).collect();
            if lower == ["name", "x", "y", "z"] {
                continue;
            }
        }
        let bad = |what: String| EcgError::BadFile {
            file: file.clone(),
            line: k + 1,
            what,
        };
        if parts.len() != 4 {
            return Err(bad(format!(
                "{line:?}: give name,x,y,z with x, y, z in mm ({} fields)",
                parts.len()
            )));
        }
        check_name(parts[0]).map_err(|e| bad(e.to_string()))?;
        let pos = parse_coords(&parts[1..])
            .ok_or_else(|| bad(format!("{line:?}: x, y and z must be numbers (mm)")))?;
        out.push(Electrode {
            name: parts[0].to_string(),
            pos,
        });
    }
    Ok(out)
}

/// Checks a run's electrodes against its mesh: at most [`MAX_ELECTRODES`], no name twice,
/// finite positions, and each at least [`MIN_DISTANCE_RADII`] cell radii from every cell's
/// centroid.
pub fn check_electrodes(electrodes: &[Electrode], mesh: &TetMesh) -> Result<(), EcgError> {
    if electrodes.len() > MAX_ELECTRODES {
        return Err(EcgError::TooMany {
            got: electrodes.len(),
        });
    }
    let mut seen = BTreeSet::new();
    for e in electrodes {
        if !seen.insert(e.name.as_str()) {
            return Err(EcgError::Duplicate(e.name.clone()));
        }
        if !e.pos.iter().all(|x| x.is_finite()) {
            return Err(EcgError::NonFinite {
                name: e.name.clone(),
                pos: e.pos,
            });
        }
    }
    for cell in 0..mesh.num_cells() {
        let c = mesh.centroid(cell);
        let radius = mesh
            .tet_points(cell)
            .iter()
            .map(|p| distance(*p, c))
            .fold(0.0f64, f64::max);
        let min = MIN_DISTANCE_RADII * radius;
        for e in electrodes {
            let dist = distance(e.pos, c);
            if dist < min {
                return Err(EcgError::TooClose {
                    name: e.name.clone(),
                    pos: e.pos,
                    cell,
                    dist,
                    min,
                });
            }
        }
    }
    Ok(())
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

fn unit(a: [f64; 3]) -> Option<[f64; 3]> {
    let n = dot(a, a).sqrt();
    (n > 0.0 && n.is_finite()).then(|| a.map(|x| x / n))
}
fn axpy(s: f64, a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [s * a[0] + b[0], s * a[1] + b[1], s * a[2] + b[2]]
}

/// The body frame the 12-lead placement assumes for a mesh (see [`twelve_lead`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeartFrame {
    /// Volume-weighted centroid of the cells (mm).
    pub centre: [f64; 3],
    /// Unit long axis, base to apex.
    pub apex: [f64; 3],
    /// Unit "left" axis, perpendicular to the long axis (right ventricle → left ventricle when
    /// the mesh has ENDO_RV and ENDO_LV surfaces).
    pub left: [f64; 3],
    /// Unit anterior axis, `left × superior` with superior = −apex.
    pub anterior: [f64; 3],
    /// Half the mesh's extent along the long axis, and its largest distance from the axis (mm).
    pub half_length: f64,
    pub radius: f64,
}

/// The centroid of the cells touching surface `name` (any case), if it has any.
fn surface_centre(mesh: &TetMesh, name: &str) -> Option<[f64; 3]> {
    let tag = mesh
        .surfaces
        .iter()
        .find(|s| s.name.eq_ignore_ascii_case(name))?;
    let cells = mesh.cells_touching_surface(&tag.name).ok()?;
    if cells.is_empty() {
        return None;
    }
    let mut c = [0.0; 3];
    for &t in &cells {
        c = axpy(1.0, mesh.centroid(t as usize), c);
    }
    Some(c.map(|x| x / cells.len() as f64))
}

/// The eigenvectors of a symmetric 3×3 matrix (Jacobi rotations), largest eigenvalue first.
fn principal_axes(m: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut a = m;
    let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for _ in 0..50 {
        let (mut p, mut q, mut big) = (0, 1, 0.0f64);
        for (i, j) in [(0, 1), (0, 2), (1, 2)] {
            if a[i][j].abs() > big {
                (p, q, big) = (i, j, a[i][j].abs());
            }
        }
        if big <= 1e-15 * (a[0][0].abs() + a[1][1].abs() + a[2][2].abs()) {
            break;
        }
        let theta = 0.5 * (2.0 * a[p][q]).atan2(a[q][q] - a[p][p]);
        let (s, c) = theta.sin_cos();
        for row in a.iter_mut() {
            let (x, y) = (row[p], row[q]);
            row[p] = c * x - s * y;
            row[q] = s * x + c * y;
        }
        let (rp, rq) = (a[p], a[q]);
        for (k, (x, y)) in rp.into_iter().zip(rq).enumerate() {
            a[p][k] = c * x - s * y;
            a[q][k] = s * x + c * y;
        }
        for row in v.iter_mut() {
            let (x, y) = (row[p], row[q]);
            row[p] = c * x - s * y;
            row[q] = s * x + c * y;
        }
    }
    let mut order = [0usize, 1, 2];
    order.sort_by(|&i, &j| a[j][j].total_cmp(&a[i][i]));
    order.map(|k| [v[0][k], v[1][k], v[2][k]])
}

/// The frame of [`twelve_lead`]: the long axis is the principal axis of the cells (volume
/// weighted) of largest extent, pointing away from the BASE surface if the mesh has one (else
/// toward the end farther from the centroid, the apex of a truncated ellipsoid); "left" is
/// from the ENDO_RV to the ENDO_LV surface's cells if the mesh has both (else the second
/// principal axis), made perpendicular to the long axis.
pub fn heart_frame(mesh: &TetMesh) -> Result<HeartFrame, EcgError> {
    let n = mesh.num_cells();
    if n == 0 {
        return Err(EcgError::Placement("the mesh has no cells".into()));
    }
    let mut total = 0.0;
    let mut centre = [0.0; 3];
    for t in 0..n {
        let w = mesh.tet_volume(t).abs();
        total += w;
        centre = axpy(w, mesh.centroid(t), centre);
    }
    let centre = centre.map(|x| x / total);
    let mut cov = [[0.0; 3]; 3];
    for t in 0..n {
        let w = mesh.tet_volume(t).abs() / total;
        let d = sub(mesh.centroid(t), centre);
        for (a, row) in cov.iter_mut().enumerate() {
            for (b, e) in row.iter_mut().enumerate() {
                *e += w * d[a] * d[b];
            }
        }
    }
    let axes = principal_axes(cov);
    let extent = |dir: [f64; 3]| {
        mesh.nodes.iter().fold((0.0f64, 0.0f64), |(lo, hi), p| {
            let s = dot(sub(*p, centre), dir);
            (lo.min(s), hi.max(s))
        })
    };
    let mut apex = axes[0];
    match surface_centre(mesh, "BASE") {
        Some(b) if dot(sub(centre, b), apex) < 0.0 => apex = apex.map(|x| -x),
        Some(_) => {}
        None => {
            let (lo, hi) = extent(apex);
            if -lo > hi {
                apex = apex.map(|x| -x);
            }
        }
    }
    let left_guess = match (
        surface_centre(mesh, "ENDO_RV"),
        surface_centre(mesh, "ENDO_LV"),
    ) {
        (Some(rv), Some(lv)) => sub(lv, rv),
        _ => {
            let a = axes[1];
            // A deterministic sign: the largest component positive.
            let k = (0..3)
                .max_by(|&i, &j| a[i].abs().total_cmp(&a[j].abs()))
                .unwrap_or(0);
            if a[k] < 0.0 {
                a.map(|x| -x)
            } else {
                a
            }
        }
    };
    let left = unit(axpy(-dot(left_guess, apex), apex, left_guess))
        .ok_or_else(|| EcgError::Placement("no direction across the long axis".into()))?;
    let superior = apex.map(|x| -x);
    let anterior = cross(left, superior);
    let (lo, hi) = extent(apex);
    let radius = mesh
        .nodes
        .iter()
        .map(|p| {
            let d = sub(*p, centre);
            let along = dot(d, apex);
            (dot(d, d) - along * along).max(0.0).sqrt()
        })
        .fold(0.0f64, f64::max);
    Ok(HeartFrame {
        centre,
        apex,
        left,
        anterior,
        half_length: 0.5 * (hi - lo),
        radius,
    })
}

/// Distance of the limb electrodes from the centre, in heart sizes (`max(half length,
/// radius)`): about where the shoulders and the hip meet the torso seen from an adult heart.
/// In the infinite medium of this formula a limb far away would see almost nothing; the
/// torso's boundary, which makes real limb leads large, is not modelled.
pub const LIMB_DISTANCE: f64 = 3.0;
/// Distance of the precordial electrodes from the long axis, in heart radii.
pub const CHEST_DISTANCE: f64 = 1.6;
/// Angles of V1–V6 (degrees) in the transverse plane, from anterior toward left.
pub const PRECORDIAL_ANGLES: [f64; 6] = [-20.0, 5.0, 30.0, 50.0, 70.0, 90.0];

/// A standard 12-lead placement for a heart mesh, an approximation that takes the heart's own
/// axes for the body's ([`heart_frame`]): superior = base, left = RV → LV, anterior =
/// left × superior. The limb electrodes RA, LA and LL sit [`LIMB_DISTANCE`] heart sizes from
/// the centre in the frontal plane, at Einthoven's triangle (RA and LA 30° above the
/// horizontal, right and left; LL straight down); V1–V6 sit on a transverse arc at the level
/// of the centre shifted a quarter length toward the apex, [`CHEST_DISTANCE`] radii from the
/// long axis, at [`PRECORDIAL_ANGLES`] from anterior toward the left (V1 right of the
/// sternum, V6 mid-axillary).
pub fn twelve_lead(mesh: &TetMesh) -> Result<Vec<Electrode>, EcgError> {
    let f = heart_frame(mesh)?;
    let size = f.half_length.max(f.radius);
    let superior = f.apex.map(|x| -x);
    let limb = |left: f64, up: f64| {
        let d = axpy(left, f.left, superior.map(|x| x * up));
        axpy(LIMB_DISTANCE * size, d, f.centre)
    };
    let (c30, s30) = (30f64.to_radians().cos(), 30f64.to_radians().sin());
    let mut out = vec![
        Electrode {
            name: "RA".into(),
            pos: limb(-c30, s30),
        },
        Electrode {
            name: "LA".into(),
            pos: limb(c30, s30),
        },
        Electrode {
            name: "LL".into(),
            pos: limb(0.0, -1.0),
        },
    ];
    let level = axpy(0.5 * f.half_length, f.apex, f.centre);
    for (k, deg) in PRECORDIAL_ANGLES.iter().enumerate() {
        let (s, c) = deg.to_radians().sin_cos();
        let dir = axpy(c, f.anterior, f.left.map(|x| x * s));
        out.push(Electrode {
            name: format!("V{}", k + 1),
            pos: axpy(CHEST_DISTANCE * f.radius, dir, level),
        });
    }
    Ok(out)
}

/// The lead-field weights `u_ei` of the module's formula, electrode-major (`[e * n + i]`,
/// mesh numbering), for cells of `volumes` (mm³) at `centroids` (mm): `χ Cm Vol_i / (4π σ_b
/// dt_pde r_ei)`, so that `Σ_i u_ei Σ_j (Z_ij (V_j − V_i))` over the off-diagonals of `Z = I +
/// dt_pde L` is φ_e in mV.
pub fn lead_field_weights(
    volumes: &[f64],
    centroids: &[[f64; 3]],
    electrodes: &[Electrode],
    chi_cm: f64,
    sigma_b: f64,
    dt_pde: f64,
) -> Vec<f64> {
    let k = chi_cm / (4.0 * std::f64::consts::PI * sigma_b * dt_pde);
    let mut w = Vec::with_capacity(electrodes.len() * volumes.len());
    for e in electrodes {
        for (v, c) in volumes.iter().zip(centroids) {
            w.push(k * v / distance(e.pos, *c));
        }
    }
    w
}

/// The ECG's part of a device build: electrodes and their per-cell weights in f32.
#[derive(Debug, Clone, PartialEq)]
pub struct EcgDevice {
    /// Electrodes (one partial each per tile).
    pub electrodes: usize,
    /// [`lead_field_weights`] rounded to f32, electrode-major, mesh numbering.
    pub weights: Vec<f32>,
}

/// What a run records of the ECG: its options, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct EcgSpec {
    pub electrodes: Vec<Electrode>,
    /// Bath conductivity σ_b (S/m).
    pub sigma_bath: f64,
    /// Sampling interval (ms).
    pub every: f64,
}

impl EcgSpec {
    /// The device's part for a mesh and its set-up (`chi_cm` = χ Cm of the run, 1/mm ·
    /// µF/mm²). Checks σ_b.
    pub fn device(
        &self,
        mesh: &TetMesh,
        setup: &crate::solver::Setup,
        chi_cm: f64,
    ) -> Result<EcgDevice, EcgError> {
        if !sigma_bath_ok(self.sigma_bath) {
            return Err(EcgError::BadSigma(self.sigma_bath));
        }
        let volumes: Vec<f64> = (0..mesh.num_cells())
            .map(|t| mesh.tet_volume(t).abs())
            .collect();
        let w = lead_field_weights(
            &volumes,
            &setup.centroids,
            &self.electrodes,
            chi_cm,
            self.sigma_bath,
            setup.dt_pde,
        );
        Ok(EcgDevice {
            electrodes: self.electrodes.len(),
            weights: w.iter().map(|&x| x as f32).collect(),
        })
    }
}

/// The host reference in f64, from a voltage snapshot `v` (mesh numbering): `φ_e = (χ Cm /
/// (4π σ_b)) Σ_i Vol_i (L V)_i / r_i` with the operator's f64 `L` (another code path than
/// the device's: no ELLPACK, no f32, no differences).
pub fn phi_reference(
    op: &Operator,
    chi_cm: f64,
    sigma_b: f64,
    electrodes: &[Electrode],
    v: &[f64],
) -> Vec<f64> {
    let mut lv = vec![0.0; op.n()];
    op.apply_f64(v, &mut lv);
    let k = chi_cm / (4.0 * std::f64::consts::PI * sigma_b);
    electrodes
        .iter()
        .map(|e| {
            k * lv
                .iter()
                .zip(op.volumes())
                .zip(op.centroids())
                .map(|((l, vol), c)| vol * l / distance(e.pos, *c))
                .sum::<f64>()
        })
        .collect()
}

/// The running ECG record: electrode names, sample times (ms) and φ_e (mV) per sample and
/// electrode, as the device gave them. Serialisable, so that a checkpoint can carry it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EcgRecord {
    pub electrodes: Vec<String>,
    pub times: Vec<f64>,
    /// `values[k][e]`: sample `k`, electrode `e`.
    pub values: Vec<Vec<f32>>,
}

/// One lead of the 12-lead ECG over the record's samples (mV).
#[derive(Debug, Clone, PartialEq)]
pub struct Lead {
    pub name: &'static str,
    pub values: Vec<f64>,
}

/// The 12 leads in the clinicians' order.
pub const LEAD_NAMES: [&str; 12] = [
    "I", "II", "III", "aVR", "aVL", "aVF", "V1", "V2", "V3", "V4", "V5", "V6",
];

impl EcgRecord {
    /// An empty record of these electrodes.
    pub fn new(electrodes: &[Electrode]) -> EcgRecord {
        EcgRecord {
            electrodes: electrodes.iter().map(|e| e.name.clone()).collect(),
            ..Default::default()
        }
    }

    /// Appends the sample of time `t` (ms): one value per electrode. Samples come in time
    /// order; a sample at a time already recorded (a restart) replaces nothing and is refused.
    pub fn push(&mut self, t: f64, values: &[f32]) -> anyhow::Result<()> {
        anyhow::ensure!(
            values.len() == self.electrodes.len(),
            "ECG sample at {t} ms has {} values for {} electrodes",
            values.len(),
            self.electrodes.len()
        );
        if let Some(&last) = self.times.last() {
            anyhow::ensure!(
                t > last,
                "ECG sample at {t} ms does not follow the last one ({last} ms)"
            );
        }
        if let Some(e) = values.iter().position(|v| !v.is_finite()) {
            anyhow::bail!(
                "ECG: φ_e of electrode {} at {t} ms is {}, not a finite potential: the run stops \
                 rather than write it (check --sigma-bath and the electrodes' positions)",
                self.electrodes[e],
                values[e]
            );
        }
        self.times.push(t);
        self.values.push(values.to_vec());
        Ok(())
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Whether no sample was recorded.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// φ_e of electrode `name` over the samples (mV), if it is recorded.
    pub fn electrode(&self, name: &str) -> Option<Vec<f64>> {
        let e = self.electrodes.iter().position(|n| n == name)?;
        Some(self.values.iter().map(|s| f64::from(s[e])).collect())
    }

    /// The leads the electrodes allow, in [`LEAD_NAMES`] order: I, II, III, aVR, aVL, aVF
    /// (Einthoven and Goldberger) when RA, LA and LL are recorded, and each V1–V6 recorded
    /// against Wilson's central terminal (RA + LA + LL)/3.
    pub fn leads(&self) -> Vec<Lead> {
        let (Some(ra), Some(la), Some(ll)) = (
            self.electrode("RA"),
            self.electrode("LA"),
            self.electrode("LL"),
        ) else {
            return Vec::new();
        };
        let map = |f: &dyn Fn(f64, f64, f64) -> f64| -> Vec<f64> {
            (0..ra.len()).map(|k| f(ra[k], la[k], ll[k])).collect()
        };
        let mut out = vec![
            Lead {
                name: "I",
                values: map(&|r, l, _| l - r),
            },
            Lead {
                name: "II",
                values: map(&|r, _, f| f - r),
            },
            Lead {
                name: "III",
                values: map(&|_, l, f| f - l),
            },
            Lead {
                name: "aVR",
                values: map(&|r, l, f| r - 0.5 * (l + f)),
            },
            Lead {
                name: "aVL",
                values: map(&|r, l, f| l - 0.5 * (r + f)),
            },
            Lead {
                name: "aVF",
                values: map(&|r, l, f| f - 0.5 * (r + l)),
            },
        ];
        let wct = map(&|r, l, f| (r + l + f) / 3.0);
        for name in &LEAD_NAMES[6..] {
            if let Some(v) = self.electrode(name) {
                out.push(Lead {
                    name,
                    values: v.iter().zip(&wct).map(|(v, w)| v - w).collect(),
                });
            }
        }
        out
    }

    /// `ecg.csv`: `t_ms`, then `phi_<electrode>_mV` per electrode, then `<lead>_mV` per lead
    /// ([`EcgRecord::leads`]).
    pub fn to_csv(&self) -> String {
        use std::fmt::Write as _;
        let leads = self.leads();
        let mut out = String::from("t_ms");
        for e in &self.electrodes {
            let _ = write!(out, ",phi_{e}_mV");
        }
        for l in &leads {
            let _ = write!(out, ",{}_mV", l.name);
        }
        out.push('\n');
        for (k, t) in self.times.iter().enumerate() {
            let _ = write!(out, "{t:.4}");
            for v in &self.values[k] {
                let _ = write!(out, ",{v}");
            }
            for l in &leads {
                let _ = write!(out, ",{}", l.values[k] as f32);
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn electrodes_parse_and_bad_ones_are_named() {
        let e = parse_electrode("V1=1.5,-2,3e1").unwrap();
        assert_eq!(e.name, "V1");
        assert_eq!(e.pos, [1.5, -2.0, 30.0]);
        for bad in [
            "V1",
            "V1=1,2",
            "V1=1,2,x",
            "=1,2,3",
            "a b=1,2,3",
            "V,1=1,2,3",
        ] {
            let msg = parse_electrode(bad).unwrap_err().to_string();
            assert!(msg.contains("electrode"), "{bad}: {msg}");
        }
    }

    #[test]
    fn leads_follow_einthoven_goldberger_and_wilson() {
        let names = ["RA", "LA", "LL", "V1", "V2", "V3", "V4", "V5", "V6"];
        let els: Vec<Electrode> = names
            .iter()
            .map(|n| Electrode {
                name: n.to_string(),
                pos: [0.0; 3],
            })
            .collect();
        let mut r = EcgRecord::new(&els);
        r.push(0.0, &[1.0, 2.0, 4.0, 10.0, 0.0, 0.0, 0.0, 0.0, 7.0 / 3.0])
            .unwrap();
        assert!(r.push(0.0, &[0.0; 9]).is_err(), "time must advance");
        assert!(r.push(1.0, &[0.0; 8]).is_err(), "one value per electrode");
        let l = r.leads();
        let names: Vec<&str> = l.iter().map(|l| l.name).collect();
        assert_eq!(names, LEAD_NAMES);
        let v: Vec<f64> = l.iter().map(|l| l.values[0]).collect();
        // I = LA - RA, II = LL - RA, III = LL - LA; aVR = RA - (LA+LL)/2, ...; WCT = 7/3.
        assert_eq!(&v[..6], &[1.0, 3.0, 2.0, -2.0, -0.5, 2.5]);
        assert!((v[6] - (10.0 - 7.0 / 3.0)).abs() < 1e-12);
        assert!(v[11].abs() < 1e-6, "V6 is 7/3 in f32: {}", v[11]);
        // Einthoven's law: II = I + III; the augmented leads sum to zero.
        assert_eq!(v[1], v[0] + v[2]);
        assert!((v[3] + v[4] + v[5]).abs() < 1e-12);
        let csv = r.to_csv();
        assert!(csv.starts_with("t_ms,phi_RA_mV,"), "{csv}");
        assert!(csv.lines().next().unwrap().ends_with(",V6_mV"));
    }

    #[test]
    fn principal_axes_of_a_diagonal_matrix_are_sorted() {
        let a = principal_axes([[1.0, 0.0, 0.0], [0.0, 5.0, 0.0], [0.0, 0.0, 3.0]]);
        assert_eq!(a[0].map(f64::abs), [0.0, 1.0, 0.0]);
        assert_eq!(a[1].map(f64::abs), [0.0, 0.0, 1.0]);
    }
}
