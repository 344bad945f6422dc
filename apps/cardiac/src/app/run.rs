//! The run loop: device runs of whole chunks, then single steps, until exactly the requested
//! simulated time (or until every cell has activated), with progress on stderr. Bounded by
//! steps: a program that does not advance simulated time is an error, never an endless loop.

use std::io::IsTerminal;
use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};
use poplar::profile::{Profile, ProfileOptions};
use poplar::{EngineOptions, Executable};

use crate::solver::device::{DeviceRun, RunInfo};
use crate::solver::Results;

/// Called after every device run with the run (to write snapshots, sample the ECG), and
/// before the first when [`LoopOptions::at_start`] (then `run.steps() == 0`).
pub type ChunkHook<'a> = &'a mut dyn FnMut(&mut DeviceRun) -> Result<()>;

/// What the run loop does after a device run that is not its last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// End the run here (a checkpoint was written: the run is resumable).
    Stop,
}

/// What a caller does around the run loop's device runs ([`run_device_with`]).
pub trait LoopHooks {
    /// Before the first device run: a resumed run writes its checkpoint's state into `run`.
    fn start(&mut self, _run: &mut DeviceRun) -> Result<()> {
        Ok(())
    }
    /// After every device run (records, snapshots, traces).
    fn after_run(&mut self, run: &mut DeviceRun) -> Result<()>;
    /// After a device run that is not the run's last (the run goes on past it), once
    /// [`LoopHooks::after_run`] has recorded it: a step boundary where a checkpoint can be
    /// written and the run stopped. `chunk_end`: the device run was a whole chunk.
    fn boundary(&mut self, _run: &DeviceRun, _chunk_end: bool) -> Result<Flow> {
        Ok(Flow::Continue)
    }
}

/// A [`ChunkHook`] as [`LoopHooks`].
struct HookOnly<'a>(Option<ChunkHook<'a>>);

impl LoopHooks for HookOnly<'_> {
    fn after_run(&mut self, run: &mut DeviceRun) -> Result<()> {
        match self.0.as_mut() {
            Some(h) => h(run),
            None => Ok(()),
        }
    }
}

/// How a run loop ended ([`run_device_with`]).
pub struct LoopEnd {
    pub results: Results,
    /// Wall seconds of the loop.
    pub secs: f64,
    pub profile: Option<Profile>,
    /// Stopped at a step boundary by [`LoopHooks::boundary`], before its end.
    pub stopped: bool,
}

/// ODE steps that reach `t_end` ms at `dt` ms: `t_end / dt` rounded up, less a little slack
/// for decimal time steps (50 ms at 0.02 ms is 2,500 steps, not 2,501) and for a step that
/// is an f32 (within 2^-24 of the decimal). The slack is 10^-7 of the count, less than a step
/// below 10^7 steps ([`MAX_RUN_STEPS`]); it was 10^-6, which took 4 steps off 2,000 ms at
/// 0.5 µs.
pub fn steps_for(t_end: f64, dt: f64) -> u64 {
    step_count(t_end, dt) as u64
}

/// [`steps_for`] in f64, which does not saturate.
pub fn step_count(t_end: f64, dt: f64) -> f64 {
    (t_end / dt * (1.0 - 1e-7)).ceil().max(1.0)
}

/// ODE steps per device run: the default chunk, or fewer so that snapshots (or trace samples)
/// every `every` ms fall on chunk ends (at least one step).
pub fn chunk_steps_for(every: f64, dt: f64, default: u32) -> u32 {
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

/// Most ODE steps of one run: the device's f32 clock ([`crate::solver::next_time`]) stays
/// within one step of the nominal time for 6.55 million steps (measured at dt 0.005, 0.02 and
/// 0.1 ms), and a little later leaves the run loop's tolerance, which stops the run as a
/// program that does not advance time — after hours. 120,000 ms at 0.02 ms.
pub const MAX_RUN_STEPS: f64 = 6_000_000.0;

/// Most work of a run without `--force`, in cell-steps (cells × ODE steps × (1 +
/// [`PDE_SUBSTEP_COST`] × diffusion substeps)): about 28 hours at
/// [`CELL_STEPS_PER_SECOND`]. The Niederer benchmark at 0.1 mm and 0.005 ms for 300 ms is
/// 1.5·10^11.
pub const MAX_WORK: f64 = 1e12;

/// Cost of a diffusion substep against an ODE step, per cell: 0.2 ms against 1.0 ms of host
/// time per step on the 0.5 mm slab (measured at p = 1, 2 and 13).
pub const PDE_SUBSTEP_COST: f64 = 0.2;

/// Cell-steps per second of the simulator on a 2-core host (measured: 1.4·10^7 on the 0.5 mm
/// slab, 0.96·10^7 on the 0.2 mm slab), for estimates of a run's time.
pub const CELL_STEPS_PER_SECOND: f64 = 1e7;

/// A run's size: its ODE steps and its work (cell-steps, [`MAX_WORK`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Work {
    pub steps: f64,
    pub cell_steps: f64,
}

