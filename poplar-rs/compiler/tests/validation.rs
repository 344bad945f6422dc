//! One test per validation error: a graph with exactly that mistake, and the typed error that
//! names the thing at fault.
//!
//! (About 700 lines. One file because it is one list, a test per `ValidationError` variant,
//! with shared graph helpers.)

use poplar::error::{CompileError, GraphError, ValidationError as V, VertexName};
use poplar::{compile, CompileOptions, DType, Graph, Program, Target, TileId};

fn target() -> Target {
    Target::custom(4, 4096)
}

/// How errors name a vertex: number, codelet, compute set, tile.
fn vn(id: u32, codelet: &str, compute_set: &str, tile: Option<u32>) -> VertexName {
    VertexName {
        id,
        codelet: codelet.into(),
        compute_set: compute_set.into(),
        tile: tile.map(TileId::new),
    }
}

fn errors(g: &Graph, progs: &[Program]) -> Vec<V> {
    poplar_testkit::link();
    match compile(g, progs, &CompileOptions::default()) {
        Err(CompileError::Invalid(v)) => v,
        other => panic!("expected validation errors, got {other:?}"),
    }
}

/// A valid graph: Sum over x (tile 0) into s (tile 0), vertex on tile 0.
fn sum_graph() -> (
    Graph,
    poplar::ComputeSet,
    poplar::VertexRef,
    poplar::Tensor,
    poplar::Tensor,
) {
    let mut g = Graph::new(&target());
    let x = g.add_variable(DType::F32, &[4], "x");
    let s = g.add_variable(DType::F32, &[1], "s");
    g.set_tile_mapping(&x, 0).unwrap();
    g.set_tile_mapping(&s, 0).unwrap();
    let cs = g.add_compute_set("cs");
    let v = g.add_vertex(cs, "test::Sum").unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    (g, cs, v, x, s)
}

#[test]
fn the_fixture_is_valid() {
    let (mut g, cs, v, x, s) = sum_graph();
    g.connect(v, "input", &x).unwrap();
    g.connect(v, "out", &s).unwrap();
    poplar_testkit::link();
    compile(&g, &[Program::execute(cs)], &CompileOptions::default()).unwrap();
}

#[test]
fn unknown_codelet() {
    let (mut g, cs, _, _, _) = sum_graph();
    g.add_vertex(cs, "NoSuchCodelet").unwrap();
    let e = errors(&g, &[]);
    assert!(
        e.contains(&V::UnknownCodelet {
            vertex: vn(1, "NoSuchCodelet", "cs", None),
            did_you_mean: None
        }),
        "{e:?}"
    );
    // A near miss gets a suggestion, in the message too.
    let (mut g, cs, _, _, _) = sum_graph();
    let w = g.add_vertex(cs, "test::Summ").unwrap();
    g.set_tile_mapping(w, 2).unwrap();
    let e = errors(&g, &[]);
    let hit = e
        .iter()
        .find(|e| matches!(e, V::UnknownCodelet { .. }))
        .unwrap();
    assert_eq!(
        hit,
        &V::UnknownCodelet {
            vertex: vn(1, "test::Summ", "cs", Some(2)),
            did_you_mean: Some("test::Sum".into())
        }
    );
    let text = hit.to_string();
    assert!(
        text.contains("vertex 1 (test::Summ) in compute set 'cs' on tile 2")
            && text.contains("did you mean 'test::Sum'?"),
        "{text}"
    );
}

#[test]
fn unknown_field() {
    let (mut g, _, v, x, s) = sum_graph();
    g.connect(v, "input", &x).unwrap();
    g.connect(v, "out", &s).unwrap();
    g.connect(v, "bogus", &x).unwrap();
    let e = errors(&g, &[]);
    assert_eq!(
        e,
        vec![V::UnknownField {
            vertex: vn(0, "test::Sum", "cs", Some(0)),
            field: "bogus".into(),
            did_you_mean: None
        }]
    );
}

