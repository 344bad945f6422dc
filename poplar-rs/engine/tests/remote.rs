//! Remote buffers in Streaming Memory, as a user meets them: a graph with buffers, programs
//! that copy to and from rows chosen on the device, the host's reads and writes between runs,
//! and every refusal a typed error. Each result is checked against a host model of the same
//! rows, bit for bit.

use poplar::program::Program;
use poplar::{
    compile, CompileOptions, DType, Engine, EngineError, EngineOptions, Graph, Target, Tensor,
};

fn target() -> Target {
    Target::custom(4, 64 * 1024)
}

/// `counter += step` on tile 0 (an on-device offset).
fn bump(g: &mut Graph, counter: &Tensor, by: i32, name: &str) -> poplar::ComputeSet {
    let step = g
        .add_constant(&[1], &[by], &format!("{name} step"))
        .unwrap();
    g.set_tile_mapping(&step, 0).unwrap();
    let cs = g.add_compute_set(name);
    let v = g.add_vertex(cs, "AddInPlace<int>").unwrap();
    g.connect(v, "a", counter).unwrap();
    g.connect(v, "b", &step).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    cs
}

fn engine(exe: &poplar::Executable, threads: usize) -> Engine {
    codelets::link();
    Engine::new(exe, EngineOptions::with_threads(threads)).unwrap()
}

/// Rows written by a device-computed offset land where a host model says, and read back.
#[test]
fn rows_chosen_on_the_device_round_trip() {
    for threads in [1, 2] {
        let mut g = Graph::new(&target());
        let buf = g.add_remote_buffer("buf", DType::F32, 6, 5).unwrap();
        let x = g.add_variable(DType::F32, &[6], "x");
        g.map_linearly(&x, 2).unwrap();
        let row = g.add_variable(DType::I32, &[1], "row");
        g.set_tile_mapping(&row, 0).unwrap();
        g.create_host_read_write("x", &x).unwrap();
        g.create_host_read_write("row", &row).unwrap();
        let inc = bump(&mut g, &row, 2, "next row");
        let store = Program::seq(vec![
            Program::copy_to_remote(&x, buf, Some(&row)),
            Program::execute(inc),
        ]);
        let load = Program::copy_from_remote(buf, &x, Some(&row));
        let exe = compile(&g, &[store, load], &CompileOptions::default()).unwrap();
        let mut e = engine(&exe, threads);
        let mut model = vec![vec![0f32; 6]; 5];
        e.write_tensor("row", &[0i32]).unwrap();
        for k in 0..3 {
            let data: Vec<f32> = (0..6).map(|i| (k * 10 + i) as f32 + 0.25).collect();
            e.write_tensor("x", &data).unwrap();
            e.run(0).unwrap();
            model[2 * k as usize] = data;
        }
        for (r, want) in model.iter().enumerate() {
            assert_eq!(
                &e.read_remote_row::<f32>("buf", r as u64).unwrap(),
                want,
                "row {r}"
            );
        }
        e.write_tensor("row", &[2i32]).unwrap();
        e.run(1).unwrap();
        assert_eq!(e.read_tensor::<f32>("x").unwrap(), model[2]);
        // Row 6 is past the 5 rows: a typed error naming buffer, row and program, and
        // nothing moves.
        e.write_tensor("row", &[6i32]).unwrap();
        let before = e.read_tensor::<f32>("x").unwrap();
        let err = e.run(1).unwrap_err();
        assert_eq!(
            err,
            EngineError::RemoteRowOutOfRange {
                buffer: "buf".into(),
                replica: None,
                row: 6,
                rows: 5,
                program: Some(1)
            }
        );
        assert!(err.to_string().contains("program 1"), "{err}");
        assert_eq!(e.read_tensor::<f32>("x").unwrap(), before);
        assert_eq!(e.read_remote_buffer::<f32>("buf").unwrap(), model.concat());
    }
}

