//! VTK XML UnstructuredGrid (`.vtu`) reader and writer.
//!
//! (About 900 lines. One concept, the `.vtu` format: reading and writing share the element and
//! DataArray encodings and their checks.)
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

use super::{finish_read, normalise_fibre, CellType, MeshError, Pos, ReadOptions, TetMesh};
use base64::Engine as _;
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use std::io::Write;
use std::path::Path;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Points,
    Cells,
    CellData,
    PointData,
    Other,
}

/// A DataArray as found in the file, decoded lazily (only the arrays the mesh needs).
struct RawArray {
    section: Section,
    name: String,
    ty: String,
    components: usize,
    format: String,
    text: String,
    /// Byte offset of the `<DataArray` tag, for error messages.
    pos: usize,
}

/// Decoded array values, widened to f64 or i64.
enum Values {
    Float(Vec<f64>),
    Int(Vec<i64>),
}

struct Ctx<'a> {
    file: &'a str,
    little_endian: bool,
    header_u64: bool,
}

impl Ctx<'_> {
    fn missing(&self, what: &str) -> MeshError {
        MeshError::MissingSection {
            file: self.file.to_string(),
            section: what.to_string(),
        }
    }

    /// An error unless the array `a` has `expected` values (`found`).
    fn length(&self, a: &RawArray, expected: usize, found: usize) -> Result<(), MeshError> {
        if expected == found {
            Ok(())
        } else {
            Err(self.syntax(
                a.pos,
                &format!("DataArray {:?}", a.name),
                format!("{found} values, expected {expected}"),
            ))
        }
    }

    /// The values of `a` as floats (integers converted).
    fn floats(&self, a: &RawArray) -> Result<Vec<f64>, MeshError> {
        Ok(match self.decode(a)? {
            Values::Float(f) => f,
            Values::Int(i) => i.into_iter().map(|x| x as f64).collect(),
        })
    }

    /// The values of `a`, which must be of an integer type.
    fn ints(&self, a: &RawArray) -> Result<Vec<i64>, MeshError> {
        match self.decode(a)? {
            Values::Int(i) => Ok(i),
            Values::Float(_) => Err(self.syntax(
                a.pos,
                &format!("DataArray {:?}", a.name),
                "integer type expected",
            )),
        }
    }

    /// Takes the byte order and header type of the `VTKFile` element; refuses another file
    /// type and compressed data.
    fn read_header(&mut self, e: &BytesStart, pos: usize) -> Result<(), MeshError> {
        let unsupported = |message: String| MeshError::Unsupported {
            file: self.file.to_string(),
            message,
        };
        let ty = attr(e, "type").unwrap_or_default();
        if ty != "UnstructuredGrid" {
            return Err(unsupported(format!(
                "VTK file type {ty:?} (expected UnstructuredGrid)"
            )));
        }
        if let Some(c) = attr(e, "compressor").filter(|c| !c.is_empty()) {
            return Err(unsupported(format!(
                "compressed data ({c}); write the file uncompressed"
            )));
        }
        self.little_endian = match attr(e, "byte_order").as_deref() {
            None | Some("LittleEndian") => true,
            Some("BigEndian") => false,
            Some(o) => return Err(self.syntax(pos, "byte_order", o)),
        };
        self.header_u64 = match attr(e, "header_type").as_deref() {
            None | Some("UInt32") => false,
            Some("UInt64") => true,
            Some(h) => return Err(self.syntax(pos, "header_type", h)),
        };
        Ok(())
    }

    /// The points and cells of a `Piece` element.
    fn piece_counts(&self, e: &BytesStart, pos: usize) -> Result<(usize, usize), MeshError> {
        let count = |key: &str| -> Result<usize, MeshError> {
            let v = attr(e, key).ok_or_else(|| MeshError::MissingSection {
                file: self.file.to_string(),
                section: format!("Piece attribute {key}"),
            })?;
            v.trim()
                .parse()
                .map_err(|_| self.syntax(pos, key, format!("cannot parse {v:?}")))
        };
        Ok((count("NumberOfPoints")?, count("NumberOfCells")?))
    }

    /// A `DataArray` element of `section`, its text still to come.
    fn data_array(
        &self,
        e: &BytesStart,
        section: Section,
        pos: usize,
    ) -> Result<RawArray, MeshError> {
        let comps = attr(e, "NumberOfComponents").unwrap_or_else(|| "1".into());
        let components = comps
            .trim()
            .parse()
            .map_err(|_| self.syntax(pos, "NumberOfComponents", comps.clone()))?;
        Ok(RawArray {
            section,
            name: attr(e, "Name").unwrap_or_default(),
            ty: attr(e, "type").unwrap_or_default(),
            components,
            format: attr(e, "format").unwrap_or_else(|| "ascii".into()),
            text: String::new(),
            pos,
        })
    }

    fn syntax(&self, pos: usize, field: &str, message: impl Into<String>) -> MeshError {
        MeshError::Syntax {
            file: self.file.to_string(),
            pos: Pos::Byte(pos),
            field: field.to_string(),
            message: message.into(),
        }
    }

    fn unsupported(&self, message: impl Into<String>) -> MeshError {
        MeshError::Unsupported {
            file: self.file.to_string(),
            message: message.into(),
        }
    }

    fn decode(&self, a: &RawArray) -> Result<Values, MeshError> {
        let field = if a.name.is_empty() {
            format!("{:?} DataArray", a.section)
        } else {
            format!("DataArray {:?}", a.name)
        };
        let width = match a.ty.as_str() {
            "Int8" | "UInt8" => 1,
            "Int16" | "UInt16" => 2,
            "Int32" | "UInt32" | "Float32" => 4,
            "Int64" | "UInt64" | "Float64" => 8,
            t => return Err(self.syntax(a.pos, &field, format!("unknown type {t:?}"))),
        };
        let is_float = a.ty.starts_with("Float");
        match a.format.as_str() {
            "ascii" => {
                let words = a.text.split_ascii_whitespace();
                if is_float {
                    words
                        .map(|w| w.parse::<f64>())
                        .collect::<Result<Vec<_>, _>>()
                        .map(Values::Float)
                        .map_err(|e| self.syntax(a.pos, &field, e.to_string()))
                } else {
                    words
                        .map(|w| w.parse::<i64>())
                        .collect::<Result<Vec<_>, _>>()
                        .map(Values::Int)
                        .map_err(|e| self.syntax(a.pos, &field, e.to_string()))
                }
            }
            "binary" => {
                let bytes = decode_base64(&a.text).map_err(|message| MeshError::Base64 {
                    file: self.file.to_string(),
                    pos: Pos::Byte(a.pos),
                    field: field.clone(),
                    message,
                })?;
                let hs = if self.header_u64 { 8 } else { 4 };
                if bytes.len() < hs {
                    return Err(MeshError::Truncated {
                        file: self.file.to_string(),
                        pos: Pos::Byte(a.pos),
                        field: format!("{field} size header"),
                    });
                }
                let mut h = [0u8; 8];
                let (head, data) = bytes.split_at(hs);
                if self.little_endian {
                    h[..hs].copy_from_slice(head);
                } else {
                    h[8 - hs..].copy_from_slice(head);
                }
                let n = if self.little_endian {
                    u64::from_le_bytes(h)
                } else {
                    u64::from_be_bytes(h)
                };
                let n = usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= data.len())
                    .ok_or_else(|| MeshError::Truncated {
                        file: self.file.to_string(),
                        pos: Pos::Byte(a.pos),
                        field: format!("{field} ({n} bytes declared, {} present)", data.len()),
                    })?;
                if n % width != 0 {
                    return Err(self.syntax(
                        a.pos,
                        &field,
                        format!("{n} bytes is not a whole number of {} values", a.ty),
                    ));
                }
                Ok(self.convert(&a.ty, &data[..n], width))
            }
            "appended" => Err(self.unsupported(format!(
                "{field}: appended data (write the file with inline ascii or binary DataArrays)"
            ))),
            f => Err(self.syntax(a.pos, &field, format!("unknown format {f:?}"))),
        }
    }

    fn convert(&self, ty: &str, data: &[u8], width: usize) -> Values {
        let le = self.little_endian;
        let word = |c: &[u8]| -> [u8; 8] {
            // Place the value's bytes so from_le/from_be of the matching width read them.
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            w
        };
        let chunks = data.chunks_exact(width);
        macro_rules! ints {
            ($t:ty, $n:expr) => {
                Values::Int(
                    chunks
                        .map(|c| {
                            let w = word(c);
                            let mut b = [0u8; $n];
                            b.copy_from_slice(&w[..$n]);
                            (if le {
                                <$t>::from_le_bytes(b)
                            } else {
                                <$t>::from_be_bytes(b)
                            }) as i64
                        })
                        .collect(),
                )
            };
        }
        match ty {
            "Int8" => ints!(i8, 1),
            "UInt8" => ints!(u8, 1),
            "Int16" => ints!(i16, 2),
            "UInt16" => ints!(u16, 2),
            "Int32" => ints!(i32, 4),
            "UInt32" => ints!(u32, 4),
            // u64 values above i64::MAX wrap negative and are rejected as indices later.
            "Int64" => ints!(i64, 8),
            "UInt64" => ints!(u64, 8),
            "Float32" => Values::Float(
                chunks
                    .map(|c| {
                        let b = [c[0], c[1], c[2], c[3]];
                        (if le {
                            f32::from_le_bytes(b)
                        } else {
                            f32::from_be_bytes(b)
                        }) as f64
                    })
                    .collect(),
            ),
            _ => Values::Float(
                chunks
                    .map(|c| {
                        let b = word(c);
                        if le {
                            f64::from_le_bytes(b)
                        } else {
                            f64::from_be_bytes(b)
                        }
                    })
                    .collect(),
            ),
        }
    }
}

