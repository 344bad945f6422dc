//! What a slab run reports against the Niederer benchmark: activation times at its points
//! P1..P9 and along the slab diagonal (the samples of `results.json`,
//! written by `cardiac run` and `exec`), and the published spread of P8.

use serde::{Deserialize, Serialize};

/// Niederer benchmark points (mm), compared by coordinate.
pub const POINTS: [(&str, [f64; 3]); 9] = [
    ("P1", [0.0, 0.0, 0.0]),
    ("P2", [0.0, 7.0, 0.0]),
    ("P3", [20.0, 0.0, 0.0]),
    ("P4", [20.0, 7.0, 0.0]),
    ("P5", [0.0, 0.0, 3.0]),
    ("P6", [0.0, 7.0, 3.0]),
    ("P7", [20.0, 0.0, 3.0]),
    ("P8", [20.0, 7.0, 3.0]),
    ("P9", [10.0, 3.5, 1.5]),
];

/// The slab's far corner: the diagonal runs from the origin to here.
pub const SLAB: [f64; 3] = [20.0, 7.0, 3.0];

/// Samples along the diagonal (intervals; `DIAGONAL_SAMPLES + 1` points).
pub const DIAGONAL_SAMPLES: u32 = 40;

/// Published spread of the Niederer benchmark's P8 activation time (ms) at a benchmark
/// resolution: the lowest and highest of the open codes in `docs/cardiac.md` (Macchiato.jl,
/// fenicsx-beat, cardiacFoam).
pub fn published_p8_spread(dx: f64) -> Option<(f64, f64)> {
    [
        (0.5, (41.68, 143.067)),
        (0.2, (38.235, 54.596)),
        (0.1, (37.93, 45.631)),
    ]
    .into_iter()
    .find(|(d, _)| (dx - d).abs() < 1e-9)
    .map(|(_, s)| s)
}

/// Activation time at one named point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointTime {
    pub name: String,
    pub point_mm: [f64; 3],
    /// Negative if the cell never activated.
    pub activation_ms: f32,
}

/// Activation time at one point of the diagonal, `s` in [0, 1] from the origin corner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiagonalSample {
    pub s: f64,
    pub point_mm: [f64; 3],
    pub activation_ms: f32,
}

impl DiagonalSample {
    /// Distance (mm) from the origin corner.
    pub fn distance_mm(&self) -> f64 {
        self.point_mm.iter().map(|x| x * x).sum::<f64>().sqrt()
    }
}

/// `x` as the f64 with the same shortest decimal form (0.02f32 → 0.02, not 0.0199999995…).
pub fn round_f32(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(f64::from(x))
}
