//! The options that describe a problem (mesh, stimulus, conduction, time steps), shared by
//! `cardiac run` and `cardiac compile`, and how they become a `ProblemSpec` (a parameter file
//! plus the options given on the command line).

use std::path::PathBuf;

use anyhow::{ensure, Result};
use cardiac::app::problem::ProblemSpec;
use cardiac::app::protocol;
use cardiac::app::protocol::StimRegion;
use cardiac::app::results::RunParameters;
use cardiac::matrix::Conductivity;
use cardiac::mesh::CellType;
use cardiac::partition::{Partitioning, Strategy};
use cardiac::tp06::Scalings;
use clap::Args;

/// Checks that a comma-separated option has `n` finite numbers.
fn check_list(name: &str, v: &Option<Vec<f64>>, n: usize, what: &str) -> Result<()> {
    if let Some(v) = v {
        ensure!(
            v.len() == n && v.iter().all(|x| x.is_finite()),
            "--{name} takes {n} comma-separated numbers ({what}), got {v:?}"
        );
    }
    Ok(())
}

#[derive(Args, Clone)]
pub(crate) struct ProblemArgs {
    /// Slab mesh size (mm) of the built-in Niederer benchmark: 0.5, 0.2 or 0.1.
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 0.5, allow_hyphen_values = true)]
    pub(crate) dx: f64,
    /// Read this mesh (.msh or .vtu) instead of the built-in slab.
    #[arg(long)]
    pub(crate) mesh: Option<PathBuf>,
    /// Multiply mesh coordinates by this to get millimetres (10 for meshes in cm).
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 1.0, allow_hyphen_values = true)]
    pub(crate) scale: f64,
    /// Fibre direction for meshes without fibres, e.g. 1,0,0; omit for isotropic conduction.
    #[arg(long, value_parser = app_support::bounds::f64_value, value_delimiter = ',', allow_hyphen_values = true)]
    pub(crate) fibre: Option<Vec<f64>>,
    /// Cell type for meshes without cell types.
    #[arg(long, value_enum, default_value_t = CellType::Epi)]
    pub(crate) cell_type: CellType,
    /// Stimulus box min,max corners (mm): x0,y0,z0,x1,y1,z1. Default: the Niederer corner cube.
    #[arg(long, value_parser = app_support::bounds::f64_value, value_delimiter = ',', allow_hyphen_values = true)]
    pub(crate) stim_box: Option<Vec<f64>>,
    /// Stimulus sphere cx,cy,cz,r (mm).
    #[arg(long, value_parser = app_support::bounds::f64_value, value_delimiter = ',', allow_hyphen_values = true)]
    pub(crate) stim_sphere: Option<Vec<f64>>,
    /// Stimulate the cells touching this surface tag (e.g. ENDO_LV).
    #[arg(long)]
    pub(crate) stim_surface: Option<String>,
    /// ODE time step (ms): at most 0.2 (the cell model's forward Euler fails beyond), with a
    /// warning above 0.05; the Niederer benchmark uses 0.005 to 0.05.
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 0.02, allow_hyphen_values = true)]
    pub(crate) dt_ode: f64,
    /// Number of chips (1,472 tiles each).
    #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
    pub(crate) chips: u32,
    /// Use only this many tiles (default: all tiles of the chips).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) tiles: Option<usize>,
    /// Halo strategy.
    #[arg(long, value_enum, default_value_t = Strategy::MixedClean)]
    pub(crate) strategy: Strategy,
    /// How cells are cut into tiles: flat (METIS over all tiles, the paper's) or hierarchical
    /// (METIS over the chips by communication volume, placed on the chips by their links, then
    /// METIS over each chip's tiles).
    #[arg(long, value_enum, default_value_t = Partitioning::Flat)]
    pub(crate) partition: Partitioning,
    /// Stimulus current density (µA/mm³); the benchmark's is 50.
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 50.0, allow_hyphen_values = true)]
    pub(crate) stim_amplitude: f64,
    /// Stimulus length (ms); the benchmark's is 2.
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 2.0, allow_hyphen_values = true)]
    pub(crate) stim_duration: f64,
    /// Stimulus start (ms); the benchmark's is 0.
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 0.0, allow_hyphen_values = true)]
    pub(crate) stim_start: f64,
    /// Monodomain conductivity along the fibres (S/m); the benchmark's is 0.1334.
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = Conductivity::niederer().sigma_l, allow_hyphen_values = true)]
    pub(crate) sigma_l: f64,
    /// Monodomain conductivity across the fibres (S/m); the benchmark's is 0.0176.
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = Conductivity::niederer().sigma_t, allow_hyphen_values = true)]
    pub(crate) sigma_t: f64,
    /// Conductivity along the sheet normal (S/m), for orthotropic tissue on a mesh with sheet
    /// directions; default σ_t (the same across the fibres in every direction).
    #[arg(long, value_parser = app_support::bounds::f64_value, allow_hyphen_values = true)]
    pub(crate) sigma_n: Option<f64>,
    /// Surface-to-volume ratio χ (1/mm); the benchmark's is 140.
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = Conductivity::niederer().chi, allow_hyphen_values = true)]
    pub(crate) chi: f64,
    /// Membrane capacitance Cm (µF/mm²); the benchmark's is 0.01.
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = Conductivity::niederer().cm, allow_hyphen_values = true)]
    pub(crate) cm: f64,
    /// Pace: this many stimulus pulses, one every --bcl ms (1: the single benchmark pulse).
    /// Activation, repolarisation (downward through -70 mV) and APD per beat go into
    /// activation.vtu and results.json.
    #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
    pub(crate) beats: u32,
    /// Basic cycle length of pacing (ms).
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 1000.0, allow_hyphen_values = true)]
    pub(crate) bcl: f64,
    /// S1–S2: one more pulse this many ms after the last of the --beats (the S2 coupling
    /// interval).
    #[arg(long, value_parser = app_support::bounds::f64_value, allow_hyphen_values = true)]
    pub(crate) s2: Option<f64>,
    /// Stimulate the cells listed in this file (0-based cell indices, whitespace or comma
    /// separated, # comments) instead of a box, sphere or surface.
    #[arg(long)]
    pub(crate) stim_cells: Option<PathBuf>,
    /// Another stimulus site with its own timing (repeat for more):
    /// REGION[;amplitude=µA/mm³][;duration=ms][;start=ms][;beats=N][;bcl=ms][;s2=ms], REGION
    /// being box:x0,y0,z0,x1,y1,z1, sphere:cx,cy,cz,r, surface:TAG, cells:FILE or corner.
    /// Example: --stim-site "sphere:20,7,3,1;start=300"
    #[arg(long)]
    pub(crate) stim_site: Vec<String>,
    /// TP06 conductance scalings of every cell, e.g. GKr*0.5,GCaL*1.2 (drug block, disease):
    /// g_na, g_k1, g_to, g_kr, g_ks, g_cal, g_bna, g_bca, g_pca, g_pk, k_naca, p_nak.
    #[arg(long)]
    pub(crate) tp06: Option<String>,
    /// A region with its own cell type and/or TP06 scalings (repeat for more; later regions
    /// win): REGION[;cell-type=endo|mid|epi][;GKr*0.5,...]. Example:
    /// --region "box:0,0,0,20,7,1;cell-type=endo" --region "sphere:10,3.5,1.5,2;GNa*0.3"
    #[arg(long)]
    pub(crate) region: Vec<String>,
    /// Activation threshold (mV): activation is the first upward crossing of it (default 0).
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = cardiac::solver::ACTIVATION_THRESHOLD_MV, allow_hyphen_values = true)]
    pub(crate) act_threshold: f64,
    /// Read the problem from a JSON file: a results.json of an earlier run (its `parameters`)
    /// or a parameters object of the same form. Options given on the command line override it.
    #[arg(long)]
    pub(crate) params: Option<PathBuf>,
}