#[test]
fn misspelled_field_gets_a_suggestion() {
    let (mut g, _, v, x, s) = sum_graph();
    g.connect(v, "inptu", &x).unwrap();
    g.connect(v, "out", &s).unwrap();
    let e = errors(&g, &[]);
    let hit = e
        .iter()
        .find(|e| matches!(e, V::UnknownField { .. }))
        .unwrap();
    assert_eq!(
        hit,
        &V::UnknownField {
            vertex: vn(0, "test::Sum", "cs", Some(0)),
            field: "inptu".into(),
            did_you_mean: Some("input".into())
        }
    );
    assert!(hit.to_string().contains("did you mean 'input'?"), "{hit}");
}

/// `set_vertex_state(v, "n", 5)` on a `State<u32>` used to fail validation with "field 'n' has
/// type u32, connected to a i32 tensor".
#[test]
fn integer_literals_fit_their_state_field_and_others_say_it_is_a_state_value() {
    poplar_testkit::link();
    let mut g = Graph::new(&target());
    let x = g.add_variable(DType::F32, &[4], "x");
    g.set_tile_mapping(&x, 0).unwrap();
    g.create_host_read("x", &x).unwrap();
    let cs = g.add_compute_set("cs");
    let v = g.add_vertex(cs, "test::AddCount").unwrap();
    g.connect(v, "x", &x).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    g.set_vertex_state(v, "n", 5).unwrap();
    let exe = compile(&g, &[Program::execute(cs)], &CompileOptions::default()).unwrap();
    let mut e = poplar::Engine::new(&exe, poplar::EngineOptions::default()).unwrap();
    e.run(0).unwrap();
    assert_eq!(e.read_tensor::<f32>("x").unwrap(), vec![5.0; 4]);

    // -1 does not fit a u32: the error says it is a state value and how to write it.
    g.set_vertex_state(v, "n", -1).unwrap();
    let errs = errors(&g, &[]);
    assert_eq!(
        errs,
        vec![V::StateDType {
            vertex: vn(0, "test::AddCount", "cs", Some(0)),
            field: "n".into(),
            expected: DType::U32,
            got: DType::I32
        }]
    );
    let text = errs[0].to_string();
    assert!(
        text.contains("state field 'n'") && text.contains("`5u32`") && !text.contains("tensor"),
        "{text}"
    );
}

#[test]
fn unconnected_field() {
    let (mut g, _, v, x, _) = sum_graph();
    g.connect(v, "input", &x).unwrap();
    let e = errors(&g, &[]);
    assert_eq!(
        e,
        vec![V::UnconnectedField {
            vertex: vn(0, "test::Sum", "cs", Some(0)),
            field: "out".into()
        }]
    );
}

#[test]
fn missing_state() {
    let mut g = Graph::new(&target());
    let x = g.add_variable(DType::F32, &[4], "x");
    g.set_tile_mapping(&x, 0).unwrap();
    let y = g.add_variable(DType::F32, &[4], "y");
    g.set_tile_mapping(&y, 0).unwrap();
    let cs = g.add_compute_set("cs");
    let v = g.add_vertex(cs, "test::Scale").unwrap();
    g.connect(v, "input", &x).unwrap();
    g.connect(v, "out", &y).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    let e = errors(&g, &[]);
    assert_eq!(
        e,
        vec![V::MissingState {
            vertex: vn(0, "test::Scale", "cs", Some(0)),
            field: "k".into()
        }]
    );
}

#[test]
fn list_given_for_a_vector_field() {
    let (mut g, _, v, x, s) = sum_graph();
    g.connect_list(v, "input", &[x]).unwrap();
    g.connect(v, "out", &s).unwrap();
    let e = errors(&g, &[]);
    assert!(
        matches!(&e[..], [V::WrongBinding { field, expected: "one tensor", .. }] if field == "input"),
        "{e:?}"
    );
}

