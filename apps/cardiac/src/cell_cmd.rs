//! `cardiac cell`: one TP06 cell paced on the host (S1 beats, optional S1-S2 restitution),
//! its trace and action-potential measures.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{ensure, Result};
use cardiac::mesh::CellType;
use cardiac::say;
use cardiac::tp06::Scalings;
use clap::Args;

#[derive(Args)]
pub(crate) struct CellArgs {
    #[arg(long, value_enum, default_value_t = CellType::Epi)]
    pub(crate) cell_type: CellType,
    /// Time step (ms), at most 0.2.
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 0.02, allow_hyphen_values = true)]
    pub(crate) dt: f64,
    /// Basic cycle length (ms).
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 1000.0, allow_hyphen_values = true)]
    pub(crate) bcl: f64,
    /// S1 beats.
    #[arg(long, default_value_t = 5, allow_hyphen_values = true)]
    pub(crate) beats: usize,
    /// Stimulus current (pA/pF; negative depolarises, the TP06 convention).
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = -52.0, allow_hyphen_values = true)]
    pub(crate) stim_amplitude: f64,
    /// Pulse length (ms).
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 1.0, allow_hyphen_values = true)]
    pub(crate) stim_duration: f64,
    /// First pulse (ms).
    #[arg(long, value_parser = app_support::bounds::f64_value, default_value_t = 10.0, allow_hyphen_values = true)]
    pub(crate) stim_start: f64,
    /// S1-S2 restitution: S2 coupling intervals after the last S1 pulse (ms), as a list
    /// (300,350,400) or a range start:stop:step (250:1000:25).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) s2: Option<String>,
    /// Sampling interval of trace.csv (ms), at least --dt [default: 0.1, or --dt if longer].
    #[arg(long, value_parser = app_support::bounds::f64_value, allow_hyphen_values = true)]
    pub(crate) trace_every: Option<f64>,
    /// TP06 conductance scalings, e.g. GKr*0.5,GCaL*1.2 (as `cardiac run --tp06`).
    #[arg(long)]
    pub(crate) tp06: Option<String>,
    /// Output folder (checked before any work; an earlier run's files are kept unless --force).
    #[arg(long, default_value = "cell-out")]
    pub(crate) out: PathBuf,
    /// Overwrite an earlier run's files in --out; also run a protocol past the work bound
    /// (10^10 cell-steps: cells × time steps).
    #[arg(long)]
    pub(crate) force: bool,
}

/// `300,350` or `250:1000:25` (inclusive).
pub(crate) fn parse_s2(text: &str) -> Result<Vec<f64>> {
    let bad = || {
        anyhow::anyhow!("--s2 {text}: give intervals in ms as a list (300,350,400) or a range start:stop:step (250:1000:25)")
    };
    if let Some((a, rest)) = text.split_once(':') {
        let (b, c) = rest.split_once(':').ok_or_else(bad)?;
        let (a, b, c): (f64, f64, f64) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
            c.trim().parse().map_err(|_| bad())?,
        );
        ensure!(c > 0.0 && a <= b && a.is_finite() && b.is_finite(), bad());
        let n = ((b - a) / c + 1e-9).floor() as usize + 1;
        ensure!(n <= 10_000, "--s2 {text}: {n} intervals, at most 10,000");
        Ok((0..n).map(|k| a + c * k as f64).collect())
    } else {
        text.split(',')
            .map(|x| x.trim().parse::<f64>().map_err(|_| bad()))
            .collect()
    }
}

pub(crate) fn cmd_cell(a: CellArgs) -> Result<()> {
    use cardiac::app::single;
    use cardiac::cell::{self, Protocol};
    let p = Protocol {
        cell_type: a.cell_type,
        dt: a.dt,
        bcl: a.bcl,
        beats: a.beats,
        amplitude: a.stim_amplitude,
        duration: a.stim_duration,
        start: a.stim_start,
        tail: None,
        scale: match &a.tp06 {
            Some(t) => Scalings::ONE
                .parse_onto(t)
                .map_err(|e| anyhow::anyhow!("--tp06: {e}"))?,
            None => Scalings::ONE,
        },
        trace_every: a.trace_every.unwrap_or(a.dt.max(0.1)),
    };
    p.check()?;
    if let Some(every) = a.trace_every {
        ensure!(
            every >= a.dt,
            "--trace-every {} ms is shorter than the time step (--dt {} ms): give at least one \
             time step",
            cardiac::format::show(every),
            a.dt
        );
    }
    let s2 = a.s2.as_deref().map(parse_s2).transpose()?;
    p.check_size(s2.as_deref(), a.force)?;
    let _output_lock = single::prepare(&a.out, a.force)?;
    say!(
        "== cardiac cell: TP06 {:?}, dt {} ms; {} beats at {} ms, {} pA/pF for {} ms from {} ms",
        p.cell_type,
        p.dt,
        p.beats,
        p.bcl,
        p.amplitude,
        p.duration,
        p.start
    );
    let t = Instant::now();
    let run = cell::pace(&p)?;
    let secs = t.elapsed().as_secs_f64();
    say!("  beat  v_rest   v_max  dV/dt_max  upstroke  APD30   APD50   APD90 (mV, mV/ms, ms)");
    for (k, b) in run.beats.iter().enumerate() {
        match b {
            Some(f) => say!(
                "  {:>4} {:7.2} {:7.2} {:10.1} {:9.3} {:7.2} {:7.2} {:7.2}",
                f.beat,
                f.v_rest,
                f.v_max,
                f.dvdt_max,
                f.t_upstroke,
                f.apd30,
                f.apd50,
                f.apd90
            ),
            None => say!("  {:>4}  no capture (V stayed below 0 mV)", k + 1),
        }
    }
    say!(
        "  {:.2} s for {} beats ({:.1} beats/s)",
        secs,
        p.beats,
        p.beats as f64 / secs.max(1e-9)
    );
    let rest = match &s2 {
        Some(s2) => {
            let r = cell::restitution(&p, s2)?;
            say!("S1-S2 restitution (S2 after the last S1 pulse):");
            say!("  S2 (ms)  DI (ms)  APD90 (ms)");
            for c in &r.1 {
                match &c.features {
                    Some(f) => say!("  {:7.1} {:8.1} {:10.2}", c.s2, c.di, f.apd90),
                    None => say!("  {:7.1} {:8.1}  no capture (refractory)", c.s2, c.di),
                }
            }
            Some(r)
        }
        None => None,
    };
    single::write(&a.out, &p, &run, rest.as_ref())?;
    say!(
        "wrote {0}/trace.csv, {0}/beats.csv{1} and {0}/cell.json",
        a.out.display(),
        if rest.is_some() {
            format!(", {}/restitution.csv", a.out.display())
        } else {
            String::new()
        }
    );
    Ok(())
}
