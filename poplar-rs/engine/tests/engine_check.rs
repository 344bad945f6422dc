//! `Executable::check` rejects every kind of malformed executable, naming the culprit.
//!
//! (About 800 lines. One file because every test breaks one property of the same base
//! executable and reads as one list: the specification of `Executable::check`.)

use poplar_core::dtype::DType;
use poplar_exe::exe::CheckError as E;
use poplar_exe::exe::StreamDir;
use poplar_exe::exe::*;
use poplar_testkit::builder::*;

/// A valid base: 4 tiles of 256 bytes, one Scale vertex (id 7) on tile 1 and a ListSum (id 8)
/// on tile 2, an exchange, a function, a stream pair and a host tensor.
fn base() -> Executable {
    let mut b = Builder::new(4, 256);
    b.init_f32(1, 64, &[2.0]);
    let scale = b.vertex(
        "test::Scale",
        7,
        vec![loc(0, 4), loc(16, 4), loc(64, 1)],
        vec![],
    );
    let lsum = b.vertex(
        "test::ListSum",
        8,
        vec![loc(0, 2), loc(100, 1)],
        vec![loc(0, 4), loc(8, 4)],
    );
    b.compute(
        "cs",
        vec![
            TileCompute {
                tile: 1.into(),
                pre_copies: vec![LocalCopy {
                    src: 128,
                    dst: 0,
                    bytes: 16,
                }],
                vertices: vec![scale],
                post_copies: vec![],
            },
            TileCompute {
                tile: 2.into(),
                pre_copies: vec![],
                vertices: vec![lsum],
                post_copies: vec![],
            },
        ],
    );
    b.exchange(
        "x",
        vec![
            transfer(0, 0, 16, vec![(1, 0), (2, 32)]),
            transfer(3, 0, 8, vec![(0, 16)]),
        ],
    );
    let f = b.function(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(
        0_u32,
    )));
    b.stream("in", DType::F32, 4, StreamDir::HostToDevice);
    b.stream("out", DType::F32, 4, StreamDir::DeviceToHost);
    b.host("h", DType::F32, vec![run(0, 0, 8), run(3, 8, 8)]);
    b.program(Step::Seq(vec![
        Step::StreamIn {
            stream: 0,
            runs: vec![run(0, 0, 16)],
        },
        Step::Exchange(poplar_exe::exe::ExchangePhaseId::from_u32(0_u32)),
        Step::Call(poplar_exe::exe::FunctionId::from_u32(f)),
        Step::If {
            predicate: scalar(2, 100, DType::I32),
            then: Box::new(Step::Seq(vec![])),
            else_: Box::new(Step::Seq(vec![])),
        },
        Step::StreamOut {
            stream: 1,
            runs: vec![run(1, 16, 16)],
        },
    ]));
    b.build()
}

fn err(f: impl FnOnce(&mut Executable)) -> E {
    let mut e = base();
    f(&mut e);
    e.check().expect_err("check accepted a bad executable")
}

fn list_vertex(e: &mut Executable) -> &mut VertexInst {
    &mut e.computes[poplar_exe::exe::ComputePhaseId::from_u32(0_u32)].tiles[1].vertices[0]
}

fn prog(e: &mut Executable) -> &mut Vec<Step> {
    match &mut e.programs[0] {
        Step::Seq(v) => v,
        _ => unreachable!(),
    }
}

fn scale_vertex(e: &mut Executable) -> &mut VertexInst {
    &mut e.computes[poplar_exe::exe::ComputePhaseId::from_u32(0_u32)].tiles[0].vertices[0]
}

#[test]
fn base_is_valid() {
    base().check().unwrap();
    sample_exe().check().unwrap();
}

