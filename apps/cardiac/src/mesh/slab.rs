//! Structured box meshes (the Niederer benchmark slab).

use super::{CellType, MeshError, SurfaceTag, TetMesh};

/// The size of a box mesh, counted before anything is allocated ([`TetMesh::slab_size`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlabSize {
    /// Hexahedra along x, y and z.
    pub hexes: [u64; 3],
    pub nodes: u64,
    /// Tetrahedra: six per hexahedron.
    pub cells: u64,
}

/// The six tetrahedra of the Kuhn (Freudenthal) split of the unit cube, as corner indices
/// `bit0 = +x, bit1 = +y, bit2 = +z`.
///
/// Each tet walks from corner 0 to corner 7 along one permutation of the three axes, so all six
/// share the main diagonal 0–7. Because every hexahedron is split the same way (the split is
/// translation invariant), the diagonals chosen on a shared quad face agree between the two
/// hexes — the mesh is conforming — and all six tets have volume `h³/6`. Odd permutations are
/// stored with their last two vertices swapped so every tet has positive orientation.
const KUHN: [[usize; 4]; 6] = [
    // axes x, y, z (even)
    [0, 1, 3, 7],
    // y, z, x (even)
    [0, 2, 6, 7],
    // z, x, y (even)
    [0, 4, 5, 7],
    // x, z, y (odd) -> swap last two of [0, 1, 5, 7]
    [0, 1, 7, 5],
    // y, x, z (odd) -> swap last two of [0, 2, 3, 7]
    [0, 2, 7, 3],
    // z, y, x (odd) -> swap last two of [0, 4, 6, 7]
    [0, 4, 7, 6],
];

impl TetMesh {
    /// A box `[0, lx] × [0, ly] × [0, lz]` (mm) of hexahedra of size ≈ `dx`, each split into six
    /// equal, positively oriented tetrahedra sharing the hex's main diagonal (Kuhn split).
    ///
    /// The number of hexes along each axis is `round(l / dx)` (at least 1), so the box size is
    /// exact and the spacing is `l / n` (equal to `dx` when `dx` divides `l`, as in the Niederer
    /// resolutions 0.5, 0.2 and 0.1 mm).
    ///
    /// Ordering, relied on for locality by partitioners and for reproducible tests:
    /// * node `(i, j, k)` has index `i + (nx + 1) * (j + (ny + 1) * k)` (x fastest);
    /// * hex `(i, j, k)` has index `h = i + nx * (j + ny * k)`, and its tets are `6h .. 6h + 6`
    ///   in the order of the Kuhn permutations (x-y-z, y-z-x, z-x-y, x-z-y, y-x-z, z-y-x).
    ///
    /// Fibres are all `(1, 0, 0)` and cell types all [`CellType::Epi`] (the benchmark setup).
    /// Surface tags `X0, X1, Y0, Y1, Z0, Z1` hold the boundary triangles of the faces
    /// `x = 0, x = lx, …`, wound so their right-hand normal points out of the box.
    ///
    /// # Panics
    /// Where [`TetMesh::try_slab`] fails: for sizes fixed in code (tests, benches); a size a
    /// user gives goes through `try_slab`.
    pub fn slab(lx: f64, ly: f64, lz: f64, dx: f64) -> TetMesh {
        Self::try_slab(lx, ly, lz, dx).unwrap_or_else(|e| panic!("TetMesh::slab: {e}"))
    }

