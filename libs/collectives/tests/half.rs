//! f16 collectives round to f16 at every ring step, in the ring's order: every method against
//! the host model that does so (`reference::all_reduce_f16_ring`, `reduce_scatter_f16_ring`),
//! bit for bit, and against the exact sum.

use collectives::{reference, Group, Kind, Method, Op, Options};
use poplar::{compile, f16, CompileOptions, DType, Engine, EngineOptions, Graph};

mod support;
use support::{machine, Rng, METHODS};

/// What [`run_f16`] returns.
struct F16Run {
    /// Per replica, the output.
    outs: Vec<Vec<f16>>,
    /// Per replica, the input.
    ins: Vec<Vec<f16>>,
    /// The collective (its plan's rings and method).
    col: collectives::Collective,
    /// The output's pieces, tile after tile (where an all-reduce reduces in place).
    pieces: Vec<std::ops::Range<usize>>,
}

/// An f16 collective on the engine: one tensor of `n` elements spread over the tiles, data in
/// [0.5, 1.5) with all ten bits of the f16 mantissa random.
fn run_f16(replicas: u32, kind: Kind, op: Op, method: Method, n: usize, seed: u64) -> F16Run {
    collectives::link();
    let mut g = Graph::new_replicated(&machine(replicas), replicas, 1).unwrap();
    let tiles = g.target().num_tiles();
    let t = g.add_variable(DType::F16, &[n], "in");
    g.map_linearly_over(&t, 1, 0..tiles).unwrap();
    g.create_host_write("in", &t).unwrap();
    let opts = Options {
        method,
        ..Default::default()
    };
    let inputs = std::slice::from_ref(&t);
    let col = match kind {
        Kind::AllReduce => collectives::all_reduce(&mut g, inputs, op, Group::All, &opts, "ar"),
        _ => collectives::reduce_scatter(&mut g, inputs, op, Group::All, &opts, "rs"),
    }
    .unwrap();
    // The pieces the all-reduce reduces in place: its output's, tile after tile.
    let pieces: Vec<_> = g
        .tile_mapping(&col.outputs[0])
        .unwrap()
        .into_iter()
        .flatten()
        .collect();
    g.create_host_read("out", &col.outputs[0]).unwrap();
    let exe = compile(
        &g,
        std::slice::from_ref(&col.program),
        &CompileOptions::default(),
    )
    .unwrap();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
    let mut rng = Rng::new(seed);
    let r = replicas as usize;
    let v: Vec<f16> = (0..r * n).map(|_| f16::from_f32(rng.f32())).collect();
    e.write_tensor_all_replicas("in", &v).unwrap();
    e.run(0).unwrap();
    let all = e.read_tensor_all_replicas::<f16>("out").unwrap();
    let per = all.len() / r;
    let outs = (0..r)
        .map(|i| all[i * per..(i + 1) * per].to_vec())
        .collect();
    let ins = (0..r).map(|i| v[i * n..(i + 1) * n].to_vec()).collect();
    F16Run {
        outs,
        ins,
        col,
        pieces,
    }
}

/// f16 all-reduces and reduce-scatters round the partial sum to f16 at every ring step (the
/// buffers that travel are f16), in ring order: the results equal, bit for bit, the host model
/// that adds in the rings' order and rounds after every step
/// (`reference::all_reduce_f16_ring`), for every method and R = 2, 4, 8. The exact sum rounded
/// once to f16 is a different answer for R > 2 (checked: at least one element differs, so the
/// comparison tells the two apart); for R = 2 a single rounding is all there is, and the two
/// agree. Every result is within `G − 1` roundings of the exact sum: `(G − 1)/2` ulp of it.
#[test]
fn f16_results_round_at_every_ring_step_in_ring_order() {
    let ulp = |x: f64| 2f64.powi(x.abs().log2().floor() as i32 - 10);
    for replicas in [2u32, 4, 8] {
        let mut largest = (0.0f64, 0.0f64); // |per step − round once|, in ulps and absolute
        let mut differ = 0usize;
        let mut checked = 0usize;
        for method in METHODS {
            for kind in [Kind::AllReduce, Kind::ReduceScatter] {
                for (op, n) in [
                    (Op::Add, 45),
                    (Op::Add, 200),
                    (Op::Mean, 45),
                    (Op::SquareAdd, 45),
                ] {
                    let F16Run {
                        outs: got,
                        ins,
                        col,
                        pieces,
                    } = run_f16(replicas, kind, op, method, n, 31 + u64::from(replicas));
                    let part = &col.parts[0];
                    let want = match kind {
                        Kind::AllReduce => reference::all_reduce_f16_ring(
                            &ins,
                            op,
                            Group::All,
                            &part.rings,
                            part.method,
                            &reference::Layout::InPlace(pieces),
                        ),
                        _ => reference::reduce_scatter_f16_ring(
                            &ins,
                            op,
                            Group::All,
                            &part.rings,
                            part.method,
                        ),
                    }
                    .unwrap();
                    // The exact result (f64), rounded once.
                    let exact_in: Vec<Vec<f64>> = ins
                        .iter()
                        .map(|v| v.iter().map(|x| x.to_f64()).collect())
                        .collect();
                    let exact = match kind {
                        Kind::AllReduce => reference::all_reduce(&exact_in, op, Group::All),
                        _ => reference::reduce_scatter(&exact_in, op, Group::All),
                    }
                    .unwrap();
                    for (rep, (gv, wv)) in got.iter().zip(&want).enumerate() {
                        assert_eq!(gv.len(), wv.len());
                        for (i, (&a, &b)) in gv.iter().zip(wv).enumerate() {
                            assert_eq!(
                                a.to_bits(),
                                b.to_bits(),
                                "{kind:?} {op:?} {method:?} ({:?}) R={replicas} n={n}: replica {rep} \
                                 element {i}: device {a} ({:#06x}), per-step model {b} ({:#06x})",
                                part.method,
                                a.to_bits(),
                                b.to_bits()
                            );
                            let x = exact[rep][i];
                            let once = poplar::f16_from_f64(x);
                            checked += 1;
                            if op != Op::Add {
                                continue;
                            }
                            if x == 0.0 {
                                // Padding of a reduce-scatter.
                                assert_eq!(a.to_bits(), 0);
                                continue;
                            }
                            // G − 1 roundings of partial sums no larger than the result.
                            let err = (a.to_f64() - x).abs();
                            let bound = f64::from(replicas - 1) * 0.5 * ulp(x);
                            assert!(
                                err <= bound,
                                "{kind:?} {method:?} R={replicas}: replica {rep} element {i}: \
                                 {a} is {err} from the exact {x}, more than {bound}"
                            );
                            if once != a {
                                differ += 1;
                                let d = (a.to_f64() - once.to_f64()).abs();
                                largest.0 = largest.0.max(d / ulp(once.to_f64()));
                                largest.1 = largest.1.max(d);
                            }
                        }
                    }
                }
            }
        }
        eprintln!(
            "R={replicas}: {checked} f16 results equal to the per-step model; of the Add results, \
             {differ} differ from the exact sum rounded once, by up to {} ulp ({})",
            largest.0, largest.1
        );
        if replicas == 2 {
            assert_eq!(differ, 0, "R=2: one rounding either way");
        } else {
            assert!(
                differ > 0,
                "R={replicas}: per step never differs from round-once"
            );
        }
    }
}
