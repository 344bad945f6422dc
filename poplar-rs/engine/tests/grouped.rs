//! A straight stretch of supersteps whose tiles fall into groups that no copy joins runs group
//! by group (`poplar::Interleave`, `engine/grouped.rs`): the bits of running the phases apart,
//! for any number of threads, with the same stochastic rounding; after a failing vertex, the
//! error of the phases apart, and each group stopped at its own first failure.

use poplar::{
    compile, f16, CompileOptions, DType, Engine, EngineError, EngineOptions, Executable, Graph,
    GroupedRun, Interleave, Program, Target, Tensor,
};

const TILES: u32 = 8;
/// Elements per tile.
const N: usize = 4;
const ROUNDS: u32 = 3;

/// The partner of tile `t`: pairs 0–1, 2–3, … are the groups.
fn partner(t: u32) -> u32 {
    t ^ 1
}

fn engine(exe: &Executable, interleave: Interleave, threads: usize, sr: Option<u64>) -> Engine {
    poplar_testkit::link();
    codelets::link();
    let opts = EngineOptions {
        interleave,
        stochastic_rounding: sr,
        ..EngineOptions::with_threads(threads)
    };
    Engine::new(exe, opts).expect("engine")
}

/// `TILES · N` elements of `dtype`, `N` on each tile.
fn spread(g: &mut Graph, dtype: DType, name: &str) -> Tensor {
    let t = g.add_variable(dtype, &[TILES as usize * N], name);
    for tile in 0..TILES {
        let r = tile as usize * N..(tile as usize + 1) * N;
        g.set_tile_mapping(&t.slice(r).unwrap(), tile).unwrap();
    }
    t
}

fn on(t: &Tensor, tile: u32) -> Tensor {
    t.slice(tile as usize * N..(tile as usize + 1) * N).unwrap()
}

/// `ROUNDS` times: every tile's `a` is copied to its partner's `w`, then `a += w` on every
/// tile; with `limits`, then a vertex on each tile fails when `a[0]` is above that tile's
/// limit. With `sr`, each round also casts `a` to f16 in `h` (stochastic rounding when on).
fn pairs(limits: Option<[f32; TILES as usize]>, half: bool) -> Executable {
    let mut g = Graph::new(&Target::custom(TILES, 1 << 16));
    let a = spread(&mut g, DType::F32, "a");
    let w = spread(&mut g, DType::F32, "w");
    let h = spread(&mut g, DType::F16, "h");
    g.create_host_read_write("a", &a).unwrap();
    g.create_host_read("w", &w).unwrap();
    g.create_host_read("h", &h).unwrap();
    let to = Tensor::concat(&(0..TILES).map(|t| on(&w, partner(t))).collect::<Vec<_>>()).unwrap();
    let add = g.add_compute_set("add");
    for t in 0..TILES {
        let v = g.add_vertex(add, "AddInPlace<float>").unwrap();
        g.connect(v, "a", &on(&a, t)).unwrap();
        g.connect(v, "b", &on(&w, t)).unwrap();
        g.set_tile_mapping(v, t).unwrap();
        if half {
            let v = g.add_vertex(add, "Cast<float,half>").unwrap();
            g.connect(v, "input", &on(&w, t)).unwrap();
            g.connect(v, "out", &on(&h, t)).unwrap();
            g.set_tile_mapping(v, t).unwrap();
        }
    }
    let mut round = vec![Program::copy(&a, &to), Program::execute(add)];
    if let Some(limits) = limits {
        let check = g.add_compute_set("check");
        for t in 0..TILES {
            let v = g.add_vertex(check, "test::FailAbove").unwrap();
            g.connect(v, "x", &a.index(t as usize * N).unwrap())
                .unwrap();
            g.set_vertex_state(v, "limit", limits[t as usize]).unwrap();
            g.set_tile_mapping(v, t).unwrap();
        }
        round.push(Program::execute(check));
    }
    let prog = Program::repeat(ROUNDS, Program::seq(round));
    compile(&g, &[prog], &CompileOptions::default()).expect("compiles")
}

/// Tile t starts with t + 1 + i/8 in element i, plus k·2⁻¹³ for element k of the tensor (so
/// that the sums are not exact in f16).
fn start() -> Vec<f32> {
    (0..TILES as usize * N)
        .map(|k| (k / N) as f32 + 1.0 + (k % N) as f32 / 8.0 + k as f32 / 8192.0)
        .collect()
}

/// The host model: `rounds[t]` rounds of `a_t += a_partner` for the tiles of each pair (a pair
/// runs its rounds together, so both tiles of a pair take the same number).
fn model(rounds: [u32; TILES as usize]) -> Vec<f32> {
    let mut a = start();
    for t in (0..TILES as usize).step_by(2) {
        for _ in 0..rounds[t] {
            for i in 0..N {
                let (x, y) = (a[t * N + i], a[(t + 1) * N + i]);
                a[t * N + i] = x + y;
                a[(t + 1) * N + i] = y + x;
            }
        }
    }
    a
}

fn run(exe: &Executable, mode: Interleave, threads: usize) -> (Engine, Result<(), EngineError>) {
    let mut e = engine(exe, mode, threads, None);
    e.write_tensor("a", &start()).unwrap();
    let r = e.run(0);
    (e, r)
}

