//! Sensitivity of modelled times to the cycle model's assumed constants (`Target::assumptions`:
//! the constants no public measurement backs), each halved and doubled, one at a time; the
//! table of `docs/cycle-model.md`, "Sensitivity".
//!
//! Each workload is built and compiled once on its preset; its executable's target is then
//! replaced by each perturbed one and re-costed with the static estimate
//! (`poplar::profile::estimate_program`), which is what `cardiac study`, `mlp scaling` and the
//! all-reduce bench report. Workloads:
//!
//! - cardiac: the modelled chip time per simulated ms of the built-in Niederer slab (`cardiac
//!   study` without `--mesh`, mixed-clean, flat METIS) at 1, 4 and 16 chips. Not the
//!   heart04-size mesh: that one is made outside the workspace, by
//!   `apps/cardiac/tools/heart_mesh.py` with gmsh (Python), minutes of its own. The slab at 0.1
//!   mm (2,520,000 cells against heart04's 3,039,483; `SENSITIVITY_DX`, mm, to change it) is
//!   the largest built-in mesh and is set up in about two minutes on a 2-core host;
//! - all-reduce: 64 MB of f32 per replica over 16 replicas of one chip on a Pod16
//!   (`collectives::all_reduce_in_place`, automatic method), in µs;
//! - mlp: the scaling report's samples per second at R = 16 (`mlp scaling`'s default model,
//!   one chip per replica on a Pod64) and its efficiency against R = 1 under the same target;
//! - overlap: the overlapped Streaming Memory loop (8 chunks of 256 KiB, chunk i+1 loading to
//!   32 I/O tiles of a GC200 while the compute tiles work on chunk i, `Program::overlap_io`),
//!   with the compute's passes chosen so that compute and load take about as long, in µs.
//!
//! A second table gives the cardiac halo exchange's effectiveness and the modelled time at the
//! earlier link and sync constants (32 GB/s each way, global sync 1,500 cycles) against the
//! sourced ones.
//!
//! `cargo bench -p cycle-validation --bench sensitivity`

use std::time::Instant;

use cardiac::app::problem::{self, ProblemSpec};
use cardiac::app::study;
use cardiac::solver::device;
use collectives::{Group, Op, Options};
use poplar::profile::{estimate_program, CycleModel};
use poplar::target::Assumed;
use poplar::{compile, CompileOptions, DType, Executable, Graph, Program, Target};

/// A target derived from a workload's own.
struct Variant {
    name: String,
    apply: Box<dyn Fn(&Target) -> Target>,
}

/// The baseline, the earlier link and sync constants, then each assumed constant halved and
/// doubled.
fn variants() -> Vec<Variant> {
    let mut v = vec![
        Variant {
            name: "baseline".into(),
            apply: Box::new(Target::clone),
        },
        Variant {
            name: "earlier: 32 GB/s links, global sync 1,500".into(),
            apply: Box::new(|t: &Target| Target {
                link_bytes_per_cycle: 32.0e9 / t.clock_hz,
                global_sync_cycles: 1500,
                ..t.clone()
            }),
        },
    ];
    for c in Assumed::ALL {
        for (word, f) in [("x 1/2", 0.5), ("x 2", 2.0)] {
            v.push(Variant {
                name: format!("{} {word}", c.name()),
                apply: Box::new(move |t: &Target| t.with_scaled(c, f)),
            });
        }
    }
    v
}

/// `f` of `exe` with its target replaced by `t` (restored after).
fn with_target<R>(exe: &mut Executable, t: Target, f: impl FnOnce(&Executable) -> R) -> R {
    let saved = std::mem::replace(&mut exe.target, t);
    let r = f(exe);
    exe.target = saved;
    r
}

/// The static estimate of program `index` of a flat `exe`, in cycles.
fn cycles(exe: &Executable, index: usize) -> u64 {
    let model = CycleModel::new(exe);
    estimate_program(exe, &model, index).map_or(0, |e| e.cycles)
}

/// One column of the table: a figure per variant.
struct Column {
    name: String,
    values: Vec<f64>,
}

/// The cardiac halo exchange under one target: effectiveness, mean and max cycles of the PDE
/// exchange per tile, and modelled ms per simulated ms.
#[derive(Clone, Copy, Default)]
struct Halo {
    effectiveness: f64,
    mean: f64,
    max: f64,
    ms_per_ms: f64,
}

