//! Replicated graphs: one graph built for one replica, compiled once, run by the engine on
//! every replica; per-replica constants, per-replica host access, cross-replica copies, and
//! the typed errors of impossible replication.

use poplar::codelet::*;
use poplar::{
    compile, CompileError, CompileOptions, DType, Engine, EngineError, EngineOptions, Executable,
    Graph, GraphError, Program, Target, ValidationError,
};

poplar::codelet! {
    /// `repl_test::AddIndex`: `out[i] = a[i] + index`.
    pub struct AddIndex as "repl_test::AddIndex" {
        a: Input<Vector<f32>>,
        index: Input<u32>,
        out: Output<Vector<f32>>,
    }
}

impl Vertex for AddIndex<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        let k = self.index as f32;
        for (o, &a) in self.out.iter_mut().zip(self.a.iter()) {
            *o = a + k;
        }
        Ok(())
    }
}

const TILES: u32 = 4;
const N: usize = 10;

/// `chips` chips of `TILES` tiles each.
fn machine(chips: u32) -> Target {
    Target {
        num_ipus: chips,
        ..Target::custom(TILES, 64 * 1024)
    }
}

/// Per replica: `y = x + replication index` on tiles 0 and 1 of its first chip, then `y` of
/// replica `r` is copied to `z` of replica `(r + 1) % R` (a ring), and `z` is read back.
fn ring(replicas: u32, chips_per_replica: u32) -> Executable {
    let mut g = Graph::new_replicated(
        &machine(replicas * chips_per_replica),
        replicas,
        chips_per_replica,
    )
    .unwrap();
    let x = g.add_variable(DType::F32, &[N], "x");
    let y = g.add_variable(DType::F32, &[N], "y");
    // z lives on the replica's last tile, so the copy crosses chips inside the ring too.
    let z = g.add_variable(DType::F32, &[N], "z");
    g.map_linearly_over(&x, 1, 0..2).unwrap();
    g.map_linearly_over(&y, 1, 0..2).unwrap();
    let last = g.target().num_tiles() - 1;
    g.set_tile_mapping(&z, last).unwrap();
    let cs = g.add_compute_set("add index");
    for (tile, range) in [(0u32, 0..N / 2), (1, N / 2..N)] {
        let idx = g.replication_index(tile).unwrap();
        let v = g.add_vertex_of::<AddIndex>(cs).unwrap();
        g.connect(v, "a", &x.slice(range.clone()).unwrap()).unwrap();
        g.connect(v, "index", &idx).unwrap();
        g.connect(v, "out", &y.slice(range).unwrap()).unwrap();
        g.set_tile_mapping(v, tile).unwrap();
    }
    g.create_host_write("x", &x).unwrap();
    g.create_host_read("z", &z).unwrap();
    g.create_host_read("y", &y).unwrap();
    let map: Vec<(u32, u32)> = (0..replicas).map(|r| (r, (r + 1) % replicas)).collect();
    let prog = Program::seq(vec![
        Program::execute(cs),
        Program::cross_replica_copy(&y, &z, &map),
    ]);
    compile(&g, &[prog], &CompileOptions::default()).unwrap()
}

fn inputs(replicas: u32) -> Vec<f32> {
    (0..replicas as usize * N).map(|i| i as f32 * 0.5).collect()
}

#[test]
fn every_replica_runs_the_program_and_the_ring_copy_moves_data_to_the_next() {
    for (replicas, cpr) in [(1, 1), (2, 1), (4, 2), (8, 1)] {
        let exe = ring(replicas, cpr);
        // Stored once: the tiles of one replica, not R of them.
        assert_eq!(exe.tiles.len() as u32, cpr * TILES);
        assert_eq!(exe.replicas(), replicas);
        let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
        assert_eq!(e.replicas(), replicas);
        let x = inputs(replicas);
        e.write_tensor_all_replicas("x", &x).unwrap();
        e.run(0).unwrap();
        let z = e.read_tensor_all_replicas::<f32>("z").unwrap();
        let y = e.read_tensor_all_replicas::<f32>("y").unwrap();
        for r in 0..replicas as usize {
            let from = (r + replicas as usize - 1) % replicas as usize;
            for i in 0..N {
                assert_eq!(y[r * N + i], x[r * N + i] + r as f32, "y, replica {r}");
                assert_eq!(
                    z[r * N + i],
                    x[from * N + i] + from as f32,
                    "z, replica {r} element {i} (R = {replicas})"
                );
            }
            assert_eq!(
                e.read_tensor_replica::<f32>("z", r as u32).unwrap(),
                z[r * N..(r + 1) * N]
            );
        }
    }
}

