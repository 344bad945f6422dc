//! Face adjacency of tetrahedra.
//!
//! Used by the finite-volume matrix (one off-diagonal per shared face) and by partitioning (the
//! dual graph). The algorithm buckets every face by its smallest vertex (a counting sort, O(n)),
//! then matches the few faces inside each bucket by their remaining two vertices, so it needs no
//! hashing and scales linearly: about 10 million faces for the 0.1 mm Niederer slab.

use super::{MeshError, TetMesh};

/// Marker for "no neighbour" (a boundary face) in [`TetMesh::face_neighbours`].
pub const NO_NEIGHBOUR: u32 = u32::MAX;

/// Vertices of face `k` of tet `t`: the three vertices other than `t[k]`.
#[inline]
pub fn face_vertices(t: &[u32; 4], k: usize) -> [u32; 3] {
    match k {
        0 => [t[1], t[2], t[3]],
        1 => [t[0], t[2], t[3]],
        2 => [t[0], t[1], t[3]],
        _ => [t[0], t[1], t[2]],
    }
}

#[inline]
fn sorted3(mut f: [u32; 3]) -> [u32; 3] {
    if f[0] > f[1] {
        f.swap(0, 1);
    }
    if f[1] > f[2] {
        f.swap(1, 2);
    }
    if f[0] > f[1] {
        f.swap(0, 1);
    }
    f
}

/// Result of matching: neighbours plus the first face shared by more than two tets, if any.
pub(crate) struct Adjacency {
    pub neighbours: Vec<[u32; 4]>,
    /// `(tet, local face)` of a face found in three or more tets (a non-manifold mesh).
    pub non_manifold: Option<(usize, usize)>,
}

pub(crate) fn compute(tets: &[[u32; 4]], num_nodes: usize) -> Adjacency {
    let mut neighbours = vec![[NO_NEIGHBOUR; 4]; tets.len()];
    // One bucket per node. Faces with an out-of-range vertex (caught separately by `validate`)
    // are skipped and stay boundary, so an invalid mesh can neither index out of bounds nor
    // size an allocation from a corrupt index.
    let num_buckets = num_nodes;
    let in_range = |f: &[u32; 3]| (f[2] as usize) < num_nodes;

    // Counting sort of faces by smallest vertex: count, prefix-sum, scatter.
    let mut start = vec![0usize; num_buckets + 1];
    for t in tets {
        for k in 0..4 {
            let f = sorted3(face_vertices(t, k));
            if in_range(&f) {
                start[f[0] as usize + 1] += 1;
            }
        }
    }
    for i in 0..num_buckets {
        start[i + 1] += start[i];
    }
    // Entry: (second vertex, third vertex, 4 * tet + local face) — 12 bytes per face keeps the
    // 0.1 mm slab's 10 M faces at 120 MB. Face ids fit in u32 for up to 2^30 tets, far beyond
    // any mesh whose u32 neighbour indices this function can return anyway.
    assert!(
        tets.len() <= (u32::MAX as usize + 1) / 4,
        "face_neighbours: more than 2^30 tetrahedra"
    );
    let mut entries = vec![(0u32, 0u32, 0u32); start[num_buckets]];
    let mut fill = start.clone();
    for (ti, t) in tets.iter().enumerate() {
        for k in 0..4 {
            let f = sorted3(face_vertices(t, k));
            if !in_range(&f) {
                continue;
            }
            let slot = &mut fill[f[0] as usize];
            entries[*slot] = (f[1], f[2], (4 * ti + k) as u32);
            *slot += 1;
        }
    }

    let mut non_manifold = None;
    for b in 0..num_buckets {
        let bucket = &mut entries[start[b]..start[b + 1]];
        if bucket.len() < 2 {
            continue;
        }
        bucket.sort_unstable();
        let mut i = 0;
        while i < bucket.len() {
            let key = (bucket[i].0, bucket[i].1);
            let mut j = i + 1;
            while j < bucket.len() && (bucket[j].0, bucket[j].1) == key {
                j += 1;
            }
            match j - i {
                1 => {}
                2 => {
                    let (a, b2) = (bucket[i].2, bucket[i + 1].2);
                    let (ta, ka) = ((a / 4) as usize, (a % 4) as usize);
                    let (tb, kb) = ((b2 / 4) as usize, (b2 % 4) as usize);
                    neighbours[ta][ka] = tb as u32;
                    neighbours[tb][kb] = ta as u32;
                }
                _ => {
                    // Leave every copy as a boundary face; report the first one.
                    if non_manifold.is_none() {
                        let a = bucket[i].2;
                        non_manifold = Some(((a / 4) as usize, (a % 4) as usize));
                    }
                }
            }
            i = j;
        }
    }
    Adjacency {
        neighbours,
        non_manifold,
    }
}

impl TetMesh {
    /// Face neighbours of every tet: entry `[t][k]` is the tet sharing face `k` of tet `t` (the
    /// face opposite vertex `k`), or [`NO_NEIGHBOUR`] (`u32::MAX`) on the boundary.
    ///
    /// Runs in O(n) time (counting sort by smallest face vertex). A face shared by three or more
    /// tets (non-manifold input) is reported as boundary in every tet; [`TetMesh::validate`]
    /// rejects such meshes, so on a validated mesh every face has at most one neighbour.
    pub fn face_neighbours(&self) -> Vec<[u32; 4]> {
        compute(&self.tets, self.nodes.len()).neighbours
    }

    /// Like [`TetMesh::face_neighbours`] but fails on a face shared by more than two tets.
    pub fn try_face_neighbours(&self) -> Result<Vec<[u32; 4]>, MeshError> {
        let adj = compute(&self.tets, self.nodes.len());
        match adj.non_manifold {
            Some((cell, face)) => Err(MeshError::NonManifoldFace { cell, face }),
            None => Ok(adj.neighbours),
        }
    }

    /// The cell counts of the face-connected components, largest first. A mesh for diffusion
    /// should have one: cells of another component never receive current from the first.
    pub fn component_sizes(&self) -> Vec<usize> {
        let nb = self.face_neighbours();
        let mut comp = vec![u32::MAX; nb.len()];
        let mut sizes = Vec::new();
        let mut stack = Vec::new();
        for start in 0..nb.len() {
            if comp[start] != u32::MAX {
                continue;
            }
            let id = sizes.len() as u32;
            comp[start] = id;
            stack.push(start as u32);
            let mut size = 0;
            while let Some(t) = stack.pop() {
                size += 1;
                for &n in &nb[t as usize] {
                    if n != NO_NEIGHBOUR && comp[n as usize] == u32::MAX {
                        comp[n as usize] = id;
                        stack.push(n);
                    }
                }
            }
            sizes.push(size);
        }
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        sizes
    }

    /// Boundary faces as `(tet, local face)` pairs, in tet order.
    pub fn boundary_faces(&self) -> Vec<(u32, u8)> {
        self.face_neighbours()
            .iter()
            .enumerate()
            .flat_map(|(t, n)| {
                (0..4)
                    .filter(move |&k| n[k] == NO_NEIGHBOUR)
                    .map(move |k| (t as u32, k as u8))
            })
            .collect()
    }
}
