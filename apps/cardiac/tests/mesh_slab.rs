//! Slab generator, geometry helpers, face adjacency and region selection.

use cardiac::mesh::{CellType, TetMesh, NO_NEIGHBOUR};

fn hexes(lx: f64, ly: f64, lz: f64, dx: f64) -> (usize, usize, usize) {
    let n = |l: f64| (l / dx).round() as usize;
    (n(lx), n(ly), n(lz))
}

#[test]
fn niederer_counts() {
    for (dx, tets) in [(0.5, 20_160usize), (0.2, 315_000)] {
        let m = TetMesh::slab(20.0, 7.0, 3.0, dx);
        let (nx, ny, nz) = hexes(20.0, 7.0, 3.0, dx);
        assert_eq!(m.num_cells(), tets);
        assert_eq!(m.num_nodes(), (nx + 1) * (ny + 1) * (nz + 1));
        assert_eq!(m.fibres.as_ref().unwrap().len(), tets);
        assert_eq!(m.cell_types.as_ref().unwrap().len(), tets);
        assert!(m
            .cell_types
            .as_ref()
            .unwrap()
            .iter()
            .all(|&c| c == CellType::Epi));
        assert!(m
            .fibres
            .as_ref()
            .unwrap()
            .iter()
            .all(|&f| f == [1.0, 0.0, 0.0]));
        m.validate().unwrap();
    }
}

#[test]
fn volumes_equal_positive_and_sum_to_box() {
    let (lx, ly, lz, dx) = (20.0, 7.0, 3.0, 0.5);
    let m = TetMesh::slab(lx, ly, lz, dx);
    let expected = dx * dx * dx / 6.0;
    for t in 0..m.num_cells() {
        let v = m.tet_volume(t);
        assert!(v > 0.0, "tet {t} volume {v}");
        assert!(
            (v - expected).abs() < 1e-12,
            "tet {t} volume {v} != {expected}"
        );
    }
    assert!((m.total_volume() - lx * ly * lz).abs() < 1e-9 * lx * ly * lz);
    let (lo, hi) = m.bounding_box().unwrap();
    assert_eq!(lo, [0.0, 0.0, 0.0]);
    assert_eq!(hi, [lx, ly, lz]);
}

#[test]
fn non_dividing_dx_keeps_box_exact() {
    let m = TetMesh::slab(1.0, 1.0, 1.0, 0.3);
    // round(1 / 0.3) = 3 hexes per axis.
    assert_eq!(m.num_cells(), 6 * 27);
    assert!((m.total_volume() - 1.0).abs() < 1e-12);
    m.validate().unwrap();
}

#[test]
fn ordering_is_lexicographic_by_hex() {
    let (lx, ly, lz, dx) = (3.0, 2.0, 1.0, 1.0);
    let m = TetMesh::slab(lx, ly, lz, dx);
    let (nx, ny, _) = hexes(lx, ly, lz, dx);
    for t in 0..m.num_cells() {
        let h = t / 6;
        let (i, j, k) = (h % nx, (h / nx) % ny, h / (nx * ny));
        let c = m.centroid(t);
        assert!(
            c[0] > i as f64 && c[0] < i as f64 + 1.0,
            "tet {t} centroid {c:?}"
        );
        assert!(c[1] > j as f64 && c[1] < j as f64 + 1.0);
        assert!(c[2] > k as f64 && c[2] < k as f64 + 1.0);
    }
}

