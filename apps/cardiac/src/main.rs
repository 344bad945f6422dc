//! `cardiac`: the monodomain simulator on poplar-rs.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use cardiac::matrix::Conductivity;
use cardiac::mesh::{CellType, ReadOptions, TetMesh};
use cardiac::partition::{PartitionStats, Strategy};
use cardiac::solver::device::{self, DeviceConfig, DeviceRun, RunInfo};
use cardiac::solver::native::NativeSolver;
use cardiac::solver::{Results, Setup, Stimulus};
use clap::{Args, Parser, Subcommand, ValueEnum};
use poplar::{EngineOptions, Executable};

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
    /// Build and compile, and save the executable (plus FILE.json with what the host needs).
    Compile {
        #[command(flatten)]
        problem: ProblemArgs,
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Run a saved executable.
    Exec {
        file: PathBuf,
        /// Simulated time to run (ms).
        #[arg(long, default_value_t = 5.0)]
        t_end: f64,
    },
    /// The paper's Table 1: partition and halo figures per chip count and strategy.
    Partition {
        #[arg(long, default_value_t = 0.5)]
        dx: f64,
        #[arg(long, value_delimiter = ',', default_values_t = vec![1u32, 2, 4, 8, 16])]
        chips: Vec<u32>,
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
    #[arg(long, value_delimiter = ',', num_args = 3)]
    fibre: Option<Vec<f64>>,
    /// Cell type for meshes without cell types.
    #[arg(long, value_enum, default_value_t = CellKind::Epi)]
    cell_type: CellKind,
    /// Stimulus box min,max corners (mm): x0,y0,z0,x1,y1,z1. Default: the Niederer corner cube.
    #[arg(long, value_delimiter = ',', num_args = 6)]
    stim_box: Option<Vec<f64>>,
    /// Stimulus sphere cx,cy,cz,r (mm).
    #[arg(long, value_delimiter = ',', num_args = 4)]
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
    /// Halo strategy.
    #[arg(long, value_enum, default_value_t = StrategyArg::MixedClean)]
    strategy: StrategyArg,
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    problem: ProblemArgs,
    /// Stop at this simulated time (ms), or earlier when every cell has activated.
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
}

#[derive(Clone, Copy, ValueEnum)]
enum CellKind {
    Endo,
    Mid,
    Epi,
}

#[derive(Clone, Copy, ValueEnum)]
enum StrategyArg {
    Full,
    Ranged,
    MixedClean,
}

impl From<StrategyArg> for Strategy {
    fn from(s: StrategyArg) -> Strategy {
        match s {
            StrategyArg::Full => Strategy::Full,
            StrategyArg::Ranged => Strategy::Ranged,
            StrategyArg::MixedClean => Strategy::MixedClean,
        }
    }
}

/// Niederer benchmark points (mm).
const POINTS: [(&str, [f64; 3]); 9] = [
    ("P1", [0.0, 0.0, 0.0]),
    ("P2", [0.0, 7.0, 0.0]),
    ("P3", [20.0, 0.0, 0.0]),
    ("P4", [20.0, 7.0, 0.0]),
    ("P5", [0.0, 0.0, 3.0]),
    ("P6", [0.0, 7.0, 3.0]),
    ("P7", [20.0, 0.0, 3.0]),
    ("P8", [20.0, 7.0, 3.0]),
    ("P9", [10.0, 3.5, 1.5]),
];

fn load_mesh(a: &ProblemArgs) -> Result<TetMesh> {
    let mesh = match &a.mesh {
        None => TetMesh::slab(20.0, 7.0, 3.0, a.dx),
        Some(p) => {
            let m = cardiac::mesh::read_mesh(p, &ReadOptions::with_scale(a.scale))
                .with_context(|| format!("reading {}", p.display()))?;
            let ct = match a.cell_type {
                CellKind::Endo => CellType::Endo,
                CellKind::Mid => CellType::Mid,
                CellKind::Epi => CellType::Epi,
            };
            let m = m.with_default_cell_type(ct);
            match &a.fibre {
                Some(f) => m.with_default_fibres(Some([f[0], f[1], f[2]]))?,
                None => m,
            }
        }
    };
    mesh.validate()?;
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
    let cells = if let Some(b) = &a.stim_box {
        mesh.cells_in_box([b[0], b[1], b[2]], [b[3], b[4], b[5]])
    } else if let Some(s) = &a.stim_sphere {
        mesh.cells_in_sphere([s[0], s[1], s[2]], s[3])
    } else if let Some(tag) = &a.stim_surface {
        mesh.cells_touching_surface(tag)?
    } else {
        mesh.cells_in_box([0.0; 3], [1.5; 3])
    };
    if cells.is_empty() {
        bail!("the stimulus region contains no cell");
    }
    let stim = Stimulus {
        cells,
        density: 50.0,
        start: 0.0,
        duration: 2.0,
    };
    Ok(Setup::new(mesh, &cond, a.dt_ode, &stim)?)
}

fn device_config(a: &ProblemArgs) -> DeviceConfig {
    DeviceConfig::chips(a.chips, a.strategy.into())
}

fn run_device(
    exe: &Executable,
    info: RunInfo,
    t_end: f64,
    threads: Option<usize>,
) -> Result<(Results, f64)> {
    let mut run = DeviceRun::new(
        exe,
        info,
        EngineOptions {
            threads,
            ..Default::default()
        },
    )?;
    let t0 = Instant::now();
    loop {
        run.run_chunk()?;
        let t = run.time()?;
        let act = run.activation()?;
        let done = act.iter().filter(|&&a| a >= 0.0).count();
        eprint!(
            "\r  t = {t:7.2} ms, activated {done}/{} cells, {:.1} s",
            act.len(),
            t0.elapsed().as_secs_f64()
        );
        if f64::from(t) >= t_end - 1e-6 || done == act.len() {
            break;
        }
    }
    eprintln!();
    Ok((run.results()?, t0.elapsed().as_secs_f64()))
}

fn print_points(setup: &Setup, res: &Results) {
    println!("activation times at the benchmark points (ms; -1 = not activated):");
    for (name, p) in POINTS {
        let c = setup.nearest_cell(p);
        println!(
            "  {name} ({:>4}, {:>3}, {:>3}) mm: {:8.3}",
            p[0], p[1], p[2], res.activation[c]
        );
    }
}

fn write_outputs(dir: &Path, mesh: &TetMesh, setup: &Setup, res: &Results) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    cardiac::mesh::write_vtu(
        dir.join("activation.vtu"),
        mesh,
        &[("activation_ms", &res.activation), ("v_mV", &res.v)],
    )?;
    let pts: Vec<serde_json::Value> = POINTS
        .iter()
        .map(|(n, p)| serde_json::json!({"name": n, "point_mm": p, "activation_ms": res.activation[setup.nearest_cell(*p)]}))
        .collect();
    let diag: Vec<serde_json::Value> = (0..=40)
        .map(|i| {
            let f = f64::from(i) / 40.0;
            let p = [20.0 * f, 7.0 * f, 3.0 * f];
            serde_json::json!({"s": f, "point_mm": p, "activation_ms": res.activation[setup.nearest_cell(p)]})
        })
        .collect();
    let j = serde_json::json!({"t_ms": res.t, "points": pts, "diagonal": diag});
    std::fs::write(dir.join("results.json"), serde_json::to_string_pretty(&j)?)?;
    Ok(())
}

