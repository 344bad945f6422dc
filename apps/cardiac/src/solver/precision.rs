//! What the chip's arithmetic changes in a simulation: the framework solver in f32, with
//! subnormal flushing on (the chip) and off (IEEE), against the f64 baseline
//! ([`NativeF64`]), with the largest difference of `v` over the run and of activation times.

use std::time::Instant;

use poplar::EngineOptions;
use serde::Serialize;

use super::device::{self, DeviceConfig, DeviceRun};
use super::native64::{Difference, NativeF64};
use super::{Setup, Stimulus};
use crate::matrix::Conductivity;
use crate::mesh::TetMesh;
use crate::partition::Strategy;

/// The comparison of one problem.
#[derive(Debug, Clone, Serialize)]
pub struct PrecisionReport {
    pub cells: usize,
    pub dt_ode: f64,
    pub t_end: f64,
    /// Milliseconds between compared voltage fields.
    pub sample_ms: f64,
    /// The framework with flushing on (the chip) against f64.
    pub flush: Difference,
    /// The framework with IEEE arithmetic against f64.
    pub ieee: Difference,
    /// The two f32 runs against each other.
    pub flush_vs_ieee: Difference,
    /// Whether the two f32 runs ended with identical bits (voltage and activation).
    pub f32_runs_identical: bool,
    /// Cells the f64 run activated.
    pub activated: usize,
    pub wall_s: f64,
}

fn to_f64(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}

/// Runs the problem to `t_end` ms three ways and compares every `sample_ms` (rounded to whole
/// ODE steps).
pub fn compare(
    mesh: &TetMesh,
    cond: &Conductivity,
    stim: &Stimulus,
    dt_ode: f64,
    t_end: f64,
    sample_ms: f64,
) -> anyhow::Result<PrecisionReport> {
    let t0 = Instant::now();
    let setup = Setup::new(mesh, cond, dt_ode, stim)?;
    let dt = f64::from(setup.dt_ode);
    let per_sample = (sample_ms / dt).round().max(1.0) as u32;
    let samples = (t_end / (dt * f64::from(per_sample))).round().max(1.0) as u64;
    let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
    cfg.chunk_steps = per_sample;
    let prob = device::build(&setup, &cfg)?;
    let exe = device::compile_problem(&prob)?;
    let engine = |flush: bool| {
        DeviceRun::new(
            &exe,
            prob.info.clone(),
            EngineOptions {
                flush_subnormals: Some(flush),
                ..Default::default()
            },
        )
    };
    let (mut on, mut off) = (engine(true)?, engine(false)?);
    let mut f64run = NativeF64::new(mesh, cond, stim, &setup)?;
    let (mut flush, mut ieee, mut both) = (
        Difference::default(),
        Difference::default(),
        Difference::default(),
    );
    for _ in 0..samples {
        on.run_chunk()?;
        off.run_chunk()?;
        for _ in 0..per_sample {
            f64run.step();
        }
        let t = f64run.time();
        let (v_on, v_off) = (on.voltage()?, off.voltage()?);
        flush.voltages(t, &v_on, f64run.voltage());
        ieee.voltages(t, &v_off, f64run.voltage());
        both.voltages(t, &v_on, &to_f64(&v_off));
    }
    let (a_on, a_off) = (on.activation()?, off.activation()?);
    flush.activations(&a_on, f64run.activation());
    ieee.activations(&a_off, f64run.activation());
    both.activations(&a_on, &to_f64(&a_off));
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let identical = bits(&on.voltage()?) == bits(&off.voltage()?) && bits(&a_on) == bits(&a_off);
    Ok(PrecisionReport {
        cells: setup.n,
        dt_ode: dt,
        t_end: f64run.time(),
        sample_ms: dt * f64::from(per_sample),
        flush,
        ieee,
        flush_vs_ieee: both,
        f32_runs_identical: identical,
        activated: f64run.activation().iter().filter(|&&a| a >= 0.0).count(),
        wall_s: t0.elapsed().as_secs_f64(),
    })
}
