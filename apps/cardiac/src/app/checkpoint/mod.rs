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
//! Files: this one, the format (header, payload, reading and writing, finding the newest valid
//! checkpoint, restoring a run); `identity.rs`, what a checkpoint belongs to and how a
//! difference is named; `writer.rs`, the options, the signals and the checkpoints of a running
//! `cardiac run`; `background.rs`, the thread that writes them while the run goes on.

mod background;
mod identity;
mod writer;

pub use background::*;
pub use identity::*;
pub use writer::*;

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
/// The payload is written in pieces of this many bytes.
const WRITE_PIECE: usize = 8 << 20;
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

/// The state of `run` and `records` snapshotted into memory (every rank calls it: the device
/// tensors are gathered from every rank): a header whose payload checksum is not yet computed
/// (0: [`write_snapshot`] computes it while it writes), and the payload, in `buf` (cleared
/// first; its capacity is reused, so that the next checkpoint touches no new page). The run
/// is blocked only for this: one copy of each tensor from tile memory into the payload.
pub fn snapshot(
    run: &DeviceRun,
    identity: &Identity,
    records: &HostRecords,
    mut buf: Vec<u8>,
) -> Result<(Header, Vec<u8>)> {
    let mut tensors = Vec::with_capacity(STATE_TENSORS.len());
    // The state's size: 19 TP06 states and 5 vectors per cell, a clock per tile.
    let expected = 4 * ((tp06::N_STATES + 5) * run.info.n + run.info.tile_cells.len());
    buf.clear();
    buf.reserve(expected + (1 << 16));
    for name in STATE_TENSORS {
        let bytes = run
            .engine
            .read_tensor_bytes::<f32>(name, &mut buf)
            .with_context(|| format!("reading the device tensor {name} for a checkpoint"))?;
        tensors.push(TensorSection {
            name: name.to_string(),
            dtype: "f32".to_string(),
            elements: (bytes / 4) as u64,
        });
    }
    let tensor_bytes = buf.len();
    let payload = postcard::to_extend(records, buf).context("encoding the host records")?;
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
        payload_crc32: 0,
    };
    Ok((header, payload))
}

/// The state of `run` and `records` as a header and a payload, its checksum computed (every
/// rank calls it): [`snapshot`], then the payload's CRC-32.
pub fn encode(
    run: &DeviceRun,
    identity: &Identity,
    records: &HostRecords,
) -> Result<(Header, Vec<u8>)> {
    let (mut header, payload) = snapshot(run, identity, records, Vec::new())?;
    header.payload_crc32 = crc32fast::hash(&payload);
    Ok((header, payload))
}

/// Why a checkpoint could not be written (by [`write_snapshot`], or by the background writer
/// of a running `cardiac run`, whose error the run reports at its next checkpoint or its end).
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Creating, writing, flushing or renaming the file, or creating its folder.
    #[error("writing the checkpoint {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The header could not be encoded.
    #[error("encoding the header of the checkpoint {}: {source}", path.display())]
    Header {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// The checkpoint was written; an older one could not be removed.
    #[error("removing the old checkpoint {}: {source}", path.display())]
    Prune {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The writer thread ended without a result (it panicked).
    #[error("the checkpoint writer of {} stopped without finishing", path.display())]
    WriterLost { path: PathBuf },
}

/// What [`write_snapshot`] did, for the run's figures.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WriteTimes {
    /// The payload's CRC-32 (on a second thread, while the payload is written).
    pub crc_s: f64,
    /// Writing the file (after the checksum's thread is joined: the longer of the two).
    pub write_s: f64,
    /// `fsync`, rename and the folder's sync.
    pub sync_s: f64,
    /// The file's bytes.
    pub file_bytes: u64,
}

