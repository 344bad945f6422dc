//! `cardiac run`: a problem built, compiled and run on the simulated chips, with what it
//! prints and the files it writes — in named steps: [`prepare`] (options, output folder,
//! mesh, set-up), [`traces`], [`electrodes`], [`print_problem`], [`compile`], [`simulate`],
//! [`record`] (the run's one [`RunReport`]), [`print_results`], [`compare_native`] and
//! [`write_results`] (every file at the end, through the run's [`ResultWriter`]; only the
//! voltage snapshots are written during the run, through the same writer).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{ensure, Result};
use poplar::profile::Profile;
use poplar::Executable;
use poplar_viewer::ReportData;

use crate::app::advice;
use crate::app::checkpoint::{self, CheckpointOptions, Checkpointer, Identity};
use crate::app::console::{self, print_activation_summary, print_points};
use crate::app::output::{self, Beats, ResultWriter, Snapshots, Traces};
use crate::app::probes::Probes;
use crate::app::problem::{self, ProblemSpec};
use crate::app::results::{recorded_problem, BeatSummary, RunParameters, RunReport};
use crate::app::run::{
    check_dt, check_every, check_whole_steps, check_work, chunk_steps_for, run_device_with,
    threads_for, LoopOptions, CELL_STEPS_PER_SECOND,
};
use crate::app::run_records::RunRecords;
use crate::app::saved::compile_or_hint;
use crate::ecg::{self, EcgRecord, EcgSpec};
use crate::format::show;
use crate::mesh::TetMesh;
use crate::partition::PartitionStats;
use crate::solver::device::{self, DeviceConfig, RunInfo};
use crate::solver::native::NativeSolver;
use crate::solver::{Results, Setup};

/// What `cardiac run` runs, with its options resolved from the command line.
#[derive(Debug, Clone)]
pub struct RunCommand {
    /// The problem (mesh, stimulus, time step, machine).
    pub spec: ProblemSpec,
    /// Simulated time to stop at (ms), checked by [`check_times`].
    pub t_end: f64,
    /// Whether `t_end` was set (`--t-end`, the `--params` file, `--quick`): otherwise a paced
    /// run lasts its beats.
    pub t_end_fixed: bool,
    /// Output folder.
    pub out: PathBuf,
    /// Overwrite the files of an earlier run in `out`.
    pub force: bool,
    /// Simulator threads (default: all cores).
    pub threads: Option<usize>,
    /// Also run the native reference and compare.
    pub native: bool,
    /// Profile the run (phase breakdown, profile.json).
    pub profile: bool,
    /// Write report.html.
    pub report: bool,
    /// Points (`x,y,z` in mm, as given) whose V goes into traces.csv.
    pub trace_points: Vec<String>,
    /// Sampling interval of traces.csv (ms).
    pub trace_every: f64,
    /// ms between voltage snapshots (0: none).
    pub snapshot_every: f64,
    /// The pseudo-ECG's options (off without electrodes).
    pub ecg: EcgOptions,
    /// Checkpoints, `--resume` and `--stop-after`.
    pub checkpoint: CheckpointOptions,
}

/// The pseudo-ECG's options of `cardiac run`, as given ([`crate::ecg`]).
#[derive(Debug, Clone)]
pub struct EcgOptions {
    /// `--electrode NAME=x,y,z` (mm), as given.
    pub electrodes: Vec<String>,
    /// `--electrodes FILE`: CSV `name,x,y,z`.
    pub file: Option<PathBuf>,
    /// `--ecg-12-lead`: RA, LA, LL and V1–V6 placed from the mesh's axes.
    pub twelve_lead: bool,
    /// `--ecg-every` (ms).
    pub every: f64,
    /// `--sigma-bath` (S/m).
    pub sigma_bath: f64,
}

impl Default for EcgOptions {
    fn default() -> Self {
        EcgOptions {
            electrodes: Vec::new(),
            file: None,
            twelve_lead: false,
            every: ecg::DEFAULT_ECG_EVERY_MS,
            sigma_bath: ecg::DEFAULT_SIGMA_BATH,
        }
    }
}

