//! results.json round trip (including files of older builds without dx/dt/cells) and the SVG
//! plot of activation along the diagonal.

use std::path::PathBuf;

use cardiac::app::results::RunReport;
use cardiac::plot::{plot_diagonal, PlotError, Series};
use cardiac::report::DIAGONAL_SAMPLES;

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("report_plot_{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// A report shaped like `cardiac run` writes, activation proportional to distance / speed.
fn fake(speed: f64, dx: Option<f64>) -> RunReport {
    let diagonal = (0..=DIAGONAL_SAMPLES)
        .map(|i| {
            let s = f64::from(i) / f64::from(DIAGONAL_SAMPLES);
            let p = [20.0 * s, 7.0 * s, 3.0 * s];
            let d = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
            serde_json::json!({"s": s, "point_mm": p, "activation_ms": 1.2 + d / speed})
        })
        .collect::<Vec<_>>();
    let mut j = serde_json::json!({
        "t_ms": 60.0,
        "points": [{"name": "P8", "point_mm": [20.0, 7.0, 3.0], "activation_ms": 1.2 + 21.4 / speed}],
        "diagonal": diagonal,
    });
    if let Some(dx) = dx {
        j["dx_mm"] = dx.into();
        j["dt_ode_ms"] = 0.02.into();
    }
    serde_json::from_value(j).unwrap()
}

#[test]
fn reports_round_trip_and_old_files_load() {
    let r = fake(0.5, Some(0.2));
    let f = tmp("new.json");
    std::fs::write(&f, r.to_json()).unwrap();
    assert_eq!(RunReport::load(&f).unwrap(), r);
    // An older file: no dx_mm / dt_ode_ms / cells.
    let old = fake(0.5, None);
    let f = tmp("old.json");
    std::fs::write(&f, serde_json::to_string(&old).unwrap()).unwrap();
    let back = RunReport::load(&f).unwrap();
    assert_eq!(back.dx_mm, None);
    assert_eq!(back.diagonal.len(), DIAGONAL_SAMPLES as usize + 1);
    assert!((back.diagonal.last().unwrap().distance_mm() - 21.4009).abs() < 1e-3);
    // A folder works too; a missing or malformed file is an error.
    let dir = tmp("run");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("results.json"), r.to_json()).unwrap();
    assert_eq!(RunReport::load(&dir).unwrap(), r);
    assert!(RunReport::load(tmp("missing.json")).is_err());
    let bad = tmp("bad.json");
    std::fs::write(&bad, "{\"points\": 3}").unwrap();
    assert!(RunReport::load(&bad)
        .unwrap_err()
        .to_string()
        .contains("not a results.json"));
}

#[test]
fn the_diagonal_plot_is_an_svg_with_one_line_per_run() {
    let runs = [(0.42, 0.5), (0.5, 0.2), (0.55, 0.1)];
    let series: Vec<Series> = runs
        .iter()
        .map(|&(v, dx)| Series::from_diagonal(format!("dx {dx} mm"), &fake(v, Some(dx)).diagonal))
        .collect();
    assert!(series
        .iter()
        .all(|s| s.points.len() == DIAGONAL_SAMPLES as usize + 1));
    let f = tmp("diag.svg");
    plot_diagonal(&series, "test", &f).unwrap();
    let svg = std::fs::read_to_string(&f).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..60.min(svg.len())]);
    // One data line (plus its legend sample) per run, in the run's colour.
    for colour in ["#D62728", "#1F77B4", "#2CA02C"] {
        let lines = svg
            .lines()
            .filter(|l| l.starts_with("<polyline") && l.contains(&format!("stroke=\"{colour}\"")))
            .count();
        assert_eq!(lines, 2, "colour {colour}: data line and legend sample");
    }
    for dx in ["dx 0.5 mm", "dx 0.2 mm", "dx 0.1 mm"] {
        assert!(svg.contains(dx), "legend {dx}");
    }
    assert!(svg.contains("activation time (ms)"));
    // Nothing activated: an error, not an empty plot.
    let empty = Series {
        label: "none".into(),
        points: vec![],
    };
    assert!(matches!(
        plot_diagonal(&[empty], "t", &tmp("e.svg")),
        Err(PlotError::Empty)
    ));
}

#[test]
fn the_diagonal_plot_as_png_draws_every_run_in_its_colour_and_the_text() {
    let runs = [(0.42, 0.5), (0.5, 0.2), (0.55, 0.1)];
    let series: Vec<Series> = runs
        .iter()
        .map(|&(v, dx)| Series::from_diagonal(format!("dx {dx} mm"), &fake(v, Some(dx)).diagonal))
        .collect();
    let f = tmp("diag.PNG");
    plot_diagonal(&series, "test", &f).unwrap();
    let img = image::open(&f).expect("a readable PNG").to_rgb8();
    assert_eq!(img.dimensions(), (900, 560));
    let count = |rgb: [u8; 3]| img.pixels().filter(|p| p.0 == rgb).count();
    // Each run's line (two pixels wide, hundreds long) in its colour.
    for rgb in [[0xd6, 0x27, 0x28], [0x1f, 0x77, 0xb4], [0x2c, 0xa0, 0x2c]] {
        assert!(count(rgb) > 300, "colour {rgb:?}: {} pixels", count(rgb));
    }
    // Text is drawn with the embedded font: dark pixels left of the y axis (the tick labels
    // and the axis title), where no line or grid is drawn.
    let dark_left = (0..560)
        .flat_map(|y| (0..60).map(move |x| (x, y)))
        .filter(|&(x, y)| img.get_pixel(x, y).0.iter().all(|&c| c < 100))
        .count();
    assert!(
        dark_left > 200,
        "no text left of the axis ({dark_left} dark pixels)"
    );
}
