//! Cardiac solver benchmarks; prints figures.
//!
//! `cargo bench -p cardiac --bench solver [-- steps|flush|precision|setup] [--dx 0.2,0.1] [--strategy S] [--reps N]
//! [--chunk C]`; `S` is one strategy name or several separated by commas (default: all four).
//!
//! - steps: time per ODE step (with its p PDE steps), framework on one chip (each halo strategy,
//!   or the one given) vs the native reference, each framework engine run of `C` steps
//!   (default 10; `cardiac run` uses 250) paired with `C` native steps of the same round;
//!   medians, and the median of the paired ratios (target <= 1.05), then
//!   where the time goes on each side. The framework is compiled with in-place concatenation
//!   wherever possible (`InPlaceConcat::Always`); `--in-place-ab` adds each strategy compiled
//!   without it (`InPlaceConcat::Never`), paired the same way;
//! - flush: the cost of subnormal flushing on the ODE step, one executable on a flushing and
//!   an IEEE engine, alternating (median of paired ratios; goal <= 1.02);
//! - precision (not in `all`; `--t-end T`, default 100 ms): the framework in f32 with
//!   flushing on and off against the f64 baseline on the slab: largest |dv| over the run
//!   (every 1 ms) and largest activation-time difference;
//! - setup: wall time and peak RSS of partition, graph build + compile, and engine set-up for the
//!   0.1 mm slab on 1 and 16 chips.

use std::time::Instant;

use cardiac::matrix::Conductivity;
use cardiac::mesh::TetMesh;
use cardiac::partition::Strategy;
use cardiac::solver::device::{self, DeviceConfig, DeviceRun};
use cardiac::solver::native::NativeSolver;
use cardiac::solver::{Setup, Stimulus};
use poplar::profile::ProfileOptions;
use poplar::{compile, CompileOptions, EngineOptions, InPlaceConcat};

fn peak_rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn slab(dx: f64) -> (TetMesh, Setup) {
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, dx);
    let stim = Stimulus::niederer(&mesh);
    let setup = Setup::new(&mesh, &Conductivity::niederer(), 0.02, &stim).expect("setup");
    (mesh, setup)
}

/// ODE steps each side runs before the measured ones.
const WARM_UP_STEPS: usize = 10;
/// Steps per `--reps` unit (`--reps 15` measures 150 steps a side: 15 rounds of 10-step runs).
const STEPS_PER_REP: usize = 10;

fn bench_steps(dx: f64, strategies: &[Strategy], reps: usize, chunk: usize, in_place_ab: bool) {
    let t = Instant::now();
    let (_mesh, setup) = slab(dx);
    println!(
        "== steps: slab dx {dx} mm, {} cells, p = {} PDE steps per ODE step (setup {:.1} s)",
        setup.n,
        setup.pde_steps,
        t.elapsed().as_secs_f64()
    );
    let mut runs = Vec::new();
    for &strategy in strategies {
        let mut cfg = DeviceConfig::chips(1, strategy);
        // `chunk` ODE steps per engine run, paired with as many native steps. One step per run
        // also counts each run's start-up (waking the engine's threads: 0.02 ms at 0.5 mm,
        // 0.11 ms at 0.2 mm), which an application running long chunks does not pay.
        cfg.chunk_steps = chunk as u32;
        let prob = device::build(&setup, &cfg).expect("build");
        // With --in-place-ab, also the same problem compiled without in-place concatenation
        // (the local vectors gathered into temporaries, the own slice copied every step).
        for in_place in [true, false].into_iter().take(1 + usize::from(in_place_ab)) {
            let opts = CompileOptions {
                in_place_concat: if in_place {
                    InPlaceConcat::Always
                } else {
                    InPlaceConcat::Never
                },
                ..Default::default()
            };
            let exe = compile(&prob.graph, &prob.programs, &opts).expect("compile");
            let mut run =
                DeviceRun::new(&exe, prob.info.clone(), EngineOptions::default()).expect("engine");
            for _ in 0..WARM_UP_STEPS.div_ceil(chunk) {
                run.run_chunk().unwrap();
            }
            let label = if in_place {
                strategy.name().to_string()
            } else {
                format!("{} gathered", strategy.name())
            };
            runs.push((label, run));
        }
    }
    let mut native = NativeSolver::new(&setup);
    for _ in 0..WARM_UP_STEPS {
        native.step();
    }
    // Pair every framework step with a native step taken right next to it: each round runs
    // one ODE step of the native solver and of each framework strategy, in an order that
    // rotates from round to round. On a shared machine whose speed drifts over seconds, a
    // round (tens to hundreds of ms) sees one machine state, and the per-round ratios are
    // what the median is taken over.
    let rounds = (reps * STEPS_PER_REP).div_ceil(chunk);
    let mut fw = vec![Vec::new(); runs.len()];
    let mut ratios = vec![Vec::new(); runs.len()];
    let (mut nat, mut nat_pde, mut nat_ode) = (Vec::new(), Vec::new(), Vec::new());
    let mut times = vec![0.0; runs.len()];
    for round in 0..rounds {
        let mut n = 0.0;
        for k in 0..=runs.len() {
            let slot = (k + round) % (runs.len() + 1);
            if slot == runs.len() {
                let t = Instant::now();
                let (mut pde, mut ode) = (0.0, 0.0);
                for _ in 0..chunk {
                    let st = native.step_timed();
                    pde += st.pde.as_secs_f64() * 1e3;
                    ode += st.ode.as_secs_f64() * 1e3;
                }
                n = t.elapsed().as_secs_f64() * 1e3 / chunk as f64;
                nat_pde.push(pde / chunk as f64);
                nat_ode.push(ode / chunk as f64);
            } else {
                let t = Instant::now();
                runs[slot].1.run_chunk().unwrap();
                times[slot] = t.elapsed().as_secs_f64() * 1e3 / chunk as f64;
            }
        }
        nat.push(n);
        for (i, &f) in times.iter().enumerate() {
            fw[i].push(f);
            ratios[i].push(f / n);
        }
    }
    let n = median(nat.clone());
    println!(
        "  native {n:.2} ms per ODE step (diffusion {:.2}, reaction {:.2}); {:.1} M cell-steps/s (ODE + PDE); medians of {rounds} rounds of {chunk} steps",
        median(nat_pde),
        median(nat_ode),
        setup.n as f64 / (n * 1e-3) / 1e6
    );
    for (i, (label, _)) in runs.iter().enumerate() {
        println!(
            "  framework, 1 chip, {:<20} {:.2} ms per ODE step; ratio {:.3} (median over {rounds} paired rounds; target <= 1.05)",
            label,
            median(fw[i].clone()),
            median(ratios[i].clone())
        );
    }
    print_breakdown(&mut runs, chunk);
}

