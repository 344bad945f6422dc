//! The output folder of a run and the files written into it: the only way the applications
//! write a result.
//!
//! - [`RunFiles::prepare`] checks a folder before any work starts, so that a bad `--out` never
//!   loses a finished run: it creates the folder if missing, refuses a path that is a file or a
//!   folder that cannot be written, takes the folder's lock ([`OutputLock`]: a second run into
//!   the same folder is refused, naming the first), and then either refuses a folder holding
//!   files of an earlier run (naming the first of them) or, forced, removes those files — only
//!   those: the names the run writes, never a file the user put there.
//! - [`write_atomic`], [`write_atomic_with`] and [`AtomicFile`] write a file through a
//!   temporary file in the same folder, flushed to the disk (`fsync`) and then renamed into
//!   place; [`AtomicPath`] does the same for a library that writes a file by its path (the
//!   plots). A failed write, a full disk or a killed process never leaves a truncated file
//!   under the final name, nor touches the file it would replace; a failed write removes its
//!   temporary file.
//! - [`check_output_file`]: the rule of every single-file output (`-o FILE`, `--json FILE`):
//!   an existing file is refused unless forced, and a file that is one of the command's inputs
//!   always.
//!
//! Every file is created exclusively and never through a link planted at its name (the probe
//! of the write check, the temporary files, the lock): [`poplar_exe::files::create_temporary`];
//! a name that is taken is refused with [`OutputError::Taken`], and nothing is written through it.
//!
//! Test builds (`cfg(test)` or the feature `fault-injection`, which the apps enable in their
//! dev-dependencies only) honour `APP_SUPPORT_FAIL_WRITES_AFTER=N`: see [`fault`].

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

mod lock;

pub use lock::{OutputLock, LOCK_FILE};

/// What can go wrong with an output folder or a file written into it; each names the path at
/// fault. The I/O error, if any, is the [`source`](std::error::Error::source) (so that
/// `anyhow`'s `{:#}` prints it after the message).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// `--out` names a file.
    #[error("--out {} is a file, not a folder: give a folder for the results", dir.display())]
    NotAFolder { dir: PathBuf },
    /// The folder could not be created.
    #[error("cannot create the output folder {}", dir.display())]
    Create {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file could not be created in the folder.
    #[error("the output folder {} is not writable", dir.display())]
    NotWritable {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The folder could not be listed.
    #[error("cannot list {}", dir.display())]
    List {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The folder holds files of an earlier run and overwriting was not asked for.
    #[error(
        "{} already holds results of an earlier run ({}{}); pass --force to replace them (the \
         earlier run's files are removed first), or choose another --out",
        dir.display(),
        first.display(),
        if *more > 0 { format!(" and {more} more") } else { String::new() }
    )]
    EarlierRun {
        dir: PathBuf,
        /// The first (by name) of the earlier run's files, with the folder.
        first: PathBuf,
        /// How many more there are.
        more: usize,
    },
    /// Another run holds the folder's lock.
    #[error(
        "{} is in use by another run: {holder}; wait for it to end, or choose another --out{hint}",
        dir.display()
    )]
    Locked {
        dir: PathBuf,
        /// Who holds it: pid, host, start time and command line.
        holder: String,
        /// How to remove the lock if that run is gone (empty if it was seen running).
        hint: String,
    },
    /// The lock could not be taken or read for another reason than another run holding it.
    #[error("cannot lock the output folder {} ({})", dir.display(), lock.display())]
    Lock {
        dir: PathBuf,
        lock: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file of the earlier run could not be removed (`--force`).
    #[error("cannot remove {}, a file of the earlier run", path.display())]
    Remove {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A single-file output exists and overwriting was not asked for.
    #[error("{} exists: pass --force to overwrite it, or choose another output", path.display())]
    Exists { path: PathBuf },
    /// A single-file output names a folder.
    #[error("{} is a folder: give a file name for the output", path.display())]
    IsAFolder { path: PathBuf },
    /// A single-file output is one of the command's inputs (refused even with `--force`).
    #[error(
        "{} is also an input of this command ({}): choose another output (--force does not \
         allow this)",
        path.display(),
        input.display()
    )]
    OutputIsInput { path: PathBuf, input: PathBuf },
    /// A name this run creates (a probe, a temporary file, a lock) is taken by something it
    /// may not replace, such as a link planted there: nothing was written through it.
    #[error(transparent)]
    Taken(poplar_exe::files::CreateError),
    /// The folder a single-file output goes into does not exist (or is not a folder).
    #[error(
        "{}: its folder {} does not exist; create it first, or choose another output",
        path.display(),
        dir.display()
    )]
    NoFolder { path: PathBuf, dir: PathBuf },
    /// Two output options of one command name the same file: the second would replace the
    /// first.
    #[error(
        "{first} {} and {second} {} are the same file: give each output its own file",
        first_path.display(),
        second_path.display()
    )]
    SameOutput {
        first: String,
        first_path: PathBuf,
        second: String,
        second_path: PathBuf,
    },
    /// A file could not be written (it is left as it was).
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The files a run writes (and would overwrite) in its output folder: fixed names, and series
/// of names with a given prefix and suffix and a number between (e.g. `voltage_<t>ms.vtu`
/// snapshots).
#[derive(Debug, Clone, Copy)]
pub struct RunFiles {
    names: &'static [&'static str],
    series: &'static [(&'static str, &'static str)],
}

