//! `cardiac`: the monodomain simulator on poplar-rs.

//!
//! Argument parsing and dispatch only: what each command does is library code in
//! `cardiac::app` (problem assembly, probes, executable sections, outputs, the run loop).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use cardiac::app::output::{self, Snapshots};
use cardiac::app::probes::Probes;
use cardiac::app::problem::{self, ProblemSpec};
use cardiac::app::{
    bundle,
    run::{run_device, LoopOptions},
};
use cardiac::partition::{PartitionStats, Strategy};
use cardiac::plot::{plot_diagonal, Series};
use cardiac::report::RunReport;
use cardiac::solver::device::{self, DeviceRun};
use cardiac::solver::native::NativeSolver;
use cardiac::solver::{Results, Setup};
use cardiac::{note, say};
use clap::{Args, Parser, Subcommand};
use poplar::profile::{PhaseKind, Profile};
use poplar::{Executable, Target};

mod cell_cmd;
mod problem_args;

use cell_cmd::{cmd_cell, CellArgs};
use problem_args::{given, read_params, ProblemArgs};

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
pub(crate) fn check_list(name: &str, v: &Option<Vec<f64>>, n: usize, what: &str) -> Result<()> {
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