/// Where the time goes: about ten profiled framework steps per strategy (the profiler times
/// each compute and exchange phase; its own overhead is outside those phases), printed.
fn print_breakdown(runs: &mut [(String, DeviceRun)], chunk: usize) {
    let profiled_runs = STEPS_PER_REP.div_ceil(chunk);
    let steps = (profiled_runs * chunk) as f64;
    for (label, run) in runs.iter_mut() {
        run.engine.enable_profiling(ProfileOptions::default());
        for _ in 0..profiled_runs {
            run.run_chunk().unwrap();
        }
        let prof = run.engine.take_profile().expect("profile");
        let mut parts: Vec<(String, f64)> = Vec::new();
        for ph in &prof.phases {
            let name = format!("{} {}", ph.kind.name(), ph.name);
            let ms = ph.wall_ns as f64 / 1e6 / steps;
            match parts.iter_mut().find(|p| p.0 == name) {
                Some(p) => p.1 += ms,
                None => parts.push((name, ms)),
            }
        }
        let listed: Vec<String> = parts
            .iter()
            .map(|(name, ms)| format!("{name} {ms:.2} ms"))
            .collect();
        println!(
            "  framework {} per step ({steps} profiled steps, {:.2} ms each in all): {}",
            label,
            prof.wall_ns as f64 / 1e6 / steps,
            listed.join(", ")
        );
    }
}

/// The cost of subnormal flushing (`poplar::fp`): the same executable on two engines, one
/// flushing (the GC200 default) and one with IEEE arithmetic, alternating rounds of `chunk` ODE
/// steps; medians and the median of the paired ratios (goal <= 1.02).
fn bench_flush(dx: f64, reps: usize, chunk: usize) {
    let (_mesh, setup) = slab(dx);
    let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
    cfg.chunk_steps = chunk as u32;
    let prob = device::build(&setup, &cfg).expect("build");
    let exe = device::compile_problem(&prob).expect("compile");
    let engine = |flush: bool| {
        let mut run = DeviceRun::new(
            &exe,
            prob.info.clone(),
            EngineOptions {
                flush_subnormals: Some(flush),
                ..Default::default()
            },
        )
        .expect("engine");
        for _ in 0..WARM_UP_STEPS.div_ceil(chunk) {
            run.run_chunk().unwrap();
        }
        run
    };
    let mut on = engine(true);
    let mut off = engine(false);
    let rounds = (reps * STEPS_PER_REP).div_ceil(chunk);
    let (mut t_on, mut t_off, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let time = |run: &mut DeviceRun| {
            let t = Instant::now();
            run.run_chunk().unwrap();
            t.elapsed().as_secs_f64() * 1e3 / chunk as f64
        };
        let (a, b) = if round % 2 == 0 {
            let a = time(&mut on);
            (a, time(&mut off))
        } else {
            let b = time(&mut off);
            (time(&mut on), b)
        };
        t_on.push(a);
        t_off.push(b);
        ratio.push(a / b);
    }
    println!(
        "== flush: slab dx {dx} mm, {} cells, mixed-clean, {rounds} alternating rounds of {chunk} ODE steps",
        setup.n
    );
    println!(
        "  flushing {:.3} ms per ODE step, IEEE {:.3} ms (medians); median paired ratio on/off {:.4} (goal <= 1.02); hardware modes: {}",
        median(t_on),
        median(t_off),
        median(ratio),
        poplar::fp::hardware_flush()
    );
}

