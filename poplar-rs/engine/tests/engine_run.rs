//! Engine behaviour on hand-made executables.
//!
//! (About 750 lines. One file because the tests share the hand-made executables of
//! the testkit's builder; each test is one behaviour of the engine.)

use poplar_core::dtype::DType;
use poplar_core::target::Target;
use poplar_engine::{Engine, EngineError, EngineOptions};
use poplar_exe::exe::StreamDir;
use poplar_exe::exe::*;
use poplar_testkit::builder::*;

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn init_blocks_and_host_round_trip() {
    let mut b = Builder::new(2, 64);
    b.init(0, 4, vec![1, 2, 3]);
    b.init_f32(1, 8, &[1.5, -2.0]);
    b.host("t", DType::F32, vec![run(1, 8, 8), run(0, 16, 4)]);
    b.host("u", DType::U32, vec![run(0, 32, 8)]);
    b.exe.host_tensors[1].writable = false;
    let exe = b.build();
    let mut e = Engine::new(&exe, opts(2)).unwrap();
    assert_eq!(
        e.read_memory(0.into(), 0, 8).unwrap(),
        vec![0, 0, 0, 0, 1, 2, 3, 0]
    );
    assert_eq!(e.read_tensor::<f32>("t").unwrap(), vec![1.5, -2.0, 0.0]);
    e.write_tensor("t", &[7.0f32, 8.0, 9.0]).unwrap();
    assert_eq!(e.read_tensor::<f32>("t").unwrap(), vec![7.0, 8.0, 9.0]);
    assert_eq!(f32s(&e.read_memory(0.into(), 16, 4).unwrap()), vec![9.0]);
    assert_eq!(
        f32s(&e.read_memory(1.into(), 8, 8).unwrap()),
        vec![7.0, 8.0]
    );

    // Typed host access errors.
    assert!(matches!(
        e.read_tensor::<f32>("nope"),
        Err(EngineError::UnknownTensor { .. })
    ));
    assert!(matches!(
        e.read_tensor::<i32>("t"),
        Err(EngineError::WrongDType { .. })
    ));
    assert!(matches!(
        e.write_tensor("t", &[1.0f32]),
        Err(EngineError::WrongLength {
            expected: 3,
            got: 1,
            ..
        })
    ));
    assert!(matches!(
        e.write_tensor("u", &[1u32, 2]),
        Err(EngineError::NotWritable { .. })
    ));
    assert!(matches!(
        e.read_memory(0.into(), 60, 8),
        Err(EngineError::MemoryRange { .. })
    ));
    assert!(matches!(
        e.run(3),
        Err(EngineError::NoSuchProgram { index: 3, count: 0 })
    ));
    assert_eq!(e.num_programs(), 0);
    assert_eq!(e.executable(), &without_init_data(&exe));
}

#[test]
fn unreadable_tensor_is_refused() {
    let mut b = Builder::new(1, 64);
    b.host("t", DType::F32, vec![run(0, 0, 8)]);
    b.exe.host_tensors[0].readable = false;
    let e = Engine::new(&b.build(), opts(1)).unwrap();
    assert!(matches!(
        e.read_tensor::<f32>("t"),
        Err(EngineError::NotReadable { .. })
    ));
}

#[test]
fn bool_host_tensor_round_trip() {
    let mut b = Builder::new(1, 64);
    b.host("b", DType::Bool, vec![run(0, 3, 5)]);
    let mut e = Engine::new(&b.build(), opts(1)).unwrap();
    let v = vec![true, false, true, true, false];
    e.write_tensor("b", &v).unwrap();
    assert_eq!(e.read_tensor::<bool>("b").unwrap(), v);
    assert_eq!(e.read_memory(0.into(), 3, 5).unwrap(), vec![1, 0, 1, 1, 0]);
}

