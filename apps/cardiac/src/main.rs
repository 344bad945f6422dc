//! `cardiac`: the monodomain simulator on poplar-rs.

//!
//! Argument parsing and dispatch only: what each command does is library code in
//! `cardiac::app` (problem assembly, probes, executable sections, outputs, the run loop).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use cardiac::app::output::{self, Snapshots};
use cardiac::app::probes::Probes;
use cardiac::app::problem::{self, ProblemSpec, StimRegion};
use cardiac::app::protocol;
use cardiac::app::{
    bundle,
    run::{run_device, LoopOptions},
};
use cardiac::matrix::Conductivity;
use cardiac::mesh::CellType;
use cardiac::partition::{PartitionStats, Strategy};
use cardiac::plot::{plot_diagonal, Series};
use cardiac::report::RunReport;
use cardiac::solver::device::{self, DeviceRun};
use cardiac::solver::native::NativeSolver;
use cardiac::solver::{Results, Setup};
use cardiac::tp06::Scalings;
use cardiac::{note, say};
use clap::{Args, Parser, Subcommand};
use poplar::profile::{PhaseKind, Profile};
use poplar::{Executable, Target};

#[derive(Parser)]
#[command(
    name = "cardiac",
    about = "Monodomain cardiac electrophysiology (TP06) on the poplar-rs tile simulator"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Build, compile and run a simulation; print activation times; write results.
    Run(RunArgs),
    /// Pace one TP06 cell (the tissue solver's f32 kernel): upstroke, Vmax and APD30/50/90 per
    /// beat, and with --s2 the S1-S2 restitution curve; writes trace.csv, beats.csv,
    /// restitution.csv and cell.json.
    Cell(CellArgs),
    /// Build and compile, and save the executable: one file that also carries what the host
    /// needs to run it and report on it (run info, benchmark points, the mesh for VTU output).
    Compile {
        #[command(flatten)]
        problem: ProblemArgs,
        #[arg(short, long)]
        output: PathBuf,
        /// Overwrite OUTPUT if it exists (refused otherwise).
        #[arg(long)]
        force: bool,
    },
    /// Run a saved executable (written by `cardiac compile`).
    Exec {
        file: PathBuf,
        /// Simulated time to run (ms), to the nearest whole ODE step at or after it; less when
        /// every cell has activated.
        #[arg(long, default_value_t = 5.0)]
        t_end: f64,
        /// Write results here: results.json (benchmark points of a slab executable),
        /// activation.vtu and voltage snapshots. Checked before the run; a folder holding an
        /// earlier run's files is refused unless --force.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Overwrite the files of an earlier run in --out.
        #[arg(long)]
        force: bool,
        /// Simulator threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// With --out: a voltage snapshot (VTU) every this many simulated ms, at the first end
        /// of a device run (a chunk of the saved executable's steps, or a single step) at or
        /// after each multiple; 0 writes none.
        #[arg(long, default_value_t = 10.0, allow_negative_numbers = true)]
        snapshot_every: f64,
    },
    /// The paper's Table 1: partition, halo and memory figures per chip count and strategy.
    Partition {
        #[arg(long, default_value_t = 0.5)]
        dx: f64,
        #[arg(long, value_delimiter = ',', default_values_t = vec![1u32, 2, 4, 8, 16])]
        chips: Vec<u32>,
    },
    /// Plot activation time along the slab diagonal from results.json files (or the folders
    /// holding them) of `cardiac run`, one line per file, as a PNG or SVG image.
    PlotDiagonal {
        /// results.json files or folders, e.g. out/dx0.5 out/dx0.2 out/dx0.1.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Output image: PNG if the name ends in .png, SVG otherwise.
        #[arg(short, long, default_value = "out/diagonal.png")]
        output: PathBuf,
        #[arg(
            long,
            default_value = "Niederer slab: activation along the diagonal P1 → P8"
        )]
        title: String,
        /// Legend labels, comma-separated, one per input (default: dx and dt from each file).
        #[arg(long, value_delimiter = ',')]
        labels: Option<Vec<String>>,
    },
}

