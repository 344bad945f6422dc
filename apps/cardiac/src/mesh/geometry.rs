//! Per-cell geometry: signed volumes, centroids, bounding boxes.
//!
//! Kept free of any file-format concerns so the finite-volume assembly and the partitioner can
//! call these on any [`TetMesh`](super::TetMesh), including ones that have not been validated.

/// Signed volume of the tetrahedron `(a, b, c, d)`: `det(b - a, c - a, d - a) / 6`.
///
/// Positive when `d` lies on the side of the plane `(a, b, c)` that its right-hand normal
/// `(b - a) × (c - a)` points to, which is the orientation every mesh in the app is stored with.
#[inline]
pub fn signed_volume(a: [f64; 3], b: [f64; 3], c: [f64; 3], d: [f64; 3]) -> f64 {
    let u = sub(b, a);
    let v = sub(c, a);
    let w = sub(d, a);
    dot(u, cross(v, w)) / 6.0
}

/// Longest of the six edges of a tetrahedron; the length scale for the degeneracy test.
#[inline]
pub fn max_edge_length(p: &[[f64; 3]; 4]) -> f64 {
    let mut m: f64 = 0.0;
    for i in 0..4 {
        for j in (i + 1)..4 {
            m = m.max(norm(sub(p[i], p[j])));
        }
    }
    m
}

#[inline]
pub(crate) fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline]
pub(crate) fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline]
pub(crate) fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[inline]
pub(crate) fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}
