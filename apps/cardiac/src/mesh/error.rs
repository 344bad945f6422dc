//! Typed errors for mesh reading, writing and validation.

use std::fmt;

/// Where in a file an error was found: a 1-based line for text, a 0-based byte offset for
/// binary data (and for XML, where lines are not tracked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pos {
    Line(usize),
    Byte(usize),
    Unknown,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pos::Line(l) => write!(f, "line {l}"),
            Pos::Byte(b) => write!(f, "byte {b}"),
            Pos::Unknown => write!(f, "unknown position"),
        }
    }
}

/// Everything that can go wrong with a mesh. Readers never panic on bad input: every malformed
/// byte ends up as one of these, naming the file, position, field and cell where they apply.
///
/// Variants from [`TetMesh::validate`](super::TetMesh::validate) carry no file name; readers
/// wrap them in [`MeshError::InvalidMesh`]. Use [`MeshError::innermost`] to match on the cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MeshError {
    /// Reading or writing `file` failed. The I/O error is in the message, not in the error
    /// chain, so that a report does not say it twice.
    #[error("{file}: {error}")]
    Io { file: String, error: std::io::Error },
    #[error("{file}: unexpected end of file at {pos} while reading {field}")]
    Truncated {
        file: String,
        pos: Pos,
        field: String,
    },
    #[error("{file}: {pos}: bad {field}: {message}")]
    Syntax {
        file: String,
        pos: Pos,
        field: String,
        message: String,
    },
    #[error("{file}: missing section or element {section}")]
    MissingSection { file: String, section: String },
    #[error("{file}: unsupported: {message}")]
    Unsupported { file: String, message: String },
    #[error(
        "{file}: {pos}: element {element} has type {element_type} ({type_name}); \
         only 4-node tetrahedra are supported as volume cells"
    )]
    UnsupportedElement {
        file: String,
        pos: Pos,
        /// Element tag (Gmsh) or 0-based cell index (VTK).
        element: u64,
        element_type: i64,
        type_name: &'static str,
    },
    #[error("{file}: {pos}: element {element} refers to node {node}, which does not exist")]
    UnknownNode {
        file: String,
        pos: Pos,
        element: u64,
        node: i64,
    },
    #[error("{file}: {pos}: invalid base64 in {field}: {message}")]
    Base64 {
        file: String,
        pos: Pos,
        field: String,
        message: String,
    },
    #[error("{file}: {pos}: XML error: {message}")]
    Xml {
        file: String,
        pos: Pos,
        message: String,
    },
    #[error("{file}: cell {cell}: fibre direction has zero or non-finite length")]
    ZeroFibre { file: String, cell: usize },
    #[error(
        "{file}: the mesh has sheet directions but no fibres: sheets only make sense across fibres"
    )]
    SheetsWithoutFibres { file: String },
    #[error(
        "{file}: cell {cell}: sheet direction {sheet:?} is zero, not finite or along the fibre"
    )]
    BadSheet {
        file: String,
        cell: usize,
        sheet: [f64; 3],
    },
    #[error("{file}: cell {cell}: cell type {value} is not 0 (endo), 1 (mid) or 2 (epi)")]
    InvalidCellType {
        file: String,
        cell: usize,
        value: f64,
    },
    #[error("{file}: invalid mesh: {source}")]
    InvalidMesh {
        file: String,
        #[source]
        source: Box<MeshError>,
    },
    /// A cell found invalid after reading, named as its file names it: a Gmsh element's tag
    /// and position ([`super::CellOrigins::locate`]). `cause` is the error with the cell index.
    #[error("{pos}: element {element}: {problem}")]
    InvalidElement {
        pos: Pos,
        element: u64,
        /// What is wrong with it (the cause's message without its cell index).
        problem: String,
        cause: Box<MeshError>,
    },
    #[error("node {node}: non-finite coordinate {coord:?}")]
    NonFiniteNode { node: usize, coord: [f64; 3] },
    #[error("cell {cell}: node index {node} out of range (mesh has {num_nodes} nodes)")]
    NodeIndexOutOfRange {
        cell: usize,
        node: u32,
        num_nodes: usize,
    },
    #[error(
        "surface {surface:?} triangle {triangle}: node index {node} out of range \
         (mesh has {num_nodes} nodes)"
    )]
    SurfaceIndexOutOfRange {
        surface: String,
        triangle: usize,
        node: u32,
        num_nodes: usize,
    },
    #[error("cell {cell}: degenerate tetrahedron (quality {quality:e} < {threshold:e})")]
    DegenerateTet {
        cell: usize,
        quality: f64,
        threshold: f64,
    },
    #[error("cell {cell}: negative orientation (signed volume {volume:e})")]
    NegativeOrientation { cell: usize, volume: f64 },
    #[error("{field} has {found} entries, expected {expected} (one per cell)")]
    FieldLength {
        field: String,
        expected: usize,
        found: usize,
    },
    #[error("cell {cell}: sheet is not a unit vector orthogonal to the fibre (|s| = {norm}, s·f = {dot})")]
    NonOrthonormalSheet { cell: usize, norm: f64, dot: f64 },
    #[error("cell {cell}: fibre has length {norm}, expected 1")]
    NonUnitFibre { cell: usize, norm: f64 },
    #[error("cell {cell}: face {face} is shared by more than two tetrahedra")]
    NonManifoldFace { cell: usize, face: usize },
    #[error("no surface named {name:?} (available: {available:?})")]
    UnknownSurface {
        name: String,
        available: Vec<String>,
    },
    #[error("invalid default fibre direction {dir:?}: must be finite and non-zero")]
    InvalidDirection { dir: [f64; 3] },
    /// A box mesh that cannot be built: a length or the spacing not finite and positive, or
    /// more nodes or cells than u32 indices number.
    #[error("slab {size:?} mm at dx {dx} mm: {why}")]
    BadSlab {
        size: [f64; 3],
        dx: f64,
        why: String,
    },
}

impl MeshError {
    /// The underlying cause, looking through [`MeshError::InvalidMesh`] wrappers.
    pub fn innermost(&self) -> &MeshError {
        match self {
            MeshError::InvalidMesh { source, .. } => source.innermost(),
            MeshError::InvalidElement { cause, .. } => cause.innermost(),
            e => e,
        }
    }

    /// The 0-based cell a validation error is about (its message starts `cell N: `).
    pub fn cell(&self) -> Option<usize> {
        match self {
            MeshError::NodeIndexOutOfRange { cell, .. }
            | MeshError::DegenerateTet { cell, .. }
            | MeshError::NegativeOrientation { cell, .. }
            | MeshError::NonOrthonormalSheet { cell, .. }
            | MeshError::NonUnitFibre { cell, .. }
            | MeshError::NonManifoldFace { cell, .. } => Some(*cell),
            _ => None,
        }
    }
}