#[test]
fn u8_and_i32_host_tensors_round_trip() {
    let mut b = Builder::new(1, 64);
    b.host("bytes", DType::U8, vec![run(0, 1, 3), run(0, 9, 2)]);
    b.host("ints", DType::I32, vec![run(0, 16, 8)]);
    let mut e = Engine::new(&b.build(), opts(1)).unwrap();
    e.write_tensor("bytes", &[1u8, 2, 255, 4, 5]).unwrap();
    e.write_tensor("ints", &[-1i32, i32::MIN]).unwrap();
    assert_eq!(e.read_tensor::<u8>("bytes").unwrap(), vec![1, 2, 255, 4, 5]);
    assert_eq!(e.read_tensor::<i32>("ints").unwrap(), vec![-1, i32::MIN]);
    assert_eq!(
        e.read_memory(0.into(), 0, 12).unwrap(),
        vec![0, 1, 2, 255, 0, 0, 0, 0, 0, 4, 5, 0]
    );
}

#[test]
fn u16_host_tensor_round_trip_is_little_endian() {
    let mut b = Builder::new(1, 64);
    b.host("idx", DType::U16, vec![run(0, 2, 4), run(0, 10, 2)]);
    let mut e = Engine::new(&b.build(), opts(1)).unwrap();
    e.write_tensor("idx", &[1u16, 0xABCD, 65_535]).unwrap();
    assert_eq!(
        e.read_tensor::<u16>("idx").unwrap(),
        vec![1, 0xABCD, 65_535]
    );
    assert_eq!(
        e.read_memory(0.into(), 0, 12).unwrap(),
        vec![0, 0, 1, 0, 0xCD, 0xAB, 0, 0, 0, 0, 0xFF, 0xFF]
    );
    assert!(matches!(
        e.read_tensor::<u32>("idx"),
        Err(EngineError::WrongDType { .. })
    ));
}

#[test]
fn exchange_with_broadcast() {
    let mut b = Builder::new(4, 64);
    b.init(0, 0, (1..=16).collect());
    b.init(2, 32, vec![9; 8]);
    let x = b.exchange(
        "x",
        vec![
            transfer(0, 0, 16, vec![(1, 16), (2, 0), (3, 48)]),
            transfer(2, 32, 8, vec![(0, 40), (2, 56)]),
        ],
    );
    let p = b.program(Step::Exchange(poplar_exe::exe::ExchangePhaseId::from_u32(
        x as u32,
    )));
    let exe = b.build();
    for threads in [1, 2] {
        let mut e = Engine::new(&exe, opts(threads)).unwrap();
        e.run(p).unwrap();
        let src: Vec<u8> = (1..=16).collect();
        assert_eq!(e.read_memory(1.into(), 16, 16).unwrap(), src);
        assert_eq!(e.read_memory(2.into(), 0, 16).unwrap(), src);
        assert_eq!(e.read_memory(3.into(), 48, 16).unwrap(), src);
        assert_eq!(e.read_memory(0.into(), 40, 8).unwrap(), vec![9; 8]);
        assert_eq!(e.read_memory(2.into(), 56, 8).unwrap(), vec![9; 8]);
        assert_eq!(e.read_memory(1.into(), 0, 16).unwrap(), vec![0; 16]);
    }
}

#[test]
fn large_parallel_exchange_is_correct() {
    // Big enough to be split into parallel pieces.
    let tiles = 8u32;
    let mem = 256 * 1024;
    let half = mem / 2;
    let mut b = Builder::with_target(Target::custom(tiles, mem), mem);
    for t in 0..tiles {
        b.init(
            t,
            0,
            (0..half)
                .map(|i| (i as u8).wrapping_mul(7).wrapping_add(t as u8))
                .collect(),
        );
    }
    let x = b.exchange(
        "halo",
        (0..tiles)
            .map(|t| transfer(t, 0, half, vec![((t + 1) % tiles, half)]))
            .collect(),
    );
    let p = b.program(Step::Exchange(poplar_exe::exe::ExchangePhaseId::from_u32(
        x,
    )));
    let exe = b.build();
    let mut e = Engine::new(&exe, opts(2)).unwrap();
    e.run(p).unwrap();
    for t in 0..tiles {
        let src = (t + tiles - 1) % tiles;
        let want: Vec<u8> = (0..half)
            .map(|i| (i as u8).wrapping_mul(7).wrapping_add(src as u8))
            .collect();
        assert!(
            e.read_memory(t.into(), half as usize, half as usize)
                .unwrap()
                == want,
            "tile {t}"
        );
    }
}

