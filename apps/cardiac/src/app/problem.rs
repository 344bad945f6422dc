//! A problem as the user describes it (the slab or a mesh file, stimulus, time step, machine),
//! checked and assembled into a [`Setup`] and a [`DeviceConfig`]. Mistakes that would give a
//! meaningless run are refused here with the reason; doubtful choices are warned about.
//!
//! (About 600 lines. One concept, a checked problem: every guard reads the same options and the
//! set-up they assemble.)

use std::path::PathBuf;

use anyhow::{bail, ensure, Context, Result};

use super::protocol::{self, RegionSpec, SiteSpec};
use crate::matrix::Conductivity;
use crate::mesh::{CellType, ReadOptions, TetMesh};
use crate::partition::{Partitioning, Strategy};
use crate::solver::device::DeviceConfig;
use crate::solver::{Setup, SetupError, SetupOptions, Stimulus};
use crate::tp06::Scalings;

/// Where the stimulus goes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StimRegion {
    /// The Niederer corner cube.
    NiedererCube,
    /// Cells whose centroids lie in the box (min and max corners, mm).
    Box([f64; 3], [f64; 3]),
    /// Cells whose centroids lie in the sphere (centre, radius, mm).
    Sphere([f64; 3], f64),
    /// Cells with a face on the tagged surface.
    Surface(String),
    /// The cells listed in a text file (0-based indices; [`super::protocol::read_cell_list`]).
    Cells(PathBuf),
}

/// The problem a user asks for. Serialised as the `parameters.problem` record of
/// `results.json` and read back by `cardiac run --params` (unknown fields are refused by name;
/// missing ones take the defaults of [`ProblemSpec::slab`] at 0.5 mm).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProblemSpec {
    /// Slab mesh size (mm) when no mesh file is given.
    pub dx: f64,
    pub mesh: Option<PathBuf>,
    /// Coordinates × scale = mm.
    pub scale: f64,
    pub fibre: Option<[f64; 3]>,
    pub cell_type: CellType,
    pub stim: StimRegion,
    pub dt_ode: f64,
    pub chips: u32,
    pub tiles: Option<usize>,
    pub strategy: Strategy,
    /// Flat METIS over all tiles, or chips then tiles.
    pub partition: Partitioning,
    /// Stimulus current density (µA/mm³), pulse length and start (ms).
    pub stim_density: f64,
    pub stim_duration: f64,
    pub stim_start: f64,
    /// Monodomain conductivities along and across the fibres (S/m), surface-to-volume ratio
    /// (1/mm) and membrane capacitance (µF/mm²); the Niederer values by default. A mesh without
    /// fibres conducts isotropically with `sigma_l`.
    pub sigma_l: f64,
    pub sigma_t: f64,
    /// Conductivity along the sheet normal (S/m) for orthotropic tissue, which needs a mesh
    /// with sheets; `None`: σ_t (transversely isotropic).
    pub sigma_n: Option<f64>,
    pub chi: f64,
    pub cm: f64,
    /// Pacing: `beats` pulses every `bcl` ms (1 beat: the single benchmark pulse).
    pub beats: u32,
    pub bcl: f64,
    /// S1–S2: one more pulse of the main site this many ms after the last of the `beats`.
    pub s2: Option<f64>,
    /// More stimulus sites, each with its own region and timing.
    pub sites: Vec<SiteSpec>,
    /// TP06 conductance scalings of every cell (1: the published model).
    pub tp06: Scalings,
    /// Regions with their own cell type and/or scalings, applied in order.
    pub regions: Vec<RegionSpec>,
    /// Activation threshold (mV): a cell activates when it first crosses it upwards.
    pub act_threshold: f64,
}

impl Default for ProblemSpec {
    fn default() -> Self {
        ProblemSpec::slab(0.5)
    }
}

