//! Checkpoint and restart of `cardiac run`: the complete state of a run between two device
//! runs, written atomically into a folder (keeping the last few), and a run continued from the
//! newest valid one, bit for bit as if it had never stopped.
//!
//! A checkpoint is one file, `checkpoint_<step>.ckpt`:
//!
//! ```text
//! "CARDCKPT"  u32 LE header length  u32 LE CRC-32 of the header  header (JSON)  payload
//! ```
//!
//! The header ([`Header`]) names what the checkpoint belongs to ([`Identity`]: the program and
//! format, the options, the mesh, the partition and the compiled executable's checksum), the
//! step and time, the payload's sections, length and CRC-32. The payload is every device
//! variable the program mutates ([`STATE_TENSORS`], raw little-endian f32 in device order),
//! then the host's running records ([`HostRecords`], postcard). Rank 0 of an MPI job writes
//! and reads the files: the state is gathered from every rank (the engine's host reads) and
//! scattered back (its host writes), so a checkpoint does not depend on the number of ranks
//! or threads, and may be resumed on another number of either.
//!
//! (About 950 lines with its unit tests. One concept, a checkpoint: its format and identity,
//! finding the newest valid one, and the writer and signals of a running `cardiac run`, which
//! share the file's layout and the identity's rules.)

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};
use serde::{Deserialize, Serialize};

use crate::app::output::{Beats, SnapshotSchedule};
use crate::app::run::Flow;
use crate::solver::device::{DeviceRun, RunInfo, STATE_TENSORS};
use crate::solver::Setup;
use crate::tp06;

/// The checkpoint format; a checkpoint of another format is refused.
pub const FORMAT: u32 = 1;
/// The first bytes of every checkpoint file.
pub const MAGIC: &[u8; 8] = b"CARDCKPT";
/// Checkpoint files are `checkpoint_<step, 12 digits>.ckpt`.
pub const PREFIX: &str = "checkpoint_";
pub const SUFFIX: &str = ".ckpt";
/// Largest header accepted (a corrupted length must not size an allocation).
const MAX_HEADER: usize = 1 << 24;

/// The host's running records of a run, besides the device state: what its result files are
/// made of. Each record is a named optional section; a new record is one more field (and
/// [`FORMAT`] is raised, since an older program cannot read it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostRecords {
    /// Per-beat activation and repolarisation maps of a paced run.
    pub beats: Option<Beats>,
    /// The rows of `traces.csv` so far (time, V at each traced point).
    pub traces: Option<Vec<(f64, Vec<f32>)>>,
    /// The snapshot schedule: the next snapshot's time and those written.
    pub snapshots: Option<SnapshotSchedule>,
    /// The pseudo-ECG's samples so far (runs with electrodes).
    pub ecg: Option<crate::ecg::EcgRecord>,
}

/// What a checkpoint belongs to. Resuming compares every field with the run being started and
/// refuses a difference, naming it ([`Mismatch`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    /// The program and checkpoint format: `cardiac 0.1.0, checkpoint format 1`.
    pub program: String,
    /// The options that decide the simulation and its records (the problem as results.json
    /// records it, the end time, traced points and their interval, the snapshot interval).
    pub options: serde_json::Value,
    /// CRC-32 of the options' JSON (hex).
    pub options_digest: String,
    /// CRC-32 of the set-up's cells (centroids, cell models, stimulus classes, the diffusion
    /// operator): the mesh and every file the options name (fibres, cell lists).
    pub mesh_digest: String,
    /// CRC-32 of the partition (the cells' device order and each tile's cells).
    pub partition_digest: String,
    /// The compiled executable's checksum (`Executable::checksum`).
    pub executable_checksum: u64,
}

/// This program: `cardiac <version>, checkpoint format <FORMAT>`.
pub fn program() -> String {
    format!(
        "cardiac {}, checkpoint format {FORMAT}",
        env!("CARGO_PKG_VERSION")
    )
}