#[test]
fn pairs_of_tiles_run_group_by_group_with_the_bits_of_the_phases_apart() {
    let exe = pairs(None, false);
    let want = model([ROUNDS; TILES as usize]);
    for threads in [1, 2, 3] {
        let (e, r) = run(&exe, Interleave::All, threads);
        r.unwrap();
        // One stretch: the repeat of (copy, add), four pairs of tiles.
        let bytes = u64::from(ROUNDS) * u64::from(TILES) * N as u64 * 4;
        let got = e.grouped_runs();
        assert_eq!(got.len(), 1, "{got:?}");
        let GroupedRun {
            phases,
            groups,
            bytes_copied,
            ..
        } = got[0].clone();
        assert_eq!(
            (phases, groups, bytes_copied),
            (u64::from(ROUNDS), 4, bytes)
        );
        assert_eq!(
            e.read_tensor::<f32>("a").unwrap(),
            want,
            "{threads} threads"
        );
        let (apart, r) = run(&exe, Interleave::Never, threads);
        r.unwrap();
        assert!(apart.grouped_runs().is_empty());
        for name in ["a", "w"] {
            let (x, y): (Vec<f32>, Vec<f32>) = (
                e.read_tensor(name).unwrap(),
                apart.read_tensor(name).unwrap(),
            );
            assert_eq!(
                x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "{name}, {threads} threads"
            );
        }
    }
}

#[test]
fn small_or_joined_stretches_are_not_grouped_by_default() {
    // 32 bytes a copy is far below the default threshold; and with every tile copying to
    // tile 0 there is one group, which would leave all threads but one idle.
    let exe = pairs(None, false);
    let (e, r) = run(&exe, Interleave::Large, 2);
    r.unwrap();
    assert!(e.grouped_runs().is_empty());
    assert_eq!(e.read_tensor::<f32>("a").unwrap(), model([ROUNDS; 8]));
    let (e, r) = run(&exe, Interleave::NoGroupedRuns, 2);
    r.unwrap();
    assert!(e.grouped_runs().is_empty());

    let mut g = Graph::new(&Target::custom(4, 1 << 16));
    let x = g.add_variable(DType::F32, &[4], "x");
    let y = g.add_variable(DType::F32, &[4], "y");
    for t in 0..4 {
        g.set_tile_mapping(&x.slice(t..t + 1).unwrap(), t as u32)
            .unwrap();
    }
    g.set_tile_mapping(&y, 0).unwrap();
    let exe = compile(
        &g,
        &[Program::repeat(2, Program::copy(&x, &y))],
        &CompileOptions::default(),
    )
    .unwrap();
    assert!(engine(&exe, Interleave::All, 2, None)
        .grouped_runs()
        .is_empty());
}

#[test]
fn stochastic_rounding_takes_the_epochs_of_the_phases_apart() {
    let exe = pairs(None, true);
    let bits = |mode: Interleave, threads: usize| -> Vec<u16> {
        let mut e = engine(&exe, mode, threads, Some(7));
        assert_eq!(e.grouped_runs().len(), usize::from(mode == Interleave::All));
        e.write_tensor("a", &start()).unwrap();
        // Twice: the second run's epochs follow the first's.
        e.run(0).unwrap();
        e.run(0).unwrap();
        e.read_tensor::<f16>("h")
            .unwrap()
            .iter()
            .map(|h| h.to_bits())
            .collect()
    };
    let apart = bits(Interleave::Never, 1);
    for threads in [1, 2] {
        assert_eq!(bits(Interleave::All, threads), apart, "{threads} threads");
    }
}

#[test]
fn a_failing_vertex_stops_its_group_and_is_the_error_of_the_phases_apart() {
    // Tile 1 (pair 0–1) fails in round 3 and tile 4 (pair 4–5) in round 2: round 2 comes
    // first, so both ways report tile 4. Pair 4–5 stops after round 2's add; the other pairs
    // run all three rounds (pair 0–1 fails only after round 3's add, its last).
    let mut limits = [f32::MAX; TILES as usize];
    let after = |t: u32, rounds: u32| model([rounds; TILES as usize])[t as usize * N];
    limits[1] = (after(1, 2) + after(1, 3)) / 2.0;
    limits[4] = (after(4, 1) + after(4, 2)) / 2.0;
    let exe = pairs(Some(limits), false);
    let mut errors = Vec::new();
    for threads in [1, 2, 3] {
        for mode in [Interleave::All, Interleave::Never] {
            let (e, r) = run(&exe, mode, threads);
            let err = r.expect_err("tiles 1 and 4 fail");
            assert!(
                matches!(&err, EngineError::VertexFailed { tile, .. } if *tile == 4),
                "{mode:?}: {err}"
            );
            errors.push(err.to_string());
            if mode == Interleave::All {
                assert_eq!(e.grouped_runs().len(), 1);
                let got: Vec<f32> = e.read_tensor("a").unwrap();
                assert_eq!(
                    got,
                    model([3, 3, 3, 3, 2, 2, 3, 3]),
                    "{threads} threads: each pair up to its own failure"
                );
            }
        }
    }
    assert!(errors.iter().all(|e| e == &errors[0]), "{errors:?}");
}
