//! SVG plots of profiles and memory reports (plotters, SVG backend: no system libraries).

use std::ops::Range;
use std::path::Path;

use plotters::prelude::*;
use poplar_exe::profile::{MemoryReport, Profile};

use crate::CliError;

/// Most columns drawn; above this many tiles, a column stands for a group of neighbouring tiles
/// and shows the busiest of them (so overloaded tiles stay visible).
const MAX_COLUMNS: usize = 1200;

/// An SVG drawing area at `path`, with the embedded DejaVu Sans registered as "sans-serif" for
/// plotters' text layout (once per process; no system fonts needed).
fn svg_area(path: &Path, size: (u32, u32)) -> DrawingArea<SVGBackend<'_>, plotters::coord::Shift> {
    app_support::fonts::register_sans_serif();
    SVGBackend::new(path, size).into_drawing_area()
}

const COMPUTE: RGBColor = RGBColor(31, 119, 180);
const EXCHANGE: RGBColor = RGBColor(255, 127, 14);
const SYNC: RGBColor = RGBColor(160, 160, 160);
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Draws the legend at `position` and writes the file: the common ending of every chart.
fn finish<'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    root: &DrawingArea<SVGBackend<'a>, plotters::coord::Shift>,
    position: SeriesLabelPosition,
    path: &Path,
) -> Result<(), CliError> {
    let err = plot_err(path);
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(position)
        .draw()
        .map_err(&err)?;
    root.present().map_err(&err)?;
    Ok(())
}

fn plot_err<E: std::fmt::Display>(path: &Path) -> impl Fn(E) -> CliError + '_ {
    move |e| CliError::Plot {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Tile ranges of the columns: one tile each, or equal groups when there are many tiles.
fn columns(tiles: usize) -> Vec<Range<usize>> {
    let per = tiles.div_ceil(MAX_COLUMNS).max(1);
    (0..tiles)
        .step_by(per)
        .map(|s| s..(s + per).min(tiles))
        .collect()
}

fn max_of(v: &[u64], r: &Range<usize>) -> f64 {
    v[r.clone()].iter().copied().max().unwrap_or(0) as f64
}

/// The tile of `r` with the largest sum over `series`.
fn busiest(series: &[(&str, RGBColor, &[u64])], r: &Range<usize>) -> usize {
    r.clone()
        .max_by_key(|&t| {
            (
                series.iter().map(|s| s.2[t]).sum::<u64>(),
                std::cmp::Reverse(t),
            )
        })
        .unwrap_or(r.start)
}

fn binned_note(tiles: usize) -> String {
    let per = tiles.div_ceil(MAX_COLUMNS).max(1);
    if per > 1 {
        format!(" (busiest of {per} tiles per column)")
    } else {
        String::new()
    }
}

/// Stacked columns: for each series `(name, colour, per-tile values)`, per tile.
fn stacked(
    path: &Path,
    title: &str,
    y_label: &str,
    series: &[(&str, RGBColor, &[u64])],
    limit: Option<(&str, f64)>,
) -> Result<(), CliError> {
    let err = plot_err(path);
    let tiles = series.first().map_or(0, |s| s.2.len());
    let cols = columns(tiles);
    let pick: Vec<usize> = cols.iter().map(|r| busiest(series, r)).collect();
    let mut tops = vec![0f64; cols.len()];
    for (_, _, v) in series {
        for (k, &t) in pick.iter().enumerate() {
            tops[k] += v[t] as f64;
        }
    }
    let mut ymax = tops.iter().copied().fold(0.0, f64::max);
    if let Some((_, l)) = limit {
        ymax = ymax.max(l);
    }
    // Headroom for the legend.
    let ymax = if ymax <= 0.0 { 1.0 } else { ymax * 1.3 };
    let root = svg_area(path, (1200, 600));
    root.fill(&WHITE).map_err(&err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{title}{}", binned_note(tiles)), ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(90)
        .build_cartesian_2d(0f64..tiles.max(1) as f64, 0f64..ymax)
        .map_err(&err)?;
    chart
        .configure_mesh()
        .x_desc("tile")
        .y_desc(y_label)
        .disable_x_mesh()
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()
        .map_err(&err)?;
    let mut base = vec![0f64; cols.len()];
    for (name, colour, v) in series {
        let mut rects = Vec::with_capacity(cols.len());
        for (k, r) in cols.iter().enumerate() {
            let h = v[pick[k]] as f64;
            if h > 0.0 {
                rects.push(Rectangle::new(
                    [(r.start as f64, base[k]), (r.end as f64, base[k] + h)],
                    colour.filled(),
                ));
            }
            base[k] += h;
        }
        let c = *colour;
        chart
            .draw_series(rects)
            .map_err(&err)?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
    }
    if let Some((name, l)) = limit {
        chart
            .draw_series(LineSeries::new(
                [(0.0, l), (tiles.max(1) as f64, l)],
                RED.stroke_width(2),
            ))
            .map_err(&err)?
            .label(name)
            .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], RED.stroke_width(2)));
    }
    finish(&mut chart, &root, SeriesLabelPosition::UpperRight, path)
}