/// The problem options a user gave on the command line (not defaults).
pub(crate) fn given(m: Option<&clap::ArgMatches>, id: &str) -> bool {
    m.and_then(|m| m.try_get_raw(id).ok().flatten().map(|_| m.value_source(id)))
        .flatten()
        == Some(clap::parser::ValueSource::CommandLine)
}

impl ProblemArgs {
    /// The problem these options describe (list options checked).
    /// The problem: from `--params` if given, with the options given on the command line
    /// (per `matches`) on top; else from the options.
    pub(crate) fn to_spec_with(&self, matches: Option<&clap::ArgMatches>) -> Result<ProblemSpec> {
        let from_args = self.to_spec()?;
        let Some(path) = &self.params else {
            return Ok(from_args);
        };
        let mut spec = RunParameters::read(path)?.problem;
        let a = from_args;
        macro_rules! over {
            ($($id:literal => $field:ident),* $(,)?) => {
                $(if given(matches, $id) { spec.$field = a.$field.clone(); })*
            };
        }
        over!(
            "dx" => dx, "mesh" => mesh, "scale" => scale, "fibre" => fibre,
            "cell_type" => cell_type, "dt_ode" => dt_ode, "chips" => chips, "tiles" => tiles,
            "strategy" => strategy, "partition" => partition, "stim_amplitude" => stim_density,
            "stim_duration" => stim_duration, "stim_start" => stim_start, "sigma_l" => sigma_l,
            "sigma_t" => sigma_t, "sigma_n" => sigma_n, "chi" => chi, "cm" => cm, "beats" => beats, "bcl" => bcl,
            "s2" => s2, "stim_site" => sites, "tp06" => tp06, "region" => regions,
            "act_threshold" => act_threshold,
        );
        if ["stim_box", "stim_sphere", "stim_surface", "stim_cells"]
            .iter()
            .any(|id| given(matches, id))
        {
            spec.stim = a.stim.clone();
        }
        Ok(spec)
    }

