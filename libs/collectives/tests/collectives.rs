//! Every collective, operator, group and method against the host model on random data,
//! including sizes not divisible by the group size and a single replica; the methods agree
//! with each other; impossible requests are typed errors.
//!
//! (About 750 lines. One file because every case runs through the same host model and helpers
//! (random data, the device run, the comparison); split, each part would repeat them. The f16
//! rounding test is in `half.rs`, the shared machine and generator in `support/`.)

use collectives::{reference, CollectiveError, Group, Kind, Method, Op, Options};
use poplar::exe::{ComputePhaseId, Step};
use poplar::{
    compile, CompileOptions, DType, Engine, EngineOptions, Executable, Graph, Interleave,
};

mod support;
use support::{machine, Rng, METHODS, TILES};

struct Case {
    replicas: u32,
    chips_per_replica: u32,
    /// Elements of each input tensor.
    sizes: Vec<usize>,
    dtype: DType,
    kind: Kind,
    op: Op,
    group: Group,
    method: Method,
    threads: usize,
    /// The engine's interleaving of exchanges with the compute after them: every one that
    /// can be, unless a test says otherwise (the ring steps of these small cases are far
    /// below the default's threshold).
    interleave: Interleave,
}

/// Runs the case on the engine; returns per replica the outputs (flattened, concatenated)
/// and the inputs it used, both as f64.
/// The ring-step compute phases (`…/reduce`, `…/store`) that run right after an exchange in a
/// sequence of `s`: after it, syncs and on-tile copy phases aside, the step phases up to the
/// first other step.
fn steps_after_exchanges(exe: &poplar::Executable, s: &Step) -> Vec<ComputePhaseId> {
    let is_step = |c: ComputePhaseId| {
        let name = &exe.computes[c].name;
        name.ends_with("/reduce") || name.ends_with("/store")
    };
    let mut out = Vec::new();
    match s {
        Step::Seq(v) => {
            for (i, a) in v.iter().enumerate() {
                if matches!(a, Step::Exchange(_)) {
                    out.extend(
                        v[i + 1..]
                            .iter()
                            .filter(|s| !matches!(s, Step::Sync(_)))
                            .map_while(|s| match s {
                                Step::Compute(c) => Some(*c),
                                _ => None,
                            })
                            .skip_while(|&c| exe.computes[c].name == "copy")
                            .take_while(|&c| is_step(c)),
                    );
                }
                out.extend(steps_after_exchanges(exe, a));
            }
        }
        Step::Label { body, .. } | Step::Repeat { body, .. } => {
            out.extend(steps_after_exchanges(exe, body))
        }
        _ => {}
    }
    out
}

/// What the engine interleaves of collective `col` (built for `c`), when it may.
fn check_interleaving(c: &Case, col: &collectives::Collective, exe: &Executable, e: &Engine) {
    let rings = c.group.size(c.replicas).unwrap() > 1 && c.op != Op::Local;
    let mitm = col.plan.method == Method::MeetInTheMiddle
        || col
            .parts
            .iter()
            .any(|p| p.method == Method::MeetInTheMiddle);
    let spread = c.sizes.iter().all(|&n| n >= (TILES * c.replicas) as usize);
    if c.interleave == Interleave::All && rings && c.kind == Kind::AllReduce && spread {
        // Each tile of a replica exchanges only with the same tile of the other replicas when
        // every tile holds a share of every fragment: the ring steps run group by group
        // (`poplar::Interleave`). (A reduce-scatter gathers its output on fewer tiles, and a
        // tensor smaller than that lies on fewer tiles: then the tiles form one group.)
        let runs = e.grouped_runs();
        assert!(
            !runs.is_empty() && runs.iter().all(|r| r.groups >= 2),
            "{:?} {:?}: {runs:?}",
            c.kind,
            c.method
        );
    }
    if c.interleave == Interleave::All && rings && !mitm {
        // Every ring step of the one-way rings and the ring pair writes the buffer its
        // exchange filled, never the one it sent: each step can be interleaved.
        assert!(
            !e.interleaved_phases().is_empty(),
            "{:?} {:?}: no step interleaved",
            c.kind,
            c.method
        );
        // And every step's compute set (the ring pair's two chains share one) runs interleaved
        // with the exchange before it.
        let ends: Vec<_> = e.interleaved_phases().iter().map(|&(_, c)| c).collect();
        let steps = steps_after_exchanges(exe, &exe.programs[0]);
        assert!(
            !steps.is_empty(),
            "{:?} {:?}: no ring step",
            c.kind,
            c.method
        );
        for id in steps {
            assert!(
                ends.contains(&id),
                "{:?} {:?}: {} ({id:?}) after an exchange is not interleaved",
                c.kind,
                c.method,
                exe.computes[id].name
            );
        }
    }
}