#[derive(Args, Clone)]
struct ProblemArgs {
    /// Slab mesh size (mm) of the built-in Niederer benchmark: 0.5, 0.2 or 0.1.
    #[arg(long, default_value_t = 0.5)]
    dx: f64,
    /// Read this mesh (.msh or .vtu) instead of the built-in slab.
    #[arg(long)]
    mesh: Option<PathBuf>,
    /// Multiply mesh coordinates by this to get millimetres (10 for meshes in cm).
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Fibre direction for meshes without fibres, e.g. 1,0,0; omit for isotropic conduction.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    fibre: Option<Vec<f64>>,
    /// Cell type for meshes without cell types.
    #[arg(long, value_enum, default_value_t = CellType::Epi)]
    cell_type: CellType,
    /// Stimulus box min,max corners (mm): x0,y0,z0,x1,y1,z1. Default: the Niederer corner cube.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    stim_box: Option<Vec<f64>>,
    /// Stimulus sphere cx,cy,cz,r (mm).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    stim_sphere: Option<Vec<f64>>,
    /// Stimulate the cells touching this surface tag (e.g. ENDO_LV).
    #[arg(long)]
    stim_surface: Option<String>,
    /// ODE time step (ms): at most 0.2 (the cell model's forward Euler fails beyond), with a
    /// warning above 0.05; the Niederer benchmark uses 0.005 to 0.05.
    #[arg(long, default_value_t = 0.02)]
    dt_ode: f64,
    /// Number of chips (1,472 tiles each).
    #[arg(long, default_value_t = 1)]
    chips: u32,
    /// Use only this many tiles (default: all tiles of the chips).
    #[arg(long)]
    tiles: Option<usize>,
    /// Halo strategy.
    #[arg(long, value_enum, default_value_t = Strategy::MixedClean)]
    strategy: Strategy,
    /// Stimulus current density (µA/mm³); the benchmark's is 50.
    #[arg(long, default_value_t = 50.0, allow_negative_numbers = true)]
    stim_amplitude: f64,
    /// Stimulus length (ms); the benchmark's is 2.
    #[arg(long, default_value_t = 2.0)]
    stim_duration: f64,
    /// Stimulus start (ms); the benchmark's is 0.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    stim_start: f64,
    /// Monodomain conductivity along the fibres (S/m); the benchmark's is 0.1334.
    #[arg(long, default_value_t = Conductivity::niederer().sigma_l)]
    sigma_l: f64,
    /// Monodomain conductivity across the fibres (S/m); the benchmark's is 0.0176.
    #[arg(long, default_value_t = Conductivity::niederer().sigma_t)]
    sigma_t: f64,
    /// Conductivity along the sheet normal (S/m), for orthotropic tissue on a mesh with sheet
    /// directions; default σ_t (the same across the fibres in every direction).
    #[arg(long)]
    sigma_n: Option<f64>,
    /// Surface-to-volume ratio χ (1/mm); the benchmark's is 140.
    #[arg(long, default_value_t = Conductivity::niederer().chi)]
    chi: f64,
    /// Membrane capacitance Cm (µF/mm²); the benchmark's is 0.01.
    #[arg(long, default_value_t = Conductivity::niederer().cm)]
    cm: f64,
    /// Pace: this many stimulus pulses, one every --bcl ms (1: the single benchmark pulse).
    /// Activation, repolarisation (downward through -70 mV) and APD per beat go into
    /// activation.vtu and results.json.
    #[arg(long, default_value_t = 1)]
    beats: u32,
    /// Basic cycle length of pacing (ms).
    #[arg(long, default_value_t = 1000.0)]
    bcl: f64,
    /// S1–S2: one more pulse this many ms after the last of the --beats (the S2 coupling
    /// interval).
    #[arg(long)]
    s2: Option<f64>,
    /// Stimulate the cells listed in this file (0-based cell indices, whitespace or comma
    /// separated, # comments) instead of a box, sphere or surface.
    #[arg(long)]
    stim_cells: Option<PathBuf>,
    /// Another stimulus site with its own timing (repeat for more):
    /// REGION[;amplitude=µA/mm³][;duration=ms][;start=ms][;beats=N][;bcl=ms][;s2=ms], REGION
    /// being box:x0,y0,z0,x1,y1,z1, sphere:cx,cy,cz,r, surface:TAG, cells:FILE or corner.
    /// Example: --stim-site "sphere:20,7,3,1;start=300"
    #[arg(long)]
    stim_site: Vec<String>,
    /// TP06 conductance scalings of every cell, e.g. GKr*0.5,GCaL*1.2 (drug block, disease):
    /// g_na, g_k1, g_to, g_kr, g_ks, g_cal, g_bna, g_bca, g_pca, g_pk, k_naca, p_nak.
    #[arg(long)]
    tp06: Option<String>,
    /// A region with its own cell type and/or TP06 scalings (repeat for more; later regions
    /// win): REGION[;cell-type=endo|mid|epi][;GKr*0.5,...]. Example:
    /// --region "box:0,0,0,20,7,1;cell-type=endo" --region "sphere:10,3.5,1.5,2;GNa*0.3"
    #[arg(long)]
    region: Vec<String>,
    /// Activation threshold (mV): activation is the first upward crossing of it (default 0).
    #[arg(long, default_value_t = cardiac::solver::ACTIVATION_THRESHOLD_MV, allow_negative_numbers = true)]
    act_threshold: f64,
    /// Read the problem from a JSON file: a results.json of an earlier run (its `parameters`)
    /// or a parameters object of the same form. Options given on the command line override it.
    #[arg(long)]
    params: Option<PathBuf>,
}

/// The problem options a user gave on the command line (not defaults).
fn given(m: Option<&clap::ArgMatches>, id: &str) -> bool {
    m.and_then(|m| m.try_get_raw(id).ok().flatten().map(|_| m.value_source(id)))
        .flatten()
        == Some(clap::parser::ValueSource::CommandLine)
}

/// The `parameters` of a results.json, or a parameters object: the problem and `t_end`.
fn read_params(path: &std::path::Path) -> Result<(ProblemSpec, Option<f64>)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the parameter file {}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let params = v.get("parameters").cloned().unwrap_or(v);
    let problem = params.get("problem").cloned().ok_or_else(|| {
        anyhow::anyhow!(
            "{}: no `problem` record (expected a results.json of `cardiac run`, or {{\"problem\": {{...}}, \"t_end\": ...}})",
            path.display()
        )
    })?;
    let spec: ProblemSpec = serde_json::from_value(problem)
        .with_context(|| format!("{}: in `problem`", path.display()))?;
    Ok((spec, params.get("t_end").and_then(|t| t.as_f64())))
}