/// Modelled compute, exchange and sync cycles per tile over the whole profile.
pub fn tiles(p: &Profile, path: &Path) -> Result<(), CliError> {
    stacked(
        path,
        &format!(
            "Modelled cycles per tile: {} run(s), {} cycles elapsed",
            p.runs,
            p.total_cycles()
        ),
        "cycles",
        &[
            ("compute", COMPUTE, &p.tiles.compute),
            ("exchange", EXCHANGE, &p.tiles.exchange),
            ("sync (waiting + sync)", SYNC, &p.tiles.sync),
        ],
        None,
    )
}

/// Cycles per tile of one execution of the phases that take the most time.
pub fn phases(p: &Profile, path: &Path, top: usize) -> Result<(), CliError> {
    let err = plot_err(path);
    let n = p.tiles.compute.len();
    let mut phases: Vec<_> = p.phases.iter().collect();
    phases.sort_by_key(|p| std::cmp::Reverse(p.cycles));
    phases.truncate(top.min(PALETTE.len()));
    let cols = columns(n);
    let per_tile: Vec<Vec<u64>> = phases
        .iter()
        .map(|ph| {
            let mut v = vec![0u64; n];
            for &[t, c] in &ph.tile_cycles {
                if let Some(x) = v.get_mut(t as usize) {
                    *x = c;
                }
            }
            v
        })
        .collect();
    let ymax = phases
        .iter()
        .map(|ph| ph.per_execution.max)
        .max()
        .unwrap_or(1)
        .max(1) as f64
        * 1.3;
    let root = svg_area(path, (1200, 600));
    root.fill(&WHITE).map_err(&err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Cycles per tile of one execution, {} costliest phases{}",
                phases.len(),
                binned_note(n)
            ),
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(90)
        .build_cartesian_2d(0f64..n.max(1) as f64, 0f64..ymax)
        .map_err(&err)?;
    chart
        .configure_mesh()
        .x_desc("tile")
        .y_desc("cycles per execution")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()
        .map_err(&err)?;
    for (k, (ph, v)) in phases.iter().zip(&per_tile).enumerate() {
        let colour = PALETTE[k];
        let pts: Vec<(f64, f64)> = cols
            .iter()
            .flat_map(|r| {
                let y = max_of(v, r);
                [(r.start as f64, y), (r.end as f64, y)]
            })
            .collect();
        let kind = ph.kind.name();
        chart
            .draw_series(LineSeries::new(pts, colour.stroke_width(2)))
            .map_err(&err)?
            .label(format!("{kind} {} (x{})", ph.name, ph.executions))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 12, y)], colour.stroke_width(2)));
    }
    finish(&mut chart, &root, SeriesLabelPosition::UpperRight, path)
}