    pub(crate) fn to_spec(&self) -> Result<ProblemSpec> {
        check_list("fibre", &self.fibre, 3, "x,y,z")?;
        check_list("stim-box", &self.stim_box, 6, "x0,y0,z0,x1,y1,z1 in mm")?;
        check_list("stim-sphere", &self.stim_sphere, 4, "cx,cy,cz,r in mm")?;
        let regions = [
            self.stim_box.is_some(),
            self.stim_sphere.is_some(),
            self.stim_surface.is_some(),
            self.stim_cells.is_some(),
        ];
        ensure!(
            regions.iter().filter(|&&r| r).count() <= 1,
            "give at most one of --stim-box, --stim-sphere, --stim-surface and --stim-cells"
        );
        let stim = if let Some(b) = &self.stim_box {
            StimRegion::Box([b[0], b[1], b[2]], [b[3], b[4], b[5]])
        } else if let Some(c) = &self.stim_sphere {
            StimRegion::Sphere([c[0], c[1], c[2]], c[3])
        } else if let Some(tag) = &self.stim_surface {
            StimRegion::Surface(tag.clone())
        } else if let Some(path) = &self.stim_cells {
            StimRegion::Cells(path.clone())
        } else {
            StimRegion::NiedererCube
        };
        Ok(ProblemSpec {
            dx: self.dx,
            mesh: self.mesh.clone(),
            scale: self.scale,
            fibre: self.fibre.as_ref().map(|f| [f[0], f[1], f[2]]),
            cell_type: self.cell_type,
            stim,
            dt_ode: self.dt_ode,
            chips: self.chips,
            tiles: self.tiles,
            strategy: self.strategy,
            partition: self.partition,
            stim_density: self.stim_amplitude,
            stim_duration: self.stim_duration,
            stim_start: self.stim_start,
            sigma_l: self.sigma_l,
            sigma_t: self.sigma_t,
            sigma_n: self.sigma_n,
            chi: self.chi,
            cm: self.cm,
            beats: self.beats,
            bcl: self.bcl,
            s2: self.s2,
            sites: self
                .stim_site
                .iter()
                .map(|t| protocol::parse_site(t))
                .collect::<Result<_>>()?,
            tp06: match &self.tp06 {
                Some(t) => Scalings::ONE
                    .parse_onto(t)
                    .map_err(|e| anyhow::anyhow!("--tp06: {e}"))?,
                None => Scalings::ONE,
            },
            regions: self
                .region
                .iter()
                .map(|t| protocol::parse_region_spec(t))
                .collect::<Result<_>>()?,
            act_threshold: self.act_threshold,
        })
    }
}
