//! The scaling report: for R = 1, 2, 4, … replicas (each of `P` chips, `--pipeline-stages`;
//! on a Pod64 and on several Pods beyond 64 chips), the modelled time of a training step from
//! the compiled executable (the static estimate of `poplar::profile`, checked against the
//! profile in the tests), against the seed's throughput model `R·m·GA / (GA·T_MB + T_AR)`
//! with `GA·T_MB` the estimate of popnn's pipeline program (`popnn::train::PIPELINE`: every
//! micro-batch of the step, the pipeline's fill and drain included) and `T_AR` that of its
//! gradient reduction (`popnn::train::REDUCE`), the efficiency
//! `throughput(R) / (R · throughput(1))`, and the gradient reduction's time against its
//! link-bound limit `2(R−1)/R · S / B` (S the gradient bytes, B the IPU-Link rate each way,
//! twice that for the two-way methods).

use std::path::Path;

use plotters::prelude::*;
use poplar::profile::{estimate_program, CycleModel};
use popnn::train::{PIPELINE, REDUCE, STEP};
use serde::Serialize;

use crate::config::{self, Config};
use crate::run;

/// One row of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub replicas: u32,
    pub machine: String,
    /// The gradient collectives' method (`none` with one replica).
    pub method: String,
    pub step_cycles: u64,
    /// One micro-batch: the pipeline program's estimate over `GA`.
    pub micro_batch_cycles: u64,
    pub all_reduce_cycles: u64,
    /// Modelled samples per second of the compiled step.
    pub samples_per_second: f64,
    /// The seed's model from `T_MB` and `T_AR`.
    pub model_samples_per_second: f64,
    pub efficiency: f64,
    pub all_reduce_us: f64,
    pub link_bound_us: f64,
    pub compile_seconds: f64,
}

/// The method named in a collective's label (`… method=<name> ring=…`).
fn method_of(label: &str) -> Option<&str> {
    let from = label.find("method=")? + "method=".len();
    let rest = &label[from..];
    Some(rest.find(" ring=").map_or(rest, |end| &rest[..end]))
}

/// The report over `replicas`, for the model and batch of `cfg`.
pub fn report(cfg: &Config, replicas: &[u32]) -> anyhow::Result<Vec<Row>> {
    let mut rows: Vec<Row> = Vec::new();
    let grad_bytes = (cfg.shape.params() * 4) as f64;
    for &r in replicas {
        let c = Config {
            replicas: r,
            ..cfg.clone()
        };
        let machine = config::machine(c.chips());
        let compiled = run::build(&c)?;
        let (flat, _) = compiled.popnn.exe.expand_replicas();
        let model = CycleModel::new(&flat);
        let est = |i| estimate_program(&flat, &model, i).map_or(0, |e| e.cycles);
        let (step, pipeline, ar) = (est(STEP), est(PIPELINE), est(REDUCE));
        let clock = machine.clock_hz;
        let batch = c.global_batch() as f64;
        let sps = batch / (step as f64 / clock);
        let model_sps = batch / ((pipeline + ar) as f64 / clock);
        let plans = run::labels(&compiled.popnn.exe, REDUCE, run::GRADIENT_LABEL);
        let method = plans.first().and_then(|l| method_of(l)).unwrap_or("none");
        let directions = match method {
            "bidirectional ring pair" | "meet in the middle" => 2.0,
            _ => 1.0,
        };
        let b = machine.link_bytes_per_cycle * clock * directions;
        let link_bound = 2.0 * f64::from(r - 1) / f64::from(r) * grad_bytes / b;
        let base = rows
            .first()
            .map_or(sps, |f| f.samples_per_second / f64::from(f.replicas));
        rows.push(Row {
            replicas: r,
            machine: match machine.num_ipus.checked_div(machine.chips_per_link_domain) {
                None => format!("Pod{}", machine.num_ipus),
                Some(pods) => format!("{pods} x Pod{}", machine.chips_per_link_domain),
            },
            method: method.to_string(),
            step_cycles: step,
            micro_batch_cycles: pipeline / c.accumulate.max(1) as u64,
            all_reduce_cycles: ar,
            samples_per_second: sps,
            model_samples_per_second: model_sps,
            efficiency: sps / (f64::from(r) * base),
            all_reduce_us: ar as f64 / clock * 1e6,
            link_bound_us: link_bound * 1e6,
            compile_seconds: compiled.compile_seconds,
        });
    }
    Ok(rows)
}

