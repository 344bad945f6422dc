//! One executable over several ranks (`poplar::dist`), with the ranks on threads of this
//! process (`Ranks::in_process`: the same engine code as under MPI, another transport). The
//! MPI runs themselves (`mpiexec -n 2` and `-n 3`) are in `tests/mpi.rs`, behind the feature
//! `mpi`.
//!
//! Specification: on any number of ranks, every rank ends with exactly the results of one
//! process (bit for bit), and a failure on one rank is every rank's error, naming that rank.

use poplar::dist::Ranks;
use poplar::{compile, CompileOptions, Engine, EngineError, EngineOptions};
use poplar_testkit::random::build_case;
use poplar_testkit::ranks::*;

/// Runs `f` once per rank of an in-process job of `n` ranks, each on its own thread.
fn on_ranks<T: Send>(n: usize, f: impl Fn(Ranks) -> T + Sync) -> Vec<T> {
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = Ranks::in_process(n)
            .into_iter()
            .map(|r| s.spawn(move || f(r)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn random_graphs_give_the_same_bits_on_one_two_and_three_ranks() {
    let bits = |h: &Vec<Vec<f32>>| h.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    for seed in 1..50u64 {
        let case = build_case(seed * 6151);
        let one = run_random(&case, 1, None).unwrap();
        assert_eq!(one, case.expect, "seed {seed}: one process");
        for n in [2, 3] {
            for (rank, got) in on_ranks(n, |r| run_random(&case, 1, Some(r)))
                .into_iter()
                .enumerate()
            {
                assert_eq!(
                    bits(&got.unwrap()),
                    bits(&one),
                    "seed {seed}, rank {rank} of {n}"
                );
            }
        }
    }
}

#[test]
fn the_loop_case_crosses_ranks_every_way_and_matches_its_host_model() {
    // 5 tiles: over 2 ranks tiles 0-2 | 3-4, over 3 ranks 0-1 | 2-3 | 4. The predicate and the
    // flag live on tile 4, the last rank; the sum is gathered onto tile 0 and broadcast back.
    for flag in [false, true] {
        let expect = loop_expect(5, 7, flag);
        assert_eq!(expect.trace.len(), 6);
        let one = run_loop(5, 7, flag, Faults::NONE, 2, None).unwrap();
        assert_eq!(one.bits(), expect.bits(), "one process, flag {flag}");
        for n in [2, 3, 4, 7] {
            for (rank, got) in on_ranks(n, |r| run_loop(5, 7, flag, Faults::NONE, 1, Some(r)))
                .into_iter()
                .enumerate()
            {
                assert_eq!(got.unwrap().bits(), expect.bits(), "rank {rank} of {n}");
            }
        }
    }
}

#[test]
fn a_vertex_failure_on_one_rank_is_every_ranks_error_naming_it() {
    // x's last element lives on tile 4 (rank 1 of 2); limit 0 fails in the first iteration.
    let fails = Faults {
        fail_above: 0.0,
        ..Faults::NONE
    };
    let results = on_ranks(2, |r| run_loop(5, 7, false, fails, 1, Some(r)));
    let one = run_loop(5, 7, false, fails, 1, None).unwrap_err();
    let EngineError::VertexFailed { tile, .. } = &one else {
        panic!("one process: {one}");
    };
    assert_eq!(*tile, 4);
    for (rank, r) in results.into_iter().enumerate() {
        match r {
            Err(EngineError::OnRank {
                rank: 1,
                ranks: 2,
                cause,
            }) => {
                assert_eq!(cause, one.to_string(), "rank {rank}");
                assert!(
                    cause.contains("tile 4") && cause.contains("test::FailAbove"),
                    "{cause}"
                );
            }
            other => panic!("rank {rank}: {other:?}"),
        }
    }
}

#[test]
fn ranks_that_hold_different_executables_refuse_to_run() {
    poplar_testkit::link();
    let results = on_ranks(3, |r| {
        // Rank 2 compiles another graph (a different failure limit is a different constant).
        let fail_above = if r.rank() == 2 { 1.0 } else { 2.0 };
        let (g, progs) = loop_graph(
            5,
            Faults {
                fail_above,
                ..Faults::NONE
            },
        );
        let exe = compile(&g, &progs, &CompileOptions::default()).unwrap();
        Engine::new(
            &exe,
            EngineOptions {
                ranks: Some(r),
                ..EngineOptions::with_threads(1)
            },
        )
        .map(|_| ())
    });
    for (rank, r) in results.into_iter().enumerate() {
        match r {
            Err(EngineError::RanksDisagree {
                rank: 2,
                checksum,
                root_checksum,
            }) => {
                assert_ne!(checksum, root_checksum, "rank {rank}")
            }
            other => panic!("rank {rank}: {other:?}"),
        }
    }
}

#[test]
fn traffic_between_ranks_is_one_message_per_pair_that_exchanges_and_counts_its_bytes() {
    use poplar::{DType, Graph, Program, Target};
    // x on 4 tiles, two elements each; z = x reversed: tile t's z comes from tile 3 - t.
    let mut g = Graph::new(&Target::custom(4, 1 << 16));
    let x = g.add_variable(DType::F32, &[8], "x");
    let z = g.add_variable(DType::F32, &[8], "z");
    for t in 0..4u32 {
        let r = 2 * t as usize..2 * t as usize + 2;
        g.set_tile_mapping(&x.slice(r.clone()).unwrap(), t).unwrap();
        g.set_tile_mapping(&z.slice(r).unwrap(), t).unwrap();
    }
    let progs = vec![Program::repeat(
        3,
        Program::copy(&x.reverse(0).unwrap(), &z),
    )];
    let exe = compile(&g, &progs, &CompileOptions::default()).unwrap();
    let t = |ranks| poplar::engine::program_traffic(&exe, ranks, 0).unwrap();
    // One rank: nothing crosses.
    assert_eq!((t(1).messages, t(1).bytes), (0, 0));
    // Two ranks (tiles 0-1 | 2-3): each sends the other its 16 bytes, three times.
    let two = t(2);
    assert_eq!((two.exchange_phases, two.crossing_phases), (3, 3));
    assert_eq!((two.messages, two.bytes), (2 * 3, 32 * 3));
    assert_eq!((two.critical_bytes, two.critical_messages), (16 * 3, 3));
    // Three ranks (tiles 0-1 | 2 | 3): rank 0 sends to and receives from both others.
    let three = t(3);
    assert_eq!((three.messages, three.bytes), (4 * 3, 32 * 3));
    assert_eq!(
        (three.critical_bytes, three.critical_messages),
        (16 * 3, 2 * 3)
    );
    // Four ranks: every tile's z comes from another rank; 8 bytes per message.
    let four = t(4);
    assert_eq!((four.messages, four.bytes), (4 * 3, 32 * 3));
    assert_eq!((four.critical_bytes, four.critical_messages), (8 * 3, 3));
    // Per phase, the same from `rank_traffic`.
    let phases = poplar::engine::rank_traffic(&exe, 3);
    let crossing: Vec<_> = phases.iter().filter(|p| p.messages > 0).collect();
    assert_eq!(crossing.len(), 1);
    assert_eq!(crossing[0].max_rank_send_bytes, 16);
    assert!(two.seconds(2, 1e9, 1e-6) > 0.0);
}

#[test]
fn every_rank_has_the_profile_of_one_process_with_the_slowest_ranks_host_times() {
    use poplar::profile::ProfileOptions;
    poplar_testkit::link();
    let (g, progs) = loop_graph(5, Faults::NONE);
    let exe = compile(&g, &progs, &CompileOptions::default()).unwrap();
    let profile = |ranks: Option<Ranks>| {
        let mut e = Engine::new(
            &exe,
            EngineOptions {
                ranks,
                ..EngineOptions::with_threads(1)
            },
        )
        .unwrap();
        e.enable_profiling(ProfileOptions::default());
        e.write_tensor("x", &loop_x0(5)).unwrap();
        e.write_tensor("n", &[6i32]).unwrap();
        e.write_tensor("flag", &[true]).unwrap();
        e.connect_stream("feed", loop_feed(5, 6)).unwrap();
        e.run(0).unwrap();
        e.take_profile().unwrap()
    };
    let one = profile(None);
    assert!(one.elapsed.total() > 0 && one.wall_ns > 0);
    let walls: Vec<u64> = on_ranks(3, |r| {
        let p = profile(Some(r));
        // Modelled records of every tile, the same as one process's.
        assert_eq!(p.elapsed, one.elapsed);
        assert_eq!(p.tiles, one.tiles);
        assert_eq!(p.syncs, one.syncs);
        assert_eq!(p.phases.len(), one.phases.len());
        for (a, b) in p.phases.iter().zip(&one.phases) {
            assert_eq!(
                (a.kind, a.index, a.executions),
                (b.kind, b.index, b.executions)
            );
        }
        p.wall_ns
    });
    // Host times are the slowest rank's: the same on every rank.
    assert!(walls.iter().all(|&w| w == walls[0] && w > 0), "{walls:?}");
}
