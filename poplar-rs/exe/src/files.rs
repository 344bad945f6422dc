//! The two file operations every writer and reader of the workspace goes through:
//!
//! - [`create_new`] and [`create_temporary`]: a file is created exclusively (`O_CREAT |
//!   O_EXCL`) and without following a link at its name (`O_NOFOLLOW` on Unix), so that a link
//!   planted under a name a run will use (a probe, a temporary file, a lock's `.new` file)
//!   is never written through: the victim it points at is untouched, and the creation is
//!   refused with [`CreateError::Exists`] naming the path. Only a temporary name of this very
//!   process that holds a plain file (not a link, one name, as a killed earlier process with
//!   the same pid leaves) is removed and created again.
//! - [`open_regular`] (and [`read_regular`], [`read_regular_to_string`]): an input is opened
//!   only if it is a regular file (links to one are followed), checked before it is opened and
//!   again on the open file; a FIFO, a device, a socket or a folder is refused with
//!   [`InputError::NotRegular`] instead of blocking for ever (opening a FIFO for reading waits
//!   for a writer) or reading without end.
//!
//! The framework's own saves (executables, profiles) and `app-support`'s output folder use
//! them; so do the applications' readers, through `app-support`.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};

/// A file could not be created.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CreateError {
    /// Something is already at the name: a file, a folder or a link (left there, or planted so
    /// that a write would go through it). Nothing was written; the link's target is untouched.
    #[error(
        "{} already exists ({kind}) and is not a file this run may replace: nothing was written \
         through it; remove it if it is not in use",
        path.display()
    )]
    Exists {
        path: PathBuf,
        /// What is there: "a symbolic link", "a regular file", "a directory", …
        kind: &'static str,
    },
    /// Another I/O error (no such folder, permission denied, full disk, …).
    #[error("cannot create {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl CreateError {
    /// The path at fault.
    pub fn path(&self) -> &Path {
        match self {
            CreateError::Exists { path, .. } | CreateError::Io { path, .. } => path,
        }
    }
}

/// For callers whose errors are `std::io::Error`s: the kind is kept (`AlreadyExists` for
/// [`CreateError::Exists`]) and the message names the path.
impl From<CreateError> for std::io::Error {
    fn from(e: CreateError) -> std::io::Error {
        let kind = match &e {
            CreateError::Exists { .. } => std::io::ErrorKind::AlreadyExists,
            CreateError::Io { source, .. } => source.kind(),
        };
        std::io::Error::new(kind, e)
    }
}

/// An input could not be opened or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The path is not a regular file (nor a link to one).
    #[error(
        "{}: not a regular file ({kind}); give a regular file (a FIFO or a device would block \
         or never end)",
        path.display()
    )]
    NotRegular {
        path: PathBuf,
        /// What it is: "a FIFO", "a device", "a socket", "a directory", …
        kind: &'static str,
    },
    /// It could not be opened or read (missing, permission denied, …).
    #[error("cannot read {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl InputError {
    /// The path at fault.
    pub fn path(&self) -> &Path {
        match self {
            InputError::NotRegular { path, .. } | InputError::Io { path, .. } => path,
        }
    }
}

/// What kind of file `meta` describes, for messages: "a FIFO", "a device", "a socket",
/// "a directory", "a symbolic link", "a regular file".
pub fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// The options of an exclusive, link-refusing creation for writing.
fn exclusive() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // `O_EXCL` already refuses a link at the name; `O_NOFOLLOW` says so twice, for
        // systems or file systems that would not.
        o.custom_flags(libc::O_NOFOLLOW);
    }
    o
}

/// Creates `path` as a new, empty file for writing: refused ([`CreateError::Exists`]) if
/// anything is at the name, a link included (never followed). For final names that must not
/// exist (a lock, a file the user named).
pub fn create_new(path: &Path) -> Result<File, CreateError> {
    create(path, false)
}

/// Creates `path`, a temporary name that only this process uses (it holds this process's
/// id), as a new, empty file for writing: a plain file left at the name by an earlier process
/// with the same id (killed before it removed it: a regular file, not a link, with no other
/// name) is removed first; anything else there (a link, a file with another name, a folder) is
/// refused with [`CreateError::Exists`] and left as it is.
pub fn create_temporary(path: &Path) -> Result<File, CreateError> {
    create(path, true)
}

fn create(path: &Path, replace_stale: bool) -> Result<File, CreateError> {
    let io = |source| CreateError::Io {
        path: path.into(),
        source,
    };
    for attempt in 0..2 {
        match exclusive().open(path) {
            Ok(f) => return Ok(f),
            // ELOOP: O_NOFOLLOW met a link (on systems that report that before EEXIST).
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists || is_loop(&e) => {}
            Err(e) => return Err(io(e)),
        }
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && attempt == 0 => continue,
            Err(e) => return Err(io(e)),
        };
        if !(replace_stale && attempt == 0 && is_stale_plain_file(&meta)) {
            return Err(CreateError::Exists {
                path: path.into(),
                kind: file_kind(&meta),
            });
        }
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
    }
    Err(CreateError::Exists {
        path: path.into(),
        kind: "recreated by someone else while this run replaced it",
    })
}

