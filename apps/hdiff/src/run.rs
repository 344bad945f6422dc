//! A run of the stencil on the simulated chip, and the figures a user wants from it: whether it
//! is correct, how much tile memory it takes, how the modelled time of an iteration splits, the
//! modelled throughput against the chip's compute bound, and the host's speed against the
//! native loop.

use std::time::Instant;

use poplar::profile::{MemoryReport, PhaseKind, Profile};
use poplar::{Executable, Target};
use serde::Serialize;

use crate::device::{build, Device};
use crate::error::HdiffError;
use crate::grid::Grid;
use crate::plan::{Plan, PlanRequest};
use crate::reference::Native;
use crate::stencil::FLOPS_PER_POINT;

/// A plan and its executable.
pub struct Compiled {
    pub plan: Plan,
    pub exe: Executable,
    pub compile_s: f64,
}

/// Plans and compiles.
pub fn compile(grid: Grid, target: &Target, request: PlanRequest) -> Result<Compiled, HdiffError> {
    crate::codelets::link();
    let plan = Plan::new(grid, target, request)?;
    let t0 = Instant::now();
    let exe = build(&plan, target)?;
    Ok(Compiled {
        plan,
        exe,
        compile_s: t0.elapsed().as_secs_f64(),
    })
}

/// Tile memory of an executable.
#[derive(Debug, Clone, Serialize)]
pub struct Memory {
    pub bytes_per_tile: u64,
    pub max: u64,
    pub median: u64,
    pub fullest_tile: u32,
}

impl Memory {
    pub fn of(exe: &Executable, plan: &Plan) -> Memory {
        let report = MemoryReport::from_executable(exe);
        // Over the tiles the plan uses (the others hold nothing).
        let used: std::collections::BTreeSet<u32> = plan
            .units
            .iter()
            .flat_map(|u| u.tiles.iter().map(|t| t.as_u32()))
            .collect();
        let mut totals: Vec<(u64, u32)> = report
            .tiles
            .iter()
            .filter(|t| used.contains(&t.tile))
            .map(|t| (t.total, t.tile))
            .collect();
        totals.sort_unstable();
        let (max, fullest_tile) = totals.last().copied().unwrap_or((0, 0));
        Memory {
            bytes_per_tile: report.bytes_per_tile,
            max,
            median: totals.get(totals.len() / 2).map(|t| t.0).unwrap_or(0),
            fullest_tile,
        }
    }
}

/// Modelled time of one iteration.
#[derive(Debug, Clone, Serialize)]
pub struct Modelled {
    /// Cycles of one iteration, split by what advanced the slowest tile.
    pub compute_cycles: u64,
    pub exchange_cycles: u64,
    pub sync_cycles: u64,
    pub cycles: u64,
    pub seconds: f64,
    /// The busiest phases: name, compute or exchange, cycles of the slowest tile.
    pub phases: Vec<(String, String, u64)>,
    pub points_per_s: f64,
    /// At [`FLOPS_PER_POINT`].
    pub gflops: f64,
    /// The chip's compute bound for this stencil ([`Plan::compute_bound_points_per_s`]).
    pub bound_points_per_s: f64,
    pub fraction_of_bound: f64,
    /// Bytes exchanged per iteration (all tiles), and of them across chips.
    pub exchange_bytes: u64,
    pub inter_chip_bytes: u64,
}

/// Everything a run reports.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub grid: Grid,
    pub plan: String,
    pub mapping: crate::plan::Mapping,
    pub chips: u32,
    pub tiles_used: usize,
    pub flops_per_point: u64,
    pub iterations: u64,
    pub memory: Memory,
    pub modelled: Modelled,
    pub compile_s: f64,
    /// Host wall time per iteration of the simulator and of the native loop, same threads.
    pub host_s_per_iteration: f64,
    pub native_s_per_iteration: Option<f64>,
    pub host_over_native: Option<f64>,
    pub threads: usize,
    /// Whether the result equals the native loop's bit for bit (`None`: not compared).
    pub bit_identical: Option<bool>,
    pub max_abs_difference: Option<f64>,
}