#[test]
fn target_and_tiles() {
    assert!(matches!(
        err(|e| e.target.workers_per_tile = 0),
        E::BadTarget(_)
    ));
    assert!(matches!(
        err(|e| {
            e.target.num_ipus = 1 << 20;
            e.target.tiles_per_ipu = 1 << 20;
        }),
        E::BadTarget(_)
    ));
    assert_eq!(
        err(|e| {
            e.tiles.pop();
        }),
        E::TileCount {
            expected: 4,
            found: 3
        }
    );
    assert_eq!(
        err(|e| e.tiles[3].init.push(init(250, vec![0; 8]))),
        E::InitOutOfBounds {
            tile: 3.into(),
            block: 0,
            offset: 250,
            len: 8,
            memory_bytes: 256
        }
    );
    assert_eq!(
        err(|e| e.tiles[1].init[0].len = 5),
        E::InitLength {
            tile: 1.into(),
            block: 0,
            len: 5,
            data_len: 4
        }
    );
    // u32 overflow of offset + len is not a way around the bound.
    assert!(matches!(
        err(|e| e.tiles[0].init.push(InitBlock {
            offset: u32::MAX,
            len: 2,
            data: vec![0, 0].into()
        })),
        E::InitOutOfBounds { .. }
    ));
}

/// Every check of a compute phase, one broken executable and its error each: a list that reads
/// as the specification of `check_computes`, so it stays one function (~120 lines).
#[test]
fn compute_phases() {
    assert!(matches!(
            err(|e| e.computes[poplar_exe::exe::ComputePhaseId::from_u32(0_u32)].tiles[0].tile = 9.into()),
            E::TileOutOfRange {
                tile,
                num_tiles: 4,
                ..
            } if tile == 9
    ));
    assert_eq!(
        err(
            |e| e.computes[poplar_exe::exe::ComputePhaseId::from_u32(0_u32)].tiles[1].tile =
                1.into()
        ),
        E::ComputeTileOrder {
            compute_phase: 0,
            tile: 1.into()
        }
    );
    assert_eq!(
        err(
            |e| e.computes[poplar_exe::exe::ComputePhaseId::from_u32(0_u32)]
                .tiles
                .swap(0, 1)
        ),
        E::ComputeTileOrder {
            compute_phase: 0,
            tile: 1.into()
        }
    );
    assert!(matches!(
            err(
                |e| e.computes[poplar_exe::exe::ComputePhaseId::from_u32(0_u32)].tiles[0].pre_copies[0]
                    .src = 250
            ),
            E::CopyOutOfBounds {
                compute_phase: 0,
                tile,
                which: "pre",
                index: 0,
                ..
            } if tile == 1
    ));
    assert!(matches!(
        err(
            |e| e.computes[poplar_exe::exe::ComputePhaseId::from_u32(0_u32)].tiles[0]
                .post_copies
                .push(LocalCopy {
                    src: 0,
                    dst: 255,
                    bytes: 2
                })
        ),
        E::CopyOutOfBounds { which: "post", .. }
    ));
    assert_eq!(
        err(|e| scale_vertex(e).codelet = poplar_exe::exe::CodeletId::from_u32(5)),
        E::NoSuchCodelet {
            compute_phase: 0,
            tile: 1.into(),
            vertex: 7,
            codelet: 5,
            count: 2
        }
    );
    assert!(matches!(
        err(|e| {
            scale_vertex(e).fields.pop();
        }),
        E::FieldCount {
            vertex: 7,
            expected: 3,
            found: 2,
            ..
        }
    ));
    assert_eq!(
        err(|e| scale_vertex(e).fields[2].len = 2),
        E::ScalarLen {
            compute_phase: 0,
            tile: 1.into(),
            vertex: 7,
            field: 2,
            len: 2
        }
    );
    assert!(matches!(
        err(|e| scale_vertex(e).fields[1] = loc(200, 20)),
        E::FieldOutOfBounds {
            vertex: 7,
            field: 1,
            offset: 200,
            bytes: 80,
            memory_bytes: 256,
            ..
        }
    ));
    assert!(matches!(
        err(|e| scale_vertex(e).fields[1] = loc(u32::MAX - 3, 1)),
        E::FieldOutOfBounds { field: 1, .. }
    ));
    assert!(matches!(
        err(|e| scale_vertex(e).fields[1] = loc(8, u32::MAX)),
        E::FieldOutOfBounds { field: 1, .. }
    ));
    assert_eq!(
        err(|e| scale_vertex(e).fields[1].offset = 18),
        E::FieldMisaligned {
            compute_phase: 0,
            tile: 1.into(),
            vertex: 7,
            field: 1,
            offset: 18,
            align: 4
        }
    );
    // Empty vectors must still be aligned (a slice pointer must be).
    assert!(matches!(
        err(|e| scale_vertex(e).fields[1] = loc(2, 0)),
        E::FieldMisaligned { .. }
    ));
    // An empty vector at the very end of memory is fine.
    let mut ok = base();
    scale_vertex(&mut ok).fields[1] = loc(256, 0);
    ok.check().unwrap();
}

