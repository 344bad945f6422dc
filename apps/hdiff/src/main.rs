//! `hdiff`: the horizontal diffusion stencil on the simulated chip.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

use hdiff::grid::{test_input, Coefficient, Grid};
use hdiff::output::{prepare, write_npy, write_vti};
use hdiff::plan::{Mapping, PlanRequest, Planes};
use poplar::Target;

#[derive(Parser)]
#[command(
    name = "hdiff",
    about = "The weather-model horizontal diffusion stencil on a simulated many-tile chip"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Builds, compiles and runs the stencil; checks it against the host reference and prints
    /// memory, modelled cycles and throughput, and host speed.
    Run(RunArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// Grid size I×J×K, halo included (the output is the interior (I−4)×(J−4)×K).
    #[arg(long, default_value = "256x256x64", value_parser = parse_grid)]
    grid: Grid,
    /// The mapping of the stencil's stages onto tiles.
    #[arg(long, value_enum, default_value_t = Mapping::Single)]
    mapping: Mapping,
    /// Chips (GC200, 1472 tiles each).
    #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
    chips: u32,
    /// Planes per tile: `all` (each tile holds all planes of its block), `spread` (planes over
    /// tiles), a number of plane groups, or `auto` (the planner's choice).
    #[arg(long, default_value = "auto", allow_hyphen_values = true)]
    planes: Planes,
    /// Blocks per plane as J×I (default: the planner's choice).
    #[arg(long, value_parser = parse_blocks)]
    blocks: Option<(usize, usize)>,
    /// Applications of the stencil (each reads the previous one's output; the halo is fixed);
    /// at least 1.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..), allow_hyphen_values = true)]
    iterations: u64,
    /// Host threads of the simulator and of the native loop (default: all cores).
    #[arg(long, allow_hyphen_values = true)]
    threads: Option<usize>,
    /// The diffusion coefficient: a number, or `varying` (a field that varies per point).
    #[arg(long, default_value = "0.025", allow_hyphen_values = true)]
    coeff: Coefficient,
    /// Skip the comparison with the host reference (the native loop).
    #[arg(long)]
    no_check: bool,
    /// Output folder for input/output fields (.npy, .vti) and results.json.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Overwrite an earlier run's files in --out, and run past the bound on the estimated
    /// work (grid points × iterations).
    #[arg(long)]
    force: bool,
}

fn parse_dims(s: &str, n: usize) -> Result<Vec<usize>, String> {
    let parts: Vec<&str> = s.split(['x', '×']).collect();
    if parts.len() != n {
        return Err(format!("`{s}`: expected {n} numbers separated by `x`"));
    }
    parts
        .iter()
        .map(|p| {
            p.trim()
                .parse::<usize>()
                .map_err(|_| format!("`{p}` in `{s}` is not a whole number"))
        })
        .collect()
}

fn parse_grid(s: &str) -> Result<Grid, String> {
    let d = parse_dims(s, 3)?;
    Grid::new(d[0], d[1], d[2]).map_err(|e| e.to_string())
}

fn parse_blocks(s: &str) -> Result<(usize, usize), String> {
    let d = parse_dims(s, 2)?;
    Ok((d[0], d[1]))
}

fn main() -> std::process::ExitCode {
    // Under `mpiexec -n P` (built with the feature `mpi`) the job has P ranks, each running
    // this same program over its share of the chips; started alone, one rank. Built without
    // it, under a launcher of several ranks, it refuses (N copies would write the same files).
    if let Err(e) = app_support::launcher::refuse_copies_without_mpi("hdiff", cfg!(feature = "mpi"))
    {
        eprintln!("error: {e}");
        return std::process::ExitCode::FAILURE;
    }
    poplar::engine::job_main(|| {
        hdiff::codelets::link();
        match Cli::parse().command {
            Command::Run(args) => run(args),
        }
    })
}

/// Most work of a run without `--force`, in point-iterations (grid points × iterations, twice
/// with the host reference's comparison): about 28 hours at [`POINTS_PER_SECOND`].
const MAX_WORK: f64 = 1e13;