/// The cardiac slab at `dx` mm over each of `chips`: a column per chip count, and the halo
/// figures under the baseline and the earlier constants.
fn cardiac_columns(
    dx: f64,
    chips: &[u32],
    vs: &[Variant],
) -> (Vec<Column>, Vec<(u32, Halo, Halo)>) {
    let spec = ProblemSpec::slab(dx);
    let (mesh, _) = problem::load_mesh(&spec).expect("slab");
    let setup = problem::setup(&spec, &mesh).expect("set-up");
    let steps_per_ms = 1.0 / f64::from(setup.dt_ode);
    let (mut cols, mut halos) = (Vec::new(), Vec::new());
    for &c in chips {
        let t0 = Instant::now();
        let cfg = problem::device_config(&ProblemSpec {
            chips: c,
            ..spec.clone()
        })
        .expect("cfg");
        let p = device::build(&setup, &cfg).expect("build");
        let mut exe = device::compile_problem(&p).expect("compile");
        let base = exe.target.clone();
        let figures: Vec<Halo> = vs
            .iter()
            .map(|v| {
                with_target(&mut exe, (v.apply)(&base), |e| {
                    let model = CycleModel::new(e);
                    let step = estimate_program(e, &model, 1).map_or(0, |x| x.cycles);
                    let ph = study::phases(&model, &p.plan);
                    Halo {
                        effectiveness: ph.exchange_effectiveness,
                        mean: ph.pde_exchange.mean,
                        max: ph.pde_exchange.max,
                        ms_per_ms: step as f64 * steps_per_ms / e.target.clock_hz * 1e3,
                    }
                })
            })
            .collect();
        eprintln!(
            "cardiac slab {dx} mm, {c} chip(s): {} cells, built and costed in {:.1} s",
            setup.n,
            t0.elapsed().as_secs_f64()
        );
        halos.push((c, figures[0], figures[1]));
        cols.push(Column {
            name: format!("slab, {c} chip{} (ms/ms)", if c == 1 { "" } else { "s" }),
            values: figures.iter().map(|h| h.ms_per_ms).collect(),
        });
    }
    (cols, halos)
}

/// 64 MB of f32 per replica all-reduced over 16 replicas on a Pod16: µs per variant.
fn all_reduce_column(vs: &[Variant]) -> Column {
    let t0 = Instant::now();
    let mut g = Graph::new_replicated(&Target::pod16(), 16, 1).expect("replicated graph");
    let n = (64usize << 20) / 4;
    let x = g.add_variable(DType::F32, &[n], "grads");
    let tiles = g.target().num_tiles();
    g.map_linearly_over(&x, 1, 0..tiles).expect("mapping");
    let c = collectives::all_reduce_in_place(
        &mut g,
        &[x],
        Op::Add,
        Group::All,
        &Options::default(),
        "grads",
    )
    .expect("all-reduce");
    let exe = compile(&g, &[c.program], &CompileOptions::default()).expect("compile");
    let (mut flat, _) = exe.expand_replicas();
    let base = flat.target.clone();
    let values = vs
        .iter()
        .map(|v| {
            with_target(&mut flat, (v.apply)(&base), |e| {
                cycles(e, 0) as f64 / e.target.clock_hz * 1e6
            })
        })
        .collect();
    eprintln!(
        "all-reduce ({}): built and costed in {:.1} s",
        c.plan.method.name(),
        t0.elapsed().as_secs_f64()
    );
    Column {
        name: "all-reduce 64 MB, R=16 (µs)".into(),
        values,
    }
}