/// The report as a text table.
pub fn table(rows: &[Row]) -> String {
    let mut s = format!(
        "{:>5} {:>12} {:>24} {:>12} {:>12} {:>12} {:>7} {:>12} {:>12} {:>8}\n",
        "R",
        "machine",
        "all-reduce method",
        "samples/s",
        "model",
        "step cyc",
        "eff.",
        "T_AR µs",
        "link µs",
        "compile"
    );
    for r in rows {
        s.push_str(&format!(
            "{:>5} {:>12} {:>24} {:>12.0} {:>12.0} {:>12} {:>6.1}% {:>12.2} {:>12.3} {:>7.2}s\n",
            r.replicas,
            r.machine,
            r.method,
            r.samples_per_second,
            r.model_samples_per_second,
            r.step_cycles,
            100.0 * r.efficiency,
            r.all_reduce_us,
            r.link_bound_us,
            r.compile_seconds
        ));
    }
    s
}

/// Samples per second against R (log–log): the compiled step, the seed's model and linear
/// scaling from R = 1, as SVG; atomically (drawn into a temporary file beside `path`, synced,
/// renamed).
pub fn plot(rows: &[Row], path: &Path) -> anyhow::Result<()> {
    let file = app_support::output::AtomicPath::new(path)?;
    draw(rows, file.tmp(), path)?;
    file.commit()?;
    Ok(())
}

/// [`plot`] into the file `into`; errors name `path`.
fn draw(rows: &[Row], into: &Path, path: &Path) -> anyhow::Result<()> {
    app_support::fonts::register_sans_serif();
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("plotting {}: {e}", path.display());
    let root = SVGBackend::new(into, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let max_r = rows.iter().map(|r| r.replicas).max().unwrap_or(1) as f64;
    let ymax = rows
        .iter()
        .map(|r| r.samples_per_second.max(r.model_samples_per_second))
        .fold(1.0, f64::max)
        * 2.0;
    let ymin = rows
        .iter()
        .map(|r| r.samples_per_second)
        .fold(f64::INFINITY, f64::min)
        / 2.0;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Data-parallel MLP training: modelled throughput",
            ("sans-serif", 22),
        )
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(80)
        .build_cartesian_2d(
            (0.8f64..max_r * 1.25).log_scale(),
            (ymin.max(1.0)..ymax).log_scale(),
        )
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("replicas R")
        .y_desc("samples per second")
        .draw()
        .map_err(|e| err(&e))?;
    let base = rows.first().map_or(1.0, |r| r.samples_per_second);
    let line = |f: &dyn Fn(&Row) -> f64| {
        rows.iter()
            .map(|r| (f64::from(r.replicas), f(r)))
            .collect::<Vec<_>>()
    };
    chart
        .draw_series(LineSeries::new(
            line(&|r| base * f64::from(r.replicas)),
            BLACK.mix(0.4),
        ))
        .map_err(|e| err(&e))?
        .label("linear from R = 1")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.4)));
    chart
        .draw_series(LineSeries::new(line(&|r| r.model_samples_per_second), RED))
        .map_err(|e| err(&e))?
        .label("seed model R·m·GA / (GA·T_MB + T_AR)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
    chart
        .draw_series(LineSeries::new(line(&|r| r.samples_per_second), BLUE).point_size(4))
        .map_err(|e| err(&e))?
        .label("compiled step (static estimate)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