impl RunFiles {
    /// The files called `names`.
    pub const fn new(names: &'static [&'static str]) -> RunFiles {
        RunFiles { names, series: &[] }
    }

    /// Also every file whose name is `prefix`, a number (digits and dots) and `suffix`, for
    /// each pair.
    pub const fn with_series(self, series: &'static [(&'static str, &'static str)]) -> RunFiles {
        RunFiles { series, ..self }
    }

    /// The fixed names.
    pub fn names(&self) -> &'static [&'static str] {
        self.names
    }

    /// Whether `name` is one of the files a run writes.
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(&name)
            || self.series.iter().any(|(p, s)| {
                name.len() > p.len() + s.len()
                    && name.starts_with(p)
                    && name.ends_with(s)
                    && name[p.len()..name.len() - s.len()]
                        .bytes()
                        .all(|b| b.is_ascii_digit() || b == b'.')
            })
    }

    /// Makes `dir` ready for a run's results and locks it for the run (the lock is held until
    /// the returned [`OutputLock`] is dropped):
    ///
    /// 1. creates it if missing; refuses a path that is a file, or a folder that cannot be
    ///    written;
    /// 2. takes its lock: refused if another run holds it (naming that run's pid, host, start
    ///    time and command); a lock left by a run that died on this host is removed;
    /// 3. removes the temporary files that killed runs left behind (`.<name>.tmp<pid>` of a
    ///    result name, of a process that is gone);
    /// 4. unless `force`, refuses a folder holding files of an earlier run, naming the first
    ///    by name and counting the others; with `force`, removes those files (only the names
    ///    of [`contains`](Self::contains), never another file), so that no earlier result is
    ///    left beside the new ones.
    pub fn prepare(&self, dir: &Path, force: bool) -> Result<OutputLock, OutputError> {
        if dir.exists() && !dir.is_dir() {
            return Err(OutputError::NotAFolder { dir: dir.into() });
        }
        std::fs::create_dir_all(dir).map_err(|source| OutputError::Create {
            dir: dir.into(),
            source,
        })?;
        check_writable(dir)?;
        let lock = OutputLock::acquire(dir)?;
        self.remove_stale_temporaries(dir)?;
        let mut earlier = self.earlier(dir)?;
        earlier.sort();
        if force {
            for name in &earlier {
                let path = dir.join(name);
                match std::fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(source) => return Err(OutputError::Remove { path, source }),
                }
            }
            return Ok(lock);
        }
        match earlier.first() {
            None => Ok(lock),
            Some(first) => Err(OutputError::EarlierRun {
                dir: dir.into(),
                first: dir.join(first),
                more: earlier.len() - 1,
            }),
        }
    }

    /// Names of the files (not folders) in `dir` that a run writes.
    fn earlier(&self, dir: &Path) -> Result<Vec<String>, OutputError> {
        let list = |source| OutputError::List {
            dir: dir.into(),
            source,
        };
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(list)? {
            let entry = entry.map_err(list)?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if self.contains(&name) && !entry.file_type().is_ok_and(|t| t.is_dir()) {
                found.push(name.into_owned());
            }
        }
        Ok(found)
    }

    /// Removes the temporary files (and [`AtomicPath`]'s folders) of these names in `dir` left
    /// by processes that are gone (a killed run), and the lock's and the write check's: call
    /// it with the folder's lock held. [`prepare`](Self::prepare) does, for the output folder;
    /// a run that writes into another folder (its checkpoints) calls it for that one.
    pub fn remove_stale_temporaries(&self, dir: &Path) -> Result<(), OutputError> {
        let list = |source| OutputError::List {
            dir: dir.into(),
            source,
        };
        for entry in std::fs::read_dir(dir).map_err(list)? {
            let entry = entry.map_err(list)?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            // The lock's own temporaries (`.run.lock.new<pid>`, `.run.lock.stale<pid>`) and
            // the write check's probe (`.write-check-<pid>`).
            let lock_tmp = [".new", ".stale"]
                .iter()
                .find_map(|k| name.strip_prefix(LOCK_FILE)?.strip_prefix(k))
                .or_else(|| name.strip_prefix(".write-check-"))
                .and_then(|pid| pid.parse::<u32>().ok());
            if let Some(pid) = lock_tmp {
                if pid != std::process::id()
                    && lock::process_state(pid, None) == lock::Process::Gone
                {
                    remove_stale(&entry);
                }
                continue;
            }
            let Some((target, pid)) = parse_temporary_name(&name) else {
                continue;
            };
            if self.contains(&target) && pid == std::process::id() {
                // A name this run will create, taken before it starts: a link planted there
                // is refused now, before any work, rather than when the file is written.
                check_own_name(&entry)?;
                continue;
            }
            if self.contains(&target)
                && pid != std::process::id()
                && lock::process_state(pid, None) == lock::Process::Gone
            {
                remove_stale(&entry);
            }
        }
        Ok(())
    }
}

