//! The checkpoints of a running `cardiac run`: its options, the folder, SIGINT/SIGTERM, and
//! the writer that keeps the newest few.

use super::*;

/// The checkpoint options of `cardiac run`.
#[derive(Debug, Clone, Default)]
pub struct CheckpointOptions {
    /// Write a checkpoint every this many simulated ms (at the first chunk end at or after
    /// each multiple); 0: only when the run is stopped.
    pub every: f64,
    /// Where (default: `<out>/checkpoints`).
    pub dir: Option<PathBuf>,
    /// How many to keep (the newest).
    pub keep: usize,
    /// Continue from the newest valid checkpoint in this folder.
    pub resume: Option<PathBuf>,
    /// Stop as a signal would, at the first chunk end at or after this simulated time (ms).
    pub stop_after: Option<f64>,
}

impl CheckpointOptions {
    /// Checks the options against the ODE step `dt` (ms).
    pub fn check(&self, dt: f64) -> Result<()> {
        crate::app::run::check_every(
            "--checkpoint-every",
            self.every,
            dt,
            Some("only when the run is stopped"),
        )?;
        ensure!(
            self.keep >= 1,
            "--checkpoint-keep {}: keep at least 1 (2 keeps the one before the newest, should \
             the newest be damaged)",
            self.keep
        );
        if let Some(s) = self.stop_after {
            ensure!(
                s.is_finite() && s > 0.0,
                "--stop-after {s} must be a positive number of ms"
            );
        }
        Ok(())
    }

    /// The checkpoint folder of a run writing into `out`.
    pub fn dir_for(&self, out: &Path) -> PathBuf {
        self.dir.clone().unwrap_or_else(|| out.join("checkpoints"))
    }
}

/// Makes the checkpoint folder `dir` ready (rank 0): refuses checkpoints of an earlier run in
/// it unless `force` (which removes those files, and only those) or the run resumes from them
/// (`resuming`); a folder other than the output folder `out` is created and locked for the run.
pub fn prepare_dir(
    dir: &Path,
    out: &Path,
    force: bool,
    resuming: bool,
) -> Result<Option<app_support::output::OutputLock>> {
    let mut lock = None;
    let inside_out = dir
        .parent()
        .is_some_and(|p| p == out || app_support::output::same_file(p, out))
        && dir.file_name().is_some_and(|n| n == "checkpoints");
    if !inside_out && !app_support::output::same_file(dir, out) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the checkpoint folder {}", dir.display()))?;
        lock = Some(app_support::output::OutputLock::acquire(dir)?);
    }
    if resuming {
        return Ok(lock);
    }
    let earlier = list(dir)?;
    if let Some((_, first)) = earlier.last() {
        if !force {
            bail!(
                "{} holds {} checkpoint(s) of an earlier run ({}): continue that run with \
                 --resume {}, or pass --force to remove them",
                dir.display(),
                earlier.len(),
                first.display(),
                dir.display()
            );
        }
        for (_, p) in &earlier {
            std::fs::remove_file(p).with_context(|| format!("removing {}", p.display()))?;
        }
    }
    Ok(lock)
}

static STOP_STATUS: AtomicU8 = AtomicU8::new(0);

/// The exit status a run stopped by a signal ends with (128 + the signal's number, as a shell
/// reports it), if one was.
pub fn stop_status() -> Option<u8> {
    match STOP_STATUS.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// SIGINT and SIGTERM, caught for the run loop: the first sets a flag that the loop reads at
/// the next chunk end (a checkpoint, then a clean stop); a second one ends the process at once,
/// as does any once the loop is over (the handlers stay installed: dropping arms that).
pub struct StopSignals {
    /// The signal caught (0: none).
    caught: Arc<AtomicUsize>,
    /// Set by the first signal: a second one exits.
    armed: Arc<AtomicBool>,
}

impl StopSignals {
    /// Installs the handlers.
    pub fn install() -> Result<StopSignals> {
        let caught = Arc::new(AtomicUsize::new(0));
        let armed = Arc::new(AtomicBool::new(false));
        #[cfg(unix)]
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // In this order: a signal while armed exits; the first one arms.
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, armed.clone())
                .context("installing the signal handlers")?;
            signal_hook::flag::register_usize(sig, caught.clone(), sig as usize)
                .context("installing the signal handlers")?;
            signal_hook::flag::register(sig, armed.clone())
                .context("installing the signal handlers")?;
        }
        Ok(StopSignals { caught, armed })
    }

    /// The signal caught so far, if any.
    pub fn caught(&self) -> Option<i32> {
        match self.caught.load(Ordering::Relaxed) {
            0 => None,
            s => Some(s as i32),
        }
    }
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        self.armed.store(true, Ordering::Relaxed);
    }
}

pub(super) fn signal_name(sig: i32) -> String {
    #[cfg(unix)]
    {
        if sig == signal_hook::consts::SIGINT {
            return "SIGINT".into();
        }
        if sig == signal_hook::consts::SIGTERM {
            return "SIGTERM".into();
        }
    }
    format!("signal {sig}")
}

