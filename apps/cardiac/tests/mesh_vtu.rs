//! VTU reader and writer: round trips, VTK-style base64 blocks, and malformed inputs.

use base64::Engine as _;
use cardiac::mesh::vtu::{read_vtu_bytes, write_vtu_to};
use cardiac::mesh::{
    read_mesh, read_vtu, write_vtu, write_vtu_with, CellType, MeshError, ReadOptions, TetMesh,
    VtuEncoding,
};

fn decorated_slab() -> TetMesh {
    let mut m = TetMesh::slab(2.0, 1.0, 1.5, 0.5);
    let n = m.num_cells();
    m.fibres = Some(
        (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    [1.0, 0.0, 0.0]
                } else {
                    [0.0, 0.6, 0.8]
                }
            })
            .collect(),
    );
    m.cell_types = Some(
        (0..n)
            .map(|i| [CellType::Endo, CellType::Mid, CellType::Epi][i % 3])
            .collect(),
    );
    m.surfaces.clear(); // VTU does not carry surface tags.
    m
}

fn to_vtu(m: &TetMesh, enc: VtuEncoding, cell: &[(&str, &[f32])]) -> Vec<u8> {
    let mut buf = Vec::new();
    write_vtu_to(&mut buf, m, cell, &[], enc).unwrap();
    buf
}

fn read(bytes: &[u8]) -> Result<TetMesh, MeshError> {
    read_vtu_bytes(bytes, "test.vtu", &ReadOptions::default())
}

#[test]
fn round_trip_both_encodings() {
    let m = decorated_slab();
    let act: Vec<f32> = (0..m.num_cells()).map(|i| i as f32 * 0.5).collect();
    for enc in [VtuEncoding::Ascii, VtuEncoding::Base64] {
        let bytes = to_vtu(&m, enc, &[("activation", &act)]);
        let back = read(&bytes).unwrap();
        assert_eq!(back, m, "{enc:?}");
    }
    let ascii = to_vtu(&m, VtuEncoding::Ascii, &[("activation", &act)]);
    let text = String::from_utf8(ascii).unwrap();
    assert!(text.contains("Name=\"activation\""));
    assert!(text.contains("0 0.5 1 1.5 2"));
}

#[test]
fn round_trip_on_disk_with_point_data_and_scale() {
    let m = decorated_slab();
    let dir = std::env::temp_dir();
    let path = dir.join(format!("poplar-mesh-rt-{}.vtu", std::process::id()));
    let act: Vec<f32> = vec![1.0; m.num_cells()];
    let pv: Vec<f32> = vec![-85.0; m.num_nodes()];
    write_vtu_with(
        &path,
        &m,
        &[("act", &act)],
        &[("v", &pv)],
        VtuEncoding::Base64,
    )
    .unwrap();
    assert_eq!(read_vtu(&path, &ReadOptions::default()).unwrap(), m);
    assert_eq!(read_mesh(&path, &ReadOptions::default()).unwrap(), m);
    let cm = read_vtu(&path, &ReadOptions::with_scale(10.0)).unwrap();
    assert!((cm.total_volume() - 1000.0 * m.total_volume()).abs() < 1e-9);
    write_vtu(&path, &m, &[]).unwrap();
    assert_eq!(read_vtu(&path, &ReadOptions::default()).unwrap(), m);
    std::fs::remove_file(&path).ok();

    // Array length mismatches are rejected before anything is written.
    let short = vec![0.0f32; 3];
    let e = write_vtu(&path, &m, &[("act", &short)]).unwrap_err();
    assert!(
        matches!(e, MeshError::FieldLength { expected, found: 3, .. } if expected == m.num_cells())
    );
    assert!(!path.exists());
}

// ---- hand-written files ------------------------------------------------------------------------

/// One tet, with the given Cells block pieces and optional CellData.
fn tiny(points: &str, conn: &str, offsets: &str, types: &str, celldata: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<VTKFile type="UnstructuredGrid" version="0.1" byte_order="LittleEndian">
 <UnstructuredGrid>
  <Piece NumberOfPoints="4" NumberOfCells="1">
   <CellData>{celldata}</CellData>
   <Points>{points}</Points>
   <Cells>
    <DataArray type="Int32" Name="connectivity" format="ascii">{conn}</DataArray>
    <DataArray type="Int32" Name="offsets" format="ascii">{offsets}</DataArray>
    <DataArray type="UInt8" Name="types" format="ascii">{types}</DataArray>
   </Cells>
  </Piece>
 </UnstructuredGrid>
</VTKFile>
"#
    )
}

const PTS: &str = r#"<DataArray type="Float32" NumberOfComponents="3" format="ascii">0 0 0 1 0 0 0 1 0 0 0 1</DataArray>"#;