fn crc_hex(parts: &[&[u8]]) -> String {
    let mut h = crc32fast::Hasher::new();
    for p in parts {
        h.update(p);
    }
    format!("{:08x}", h.finalize())
}

fn f32_bytes(x: &[f32]) -> Vec<u8> {
    let mut out = vec![0u8; 4 * x.len()];
    put_f32(&mut out, x);
    out
}

/// `x` as little-endian bytes into `out` (exactly `4 * x.len()` long).
fn put_f32(out: &mut [u8], x: &[f32]) {
    for (o, v) in out.chunks_exact_mut(4).zip(x) {
        o.copy_from_slice(&v.to_le_bytes());
    }
}

impl Identity {
    /// The identity of a run: `options` (JSON), its set-up, run info and executable checksum.
    pub fn new(
        options: serde_json::Value,
        setup: &Setup,
        info: &RunInfo,
        executable_checksum: u64,
    ) -> Identity {
        let options_digest = crc_hex(&[options.to_string().as_bytes()]);
        let mut centroids = Vec::with_capacity(24 * setup.centroids.len());
        for x in setup.centroids.iter().flatten() {
            centroids.extend_from_slice(&x.to_le_bytes());
        }
        let mut cols = Vec::with_capacity(4 * setup.ell.cols.len());
        for c in &setup.ell.cols {
            cols.extend_from_slice(&c.to_le_bytes());
        }
        let mesh_digest = crc_hex(&[
            &(setup.n as u64).to_le_bytes(),
            &centroids,
            &setup.cell_model,
            &setup.stim_class,
            &f32_bytes(&setup.ell.diag),
            &f32_bytes(&setup.ell.values),
            &cols,
        ]);
        let mut order = Vec::with_capacity(4 * info.new_to_old.len());
        for c in &info.new_to_old {
            order.extend_from_slice(&c.to_le_bytes());
        }
        let tiles: Vec<u8> = info
            .tile_cells
            .iter()
            .flat_map(|r| [r.start as u64, r.end as u64])
            .flat_map(u64::to_le_bytes)
            .collect();
        Identity {
            program: program(),
            options,
            options_digest,
            mesh_digest,
            partition_digest: crc_hex(&[&order, &tiles]),
            executable_checksum,
        }
    }

    /// The first difference between the checkpoint's identity (`self`) and `now`'s, in the
    /// order a user would look for it: program, options, mesh, partition, executable.
    pub fn mismatch(&self, now: &Identity) -> Option<Mismatch> {
        if self.program != now.program {
            return Some(Mismatch::Program {
                was: self.program.clone(),
                now: now.program.clone(),
            });
        }
        if let Some((key, was, is)) = first_difference("", &self.options, &now.options) {
            return Some(Mismatch::Option {
                option: option_name(&key),
                was,
                now: is,
            });
        }
        if self.mesh_digest != now.mesh_digest {
            return Some(Mismatch::Mesh);
        }
        if self.partition_digest != now.partition_digest {
            return Some(Mismatch::Partition);
        }
        if self.executable_checksum != now.executable_checksum {
            return Some(Mismatch::Executable {
                was: self.executable_checksum,
                now: now.executable_checksum,
            });
        }
        None
    }
}

/// How a checkpoint differs from the run that would resume it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Mismatch {
    #[error("it was written by {was}; this is {now}: resume it with the program that wrote it")]
    Program { was: String, now: String },
    #[error("its run had {option} {was}; this one has {now}: resume with the options of the interrupted run")]
    Option {
        option: String,
        was: String,
        now: String,
    },
    #[error("its mesh differs from this run's (the cells, their fibres, cell types or stimulus, or the diffusion operator): the mesh file or a file the options name has changed")]
    Mesh,
    #[error("its partition differs from this run's (METIS gave other parts: another METIS build or partitioning code)")]
    Partition,
    #[error("its compiled executable (checksum {was:#018x}) differs from this run's ({now:#018x}): another version of the program or of the framework")]
    Executable { was: u64, now: u64 },
}