#[test]
fn lists() {
    assert_eq!(
        err(|e| list_vertex(e).fields[0] = loc(1, 2)),
        E::ListOutOfRange {
            compute_phase: 0,
            tile: 2.into(),
            vertex: 8,
            field: 0,
            start: 1,
            len: 2,
            lists: 2
        }
    );
    assert!(matches!(
        err(|e| list_vertex(e).fields[0] = loc(u32::MAX, 2)),
        E::ListOutOfRange { .. }
    ));
    assert!(matches!(
        err(|e| list_vertex(e).lists[1] = loc(240, 8)),
        E::FieldOutOfBounds {
            vertex: 8,
            field: 0,
            offset: 240,
            ..
        }
    ));
    assert!(matches!(
        err(|e| list_vertex(e).lists[1] = loc(6, 1)),
        E::FieldMisaligned {
            vertex: 8,
            field: 0,
            ..
        }
    ));
    // Written output overlapping an input sub-vector.
    assert_eq!(
        err(|e| list_vertex(e).fields[1] = loc(12, 1)),
        E::AliasedField {
            compute_phase: 0,
            tile: 2.into(),
            vertex: 8,
            field: 1,
            other: 0
        }
    );
    // Input sub-vectors may overlap each other.
    let mut ok = base();
    list_vertex(&mut ok).lists[1] = loc(4, 4);
    ok.check().unwrap();
}

#[test]
fn written_list_sub_vectors_must_be_disjoint() {
    let mut b = Builder::new(1, 128);
    let v = b.vertex(
        "test::ListFill",
        3,
        vec![loc(0, 2), loc(100, 1)],
        vec![loc(0, 4), loc(16, 4)],
    );
    b.compute_simple("fill", vec![(0, v)]);
    let good = b.build();
    good.check().unwrap();
    let mut bad = good.clone();
    bad.computes[poplar_exe::exe::ComputePhaseId::from_u32(0_u32)].tiles[0].vertices[0].lists[1] =
        loc(12, 4);
    assert_eq!(
        bad.check().unwrap_err(),
        E::AliasedField {
            compute_phase: 0,
            tile: 0.into(),
            vertex: 3,
            field: 0,
            other: 0
        }
    );
    // Written list vs the state field.
    let mut bad = good;
    bad.computes[poplar_exe::exe::ComputePhaseId::from_u32(0_u32)].tiles[0].vertices[0].lists[1] =
        loc(96, 2);
    assert!(matches!(
        bad.check().unwrap_err(),
        E::AliasedField {
            field: 0,
            other: 1,
            ..
        }
    ));
}

#[test]
fn aliased_vertex_fields() {
    // Output overlaps input.
    assert_eq!(
        err(|e| scale_vertex(e).fields[1] = loc(12, 4)),
        E::AliasedField {
            compute_phase: 0,
            tile: 1.into(),
            vertex: 7,
            field: 1,
            other: 0
        }
    );
    // Output overlaps the state scalar (found from the other side of the sweep).
    assert!(matches!(
        err(|e| scale_vertex(e).fields[1] = loc(52, 4)),
        E::AliasedField {
            field: 1,
            other: 2,
            ..
        }
    ));
    // Input equal to the state is fine (both read-only).
    let mut ok = base();
    scale_vertex(&mut ok).fields[0] = loc(64, 1);
    ok.check().unwrap();
    // Empty written field overlapping nothing at the same offset is fine.
    let mut ok = base();
    scale_vertex(&mut ok).fields[1] = loc(0, 0);
    ok.check().unwrap();
}

