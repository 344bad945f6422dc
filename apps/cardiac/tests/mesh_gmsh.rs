//! Gmsh MSH 4.1 reader and writer: real meshes, round trips, a hand-built binary file and
//! malformed inputs.

use cardiac::mesh::gmsh::{read_msh_bytes, write_msh_to};
use cardiac::mesh::{read_msh, write_msh, CellType, MeshError, ReadOptions, TetMesh};
use std::path::PathBuf;

fn data_mesh(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn check_biv(name: &str, tets: usize) {
    let path = data_mesh(name);
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
    let qmin = (0..m.num_cells())
        .map(|t| m.tet_quality(t))
        .fold(1.0, f64::min);
    let opts = ReadOptions {
        reorient: false,
        validate: false,
        ..ReadOptions::with_scale(10.0)
    };
    let flipped = read_msh(&path, &opts).unwrap().reorient();
    eprintln!("{name}: min quality {qmin:.3}, {flipped} tets reoriented on read");
    assert!(qmin > 1e-3, "{name}: min quality {qmin}");
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

fn to_msh(m: &TetMesh) -> String {
    let mut buf = Vec::new();
    write_msh_to(&mut buf, m).unwrap();
    String::from_utf8(buf).unwrap()
}

fn read_str(s: &str) -> Result<TetMesh, MeshError> {
    read_msh_bytes(s.as_bytes(), "test.msh", &ReadOptions::default())
}

/// A slab with non-uniform fibres and mixed cell types, so a field-to-cell mix-up would show.
fn decorated_slab() -> TetMesh {
    let mut m = TetMesh::slab(2.0, 1.0, 1.5, 0.5);
    let n = m.num_cells();
    m.fibres = Some(
        (0..n)
            .map(|i| {
                let a = i as f64 * 0.1;
                [a.cos(), a.sin(), 0.0]
            })
            .collect(),
    );
    m.cell_types = Some(
        (0..n)
            .map(|i| [CellType::Endo, CellType::Mid, CellType::Epi][i % 3])
            .collect(),
    );
    m
}

/// Equal except fibres, which the reader re-normalises (a last-bit difference at most).
fn assert_same(a: &TetMesh, b: &TetMesh) {
    assert_eq!(a.nodes, b.nodes);
    assert_eq!(a.tets, b.tets);
    assert_eq!(a.cell_types, b.cell_types);
    assert_eq!(a.surfaces, b.surfaces);
    match (&a.fibres, &b.fibres) {
        (Some(fa), Some(fb)) => {
            assert_eq!(fa.len(), fb.len());
            for (x, y) in fa.iter().zip(fb) {
                assert!(
                    (0..3).all(|i| (x[i] - y[i]).abs() < 1e-15),
                    "{x:?} != {y:?}"
                );
            }
        }
        (fa, fb) => assert_eq!(fa, fb),
    }
}

#[test]
fn ascii_round_trip_in_memory_and_on_disk() {
    let m = decorated_slab();
    let back = read_str(&to_msh(&m)).unwrap();
    assert_same(&back, &m);

    let path = std::env::temp_dir().join(format!("poplar-mesh-rt-{}.msh", std::process::id()));
    write_msh(&path, &m).unwrap();
    let back = read_msh(&path, &ReadOptions::default()).unwrap();
    std::fs::remove_file(&path).ok();
    assert_same(&back, &m);

    // Unit scale on read.
    let cm = read_msh_bytes(to_msh(&m).as_bytes(), "x", &ReadOptions::with_scale(10.0)).unwrap();
    assert!((cm.total_volume() - 1000.0 * m.total_volume()).abs() < 1e-9);
}

#[test]
fn round_trip_without_fields() {
    let mut m = TetMesh::slab(1.0, 1.0, 1.0, 0.5);
    m.fibres = None;
    m.cell_types = None;
    assert_eq!(read_str(&to_msh(&m)).unwrap(), m);
}

// ---- a hand-built binary MSH 4.1 file ---------------------------------------------------------

#[derive(Default)]
struct Bin(Vec<u8>);

impl Bin {
    fn s(&mut self, s: &str) -> &mut Self {
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    fn i(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn z(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn f(&mut self, v: f64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
}

/// Two tets sharing the face (p0, p1, p2), sparse node tags, the second tet written with
/// negative orientation, one physical triangle and binary fibre / cell-type fields.
fn tiny_binary(tet_type: i32) -> Vec<u8> {
    let tags: [u64; 5] = [7, 1_000, 3, 99_999_999_999, 42];
    let pts = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [0.0, 0.0, -1.0],
    ];
    let mut b = Bin::default();
    b.s("$MeshFormat\n4.1 1 8\n").i(1).s("\n$EndMeshFormat\n");
    b.s("$PhysicalNames\n1\n2 5 \"ENDO\"\n$EndPhysicalNames\n");
    b.s("$Entities\n").z(0).z(0).z(1).z(1);
    b.i(3);
    for v in [0.0, 0.0, 0.0, 1.0, 1.0, 1.0] {
        b.f(v);
    }
    b.z(1).i(5).z(0);
    b.i(1);
    for v in [0.0, 0.0, -1.0, 1.0, 1.0, 1.0] {
        b.f(v);
    }
    b.z(0).z(1).i(3);
    b.s("\n$EndEntities\n");
    b.s("$Nodes\n").z(1).z(5).z(3).z(99_999_999_999);
    b.i(3).i(1).i(0).z(5);
    for t in tags {
        b.z(t);
    }
    for p in pts {
        for v in p {
            b.f(v);
        }
    }
    b.s("\n$EndNodes\n");
    b.s("$Elements\n").z(2).z(3).z(100).z(201);
    b.i(2).i(3).i(2).z(1);
    b.z(100).z(tags[1]).z(tags[2]).z(tags[3]);
    b.i(3).i(1).i(tet_type).z(2);
    b.z(200).z(tags[0]).z(tags[1]).z(tags[2]).z(tags[3]);
    // Negative orientation: p4 is below the (p0, p1, p2) plane.
    b.z(201).z(tags[0]).z(tags[1]).z(tags[2]).z(tags[4]);
    b.s("\n$EndElements\n");
    b.s("$ElementData\n1\n\"fiber\"\n1\n0.0\n3\n0\n3\n2\n");
    b.i(201).f(0.0).f(3.0).f(0.0);
    b.i(200).f(2.0).f(0.0).f(0.0);
    b.s("\n$EndElementData\n");
    b.s("$ElementData\n1\n\"cell_type\"\n1\n0.0\n3\n0\n1\n2\n");
    b.i(200).f(0.0);
    b.i(201).f(1.0);
    b.s("\n$EndElementData\n");
    b.0
}

#[test]
fn binary_fixture() {
    let bytes = tiny_binary(4);
    let m = read_msh_bytes(&bytes, "tiny.msh", &ReadOptions::default()).unwrap();
    assert_eq!(m.num_nodes(), 5);
    assert_eq!(m.num_cells(), 2);
    assert_eq!(m.tets[0], [0, 1, 2, 3]);
    // Reoriented by swapping the last two vertices.
    assert_eq!(m.tets[1], [0, 1, 4, 2]);
    assert!(m.tet_volume(1) > 0.0);
    assert_eq!(m.fibres, Some(vec![[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]));
    assert_eq!(m.cell_types, Some(vec![CellType::Endo, CellType::Mid]));
    assert_eq!(m.surfaces.len(), 1);
    assert_eq!(m.surfaces[0].name, "ENDO");
    assert_eq!(m.surfaces[0].triangles, vec![[1, 2, 3]]);
    assert_eq!(m.face_neighbours()[0][3], 1);
}

#[test]
fn binary_truncated_everywhere_is_an_error_never_a_panic() {
    let bytes = tiny_binary(4);
    // Up to the end of $Elements every cut is an error; later cuts may drop a whole optional
    // $ElementData section and still read. No cut may panic.
    let end_elements = bytes
        .windows(12)
        .position(|w| w == b"$EndElements")
        .unwrap()
        + 12;
    for cut in 0..bytes.len() {
        let r = read_msh_bytes(&bytes[..cut], "cut.msh", &ReadOptions::default());
        assert!(r.is_err() || cut >= end_elements, "cut at {cut} read fine");
    }
    // A cut inside the element block is reported as truncation at a byte offset.
    let at = bytes.windows(9).position(|w| w == b"$Elements").unwrap() + 60;
    match read_msh_bytes(&bytes[..at], "cut.msh", &ReadOptions::default()) {
        Err(MeshError::Truncated { pos, .. }) => {
            assert!(matches!(pos, cardiac::mesh::Pos::Byte(_)))
        }
        other => panic!("expected Truncated, got {other:?}"),
    }
}

#[test]
fn binary_rejects_hexahedra_and_quadratic_tets() {
    for (ty, name) in [(5, "hexahedron"), (6, "prism"), (11, "10-node tetrahedron")] {
        let bytes = tiny_binary(ty);
        match read_msh_bytes(&bytes, "hex.msh", &ReadOptions::default()) {
            Err(MeshError::UnsupportedElement {
                element,
                element_type,
                type_name,
                ..
            }) => {
                assert_eq!(element, 200);
                assert_eq!(element_type, ty as i64);
                assert!(type_name.contains(name), "{type_name}");
            }
            other => panic!("type {ty}: expected UnsupportedElement, got {other:?}"),
        }
    }
}

// ---- malformed ASCII ---------------------------------------------------------------------------

const TINY_HEAD: &str = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n";

fn tiny_ascii(coords: &str, elements: &str) -> String {
    format!(
        "{TINY_HEAD}$Nodes\n1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n{coords}$EndNodes\n\
         $Elements\n{elements}$EndElements\n"
    )
}

const GOOD_COORDS: &str = "0 0 0\n1 0 0\n0 1 0\n0 0 1\n";

#[test]
fn ascii_tiny_ok() {
    let m = read_str(&tiny_ascii(GOOD_COORDS, "1 1 1 1\n3 1 4 1\n1 1 2 3 4\n")).unwrap();
    assert_eq!(m.tets, vec![[0, 1, 2, 3]]);
    assert!((m.total_volume() - 1.0 / 6.0).abs() < 1e-15);
}

#[test]
fn ascii_truncated() {
    let text = to_msh(&decorated_slab());
    let at = text.find("$Elements").unwrap() + 200;
    match read_str(&text[..at]) {
        Err(MeshError::Truncated { pos, .. }) => {
            assert!(matches!(pos, cardiac::mesh::Pos::Line(l) if l > 10))
        }
        other => panic!("expected Truncated, got {other:?}"),
    }
    // Cut in the middle of the node block.
    let at = text.find("$Nodes").unwrap() + 100;
    assert!(matches!(
        read_str(&text[..at]),
        Err(MeshError::Truncated { .. })
    ));
}

#[test]
fn ascii_unknown_node_tag() {
    let e = read_str(&tiny_ascii(GOOD_COORDS, "1 1 1 1\n3 1 4 1\n9 1 2 3 77\n")).unwrap_err();
    match e {
        MeshError::UnknownNode { element, node, .. } => {
            assert_eq!((element, node), (9, 77));
        }
        other => panic!("expected UnknownNode, got {other:?}"),
    }
}

#[test]
fn ascii_rejects_hexahedron_with_tag() {
    let coords = "0 0 0\n1 0 0\n0 1 0\n0 0 1\n";
    let e = read_str(&tiny_ascii(
        coords,
        "1 1 12 12\n3 1 5 1\n12 1 2 3 4 1 2 3 4\n",
    ))
    .unwrap_err();
    assert!(
        matches!(
            e,
            MeshError::UnsupportedElement {
                element: 12,
                element_type: 5,
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(msg.contains("12") && msg.contains("hexahedron"), "{msg}");
}

#[test]
fn ascii_degenerate_tet() {
    // Four coplanar points.
    let coords = "0 0 0\n1 0 0\n0 1 0\n1 1 0\n";
    let e = read_str(&tiny_ascii(coords, "1 1 1 1\n3 1 4 1\n1 1 2 3 4\n")).unwrap_err();
    assert!(
        matches!(e.innermost(), MeshError::DegenerateTet { cell: 0, .. }),
        "{e:?}"
    );
    assert!(matches!(e, MeshError::InvalidMesh { .. }));
    // Without validation the reader returns the mesh as is.
    let opts = ReadOptions {
        validate: false,
        ..ReadOptions::default()
    };
    let raw = tiny_ascii(coords, "1 1 1 1\n3 1 4 1\n1 1 2 3 4\n");
    assert!(read_msh_bytes(raw.as_bytes(), "x", &opts).is_ok());
}

#[test]
fn ascii_missing_sections() {
    let text = to_msh(&decorated_slab());
    let cut = |start: &str, end: &str| {
        let a = text.find(start).unwrap();
        let b = text.find(end).unwrap() + end.len();
        format!("{}{}", &text[..a], &text[b..])
    };
    let no_nodes = cut("$Nodes", "$EndNodes\n");
    // Elements then refer to a missing node section.
    assert!(matches!(
        read_str(&no_nodes),
        Err(MeshError::MissingSection { ref section, .. }) if section.contains("$Nodes")
    ));
    let no_elements = cut("$Elements", "$EndElements\n");
    assert!(matches!(
        read_str(&no_elements),
        Err(MeshError::MissingSection { ref section, .. }) if section == "$Elements"
    ));
    let no_format = cut("$MeshFormat", "$EndMeshFormat\n");
    assert!(matches!(
        read_str(&no_format),
        Err(MeshError::MissingSection { ref section, .. }) if section == "$MeshFormat"
    ));
    assert!(matches!(
        read_str(""),
        Err(MeshError::MissingSection { .. })
    ));
    // Elements but no tetrahedra.
    let tris_only = tiny_ascii(GOOD_COORDS, "1 1 1 1\n2 1 2 1\n1 1 2 3\n");
    assert!(matches!(
        read_str(&tris_only),
        Err(MeshError::MissingSection { ref section, .. }) if section.contains("tetrahedra")
    ));
}

#[test]
fn ascii_syntax_and_version_errors() {
    let bad = tiny_ascii(
        "0 0 0\n1 zero 0\n0 1 0\n0 0 1\n",
        "1 1 1 1\n3 1 4 1\n1 1 2 3 4\n",
    );
    match read_str(&bad) {
        Err(MeshError::Syntax { pos, field, .. }) => {
            assert_eq!(pos, cardiac::mesh::Pos::Line(12));
            assert_eq!(field, "node coordinate");
        }
        other => panic!("expected Syntax, got {other:?}"),
    }
    let v2 = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n";
    assert!(matches!(read_str(v2), Err(MeshError::Unsupported { .. })));
    // Absurd counts are truncation, not an allocation failure.
    let huge = format!("{TINY_HEAD}$Nodes\n1 99999999999999 1 99999999999999\n$EndNodes\n");
    assert!(matches!(read_str(&huge), Err(MeshError::Truncated { .. })));
    // Invalid cell type value.
    let ct = format!(
        "{}$ElementData\n1\n\"cell_type\"\n1\n0\n3\n0\n1\n1\n1 7\n$EndElementData\n",
        tiny_ascii(GOOD_COORDS, "1 1 1 1\n3 1 4 1\n1 1 2 3 4\n")
    );
    assert!(matches!(read_str(&ct), Err(MeshError::InvalidCellType { value, .. }) if value == 7.0));
    // Zero fibre.
    let zf = format!(
        "{}$ElementData\n1\n\"fibres\"\n1\n0\n3\n0\n3\n1\n1 0 0 0\n$EndElementData\n",
        tiny_ascii(GOOD_COORDS, "1 1 1 1\n3 1 4 1\n1 1 2 3 4\n")
    );
    assert!(matches!(
        read_str(&zf),
        Err(MeshError::ZeroFibre { cell: 0, .. })
    ));
}

#[test]
fn io_error_names_the_file() {
    let e = read_msh("/nonexistent/dir/x.msh", &ReadOptions::default()).unwrap_err();
    assert!(matches!(e, MeshError::Io { .. }));
    assert!(e.to_string().contains("/nonexistent/dir/x.msh"));
}

/// A Gmsh-style ASCII file with features the real meshes do not exercise: nodes spread over
/// point/curve/surface/volume entities with parametric coordinates, sparse tags, unknown and
/// `$NodeData` sections to skip, an empty element block, two physical surfaces, a fibre field
/// named `fibre_direction`, and a negatively oriented tet.
#[test]
fn fixture_with_parametric_nodes() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/two_tets_parametric.msh");
    let m = read_msh(&path, &ReadOptions::default()).unwrap();
    assert_eq!(m.num_nodes(), 5);
    assert_eq!(m.nodes[1], [1.0, 0.0, 0.0]);
    assert_eq!(m.nodes[4], [0.0, 0.0, -1.0]);
    assert_eq!(m.tets, vec![[0, 1, 2, 3], [0, 1, 4, 2]]);
    let f = m.fibres.as_ref().unwrap();
    let h = 0.5f64.sqrt();
    assert_eq!(f[0], [0.0, 0.0, 1.0]);
    assert!((f[1][0] - h).abs() < 1e-15 && (f[1][1] - h).abs() < 1e-15 && f[1][2] == 0.0);
    let names: Vec<_> = m.surfaces.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["TOP", "BOTTOM"]);
    assert_eq!(m.surfaces[0].triangles, vec![[0, 1, 2]]);
    assert_eq!(m.surfaces[1].triangles, vec![[0, 2, 1]]);
    assert_eq!(m.cells_touching_surface("TOP").unwrap(), vec![0, 1]);
}

/// Deterministic fuzzing: overwrite random bytes of valid ASCII and binary files; the reader may
/// fail but must never panic (or allocate absurdly: counts are checked against the file size).
#[test]
fn mutated_files_never_panic() {
    let ascii = to_msh(&decorated_slab()).into_bytes();
    let binary = tiny_binary(4);
    let mut rng = poplar::rand::SplitMix64::new(0x9e37_79b9_7f4a_7c15);
    let mut next = move || rng.next_u64();
    let mut failures = 0;
    for base in [&ascii, &binary] {
        for _ in 0..1500 {
            let mut b = base.clone();
            for _ in 0..1 + next() % 4 {
                let i = (next() % b.len() as u64) as usize;
                b[i] = match next() % 4 {
                    0 => b'9',
                    1 => b'-',
                    2 => b' ',
                    _ => next() as u8,
                };
            }
            if read_msh_bytes(&b, "fuzz.msh", &ReadOptions::default()).is_err() {
                failures += 1;
            }
        }
    }
    assert!(failures > 0);
}
