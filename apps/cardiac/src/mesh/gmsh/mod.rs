//! Gmsh MSH 4.1 reader (ASCII and little-endian binary); the ASCII writer is in `write.rs`.
//!
//! (About 800 lines. One concept, reading the MSH 4.1 format: the ASCII and binary readers share
//! every section parser and their checks.)
//!
//! Only what a tetrahedral monodomain mesh needs is interpreted: nodes, 4-node tetrahedra,
//! triangles on physical surfaces (→ [`SurfaceTag`]s named by `$PhysicalNames`), and optional
//! `$ElementData` fields for fibres (3 components, name containing "fib"), sheets (3
//! components, name containing "sheet") and cell types (`cell_type`). Other 3-D element types are rejected — silently dropping hexes or 10-node tets
//! would leave holes in the tissue — while points, lines and other surface elements are skipped.
//! Unknown sections are skipped.
//!
//! Every count read from the file is checked against the bytes that remain before anything is
//! allocated, so a corrupt header cannot trigger a huge allocation.

use super::{
    finish_read, normalise_fibre, CellOrigins, CellType, MeshError, Pos, ReadOptions, SurfaceTag,
    TetMesh,
};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

mod write;
pub use write::{write_msh, write_msh_to};

/// Gmsh element type: name, node count, dimension (from the Gmsh reference manual).
fn element_info(ty: i64) -> Option<(&'static str, usize, u8)> {
    Some(match ty {
        1 => ("2-node line", 2, 1),
        2 => ("3-node triangle", 3, 2),
        3 => ("4-node quadrangle", 4, 2),
        4 => ("4-node tetrahedron", 4, 3),
        5 => ("8-node hexahedron", 8, 3),
        6 => ("6-node prism", 6, 3),
        7 => ("5-node pyramid", 5, 3),
        8 => ("3-node line", 3, 1),
        9 => ("6-node triangle", 6, 2),
        10 => ("9-node quadrangle", 9, 2),
        11 => ("10-node tetrahedron", 10, 3),
        12 => ("27-node hexahedron", 27, 3),
        13 => ("18-node prism", 18, 3),
        14 => ("14-node pyramid", 14, 3),
        15 => ("1-node point", 1, 0),
        16 => ("8-node quadrangle", 8, 2),
        17 => ("20-node hexahedron", 20, 3),
        18 => ("15-node prism", 15, 3),
        19 => ("13-node pyramid", 13, 3),
        20 => ("9-node triangle", 9, 2),
        21 => ("10-node triangle", 10, 2),
        22 => ("12-node triangle", 12, 2),
        23 => ("15-node triangle", 15, 2),
        24 => ("15-node incomplete triangle", 15, 2),
        25 => ("21-node triangle", 21, 2),
        26 => ("4-node line", 4, 1),
        27 => ("5-node line", 5, 1),
        28 => ("6-node line", 6, 1),
        29 => ("20-node tetrahedron", 20, 3),
        30 => ("35-node tetrahedron", 35, 3),
        31 => ("56-node tetrahedron", 56, 3),
        92 => ("64-node hexahedron", 64, 3),
        93 => ("125-node hexahedron", 125, 3),
        _ => return None,
    })
}

/// Byte cursor over a whole MSH file. In ASCII files every value is a whitespace-separated
/// token; in binary files the bulk data is raw little-endian while section markers, counts in
/// `$PhysicalNames` and `$ElementData` tags stay ASCII — so value readers dispatch on `binary`
/// and the section parsers are written once for both encodings.
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    line: usize,
    file: &'a str,
    binary: bool,
    /// `data-size` from `$MeshFormat`: the width of `size_t` fields in binary files.
    size_t: usize,
}

impl<'a> Cursor<'a> {
    fn here(&self) -> Pos {
        if self.binary {
            Pos::Byte(self.pos)
        } else {
            Pos::Line(self.line)
        }
    }

    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn truncated(&self, field: &str) -> MeshError {
        MeshError::Truncated {
            file: self.file.to_string(),
            pos: self.here(),
            field: field.to_string(),
        }
    }

    fn syntax(&self, field: &str, message: impl Into<String>) -> MeshError {
        MeshError::Syntax {
            file: self.file.to_string(),
            pos: self.here(),
            field: field.to_string(),
            message: message.into(),
        }
    }