#[test]
fn exchange_phases() {
    assert!(matches!(
            err(
                |e| e.exchanges[poplar_exe::exe::ExchangePhaseId::from_u32(0_u32)].transfers[0].dsts[1].0 =
                    4.into()
            ),
            E::TileOutOfRange { tile, .. } if tile == 4
    ));
    assert!(matches!(
            err(
                |e| e.exchanges[poplar_exe::exe::ExchangePhaseId::from_u32(0_u32)].transfers[1].src_tile =
                    77.into()
            ),
            E::TileOutOfRange { tile, .. } if tile == 77
    ));
    assert_eq!(
        err(
            |e| e.exchanges[poplar_exe::exe::ExchangePhaseId::from_u32(0_u32)].transfers[0].dsts
                [1]
            .1 = 248
        ),
        E::TransferOutOfBounds {
            exchange_phase: 0,
            transfer: 0,
            tile: 2.into(),
            offset: 248,
            bytes: 16,
            memory_bytes: 256
        }
    );
    assert!(matches!(
            err(
                |e| e.exchanges[poplar_exe::exe::ExchangePhaseId::from_u32(0_u32)].transfers[0]
                    .src_offset = u32::MAX
            ),
            E::TransferOutOfBounds { tile, .. } if tile == 0
    ));
    // Destination on the source range of the same tile.
    assert_eq!(
        err(
            |e| e.exchanges[poplar_exe::exe::ExchangePhaseId::from_u32(0_u32)].transfers[1].dsts
                [0] = (0.into(), 8)
        ),
        E::ExchangeOverlap {
            exchange_phase: 0,
            tile: 0.into(),
            transfer: 1,
            other: 0,
            what: "the source"
        }
    );
    // Two destinations overlap.
    assert_eq!(
        err(
            |e| e.exchanges[poplar_exe::exe::ExchangePhaseId::from_u32(0_u32)].transfers[1].dsts
                [0] = (2.into(), 40)
        ),
        E::ExchangeOverlap {
            exchange_phase: 0,
            tile: 2.into(),
            transfer: 0,
            other: 1,
            what: "a destination"
        }
    );
    // A broadcast to the same place twice.
    assert!(matches!(
            err(
                |e| e.exchanges[poplar_exe::exe::ExchangePhaseId::from_u32(0_u32)].transfers[0]
                    .dsts
                    .push((1.into(), 0))
            ),
            E::ExchangeOverlap {
                tile,
                transfer: 0,
                other: 0,
                ..
            } if tile == 1
    ));
    // Two transfers reading the same source is fine; adjacent destinations are fine.
    let mut ok = base();
    ok.exchanges[poplar_exe::exe::ExchangePhaseId::from_u32(0_u32)]
        .transfers
        .push(transfer(0, 0, 16, vec![(3, 16)]));
    ok.exchanges[poplar_exe::exe::ExchangePhaseId::from_u32(0_u32)]
        .transfers
        .push(transfer(0, 4, 4, vec![(2, 48)]));
    ok.check().unwrap();
}

#[test]
fn program_indices() {
    assert_eq!(
        err(
            |e| prog(e).push(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(
                1_u32
            )))
        ),
        E::StepIndex {
            owner: "program 0".into(),
            what: "compute phase",
            index: 1,
            count: 1
        }
    );
    assert!(matches!(
        err(
            |e| prog(e).push(Step::Exchange(poplar_exe::exe::ExchangePhaseId::from_u32(
                3_u32
            )))
        ),
        E::StepIndex {
            what: "exchange phase",
            ..
        }
    ));
    assert!(matches!(
        err(|e| prog(e).push(Step::Call(poplar_exe::exe::FunctionId::from_u32(1_u32)))),
        E::StepIndex {
            what: "function",
            ..
        }
    ));
    assert!(matches!(
        err(|e| prog(e).push(Step::StreamIn {
            stream: 2,
            runs: vec![]
        })),
        E::StepIndex {
            what: "stream",
            index: 2,
            ..
        }
    ));
    assert!(matches!(
        err(|e| e.functions[poplar_exe::exe::FunctionId::from_u32(0_u32)] = Step::Repeat { count: 2, body: Box::new(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(4_u32))) }),
        E::StepIndex { ref owner, what: "compute phase", .. } if owner == "function 0"
    ));
}

