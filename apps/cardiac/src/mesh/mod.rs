//! Tetrahedral meshes: the in-memory form every reader produces and every solver consumes.
//!
//! * [`TetMesh::slab`] builds the Niederer benchmark box;
//! * [`read_mesh`] reads Gmsh MSH 4.1 (ASCII or binary) and VTK `.vtu` files (see [`gmsh`],
//!   [`vtu`]) and validates the result;
//! * [`write_vtu`] / [`gmsh::write_msh`] write results and round-trip meshes;
//! * [`TetMesh::face_neighbours`], [`TetMesh::centroid`], [`TetMesh::tet_volume`] feed the
//!   finite-volume matrix and the partitioner;
//! * `cells_in_*` select stimulus regions.

mod adjacency;
mod error;
pub mod geometry;
pub mod gmsh;
mod slab;
pub mod vtu;

pub use adjacency::{face_vertices, NO_NEIGHBOUR};
pub use error::{MeshError, Pos};
pub use gmsh::{read_msh, write_msh};
pub use slab::SlabSize;
/// Cell (tetrahedron) type of the TP06 model: the `tp06` crate's, stored per cell.
pub use tp06::CellType;
pub use vtu::{read_vtu, write_vtu, write_vtu_with, VtuEncoding};

use geometry::{max_edge_length, norm, signed_volume};
use std::collections::HashSet;
use std::path::Path;

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
    /// Unit sheet direction per tet (orthotropic tissue: conductivity σ_t along the sheet,
    /// σ_n along the sheet normal `fibre × sheet`). Readers make it orthogonal to the fibre.
    pub sheets: Option<Vec<[f64; 3]>>,
    pub cell_types: Option<Vec<CellType>>,
    pub surfaces: Vec<SurfaceTag>,
}

/// Options shared by the readers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadOptions {
    /// Factor applied to every coordinate on read, to reach millimetres: 10 for files in cm
    /// (like the shared bi-ventricular meshes), 1 for files already in mm.
    pub scale: f64,
    /// Swap two vertices of negatively oriented tets (files from other tools need not follow
    /// our orientation convention). Degenerate tets are never "fixed" this way.
    pub reorient: bool,
    /// Run [`TetMesh::validate`] before returning, wrapping its error in
    /// [`MeshError::InvalidMesh`] with the file name.
    pub validate: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            scale: 1.0,
            reorient: true,
            validate: true,
        }
    }
}

impl ReadOptions {
    /// Defaults with the given unit scale (e.g. `ReadOptions::with_scale(10.0)` for cm files).
    pub fn with_scale(scale: f64) -> Self {
        ReadOptions {
            scale,
            ..Self::default()
        }
    }
}

/// Read a mesh, choosing the format from the extension (`.msh` or `.vtu`).
pub fn read_mesh(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<TetMesh, MeshError> {
    read_mesh_located(path, opts).map(|(mesh, _)| mesh)
}

/// [`read_mesh`], with where each cell came from in the file, to name a cell found invalid
/// later (after [`TetMesh::reorient`], say) as the file names it.
pub fn read_mesh_located(
    path: impl AsRef<Path>,
    opts: &ReadOptions,
) -> Result<(TetMesh, CellOrigins), MeshError> {
    let path = path.as_ref();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("msh") => gmsh::read_msh_located(path, opts),
        Some("vtu") => read_vtu(path, opts).map(|m| (m, CellOrigins::default())),
        _ => Err(MeshError::Unsupported {
            file: path.display().to_string(),
            message: "unknown mesh file extension (expected .msh or .vtu)".into(),
        }),
    }
}

/// Where the cells and nodes of a mesh were read from: each cell's Gmsh element tag and its
/// line (or byte offset), and each node's tag, in index order. Empty for a VTU file, whose
/// cells and nodes are numbered as in the file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellOrigins {
    pub cells: Vec<(u64, Pos)>,
    pub node_tags: Vec<u64>,
}

