//! The output folder of a run and the files written into it.
//!
//! [`RunFiles::prepare`] checks a folder before any work starts, so that a bad `--out` never
//! loses a finished run: it creates the folder if missing, refuses a path that is a file or a
//! folder that cannot be written, and (unless forced) one holding files of an earlier run,
//! naming the first of them. [`write_atomic`] and [`AtomicFile`] write a file through a
//! temporary file in the same folder, renamed into place once complete: a failed write never
//! leaves a truncated file under the final name, nor touches the file it would replace.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// What can go wrong with an output folder or a file written into it; each names the path at
/// fault. The I/O error, if any, is the [`source`](std::error::Error::source) (so that
/// `anyhow`'s `{:#}` prints it after the message).
#[derive(Debug, thiserror::Error)]
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
        "{} already holds results of an earlier run ({}{}); pass --force to overwrite them, or \
         choose another --out",
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
    /// A file could not be written (it is left as it was).
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The files a run writes (and would overwrite) in its output folder: fixed names, and series
/// of names with a given prefix and suffix (e.g. `voltage_<t>ms.vtu` snapshots).
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

    /// Also every file whose name starts with `prefix` and ends with `suffix`, for each pair.
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
                name.len() >= p.len() + s.len() && name.starts_with(p) && name.ends_with(s)
            })
    }

    /// Checks that `dir` can take a run's results: creates it if missing, refuses a path that
    /// is a file or a folder that cannot be written, and (unless `force`) one holding files of
    /// an earlier run, naming the first by name and counting the others.
    pub fn prepare(&self, dir: &Path, force: bool) -> Result<(), OutputError> {
        if dir.exists() && !dir.is_dir() {
            return Err(OutputError::NotAFolder { dir: dir.into() });
        }
        std::fs::create_dir_all(dir).map_err(|source| OutputError::Create {
            dir: dir.into(),
            source,
        })?;
        check_writable(dir)?;
        if force {
            return Ok(());
        }
        let mut earlier = self.earlier(dir)?;
        earlier.sort();
        match earlier.first() {
            None => Ok(()),
            Some(first) => Err(OutputError::EarlierRun {
                dir: dir.into(),
                first: dir.join(first),
                more: earlier.len() - 1,
            }),
        }
    }

    /// Names of the files in `dir` that a run writes.
    fn earlier(&self, dir: &Path) -> Result<Vec<String>, OutputError> {
        let list = |source| OutputError::List {
            dir: dir.into(),
            source,
        };
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(list)? {
            let name = entry.map_err(list)?.file_name();
            let name = name.to_string_lossy();
            if self.contains(&name) {
                found.push(name.into_owned());
            }
        }
        Ok(found)
    }
}

