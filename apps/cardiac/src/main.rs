//! `cardiac`: the monodomain simulator on poplar-rs.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};
use cardiac::matrix::Conductivity;
use cardiac::mesh::{CellType, ReadOptions, TetMesh};
use cardiac::partition::{PartitionStats, Strategy};
use cardiac::plot::{plot_diagonal, Series};
use cardiac::report::RunReport;
use cardiac::solver::device::{self, DeviceConfig, DeviceRun, RunInfo};
use cardiac::solver::native::NativeSolver;
use cardiac::solver::{Results, Setup, Stimulus};
use clap::{Args, Parser, Subcommand, ValueEnum};
use poplar::profile::{PhaseKind, Profile, ProfileOptions};
use poplar::{EngineOptions, Executable, Target};
use serde::{Deserialize, Serialize};

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
    /// Build and compile, and save the executable, plus what the host needs to run it and
    /// report on it: FILE.json (run info), FILE.probes.json (benchmark points) and
    /// FILE.mesh.vtu (the mesh, for activation.vtu and snapshots).
    Compile {
        #[command(flatten)]
        problem: ProblemArgs,
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Run a saved executable (written by `cardiac compile`).
    Exec {
        file: PathBuf,
        /// Simulated time to run (ms), rounded up to whole chunks of 250 ODE steps (5 ms at
        /// dt_ode 0.02); less when every cell has activated.
        #[arg(long, default_value_t = 5.0)]
        t_end: f64,
        /// Write results here: results.json (benchmark points of a slab executable), and, from
        /// the mesh saved beside the executable, activation.vtu and voltage snapshots.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Simulator threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// With --out: a voltage snapshot (VTU) every this many simulated ms, at the first end
        /// of a 250-step chunk at or after each multiple (the chunk is fixed in a saved
        /// executable); 0 writes none.
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
    #[arg(long, value_enum, default_value_t = CellKind::Epi)]
    cell_type: CellKind,
    /// Stimulus box min,max corners (mm): x0,y0,z0,x1,y1,z1. Default: the Niederer corner cube.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    stim_box: Option<Vec<f64>>,
    /// Stimulus sphere cx,cy,cz,r (mm).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    stim_sphere: Option<Vec<f64>>,
    /// Stimulate the cells touching this surface tag (e.g. ENDO_LV).
    #[arg(long)]
    stim_surface: Option<String>,
    /// ODE time step (ms).
    #[arg(long, default_value_t = 0.02)]
    dt_ode: f64,
    /// Number of chips (1,472 tiles each).
    #[arg(long, default_value_t = 1)]
    chips: u32,
    /// Use only this many tiles (default: all tiles of the chips).
    #[arg(long)]
    tiles: Option<usize>,
    /// Halo strategy.
    #[arg(long, value_enum, default_value_t = StrategyArg::MixedClean)]
    strategy: StrategyArg,
}

impl ProblemArgs {
    /// The built-in slab at `dx` with every other option at its default.
    fn slab(dx: f64) -> ProblemArgs {
        ProblemArgs {
            dx,
            mesh: None,
            scale: 1.0,
            fibre: None,
            cell_type: CellKind::Epi,
            stim_box: None,
            stim_sphere: None,
            stim_surface: None,
            dt_ode: 0.02,
            chips: 1,
            tiles: None,
            strategy: StrategyArg::MixedClean,
        }
    }

    /// Slab size for reports; `None` for a user mesh.
    fn slab_dx(&self) -> Option<f64> {
        self.mesh.is_none().then_some(self.dx)
    }
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    problem: ProblemArgs,
    /// Stop at this simulated time (ms), rounded up to whole chunks of ODE steps (250 steps,
    /// 5 ms at dt_ode 0.02, or the snapshot interval if shorter), or earlier when every cell
    /// has activated.
    #[arg(long, default_value_t = 300.0)]
    t_end: f64,
    /// A short smoke run (5 ms) for CI.
    #[arg(long)]
    quick: bool,
    /// Also run the native reference and compare.
    #[arg(long)]
    native: bool,
    /// Output folder.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Simulator threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Do not profile the run (no phase breakdown, no profile.json).
    #[arg(long)]
    no_profile: bool,
    /// Write the membrane voltage as a VTU snapshot every this many simulated ms, listed in
    /// `voltage.pvd` for ParaView's time slider; 0 writes none. The device runs in chunks of
    /// at most 250 ODE steps, shortened to the snapshot interval when that is shorter. A
    /// snapshot is as large as activation.vtu (≈ 100 MB at 0.1 mm).
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true)]
    snapshot_every: f64,
}