/// How to run.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Applications of the stencil (at least one).
    pub iterations: u64,
    /// Host threads of the simulator and the native loop (`None`: all cores).
    pub threads: Option<usize>,
    /// Compare with the native loop (and time it).
    pub compare: bool,
}

/// Runs `options.iterations` iterations of `compiled` from `input`, profiling the first;
/// compares with the native loop when asked. `progress(done, seconds)` after each engine run.
/// Returns the figures and the final field.
pub fn run(
    compiled: &Compiled,
    target: &Target,
    (input, coeff): (&[f32], &[f32]),
    options: RunOptions,
    mut progress: impl FnMut(u64, f64),
) -> Result<(Figures, Vec<f32>), HdiffError> {
    let RunOptions {
        iterations,
        threads,
        compare,
    } = options;
    let grid = compiled.plan.grid;
    let mut dev = Device::new(&compiled.exe, grid, threads)?;
    let threads = dev.engine.threads();
    let flush = dev.engine.flushes();
    dev.load(input, coeff)?;
    let iterations = iterations.max(1);
    // The first iteration with profiling on (modelled figures), the rest timed.
    let profile = dev.profile_one()?;
    let t0 = Instant::now();
    dev.iterate(iterations - 1, |done| {
        progress(done + 1, t0.elapsed().as_secs_f64())
    })?;
    let timed = t0.elapsed().as_secs_f64();
    let host_s_per_iteration = if iterations > 1 {
        timed / (iterations - 1) as f64
    } else {
        profile.wall_ns as f64 * 1e-9
    };
    let out = dev.read()?;
    drop(dev);
    check_finite(&out, grid)?;
    let modelled = Modelled::of(&profile, grid, target);
    let (mut native_s, mut bit_identical, mut max_abs) = (None, None, None);
    if compare {
        let native = Native::with_flush(grid, threads, flush);
        let t0 = Instant::now();
        let want = native.run(input, coeff, iterations as usize);
        native_s = Some(t0.elapsed().as_secs_f64() / iterations as f64);
        bit_identical = Some(
            want.iter()
                .zip(&out)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
        );
        max_abs = Some(
            want.iter()
                .zip(&out)
                .map(|(a, b)| (f64::from(*a) - f64::from(*b)).abs())
                .fold(0.0, f64::max),
        );
    }
    let figures = Figures {
        grid,
        plan: compiled.plan.describe(),
        mapping: compiled.plan.mapping,
        chips: target.num_ipus,
        tiles_used: compiled.plan.tiles_used(),
        flops_per_point: FLOPS_PER_POINT,
        iterations,
        memory: Memory::of(&compiled.exe, &compiled.plan),
        modelled,
        compile_s: compiled.compile_s,
        host_s_per_iteration,
        native_s_per_iteration: native_s,
        host_over_native: native_s.map(|n| host_s_per_iteration / n),
        threads,
        bit_identical,
        max_abs_difference: max_abs,
    };
    Ok((figures, out))
}

/// A blown-up field is an error, compared or not: NaN never counts as agreement.
fn check_finite(out: &[f32], grid: Grid) -> Result<(), HdiffError> {
    let Some(first) = out.iter().position(|v| !v.is_finite()) else {
        return Ok(());
    };
    let count = out.iter().filter(|v| !v.is_finite()).count();
    let plane = grid.ni * grid.nj;
    Err(HdiffError::NonFinite {
        count,
        total: out.len(),
        first,
        i: first % grid.ni,
        j: first % plane / grid.ni,
        k: first / plane,
    })
}

