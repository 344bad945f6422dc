//! Reads a large mesh from `tools/heart_mesh.py` as `cardiac` does and checks that it carries
//! fibres, sheets, cell types and the four surfaces; prints its size, volume, cell-type
//! fractions by volume and the read time. Exits non-zero naming what is missing.
//!
//! `cargo run --release -p cardiac --example check_heart_mesh -- heart04.msh`

use cardiac::mesh::{read_mesh, ReadOptions};

fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: check_heart_mesh MESH.msh"))?;
    let t0 = std::time::Instant::now();
    let opts = ReadOptions {
        reorient: false,
        ..ReadOptions::with_scale(10.0)
    };
    let m = read_mesh(&path, &opts)?;
    anyhow::ensure!(m.fibres.is_some(), "{path}: no fibres");
    anyhow::ensure!(m.sheets.is_some(), "{path}: no sheets");
    let types = m
        .cell_types
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("{path}: no cell types"))?;
    for name in ["BASE", "ENDO_LV", "ENDO_RV", "EPI"] {
        anyhow::ensure!(m.surface(name).is_some(), "{path}: no surface {name}");
    }
    let mut v = [0.0; 3];
    for (t, ct) in types.iter().enumerate() {
        v[*ct as usize] += m.tet_volume(t);
    }
    let total: f64 = v.iter().sum();
    println!(
        "{path}: {} tetrahedra, {} nodes, volume {:.0} mm³, endo/mid/epi {:.3}/{:.3}/{:.3}, read in {:.1} s",
        m.num_cells(),
        m.num_nodes(),
        m.total_volume(),
        v[0] / total,
        v[1] / total,
        v[2] / total,
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