#[test]
fn compute_with_gather_copies() {
    // Tile 0: a = [1,2,3,4] scattered as [1,2] at 0 and [3,4] at 24; gathered to 64..80 by
    // pre-copies; Scale writes 80..96 (k = 10 at 96), post-copies scatter out to 32 and 48.
    let mut b = Builder::new(1, 128);
    b.init_f32(0, 0, &[1.0, 2.0]);
    b.init_f32(0, 24, &[3.0, 4.0]);
    b.init_f32(0, 96, &[10.0]);
    let v = b.vertex(
        "test::Scale",
        7,
        vec![loc(64, 4), loc(80, 4), loc(96, 1)],
        vec![],
    );
    let c = b.compute(
        "gather",
        vec![TileCompute {
            tile: 0.into(),
            pre_copies: vec![
                LocalCopy {
                    src: 0,
                    dst: 64,
                    bytes: 8,
                },
                LocalCopy {
                    src: 24,
                    dst: 72,
                    bytes: 8,
                },
            ],
            vertices: vec![v],
            post_copies: vec![
                LocalCopy {
                    src: 80,
                    dst: 32,
                    bytes: 8,
                },
                LocalCopy {
                    src: 88,
                    dst: 48,
                    bytes: 8,
                },
            ],
        }],
    );
    let p = b.program(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(
        c as u32,
    )));
    let mut e = Engine::new(&b.build(), opts(1)).unwrap();
    e.run(p).unwrap();
    assert_eq!(
        f32s(&e.read_memory(0.into(), 32, 8).unwrap()),
        vec![10.0, 20.0]
    );
    assert_eq!(
        f32s(&e.read_memory(0.into(), 48, 8).unwrap()),
        vec![30.0, 40.0]
    );
}

#[test]
fn vector_lists() {
    // ListFill writes three disjoint sub-vectors; ListSum reads them (overlapping reads allowed).
    let mut b = Builder::new(1, 128);
    b.init_f32(0, 100, &[1.0]);
    let fill = b.vertex(
        "test::ListFill",
        0,
        vec![loc(0, 3), loc(100, 1)],
        vec![loc(0, 2), loc(16, 1), loc(40, 3)],
    );
    let sum = b.vertex(
        "test::ListSum",
        1,
        vec![loc(1, 3), loc(120, 1)],
        vec![loc(96, 0), loc(0, 2), loc(16, 1), loc(40, 3), loc(40, 3)],
    );
    let c = b.compute(
        "lists",
        vec![TileCompute {
            tile: 0.into(),
            pre_copies: vec![],
            vertices: vec![fill, sum],
            post_copies: vec![],
        }],
    );
    let p = b.program(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(
        c as u32,
    )));
    let mut e = Engine::new(&b.build(), opts(1)).unwrap();
    e.run(p).unwrap();
    assert_eq!(
        f32s(&e.read_memory(0.into(), 0, 8).unwrap()),
        vec![1.0, 1.0]
    );
    assert_eq!(f32s(&e.read_memory(0.into(), 16, 4).unwrap()), vec![2.0]);
    assert_eq!(
        f32s(&e.read_memory(0.into(), 40, 12).unwrap()),
        vec![3.0; 3]
    );
    // Sum list entries 1..4: [1,1] + [2] + [3,3,3] = 13
    assert_eq!(f32s(&e.read_memory(0.into(), 120, 4).unwrap()), vec![13.0]);
}

