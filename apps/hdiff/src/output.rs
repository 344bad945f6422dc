//! Files people can open: `.npy` arrays (numpy), VTK image data (`.vti`, ParaView), and the
//! output folder of a run, checked before any work.
//!
//! Arrays are written as they are held, `i` fastest: the `.npy` header says Fortran order and
//! shape `(I, J, K)`, so `numpy.load` gives `a[i, j, k]`; the `.vti` extent is `I × J × K`
//! points (x = i, y = j, z = k, unit spacing).

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use app_support::output::{write_atomic_with, OutputLock, RunFiles};
use app_support::vtk;

use crate::grid::Grid;

/// Files a run writes (and would overwrite) in its output folder.
pub const RESULT_FILES: RunFiles = RunFiles::new(&[
    "input.npy",
    "output.npy",
    "input.vti",
    "output.vti",
    "results.json",
]);

/// Checks that `dir` can take a run's results and locks it for the run (until the lock is
/// dropped): creates it if missing, refuses a path that is a file, a folder that cannot be
/// written or one another run is writing into, and (unless `force`, which removes them) one
/// holding files of an earlier run, which it names.
pub fn prepare(dir: &Path, force: bool) -> Result<OutputLock> {
    Ok(RESULT_FILES.prepare(dir, force)?)
}

/// A field as `.npy`: f32, shape `(I, J, K)`, Fortran order.
pub fn write_npy(path: &Path, grid: &Grid, data: &[f32]) -> Result<()> {
    assert_eq!(data.len(), grid.len(), "a field of the grid");
    let shape = [grid.ni as u64, grid.nj as u64, grid.nk as u64];
    Ok(app_support::npy::write(
        path,
        &shape,
        npyz::Order::Fortran,
        data,
    )?)
}

/// Fields of a grid as VTK XML image data, each a point array (base64 binary, a 64-bit byte
/// count header).
pub fn write_vti(path: &Path, grid: &Grid, fields: &[(&str, &[f32])]) -> Result<()> {
    Ok(write_atomic_with(path, |w| {
        vtk::write_header(w, "ImageData")?;
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
            let text = vtk::encode_binary(&vtk::f32_le_bytes(data));
            writeln!(w, "          {text}")?;
            writeln!(w, "        </DataArray>")?;
        }
        writeln!(w, "      </PointData>")?;
        writeln!(w, "    </Piece>")?;
        writeln!(w, "  </ImageData>")?;
        vtk::write_footer(w)
    })?)
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
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "only a.npy: no temporary file is left");
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
        let raw = vtk::decode_binary(b64).unwrap();
        assert_eq!(raw.len(), 4 * 50);
        let back: Vec<f32> = raw
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(back, data);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