/// The first place where two JSON values differ: (path, was, now).
fn first_difference(
    path: &str,
    a: &serde_json::Value,
    b: &serde_json::Value,
) -> Option<(String, String, String)> {
    use serde_json::Value;
    if a == b {
        return None;
    }
    if let (Value::Object(x), Value::Object(y)) = (a, b) {
        let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let sub = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            let (va, vb) = (
                x.get(k).unwrap_or(&Value::Null),
                y.get(k).unwrap_or(&Value::Null),
            );
            if let Some(d) = first_difference(&sub, va, vb) {
                return Some(d);
            }
        }
    }
    Some((path.to_string(), a.to_string(), b.to_string()))
}

/// The command-line option of an options path (`problem.stim_density` → `--stim-amplitude`).
fn option_name(path: &str) -> String {
    let field = path.strip_prefix("problem.").unwrap_or(path);
    let field = field.split('.').next().unwrap_or(field);
    match field {
        "stim" => "the stimulus region (--stim-box, --stim-sphere, --stim-surface, --stim-cells)"
            .to_string(),
        "stim_density" => "--stim-amplitude".to_string(),
        "sites" => "--stim-site".to_string(),
        "regions" => "--region".to_string(),
        "trace_points" => "--trace-point".to_string(),
        other => format!("--{}", other.replace('_', "-")),
    }
}

/// A section of the payload: one device tensor, whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TensorSection {
    pub name: String,
    /// Always `f32` (little-endian).
    pub dtype: String,
    pub elements: u64,
}

/// A checkpoint's header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: u32,
    pub identity: Identity,
    /// ODE steps run.
    pub step: u64,
    /// Nominal time (steps × dt, ms).
    pub time_ms: f64,
    /// The device's f32 clock (ms).
    pub device_time_ms: f32,
    /// Ranks of the job that wrote it (any number may resume it).
    pub ranks: usize,
    /// The device tensors, in payload order.
    pub tensors: Vec<TensorSection>,
    /// Length of the host records after them.
    pub host_records_bytes: u64,
    pub payload_bytes: u64,
    pub payload_crc32: u32,
}

/// A checkpoint in memory: its header, and its payload (rank 0's; empty on the other ranks
/// of a resumed MPI job, whose state rank 0 scatters).
pub struct Checkpoint {
    pub path: PathBuf,
    pub header: Header,
    pub payload: Vec<u8>,
    pub records: HostRecords,
}

/// The state of `run` and `records` as a header and a payload (every rank calls it: the
/// device tensors are gathered from every rank).
pub fn encode(
    run: &DeviceRun,
    identity: &Identity,
    records: &HostRecords,
) -> Result<(Header, Vec<u8>)> {
    let mut tensors = Vec::with_capacity(STATE_TENSORS.len());
    // The state's size: 19 TP06 states and 5 vectors per cell, a clock per tile.
    let expected = 4 * ((tp06::N_STATES + 5) * run.info.n + run.info.tile_cells.len());
    let mut payload: Vec<u8> = Vec::with_capacity(expected + (1 << 16));
    for name in STATE_TENSORS {
        let x = run
            .engine
            .read_tensor::<f32>(name)
            .with_context(|| format!("reading the device tensor {name} for a checkpoint"))?;
        tensors.push(TensorSection {
            name: name.to_string(),
            dtype: "f32".to_string(),
            elements: x.len() as u64,
        });
        // Through a small buffer that stays in cache: one pass, no zero-filling.
        let mut buf = [0u8; 16384];
        for part in x.chunks(buf.len() / 4) {
            let b = &mut buf[..4 * part.len()];
            put_f32(b, part);
            payload.extend_from_slice(b);
        }
    }
    let tensor_bytes = payload.len();
    let payload = postcard::to_extend(records, payload).context("encoding the host records")?;
    let header = Header {
        format: FORMAT,
        identity: identity.clone(),
        step: run.steps(),
        time_ms: run.steps() as f64 * f64::from(run.info.dt_ode),
        device_time_ms: run.time()?,
        ranks: poplar::dist::size(),
        tensors,
        host_records_bytes: (payload.len() - tensor_bytes) as u64,
        payload_bytes: payload.len() as u64,
        payload_crc32: crc32fast::hash(&payload),
    };
    Ok((header, payload))
}