impl ProblemSpec {
    /// The built-in slab at `dx` with every other option at its default.
    pub fn slab(dx: f64) -> ProblemSpec {
        ProblemSpec {
            dx,
            mesh: None,
            scale: 1.0,
            fibre: None,
            cell_type: CellType::Epi,
            stim: StimRegion::NiedererCube,
            dt_ode: 0.02,
            chips: 1,
            tiles: None,
            strategy: Strategy::MixedClean,
            partition: Partitioning::Flat,
            stim_density: crate::solver::NIEDERER_STIM_DENSITY,
            stim_duration: crate::solver::NIEDERER_STIM_DURATION,
            stim_start: 0.0,
            sigma_l: Conductivity::niederer().sigma_l,
            sigma_t: Conductivity::niederer().sigma_t,
            sigma_n: None,
            chi: Conductivity::niederer().chi,
            cm: Conductivity::niederer().cm,
            beats: 1,
            bcl: 1000.0,
            s2: None,
            sites: Vec::new(),
            tp06: Scalings::ONE,
            regions: Vec::new(),
            act_threshold: crate::solver::ACTIVATION_THRESHOLD_MV,
        }
    }

    /// Whether the tissue parameters are the Niederer benchmark's.
    pub fn benchmark_tissue(&self) -> bool {
        let n = Conductivity::niederer();
        self.sigma_l == n.sigma_l
            && self.sigma_t == n.sigma_t
            && self.sigma_n.is_none()
            && self.chi == n.chi
            && self.cm == n.cm
    }

    /// Whether the stimulus is the Niederer benchmark's (50 µA/mm³ for 2 ms from 0 ms).
    pub fn benchmark_stimulus(&self) -> bool {
        self.stim_density == crate::solver::NIEDERER_STIM_DENSITY
            && self.stim_duration == crate::solver::NIEDERER_STIM_DURATION
            && self.stim_start == 0.0
            && self.beats == 1
            && self.s2.is_none()
            && self.sites.is_empty()
            && self.stim == StimRegion::NiedererCube
    }

    /// Whether the cells are the benchmark's: published TP06 (no scalings, no regions) and
    /// activation at 0 mV.
    pub fn benchmark_cells(&self) -> bool {
        self.tp06.is_one()
            && self.regions.is_empty()
            && self.act_threshold == crate::solver::ACTIVATION_THRESHOLD_MV
    }

    /// Slab size for reports; `None` for a user mesh.
    pub fn slab_dx(&self) -> Option<f64> {
        self.mesh.is_none().then_some(self.dx)
    }
}

/// Largest ODE step accepted (ms). Measured on the 0.5 mm slab with forward Euler (and
/// Rush–Larsen for m) on TP06: P8 activates at 50.9 ms at dt 0.02, 51.3 at 0.05, 51.8 at 0.1,
/// 55.5 at 0.2, and at 0.5 ms the wave does not propagate (1.7 % of cells activate).
pub const MAX_DT_ODE: f64 = 0.2;
/// Above this ODE step (ms) the run is accepted with a warning: conduction slows measurably
/// (+1.7 % on P8 at 0.1 ms, +9 % at 0.2 ms). The Niederer benchmark uses 0.005 to 0.05 ms.
pub const WARN_DT_ODE: f64 = 0.05;

/// Checks the ODE time step; returns a warning for a doubtful one.
pub fn check_dt(dt: f64) -> Result<Option<String>> {
    ensure!(
        dt.is_finite() && dt > 0.0,
        "--dt-ode {dt} ms must be a positive number of ms"
    );
    if dt > MAX_DT_ODE {
        bail!(
            "--dt-ode {dt} ms is too large for the TP06 cell model with forward Euler: the \
             gating variables become unstable and the wave does not propagate (at 0.5 ms only \
             1.7 % of the slab activates). Use at most {MAX_DT_ODE} ms; the Niederer benchmark \
             uses 0.005 to 0.05 ms"
        );
    }
    Ok((dt > WARN_DT_ODE).then(|| {
        format!(
            "warning: --dt-ode {dt} ms is above {WARN_DT_ODE} ms: conduction slows (P8 of the \
             0.5 mm slab is 1.7 % later at 0.1 ms and 9 % later at 0.2 ms than at 0.02 ms)"
        )
    }))
}

/// Host memory a run takes per cell (bytes): the peak resident size of `cardiac run` on the
/// slab was 0.94 kB per cell at 0.1 mm (2.52 million cells, 2.3 GB) and 0.82 kB at 0.2 mm
/// (one chip, 2 threads); rounded up.
pub const HOST_BYTES_PER_CELL: f64 = 1024.0;

/// Assumed host memory when the host does not say (no `/proc/meminfo`): 64 GiB.
pub const ASSUMED_HOST_MEMORY: f64 = 64.0 * GIB;

