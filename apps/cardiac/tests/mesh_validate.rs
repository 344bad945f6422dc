//! `TetMesh::validate`: one test per invariant, each checking the typed error variant.

use cardiac::mesh::{CellType, MeshError, SurfaceTag, TetMesh, MIN_TET_QUALITY};

fn one_tet() -> TetMesh {
    TetMesh {
        nodes: vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
        ],
        tets: vec![[0, 1, 2, 3]],
        fibres: Some(vec![[1.0, 0.0, 0.0]]),
        sheets: None,
        cell_types: Some(vec![CellType::Epi]),
        surfaces: vec![SurfaceTag {
            name: "S".into(),
            triangles: vec![[1, 2, 3]],
        }],
    }
}

#[test]
fn valid_single_tet() {
    let m = one_tet();
    m.validate().unwrap();
    assert!((m.tet_volume(0) - 1.0 / 6.0).abs() < 1e-15);
    assert_eq!(m.centroid(0), [0.25, 0.25, 0.25]);
    assert_eq!(m.bounding_box(), Some(([0.0; 3], [1.0; 3])));
    assert!((m.tet_quality(0) - 0.5).abs() < 1e-12);
    assert_eq!(m.face_neighbours(), vec![[u32::MAX; 4]]);
    assert_eq!(TetMesh::default().bounding_box(), None);
    TetMesh::default().validate().unwrap();
}

#[test]
fn face_area_vectors_point_out_and_close() {
    let m = TetMesh::slab(1.0, 1.0, 1.0, 0.5);
    for t in 0..m.num_cells() {
        let c = m.centroid(t);
        let mut sum = [0.0; 3];
        for k in 0..4 {
            let n = m.face_area_vector(t, k);
            let f = cardiac::mesh::face_vertices(&m.tets[t], k).map(|v| m.nodes[v as usize]);
            let fc: [f64; 3] = std::array::from_fn(|i| (f[0][i] + f[1][i] + f[2][i]) / 3.0);
            let out: f64 = (0..3).map(|i| n[i] * (fc[i] - c[i])).sum();
            assert!(out > 0.0);
            for i in 0..3 {
                sum[i] += n[i];
            }
        }
        assert!(sum.iter().all(|x| x.abs() < 1e-14), "{sum:?}");
    }
    // Unit right tet: face 0 is the slanted face with area √3/2.
    let n = one_tet().face_area_vector(0, 0);
    assert!((n.iter().map(|x| x * x).sum::<f64>().sqrt() - 3f64.sqrt() / 2.0).abs() < 1e-15);
}

#[test]
fn index_out_of_range() {
    let mut m = one_tet();
    m.tets[0][2] = 4;
    assert!(matches!(
        m.validate(),
        Err(MeshError::NodeIndexOutOfRange {
            cell: 0,
            node: 4,
            num_nodes: 4
        })
    ));
    // face_neighbours must not panic (or allocate by the bad index) on such a mesh.
    assert_eq!(m.face_neighbours().len(), 1);
    m.tets[0][2] = u32::MAX - 1;
    assert_eq!(m.face_neighbours(), vec![[u32::MAX; 4]]);

    let mut m = one_tet();
    m.surfaces[0].triangles[0][1] = 99;
    assert!(matches!(
        m.validate(),
        Err(MeshError::SurfaceIndexOutOfRange {
            triangle: 0,
            node: 99,
            ..
        })
    ));
}

#[test]
fn degenerate_and_negative() {
    let mut m = one_tet();
    m.tets[0].swap(2, 3);
    assert!(matches!(
        m.validate(),
        Err(MeshError::NegativeOrientation { cell: 0, .. })
    ));
    assert_eq!(m.reorient(), 1);
    m.validate().unwrap();

    let mut m = one_tet();
    // Nearly flat: height 1e-9 relative to unit edges.
    m.nodes[3] = [0.3, 0.3, 1e-9];
    match m.validate() {
        Err(MeshError::DegenerateTet {
            cell: 0,
            quality,
            threshold,
        }) => {
            assert!(quality < threshold && threshold == MIN_TET_QUALITY)
        }
        other => panic!("expected DegenerateTet, got {other:?}"),
    }
    // Repeated vertex.
    let mut m = one_tet();
    m.tets[0] = [0, 1, 2, 2];
    assert!(matches!(m.validate(), Err(MeshError::DegenerateTet { .. })));
    // Quality is scale free: a tiny but well-shaped tet is fine.
    let mut m = one_tet();
    for p in &mut m.nodes {
        *p = p.map(|x| x * 1e-6);
    }
    m.validate().unwrap();
}

#[test]
fn non_finite_coordinates() {
    let mut m = one_tet();
    m.nodes[1][0] = f64::NAN;
    assert!(matches!(
        m.validate(),
        Err(MeshError::NonFiniteNode { node: 1, .. })
    ));
}

#[test]
fn field_lengths_and_unit_fibres() {
    let mut m = one_tet();
    m.fibres = Some(vec![]);
    assert!(matches!(
        m.validate(),
        Err(MeshError::FieldLength {
            expected: 1,
            found: 0,
            ..
        })
    ));
    let mut m = one_tet();
    m.cell_types = Some(vec![CellType::Endo; 2]);
    assert!(matches!(
        m.validate(),
        Err(MeshError::FieldLength {
            expected: 1,
            found: 2,
            ..
        })
    ));
    let mut m = one_tet();
    m.fibres = Some(vec![[0.5, 0.0, 0.0]]);
    assert!(matches!(
        m.validate(),
        Err(MeshError::NonUnitFibre { cell: 0, .. })
    ));
    m.fibres = Some(vec![[f64::NAN, 0.0, 0.0]]);
    assert!(matches!(
        m.validate(),
        Err(MeshError::NonUnitFibre { cell: 0, .. })
    ));
}

#[test]
fn non_manifold_face() {
    // Three tets on the same face (0, 1, 2), apexes above, below and far above.
    let mut m = one_tet();
    m.nodes.push([0.0, 0.0, -1.0]);
    m.nodes.push([0.1, 0.1, 2.0]);
    m.tets = vec![[0, 1, 2, 3], [0, 2, 1, 4], [0, 1, 2, 5]];
    m.fibres = None;
    m.cell_types = None;
    assert!(matches!(
        m.validate(),
        Err(MeshError::NonManifoldFace { .. })
    ));
    assert!(m.try_face_neighbours().is_err());
    // The infallible form reports the over-shared face as boundary everywhere.
    let nb = m.face_neighbours();
    assert!(nb.iter().all(|n| n[3] == u32::MAX));
}

#[test]
fn sheets_must_be_unit_orthogonal_to_the_fibre_and_need_fibres() {
    let mut m = one_tet();
    m.sheets = Some(vec![[0.0, 1.0, 0.0]]);
    m.validate().unwrap();
    m.sheets = Some(vec![[0.6, 0.8, 0.0]]);
    match m.validate() {
        Err(MeshError::NonOrthonormalSheet { cell: 0, .. }) => {}
        other => panic!("{other:?}"),
    }
    m.sheets = Some(vec![[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]);
    match m.validate() {
        Err(MeshError::FieldLength {
            expected: 1,
            found: 2,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    m.sheets = Some(vec![[0.0, 1.0, 0.0]]);
    m.fibres = None;
    match m.validate() {
        Err(MeshError::SheetsWithoutFibres { .. }) => {}
        other => panic!("{other:?}"),
    }
}
