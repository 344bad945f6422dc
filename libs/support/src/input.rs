//! The one way the applications and tools open a file the user gives them (`--params`,
//! `--stim-cells`, `--electrodes`, a mesh, `mlp --data`, the inputs of `plot-diagonal`, a
//! profile): only if it is a regular file (a link to one is followed), checked before it is
//! opened ([`poplar_exe::files::open_regular`]). A FIFO, a device, a socket or a folder is
//! refused with [`NotRegularFile`] instead of blocking for ever (opening a FIFO for reading
//! waits for a writer) or reading without end.
//!
//! These return `std::io::Error`s for readers whose own errors already name the path and the
//! option (`--stim-cells FILE: …`): the error's kind is `InvalidInput` and its inner error a
//! [`NotRegularFile`] (reach it with `get_ref()` and `downcast_ref`). For the typed error that
//! names the path itself, use [`poplar_exe::files`] directly.

use std::fs::File;
use std::path::Path;

pub use poplar_exe::files::InputError;

/// The input is not a regular file: the inner error of [`open`]'s, [`read`]'s and
/// [`read_to_string`]'s `InvalidInput` errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "not a regular file ({kind}); give a regular file (a FIFO or a device would block or never \
     end)"
)]
pub struct NotRegularFile {
    /// What it is: "a FIFO", "a device", "a socket", "a directory", …
    pub kind: &'static str,
}

fn io(e: InputError) -> std::io::Error {
    match e {
        InputError::NotRegular { kind, .. } => {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, NotRegularFile { kind })
        }
        InputError::Io { source, .. } => source,
        e => std::io::Error::other(e.to_string()),
    }
}

/// Opens `path` for reading if it is a regular file.
pub fn open(path: &Path) -> std::io::Result<File> {
    poplar_exe::files::open_regular(path).map_err(io)
}

/// The bytes of the regular file `path`.
pub fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    poplar_exe::files::read_regular(path).map_err(io)
}

/// The text of the regular file `path`.
pub fn read_to_string(path: &Path) -> std::io::Result<String> {
    poplar_exe::files::read_regular_to_string(path).map_err(io)
}

/// Whether `e` is a refusal of [`open`], [`read`] or [`read_to_string`] for a path that is
/// not a regular file.
pub fn is_not_regular(e: &std::io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.downcast_ref::<NotRegularFile>().is_some())
}
