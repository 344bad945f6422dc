//! Overlapped I/O: with I/O tiles reserved on the target, chunk i+1 comes from Streaming
//! Memory to the I/O tiles while the compute tiles work on chunk i. Specification: the same
//! bits as the plain loop, a modelled time that hides the transfers behind the compute, and
//! typed refusals of programs that would let the two share data.

use poplar::profile::{PhaseKind, Profile, ProfileOptions};
use poplar::program::Program;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Target, Tensor};

const CHUNKS: u64 = 8;
const ELEMS: usize = 4096;

fn target() -> Target {
    Target {
        io_tiles: 2,
        ..Target::custom(8, 64 * 1024)
    }
}

struct Loop {
    graph: Graph,
    plain: Program,
    overlapped: Program,
    /// The overlapped loop without its transfers (its result is not the sum).
    compute_only: Program,
}

/// `acc += chunk` for every chunk of a remote buffer, as a plain loop and overlapped.
fn build() -> Loop {
    poplar_testkit::link();
    let mut g = Graph::new(&target());
    let buf = g
        .add_remote_buffer("data", DType::F32, ELEMS as u64, CHUNKS)
        .unwrap();
    let stage = g.add_variable(DType::F32, &[ELEMS], "stage");
    g.map_linearly_over(&stage, ELEMS / 2, 6..8).unwrap();
    let work = g.add_variable(DType::F32, &[ELEMS], "work");
    let acc = g.add_variable(DType::F32, &[ELEMS], "acc");
    for t in [&work, &acc] {
        g.map_linearly_over(t, ELEMS.div_ceil(6), 0..6).unwrap();
    }
    g.create_host_read_write("acc", &acc).unwrap();
    let row_c = g.add_variable(DType::I32, &[1], "row (compute)");
    let row_io = g.add_variable(DType::I32, &[1], "row (io)");
    g.set_tile_mapping(&row_c, 0).unwrap();
    g.set_tile_mapping(&row_io, 6).unwrap();
    let add = g.add_compute_set("acc += work");
    for t in 0..6usize {
        let per = ELEMS.div_ceil(6);
        let r = t * per..((t + 1) * per).min(ELEMS);
        let v = g.add_vertex(add, "test::AddScaled").unwrap();
        g.connect(v, "x", &acc.slice(r.clone()).unwrap()).unwrap();
        g.connect(v, "y", &work.slice(r).unwrap()).unwrap();
        g.set_vertex_state(v, "k", 1.0f32).unwrap();
        g.set_tile_mapping(v, t as u32).unwrap();
    }
    let bump = g.add_compute_set("next row");
    let v = g.add_vertex(bump, "test::BumpRows").unwrap();
    g.connect(v, "rows", &row_c).unwrap();
    g.set_vertex_state(v, "by", 1i32).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    let load = |stage: &Tensor, row: &Tensor| Program::copy_from_remote(buf, stage, Some(row));
    let next = Program::seq(vec![Program::execute(bump), Program::copy(&row_c, &row_io)]);
    let plain = Program::repeat(
        CHUNKS as u32,
        Program::seq(vec![
            load(&stage, &row_io),
            Program::copy(&stage, &work),
            Program::execute(add),
            next.clone(),
        ]),
    );
    let overlapped = |io: Program| {
        Program::seq(vec![
            load(&stage, &row_io),
            next.clone(),
            Program::repeat(
                CHUNKS as u32 - 1,
                Program::seq(vec![
                    Program::copy(&stage, &work),
                    Program::overlap_io(io.clone(), Program::execute(add)),
                    next.clone(),
                ]),
            ),
            Program::copy(&stage, &work),
            Program::execute(add),
        ])
    };
    Loop {
        plain,
        overlapped: overlapped(load(&stage, &row_io)),
        compute_only: overlapped(Program::nop()),
        graph: g,
    }
}

fn chunks() -> Vec<f32> {
    (0..CHUNKS as usize * ELEMS)
        .map(|i| ((i * 7919) % 1000) as f32 * 0.001 + 0.5)
        .collect()
}

/// Runs program `p` of the loop from zeroed rows and accumulator; the result and profile.
fn run(l: &Loop, p: usize, threads: usize) -> (Vec<f32>, Profile) {
    let exe = compile(
        &l.graph,
        &[
            l.plain.clone(),
            l.overlapped.clone(),
            l.compute_only.clone(),
        ],
        &CompileOptions::default(),
    )
    .unwrap();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(threads)).unwrap();
    e.write_remote_buffer("data", &chunks()).unwrap();
    e.enable_profiling(ProfileOptions::default());
    e.run(p).unwrap();
    (e.read_tensor("acc").unwrap(), e.take_profile().unwrap())
}

