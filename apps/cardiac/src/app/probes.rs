//! The cells whose activation times a slab run reports: the Niederer points P1..P9 and the
//! samples along the diagonal, chosen once from the set-up (the nearest cell centroid to each
//! point), so that an executable can carry them and `exec` can report without the mesh.

use serde::{Deserialize, Serialize};

use crate::report::{DIAGONAL_SAMPLES, POINTS, SLAB};
use crate::solver::Setup;

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
    /// slab coordinates): the cells `RunReport::new` reads.
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
}