fn partition_table(setup: &Setup, chips: u32, strategy: Strategy) -> Result<String> {
    let cfg = DeviceConfig::chips(chips, strategy);
    let p = device::build(setup, &cfg)?;
    let exe = device::compile_problem(&p)?;
    let stats = PartitionStats::new(&p.plan);
    let mut mem: Vec<u32> = exe
        .tiles
        .iter()
        .map(|t| t.memory_bytes)
        .filter(|&b| b > 0)
        .collect();
    mem.sort_unstable();
    Ok(format!(
        "{:>5} {:>12} | mem/tile max {:>7} B median {:>7} B | {}",
        chips,
        strategy.name(),
        mem.last().copied().unwrap_or(0),
        mem.get(mem.len() / 2).copied().unwrap_or(0),
        stats.table_row()
    ))
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Run(a) => {
            let t_end = if a.quick { 5.0 } else { a.t_end };
            let t = Instant::now();
            let mesh = load_mesh(&a.problem)?;
            let setup = setup(&a.problem, &mesh)?;
            println!(
                "mesh: {} cells; dt_ode {} ms, {} PDE steps of {:.4} ms (stable up to {:.4} ms); set-up {:.2} s",
                setup.n,
                setup.dt_ode,
                setup.pde_steps,
                setup.dt_pde,
                setup.dt_stable,
                t.elapsed().as_secs_f64()
            );
            let t = Instant::now();
            let cfg = device_config(&a.problem);
            let prob = device::build(&setup, &cfg)?;
            let build_s = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let exe = device::compile_problem(&prob)?;
            println!(
                "graph: {} tiles used of {}, build {:.2} s, compile {:.2} s",
                prob.plan.tiles.len(),
                cfg.target.num_tiles(),
                build_s,
                t.elapsed().as_secs_f64()
            );
            println!(
                "partition ({}):\n{}\n{}",
                cfg.strategy.name(),
                PartitionStats::table_header(),
                PartitionStats::new(&prob.plan).table_row()
            );
            let (res, secs) = run_device(&exe, prob.info.clone(), t_end, a.threads)?;
            println!(
                "simulated {:.2} ms in {:.2} s on the tile simulator",
                res.t, secs
            );
            print_points(&setup, &res);
            if a.native {
                let t = Instant::now();
                let mut nat = NativeSolver::new(&setup);
                while nat.time() < res.t - 1e-6 {
                    nat.step();
                }
                let nr = nat.results();
                let same = nr
                    .activation
                    .iter()
                    .zip(&res.activation)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
                    && nr
                        .v
                        .iter()
                        .zip(&res.v)
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                println!(
                    "native reference: {:.2} s; framework == native bit for bit: {same}",
                    t.elapsed().as_secs_f64()
                );
            }
            write_outputs(&a.out, &mesh, &setup, &res)?;
            println!("wrote {}/activation.vtu and results.json", a.out.display());
        }
        Cmd::Compile { problem, output } => {
            let mesh = load_mesh(&problem)?;
            let setup = setup(&problem, &mesh)?;
            let prob = device::build(&setup, &device_config(&problem))?;
            let exe = device::compile_problem(&prob)?;
            exe.save(&output)?;
            let meta = output.with_extension("json");
            std::fs::write(&meta, serde_json::to_string(&prob.info)?)?;
            println!("wrote {} and {}", output.display(), meta.display());
        }
        Cmd::Exec { file, t_end } => {
            let exe =
                Executable::load(&file).with_context(|| format!("loading {}", file.display()))?;
            let meta = file.with_extension("json");
            let info: RunInfo = serde_json::from_str(
                &std::fs::read_to_string(&meta)
                    .with_context(|| format!("reading {}", meta.display()))?,
            )?;
            let (res, secs) = run_device(&exe, info, t_end, None)?;
            let done = res.activation.iter().filter(|&&a| a >= 0.0).count();
            println!(
                "simulated {:.2} ms in {:.2} s; {done} cells activated",
                res.t, secs
            );
        }
        Cmd::Partition { dx, chips } => {
            let mesh = TetMesh::slab(20.0, 7.0, 3.0, dx);
            let args = ProblemArgs {
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
                strategy: StrategyArg::MixedClean,
            };
            let setup = setup(&args, &mesh)?;
            println!("slab dx {dx} mm: {} cells", setup.n);
            println!(
                "{:>5} {:>12} | memory per tile              | {}",
                "chips",
                "strategy",
                PartitionStats::table_header()
            );
            for &c in &chips {
                for s in [Strategy::Full, Strategy::Ranged, Strategy::MixedClean] {
                    println!("{}", partition_table(&setup, c, s)?);
                }
            }
        }
    }
    Ok(())
}