#[test]
fn overlapped_io_gives_the_same_bits_and_hides_the_transfers() {
    let l = build();
    let data = chunks();
    let mut want = vec![0f32; ELEMS];
    for c in data.chunks(ELEMS) {
        want.iter_mut().zip(c).for_each(|(a, x)| *a += 1.0 * x);
    }
    let (plain, pp) = run(&l, 0, 2);
    let (over, po) = run(&l, 1, 1);
    assert_eq!(plain, want);
    assert_eq!(over, want);
    assert_eq!(run(&l, 1, 2).0, want);

    // One transfer of a 16 KiB row: 1,330 latency + 16,384 / 11.84 bytes per cycle.
    let transfer = pp
        .phases
        .iter()
        .find(|p| p.kind == PhaseKind::Transfer)
        .map(|p| p.cycles / p.executions)
        .unwrap();
    assert_eq!(
        transfer,
        1330 + (16384.0f64 / (15.75e9 / 1.33e9)).ceil() as u64
    );
    // The plain loop waits for all 8; the overlapped one for the first only, the other 7 run
    // behind the compute (which is longer than a transfer here).
    assert_eq!(pp.elapsed.transfer, CHUNKS * transfer);
    assert_eq!(pp.elapsed.transfer_overlapped, 0);
    assert_eq!(po.elapsed.transfer, transfer);
    assert_eq!(po.elapsed.transfer_overlapped, (CHUNKS - 1) * transfer);
    // Hidden means free: the overlapped loop takes exactly as long as the same loop without
    // its transfers (the compute, 8,316 cycles, outlasts a transfer), and less than the plain
    // loop, which waits for each.
    let (_, pc) = run(&l, 2, 1);
    assert_eq!(
        pc.elapsed.transfer + pc.elapsed.transfer_overlapped,
        transfer
    );
    assert_eq!(po.total_cycles(), pc.total_cycles());
    assert!(po.total_cycles() < pp.total_cycles());
    // The summary says so.
    assert!(
        po.text_summary().contains("overlapped with compute"),
        "{}",
        po.text_summary()
    );
}

#[test]
fn overlap_refuses_programs_that_would_share_data() {
    use poplar::ValidationError as V;
    poplar_testkit::link();
    let try_compile = |io_tiles: u32, build: &dyn Fn(&mut Graph) -> Program| {
        let mut g = Graph::new(&Target {
            io_tiles,
            ..Target::custom(8, 64 * 1024)
        });
        let p = build(&mut g);
        compile(&g, &[p], &CompileOptions::default())
    };
    let staged = |g: &mut Graph, tile: u32| {
        let b = g.add_remote_buffer("b", DType::F32, 4, 2).unwrap();
        let s = g.add_variable(DType::F32, &[4], "s");
        g.set_tile_mapping(&s, tile).unwrap();
        (b, s)
    };
    // No I/O tiles on the target.
    let e = try_compile(0, &|g| {
        let (b, s) = staged(g, 6);
        Program::overlap_io(Program::copy_from_remote(b, &s, None), Program::nop())
    })
    .unwrap_err();
    assert!(e.to_string().contains("reserves no I/O tiles"), "{e}");
    // A transfer to a compute tile.
    let e = try_compile(2, &|g| {
        let (b, s) = staged(g, 3);
        Program::overlap_io(Program::copy_from_remote(b, &s, None), Program::nop())
    })
    .unwrap_err();
    assert!(e.to_string().contains("tile 3, not an I/O tile"), "{e}");
    // Compute in the I/O part.
    let e = try_compile(2, &|g| {
        let cs = g.add_compute_set("cs");
        Program::overlap_io(Program::execute(cs), Program::nop())
    })
    .unwrap_err();
    assert!(e.to_string().contains("holds a compute set"), "{e}");
    // The compute part reading what the transfer writes (an exchange from an I/O tile).
    let e = try_compile(2, &|g| {
        let (b, s) = staged(g, 6);
        let x = g.add_variable(DType::F32, &[4], "x");
        g.set_tile_mapping(&x, 0).unwrap();
        Program::overlap_io(
            Program::copy_from_remote(b, &s, None),
            Program::copy(&s, &x),
        )
    })
    .unwrap_err();
    assert!(e.to_string().contains("touches I/O tile 6"), "{e}");
    assert!(matches!(e, poplar::CompileError::Invalid(_)), "{e:?}");
    // A vertex placed on an I/O tile.
    let e = try_compile(2, &|g| {
        let x = g.add_variable(DType::F32, &[4], "x");
        g.set_tile_mapping(&x, 7).unwrap();
        let cs = g.add_compute_set("cs");
        let v = g.add_vertex(cs, "test::Inc").unwrap();
        g.connect(v, "x", &x).unwrap();
        g.set_tile_mapping(v, 7).unwrap();
        Program::execute(cs)
    })
    .unwrap_err();
    match e {
        poplar::CompileError::Invalid(v) => {
            assert!(
                matches!(
                    v[0],
                    V::VertexOnIoTile {
                        tile: 7,
                        io_tiles: 2,
                        ..
                    }
                ),
                "{v:?}"
            )
        }
        e => panic!("{e}"),
    }
}

