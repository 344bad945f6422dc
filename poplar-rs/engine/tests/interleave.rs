//! The engine interleaves an exchange phase with the compute phase after it (and the on-tile
//! copy phases between), tile by tile
//! (`poplar::Interleave`), only where no vertex of the compute writes a byte the exchange
//! reads; the results are the bits of running the two apart, also when a vertex fails.

use poplar::{
    compile, CompileOptions, DType, Engine, EngineError, EngineOptions, Executable, Graph,
    Interleave, Program, Target, Tensor,
};
use poplar_testkit::random::{build_case, run_exe, Host};

fn engine(exe: &Executable, interleave: Interleave, threads: usize) -> Engine {
    poplar_testkit::link();
    codelets::link();
    let opts = EngineOptions {
        interleave,
        ..EngineOptions::with_threads(threads)
    };
    Engine::new(exe, opts).expect("engine")
}

fn var(g: &mut Graph, name: &str, tile: u32) -> Tensor {
    let t = g.add_variable(DType::F32, &[4], name);
    g.set_tile_mapping(&t, tile).unwrap();
    g.create_host_read_write(name, &t).unwrap();
    t
}

fn add_in_place(g: &mut Graph, cs: poplar::ComputeSet, a: &Tensor, b: &Tensor, tile: u32) {
    let v = g.add_vertex(cs, "AddInPlace<float>").unwrap();
    g.connect(v, "a", a).unwrap();
    g.connect(v, "b", b).unwrap();
    g.set_tile_mapping(v, tile).unwrap();
}

/// A copy of `x` (tile 0) to `w` (tile 1), then one compute set over both tiles: on tile 1,
/// `y += w`; on tile 0, `x += z` (`write_source`: a vertex writes what the copy reads) or
/// `z += x`.
fn two_tiles(write_source: bool) -> Executable {
    let mut g = Graph::new(&Target::custom(2, 1 << 16));
    let x = var(&mut g, "x", 0);
    let z = var(&mut g, "z", 0);
    let y = var(&mut g, "y", 1);
    let w = g.add_variable(DType::F32, &[4], "w");
    g.set_tile_mapping(&w, 1).unwrap();
    let cs = g.add_compute_set("step");
    add_in_place(&mut g, cs, &y, &w, 1);
    if write_source {
        add_in_place(&mut g, cs, &x, &z, 0);
    } else {
        add_in_place(&mut g, cs, &z, &x, 0);
    }
    let prog = Program::seq(vec![Program::copy(&x, &w), Program::execute(cs)]);
    compile(&g, &[prog], &CompileOptions::default()).expect("compiles")
}

#[test]
fn interleaves_only_where_no_vertex_writes_what_the_exchange_reads() {
    for write_source in [false, true] {
        let exe = two_tiles(write_source);
        for threads in [1, 2] {
            for mode in [Interleave::All, Interleave::Never, Interleave::Large] {
                let mut e = engine(&exe, mode, threads);
                e.write_tensor("x", &[1f32, 2., 3., 4.]).unwrap();
                e.write_tensor("y", &[10f32, 20., 30., 40.]).unwrap();
                e.write_tensor("z", &[1f32; 4]).unwrap();
                e.run(0).unwrap();
                let interleaved = e.interleaved_phases().len();
                let want = usize::from(mode == Interleave::All && !write_source);
                assert_eq!(
                    interleaved, want,
                    "{mode:?}, writes its source: {write_source}"
                );
                // Tile 1 adds the x of before the copy, whatever tile 0 does to it afterwards.
                let y: Vec<f32> = e.read_tensor("y").unwrap();
                assert_eq!(y, [11., 22., 33., 44.], "{mode:?} {write_source}");
                let (x, z): (Vec<f32>, Vec<f32>) =
                    (e.read_tensor("x").unwrap(), e.read_tensor("z").unwrap());
                if write_source {
                    assert_eq!((x, z), (vec![2., 3., 4., 5.], vec![1.; 4]));
                } else {
                    assert_eq!((x, z), (vec![1., 2., 3., 4.], vec![2., 3., 4., 5.]));
                }
            }
        }
    }
}