#[test]
fn multi_worker_runs_each_worker_once_in_order() {
    let mut t = Target::custom(2, 1024);
    t.workers_per_tile = 4;
    let mut b = Builder::with_target(t, 64);
    let v0 = b.vertex("test::Workers", 0, vec![loc(0, 4), loc(16, 1)], vec![]);
    let v1 = b.vertex("test::Workers", 1, vec![loc(0, 4), loc(16, 1)], vec![]);
    let c = b.compute_simple("mw", vec![(0, v0), (1, v1)]);
    let p = b.program(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(
        c as u32,
    )));
    let mut e = Engine::new(&b.build(), opts(2)).unwrap();
    e.run(p).unwrap();
    for tile in 0..2 {
        assert_eq!(
            u32s(&e.read_memory(tile.into(), 0, 20).unwrap()),
            vec![1, 102, 203, 304, 4]
        );
    }
}

/// One tile: counter c (u32) at 0, countdown n (i32) at 4, flag (bool) at 8, switch control
/// (i32) at 12, second counter at 16, third at 20.
fn control_exe() -> (Executable, [usize; 5]) {
    let mut b = Builder::new(1, 64);
    let inc = b.vertex("test::Incr", 0, vec![loc(0, 1)], vec![]);
    let c_inc = b.compute_simple("inc", vec![(0, inc)]);
    let inc2 = b.vertex("test::Incr", 1, vec![loc(16, 1)], vec![]);
    let c_inc2 = b.compute_simple("inc2", vec![(0, inc2)]);
    let inc3 = b.vertex("test::Incr", 2, vec![loc(20, 1)], vec![]);
    let c_inc3 = b.compute_simple("inc3", vec![(0, inc3)]);
    let cd = b.vertex("test::CountDown", 3, vec![loc(4, 1), loc(8, 1)], vec![]);
    let c_cd = b.compute_simple("countdown", vec![(0, cd)]);
    b.host("c", DType::U32, vec![run(0, 0, 4)]);
    b.host("n", DType::I32, vec![run(0, 4, 4)]);
    b.host("ctl", DType::I32, vec![run(0, 12, 4)]);
    b.host("c2", DType::U32, vec![run(0, 16, 4)]);
    b.host("c3", DType::U32, vec![run(0, 20, 4)]);
    let f = b.function(Step::Label {
        name: "f".into(),
        body: Box::new(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(
            c_inc2 as u32,
        ))),
    });
    let repeat = b.program(Step::Repeat {
        count: 7,
        body: Box::new(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(
            c_inc as u32,
        ))),
    });
    // while: cond = countdown, body = inc
    let whilep = b.program(Step::While {
        cond: Box::new(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(
            c_cd as u32,
        ))),
        predicate: scalar(0, 8, DType::Bool),
        body: Box::new(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(
            c_inc as u32,
        ))),
    });
    let ifp = b.program(Step::If {
        predicate: scalar(0, 4, DType::I32),
        then: Box::new(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(
            c_inc as u32,
        ))),
        else_: Box::new(Step::Call(poplar_exe::exe::FunctionId::from_u32(f as u32))),
    });
    let switchp = b.program(Step::Switch {
        control: scalar(0, 12, DType::I32),
        cases: vec![
            (
                -1,
                Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(c_inc as u32)),
            ),
            (
                5,
                Step::Call(poplar_exe::exe::FunctionId::from_u32(f as u32)),
            ),
        ],
        default: Box::new(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(
            c_inc3 as u32,
        ))),
    });
    let callp = b.program(Step::Seq(vec![
        Step::Call(poplar_exe::exe::FunctionId::from_u32(f as u32)),
        Step::Call(poplar_exe::exe::FunctionId::from_u32(f as u32)),
    ]));
    (b.build(), [repeat, whilep, ifp, switchp, callp])
}