/// The checkpoints of a running `cardiac run`: written every `every` ms, and when the run is
/// stopped (a signal, `--stop-after`), at chunk ends.
pub struct Checkpointer {
    pub dir: PathBuf,
    keep: usize,
    every: f64,
    next: f64,
    stop_after: Option<f64>,
    identity: Identity,
    signals: Option<StopSignals>,
    /// The last checkpoint written.
    pub last: Option<PathBuf>,
    /// Wall seconds spent writing checkpoints, and their count.
    pub write_s: f64,
    pub written: usize,
}

impl Checkpointer {
    /// Checkpoints into `dir` per `o`, for a run of `identity` resumed at `t0` ms (0 for a new
    /// run), stopping on `signals`.
    pub fn new(
        dir: PathBuf,
        o: &CheckpointOptions,
        identity: Identity,
        t0: f64,
        signals: Option<StopSignals>,
    ) -> Checkpointer {
        let mut next = o.every;
        if o.every > 0.0 {
            while next <= t0 {
                next += o.every;
            }
        }
        Checkpointer {
            dir,
            keep: o.keep.max(1),
            every: o.every,
            next,
            stop_after: o.stop_after,
            identity,
            signals,
            last: None,
            write_s: 0.0,
            written: 0,
        }
    }

    /// At a step boundary of `run` (every rank calls it): writes a checkpoint when one is due
    /// or the run is to stop (a signal on any rank, or `--stop-after`), and says whether to
    /// stop. Checkpoints fall on chunk ends only.
    pub fn boundary(
        &mut self,
        run: &DeviceRun,
        chunk_end: bool,
        records: impl FnOnce() -> HostRecords,
    ) -> Result<Flow> {
        if !chunk_end {
            return Ok(Flow::Continue);
        }
        let dt = f64::from(run.info.dt_ode);
        let t = run.steps() as f64 * dt;
        let slack = 0.5 * dt;
        let signal = self.signals.as_ref().and_then(StopSignals::caught);
        let asked = self.stop_after.is_some_and(|s| t + slack >= s);
        let stop = poplar::dist::any(signal.is_some() || asked);
        let due = self.every > 0.0 && t + slack >= self.next;
        while self.every > 0.0 && self.next <= t + slack {
            self.next += self.every;
        }
        if !(stop || due) {
            return Ok(Flow::Continue);
        }
        let path = self.write(run, &records())?;
        if !stop {
            return Ok(Flow::Continue);
        }
        let why = match (signal, asked) {
            (Some(s), _) => signal_name(s),
            (None, true) => "--stop-after".to_string(),
            (None, false) => "a signal to another rank".to_string(),
        };
        if signal.is_some() || !asked {
            #[cfg(unix)]
            let code = 128 + signal.unwrap_or(signal_hook::consts::SIGTERM);
            #[cfg(not(unix))]
            let code = 130;
            STOP_STATUS.store(code as u8, Ordering::Relaxed);
        }
        say!(
            "stopped by {why} at t = {t:.3} ms (step {}): checkpoint {}",
            run.steps(),
            path.display()
        );
        say!(
            "to continue: {}{}",
            if poplar::dist::size() > 1 {
                format!("mpiexec -n {} ", poplar::dist::size())
            } else {
                String::new()
            },
            resume_command(&self.dir)
        );
        Ok(Flow::Stop)
    }

    /// Writes a checkpoint of `run` and `records` (every rank calls it; rank 0 writes) and
    /// removes all but the newest `keep`.
    pub fn write(&mut self, run: &DeviceRun, records: &HostRecords) -> Result<PathBuf> {
        let start = Instant::now();
        let (header, payload) = encode(run, &self.identity, records)?;
        let path = self.dir.join(file_name(header.step));
        let done = if poplar::dist::is_root() {
            std::fs::create_dir_all(&self.dir)
                .with_context(|| format!("creating the checkpoint folder {}", self.dir.display()))
                .and_then(|()| write_file(&path, &header, &payload))
                .and_then(|()| prune(&self.dir, self.keep))
                .map_err(|e| format!("{e:#}"))
        } else {
            Ok(())
        };
        poplar::dist::agree(done)?;
        self.write_s += start.elapsed().as_secs_f64();
        self.written += 1;
        self.last = Some(path.clone());
        Ok(path)
    }
}

/// The command that continues this run: its own arguments without `--stop-after` and
/// `--resume`, then `--resume DIR`.
pub fn resume_command(dir: &Path) -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut out = vec!["cardiac".to_string()];
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if a == "--stop-after" || a == "--resume" {
            skip = true;
            continue;
        }
        if a.starts_with("--stop-after=") || a.starts_with("--resume=") {
            continue;
        }
        out.push(a);
    }
    out.push("--resume".into());
    out.push(dir.display().to_string());
    out.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn shell_quote(a: &str) -> String {
    let plain = !a.is_empty()
        && a.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./,=:+@%".contains(&b));
    if plain {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}