fn is_loop(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// A regular file (not a link) with one name: removing it changes no other file.
fn is_stale_plain_file(meta: &std::fs::Metadata) -> bool {
    if !meta.file_type().is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.nlink() == 1
    }
    #[cfg(not(unix))]
    true
}

/// Opens the input `path` for reading if it is a regular file (a link to one is followed):
/// checked before it is opened (so that a FIFO is never opened) and on the open file (in case
/// the name changed between), which is opened without waiting (`O_NONBLOCK`, which a regular
/// file ignores).
pub fn open_regular(path: &Path) -> Result<File, InputError> {
    let io = |source| InputError::Io {
        path: path.into(),
        source,
    };
    let not_regular = |meta: &std::fs::Metadata| InputError::NotRegular {
        path: path.into(),
        kind: file_kind(meta),
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let mut o = OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    let file = o.open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    Ok(file)
}

/// The bytes of the regular file `path` ([`open_regular`]).
pub fn read_regular(path: &Path) -> Result<Vec<u8>, InputError> {
    let mut f = open_regular(path)?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(|source| InputError::Io {
        path: path.into(),
        source,
    })?;
    Ok(bytes)
}

/// The text of the regular file `path` ([`open_regular`]); not UTF-8 is an
/// [`InputError::Io`] of kind `InvalidData`.
pub fn read_regular_to_string(path: &Path) -> Result<String, InputError> {
    let mut f = open_regular(path)?;
    let mut text = String::new();
    f.read_to_string(&mut text)
        .map_err(|source| InputError::Io {
            path: path.into(),
            source,
        })?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("poplar-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_link_is_never_written_through_and_is_named() {
        let d = scratch("link");
        let victim = d.join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        for (name, temporary) in [("final", false), ("tmp", true)] {
            let p = d.join(name);
            std::os::unix::fs::symlink(&victim, &p).unwrap();
            let e = create(&p, temporary).unwrap_err();
            assert!(
                matches!(
                    e,
                    CreateError::Exists {
                        kind: "a symbolic link",
                        ..
                    }
                ),
                "{e}"
            );
            assert!(e.to_string().contains(&p.display().to_string()), "{e}");
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
            assert!(std::fs::symlink_metadata(&p)
                .unwrap()
                .file_type()
                .is_symlink());
            // A dangling link too (O_CREAT would create its target).
            let dangling = d.join(format!("{name}-dangling"));
            std::os::unix::fs::symlink(d.join("nowhere"), &dangling).unwrap();
            assert!(matches!(
                create(&dangling, temporary),
                Err(CreateError::Exists { .. })
            ));
            assert!(!d.join("nowhere").exists());
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_stale_plain_temporary_is_replaced_but_a_hard_link_is_not() {
        let d = scratch("stale");
        let p = d.join(".x.tmp1");
        std::fs::write(&p, "left by a killed run").unwrap();
        assert!(matches!(create_new(&p), Err(CreateError::Exists { .. })));
        let mut f = create_temporary(&p).unwrap();
        f.write_all(b"new").unwrap();
        drop(f);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        std::fs::remove_file(&p).unwrap();
        let victim = d.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::fs::hard_link(&victim, &p).unwrap();
        assert!(matches!(
            create_temporary(&p),
            Err(CreateError::Exists { .. })
        ));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let io: std::io::Error = create_new(&p).unwrap_err().into();
        assert_eq!(io.kind(), std::io::ErrorKind::AlreadyExists);
        assert!(io.to_string().contains(".x.tmp1"), "{io}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = scratch("fifo");
        let fifo = d.join("in.fifo");
        let ok = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(ok.success());
        let (tx, rx) = std::sync::mpsc::channel();
        let f = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(read_regular_to_string(&f).map(|_| ()));
        });
        let r = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("reading a FIFO must not block");
        let e = r.unwrap_err();
        assert!(
            matches!(e, InputError::NotRegular { kind: "a FIFO", .. }),
            "{e}"
        );
        assert!(e.to_string().contains("in.fifo"), "{e}");
        assert!(matches!(
            open_regular(&d),
            Err(InputError::NotRegular {
                kind: "a directory",
                ..
            })
        ));
        // A link to a regular file is an input like the file.
        std::fs::write(d.join("data"), "x").unwrap();
        std::os::unix::fs::symlink(d.join("data"), d.join("link")).unwrap();
        assert_eq!(read_regular(&d.join("link")).unwrap(), b"x");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
