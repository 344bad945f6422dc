//! The planned dense matmul against an f64 host product, its planner against the memory
//! budget, and its cost model against the simulator's cycle model.

use poplar::profile::ProfileOptions;
use poplar::rand::SplitMix64;
use poplar::{compile, CompileOptions, Engine, EngineOptions, Graph, Target};
use poplin::{MatMulOptions, MatMulParams, Plan};

/// Deterministic values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = SplitMix64::new(seed);
    (0..n).map(|_| rng.f32_in(-1.0, 1.0)).collect()
}

/// Builds, compiles and runs `C = A · B` (operands as the plan lays them out, or transposed
/// views of plain variables), checks C against the host product within
/// `k · 2^-24 · Σ|a||b|` (f32 accumulation of k products, each product and sum rounding once),
/// and returns the modelled cycles of the run.
fn check(target: &Target, p: MatMulParams, opts: &MatMulOptions, transposed: bool) -> (Plan, u64) {
    poplin::link();
    let plan = poplin::plan(target, p, opts).unwrap();
    let mut graph = Graph::new(target);
    let (a, b) = if transposed {
        // A given as Aᵀ (a [g, k, m] variable) and B as Bᵀ, spread linearly over the tiles.
        let at = graph.add_variable(poplar::DType::F32, &[p.groups, p.k, p.m], "At");
        let bt = graph.add_variable(poplar::DType::F32, &[p.groups, p.n, p.k], "Bt");
        graph.map_linearly(&at, 16).unwrap();
        graph.map_linearly(&bt, 16).unwrap();
        graph.create_host_write("at", &at).unwrap();
        graph.create_host_write("bt", &bt).unwrap();
        (
            at.dim_shuffle(&[0, 2, 1]).unwrap(),
            bt.dim_shuffle(&[0, 2, 1]).unwrap(),
        )
    } else {
        let a = poplin::create_lhs(&mut graph, &plan, "A").unwrap();
        let b = poplin::create_rhs(&mut graph, &plan, "B").unwrap();
        graph.create_host_write("a", &a).unwrap();
        graph.create_host_write("b", &b).unwrap();
        (a, b)
    };
    let (c, prog) = poplin::matmul(&mut graph, &a, &b, &plan, "mm").unwrap();
    graph.create_host_read("c", &c).unwrap();
    let exe = compile(&graph, &[prog], &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{p:?} with plan\n{plan}\ndoes not compile: {e}"));
    let mut engine = Engine::new(&exe, EngineOptions::default()).unwrap();
    engine.enable_profiling(ProfileOptions::default());
    let av = values(p.groups * p.m * p.k, 1);
    let bv = values(p.groups * p.k * p.n, 2);
    if transposed {
        let tr = |x: &[f32], r: usize, c: usize| -> Vec<f32> {
            let mut out = vec![0.0; x.len()];
            for g in 0..p.groups {
                for i in 0..r {
                    for j in 0..c {
                        out[(g * c + j) * r + i] = x[(g * r + i) * c + j];
                    }
                }
            }
            out
        };
        engine.write_tensor("at", &tr(&av, p.m, p.k)).unwrap();
        engine.write_tensor("bt", &tr(&bv, p.k, p.n)).unwrap();
    } else {
        engine.write_tensor("a", &av).unwrap();
        engine.write_tensor("b", &bv).unwrap();
    }
    engine.run(0).unwrap();
    let got = engine.read_tensor::<f32>("c").unwrap();
    let (want, mag) = poplin::host_matmul(&av, &bv, &p);
    assert_eq!(got.len(), want.len());
    let eps = f64::from(f32::EPSILON) / 2.0;
    for (idx, ((&g, &w), &s)) in got.iter().zip(&want).zip(&mag).enumerate() {
        let tol = (p.k as f64 + 1.0) * eps * s + f64::from(f32::MIN_POSITIVE);
        assert!(
            (f64::from(g) - w).abs() <= tol,
            "{p:?} plan {}×{}×{}: C[{idx}] = {g}, host {w}, tolerance {tol:e}",
            plan.pm,
            plan.pn,
            plan.pk
        );
    }
    let cycles = engine.profile().unwrap().total_cycles();
    (plan, cycles)
}

#[test]
fn matches_the_host_product_for_odd_sizes_one_and_many_tiles_batches_and_transposes() {
    let small = Target::custom(24, 256 * 1024);
    for (p, tiles) in [
        // One tile: no split.
        (
            MatMulParams {
                groups: 1,
                m: 7,
                k: 13,
                n: 5,
            },
            Some(1),
        ),
        // Sizes that do not divide the splits.
        (
            MatMulParams {
                groups: 1,
                m: 37,
                k: 53,
                n: 29,
            },
            None,
        ),
        (
            MatMulParams {
                groups: 1,
                m: 1,
                k: 300,
                n: 1,
            },
            None,
        ),
        (
            MatMulParams {
                groups: 3,
                m: 19,
                k: 23,
                n: 11,
            },
            None,
        ),
        // More groups than tiles: groups share tiles.
        (
            MatMulParams {
                groups: 30,
                m: 4,
                k: 6,
                n: 5,
            },
            None,
        ),
    ] {
        let opts = MatMulOptions {
            max_tiles: tiles,
            ..Default::default()
        };
        check(&small, p, &opts, false);
        check(&small, p, &opts, true);
    }
}

#[test]
fn a_long_k_is_split_and_reduced() {
    // A dot-product-like shape: the planner splits k and sums the partials.
    let target = Target::custom(32, 256 * 1024);
    let (plan, _) = check(
        &target,
        MatMulParams {
            groups: 1,
            m: 2,
            k: 4000,
            n: 2,
        },
        &MatMulOptions::default(),
        false,
    );
    assert!(plan.pk > 1, "{plan}");
}

#[test]
fn the_cost_model_agrees_with_the_cycle_model() {
    // The plan's estimate against the simulator's modelled cycles for the same program: the
    // compute parts use the same formulas, the exchange is the cycle model's own. Within 35 %.
    let target = Target::custom(64, 256 * 1024);
    for p in [
        MatMulParams {
            groups: 1,
            m: 128,
            k: 128,
            n: 32,
        },
        MatMulParams {
            groups: 1,
            m: 16,
            k: 2048,
            n: 16,
        },
        MatMulParams {
            groups: 4,
            m: 64,
            k: 64,
            n: 64,
        },
    ] {
        let (plan, cycles) = check(&target, p, &MatMulOptions::default(), false);
        let est = plan.estimate.total();
        let ratio = cycles as f64 / est as f64;
        assert!(
            (0.65..1.35).contains(&ratio),
            "{plan}\nsimulator {cycles} cycles, plan {est}: ratio {ratio:.2}"
        );
    }
}

#[test]
fn plans_stay_within_the_memory_budget_up_to_what_one_chip_holds() {
    // A sweep of sizes on a GC200: every plan's estimate is within the budget, and the
    // compiler (which enforces tile memory) accepts the graph, up to 4096 × 4096 · 4096 × 16.
    poplin::link();
    let target = Target::gc200();
    let opts = MatMulOptions::default();
    for p in [
        MatMulParams {
            groups: 1,
            m: 256,
            k: 256,
            n: 256,
        },
        MatMulParams {
            groups: 1,
            m: 1024,
            k: 4096,
            n: 16,
        },
        MatMulParams {
            groups: 1,
            m: 4096,
            k: 4096,
            n: 16,
        },
        MatMulParams {
            groups: 8,
            m: 512,
            k: 512,
            n: 128,
        },
        MatMulParams {
            groups: 1,
            m: 3000,
            k: 17,
            n: 3000,
        },
    ] {
        let plan = poplin::plan(&target, p, &opts).unwrap();
        assert!(plan.bytes_per_tile <= plan.budget, "{plan}");
        let mut graph = Graph::new(&target);
        let a = poplin::create_lhs(&mut graph, &plan, "A").unwrap();
        let b = poplin::create_rhs(&mut graph, &plan, "B").unwrap();
        let (_, prog) = poplin::matmul(&mut graph, &a, &b, &plan, "mm").unwrap();
        let exe = compile(&graph, &[prog], &CompileOptions::default())
            .unwrap_or_else(|e| panic!("{plan}\n{e}"));
        let worst = exe.tiles.iter().map(|t| t.memory_bytes).max().unwrap();
        assert!(
            worst <= target.bytes_per_tile,
            "{plan}\nfullest tile {worst} bytes"
        );
    }
    // A multiply that cannot fit says so, with what would help.
    let tiny = Target::custom(2, 16 * 1024);
    let e = poplin::plan(
        &tiny,
        MatMulParams {
            groups: 1,
            m: 512,
            k: 512,
            n: 512,
        },
        &opts,
    )
    .unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("matmul (groups 1, m 512, k 512, n 512) does not fit")
            && text.contains("available_memory_proportion"),
        "{text}"
    );
    // Parameters the planner refuses are named in the error.
    let empty = MatMulParams {
        groups: 1,
        m: 0,
        k: 3,
        n: 4,
    };
    let e = poplin::plan(&target, empty, &opts).unwrap_err();
    assert_eq!(e, poplin::PlanError::Empty(empty));
    assert_eq!(
        e.to_string(),
        "matmul (groups 1, m 0, k 3, n 4): every size must be at least 1"
    );
    let ints = MatMulOptions {
        input_type: poplar::DType::I32,
        ..opts
    };
    let e = poplin::plan(&target, MatMulParams { m: 2, ..empty }, &ints).unwrap_err();
    assert_eq!(e, poplin::PlanError::Type(poplar::DType::I32));
    assert!(e.to_string().contains("operands of type I32"), "{e}");
    // And a plan prints itself.
    let plan = poplin::plan(
        &target,
        MatMulParams {
            groups: 1,
            m: 64,
            k: 64,
            n: 64,
        },
        &opts,
    )
    .unwrap();
    let text = plan.to_string();
    assert!(
        text.contains("split m") && text.contains("modelled cycles"),
        "{text}"
    );
}