#[test]
fn tiny_ascii_with_fields_and_reorientation() {
    let cd = r#"<DataArray type="Float64" Name="fibers" NumberOfComponents="3" format="ascii">0 0 2</DataArray>
                <DataArray type="Int32" Name="cell_type" format="ascii">1</DataArray>"#;
    // Negatively oriented on input.
    let m = read(tiny(PTS, "0 2 1 3", "4", "10", cd).as_bytes()).unwrap();
    assert_eq!(m.tets, vec![[0, 2, 3, 1]]);
    assert!(m.tet_volume(0) > 0.0);
    assert_eq!(m.fibres, Some(vec![[0.0, 0.0, 1.0]]));
    assert_eq!(m.cell_types, Some(vec![CellType::Mid]));
}

/// Base64 the way VTK writes uncompressed binary: the UInt32 size header and the data as two
/// separately padded base64 blocks.
fn vtk_b64_f64(values: &[f64]) -> String {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let e = &base64::engine::general_purpose::STANDARD;
    format!(
        "{}{}",
        e.encode((data.len() as u32).to_le_bytes()),
        e.encode(&data)
    )
}

#[test]
fn vtk_style_split_base64_header() {
    let pts = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let b64 = vtk_b64_f64(&pts);
    assert!(
        b64[..8].ends_with("=="),
        "header block is separately padded"
    );
    let p = format!(
        r#"<DataArray type="Float64" NumberOfComponents="3" format="binary">
        {b64}
        </DataArray>"#
    );
    let m = read(tiny(&p, "0 1 2 3", "4", "10", "").as_bytes()).unwrap();
    assert_eq!(m.nodes[1], [1.0, 0.0, 0.0]);
    assert!(m.fibres.is_none() && m.cell_types.is_none());
}

#[test]
fn big_endian_binary() {
    let pts = [
        0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0,
    ];
    let data: Vec<u8> = pts.iter().flat_map(|v| v.to_be_bytes()).collect();
    let mut bytes = (data.len() as u32).to_be_bytes().to_vec();
    bytes.extend_from_slice(&data);
    let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let p = format!(
        r#"<DataArray type="Float32" NumberOfComponents="3" format="binary">{b64}</DataArray>"#
    );
    let text = tiny(&p, "0 1 2 3", "4", "10", "").replace("LittleEndian", "BigEndian");
    let m = read(text.as_bytes()).unwrap();
    assert_eq!(m.nodes[3], [0.0, 0.0, 1.0]);
}

#[test]
fn bad_base64() {
    let p =
        r#"<DataArray type="Float64" NumberOfComponents="3" format="binary">AAAA!!!*</DataArray>"#;
    let e = read(tiny(p, "0 1 2 3", "4", "10", "").as_bytes()).unwrap_err();
    assert!(matches!(e, MeshError::Base64 { .. }), "{e:?}");
    // Valid base64 whose size header promises more bytes than follow.
    let mut bytes = 1000u32.to_le_bytes().to_vec();
    bytes.extend_from_slice(&[0u8; 16]);
    let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let p = format!(
        r#"<DataArray type="Float64" NumberOfComponents="3" format="binary">{b64}</DataArray>"#
    );
    let e = read(tiny(&p, "0 1 2 3", "4", "10", "").as_bytes()).unwrap_err();
    assert!(matches!(e, MeshError::Truncated { .. }), "{e:?}");
}

#[test]
fn non_tetrahedral_cells() {
    let e = read(tiny(PTS, "0 1 2 3", "4", "12", "").as_bytes()).unwrap_err();
    match e {
        MeshError::UnsupportedElement {
            element,
            element_type,
            type_name,
            ..
        } => {
            assert_eq!((element, element_type), (0, 12));
            assert_eq!(type_name, "VTK_HEXAHEDRON");
        }
        other => panic!("expected UnsupportedElement, got {other:?}"),
    }
}

#[test]
fn bad_indices_and_offsets() {
    let e = read(tiny(PTS, "0 1 2 9", "4", "10", "").as_bytes()).unwrap_err();
    assert!(
        matches!(
            e,
            MeshError::UnknownNode {
                element: 0,
                node: 9,
                ..
            }
        ),
        "{e:?}"
    );
    let e = read(tiny(PTS, "0 1 2 -1", "4", "10", "").as_bytes()).unwrap_err();
    assert!(
        matches!(e, MeshError::UnknownNode { node: -1, .. }),
        "{e:?}"
    );
    let e = read(tiny(PTS, "0 1 2 3", "3", "10", "").as_bytes()).unwrap_err();
    assert!(
        matches!(e, MeshError::Syntax { ref field, .. } if field == "offsets"),
        "{e:?}"
    );
    let e = read(tiny(PTS, "0 1 2", "4", "10", "").as_bytes()).unwrap_err();
    assert!(matches!(e, MeshError::Truncated { .. }), "{e:?}");
    let e = read(tiny(PTS, "0 1 2 3", "4", "10 10", "").as_bytes()).unwrap_err();
    assert!(matches!(e, MeshError::Syntax { .. }), "{e:?}");
}

