//! What a run reports: activation times at the Niederer benchmark points P1..P9 and along the
//! slab diagonal, written to and read back from `results.json`.
//!
//! The file format (all keys optional on reading except `diagonal`, so files written by older
//! builds still load):
//!
//! ```json
//! { "dx_mm": 0.5, "dt_ode_ms": 0.02, "cells": 20160, "t_ms": 61.2,
//!   "points":   [ { "name": "P1", "point_mm": [0,0,0], "activation_ms": 1.23 }, … ],
//!   "diagonal": [ { "s": 0.0, "point_mm": [0,0,0], "activation_ms": 1.23 }, … ] }
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::solver::{Results, Setup};

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

/// The contents of `results.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// Slab mesh size (mm); absent for a user mesh and in files of older builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dx_mm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dt_ode_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cells: Option<usize>,
    /// Simulated time reached (ms).
    #[serde(default)]
    pub t_ms: f32,
    #[serde(default)]
    pub points: Vec<PointTime>,
    pub diagonal: Vec<DiagonalSample>,
    /// The run's parameters (`cardiac run`): the problem and `t_end`, so that the run can be
    /// repeated from this file (`cardiac run --params results.json`). Absent in files of older
    /// builds and of `cardiac exec`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<serde_json::Value>,
    /// Per beat of a paced run (`--beats`): cells activated and repolarised, median APD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beats: Option<Vec<BeatSummary>>,
}

/// One beat of a paced tissue run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BeatSummary {
    pub beat: usize,
    pub activated: usize,
    pub repolarised: usize,
    pub median_apd_ms: Option<f64>,
}

/// `x` as the f64 with the same shortest decimal form (0.02f32 → 0.02, not 0.0199999995…).
pub fn round_f32(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(f64::from(x))
}

/// Errors reading a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a results.json of `cardiac run`: {source}")]
    Parse {
        path: String,
        source: serde_json::Error,
    },
}

impl RunReport {
    /// The benchmark points and the diagonal of a slab run. `dx_mm` is `None` for a user mesh, in
    /// which case points and diagonal are left empty (they are slab coordinates).
    pub fn new(setup: &Setup, res: &Results, dx_mm: Option<f64>) -> RunReport {
        let (points, diagonal) = if dx_mm.is_some() {
            let points = POINTS
                .iter()
                .map(|(n, p)| PointTime {
                    name: (*n).to_string(),
                    point_mm: *p,
                    activation_ms: res.activation[setup.nearest_cell(*p)],
                })
                .collect();
            let diagonal = (0..=DIAGONAL_SAMPLES)
                .map(|i| {
                    let s = f64::from(i) / f64::from(DIAGONAL_SAMPLES);
                    let p = SLAB.map(|x| x * s);
                    DiagonalSample {
                        s,
                        point_mm: p,
                        activation_ms: res.activation[setup.nearest_cell(p)],
                    }
                })
                .collect();
            (points, diagonal)
        } else {
            (Vec::new(), Vec::new())
        };
        RunReport {
            dx_mm,
            dt_ode_ms: Some(round_f32(setup.dt_ode)),
            cells: Some(setup.n),
            t_ms: res.t,
            points,
            diagonal,
            parameters: None,
            beats: None,
        }
    }

    /// Activation time at a named point, if present.
    pub fn point(&self, name: &str) -> Option<f32> {
        self.points
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.activation_ms)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serialises")
    }

    /// Writes the report as JSON to `path`, atomically (a temporary file beside it, renamed).
    pub fn save(&self, path: impl AsRef<Path>) -> std::io::Result<()> {
        let mut f = app_support::output::AtomicFile::create(path)?;
        std::io::Write::write_all(&mut f, self.to_json().as_bytes())?;
        f.commit()
    }

    /// Reads `path`, or `path/results.json` if `path` is a folder.
    pub fn load(path: impl AsRef<Path>) -> Result<RunReport, ReportError> {
        let mut path = path.as_ref().to_path_buf();
        if path.is_dir() {
            path.push("results.json");
        }
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|source| ReportError::Io {
            path: shown.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| ReportError::Parse {
            path: shown,
            source,
        })
    }
}
