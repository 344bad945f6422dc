//! The `.vtu` file's XML sections and DataArrays, decoded from ascii or base64.

use super::super::{MeshError, Pos};
use base64::Engine as _;
use quick_xml::events::BytesStart;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Section {
    Points,
    Cells,
    CellData,
    PointData,
    Other,
}

/// A DataArray as found in the file, decoded lazily (only the arrays the mesh needs).
pub(super) struct RawArray {
    pub(super) section: Section,
    pub(super) name: String,
    pub(super) ty: String,
    pub(super) components: usize,
    pub(super) format: String,
    pub(super) text: String,
    /// Byte offset of the `<DataArray` tag, for error messages.
    pub(super) pos: usize,
}

/// Decoded array values, widened to f64 or i64.
pub(super) enum Values {
    Float(Vec<f64>),
    Int(Vec<i64>),
}

pub(super) struct Ctx<'a> {
    pub(super) file: &'a str,
    pub(super) little_endian: bool,
    pub(super) header_u64: bool,
}

impl Ctx<'_> {
    pub(super) fn missing(&self, what: &str) -> MeshError {
        MeshError::MissingSection {
            file: self.file.to_string(),
            section: what.to_string(),
        }
    }

    /// An error unless the array `a` has `expected` values (`found`).
    pub(super) fn length(
        &self,
        a: &RawArray,
        expected: usize,
        found: usize,
    ) -> Result<(), MeshError> {
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
    pub(super) fn floats(&self, a: &RawArray) -> Result<Vec<f64>, MeshError> {
        Ok(match self.decode(a)? {
            Values::Float(f) => f,
            Values::Int(i) => i.into_iter().map(|x| x as f64).collect(),
        })
    }

    /// The values of `a`, which must be of an integer type.
    pub(super) fn ints(&self, a: &RawArray) -> Result<Vec<i64>, MeshError> {
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
    pub(super) fn read_header(&mut self, e: &BytesStart, pos: usize) -> Result<(), MeshError> {
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
    pub(super) fn piece_counts(
        &self,
        e: &BytesStart,
        pos: usize,
    ) -> Result<(usize, usize), MeshError> {
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
    pub(super) fn data_array(
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

    pub(super) fn syntax(&self, pos: usize, field: &str, message: impl Into<String>) -> MeshError {
        MeshError::Syntax {
            file: self.file.to_string(),
            pos: Pos::Byte(pos),
            field: field.to_string(),
            message: message.into(),
        }
    }

    pub(super) fn unsupported(&self, message: impl Into<String>) -> MeshError {
        MeshError::Unsupported {
            file: self.file.to_string(),
            message: message.into(),
        }
    }

    pub(super) fn decode(&self, a: &RawArray) -> Result<Values, MeshError> {
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

    pub(super) fn convert(&self, ty: &str, data: &[u8], width: usize) -> Values {
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
pub(super) fn decode_base64(text: &str) -> Result<Vec<u8>, String> {
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

pub(super) fn attr(e: &BytesStart, key: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == key)
        .map(|a| {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map(|v| v.into_owned())
                .unwrap_or_else(|_| a.value.to_string())
        })
}