#[test]
fn control_flow() {
    let (exe, [repeat, whilep, ifp, switchp, callp]) = control_exe();
    let mut e = Engine::new(&exe, opts(2)).unwrap();
    let get = |e: &Engine, n: &str| e.read_tensor::<u32>(n).unwrap()[0];

    e.run(repeat).unwrap();
    assert_eq!(get(&e, "c"), 7);

    // While: n = 4 -> cond runs 4 times (n 3,2,1,0), body 3 times.
    e.write_tensor("c", &[0u32]).unwrap();
    e.write_tensor("n", &[4i32]).unwrap();
    e.run(whilep).unwrap();
    assert_eq!(get(&e, "c"), 3);
    assert_eq!(e.read_tensor::<i32>("n").unwrap(), vec![0]);
    // While whose predicate is false right away: body never runs.
    e.write_tensor("n", &[1i32]).unwrap();
    e.run(whilep).unwrap();
    assert_eq!(get(&e, "c"), 3);

    // If on an i32: non-zero (negative too) is true.
    e.write_tensor("n", &[-3i32]).unwrap();
    e.run(ifp).unwrap();
    assert_eq!((get(&e, "c"), get(&e, "c2")), (4, 0));
    e.write_tensor("n", &[0i32]).unwrap();
    e.run(ifp).unwrap();
    assert_eq!((get(&e, "c"), get(&e, "c2")), (4, 1));

    // Switch: -1 -> inc, 5 -> call f, other -> inc3.
    for (ctl, want) in [
        (-1, (5, 1, 0)),
        (5, (5, 2, 0)),
        (6, (5, 2, 1)),
        (0, (5, 2, 2)),
    ] {
        e.write_tensor("ctl", &[ctl]).unwrap();
        e.run(switchp).unwrap();
        assert_eq!(
            (get(&e, "c"), get(&e, "c2"), get(&e, "c3")),
            want,
            "ctl {ctl}"
        );
    }

    e.run(callp).unwrap();
    assert_eq!(get(&e, "c2"), 4);
}

#[test]
fn switch_on_u32_and_bool() {
    let mut b = Builder::new(1, 64);
    let inc = b.vertex("test::Incr", 0, vec![loc(0, 1)], vec![]);
    let c_inc = b.compute_simple("inc", vec![(0, inc)]);
    b.host("c", DType::U32, vec![run(0, 0, 4)]);
    b.host("u", DType::U32, vec![run(0, 4, 4)]);
    b.host("b", DType::Bool, vec![run(0, 8, 1)]);
    let pu = b.program(Step::Switch {
        control: scalar(0, 4, DType::U32),
        cases: vec![(
            4_000_000_000,
            Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(c_inc as u32)),
        )],
        default: Box::new(Step::Seq(vec![])),
    });
    let pb = b.program(Step::Switch {
        control: scalar(0, 8, DType::Bool),
        cases: vec![(
            1,
            Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(c_inc as u32)),
        )],
        default: Box::new(Step::Seq(vec![])),
    });
    let mut e = Engine::new(&b.build(), opts(1)).unwrap();
    e.write_tensor("u", &[4_000_000_000u32]).unwrap();
    e.run(pu).unwrap();
    assert_eq!(e.read_tensor::<u32>("c").unwrap(), vec![1]);
    e.run(pb).unwrap();
    assert_eq!(e.read_tensor::<u32>("c").unwrap(), vec![1]);
    e.write_tensor("b", &[true]).unwrap();
    e.run(pb).unwrap();
    assert_eq!(e.read_tensor::<u32>("c").unwrap(), vec![2]);
}