impl ProblemArgs {
    /// The problem these options describe (list options checked).
    /// The problem: from `--params` if given, with the options given on the command line
    /// (per `matches`) on top; else from the options.
    fn to_spec_with(&self, matches: Option<&clap::ArgMatches>) -> Result<ProblemSpec> {
        let from_args = self.to_spec()?;
        let Some(path) = &self.params else {
            return Ok(from_args);
        };
        let (mut spec, _) = read_params(path)?;
        let a = from_args;
        macro_rules! over {
            ($($id:literal => $field:ident),* $(,)?) => {
                $(if given(matches, $id) { spec.$field = a.$field.clone(); })*
            };
        }
        over!(
            "dx" => dx, "mesh" => mesh, "scale" => scale, "fibre" => fibre,
            "cell_type" => cell_type, "dt_ode" => dt_ode, "chips" => chips, "tiles" => tiles,
            "strategy" => strategy, "stim_amplitude" => stim_density,
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

    fn to_spec(&self) -> Result<ProblemSpec> {
        check_list("fibre", &self.fibre, 3, "x,y,z")?;
        check_list("stim-box", &self.stim_box, 6, "x0,y0,z0,x1,y1,z1 in mm")?;
        check_list("stim-sphere", &self.stim_sphere, 4, "cx,cy,cz,r in mm")?;
        if self.mesh.is_none() {
            let ignored: Vec<&str> = [
                (self.fibre.is_some(), "--fibre"),
                (self.cell_type != CellType::Epi, "--cell-type"),
                (self.scale != 1.0, "--scale"),
            ]
            .into_iter()
            .filter_map(|(set, name)| set.then_some(name))
            .collect();
            ensure!(
                ignored.is_empty(),
                "{} only apply to a mesh read with --mesh: the built-in slab has fibres along x \
                 and epicardial cells",
                ignored.join(", ")
            );
        }
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

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    problem: ProblemArgs,
    /// Stop at this simulated time (ms), to the nearest whole ODE step at or after it, or
    /// earlier when every cell has activated.
    #[arg(long, default_value_t = 300.0)]
    t_end: f64,
    /// A short smoke run (5 ms) for CI.
    #[arg(long)]
    quick: bool,
    /// Also run the native reference and compare.
    #[arg(long)]
    native: bool,
    /// Output folder: created if missing, checked before any work starts; a folder holding an
    /// earlier run's files is refused unless --force.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Overwrite the files of an earlier run in --out.
    #[arg(long)]
    force: bool,
    /// Simulator threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Do not profile the run (no phase breakdown, no profile.json).
    #[arg(long)]
    no_profile: bool,
    /// Do not write report.html (the browser view of the executable and its profile).
    #[arg(long)]
    no_report: bool,
    /// Record V at this point (x,y,z in mm; the nearest cell) into traces.csv; repeat for
    /// several points.
    #[arg(long, allow_negative_numbers = true)]
    trace_point: Vec<String>,
    /// Sampling interval of traces.csv (ms): device runs are shortened to it.
    #[arg(long, default_value_t = 0.5)]
    trace_every: f64,
    /// Write the membrane voltage as a VTU snapshot every this many simulated ms, listed in
    /// `voltage.pvd` for ParaView's time slider; 0 writes none. The device runs in chunks of
    /// at most 250 ODE steps, shortened to the snapshot interval when that is shorter. A
    /// snapshot is as large as activation.vtu (≈ 100 MB at 0.1 mm).
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true)]
    snapshot_every: f64,
}

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

fn describe_machine(t: &Target, tiles_used: usize, strategy: Strategy) -> String {
    format!(
        "{} chip(s) × {} tiles, {} KiB per tile, {} workers per tile, {:.2} GHz; {} tiles used; halo strategy {}",
        t.num_ipus,
        t.tiles_per_ipu,
        t.bytes_per_tile / 1024,
        t.workers_per_tile,
        t.clock_hz / 1e9,
        tiles_used,
        strategy.name()
    )
}

fn print_points(r: &RunReport) {
    if r.points.is_empty() {
        return;
    }
    say!("activation times at the benchmark points (ms; -1 = not activated):");
    for p in &r.points {
        let [x, y, z] = p.point_mm;
        say!(
            "  {} ({x:>4}, {y:>3}, {z:>3}) mm  {:8.3}",
            p.name,
            p.activation_ms
        );
    }
}

/// Activation summary for any mesh: how many activated, earliest/median/latest.
fn print_activation_summary(setup: &Setup, res: &Results) {
    let mut act: Vec<f32> = res
        .activation
        .iter()
        .copied()
        .filter(|&a| a >= 0.0)
        .collect();
    act.sort_by(f32::total_cmp);
    say!(
        "activated {} of {} cells ({:.1} %)",
        act.len(),
        setup.n,
        100.0 * act.len() as f64 / setup.n.max(1) as f64
    );
    if let (Some(first), Some(last)) = (act.first(), act.last()) {
        say!(
            "activation time: first {first:.3} ms, median {:.3} ms, last {last:.3} ms",
            act[act.len() / 2]
        );
    }
    let stim: Vec<f32> = (0..setup.n)
        .filter(|&i| setup.stimulated(i))
        .map(|i| res.activation[i])
        .collect();
    let stim_act = stim.iter().filter(|&&a| a >= 0.0).count();
    say!(
        "stimulated cells: {} ({} activated, latest at {:.3} ms)",
        stim.len(),
        stim_act,
        stim.iter().copied().fold(-1.0f32, f32::max)
    );
}

fn cmd_run(a: RunArgs, matches: Option<&clap::ArgMatches>) -> Result<()> {
    // `--params`: the earlier run's t_end too, unless given here.
    let file_t_end = match &a.problem.params {
        Some(p) if !given(matches, "t_end") => read_params(p)?.1,
        _ => None,
    };
    let t_end_given = given(matches, "t_end");
    let t_end = if a.quick {
        5.0
    } else {
        file_t_end.unwrap_or(a.t_end)
    };
    ensure!(
        t_end > 0.0 && t_end.is_finite(),
        "--t-end {t_end} must be positive"
    );
    ensure!(
        a.snapshot_every >= 0.0 && a.snapshot_every.is_finite(),
        "--snapshot-every {} must be 0 (none) or a positive number of ms",
        a.snapshot_every
    );
    let spec = a.problem.to_spec_with(matches)?;
    if let Some(w) = problem::check_dt(spec.dt_ode)? {
        note!("{w}");
    }
    let mut cfg = problem::device_config(&spec)?;
    // Before any work: a run must not be lost to an unusable output folder.
    // Rank 0 checks the folder; its verdict is every rank's.
    poplar::dist::agree(output::prepare(&a.out, a.force).map_err(|e| format!("{e:#}")))?;
    let t_all = Instant::now();
    let t = Instant::now();
    let (mesh, warnings) = problem::load_mesh(&spec)?;
    for w in &warnings {
        note!("{w}");
    }
    let setup = problem::setup(&spec, &mesh)?;
    // A paced run lasts its beats (a cycle after the last pulse: --bcl when the main site
    // paces, else the longest interval between pulses and at least 500 ms) unless --t-end
    // says otherwise.
    let paced = problem::paced(&setup);
    let starts = problem::pulse_starts(&setup);
    let t_end = match starts.last() {
        Some(&last) if paced && !t_end_given && file_t_end.is_none() && !a.quick => {
            let cycle = if spec.beats > 1 {
                spec.bcl
            } else {
                starts.windows(2).map(|w| w[1] - w[0]).fold(500.0, f64::max)
            };
            last + cycle
        }
        _ => t_end,
    };
    let setup_s = t.elapsed().as_secs_f64();
    cfg.chunk_steps = chunk_steps_for(a.snapshot_every, f64::from(setup.dt_ode), cfg.chunk_steps);
    let trace_points = a
        .trace_point
        .iter()
        .map(|t| {
            let v: Vec<f64> = t
                .split(',')
                .map(|x| x.trim().parse::<f64>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| anyhow::anyhow!("--trace-point {t}: give x,y,z in mm"))?;
            ensure!(
                v.len() == 3 && v.iter().all(|x| x.is_finite()),
                "--trace-point {t}: give x,y,z in mm"
            );
            Ok([v[0], v[1], v[2]])
        })
        .collect::<Result<Vec<_>>>()?;
    if !trace_points.is_empty() {
        ensure!(
            a.trace_every.is_finite() && a.trace_every > 0.0,
            "--trace-every {} must be a positive number of ms",
            a.trace_every
        );
        cfg.chunk_steps = cfg.chunk_steps.min(chunk_steps_for(
            a.trace_every,
            f64::from(setup.dt_ode),
            cfg.chunk_steps,
        ));
    }
    let mut traces = output::Traces::new(&trace_points, &setup);
    for (p, (_, c)) in trace_points
        .iter()
        .zip(trace_points.iter().map(|&p| (p, setup.nearest_cell(p))))
    {
        let d = setup.centroids[c];
        say!(
            "trace point ({} {} {}) mm: cell {c}, centroid ({:.3} {:.3} {:.3}) mm",
            p[0],
            p[1],
            p[2],
            d[0],
            d[1],
            d[2]
        );
    }
    traces.record(0.0, &setup.initial_states()[..setup.n]);

    say!("== cardiac run");
    match &spec.mesh {
        None => say!(
            "problem: Niederer slab 20 × 7 × 3 mm, dx {} mm: {} tetrahedra; fibres along x; TP06 epi",
            spec.dx, setup.n
        ),
        Some(p) => {
            let bb = mesh
                .bounding_box()
                .map(|(lo, hi)| format!("{lo:.2?} to {hi:.2?} mm"))
                .unwrap_or_default();
            let tags: Vec<&str> = mesh.surfaces.iter().map(|s| s.name.as_str()).collect();
            say!(
                "problem: {} (× {}): {} tetrahedra spanning {bb}; {}; surfaces {tags:?}",
                p.display(),
                spec.scale,
                setup.n,
                if mesh.fibres.is_some() {
                    "fibres from the mesh or --fibre"
                } else {
                    "no fibres: isotropic conduction σ = σ_l"
                },
            );
        }
    }
    for line in problem::describe_stimulus(&spec, &setup) {
        say!("{line}");
    }
    for line in problem::advice(&spec, &mesh, &problem::conductivity(&spec, &mesh)) {
        note!("{line}");
    }
    say!(
        "time: dt_ode {} ms, p = {} diffusion steps of {:.4} ms per ODE step (stable up to {:.4} ms); until {t_end} ms or all activated",
        setup.dt_ode, setup.pde_steps, setup.dt_pde, setup.dt_stable
    );
    say!(
        "machine: {}",
        describe_machine(&cfg.target, cfg.tiles.min(setup.n), cfg.strategy)
    );

    let t = Instant::now();
    let prob = device::build(&setup, &cfg)?;
    let build_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let exe = compile_or_hint(&prob, spec.chips)?;
    let compile_s = t.elapsed().as_secs_f64();
    // The page's static part is taken now: the engine takes the executable over.
    let page = (!a.no_report).then(|| {
        let title = format!(
            "cardiac run: {}, {} chip(s), {} strategy",
            match &spec.mesh {
                None => format!("slab dx {} mm", spec.dx),
                Some(p) => p.display().to_string(),
            },
            spec.chips,
            cfg.strategy.name()
        );
        poplar_viewer::ReportData::from_executable(&exe, &title)
    });
    let mem: Vec<u32> = exe
        .tiles
        .iter()
        .map(|t| t.memory_bytes)
        .filter(|&b| b > 0)
        .collect();
    let (mem_max, mem_med) = max_median(mem);
    say!(
        "partition and halos ({} tiles; memory per tile max {} B, median {} B of {} B):",
        prob.plan.tiles.len(),
        mem_max,
        mem_med,
        cfg.target.bytes_per_tile
    );
    say!("  {}", PartitionStats::table_header());
    say!("  {}", PartitionStats::new(&prob.plan).table_row());
    // The graph (with its initial values) is not needed once compiled, and the engine takes
    // the executable over: the initial data are then held once, in tile memory.
    let info = prob.info.clone();
    drop(prob);
    say!("progress:");
    let mut snapshots = Snapshots::new(&a.out, a.snapshot_every);
    let mut beats = paced.then(|| output::Beats::from_starts(starts.clone(), setup.n));
    let mut hook = |run: &DeviceRun| {
        if let Some(b) = beats.as_mut() {
            let (up, down) = run.last_crossings()?;
            b.record(&up, &down);
        }
        if !traces.is_empty() {
            let t = run.steps() as f64 * f64::from(run.info.dt_ode);
            traces.record(t, &run.voltage()?);
        }
        snapshots.after_chunk(run, &mesh)
    };
    let (res, sim_s, profile) = run_device(
        exe,
        info,
        t_end,
        a.threads,
        !a.no_profile,
        Some(&mut hook),
        LoopOptions {
            centroids: Some(&setup.centroids),
            to_t_end: paced,
        },
    )?;
    snapshots.finish()?;
    traces.write(&a.out)?;
    let mut report = RunReport::new(&setup, &res, spec.slab_dx());
    // The mesh as an absolute path, so that the record works from any folder.
    let mut recorded = spec.clone();
    if let Some(m) = &spec.mesh {
        recorded.mesh = Some(std::fs::canonicalize(m).unwrap_or_else(|_| m.clone()));
    }
    report.parameters = Some(serde_json::json!({
        "problem": recorded,
        "t_end": t_end,
        "note": "repeat this run with `cardiac run --params results.json`",
    }));
    say!("results (simulated {:.2} ms):", res.t);
    print_points(&report);
    if let (Some(dx), true) = (spec.slab_dx(), spec.benchmark_stimulus()) {
        if let Some((lo, hi)) = problem::published_p8_spread(dx) {
            say!(
                "  published codes put P8 at {lo}–{hi} ms at dx {dx} mm (docs/cardiac.md, Niederer check)"
            );
        }
    }
    print_activation_summary(&setup, &res);
    if a.native && poplar::dist::is_root() {
        let t = Instant::now();
        let mut nat = NativeSolver::new(&setup);
        while nat.time() < res.t - 1e-6 {
            nat.step();
        }
        let nr = nat.results();
        let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let same = bits(&nr.activation) == bits(&res.activation) && bits(&nr.v) == bits(&res.v);
        say!(
            "native reference: {:.2} s; framework == native bit for bit: {same}",
            t.elapsed().as_secs_f64()
        );
    }
    if let Some(b) = &beats {
        say!("beats (activation, repolarisation through -70 mV, APD = their difference):");
        let summary = b.summary();
        for (k, (act, rep, apd)) in summary.iter().enumerate() {
            say!(
                "  beat {:>3}: {act} cells activated, {rep} repolarised, median APD {apd:.1} ms",
                k + 1
            );
        }
        report.beats = Some(
            summary
                .iter()
                .enumerate()
                .map(|(k, &(a, r, apd))| cardiac::report::BeatSummary {
                    beat: k + 1,
                    activated: a,
                    repolarised: r,
                    median_apd_ms: if apd.is_finite() { Some(apd) } else { None },
                })
                .collect(),
        );
    }
    output::write_outputs_with(&a.out, &mesh, &res, &report, beats.as_ref())?;
    // Rank 0 writes the files of an MPI job.
    let root = poplar::dist::is_root();
    if let Some(p) = profile.as_ref().filter(|_| root) {
        print_phase_breakdown(p, &cfg.target, setup.dt_ode, res.t);
        p.save(a.out.join("profile.json"))
            .with_context(|| format!("writing {}/profile.json", a.out.display()))?;
    }
    if let Some(mut page) = page.filter(|_| root) {
        if let Some(p) = &profile {
            page = page.with_profile(p)?;
        }
        // The folder was checked for earlier results (`output::prepare`) before the run.
        poplar_viewer::write(&a.out.join("report.html"), &page, true)?;
        say!(
            "wrote {}/report.html (open it in a browser: memory per tile, program tree, liveness, execution)",
            a.out.display()
        );
    }
    say!(
        "timings: set-up (mesh + operator) {setup_s:.2} s, graph build {build_s:.2} s, compile {compile_s:.2} s, simulation {sim_s:.2} s ({:.3} s per simulated ms), total {:.2} s",
        sim_s / f64::from(res.t).max(1e-9),
        t_all.elapsed().as_secs_f64()
    );
    say!(
        "wrote {0}/activation.vtu and {0}/results.json",
        a.out.display()
    );
    Ok(())
}

/// Modelled cycles per labelled block (PDE, ODE), per ODE step, split into compute, exchange
/// and sync, from the engine's profiler.
fn print_phase_breakdown(p: &Profile, target: &Target, dt_ode: f32, t: f32) {
    let steps = (f64::from(t) / f64::from(dt_ode)).round().max(1.0);
    let us = |c: f64| c / target.clock_hz * 1e6;
    say!(
        "phase breakdown (modelled cycles per ODE step, {steps} steps; µs at {:.2} GHz):",
        target.clock_hz / 1e9
    );
    say!(
        "  {:<8} {:>12} {:>12} {:>12} {:>12} {:>10}",
        "label",
        "compute",
        "exchange",
        "sync",
        "total",
        "µs"
    );
    let mut sum = 0.0;
    for l in p.summary_by_label() {
        let per = |c: u64| c as f64 / steps;
        sum += per(l.total);
        say!(
            "  {:<8} {:>12.0} {:>12.0} {:>12.0} {:>12.0} {:>10.2}",
            l.name,
            per(l.compute),
            per(l.exchange),
            per(l.sync),
            per(l.total),
            us(per(l.total))
        );
    }
    let total = p.total_cycles() as f64 / steps;
    say!(
        "  per ODE step: {total:.0} cycles = {:.2} µs modelled (labels sum {sum:.0}); {:.3} s of chip time per simulated second",
        us(total),
        us(total) * 1e-6 / (f64::from(dt_ode) * 1e-3)
    );
    // The simulator's own cost on this host, for comparison with the native reference.
    let wall = |kind: PhaseKind| {
        p.phases
            .iter()
            .filter(|ph| ph.kind == kind)
            .map(|ph| ph.wall_ns as f64)
            .sum::<f64>()
            / steps
            / 1e6
    };
    say!(
        "  simulator host time per ODE step: compute {:.3} ms, exchange {:.3} ms",
        wall(PhaseKind::Compute),
        wall(PhaseKind::Exchange)
    );
}

fn max_median(mut v: Vec<u32>) -> (u32, u32) {
    v.sort_unstable();
    (
        v.last().copied().unwrap_or(0),
        v.get(v.len() / 2).copied().unwrap_or(0),
    )
}

/// ODE steps per device run: the default chunk, or fewer so that snapshots every `every` ms
/// fall on chunk ends (at least one step).
fn chunk_steps_for(every: f64, dt: f64, default: u32) -> u32 {
    if every <= 0.0 {
        return default;
    }
    let steps = (every / dt).round().max(1.0);
    if steps < f64::from(default) {
        steps as u32
    } else {
        default
    }
}

fn cmd_compile(
    problem: ProblemArgs,
    output: PathBuf,
    force: bool,
    matches: Option<&clap::ArgMatches>,
) -> Result<()> {
    ensure!(
        force || !output.exists(),
        "{} exists: pass --force to overwrite it, or choose another -o",
        output.display()
    );
    let spec = problem.to_spec_with(matches)?;
    if let Some(w) = problem::check_dt(spec.dt_ode)? {
        note!("{w}");
    }
    let (mesh, warnings) = problem::load_mesh(&spec)?;
    for w in &warnings {
        note!("{w}");
    }
    let setup = problem::setup(&spec, &mesh)?;
    let cfg = problem::device_config(&spec)?;
    let prob = device::build(&setup, &cfg)?;
    let mut exe = compile_or_hint(&prob, spec.chips)?;
    bundle::attach(
        &mut exe,
        &prob.info,
        &Probes::select(&setup, spec.slab_dx()),
        &mesh,
    )?;
    if poplar::dist::is_root() {
        exe.save(&output)
            .with_context(|| format!("saving {}", output.display()))?;
    }
    say!(
        "wrote {} (the executable, with its run info, benchmark points and mesh)",
        output.display()
    );
    Ok(())
}

/// Compiles, turning "out of tile memory" into advice: more chips give more tiles.
fn compile_or_hint(prob: &device::DeviceProblem, chips: u32) -> Result<Executable> {
    match device::compile_problem(prob) {
        Err(device::DeviceError::Compile(e @ poplar::CompileError::OutOfMemory { .. })) => {
            Err(anyhow::Error::new(e).context(format!(
                "the problem does not fit in the tile memory of {chips} chip(s): give more \
                 tiles with --chips {} (1,472 tiles each)",
                chips * 2
            )))
        }
        r => Ok(r?),
    }
}

fn cmd_exec(
    file: PathBuf,
    t_end: f64,
    out: Option<PathBuf>,
    force: bool,
    threads: Option<usize>,
    snapshot_every: f64,
) -> Result<()> {
    ensure!(
        t_end > 0.0 && t_end.is_finite(),
        "--t-end {t_end} must be positive"
    );
    ensure!(
        snapshot_every >= 0.0 && snapshot_every.is_finite(),
        "--snapshot-every {snapshot_every} must be 0 (none) or a positive number of ms"
    );
    let exe = Executable::load(&file)
        .with_context(|| format!("loading the executable {}", file.display()))?;
    let bundle::Bundle { info, probes, mesh } = bundle::read(&exe, &file)?;
    if let Some(dir) = &out {
        poplar::dist::agree(output::prepare(dir, force).map_err(|e| format!("{e:#}")))?;
    }
    say!(
        "== cardiac exec {}: {} cells, dt_ode {} ms, p = {}; machine {} chip(s) × {} tiles",
        file.display(),
        info.n,
        info.dt_ode,
        info.pde_steps,
        exe.target.num_ipus,
        exe.target.tiles_per_ipu
    );
    let mut snapshots = match &out {
        Some(dir) => Snapshots::new(dir, snapshot_every),
        None => Snapshots::none(),
    };
    let mut hook = |run: &DeviceRun| snapshots.after_chunk(run, &mesh);
    let (res, secs, _) = run_device(
        exe,
        info,
        t_end,
        threads,
        false,
        Some(&mut hook),
        LoopOptions::default(),
    )?;
    snapshots.finish()?;
    let done = res.activation.iter().filter(|&&a| a >= 0.0).count();
    say!(
        "simulated {:.2} ms in {:.2} s; {done} of {} cells activated",
        res.t,
        secs,
        res.activation.len()
    );
    let report = probes.report(&res)?;
    print_points(&report);
    if let Some(dir) = out {
        output::write_outputs(&dir, &mesh, &res, &report)?;
        say!(
            "wrote {0}/results.json and {0}/activation.vtu",
            dir.display()
        );
    }
    Ok(())
}

fn cmd_partition(dx: f64, chips: Vec<u32>) -> Result<()> {
    let spec = ProblemSpec::slab(dx);
    let (mesh, _) = problem::load_mesh(&spec)?;
    let setup = problem::setup(&spec, &mesh)?;
    say!("slab dx {dx} mm: {} cells", setup.n);
    say!(
        "{:>5} | {:>7} {:>7} | {}",
        "chips",
        "mem max",
        "mem med",
        PartitionStats::table_header()
    );
    for &c in &chips {
        ensure!(
            (1..=64).contains(&c),
            "chip count {c} must be between 1 and 64"
        );
        for s in Strategy::ALL {
            let cfg = device::DeviceConfig::chips(c, s);
            let p = device::build(&setup, &cfg)?;
            let exe = device::compile_problem(&p)?;
            let (mx, md) = max_median(
                exe.tiles
                    .iter()
                    .map(|t| t.memory_bytes)
                    .filter(|&b| b > 0)
                    .collect(),
            );
            say!(
                "{:>5} | {:>7} {:>7} | {}",
                c,
                mx,
                md,
                PartitionStats::new(&p.plan).table_row()
            );
        }
    }
    say!(
        "(memory per tile in bytes, from the compiled executable: max and median over used tiles)"
    );
    Ok(())
}

fn cmd_plot(
    inputs: Vec<PathBuf>,
    output: PathBuf,
    title: String,
    labels: Option<Vec<String>>,
) -> Result<()> {
    if let Some(l) = &labels {
        ensure!(
            l.len() == inputs.len(),
            "--labels has {} labels for {} inputs",
            l.len(),
            inputs.len()
        );
    }
    let mut series = Vec::new();
    for (i, p) in inputs.iter().enumerate() {
        let r = RunReport::load(p)?;
        ensure!(
            !r.diagonal.is_empty(),
            "{} has no diagonal samples (a user-mesh run?)",
            p.display()
        );
        let label = match (labels.as_ref().map(|l| l[i].clone()), r.dx_mm, r.dt_ode_ms) {
            (Some(l), _, _) => l,
            (None, Some(dx), Some(dt)) => format!("dx {dx} mm, dt {dt} ms"),
            (None, Some(dx), None) => format!("dx {dx} mm"),
            _ => p.display().to_string(),
        };
        let p8 = r
            .point("P8")
            .map(|t| format!(" (P8 {t:.1} ms)"))
            .unwrap_or_default();
        series.push(Series::from_report(format!("{label}{p8}"), &r));
    }
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    plot_diagonal(&series, &title, &output)?;
    say!("wrote {} ({} series)", output.display(), series.len());
    Ok(())
}

/// Prints the error and its causes, one per line, without a backtrace (RUST_BACKTRACE is for
/// panics; a bad input is not one).
fn main() -> std::process::ExitCode {
    // Under `mpiexec -n P` (built with the feature `mpi`) the job has P ranks, each running
    // this same program over its share of the chips; started alone, one rank.
    poplar::engine::job_main(real_main)
}

#[derive(Args)]
struct CellArgs {
    #[arg(long, value_enum, default_value_t = CellType::Epi)]
    cell_type: CellType,
    /// Time step (ms), at most 0.2.
    #[arg(long, default_value_t = 0.02)]
    dt: f64,
    /// Basic cycle length (ms).
    #[arg(long, default_value_t = 1000.0)]
    bcl: f64,
    /// S1 beats.
    #[arg(long, default_value_t = 5)]
    beats: usize,
    /// Stimulus current (pA/pF; negative depolarises, the TP06 convention).
    #[arg(long, default_value_t = -52.0, allow_negative_numbers = true)]
    stim_amplitude: f64,
    /// Pulse length (ms).
    #[arg(long, default_value_t = 1.0)]
    stim_duration: f64,
    /// First pulse (ms).
    #[arg(long, default_value_t = 10.0)]
    stim_start: f64,
    /// S1-S2 restitution: S2 coupling intervals after the last S1 pulse (ms), as a list
    /// (300,350,400) or a range start:stop:step (250:1000:25).
    #[arg(long)]
    s2: Option<String>,
    /// Sampling interval of trace.csv (ms).
    #[arg(long, default_value_t = 0.1)]
    trace_every: f64,
    /// TP06 conductance scalings, e.g. GKr*0.5,GCaL*1.2 (as `cardiac run --tp06`).
    #[arg(long)]
    tp06: Option<String>,
    /// Output folder (checked before any work; an earlier run's files are kept unless --force).
    #[arg(long, default_value = "cell-out")]
    out: PathBuf,
    #[arg(long)]
    force: bool,
}

/// `300,350` or `250:1000:25` (inclusive).
fn parse_s2(text: &str) -> Result<Vec<f64>> {
    let bad = || {
        anyhow::anyhow!("--s2 {text}: give intervals in ms as a list (300,350,400) or a range start:stop:step (250:1000:25)")
    };
    if let Some((a, rest)) = text.split_once(':') {
        let (b, c) = rest.split_once(':').ok_or_else(bad)?;
        let (a, b, c): (f64, f64, f64) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
            c.trim().parse().map_err(|_| bad())?,
        );
        ensure!(c > 0.0 && a <= b && a.is_finite() && b.is_finite(), bad());
        let n = ((b - a) / c + 1e-9).floor() as usize + 1;
        ensure!(n <= 10_000, "--s2 {text}: {n} intervals, at most 10,000");
        Ok((0..n).map(|k| a + c * k as f64).collect())
    } else {
        text.split(',')
            .map(|x| x.trim().parse::<f64>().map_err(|_| bad()))
            .collect()
    }
}