#[test]
fn a_failing_vertex_still_lets_the_exchange_complete() {
    // A copy from tile 0 to tile 1, then a compute set whose vertex on tile 0 fails: tile 0
    // comes first in an interleaved phase, so the copy into tile 1 runs after the failure.
    let mut g = Graph::new(&Target::custom(2, 1 << 16));
    let x = var(&mut g, "x", 0);
    let w = var(&mut g, "w", 1);
    let s = g.add_variable(DType::F32, &[], "s");
    g.set_tile_mapping(&s, 0).unwrap();
    g.create_host_read_write("s", &s).unwrap();
    let cs = g.add_compute_set("check");
    let v = g.add_vertex(cs, "test::FailAbove").unwrap();
    g.connect(v, "x", &s).unwrap();
    g.set_vertex_state(v, "limit", 1.0f32).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    let prog = Program::seq(vec![Program::copy(&x, &w), Program::execute(cs)]);
    let exe = compile(&g, &[prog], &CompileOptions::default()).expect("compiles");
    let x = [1f32, 2., 3., 4.];
    fails_after_copying(
        &exe,
        &[("x", &x), ("w", &[0f32; 4]), ("s", &[5f32])],
        "w",
        &x,
    );
}

/// Runs `exe`, whose vertex on tile 0 fails, interleaved and apart with 1 and 2 threads after
/// writing `inputs`: the error is `VertexFailed` on tile 0 and the same either way, and tensor
/// `copied` holds `want` (the copies into the later tile still ran).
fn fails_after_copying(exe: &Executable, inputs: &[(&str, &[f32])], copied: &str, want: &[f32]) {
    for threads in [1, 2] {
        let mut errors = Vec::new();
        for mode in [Interleave::All, Interleave::Never] {
            let mut e = engine(exe, mode, threads);
            assert_eq!(
                e.interleaved_phases().len(),
                usize::from(mode == Interleave::All)
            );
            for (name, v) in inputs {
                e.write_tensor(name, v).unwrap();
            }
            let err = e.run(0).expect_err("the vertex fails");
            assert!(
                matches!(&err, EngineError::VertexFailed { tile, .. } if *tile == 0),
                "{mode:?}: {err}"
            );
            let got: Vec<f32> = e.read_tensor(copied).unwrap();
            assert_eq!(got, want, "{mode:?}, {threads} threads");
            errors.push(err.to_string());
        }
        assert_eq!(errors[0], errors[1]);
    }
}

#[test]
fn random_graphs_give_the_same_bits_interleaved() {
    let run = |case: &poplar_testkit::random::Case, interleave, threads| -> (Host, usize) {
        let exe = compile(&case.graph, &case.progs, &CompileOptions::default()).unwrap();
        let opts = EngineOptions {
            interleave,
            ..EngineOptions::with_threads(threads)
        };
        let (host, e) = run_exe(case, &exe, opts);
        (host, e.interleaved_phases().len())
    };
    let bits = |h: &Host| h.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    let mut interleaved = 0;
    for seed in 1..150u64 {
        let case = build_case(seed * 6_151);
        for threads in [1, 2] {
            let (a, n) = run(&case, Interleave::All, threads);
            let (b, _) = run(&case, Interleave::Never, threads);
            assert_eq!(a, case.expect, "seed {seed}, {threads} threads");
            assert_eq!(bits(&a), bits(&b), "seed {seed}, {threads} threads");
            interleaved += n;
        }
    }
    // The random programs must reach the interleaved path often.
    assert!(interleaved >= 40, "{interleaved} phases interleaved");
}

