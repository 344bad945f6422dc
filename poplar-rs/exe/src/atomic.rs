//! Files saved atomically: written to a temporary file beside the final one, flushed to the
//! disk, then renamed over it. A save that fails (or panics, or is killed) never leaves a
//! truncated file under the final name nor touches the file there before; a failed or
//! panicking save removes its temporary file. The temporary file is created exclusively and
//! never through a link planted at its name ([`crate::files::create_temporary`]).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Removes the temporary file unless disarmed (the save completed).
struct Temporary(Option<PathBuf>);

impl Drop for Temporary {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// `.<name>.<pid>.tmp` beside `path`.
pub(crate) fn temporary_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| std::ffi::OsString::from("file"), |n| n.to_os_string());
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(&name);
    tmp.push(format!(".{}.tmp", std::process::id()));
    path.with_file_name(tmp)
}

/// Saves `path` atomically: `write` fills a buffered temporary file, which is then flushed,
/// synced and renamed to `path`. Errors are the I/O errors as they come; `tmp_err` is told
/// which path an error was about (the temporary file, or `path`).
pub(crate) fn save<E>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
    err: impl Fn(&Path, std::io::Error) -> E,
) -> Result<(), E> {
    let tmp = temporary_path(path);
    // Exclusive, never through a link planted at the temporary name.
    let file = crate::files::create_temporary(&tmp).map_err(|e| err(&tmp, e.into()))?;
    let guard = Temporary(Some(tmp.clone()));
    let mut w = BufWriter::with_capacity(1 << 20, file);
    write(&mut w).map_err(|e| err(path, e))?;
    let file = w.into_inner().map_err(|e| err(path, e.into_error()))?;
    file.sync_all().map_err(|e| err(path, e))?;
    drop(file);
    std::fs::rename(&tmp, path).map_err(|e| err(path, e))?;
    std::mem::forget(guard);
    // The folder too, so that the rename survives a crash of the machine (best effort).
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// [`save`] of bytes, with the I/O error as it is.
pub(crate) fn save_bytes(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    save(path, |w| w.write_all(bytes), |_, e| e)
}