#[derive(Clone, Copy, ValueEnum)]
enum CellKind {
    Endo,
    Mid,
    Epi,
}

#[derive(Clone, Copy, ValueEnum)]
enum StrategyArg {
    /// The whole separator to every neighbour.
    Full,
    /// One smallest enclosing range per neighbour.
    Ranged,
    /// A mixed range broadcast to its readers, then one clean range per neighbour (the paper's
    /// choice).
    MixedClean,
    /// One range per run of needed cells, gaps of up to 16 cells bridged (not in the paper).
    Runs,
}

impl From<StrategyArg> for Strategy {
    fn from(s: StrategyArg) -> Strategy {
        match s {
            StrategyArg::Full => Strategy::Full,
            StrategyArg::Ranged => Strategy::Ranged,
            StrategyArg::MixedClean => Strategy::MixedClean,
            StrategyArg::Runs => Strategy::Runs,
        }
    }
}

/// Where `compile` records, beside the executable, which cells are the benchmark points and the
/// diagonal samples, so that `exec` can report them (FILE.probes.json).
#[derive(Serialize, Deserialize)]
struct Probes {
    dx_mm: Option<f64>,
    dt_ode_ms: f64,
    /// (name, point, mesh cell) of P1..P9.
    points: Vec<(String, [f64; 3], usize)>,
    /// (s, point, mesh cell) along the diagonal.
    diagonal: Vec<(f64, [f64; 3], usize)>,
}

impl Probes {
    fn new(setup: &Setup, dx_mm: Option<f64>) -> Probes {
        // The same cells RunReport::new samples.
        let res = Results {
            activation: (0..setup.n).map(|i| i as f32).collect(),
            v: Vec::new(),
            t: 0.0,
        };
        let r = RunReport::new(setup, &res, dx_mm);
        Probes {
            dx_mm,
            dt_ode_ms: cardiac::report::round_f32(setup.dt_ode),
            points: r
                .points
                .iter()
                .map(|p| (p.name.clone(), p.point_mm, p.activation_ms as usize))
                .collect(),
            diagonal: r
                .diagonal
                .iter()
                .map(|d| (d.s, d.point_mm, d.activation_ms as usize))
                .collect(),
        }
    }