/// A copy whose source is half on the destination's tile: the exchange brings the other
/// half, and an on-tile copy phase (no vertices) moves the local half. The interleaving is the
/// exchange, that copy phase and the compute set after it, interleaved as one.
fn split_copy(fail: bool) -> Executable {
    let mut g = Graph::new(&Target::custom(2, 1 << 16));
    let a = g.add_variable(DType::F32, &[8], "a");
    g.set_tile_mapping(&a.slice(0..4).unwrap(), 0).unwrap();
    g.set_tile_mapping(&a.slice(4..8).unwrap(), 1).unwrap();
    g.create_host_read_write("a", &a).unwrap();
    let b = g.add_variable(DType::F32, &[8], "b");
    g.set_tile_mapping(&b, 1).unwrap();
    g.create_host_read_write("b", &b).unwrap();
    let y = g.add_variable(DType::F32, &[8], "y");
    g.set_tile_mapping(&y, 1).unwrap();
    g.create_host_read_write("y", &y).unwrap();
    let cs = g.add_compute_set("step");
    add_in_place(&mut g, cs, &y, &b, 1);
    if fail {
        // Tile 0 comes first: its vertex fails before tile 1's copies and compute.
        let s = g.add_variable(DType::F32, &[], "s");
        g.set_tile_mapping(&s, 0).unwrap();
        g.create_host_read_write("s", &s).unwrap();
        let v = g.add_vertex(cs, "test::FailAbove").unwrap();
        g.connect(v, "x", &s).unwrap();
        g.set_vertex_state(v, "limit", 1.0f32).unwrap();
        g.set_tile_mapping(v, 0).unwrap();
    }
    let prog = Program::seq(vec![Program::copy(&a, &b), Program::execute(cs)]);
    compile(&g, &[prog], &CompileOptions::default()).expect("compiles")
}

#[test]
fn a_copy_with_an_on_tile_part_interleaves_with_the_compute_after_it() {
    let exe = split_copy(false);
    // The program is: exchange, on-tile copy phase (no vertices), compute set `step`.
    let names: Vec<&str> = exe.computes.values().map(|c| c.name.as_str()).collect();
    assert!(
        names.contains(&"copy") && names.contains(&"step"),
        "{names:?}"
    );
    let a: Vec<f32> = (1..=8).map(|i| i as f32).collect();
    for threads in [1, 2] {
        for mode in [Interleave::All, Interleave::Never] {
            let mut e = engine(&exe, mode, threads);
            let interleaved = e.interleaved_phases();
            if mode == Interleave::All {
                // One interleaving, ending at the phase with vertices (not at the copy phase).
                assert_eq!(interleaved.len(), 1, "{interleaved:?}");
                assert_eq!(exe.computes[interleaved[0].1].name, "step");
            } else {
                assert!(interleaved.is_empty());
            }
            e.write_tensor("a", &a).unwrap();
            e.write_tensor("b", &[0f32; 8]).unwrap();
            e.write_tensor("y", &[100f32; 8]).unwrap();
            e.run(0).unwrap();
            // Both halves of `b` (the exchanged one and the on-tile one) arrived before the
            // vertex read them.
            let y: Vec<f32> = e.read_tensor("y").unwrap();
            let want: Vec<f32> = a.iter().map(|x| x + 100.).collect();
            assert_eq!(y, want, "{mode:?}, {threads} threads");
        }
    }
}

#[test]
fn after_a_failing_vertex_the_interleaving_still_completes_its_copies() {
    // Both halves of `b` land: the exchanged one and the on-tile one (a phase before the
    // failing one).
    let exe = split_copy(true);
    let a: Vec<f32> = (1..=8).map(|i| i as f32).collect();
    fails_after_copying(
        &exe,
        &[
            ("a", &a),
            ("b", &[0f32; 8]),
            ("y", &[100f32; 8]),
            ("s", &[5f32]),
        ],
        "b",
        &a,
    );
}
