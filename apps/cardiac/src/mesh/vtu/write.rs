//! The `.vtu` writer: the mesh, its fibres and cell types, and any per-cell and per-point
//! `f32` arrays, as ascii or base64 DataArrays.

use super::super::{MeshError, TetMesh};
use super::{VtuEncoding, VTK_TETRA};
use std::io::Write;
use std::path::Path;

/// Write `mesh` as base64-binary VTU with the given per-cell `f32` arrays (e.g. activation
/// times). Fibres and cell types, when present, are written too, so [`read_vtu`](super::read_vtu) restores
/// them. Surface tags are not written (VTU has no place for them besides extra cells).
pub fn write_vtu(
    path: impl AsRef<Path>,
    mesh: &TetMesh,
    cell_data: &[(&str, &[f32])],
) -> Result<(), MeshError> {
    write_vtu_with(path, mesh, cell_data, &[], VtuEncoding::Base64)
}

/// [`write_vtu`] with per-point arrays and a choice of encoding.
pub fn write_vtu_with(
    path: impl AsRef<Path>,
    mesh: &TetMesh,
    cell_data: &[(&str, &[f32])],
    point_data: &[(&str, &[f32])],
    encoding: VtuEncoding,
) -> Result<(), MeshError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    check_lengths(mesh, cell_data, point_data)?;
    let io = |source| MeshError::Io {
        file: file.clone(),
        error: source,
    };
    // Through a temporary file renamed into place: a failed write never leaves a truncated
    // file under the final name, nor touches the one it would replace.
    let mut w = app_support::output::AtomicFile::create(path).map_err(io)?;
    write_vtu_to(&mut w, mesh, cell_data, point_data, encoding).map_err(io)?;
    w.commit().map_err(io)
}

fn check_lengths(
    mesh: &TetMesh,
    cell_data: &[(&str, &[f32])],
    point_data: &[(&str, &[f32])],
) -> Result<(), MeshError> {
    for (arrays, expected) in [
        (cell_data, mesh.num_cells()),
        (point_data, mesh.num_nodes()),
    ] {
        for (name, v) in arrays {
            if v.len() != expected {
                return Err(MeshError::FieldLength {
                    field: (*name).to_string(),
                    expected,
                    found: v.len(),
                });
            }
        }
    }
    Ok(())
}