const GIB: f64 = (1u64 << 30) as f64;

/// The host's memory (bytes; `MemTotal` of `/proc/meminfo`) and whether it was read, or
/// [`ASSUMED_HOST_MEMORY`].
pub fn host_memory() -> (f64, bool) {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map(|kb| kb * 1024.0)
    });
    match total {
        Some(b) => (b, true),
        None => (ASSUMED_HOST_MEMORY, false),
    }
}

/// Refuses a slab spacing whose cell count is beyond the u32 cell indices or whose estimated
/// memory ([`HOST_BYTES_PER_CELL`] per cell) is beyond the host's, from the count alone,
/// before anything is allocated (`--dx 0.002` panicked in the generator; 0.01 would have
/// asked for terabytes).
pub fn check_slab_size(dx: f64) -> Result<()> {
    let along = |l: f64| (l / dx).round().max(1.0);
    let cells = 6.0 * along(20.0) * along(7.0) * along(3.0);
    let need = cells * HOST_BYTES_PER_CELL;
    let (mem, known) = host_memory();
    let fit = (mem / HOST_BYTES_PER_CELL)
        .min(f64::from(u32::MAX - 1))
        .floor();
    ensure!(
        cells <= fit,
        "--dx {dx} mm makes a slab of {} cells, about {} GiB of host memory at {} bytes per \
         cell; at most {} cells fit (the u32 cell indices, and {:.1} GiB of memory {}). The \
         benchmark uses 0.5, 0.2 and 0.1 mm (2.52 million cells)",
        grouped(cells),
        grouped((need / GIB).ceil()),
        HOST_BYTES_PER_CELL,
        grouped(fit),
        mem / GIB,
        if known {
            "on this host"
        } else {
            "assumed: the host does not say"
        }
    );
    Ok(())
}

/// Refuses the options of a mesh file (`fibre`, `cell_type`, `scale`) on the built-in slab,
/// which has fibres along x and epicardial cells: the same rule for the command line and a
/// parameter file.
pub fn check_slab_options(spec: &ProblemSpec) -> Result<()> {
    if spec.mesh.is_some() {
        return Ok(());
    }
    let ignored: Vec<&str> = [
        (spec.fibre.is_some(), "--fibre"),
        (spec.cell_type != CellType::Epi, "--cell-type"),
        (spec.scale != 1.0, "--scale"),
    ]
    .into_iter()
    .filter_map(|(set, name)| set.then_some(name))
    .collect();
    ensure!(
        ignored.is_empty(),
        "{} only apply to a mesh read with --mesh: the built-in slab has fibres along x and \
         epicardial cells",
        ignored.join(", ")
    );
    Ok(())
}

/// Range of `--scale` (mesh units to mm: 10 for cm, 1000 for m, 0.001 for µm). Beyond it
/// cell volumes, the cube of lengths, overflow or underflow long before f64's own limits
/// (10^300 made every cell "degenerate").
pub const MIN_SCALE: f64 = 1e-6;
pub const MAX_SCALE: f64 = 1e6;

