//! What the commands print about a run (on rank 0, through [`say!`](crate::say)): the
//! machine, the activation times at the benchmark points, an activation summary for any mesh,
//! the modelled phase breakdown from the profile, and memory per tile.

use poplar::profile::{PhaseKind, Profile};
use poplar::Target;

use crate::app::problem::ProblemSpec;
use crate::app::results::RunReport;
use crate::partition::Strategy;
use crate::solver::{Results, Setup};

/// One line: chips, tiles, memory and workers per tile, clock, tiles used, halo strategy.
pub fn describe_machine(t: &Target, tiles_used: usize, strategy: Strategy) -> String {
    format!(
        "{} chip(s) × {} tiles, {} KiB per tile, {} workers per tile, {:.2} GHz; {} tiles used; halo strategy {}",
        t.num_ipus,
        t.tiles_per_ipu,
        t.bytes_per_tile / 1024,
        t.workers_per_tile,
        t.clock_hz / 1e9,
        tiles_used,
        strategy.name()
    )
}

/// Activation times at the benchmark points of the report (nothing if it has none).
pub fn print_points(r: &RunReport) {
    if r.points.is_empty() {
        return;
    }
    say!("activation times at the benchmark points (ms; -1 = not activated):");
    for p in &r.points {
        let [x, y, z] = p.point_mm;
        say!(
            "  {} ({x:>4}, {y:>3}, {z:>3}) mm  {:8.3}",
            p.name,
            p.activation_ms
        );
    }
}

/// Activation summary for any mesh: how many activated, earliest/median/latest.
pub fn print_activation_summary(setup: &Setup, res: &Results) {
    let mut act: Vec<f32> = res
        .activation
        .iter()
        .copied()
        .filter(|&a| a >= 0.0)
        .collect();
    act.sort_by(f32::total_cmp);
    say!(
        "activated {} of {} cells ({:.1} %)",
        act.len(),
        setup.n,
        100.0 * act.len() as f64 / setup.n.max(1) as f64
    );
    if let (Some(first), Some(last)) = (act.first(), act.last()) {
        say!(
            "activation time: first {first:.3} ms, median {:.3} ms, last {last:.3} ms",
            act[act.len() / 2]
        );
    }
    let stim: Vec<f32> = (0..setup.n)
        .filter(|&i| setup.stimulated(i))
        .map(|i| res.activation[i])
        .collect();
    let stim_act = stim.iter().filter(|&&a| a >= 0.0).count();
    say!(
        "stimulated cells: {} ({} activated, latest at {:.3} ms)",
        stim.len(),
        stim_act,
        stim.iter().copied().fold(-1.0f32, f32::max)
    );
}

/// Modelled cycles per labelled block (PDE, ODE), per ODE step, split into compute, exchange
/// and sync, from the engine's profiler.
pub fn print_phase_breakdown(p: &Profile, target: &Target, dt_ode: f32, t: f32) {
    let steps = (f64::from(t) / f64::from(dt_ode)).round().max(1.0);
    let us = |c: f64| c / target.clock_hz * 1e6;
    say!(
        "phase breakdown (modelled cycles per ODE step, {steps} steps; µs at {:.2} GHz):",
        target.clock_hz / 1e9
    );
    say!(
        "  {:<8} {:>12} {:>12} {:>12} {:>12} {:>10}",
        "label",
        "compute",
        "exchange",
        "sync",
        "total",
        "µs"
    );
    let mut sum = 0.0;
    for l in p.summary_by_label() {
        let per = |c: u64| c as f64 / steps;
        sum += per(l.total);
        say!(
            "  {:<8} {:>12.0} {:>12.0} {:>12.0} {:>12.0} {:>10.2}",
            l.name,
            per(l.compute),
            per(l.exchange),
            per(l.sync),
            per(l.total),
            us(per(l.total))
        );
    }
    let total = p.total_cycles() as f64 / steps;
    say!(
        "  per ODE step: {total:.0} cycles = {:.2} µs modelled (labels sum {sum:.0}); {:.3} s of chip time per simulated second",
        us(total),
        us(total) * 1e-6 / (f64::from(dt_ode) * 1e-3)
    );
    print_host_time(p, steps);
}

/// The simulator's own cost on this host per ODE step, for comparison with the native
/// reference.
fn print_host_time(p: &Profile, steps: f64) {
    let wall = |kind: PhaseKind| {
        p.phases
            .iter()
            .filter(|ph| ph.kind == kind)
            .map(|ph| ph.wall_ns as f64)
            .sum::<f64>()
            / steps
            / 1e6
    };
    say!(
        "  simulator host time per ODE step: compute {:.3} ms, exchange {:.3} ms",
        wall(PhaseKind::Compute),
        wall(PhaseKind::Exchange)
    );
}

/// Memory per used tile of a compiled executable (bytes): the largest and the median.
pub fn memory_max_median(exe: &poplar::Executable) -> (u32, u32) {
    let mut v: Vec<u32> = exe
        .tiles
        .iter()
        .map(|t| t.memory_bytes)
        .filter(|&b| b > 0)
        .collect();
    v.sort_unstable();
    (
        v.last().copied().unwrap_or(0),
        v.get(v.len() / 2).copied().unwrap_or(0),
    )
}

/// Lines describing the stimulus sites and the cell models, for the run's header.
pub fn describe_stimulus(spec: &ProblemSpec, setup: &Setup) -> Vec<String> {
    let mut out = Vec::new();
    let stimulated = (0..setup.n).filter(|&i| setup.stimulated(i)).count();
    let densities: Vec<f64> = std::iter::once(spec.stim_density)
        .chain(spec.sites.iter().map(|s| s.density))
        .collect();
    for (k, (site, density)) in setup.sites.iter().zip(densities).enumerate() {
        let cells = (0..setup.n)
            .filter(|&i| setup.classes[usize::from(setup.stim_class[i])].contains(&(k as u8)))
            .count();
        let mut line = format!(
            "stimulus{}: {cells} cells, {density} µA/mm³ for {} ms from t = {} ms",
            if setup.sites.len() > 1 {
                format!(" site {}", k + 1)
            } else {
                String::new()
            },
            site.duration,
            site.start
        );
        if site.period > 0.0 {
            line += &format!(", {} beats every {} ms", site.count, site.period);
        }
        if site.s2_start >= 0.0 {
            line += &format!(", S2 at {} ms", site.s2_start);
        }
        out.push(line);
    }
    if setup.sites.len() > 1 {
        out.push(format!("stimulated cells in all: {stimulated}"));
    }
    if setup.models.len() > 1 || !spec.benchmark_cells() {
        for (k, m) in setup.models.iter().enumerate() {
            let cells = setup
                .cell_model
                .iter()
                .filter(|&&c| usize::from(c) == k)
                .count();
            if cells == 0 {
                continue;
            }
            let scaled: Vec<String> = m
                .scale
                .entries()
                .iter()
                .filter(|(_, v)| *v != 1.0)
                .map(|(n, v)| format!("{n}×{v}"))
                .collect();
            out.push(format!(
                "cell model {}: TP06 {:?}{}: {cells} cells",
                k + 1,
                m.cell_type,
                if scaled.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", scaled.join(", "))
                }
            ));
        }
    }
    if spec.act_threshold != crate::solver::ACTIVATION_THRESHOLD_MV {
        out.push(format!("activation threshold: {} mV", spec.act_threshold));
    }
    out
}