impl Work {
    /// Estimated wall time on a 2-core host, e.g. `about 3.2 hours`.
    pub fn duration(&self) -> String {
        let s = self.cell_steps / CELL_STEPS_PER_SECOND;
        if s < 120.0 {
            format!("about {s:.0} s")
        } else if s < 7200.0 {
            format!("about {:.0} minutes", s / 60.0)
        } else if s < 3.0 * 86400.0 {
            format!("about {:.1} hours", s / 3600.0)
        } else {
            format!("about {} days", crate::format::show((s / 86400.0).round()))
        }
    }
}

/// Checks the length and the work of a run before it starts: `t_end` ms (`end` says where it
/// came from, e.g. `--t-end 300 ms`) in steps of `dt` ms (`dt_from` names it, e.g.
/// `--dt-ode 0.02 ms`) over `cells` cells with `substeps` diffusion substeps per step. More
/// than [`MAX_RUN_STEPS`] steps are refused; more than [`MAX_WORK`] cell-steps unless `force`.
pub fn check_work(
    end: &str,
    t_end: f64,
    dt_from: &str,
    dt: f64,
    cells: usize,
    substeps: usize,
    force: bool,
) -> Result<Work> {
    use crate::format::{grouped, show};
    let steps = step_count(t_end, dt);
    if steps.is_nan() || steps > MAX_RUN_STEPS {
        bail!(
            "{end} at {dt_from} is {} ODE steps: the device's f32 clock counts at most {} \
             steps ({} ms at this step) before it drifts from the nominal time. Run a shorter \
             time, or a longer step",
            grouped(steps),
            grouped(MAX_RUN_STEPS),
            // As f32, the solvers' clock: 0.6, not 0.6000000070116585.
            (MAX_RUN_STEPS * dt) as f32
        );
    }
    let work = Work {
        steps,
        cell_steps: cells as f64 * steps * (1.0 + PDE_SUBSTEP_COST * substeps as f64),
    };
    if work.cell_steps > MAX_WORK && !force {
        bail!(
            "{end} at {dt_from} is {} ODE steps of {} cells, with p = {substeps} diffusion \
             substeps per step: {} cell-steps (cells × steps × (1 + p/5)), {} at 10^7 \
             cell-steps per second, past the bound of {} cell-steps. Pass --force to run it \
             anyway, or run a shorter time, a longer step or a coarser mesh",
            grouped(steps),
            grouped(cells as f64),
            show(work.cell_steps),
            work.duration(),
            show(MAX_WORK)
        );
    }
    Ok(work)
}

/// The simulator threads for `--threads`: `None` (all cores) as it is; 0 refused; more than
/// the host's cores capped at them, with a warning: the engine's threads spin on each other
/// for the cores (1,000 threads on 2 cores ran 115 times slower).
pub fn threads_for(requested: Option<usize>) -> Result<Option<usize>> {
    let Some(n) = app_support::bounds::threads(requested)? else {
        return Ok(None);
    };
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    if n > cores {
        crate::note!(
            "warning: --threads {n} is more than the {cores} cores of this host: the \
             simulator's threads would wait on each other for the cores; using {cores}"
        );
        return Ok(Some(cores));
    }
    Ok(Some(n))
}

/// Checks a sampling interval (`--snapshot-every`, `--trace-every`) against the ODE step `dt`
/// (ms): device runs end on whole steps, so a shorter interval would be a step in disguise
/// (and the snapshot schedule advanced it 10^10 times per step at 10^-12 ms). `none` names
/// what 0 means for the option (snapshots: none), `None` where 0 is not allowed.
pub fn check_every(option: &str, every: f64, dt: f64, none: Option<&str>) -> Result<()> {
    if every == 0.0 && none.is_some() {
        return Ok(());
    }
    let zero = none.map(|n| format!("0 ({n}) or ")).unwrap_or_default();
    if !(every.is_finite() && every > 0.0) {
        bail!("{option} {every} must be {zero}a positive number of ms");
    }
    if every < dt {
        bail!(
            "{option} {} ms is shorter than the time step ({} ms): give {zero}at least one \
             time step",
            crate::format::show(every),
            // The solvers' f32 step (an executable's 0.02 is 0.019999999552965164 in f64).
            dt as f32
        );
    }
    Ok(())
}

