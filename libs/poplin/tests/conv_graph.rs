//! The convolution built into graphs — `convolution`, `convolution_input_gradient` and
//! `convolution_weight_gradient` — run on the simulator against direct f64 loops of the
//! definition, over plans that split every dimension; the planner's compute estimate against
//! the simulator's modelled cycles; and the builder's refusals.

mod common;

use common::*;
use poplar::exe::{Executable, LocalCopy};
use poplar::profile::model::{local_copy_cycles, schedule_vertices};
use poplar::profile::{Profile, ProfileOptions};
use poplar::rand::SplitMix64;
use poplar::{compile, f16, CompileOptions, DType, Engine, EngineOptions, Graph, Target, Tensor};
use poplin::{ConvError, ConvOptions, ConvParams, ConvPass, ConvPlan};

const PASSES: [ConvPass; 3] = [
    ConvPass::Forward,
    ConvPass::InputGradient,
    ConvPass::WeightUpdate,
];

/// The host tensors a pass reads, by name: `(name, values)` of its two operands.
fn operands(pass: ConvPass, t: &Tensors) -> [(&'static str, &[f32]); 2] {
    match pass {
        ConvPass::Forward => [("x", &t.x), ("w", &t.w)],
        ConvPass::InputGradient => [("dy", &t.dy), ("w", &t.w)],
        ConvPass::WeightUpdate => [("x", &t.x), ("dy", &t.dy)],
    }
}

/// Operand `name` of the pass: laid out for the plan, or a plain variable spread linearly
/// over the tiles (fetched by exchange).
fn operand(graph: &mut Graph, plan: &ConvPlan, name: &str, laid_out: bool) -> Tensor {
    let p = &plan.params;
    if laid_out {
        return match name {
            "x" => poplin::create_conv_input(graph, plan, name),
            "w" => poplin::create_conv_weights(graph, plan, name),
            _ => poplin::create_conv_output_gradient(graph, plan, name),
        }
        .unwrap();
    }
    let shape: Vec<usize> = match name {
        "x" => [p.batch, p.input_channels]
            .into_iter()
            .chain(p.input_field.clone())
            .collect(),
        "w" => [p.output_channels, p.input_channels / p.groups]
            .into_iter()
            .chain(p.kernel.clone())
            .collect(),
        _ => [p.batch, p.output_channels]
            .into_iter()
            .chain(p.output_field())
            .collect(),
    };
    let v = graph.add_variable(p.input_type, &shape, name);
    graph.map_linearly(&v, 4).unwrap();
    v
}

/// Builds, compiles and runs one pass; returns its result (f32, the user's layout), the
/// profile of the run and the executable.
fn run(
    target: &Target,
    plan: &ConvPlan,
    t: &Tensors,
    laid_out: bool,
) -> (Vec<f32>, Profile, Executable) {
    poplin::link();
    let mut graph = Graph::new(target);
    let ops = operands(plan.pass, t);
    let [a, b] = ops.map(|(name, _)| operand(&mut graph, plan, name, laid_out));
    for ((name, _), tensor) in ops.iter().zip([&a, &b]) {
        graph.create_host_write(name, tensor).unwrap();
    }
    let (out, prog) = match plan.pass {
        ConvPass::Forward => poplin::convolution(&mut graph, &a, &b, plan, "conv"),
        ConvPass::InputGradient => {
            poplin::convolution_input_gradient(&mut graph, &a, &b, plan, "conv")
        }
        ConvPass::WeightUpdate => {
            poplin::convolution_weight_gradient(&mut graph, &a, &b, plan, "conv")
        }
    }
    .unwrap_or_else(|e| panic!("{plan}: {e}"));
    graph.create_host_read("out", &out).unwrap();
    let exe = compile(&graph, &[prog], &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{plan}\ndoes not compile: {e}"));
    let mut engine = Engine::new(&exe, EngineOptions::default()).unwrap();
    engine.enable_profiling(ProfileOptions::default());
    for (name, data) in ops {
        if plan.params.input_type == DType::F16 {
            let h: Vec<f16> = data.iter().map(|&x| f16::from_f32(x)).collect();
            engine.write_tensor(name, &h).unwrap();
        } else {
            engine.write_tensor(name, data).unwrap();
        }
    }
    engine.run(0).unwrap();
    let got = engine.read_tensor::<f32>("out").unwrap();
    (got, engine.profile().unwrap().clone(), exe)
}

/// Random tensors for `p`, rounded to f16 when the convolution is of f16 operands (so the
/// oracle sees the values the chip does).
fn tensors(p: &ConvParams, rng: &mut SplitMix64) -> Tensors {
    let (f, kernel, _, _, _, out) = lift(p);
    let prod = |a: [usize; 3]| a.iter().product::<usize>();
    let mut v = |n: usize| {
        let x = values(n, rng);
        if p.input_type == DType::F16 {
            x.into_iter().map(|x| f16::from_f32(x).to_f32()).collect()
        } else {
            x
        }
    };
    Tensors {
        x: v(p.batch * p.input_channels * prod(f)),
        w: v(p.output_channels * (p.input_channels / p.groups) * prod(kernel)),
        dy: v(p.batch * p.output_channels * prod(out)),
    }
}

/// The host results of every pass (`y`, `dx`, `dw`) and per element `Σ |products|`.
fn oracle(p: &ConvParams, t: &Tensors) -> [(Vec<f64>, Vec<f64>); 3] {
    let (y, dx, dw) = host(p, t);
    let abs = |v: &[f32]| v.iter().map(|x| x.abs()).collect::<Vec<_>>();
    let mag = Tensors {
        x: abs(&t.x),
        w: abs(&t.w),
        dy: abs(&t.dy),
    };
    let (my, mdx, mdw) = host(p, &mag);
    [(y, my), (dx, mdx), (dw, mdw)]
}

/// `got` against the host result within `terms · 2^-24 · Σ|products|`, `terms` the products
/// summed per output (each product is exact in f32 for f16 operands, each sum rounds once).
fn check(plan: &ConvPlan, got: &[f32], want: &(Vec<f64>, Vec<f64>)) {
    let s = &plan.shape;
    let terms = (s.ci * s.taps() + plan.pci) as f64;
    let eps = f64::from(f32::EPSILON) / 2.0;
    assert_eq!(got.len(), want.0.len(), "{plan}");
    for (i, (&g, (&w, &m))) in got.iter().zip(want.0.iter().zip(&want.1)).enumerate() {
        let tol = terms * eps * m + 1e-30;
        assert!(
            (f64::from(g) - w).abs() <= tol,
            "{plan}\nelement {i} = {g}, host {w}, tolerance {tol:e}"
        );
    }
}

/// Parameters larger than the kernel tests' (so that plans split), f16 for some.
fn graph_params(rng: &mut SplitMix64) -> ConvParams {
    let p = random_params(rng);
    let mut r = |lo: u64, hi: u64| (lo + rng.next_u64() % (hi - lo + 1)) as usize;
    let widen = r(1, 4);
    let (ci, co) = (p.input_channels * widen, p.output_channels * r(1, 4));
    let t = if r(0, 3) == 0 { DType::F16 } else { DType::F32 };
    ConvParams {
        batch: p.batch + r(0, 1),
        input_channels: ci,
        output_channels: co,
        input_type: t,
        ..p
    }
}

/// Which dimensions the plans split, over a test.
#[derive(Default)]
struct Coverage {
    batch: bool,
    out_channels: bool,
    field: bool,
    in_channels: bool,
    shared_tiles: bool,
    folded: bool,
}

impl Coverage {
    fn add(&mut self, plan: &ConvPlan) {
        self.batch |= plan.pb > 1;
        self.out_channels |= plan.pco > 1;
        self.field |= plan.pf > 1;
        self.in_channels |= plan.pci > 1;
        self.shared_tiles |= plan.groups_per_tile > 1;
        self.folded |= plan.shape.folded;
    }
}

#[test]
fn every_pass_on_the_simulator_matches_the_direct_loops_for_forty_random_convolutions() {
    let mut rng = SplitMix64::new(530);
    let mut seen = Coverage::default();
    let mut f16_sets = 0;
    for set in 0..40 {
        let p = graph_params(&mut rng);
        p.check().unwrap_or_else(|e| panic!("{p}: {e}"));
        f16_sets += usize::from(p.input_type == DType::F16);
        let target = Target::custom([1, 4, 8, 16][set % 4], 64 * 1024);
        let t = tensors(&p, &mut rng);
        let want = oracle(&p, &t);
        for (pass, want) in PASSES.iter().zip(&want) {
            let plan = poplin::plan_convolution(&target, &p, *pass, &ConvOptions::default())
                .unwrap_or_else(|e| panic!("{p} {pass:?}: {e}"));
            seen.add(&plan);
            let (got, _, _) = run(&target, &plan, &t, set % 2 == 0);
            check(&plan, &got, want);
        }
    }
    assert!(f16_sets >= 5, "only {f16_sets} sets of f16 operands");
    // Shapes chosen to make the planner split what the random sets may not.
    for (p, tiles) in [
        // Many input channels, one output: the input channels are split and reduced.
        (ConvParams::new(1, 160, 2, &[3], &[3]), 16),
        (
            ConvParams::new(2, 96, 3, &[4, 4], &[3, 3]).with_padding(&[1, 1], &[1, 1]),
            16,
        ),
        // More groups than tiles: groups share tiles (depth-wise).
        (
            ConvParams::new(2, 12, 12, &[6, 6], &[3, 3]).with_groups(12),
            4,
        ),
        // Pointwise: the weight update folds the field into its input channels.
        (ConvParams::new(3, 8, 5, &[6, 7], &[1, 1]), 16),
        // A long field and a large batch.
        (ConvParams::new(6, 2, 2, &[200], &[5]).with_stride(&[2]), 16),
    ] {
        let target = Target::custom(tiles, 64 * 1024);
        let t = tensors(&p, &mut rng);
        let want = oracle(&p, &t);
        for (pass, want) in PASSES.iter().zip(&want) {
            let plan =
                poplin::plan_convolution(&target, &p, *pass, &ConvOptions::default()).unwrap();
            seen.add(&plan);
            for laid_out in [true, false] {
                let (got, _, _) = run(&target, &plan, &t, laid_out);
                check(&plan, &got, want);
            }
        }
    }
    let Coverage {
        batch,
        out_channels,
        field,
        in_channels,
        shared_tiles,
        folded,
    } = seen;
    assert!(
        batch && out_channels && field && in_channels && shared_tiles && folded,
        "splits seen: batch {batch}, output channels {out_channels}, field {field}, input \
         channels {in_channels}, groups sharing tiles {shared_tiles}, folded {folded}"
    );
}

/// The modelled cycles of the compute set `name` (its busiest tile).
fn compute_cycles(profile: &Profile, name: &str) -> u64 {
    profile
        .phases_named(name)
        .find(|ph| ph.kind == poplar::profile::PhaseKind::Compute)
        .unwrap_or_else(|| panic!("no compute set {name}"))
        .per_execution
        .max
}

/// Per tile of compute set `name`: its vertices as the cycle model schedules them, and its
/// on-tile copies (fields gathered before the vertices run, or scattered after).
fn tile_parts(exe: &Executable, name: &str) -> Vec<(u64, u64)> {
    let copies = |c: &[LocalCopy]| -> u64 {
        c.iter()
            .map(|c| local_copy_cycles(u64::from(c.bytes)))
            .sum()
    };
    let phase = exe.computes.values().find(|c| c.name == name).unwrap();
    phase
        .tiles
        .iter()
        .map(|tc| {
            let vertices = tc
                .vertices
                .iter()
                .map(|v| (v.cycles, exe.codelets[v.codelet].multi_worker));
            let sched = schedule_vertices(vertices, exe.target.workers_per_tile);
            (
                sched.tile_cycles,
                copies(&tc.pre_copies) + copies(&tc.post_copies),
            )
        })
        .collect()
}

#[test]
fn the_plans_compute_estimate_is_the_simulators_modelled_compute() {
    // The vertices: the same formulas, so equal. The on-tile copies that gather input windows
    // straddling tiles, and the exchange: the planner's estimates of what the compiler makes,
    // within 10 % and 33 %.
    let target = Target::custom(64, 256 * 1024);
    let mut rng = SplitMix64::new(54);
    for p in [
        ConvParams::new(2, 32, 48, &[14, 14], &[3, 3]).with_padding(&[1, 1], &[1, 1]),
        ConvParams::new(4, 64, 64, &[7, 7], &[1, 1]).with_type(DType::F16),
        ConvParams::new(1, 256, 8, &[4, 4], &[3, 3]),
        ConvParams::new(2, 16, 16, &[12, 12], &[3, 3]).with_groups(16),
        ConvParams::new(1, 8, 16, &[9, 9, 9], &[3, 3, 3]).with_stride(&[2, 2, 2]),
    ] {
        let t = tensors(&p, &mut rng);
        for pass in PASSES {
            let plan =
                poplin::plan_convolution(&target, &p, pass, &ConvOptions::default()).unwrap();
            let (_, profile, exe) = run(&target, &plan, &t, true);
            let e = &plan.estimate;
            for (set, want) in [
                ("conv/convolve", e.multiply_compute),
                ("conv/reduce", e.reduce_compute),
            ] {
                if want == 0 {
                    continue;
                }
                let parts = tile_parts(&exe, set);
                let copies = if set == "conv/convolve" {
                    plan.window_copy_cycles
                } else {
                    0
                };
                let vertices = parts.iter().map(|p| p.0).max().unwrap();
                assert_eq!(vertices, want - copies, "{set}: {plan}");
                let modelled = compute_cycles(&profile, set);
                let with_copies = parts.iter().map(|p| p.0 + p.1).max().unwrap();
                assert_eq!(modelled, with_copies, "{set}: {plan}");
                let ratio = modelled as f64 / want as f64;
                println!(
                    "{pass:?} {p}: {set} vertices {vertices} cycles (= plan), modelled with \
                     copies {modelled}, plan {want}: ratio {ratio:.3}"
                );
                assert!(
                    (0.9..1.1).contains(&ratio),
                    "{set}: {plan}\nmodelled {modelled}"
                );
            }
            let exchange: u64 = profile
                .phases_named("conv/convolve (in)")
                .map(|ph| ph.per_execution.max)
                .sum();
            let ratio = exchange.max(1) as f64 / e.multiply_exchange.max(1) as f64;
            println!(
                "{pass:?} {p}: exchange {exchange} cycles, plan {}",
                e.multiply_exchange
            );
            assert!(
                (1.0 / 3.0..3.0).contains(&ratio),
                "{plan}\nexchange {exchange} cycles"
            );
        }
    }
}

#[test]
fn the_builder_refuses_operands_and_plans_that_do_not_match_by_name() {
    poplin::link();
    let target = Target::custom(4, 64 * 1024);
    let p = ConvParams::new(1, 4, 6, &[5, 5], &[3, 3]);
    let fwd =
        poplin::plan_convolution(&target, &p, ConvPass::Forward, &ConvOptions::default()).unwrap();
    let wu = poplin::plan_convolution(&target, &p, ConvPass::WeightUpdate, &ConvOptions::default())
        .unwrap();
    let mut graph = Graph::new(&target);
    let x = poplin::create_conv_input(&mut graph, &fwd, "x").unwrap();
    let w = poplin::create_conv_weights(&mut graph, &fwd, "w").unwrap();
    assert_eq!(x.shape(), [1, 4, 5, 5]);
    assert_eq!(w.shape(), [6, 4, 3, 3]);
    let e = poplin::convolution(&mut graph, &w, &w, &fwd, "c").unwrap_err();
    assert!(matches!(&e, ConvError::Shape { what: "input", .. }), "{e}");
    assert!(e.to_string().contains("[6, 4, 3, 3]"), "{e}");
    let xi = graph.add_variable(DType::F16, &[1, 4, 5, 5], "xi");
    let e = poplin::convolution(&mut graph, &xi, &w, &fwd, "c").unwrap_err();
    assert!(matches!(e, ConvError::Type { what: "input", .. }), "{e}");
    let e = poplin::convolution(&mut graph, &x, &w, &wu, "c").unwrap_err();
    assert!(
        e.to_string()
            .contains("convolution needs a plan of the Forward pass"),
        "{e}"
    );
    let e = poplin::create_conv_weights(&mut graph, &wu, "w2").unwrap_err();
    assert!(
        matches!(
            e,
            ConvError::NotAnOperand {
                what: "weights",
                pass: ConvPass::WeightUpdate
            }
        ),
        "{e}"
    );
    let e = poplin::create_conv_output_gradient(&mut graph, &fwd, "dy").unwrap_err();
    assert!(
        e.to_string().contains("does not read the output gradient"),
        "{e}"
    );
}
