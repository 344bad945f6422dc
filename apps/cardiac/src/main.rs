//! `cardiac`: the monodomain simulator on poplar-rs.
//!
//! Argument parsing and dispatch only: what each command does is library code in
//! `cardiac::app` (problem assembly, the commands' steps, outputs, the run loop).

use std::path::PathBuf;

use anyhow::Result;
use cardiac::app::run_cmd::{self, RunCommand};
use cardiac::app::saved::{self, ExecCommand};
use cardiac::app::{diagonal_plot, partition_table};
use cardiac::partition::Partitioning;
use clap::{Args, Parser, Subcommand};

mod cell_cmd;
mod problem_args;

use cardiac::app::results::RunParameters;
use cell_cmd::{cmd_cell, CellArgs};
use problem_args::{given, ProblemArgs};

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
        /// Overwrite OUTPUT if it exists (refused otherwise; an input, the mesh or the
        /// --params file, is never overwritten).
        #[arg(long)]
        force: bool,
    },
    /// Run a saved executable (written by `cardiac compile`).
    Exec {
        file: PathBuf,
        /// Simulated time to run (ms), to the nearest whole ODE step at or after it; less when
        /// every cell has activated.
        #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 5.0, allow_hyphen_values = true)]
        t_end: f64,
        /// Write results here: results.json (benchmark points of a slab executable),
        /// activation.vtu and voltage snapshots. Checked before the run; a folder holding an
        /// earlier run's files is refused unless --force.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Overwrite the files of an earlier run in --out; also run a --t-end estimated past
        /// the work bound (10^12 cell-steps, about a day).
        #[arg(long)]
        force: bool,
        /// Simulator threads (default: all cores).
        #[arg(long, allow_hyphen_values = true)]
        threads: Option<usize>,
        /// With --out: a voltage snapshot (VTU) every this many simulated ms, at the first end
        /// of a device run (a chunk of the saved executable's steps, or a single step) at or
        /// after each multiple; 0 writes none.
        #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 10.0, allow_hyphen_values = true)]
        snapshot_every: f64,
    },
    /// The paper's Table 1: partition, halo and memory figures per chip count and strategy.
    Partition {
        #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 0.5, allow_hyphen_values = true)]
        dx: f64,
        #[arg(long, value_delimiter = ',', default_values_t = vec![1u32, 2, 4, 8, 16], allow_hyphen_values = true)]
        chips: Vec<u32>,
        /// Partitionings to compare, comma-separated (flat: METIS over all tiles, the
        /// paper's; hierarchical: chips, then each chip's tiles).
        #[arg(long, value_enum, value_delimiter = ',', default_values_t = vec![Partitioning::Flat])]
        partition: Vec<Partitioning>,
    },
    /// The paper's experiments on a mesh over several chip counts, from compiled executables and
    /// the static cycle model: Table 1 (halo cells), Table 2 (cycles per phase per tile),
    /// Figure 5 (modelled time per simulated ms against ideal scaling), and the set-up time and
    /// memory of each chip count.
    Study {
        #[command(flatten)]
        problem: ProblemArgs,
        /// Chip counts to study (1 to 64).
        #[arg(long = "study-chips", value_delimiter = ',', default_values_t = vec![1u32, 2, 4, 8, 16], allow_hyphen_values = true)]
        study_chips: Vec<u32>,
        /// Write the figures as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Draw Figure 5 into this file (PNG if it ends in .png, SVG otherwise).
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Overwrite --json or --plot if they exist.
        #[arg(long)]
        force: bool,
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
        /// Overwrite OUTPUT if it exists (refused otherwise; an input is never overwritten).
        #[arg(long)]
        force: bool,
    },
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    problem: ProblemArgs,
    /// Stop at this simulated time (ms), to the nearest whole ODE step at or after it, or
    /// earlier when every cell has activated.
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 300.0, allow_hyphen_values = true)]
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
    /// Overwrite the files of an earlier run in --out (never its checkpoints: see
    /// --discard-checkpoints); also run a problem estimated past the work bound (10^12 cell-steps: cells × ODE steps × (1 + diffusion substeps / 5), about a
    /// day on 2 cores).
    #[arg(long)]
    force: bool,
    /// Simulator threads (default: all cores).
    #[arg(long, allow_hyphen_values = true)]
    threads: Option<usize>,
    /// Do not profile the run (no phase breakdown, no profile.json).
    #[arg(long)]
    no_profile: bool,
    /// Do not write report.html (the browser view of the executable and its profile).
    #[arg(long)]
    no_report: bool,
    /// Record V at this point (x,y,z in mm; the nearest cell) into traces.csv; repeat for
    /// several points.
    #[arg(long, allow_hyphen_values = true)]
    trace_point: Vec<String>,
    /// Sampling interval of traces.csv (ms): device runs are shortened to it.
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 0.5, allow_hyphen_values = true)]
    trace_every: f64,
    /// Write the membrane voltage as a VTU snapshot every this many simulated ms, listed in
    /// `voltage.pvd` for ParaView's time slider; 0 writes none. The device runs in chunks of
    /// at most 250 ODE steps, shortened to the snapshot interval when that is shorter. A
    /// snapshot is as large as activation.vtu (≈ 100 MB at 0.1 mm).
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 10.0, allow_hyphen_values = true)]
    snapshot_every: f64,
    /// A virtual electrode of the pseudo-ECG: NAME=x,y,z in mm (the mesh's coordinates after
    /// --scale); repeat for several. φ_e goes into ecg.csv, and the run goes on to --t-end.
    #[arg(long, allow_hyphen_values = true)]
    electrode: Vec<String>,
    /// Electrodes from a CSV file: one name,x,y,z (mm) a line; # comments.
    #[arg(long)]
    electrodes: Option<PathBuf>,
    /// The 12-lead ECG: RA, LA, LL and V1-V6 placed from the mesh's bounding box and long axis
    /// (an approximation, docs/cardiac.md); leads I-III, aVR/aVL/aVF, V1-V6 into ecg.csv and
    /// ecg.png.
    #[arg(long)]
    ecg_12_lead: bool,
    /// ECG sampling interval (ms): device runs end on the sampling times.
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 1.0, allow_hyphen_values = true)]
    ecg_every: f64,
    /// Bath (torso) conductivity σ_b of the pseudo-ECG (S/m).
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 0.7, allow_hyphen_values = true)]
    sigma_bath: f64,
    /// Write a checkpoint (the complete state of the run) every this many simulated ms, at the
    /// first end of a device run at or after each multiple; 0: only when the run is stopped
    /// by SIGINT or SIGTERM (which always writes one, at the next end of a device run, and
    /// says how to continue).
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 0.0, allow_hyphen_values = true)]
    checkpoint_every: f64,
    /// Where checkpoints go (default: the folder `checkpoints` in --out).
    #[arg(long)]
    checkpoint_dir: Option<PathBuf>,
    /// Keep this many checkpoints, the newest (2: the one before the newest is still there
    /// should the newest be damaged).
    #[arg(long, default_value_t = 2, allow_hyphen_values = true)]
    checkpoint_keep: usize,
    /// Continue a stopped run from the newest valid checkpoint in this folder (or in its
    /// `checkpoints` folder), with the same options and --out as the stopped run: the results
    /// are those of a run that never stopped, bit for bit.
    #[arg(long)]
    resume: Option<PathBuf>,
    /// Start again in a checkpoint folder that holds checkpoints of an earlier run, removing
    /// them (without it such a folder is refused; --force never removes checkpoints).
    #[arg(long)]
    discard_checkpoints: bool,
    /// Testing: stop as SIGINT would, at the first end of a device run at or after this
    /// simulated time (ms), with a checkpoint.
    #[arg(long, value_parser = app_support::bounds::f64_value, hide = true, allow_hyphen_values = true)]
    stop_after: Option<f64>,
}