#[test]
fn dtype_mismatch() {
    let (mut g, _, v, _, s) = sum_graph();
    let xi = g.add_variable(DType::I32, &[4], "xi");
    g.set_tile_mapping(&xi, 0).unwrap();
    g.connect(v, "input", &xi).unwrap();
    g.connect(v, "out", &s).unwrap();
    let e = errors(&g, &[]);
    assert_eq!(
        e,
        vec![V::DTypeMismatch {
            vertex: vn(0, "test::Sum", "cs", Some(0)),
            field: "input".into(),
            expected: DType::F32,
            got: DType::I32,
            tensor: Some("xi".into())
        }]
    );
}

#[test]
fn scalar_field_given_a_vector() {
    let (mut g, _, v, x, _) = sum_graph();
    let y = g.add_variable(DType::F32, &[4], "y");
    g.set_tile_mapping(&y, 0).unwrap();
    g.connect(v, "input", &x).unwrap();
    g.connect(v, "out", &y).unwrap();
    let e = errors(&g, &[]);
    assert_eq!(
        e,
        vec![V::NotScalar {
            vertex: vn(0, "test::Sum", "cs", Some(0)),
            field: "out".into(),
            elements: 4,
            tensor: Some("y".into())
        }]
    );
}

#[test]
fn unmapped_vertex() {
    let (mut g, cs, v, x, s) = sum_graph();
    g.connect(v, "input", &x).unwrap();
    g.connect(v, "out", &s).unwrap();
    let w = g.add_vertex(cs, "test::Sum").unwrap();
    g.connect(w, "input", &x).unwrap();
    g.connect(w, "out", &s.slice(0..1).unwrap()).unwrap();
    let e = errors(&g, &[]);
    assert!(
        e.contains(&V::UnmappedVertex {
            vertex: vn(1, "test::Sum", "cs", None)
        }),
        "{e:?}"
    );
}

#[test]
fn unmapped_elements() {
    let mut g = Graph::new(&target());
    let x = g.add_variable(DType::F32, &[10], "x");
    g.set_tile_mapping(&x.slice(0..3).unwrap(), 0).unwrap();
    g.set_tile_mapping(&x.slice(5..8).unwrap(), 1).unwrap();
    let e = errors(&g, &[]);
    assert_eq!(
        e,
        vec![
            V::UnmappedElements {
                var: "x".into(),
                start: 3,
                end: 5
            },
            V::UnmappedElements {
                var: "x".into(),
                start: 8,
                end: 10
            }
        ]
    );
}

#[test]
fn tile_out_of_range_is_refused_when_mapping() {
    let mut g = Graph::new(&target());
    let x = g.add_variable(DType::F32, &[4], "x");
    assert!(matches!(
        g.set_tile_mapping(&x, 4),
        Err(GraphError::TileOutOfRange {
            tile,
            num_tiles: 4,
            ..
        }) if tile == 4
    ));
    let cs = g.add_compute_set("cs");
    let v = g.add_vertex(cs, "test::Sum").unwrap();
    assert!(matches!(
        g.set_tile_mapping(v, 9),
        Err(GraphError::TileOutOfRange { tile, .. }) if tile == 9
    ));
}

#[test]
fn data_race_between_two_vertices() {
    let (mut g, cs, v, x, s) = sum_graph();
    g.connect(v, "input", &x).unwrap();
    g.connect(v, "out", &s).unwrap();
    // A second vertex increments x[2..4] while the first reads x.
    let w = g.add_vertex(cs, "test::Inc").unwrap();
    g.connect(w, "x", &x.slice(2..4).unwrap()).unwrap();
    g.set_tile_mapping(w, 1).unwrap();
    let e = errors(&g, &[]);
    assert_eq!(
        e,
        vec![V::DataRace {
            compute_set: "cs".into(),
            writer: vn(1, "test::Inc", "cs", Some(1)),
            other: vn(0, "test::Sum", "cs", Some(0)),
            access: "reads",
            var: "x".into(),
            start: 2,
            end: 4
        }]
    );
}

