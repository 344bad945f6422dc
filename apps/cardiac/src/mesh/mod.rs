//! Tetrahedral meshes: the in-memory form every reader produces and every solver consumes.

/// Cell (tetrahedron) type of the TP06 model, stored per cell as a `u8`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum CellType {
    Endo = 0,
    Mid = 1,
    Epi = 2,
}

/// A named set of boundary triangles (Gmsh physical surface, e.g. `ENDO_LV`).
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceTag {
    pub name: String,
    /// Node-index triples.
    pub triangles: Vec<[u32; 3]>,
}

/// An unstructured tetrahedral mesh. Units are millimetres throughout the app; readers convert.
///
/// Invariants (checked by [`TetMesh::validate`]): every tet index is `< nodes.len()`, every tet
/// has positive signed volume (readers reorient negatively oriented cells), and `fibres` /
/// `cell_types`, when present, have one entry per tet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TetMesh {
    pub nodes: Vec<[f64; 3]>,
    pub tets: Vec<[u32; 4]>,
    /// Unit fibre direction per tet.
    pub fibres: Option<Vec<[f64; 3]>>,
    pub cell_types: Option<Vec<CellType>>,
    pub surfaces: Vec<SurfaceTag>,
}