#[test]
fn recursive_calls() {
    assert_eq!(
        err(
            |e| e.functions[poplar_exe::exe::FunctionId::from_u32(0_u32)] =
                Step::Call(poplar_exe::exe::FunctionId::from_u32(0_u32))
        ),
        E::RecursiveCall { function: 0 }
    );
    let r = err(|e| {
        e.functions[poplar_exe::exe::FunctionId::from_u32(0_u32)] = Step::Seq(vec![
            Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(0_u32)),
            Step::Call(poplar_exe::exe::FunctionId::from_u32(1_u32)),
        ]);
        e.functions.push(Step::Label {
            name: "g".into(),
            body: Box::new(Step::Call(poplar_exe::exe::FunctionId::from_u32(2_u32))),
        });
        e.functions.push(Step::Repeat {
            count: 3,
            body: Box::new(Step::Call(poplar_exe::exe::FunctionId::from_u32(0_u32))),
        });
    });
    assert!(matches!(r, E::RecursiveCall { .. }), "{r:?}");
    // A diamond (0 -> 1, 0 -> 2, 1 -> 2) is not recursion.
    let mut ok = base();
    ok.functions[poplar_exe::exe::FunctionId::from_u32(0_u32)] = Step::Seq(vec![
        Step::Call(poplar_exe::exe::FunctionId::from_u32(1_u32)),
        Step::Call(poplar_exe::exe::FunctionId::from_u32(2_u32)),
    ]);
    ok.functions
        .push(Step::Call(poplar_exe::exe::FunctionId::from_u32(2_u32)));
    ok.functions
        .push(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(
            0_u32,
        )));
    ok.check().unwrap();
}

#[test]
fn scalars() {
    let set_pred = |e: &mut Executable, s: ScalarLoc| {
        if let Step::Seq(v) = &mut e.programs[0] {
            if let Step::If { predicate, .. } = &mut v[3] {
                *predicate = s;
            }
        }
    };
    assert!(matches!(
        err(|e| set_pred(e, scalar(2, 100, DType::F32))),
        E::BadScalar {
            what: "if predicate",
            ..
        }
    ));
    assert!(matches!(
            err(|e| set_pred(e, scalar(2, 254, DType::I32))),
            E::BadScalar {
                tile,
                offset: 254,
                ..
            } if tile == 2
    ));
    assert!(matches!(
        err(|e| set_pred(e, scalar(2, 102, DType::U32))),
        E::BadScalar { .. }
    ));
    assert!(matches!(
            err(|e| set_pred(e, scalar(5, 0, DType::Bool))),
            E::TileOutOfRange { tile, .. } if tile == 5
    ));
    assert!(matches!(
        err(|e| e.programs.push(Step::While {
            cond: Box::new(Step::Seq(vec![])),
            predicate: scalar(0, 256, DType::Bool),
            body: Box::new(Step::Seq(vec![])),
        })),
        E::BadScalar {
            what: "while predicate",
            ..
        }
    ));
    assert!(matches!(
        err(|e| e.programs.push(Step::Switch {
            control: scalar(0, 0, DType::F16),
            cases: vec![],
            default: Box::new(Step::Seq(vec![])),
        })),
        E::BadScalar {
            what: "switch control",
            ..
        }
    ));
    let mut ok = base();
    set_pred(&mut ok, scalar(2, 255, DType::Bool));
    ok.check().unwrap();
}

