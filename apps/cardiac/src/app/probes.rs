//! The cells whose activation times a slab run reports: the Niederer points P1..P9 and the
//! samples along the diagonal, chosen once from the set-up (the nearest cell centroid to each
//! point), so that an executable can carry them and `exec` can report without the mesh.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::report::{DiagonalSample, PointTime, RunReport, DIAGONAL_SAMPLES, POINTS, SLAB};
use crate::solver::{Results, Setup};

/// Probe cells of a slab run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probes {
    pub dx_mm: Option<f64>,
    pub dt_ode_ms: f64,
    /// (name, point, mesh cell) of P1..P9.
    pub points: Vec<(String, [f64; 3], usize)>,
    /// (s, point, mesh cell) along the diagonal.
    pub diagonal: Vec<(f64, [f64; 3], usize)>,
}

impl Probes {
    /// The probes of a slab at `dx_mm`; none for a user mesh (`dx_mm` = `None`: the points are
    /// slab coordinates). The same cells [`RunReport::new`] samples.
    pub fn select(setup: &Setup, dx_mm: Option<f64>) -> Probes {
        let (points, diagonal) = if dx_mm.is_some() {
            let points = POINTS
                .iter()
                .map(|(n, p)| ((*n).to_string(), *p, setup.nearest_cell(*p)))
                .collect();
            let diagonal = (0..=DIAGONAL_SAMPLES)
                .map(|i| {
                    let s = f64::from(i) / f64::from(DIAGONAL_SAMPLES);
                    let p = SLAB.map(|x| x * s);
                    (s, p, setup.nearest_cell(p))
                })
                .collect();
            (points, diagonal)
        } else {
            (Vec::new(), Vec::new())
        };
        Probes {
            dx_mm,
            dt_ode_ms: crate::report::round_f32(setup.dt_ode),
            points,
            diagonal,
        }
    }

    /// The report of `res` at these probes.
    pub fn report(&self, res: &Results) -> Result<RunReport> {
        let at = |c: usize| {
            res.activation.get(c).copied().with_context(|| {
                format!(
                    "probe cell {c} is outside the {} cells",
                    res.activation.len()
                )
            })
        };
        Ok(RunReport {
            dx_mm: self.dx_mm,
            dt_ode_ms: Some(self.dt_ode_ms),
            cells: Some(res.activation.len()),
            t_ms: res.t,
            points: self
                .points
                .iter()
                .map(|(n, p, c)| {
                    Ok(PointTime {
                        name: n.clone(),
                        point_mm: *p,
                        activation_ms: at(*c)?,
                    })
                })
                .collect::<Result<_>>()?,
            diagonal: self
                .diagonal
                .iter()
                .map(|(s, p, c)| {
                    Ok(DiagonalSample {
                        s: *s,
                        point_mm: *p,
                        activation_ms: at(*c)?,
                    })
                })
                .collect::<Result<_>>()?,
            parameters: None,
            beats: None,
        })
    }
}
