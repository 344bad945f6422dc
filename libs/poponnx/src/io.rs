//! Reading files the importer is given, refusing what would block or is not a plain file.

use std::path::Path;

use crate::error::{OnnxError, Result};

/// Reads a regular file whole; a FIFO, a device or a folder is refused before it is opened,
/// so that nothing blocks.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>> {
    let err = |source| OnnxError::Read {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(err)?;
    if !meta.is_file() {
        return Err(err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        )));
    }
    std::fs::read(path).map_err(err)
}
