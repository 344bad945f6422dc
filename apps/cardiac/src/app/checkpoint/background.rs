//! The background writer of a running `cardiac run`'s checkpoints (rank 0). The run is blocked
//! only while its state is snapshotted into memory ([`snapshot`]); a thread then computes the
//! payload's checksum while it writes the file, flushes it to the disk, renames it into place
//! ([`write_snapshot`]) and, only then, removes the checkpoints beyond the newest `keep`. One
//! write at a time: the next checkpoint, a stop, the run's end wait for the one under way and
//! get its error, if any, as a [`WriteError`]; dropped (the run ended by an error), the
//! writer waits for it too, so that no half-written file outlives the process.

use std::thread::JoinHandle;

use super::*;

/// A checkpoint the [`BackgroundWriter`] wrote.
#[derive(Debug)]
pub struct Written {
    pub path: PathBuf,
    /// Its header, its payload's checksum computed.
    pub header: Header,
    pub times: WriteTimes,
    /// Wall seconds of the whole write, from the snapshot taken to the old ones removed
    /// (checksum, write, `fsync`, rename, prune).
    pub secs: f64,
    /// The snapshot's buffer, given back for the next snapshot.
    pub buffer: Vec<u8>,
}

type Pending = (
    PathBuf,
    JoinHandle<std::result::Result<Written, WriteError>>,
);

/// Writes checkpoints into a folder on a thread of its own, one at a time, keeping the newest
/// `keep`.
#[derive(Debug)]
pub struct BackgroundWriter {
    dir: PathBuf,
    keep: usize,
    pending: Option<Pending>,
}

impl BackgroundWriter {
    /// A writer into `dir` (created when the first checkpoint is written), keeping `keep`.
    pub fn new(dir: PathBuf, keep: usize) -> BackgroundWriter {
        BackgroundWriter {
            dir,
            keep: keep.max(1),
            pending: None,
        }
    }

    /// Whether a write is under way (or finished and not yet waited for).
    pub fn is_busy(&self) -> bool {
        self.pending.is_some()
    }

    /// Starts writing the snapshot `header` and `payload` as the checkpoint of its step, and
    /// returns its path. A write still under way is waited for first; its error, if any, is
    /// returned and the new one not started.
    pub fn start(
        &mut self,
        header: Header,
        payload: Vec<u8>,
    ) -> std::result::Result<(PathBuf, Option<Written>), WriteError> {
        let before = self.wait()?;
        let path = self.dir.join(file_name(header.step));
        let (dir, keep, p) = (self.dir.clone(), self.keep, path.clone());
        let handle = std::thread::Builder::new()
            .name("checkpoint-writer".into())
            .spawn(move || write_and_prune(&dir, keep, &p, header, payload))
            .map_err(|source| WriteError::Io {
                path: path.clone(),
                source,
            })?;
        self.pending = Some((path.clone(), handle));
        Ok((path, before))
    }

    /// Waits for the write under way, if any: what it wrote, or why it failed.
    pub fn wait(&mut self) -> std::result::Result<Option<Written>, WriteError> {
        let Some((path, handle)) = self.pending.take() else {
            return Ok(None);
        };
        match handle.join() {
            Ok(r) => r.map(Some),
            Err(_) => Err(WriteError::WriterLost { path }),
        }
    }
}

impl Drop for BackgroundWriter {
    fn drop(&mut self) {
        if let Err(e) = self.wait() {
            note!("warning: {e}");
        }
    }
}