#[test]
fn f16_operands_with_f32_partials_match_the_host_product_of_the_rounded_values() {
    // A and B in f16; C in f32. The oracle multiplies the f16 values exactly (in f64); the
    // only rounding is the f32 accumulation, so the f32 tolerance applies.
    poplin::link();
    let target = Target::custom(16, 256 * 1024);
    let opts = MatMulOptions {
        input_type: poplar::DType::F16,
        ..Default::default()
    };
    for p in [
        MatMulParams {
            groups: 1,
            m: 33,
            k: 70,
            n: 17,
        },
        MatMulParams {
            groups: 2,
            m: 8,
            k: 1000,
            n: 3,
        },
    ] {
        let plan = poplin::plan(&target, p, &opts).unwrap();
        assert!(plan.to_string().contains("half operands"), "{plan}");
        let mut graph = Graph::new(&target);
        let a = poplin::create_lhs(&mut graph, &plan, "A").unwrap();
        let b = poplin::create_rhs(&mut graph, &plan, "B").unwrap();
        assert_eq!(a.dtype(), poplar::DType::F16);
        let (c, prog) = poplin::matmul(&mut graph, &a, &b, &plan, "mm").unwrap();
        assert_eq!(c.dtype(), poplar::DType::F32);
        graph.create_host_write("a", &a).unwrap();
        graph.create_host_write("b", &b).unwrap();
        graph.create_host_read("c", &c).unwrap();
        let exe = compile(&graph, &[prog], &CompileOptions::default()).unwrap();
        let mut engine = Engine::new(&exe, EngineOptions::default()).unwrap();
        let ah: Vec<poplar::f16> = values(p.groups * p.m * p.k, 3)
            .into_iter()
            .map(poplar::f16::from_f32)
            .collect();
        let bh: Vec<poplar::f16> = values(p.groups * p.k * p.n, 4)
            .into_iter()
            .map(poplar::f16::from_f32)
            .collect();
        engine.write_tensor("a", &ah).unwrap();
        engine.write_tensor("b", &bh).unwrap();
        engine.run(0).unwrap();
        let got = engine.read_tensor::<f32>("c").unwrap();
        let af: Vec<f32> = ah.iter().map(|x| x.to_f32()).collect();
        let bf: Vec<f32> = bh.iter().map(|x| x.to_f32()).collect();
        let (want, mag) = poplin::host_matmul(&af, &bf, &p);
        let eps = f64::from(f32::EPSILON) / 2.0;
        for (i, ((&g, &w), &s)) in got.iter().zip(&want).zip(&mag).enumerate() {
            let tol = (p.k as f64 + 1.0) * eps * s + f64::from(f32::MIN_POSITIVE);
            assert!((f64::from(g) - w).abs() <= tol, "{p:?} C[{i}] {g} vs {w}");
        }
    }
    // A plan for f16 operands refuses f32 ones.
    let plan = poplin::plan(
        &target,
        MatMulParams {
            groups: 1,
            m: 4,
            k: 4,
            n: 4,
        },
        &opts,
    )
    .unwrap();
    let mut graph = Graph::new(&target);
    let a = graph.add_variable(poplar::DType::F32, &[4, 4], "a");
    let e = poplin::matmul(&mut graph, &a, &a, &plan, "mm").unwrap_err();
    assert!(e.to_string().contains("F16"), "{e}");
}