#[test]
fn two_writers_of_one_element() {
    let (mut g, cs, _, x, _) = sum_graph();
    for t in 0..2 {
        let w = g.add_vertex(cs, "test::Inc").unwrap();
        g.connect(w, "x", &x.slice(t..t + 2).unwrap()).unwrap();
        g.set_tile_mapping(w, 0).unwrap();
    }
    // Vertex 0 (test::Sum) is left unconnected; only the race matters here.
    let e = errors(&g, &[]);
    assert!(
        e.iter().any(|e| matches!(
            e,
            V::DataRace {
                access: "writes",
                start: 1,
                end: 2,
                ..
            }
        )),
        "{e:?}"
    );
}

#[test]
fn reads_in_different_compute_sets_are_not_races() {
    let (mut g, cs, v, x, s) = sum_graph();
    g.connect(v, "input", &x).unwrap();
    g.connect(v, "out", &s).unwrap();
    let cs2 = g.add_compute_set("cs2");
    let w = g.add_vertex(cs2, "test::Inc").unwrap();
    g.connect(w, "x", &x).unwrap();
    g.set_tile_mapping(w, 0).unwrap();
    poplar_testkit::link();
    compile(
        &g,
        &[Program::seq(vec![
            Program::execute(cs),
            Program::execute(cs2),
        ])],
        &CompileOptions::default(),
    )
    .unwrap();
}

#[test]
fn written_field_aliasing_another_field_of_the_vertex() {
    let mut g = Graph::new(&target());
    let x = g.add_variable(DType::F32, &[4], "x");
    g.set_tile_mapping(&x, 0).unwrap();
    let cs = g.add_compute_set("cs");
    let v = g.add_vertex(cs, "test::Scale").unwrap();
    g.connect(v, "input", &x).unwrap();
    g.connect(v, "out", &x).unwrap();
    g.set_vertex_state(v, "k", 1.0f32).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    let e = errors(&g, &[]);
    assert!(
        matches!(&e[..], [V::AliasedField { field, other, start: 0, end: 4, .. }] if field == "out" && other == "input"),
        "{e:?}"
    );
}

#[test]
fn written_broadcast_aliases_itself() {
    let mut g = Graph::new(&target());
    let x = g.add_variable(DType::F32, &[2], "x");
    g.set_tile_mapping(&x, 0).unwrap();
    let cs = g.add_compute_set("cs");
    let v = g.add_vertex(cs, "test::Inc").unwrap();
    g.connect(v, "x", &x.broadcast(2, 0).unwrap()).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    let e = errors(&g, &[]);
    assert!(
        matches!(&e[..], [V::AliasedField { field, other, .. }] if field == "x" && other == "x"),
        "{e:?}"
    );
}

#[test]
fn write_to_constant() {
    let mut g = Graph::new(&target());
    let c = g.add_constant::<f32>(&[2], &[1.0, 2.0], "c").unwrap();
    g.set_tile_mapping(&c, 0).unwrap();
    let cs = g.add_compute_set("cs");
    let v = g.add_vertex(cs, "test::Inc").unwrap();
    g.connect(v, "x", &c).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    let x = g.add_variable(DType::F32, &[2], "x");
    g.set_tile_mapping(&x, 0).unwrap();
    let e = errors(&g, &[Program::copy(&x, &c)]);
    assert_eq!(
        e.iter()
            .filter(|e| matches!(e, V::WriteToConstant { var, .. } if var == "c"))
            .count(),
        2,
        "{e:?}"
    );
}

#[test]
fn copy_mismatch() {
    let mut g = Graph::new(&target());
    let a = g.add_variable(DType::F32, &[4], "a");
    let b = g.add_variable(DType::F32, &[5], "b");
    let c = g.add_variable(DType::I32, &[4], "c");
    for t in [&a, &b, &c] {
        g.set_tile_mapping(t, 0).unwrap();
    }
    let e = errors(&g, &[Program::copy(&a, &b), Program::copy(&a, &c)]);
    assert_eq!(e.len(), 2);
    assert!(e.iter().all(|e| matches!(e, V::CopyMismatch { .. })));
}