fn run(c: &Case, seed: u64) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    collectives::link();
    let mut g = Graph::new_replicated(
        &machine(c.replicas * c.chips_per_replica),
        c.replicas,
        c.chips_per_replica,
    )
    .unwrap();
    let tiles = g.target().num_tiles();
    let inputs: Vec<_> = c
        .sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let t = g.add_variable(c.dtype, &[n], &format!("in{i}"));
            // Spread over the replica's tiles, starting at a different tile per tensor.
            g.map_linearly_over(&t, 1, 0..tiles).unwrap();
            g.create_host_read_write(&format!("in{i}"), &t).unwrap();
            t
        })
        .collect();
    let opts = Options {
        method: c.method,
        ..Default::default()
    };
    let col = match c.kind {
        Kind::AllReduce => collectives::all_reduce(&mut g, &inputs, c.op, c.group, &opts, "ar"),
        Kind::ReduceScatter => {
            collectives::reduce_scatter(&mut g, &inputs, c.op, c.group, &opts, "rs")
        }
        Kind::AllGather => collectives::all_gather(&mut g, &inputs, c.group, &opts, "ag"),
    }
    .unwrap();
    for (i, o) in col.outputs.iter().enumerate() {
        g.create_host_read(&format!("out{i}"), o).unwrap();
    }
    let exe = compile(
        &g,
        std::slice::from_ref(&col.program),
        &CompileOptions::default(),
    )
    .unwrap();
    let opts = EngineOptions {
        interleave: c.interleave,
        ..EngineOptions::with_threads(c.threads)
    };
    let mut e = Engine::new(&exe, opts).unwrap();
    check_interleaving(c, &col, &exe, &e);
    let mut rng = Rng::new(seed);
    let r = c.replicas as usize;
    let mut ins = vec![Vec::new(); r];
    for (i, &n) in c.sizes.iter().enumerate() {
        let name = format!("in{i}");
        match c.dtype {
            DType::F32 => {
                let v: Vec<f32> = (0..r * n).map(|_| rng.f32()).collect();
                e.write_tensor_all_replicas(&name, &v).unwrap();
                for rep in 0..r {
                    ins[rep].extend(v[rep * n..(rep + 1) * n].iter().map(|&x| f64::from(x)));
                }
            }
            DType::I32 => {
                let v: Vec<i32> = (0..r * n).map(|_| (rng.next() % 19) as i32 - 9).collect();
                e.write_tensor_all_replicas(&name, &v).unwrap();
                for rep in 0..r {
                    ins[rep].extend(v[rep * n..(rep + 1) * n].iter().map(|&x| f64::from(x)));
                }
            }
            DType::Bool => {
                let v: Vec<bool> = (0..r * n).map(|_| !rng.next().is_multiple_of(4)).collect();
                e.write_tensor_all_replicas(&name, &v).unwrap();
                for rep in 0..r {
                    ins[rep].extend(
                        v[rep * n..(rep + 1) * n]
                            .iter()
                            .map(|&x| f64::from(u8::from(x))),
                    );
                }
            }
            _ => unreachable!(),
        }
    }
    e.run(0).unwrap();
    let mut outs = vec![Vec::new(); r];
    for i in 0..col.outputs.len() {
        let name = format!("out{i}");
        let all: Vec<f64> = match c.dtype {
            DType::F32 => e
                .read_tensor_all_replicas::<f32>(&name)
                .unwrap()
                .into_iter()
                .map(f64::from)
                .collect(),
            DType::I32 => e
                .read_tensor_all_replicas::<i32>(&name)
                .unwrap()
                .into_iter()
                .map(f64::from)
                .collect(),
            _ => e
                .read_tensor_all_replicas::<bool>(&name)
                .unwrap()
                .into_iter()
                .map(|b| f64::from(u8::from(b)))
                .collect(),
        };
        let per = all.len() / r;
        for rep in 0..r {
            outs[rep].extend_from_slice(&all[rep * per..(rep + 1) * per]);
        }
    }
    (outs, ins)
}