    fn report(&self, res: &Results) -> Result<RunReport> {
        let at = |c: usize| {
            res.activation.get(c).copied().with_context(|| {
                format!(
                    "probe cell {c} is outside the {} cells",
                    res.activation.len()
                )
            })
        };
        Ok(RunReport {
            dx_mm: self.dx_mm,
            dt_ode_ms: Some(self.dt_ode_ms),
            cells: Some(res.activation.len()),
            t_ms: res.t,
            points: self
                .points
                .iter()
                .map(|(n, p, c)| {
                    Ok(cardiac::report::PointTime {
                        name: n.clone(),
                        point_mm: *p,
                        activation_ms: at(*c)?,
                    })
                })
                .collect::<Result<_>>()?,
            diagonal: self
                .diagonal
                .iter()
                .map(|(s, p, c)| {
                    Ok(cardiac::report::DiagonalSample {
                        s: *s,
                        point_mm: *p,
                        activation_ms: at(*c)?,
                    })
                })
                .collect::<Result<_>>()?,
        })
    }
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

fn load_mesh(a: &ProblemArgs) -> Result<TetMesh> {
    check_list("fibre", &a.fibre, 3, "x,y,z")?;
    check_list("stim-box", &a.stim_box, 6, "x0,y0,z0,x1,y1,z1 in mm")?;
    check_list("stim-sphere", &a.stim_sphere, 4, "cx,cy,cz,r in mm")?;
    let mesh = match &a.mesh {
        None => {
            ensure!(
                a.dx > 0.0 && a.dx <= 3.0,
                "--dx {} mm: the slab needs 0 < dx <= 3 mm (the benchmark uses 0.5, 0.2, 0.1)",
                a.dx
            );
            TetMesh::slab(20.0, 7.0, 3.0, a.dx)
        }
        Some(p) => {
            ensure!(
                p.is_file(),
                "mesh file {} does not exist or is not a file",
                p.display()
            );
            ensure!(
                a.scale.is_finite() && a.scale > 0.0,
                "--scale {} must be positive",
                a.scale
            );
            let m = cardiac::mesh::read_mesh(p, &ReadOptions::with_scale(a.scale))
                .with_context(|| format!("reading mesh {}", p.display()))?;
            let ct = match a.cell_type {
                CellKind::Endo => CellType::Endo,
                CellKind::Mid => CellType::Mid,
                CellKind::Epi => CellType::Epi,
            };
            let m = m.with_default_cell_type(ct);
            match &a.fibre {
                Some(f) => m
                    .with_default_fibres(Some([f[0], f[1], f[2]]))
                    .context("--fibre")?,
                None => m,
            }
        }
    };
    mesh.validate().context("the mesh is not valid")?;
    Ok(mesh)
}

fn setup(a: &ProblemArgs, mesh: &TetMesh) -> Result<Setup> {
    let cond = if a.mesh.is_some() && mesh.fibres.is_none() {
        Conductivity {
            sigma_t: Conductivity::niederer().sigma_l,
            ..Conductivity::niederer()
        }
    } else {
        Conductivity::niederer()
    };
    let (cells, what) = if let Some(b) = &a.stim_box {
        (
            mesh.cells_in_box([b[0], b[1], b[2]], [b[3], b[4], b[5]]),
            format!("box {b:?} mm"),
        )
    } else if let Some(s) = &a.stim_sphere {
        (
            mesh.cells_in_sphere([s[0], s[1], s[2]], s[3]),
            format!("sphere {s:?} mm"),
        )
    } else if let Some(tag) = &a.stim_surface {
        (
            mesh.cells_touching_surface(tag).context("--stim-surface")?,
            format!("surface {tag}"),
        )
    } else {
        (
            mesh.cells_in_box([0.0; 3], [1.5; 3]),
            "the corner cube [0, 1.5]³ mm".to_string(),
        )
    };
    if cells.is_empty() {
        let bb = mesh
            .bounding_box()
            .map(|(lo, hi)| format!("; the mesh spans {lo:.3?} to {hi:.3?} mm"))
            .unwrap_or_default();
        bail!("the stimulus region ({what}) contains no cell centroid{bb}");
    }
    let stim = Stimulus {
        cells,
        density: 50.0,
        start: 0.0,
        duration: 2.0,
    };
    Ok(Setup::new(mesh, &cond, a.dt_ode, &stim)?)
}

fn device_config(a: &ProblemArgs) -> Result<DeviceConfig> {
    ensure!(
        (1..=64).contains(&a.chips),
        "--chips {} must be between 1 and 64",
        a.chips
    );
    let mut cfg = DeviceConfig::chips(a.chips, a.strategy.into());
    if let Some(t) = a.tiles {
        ensure!(
            t >= 1 && t <= cfg.tiles,
            "--tiles {t} must be between 1 and {}",
            cfg.tiles
        );
        cfg.tiles = t;
    }
    Ok(cfg)
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

/// Called after every chunk with the run, to write snapshots.
type ChunkHook<'a> = &'a mut dyn FnMut(&DeviceRun) -> Result<()>;

fn run_device(
    exe: Executable,
    info: RunInfo,
    t_end: f64,
    threads: Option<usize>,
    profile: bool,
    mut after_chunk: Option<ChunkHook<'_>>,
) -> Result<(Results, f64, Option<Profile>)> {
    let mut run = DeviceRun::from_executable(
        exe,
        info,
        EngineOptions {
            threads,
            ..Default::default()
        },
    )
    .context("setting up the engine")?;
    let dt = f64::from(run.info.dt_ode);
    if profile {
        run.engine.enable_profiling(ProfileOptions::default());
    }
    let tty = std::io::stderr().is_terminal();
    let t0 = Instant::now();
    loop {
        run.run_chunk().context("running the engine")?;
        let t = run.time()?;
        if let Some(hook) = after_chunk.as_mut() {
            hook(&run)?;
        }
        let act = run.activation()?;
        let done = act.iter().filter(|&&a| a >= 0.0).count();
        let secs = t0.elapsed().as_secs_f64();
        let line = format!(
            "  t = {t:7.2} ms  activated {done:>9}/{} cells ({:5.1} %)  {secs:7.1} s  ({:.2} s per simulated ms)",
            act.len(),
            100.0 * done as f64 / act.len().max(1) as f64,
            secs / f64::from(t).max(1e-9)
        );
        // On a terminal, one line redrawn in place; in a log file or pipe, one line per
        // chunk (carriage returns would pile every update onto a single line).
        if tty {
            eprint!("\r{line}   ");
        } else {
            eprintln!("{line}");
        }
        // Half a step of slack: the device's f32 clock lands just short of whole numbers.
        if f64::from(t) >= t_end - 0.5 * dt || done == act.len() {
            break;
        }
    }
    if tty {
        eprintln!();
    }
    let secs = t0.elapsed().as_secs_f64();
    let profile = run.engine.take_profile();
    Ok((run.results()?, secs, profile))
}

fn print_points(r: &RunReport) {
    if r.points.is_empty() {
        return;
    }
    println!("activation times at the benchmark points (ms; -1 = not activated):");
    for p in &r.points {
        let [x, y, z] = p.point_mm;
        println!(
            "  {} ({x:>4}, {y:>3}, {z:>3}) mm  {:8.3}",
            p.name, p.activation_ms
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
    println!(
        "activated {} of {} cells ({:.1} %)",
        act.len(),
        setup.n,
        100.0 * act.len() as f64 / setup.n.max(1) as f64
    );
    if let (Some(first), Some(last)) = (act.first(), act.last()) {
        println!(
            "activation time: first {first:.3} ms, median {:.3} ms, last {last:.3} ms",
            act[act.len() / 2]
        );
    }
    let stim: Vec<f32> = (0..setup.n)
        .filter(|&i| setup.stim_current[i] != 0.0)
        .map(|i| res.activation[i])
        .collect();
    let stim_act = stim.iter().filter(|&&a| a >= 0.0).count();
    println!(
        "stimulated cells: {} ({} activated, latest at {:.3} ms)",
        stim.len(),
        stim_act,
        stim.iter().copied().fold(-1.0f32, f32::max)
    );
}

/// Voltage snapshots of a run: `voltage_<t>ms.vtu` files and the `voltage.pvd` collection
/// that gives ParaView their times.
struct Snapshots {
    dir: PathBuf,
    /// ms between snapshots; 0 = none.
    every: f64,
    next: f64,
    written: Vec<(f64, String)>,
}

impl Snapshots {
    fn new(dir: &Path, every: f64) -> Self {
        Snapshots {
            dir: dir.to_path_buf(),
            every,
            next: every,
            written: Vec::new(),
        }
    }

    fn after_chunk(&mut self, run: &DeviceRun, mesh: &TetMesh) -> Result<()> {
        // Nominal time (steps × dt): the device's f32 clock drifts by a few µs over a run.
        let t = run.steps() as f64 * f64::from(run.info.dt_ode);
        // Half an ODE step of slack for the rounding of the product.
        let slack = 0.5 * f64::from(run.info.dt_ode);
        if self.every <= 0.0 || t + slack < self.next {
            return Ok(());
        }
        while self.next <= t + slack {
            self.next += self.every;
        }
        if self.written.is_empty() {
            std::fs::create_dir_all(&self.dir)
                .with_context(|| format!("creating {}", self.dir.display()))?;
        }
        let v = run.voltage()?;
        let name = format!("voltage_{t:09.3}ms.vtu");
        let path = self.dir.join(&name);
        cardiac::mesh::write_vtu(&path, mesh, &[("v_mV", &v)])
            .with_context(|| format!("writing {}", path.display()))?;
        self.written.push((t, name));
        Ok(())
    }

    /// Writes `voltage.pvd` listing the snapshots (none written: no file).
    fn finish(&self) -> Result<()> {
        if self.written.is_empty() {
            return Ok(());
        }
        let mut pvd = String::from(
            "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n  <Collection>\n",
        );
        for (t, name) in &self.written {
            pvd.push_str(&format!(
                "    <DataSet timestep=\"{t:.4}\" part=\"0\" file=\"{name}\"/>\n"
            ));
        }
        pvd.push_str("  </Collection>\n</VTKFile>\n");
        let path = self.dir.join("voltage.pvd");
        std::fs::write(&path, pvd).with_context(|| format!("writing {}", path.display()))?;
        println!(
            "wrote {} voltage snapshots ({:.3} … {:.3} ms) and {}",
            self.written.len(),
            self.written[0].0,
            self.written[self.written.len() - 1].0,
            path.display()
        );
        Ok(())
    }
}

/// `activation.vtu`: activation time and final voltage per cell.
fn write_activation_vtu(dir: &Path, mesh: &TetMesh, res: &Results) -> Result<()> {
    cardiac::mesh::write_vtu(
        dir.join("activation.vtu"),
        mesh,
        &[("activation_ms", &res.activation), ("v_mV", &res.v)],
    )
    .with_context(|| format!("writing {}/activation.vtu", dir.display()))
}

fn write_outputs(dir: &Path, mesh: &TetMesh, res: &Results, report: &RunReport) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    write_activation_vtu(dir, mesh, res)?;
    report
        .save(dir.join("results.json"))
        .with_context(|| format!("writing {}/results.json", dir.display()))?;
    Ok(())
}

fn cmd_run(a: RunArgs) -> Result<()> {
    let t_end = if a.quick { 5.0 } else { a.t_end };
    ensure!(
        t_end > 0.0 && t_end.is_finite(),
        "--t-end {t_end} must be positive"
    );
    let t_all = Instant::now();
    let t = Instant::now();
    let mesh = load_mesh(&a.problem)?;
    let setup = setup(&a.problem, &mesh)?;
    let setup_s = t.elapsed().as_secs_f64();
    let mut cfg = device_config(&a.problem)?;
    ensure!(
        a.snapshot_every >= 0.0 && a.snapshot_every.is_finite(),
        "--snapshot-every {} must be 0 (none) or a positive number of ms",
        a.snapshot_every
    );
    cfg.chunk_steps = chunk_steps_for(a.snapshot_every, f64::from(setup.dt_ode), cfg.chunk_steps);

    println!("== cardiac run");
    match &a.problem.mesh {
        None => println!(
            "problem: Niederer slab 20 × 7 × 3 mm, dx {} mm: {} tetrahedra; fibres along x; TP06 epi",
            a.problem.dx, setup.n
        ),
        Some(p) => {
            let bb = mesh
                .bounding_box()
                .map(|(lo, hi)| format!("{lo:.2?} to {hi:.2?} mm"))
                .unwrap_or_default();
            let tags: Vec<&str> = mesh.surfaces.iter().map(|s| s.name.as_str()).collect();
            println!(
                "problem: {} (× {}): {} tetrahedra spanning {bb}; {}; surfaces {tags:?}",
                p.display(),
                a.problem.scale,
                setup.n,
                if mesh.fibres.is_some() {
                    "fibres from the mesh or --fibre"
                } else {
                    "no fibres: isotropic conduction σ = σ_l"
                },
            );
        }
    }
    let stimulated = setup.stim_current.iter().filter(|&&s| s != 0.0).count();
    println!(
        "stimulus: {stimulated} cells, 50 µA/mm³ for {} ms from t = {} ms",
        setup.stim_duration, setup.stim_start
    );
    println!(
        "time: dt_ode {} ms, p = {} diffusion steps of {:.4} ms per ODE step (stable up to {:.4} ms); until {t_end} ms or all activated",
        setup.dt_ode, setup.pde_steps, setup.dt_pde, setup.dt_stable
    );
    println!(
        "machine: {}",
        describe_machine(&cfg.target, cfg.tiles.min(setup.n), cfg.strategy)
    );

    let t = Instant::now();
    let prob = device::build(&setup, &cfg)?;
    let build_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let exe = device::compile_problem(&prob)?;
    let compile_s = t.elapsed().as_secs_f64();
    let mem: Vec<u32> = exe
        .tiles
        .iter()
        .map(|t| t.memory_bytes)
        .filter(|&b| b > 0)
        .collect();
    let (mem_max, mem_med) = max_median(mem);
    println!(
        "partition and halos ({} tiles; memory per tile max {} B, median {} B of {} B):",
        prob.plan.tiles.len(),
        mem_max,
        mem_med,
        cfg.target.bytes_per_tile
    );
    println!("  {}", PartitionStats::table_header());
    println!("  {}", PartitionStats::new(&prob.plan).table_row());
    // The graph (with its initial values) is not needed once compiled, and the engine takes
    // the executable over: the initial data are then held once, in tile memory.
    let info = prob.info.clone();
    drop(prob);
    println!("progress:");
    let mut snapshots = Snapshots::new(&a.out, a.snapshot_every);
    let mut hook = |run: &DeviceRun| snapshots.after_chunk(run, &mesh);
    let (res, sim_s, profile) =
        run_device(exe, info, t_end, a.threads, !a.no_profile, Some(&mut hook))?;
    snapshots.finish()?;
    let report = RunReport::new(&setup, &res, a.problem.slab_dx());
    println!("results (simulated {:.2} ms):", res.t);
    print_points(&report);
    print_activation_summary(&setup, &res);
    if a.native {
        let t = Instant::now();
        let mut nat = NativeSolver::new(&setup);
        while nat.time() < res.t - 1e-6 {
            nat.step();
        }
        let nr = nat.results();
        let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let same = bits(&nr.activation) == bits(&res.activation) && bits(&nr.v) == bits(&res.v);
        println!(
            "native reference: {:.2} s; framework == native bit for bit: {same}",
            t.elapsed().as_secs_f64()
        );
    }
    write_outputs(&a.out, &mesh, &res, &report)?;
    if let Some(p) = &profile {
        print_phase_breakdown(p, &cfg.target, setup.dt_ode, res.t);
        p.save(a.out.join("profile.json"))
            .with_context(|| format!("writing {}/profile.json", a.out.display()))?;
    }
    println!(
        "timings: set-up (mesh + operator) {setup_s:.2} s, graph build {build_s:.2} s, compile {compile_s:.2} s, simulation {sim_s:.2} s ({:.3} s per simulated ms), total {:.2} s",
        sim_s / f64::from(res.t).max(1e-9),
        t_all.elapsed().as_secs_f64()
    );
    println!(
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
    println!(
        "phase breakdown (modelled cycles per ODE step, {steps} steps; µs at {:.2} GHz):",
        target.clock_hz / 1e9
    );
    println!(
        "  {:<8} {:>12} {:>12} {:>12} {:>12} {:>10}",
        "label", "compute", "exchange", "sync", "total", "µs"
    );
    let mut sum = 0.0;
    for l in p.summary_by_label() {
        let per = |c: u64| c as f64 / steps;
        sum += per(l.total);
        println!(
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
    println!(
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
    println!(
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

/// The files `cardiac compile` writes beside an executable.
struct Sidecars {
    /// Run info ([`RunInfo`]).
    meta: PathBuf,
    /// Benchmark points ([`Probes`]).
    probes: PathBuf,
    /// The mesh, in the executable's cell numbering before partitioning (mesh order).
    mesh: PathBuf,
}

fn sidecars(file: &Path) -> Sidecars {
    Sidecars {
        meta: file.with_extension("json"),
        probes: file.with_extension("probes.json"),
        mesh: file.with_extension("mesh.vtu"),
    }
}

fn cmd_compile(problem: ProblemArgs, output: PathBuf) -> Result<()> {
    let mesh = load_mesh(&problem)?;
    let setup = setup(&problem, &mesh)?;
    let prob = device::build(&setup, &device_config(&problem)?)?;
    let exe = device::compile_problem(&prob)?;
    exe.save(&output)
        .with_context(|| format!("saving {}", output.display()))?;
    let side = sidecars(&output);
    std::fs::write(&side.meta, serde_json::to_string(&prob.info)?)
        .with_context(|| format!("writing {}", side.meta.display()))?;
    std::fs::write(
        &side.probes,
        serde_json::to_string(&Probes::new(&setup, problem.slab_dx()))?,
    )
    .with_context(|| format!("writing {}", side.probes.display()))?;
    cardiac::mesh::write_vtu(&side.mesh, &mesh, &[])
        .with_context(|| format!("writing {}", side.mesh.display()))?;
    println!(
        "wrote {}, {}, {} and {}",
        output.display(),
        side.meta.display(),
        side.probes.display(),
        side.mesh.display()
    );
    Ok(())
}

fn cmd_exec(
    file: PathBuf,
    t_end: f64,
    out: Option<PathBuf>,
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
    let Sidecars { meta, probes, mesh } = sidecars(&file);
    let info: RunInfo =
        serde_json::from_str(&std::fs::read_to_string(&meta).with_context(|| {
            format!("reading {} (written by `cardiac compile`)", meta.display())
        })?)
        .with_context(|| format!("parsing {}", meta.display()))?;
    let act = exe
        .host_tensors
        .iter()
        .find(|h| h.name == "activation")
        .with_context(|| {
            format!(
                "{} has no `activation` tensor: not a cardiac executable",
                file.display()
            )
        })?;
    ensure!(
        act.shape.iter().product::<usize>() == info.n
            && info.new_to_old.len() == info.n
            && info.new_to_old.iter().all(|&o| (o as usize) < info.n),
        "{} does not describe {} ({} cells vs an activation tensor of {})",
        meta.display(),
        file.display(),
        info.n,
        act.shape.iter().product::<usize>()
    );
    println!(
        "== cardiac exec {}: {} cells, dt_ode {} ms, p = {}; machine {} chip(s) × {} tiles",
        file.display(),
        info.n,
        info.dt_ode,
        info.pde_steps,
        exe.target.num_ipus,
        exe.target.tiles_per_ipu
    );
    // The mesh is needed only for VTU output.
    let mesh = match &out {
        Some(_) if mesh.is_file() => {
            let m = cardiac::mesh::read_vtu(&mesh, &ReadOptions::default())
                .with_context(|| format!("reading {}", mesh.display()))?;
            ensure!(
                m.num_cells() == info.n,
                "{} has {} cells but {} describes {}",
                mesh.display(),
                m.num_cells(),
                meta.display(),
                info.n
            );
            Some(m)
        }
        Some(_) => {
            println!(
                "no {} beside the executable: activation.vtu and voltage snapshots are not written",
                mesh.display()
            );
            None
        }
        None => None,
    };
    let mut snapshots = match (&out, &mesh) {
        (Some(dir), Some(_)) => Snapshots::new(dir, snapshot_every),
        _ => Snapshots::new(Path::new("."), 0.0),
    };
    let mut hook = |run: &DeviceRun| match &mesh {
        Some(m) => snapshots.after_chunk(run, m),
        None => Ok(()),
    };
    let (res, secs, _) = run_device(exe, info, t_end, threads, false, Some(&mut hook))?;
    snapshots.finish()?;
    let done = res.activation.iter().filter(|&&a| a >= 0.0).count();
    println!(
        "simulated {:.2} ms in {:.2} s; {done} of {} cells activated",
        res.t,
        secs,
        res.activation.len()
    );
    let report = if probes.is_file() {
        let p: Probes = serde_json::from_str(
            &std::fs::read_to_string(&probes)
                .with_context(|| format!("reading {}", probes.display()))?,
        )
        .with_context(|| format!("parsing {}", probes.display()))?;
        let report = p.report(&res)?;
        print_points(&report);
        Some(report)
    } else {
        None
    };
    let Some(dir) = out else {
        return Ok(());
    };
    if report.is_none() && mesh.is_none() {
        bail!(
            "neither {} nor {} is beside the executable, so there is nothing to write to {}",
            probes.display(),
            sidecars(&file).mesh.display(),
            dir.display()
        );
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    if let Some(report) = &report {
        report
            .save(dir.join("results.json"))
            .with_context(|| format!("writing {}/results.json", dir.display()))?;
        println!("wrote {}/results.json", dir.display());
    }
    if let Some(m) = &mesh {
        write_activation_vtu(&dir, m, &res)?;
        println!("wrote {}/activation.vtu", dir.display());
    }
    Ok(())
}

fn cmd_partition(dx: f64, chips: Vec<u32>) -> Result<()> {
    let args = ProblemArgs::slab(dx);
    let mesh = load_mesh(&args)?;
    let setup = setup(&args, &mesh)?;
    println!("slab dx {dx} mm: {} cells", setup.n);
    println!(
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
            let cfg = DeviceConfig::chips(c, s);
            let p = device::build(&setup, &cfg)?;
            let exe = device::compile_problem(&p)?;
            let (mx, md) = max_median(
                exe.tiles
                    .iter()
                    .map(|t| t.memory_bytes)
                    .filter(|&b| b > 0)
                    .collect(),
            );
            println!(
                "{:>5} | {:>7} {:>7} | {}",
                c,
                mx,
                md,
                PartitionStats::new(&p.plan).table_row()
            );
        }
    }
    println!(
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
    println!("wrote {} ({} series)", output.display(), series.len());
    Ok(())
}

/// Prints the error and its causes, one per line, without a backtrace (RUST_BACKTRACE is for
/// panics; a bad input is not one).
fn main() -> std::process::ExitCode {
    match real_main() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            for c in e.chain().skip(1) {
                eprintln!("  caused by: {c}");
            }
            std::process::ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<()> {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Run(a) => cmd_run(a),
        Cmd::Compile { problem, output } => cmd_compile(problem, output),
        Cmd::Exec {
            file,
            t_end,
            out,
            threads,
            snapshot_every,
        } => cmd_exec(file, t_end, out, threads, snapshot_every),
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