#[test]
fn streams_wrap_and_append() {
    let mut b = Builder::new(2, 64);
    let sin = b.stream("in", DType::F32, 3, StreamDir::HostToDevice);
    let sout = b.stream("out", DType::F32, 3, StreamDir::DeviceToHost);
    // Each copy lands in tile 0 [0..8) and tile 1 [0..4).
    let runs = vec![run(0, 0, 8), run(1, 0, 4)];
    let p = b.program(Step::Seq(vec![
        Step::StreamIn {
            stream: sin,
            runs: runs.clone(),
        },
        Step::StreamOut { stream: sout, runs },
    ]));
    let mut e = Engine::new(&b.build(), opts(2)).unwrap();
    assert!(matches!(
        e.run(p),
        Err(EngineError::StreamNotConnected { .. })
    ));
    assert!(matches!(
        e.connect_stream("out", vec![1.0f32]),
        Err(EngineError::WrongStreamDirection { .. })
    ));
    assert!(matches!(
        e.connect_stream("in", vec![1i32]),
        Err(EngineError::WrongDType { .. })
    ));
    assert!(matches!(
        e.connect_stream("zz", vec![1.0f32]),
        Err(EngineError::UnknownStream { .. })
    ));
    e.connect_stream("in", vec![1.0f32, 2.0, 3.0, 4.0, 5.0])
        .unwrap();
    for _ in 0..4 {
        e.run(p).unwrap();
    }
    // 12 elements from a circular buffer of 5.
    let want: Vec<f32> = (0..12).map(|i| (i % 5 + 1) as f32).collect();
    assert_eq!(e.stream_output::<f32>("out").unwrap(), want);
    assert_eq!(e.take_stream_output::<f32>("out").unwrap(), want);
    assert!(e.stream_output::<f32>("out").unwrap().is_empty());
    assert!(matches!(
        e.stream_output::<f32>("in"),
        Err(EngineError::WrongStreamDirection { .. })
    ));
    // Reconnecting restarts at the beginning of the new buffer.
    e.connect_stream("in", vec![9.0f32, 8.0]).unwrap();
    e.run(p).unwrap();
    assert_eq!(
        e.take_stream_output::<f32>("out").unwrap(),
        vec![9.0, 8.0, 9.0]
    );
    e.connect_stream::<f32>("in", vec![]).unwrap();
    assert!(matches!(
        e.run(p),
        Err(EngineError::StreamNotConnected { .. })
    ));
}

#[test]
fn non_bool_bytes_are_normalized_before_a_bool_field_is_read() {
    let mut b = Builder::new(1, 64);
    b.init(0, 0, vec![0, 1, 2, 255]);
    let v = b.vertex("test::BoolToU32", 0, vec![loc(0, 4), loc(16, 4)], vec![]);
    b.compute_simple("b", vec![(0, v)]);
    b.host("out", DType::U32, vec![run(0, 16, 16)]);
    let p = b.program(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(0)));
    let mut e = Engine::new(&b.build(), opts(1)).unwrap();
    e.run(p).unwrap();
    assert_eq!(e.read_tensor::<u32>("out").unwrap(), vec![0, 1, 1, 1]);
}

#[test]
fn results_are_identical_for_any_thread_count() {
    identical_for_any_thread_count(sample_exe());
}

/// The same with every vertex estimated heavy, so that compute phases are cut into many tasks
/// and prefetch the next tile's fields (the engine's look-ahead for heavy phases).
#[test]
fn results_are_identical_for_any_thread_count_in_heavy_phases() {
    identical_for_any_thread_count(heavy(sample_exe()));
}

/// `exe` with every vertex estimated at a million cycles: its compute phases are heavy.
fn heavy(mut exe: Executable) -> Executable {
    for v in exe
        .computes
        .values_mut()
        .flat_map(|c| c.tiles.iter_mut())
        .flat_map(|t| t.vertices.iter_mut())
    {
        v.cycles = 1_000_000;
    }
    exe
}

