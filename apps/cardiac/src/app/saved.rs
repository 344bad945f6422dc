//! `cardiac compile` and `cardiac exec`: a problem compiled once into an executable file that
//! also carries what the host needs to run it and report on it ([`bundle`]), and such a file
//! run with its own settings.

use std::path::{Path, PathBuf};

use anyhow::{ensure, Context, Result};
use poplar::Executable;

use crate::app::bundle;
use crate::app::console::print_points;
use crate::app::output::{self, ResultWriter, Snapshots};
use crate::app::probes::Probes;
use crate::app::problem::{self, ProblemSpec};
use crate::app::results::RunReport;
use crate::app::run::{check_dt, check_every, check_work, run_device, threads_for, LoopOptions};
use crate::format::show;
use crate::solver::device::{self, DeviceRun};

/// Compiles, turning "out of tile memory" into advice: more tiles (`--tiles` below the chips'
/// tiles: more of them; else more chips).
pub fn compile_or_hint(prob: &device::DeviceProblem, spec: &ProblemSpec) -> Result<Executable> {
    match device::compile_problem(prob) {
        Err(device::DeviceError::Compile(e @ poplar::CompileError::OutOfMemory { .. })) => {
            let chips = spec.chips;
            let all = problem::device_config(spec).map_or(0, |c| c.target.num_tiles() as usize);
            let tiles = spec.tiles.unwrap_or(all);
            let hint = if tiles < all {
                format!(
                    "the problem does not fit in the tile memory of --tiles {tiles}: give more \
                     tiles with --tiles (up to {all}, or leave it out for all the tiles of \
                     {chips} chip(s))"
                )
            } else if chips < 64 {
                format!(
                    "the problem does not fit in the tile memory of {chips} chip(s): give more \
                     tiles with --chips {} (1,472 tiles each)",
                    (chips * 2).min(64)
                )
            } else {
                "the problem does not fit in the tile memory of 64 chips, the most: use a \
                 coarser mesh"
                    .to_string()
            };
            Err(anyhow::Error::new(e).context(hint))
        }
        r => Ok(r?),
    }
}

/// Refuses an existing `output` unless `force`, and one of `inputs` (the mesh, the parameter
/// file) always (checked before the problem is read).
pub fn check_output(output: &Path, force: bool, inputs: &[&Path]) -> Result<()> {
    Ok(app_support::output::check_output_file(
        output, force, inputs,
    )?)
}

/// `cardiac compile`: builds and compiles `spec` and saves the executable with its run info,
/// benchmark points and mesh to `output` (checked by [`check_output`] first).
pub fn compile(spec: &ProblemSpec, output: &Path) -> Result<()> {
    if let Some(w) = check_dt(spec.dt_ode)? {
        note!("{w}");
    }
    let (mesh, warnings) = problem::load_mesh(spec)?;
    for w in &warnings {
        note!("{w}");
    }
    let setup = problem::setup(spec, &mesh)?;
    let cfg = problem::device_config(spec)?;
    let prob = device::build(&setup, &cfg)?;
    let mut exe = compile_or_hint(&prob, spec)?;
    bundle::attach(
        &mut exe,
        &prob.info,
        &Probes::select(&setup, spec.slab_dx()),
        &mesh,
    )?;
    if poplar::dist::is_root() {
        // Atomically, like every result (a temporary file beside it, synced, renamed).
        app_support::output::write_atomic_with(output, |w| exe.write_to(w))?;
    }
    say!(
        "wrote {} (the executable, with its run info, benchmark points and mesh)",
        output.display()
    );
    Ok(())
}

/// What `cardiac exec` runs and where it writes.
#[derive(Debug, Clone)]
pub struct ExecCommand {
    /// The executable file (written by `cardiac compile`).
    pub file: PathBuf,
    /// Simulated time to run (ms).
    pub t_end: f64,
    /// Output folder (none: print only).
    pub out: Option<PathBuf>,
    /// Overwrite the files of an earlier run in `out`.
    pub force: bool,
    /// Simulator threads (default: all cores).
    pub threads: Option<usize>,
    /// ms between voltage snapshots (0: none).
    pub snapshot_every: f64,
}

/// `cardiac exec`: runs a saved executable, prints the activation at its benchmark points and
/// writes `results.json`, `activation.vtu` and snapshots into `out`, if given (checked first).
pub fn exec(c: &ExecCommand) -> Result<()> {
    ensure!(
        c.t_end > 0.0 && c.t_end.is_finite(),
        "--t-end {} must be a positive, finite number of ms",
        c.t_end
    );
    ensure!(
        c.snapshot_every >= 0.0 && c.snapshot_every.is_finite(),
        "--snapshot-every {} must be 0 (none) or a positive number of ms",
        c.snapshot_every
    );
    let threads = threads_for(c.threads)?;
    let exe = Executable::load(&c.file)
        .with_context(|| format!("loading the executable {}", c.file.display()))?;
    let bundle::Bundle { info, probes, mesh } = bundle::read(&exe, &c.file)?;
    check_every(
        "--snapshot-every",
        c.snapshot_every,
        f64::from(info.dt_ode),
        Some("no snapshots"),
    )?;
    check_work(
        &format!("--t-end {} ms", show(c.t_end)),
        c.t_end,
        &format!("the executable's dt_ode {} ms", info.dt_ode),
        f64::from(info.dt_ode),
        info.n,
        info.pde_steps,
        c.force,
    )?;
    // The output folder (checked, and locked until the run ends) and its one writer.
    let out = match &c.out {
        Some(dir) => Some(ResultWriter::prepare(dir, c.force)?),
        None => None,
    };
    say!(
        "== cardiac exec {}: {} cells, dt_ode {} ms, p = {}; machine {} chip(s) × {} tiles",
        c.file.display(),
        info.n,
        info.dt_ode,
        info.pde_steps,
        exe.target.num_ipus,
        exe.target.tiles_per_ipu
    );
    let mut snapshots = Snapshots::new(c.snapshot_every);
    let mut hook = |run: &mut DeviceRun| match &out {
        Some(out) => snapshots.after_chunk(run, &mesh, out),
        None => Ok(()),
    };
    let (res, secs, _) = run_device(
        exe,
        info,
        c.t_end,
        threads,
        false,
        Some(&mut hook),
        LoopOptions::default(),
    )?;
    let done = res.activation.iter().filter(|&&a| a >= 0.0).count();
    say!(
        "simulated {:.2} ms in {:.2} s; {done} of {} cells activated",
        res.t,
        secs,
        res.activation.len()
    );
    let report = RunReport::new(&probes, &res, None, None)?;
    print_points(&report);
    if let Some(out) = &out {
        snapshots.finish(out)?;
        output::write_activation(out, &mesh, &res, None)?;
        out.text("results.json", report.to_json())?;
        say!(
            "wrote {0}/results.json and {0}/activation.vtu",
            out.dir().display()
        );
    }
    Ok(())
}