impl EcgOptions {
    /// Checks `--sigma-bath`, with or without electrodes, before any work ([`prepare`]).
    pub fn check(&self) -> Result<()> {
        if !ecg::sigma_bath_ok(self.sigma_bath) {
            return Err(ecg::EcgError::BadSigma(self.sigma_bath).into());
        }
        Ok(())
    }

    /// Whether any electrode is asked for.
    pub fn is_on(&self) -> bool {
        self.twelve_lead || self.file.is_some() || !self.electrodes.is_empty()
    }

    /// The electrodes (the 12-lead placement first, then the file's, then `--electrode`'s),
    /// checked against the mesh; `None` without any.
    pub fn resolve(&self, mesh: &TetMesh) -> Result<Option<EcgSpec>> {
        if !self.is_on() {
            return Ok(None);
        }
        let mut electrodes = Vec::new();
        if self.twelve_lead {
            electrodes.extend(ecg::twelve_lead(mesh)?);
        }
        if let Some(f) = &self.file {
            electrodes.extend(ecg::read_electrodes(f)?);
        }
        for e in &self.electrodes {
            electrodes.push(ecg::parse_electrode(e)?);
        }
        ecg::check_electrodes(&electrodes, mesh)?;
        Ok(Some(EcgSpec {
            electrodes,
            sigma_bath: self.sigma_bath,
            every: self.every,
        }))
    }
}

/// Checks `--t-end` and `--snapshot-every` (before the problem is read).
pub fn check_times(t_end: f64, snapshot_every: f64) -> Result<()> {
    ensure!(
        t_end > 0.0 && t_end.is_finite(),
        "--t-end {t_end} must be a positive, finite number of ms"
    );
    ensure!(
        snapshot_every >= 0.0 && snapshot_every.is_finite(),
        "--snapshot-every {snapshot_every} must be 0 (none) or a positive number of ms"
    );
    Ok(())
}

/// `cardiac run`.
pub fn run(c: &RunCommand) -> Result<()> {
    let t_all = Instant::now();
    let mut p = prepare(c)?;
    let mut traces = traces(c, &p.setup, &mut p.cfg)?;
    let ecg = electrodes(c, &mut p)?;
    print_problem(c, &p);
    let compiled = compile(c, &p)?;
    let (build_s, compile_s) = (compiled.build_s, compiled.compile_s);
    let sim = simulate(
        c,
        &p,
        compiled.exe,
        compiled.info,
        &mut traces,
        ecg.as_ref(),
    )?;
    if sim.stopped {
        // A checkpoint was written and the way to continue printed; no result files.
        return Ok(());
    }
    let report = record(c, &p, &sim, ecg.as_ref())?;
    print_results(c, &p.setup, &sim.res, &report);
    if c.native && poplar::dist::is_root() {
        compare_native(&p.setup, &sim.res);
    }
    if let Some(b) = &report.beats {
        print_beats(b);
    }
    write_results(&p, &sim, &traces, &report, compiled.page)?;
    say!(
        "timings: set-up (mesh + operator) {:.2} s, graph build {build_s:.2} s, compile {compile_s:.2} s, simulation {:.2} s ({:.3} s per simulated ms), total {:.2} s",
        p.setup_s,
        sim.sim_s,
        sim.sim_s / f64::from(sim.res.t).max(1e-9),
        t_all.elapsed().as_secs_f64()
    );
    say!(
        "wrote {0}/activation.vtu and {0}/results.json",
        c.out.display()
    );
    Ok(())
}

/// The problem of a run, ready to build.
pub struct Prepared {
    pub mesh: TetMesh,
    pub setup: Setup,
    pub cfg: DeviceConfig,
    /// Whether some site paces (several pulses).
    pub paced: bool,
    /// Pulse start times (ms).
    pub starts: Vec<f64>,
    /// When the run stops (ms): `t_end`, or the end of the last beat of a paced run.
    pub t_end: f64,
    /// Wall seconds of the set-up (mesh and operator).
    pub setup_s: f64,
    /// The output folder (checked, and locked until the run ends) and its one writer.
    pub out: ResultWriter,
    /// Simulator threads (`--threads`, checked; `None`: one per core).
    pub threads: Option<usize>,
    /// Where checkpoints go, and its lock when it is not inside the output folder (rank 0).
    pub checkpoint_dir: PathBuf,
    pub checkpoint_lock: Option<app_support::output::OutputLock>,
    /// The folder of checkpoints a resumed run continues from (rank 0's finding).
    pub resume_dir: Option<PathBuf>,
}