impl CellOrigins {
    /// Nodes `a` and `b` as the file names them: `node tags 13 and 41` (Gmsh), or
    /// `nodes 12 and 40` (0-based, VTU).
    pub fn nodes(&self, a: u32, b: u32) -> String {
        match (
            self.node_tags.get(a as usize),
            self.node_tags.get(b as usize),
        ) {
            (Some(s), Some(t)) => format!("node tags {s} and {t}"),
            _ => format!("nodes {a} and {b}"),
        }
    }

    /// `e` with the cell it is about (see [`MeshError::cell`]) named by its element tag and
    /// position, inside any [`MeshError::InvalidMesh`] wrappers; other errors as they are.
    pub fn locate(&self, e: MeshError) -> MeshError {
        match e {
            MeshError::InvalidMesh { file, source } => MeshError::InvalidMesh {
                file,
                source: Box::new(self.locate(*source)),
            },
            e => match e.cell().and_then(|c| self.cells.get(c).map(|o| (c, *o))) {
                Some((cell, (element, pos))) => {
                    let text = e.to_string();
                    let problem = text
                        .strip_prefix(&format!("cell {cell}: "))
                        .unwrap_or(&text)
                        .to_string();
                    MeshError::InvalidElement {
                        pos,
                        element,
                        problem,
                        cause: Box::new(e),
                    }
                }
                None => e,
            },
        }
    }
}

/// Smallest accepted tet quality `6√2 · V / L³` (`L` = longest edge; 1 for a regular tet,
/// ≈ 0.27 for a Kuhn-split cube tet). Below this a tet is numerically flat: its face areas and
/// volume would make the finite-volume coefficients meaningless.
pub const MIN_TET_QUALITY: f64 = 1e-6;

/// Tolerance on `|fibre| - 1` in [`TetMesh::validate`]; readers normalise exactly.
pub const FIBRE_NORM_TOL: f64 = 1e-6;

impl TetMesh {
    /// Number of cells (tetrahedra): the unknowns of the cell-centred finite-volume scheme.
    #[inline]
    pub fn num_cells(&self) -> usize {
        self.tets.len()
    }

    /// Number of nodes (vertices).
    #[inline]
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The four vertex positions of tet `t`. Panics if `t` or its indices are out of range;
    /// call on validated meshes.
    #[inline]
    pub fn tet_points(&self, t: usize) -> [[f64; 3]; 4] {
        self.tets[t].map(|v| self.nodes[v as usize])
    }

    /// Signed volume of tet `t` in mm³ (positive on a validated mesh).
    #[inline]
    pub fn tet_volume(&self, t: usize) -> f64 {
        let [a, b, c, d] = self.tet_points(t);
        signed_volume(a, b, c, d)
    }

    /// Scale-free shape quality `6√2 · |V| / L³` of tet `t` (`L` = longest edge): 1 for a
    /// regular tet, ≈ 0.27 for the slab's Kuhn tets, 0 for a flat one. Useful for mesh reports;
    /// [`TetMesh::validate`] rejects tets below [`MIN_TET_QUALITY`].
    pub fn tet_quality(&self, t: usize) -> f64 {
        let p = self.tet_points(t);
        tet_quality(signed_volume(p[0], p[1], p[2], p[3]), &p)
    }

    /// Outward area vector of face `k` of tet `t` (the face opposite vertex `k`): normal to the
    /// face, pointing away from vertex `k`, with length equal to the face area (mm²). The
    /// finite-volume flux through a face is `σ ∇v · n`, so this is the quantity it needs; the
    /// four area vectors of a tet sum to zero.
    pub fn face_area_vector(&self, t: usize, k: usize) -> [f64; 3] {
        let p = self.tet_points(t);
        let [a, b, c] = face_vertices(&[0, 1, 2, 3], k).map(|i| p[i as usize]);
        let n = geometry::cross(geometry::sub(b, a), geometry::sub(c, a));
        // Orient away from the opposite vertex whatever the winding of (a, b, c).
        let s = if geometry::dot(n, geometry::sub(a, p[k])) < 0.0 {
            -0.5
        } else {
            0.5
        };
        n.map(|x| s * x)
    }

    /// Sum of all tet volumes (mm³).
    pub fn total_volume(&self) -> f64 {
        (0..self.num_cells()).map(|t| self.tet_volume(t)).sum()
    }