fn cmd_cell(a: CellArgs) -> Result<()> {
    use cardiac::app::single;
    use cardiac::cell::{self, Protocol};
    let p = Protocol {
        cell_type: a.cell_type,
        dt: a.dt,
        bcl: a.bcl,
        beats: a.beats,
        amplitude: a.stim_amplitude,
        duration: a.stim_duration,
        start: a.stim_start,
        tail: None,
        scale: match &a.tp06 {
            Some(t) => Scalings::ONE
                .parse_onto(t)
                .map_err(|e| anyhow::anyhow!("--tp06: {e}"))?,
            None => Scalings::ONE,
        },
    };
    p.check()?;
    ensure!(
        a.trace_every.is_finite() && a.trace_every > 0.0,
        "--trace-every {} must be positive",
        a.trace_every
    );
    let s2 = a.s2.as_deref().map(parse_s2).transpose()?;
    single::prepare(&a.out, a.force)?;
    say!(
        "== cardiac cell: TP06 {:?}, dt {} ms; {} beats at {} ms, {} pA/pF for {} ms from {} ms",
        p.cell_type,
        p.dt,
        p.beats,
        p.bcl,
        p.amplitude,
        p.duration,
        p.start
    );
    let t = Instant::now();
    let run = cell::pace(&p)?;
    let secs = t.elapsed().as_secs_f64();
    say!("  beat  v_rest   v_max  dV/dt_max  upstroke  APD30   APD50   APD90 (mV, mV/ms, ms)");
    for (k, b) in run.beats.iter().enumerate() {
        match b {
            Some(f) => say!(
                "  {:>4} {:7.2} {:7.2} {:10.1} {:9.3} {:7.2} {:7.2} {:7.2}",
                f.beat,
                f.v_rest,
                f.v_max,
                f.dvdt_max,
                f.t_upstroke,
                f.apd30,
                f.apd50,
                f.apd90
            ),
            None => say!("  {:>4}  no capture (V stayed below 0 mV)", k + 1),
        }
    }
    say!(
        "  {:.2} s for {} beats ({:.1} beats/s)",
        secs,
        p.beats,
        p.beats as f64 / secs.max(1e-9)
    );
    let rest = match &s2 {
        Some(s2) => {
            let r = cell::restitution(&p, s2)?;
            say!("S1-S2 restitution (S2 after the last S1 pulse):");
            say!("  S2 (ms)  DI (ms)  APD90 (ms)");
            for c in &r.1 {
                match &c.features {
                    Some(f) => say!("  {:7.1} {:8.1} {:10.2}", c.s2, c.di, f.apd90),
                    None => say!("  {:7.1} {:8.1}  no capture (refractory)", c.s2, c.di),
                }
            }
            Some(r)
        }
        None => None,
    };
    single::write(&a.out, &p, &run, rest.as_ref(), a.trace_every)?;
    say!(
        "wrote {0}/trace.csv, {0}/beats.csv{1} and {0}/cell.json",
        a.out.display(),
        if rest.is_some() {
            format!(", {}/restitution.csv", a.out.display())
        } else {
            String::new()
        }
    );
    Ok(())
}