/// Checks that a sampling interval the device hits by whole ODE steps (`--ecg-every`,
/// `--trace-every`) is a whole number of steps `dt` (ms): otherwise the samples would fall
/// every rounded number of steps (0.05 ms at 0.02 ms sampled every 0.06 ms while the
/// results recorded 0.05). The message gives the two intervals it could be.
pub fn check_whole_steps(option: &str, every: f64, dt: f64) -> Result<()> {
    let steps = every / dt;
    if (steps - steps.round()).abs() <= 1e-6 * steps.max(1.0) {
        return Ok(());
    }
    // As f32, the solvers' step: 0.06, not 0.05999999865889549.
    let at = |n: f64| format!("{}", (n * dt) as f32);
    let (lo, hi) = (steps.floor(), steps.ceil());
    let choices = if lo >= 1.0 {
        format!("{} or {}", at(lo), at(hi))
    } else {
        at(hi)
    };
    bail!(
        "{option} {} ms is not a whole number of time steps of {} ms, so the device cannot \
         sample at it: give {choices} ms",
        crate::format::show(every),
        dt as f32
    );
}

/// Largest |V| (mV) a run may reach: TP06 stays within about −95..+60 mV; beyond this the
/// integration has diverged (a too large time step, stimulus or conductivity).
pub const V_BOUND_MV: f32 = 200.0;

/// The first cell whose V is not finite or beyond [`V_BOUND_MV`].
pub fn diverged_cell(v: &[f32]) -> Option<(usize, f32)> {
    v.iter()
        .position(|x| !x.is_finite() || x.abs() > V_BOUND_MV)
        .map(|i| (i, v[i]))
}

/// Runs `exe` until `t_end` ms or until every cell has activated; returns the results, the
/// wall seconds of the loop and the profile (when `profile`). After every device run V is
/// checked: a cell with V not finite or beyond ±[`V_BOUND_MV`] stops the run with an error
/// naming the time and the cell (with its centroid when `centroids` are given), so that a
/// diverging run never ends in NaN files.
/// How the run loop ends and reports divergence.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoopOptions<'a> {
    /// Cell centroids (mm), to name where a run diverged.
    pub centroids: Option<&'a [[f64; 3]]>,
    /// Run to `t_end` even when every cell has activated (paced runs, runs with an ECG).
    pub to_t_end: bool,
    /// Also call the hook once before the first device run (the ECG's sample at t = 0).
    pub at_start: bool,
}

pub fn run_device(
    exe: Executable,
    info: RunInfo,
    t_end: f64,
    threads: Option<usize>,
    profile: bool,
    after_chunk: Option<ChunkHook<'_>>,
    opts: LoopOptions<'_>,
) -> Result<(Results, f64, Option<Profile>)> {
    let mut hooks = HookOnly(after_chunk);
    let end = run_device_with(exe, info, t_end, threads, profile, &mut hooks, opts)?;
    Ok((end.results, end.secs, end.profile))
}

