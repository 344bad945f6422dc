//! Figure 5 of `cardiac study` ([`super::study`]): modelled chip time per simulated ms against
//! the chip count, log–log, with ideal scaling.

use anyhow::{ensure, Result};

use super::study::Study;

/// Figure 5: modelled chip time per simulated ms against chips, with ideal scaling from the
/// first row, log–log, into `path` (PNG if it ends in `.png`, SVG otherwise), atomically.
pub fn plot_scaling(s: &Study, path: &std::path::Path) -> Result<()> {
    use plotters::prelude::*;
    ensure!(!s.rows.is_empty(), "no chip counts to plot");
    app_support::fonts::register_sans_serif();
    let file = app_support::output::AtomicPath::new(path)?;
    let png = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    let size = (820, 540);
    if png {
        scaling_chart(BitMapBackend::new(file.tmp(), size).into_drawing_area(), s)?;
    } else {
        scaling_chart(SVGBackend::new(file.tmp(), size).into_drawing_area(), s)?;
    }
    file.commit()?;
    Ok(())
}

/// A mesh path's file name (the slab's description as it is).
fn short(mesh: &str) -> &str {
    mesh.rsplit('/').next().unwrap_or(mesh)
}

fn scaling_chart<DB: plotters::prelude::DrawingBackend>(
    root: plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    s: &Study,
) -> Result<()> {
    use plotters::prelude::*;
    let e = |x: &dyn std::fmt::Display| anyhow::anyhow!("drawing the scaling plot: {x}");
    let ms: Vec<(f64, f64)> = s
        .rows
        .iter()
        .map(|r| (f64::from(r.chips), r.seconds_per_ms * 1e3))
        .collect();
    let (c0, t0) = ms[0];
    let ideal: Vec<(f64, f64)> = ms.iter().map(|&(c, _)| (c, t0 * c0 / c)).collect();
    let x_max = ms.iter().map(|p| p.0).fold(1.0, f64::max) * 1.5;
    let ys = ms.iter().chain(&ideal).map(|p| p.1);
    let (y_min, y_max) = ys.fold((f64::INFINITY, 0.0f64), |(a, b), y| (a.min(y), b.max(y)));
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{} ({} cells): strong scaling", short(&s.mesh), s.cells),
            ("sans-serif", 20),
        )
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(
            (0.75..x_max).log_scale(),
            (y_min * 0.7..y_max * 1.4).log_scale(),
        )
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .x_desc("chips")
        .y_desc("modelled chip time per simulated ms (ms)")
        .x_labels(6)
        .y_labels(8)
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| match *v {
            v if v >= 10.0 => format!("{v:.0}"),
            v if v >= 1.0 => format!("{v:.1}"),
            v => format!("{v:.3}"),
        })
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(|x| e(&x))?;
    let red = RGBColor(0xd6, 0x27, 0x28);
    chart
        .draw_series(LineSeries::new(ms.clone(), red.stroke_width(2)))
        .map_err(|x| e(&x))?
        .label("modelled")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], red.stroke_width(2)));
    chart
        .draw_series(ms.iter().map(|&p| Circle::new(p, 4, red.filled())))
        .map_err(|x| e(&x))?;
    chart
        .draw_series(LineSeries::new(ideal, BLACK.stroke_width(1)))
        .map_err(|x| e(&x))?
        .label("ideal")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], BLACK.stroke_width(1)));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}