/// A host stream copy is a transfer: its bytes over the chip's link after the transfer's
/// latency, plus the host round trip when its data was not prefetched (buffering depth 0).
#[test]
fn a_stream_copy_waits_for_the_host_only_when_not_prefetched() {
    let cycles = |depth: Option<u32>| {
        let mut g = Graph::new(&Target::custom(2, 64 * 1024));
        let x = g.add_variable(DType::F32, &[1024], "x");
        g.set_tile_mapping(&x, 1).unwrap();
        let s = g.add_host_to_device_stream("in", DType::F32, 1024).unwrap();
        if let Some(d) = depth {
            g.set_buffering_depth(s, d).unwrap();
        }
        let exe = compile(
            &g,
            &[Program::stream_to_device(s, &x)],
            &CompileOptions::default(),
        )
        .unwrap();
        let mut e = Engine::new(&exe, EngineOptions::with_threads(1)).unwrap();
        e.connect_stream("in", vec![1.5f32; 1024]).unwrap();
        e.enable_profiling(ProfileOptions::default());
        e.run(0).unwrap();
        let p = e.take_profile().unwrap();
        let t = p
            .phases
            .iter()
            .find(|p| p.kind == PhaseKind::Transfer)
            .unwrap();
        assert_eq!((t.name.as_str(), t.bytes), ("in (in)", 4096));
        (t.cycles, p.elapsed.transfer)
    };
    let moved = 1330 + (4096.0f64 / (15.75e9 / 1.33e9)).ceil() as u64;
    assert_eq!(cycles(None), (moved, moved), "prefetched by default");
    assert_eq!(cycles(Some(2)), (moved, moved));
    assert_eq!(cycles(Some(0)), (moved + 13_300, moved + 13_300));
}

/// Each replica's chip streams over its own link: the static estimate of a replicated stream
/// copy is one replica's transfer, not the sum over replicas (the profile's replay agrees).
#[test]
fn replicas_stream_side_by_side() {
    let machine = Target {
        num_ipus: 4,
        ..Target::custom(2, 64 * 1024)
    };
    let mut g = Graph::new_replicated(&machine, 4, 1).unwrap();
    let x = g.add_variable(DType::F32, &[256], "x");
    g.set_tile_mapping(&x, 1).unwrap();
    let s = g.add_host_to_device_stream("in", DType::F32, 256).unwrap();
    let p = Program::seq(vec![
        Program::stream_to_device(s, &x),
        Program::stream_to_device(s, &x),
    ]);
    let exe = compile(&g, &[p], &CompileOptions::default()).unwrap();
    let (flat, _) = exe.expand_replicas();
    let model = poplar::profile::CycleModel::new(&flat);
    let est = poplar::profile::estimate_program(&flat, &model, 0).unwrap();
    let one = 1330 + (1024.0f64 / (15.75e9 / 1.33e9)).ceil() as u64;
    assert_eq!((est.transfer, est.cycles), (2 * one, 2 * one));
    let mut e = Engine::new(&exe, EngineOptions::with_threads(1)).unwrap();
    e.connect_stream("in", vec![0.5f32; 256]).unwrap();
    e.enable_profiling(ProfileOptions::default());
    e.run(0).unwrap();
    assert_eq!(e.take_profile().unwrap().total_cycles(), 2 * one);
}