/// Runs `C = A · B` for a given plan on operands laid out by it, and returns `C`.
fn run_plan(target: &Target, plan: &Plan, av: &[f32], bv: &[f32]) -> Vec<f32> {
    poplin::link();
    let mut graph = Graph::new(target);
    let a = poplin::create_lhs(&mut graph, plan, "A").unwrap();
    let b = poplin::create_rhs(&mut graph, plan, "B").unwrap();
    let (c, prog) = poplin::matmul(&mut graph, &a, &b, plan, "mm").unwrap();
    graph.create_host_write("a", &a).unwrap();
    graph.create_host_write("b", &b).unwrap();
    graph.create_host_read("c", &c).unwrap();
    let exe = compile(&graph, &[prog], &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{plan}\ndoes not compile: {e}"));
    let mut engine = Engine::new(&exe, EngineOptions::default()).unwrap();
    engine.write_tensor("a", av).unwrap();
    engine.write_tensor("b", bv).unwrap();
    engine.run(0).unwrap();
    engine.read_tensor::<f32>("c").unwrap()
}

#[test]
fn serial_steps_over_k_give_the_bits_of_the_whole_blocks() {
    // The same split with k in one step and in chunks: the chunks after the first accumulate
    // into the partials, so every output sums the same products in the same order.
    let target = Target::custom(8, 256 * 1024);
    let p = MatMulParams {
        groups: 2,
        m: 12,
        k: 200,
        n: 10,
    };
    let whole = poplin::plan(&target, p, &MatMulOptions::default()).unwrap();
    assert_eq!(whole.sk, 1, "{whole}");
    let (av, bv) = (values(2 * 12 * 200, 5), values(2 * 200 * 10, 6));
    let want = run_plan(&target, &whole, &av, &bv);
    for kc in [16, 48] {
        let chunked = Plan {
            sk: whole.kb.div_ceil(kc),
            kc,
            ..whole.clone()
        };
        let got = run_plan(&target, &chunked, &av, &bv);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&want), "{chunked}");
    }
}

#[test]
fn a_product_larger_than_whole_blocks_fit_is_planned_in_serial_steps() {
    // 96 × 512 · 512 × 96 in f32 on 16 tiles of 64 KiB: the operands take 0.6 of the tiles'
    // budget, and whole k blocks of any split, received where they are multiplied, need more;
    // chunks of k fit. The result matches the host product.
    let target = Target::custom(16, 64 * 1024);
    let p = MatMulParams {
        groups: 1,
        m: 96,
        k: 512,
        n: 96,
    };
    let (plan, _) = check(&target, p, &MatMulOptions::default(), false);
    assert!(plan.sk > 1, "{plan}");
    assert!(plan.bytes_per_tile <= plan.budget, "{plan}");
}