/// The file name of the checkpoint at `step`.
pub fn file_name(step: u64) -> String {
    format!("{PREFIX}{step:012}{SUFFIX}")
}

/// The step of a checkpoint file name.
pub fn step_of(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Writes a checkpoint file atomically (a temporary file beside it, flushed to the disk, then
/// renamed; the folder is synced).
pub fn write_file(path: &Path, header: &Header, payload: &[u8]) -> Result<()> {
    let json = serde_json::to_vec(header)?;
    app_support::output::write_atomic_with(path, |f| {
        f.write_all(MAGIC)?;
        f.write_all(&(json.len() as u32).to_le_bytes())?;
        f.write_all(&crc32fast::hash(&json).to_le_bytes())?;
        f.write_all(&json)?;
        f.write_all(payload)
    })
    .with_context(|| format!("writing the checkpoint {}", path.display()))
}

/// Reads and checks a checkpoint file: its magic, header checksum, format, payload length
/// (a truncated file) and payload checksum (a corrupted one), and decodes its host records.
pub fn read_file(path: &Path) -> Result<Checkpoint> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    ensure!(
        bytes.len() >= 16 && &bytes[..8] == MAGIC,
        "not a cardiac checkpoint (it does not start with {:?})",
        std::str::from_utf8(MAGIC).unwrap_or_default()
    );
    let len = u32::from_le_bytes(bytes[8..12].try_into()?) as usize;
    let crc = u32::from_le_bytes(bytes[12..16].try_into()?);
    ensure!(
        len <= MAX_HEADER && 16 + len <= bytes.len(),
        "truncated or corrupted: its header of {len} bytes does not fit in the file's {} bytes",
        bytes.len()
    );
    let json = &bytes[16..16 + len];
    ensure!(
        crc32fast::hash(json) == crc,
        "corrupted: its header does not match its checksum"
    );
    let header: Header = serde_json::from_slice(json).context("its header is not readable")?;
    ensure!(
        header.format == FORMAT,
        "it is of checkpoint format {}; this program ({}) reads format {FORMAT}",
        header.format,
        program()
    );
    let payload = &bytes[16 + len..];
    ensure!(
        payload.len() as u64 == header.payload_bytes,
        "truncated or corrupted: its payload is {} bytes, its header says {}",
        payload.len(),
        header.payload_bytes
    );
    ensure!(
        crc32fast::hash(payload) == header.payload_crc32,
        "corrupted: its payload does not match its checksum"
    );
    let tensor_bytes: u64 = header.tensors.iter().map(|t| 4 * t.elements).sum();
    ensure!(
        tensor_bytes + header.host_records_bytes == header.payload_bytes
            && header.tensors.iter().all(|t| t.dtype == "f32"),
        "corrupted: its sections do not add up to its payload"
    );
    let records: HostRecords = postcard::from_bytes(&payload[tensor_bytes as usize..])
        .context("its host records are not readable")?;
    let mut payload = bytes;
    payload.drain(..16 + len);
    payload.truncate(tensor_bytes as usize);
    Ok(Checkpoint {
        path: path.to_path_buf(),
        header,
        payload,
        records,
    })
}

/// The checkpoint files of `dir`, newest (highest step) first.
pub fn list(dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let mut found = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(found),
        Err(e) => return Err(e).with_context(|| format!("listing {}", dir.display())),
    };
    for e in entries {
        let e = e.with_context(|| format!("listing {}", dir.display()))?;
        if let Some(step) = step_of(&e.file_name().to_string_lossy()) {
            if e.file_type().is_ok_and(|t| t.is_file()) {
                found.push((step, e.path()));
            }
        }
    }
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    Ok(found)
}