/// An entry at a temporary name of this process, found before the run created any: a plain
/// file with one name or a folder is kept (left by a killed earlier process with this pid, it
/// is replaced when the file is written: [`poplar_exe::files::create_temporary`]); anything
/// else, a link above all, is refused as [`OutputError::Taken`] (never followed).
fn check_own_name(entry: &std::fs::DirEntry) -> Result<(), OutputError> {
    let path = entry.path();
    let meta = std::fs::symlink_metadata(&path).map_err(|source| OutputError::List {
        dir: path.parent().unwrap_or(Path::new(".")).into(),
        source,
    })?;
    #[cfg(unix)]
    let one_name = std::os::unix::fs::MetadataExt::nlink(&meta) == 1;
    #[cfg(not(unix))]
    let one_name = true;
    let t = meta.file_type();
    if (t.is_file() && one_name) || t.is_dir() {
        return Ok(());
    }
    Err(OutputError::Taken(poplar_exe::files::CreateError::Exists {
        path,
        kind: poplar_exe::files::file_kind(&meta),
    }))
}

/// Removes a stale temporary entry: a file or a link (the link, not what it points at), or a
/// folder of [`AtomicPath`] (whose links, if any, are removed, never followed).
fn remove_stale(entry: &std::fs::DirEntry) {
    if entry.file_type().is_ok_and(|t| t.is_dir()) {
        let _ = std::fs::remove_dir_all(entry.path());
    } else {
        let _ = std::fs::remove_file(entry.path());
    }
}

