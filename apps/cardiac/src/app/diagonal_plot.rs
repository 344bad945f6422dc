//! `cardiac plot-diagonal`: activation along the slab diagonal from the `results.json` files
//! of several runs, one line each, as a PNG or SVG image.

use std::path::{Path, PathBuf};

use anyhow::{ensure, Context, Result};

use crate::app::results::RunReport;
use crate::plot::{plot_diagonal, Series};

/// Plots the runs of `inputs` (results.json files or the folders holding them) into `output`
/// (PNG if the name ends in .png, SVG otherwise; its folder is created), labelled with
/// `labels` (one per input) or with each run's dx and dt. `output` is checked first: refused
/// if it exists (unless `force`) or is one of the inputs (always).
pub fn plot_runs(
    inputs: &[PathBuf],
    output: &Path,
    title: &str,
    labels: Option<&[String]>,
    force: bool,
) -> Result<()> {
    let read: Vec<PathBuf> = inputs
        .iter()
        .map(|p| {
            if p.is_dir() {
                p.join("results.json")
            } else {
                p.clone()
            }
        })
        .collect();
    let read: Vec<&Path> = read.iter().map(PathBuf::as_path).collect();
    app_support::output::check_output_file(output, force, &read)?;
    if let Some(l) = labels {
        ensure!(
            l.len() == inputs.len(),
            "--labels has {} labels for {} inputs",
            l.len(),
            inputs.len()
        );
    }
    let mut series = Vec::new();
    for (i, p) in inputs.iter().enumerate() {
        series.push(series_of(p, labels.map(|l| l[i].clone()))?);
    }
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    plot_diagonal(&series, title, output)?;
    say!("wrote {} ({} series)", output.display(), series.len());
    Ok(())
}

/// The diagonal of one run, labelled `label` or with its dx and dt, and its P8 time.
fn series_of(p: &Path, label: Option<String>) -> Result<Series> {
    let r = RunReport::load(p)?;
    ensure!(
        !r.diagonal.is_empty(),
        "{} has no diagonal samples (a user-mesh run?)",
        p.display()
    );
    let label = match (label, r.dx_mm, r.dt_ode_ms) {
        (Some(l), _, _) => l,
        (None, Some(dx), Some(dt)) => format!("dx {dx} mm, dt {dt} ms"),
        (None, Some(dx), None) => format!("dx {dx} mm"),
        _ => p.display().to_string(),
    };
    let p8 = r
        .point("P8")
        .map(|t| format!(" (P8 {t:.1} ms)"))
        .unwrap_or_default();
    Ok(Series::from_diagonal(format!("{label}{p8}"), &r.diagonal))
}