/// Values of one DataArray, written either as ASCII or as base64 little-endian bytes.
enum Data<'a> {
    F32(&'a [f32]),
    F64(Vec<f64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
}

impl Data<'_> {
    fn vtk_type(&self) -> &'static str {
        match self {
            Data::F32(_) => "Float32",
            Data::F64(_) => "Float64",
            Data::I32(_) => "Int32",
            Data::I64(_) => "Int64",
            Data::U8(_) => "UInt8",
        }
    }

    fn le_bytes(&self) -> Vec<u8> {
        match self {
            Data::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::U8(v) => v.clone(),
        }
    }

    fn write_ascii(&self, w: &mut impl Write) -> std::io::Result<()> {
        fn lines<T: std::fmt::Display>(w: &mut impl Write, v: &[T]) -> std::io::Result<()> {
            for chunk in v.chunks(12) {
                let mut sep = "";
                for x in chunk {
                    write!(w, "{sep}{x}")?;
                    sep = " ";
                }
                writeln!(w)?;
            }
            Ok(())
        }
        match self {
            Data::F32(v) => lines(w, v),
            Data::F64(v) => lines(w, v),
            Data::I32(v) => lines(w, v),
            Data::I64(v) => lines(w, v),
            Data::U8(v) => lines(w, v),
        }
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn write_array(
    w: &mut impl Write,
    name: Option<&str>,
    components: usize,
    data: &Data,
    encoding: VtuEncoding,
) -> std::io::Result<()> {
    let name = name.map_or(String::new(), |n| format!(" Name=\"{}\"", xml_escape(n)));
    let format = match encoding {
        VtuEncoding::Ascii => "ascii",
        VtuEncoding::Base64 => "binary",
    };
    writeln!(
        w,
        "<DataArray type=\"{}\"{name} NumberOfComponents=\"{components}\" format=\"{format}\">",
        data.vtk_type()
    )?;
    match encoding {
        VtuEncoding::Ascii => data.write_ascii(w)?,
        VtuEncoding::Base64 => {
            let text = app_support::vtk::encode_binary(&data.le_bytes());
            w.write_all(text.as_bytes())?;
            writeln!(w)?;
        }
    }
    writeln!(w, "</DataArray>")
}

/// [`write_vtu_with`] into any writer. Array lengths must match the mesh (checked by
/// [`write_vtu_with`]; here a mismatch just produces a file ParaView will reject).
pub fn write_vtu_to(
    w: &mut impl Write,
    mesh: &TetMesh,
    cell_data: &[(&str, &[f32])],
    point_data: &[(&str, &[f32])],
    encoding: VtuEncoding,
) -> std::io::Result<()> {
    app_support::vtk::write_header(w, "UnstructuredGrid")?;
    writeln!(w, "<UnstructuredGrid>")?;
    writeln!(
        w,
        "<Piece NumberOfPoints=\"{}\" NumberOfCells=\"{}\">",
        mesh.num_nodes(),
        mesh.num_cells()
    )?;
    if !point_data.is_empty() {
        writeln!(w, "<PointData>")?;
        for (name, v) in point_data {
            write_array(w, Some(name), 1, &Data::F32(v), encoding)?;
        }
        writeln!(w, "</PointData>")?;
    }
    writeln!(w, "<CellData>")?;
    for (name, v) in cell_data {
        write_array(w, Some(name), 1, &Data::F32(v), encoding)?;
    }
    if let Some(f) = &mesh.fibres {
        let flat = f.iter().flatten().copied().collect();
        write_array(w, Some("fibres"), 3, &Data::F64(flat), encoding)?;
    }
    if let Some(sh) = &mesh.sheets {
        let flat: Vec<f64> = sh.iter().flatten().copied().collect();
        write_array(w, Some("sheets"), 3, &Data::F64(flat), encoding)?;
    }
    if let Some(c) = &mesh.cell_types {
        let v = c.iter().map(|&t| t as u8).collect();
        write_array(w, Some("cell_type"), 1, &Data::U8(v), encoding)?;
    }
    writeln!(w, "</CellData>")?;
    writeln!(w, "<Points>")?;
    let flat = mesh.nodes.iter().flatten().copied().collect();
    write_array(w, None, 3, &Data::F64(flat), encoding)?;
    writeln!(w, "</Points>")?;
    writeln!(w, "<Cells>")?;
    // 32-bit indices halve the file size; fall back to 64-bit only when they would overflow.
    let small = 4 * mesh.num_cells() <= i32::MAX as usize;
    let conn: Vec<u32> = mesh.tets.iter().flatten().copied().collect();
    let offsets = (1..=mesh.num_cells()).map(|i| 4 * i);
    let (conn, offsets) = if small {
        (
            Data::I32(conn.into_iter().map(|v| v as i32).collect()),
            Data::I32(offsets.map(|o| o as i32).collect()),
        )
    } else {
        (
            Data::I64(conn.into_iter().map(i64::from).collect()),
            Data::I64(offsets.map(|o| o as i64).collect()),
        )
    };
    write_array(w, Some("connectivity"), 1, &conn, encoding)?;
    write_array(w, Some("offsets"), 1, &offsets, encoding)?;
    let types = Data::U8(vec![VTK_TETRA; mesh.num_cells()]);
    write_array(w, Some("types"), 1, &types, encoding)?;
    writeln!(w, "</Cells>")?;
    writeln!(w, "</Piece>\n</UnstructuredGrid>")?;
    app_support::vtk::write_footer(w)
}