/// Creates (and removes) an empty file in `dir`: the folder takes files. The probe
/// (`.write-check-<pid>`) is created exclusively: a link planted at its name is refused
/// ([`OutputError::Taken`]), never written through.
pub fn check_writable(dir: &Path) -> Result<(), OutputError> {
    let probe = dir.join(format!(".write-check-{}", std::process::id()));
    let file = poplar_exe::files::create_temporary(&probe).map_err(|e| match e {
        e @ poplar_exe::files::CreateError::Exists { .. } => OutputError::Taken(e),
        poplar_exe::files::CreateError::Io { source, .. } => OutputError::NotWritable {
            dir: dir.into(),
            source,
        },
        e => OutputError::NotWritable {
            dir: dir.into(),
            source: e.into(),
        },
    })?;
    drop(file);
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// An [`OutputError`] of a failed creation of `path`'s temporary file: [`OutputError::Taken`]
/// for a name that is taken, else [`OutputError::Write`] of `path`.
fn create_error(path: &Path, e: poplar_exe::files::CreateError) -> OutputError {
    match e {
        e @ poplar_exe::files::CreateError::Exists { .. } => OutputError::Taken(e),
        e => OutputError::Write {
            path: path.into(),
            source: e.into(),
        },
    }
}

/// The temporary name of `name` for this process: `.<name>.tmp<pid>`, and `.<ext>` again if
/// `keep_extension` (for libraries that choose a format by the extension).
fn temporary_name(name: &str, keep_extension: Option<&str>) -> String {
    let pid = std::process::id();
    match keep_extension {
        Some(ext) => format!(".{name}.tmp{pid}.{ext}"),
        None => format!(".{name}.tmp{pid}"),
    }
}

/// The final name and the pid of a temporary name made by [`temporary_name`].
fn parse_temporary_name(tmp: &str) -> Option<(String, u32)> {
    let rest = tmp.strip_prefix('.')?;
    let at = rest.rfind(".tmp")?;
    let (name, tail) = (&rest[..at], &rest[at + 4..]);
    let digits = tail.split_once('.').map_or(tail, |(d, _)| d);
    if name.is_empty() || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((name.to_string(), digits.parse().ok()?))
}

/// The file name of `path`, or an `InvalidInput` error naming it.
fn file_name(path: &Path) -> std::io::Result<String> {
    Ok(path
        .file_name()
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is not a file name", path.display()),
            )
        })?
        .to_string_lossy()
        .into_owned())
}

/// Flushes the folder holding `path` to the disk, so that a rename into it survives a crash
/// of the machine (best effort: not every system can open a folder).
fn sync_parent(path: &Path) {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// Renames the complete, flushed `tmp` to `path` and flushes the folder.
fn rename_into_place(tmp: &Path, path: &Path) -> std::io::Result<()> {
    fault::before_rename()?;
    std::fs::rename(tmp, path)?;
    sync_parent(path);
    Ok(())
}

/// The file under an [`AtomicFile`]: writes go through the test builds' failure shim.
#[derive(Debug)]
struct Sink(File);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = fault::allowed(buf.len())?;
        self.0.write(&buf[..n])
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl Seek for Sink {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.0.seek(pos)
    }
}

/// A file being written under a temporary name beside its final one (`.<name>.tmp<pid>` in the
/// same folder, so that the rename stays within one file system): [`commit`](Self::commit)
/// flushes it to the disk and renames it into place; dropped without a commit (an error, a
/// panic), the temporary file is removed and the final name keeps what it held.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    w: Option<BufWriter<Sink>>,
}

impl AtomicFile {
    /// Starts writing `path`. The temporary file is created exclusively, never through a link
    /// at its name (an error of kind `AlreadyExists` naming it, and nothing written).
    pub fn create(path: impl AsRef<Path>) -> std::io::Result<AtomicFile> {
        AtomicFile::create_checked(path.as_ref()).map_err(|e| match e {
            Start::Name(e) => e,
            Start::Create(e) => e.into(),
        })
    }