    /// Centroid (mean of the four vertices) of tet `t`: the cell-centre of the finite-volume
    /// scheme and the point used by the region selectors.
    #[inline]
    pub fn centroid(&self, t: usize) -> [f64; 3] {
        let p = self.tet_points(t);
        std::array::from_fn(|i| 0.25 * (p[0][i] + p[1][i] + p[2][i] + p[3][i]))
    }

    /// Axis-aligned bounding box `(min, max)` of the nodes; `None` for a mesh without nodes.
    pub fn bounding_box(&self) -> Option<([f64; 3], [f64; 3])> {
        let first = *self.nodes.first()?;
        Some(self.nodes.iter().fold((first, first), |(lo, hi), p| {
            (
                std::array::from_fn(|i| lo[i].min(p[i])),
                std::array::from_fn(|i| hi[i].max(p[i])),
            )
        }))
    }

    /// Check the invariants every solver relies on, reporting the first violation:
    /// finite coordinates; tet and surface indices in range; every tet non-degenerate
    /// (quality above [`MIN_TET_QUALITY`]) and positively oriented; `fibres` / `cell_types`
    /// with one entry per tet; fibres of unit length; no face shared by more than two tets.
    pub fn validate(&self) -> Result<(), MeshError> {
        let num_nodes = self.nodes.len();
        for (node, p) in self.nodes.iter().enumerate() {
            if !p.iter().all(|x| x.is_finite()) {
                return Err(MeshError::NonFiniteNode { node, coord: *p });
            }
        }
        for (cell, t) in self.tets.iter().enumerate() {
            if let Some(&node) = t.iter().find(|&&v| v as usize >= num_nodes) {
                return Err(MeshError::NodeIndexOutOfRange {
                    cell,
                    node,
                    num_nodes,
                });
            }
            let p = self.tet_points(cell);
            let volume = signed_volume(p[0], p[1], p[2], p[3]);
            let quality = tet_quality(volume, &p);
            // `tet_quality` maps non-finite results to 0, so NaN coordinates end up here too.
            if quality < MIN_TET_QUALITY {
                return Err(MeshError::DegenerateTet {
                    cell,
                    quality,
                    threshold: MIN_TET_QUALITY,
                });
            }
            if volume < 0.0 {
                return Err(MeshError::NegativeOrientation { cell, volume });
            }
        }
        for s in &self.surfaces {
            for (triangle, tri) in s.triangles.iter().enumerate() {
                if let Some(&node) = tri.iter().find(|&&v| v as usize >= num_nodes) {
                    return Err(MeshError::SurfaceIndexOutOfRange {
                        surface: s.name.clone(),
                        triangle,
                        node,
                        num_nodes,
                    });
                }
            }
        }
        if let Some(sh) = &self.sheets {
            if sh.len() != self.tets.len() {
                return Err(MeshError::FieldLength {
                    field: "sheets".into(),
                    expected: self.tets.len(),
                    found: sh.len(),
                });
            }
            let Some(f) = &self.fibres else {
                return Err(MeshError::SheetsWithoutFibres {
                    file: "the mesh".into(),
                });
            };
            for (cell, (s, f)) in sh.iter().zip(f).enumerate() {
                let (n, d) = (norm(*s), geometry::dot(*s, *f));
                if n.is_nan() || (n - 1.0).abs() > FIBRE_NORM_TOL || d.abs() > FIBRE_NORM_TOL {
                    return Err(MeshError::NonOrthonormalSheet {
                        cell,
                        norm: n,
                        dot: d,
                    });
                }
            }
        }
        if let Some(f) = &self.fibres {
            if f.len() != self.tets.len() {
                return Err(MeshError::FieldLength {
                    field: "fibres".into(),
                    expected: self.tets.len(),
                    found: f.len(),
                });
            }
            for (cell, d) in f.iter().enumerate() {
                let n = norm(*d);
                if n.is_nan() || (n - 1.0).abs() > FIBRE_NORM_TOL {
                    return Err(MeshError::NonUnitFibre { cell, norm: n });
                }
            }
        }
        if let Some(c) = &self.cell_types {
            if c.len() != self.tets.len() {
                return Err(MeshError::FieldLength {
                    field: "cell_types".into(),
                    expected: self.tets.len(),
                    found: c.len(),
                });
            }
        }
        self.try_face_neighbours().map(|_| ())
    }