/// Reads or generates the mesh and checks it. Warnings (reoriented cells, disconnected
/// components) are returned for the caller to print.
pub fn load_mesh(spec: &ProblemSpec) -> Result<(TetMesh, Vec<String>)> {
    let mut warnings = Vec::new();
    let mesh = match &spec.mesh {
        None => {
            check_slab_options(spec)?;
            ensure!(
                spec.dx > 0.0 && spec.dx <= 3.0,
                "--dx {} mm: the slab needs 0 < dx <= 3 mm (the benchmark uses 0.5, 0.2, 0.1)",
                spec.dx
            );
            check_slab_size(spec.dx)?;
            TetMesh::try_slab(20.0, 7.0, 3.0, spec.dx)
                .with_context(|| format!("--dx {}", spec.dx))?
        }
        Some(p) => {
            ensure!(
                p.is_file(),
                "mesh file {} does not exist or is not a file",
                p.display()
            );
            ensure!(
                (MIN_SCALE..=MAX_SCALE).contains(&spec.scale),
                "--scale {} must be between {MIN_SCALE:e} and {MAX_SCALE:e}: the mesh's \
                 coordinates times it are millimetres (10 for cm, 1000 for m, 0.001 for µm); \
                 far beyond, volumes overflow or vanish",
                show(spec.scale)
            );
            let opts = ReadOptions {
                reorient: false,
                validate: false,
                ..ReadOptions::with_scale(spec.scale)
            };
            let (mut m, origins) = crate::mesh::read_mesh_located(p, &opts)?;
            if let (count, Some((a, b))) = m.coincident_nodes() {
                let at = m.nodes[a as usize];
                warnings.push(format!(
                    "warning: {}: {count} {} on another node (e.g. {} at ({}, {}, {}) mm): \
                     cells that use different copies do not share a face, so no current crosses \
                     between them (an insulating crack). Merge coincident nodes in the mesher if \
                     that is not intended",
                    p.display(),
                    if count == 1 { "node lies" } else { "nodes lie" },
                    origins.nodes(a, b),
                    at[0],
                    at[1],
                    at[2]
                ));
            }
            let flipped = m.reorient();
            if flipped > 0 {
                warnings.push(format!(
                    "warning: {}: {flipped} of {} tetrahedra were inverted (negative volume) and \
                     have been reoriented; check the mesh's node order if that is unexpected",
                    p.display(),
                    m.num_cells()
                ));
            }
            m.validate()
                .map_err(|e| crate::mesh::MeshError::InvalidMesh {
                    file: p.display().to_string(),
                    source: Box::new(origins.locate(e)),
                })?;
            let m = m.with_default_cell_type(spec.cell_type);
            match spec.fibre {
                Some(f) => m.with_default_fibres(Some(f)).context("--fibre")?,
                None => m,
            }
        }
    };
    mesh.validate().context("the mesh is not valid")?;
    let comps = mesh.component_sizes();
    if comps.len() > 1 {
        let shown: Vec<String> = comps.iter().take(5).map(|c| c.to_string()).collect();
        warnings.push(format!(
            "warning: the mesh has {} disconnected parts (cells: {}{}); current does not flow \
             between them, so parts without a stimulated cell never activate",
            comps.len(),
            shown.join(", "),
            if comps.len() > 5 { ", …" } else { "" }
        ));
    }
    Ok((mesh, warnings))
}

/// The stimulated cells and a description of the region of the main stimulus (errors name
/// `--stim-box`, `--stim-sphere`, `--stim-surface` or `--stim-cells`).
pub fn stimulus_cells(mesh: &TetMesh, region: &StimRegion) -> Result<(Vec<u32>, String)> {
    stimulus_cells_of(mesh, region, None)
}

/// The cells of a region and a description of it; `of` names the option it belongs to in
/// errors (`--region 2`, `--stim-site 1`), `None` the main stimulus' options.
pub fn stimulus_cells_of(
    mesh: &TetMesh,
    region: &StimRegion,
    of: Option<&str>,
) -> Result<(Vec<u32>, String)> {
    // The option at fault: the main stimulus' own, or `--region 2: box`.
    let opt = |main: &str, kind: &str| match of {
        Some(o) => format!("{o}: {kind}"),
        None => main.to_string(),
    };
    let (cells, what) = match region {
        StimRegion::Box(lo, hi) => {
            ensure!(
                (0..3).all(|i| lo[i] <= hi[i]),
                "{} {lo:?}..{hi:?}: each min corner coordinate must be <= the max one",
                opt("--stim-box", "box")
            );
            (
                mesh.cells_in_box(*lo, *hi),
                format!("box {lo:?}..{hi:?} mm"),
            )
        }
        StimRegion::Sphere(c, r) => {
            ensure!(
                r.is_finite() && *r > 0.0,
                "{} radius {r} mm must be positive",
                opt("--stim-sphere", "sphere")
            );
            (
                mesh.cells_in_sphere(*c, *r),
                format!("sphere {c:?} r {r} mm"),
            )
        }
        StimRegion::Surface(tag) => (
            mesh.cells_touching_surface(tag)
                .with_context(|| opt("--stim-surface", "surface"))?,
            format!("surface {tag}"),
        ),
        StimRegion::NiedererCube => (
            Stimulus::niederer(mesh).cells,
            "the corner cube [0, 1.5]³ mm".to_string(),
        ),
        StimRegion::Cells(path) => (
            super::protocol::read_cell_list(path, mesh.num_cells())
                .with_context(|| opt("--stim-cells", "cells"))?,
            format!("cells listed in {}", path.display()),
        ),
    };
    if cells.is_empty() {
        let bb = mesh
            .bounding_box()
            .map(|(lo, hi)| format!("; the mesh spans {lo:.3?} to {hi:.3?} mm"))
            .unwrap_or_default();
        let label = match (of, region) {
            (Some(o), _) => o.to_string(),
            (None, StimRegion::Box(..)) => "--stim-box".into(),
            (None, StimRegion::Sphere(..)) => "--stim-sphere".into(),
            (None, StimRegion::Surface(..)) => "--stim-surface".into(),
            (None, StimRegion::Cells(..)) => "--stim-cells".into(),
            (None, StimRegion::NiedererCube) => "the stimulus".into(),
        };
        bail!("{label}: the region ({what}) contains no cell centroid{bb}");
    }
    Ok((cells, what))
}