/// Removes all but the newest `keep` checkpoints of `dir`.
pub fn prune(dir: &Path, keep: usize) -> Result<()> {
    for (_, path) in list(dir)?.into_iter().skip(keep) {
        std::fs::remove_file(&path)
            .with_context(|| format!("removing the old checkpoint {}", path.display()))?;
    }
    Ok(())
}

/// The folder of checkpoints that `--resume DIR` names: DIR itself, or its `checkpoints`
/// folder when DIR is the output folder of a run (holding no checkpoint itself).
pub fn resume_dir(dir: &Path) -> Result<PathBuf> {
    if !list(dir)?.is_empty() {
        return Ok(dir.to_path_buf());
    }
    let inner = dir.join("checkpoints");
    if !list(&inner)?.is_empty() {
        return Ok(inner);
    }
    if !dir.is_dir() {
        bail!("--resume {}: no such folder", dir.display());
    }
    bail!(
        "--resume {}: no checkpoint there ({PREFIX}<step>{SUFFIX} files, written by `cardiac run \
         --checkpoint-every MS` or when a run is stopped by a signal)",
        dir.display()
    )
}

/// The newest checkpoint of `dir` that reads back whole; one that does not (truncated,
/// corrupted) is refused with a note saying why, and the one before it is tried.
pub fn newest_valid(dir: &Path) -> Result<Checkpoint> {
    let all = list(dir)?;
    let mut refused = Vec::new();
    for (_, path) in &all {
        match read_file(path) {
            Ok(c) => return Ok(c),
            Err(e) => {
                note!(
                    "checkpoint {} refused: {e:#}; trying the one before it",
                    path.display()
                );
                refused.push(format!("{}: {e:#}", path.display()));
            }
        }
    }
    if all.is_empty() {
        bail!("no checkpoint in {}", dir.display());
    }
    bail!(
        "no valid checkpoint in {}: {}",
        dir.display(),
        refused.join("; ")
    )
}

/// The checkpoint a resumed run continues from, on every rank: rank 0 finds the newest valid
/// one in `dir` and checks that it belongs to this run (`identity`); every rank gets its
/// verdict, header and host records (the other ranks no payload: rank 0 scatters the state).
pub fn load_agreed(dir: &Path, identity: &Identity) -> Result<Checkpoint> {
    let root = poplar::dist::is_root();
    let found = if root {
        newest_valid(dir).and_then(|c| match c.header.identity.mismatch(identity) {
            None => Ok(c),
            Some(m) => Err(anyhow::Error::new(m).context(format!(
                "the checkpoint {} is not this run's",
                c.path.display()
            ))),
        })
    } else {
        Err(anyhow::anyhow!("(rank 0 reads the checkpoint)"))
    };
    let verdict = match &found {
        Ok(_) => Ok(()),
        Err(e) if root => Err(format!("{e:#}")),
        Err(_) => Ok(()),
    };
    poplar::dist::agree(verdict)?;
    if poplar::dist::size() == 1 {
        return found;
    }
    // Header and records to every rank.
    let mut meta = match &found {
        Ok(c) => postcard::to_allocvec(&(
            c.path.to_string_lossy().into_owned(),
            serde_json::to_string(&c.header)?,
            &c.records,
        ))?,
        Err(_) => Vec::new(),
    };
    poplar::dist::broadcast_from_root(&mut meta);
    if let Ok(c) = found {
        return Ok(c);
    }
    let (path, header, records): (String, String, HostRecords) =
        postcard::from_bytes(&meta).context("the checkpoint's header from rank 0")?;
    Ok(Checkpoint {
        path: PathBuf::from(path),
        header: serde_json::from_str(&header)?,
        payload: Vec::new(),
        records,
    })
}