/// The host model's answer, laid out as `run` returns outputs (all-gather: per input tensor,
/// `[G, n_i]`).
fn expected(c: &Case, ins: &[Vec<f64>]) -> Vec<Vec<f64>> {
    match c.kind {
        Kind::AllReduce => reference::all_reduce(ins, c.op, c.group).unwrap(),
        Kind::ReduceScatter => reference::reduce_scatter(ins, c.op, c.group).unwrap(),
        Kind::AllGather => {
            let mut out = vec![Vec::new(); ins.len()];
            let mut off = 0;
            for &n in &c.sizes {
                let part: Vec<Vec<f64>> = ins.iter().map(|v| v[off..off + n].to_vec()).collect();
                for (o, g) in out
                    .iter_mut()
                    .zip(reference::all_gather(&part, c.group).unwrap())
                {
                    o.extend(g);
                }
                off += n;
            }
            out
        }
    }
}

/// Tolerance: f32 results of a combination of `G` terms differ from the f64 model by at most
/// `G` roundings of the largest partial result: `G · 2^-24 · Σ|terms|` (products: relative
/// `G · 2^-23`); integer and boolean results are exact.
fn check(c: &Case, seed: u64) {
    let (got, ins) = run(c, seed);
    let want = expected(c, &ins);
    let gsz = c.group.size(c.replicas).unwrap() as f64;
    for (rep, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g.len(),
            w.len(),
            "replica {rep} length, {:?} {:?}",
            c.kind,
            c.op
        );
        for (i, (&a, &b)) in g.iter().zip(w).enumerate() {
            let tol = match c.dtype {
                DType::F32 => {
                    let scale = match c.op {
                        Op::SquareAdd => gsz * 2.25,
                        Op::Mul => b.abs(),
                        _ => gsz * 1.5,
                    };
                    (gsz + 1.0) * scale * f64::from(f32::EPSILON)
                }
                _ => 0.0,
            };
            assert!(
                (a - b).abs() <= tol,
                "{:?} {:?} {:?} {:?} R={} sizes {:?}: replica {rep} element {i}: got {a}, want {b} (tol {tol})",
                c.kind, c.op, c.group, c.method, c.replicas, c.sizes
            );
        }
    }
}

fn case(replicas: u32, kind: Kind, op: Op, group: Group, method: Method, dtype: DType) -> Case {
    Case {
        replicas,
        chips_per_replica: 1,
        sizes: vec![13, 7],
        dtype,
        kind,
        op,
        group,
        method,
        threads: 2,
        interleave: Interleave::All,
    }
}

#[test]
fn every_method_and_replica_count_all_reduces_reduce_scatters_and_gathers() {
    for replicas in [1, 2, 4, 8] {
        for method in METHODS {
            for kind in [Kind::AllReduce, Kind::ReduceScatter, Kind::AllGather] {
                check(
                    &case(replicas, kind, Op::Add, Group::All, method, DType::F32),
                    7 + u64::from(replicas),
                );
            }
        }
    }
}

#[test]
fn every_operator_against_the_host_model() {
    for op in Op::ALL {
        let dtype = match op {
            Op::LogicalAnd | Op::LogicalOr => DType::Bool,
            _ => DType::F32,
        };
        for kind in [Kind::AllReduce, Kind::ReduceScatter] {
            for method in [
                Method::Clockwise,
                Method::MeetInTheMiddle,
                Method::BidirectionalRingPair,
            ] {
                check(&case(4, kind, op, Group::All, method, dtype), 11);
            }
        }
    }
    for op in [Op::Add, Op::Mul, Op::Min, Op::Max, Op::SquareAdd, Op::Local] {
        check(
            &case(8, Kind::AllReduce, op, Group::All, Method::Auto, DType::I32),
            5,
        );
    }
}

#[test]
fn groups_reduce_only_among_their_members() {
    for group in [
        Group::Consecutive(2),
        Group::Consecutive(4),
        Group::Orthogonal(2),
        Group::Orthogonal(4),
        Group::Consecutive(1),
    ] {
        for method in [
            Method::Clockwise,
            Method::MeetInTheMiddle,
            Method::BidirectionalRingPair,
        ] {
            for kind in [Kind::AllReduce, Kind::ReduceScatter, Kind::AllGather] {
                check(&case(8, kind, Op::Add, group, method, DType::I32), 3);
            }
        }
    }
}

#[test]
fn sizes_not_divisible_by_the_group_and_tensors_smaller_than_it() {
    for sizes in [vec![1], vec![3], vec![5, 1, 2], vec![100], vec![64]] {
        for method in METHODS {
            let mut c = case(8, Kind::AllReduce, Op::Add, Group::All, method, DType::I32);
            c.sizes = sizes.clone();
            check(&c, 23);
            c.kind = Kind::ReduceScatter;
            check(&c, 29);
        }
    }
}