impl Modelled {
    /// The modelled figures of one profiled iteration on `target`.
    fn of(profile: &Profile, grid: Grid, target: &Target) -> Modelled {
        let elapsed = profile.elapsed;
        let cycles = elapsed.compute + elapsed.exchange + elapsed.sync;
        let seconds = cycles as f64 / target.clock_hz;
        let points = grid.output_points() as f64;
        let bound = Plan::compute_bound_points_per_s(target);
        let points_per_s = points / seconds;
        let mut phases: Vec<(String, String, u64)> = profile
            .phases
            .iter()
            .map(|p| (p.name.clone(), p.kind.name().to_string(), p.cycles))
            .collect();
        phases.sort_by_key(|p| std::cmp::Reverse(p.2));
        phases.truncate(6);
        let exchange_bytes = profile
            .phases
            .iter()
            .filter(|p| p.kind == PhaseKind::Exchange)
            .map(|p| p.bytes * p.executions)
            .sum();
        let inter_chip_bytes = profile
            .phases
            .iter()
            .filter(|p| p.kind == PhaseKind::Exchange)
            .map(|p| p.inter_chip_bytes * p.executions)
            .sum();
        Modelled {
            compute_cycles: elapsed.compute,
            exchange_cycles: elapsed.exchange,
            sync_cycles: elapsed.sync,
            cycles,
            seconds,
            phases,
            points_per_s,
            gflops: points_per_s * FLOPS_PER_POINT as f64 * 1e-9,
            bound_points_per_s: bound,
            fraction_of_bound: points_per_s / bound,
            exchange_bytes,
            inter_chip_bytes,
        }
    }
}

impl Figures {
    /// The report printed by `hdiff run`.
    pub fn text(&self) -> String {
        let m = &self.modelled;
        let kib = |b: u64| b as f64 / 1024.0;
        let mut s = String::new();
        use std::fmt::Write;
        let _ = writeln!(
            s,
            "grid        {} ({} output points per iteration)",
            self.grid,
            self.grid.output_points()
        );
        let _ = writeln!(s, "plan        {} on {} chip(s)", self.plan, self.chips);
        match (self.bit_identical, self.max_abs_difference) {
            (Some(true), _) => {
                let _ = writeln!(
                    s,
                    "correct     bit-identical to the host reference after {} iteration(s)",
                    self.iterations
                );
            }
            (Some(false), Some(d)) => {
                let _ = writeln!(
                    s,
                    "correct     NO: differs from the host reference, max |difference| {d:e}"
                );
            }
            _ => {
                let _ = writeln!(s, "correct     not compared (--no-check)");
            }
        }
        let _ = writeln!(
            s,
            "memory      per tile max {:.1} KiB (tile {}), median {:.1} KiB, of {:.0} KiB",
            kib(self.memory.max),
            self.memory.fullest_tile,
            kib(self.memory.median),
            kib(self.memory.bytes_per_tile)
        );
        let pct = |c: u64| 100.0 * c as f64 / m.cycles.max(1) as f64;
        let _ = writeln!(
            s,
            "modelled    {} cycles per iteration ({:.2} µs): compute {} ({:.0} %), exchange {} ({:.0} %), sync {} ({:.0} %)",
            m.cycles,
            m.seconds * 1e6,
            m.compute_cycles,
            pct(m.compute_cycles),
            m.exchange_cycles,
            pct(m.exchange_cycles),
            m.sync_cycles,
            pct(m.sync_cycles)
        );
        let _ = writeln!(
            s,
            "            exchanged {:.1} KiB per iteration ({:.1} KiB across chips)",
            kib(m.exchange_bytes),
            kib(m.inter_chip_bytes)
        );
        for (name, kind, cycles) in &m.phases {
            let _ = writeln!(s, "            {cycles:>9} cycles  {kind:<8} {name}");
        }
        let _ = writeln!(
            s,
            "throughput  {:.1} GFLOP/s modelled at {} flop per point, {:.3e} points/s; the chip's compute bound {:.3e} points/s: {:.1} % of it",
            m.gflops,
            self.flops_per_point,
            m.points_per_s,
            m.bound_points_per_s,
            100.0 * m.fraction_of_bound
        );
        let _ = write!(
            s,
            "host        compile {:.2} s; {:.2} ms per iteration on {} thread(s)",
            self.compile_s,
            self.host_s_per_iteration * 1e3,
            self.threads
        );
        if let (Some(n), Some(r)) = (self.native_s_per_iteration, self.host_over_native) {
            let _ = write!(s, ", native loop {:.2} ms: ratio {:.2}", n * 1e3, r);
        }
        s.push('\n');
        s
    }
}