/// Writes a checkpoint's device state into `run` (every rank; rank 0's payload is scattered)
/// and sets its step count.
pub fn restore(run: &mut DeviceRun, c: &Checkpoint) -> Result<()> {
    let root = poplar::dist::is_root();
    let mut at = 0usize;
    for t in &c.header.tensors {
        let n = t.elements as usize;
        let data: Vec<f32> = if root {
            c.payload[at..at + 4 * n]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        } else {
            vec![0.0; n] // rank 0's data are scattered
        };
        at += 4 * n;
        run.engine
            .write_tensor(&t.name, &data)
            .with_context(|| format!("writing the checkpoint's {} into the engine", t.name))?;
    }
    run.resume_at(c.header.step);
    let t = run.time()?;
    ensure!(
        t.to_bits() == c.header.device_time_ms.to_bits(),
        "the checkpoint {} restored a device clock of {t} ms; its header says {} ms",
        c.path.display(),
        c.header.device_time_ms
    );
    Ok(())
}

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

fn signal_name(sig: i32) -> String {
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

fn shell_quote(a: &str) -> String {
    let plain = !a.is_empty()
        && a.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./,=:+@%".contains(&b));
    if plain {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_give_their_step_back_and_nothing_else() {
        assert_eq!(file_name(250), "checkpoint_000000000250.ckpt");
        assert_eq!(step_of(&file_name(250)), Some(250));
        for bad in [
            "checkpoint_.ckpt",
            "checkpoint_12a.ckpt",
            "x_12.ckpt",
            "checkpoint_12.tmp",
        ] {
            assert_eq!(step_of(bad), None, "{bad}");
        }
    }

    #[test]
    fn option_differences_name_the_command_line_option() {
        let a = serde_json::json!({"problem": {"strategy": "full", "stim_density": 50.0}, "t_end": 10.0});
        let b = serde_json::json!({"problem": {"strategy": "ranged", "stim_density": 50.0}, "t_end": 10.0});
        let (k, was, now) = first_difference("", &a, &b).unwrap();
        assert_eq!(option_name(&k), "--strategy");
        assert_eq!((was.as_str(), now.as_str()), ("\"full\"", "\"ranged\""));
        let c = serde_json::json!({"problem": {"strategy": "full", "stim_density": 40.0}, "t_end": 10.0});
        assert_eq!(
            option_name(&first_difference("", &a, &c).unwrap().0),
            "--stim-amplitude"
        );
        assert_eq!(first_difference("", &a, &a), None);
    }

    #[test]
    fn a_mismatch_names_the_first_of_program_options_mesh_partition_executable() {
        let a = Identity {
            program: program(),
            options: serde_json::json!({"t_end": 10.0}),
            options_digest: "0".into(),
            mesh_digest: "m".into(),
            partition_digest: "p".into(),
            executable_checksum: 7,
        };
        assert_eq!(a.mismatch(&a), None);
        let mut b = a.clone();
        b.executable_checksum = 8;
        assert!(matches!(
            a.mismatch(&b),
            Some(Mismatch::Executable { was: 7, now: 8 })
        ));
        b.partition_digest = "q".into();
        assert_eq!(a.mismatch(&b), Some(Mismatch::Partition));
        b.mesh_digest = "n".into();
        assert_eq!(a.mismatch(&b), Some(Mismatch::Mesh));
        b.options = serde_json::json!({"t_end": 20.0});
        let m = a.mismatch(&b).unwrap();
        assert!(
            m.to_string().contains("--t-end 10.0; this one has 20.0"),
            "{m}"
        );
        b.program = "cardiac 9.9.9, checkpoint format 1".into();
        assert!(matches!(a.mismatch(&b), Some(Mismatch::Program { .. })));
    }

    #[test]
    fn shell_quoting_keeps_plain_words_and_quotes_the_rest() {
        assert_eq!(shell_quote("--dx"), "--dx");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(
            shell_quote("sphere:1,2,3,1;start=3"),
            "'sphere:1,2,3,1;start=3'"
        );
    }
}