    fn skip_ws(&mut self) {
        while let Some(&b) = self.data.get(self.pos) {
            if b == b'\n' {
                self.line += 1;
            } else if !b.is_ascii_whitespace() {
                break;
            }
            self.pos += 1;
        }
    }

    /// Next whitespace-separated ASCII token.
    fn token(&mut self, field: &str) -> Result<&'a str, MeshError> {
        self.skip_ws();
        let start = self.pos;
        while self
            .data
            .get(self.pos)
            .is_some_and(|b| !b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.truncated(field));
        }
        std::str::from_utf8(&self.data[start..self.pos])
            .map_err(|_| self.syntax(field, "not valid UTF-8 text"))
    }

    fn parse_token<T: std::str::FromStr>(&mut self, field: &str) -> Result<T, MeshError> {
        let t = self.token(field)?;
        t.parse()
            .map_err(|_| self.syntax(field, format!("cannot parse {t:?}")))
    }

    /// Rest of the current line (without the newline), for quoted names.
    fn rest_of_line(&mut self, field: &str) -> Result<&'a str, MeshError> {
        let start = self.pos;
        while self.data.get(self.pos).is_some_and(|&b| b != b'\n') {
            self.pos += 1;
        }
        std::str::from_utf8(&self.data[start..self.pos])
            .map(|s| s.trim_end_matches('\r'))
            .map_err(|_| self.syntax(field, "not valid UTF-8 text"))
    }

    /// After an ASCII header line in a binary file: consume through its newline so the binary
    /// payload starts at `pos`.
    fn end_line(&mut self, field: &str) -> Result<(), MeshError> {
        while let Some(&b) = self.data.get(self.pos) {
            self.pos += 1;
            if b == b'\n' {
                self.line += 1;
                return Ok(());
            }
        }
        Err(self.truncated(field))
    }

    fn raw<const N: usize>(&mut self, field: &str) -> Result<[u8; N], MeshError> {
        let bytes = self
            .data
            .get(self.pos..self.pos + N)
            .ok_or_else(|| self.truncated(field))?;
        self.pos += N;
        // The slice has exactly N bytes.
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    /// An `int` field (4 bytes in binary).
    fn int(&mut self, field: &str) -> Result<i64, MeshError> {
        if self.binary {
            Ok(i32::from_le_bytes(self.raw::<4>(field)?) as i64)
        } else {
            self.parse_token(field)
        }
    }

    /// A `size_t` field (`data-size` bytes in binary).
    fn size(&mut self, field: &str) -> Result<u64, MeshError> {
        if self.binary {
            Ok(match self.size_t {
                4 => u32::from_le_bytes(self.raw::<4>(field)?) as u64,
                _ => u64::from_le_bytes(self.raw::<8>(field)?),
            })
        } else {
            self.parse_token(field)
        }
    }

    fn double(&mut self, field: &str) -> Result<f64, MeshError> {
        if self.binary {
            Ok(f64::from_le_bytes(self.raw::<8>(field)?))
        } else {
            self.parse_token(field)
        }
    }

    /// A count that will size an allocation: reject counts that cannot fit in the rest of the
    /// file (each item takes at least `min_bytes` bytes: 2 for an ASCII token).
    fn count(&mut self, field: &str, min_bytes_binary: usize) -> Result<usize, MeshError> {
        let n = self.size(field)?;
        let per = if self.binary { min_bytes_binary } else { 2 };
        let fits = usize::try_from(n)
            .ok()
            .filter(|&n| n.saturating_mul(per.max(1)) <= self.remaining() + per);
        fits.ok_or_else(|| self.truncated(&format!("{field} ({n} declared)")))
    }

    /// Expect the `$End…` marker of the current section.
    fn expect_end(&mut self, marker: &str) -> Result<(), MeshError> {
        let t = self.token(marker)?;
        if t == marker {
            Ok(())
        } else {
            Err(self.syntax(marker, format!("expected {marker}, found {t:?}")))
        }
    }

    /// Skip an unknown section up to and including its end marker, without interpreting it
    /// (its payload may be binary).
    fn skip_section(&mut self, end: &str) -> Result<(), MeshError> {
        let needle = end.as_bytes();
        let hay = &self.data[self.pos..];
        match hay.windows(needle.len()).position(|w| w == needle) {
            Some(i) => {
                self.line += hay[..i].iter().filter(|&&b| b == b'\n').count();
                self.pos += i + needle.len();
                Ok(())
            }
            None => Err(self.truncated(end)),
        }
    }
}

