//! Gmsh MSH 4.1 ASCII writer: what [`read_msh`](super::read_msh) reads back exactly.

use std::io::Write;
use std::path::Path;

#[cfg(doc)]
use super::super::SurfaceTag;
use super::super::{MeshError, TetMesh};

/// Write `mesh` as Gmsh MSH 4.1 ASCII, atomically: one volume entity holding all nodes and tets, one surface
/// entity + physical group per [`SurfaceTag`], and `$ElementData` fields `fibres` and
/// `cell_type` when present, so [`read_msh`](super::read_msh) restores the mesh exactly (coordinates are written
/// in shortest round-trip form).
pub fn write_msh(path: impl AsRef<Path>, mesh: &TetMesh) -> Result<(), MeshError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let io = |source| MeshError::Io {
        file: file.clone(),
        error: source,
    };
    // Through a temporary file renamed into place (app-support's AtomicFile): a failed write
    // never leaves a truncated mesh under the final name, nor touches the one it replaces.
    let mut w = app_support::output::AtomicFile::create(path).map_err(io)?;
    write_msh_to(&mut w, mesh).map_err(io)?;
    w.commit().map_err(io)
}

/// [`write_msh`] into any writer.
pub fn write_msh_to(w: &mut impl Write, mesh: &TetMesh) -> std::io::Result<()> {
    let ns = mesh.surfaces.len();
    let (lo, hi) = mesh.bounding_box().unwrap_or(([0.0; 3], [0.0; 3]));
    let bbox = format!(
        "{} {} {} {} {} {}",
        lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]
    );
    writeln!(w, "$MeshFormat\n4.1 0 8\n$EndMeshFormat")?;
    writeln!(w, "$PhysicalNames\n{}", ns + 1)?;
    for (i, s) in mesh.surfaces.iter().enumerate() {
        // Quotes cannot be escaped in MSH names.
        writeln!(w, "2 {} \"{}\"", i + 1, s.name.replace('"', "'"))?;
    }
    writeln!(w, "3 {} \"tissue\"\n$EndPhysicalNames", ns + 1)?;

    writeln!(w, "$Entities\n0 0 {ns} 1")?;
    for i in 0..ns {
        writeln!(w, "{} {bbox} 1 {} 0", i + 1, i + 1)?;
    }
    write!(w, "1 {bbox} 1 {} {ns}", ns + 1)?;
    for i in 0..ns {
        write!(w, " {}", i + 1)?;
    }
    writeln!(w, "\n$EndEntities")?;

    let nn = mesh.nodes.len();
    writeln!(w, "$Nodes\n1 {nn} {} {nn}", nn.min(1))?;
    writeln!(w, "3 1 0 {nn}")?;
    for i in 1..=nn {
        writeln!(w, "{i}")?;
    }
    for p in &mesh.nodes {
        writeln!(w, "{} {} {}", p[0], p[1], p[2])?;
    }
    writeln!(w, "$EndNodes")?;

    let ntri: usize = mesh.surfaces.iter().map(|s| s.triangles.len()).sum();
    let total = ntri + mesh.tets.len();
    writeln!(w, "$Elements\n{} {total} {} {total}", ns + 1, total.min(1))?;
    let mut tag = 0usize;
    for (i, s) in mesh.surfaces.iter().enumerate() {
        writeln!(w, "2 {} 2 {}", i + 1, s.triangles.len())?;
        for t in &s.triangles {
            tag += 1;
            writeln!(w, "{tag} {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1)?;
        }
    }
    writeln!(w, "3 1 4 {}", mesh.tets.len())?;
    let first_tet = tag + 1;
    for t in &mesh.tets {
        tag += 1;
        writeln!(
            w,
            "{tag} {} {} {} {}",
            t[0] + 1,
            t[1] + 1,
            t[2] + 1,
            t[3] + 1
        )?;
    }
    writeln!(w, "$EndElements")?;

    let header = |w: &mut dyn Write, name: &str, comps: usize| {
        writeln!(
            w,
            "$ElementData\n1\n\"{name}\"\n1\n0.0\n3\n0\n{comps}\n{}",
            mesh.tets.len()
        )
    };
    if let Some(f) = &mesh.fibres {
        header(w, "fibres", 3)?;
        for (i, d) in f.iter().enumerate() {
            writeln!(w, "{} {} {} {}", first_tet + i, d[0], d[1], d[2])?;
        }
        writeln!(w, "$EndElementData")?;
    }
    if let Some(sh) = &mesh.sheets {
        header(w, "sheets", 3)?;
        for (i, d) in sh.iter().enumerate() {
            writeln!(w, "{} {} {} {}", first_tet + i, d[0], d[1], d[2])?;
        }
        writeln!(w, "$EndElementData")?;
    }
    if let Some(ct) = &mesh.cell_types {
        header(w, "cell_type", 1)?;
        for (i, &c) in ct.iter().enumerate() {
            writeln!(w, "{} {}", first_tet + i, c as u8)?;
        }
        writeln!(w, "$EndElementData")?;
    }
    Ok(())
}