/// The solver set-up: conductivities (isotropic σ_l for a mesh without fibres), the stimulus
/// protocol on the region, the time steps.
pub fn setup(spec: &ProblemSpec, mesh: &TetMesh) -> Result<Setup> {
    check_dt(spec.dt_ode)?;
    check_tissue(spec)?;
    if let Some(sn) = spec.sigma_n {
        ensure!(
            mesh.sheets.is_some(),
            "--sigma-n {sn} S/m needs sheet directions (orthotropic tissue), but the mesh has \
             none{}: give a mesh with a `sheets` cell field (VTU) or an $ElementData field named \
             `sheets` (Gmsh), or leave --sigma-n out (conduction across the fibres is then σ_t \
             in every direction)",
            if spec.mesh.is_none() {
                " (the built-in slab has fibres only)"
            } else {
                ""
            }
        );
    }
    let cond = conductivity(spec, mesh);
    // The solvers' current, density / (χ Cm) in pA/pF, is an f32: one beyond it would be an
    // infinity (and V with it) rather than the density asked for.
    for (k, density) in std::iter::once(spec.stim_density)
        .chain(spec.sites.iter().map(|s| s.density))
        .enumerate()
    {
        let current = density / (cond.chi * cond.cm);
        ensure!(
            (current as f32).is_finite(),
            "{} {} µA/mm³ over --chi {} 1/mm × --cm {} µF/mm² is a current of {} pA/pF, \
             beyond the solvers' f32",
            if k == 0 {
                "--stim-amplitude".to_string()
            } else {
                format!("--stim-site {k}: amplitude")
            },
            show(density),
            show(cond.chi),
            show(cond.cm),
            show(current)
        );
    }
    let (cells, _) = stimulus_cells(mesh, &spec.stim)?;
    let main = SiteSpec {
        region: spec.stim.clone(),
        density: spec.stim_density,
        duration: spec.stim_duration,
        start: spec.stim_start,
        beats: spec.beats,
        bcl: spec.bcl,
        s2: spec.s2,
    };
    let main = protocol::site_stimulus(&main, cells, spec.dt_ode, "--stim")?;
    let mut more_sites = Vec::new();
    for (k, site) in spec.sites.iter().enumerate() {
        let what = format!("--stim-site {}", k + 1);
        let (cells, _) = stimulus_cells_of(mesh, &site.region, Some(&what))?;
        more_sites.push(protocol::site_stimulus(site, cells, spec.dt_ode, &what)?);
    }
    let mut regions = Vec::new();
    for (k, r) in spec.regions.iter().enumerate() {
        let (cells, _) = stimulus_cells_of(mesh, &r.region, Some(&format!("--region {}", k + 1)))?;
        regions.push((r.clone(), cells));
    }
    let models = protocol::cell_models(mesh, &spec.tp06, &regions)?;
    ensure!(
        spec.act_threshold.is_finite() && (-80.0..=20.0).contains(&spec.act_threshold),
        "--act-threshold {} mV must lie between -80 mV (above rest, about -86 mV) and 20 mV \
         (below the upstroke's peak, about 40 mV)",
        spec.act_threshold
    );
    Setup::with_options(
        mesh,
        &cond,
        spec.dt_ode,
        &main,
        &SetupOptions {
            more_sites,
            models: Some(models),
            act_threshold: Some(spec.act_threshold),
        },
    )
    .map_err(|e| match e {
        SetupError::TooManySubsteps {
            substeps,
            dt_stable,
            max,
            ..
        } => anyhow::anyhow!(
            "--sigma-l {} S/m{}, --chi {} 1/mm and --cm {} µF/mm² need {} diffusion substeps \
             per ODE step: the explicit diffusion is stable only up to {} ms and --dt-ode is {} \
             ms. At most {max} substeps are taken: check the units (σ in S/m, χ in 1/mm, Cm in \
             µF/mm²), or give a smaller --dt-ode",
            show(spec.sigma_l),
            spec.sigma_n
                .map(|sn| format!(", --sigma-n {} S/m", show(sn)))
                .unwrap_or_default(),
            show(spec.chi),
            show(spec.cm),
            show(substeps),
            show(dt_stable),
            show(spec.dt_ode)
        ),
        e => e.into(),
    })
}