    fn create_checked(path: &Path) -> Result<AtomicFile, Start> {
        let path = path.to_path_buf();
        let tmp = path.with_file_name(temporary_name(
            &file_name(&path).map_err(Start::Name)?,
            None,
        ));
        let file = poplar_exe::files::create_temporary(&tmp).map_err(Start::Create)?;
        let w = BufWriter::with_capacity(1 << 16, Sink(file));
        Ok(AtomicFile {
            path,
            tmp,
            w: Some(w),
        })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes the file to the disk (`fsync`) and renames it to its final name.
    pub fn commit(mut self) -> std::io::Result<()> {
        let w = self.w.take().expect("an uncommitted file has a writer");
        let Sink(file) = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        rename_into_place(&self.tmp, &self.path)
    }
}

/// Why an [`AtomicFile`] could not start.
enum Start {
    /// `path` has no file name.
    Name(std::io::Error),
    /// The temporary file could not be created.
    Create(poplar_exe::files::CreateError),
}

impl AtomicFile {
    /// Asks the kernel to start writing the file's `len` bytes from `offset` to the disk
    /// now, without waiting for them (Linux: `sync_file_range(SYNC_FILE_RANGE_WRITE)`; a
    /// no-op elsewhere): for a large file written in pieces, so that the disk works while
    /// the rest is being written and [`commit`](Self::commit)'s `fsync` has little left.
    /// What is buffered is written out first.
    pub fn start_writeback(&mut self, offset: u64, len: u64) -> std::io::Result<()> {
        let w = self.w.as_mut().expect("open");
        w.flush()?;
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd as _;
            let fd = w.get_ref().0.as_raw_fd();
            let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
                return Ok(()); // beyond any file: nothing to start
            };
            // SAFETY: `fd` is the open descriptor of the file `w` owns, alive for this call;
            // sync_file_range reads no memory of ours, it only schedules the range's writeback.
            let r = unsafe { libc::sync_file_range(fd, offset, len, libc::SYNC_FILE_RANGE_WRITE) };
            if r != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (offset, len);
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.w.as_mut().expect("open").write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.as_mut().expect("open").flush()
    }
}

/// For formats that go back to fill in a size or an offset (executables): the buffer is
/// flushed first.
impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.w.as_mut().expect("open").seek(pos)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Not committed, or the rename failed: the temporary file goes. Its buffer is dropped
        // unwritten (a `BufWriter` would flush it, failing again on a full disk).
        if let Some(w) = self.w.take() {
            let (_file, _unwritten) = w.into_parts();
        }
        if std::fs::symlink_metadata(&self.tmp).is_ok() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// A temporary path beside `path`, for a library that writes a file by its path (plotters):
/// it writes [`tmp`](Self::tmp) (same file name, so that a format chosen by the extension is
/// kept), then [`commit`](Self::commit) flushes it to the disk and renames it to `path`;
/// dropped without a commit, the temporary file is removed.
///
/// Such a library creates its file following links, so the temporary file lives in a folder
/// of this run's own, `.<name>.tmp<pid>.d` beside `path`, created for it alone (`mkdir`, which
/// never follows a link, with access for its owner only): nobody else can plant a link there.
#[derive(Debug)]
pub struct AtomicPath {
    path: PathBuf,
    dir: PathBuf,
    tmp: PathBuf,
    committed: bool,
}

impl AtomicPath {
    /// A temporary path for writing `path` (its private folder is created now).
    pub fn new(path: impl AsRef<Path>) -> std::io::Result<AtomicPath> {
        let path = path.as_ref().to_path_buf();
        let name = file_name(&path)?;
        let dir = path.with_file_name(temporary_name(&name, Some("d")));
        create_private_dir(&dir)?;
        let tmp = dir.join(&name);
        Ok(AtomicPath {
            path,
            dir,
            tmp,
            committed: false,
        })
    }

