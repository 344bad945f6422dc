//! VTK XML UnstructuredGrid (`.vtu`) reader and writer.
//!
//! The reader accepts inline `ascii` and `binary` (base64, with the `UInt32`/`UInt64` size
//! header, either encoded together with the data or as a separate base64 block as VTK itself
//! writes it) DataArrays, in either byte order. Compressed (`compressor=…`) and `appended` data
//! are rejected with [`MeshError::Unsupported`]: they are not needed for the meshes this app
//! exchanges, and a clear error beats a half-read mesh. Cells must all be `VTK_TETRA` (10).
//! Cell data named `fibres`/`fibers`/`fiber`/`fibre` (3 components), `sheets`/`sheet` (3
//! components) and `cell_type` become the mesh's fibres, sheets and cell types; other arrays
//! are ignored.
//!
//! The writer produces base64 binary by default (about a third the size of ASCII and exact for
//! f64 coordinates) with any number of per-cell and per-point `f32` arrays, for ParaView.
//!
//! Rooms: `parse` (the XML sections and the DataArray decoding), this module (the mesh built
//! from what was parsed), `write`.

mod parse;
mod write;

use super::{finish_read, normalise_fibre, CellType, MeshError, Pos, ReadOptions, TetMesh};
use parse::{Ctx, RawArray, Section};
use quick_xml::events::Event;
use quick_xml::Reader;
use std::path::Path;

pub use write::{write_vtu, write_vtu_to, write_vtu_with};

/// `VTK_TETRA` in VTK's cell-type enumeration.
pub const VTK_TETRA: u8 = 10;

/// How [`write_vtu_with`] encodes DataArrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VtuEncoding {
    /// Human-readable numbers; large but easy to inspect and diff.
    Ascii,
    /// Inline base64 of little-endian values with a `UInt64` byte-count header.
    #[default]
    Base64,
}

fn vtk_cell_name(ty: i64) -> &'static str {
    match ty {
        1 => "VTK_VERTEX",
        3 => "VTK_LINE",
        5 => "VTK_TRIANGLE",
        7 => "VTK_POLYGON",
        9 => "VTK_QUAD",
        10 => "VTK_TETRA",
        11 => "VTK_VOXEL",
        12 => "VTK_HEXAHEDRON",
        13 => "VTK_WEDGE",
        14 => "VTK_PYRAMID",
        22 => "VTK_QUADRATIC_TRIANGLE",
        24 => "VTK_QUADRATIC_TETRA",
        25 => "VTK_QUADRATIC_HEXAHEDRON",
        42 => "VTK_POLYHEDRON",
        _ => "unknown VTK cell type",
    }
}

