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
    /// `--discard-checkpoints`: a new run (not resumed) removes the checkpoints of an earlier
    /// run in its checkpoint folder and starts again; without it they are refused (`--force`
    /// never removes them).
    pub discard: bool,
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

/// The checkpoints and their temporary files in a checkpoint folder (for the sweep of the
/// temporary files that a run killed while writing one left).
const CHECKPOINT_FILES: app_support::output::RunFiles =
    app_support::output::RunFiles::new(&[]).with_series(&[(PREFIX, SUFFIX)]);

/// Refuses a new run (not resumed) whose checkpoint folder `dir` holds checkpoints of an
/// earlier run, unless `discard` (`--discard-checkpoints`): a stopped run is continued with
/// `--resume`, and `--force` alone never removes its checkpoints. Checked first, before the
/// output folder's own refusal, whose advice (`--force`) would not keep them.
pub fn refuse_earlier_checkpoints(dir: &Path, discard: bool) -> Result<()> {
    let earlier = list(dir)?;
    match earlier.last() {
        Some((_, first)) if !discard => bail!(
            "{} holds {} checkpoint(s) of an earlier run ({}): continue with --resume {} (with \
             that run's options), or pass --discard-checkpoints to remove them and start \
             again (--force does not remove checkpoints)",
            dir.display(),
            earlier.len(),
            first.display(),
            dir.display()
        ),
        _ => Ok(()),
    }
}

/// Makes the checkpoint folder `dir` ready (rank 0): a folder other than the output folder
/// `out` is created and locked for the run; the temporary files of checkpoints that killed
/// runs left are removed; then, unless the run resumes from it (`resuming`), checkpoints of an
/// earlier run are refused ([`refuse_earlier_checkpoints`]) or, with `discard`, removed (those
/// files, and only those).
pub fn prepare_dir(
    dir: &Path,
    out: &Path,
    discard: bool,
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
    // With the folder's lock held (this one, or the output folder's).
    if dir.is_dir() {
        CHECKPOINT_FILES.remove_stale_temporaries(dir)?;
    }
    if resuming {
        return Ok(lock);
    }
    refuse_earlier_checkpoints(dir, discard)?;
    for (_, p) in &list(dir)? {
        std::fs::remove_file(p).with_context(|| format!("removing {}", p.display()))?;
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
/// stopped (a signal, `--stop-after`), at chunk ends. The run is blocked while the state is
/// snapshotted into memory; rank 0's [`BackgroundWriter`] writes the file while the run goes
/// on. The next checkpoint, a stop and the run's end ([`Checkpointer::finish`]) wait for the
/// write under way and end the run with its error, if any.
pub struct Checkpointer {
    pub dir: PathBuf,
    every: f64,
    next: f64,
    stop_after: Option<f64>,
    identity: Identity,
    signals: Option<StopSignals>,
    /// Rank 0's writer (the other ranks' stays idle).
    writer: BackgroundWriter,
    /// The snapshot buffer, reused from one checkpoint to the next.
    buffer: Vec<u8>,
    /// The last checkpoint on the disk (written, flushed and renamed).
    pub last: Option<PathBuf>,
    /// Checkpoints on the disk, and the wall seconds their writes took in the background
    /// (checksum, write, `fsync`, rename, prune).
    pub written: usize,
    pub write_s: f64,
    /// Wall seconds the run was blocked by checkpoints: snapshots of the state into memory,
    /// and waits for a write still under way (at the next checkpoint, a stop, the end).
    pub snapshot_s: f64,
    pub wait_s: f64,
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
            writer: BackgroundWriter::new(dir.clone(), o.keep),
            dir,
            every: o.every,
            next,
            stop_after: o.stop_after,
            identity,
            signals,
            buffer: Vec::new(),
            last: None,
            written: 0,
            write_s: 0.0,
            snapshot_s: 0.0,
            wait_s: 0.0,
        }
    }

    /// At a step boundary of `run` (every rank calls it): writes a checkpoint when one is due
    /// or the run is to stop (a signal on any rank, or `--stop-after`), and says whether to
    /// stop. Checkpoints fall on chunk ends only. A stop waits for its checkpoint to be on the
    /// disk before it says so.
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
        let mine = self.signals.as_ref().and_then(StopSignals::caught);
        let asked = self.stop_after.is_some_and(|s| t + slack >= s);
        // One collective per chunk end; which signal, only when one stops the job.
        let stop = poplar::dist::any(mine.is_some() || asked);
        let signal = if stop { job_signal(mine) } else { None };
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
        self.finish()?;
        let why = match (signal, mine, asked) {
            (Some(s), Some(_), _) => signal_name(s),
            (Some(s), None, _) => format!("{} to another rank", signal_name(s)),
            (None, _, _) => "--stop-after".to_string(),
        };
        if let Some(s) = signal {
            STOP_STATUS.store((128 + s) as u8, Ordering::Relaxed);
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

    /// Takes a checkpoint of `run` and `records` (every rank calls it): waits for the write
    /// under way (its error ends the run), snapshots the state into memory (gathered from
    /// every rank), and starts its write on rank 0's writer thread. Returns its path; it is on
    /// the disk once [`Checkpointer::finish`] (or the next checkpoint) has returned.
    pub fn write(&mut self, run: &DeviceRun, records: &HostRecords) -> Result<PathBuf> {
        self.finish()?;
        let start = Instant::now();
        let buffer = std::mem::take(&mut self.buffer);
        let (header, payload) = snapshot(run, &self.identity, records, buffer)?;
        self.snapshot_s += start.elapsed().as_secs_f64();
        let path = self.dir.join(file_name(header.step));
        let started = if poplar::dist::is_root() {
            self.writer.start(header, payload).map(|_| ())
        } else {
            self.buffer = payload; // rank 0 writes; the buffer is kept for the next one
            Ok(())
        };
        agreed(started)?;
        Ok(path)
    }

    /// Waits for the checkpoint being written, if any (every rank calls it, at the run's end
    /// too): its error, on every rank, if it failed.
    pub fn finish(&mut self) -> Result<()> {
        let start = Instant::now();
        let done = match self.writer.wait() {
            Ok(Some(w)) => {
                self.write_s += w.secs;
                self.written += 1;
                self.last = Some(w.path);
                self.buffer = w.buffer;
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        };
        self.wait_s += start.elapsed().as_secs_f64();
        agreed(done)
    }
}

/// A write's result on every rank: on one rank, the [`WriteError`] itself; over several, rank
/// 0's error shared with every rank.
fn agreed(r: std::result::Result<(), WriteError>) -> Result<()> {
    if poplar::dist::size() == 1 {
        return r.map_err(anyhow::Error::new);
    }
    poplar::dist::agree(r)?;
    Ok(())
}

/// The signal that stops the job, on every rank (every rank calls it once the job stops):
/// SIGINT if any rank caught one, else SIGTERM if any did, else none (`--stop-after`). A
/// signal sent to one rank only (a scheduler, a user's `kill`) stops the whole job as one.
fn job_signal(mine: Option<i32>) -> Option<i32> {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGINT, SIGTERM};
        if poplar::dist::any(mine == Some(SIGINT)) {
            return Some(SIGINT);
        }
        if poplar::dist::any(mine == Some(SIGTERM)) {
            return Some(SIGTERM);
        }
        None
    }
    #[cfg(not(unix))]
    {
        poplar::dist::any(mine.is_some()).then_some(2)
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
