//! A problem as the user describes it (the slab or a mesh file, stimulus, time step, machine),
//! checked and assembled into a [`Setup`] and a [`DeviceConfig`]. Mistakes that would give a
//! meaningless run are refused here with the reason; doubtful choices are warned about.
//!
//! (One concept, a checked problem: every guard reads the same options and the set-up they
//! assemble. The stimulus regions and their cells are [`protocol`]'s; the advice printed
//! about a problem is [`super::advice`]'s; numbers in messages are [`crate::format`]'s.)

use std::path::PathBuf;

use anyhow::{ensure, Context, Result};

use super::protocol::{self, stimulus_cells, stimulus_cells_of, RegionSpec, SiteSpec, StimRegion};
use super::run::check_dt;
use crate::format::{grouped, show};
use crate::matrix::Conductivity;
use crate::mesh::{CellType, ReadOptions, TetMesh};
use crate::partition::{Partitioning, Strategy};
use crate::solver::device::DeviceConfig;
use crate::solver::{Setup, SetupError, SetupOptions};
use crate::tp06::Scalings;

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