/// Checks the time step, the machine and — before any work, so that a run is never lost to an
/// unusable output folder — the output folder (rank 0 checks; its verdict is every rank's);
/// then loads the mesh and sets the problem up.
pub fn prepare(c: &RunCommand) -> Result<Prepared> {
    let spec = &c.spec;
    if let Some(w) = check_dt(spec.dt_ode)? {
        note!("{w}");
    }
    check_every(
        "--snapshot-every",
        c.snapshot_every,
        spec.dt_ode,
        Some("no snapshots"),
    )?;
    check_every("--trace-every", c.trace_every, spec.dt_ode, None)?;
    c.ecg.check()?;
    let threads = threads_for(c.threads)?;
    c.checkpoint.check(spec.dt_ode)?;
    problem::check_slab_options(spec)?;
    let mut cfg = problem::device_config(spec)?;
    let checkpoint_dir = c.checkpoint.dir_for(&c.out);
    if c.checkpoint.resume.is_none() {
        // First: the output folder's refusal would advise --force, which keeps no checkpoint.
        let verdict = if poplar::dist::is_root() {
            checkpoint::refuse_earlier_checkpoints(&checkpoint_dir, c.checkpoint.discard)
                .map_err(|e| format!("{e:#}"))
        } else {
            Ok(())
        };
        poplar::dist::agree(verdict)?;
    }
    let out = match &c.checkpoint.resume {
        None => ResultWriter::prepare(&c.out, c.force)?,
        Some(_) => ResultWriter::prepare_resume(&c.out, c.force)?,
    };
    let (mut resume_dir, mut checkpoint_lock) = (None, None);
    let verdict = if poplar::dist::is_root() {
        (|| -> Result<()> {
            if let Some(r) = &c.checkpoint.resume {
                resume_dir = Some(checkpoint::resume_dir(r)?);
            }
            let here = resume_dir.as_deref().is_some_and(|r| {
                r == checkpoint_dir || app_support::output::same_file(r, &checkpoint_dir)
            });
            checkpoint_lock =
                checkpoint::prepare_dir(&checkpoint_dir, &c.out, c.checkpoint.discard, here)?;
            Ok(())
        })()
        .map_err(|e| format!("{e:#}"))
    } else {
        Ok(())
    };
    poplar::dist::agree(verdict)?;
    let t = Instant::now();
    let (mesh, warnings) = problem::load_mesh(spec)?;
    for w in &warnings {
        note!("{w}");
    }
    let setup = problem::setup(spec, &mesh)?;
    let paced = setup.paced();
    let starts = setup.pulse_starts();
    let t_end = run_length(c, paced, &starts);
    let end = if paced && !c.t_end_fixed {
        format!(
            "the paced run's end at {} ms (a cycle after its last pulse; set it with --t-end)",
            show(t_end)
        )
    } else {
        format!("--t-end {} ms", show(t_end))
    };
    let work = check_work(
        &end,
        t_end,
        &format!("--dt-ode {} ms", show(spec.dt_ode)),
        f64::from(setup.dt_ode),
        setup.n,
        setup.pde_steps,
        c.force,
    )?;
    if work.cell_steps / CELL_STEPS_PER_SECOND > 3600.0 {
        note!(
            "note: this run is up to {} cell-steps: {} on a 2-core host",
            show(work.cell_steps),
            work.duration()
        );
    }
    let setup_s = t.elapsed().as_secs_f64();
    cfg.chunk_steps = chunk_steps_for(c.snapshot_every, f64::from(setup.dt_ode), cfg.chunk_steps);
    Ok(Prepared {
        mesh,
        setup,
        cfg,
        paced,
        starts,
        t_end,
        setup_s,
        out,
        threads,
        checkpoint_dir,
        checkpoint_lock,
        resume_dir,
    })
}

