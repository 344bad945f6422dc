//! The loss curve of `mlp train`: train loss and test accuracy per epoch, as a PNG, written
//! atomically (drawn into a temporary file beside it, synced, renamed).

use std::path::Path;

use plotters::prelude::*;

use crate::run::EpochRecord;

/// Pixels.
const SIZE: (u32, u32) = (1000, 420);

/// Plots `epochs` into `path` (PNG): train loss on the left, train and test accuracy on the
/// right; `title` names the run.
pub fn plot(epochs: &[EpochRecord], title: &str, path: &Path) -> anyhow::Result<()> {
    let file = app_support::output::AtomicPath::new(path)?;
    draw(epochs, title, file.tmp(), path)?;
    file.commit()?;
    Ok(())
}

fn draw(epochs: &[EpochRecord], title: &str, into: &Path, path: &Path) -> anyhow::Result<()> {
    app_support::fonts::register_sans_serif();
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("plotting {}: {e}", path.display());
    let root = BitMapBackend::new(into, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root
        .titled(title, ("sans-serif", 20))
        .map_err(|e| err(&e))?;
    let (left, right) = root.split_horizontally(SIZE.0 / 2);
    let n = epochs.len().max(1) as f64;
    let xs = 0.5..n + 0.5;
    let max_loss = epochs
        .iter()
        .map(|e| e.train_loss)
        .filter(|l| l.is_finite())
        .fold(0.0, f64::max)
        .max(1e-3)
        * 1.1;
    let mut chart = ChartBuilder::on(&left)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(xs.clone(), 0.0..max_loss)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .y_desc("train loss (mean cross-entropy)")
        .draw()
        .map_err(|e| err(&e))?;
    let pts = |f: &dyn Fn(&EpochRecord) -> f64| {
        epochs
            .iter()
            .map(|e| (e.epoch as f64, f(e)))
            .collect::<Vec<_>>()
    };
    chart
        .draw_series(LineSeries::new(pts(&|e| e.train_loss), RED).point_size(3))
        .map_err(|e| err(&e))?;
    let min_acc = epochs
        .iter()
        .flat_map(|e| [e.train_accuracy, e.test_accuracy])
        .fold(1.0, f64::min);
    let lo = ((min_acc * 100.0 - 5.0) / 10.0).floor().clamp(0.0, 9.0) * 10.0;
    let mut chart = ChartBuilder::on(&right)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(xs, lo..100.0)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .y_desc("accuracy (%)")
        .draw()
        .map_err(|e| err(&e))?;
    chart
        .draw_series(
            LineSeries::new(pts(&|e| 100.0 * e.train_accuracy), BLUE.mix(0.5)).point_size(3),
        )
        .map_err(|e| err(&e))?
        .label("train (as the steps saw it)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.mix(0.5)));
    chart
        .draw_series(LineSeries::new(pts(&|e| 100.0 * e.test_accuracy), BLUE).point_size(3))
        .map_err(|e| err(&e))?
        .label("test (after the epoch)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
