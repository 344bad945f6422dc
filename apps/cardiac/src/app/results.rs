//! `results.json`, the record of a run, as one typed value ([`RunReport`]) built in one place
//! ([`RunReport::new`]) and read back by `cardiac plot-diagonal` and `cardiac run --params`.
//!
//! The file format (all keys optional on reading except `diagonal`, so files written by older
//! builds still load; `parameters` and `beats` only from `cardiac run`):
//!
//! ```json
//! { "dx_mm": 0.5, "dt_ode_ms": 0.02, "cells": 20160, "t_ms": 61.2,
//!   "points":   [ { "name": "P1", "point_mm": [0,0,0], "activation_ms": 1.23 }, … ],
//!   "diagonal": [ { "s": 0.0, "point_mm": [0,0,0], "activation_ms": 1.23 }, … ],
//!   "parameters": { "problem": { … }, "t_end": 60.0, "ecg": { … }, "note": "…" },
//!   "beats": [ { "beat": 1, "activated": 20160, "repolarised": 20160, "median_apd_ms": 280.1 } ] }
//! ```

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::probes::Probes;
use super::problem::ProblemSpec;
use crate::ecg::{EcgSpec, Electrode};
use crate::report::{DiagonalSample, PointTime};
use crate::solver::Results;

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
    /// The run's parameters (`cardiac run`), so that the run can be repeated from this file
    /// (`cardiac run --params results.json`). Absent in files of older builds and of `cardiac
    /// exec`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<RunParameters>,
    /// Per beat of a paced run (`--beats`): cells activated and repolarised, median APD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beats: Option<Vec<BeatSummary>>,
}

/// The `parameters` of `results.json`: the problem (the mesh as an absolute path, so that
/// `cardiac run --params results.json` repeats it from any folder) and `t_end`; the ECG's
/// electrodes for the record only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunParameters {
    pub problem: ProblemSpec,
    /// When the run stopped (ms); absent in a parameter file that leaves it to the command
    /// line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_end: Option<f64>,
    /// The pseudo-ECG's electrodes (runs with electrodes): not repeated by `--params`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecg: Option<EcgParameters>,
    /// How to repeat the run.
    #[serde(default)]
    pub note: String,
}

/// The pseudo-ECG's part of [`RunParameters`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EcgParameters {
    pub electrodes: Vec<Electrode>,
    #[serde(rename = "sigma_bath_S_per_m")]
    pub sigma_bath: f64,
    #[serde(rename = "every_ms")]
    pub every: f64,
    #[serde(default)]
    pub note: String,
}

/// One beat of a paced tissue run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BeatSummary {
    pub beat: usize,
    pub activated: usize,
    pub repolarised: usize,
    pub median_apd_ms: Option<f64>,
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

/// The problem as `results.json` records it: the mesh as an absolute path (kept as given if
/// it cannot be resolved).
pub fn recorded_problem(spec: &ProblemSpec) -> ProblemSpec {
    let mut recorded = spec.clone();
    if let Some(m) = &spec.mesh {
        recorded.mesh = Some(std::fs::canonicalize(m).unwrap_or_else(|_| m.clone()));
    }
    recorded
}

impl RunParameters {
    /// The parameters of a `cardiac run` of `spec` to `t_end` (ms), with its electrodes.
    pub fn of_run(spec: &ProblemSpec, t_end: f64, ecg: Option<&EcgSpec>) -> RunParameters {
        RunParameters {
            problem: recorded_problem(spec),
            t_end: Some(t_end),
            ecg: ecg.map(|e| EcgParameters {
                electrodes: e.electrodes.clone(),
                sigma_bath: e.sigma_bath,
                every: e.every,
                note: "not repeated by --params: give the electrode options again".into(),
            }),
            note: "repeat this run with `cardiac run --params results.json`".into(),
        }
    }

    /// The parameters of a results.json (its `parameters`) or of a parameters object of the
    /// same form (`{"problem": {...}, "t_end": ...}`), for `cardiac run --params`.
    pub fn read(path: &Path) -> Result<RunParameters> {
        let text = app_support::input::read_to_string(path)
            .with_context(|| format!("--params: reading the parameter file {}", path.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", path.display()))?;
        let mut params = v.get("parameters").cloned().unwrap_or(v);
        let problem = params
            .as_object_mut()
            .and_then(|o| o.remove("problem"))
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: no `problem` record (expected a results.json of `cardiac run`, or {{\"problem\": {{...}}, \"t_end\": ...}})",
                    path.display()
                )
            })?;
        let problem: ProblemSpec = serde_json::from_value(problem)
            .with_context(|| format!("{}: in `problem`", path.display()))?;
        Ok(RunParameters {
            problem,
            t_end: params.get("t_end").and_then(|t| t.as_f64()),
            ecg: params
                .get("ecg")
                .and_then(|e| serde_json::from_value(e.clone()).ok()),
            note: String::new(),
        })
    }
}

impl RunReport {
    /// The record of a run: `res` read at the `probes` (none for a user mesh), with the
    /// parameters and the beats of `cardiac run`.
    pub fn new(
        probes: &Probes,
        res: &Results,
        parameters: Option<RunParameters>,
        beats: Option<Vec<BeatSummary>>,
    ) -> Result<RunReport> {
        let at = |c: usize| {
            res.activation.get(c).copied().with_context(|| {
                format!(
                    "probe cell {c} is outside the {} cells",
                    res.activation.len()
                )
            })
        };
        Ok(RunReport {
            dx_mm: probes.dx_mm,
            dt_ode_ms: Some(probes.dt_ode_ms),
            cells: Some(res.activation.len()),
            t_ms: res.t,
            points: probes
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
            diagonal: probes
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
            parameters,
            beats,
        })
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

    /// Reads `path`, or `path/results.json` if `path` is a folder.
    pub fn load(path: impl AsRef<Path>) -> Result<RunReport, ReportError> {
        let mut path = path.as_ref().to_path_buf();
        if path.is_dir() {
            path.push("results.json");
        }
        let shown = path.display().to_string();
        let text = app_support::input::read_to_string(&path).map_err(|source| ReportError::Io {
            path: shown.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| ReportError::Parse {
            path: shown,
            source,
        })
    }
}