/// A paced run lasts its beats (a cycle after the last pulse: `--bcl` when the main site
/// paces, else the longest interval between pulses and at least 500 ms) unless its end was
/// set; any other run stops at `t_end`.
fn run_length(c: &RunCommand, paced: bool, starts: &[f64]) -> f64 {
    match starts.last() {
        Some(&last) if paced && !c.t_end_fixed => {
            let cycle = if c.spec.beats > 1 {
                c.spec.bcl
            } else {
                starts.windows(2).map(|w| w[1] - w[0]).fold(500.0, f64::max)
            };
            last + cycle
        }
        _ => c.t_end,
    }
}

/// `x,y,z` (mm) of a `--trace-point`.
fn parse_point(text: &str) -> Result<[f64; 3]> {
    let v: Vec<f64> = text
        .split(',')
        .map(|x| x.trim().parse::<f64>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| anyhow::anyhow!("--trace-point {text}: give x,y,z in mm"))?;
    ensure!(
        v.len() == 3 && v.iter().all(|x| x.is_finite()),
        "--trace-point {text}: give x,y,z in mm"
    );
    Ok([v[0], v[1], v[2]])
}

/// The traced points: parsed, device runs shortened to the sampling interval, each point's
/// cell printed, and V at t = 0 recorded.
pub fn traces(c: &RunCommand, setup: &Setup, cfg: &mut DeviceConfig) -> Result<Traces> {
    let points = c
        .trace_points
        .iter()
        .map(|t| parse_point(t))
        .collect::<Result<Vec<_>>>()?;
    if !points.is_empty() {
        check_every(
            "--trace-every",
            c.trace_every,
            f64::from(setup.dt_ode),
            None,
        )?;
        check_whole_steps("--trace-every", c.trace_every, f64::from(setup.dt_ode))?;
        cfg.chunk_steps = cfg.chunk_steps.min(chunk_steps_for(
            c.trace_every,
            f64::from(setup.dt_ode),
            cfg.chunk_steps,
        ));
    }
    let mut traces = Traces::new(&points, setup);
    for p in &points {
        let cell = setup.nearest_cell(*p);
        let d = setup.centroids[cell];
        say!(
            "trace point ({} {} {}) mm: cell {cell}, centroid ({:.3} {:.3} {:.3}) mm",
            p[0],
            p[1],
            p[2],
            d[0],
            d[1],
            d[2]
        );
    }
    traces.record(0.0, &setup.initial_states()[..setup.n]);
    Ok(traces)
}

/// The pseudo-ECG's electrodes: resolved against the mesh, their weights into the device
/// configuration, device runs shortened so that they end on the sampling times, each
/// electrode printed.
pub fn electrodes(c: &RunCommand, p: &mut Prepared) -> Result<Option<EcgSpec>> {
    let Some(spec) = c.ecg.resolve(&p.mesh)? else {
        return Ok(None);
    };
    let dt = f64::from(p.setup.dt_ode);
    check_every("--ecg-every", spec.every, dt, None)?;
    check_whole_steps("--ecg-every", spec.every, dt)?;
    let cond = problem::conductivity(&c.spec, &p.mesh);
    p.cfg.ecg = Some(spec.device(&p.mesh, &p.setup, cond.chi * cond.cm)?);
    let every = ecg_steps(&spec, p.setup.dt_ode);
    p.cfg.chunk_steps = gcd(p.cfg.chunk_steps, every);
    say!(
        "ECG: {} electrodes, φ_e every {} ms ({every} ODE steps), bath σ_b {} S/m; the run goes on to {} ms",
        spec.electrodes.len(),
        show(spec.every),
        spec.sigma_bath,
        show(p.t_end)
    );
    for e in &spec.electrodes {
        say!(
            "  electrode {:<6} ({:.2}, {:.2}, {:.2}) mm",
            e.name,
            e.pos[0],
            e.pos[1],
            e.pos[2]
        );
    }
    Ok(Some(spec))
}

/// ODE steps between ECG samples (at least one).
pub fn ecg_steps(spec: &EcgSpec, dt_ode: f32) -> u32 {
    (spec.every / f64::from(dt_ode))
        .round()
        .clamp(1.0, f64::from(u32::MAX)) as u32
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a.max(1)
    } else {
        gcd(b, a % b)
    }
}