#[test]
fn a_partial_map_leaves_the_other_replicas_destination_alone() {
    let mut g = Graph::new_replicated(&machine(4), 4, 1).unwrap();
    let a = g.add_variable(DType::U32, &[3], "a");
    let b = g.add_variable(DType::U32, &[3], "b");
    g.set_tile_mapping(&a, 0).unwrap();
    g.set_tile_mapping(&b, 2).unwrap();
    g.create_host_read_write("a", &a).unwrap();
    g.create_host_read_write("b", &b).unwrap();
    // 3 -> 0 and 1 -> 2 only.
    let p = Program::cross_replica_copy(&a, &b, &[(3, 0), (1, 2)]);
    let exe = compile(&g, &[p], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(1)).unwrap();
    let a_all: Vec<u32> = (0..12).collect();
    e.write_tensor_all_replicas("a", &a_all).unwrap();
    e.write_tensor("b", &[99u32, 99, 99]).unwrap(); // the same on every replica
    e.run(0).unwrap();
    let b_all = e.read_tensor_all_replicas::<u32>("b").unwrap();
    assert_eq!(
        b_all,
        [vec![9, 10, 11], vec![99; 3], vec![3, 4, 5], vec![99; 3]].concat()
    );
}

#[test]
fn results_do_not_depend_on_the_thread_count_and_survive_a_save() {
    let exe = ring(8, 1);
    let dir = std::env::temp_dir().join(format!("poplar-repl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ring.pexe");
    exe.save(&path).unwrap();
    let loaded = Executable::load(&path).unwrap();
    assert_eq!(loaded.replication, exe.replication);
    let mut outs = Vec::new();
    for (exe, threads) in [(&exe, 1), (&exe, 3), (&loaded, 2)] {
        let mut e = Engine::new(exe, EngineOptions::with_threads(threads)).unwrap();
        e.write_tensor_all_replicas("x", &inputs(8)).unwrap();
        e.run(0).unwrap();
        outs.push(
            e.read_tensor_all_replicas::<f32>("z")
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(outs[0], outs[1]);
    assert_eq!(outs[0], outs[2]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn whole_engine_reads_of_replicated_data_are_refused_and_replicas_are_bounded() {
    let exe = ring(2, 1);
    let mut e = Engine::new(&exe, EngineOptions::with_threads(1)).unwrap();
    assert!(matches!(
        e.read_tensor::<f32>("z"),
        Err(EngineError::Replicated { replicas: 2, .. })
    ));
    assert!(matches!(
        e.read_tensor_replica::<f32>("z", 2),
        Err(EngineError::NoSuchReplica {
            replica: 2,
            replicas: 2
        })
    ));
    assert!(matches!(
        e.write_tensor_all_replicas("x", &[0f32; N]),
        Err(EngineError::WrongLength {
            expected: 20,
            got: 10,
            ..
        })
    ));
    // A single replica reads as before.
    let e1 = Engine::new(&ring(1, 1), EngineOptions::with_threads(1)).unwrap();
    assert_eq!(e1.read_tensor::<f32>("z").unwrap(), vec![0.0; N]);
}

#[test]
fn impossible_replication_is_a_typed_error_naming_the_cause() {
    let why = |r: Result<Graph, GraphError>| match r {
        Err(GraphError::InvalidReplication { reason }) => reason,
        Err(e) => panic!("other error {e}"),
        Ok(_) => panic!("accepted"),
    };
    assert!(why(Graph::new_replicated(&machine(6), 3, 2)).contains("power of two"));
    assert!(why(Graph::new_replicated(&machine(4), 0, 1)).contains("power of two"));
    assert!(why(Graph::new_replicated(&machine(4), 4, 2)).contains("8 chips"));
    assert!(why(Graph::new_replicated(&machine(4), 2, 0)).contains("at least one chip"));
    assert!(Graph::new_replicated(&machine(8), 4, 1).is_ok()); // 4 of 8 chips used

    let bad_copy = |g: &Graph, p: Program| -> String {
        match compile(g, &[p], &CompileOptions::default()) {
            Err(CompileError::Invalid(errs)) => errs
                .iter()
                .map(|e| match e {
                    ValidationError::BadCrossReplicaCopy { reason } => reason.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join("; "),
            Err(e) => panic!("other error {e}"),
            Ok(_) => panic!("compiled"),
        }
    };
    let mut g = Graph::new_replicated(&machine(4), 4, 1).unwrap();
    let a = g.add_variable(DType::F32, &[4], "a");
    let b = g.add_variable(DType::F32, &[4], "b");
    let c = g.add_variable(DType::I32, &[4], "c");
    for t in [&a, &b, &c] {
        g.set_tile_mapping(t, 0).unwrap();
    }
    assert!(
        bad_copy(&g, Program::cross_replica_copy(&a, &b, &[(0, 1), (2, 1)]))
            .contains("replica 1 is a destination twice")
    );
    assert!(
        bad_copy(&g, Program::cross_replica_copy(&a, &b, &[(0, 1), (0, 2)]))
            .contains("replica 0 is a source twice")
    );
    assert!(bad_copy(&g, Program::cross_replica_copy(&a, &b, &[(0, 4)]))
        .contains("there are 4 replicas"));
    assert!(bad_copy(&g, Program::cross_replica_copy(&a, &c, &[(0, 1)])).contains("i32"));
    assert!(bad_copy(
        &g,
        Program::cross_replica_copy(&a, &a.slice(0..4).unwrap(), &[(0, 1)])
    )
    .contains("share elements"));

    let mut plain = Graph::new(&machine(1));
    let p = plain.add_variable(DType::F32, &[2], "p");
    let q = plain.add_variable(DType::F32, &[2], "q");
    plain.set_tile_mapping(&p, 0).unwrap();
    plain.set_tile_mapping(&q, 1).unwrap();
    assert!(
        bad_copy(&plain, Program::cross_replica_copy(&p, &q, &[(0, 0)])).contains("not replicated")
    );
}

#[test]
fn replicas_that_would_branch_differently_stop_the_run_with_an_error() {
    let mut g = Graph::new_replicated(&machine(2), 2, 1).unwrap();
    let idx = g.replication_index(0).unwrap();
    let flag = g.add_variable(DType::U32, &[1], "flag");
    g.set_tile_mapping(&flag, 0).unwrap();
    g.create_host_read("flag", &flag).unwrap();
    let one = g.add_constant(&[1], &[1u32], "one").unwrap();
    g.set_tile_mapping(&one, 0).unwrap();
    let p = Program::if_then(&idx, Program::copy(&one, &flag));
    let exe = compile(&g, &[p], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(1)).unwrap();
    match e.run(0) {
        Err(EngineError::ReplicasDiverged {
            tile,
            replica: 1,
            value: 1,
            replica0_value: 0,
            ..
        }) if tile == 0 => {}
        other => panic!("expected divergence, got {other:?}"),
    }
}

#[test]
fn replica_constants_and_streams_are_per_replica() {
    let mut g = Graph::new_replicated(&machine(4), 4, 1).unwrap();
    let k = g
        .add_replica_constant(&[2], &[10i32, 11, 20, 21, 30, 31, 40, 41], "k")
        .unwrap();
    g.set_tile_mapping(&k, 1).unwrap();
    let buf = g.add_variable(DType::I32, &[2], "buf");
    g.set_tile_mapping(&buf, 2).unwrap();
    let s_in = g.add_host_to_device_stream("in", DType::I32, 2).unwrap();
    let s_out = g.add_device_to_host_stream("out", DType::I32, 2).unwrap();
    let p = Program::seq(vec![
        Program::stream_from_device(&k, s_out),
        Program::stream_to_device(s_in, &buf),
        Program::stream_from_device(&buf, s_out),
    ]);
    let exe = compile(&g, &[p], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
    for r in 0..4 {
        e.connect_stream_replica("in", r, vec![100 * r as i32, 100 * r as i32 + 1])
            .unwrap();
    }
    e.run(0).unwrap();
    for r in 0..4u32 {
        let k0 = 10 * (r as i32 + 1);
        assert_eq!(
            e.stream_output_replica::<i32>("out", r).unwrap(),
            vec![k0, k0 + 1, 100 * r as i32, 100 * r as i32 + 1]
        );
    }
    assert!(matches!(
        e.stream_output::<i32>("out"),
        Err(EngineError::Replicated { .. })
    ));
    assert!(matches!(
        g.add_replica_constant(&[2], &[1i32, 2], "short"),
        Err(GraphError::BadData { expected: 8, .. })
    ));
}

#[test]
fn replicas_of_a_multi_pod_machine_see_one_domain_each() {
    // Two Pod64s joined by GW-Links; 128 replicas of one chip, or 2 replicas of 64.
    let machine = Target {
        tiles_per_ipu: TILES,
        ..Target::pods(2, 64)
    };
    let g = Graph::new_replicated(&machine, 128, 1).unwrap();
    assert_eq!(g.target().num_ipus, 1);
    assert_eq!(g.target().domain_chips(), 1);
    assert_eq!(g.machine_target().chips_per_link_domain, 64);
    let g = Graph::new_replicated(&machine, 2, 64).unwrap();
    assert_eq!(g.target().domain_chips(), 64);
    // A replica of two Pods keeps their domains.
    let g = Graph::new_replicated(
        &Target {
            tiles_per_ipu: TILES,
            ..Target::pods(4, 64)
        },
        2,
        128,
    )
    .unwrap();
    assert_eq!(g.target().chips_per_link_domain, 64);
}

#[test]
fn the_cycle_model_of_a_replicated_executable_covers_every_replica() {
    let exe = ring(4, 1);
    let model = poplar::profile::CycleModel::new(&exe);
    let (flat, _) = exe.expand_replicas();
    assert_eq!(model, poplar::profile::CycleModel::new(&flat));
    // The ring copy crosses chips on every replica: 4 chip pairs of the target's links.
    let ring_phase = model
        .exchanges
        .iter()
        .find(|x| x.name == "cross-replica copy")
        .unwrap();
    assert_eq!(ring_phase.links.len(), 4);
    assert_eq!(ring_phase.inter_chip_bytes, 4 * N as u64 * 4);
}