/// Decode VTK's inline base64: whitespace is ignored, and padding may end a block in the middle
/// (VTK encodes the size header and the data as separate base64 blocks).
fn decode_base64(text: &str) -> Result<Vec<u8>, String> {
    let clean: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(clean.len() / 4 * 3);
    let mut start = 0;
    let engine = &base64::engine::general_purpose::STANDARD;
    while start < clean.len() {
        // A block ends after a run of '=' (or at the end of the text).
        let mut end = start;
        while end < clean.len() && clean[end] != b'=' {
            end += 1;
        }
        while end < clean.len() && clean[end] == b'=' {
            end += 1;
        }
        engine
            .decode_vec(&clean[start..end], &mut out)
            .map_err(|e| format!("{e} (in the block starting at character {start})"))?;
        start = end;
    }
    Ok(out)
}

fn attr(e: &BytesStart, key: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == key)
        .map(|a| {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map(|v| v.into_owned())
                .unwrap_or_else(|_| a.value.to_string())
        })
}

/// Read a `.vtu` file.
pub fn read_vtu(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<TetMesh, MeshError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let data = std::fs::read(path).map_err(|source| MeshError::Io {
        file: file.clone(),
        error: source,
    })?;
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

/// Write `mesh` as base64-binary VTU with the given per-cell `f32` arrays (e.g. activation
/// times). Fibres and cell types, when present, are written too, so [`read_vtu`] restores
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
