//! The files of `cardiac cell`: `trace.csv` (V over time), `beats.csv` (features per beat),
//! `restitution.csv` (S1–S2) and `cell.json` (the protocol and every figure, so that the run can
//! be repeated from its results). An output folder holding an earlier run's files is refused
//! unless asked (`--force`); each file is written to a temporary name and renamed.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use app_support::output::{OutputLock, RunFiles};

use crate::cell::{BeatFeatures, PacedRun, Protocol, RestitutionPoint};

/// Files `cardiac cell` writes.
pub const CELL_FILES: RunFiles =
    RunFiles::new(&["trace.csv", "beats.csv", "restitution.csv", "cell.json"]);

/// Checks (and creates) the output folder before any work and locks it for the run (until the
/// lock is dropped): refused if it is a file, cannot be written, is in use by another run, or
/// holds an earlier run's files (unless `force`, which removes them), which it names.
pub fn prepare(dir: &Path, force: bool) -> Result<OutputLock> {
    Ok(CELL_FILES.prepare(dir, force)?)
}

fn write_atomic(path: &Path, text: &str) -> Result<()> {
    Ok(app_support::output::write_atomic(path, text)?)
}

fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.4}")
    } else {
        String::new()
    }
}

fn beat_row(out: &mut String, f: &BeatFeatures) {
    let _ = writeln!(
        out,
        "{},{},{},{},{},{},{},{},{},{}",
        f.beat,
        num(f.onset),
        num(f.v_rest),
        num(f.v_max),
        num(f.dvdt_max),
        num(f.t_upstroke),
        num(f.t_activation),
        num(f.apd30),
        num(f.apd50),
        num(f.apd90)
    );
}

const BEAT_HEADER: &str =
    "beat,onset_ms,v_rest_mV,v_max_mV,dvdt_max_mV_per_ms,t_upstroke_ms,t_activation_ms,apd30_ms,apd50_ms,apd90_ms";

/// Writes the run's files into `dir` (checked by [`prepare`]).
pub fn write(
    dir: &Path,
    p: &Protocol,
    run: &PacedRun,
    restitution: Option<&(Option<BeatFeatures>, Vec<RestitutionPoint>)>,
) -> Result<()> {
    // The run's trace is sampled already (`Protocol::trace_every`).
    let mut trace = String::from("t_ms,v_mV\n");
    for (k, v) in run.trace.v.iter().enumerate() {
        let _ = writeln!(trace, "{:.4},{v}", k as f64 * run.trace.dt);
    }
    write_atomic(&dir.join("trace.csv"), &trace)?;
    let mut beats = format!("{BEAT_HEADER}\n");
    for (k, b) in run.beats.iter().enumerate() {
        match b {
            Some(f) => beat_row(&mut beats, f),
            None => {
                let _ = writeln!(beats, "{},{},,,,,,,,", k + 1, num(p.s1_onsets()[k]));
            }
        }
    }
    write_atomic(&dir.join("beats.csv"), &beats)?;
    if let Some((_, curve)) = restitution {
        let mut r = String::from("s2_ms,di_ms,captured,apd30_ms,apd50_ms,apd90_ms,v_max_mV\n");
        for c in curve {
            match &c.features {
                Some(f) => {
                    let _ = writeln!(
                        r,
                        "{},{},1,{},{},{},{}",
                        num(c.s2),
                        num(c.di),
                        num(f.apd30),
                        num(f.apd50),
                        num(f.apd90),
                        num(f.v_max)
                    );
                }
                None => {
                    let _ = writeln!(r, "{},{},0,,,,", num(c.s2), num(c.di));
                }
            }
        }
        write_atomic(&dir.join("restitution.csv"), &r)?;
    }
    let json = serde_json::json!({
        "schema": "cardiac-cell",
        "version": 1,
        "protocol": {
            "cell_type": p.cell_type,
            "dt_ms": p.dt,
            "bcl_ms": p.bcl,
            "beats": p.beats,
            "stim_amplitude_pA_per_pF": p.amplitude,
            "stim_duration_ms": p.duration,
            "stim_start_ms": p.start,
            "tail_ms": p.tail,
            "tp06_scale": p.scale,
            "s2_ms": restitution.map(|(_, c)| c.iter().map(|x| x.s2).collect::<Vec<_>>()),
        },
        "apd_definition": "APDx: from the upward to the downward crossing of v_max - x/100 (v_max - v_rest), v_rest = V at the pulse onset",
        "beats": run.beats,
        "restitution": restitution.map(|(_, c)| c),
    });
    write_atomic(
        &dir.join("cell.json"),
        &serde_json::to_string_pretty(&json).expect("serializes"),
    )
}