/// The writer thread's work: the file ([`write_snapshot`]), then the old ones removed.
fn write_and_prune(
    dir: &Path,
    keep: usize,
    path: &Path,
    mut header: Header,
    payload: Vec<u8>,
) -> std::result::Result<Written, WriteError> {
    let start = Instant::now();
    std::fs::create_dir_all(dir).map_err(|source| WriteError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let times = write_snapshot(path, &mut header, &payload)?;
    prune(dir, keep)?;
    Ok(Written {
        path: path.to_path_buf(),
        header,
        times,
        secs: start.elapsed().as_secs_f64(),
        buffer: payload,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(step: u64, payload: &[u8]) -> Header {
        Header {
            format: FORMAT,
            identity: Identity {
                program: program(),
                options: serde_json::json!({}),
                options_digest: "o".into(),
                mesh_digest: "m".into(),
                partition_digest: "p".into(),
                executable_checksum: 1,
            },
            step,
            time_ms: step as f64,
            device_time_ms: step as f32,
            ranks: 1,
            tensors: vec![TensorSection {
                name: "x".into(),
                dtype: "f32".into(),
                elements: 1000,
            }],
            host_records_bytes: (payload.len() - 4000) as u64,
            payload_bytes: payload.len() as u64,
            payload_crc32: 0,
        }
    }

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ckpt_bg_{}_{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// A payload of 1000 f32s and an empty `HostRecords` (postcard), which reads back.
    fn payload(fill: u8) -> Vec<u8> {
        let mut p = vec![fill; 4 * 1000];
        p = postcard::to_extend(&HostRecords::default(), p).unwrap();
        p
    }

    #[test]
    fn writes_in_the_background_keeps_the_newest_and_reads_back() {
        let dir = tmp("keep");
        let mut w = BackgroundWriter::new(dir.clone(), 2);
        for step in 1..=4u64 {
            let p = payload(step as u8);
            let (path, before) = w.start(header(step, &p), p).unwrap();
            assert_eq!(path, dir.join(file_name(step)));
            assert_eq!(before.is_some(), step > 1);
            assert!(w.is_busy());
        }
        let last = w.wait().unwrap().unwrap();
        assert!(!w.is_busy());
        assert_eq!(last.header.payload_crc32, crc32fast::hash(&last.buffer));
        let kept: Vec<u64> = list(&dir).unwrap().into_iter().map(|f| f.0).collect();
        assert_eq!(kept, vec![4, 3]);
        let c = read_file(&dir.join(file_name(4))).unwrap();
        assert_eq!(c.header, last.header);
        assert!(c.payload.iter().all(|&b| b == 4));
        // Only the checkpoints: no temporary file is left.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_failed_write_is_a_typed_error_at_the_next_wait_and_leaves_no_file() {
        // The folder cannot be created: a file is in its place.
        let d = tmp("fail");
        std::fs::create_dir_all(&d).unwrap();
        let dir = d.join("ckpt");
        std::fs::write(&dir, b"not a folder").unwrap();
        let mut w = BackgroundWriter::new(dir.clone(), 2);
        let p = payload(1);
        let (path, _) = w.start(header(7, &p), p).unwrap();
        let e = w.wait().unwrap_err();
        assert!(
            matches!(&e, WriteError::Io { path, .. } if *path == dir),
            "{e:?}"
        );
        assert!(!path.exists());
        // Nothing pending any more: the next start proceeds (and fails the same way).
        assert!(w.wait().unwrap().is_none());
        let p = payload(2);
        w.start(header(8, &p), p).unwrap();
        assert!(w.wait().is_err());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_disk_that_fills_up_mid_write_is_a_typed_error_and_the_older_checkpoint_stays() {
        let dir = tmp("full");
        let mut w = BackgroundWriter::new(dir.clone(), 1);
        let p = payload(1);
        w.start(header(1, &p), p).unwrap();
        w.wait().unwrap();
        // The write's own thread has no budget of this one: write the file here.
        app_support::output::fault::fail_writes_after(Some(100));
        let p = payload(2);
        let mut h = header(2, &p);
        let e = write_snapshot(&dir.join(file_name(2)), &mut h, &p).unwrap_err();
        app_support::output::fault::fail_writes_after(None);
        assert!(
            matches!(&e, WriteError::Io { source, .. } if source.kind() == std::io::ErrorKind::StorageFull),
            "{e:?}"
        );
        let kept: Vec<u64> = list(&dir).unwrap().into_iter().map(|f| f.0).collect();
        assert_eq!(kept, vec![1]);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        read_file(&dir.join(file_name(1))).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