/// Tag → index map for node tags, which Gmsh allows to be sparse.
enum NodeMap {
    Dense(Vec<u32>),
    Sparse(HashMap<u64, u32>),
}

impl NodeMap {
    fn get(&self, tag: u64) -> Option<u32> {
        match self {
            NodeMap::Dense(v) => usize::try_from(tag)
                .ok()
                .and_then(|t| v.get(t))
                .copied()
                .filter(|&i| i != u32::MAX),
            NodeMap::Sparse(m) => m.get(&tag).copied(),
        }
    }
}

/// An `$ElementData` field, kept raw until the elements are known.
struct ElementField {
    name: String,
    components: usize,
    /// Element tags; entry `i` owns `values[components * i ..][..components]`.
    entries: Vec<u64>,
    values: Vec<f64>,
}

#[derive(Default)]
struct Parsed {
    physical_names: HashMap<(i64, i64), String>,
    /// Physical tags of each surface entity.
    surface_physicals: HashMap<i64, Vec<i64>>,
    nodes: Vec<[f64; 3]>,
    node_map: Option<NodeMap>,
    tets: Vec<[u32; 4]>,
    /// Element tag and position of each tet, in cell order.
    tet_origins: Vec<(u64, Pos)>,
    /// Tag of each node, in index order.
    node_tags: Vec<u64>,
    /// Element tag → cell index.
    tet_tags: HashMap<u64, u32>,
    /// Triangles per surface entity tag, in file order.
    triangles: BTreeMap<i64, Vec<[u32; 3]>>,
    fields: Vec<ElementField>,
    seen_elements: bool,
}