fn real_main() -> Result<()> {
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let sub = matches.subcommand().map(|(_, m)| m);
    match cli.cmd {
        Cmd::Run(a) => cmd_run(a, sub),
        Cmd::Cell(a) => cmd_cell(a),
        Cmd::Compile {
            problem,
            output,
            force,
        } => cmd_compile(problem, output, force, sub),
        Cmd::Exec {
            file,
            t_end,
            out,
            force,
            threads,
            snapshot_every,
        } => cmd_exec(file, t_end, out, force, threads, snapshot_every),
        Cmd::Partition { dx, chips } => cmd_partition(dx, chips),
        Cmd::PlotDiagonal {
            inputs,
            output,
            title,
            labels,
        } => cmd_plot(inputs, output, title, labels),
    }
}

#[cfg(test)]
mod tests {
    use super::chunk_steps_for;

    #[test]
    fn chunks_shrink_to_the_snapshot_interval_only() {
        // dt 0.02 ms, default chunk 250 steps (5 ms).
        assert_eq!(chunk_steps_for(0.0, 0.02, 250), 250, "no snapshots");
        assert_eq!(chunk_steps_for(10.0, 0.02, 250), 250, "longer interval");
        assert_eq!(chunk_steps_for(5.0, 0.02, 250), 250, "equal interval");
        assert_eq!(chunk_steps_for(2.0, 0.02, 250), 100);
        assert_eq!(
            chunk_steps_for(0.05, 0.02, 250),
            3,
            "rounded to whole steps"
        );
        assert_eq!(chunk_steps_for(0.001, 0.02, 250), 1, "at least one step");
    }
}