    /// The counts of [`TetMesh::slab`]'s mesh, without building it: an error
    /// ([`MeshError::BadSlab`]) if a length or `dx` is not finite and positive, or the mesh
    /// would number more nodes or cells than u32 indices can.
    pub fn slab_size(lx: f64, ly: f64, lz: f64, dx: f64) -> Result<SlabSize, MeshError> {
        let bad = |why: String| MeshError::BadSlab {
            size: [lx, ly, lz],
            dx,
            why,
        };
        for (name, v) in [("lx", lx), ("ly", ly), ("lz", lz), ("dx", dx)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(format!("{name} must be finite and > 0, got {v}")));
            }
        }
        // In f64 first: a count beyond u64 (dx = 1e-300) saturates instead of wrapping.
        let along = |l: f64| (l / dx).round().max(1.0);
        let h = [along(lx), along(ly), along(lz)];
        let (nodes, cells) = (
            (h[0] + 1.0) * (h[1] + 1.0) * (h[2] + 1.0),
            6.0 * h[0] * h[1] * h[2],
        );
        if !(nodes <= f64::from(u32::MAX) && cells < f64::from(u32::MAX)) {
            return Err(bad(format!(
                "{:e} nodes and {:e} cells exceed the u32 index range ({} each)",
                nodes,
                cells,
                u32::MAX
            )));
        }
        Ok(SlabSize {
            hexes: h.map(|x| x as u64),
            nodes: nodes as u64,
            cells: cells as u64,
        })
    }

    /// [`TetMesh::slab`], with an error ([`TetMesh::slab_size`]'s) instead of a panic.
    pub fn try_slab(lx: f64, ly: f64, lz: f64, dx: f64) -> Result<TetMesh, MeshError> {
        let size = Self::slab_size(lx, ly, lz, dx)?;
        let [nx, ny, nz] = size.hexes.map(|n| n as usize);
        let (px, py, pz) = (nx + 1, ny + 1, nz + 1);
        let num_nodes = size.nodes as usize;
        let num_tets = size.cells as usize;

        let (hx, hy, hz) = (lx / nx as f64, ly / ny as f64, lz / nz as f64);
        let mut nodes = Vec::with_capacity(num_nodes);
        for k in 0..pz {
            // Snap the last layer to the exact length so boundary selections by coordinate work.
            let z = if k == nz { lz } else { k as f64 * hz };
            for j in 0..py {
                let y = if j == ny { ly } else { j as f64 * hy };
                for i in 0..px {
                    let x = if i == nx { lx } else { i as f64 * hx };
                    nodes.push([x, y, z]);
                }
            }
        }

        let node = |i: usize, j: usize, k: usize| (i + px * (j + py * k)) as u32;
        // Offsets of the 8 hex corners from corner (i, j, k), indexed by the corner bit pattern.
        let corner: [u32; 8] =
            std::array::from_fn(|c| node(c & 1, (c >> 1) & 1, (c >> 2) & 1) - node(0, 0, 0));
        let mut tets = Vec::with_capacity(num_tets);
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let base = node(i, j, k);
                    for t in &KUHN {
                        tets.push(t.map(|c| base + corner[c]));
                    }
                }
            }
        }

        let surfaces = slab_surfaces([nx, ny, nz], &node);
        Ok(TetMesh {
            nodes,
            tets,
            fibres: Some(vec![[1.0, 0.0, 0.0]; num_tets]),
            sheets: None,
            cell_types: Some(vec![CellType::Epi; num_tets]),
            surfaces,
        })
    }
}

/// Boundary triangles of the six box faces, split along the quad diagonal from its lowest to its
/// highest corner — the trace of the Kuhn main diagonal, so these are exactly tet faces.
fn slab_surfaces(n: [usize; 3], node: &dyn Fn(usize, usize, usize) -> u32) -> Vec<SurfaceTag> {
    let mut out = Vec::with_capacity(6);
    for axis in 0..3 {
        // (u, v, axis) is a cyclic permutation of (x, y, z), so e_u × e_v = +e_axis.
        let u = (axis + 1) % 3;
        let v = (axis + 2) % 3;
        for (side, name_suffix) in [(0usize, '0'), (n[axis], '1')] {
            let mut tris = Vec::with_capacity(2 * n[u] * n[v]);
            for b in 0..n[v] {
                for a in 0..n[u] {
                    let at = |du: usize, dv: usize| {
                        let mut ijk = [0usize; 3];
                        ijk[axis] = side;
                        ijk[u] = a + du;
                        ijk[v] = b + dv;
                        node(ijk[0], ijk[1], ijk[2])
                    };
                    let (p00, p10, p11, p01) = (at(0, 0), at(1, 0), at(1, 1), at(0, 1));
                    if side == 0 {
                        // Outward normal is -e_axis: reverse the winding.
                        tris.push([p00, p11, p10]);
                        tris.push([p00, p01, p11]);
                    } else {
                        tris.push([p00, p10, p11]);
                        tris.push([p00, p11, p01]);
                    }
                }
            }
            let axis_name = ['X', 'Y', 'Z'][axis];
            out.push(SurfaceTag {
                name: format!("{axis_name}{name_suffix}"),
                triangles: tris,
            });
        }
    }
    out
}
