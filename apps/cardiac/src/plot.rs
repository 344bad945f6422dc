//! Plot of activation time along the slab diagonal, one line per run (`cardiac plot-diagonal`),
//! as SVG or PNG by the file's extension. Neither needs system libraries: text is laid out (and
//! for PNG drawn) with the DejaVu Sans font embedded in the binary.

use std::path::Path;

use plotters::prelude::*;

use crate::report::DiagonalSample;

/// One line of the plot.
#[derive(Debug, Clone)]
pub struct Series {
    pub label: String,
    /// (distance from the origin corner in mm, activation time in ms); cells that never
    /// activated are left out.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// The diagonal samples of a run, labelled `label`.
    pub fn from_diagonal(label: impl Into<String>, diagonal: &[DiagonalSample]) -> Series {
        Series {
            label: label.into(),
            points: diagonal
                .iter()
                .filter(|d| d.activation_ms >= 0.0)
                .map(|d| (d.distance_mm(), f64::from(d.activation_ms)))
                .collect(),
        }
    }
}

/// Errors of plotting.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("nothing to plot: no series has an activated point")]
    Empty,
    #[error("drawing {path}: {msg}")]
    Draw { path: String, msg: String },
}

const COLOURS: [RGBColor; 6] = [
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x8c, 0x56, 0x4b),
];

/// Plot size in pixels.
const SIZE: (u32, u32) = (900, 560);

/// Draws activation time against distance along the diagonal into `path`: a PNG image if the
/// file name ends in `.png` (any case), an SVG file otherwise. Atomically: drawn into a
/// temporary file beside `path`, renamed once complete.
pub fn plot_diagonal(series: &[Series], title: &str, path: &Path) -> Result<(), PlotError> {
    let shown = path.display().to_string();
    let err = |e: &dyn std::fmt::Display| PlotError::Draw {
        path: shown.clone(),
        msg: e.to_string(),
    };
    let png = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    // Text layout uses the embedded font with either backend (plotters' ab_glyph feature).
    app_support::fonts::register_sans_serif();
    let file = app_support::output::AtomicPath::new(path).map_err(|e| err(&e))?;
    if png {
        draw(
            BitMapBackend::new(file.tmp(), SIZE).into_drawing_area(),
            series,
            title,
            &err,
        )?;
    } else {
        draw(
            SVGBackend::new(file.tmp(), SIZE).into_drawing_area(),
            series,
            title,
            &err,
        )?;
    }
    file.commit().map_err(|e| err(&e))
}

/// The chart itself, on any plotters backend.
fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    series: &[Series],
    title: &str,
    err: &dyn Fn(&dyn std::fmt::Display) -> PlotError,
) -> Result<(), PlotError> {
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut x_max, mut y_max) = (0.0f64, 0.0f64);
    let mut any = false;
    for &(x, y) in all {
        x_max = x_max.max(x);
        y_max = y_max.max(y);
        any = true;
    }
    if !any {
        return Err(PlotError::Empty);
    }
    let x_max = (x_max / 2.0).ceil() * 2.0;
    let y_max = (y_max * 1.08 / 10.0).ceil() * 10.0;

    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("distance along the diagonal from the stimulus corner (mm)")
        .y_desc("activation time (ms)")
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(|e| err(&e))?;
    for (i, s) in series.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(2)));
        chart
            .draw_series(
                s.points
                    .iter()
                    .map(|&(x, y)| Circle::new((x, y), 3, c.filled())),
            )
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 16))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