/// Point-iterations per second of the simulator and the host reference on a 2-core host
/// (measured with the test build on 2 threads: 256×256×64, 44 ms per iteration simulated and
/// 40 ms in the native loop, 1.0·10^8 point-iterations per second).
const POINTS_PER_SECOND: f64 = 1e8;

/// The options' checks that need no plan: `--threads` and the work's bound.
fn check_options(args: &RunArgs) -> Result<()> {
    if args.chips == 0 {
        anyhow::bail!("--chips must be at least 1");
    }
    app_support::bounds::threads(args.threads)?;
    let compare = if args.no_check { 1.0 } else { 2.0 };
    app_support::bounds::check_work(
        app_support::bounds::Work {
            what: format!(
                "--iterations {} on --grid {}x{}x{}",
                args.iterations, args.grid.ni, args.grid.nj, args.grid.nk
            ),
            amount: args.grid.ni as f64
                * args.grid.nj as f64
                * args.grid.nk as f64
                * args.iterations as f64
                * compare,
            unit: "point-iterations",
            per_second: POINTS_PER_SECOND,
            bound: MAX_WORK,
            advice: "run fewer --iterations or a smaller --grid",
        },
        args.force,
    )?;
    Ok(())
}

fn run(args: RunArgs) -> Result<()> {
    // Every rank of an MPI job runs this (the engine's reads are collective); rank 0 talks
    // and writes the files.
    let root = poplar::dist::is_root();
    check_options(&args)?;
    let out_dir = args.out.as_ref().filter(|_| root);
    // Rank 0 checks the folder and holds its lock until the run ends; its verdict is every
    // rank's.
    let mut _output_lock = None;
    poplar::dist::agree(match out_dir {
        Some(dir) => prepare(dir, args.force)
            .map(|l| _output_lock = Some(l))
            .map_err(|e| format!("{e:#}")),
        None => Ok(()),
    })?;
    let target = Target::gc200_multi(args.chips);
    let grid = args.grid;
    let request = PlanRequest {
        mapping: args.mapping,
        planes: args.planes,
        blocks: args.blocks,
    };
    let note = |s: String| {
        if root {
            eprintln!("{s}")
        }
    };
    note(format!(
        "hdiff: {grid}, {} on {} chip(s): planning and compiling…",
        args.mapping, args.chips
    ));
    let compiled = hdiff::run::compile(grid, &target, request)?;
    note(format!(
        "hdiff: {} ({:.1} s to compile)",
        compiled.plan.describe(),
        compiled.compile_s
    ));
    let input = test_input(&grid);
    let coeff = args.coeff.field(&grid);
    let tty = std::io::stderr().is_terminal();
    let total = args.iterations;
    let mut last = 0.0f64;
    let (figures, out) = hdiff::run::run(
        &compiled,
        &target,
        (&input, &coeff),
        hdiff::run::RunOptions {
            iterations: total,
            threads: args.threads,
            compare: !args.no_check,
        },
        |done, secs| {
            // Progress at most once a second, on long runs.
            if root && (secs - last >= 1.0 || (done == total && secs > 1.0)) {
                last = secs;
                let line = format!("  iteration {done}/{total}  {secs:7.1} s");
                if tty {
                    eprint!("\r{line}   ");
                } else {
                    eprintln!("{line}");
                }
            }
        },
    )?;
    if tty && last > 0.0 {
        eprintln!();
    }
    if root {
        print!("{}", figures.text());
    }
    if let Some(dir) = out_dir {
        write_npy(&dir.join("input.npy"), &grid, &input)?;
        write_npy(&dir.join("output.npy"), &grid, &out)?;
        write_vti(
            &dir.join("input.vti"),
            &grid,
            &[("in", &input), ("coeff", &coeff)],
        )?;
        write_vti(&dir.join("output.vti"), &grid, &[("out", &out)])?;
        let json = serde_json::json!({
            "coefficient": args.coeff.to_string(),
            "figures": figures,
        });
        app_support::output::write_atomic(
            dir.join("results.json"),
            serde_json::to_string_pretty(&json)?,
        )?;
        println!(
            "wrote input/output .npy and .vti and results.json to {}",
            dir.display()
        );
    }
    if figures.bit_identical == Some(false) {
        anyhow::bail!("the device result differs from the host reference");
    }
    Ok(())
}