    /// Nodes used by the cells that lie exactly on another used node: how many (beyond the
    /// first of each place) and the first such pair, lower index first. Cells that use
    /// different copies of a place do not share a face: no current crosses between them.
    pub fn coincident_nodes(&self) -> (usize, Option<(u32, u32)>) {
        let mut used = vec![false; self.nodes.len()];
        for t in &self.tets {
            for &v in t {
                if let Some(u) = used.get_mut(v as usize) {
                    *u = true;
                }
            }
        }
        // +0.0 for -0.0, so that the two zeros are one place.
        let key = |i: u32| self.nodes[i as usize].map(|x| x + 0.0);
        let mut order: Vec<u32> = (0..self.nodes.len() as u32)
            .filter(|&i| used[i as usize])
            .collect();
        order.sort_by(|&a, &b| {
            let (p, q) = (key(a), key(b));
            (0..3)
                .map(|k| p[k].total_cmp(&q[k]))
                .find(|o| o.is_ne())
                .unwrap_or(a.cmp(&b))
        });
        let (mut count, mut first): (usize, Option<(u32, u32)>) = (0, None);
        let mut k = 0;
        while k < order.len() {
            let mut j = k + 1;
            while j < order.len() && key(order[j]) == key(order[k]) {
                j += 1;
            }
            if j - k > 1 {
                count += j - k - 1;
                // Sorted by index within the place: order[k] is its lowest, order[k + 1] next.
                let pair = (order[k], order[k + 1]);
                if first.is_none_or(|f| pair < f) {
                    first = Some(pair);
                }
            }
            k = j;
        }
        (count, first)
    }

    /// Swap vertices 2 and 3 of every negatively oriented tet. Returns how many were flipped.
    pub fn reorient(&mut self) -> usize {
        let mut flipped = 0;
        for t in 0..self.tets.len() {
            let ok = self.tets[t]
                .iter()
                .all(|&v| (v as usize) < self.nodes.len());
            if ok && self.tet_volume(t) < 0.0 {
                self.tets[t].swap(2, 3);
                flipped += 1;
            }
        }
        flipped
    }

    /// Fill missing fibres with the fixed direction `dir` (normalised). `None` leaves the mesh
    /// unchanged: the app represents isotropic conduction itself. Existing fibres are kept.
    pub fn with_default_fibres(mut self, dir: Option<[f64; 3]>) -> Result<Self, MeshError> {
        if let Some(d) = dir {
            let n = norm(d);
            if !(n.is_finite() && n > 0.0) {
                return Err(MeshError::InvalidDirection { dir: d });
            }
            if self.fibres.is_none() {
                self.fibres = Some(vec![d.map(|x| x / n); self.tets.len()]);
            }
        }
        Ok(self)
    }

    /// Fill missing cell types with `ct`. Existing cell types are kept.
    pub fn with_default_cell_type(mut self, ct: CellType) -> Self {
        if self.cell_types.is_none() {
            self.cell_types = Some(vec![ct; self.tets.len()]);
        }
        self
    }

    /// Cells whose centroid lies in the closed box `[min, max]` (e.g. the Niederer stimulus
    /// cube `[0, 1.5]³`).
    pub fn cells_in_box(&self, min: [f64; 3], max: [f64; 3]) -> Vec<u32> {
        self.select_by_centroid(|c| (0..3).all(|i| c[i] >= min[i] && c[i] <= max[i]))
    }

    /// Cells whose centroid lies in the closed ball of radius `r` around `c`.
    pub fn cells_in_sphere(&self, c: [f64; 3], r: f64) -> Vec<u32> {
        let r2 = r * r;
        self.select_by_centroid(|p| {
            let d = geometry::sub(p, c);
            geometry::dot(d, d) <= r2
        })
    }

    fn select_by_centroid(&self, keep: impl Fn([f64; 3]) -> bool) -> Vec<u32> {
        (0..self.tets.len())
            .filter(|&t| keep(self.centroid(t)))
            .map(|t| t as u32)
            .collect()
    }