/// Progress hints (`Worker::progress`, which drives the look-ahead of heavy phases) change no
/// result: the sample with its scale codelet swapped for one that reports progress, in heavy
/// phases, ends in the same memory as the plain one, for any thread count.
#[test]
fn progress_hints_change_no_result() {
    let plain = heavy(sample_exe());
    let mut hinted = plain.clone();
    let (scale, _) = hinted
        .codelets
        .iter()
        .find(|(_, c)| c.name == "test::Scale")
        .unwrap();
    hinted.codelets[scale] = cref("test::ScaleProgress");
    let expected = memory_after_runs(&plain, 1, 1);
    for threads in [1, 2, 3] {
        assert_eq!(
            memory_after_runs(&hinted, threads, 1),
            expected,
            "{threads} threads"
        );
    }
}

/// Every tile's memory after running program 0 `runs` times on `threads` threads.
fn memory_after_runs(exe: &Executable, threads: usize, runs: usize) -> Vec<Vec<u8>> {
    let mut e = Engine::new(exe, opts(threads)).unwrap();
    for _ in 0..runs {
        e.run(0).unwrap();
    }
    (0..exe.tiles.len() as u32)
        .map(|t| {
            e.read_memory(t.into(), 0, exe.tiles[t as usize].memory_bytes as usize)
                .unwrap()
        })
        .collect()
}

fn identical_for_any_thread_count(exe: Executable) {
    let one = memory_after_runs(&exe, 1, 2);
    assert_eq!(one, memory_after_runs(&exe, 2, 2));
    assert_eq!(one, memory_after_runs(&exe, 3, 2));
    // And the run did something.
    assert_ne!(
        one[3][0..256],
        Engine::new(&exe, opts(1))
            .unwrap()
            .read_memory(3.into(), 0, 256)
            .unwrap()[..]
    );
}

#[test]
fn new_refuses_tiles_over_budget() {
    let mut b = Builder::with_target(Target::custom(3, 1024), 512);
    b.exe.tiles[2].memory_bytes = 2048;
    assert_eq!(
        Engine::new(&b.build(), opts(1)).unwrap_err(),
        EngineError::TileOutOfMemory {
            tile: 2.into(),
            bytes: 2048,
            budget: 1024
        }
    );
}

#[test]
fn new_refuses_unknown_or_changed_codelets() {
    let mut b = Builder::new(1, 64);
    let v = b.vertex("test::Incr", 0, vec![loc(0, 1)], vec![]);
    b.compute_simple("c", vec![(0, v)]);
    let good = b.build();
    Engine::new(&good, opts(1)).unwrap();

    let mut bad = good.clone();
    bad.codelets[poplar_exe::exe::CodeletId::from_u32(0)].name = "test::NotThere".into();
    assert!(matches!(
        Engine::new(&bad, opts(1)),
        Err(EngineError::Executable(CheckError::UnregisteredCodelet { name })) if name == "test::NotThere"
    ));
    let mut bad = good.clone();
    bad.codelets[poplar_exe::exe::CodeletId::from_u32(0)].signature = "c:InOut:Scalar:i32;".into();
    assert!(matches!(
        Engine::new(&bad, opts(1)),
        Err(EngineError::Executable(CheckError::CodeletSignature { .. }))
    ));
    let mut bad = good.clone();
    bad.codelets[poplar_exe::exe::CodeletId::from_u32(0)].fields[0].dtype = DType::I32;
    assert!(matches!(
        Engine::new(&bad, opts(1)),
        Err(EngineError::Executable(CheckError::CodeletLayout { .. }))
    ));
    let mut bad = good;
    bad.tiles.pop();
    assert!(matches!(
        Engine::new(&bad, opts(1)),
        Err(EngineError::Executable(CheckError::TileCount { .. }))
    ));
}