/// [`run_device`] with [`LoopHooks`]: the state of a checkpoint written in first, and a
/// checkpoint (and a stop) possible at every step boundary.
pub fn run_device_with(
    exe: Executable,
    info: RunInfo,
    t_end: f64,
    threads: Option<usize>,
    profile: bool,
    hooks: &mut dyn LoopHooks,
    opts: LoopOptions<'_>,
) -> Result<LoopEnd> {
    let centroids = opts.centroids;
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
    let chunk = u64::from(run.info.chunk_steps);
    let total = steps_for(t_end, dt);
    if profile {
        run.engine.enable_profiling(ProfileOptions::default());
    }
    hooks.start(&mut run)?;
    let tty = std::io::stderr().is_terminal();
    // The engine has settled the level (POPLAR_ISA or the host's best): same bits at each.
    crate::note!(
        "  kernels at {} (POPLAR_ISA=baseline|avx2|avx512 chooses; the results are the same bits)",
        poplar::isa::active()
    );
    // Rank 0 reports progress (every rank of an MPI job runs this loop).
    let root = poplar::dist::is_root();
    let t0 = Instant::now();
    let mut last_t = f64::from(run.time()?);
    // Wall time inside the engine's runs; the rest of the loop (reading time, V and
    // activation, the divergence check, snapshots, traces, beats, progress) is the host's share.
    let mut engine_s = 0.0f64;
    // The ECG's sample at t = 0; a resumed run (its steps restored) has it in its records.
    if opts.at_start && run.steps() == 0 {
        hooks.after_run(&mut run)?;
    }
    let mut stopped = false;
    while run.steps() < total {
        let te = Instant::now();
        let chunk_end = total - run.steps() >= chunk;
        if chunk_end {
            run.run_chunk().context("running the engine")?;
        } else {
            run.run_one_step().context("running the engine")?;
        }
        engine_s += te.elapsed().as_secs_f64();
        let t = f64::from(run.time()?);
        let nominal = run.steps() as f64 * dt;
        // The device clock is f32 sums of dt: within a step of the nominal time.
        if t.is_nan() || t <= last_t || (t - nominal).abs() > dt.max(1e-3 * nominal) {
            bail!(
                "the executable's program does not advance simulated time as its run info says: \
                 {t} ms on the device after {} steps of {dt} ms ({nominal} ms)",
                run.steps()
            );
        }
        last_t = t;
        check_diverged(&run, t, centroids)?;
        // The hook may run the device too (the ECG program): that is engine time.
        let before = run.ecg_seconds();
        hooks.after_run(&mut run)?;
        engine_s += run.ecg_seconds() - before;
        let act = run.activation()?;
        let done = act.iter().filter(|&&a| a >= 0.0).count();
        // Only at chunk ends (and the last step), not after every single step.
        if root && (run.steps() % chunk == 0 || run.steps() == total || done == act.len()) {
            print_progress(t, done, act.len(), t0.elapsed().as_secs_f64(), tty);
        }
        if (done == act.len() && !opts.to_t_end) || run.steps() >= total {
            break;
        }
        if hooks.boundary(&run, chunk_end)? == Flow::Stop {
            stopped = true;
            break;
        }
    }
    if tty && root {
        eprintln!();
    }
    let secs = t0.elapsed().as_secs_f64();
    crate::note!(
        "  run loop {secs:.2} s: engine {engine_s:.2} s, host outside the engine {:.2} s ({:.1} %)",
        secs - engine_s,
        100.0 * (secs - engine_s) / secs.max(1e-9)
    );
    let profile = run.engine.take_profile();
    Ok(LoopEnd {
        results: run.results()?,
        secs,
        profile,
        stopped,
    })
}

/// An error naming the first cell whose V left [`V_BOUND_MV`] by `t` (ms), and where it is.
fn check_diverged(run: &DeviceRun, t: f64, centroids: Option<&[[f64; 3]]>) -> Result<()> {
    let Some((cell, v)) = diverged_cell(&run.voltage()?) else {
        return Ok(());
    };
    let at = centroids
        .and_then(|c| c.get(cell))
        .map(|c| format!(" at ({:.2}, {:.2}, {:.2}) mm", c[0], c[1], c[2]))
        .unwrap_or_default();
    bail!(
        "the simulation diverged by t = {t:.3} ms: cell {cell}{at} has V = {v} mV (TP06 \
         stays within about -95..60 mV). Use a smaller --dt-ode (this run: {} ms), or \
         check the stimulus and the conductivities; no result files were written",
        run.info.dt_ode
    )
}

/// The progress line at `t` (ms): cells activated of `cells`, wall seconds `secs`. On a
/// terminal, one line redrawn in place; in a log file or pipe, one line per chunk (carriage
/// returns would pile every update onto a single line).
fn print_progress(t: f64, done: usize, cells: usize, secs: f64, tty: bool) {
    let line = format!(
        "  t = {t:7.2} ms  activated {done:>9}/{cells} cells ({:5.1} %)  {secs:7.1} s  ({:.2} s per simulated ms)",
        100.0 * done as f64 / cells.max(1) as f64,
        secs / t.max(1e-9)
    );
    if tty {
        eprint!("\r{line}   ");
    } else {
        eprintln!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::{chunk_steps_for, steps_for};

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

    #[test]
    fn step_counts_reach_the_end_time_exactly() {
        assert_eq!(steps_for(50.0, 0.02), 2_500);
        assert_eq!(steps_for(5.0, f64::from(0.02f32)), 250);
        assert_eq!(steps_for(0.05, 0.02), 3, "rounded up to whole steps");
        assert_eq!(steps_for(1e-9, 0.02), 1, "at least one step");
        assert_eq!(
            steps_for(2000.0, 0.0005),
            4_000_000,
            "no steps lost to the slack"
        );
        assert_eq!(steps_for(120_000.0, f64::from(0.02f32)), 6_000_000);
        assert_eq!(steps_for(6e4, 0.01), 6_000_000);
    }
}