/// Read a `.vtu` file.
pub fn read_vtu(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<TetMesh, MeshError> {
    let (data, file) = crate::mesh::read_input(path.as_ref())?;
    read_vtu_bytes(&data, &file, opts)
}

/// Read `.vtu` data already in memory; `name` is used in error messages.
pub fn read_vtu_bytes(data: &[u8], name: &str, opts: &ReadOptions) -> Result<TetMesh, MeshError> {
    let mut ctx = Ctx {
        file: name,
        little_endian: true,
        header_u64: false,
    };
    if !(opts.scale.is_finite() && opts.scale > 0.0) {
        return Err(ctx.unsupported(format!("scale must be finite and > 0, got {}", opts.scale)));
    }
    let text = std::str::from_utf8(data).map_err(|e| {
        ctx.unsupported(format!(
            "not UTF-8 text at byte {} (raw appended binary data is not supported)",
            e.valid_up_to()
        ))
    })?;
    let mut reader = Reader::from_str(text);
    let xml_err = |pos: u64, message: String| MeshError::Xml {
        file: name.to_string(),
        pos: Pos::Byte(pos as usize),
        message,
    };
    let mut seen_vtkfile = false;
    let mut piece: Option<(usize, usize)> = None;
    let mut section = Section::Other;
    let mut arrays: Vec<RawArray> = Vec::new();
    let mut current: Option<RawArray> = None;
    // Elements opened and not yet closed: a file cut short ends with some still open.
    let mut open: Vec<String> = Vec::new();

    loop {
        let pos = reader.buffer_position();
        let ev = reader
            .read_event()
            .map_err(|e| xml_err(reader.error_position(), e.to_string()))?;
        match ev {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(ev, Event::Empty(_));
                let tag = e.name().as_ref().to_string();
                if !empty {
                    open.push(tag.clone());
                }
                match tag.as_str() {
                    "VTKFile" => {
                        seen_vtkfile = true;
                        ctx.read_header(e, pos as usize)?;
                    }
                    "Piece" => {
                        if piece.is_some() {
                            return Err(ctx
                                .unsupported("more than one Piece (merge pieces before reading)"));
                        }
                        piece = Some(ctx.piece_counts(e, pos as usize)?);
                    }
                    "Points" => section = Section::Points,
                    "Cells" => section = Section::Cells,
                    "CellData" => section = Section::CellData,
                    "PointData" => section = Section::PointData,
                    "AppendedData" => {
                        return Err(ctx.unsupported("AppendedData section"));
                    }
                    "DataArray" => {
                        let a = ctx.data_array(e, section, pos as usize)?;
                        if empty {
                            arrays.push(a);
                        } else {
                            current = Some(a);
                        }
                    }
                    _ => {}
                }
                if empty && matches!(tag.as_str(), "Points" | "Cells" | "CellData" | "PointData") {
                    section = Section::Other;
                }
            }
            Event::Text(t) => {
                if let Some(a) = current.as_mut() {
                    a.text.push_str(t.as_ref());
                }
            }
            Event::CData(t) => {
                if let Some(a) = current.as_mut() {
                    a.text.push_str(t.as_ref());
                }
            }
            Event::GeneralRef(_) if current.is_some() => {
                return Err(xml_err(pos, "entity reference inside a DataArray".into()));
            }
            Event::End(e) => {
                open.pop();
                match e.name().as_ref() {
                    "DataArray" => arrays.extend(current.take()),
                    "Points" | "Cells" | "CellData" | "PointData" => section = Section::Other,
                    _ => {}
                }
            }
            Event::Eof => match open.last() {
                Some(last) => {
                    return Err(ctx.missing(&format!(
                        "closing tag </{last}> (the file ends inside {}: truncated?)",
                        open.join(" > ")
                    )))
                }
                None => break,
            },
            _ => {}
        }
    }
    if !seen_vtkfile {
        return Err(ctx.missing("VTKFile"));
    }
    let (num_points, num_cells) = piece.ok_or_else(|| ctx.missing("Piece"))?;
    build(&ctx, &arrays, num_points, num_cells, opts)
}

fn build(
    ctx: &Ctx,
    arrays: &[RawArray],
    num_points: usize,
    num_cells: usize,
    opts: &ReadOptions,
) -> Result<TetMesh, MeshError> {
    let file = ctx.file;
    let pa = arrays
        .iter()
        .find(|a| a.section == Section::Points)
        .ok_or_else(|| ctx.missing("Points DataArray"))?;
    if pa.components != 3 {
        return Err(ctx.syntax(pa.pos, "Points", "NumberOfComponents must be 3"));
    }
    let pts = ctx.floats(pa)?;
    ctx.length(pa, num_points.saturating_mul(3), pts.len())?;
    let nodes: Vec<[f64; 3]> = pts
        .chunks_exact(3)
        .map(|c| [c[0] * opts.scale, c[1] * opts.scale, c[2] * opts.scale])
        .collect();
    if num_points >= u32::MAX as usize {
        return Err(ctx.unsupported("more than u32::MAX points"));
    }
    let tets = read_cells(ctx, arrays, num_points, num_cells)?;
    let (fibres, sheets, cell_types) = read_cell_data(ctx, arrays, num_cells)?;
    let mesh = TetMesh {
        nodes,
        tets,
        fibres,
        sheets: None,
        cell_types,
        surfaces: Vec::new(),
    };
    let mesh = super::with_sheets(mesh, sheets, file)?;
    finish_read(mesh, file, opts)
}