#[test]
fn degenerate_tet() {
    let flat = r#"<DataArray type="Float32" NumberOfComponents="3" format="ascii">0 0 0 1 0 0 0 1 0 1 1 0</DataArray>"#;
    let e = read(tiny(flat, "0 1 2 3", "4", "10", "").as_bytes()).unwrap_err();
    assert!(
        matches!(e.innermost(), MeshError::DegenerateTet { cell: 0, .. }),
        "{e:?}"
    );
}

#[test]
fn unsupported_and_missing() {
    let base = tiny(PTS, "0 1 2 3", "4", "10", "");
    let z = base.replace(
        "byte_order=",
        "compressor=\"vtkZLibDataCompressor\" byte_order=",
    );
    assert!(matches!(
        read(z.as_bytes()),
        Err(MeshError::Unsupported { .. })
    ));
    let ap = base.replacen("format=\"ascii\"", "format=\"appended\" offset=\"0\"", 1);
    assert!(matches!(
        read(ap.as_bytes()),
        Err(MeshError::Unsupported { .. })
    ));
    let poly = base.replace("UnstructuredGrid", "PolyData");
    assert!(matches!(
        read(poly.as_bytes()),
        Err(MeshError::Unsupported { .. })
    ));

    let no_points = base.replace(PTS, "");
    assert!(matches!(
        read(no_points.as_bytes()),
        Err(MeshError::MissingSection { ref section, .. }) if section.contains("Points")
    ));
    let no_types = base.replace(
        r#"<DataArray type="UInt8" Name="types" format="ascii">10</DataArray>"#,
        "",
    );
    assert!(matches!(
        read(no_types.as_bytes()),
        Err(MeshError::MissingSection { ref section, .. }) if section.contains("types")
    ));
    assert!(matches!(
        read(b"<foo/>"),
        Err(MeshError::MissingSection { .. })
    ));
    let bad_num = tiny(PTS, "0 1 two 3", "4", "10", "");
    assert!(matches!(
        read(bad_num.as_bytes()),
        Err(MeshError::Syntax { .. })
    ));
    let bad_ct = tiny(
        PTS,
        "0 1 2 3",
        "4",
        "10",
        r#"<DataArray type="Int32" Name="cell_type" format="ascii">5</DataArray>"#,
    );
    assert!(matches!(
        read(bad_ct.as_bytes()),
        Err(MeshError::InvalidCellType { cell: 0, .. })
    ));
    assert!(matches!(
        read(&[0xff, 0xfe, 0x00]),
        Err(MeshError::Unsupported { .. })
    ));
}

#[test]
fn truncated_xml_never_panics() {
    let m = decorated_slab();
    for enc in [VtuEncoding::Ascii, VtuEncoding::Base64] {
        let bytes = to_vtu(&m, enc, &[]);
        let end = bytes.len() - "\n".len();
        for cut in (0..bytes.len()).step_by(7).chain(end - 12..end) {
            let r = read(&bytes[..cut]);
            // Even a file missing only its closing tags is refused: it was cut short.
            assert!(r.is_err(), "{enc:?}: cut at {cut} read fine");
        }
        assert!(read(&bytes).is_ok());
        let cut = bytes.len() - "</VTKFile>\n".len();
        let e = read(&bytes[..cut]).unwrap_err();
        assert!(
            matches!(&e, MeshError::MissingSection { section, .. } if section.contains("</VTKFile>")),
            "{e}"
        );
    }
    // A cut in the middle of an element is an XML error with a byte offset.
    let bytes = to_vtu(&m, VtuEncoding::Ascii, &[]);
    let text = String::from_utf8(bytes).unwrap();
    let at = text.find("<Cells>").unwrap() + 3;
    let e = read(&text.as_bytes()[..at]).unwrap_err();
    assert!(
        matches!(e, MeshError::Xml { .. } | MeshError::MissingSection { .. }),
        "{e:?}"
    );
}

/// Deterministic fuzzing of both encodings: errors are fine, panics are not.
#[test]
fn mutated_files_never_panic() {
    let m = decorated_slab();
    let mut rng = poplar::rand::SplitMix64::new(0x2545_f491_4f6c_dd1d);
    let mut next = move || rng.next_u64();
    for enc in [VtuEncoding::Ascii, VtuEncoding::Base64] {
        let base = to_vtu(&m, enc, &[]);
        for _ in 0..1000 {
            let mut b = base.clone();
            for _ in 0..1 + next() % 4 {
                let i = (next() % b.len() as u64) as usize;
                b[i] = match next() % 5 {
                    0 => b'9',
                    1 => b'<',
                    2 => b'"',
                    3 => b'=',
                    _ => next() as u8,
                };
            }
            let _ = read(&b);
        }
    }
}
