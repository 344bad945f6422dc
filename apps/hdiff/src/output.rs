//! Files people can open: `.npy` arrays (numpy), VTK image data (`.vti`, ParaView), and the
//! output folder of a run, checked before any work.
//!
//! Arrays are written as they are held, `i` fastest: the `.npy` header says Fortran order and
//! shape `(I, J, K)`, so `numpy.load` gives `a[i, j, k]`; the `.vti` extent is `I × J × K`
//! points (x = i, y = j, z = k, unit spacing).

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use base64::Engine as _;
use npyz::WriterBuilder;

use crate::grid::Grid;

/// Files a run writes (and would overwrite) in its output folder.
pub const RESULT_FILES: [&str; 5] = [
    "input.npy",
    "output.npy",
    "input.vti",
    "output.vti",
    "results.json",
];

/// Checks that `dir` can take a run's results: creates it if missing, refuses a path that is a
/// file or a folder that cannot be written, and (unless `force`) one holding files of an
/// earlier run, which it names.
pub fn prepare(dir: &Path, force: bool) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        bail!(
            "--out {} is a file, not a folder: give a folder for the results",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the output folder {}", dir.display()))?;
    let probe = dir.join(".hdiff-write-check");
    std::fs::write(&probe, b"")
        .with_context(|| format!("the output folder {} is not writable", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    if !force {
        if let Some(f) = RESULT_FILES.iter().find(|f| dir.join(f).exists()) {
            bail!(
                "{} already holds results of an earlier run ({}); pass --force to overwrite \
                 them, or choose another --out",
                dir.display(),
                dir.join(f).display()
            );
        }
    }
    Ok(())
}

/// Writes `path` through a temporary file renamed into place, so a failed write never leaves
/// a truncated file under the final name.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    let tmp = path.with_extension("partial");
    let file =
        std::fs::File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let mut w = std::io::BufWriter::new(file);
    write(&mut w)
        .and_then(|_| w.flush())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    drop(w);
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot move {} to {}", tmp.display(), path.display()))?;
    Ok(())
}

/// A field as `.npy`: f32, shape `(I, J, K)`, Fortran order.
pub fn write_npy(path: &Path, grid: &Grid, data: &[f32]) -> Result<()> {
    assert_eq!(data.len(), grid.len(), "a field of the grid");
    write_atomically(path, |w| {
        let mut writer = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&[grid.ni as u64, grid.nj as u64, grid.nk as u64])
            .order(npyz::Order::Fortran)
            .writer(w)
            .begin_nd()?;
        writer.extend(data.iter().copied())?;
        writer.finish()
    })
}

/// Fields of a grid as VTK XML image data, each a point array (base64 binary, a 64-bit byte
/// count header).
pub fn write_vti(path: &Path, grid: &Grid, fields: &[(&str, &[f32])]) -> Result<()> {
    write_atomically(path, |w| {
        writeln!(w, r#"<?xml version="1.0"?>"#)?;
        writeln!(
            w,
            r#"<VTKFile type="ImageData" version="1.0" byte_order="LittleEndian" header_type="UInt64">"#
        )?;
        let extent = format!("0 {} 0 {} 0 {}", grid.ni - 1, grid.nj - 1, grid.nk - 1);
        writeln!(
            w,
            r#"  <ImageData WholeExtent="{extent}" Origin="0 0 0" Spacing="1 1 1">"#
        )?;
        writeln!(w, r#"    <Piece Extent="{extent}">"#)?;
        let first = fields.first().map(|f| f.0).unwrap_or("");
        writeln!(w, r#"      <PointData Scalars="{first}">"#)?;
        for (name, data) in fields {
            assert_eq!(data.len(), grid.len(), "a field of the grid");
            writeln!(
                w,
                r#"        <DataArray type="Float32" Name="{name}" format="binary">"#
            )?;
            let mut bytes = Vec::with_capacity(8 + 4 * data.len());
            bytes.extend_from_slice(&(4 * data.len() as u64).to_le_bytes());
            for v in data.iter() {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
            writeln!(
                w,
                "          {}",
                base64::engine::general_purpose::STANDARD.encode(&bytes)
            )?;
            writeln!(w, "        </DataArray>")?;
        }
        writeln!(w, "      </PointData>")?;
        writeln!(w, "    </Piece>")?;
        writeln!(w, "  </ImageData>")?;
        writeln!(w, "</VTKFile>")?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_reads_back_as_i_j_k() {
        let grid = Grid::new(6, 5, 3).unwrap();
        let data: Vec<f32> = (0..grid.len()).map(|p| p as f32).collect();
        let dir = std::env::temp_dir().join(format!("hdiff-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.npy");
        write_npy(&path, &grid, &data).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
        assert_eq!(npy.shape(), &[6, 5, 3]);
        assert_eq!(npy.order(), npyz::Order::Fortran);
        let back: Vec<f32> = npy.into_vec().unwrap();
        // Fortran order: element (i, j, k) at i + I (j + J k), our index.
        assert_eq!(back, data);
        assert!(!dir.join("a.partial").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn vti_holds_every_value() {
        let grid = Grid::new(5, 5, 2).unwrap();
        let data: Vec<f32> = (0..grid.len()).map(|p| p as f32 * 0.5).collect();
        let dir = std::env::temp_dir().join(format!("hdiff-vti-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.vti");
        write_vti(&path, &grid, &[("in", &data)]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(r#"WholeExtent="0 4 0 4 0 1""#));
        let b64 = text
            .lines()
            .skip_while(|l| !l.contains("DataArray"))
            .nth(1)
            .unwrap()
            .trim();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        assert_eq!(u64::from_le_bytes(bytes[..8].try_into().unwrap()), 4 * 50);
        let back: Vec<f32> = bytes[8..]
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(back, data);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