/// The banner: problem, stimulus, advice, time stepping and machine.
pub fn print_problem(c: &RunCommand, p: &Prepared) {
    let (spec, mesh, setup) = (&c.spec, &p.mesh, &p.setup);
    say!("== cardiac run");
    match &spec.mesh {
        None => say!(
            "problem: Niederer slab 20 × 7 × 3 mm, dx {} mm: {} tetrahedra; fibres along x; TP06 epi",
            spec.dx, setup.n
        ),
        Some(path) => {
            let bb = mesh
                .bounding_box()
                .map(|(lo, hi)| format!("{lo:.2?} to {hi:.2?} mm"))
                .unwrap_or_default();
            let tags: Vec<&str> = mesh.surfaces.iter().map(|s| s.name.as_str()).collect();
            say!(
                "problem: {} (× {}): {} tetrahedra spanning {bb}; {}; surfaces {tags:?}",
                path.display(),
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
    for line in console::describe_stimulus(spec, setup) {
        say!("{line}");
    }
    for line in advice::advice(spec, mesh, &problem::conductivity(spec, mesh)) {
        note!("{line}");
    }
    if let Some(line) = advice::step_limit_advice(setup, mesh) {
        note!("{line}");
    }
    // Paced runs and runs with an ECG go on to the end; others stop once all have activated.
    let until = if p.paced || p.cfg.ecg.is_some() {
        ""
    } else {
        " or all activated"
    };
    say!(
        "time: dt_ode {} ms, p = {} diffusion steps of {:.4} ms per ODE step (stable up to {:.4} ms); until {} ms{until}",
        setup.dt_ode, setup.pde_steps, setup.dt_pde, setup.dt_stable, p.t_end
    );
    say!(
        "machine: {}; {} partition",
        console::describe_machine(&p.cfg.target, p.cfg.tiles.min(setup.n), p.cfg.strategy),
        p.cfg.partitioning.name()
    );
}

/// A compiled run: the executable, its run info and the report page's static part.
pub struct Compiled {
    pub exe: Executable,
    pub info: RunInfo,
    /// report.html without the profile (none with `--no-report`).
    pub page: Option<ReportData>,
    pub build_s: f64,
    pub compile_s: f64,
}

/// Builds and compiles the graph, takes the report page's static part (the engine takes the
/// executable over) and prints the partition and memory per tile.
pub fn compile(c: &RunCommand, p: &Prepared) -> Result<Compiled> {
    let (spec, cfg) = (&c.spec, &p.cfg);
    let t = Instant::now();
    let prob = device::build(&p.setup, cfg)?;
    let build_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let exe = compile_or_hint(&prob, spec)?;
    let compile_s = t.elapsed().as_secs_f64();
    let page = c.report.then(|| {
        let title = format!(
            "cardiac run: {}, {} chip(s), {} strategy",
            match &spec.mesh {
                None => format!("slab dx {} mm", spec.dx),
                Some(m) => m.display().to_string(),
            },
            spec.chips,
            cfg.strategy.name()
        );
        ReportData::from_executable(&exe, &title)
    });
    let (mem_max, mem_med) = console::memory_max_median(&exe);
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
    Ok(Compiled {
        exe,
        info,
        page,
        build_s,
        compile_s,
    })
}

/// What the simulation gave.
pub struct Simulated {
    pub res: Results,
    /// Wall seconds of the run loop.
    pub sim_s: f64,
    pub profile: Option<Profile>,
    /// Per-beat maps of a paced run.
    pub beats: Option<Beats>,
    /// The voltage snapshots taken (their collection, `voltage.pvd`, is written at the end).
    pub snapshots: Snapshots,
    /// The pseudo-ECG (runs with electrodes).
    pub ecg: Option<EcgRecord>,
    /// Stopped before its end (a signal, `--stop-after`) with a checkpoint written.
    pub stopped: bool,
}

/// Runs the executable to the end, recording beats, traces and snapshots after every device
/// run (the snapshots written as they are taken).
pub fn simulate(
    c: &RunCommand,
    p: &Prepared,
    exe: Executable,
    info: RunInfo,
    traces: &mut Traces,
    ecg: Option<&EcgSpec>,
) -> Result<Simulated> {
    let identity = Identity::new(checkpoint_options(c, p), &p.setup, &info, exe.checksum());
    let resume = match &p.resume_dir {
        Some(dir) => Some(checkpoint::load_agreed(dir, &identity)?),
        None if c.checkpoint.resume.is_some() => {
            // Other ranks: rank 0 found the folder.
            Some(checkpoint::load_agreed(Path::new(""), &identity)?)
        }
        None => None,
    };
    let t0 = resume.as_ref().map_or(0.0, |r| r.header.time_ms);
    let signals = checkpoint::StopSignals::install()?;
    let checkpoints = Checkpointer::new(
        p.checkpoint_dir.clone(),
        &c.checkpoint,
        identity,
        t0,
        Some(signals),
    );
    say!("progress:");
    let mut hooks = RunRecords {
        beats: p
            .paced
            .then(|| Beats::from_starts(p.starts.clone(), p.setup.n)),
        traces,
        snapshots: Snapshots::new(c.snapshot_every),
        out: &p.out,
        mesh: &p.mesh,
        ecg: ecg.map(|e| EcgRecord::new(&e.electrodes)),
        ecg_every: ecg.map(|e| u64::from(ecg_steps(e, p.setup.dt_ode))),
        checkpoints,
        resume,
    };
    let end = run_device_with(
        exe,
        info,
        p.t_end,
        p.threads,
        c.profile,
        &mut hooks,
        LoopOptions {
            centroids: Some(&p.setup.centroids),
            to_t_end: p.paced || ecg.is_some(),
            at_start: ecg.is_some(),
        },
    )?;
    // The last checkpoint's write (in the background) on the disk, or its error.
    hooks.checkpoints.finish()?;
    let ck = &hooks.checkpoints;
    if ck.written > 0 {
        note!(
            "  checkpoints: {} written into {}; the run blocked {:.2} s (snapshots {:.2} s, \
             waits for a write {:.2} s), the writes took {:.2} s beside it",
            ck.written,
            ck.dir.display(),
            ck.snapshot_s + ck.wait_s,
            ck.snapshot_s,
            ck.wait_s,
            ck.write_s
        );
    }
    Ok(Simulated {
        res: end.results,
        sim_s: end.secs,
        profile: end.profile,
        beats: hooks.beats,
        snapshots: hooks.snapshots,
        ecg: hooks.ecg,
        stopped: end.stopped,
    })
}

/// The run's record (results.json), built here only: the activation at the benchmark points
/// and along the diagonal, the parameters that repeat the run (`--params`), the electrodes
/// and (a paced run) the beats, printed.
pub fn record(
    c: &RunCommand,
    p: &Prepared,
    sim: &Simulated,
    ecg: Option<&EcgSpec>,
) -> Result<RunReport> {
    RunReport::new(
        &Probes::select(&p.setup, c.spec.slab_dx()),
        &sim.res,
        Some(RunParameters::of_run(&c.spec, p.t_end, ecg)),
        sim.beats.as_ref().map(summarise_beats),
    )
}

/// The options a checkpoint belongs to ([`Identity::options`]): the problem as results.json
/// records it (the mesh as an absolute path), the end time, the traced points and their
/// interval, the snapshot interval and the ECG's electrodes. Threads and ranks are not among
/// them: the results do not depend on them.
pub fn checkpoint_options(c: &RunCommand, p: &Prepared) -> serde_json::Value {
    let points: Vec<[f64; 3]> = c
        .trace_points
        .iter()
        .filter_map(|t| parse_point(t).ok())
        .collect();
    serde_json::json!({
        "problem": recorded_problem(&c.spec),
        "t_end": p.t_end,
        "trace_points": points,
        "trace_every": c.trace_every,
        "snapshot_every": c.snapshot_every,
        "ecg": {
            "electrode": c.ecg.electrodes,
            "electrodes": c.ecg.file.as_ref().map(|f| std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())),
            "ecg_12_lead": c.ecg.twelve_lead,
            "ecg_every": c.ecg.every,
            "sigma_bath": c.ecg.sigma_bath,
        },
    })
}

/// Activation at the benchmark points (against the published spread at P8, for the
/// benchmark) and over the mesh.
pub fn print_results(c: &RunCommand, setup: &Setup, res: &Results, report: &RunReport) {
    let spec = &c.spec;
    say!("results (simulated {:.2} ms):", res.t);
    print_points(report);
    if let (Some(dx), true) = (spec.slab_dx(), spec.benchmark_stimulus()) {
        if let Some((lo, hi)) = crate::report::published_p8_spread(dx) {
            say!(
                "  published codes put P8 at {lo}–{hi} ms at dx {dx} mm (docs/cardiac.md, Niederer check)"
            );
        }
    }
    print_activation_summary(setup, res);
}

/// Runs the native reference to the same time and says whether it agrees bit for bit.
pub fn compare_native(setup: &Setup, res: &Results) {
    let t = Instant::now();
    let mut nat = NativeSolver::new(setup);
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

/// `ecg.csv`, and `ecg.png` when the record has the 12 leads; prints each lead's range.
pub fn write_ecg(out: &ResultWriter, rec: &EcgRecord) -> Result<()> {
    out.text("ecg.csv", rec.to_csv())?;
    let leads = rec.leads();
    for l in &leads {
        let (lo, hi) = l
            .values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        say!("  lead {:<4} min {lo:8.4} mV, max {hi:8.4} mV", l.name);
    }
    let dir = out.dir().display();
    if leads.len() == 12 && rec.len() >= 2 {
        out.drawn("ecg.png", |path| {
            Ok(crate::ecg::plot::plot_twelve_lead(
                rec,
                "pseudo-ECG (12 leads, rhythm strip: II)",
                path,
            )?)
        })?;
        say!(
            "wrote {dir}/ecg.csv ({} samples) and {dir}/ecg.png",
            rec.len()
        );
    } else {
        say!("wrote {dir}/ecg.csv ({} samples)", rec.len());
    }
    Ok(())
}

/// The beats of a paced run, for the record.
pub fn summarise_beats(b: &Beats) -> Vec<BeatSummary> {
    b.summary()
        .iter()
        .enumerate()
        .map(|(k, &(a, r, apd))| BeatSummary {
            beat: k + 1,
            activated: a,
            repolarised: r,
            median_apd_ms: apd.is_finite().then_some(apd),
        })
        .collect()
}

/// Prints the beats of a paced run's record.
fn print_beats(beats: &[BeatSummary]) {
    say!("beats (activation, repolarisation through -70 mV, APD = their difference):");
    for b in beats {
        say!(
            "  beat {:>3}: {} cells activated, {} repolarised, median APD {:.1} ms",
            b.beat,
            b.activated,
            b.repolarised,
            b.median_apd_ms.unwrap_or(f64::NAN)
        );
    }
}

/// Every file of a finished run, through its [`ResultWriter`] (rank 0 writes): the
/// snapshots' `voltage.pvd`, `traces.csv`, `activation.vtu`, `results.json`, the ECG, the
/// phase breakdown with `profile.json`, and `report.html`.
pub fn write_results(
    p: &Prepared,
    sim: &Simulated,
    traces: &Traces,
    report: &RunReport,
    page: Option<ReportData>,
) -> Result<()> {
    let out = &p.out;
    sim.snapshots.finish(out)?;
    if let Some(csv) = traces.to_csv() {
        out.text("traces.csv", csv)?;
    }
    output::write_activation(out, &p.mesh, &sim.res, sim.beats.as_ref())?;
    out.text("results.json", report.to_json())?;
    let root = poplar::dist::is_root();
    if let Some(rec) = sim.ecg.as_ref().filter(|_| root) {
        write_ecg(out, rec)?;
    }
    if let Some(prof) = sim.profile.as_ref().filter(|_| root) {
        console::print_phase_breakdown(prof, &p.cfg.target, p.setup.dt_ode, sim.res.t);
        out.text("profile.json", prof.to_json())?;
    }
    if let Some(mut page) = page.filter(|_| root) {
        if let Some(prof) = &sim.profile {
            page = page.with_profile(prof)?;
        }
        out.text("report.html", poplar_viewer::html(&page))?;
        say!(
            "wrote {}/report.html (open it in a browser: memory per tile, program tree, liveness, execution)",
            out.dir().display()
        );
    }
    Ok(())
}