/// A number as a message shows it: as Rust prints it between 10^-4 and 10^6 (0.02, 140), in
/// exponent form beyond (1e30 rather than thirty-one digits; 1.5e-7).
pub fn show(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e6).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// A whole number with thousands separators (24,684,084), in exponent form from 10^15.
pub fn grouped(x: f64) -> String {
    if x.is_nan() || x.abs() >= 1e15 {
        return format!("{x:e}");
    }
    let digits = format!("{}", x.abs().round() as u64);
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// The pulse starts of every site of a problem (ms, rising), for per-beat outputs and the
/// length of a paced run.
pub fn pulse_starts(setup: &Setup) -> Vec<f64> {
    let mut v: Vec<f64> = setup.sites.iter().flat_map(|s| s.pulse_starts()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Whether the problem paces (more than one pulse in all), so that per-beat outputs are kept.
pub fn paced(setup: &Setup) -> bool {
    pulse_starts(setup).len() > 1
}

/// Lines describing the stimulus sites and the cell models, for the run's header.
pub fn describe_stimulus(spec: &ProblemSpec, setup: &Setup) -> Vec<String> {
    let mut out = Vec::new();
    let stimulated = (0..setup.n).filter(|&i| setup.stimulated(i)).count();
    let densities: Vec<f64> = std::iter::once(spec.stim_density)
        .chain(spec.sites.iter().map(|s| s.density))
        .collect();
    for (k, (site, density)) in setup.sites.iter().zip(densities).enumerate() {
        let cells = (0..setup.n)
            .filter(|&i| setup.classes[usize::from(setup.stim_class[i])].contains(&(k as u8)))
            .count();
        let mut line = format!(
            "stimulus{}: {cells} cells, {density} µA/mm³ for {} ms from t = {} ms",
            if setup.sites.len() > 1 {
                format!(" site {}", k + 1)
            } else {
                String::new()
            },
            site.duration,
            site.start
        );
        if site.period > 0.0 {
            line += &format!(", {} beats every {} ms", site.count, site.period);
        }
        if site.s2_start >= 0.0 {
            line += &format!(", S2 at {} ms", site.s2_start);
        }
        out.push(line);
    }
    if setup.sites.len() > 1 {
        out.push(format!("stimulated cells in all: {stimulated}"));
    }
    if setup.models.len() > 1 || !spec.benchmark_cells() {
        for (k, m) in setup.models.iter().enumerate() {
            let cells = setup
                .cell_model
                .iter()
                .filter(|&&c| usize::from(c) == k)
                .count();
            if cells == 0 {
                continue;
            }
            let scaled: Vec<String> = m
                .scale
                .entries()
                .iter()
                .filter(|(_, v)| *v != 1.0)
                .map(|(n, v)| format!("{n}×{v}"))
                .collect();
            out.push(format!(
                "cell model {}: TP06 {:?}{}: {cells} cells",
                k + 1,
                m.cell_type,
                if scaled.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", scaled.join(", "))
                }
            ));
        }
    }
    if spec.act_threshold != crate::solver::ACTIVATION_THRESHOLD_MV {
        out.push(format!("activation threshold: {} mV", spec.act_threshold));
    }
    out
}

/// Published spread of the Niederer benchmark's P8 activation time (ms) at a benchmark
/// resolution: the lowest and highest of the open codes in `docs/cardiac.md` (Macchiato.jl,
/// fenicsx-beat, cardiacFoam).
pub fn published_p8_spread(dx: f64) -> Option<(f64, f64)> {
    [
        (0.5, (41.68, 143.067)),
        (0.2, (38.235, 54.596)),
        (0.1, (37.93, 45.631)),
    ]
    .into_iter()
    .find(|(d, _)| (dx - d).abs() < 1e-9)
    .map(|(_, s)| s)
}

/// The wavefront's foot width (mm) for a conductivity: `sqrt(D · 1 ms)` with
/// `D = σ_l / (χ Cm)`, the distance diffusion spreads the upstroke's current in the ~1 ms a TP06
/// upstroke lasts (0.31 mm for the Niederer conductivity).
pub fn front_width_mm(cond: &Conductivity) -> f64 {
    // σ in S/m = 1e-3 S/mm; χ in 1/mm; Cm in µF/mm² = 1e-6 F/mm²: D in mm²/s, then per ms.
    let d_mm2_per_ms = cond.sigma_l * 1e-3 / (cond.chi * cond.cm * 1e-6) * 1e-3;
    d_mm2_per_ms.sqrt()
}

/// Characteristic cell size (mm): `(6 · mean tet volume)^(1/3)`, which is dx for the
/// Kuhn-split slab (six tetrahedra per cube).
pub fn cell_size_mm(mesh: &TetMesh) -> f64 {
    let n = mesh.num_cells().max(1);
    let mean = (0..mesh.num_cells())
        .map(|t| mesh.tet_volume(t))
        .sum::<f64>()
        / n as f64;
    (6.0 * mean).cbrt()
}

/// A warning when a few cells bound the diffusion step (an ODE step would take fewer diffusion
/// steps without the 10 smallest): the smallest cell's own stable step, where it is and its
/// shape, the median cell's, and the diffusion steps without the 10, 100 and 1,000 smallest.
pub fn step_limit_advice(setup: &Setup, mesh: &TetMesh) -> Option<String> {
    let l = &setup.step_limit;
    let &(cell, dt) = l.worst.first()?;
    let steps = |dt_pde: f64| (f64::from(setup.dt_ode) / dt_pde).ceil().max(1.0) as usize;
    let without: Vec<(usize, usize)> = l.without.iter().map(|&(k, d)| (k, steps(d))).collect();
    // Only when leaving out a few (10) cells would save diffusion steps.
    if without.first().is_none_or(|&(_, p)| p >= setup.pde_steps) {
        return None;
    }
    let c = setup
        .centroids
        .get(cell as usize)
        .copied()
        .unwrap_or_default();
    let quality = if (cell as usize) < mesh.num_cells() {
        format!(", shape quality {:.3}", mesh.tet_quality(cell as usize))
    } else {
        String::new()
    };
    let counts: Vec<String> = without.iter().map(|(k, _)| k.to_string()).collect();
    let steps: Vec<String> = without.iter().map(|(_, p)| p.to_string()).collect();
    Some(format!(
        "warning: a few cells bound the diffusion step: the smallest cell's own stable step is \
        {dt:.5} ms (cell {cell} at ({:.2}, {:.2}, {:.2}) mm{quality}), the median cell's {:.4} \
        ms. Without the {} smallest cells an ODE step would take {} diffusion steps instead of \
        {}: improve the mesh there (apps/cardiac/tools/heart_mesh.py before version 0.5 left \
        slivers at the base: generate such meshes again; its --optimize netgen improves the \
        rest)",
        c[0],
        c[1],
        c[2],
        l.median_dt,
        counts.join(" / "),
        steps.join(" / "),
        setup.pde_steps
    ))
}

/// What a modeller should know about a problem before trusting its results: a mesh whose
/// extent suggests centimetres read as millimetres, cells coarse against the wavefront, a slab
/// resolution or stimulus that is not the benchmark's. Each line says what to do.
pub fn advice(spec: &ProblemSpec, mesh: &TetMesh, cond: &Conductivity) -> Vec<String> {
    let mut out = Vec::new();
    if spec.mesh.is_some() {
        if let Some((lo, hi)) = mesh.bounding_box() {
            let extent = (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max);
            if extent < 15.0 {
                out.push(format!(
                    "warning: the mesh spans only {extent:.2} mm at --scale {}: a human heart is \
                    about 50–120 mm across. If its coordinates are in cm, give --scale {}; in m, \
                    --scale {}",
                    spec.scale,
                    spec.scale * 10.0,
                    spec.scale * 1000.0
                ));
            }
        }
    }
    let h = cell_size_mm(mesh);
    let front = front_width_mm(cond);
    if h > front {
        let spread = published_p8_spread(0.5)
            .map(|(a, b)| {
                format!(" (the Niederer slab's P8 at 0.5 mm: published codes spread {a}–{b} ms)")
            })
            .unwrap_or_default();
        out.push(format!(
            "warning: cells of {h:.2} mm are coarse against the wavefront's foot ({front:.2} mm for \
            σ_l = {:.4} S/m): conduction will be slower than converged, and activation times \
            depend on the mesh{spread}. Refine to {front:.2} mm or finer (the benchmark's published codes agree \
             within 8 ms from 0.1 mm)",
            cond.sigma_l
        ));
    }
    if let Some(dx) = spec.slab_dx() {
        if published_p8_spread(dx).is_none() {
            out.push(format!(
                "note: dx {dx} mm is not a resolution of the Niederer benchmark (0.5, 0.2, 0.1 mm): \
                P1–P9 cannot be compared with published values"
            ));
        }
        if !spec.benchmark_tissue() {
            out.push(
                "note: the tissue parameters (σ_l, σ_t, χ, Cm) are not the benchmark's: P1–P9 \
                 cannot be compared with published values"
                    .to_string(),
            );
        }
        if !spec.benchmark_stimulus() {
            out.push(
                "note: the stimulus is not the benchmark's (one pulse of 50 µA/mm³ for 2 ms from 0 ms in the \
                corner cube): P1–P9 cannot be compared with published values"
                    .to_string(),
            );
        }
        if !spec.benchmark_cells() {
            out.push(
                "note: the cells are not the benchmark's (published TP06 epi, activation at 0 mV): \
                 P1–P9 cannot be compared with published values"
                    .to_string(),
            );
        }
    }
    out
}

/// The conductivity a problem uses (isotropic σ_l for a mesh without fibres; σ_n = σ_t unless
/// given).
pub fn conductivity(spec: &ProblemSpec, mesh: &TetMesh) -> Conductivity {
    let c = Conductivity {
        sigma_l: spec.sigma_l,
        sigma_t: spec.sigma_t,
        sigma_n: spec.sigma_n.unwrap_or(spec.sigma_t),
        chi: spec.chi,
        cm: spec.cm,
    };
    if spec.mesh.is_some() && mesh.fibres.is_none() {
        Conductivity {
            sigma_t: c.sigma_l,
            sigma_n: c.sigma_l,
            ..c
        }
    } else {
        c
    }
}

/// Checks the tissue parameters; the error names the option.
pub fn check_tissue(spec: &ProblemSpec) -> Result<()> {
    for (name, v, unit) in [
        ("--sigma-l", spec.sigma_l, "S/m"),
        ("--sigma-t", spec.sigma_t, "S/m"),
        ("--sigma-n", spec.sigma_n.unwrap_or(spec.sigma_t), "S/m"),
        ("--chi", spec.chi, "1/mm"),
        ("--cm", spec.cm, "µF/mm²"),
    ] {
        ensure!(
            v.is_finite() && v > 0.0,
            "{name} {v} {unit} must be a positive number"
        );
    }
    ensure!(
        spec.sigma_t <= spec.sigma_l,
        "--sigma-t {} S/m is larger than --sigma-l {} S/m: conduction across the fibres is \
         slower than along them (swap them, or change the fibre direction)",
        spec.sigma_t,
        spec.sigma_l
    );
    Ok(())
}

/// The machine and the partition options.
pub fn device_config(spec: &ProblemSpec) -> Result<DeviceConfig> {
    ensure!(
        (1..=64).contains(&spec.chips),
        "--chips {} must be between 1 and 64",
        spec.chips
    );
    let mut cfg = DeviceConfig::chips(spec.chips, spec.strategy);
    cfg.partitioning = spec.partition;
    if let Some(t) = spec.tiles {
        ensure!(
            t >= 1 && t <= cfg.tiles,
            "--tiles {t} must be between 1 and {}",
            cfg.tiles
        );
        cfg.tiles = t;
    }
    Ok(cfg)
}