/// The tetrahedra of the `Cells` arrays (connectivity, offsets, types: tetrahedra only).
fn read_cells(
    ctx: &Ctx,
    arrays: &[RawArray],
    num_points: usize,
    num_cells: usize,
) -> Result<Vec<[u32; 4]>, MeshError> {
    let file = ctx.file;
    let get = |n: &str| {
        arrays
            .iter()
            .find(|a| a.section == Section::Cells && a.name == n)
            .ok_or_else(|| ctx.missing(&format!("Cells DataArray {n:?}")))
    };
    let (ca, oa, ta) = (get("connectivity")?, get("offsets")?, get("types")?);
    let conn = ctx.ints(ca)?;
    let offsets = ctx.ints(oa)?;
    let types = ctx.ints(ta)?;
    ctx.length(oa, num_cells, offsets.len())?;
    ctx.length(ta, num_cells, types.len())?;
    if let Some((cell, &ty)) = types
        .iter()
        .enumerate()
        .find(|&(_, &t)| t != VTK_TETRA as i64)
    {
        return Err(MeshError::UnsupportedElement {
            file: file.to_string(),
            pos: Pos::Byte(ta.pos),
            element: cell as u64,
            element_type: ty,
            type_name: vtk_cell_name(ty),
        });
    }
    let mut tets = Vec::with_capacity(num_cells);
    let mut prev = 0i64;
    for (cell, &end) in offsets.iter().enumerate() {
        if end != prev + 4 {
            return Err(ctx.syntax(
                oa.pos,
                "offsets",
                format!(
                    "cell {cell} ends at {end}, expected {} (4 nodes per tetrahedron)",
                    prev + 4
                ),
            ));
        }
        let s = prev as usize;
        let idx = conn.get(s..s + 4).ok_or_else(|| MeshError::Truncated {
            file: file.to_string(),
            pos: Pos::Byte(ca.pos),
            field: format!("connectivity of cell {cell}"),
        })?;
        let mut t = [0u32; 4];
        for (k, &v) in idx.iter().enumerate() {
            if v < 0 || v as usize >= num_points {
                return Err(MeshError::UnknownNode {
                    file: file.to_string(),
                    pos: Pos::Byte(ca.pos),
                    element: cell as u64,
                    node: v,
                });
            }
            t[k] = v as u32;
        }
        tets.push(t);
        prev = end;
    }
    ctx.length(ca, num_cells.saturating_mul(4), conn.len())?;
    Ok(tets)
}

/// Per-cell vectors, as the cell data of a mesh.
type CellVectors = Option<Vec<[f64; 3]>>;

/// The optional cell data: fibres (normalised), sheets and cell types.
fn read_cell_data(
    ctx: &Ctx,
    arrays: &[RawArray],
    num_cells: usize,
) -> Result<(CellVectors, CellVectors, Option<Vec<CellType>>), MeshError> {
    let file = ctx.file;
    let fibre_array = arrays.iter().find(|a| {
        a.section == Section::CellData
            && a.components == 3
            && matches!(
                a.name.to_ascii_lowercase().as_str(),
                "fibres" | "fibers" | "fiber" | "fibre"
            )
    });
    let fibres = match fibre_array {
        Some(a) => {
            let v = ctx.floats(a)?;
            ctx.length(a, num_cells.saturating_mul(3), v.len())?;
            Some(
                v.chunks_exact(3)
                    .enumerate()
                    .map(|(cell, c)| normalise_fibre([c[0], c[1], c[2]], file, cell))
                    .collect::<Result<Vec<_>, _>>()?,
            )
        }
        None => None,
    };
    let sheet_array = arrays.iter().find(|a| {
        a.section == Section::CellData
            && a.components == 3
            && matches!(a.name.to_ascii_lowercase().as_str(), "sheets" | "sheet")
    });
    let sheets = match sheet_array {
        Some(a) => {
            let v = ctx.floats(a)?;
            ctx.length(a, num_cells.saturating_mul(3), v.len())?;
            Some(
                v.chunks_exact(3)
                    .map(|c| [c[0], c[1], c[2]])
                    .collect::<Vec<_>>(),
            )
        }
        None => None,
    };
    let ct_array = arrays.iter().find(|a| {
        a.section == Section::CellData
            && a.components == 1
            && matches!(
                a.name.to_ascii_lowercase().as_str(),
                "cell_type" | "celltype"
            )
    });
    let cell_types = match ct_array {
        Some(a) => {
            let v = ctx.floats(a)?;
            ctx.length(a, num_cells, v.len())?;
            Some(
                v.iter()
                    .enumerate()
                    .map(|(cell, &x)| {
                        CellType::from_value(x).ok_or_else(|| MeshError::InvalidCellType {
                            file: file.to_string(),
                            cell,
                            value: x,
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            )
        }
        None => None,
    };
    Ok((fibres, sheets, cell_types))
}