#[test]
fn integer_results_are_bit_identical_across_methods_ring_orders_and_threads() {
    let mut results = Vec::new();
    for method in METHODS {
        for threads in [1, 3] {
            let mut c = case(8, Kind::AllReduce, Op::Add, Group::All, method, DType::I32);
            c.threads = threads;
            c.sizes = vec![37, 11];
            results.push(run(&c, 99).0);
        }
    }
    for r in &results[1..] {
        assert_eq!(r, &results[0]);
    }
}

#[test]
fn interleaving_exchanges_with_the_ring_steps_changes_no_bit() {
    for method in METHODS {
        for kind in [Kind::AllReduce, Kind::ReduceScatter, Kind::AllGather] {
            let bits = |interleave| {
                let mut c = case(8, kind, Op::Add, Group::All, method, DType::F32);
                c.sizes = vec![1000, 37];
                c.interleave = interleave;
                let (outs, _) = run(&c, 5);
                outs.iter()
                    .flatten()
                    .map(|x| x.to_bits())
                    .collect::<Vec<_>>()
            };
            let apart = bits(Interleave::Never);
            for mode in [Interleave::All, Interleave::NoGroupedRuns] {
                assert_eq!(bits(mode), apart, "{kind:?} {method:?} {mode:?}");
            }
        }
    }
}

#[test]
fn several_chips_per_replica_use_the_sequential_ring() {
    let mut c = case(
        4,
        Kind::AllReduce,
        Op::Add,
        Group::All,
        Method::Auto,
        DType::F32,
    );
    c.chips_per_replica = 2;
    check(&c, 41);
}