#[test]
fn face_adjacency_and_conformity() {
    let (lx, ly, lz, dx) = (5.0, 3.0, 2.0, 0.5);
    let m = TetMesh::slab(lx, ly, lz, dx);
    let (nx, ny, nz) = hexes(lx, ly, lz, dx);
    let nb = m.try_face_neighbours().unwrap();
    assert_eq!(nb.len(), m.num_cells());

    // Symmetric, and neighbours share exactly the face's three vertices.
    for (t, n) in nb.iter().enumerate() {
        for (k, &nk) in n.iter().enumerate() {
            if nk == NO_NEIGHBOUR {
                continue;
            }
            let u = nk as usize;
            assert_ne!(u, t);
            let back = nb[u]
                .iter()
                .position(|&x| x as usize == t)
                .expect("symmetric");
            let mut f1 = cardiac::mesh::face_vertices(&m.tets[t], k);
            let mut f2 = cardiac::mesh::face_vertices(&m.tets[u], back);
            f1.sort_unstable();
            f2.sort_unstable();
            assert_eq!(f1, f2);
        }
    }

    // Conforming: every boundary face lies on the box boundary, and their number is exactly two
    // triangles per boundary quad. A non-conforming split would leave unmatched interior faces.
    let boundary = m.boundary_faces();
    let quads = 2 * (nx * ny + ny * nz + nx * nz);
    assert_eq!(boundary.len(), 2 * quads);
    let on_box = |p: [f64; 3]| {
        let e = 1e-12;
        [(0, lx), (1, ly), (2, lz)]
            .iter()
            .any(|&(i, l)| p[i].abs() < e || (p[i] - l).abs() < e)
    };
    for &(t, k) in &boundary {
        let f = cardiac::mesh::face_vertices(&m.tets[t as usize], k as usize);
        let ps = f.map(|v| m.nodes[v as usize]);
        // All three vertices on one common box face.
        let common = (0..3).any(|i| {
            let l = [lx, ly, lz][i];
            ps.iter().all(|p| p[i].abs() < 1e-12) || ps.iter().all(|p| (p[i] - l).abs() < 1e-12)
        });
        assert!(
            common && ps.iter().all(|&p| on_box(p)),
            "interior boundary face {t}/{k}"
        );
    }

    // Interior tets (hexes not touching the boundary) have all four neighbours.
    for (t, nbt) in nb.iter().enumerate() {
        let h = t / 6;
        let (i, j, k) = (h % nx, (h / nx) % ny, h / (nx * ny));
        let interior = i > 0 && j > 0 && k > 0 && i + 1 < nx && j + 1 < ny && k + 1 < nz;
        if interior {
            assert!(nbt.iter().all(|&x| x != NO_NEIGHBOUR), "tet {t}");
        }
    }

    // Surface tags cover exactly the boundary faces.
    let tagged: usize = m.surfaces.iter().map(|s| s.triangles.len()).sum();
    assert_eq!(tagged, boundary.len());
    let names: Vec<_> = m.surfaces.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["X0", "X1", "Y0", "Y1", "Z0", "Z1"]);
}

#[test]
fn surface_triangles_are_tet_faces_wound_outwards() {
    let (lx, ly, lz) = (2.0, 1.5, 1.0);
    let m = TetMesh::slab(lx, ly, lz, 0.5);
    let centre = [lx / 2.0, ly / 2.0, lz / 2.0];
    for s in &m.surfaces {
        let cells = m.cells_touching_surface(&s.name).unwrap();
        // Every triangle is the face of exactly one tet.
        assert_eq!(cells.len(), s.triangles.len(), "{}", s.name);
        for tri in &s.triangles {
            let p = tri.map(|v| m.nodes[v as usize]);
            let u = [p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]];
            let v = [p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]];
            let n = [
                u[1] * v[2] - u[2] * v[1],
                u[2] * v[0] - u[0] * v[2],
                u[0] * v[1] - u[1] * v[0],
            ];
            let out = [
                p[0][0] - centre[0],
                p[0][1] - centre[1],
                p[0][2] - centre[2],
            ];
            assert!(
                n[0] * out[0] + n[1] * out[1] + n[2] * out[2] > 0.0,
                "{}",
                s.name
            );
        }
    }
    assert!(m.cells_touching_surface("NOPE").is_err());
}

#[test]
fn region_selection() {
    let m = TetMesh::slab(20.0, 7.0, 3.0, 0.5);
    // Niederer stimulus cube [0, 1.5]^3: 3×3×3 hexes.
    let stim = m.cells_in_box([0.0; 3], cardiac::solver::NIEDERER_STIM_CUBE);
    assert_eq!(stim.len(), 27 * 6);
    let ball = m.cells_in_sphere([10.0, 3.5, 1.5], 1e-3);
    assert!(ball.is_empty() || ball.len() <= 6);
    let all = m.cells_in_sphere([10.0, 3.5, 1.5], 100.0);
    assert_eq!(all.len(), m.num_cells());
    let x0 = m.cells_touching_surface("X0").unwrap();
    // 14·6 quads on x = 0, 2 triangles each, each in exactly one tet.
    assert_eq!(x0.len(), 2 * 14 * 6);
    assert!(x0.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn defaults_fill_only_missing_fields() {
    let mut m = TetMesh::slab(1.0, 1.0, 1.0, 0.5);
    m.fibres = None;
    m.cell_types = None;
    let m = m
        .with_default_fibres(Some([0.0, 2.0, 0.0]))
        .unwrap()
        .with_default_cell_type(CellType::Mid);
    assert!(m
        .fibres
        .as_ref()
        .unwrap()
        .iter()
        .all(|&f| f == [0.0, 1.0, 0.0]));
    assert!(m
        .cell_types
        .as_ref()
        .unwrap()
        .iter()
        .all(|&c| c == CellType::Mid));
    m.validate().unwrap();
    // Existing data is kept; a zero direction is an error.
    let m2 = m
        .clone()
        .with_default_fibres(Some([1.0, 0.0, 0.0]))
        .unwrap();
    assert_eq!(m2.fibres, m.fibres);
    assert!(m.clone().with_default_fibres(Some([0.0; 3])).is_err());
    let mut m3 = m.clone();
    m3.fibres = None;
    assert_eq!(m3.clone().with_default_fibres(None).unwrap().fibres, None);
}