fn on_ranks<T: Send>(n: usize, f: impl Fn(poplar::dist::Ranks) -> T + Sync) -> Vec<T> {
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = poplar::dist::Ranks::in_process(n)
            .into_iter()
            .map(|r| s.spawn(move || f(r)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Every element type, two chips, two rows per copy at offsets a vertex computes: the host
/// model's bytes on 1 and 2 threads and on 1, 2 and 3 ranks (every rank ends with them).
#[test]
fn every_dtype_round_trips_bit_for_bit_on_threads_and_ranks() {
    use poplar_testkit::remote::{remote_expect, run_remote};
    let want = remote_expect();
    for threads in [1, 2] {
        assert_eq!(
            run_remote(threads, None).unwrap(),
            want,
            "{threads} threads"
        );
    }
    for n in [1, 2, 3] {
        for (rank, got) in on_ranks(n, |r| run_remote(1, Some(r)))
            .into_iter()
            .enumerate()
        {
            assert_eq!(got.unwrap(), want, "rank {rank} of {n}");
        }
    }
}

/// Without an offset tensor a copy moves rows 0..k; with k = rows, the whole buffer.
#[test]
fn without_an_offset_a_copy_moves_the_first_rows() {
    poplar_testkit::link();
    let (g, progs) = poplar_testkit::remote::remote_graph();
    let exe = compile(&g, &progs, &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
    let rows: Vec<i32> = (0..30).map(|i| i * 7 - 50).collect();
    e.write_remote_buffer("i32", &rows).unwrap();
    e.run(2).unwrap();
    assert_eq!(e.read_tensor::<i32>("t i32").unwrap(), rows[..10]);

    let mut g = Graph::new(&target());
    let buf = g.add_remote_buffer("whole", DType::U16, 3, 4).unwrap();
    let x = g.add_variable(DType::U16, &[4, 3], "x");
    g.map_linearly(&x, 3).unwrap();
    g.create_host_read_write("x", &x).unwrap();
    let exe = compile(
        &g,
        &[
            Program::copy_to_remote(&x, buf, None),
            Program::copy_from_remote(buf, &x, None),
        ],
        &CompileOptions::default(),
    )
    .unwrap();
    let mut e = engine(&exe, 1);
    let data: Vec<u16> = (0..12).map(|i| 1000 + i * 3).collect();
    e.write_tensor("x", &data).unwrap();
    e.run(0).unwrap();
    assert_eq!(e.read_remote_buffer::<u16>("whole").unwrap(), data);
    e.write_remote_row("whole", 2, &[7u16, 8, 9]).unwrap();
    e.run(1).unwrap();
    let mut want = data.clone();
    want[6..9].copy_from_slice(&[7, 8, 9]);
    assert_eq!(e.read_tensor::<u16>("x").unwrap(), want);
    assert_eq!(e.read_remote_row::<u16>("whole", 1).unwrap(), data[3..6]);
}

/// `replicas` replicas, each with a remote buffer `state` of 3 rows of 4 floats, a tensor `x`
/// (4 floats over 2 tiles) and a row index `row` (host read-write): program 0 copies `x` to
/// row `row`, program 1 copies row `row` back into `x`.
fn replicated_row_copies(replicas: u32) -> poplar::Executable {
    poplar_testkit::link();
    let machine = Target {
        num_ipus: replicas,
        ..Target::custom(2, 16 * 1024)
    };
    let mut g = Graph::new_replicated(&machine, replicas, 1).unwrap();
    let buf = g.add_remote_buffer("state", DType::F32, 4, 3).unwrap();
    let x = g.add_variable(DType::F32, &[4], "x");
    g.map_linearly(&x, 2).unwrap();
    let row = g.add_variable(DType::I32, &[1], "row");
    g.set_tile_mapping(&row, 1).unwrap();
    g.create_host_read_write("x", &x).unwrap();
    g.create_host_read_write("row", &row).unwrap();
    let copies = [
        Program::copy_to_remote(&x, buf, Some(&row)),
        Program::copy_from_remote(buf, &x, Some(&row)),
    ];
    compile(&g, &copies, &CompileOptions::default()).unwrap()
}

/// In a replicated graph each replica has its own buffer: the same program, a different row
/// per replica (offsets written per replica), rows that never mix.
#[test]
fn each_replica_has_its_own_buffer() {
    let exe = replicated_row_copies(4);
    for threads in [1, 2] {
        let mut e = engine(&exe, threads);
        for r in 0..4u32 {
            let v: Vec<f32> = (0..4).map(|i| (10 * r + i) as f32).collect();
            e.write_tensor_replica("x", r, &v).unwrap();
            e.write_tensor_replica("row", r, &[(r % 3) as i32]).unwrap();
        }
        e.run(0).unwrap();
        for r in 0..4u32 {
            let v: Vec<f32> = (0..4).map(|i| (10 * r + i) as f32).collect();
            let mut want = vec![0f32; 12];
            want[(r % 3) as usize * 4..][..4].copy_from_slice(&v);
            assert_eq!(
                e.read_remote_buffer_replica::<f32>("state", r).unwrap(),
                want,
                "replica {r}"
            );
        }
        // A whole-engine read of a replicated buffer is refused, naming it.
        assert!(matches!(
            e.read_remote_buffer::<f32>("state"),
            Err(EngineError::Replicated { .. })
        ));
        e.write_tensor("x", &[0f32; 4]).unwrap();
        e.run(1).unwrap();
        for r in 0..4u32 {
            let v: Vec<f32> = (0..4).map(|i| (10 * r + i) as f32).collect();
            assert_eq!(e.read_tensor_replica::<f32>("x", r).unwrap(), v);
        }
    }
}

/// A replicated copy moves on every replica or on none: with an offset out of range on replica
/// 1 only, neither replica 0's rows (to remote) nor its tensor (from remote) change, and the
/// error names the buffer as declared and the replica at fault.
#[test]
fn a_replicated_copy_checks_every_replica_before_any_moves() {
    let exe = replicated_row_copies(2);
    for threads in [1, 2] {
        let mut e = engine(&exe, threads);
        let rows: Vec<f32> = (0..12).map(|i| 100.0 + i as f32).collect();
        for r in 0..2u32 {
            e.write_remote_buffer_replica("state", r, &rows).unwrap();
            e.write_tensor_replica("x", r, &[r as f32; 4]).unwrap();
        }
        e.write_tensor_replica("row", 0, &[1i32]).unwrap();
        e.write_tensor_replica("row", 1, &[5i32]).unwrap();
        let want = EngineError::RemoteRowOutOfRange {
            buffer: "state".into(),
            replica: Some(1),
            row: 5,
            rows: 3,
            program: Some(0),
        };
        // To remote: replica 0's row 1 keeps its values.
        let err = e.run(0).unwrap_err();
        for r in 0..2u32 {
            assert_eq!(
                e.read_remote_buffer_replica::<f32>("state", r).unwrap(),
                rows,
                "replica {r}'s buffer, {threads} threads"
            );
        }
        assert_eq!(err, want);
        assert_eq!(
            err.to_string(),
            "program 0: remote buffer 'state' of replica 1: row 5 is out of range (it has 3 rows); nothing was copied"
        );
        // From remote: replica 0's tensor keeps its values.
        let err = e.run(1).unwrap_err();
        for r in 0..2u32 {
            assert_eq!(
                e.read_tensor_replica::<f32>("x", r).unwrap(),
                [r as f32; 4],
                "replica {r}'s tensor, {threads} threads"
            );
        }
        assert_eq!(
            err,
            EngineError::RemoteRowOutOfRange {
                buffer: "state".into(),
                replica: Some(1),
                row: 5,
                rows: 3,
                program: Some(1),
            }
        );
        // The host's access names the replica too.
        let err = e.read_remote_row_replica::<f32>("state", 1, 3).unwrap_err();
        assert_eq!(
            err.to_string(),
            "remote buffer 'state' of replica 1: row 3 is out of range (it has 3 rows); nothing was read or written"
        );
        // In range on both, both move.
        e.write_tensor_replica("row", 1, &[2i32]).unwrap();
        e.run(1).unwrap();
        assert_eq!(e.read_tensor_replica::<f32>("x", 0).unwrap(), rows[4..8]);
        assert_eq!(e.read_tensor_replica::<f32>("x", 1).unwrap(), rows[8..12]);
    }
}

/// What the compiler refuses, each a typed error naming the buffer and saying why.
#[test]
fn the_compiler_refuses_what_the_chip_cannot_do() {
    use poplar::ValidationError as V;
    let two_chips = Target {
        num_ipus: 2,
        ..Target::custom(2, 64 * 1024)
    };
    let refused = |build: &dyn Fn(&mut Graph) -> Program| -> Vec<V> {
        let mut g = Graph::new(&two_chips);
        let p = build(&mut g);
        match compile(&g, &[p], &CompileOptions::default()) {
            Err(poplar::CompileError::Invalid(v)) => v,
            other => panic!("not refused: {other:?}"),
        }
    };
    let reason = |v: &[V]| match &v[0] {
        V::BadRemoteCopy { buffer, reason } => (buffer.clone(), reason.clone()),
        e => panic!("{e}"),
    };
    // A tensor on chip 1, the buffer on chip 0.
    let v = refused(&|g| {
        let b = g.add_remote_buffer("b", DType::F32, 4, 2).unwrap();
        let x = g.add_variable(DType::F32, &[4], "x");
        g.set_tile_mapping(&x, 3).unwrap();
        Program::copy_to_remote(&x, b, None)
    });
    let (buf, why) = reason(&v);
    assert_eq!(buf, "b");
    assert!(
        why.contains("tile 3 of chip 1") && why.contains("chip 0"),
        "{why}"
    );
    // Another element type, a tensor that is not whole rows, an offset of floats.
    let v = refused(&|g| {
        let b = g.add_remote_buffer("b", DType::I32, 4, 2).unwrap();
        let x = g.add_variable(DType::F32, &[4], "x");
        g.set_tile_mapping(&x, 0).unwrap();
        Program::copy_from_remote(b, &x, None)
    });
    assert!(
        reason(&v).1.contains("holds i32 but the tensor is f32"),
        "{:?}",
        reason(&v)
    );
    let v = refused(&|g| {
        let b = g.add_remote_buffer("b", DType::F32, 4, 2).unwrap();
        let x = g.add_variable(DType::F32, &[6], "x");
        g.set_tile_mapping(&x, 0).unwrap();
        Program::copy_from_remote(b, &x, None)
    });
    assert!(reason(&v).1.contains("6 elements"), "{:?}", reason(&v));
    let v = refused(&|g| {
        let b = g.add_remote_buffer("b", DType::F32, 4, 2).unwrap();
        let x = g.add_variable(DType::F32, &[4], "x");
        let o = g.add_variable(DType::F32, &[1], "o");
        g.set_tile_mapping(&x, 0).unwrap();
        g.set_tile_mapping(&o, 0).unwrap();
        Program::copy_from_remote(b, &x, Some(&o))
    });
    assert!(reason(&v).1.contains("i32 or u32"), "{:?}", reason(&v));
    // One transfer of more than 128 MiB (on a chip with room for it).
    let big = Target::custom(1024, 600 * 1024);
    let mut g = Graph::new(&big);
    let b = g.add_remote_buffer("big", DType::F32, 1 << 25, 2).unwrap();
    let x = g.add_variable(DType::F32, &[2 << 25], "x");
    g.map_linearly(&x, 1 << 16).unwrap();
    let err = compile(
        &g,
        &[Program::copy_to_remote(&x, b, None)],
        &CompileOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("at most 134217728"), "{err}");
    // Buffers beyond the Streaming Memory of their chip, and rows that cannot exist.
    let small = Target {
        streaming_memory_bytes: 1000,
        ..Target::custom(2, 64 * 1024)
    };
    let mut g = Graph::new(&small);
    let e = g.add_remote_buffer("huge", DType::F32, 100, 3).unwrap_err();
    assert!(
        e.to_string().contains("remote buffer 'huge'") && e.to_string().contains("1000 bytes"),
        "{e}"
    );
    assert!(g.add_remote_buffer("none", DType::F32, 4, 0).is_err());
    assert!(g
        .add_remote_buffer_on_chip("far", DType::F32, 4, 1, 2)
        .unwrap_err()
        .to_string()
        .contains("chip 2"));
    g.add_remote_buffer("a", DType::F32, 100, 2).unwrap();
    let e = g.add_remote_buffer("b", DType::F32, 100, 1).unwrap_err();
    assert!(
        e.to_string()
            .contains("with the 800 bytes of chip 0's other remote buffers"),
        "{e}"
    );
    // The executable's own check refuses a file whose buffers overfill a chip.
    let mut exe = compile(&g, &[Program::nop()], &CompileOptions::default()).unwrap();
    let mut more = exe.remote_buffers.values().next().unwrap().clone();
    more.name = "b".into();
    exe.remote_buffers.push(more);
    let err = exe.check().unwrap_err();
    assert!(
        err.to_string().contains("Streaming Memory holds 1000"),
        "{err}"
    );
}

/// The host's mistakes are typed errors too, and a failed run leaves every buffer readable.
#[test]
fn the_host_gets_typed_errors() {
    let mut g = Graph::new(&target());
    g.add_remote_buffer("buf", DType::I32, 3, 2).unwrap();
    let exe = compile(&g, &[Program::nop()], &CompileOptions::default()).unwrap();
    let mut e = engine(&exe, 1);
    assert_eq!(
        e.write_remote_row("nope", 0, &[1i32, 2, 3]).unwrap_err(),
        EngineError::UnknownRemoteBuffer {
            name: "nope".into()
        }
    );
    assert!(matches!(
        e.write_remote_row("buf", 0, &[1f32, 2.0, 3.0]).unwrap_err(),
        EngineError::WrongDType { .. }
    ));
    assert!(matches!(
        e.write_remote_row("buf", 2, &[1i32, 2, 3]).unwrap_err(),
        EngineError::RemoteRowOutOfRange {
            row: 2,
            rows: 2,
            program: None,
            ..
        }
    ));
    assert!(matches!(
        e.write_remote_row("buf", 1, &[1i32, 2]).unwrap_err(),
        EngineError::WrongLength {
            expected: 3,
            got: 2,
            ..
        }
    ));
    assert!(matches!(
        e.write_remote_buffer("buf", &[1i32; 5]).unwrap_err(),
        EngineError::WrongLength {
            expected: 6,
            got: 5,
            ..
        }
    ));
    // Untouched rows read as zeros.
    assert_eq!(e.read_remote_buffer::<i32>("buf").unwrap(), [0; 6]);
    assert_eq!(e.streaming_memory_use().rows_written, 0);
}

/// An executable with remote buffers saves and loads whole, and runs the same.
#[test]
fn executables_with_remote_buffers_save_and_load() {
    poplar_testkit::link();
    let (g, progs) = poplar_testkit::remote::remote_graph();
    let exe = compile(&g, &progs, &CompileOptions::default()).unwrap();
    assert_eq!(exe.remote_buffers.len(), 7);
    let back = poplar::Executable::from_bytes(&exe.to_bytes()).unwrap();
    assert_eq!(back, exe);
    assert_eq!(back.remote_buffers.values().nth(1).unwrap().chip, 1);
}

/// Past the host budget rows go to the spill file; a spill directory that cannot hold it is a
/// typed error naming the buffer, and the rows kept before it are still there.
#[test]
fn rows_past_the_budget_spill_and_a_failing_spill_is_an_error() {
    let mut g = Graph::new(&target());
    let buf = g.add_remote_buffer("rows", DType::U32, 4, 16).unwrap();
    let x = g.add_variable(DType::U32, &[4], "x");
    let row = g.add_variable(DType::I32, &[1], "row");
    g.set_tile_mapping(&x, 1).unwrap();
    g.set_tile_mapping(&row, 0).unwrap();
    g.create_host_read_write("x", &x).unwrap();
    g.create_host_write("row", &row).unwrap();
    let exe = compile(
        &g,
        &[Program::copy_to_remote(&x, buf, Some(&row))],
        &CompileOptions::default(),
    )
    .unwrap();
    let options = |dir: std::path::PathBuf| EngineOptions {
        streaming_memory: poplar::engine::StreamingMemoryBudget {
            host_bytes: 2 * 16, // two rows
            spill_dir: Some(dir),
        },
        ..EngineOptions::with_threads(1)
    };
    let mut e = Engine::new(&exe, options(std::env::temp_dir())).unwrap();
    for r in 0..16u32 {
        e.write_tensor("x", &[r, r + 1, r + 2, r * r]).unwrap();
        e.write_tensor("row", &[r as i32]).unwrap();
        e.run(0).unwrap();
    }
    let u = e.streaming_memory_use();
    assert_eq!(
        (u.resident_bytes, u.spilled_bytes, u.rows_written),
        (32, 14 * 16, 16)
    );
    let want: Vec<u32> = (0..16u32).flat_map(|r| [r, r + 1, r + 2, r * r]).collect();
    assert_eq!(e.read_remote_buffer::<u32>("rows").unwrap(), want);

    let missing = std::env::temp_dir().join(format!("poplar-no-such-dir-{}", std::process::id()));
    let mut e = Engine::new(&exe, options(missing)).unwrap();
    for r in 0..3u32 {
        e.write_tensor("x", &[r; 4]).unwrap();
        e.write_tensor("row", &[r as i32]).unwrap();
        let result = e.run(0);
        if r < 2 {
            result.unwrap();
        } else {
            match result.unwrap_err() {
                EngineError::StreamingMemoryIo { buffer, message } => {
                    assert_eq!(buffer, "rows");
                    assert!(message.contains("poplar-no-such-dir"), "{message}");
                }
                e => panic!("{e}"),
            }
        }
    }
    assert_eq!(e.read_remote_row::<u32>("rows", 1).unwrap(), [1; 4]);
    assert_eq!(e.read_remote_row::<u32>("rows", 2).unwrap(), [0; 4]);
}