/// Elapsed cycles of each label split into compute, exchange and sync.
pub fn labels(p: &Profile, path: &Path) -> Result<(), CliError> {
    let err = plot_err(path);
    let labels = p.summary_by_label();
    let xmax = labels.iter().map(|l| l.total).max().unwrap_or(1).max(1) as f64 * 1.15;
    let rows = labels.len().max(1);
    let root = svg_area(path, (1000, 120 + 50 * rows as u32));
    root.fill(&WHITE).map_err(&err)?;
    let names: Vec<String> = labels.iter().map(|l| l.name.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption("Elapsed cycles by label", ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(160)
        .build_cartesian_2d(0f64..xmax, 0f64..rows as f64)
        .map_err(&err)?;
    chart
        .configure_mesh()
        .x_desc("modelled cycles")
        .disable_y_mesh()
        .y_labels(rows * 2 + 1)
        .y_label_formatter(&|y| {
            let k = y.floor() as usize;
            if (y - k as f64 - 0.5).abs() < 0.26 {
                names
                    .get(rows - 1 - k.min(rows - 1))
                    .cloned()
                    .unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()
        .map_err(&err)?;
    for (name, colour, pick) in [
        ("compute", COMPUTE, 0usize),
        ("exchange", EXCHANGE, 1),
        ("sync", SYNC, 2),
    ] {
        let rects: Vec<_> = labels
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let y = (rows - 1 - i) as f64;
                let (a, b) = match pick {
                    0 => (0, l.compute),
                    1 => (l.compute, l.compute + l.exchange),
                    _ => (l.compute + l.exchange, l.total),
                };
                Rectangle::new([(a as f64, y + 0.2), (b as f64, y + 0.8)], colour.filled())
            })
            .collect();
        chart
            .draw_series(rects)
            .map_err(&err)?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    finish(&mut chart, &root, SeriesLabelPosition::LowerRight, path)
}

/// Memory per tile by category, with the budget.
pub fn memory(m: &MemoryReport, path: &Path) -> Result<(), CliError> {
    let get = |f: fn(&poplar_exe::profile::CategoryBytes) -> u64| -> Vec<u64> {
        m.tiles.iter().map(|t| f(&t.by_category)).collect()
    };
    let vars = get(|c| c.variables);
    let consts = get(|c| c.constants);
    let state = get(|c| c.vertex_state + c.vertex_descriptors);
    let code = get(|c| c.code);
    let temps: Vec<u64> = m.tiles.iter().map(|t| t.temporary).collect();
    let budget = m.bytes_per_tile as f64;
    // The budget line only when it is on the scale of the data.
    let limit = (m.total.max as f64 >= 0.5 * budget).then_some(("bytes per tile", budget));
    stacked(
        path,
        &format!(
            "Memory per tile: max {} B ({:.1}% of {} B), median {} B",
            m.total.max,
            100.0 * m.total.max as f64 / budget.max(1.0),
            m.bytes_per_tile,
            m.total.median
        ),
        "bytes",
        &[
            ("variables", PALETTE[0], &vars),
            ("constants", PALETTE[2], &consts),
            ("vertex state + descriptors", PALETTE[4], &state),
            ("code (estimate)", PALETTE[5], &code),
            ("temporaries (peak)", PALETTE[1], &temps),
        ],
        limit,
    )
}

/// The timeline (what the Chrome trace shows): one row per track, spans coloured by kind.
pub fn timeline(p: &Profile, path: &Path) -> Result<(), CliError> {
    use poplar_exe::profile::SpanKind;
    let err = plot_err(path);
    let tl = &p.timeline;
    let rows = tl.tracks.len().max(1);
    let end = tl
        .spans
        .iter()
        .map(|s| s.start + s.dur)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let height = (140 + 14 * rows).min(2000) as u32;
    let root = svg_area(path, (1400, height));
    root.fill(&WHITE).map_err(&err)?;
    let names: Vec<String> = tl.tracks.iter().map(|t| t.name.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Modelled timeline of the first steps{}",
                if tl.truncated { " (truncated)" } else { "" }
            ),
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(130)
        .build_cartesian_2d(0f64..end * 1.02, 0f64..rows as f64)
        .map_err(&err)?;
    let label_every = rows.div_ceil(40).max(1);
    chart
        .configure_mesh()
        .x_desc("modelled cycles")
        .disable_y_mesh()
        .y_labels(rows * 2 + 1)
        .y_label_formatter(&|y| {
            let k = y.floor() as usize;
            let row = rows - 1 - k.min(rows - 1);
            let centred = (y - k as f64 - 0.5).abs() < 0.26;
            if centred && row / label_every * label_every == row {
                names.get(row).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()
        .map_err(&err)?;
    for (kind, name, colour) in [
        (SpanKind::Compute, "compute", COMPUTE),
        (SpanKind::Exchange, "exchange", EXCHANGE),
        (SpanKind::Sync, "sync", SYNC),
        (SpanKind::Label, "label", PALETTE[2]),
    ] {
        let rects: Vec<_> = tl
            .spans
            .iter()
            .filter(|s| s.kind == kind)
            .map(|s| {
                let y = (rows - 1 - (s.track as usize).min(rows - 1)) as f64;
                Rectangle::new(
                    [
                        (s.start as f64, y + 0.1),
                        ((s.start + s.dur) as f64, y + 0.9),
                    ],
                    colour.filled(),
                )
            })
            .collect();
        chart
            .draw_series(rects)
            .map_err(&err)?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    finish(&mut chart, &root, SeriesLabelPosition::LowerRight, path)
}
