//! Gmsh MSH 4.1 reader and writer: real meshes, round trips, a hand-built binary file and
//! malformed inputs.

use cardiac::mesh::gmsh::{read_msh_bytes, write_msh_to};
use cardiac::mesh::{read_msh, write_msh, CellType, MeshError, ReadOptions, TetMesh};
use std::path::PathBuf;

fn shared_mesh(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/reference/meshes")
        .join(name)
}

fn check_biv(name: &str, tets: usize) {
    let path = shared_mesh(name);
    assert!(
        path.exists(),
        "{} not found: shared/ must sit beside the repo",
        path.display()
    );
    let m = read_msh(&path, &ReadOptions::with_scale(10.0)).unwrap();
    assert_eq!(m.num_cells(), tets);
    for tag in ["BASE", "ENDO_LV", "ENDO_RV", "EPI"] {
        let s = m
            .surface(tag)
            .unwrap_or_else(|| panic!("{name}: no surface {tag}"));
        assert!(!s.triangles.is_empty());
        assert!(!m.cells_touching_surface(tag).unwrap().is_empty());
    }
    assert!(m.fibres.is_none() && m.cell_types.is_none());
    m.validate().unwrap();
    // The file is in cm; read in mm the heart is a few centimetres across.
    let (lo, hi) = m.bounding_box().unwrap();
    let extent = (0..3).map(|i| hi[i] - lo[i]).fold(0.0, f64::max);
    assert!(extent > 20.0 && extent < 200.0, "extent {extent} mm");
    // Every boundary face of the tets carries a surface tag (closed, tagged surface).
    let boundary = m.boundary_faces().len();
    let tagged: usize = m.surfaces.iter().map(|s| s.triangles.len()).sum();
    assert_eq!(boundary, tagged, "{name}");
}

#[test]
fn reads_biv_0_3() {
    check_biv("biv_0.3.msh", 6_437);
}

#[test]
fn reads_biv_0_15() {
    check_biv("biv_0.15.msh", 39_714);
}
