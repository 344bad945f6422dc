//! What a modeller should know about a problem before trusting its results, printed by
//! `cardiac run` before it starts: a mesh whose extent suggests the wrong unit, cells coarse
//! against the wavefront, a few cells bounding the diffusion step, and a problem that is not
//! the Niederer benchmark's (so P1–P9 cannot be compared with published values).

use super::problem::ProblemSpec;
use crate::matrix::Conductivity;
use crate::mesh::TetMesh;
use crate::report::published_p8_spread;
use crate::solver::Setup;

/// The wavefront's foot width (mm) for a conductivity: `sqrt(D · 1 ms)` with
/// `D = σ_l / (χ Cm)`, the distance diffusion spreads the upstroke's current in the ~1 ms a TP06
/// upstroke lasts (0.31 mm for the Niederer conductivity).
pub fn front_width_mm(cond: &Conductivity) -> f64 {
    // σ in S/m = 1e-3 S/mm; χ in 1/mm; Cm in µF/mm² = 1e-6 F/mm²: D in mm²/s, then per ms.
    let d_mm2_per_ms = cond.sigma_l * 1e-3 / (cond.chi * cond.cm * 1e-6) * 1e-3;
    d_mm2_per_ms.sqrt()
}

/// Characteristic cell size (mm): `(6 · mean tet volume)^(1/3)`, which is dx for the
/// Kuhn-split slab (six tetrahedra per cube).
pub fn cell_size_mm(mesh: &TetMesh) -> f64 {
    let n = mesh.num_cells().max(1);
    let mean = (0..mesh.num_cells())
        .map(|t| mesh.tet_volume(t))
        .sum::<f64>()
        / n as f64;
    (6.0 * mean).cbrt()
}

/// A warning when a few cells bound the diffusion step (an ODE step would take fewer diffusion
/// steps without the 10 smallest): the smallest cell's own stable step, where it is and its
/// shape, the median cell's, and the diffusion steps without the 10, 100 and 1,000 smallest.
pub fn step_limit_advice(setup: &Setup, mesh: &TetMesh) -> Option<String> {
    let l = &setup.step_limit;
    let &(cell, dt) = l.worst.first()?;
    let steps = |dt_pde: f64| (f64::from(setup.dt_ode) / dt_pde).ceil().max(1.0) as usize;
    let without: Vec<(usize, usize)> = l.without.iter().map(|&(k, d)| (k, steps(d))).collect();
    // Only when leaving out a few (10) cells would save diffusion steps.
    if without.first().is_none_or(|&(_, p)| p >= setup.pde_steps) {
        return None;
    }
    let c = setup
        .centroids
        .get(cell as usize)
        .copied()
        .unwrap_or_default();
    let quality = if (cell as usize) < mesh.num_cells() {
        format!(", shape quality {:.3}", mesh.tet_quality(cell as usize))
    } else {
        String::new()
    };
    let counts: Vec<String> = without.iter().map(|(k, _)| k.to_string()).collect();
    let steps: Vec<String> = without.iter().map(|(_, p)| p.to_string()).collect();
    Some(format!(
        "warning: a few cells bound the diffusion step: the smallest cell's own stable step is \
        {dt:.5} ms (cell {cell} at ({:.2}, {:.2}, {:.2}) mm{quality}), the median cell's {:.4} \
        ms. Without the {} smallest cells an ODE step would take {} diffusion steps instead of \
        {}: improve the mesh there (apps/cardiac/tools/heart_mesh.py before version 0.5 left \
        slivers at the base: generate such meshes again; its --optimize netgen improves the \
        rest)",
        c[0],
        c[1],
        c[2],
        l.median_dt,
        counts.join(" / "),
        steps.join(" / "),
        setup.pde_steps
    ))
}

/// What a modeller should know about a problem before trusting its results: a mesh whose
/// extent suggests centimetres read as millimetres, cells coarse against the wavefront, a slab
/// resolution or stimulus that is not the benchmark's. Each line says what to do.
pub fn advice(spec: &ProblemSpec, mesh: &TetMesh, cond: &Conductivity) -> Vec<String> {
    let mut out = Vec::new();
    if spec.mesh.is_some() {
        if let Some((lo, hi)) = mesh.bounding_box() {
            let extent = (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max);
            if extent < 15.0 {
                out.push(format!(
                    "warning: the mesh spans only {extent:.2} mm at --scale {}: a human heart is \
                    about 50–120 mm across. If its coordinates are in cm, give --scale {}; in m, \
                    --scale {}",
                    spec.scale,
                    spec.scale * 10.0,
                    spec.scale * 1000.0
                ));
            }
        }
    }
    let h = cell_size_mm(mesh);
    let front = front_width_mm(cond);
    if h > front {
        let spread = published_p8_spread(0.5)
            .map(|(a, b)| {
                format!(" (the Niederer slab's P8 at 0.5 mm: published codes spread {a}–{b} ms)")
            })
            .unwrap_or_default();
        out.push(format!(
            "warning: cells of {h:.2} mm are coarse against the wavefront's foot ({front:.2} mm for \
            σ_l = {:.4} S/m): conduction will be slower than converged, and activation times \
            depend on the mesh{spread}. Refine to {front:.2} mm or finer (the benchmark's published codes agree \
             within 8 ms from 0.1 mm)",
            cond.sigma_l
        ));
    }
    if let Some(dx) = spec.slab_dx() {
        if published_p8_spread(dx).is_none() {
            out.push(format!(
                "note: dx {dx} mm is not a resolution of the Niederer benchmark (0.5, 0.2, 0.1 mm): \
                P1–P9 cannot be compared with published values"
            ));
        }
        if !spec.benchmark_tissue() {
            out.push(
                "note: the tissue parameters (σ_l, σ_t, χ, Cm) are not the benchmark's: P1–P9 \
                 cannot be compared with published values"
                    .to_string(),
            );
        }
        if !spec.benchmark_stimulus() {
            out.push(
                "note: the stimulus is not the benchmark's (one pulse of 50 µA/mm³ for 2 ms from 0 ms in the \
                corner cube): P1–P9 cannot be compared with published values"
                    .to_string(),
            );
        }
        if !spec.benchmark_cells() {
            out.push(
                "note: the cells are not the benchmark's (published TP06 epi, activation at 0 mV): \
                 P1–P9 cannot be compared with published values"
                    .to_string(),
            );
        }
    }
    out
}