/// `cardiac run`: resolves `--t-end` (given, from the `--params` file, or `--quick`) and the
/// problem, then runs it.
fn cmd_run(a: RunArgs, matches: Option<&clap::ArgMatches>) -> Result<()> {
    // `--params`: the earlier run's t_end too, unless given here.
    let t_end_given = given(matches, "t_end");
    let file_t_end = match &a.problem.params {
        Some(p) if !t_end_given => RunParameters::read(p)?.t_end,
        _ => None,
    };
    let t_end = if a.quick {
        5.0
    } else {
        file_t_end.unwrap_or(a.t_end)
    };
    run_cmd::check_times(t_end, a.snapshot_every)?;
    let spec = a.problem.to_spec_with(matches)?;
    run_cmd::run(&RunCommand {
        spec,
        t_end,
        t_end_fixed: a.quick || t_end_given || file_t_end.is_some(),
        out: a.out,
        force: a.force,
        threads: a.threads,
        native: a.native,
        profile: !a.no_profile,
        report: !a.no_report,
        trace_points: a.trace_point,
        trace_every: a.trace_every,
        snapshot_every: a.snapshot_every,
        ecg: run_cmd::EcgOptions {
            electrodes: a.electrode,
            file: a.electrodes,
            twelve_lead: a.ecg_12_lead,
            every: a.ecg_every,
            sigma_bath: a.sigma_bath,
        },
        checkpoint: cardiac::app::checkpoint::CheckpointOptions {
            every: a.checkpoint_every,
            dir: a.checkpoint_dir,
            keep: a.checkpoint_keep,
            resume: a.resume,
            stop_after: a.stop_after,
            discard: a.discard_checkpoints,
        },
    })
}

