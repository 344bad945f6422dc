//! `ecg.png`: the 12 leads in the layout clinicians read, a 3 × 4 grid (columns I–III,
//! aVR–aVF, V1–V3, V4–V6) above a rhythm strip of lead II. Unlike a paper ECG, each panel
//! shows the whole run (not 2.5 s of it), and all panels share one voltage scale.

use std::path::Path;

use plotters::prelude::*;

use super::{EcgRecord, Lead};
use crate::plot::PlotError;

/// Image size in pixels.
const SIZE: (u32, u32) = (1600, 1000);
/// The ECG paper's grid and trace colours.
const GRID: RGBColor = RGBColor(0xf4, 0xb6, 0xb6);
const TRACE: RGBColor = RGBColor(0x10, 0x10, 0x10);

/// Draws the leads of `record` into `path` (PNG), atomically. Needs the 12 leads (RA, LA, LL
/// and V1–V6 recorded).
pub fn plot_twelve_lead(record: &EcgRecord, title: &str, path: &Path) -> Result<(), PlotError> {
    let shown = path.display().to_string();
    let err = |e: &dyn std::fmt::Display| PlotError::Draw {
        path: shown.clone(),
        msg: e.to_string(),
    };
    let leads = record.leads();
    if leads.len() != 12 || record.len() < 2 {
        return Err(PlotError::Empty);
    }
    app_support::fonts::register_sans_serif();
    let file = app_support::output::AtomicPath::new(path).map_err(|e| err(&e))?;
    let root = BitMapBackend::new(file.tmp(), SIZE).into_drawing_area();
    draw(root, record, &leads, title, &err)?;
    file.commit().map_err(|e| err(&e))
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    record: &EcgRecord,
    leads: &[Lead],
    title: &str,
    err: &dyn Fn(&dyn std::fmt::Display) -> PlotError,
) -> Result<(), PlotError> {
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root
        .titled(title, ("sans-serif", 24))
        .map_err(|e| err(&e))?;
    let (grid, strip) = root.split_vertically(SIZE.1 * 3 / 4 - 40);
    let t0 = record.times[0];
    let t1 = *record.times.last().unwrap_or(&t0);
    let t1 = if t1 > t0 { t1 } else { t0 + 1.0 };
    // One scale for every panel, symmetric about 0, as on ECG paper.
    let peak = leads
        .iter()
        .flat_map(|l| l.values.iter())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let y = if peak > 0.0 { peak * 1.1 } else { 1.0 };
    let panel = |area: &DrawingArea<DB, plotters::coord::Shift>,
                 lead: &Lead,
                 labels: bool|
     -> Result<(), PlotError> {
        let mut chart = ChartBuilder::on(area)
            .margin(6)
            .x_label_area_size(if labels { 28 } else { 0 })
            .y_label_area_size(if labels { 56 } else { 0 })
            .build_cartesian_2d(t0..t1, -y..y)
            .map_err(|e| err(&e))?;
        let mut mesh = chart.configure_mesh();
        // Five small boxes to a large one, as on ECG paper.
        mesh.max_light_lines(4)
            .light_line_style(GRID.mix(0.4))
            .bold_line_style(GRID)
            .axis_style(GRID);
        if labels {
            mesh.x_desc("t (ms)")
                .y_desc("mV")
                .label_style(("sans-serif", 13));
        } else {
            mesh.disable_x_axis().disable_y_axis();
        }
        mesh.draw().map_err(|e| err(&e))?;
        chart
            .draw_series(LineSeries::new(
                record
                    .times
                    .iter()
                    .copied()
                    .zip(lead.values.iter().copied()),
                TRACE.stroke_width(2),
            ))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(std::iter::once(Text::new(
                lead.name,
                (t0 + 0.02 * (t1 - t0), 0.8 * y),
                ("sans-serif", 20).into_font(),
            )))
            .map_err(|e| err(&e))?;
        Ok(())
    };
    let cells = grid.split_evenly((3, 4));
    for (k, area) in cells.iter().enumerate() {
        let (row, col) = (k / 4, k % 4);
        panel(area, &leads[col * 3 + row], false)?;
    }
    panel(&strip, &leads[1], true)?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