#[test]
fn impossible_requests_are_typed_errors() {
    collectives::link();
    let mut g = Graph::new_replicated(&machine(8), 8, 1).unwrap();
    let f = g.add_variable(DType::F32, &[4], "f");
    let i = g.add_variable(DType::I32, &[4], "i");
    let b = g.add_variable(DType::Bool, &[4], "b");
    let un = g.add_variable(DType::F32, &[4], "unmapped");
    for t in [&f, &i, &b] {
        g.set_tile_mapping(t, 0).unwrap();
    }
    let o = Options::default();
    assert!(matches!(
        collectives::all_reduce(
            &mut g,
            std::slice::from_ref(&f),
            Op::Add,
            Group::Consecutive(3),
            &o,
            "x"
        ),
        Err(CollectiveError::GroupSize { replicas: 8, .. })
    ));
    assert!(matches!(
        collectives::all_reduce(
            &mut g,
            &[f.clone(), i.clone()],
            Op::Add,
            Group::All,
            &o,
            "x"
        ),
        Err(CollectiveError::MixedTypes { index: 1, .. })
    ));
    assert!(matches!(
        collectives::all_reduce(
            &mut g,
            std::slice::from_ref(&b),
            Op::Add,
            Group::All,
            &o,
            "x"
        ),
        Err(CollectiveError::OpType { op: "ADD", .. })
    ));
    assert!(matches!(
        collectives::all_reduce(
            &mut g,
            std::slice::from_ref(&f),
            Op::LogicalOr,
            Group::All,
            &o,
            "x"
        ),
        Err(CollectiveError::OpType {
            op: "LOGICAL_OR",
            ..
        })
    ));
    assert!(matches!(
        collectives::all_reduce(
            &mut g,
            std::slice::from_ref(&i),
            Op::Mean,
            Group::All,
            &o,
            "x"
        ),
        Err(CollectiveError::OpType { op: "MEAN", .. })
    ));
    assert!(matches!(
        collectives::all_reduce(&mut g, &[un], Op::Add, Group::All, &o, "x"),
        Err(CollectiveError::Unmapped { index: 0, .. })
    ));
    assert!(matches!(
        collectives::all_reduce(&mut g, &[], Op::Add, Group::All, &o, "x"),
        Err(CollectiveError::BadInputs { .. })
    ));
    // Outputs whose shape differs from the inputs' (even with as many elements).
    let f22 = g.add_variable(DType::F32, &[2, 2], "f22");
    g.set_tile_mapping(&f22, 1).unwrap();
    match collectives::all_reduce_to(
        &mut g,
        std::slice::from_ref(&f),
        std::slice::from_ref(&f22),
        Op::Add,
        Group::All,
        &o,
        "x",
    ) {
        Err(CollectiveError::BadInputs { reason, .. }) => {
            assert!(reason.contains("[2, 2]"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_plan_is_visible_in_the_executable() {
    collectives::link();
    let mut g = Graph::new_replicated(&machine(8), 8, 1).unwrap();
    let f = g.add_variable(DType::F32, &[64], "f");
    g.map_linearly_over(&f, 1, 0..TILES).unwrap();
    let c = collectives::all_reduce_in_place(
        &mut g,
        &[f],
        Op::Add,
        Group::All,
        &Options::default(),
        "grads",
    )
    .unwrap();
    assert_eq!(c.plan.rings[0], vec![0, 2, 4, 6, 7, 5, 3, 1]);
    assert_eq!(c.plan.method, Method::MeetInTheMiddle);
    let exe = compile(&g, &[c.program], &CompileOptions::default()).unwrap();
    let text = format!("{:?}", exe.programs);
    assert!(text.contains("allReduce(grads) op=ADD"), "{text}");
    assert!(text.contains("ring=[0,2,4,6,7,5,3,1]"), "{text}");
    assert!(text.contains("method=meet in the middle"), "{text}");
}

/// The static estimate of a collective (used by the benchmarks for sizes too large to
/// simulate) against the profile of the same program run on the engine: an upper bound,
/// within 5 % for these balanced phases; and the profile shows the collective as its own
/// labelled block.
#[test]
fn the_static_estimate_bounds_the_profiled_time_of_a_collective() {
    collectives::link();
    for method in [
        Method::Clockwise,
        Method::BidirectionalRingPair,
        Method::MeetInTheMiddle,
    ] {
        let mut g = Graph::new_replicated(&machine(8), 8, 1).unwrap();
        let f = g.add_variable(DType::F32, &[4000], "f");
        g.map_linearly_over(&f, 1, 0..TILES).unwrap();
        let opts = Options {
            method,
            ..Default::default()
        };
        let c = collectives::all_reduce_in_place(
            &mut g,
            std::slice::from_ref(&f),
            Op::Add,
            Group::All,
            &opts,
            "g",
        )
        .unwrap();
        let label = c.plan.label("g");
        let steps = u64::from(c.plan.steps);
        let exe = compile(&g, &[c.program], &CompileOptions::default()).unwrap();
        let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
        e.enable_profiling(poplar::profile::ProfileOptions::default());
        e.run(0).unwrap();
        let profiled = e.profile().unwrap().elapsed.total();
        let flat = e.executable();
        let model = poplar::profile::CycleModel::new(flat);
        let est = poplar::profile::estimate_program(flat, &model, 0).unwrap();
        assert!(!est.assumed);
        assert!(
            est.cycles >= profiled && est.cycles as f64 <= profiled as f64 * 1.05,
            "{method:?}: estimate {} vs profile {profiled}",
            est.cycles
        );
        let labels = &e.profile().unwrap().labels;
        let l = labels
            .iter()
            .find(|l| l.name.starts_with(&label[..20]))
            .unwrap_or_else(|| panic!("{:?}", labels.iter().map(|l| &l.name).collect::<Vec<_>>()));
        assert_eq!(l.elapsed.total(), profiled);
        // Every step sends each replica's fragment share to the neighbour chip: R · (fragment
        // sends) · (elements per step) · 4 bytes over the links.
        // In place, each tile's 1,000 elements are 8 fragments of 125 (for the bidirectional
        // pair two halves of 500, each 8 fragments of 63 with the last short): 500 or 504
        // elements per step.
        let per_step = if method == Method::BidirectionalRingPair {
            504
        } else {
            500
        };
        assert_eq!(
            l.inter_chip_bytes,
            8 * u64::from(c_steps(method)) * per_step * 4,
            "{method:?}"
        );
        // The ring: every chip sends to its neighbours, each link carrying 1/8 of the bytes
        // (one direction per chip for clockwise, both for the two-way methods).
        let links = if method == Method::Clockwise { 8 } else { 16 };
        assert_eq!(l.links, links, "{method:?}");
        if method == Method::MeetInTheMiddle {
            // 4 steps clockwise and 3 anticlockwise per phase: each clockwise link carries
            // 8 sends of one replica's fragment share, the 8 replicas 14 in all: 8 / (8·14)
            // of the total, i.e. max · 14 = total.
            assert_eq!(l.max_link_bytes * 14, l.inter_chip_bytes, "{method:?}");
        } else {
            assert_eq!(l.max_link_bytes * links, l.inter_chip_bytes, "{method:?}");
        }
        assert!(
            l.exchange_phases >= steps && steps >= 8,
            "{method:?}: {} phases, {steps} steps",
            l.exchange_phases
        );
    }
}

/// Fragment sends per replica of an all-reduce over 8 replicas (reduce-scatter then
/// all-gather): 7 + 7 one way; meet in the middle sends both ways at once, 4 + 4 steps of which
/// 3 + 3 carry two fragments and 1 + 1 one — 14 either way.
fn c_steps(_method: Method) -> u32 {
    14
}

/// The memory report of a replicated executable is per replica and shows its exchange code:
/// the counter-driven rings keep the program, and so the exchange code per tile, the same
/// whatever the number of replicas.
#[test]
fn exchange_code_per_tile_does_not_grow_with_replicas() {
    collectives::link();
    let mut code = Vec::new();
    for replicas in [4u32, 8, 16, 32] {
        let mut g = Graph::new_replicated(&machine(replicas), replicas, 1).unwrap();
        let f = g.add_variable(DType::F32, &[4096], "grads");
        g.map_linearly_over(&f, 1, 0..TILES).unwrap();
        let opts = Options {
            method: Method::Clockwise,
            ..Default::default()
        };
        let c = collectives::all_reduce_in_place(&mut g, &[f], Op::Add, Group::All, &opts, "g")
            .unwrap();
        let exe = compile(&g, &[c.program], &CompileOptions::default()).unwrap();
        let report = poplar::profile::MemoryReport::from_executable(&exe);
        assert_eq!(report.replicas, replicas);
        assert_eq!(report.tiles.len() as u32, TILES);
        assert!(report.exchange_code.max > 0);
        assert!(report.text(2).contains("exchange code"));
        code.push(report.exchange_code.max);
    }
    assert!(code.windows(2).all(|w| w[0] == w[1]), "{code:?}");
}

/// Across link domains the all-reduce runs in three phases (reduce-scatter inside each
/// domain, all-reduce across domains, all-gather inside): same results as the host model for
/// every operator that combines, and the plan lists the three phases.
#[test]
fn the_three_phase_all_reduce_across_domains_matches_the_host_model() {
    collectives::link();
    for (replicas, per_domain) in [(8u32, 4u32), (8, 2), (16, 4)] {
        for op in [Op::Add, Op::Mean, Op::Max, Op::SquareAdd] {
            let mut g = Graph::new_replicated(&machine(replicas), replicas, 1).unwrap();
            let n = 45;
            let f = g.add_variable(DType::F32, &[n], "f");
            g.map_linearly_over(&f, 1, 0..TILES).unwrap();
            g.create_host_read_write("f", &f).unwrap();
            let opts = Options {
                replicas_per_domain: Some(per_domain),
                ..Default::default()
            };
            let c = collectives::all_reduce_in_place(
                &mut g,
                std::slice::from_ref(&f),
                op,
                Group::All,
                &opts,
                "g",
            )
            .unwrap();
            assert_eq!(c.parts.len(), 4, "{:#?}", c.parts);
            assert_eq!(c.parts[0].group, Group::Consecutive(per_domain));
            assert_eq!(c.parts[1].group, Group::Orthogonal(replicas / per_domain));
            let exe = compile(&g, &[c.program], &CompileOptions::default()).unwrap();
            assert!(format!("{:?}", exe.programs).contains("three-phase"));
            let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
            let mut rng = Rng::new(17 + u64::from(replicas));
            let data: Vec<f32> = (0..replicas as usize * n).map(|_| rng.f32()).collect();
            e.write_tensor_all_replicas("f", &data).unwrap();
            e.run(0).unwrap();
            let got = e.read_tensor_all_replicas::<f32>("f").unwrap();
            let ins: Vec<Vec<f64>> = (0..replicas as usize)
                .map(|r| {
                    data[r * n..(r + 1) * n]
                        .iter()
                        .map(|&x| f64::from(x))
                        .collect()
                })
                .collect();
            let want = reference::all_reduce(&ins, op, Group::All).unwrap();
            let gsz = f64::from(replicas);
            for r in 0..replicas as usize {
                for i in 0..n {
                    let (a, b) = (f64::from(got[r * n + i]), want[r][i]);
                    assert!(
                        (a - b).abs() <= (gsz + 1.0) * gsz * 2.25 * f64::from(f32::EPSILON),
                        "{op:?} R={replicas} P={per_domain}: replica {r} element {i}: {a} vs {b}"
                    );
                }
            }
        }
    }
}