#[test]
fn default_options_use_all_cores() {
    let e = Engine::new(&sample_exe(), EngineOptions::default()).unwrap();
    assert_eq!(
        e.threads(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
}

#[test]
fn engine_is_send_and_sync_and_can_own_its_executable() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Engine>();
    let exe = sample_exe();
    let mut owned = Engine::from_executable(exe.clone(), opts(2)).unwrap();
    let mut copied = Engine::new(&exe, opts(2)).unwrap();
    // Runs on another thread than the one that built it.
    let owned = std::thread::spawn(move || {
        owned.run(0).unwrap();
        owned
    })
    .join()
    .unwrap();
    copied.run(0).unwrap();
    assert_eq!(
        owned.read_tensor::<f32>("all").unwrap(),
        copied.read_tensor::<f32>("all").unwrap()
    );
    // The engines keep the executable, but not its initial data: tile memory holds them, and
    // the engine built from a reference shared the caller's bytes and let go of them.
    assert_eq!(owned.executable(), &without_init_data(&exe));
    assert_eq!(copied.executable(), &without_init_data(&exe));
    assert!(exe
        .tiles
        .iter()
        .flat_map(|t| &t.init)
        .all(|b| std::sync::Arc::strong_count(&b.data) == 1));
    assert!(exe
        .tiles
        .iter()
        .flat_map(|t| &t.init)
        .any(|b| !b.data.is_empty()));
    assert!(owned
        .executable()
        .tiles
        .iter()
        .flat_map(|t| &t.init)
        .all(|b| b.data.is_empty() && b.len > 0 || b.len == 0));
}

#[test]
fn read_tensor_into_fills_the_callers_buffer() {
    let exe = sample_exe();
    let mut e = Engine::new(&exe, opts(2)).unwrap();
    e.run(0).unwrap();
    let want = e.read_tensor::<f32>("all").unwrap();
    let mut buf = vec![f32::NAN; want.len()];
    e.read_tensor_into("all", &mut buf).unwrap();
    assert_eq!(buf, want);
    let mut short = vec![0f32; want.len() - 1];
    assert!(matches!(
        e.read_tensor_into("all", &mut short),
        Err(EngineError::WrongLength { expected, got, .. }) if expected == want.len() && got == want.len() - 1
    ));
    let mut wrong = vec![0u32; want.len()];
    assert!(matches!(
        e.read_tensor_into("all", &mut wrong),
        Err(EngineError::WrongDType { .. })
    ));
}

#[test]
fn tensor_bytes_read_and_write_are_the_typed_ones_as_bytes() {
    let mut b = Builder::new(2, 64);
    b.init_f32(1, 8, &[1.5, -2.0]);
    b.host("t", DType::F32, vec![run(1, 8, 8), run(0, 16, 4)]);
    let exe = b.build();
    let mut e = Engine::new(&exe, opts(2)).unwrap();
    // Appended after what the buffer holds, in the tensor's order (across tiles).
    let mut buf = vec![7u8, 8];
    assert_eq!(e.read_tensor_bytes::<f32>("t", &mut buf).unwrap(), 12);
    assert_eq!(&buf[..2], &[7, 8]);
    assert_eq!(f32s(&buf[2..]), vec![1.5, -2.0, 0.0]);
    let bytes: Vec<u8> = [7.0f32, 8.0, 9.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    e.write_tensor_bytes::<f32>("t", &bytes).unwrap();
    assert_eq!(e.read_tensor::<f32>("t").unwrap(), vec![7.0, 8.0, 9.0]);
    assert_eq!(f32s(&e.read_memory(0.into(), 16, 4).unwrap()), vec![9.0]);
    // Typed errors, as the typed reads' and writes'.
    assert!(matches!(
        e.read_tensor_bytes::<u32>("t", &mut buf),
        Err(EngineError::WrongDType { .. })
    ));
    assert!(matches!(
        e.read_tensor_bytes::<f32>("nope", &mut buf),
        Err(EngineError::UnknownTensor { .. })
    ));
    assert!(matches!(
        e.write_tensor_bytes::<f32>("t", &bytes[..8]),
        Err(EngineError::WrongLength {
            expected: 3,
            got: 2,
            ..
        })
    ));
    assert_eq!(buf.len(), 14);
}