#[test]
fn copy_to_an_aliased_destination() {
    let mut g = Graph::new(&target());
    let a = g.add_variable(DType::F32, &[4], "a");
    let b = g.add_variable(DType::F32, &[2], "b");
    g.set_tile_mapping(&a, 0).unwrap();
    g.set_tile_mapping(&b, 0).unwrap();
    let e = errors(&g, &[Program::copy(&a, &b.broadcast(2, 0).unwrap())]);
    assert_eq!(
        e,
        vec![V::AliasedDestination {
            what: "copy destination".into()
        }]
    );
}

#[test]
fn bad_predicate() {
    let mut g = Graph::new(&target());
    let p = g.add_variable(DType::F32, &[1], "p");
    let q = g.add_variable(DType::Bool, &[2], "q");
    g.set_tile_mapping(&p, 0).unwrap();
    g.set_tile_mapping(&q, 0).unwrap();
    let e = errors(
        &g,
        &[
            Program::if_else(&p, Program::nop(), Program::nop()),
            Program::repeat_while_true(Program::nop(), &q, Program::nop()),
        ],
    );
    assert_eq!(e.len(), 2);
    assert!(matches!(
        &e[0],
        V::BadPredicate {
            dtype: DType::F32,
            ..
        }
    ));
    assert!(matches!(&e[1], V::BadPredicate { shape, .. } if shape == &vec![2]));
}

#[test]
fn bad_stream() {
    let mut g = Graph::new(&target());
    let a = g.add_variable(DType::F32, &[4], "a");
    g.set_tile_mapping(&a, 0).unwrap();
    let s_in = g.add_host_to_device_stream("in", DType::F32, 3).unwrap();
    let s_out = g.add_device_to_host_stream("out", DType::F32, 4).unwrap();
    let e = errors(
        &g,
        &[
            Program::stream_to_device(s_in, &a),
            Program::stream_to_device(s_out, &a),
        ],
    );
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(matches!(&e[0], V::BadStream { stream, .. } if stream == "in"));
    assert!(matches!(&e[1], V::BadStream { stream, .. } if stream == "out"));
}

#[test]
fn calls_to_missing_and_recursive_functions() {
    let mut g = Graph::new(&target());
    let f = g.add_function(Program::nop());
    g.set_function_body(f, Program::call(f)).unwrap();
    // A function of another graph is not one of this graph's, whatever its number.
    let mut other = Graph::new(&target());
    let foreign = (0..8)
        .map(|_| other.add_function(Program::nop()))
        .last()
        .unwrap();
    let e = errors(&g, &[Program::call(foreign), Program::call(f)]);
    assert!(e.contains(&V::NoSuchFunction { id: 7 }), "{e:?}");
    assert!(e.contains(&V::RecursiveCall { id: 0 }), "{e:?}");
    assert!(matches!(
        g.set_function_body(foreign, Program::nop()),
        Err(GraphError::ForeignHandle { .. })
    ));
}

#[test]
fn execute_of_a_compute_set_of_another_graph() {
    let g = Graph::new(&target());
    let mut other = Graph::new(&target());
    let cs = (0..4)
        .map(|i| other.add_compute_set(&format!("cs{i}")))
        .last()
        .unwrap();
    let e = errors(&g, &[Program::execute(cs)]);
    assert_eq!(
        e,
        vec![V::NoSuchComputeSet {
            what: "execute".into(),
            id: 3
        }]
    );
}