    /// Cells with a face on the named surface (one layer of tets), in increasing order. Faces
    /// are matched by vertex set, so the triangles' winding does not matter.
    pub fn cells_touching_surface(&self, tag_name: &str) -> Result<Vec<u32>, MeshError> {
        let surface = self
            .surfaces
            .iter()
            .find(|s| s.name == tag_name)
            .ok_or_else(|| MeshError::UnknownSurface {
                name: tag_name.to_string(),
                available: self.surfaces.iter().map(|s| s.name.clone()).collect(),
            })?;
        let key = |mut f: [u32; 3]| {
            f.sort_unstable();
            f
        };
        let faces: HashSet<[u32; 3]> = surface.triangles.iter().map(|&t| key(t)).collect();
        Ok((0..self.tets.len())
            .filter(|&t| (0..4).any(|k| faces.contains(&key(face_vertices(&self.tets[t], k)))))
            .map(|t| t as u32)
            .collect())
    }

    /// Surface tag by name.
    pub fn surface(&self, name: &str) -> Option<&SurfaceTag> {
        self.surfaces.iter().find(|s| s.name == name)
    }
}

/// Scale-free quality `6√2 · |V| / L³` of a tet with signed volume `volume` and vertices `p`.
fn tet_quality(volume: f64, p: &[[f64; 3]; 4]) -> f64 {
    let l = max_edge_length(p);
    let q = 6.0 * std::f64::consts::SQRT_2 * volume.abs() / (l * l * l);
    if q.is_finite() {
        q
    } else {
        0.0
    }
}

/// Normalise a fibre read from a file, rejecting zero or non-finite vectors.
/// Attaches sheet directions to a mesh with fibres: each sheet is made orthogonal to its
/// cell's fibre (Gram–Schmidt) and unit; a sheet along the fibre, zero or not finite is an
/// error naming the cell.
pub(crate) fn with_sheets(
    mut mesh: TetMesh,
    sheets: Option<Vec<[f64; 3]>>,
    file: &str,
) -> Result<TetMesh, MeshError> {
    let Some(sheets) = sheets else {
        return Ok(mesh);
    };
    let fibres = mesh.fibres.as_ref().ok_or(MeshError::SheetsWithoutFibres {
        file: file.to_string(),
    })?;
    let mut out = Vec::with_capacity(sheets.len());
    for (cell, (&s, &f)) in sheets.iter().zip(fibres).enumerate() {
        let along = geometry::dot(s, f);
        let o = [
            s[0] - along * f[0],
            s[1] - along * f[1],
            s[2] - along * f[2],
        ];
        let n = norm(o);
        if !(n.is_finite() && n > 1e-6 * norm(s)) || norm(s) == 0.0 {
            return Err(MeshError::BadSheet {
                file: file.to_string(),
                cell,
                sheet: s,
            });
        }
        out.push(o.map(|x| x / n));
    }
    mesh.sheets = Some(out);
    Ok(mesh)
}

/// The bytes of the mesh file `path` (a regular file only: `app_support::input`) and its
/// name for messages.
pub(crate) fn read_input(path: &Path) -> Result<(Vec<u8>, String), MeshError> {
    let file = path.display().to_string();
    let data = app_support::input::read(path).map_err(|source| MeshError::Io {
        file: file.clone(),
        error: source,
    })?;
    Ok((data, file))
}

pub(crate) fn normalise_fibre(d: [f64; 3], file: &str, cell: usize) -> Result<[f64; 3], MeshError> {
    let n = norm(d);
    if n.is_finite() && n > 0.0 {
        Ok(d.map(|x| x / n))
    } else {
        Err(MeshError::ZeroFibre {
            file: file.to_string(),
            cell,
        })
    }
}

/// Shared read-time post-processing: reorient and validate as asked by `opts`.
pub(crate) fn finish_read(
    mut mesh: TetMesh,
    file: &str,
    opts: &ReadOptions,
) -> Result<TetMesh, MeshError> {
    if opts.reorient {
        mesh.reorient();
    }
    if opts.validate {
        mesh.validate().map_err(|e| MeshError::InvalidMesh {
            file: file.to_string(),
            source: Box::new(e),
        })?;
    }
    Ok(mesh)
}