/// Writes the checkpoint file of a snapshot ([`snapshot`]) atomically: a temporary file beside
/// it, its payload written while a second thread computes the payload's CRC-32 (into
/// `header`), then its header, then flushed to the disk (`fsync`) and renamed; the folder is
/// synced. The header goes before the payload in the file, and is written last: its space is
/// sized for the longest checksum and padded with spaces (JSON's whitespace), so that the
/// payload's offset does not depend on its checksum. Pass `header.payload_crc32` as 0 or as
/// the checksum: it is computed either way.
pub fn write_snapshot(
    path: &Path,
    header: &mut Header,
    payload: &[u8],
) -> std::result::Result<WriteTimes, WriteError> {
    use std::io::{Seek as _, SeekFrom};
    let io = |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let json_err = |source| WriteError::Header {
        path: path.to_path_buf(),
        source,
    };
    header.payload_crc32 = u32::MAX; // the longest in decimal
    let room = serde_json::to_vec(header).map_err(json_err)?.len();
    let start = Instant::now();
    let mut f = app_support::output::AtomicFile::create(path).map_err(io)?;
    f.seek(SeekFrom::Start((16 + room) as u64)).map_err(io)?;
    let (crc, written) = std::thread::scope(|s| {
        let crc = s.spawn(|| {
            let t = Instant::now();
            (crc32fast::hash(payload), t.elapsed().as_secs_f64())
        });
        // In pieces of a few MiB, each sent on to the disk as soon as it is written: the
        // disk works while the next piece is copied into the page cache.
        let mut at = (16 + room) as u64;
        let written = payload.chunks(WRITE_PIECE).try_for_each(|piece| {
            f.write_all(piece)?;
            f.start_writeback(at, piece.len() as u64)?;
            at += piece.len() as u64;
            Ok(())
        });
        (crc.join().ok(), written)
    });
    written.map_err(io)?;
    let (crc, crc_s) = crc.ok_or_else(|| WriteError::WriterLost {
        path: path.to_path_buf(),
    })?;
    header.payload_crc32 = crc;
    let mut json = serde_json::to_vec(header).map_err(json_err)?;
    debug_assert!(json.len() <= room);
    json.resize(room, b' ');
    f.seek(SeekFrom::Start(0)).map_err(io)?;
    f.write_all(MAGIC).map_err(io)?;
    f.write_all(&(json.len() as u32).to_le_bytes())
        .map_err(io)?;
    f.write_all(&crc32fast::hash(&json).to_le_bytes())
        .map_err(io)?;
    f.write_all(&json).map_err(io)?;
    f.flush().map_err(io)?;
    let write_s = start.elapsed().as_secs_f64();
    let t = Instant::now();
    f.commit().map_err(io)?;
    Ok(WriteTimes {
        crc_s,
        write_s,
        sync_s: t.elapsed().as_secs_f64(),
        file_bytes: (16 + room + payload.len()) as u64,
    })
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

/// Writes a checkpoint file atomically ([`write_snapshot`]; `header`'s payload checksum is
/// computed again, and must be the payload's).
pub fn write_file(path: &Path, header: &Header, payload: &[u8]) -> Result<()> {
    let mut h = header.clone();
    write_snapshot(path, &mut h, payload)?;
    ensure!(
        header.payload_crc32 == h.payload_crc32,
        "the checkpoint {} was given a payload checksum that is not its payload's",
        path.display()
    );
    Ok(())
}

/// Reads and checks a checkpoint file: its magic, header checksum, format, payload length
/// (a truncated file) and payload checksum (a corrupted one), and decodes its host records.
pub fn read_file(path: &Path) -> Result<Checkpoint> {
    let bytes =
        app_support::input::read(path).with_context(|| format!("reading {}", path.display()))?;
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
        // No folder there (or a file where a parent folder would be): no checkpoints; the
        // output folder's own check names a file in the way.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(found)
        }
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
pub fn prune(dir: &Path, keep: usize) -> std::result::Result<(), WriteError> {
    let all = list(dir).map_err(|e| WriteError::Prune {
        path: dir.to_path_buf(),
        source: std::io::Error::other(format!("{e:#}")),
    })?;
    for (_, path) in all.into_iter().skip(keep) {
        std::fs::remove_file(&path).map_err(|source| WriteError::Prune { path, source })?;
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
        let n = 4 * t.elements as usize;
        let zeros; // rank 0's bytes are scattered; the others' only have the length
        let bytes = if root {
            &c.payload[at..at + n]
        } else {
            zeros = vec![0u8; n];
            &zeros[..]
        };
        at += n;
        run.engine
            .write_tensor_bytes::<f32>(&t.name, bytes)
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