    /// Where to write.
    pub fn tmp(&self) -> &Path {
        &self.tmp
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes the written file to the disk and renames it to its final name.
    pub fn commit(mut self) -> std::io::Result<()> {
        poplar_exe::files::open_regular(&self.tmp)
            .map_err(std::io::Error::other)?
            .sync_all()?;
        rename_into_place(&self.tmp, &self.path)?;
        self.committed = true;
        let _ = std::fs::remove_dir(&self.dir);
        Ok(())
    }
}

/// Creates `dir` for this process alone (owner-only access on Unix); a folder of this very
/// name left by a killed process with the same pid (a folder, not a link) is removed first.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    match b.create(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let meta = std::fs::symlink_metadata(dir)?;
            if !meta.file_type().is_dir() {
                return Err(poplar_exe::files::CreateError::Exists {
                    path: dir.into(),
                    kind: poplar_exe::files::file_kind(&meta),
                }
                .into());
            }
            std::fs::remove_dir_all(dir)?;
            b.create(dir)
        }
        r => r,
    }
}

impl Drop for AtomicPath {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Writes `path` through an [`AtomicFile`]: `write` fills it, and it replaces `path` only if
/// every step succeeded.
pub fn write_atomic_with(
    path: impl AsRef<Path>,
    write: impl FnOnce(&mut AtomicFile) -> std::io::Result<()>,
) -> Result<(), OutputError> {
    let path = path.as_ref();
    let err = |source| OutputError::Write {
        path: path.into(),
        source,
    };
    let mut f = AtomicFile::create_checked(path).map_err(|e| match e {
        Start::Name(e) => err(e),
        Start::Create(e) => create_error(path, e),
    })?;
    write(&mut f).map_err(err)?;
    f.commit().map_err(err)
}

/// Writes `contents` to `path` atomically (see [`write_atomic_with`]).
pub fn write_atomic(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> Result<(), OutputError> {
    write_atomic_with(path, |f| f.write_all(contents.as_ref()))
}

/// Whether `a` and `b` are the same existing file (same device and inode on Unix, so hard
/// links and symbolic links count; the same canonical path elsewhere).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// The rule of every single-file output, checked before any long work: `path` must not be
/// one of `inputs` (ever: `force` does not change it), must not be a folder, and must not
/// exist unless `force`; its folder must exist and take files ([`check_writable`]), so that
/// the work is never lost to a write that cannot happen.
pub fn check_output_file(path: &Path, force: bool, inputs: &[&Path]) -> Result<(), OutputError> {
    if let Some(input) = inputs.iter().find(|i| same_file(path, i)) {
        return Err(OutputError::OutputIsInput {
            path: path.into(),
            input: input.to_path_buf(),
        });
    }
    if path.is_dir() {
        return Err(OutputError::IsAFolder { path: path.into() });
    }
    if !force && std::fs::symlink_metadata(path).is_ok() {
        return Err(OutputError::Exists { path: path.into() });
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(OutputError::NoFolder {
            path: path.into(),
            dir: dir.into(),
        });
    }
    check_writable(dir)
}

/// Refuses two output options naming the same file (`--json F --plot F`): `outputs` are
/// each option's name and path, `None` for an option not given. The same path by another
/// spelling, or an existing file through a link, counts.
pub fn check_distinct_outputs(outputs: &[(&str, Option<&Path>)]) -> Result<(), OutputError> {
    let given: Vec<(&str, &Path)> = outputs
        .iter()
        .filter_map(|(o, p)| Some((*o, (*p)?)))
        .collect();
    for (i, (first, a)) in given.iter().enumerate() {
        for (second, b) in &given[i + 1..] {
            if same_output_path(a, b) {
                return Err(OutputError::SameOutput {
                    first: first.to_string(),
                    first_path: a.to_path_buf(),
                    second: second.to_string(),
                    second_path: b.to_path_buf(),
                });
            }
        }
    }
    Ok(())
}

/// Whether two output paths name one file: the same file if both exist, else the same file
/// name in the same folder.
fn same_output_path(a: &Path, b: &Path) -> bool {
    if a == b || same_file(a, b) {
        return true;
    }
    let folder = |p: &Path| {
        let d = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::canonicalize(&d).unwrap_or(d)
    };
    a.file_name() == b.file_name() && folder(a) == folder(b)
}

/// The write-failure shim of test builds (`cfg(test)`, or the feature `fault-injection`, which
/// the apps enable only in their dev-dependencies, so that `cargo test` builds their binaries
/// with it and `cargo build`/`cargo run` without).
///
/// - `APP_SUPPORT_FAIL_WRITES_AFTER=N` (read once per process): after `N` bytes in all written
///   through [`AtomicFile`]s, every further write fails with "no space left on device"
///   (`ErrorKind::StorageFull`), as on a disk that fills up at that point;
/// - `APP_SUPPORT_FAIL_RENAME=1`: every rename into place fails;
/// - [`fail_writes_after`](fault::fail_writes_after): the same budget for the calling thread only (unit tests, which run
///   in parallel threads).
///
/// In other builds these are no-ops and the variables are ignored.
pub mod fault {
    #[cfg(any(test, feature = "fault-injection"))]
    mod imp {
        use std::cell::Cell;
        use std::sync::atomic::{AtomicU64, Ordering};
        use std::sync::OnceLock;

        thread_local! {
            static THREAD: Cell<Option<u64>> = const { Cell::new(None) };
        }

        fn global() -> &'static Option<AtomicU64> {
            static G: OnceLock<Option<AtomicU64>> = OnceLock::new();
            G.get_or_init(|| {
                std::env::var("APP_SUPPORT_FAIL_WRITES_AFTER")
                    .ok()
                    .and_then(|v| v.trim().parse().ok())
                    .map(AtomicU64::new)
            })
        }

        fn full() -> std::io::Error {
            std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "no space left on device (injected by APP_SUPPORT_FAIL_WRITES_AFTER)",
            )
        }

        pub fn fail_writes_after(bytes: Option<u64>) {
            THREAD.with(|t| t.set(bytes));
        }

        pub fn allowed(len: usize) -> std::io::Result<usize> {
            if len == 0 {
                return Ok(0);
            }
            if let Some(left) = THREAD.with(|t| t.get()) {
                if left == 0 {
                    return Err(full());
                }
                let n = (len as u64).min(left);
                THREAD.with(|t| t.set(Some(left - n)));
                return Ok(n as usize);
            }
            let Some(budget) = global() else {
                return Ok(len);
            };
            let mut left = budget.load(Ordering::Relaxed);
            loop {
                if left == 0 {
                    return Err(full());
                }
                let n = (len as u64).min(left);
                match budget.compare_exchange(left, left - n, Ordering::Relaxed, Ordering::Relaxed)
                {
                    Ok(_) => return Ok(n as usize),
                    Err(now) => left = now,
                }
            }
        }

        pub fn before_rename() -> std::io::Result<()> {
            static FAIL: OnceLock<bool> = OnceLock::new();
            if *FAIL.get_or_init(|| std::env::var_os("APP_SUPPORT_FAIL_RENAME").is_some()) {
                return Err(std::io::Error::other(
                    "rename refused (injected by APP_SUPPORT_FAIL_RENAME)",
                ));
            }
            Ok(())
        }
    }

    #[cfg(not(any(test, feature = "fault-injection")))]
    mod imp {
        pub fn fail_writes_after(_bytes: Option<u64>) {}

        #[inline]
        pub fn allowed(len: usize) -> std::io::Result<usize> {
            Ok(len)
        }

        #[inline]
        pub fn before_rename() -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Test builds: after `bytes` more bytes written through [`AtomicFile`](super::AtomicFile)s
    /// on this thread, writes fail as on a full disk (`None`: no limit, the process's
    /// `APP_SUPPORT_FAIL_WRITES_AFTER` applies). A no-op in other builds.
    pub fn fail_writes_after(bytes: Option<u64>) {
        imp::fail_writes_after(bytes)
    }

    /// How many of `len` bytes may be written now (an error once the budget is spent).
    pub(super) fn allowed(len: usize) -> std::io::Result<usize> {
        imp::allowed(len)
    }

    /// An error if renames are to fail.
    pub(super) fn before_rename() -> std::io::Result<()> {
        imp::before_rename()
    }

    /// Whether this build honours the shim's variables.
    pub const ENABLED: bool = cfg!(any(test, feature = "fault-injection"));
}

#[cfg(test)]
mod tests;