/// Creates (and removes) an empty file in `dir`: the folder takes files.
fn check_writable(dir: &Path) -> Result<(), OutputError> {
    let probe = dir.join(format!(".write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|source| OutputError::NotWritable {
        dir: dir.into(),
        source,
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// A file being written under a temporary name beside its final one (`.<name>.tmp<pid>` in the
/// same folder, so that the rename stays within one file system): [`commit`](Self::commit)
/// renames it into place; dropped without a commit, the temporary file is removed and the
/// final name keeps what it held.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    w: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `path`.
    pub fn create(path: impl AsRef<Path>) -> std::io::Result<AtomicFile> {
        let path = path.as_ref().to_path_buf();
        let name = path
            .file_name()
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{} is not a file name", path.display()),
                )
            })?
            .to_string_lossy()
            .into_owned();
        let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
        let w = BufWriter::new(File::create(&tmp)?);
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

    /// Flushes the file and renames it to its final name.
    pub fn commit(mut self) -> std::io::Result<()> {
        let w = self.w.take().expect("an uncommitted file has a writer");
        w.into_inner().map_err(|e| e.into_error())?;
        std::fs::rename(&self.tmp, &self.path)
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

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Not committed, or the rename failed: the temporary file goes.
        drop(self.w.take());
        if self.tmp.exists() {
            let _ = std::fs::remove_file(&self.tmp);
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
    let mut f = AtomicFile::create(path).map_err(err)?;
    write(&mut f).map_err(err)?;
    f.commit().map_err(err)
}

/// Writes `contents` to `path` atomically (see [`write_atomic_with`]).
pub fn write_atomic(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> Result<(), OutputError> {
    write_atomic_with(path, |f| f.write_all(contents.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILES: RunFiles =
        RunFiles::new(&["results.json", "activation.vtu"]).with_series(&[("voltage_", "ms.vtu")]);

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("app-support-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn run_files_are_the_names_and_the_series() {
        assert!(FILES.contains("results.json"));
        assert!(FILES.contains("voltage_0010.000ms.vtu"));
        assert!(!FILES.contains("voltage_ms.vt"));
        assert!(!FILES.contains("notes.txt"));
        assert!(!FILES.contains("results.json.bak"));
    }

    #[test]
    fn a_refused_overwrite_names_the_first_file_and_counts_the_others() {
        let d = scratch("refuse");
        std::fs::write(d.join("voltage_0001.000ms.vtu"), "a").unwrap();
        std::fs::write(d.join("results.json"), "{}").unwrap();
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        let e = FILES.prepare(&d, false).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains(&d.join("results.json").display().to_string()),
            "{msg}"
        );
        assert!(
            msg.contains("and 1 more") && msg.contains("--force"),
            "{msg}"
        );
        // Nothing was touched.
        assert_eq!(
            std::fs::read_to_string(d.join("results.json")).unwrap(),
            "{}"
        );
        assert_eq!(
            listing(&d),
            ["notes.txt", "results.json", "voltage_0001.000ms.vtu"]
        );
        // Forced, it is accepted; a folder of other files always is.
        FILES.prepare(&d, true).unwrap();
        std::fs::remove_file(d.join("results.json")).unwrap();
        std::fs::remove_file(d.join("voltage_0001.000ms.vtu")).unwrap();
        FILES.prepare(&d, false).unwrap();
        assert_eq!(listing(&d), ["notes.txt"], "the write check leaves nothing");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_single_earlier_file_is_named_alone() {
        let d = scratch("single");
        std::fs::write(d.join("activation.vtu"), "a").unwrap();
        let msg = FILES.prepare(&d, false).unwrap_err().to_string();
        assert!(msg.contains("activation.vtu)"), "{msg}");
        assert!(!msg.contains("more"), "{msg}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_file_is_not_a_folder_and_a_missing_folder_is_created() {
        let d = scratch("kinds");
        let f = d.join("file");
        std::fs::write(&f, "x").unwrap();
        let e = FILES.prepare(&f, false).unwrap_err();
        assert!(matches!(e, OutputError::NotAFolder { .. }), "{e}");
        assert!(e.to_string().contains("is a file, not a folder"), "{e}");
        // Under a file: cannot be created, and the message names the folder.
        let e = FILES.prepare(&f.join("sub"), false).unwrap_err();
        assert!(matches!(e, OutputError::Create { .. }), "{e}");
        assert!(e.to_string().contains("file/sub"), "{e}");
        let new = d.join("a").join("b");
        FILES.prepare(&new, false).unwrap();
        assert!(new.is_dir());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_atomic_write_replaces_the_file_and_leaves_no_temporary() {
        let d = scratch("atomic");
        let p = d.join("results.json");
        std::fs::write(&p, "old").unwrap();
        write_atomic(&p, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(listing(&d), ["results.json"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_intact() {
        let d = scratch("failed");
        let p = d.join("results.json");
        std::fs::write(&p, "old").unwrap();
        let e = write_atomic_with(&p, |f| {
            f.write_all(b"half of the new")?;
            Err(std::io::Error::other("the data ran out"))
        })
        .unwrap_err();
        assert!(matches!(e, OutputError::Write { .. }));
        assert!(e.to_string().contains("results.json"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(listing(&d), ["results.json"], "no temporary file is left");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_read_only_folder_keeps_its_file_and_is_refused_by_prepare() {
        use std::os::unix::fs::PermissionsExt;
        let d = scratch("readonly");
        let p = d.join("results.json");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o555)).unwrap();
        // Root (e.g. in a container) writes into read-only folders anyway: then the folder's
        // permissions prove nothing, and this check is skipped (the failure itself is covered
        // by `a_failed_write_leaves_the_old_file_intact`).
        let root_ignores_permissions = std::fs::write(d.join("probe"), "").is_ok();
        if !root_ignores_permissions {
            let e = write_atomic(&p, "new").unwrap_err();
            assert!(e.to_string().contains("results.json"), "{e}");
            assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
            let e = FILES.prepare(&d, true).unwrap_err();
            assert!(matches!(e, OutputError::NotWritable { .. }), "{e}");
            assert!(e.to_string().contains("is not writable"), "{e}");
        }
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::remove_dir_all(&d).unwrap();
    }
}