/// Read a Gmsh MSH 4.1 file (ASCII or binary).
pub fn read_msh(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<TetMesh, MeshError> {
    read_msh_located(path, opts).map(|(mesh, _)| mesh)
}

/// [`read_msh`], with each cell's element tag and position.
pub fn read_msh_located(
    path: impl AsRef<Path>,
    opts: &ReadOptions,
) -> Result<(TetMesh, CellOrigins), MeshError> {
    let (data, file) = crate::mesh::read_input(path.as_ref())?;
    read_msh_bytes_located(&data, &file, opts)
}

/// Read MSH 4.1 data already in memory; `name` is used in error messages.
pub fn read_msh_bytes(data: &[u8], name: &str, opts: &ReadOptions) -> Result<TetMesh, MeshError> {
    read_msh_bytes_located(data, name, opts).map(|(mesh, _)| mesh)
}

/// [`read_msh_bytes`], with each cell's element tag and position. A cell that fails
/// validation is named by its element tag and line (byte offset in a binary file).
pub fn read_msh_bytes_located(
    data: &[u8],
    name: &str,
    opts: &ReadOptions,
) -> Result<(TetMesh, CellOrigins), MeshError> {
    if !(opts.scale.is_finite() && opts.scale > 0.0) {
        return Err(MeshError::Unsupported {
            file: name.to_string(),
            message: format!("scale must be finite and > 0, got {}", opts.scale),
        });
    }
    let mut c = Cursor {
        data,
        pos: 0,
        line: 1,
        file: name,
        binary: false,
        size_t: 8,
    };
    let mut p = Parsed::default();
    let mut seen_format = false;
    loop {
        c.skip_ws();
        if c.remaining() == 0 {
            break;
        }
        let section = c.token("section header")?;
        if !seen_format && section != "$MeshFormat" {
            return Err(MeshError::MissingSection {
                file: name.to_string(),
                section: "$MeshFormat".into(),
            });
        }
        match section {
            "$MeshFormat" => {
                read_format(&mut c)?;
                seen_format = true;
            }
            "$PhysicalNames" => read_physical_names(&mut c, &mut p)?,
            "$Entities" => read_entities(&mut c, &mut p)?,
            "$Nodes" => read_nodes(&mut c, &mut p, opts.scale)?,
            "$Elements" => read_elements(&mut c, &mut p)?,
            "$ElementData" => read_element_data(&mut c, &mut p)?,
            s if s.starts_with('$') && !s.starts_with("$End") => {
                let end = format!("$End{}", &s[1..]);
                c.skip_section(&end)?;
            }
            s => return Err(c.syntax("section header", format!("unexpected {s:?}"))),
        }
    }
    if !seen_format {
        return Err(MeshError::MissingSection {
            file: name.to_string(),
            section: "$MeshFormat".into(),
        });
    }
    for (section, present) in [
        ("$Nodes", p.node_map.is_some()),
        ("$Elements", p.seen_elements),
        (
            "tetrahedra (element type 4) in $Elements",
            !p.tets.is_empty(),
        ),
    ] {
        if !present {
            return Err(MeshError::MissingSection {
                file: name.to_string(),
                section: section.into(),
            });
        }
    }
    let origins = CellOrigins {
        cells: std::mem::take(&mut p.tet_origins),
        node_tags: std::mem::take(&mut p.node_tags),
    };
    let mesh = assemble(p, name)?;
    let mesh = finish_read(mesh, name, opts).map_err(|e| origins.locate(e))?;
    Ok((mesh, origins))
}

fn read_format(c: &mut Cursor) -> Result<(), MeshError> {
    let version = c.token("version")?;
    if version != "4.1" {
        return Err(MeshError::Unsupported {
            file: c.file.to_string(),
            message: format!("MSH version {version} (only 4.1 is supported)"),
        });
    }
    let file_type: i64 = c.parse_token("file-type")?;
    let data_size: i64 = c.parse_token("data-size")?;
    if !matches!(data_size, 4 | 8) {
        return Err(c.syntax("data-size", format!("{data_size} (expected 4 or 8)")));
    }
    c.size_t = data_size as usize;
    match file_type {
        0 => {}
        1 => {
            c.end_line("binary endianness marker")?;
            let one = c.raw::<4>("binary endianness marker")?;
            if i32::from_le_bytes(one) != 1 {
                return Err(MeshError::Unsupported {
                    file: c.file.to_string(),
                    message: "big-endian binary MSH (endianness marker is not 1)".into(),
                });
            }
            c.binary = true;
        }
        t => return Err(c.syntax("file-type", format!("{t} (expected 0 or 1)"))),
    }
    c.expect_end("$EndMeshFormat")
}

fn read_physical_names(c: &mut Cursor, p: &mut Parsed) -> Result<(), MeshError> {
    // Always ASCII, even in binary files.
    let n: usize = c.parse_token("number of physical names")?;
    for _ in 0..n {
        let dim: i64 = c.parse_token("physical dimension")?;
        let tag: i64 = c.parse_token("physical tag")?;
        c.skip_ws();
        let rest = c.rest_of_line("physical name")?.trim();
        let name = rest
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .ok_or_else(|| {
                c.syntax(
                    "physical name",
                    format!("expected a quoted name, got {rest:?}"),
                )
            })?;
        p.physical_names.insert((dim, tag), name.to_string());
    }
    c.expect_end("$EndPhysicalNames")
}

fn read_entities(c: &mut Cursor, p: &mut Parsed) -> Result<(), MeshError> {
    if c.binary {
        c.end_line("$Entities")?;
    }
    let counts = [
        c.count("number of points", 20)?,
        c.count("number of curves", 70)?,
        c.count("number of surfaces", 70)?,
        c.count("number of volumes", 70)?,
    ];
    for (dim, &n) in counts.iter().enumerate() {
        for _ in 0..n {
            let tag = c.int("entity tag")?;
            let coords = if dim == 0 { 3 } else { 6 };
            for _ in 0..coords {
                c.double("entity bounding box")?;
            }
            let nphys = c.count("number of physical tags", 4)?;
            let mut phys = Vec::with_capacity(nphys);
            for _ in 0..nphys {
                phys.push(c.int("physical tag")?);
            }
            if dim > 0 {
                let nb = c.count("number of bounding entities", 4)?;
                for _ in 0..nb {
                    c.int("bounding entity tag")?;
                }
            }
            if dim == 2 {
                p.surface_physicals.insert(tag, phys);
            }
        }
    }
    c.expect_end("$EndEntities")
}

fn read_nodes(c: &mut Cursor, p: &mut Parsed, scale: f64) -> Result<(), MeshError> {
    if c.binary {
        c.end_line("$Nodes")?;
    }
    let blocks = c.count("number of node blocks", 20)?;
    let total = c.count("number of nodes", 32)?;
    let _min_tag = c.size("minimum node tag")?;
    let max_tag = c.size("maximum node tag")?;
    if total >= u32::MAX as usize {
        return Err(c.syntax("number of nodes", "too many nodes for u32 indices"));
    }
    let mut tags = Vec::with_capacity(total);
    let mut nodes = Vec::with_capacity(total);
    for _ in 0..blocks {
        let dim = c.int("node block entity dimension")?;
        let _entity = c.int("node block entity tag")?;
        let parametric = c.int("node block parametric flag")?;
        let n = c.count("number of nodes in block", 32)?;
        let extra = if parametric != 0 {
            dim.clamp(0, 3) as usize
        } else {
            0
        };
        let first = tags.len();
        for _ in 0..n {
            tags.push(c.size("node tag")?);
        }
        for i in 0..n {
            let mut x = [0.0; 3];
            for v in &mut x {
                *v = c.double("node coordinate")? * scale;
            }
            for _ in 0..extra {
                c.double("node parametric coordinate")?;
            }
            if !x.iter().all(|v| v.is_finite()) {
                return Err(c.syntax(
                    "node coordinate",
                    format!("node {} has non-finite coordinates", tags[first + i]),
                ));
            }
            nodes.push(x);
        }
    }
    if nodes.len() != total {
        return Err(c.syntax(
            "number of nodes",
            format!("header declares {total}, blocks hold {}", nodes.len()),
        ));
    }
    if nodes.len() >= u32::MAX as usize {
        return Err(c.syntax("number of nodes", "too many nodes for u32 indices"));
    }
    // Dense lookup when tags are reasonably compact (the usual 1..=N), hash map otherwise.
    let dense_ok = usize::try_from(max_tag)
        .ok()
        .filter(|&m| m <= 4 * total + 1024 && tags.iter().all(|&t| t <= max_tag));
    let map = match dense_ok {
        Some(m) => {
            let mut v = vec![u32::MAX; m + 1];
            for (i, &t) in tags.iter().enumerate() {
                let slot = &mut v[t as usize];
                if *slot != u32::MAX {
                    return Err(c.syntax("node tag", format!("duplicate node tag {t}")));
                }
                *slot = i as u32;
            }
            NodeMap::Dense(v)
        }
        None => {
            let mut m = HashMap::with_capacity(tags.len());
            for (i, &t) in tags.iter().enumerate() {
                if m.insert(t, i as u32).is_some() {
                    return Err(c.syntax("node tag", format!("duplicate node tag {t}")));
                }
            }
            NodeMap::Sparse(m)
        }
    };
    p.nodes = nodes;
    p.node_map = Some(map);
    p.node_tags = tags;
    c.expect_end("$EndNodes")
}

fn read_elements(c: &mut Cursor, p: &mut Parsed) -> Result<(), MeshError> {
    if c.binary {
        c.end_line("$Elements")?;
    }
    let Some(map) = p.node_map.as_ref() else {
        return Err(MeshError::MissingSection {
            file: c.file.to_string(),
            section: "$Nodes (before $Elements)".into(),
        });
    };
    p.seen_elements = true;
    let blocks = c.count("number of element blocks", 20)?;
    let _total = c.count("number of elements", 16)?;
    let _min_tag = c.size("minimum element tag")?;
    let _max_tag = c.size("maximum element tag")?;
    for _ in 0..blocks {
        let _dim = c.int("element block entity dimension")?;
        let entity = c.int("element block entity tag")?;
        let ty = c.int("element type")?;
        let block_pos = c.here();
        let n = c.count("number of elements in block", 16)?;
        // Only 4-node tets among the volume types; unknown types cannot even be skipped in
        // binary files (their node count is unknown).
        let Some((_, nn, edim)) = element_info(ty).filter(|&(_, _, d)| d < 3 || ty == 4) else {
            // Name the first element of the block.
            let element = if n > 0 { c.size("element tag")? } else { 0 };
            return Err(MeshError::UnsupportedElement {
                file: c.file.to_string(),
                pos: block_pos,
                element,
                element_type: ty,
                type_name: element_info(ty).map_or("unknown element type", |i| i.0),
            });
        };
        // Node tags are resolved only for the elements we keep (tets, surface triangles).
        let keep = ty == 4 || (ty == 2 && edim == 2);
        let mut ids = [0u32; 4];
        for _ in 0..n {
            let here = c.here();
            let tag = c.size("element tag")?;
            // The tag's line (in ASCII; `here` may still be the line before).
            let at = if c.binary { here } else { c.here() };
            for k in 0..nn {
                let node_tag = c.size("element node tag")?;
                if let Some(slot) = ids.get_mut(k).filter(|_| keep) {
                    *slot = map.get(node_tag).ok_or_else(|| MeshError::UnknownNode {
                        file: c.file.to_string(),
                        pos: here,
                        element: tag,
                        node: i64::try_from(node_tag).unwrap_or(i64::MAX),
                    })?;
                }
            }
            match ty {
                4 => {
                    if p.tets.len() >= u32::MAX as usize - 1 {
                        return Err(c.syntax("elements", "too many tetrahedra for u32 indices"));
                    }
                    if p.tet_tags.insert(tag, p.tets.len() as u32).is_some() {
                        return Err(c.syntax("element tag", format!("duplicate element tag {tag}")));
                    }
                    p.tets.push(ids);
                    p.tet_origins.push((tag, at));
                }
                2 => p
                    .triangles
                    .entry(entity)
                    .or_default()
                    .push([ids[0], ids[1], ids[2]]),
                _ => {}
            }
        }
    }
    c.expect_end("$EndElements")
}

fn read_element_data(c: &mut Cursor, p: &mut Parsed) -> Result<(), MeshError> {
    // The tags are ASCII in both encodings.
    let nstr: usize = c.parse_token("number of string tags")?;
    let mut strings = Vec::new();
    for _ in 0..nstr.min(64) {
        c.skip_ws();
        let s = c.rest_of_line("string tag")?.trim();
        strings.push(s.trim_matches('"').to_string());
    }
    if nstr > 64 {
        return Err(c.syntax("number of string tags", format!("{nstr} is implausible")));
    }
    let nreal: usize = c.parse_token("number of real tags")?;
    for _ in 0..nreal.min(64) {
        c.parse_token::<f64>("real tag")?;
    }
    let nint: usize = c.parse_token("number of integer tags")?;
    if nreal > 64 || nint > 64 {
        return Err(c.syntax("number of tags", "implausible tag count"));
    }
    let mut ints = Vec::new();
    for _ in 0..nint {
        ints.push(c.parse_token::<i64>("integer tag")?);
    }
    let components = ints.get(1).copied().unwrap_or(1);
    let entities = ints.get(2).copied().unwrap_or(0);
    if !(1..=9).contains(&components) {
        return Err(c.syntax("number of components", format!("{components}")));
    }
    let components = components as usize;
    if c.binary {
        c.end_line("$ElementData")?;
    }
    let per = 4 + 8 * components;
    let entities = usize::try_from(entities)
        .ok()
        .filter(|&e| e.saturating_mul(if c.binary { per } else { 2 }) <= c.remaining())
        .ok_or_else(|| c.truncated(&format!("element data ({entities} entries declared)")))?;
    let mut field = ElementField {
        name: strings.first().cloned().unwrap_or_default(),
        components,
        entries: Vec::with_capacity(entities),
        values: Vec::with_capacity(entities * components),
    };
    for _ in 0..entities {
        // `elementTag(int)` in the 4.1 specification, also in binary.
        let tag = c.int("element data tag")?;
        let tag = u64::try_from(tag)
            .map_err(|_| c.syntax("element data tag", format!("negative tag {tag}")))?;
        field.entries.push(tag);
        for _ in 0..components {
            field.values.push(c.double("element data value")?);
        }
    }
    p.fields.push(field);
    c.expect_end("$EndElementData")
}

fn is_fibre_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("fibre") || n.contains("fiber")
}