/// The f32 framework (flushing on and off) against the f64 baseline on the Niederer slab.
fn bench_precision(dx: f64, t_end: f64) {
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, dx);
    let stim = Stimulus::niederer(&mesh);
    let r = cardiac::solver::precision::compare(
        &mesh,
        &Conductivity::niederer(),
        &stim,
        0.02,
        t_end,
        1.0,
    )
    .expect("precision run");
    println!(
        "== precision: slab dx {dx} mm, {} cells, dt {:.3} ms, to {:.1} ms, v compared every {:.3} ms ({:.1} s)",
        r.cells, r.dt_ode, r.t_end, r.sample_ms, r.wall_s
    );
    for (name, d) in [
        ("f32 flushing (chip) vs f64", &r.flush),
        ("f32 IEEE vs f64", &r.ieee),
        ("f32 flushing vs f32 IEEE", &r.flush_vs_ieee),
    ] {
        println!(
            "  {name:<28} max |dv| {:.4} mV (t = {:.1} ms, cell {}), max |d activation| {:.4} ms, {} activation mismatches",
            d.max_v, d.max_v_at.0, d.max_v_at.1, d.max_activation, d.activation_mismatches
        );
    }
    println!(
        "  the two f32 runs ended bit-identical: {}",
        r.f32_runs_identical
    );
}

fn bench_setup(dx: f64) {
    for chips in [1u32, 16] {
        let t = Instant::now();
        let (_mesh, setup) = slab(dx);
        let t_setup = t.elapsed().as_secs_f64();
        let cfg = DeviceConfig::chips(chips, Strategy::MixedClean);
        let t = Instant::now();
        let prob = device::build(&setup, &cfg).expect("build");
        let t_build = t.elapsed().as_secs_f64();
        let rss_build = peak_rss_mib();
        let t = Instant::now();
        let exe = device::compile_problem(&prob).expect("compile");
        let t_compile = t.elapsed().as_secs_f64();
        let rss_compile = peak_rss_mib();
        let t = Instant::now();
        let run =
            DeviceRun::new(&exe, prob.info.clone(), EngineOptions::default()).expect("engine");
        let t_engine = t.elapsed().as_secs_f64();
        let max_mem = exe.tiles.iter().map(|t| t.memory_bytes).max().unwrap_or(0);
        println!(
            "== setup: slab dx {dx} mm ({} cells) on {chips} chip(s): mesh+matrix {t_setup:.1} s; partition+graph build {t_build:.1} s (peak RSS {rss_build:.0} MiB); compile {t_compile:.1} s (peak RSS {rss_compile:.0} MiB); engine set-up {t_engine:.1} s (peak RSS {:.0} MiB); max tile memory {max_mem} B of {}",
            setup.n,
            peak_rss_mib(),
            cfg.target.bytes_per_tile
        );
        drop(run);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let takes_value = ["--dx", "--strategy", "--reps", "--chunk", "--t-end"];
    let which = args
        .iter()
        .enumerate()
        .find(|(i, a)| {
            !a.starts_with('-') && (*i == 0 || !takes_value.contains(&args[i - 1].as_str()))
        })
        .map(|(_, a)| a.clone())
        .unwrap_or_else(|| "all".into());
    let dxs: Vec<f64> = value("--dx")
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![0.2, 0.1]);
    let strategies = match value("--strategy").as_deref() {
        None => Strategy::ALL.to_vec(),
        Some(list) => list
            .split(',')
            .map(|name| {
                Strategy::ALL
                    .into_iter()
                    .find(|s| s.name() == name)
                    .unwrap_or_else(|| {
                        let names: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
                        panic!("unknown --strategy {name} ({})", names.join(", "))
                    })
            })
            .collect(),
    };
    let reps: usize = value("--reps").and_then(|r| r.parse().ok()).unwrap_or(9);
    let chunk: usize = value("--chunk")
        .and_then(|r| r.parse().ok())
        .unwrap_or(10)
        .max(1);
    for &dx in &dxs {
        if which == "all" || which == "steps" {
            bench_steps(
                dx,
                &strategies,
                reps,
                chunk,
                args.iter().any(|a| a == "--in-place-ab"),
            );
        }
    }
    if which == "precision" {
        let t_end = value("--t-end")
            .and_then(|t| t.parse().ok())
            .unwrap_or(100.0);
        for &dx in &dxs {
            bench_precision(dx, t_end);
        }
    }
    if which == "all" || which == "flush" {
        bench_flush(dxs[0], reps, chunk);
    }
    if which == "all" || which == "setup" {
        bench_setup(*dxs.last().unwrap_or(&0.1));
    }
}