/// Handles of another graph used to index into this graph's tables: `connect` panicked (index
/// out of bounds) or silently bound a vertex of the wrong graph; now each is a typed error.
#[test]
fn handles_of_another_graph_are_typed_errors() {
    let (mut g, cs, v, x, _) = sum_graph();
    let mut other = Graph::new(&target());
    let ocs = other.add_compute_set("other");
    let ov = other.add_vertex(ocs, "test::Sum").unwrap();
    let ox = other.add_variable(DType::F32, &[4], "ox");
    assert!(matches!(
        g.add_vertex(ocs, "test::Sum"),
        Err(GraphError::ForeignHandle { what }) if what == "compute set 0"
    ));
    assert!(matches!(
        g.connect(ov, "input", &x),
        Err(GraphError::ForeignHandle { what }) if what == "vertex 0"
    ));
    assert!(matches!(
        g.connect(v, "input", &ox),
        Err(GraphError::ForeignTensor { what }) if what.contains("field 'input'")
    ));
    assert!(matches!(
        g.set_vertex_state(ov, "k", 1.0f32),
        Err(GraphError::ForeignHandle { .. })
    ));
    assert!(matches!(
        g.set_tile_mapping(ov, 0),
        Err(GraphError::ForeignHandle { .. })
    ));
    // A vertex number beyond this graph's vertices (from a bigger graph).
    let big = (0..5)
        .map(|_| other.add_vertex(ocs, "test::Sum").unwrap())
        .last()
        .unwrap();
    assert!(matches!(
        g.connect(big, "input", &x),
        Err(GraphError::ForeignHandle { .. })
    ));
    assert_eq!(g.compute_set_name(ocs), None);
    assert_eq!(g.compute_set_name(cs), Some("cs"));
}

#[test]
fn tensor_of_another_graph() {
    let mut other = Graph::new(&target());
    let foreign = other.add_variable(DType::F32, &[1], "foreign");
    let (mut g, _, v, x, _) = sum_graph();
    g.connect(v, "input", &x).unwrap();
    assert!(matches!(
        g.connect(v, "out", &foreign),
        Err(GraphError::ForeignTensor { what }) if what.contains("out")
    ));
    assert!(matches!(
        g.set_tile_mapping(&foreign, 0),
        Err(GraphError::ForeignTensor { .. })
    ));
    // A program that uses it is refused by validation.
    let e = errors(&g, &[Program::copy(&foreign, &x)]);
    assert!(
        e.iter().any(|e| matches!(e, V::ForeignTensor { .. })),
        "{e:?}"
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    let (mut g, cs, _, _, _) = sum_graph();
    g.add_vertex(cs, "Nope").unwrap();
    g.add_variable(DType::U32, &[3], "loose");
    let e = errors(&g, &[]);
    // Vertex 0 unconnected (2 fields), vertex 1 unknown and unmapped, 'loose' unmapped.
    assert_eq!(e.len(), 5, "{e:?}");
}

#[test]
fn out_of_memory_names_the_tile_and_its_largest_contributors() {
    let mut g = Graph::new(&Target::custom(2, 1024));
    let big = g.add_variable(DType::F32, &[300], "big");
    let small = g.add_variable(DType::F32, &[10], "small");
    g.set_tile_mapping(&big, 1).unwrap();
    g.set_tile_mapping(&small, 1).unwrap();
    let err = compile(&g, &[], &CompileOptions::default()).unwrap_err();
    match err {
        CompileError::OutOfMemory {
            tile,
            total,
            budget,
            largest,
        } => {
            assert_eq!(tile, 1);
            assert_eq!(budget, 1024);
            assert_eq!(total, 1240);
            assert_eq!(largest[0], ("big".to_string(), 1200));
            assert_eq!(largest[1], ("small".to_string(), 40));
        }
        e => panic!("{e:?}"),
    }
    // The report can still be produced on request.
    let exe = compile(
        &g,
        &[],
        &CompileOptions {
            allow_out_of_memory: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(exe.tiles[1].memory_bytes, 1240);
}

#[test]
fn zero_length_constants_and_variables_are_fine() {
    let mut g = Graph::new(&target());
    let c = g.add_constant::<f32>(&[0], &[], "empty").unwrap();
    let v = g.add_variable(DType::F32, &[0, 3], "none");
    assert_eq!((c.num_elements(), v.num_elements()), (0, 0));
    poplar_testkit::link();
    compile(
        &g,
        &[Program::copy(&c, &v.flatten())],
        &CompileOptions::default(),
    )
    .unwrap();
}