fn is_cell_type_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace(['-', ' '], "_");
    n == "cell_type" || n == "cell_types" || n == "celltype"
}

fn assemble(p: Parsed, file: &str) -> Result<TetMesh, MeshError> {
    let ncells = p.tets.len();
    let mut mesh = TetMesh {
        nodes: p.nodes,
        tets: p.tets,
        fibres: None,
        sheets: None,
        cell_types: None,
        surfaces: Vec::new(),
    };

    // Surfaces: group triangles by physical tag (a triangle entity may belong to several).
    let mut by_physical: BTreeMap<i64, Vec<[u32; 3]>> = BTreeMap::new();
    for (entity, tris) in &p.triangles {
        if let Some(phys) = p.surface_physicals.get(entity) {
            for &ph in phys {
                by_physical
                    .entry(ph.abs())
                    .or_default()
                    .extend_from_slice(tris);
            }
        }
    }
    for (ph, triangles) in by_physical {
        let name = p
            .physical_names
            .get(&(2, ph))
            .cloned()
            .unwrap_or_else(|| format!("surface_{ph}"));
        mesh.surfaces.push(SurfaceTag { name, triangles });
    }

    // Element data: the first fibre-like 3-component field and the first cell_type field.
    let fibre_field = p
        .fields
        .iter()
        .find(|f| f.components == 3 && is_fibre_name(&f.name));
    if let Some(f) = fibre_field {
        let mut fibres = vec![[f64::NAN; 3]; ncells];
        let mut filled = 0;
        for (i, &tag) in f.entries.iter().enumerate() {
            if let Some(&cell) = p.tet_tags.get(&tag) {
                let v = &f.values[3 * i..3 * i + 3];
                let slot = &mut fibres[cell as usize];
                if slot[0].is_nan() {
                    filled += 1;
                }
                *slot = normalise_fibre([v[0], v[1], v[2]], file, cell as usize)?;
            }
        }
        if filled != ncells {
            return Err(MeshError::FieldLength {
                field: format!("fibres ($ElementData {:?})", f.name),
                expected: ncells,
                found: filled,
            });
        }
        mesh.fibres = Some(fibres);
    }
    let sheet_field = p
        .fields
        .iter()
        .find(|f| f.components == 3 && f.name.to_ascii_lowercase().contains("sheet"));
    if let Some(f) = sheet_field {
        let mut sheets = vec![[f64::NAN; 3]; ncells];
        let mut filled = 0;
        for (i, &tag) in f.entries.iter().enumerate() {
            if let Some(&cell) = p.tet_tags.get(&tag) {
                let slot = &mut sheets[cell as usize];
                if slot[0].is_nan() {
                    filled += 1;
                }
                slot.copy_from_slice(&f.values[3 * i..3 * i + 3]);
            }
        }
        if filled != ncells {
            return Err(MeshError::FieldLength {
                field: format!("sheets ($ElementData {:?})", f.name),
                expected: ncells,
                found: filled,
            });
        }
        mesh = super::with_sheets(mesh, Some(sheets), file)?;
    }
    let ct_field = p
        .fields
        .iter()
        .find(|f| f.components == 1 && is_cell_type_name(&f.name));
    if let Some(f) = ct_field {
        let mut types: Vec<Option<CellType>> = vec![None; ncells];
        for (i, &tag) in f.entries.iter().enumerate() {
            if let Some(&cell) = p.tet_tags.get(&tag) {
                let v = f.values[i];
                let ct = CellType::from_value(v).ok_or_else(|| MeshError::InvalidCellType {
                    file: file.to_string(),
                    cell: cell as usize,
                    value: v,
                })?;
                types[cell as usize] = Some(ct);
            }
        }
        let found = types.iter().filter(|t| t.is_some()).count();
        if found != ncells {
            return Err(MeshError::FieldLength {
                field: format!("cell_type ($ElementData {:?})", f.name),
                expected: ncells,
                found,
            });
        }
        mesh.cell_types = Some(types.into_iter().flatten().collect());
    }
    Ok(mesh)
}