#[test]
fn streams_and_host_tensors() {
    assert!(matches!(
        err(|e| prog(e)[0] = Step::StreamIn {
            stream: 0,
            runs: vec![run(0, 0, 12)]
        }),
        E::RunTotal {
            expected: 16,
            found: 12,
            ..
        }
    ));
    assert!(matches!(
            err(|e| prog(e)[0] = Step::StreamIn {
                stream: 0,
                runs: vec![run(0, 250, 16)]
            }),
            E::BadRun {
                run: 0,
                tile,
                offset: 250,
                ..
            } if tile == 0
    ));
    assert!(matches!(
        err(|e| prog(e)[0] = Step::StreamIn {
            stream: 0,
            runs: vec![run(0, 2, 16)]
        }),
        E::BadRun { .. }
    ));
    assert!(matches!(
        err(|e| prog(e)[0] = Step::StreamIn {
            stream: 1,
            runs: vec![run(0, 0, 16)]
        }),
        E::StreamDirection { stream: 1, .. }
    ));
    assert!(matches!(
        err(|e| prog(e)[4] = Step::StreamOut {
            stream: 0,
            runs: vec![run(0, 0, 16)]
        }),
        E::StreamDirection { stream: 0, .. }
    ));
    assert!(matches!(
        err(|e| e.streams[0].len = usize::MAX),
        E::SizeOverflow { what: "stream", .. }
    ));
    assert!(matches!(
        err(|e| e.host_tensors[0].shape = vec![3]),
        E::RunTotal {
            expected: 12,
            found: 16,
            ..
        }
    ));
    assert!(matches!(
        err(|e| e.host_tensors[0].shape = vec![usize::MAX, 2]),
        E::SizeOverflow {
            what: "host tensor",
            ..
        }
    ));
    assert!(matches!(
            err(|e| e.host_tensors[0].runs[1].tile = 4.into()),
            E::TileOutOfRange { tile, .. } if tile == 4
    ));
    assert!(matches!(
            err(|e| e.host_tensors[0].runs[1].offset = 252),
            E::BadRun {
                run: 1,
                tile,
                ..
            } if tile == 3
    ));
    assert!(matches!(
        err(|e| {
            let h = e.host_tensors[0].clone();
            e.host_tensors.push(h);
        }),
        E::DuplicateName {
            kind: "host tensor",
            ..
        }
    ));
    assert!(matches!(
        err(|e| e.streams[1].name = "in".into()),
        E::DuplicateName { kind: "stream", .. }
    ));
}

#[test]
fn errors_display_the_culprit() {
    let e = err(|e| scale_vertex(e).fields[1] = loc(12, 4));
    let s = e.to_string();
    assert!(
        s.contains("compute phase 0") && s.contains("tile 1") && s.contains("vertex 7"),
        "{s}"
    );
}

mod overlap_property {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// check() flags an aliased vertex exactly when some written range overlaps another.
        #[test]
        fn list_overlap_matches_brute_force(
            subs in proptest::collection::vec((0u32..16, 0u32..4), 1..6),
            out in (0u32..16, 1u32..4),
        ) {
            // ListSum: input list (read) + scalar output (written). Offsets in f32 units.
            let mut b = Builder::new(1, 256);
            let lists: Vec<_> = subs.iter().map(|&(o, l)| loc(o * 4, l)).collect();
            let v = b.vertex("test::ListSum", 0, vec![loc(0, lists.len() as u32), loc(out.0 * 4, 1)], lists);
            b.compute_simple("p", vec![(0, v)]);
            let exe = b.build();
            let w = (out.0, out.0 + 1);
            let overlaps = subs.iter().any(|&(o, l)| l > 0 && o < w.1 && w.0 < o + l);
            prop_assert_eq!(exe.check().is_err(), overlaps);

            // ListFill: written list; aliased iff two non-empty sub-vectors overlap or one
            // overlaps the state scalar at 240.
            let mut b = Builder::new(1, 256);
            let lists: Vec<_> = subs.iter().map(|&(o, l)| loc(o * 4, l)).collect();
            let v = b.vertex("test::ListFill", 0, vec![loc(0, lists.len() as u32), loc(240, 1)], lists);
            b.compute_simple("p", vec![(0, v)]);
            let exe = b.build();
            let mut overlaps = false;
            for (i, &(a, la)) in subs.iter().enumerate() {
                for &(c, lc) in &subs[i + 1..] {
                    overlaps |= la > 0 && lc > 0 && a < c + lc && c < a + la;
                }
            }
            prop_assert_eq!(exe.check().is_err(), overlaps);
        }
    }
}