fn cmd_compile(
    problem: ProblemArgs,
    output: PathBuf,
    force: bool,
    matches: Option<&clap::ArgMatches>,
) -> Result<()> {
    // Before the problem is read; then against the mesh a --params file names.
    let given: Vec<&std::path::Path> = problem
        .mesh
        .iter()
        .chain(&problem.params)
        .map(|p| p.as_path())
        .collect();
    saved::check_output(&output, force, &given)?;
    let spec = problem.to_spec_with(matches)?;
    if let Some(mesh) = &spec.mesh {
        saved::check_output(&output, true, &[mesh])?;
    }
    saved::compile(&spec, &output)
}

/// Prints the error and its causes, one per line, without a backtrace (RUST_BACKTRACE is for
/// panics; a bad input is not one).
fn main() -> std::process::ExitCode {
    // Under `mpiexec -n P` (built with the feature `mpi`) the job has P ranks, each running
    // this same program over its share of the chips; started alone, one rank. Built without
    // it, under a launcher of several ranks, it refuses (N copies would write the same files).
    if let Err(e) =
        app_support::launcher::refuse_copies_without_mpi("cardiac", cfg!(feature = "mpi"))
    {
        eprintln!("error: {e}");
        return std::process::ExitCode::FAILURE;
    }
    let code = poplar::engine::job_main(|| real_main().map_err(without_repeats));
    // A run stopped by SIGINT or SIGTERM (with a checkpoint) ends as the shell expects of one
    // ended by that signal: 128 + its number.
    match cardiac::app::checkpoint::stop_status() {
        Some(status) => std::process::ExitCode::from(status),
        None => code,
    }
}

/// The error with every cause that the message above it already says left out: many errors
/// put their cause in their own message too (`file: invalid mesh: cell 3: …` caused by
/// `cell 3: …`), and the chain would print it twice. An error the engine shared with every
/// rank of an MPI job is kept as it is (its type tells `job_main` that no rank need abort).
fn without_repeats(e: anyhow::Error) -> anyhow::Error {
    if poplar::engine::is_shared_error(e.as_ref()) {
        return e;
    }
    let mut lines: Vec<String> = Vec::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if lines.last().is_some_and(|above| above.contains(&text)) {
            continue;
        }
        lines.push(text);
    }
    let mut rest = lines.into_iter().rev();
    let mut out = anyhow::anyhow!(rest.next().unwrap_or_default());
    for above in rest {
        out = out.context(above);
    }
    out
}

/// `cardiac study`: the outputs are checked before any work, written atomically.
fn cmd_study(
    problem: &ProblemArgs,
    chips: &[u32],
    json: Option<PathBuf>,
    plot: Option<PathBuf>,
    force: bool,
    sub: Option<&clap::ArgMatches>,
) -> Result<()> {
    use cardiac::app::study;
    study::check_chips(chips)?;
    app_support::output::check_distinct_outputs(&[
        ("--json", json.as_deref()),
        ("--plot", plot.as_deref()),
    ])?;
    let spec = problem.to_spec_with(sub)?;
    for out in json.iter().chain(&plot) {
        let inputs: Vec<&std::path::Path> = spec.mesh.iter().map(PathBuf::as_path).collect();
        app_support::output::check_output_file(out, force, &inputs)?;
    }
    let s = study::run(&spec, chips)?;
    print!("{}", study::text(&s));
    if let Some(path) = json {
        app_support::output::write_atomic(&path, serde_json::to_string_pretty(&s)? + "\n")?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = plot {
        cardiac::app::study_plot::plot_scaling(&s, &path)?;
        println!("wrote {}", path.display());
    }
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
        } => saved::exec(&ExecCommand {
            file,
            t_end,
            out,
            force,
            threads,
            snapshot_every,
        }),
        Cmd::Partition {
            dx,
            chips,
            partition,
        } => partition_table::print_table(dx, &chips, &partition),
        Cmd::Study {
            problem,
            study_chips,
            json,
            plot,
            force,
        } => cmd_study(&problem, &study_chips, json, plot, force, sub),
        Cmd::PlotDiagonal {
            inputs,
            output,
            title,
            labels,
            force,
        } => diagonal_plot::plot_runs(&inputs, &output, &title, labels.as_deref(), force),
    }
}