/// `mlp scaling`'s samples per second at R = 16 and its efficiency against R = 1.
fn mlp_columns(vs: &[Variant]) -> Vec<Column> {
    let t0 = Instant::now();
    let sps = |r: u32| -> Vec<f64> {
        let cfg = mlp::config::Config {
            replicas: r,
            ..Default::default()
        };
        let compiled = mlp::run::build(&cfg).expect("mlp build");
        let (mut flat, _) = compiled.popnn.exe.expand_replicas();
        let base = flat.target.clone();
        let batch = cfg.global_batch() as f64;
        vs.iter()
            .map(|v| {
                with_target(&mut flat, (v.apply)(&base), |e| {
                    batch / (cycles(e, popnn::train::STEP) as f64 / e.target.clock_hz)
                })
            })
            .collect()
    };
    let (one, sixteen) = (sps(1), sps(16));
    eprintln!(
        "mlp: built and costed in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    let eff = one
        .iter()
        .zip(&sixteen)
        .map(|(a, b)| b / (16.0 * a))
        .collect();
    vec![
        Column {
            name: "mlp R=16 (samples/s)".into(),
            values: sixteen,
        },
        Column {
            name: "mlp R=16 efficiency".into(),
            values: eff,
        },
    ]
}

/// The overlapped loop's graph and programs: `[loop, one compute pass, one load]`.
fn overlap_graph(reps: u32) -> (Graph, Vec<Program>) {
    let t = Target {
        io_tiles: 32,
        ..Target::gc200()
    };
    let (compute_tiles, chunks, n) = (t.tiles_per_ipu - t.io_tiles, 8u32, 1usize << 16);
    let mut g = Graph::new(&t);
    let buf = g
        .add_remote_buffer("data", DType::F32, n as u64, u64::from(chunks))
        .expect("remote buffer");
    let spread = |g: &mut Graph, tiles: std::ops::Range<u32>, name: &str| {
        let v = g.add_variable(DType::F32, &[n], name);
        let per = n.div_ceil((tiles.end - tiles.start) as usize);
        g.map_linearly_over(&v, per, tiles).expect("mapping");
        v
    };
    let stage = spread(&mut g, compute_tiles..t.tiles_per_ipu, "stage");
    let work = spread(&mut g, 0..compute_tiles, "work");
    let acc = spread(&mut g, 0..compute_tiles, "acc");
    let sum = spread(&mut g, 0..compute_tiles, "sum");
    let cs = g.add_compute_set("sum = acc + work");
    popops::add(&mut g, cs, &acc, &work, &sum).expect("add");
    let load = Program::copy_from_remote(buf, &stage, None);
    let pass = Program::execute(cs);
    let body = Program::seq(vec![
        Program::copy(&stage, &work),
        Program::overlap_io(load.clone(), Program::repeat(reps, pass.clone())),
    ]);
    (g, vec![Program::repeat(chunks, body), pass, load])
}

/// The overlapped Streaming Memory loop, compute and load balanced at the baseline: µs.
fn overlap_column(vs: &[Variant]) -> Column {
    let t0 = Instant::now();
    let (g, p) = overlap_graph(1);
    let exe = compile(&g, &p, &CompileOptions::default()).expect("compile");
    let reps = (cycles(&exe, 2) / cycles(&exe, 1).max(1)).max(1) as u32;
    let (g, p) = overlap_graph(reps);
    let mut exe = compile(&g, &p, &CompileOptions::default()).expect("compile");
    let base = exe.target.clone();
    let values = vs
        .iter()
        .map(|v| {
            with_target(&mut exe, (v.apply)(&base), |e| {
                cycles(e, 0) as f64 / e.target.clock_hz * 1e6
            })
        })
        .collect();
    eprintln!(
        "overlap: {reps} compute passes per chunk, built and costed in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    Column {
        name: format!("overlap loop, {reps} passes (µs)"),
        values,
    }
}

fn print_table(vs: &[Variant], cols: &[Column]) {
    let head: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
    println!("| target | {} |", head.join(" | "));
    println!("|---|{}", "---:|".repeat(cols.len()));
    for (i, v) in vs.iter().enumerate() {
        let cells: Vec<String> = cols
            .iter()
            .map(|c| {
                let (x, b) = (c.values[i], c.values[0]);
                let fig = match x.abs() {
                    a if a >= 1000.0 => format!("{x:.0}"),
                    a if a >= 100.0 => format!("{x:.1}"),
                    a if a >= 10.0 => format!("{x:.2}"),
                    _ => format!("{x:.3}"),
                };
                if i == 0 {
                    fig
                } else {
                    format!("{fig} ({:.3})", x / b)
                }
            })
            .collect();
        println!("| {} | {} |", v.name, cells.join(" | "));
    }
}

fn main() {
    codelets::link();
    let t0 = Instant::now();
    let dx: f64 = std::env::var("SENSITIVITY_DX")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.1);
    let vs = variants();
    let (mut cols, halos) = cardiac_columns(dx, &[1, 4, 16], &vs);
    cols.push(all_reduce_column(&vs));
    cols.extend(mlp_columns(&vs));
    cols.push(overlap_column(&vs));
    println!("Modelled times under each assumed constant halved and doubled, one at a time (ratio to the baseline in brackets); cardiac: the built-in slab at {dx} mm, not the heart04 mesh (made by a Python/gmsh tool outside the workspace)\n");
    print_table(&vs, &cols);
    println!("\nCardiac halo exchange (PDE V->w), earlier constants against the sourced ones:\n");
    println!("| chips | constants | PDE exchange cycles, mean / max | exchange effectiveness | ms / simulated ms |");
    println!("|---:|---|---:|---:|---:|");
    for (c, now, before) in halos {
        for (name, h) in [
            ("earlier (32 GB/s, sync 1,500)", before),
            ("sourced (27.2 GB/s, sync by chips)", now),
        ] {
            println!(
                "| {c} | {name} | {:.0} / {:.0} | {:.1} % | {:.3} |",
                h.mean,
                h.max,
                100.0 * h.effectiveness,
                h.ms_per_ms
            );
        }
    }
    eprintln!("whole bench {:.1} s", t0.elapsed().as_secs_f64());
}
