//! One worker context against six: the same element-wise work as one single-worker vertex and
//! split over six vertices on one tile.

use poplar::profile::CycleModel;
use poplar::{compile, CompileOptions, DType, Graph, Program, Target};

use crate::row::{Check, Kind, Row};

/// Elements added, 1,000 per context when split.
pub const ELEMENTS: usize = 6000;

/// Modelled tile cycles of `z = x + y` over [`ELEMENTS`] floats on one tile: `(one vertex,
/// six vertices)`.
pub fn one_and_six() -> (u64, u64) {
    codelets::link();
    let target = Target::custom(1, 256 * 1024);
    let mut g = Graph::new(&target);
    let var = |g: &mut Graph, name: &str| {
        let t = g.add_variable(DType::F32, &[ELEMENTS], name);
        g.set_tile_mapping(&t, 0).expect("map");
        t
    };
    let (x, y, z) = (var(&mut g, "x"), var(&mut g, "y"), var(&mut g, "z"));
    let add = |g: &mut Graph, name: &str, parts: usize| {
        let cs = g.add_compute_set(name);
        let len = ELEMENTS / parts;
        for p in 0..parts {
            let r = p * len..(p + 1) * len;
            let v = g.add_vertex(cs, "Add<float>").expect("vertex");
            for (field, t) in [("in1", &x), ("in2", &y), ("out", &z)] {
                g.connect(v, field, &t.slice(r.clone()).expect("slice"))
                    .expect("connect");
            }
            g.set_tile_mapping(v, 0).expect("map vertex");
        }
        Program::execute(cs)
    };
    let one = add(&mut g, "one", 1);
    let six = add(&mut g, "six", 6);
    let exe = compile(
        &g,
        &[Program::seq(vec![one, six])],
        &CompileOptions::default(),
    )
    .expect("compile");
    let model = CycleModel::new(&exe);
    let cycles = |name: &str| {
        model
            .computes
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.max)
            .expect("phase")
    };
    (cycles("one"), cycles("six"))
}

/// The row: the ratio of one context to six, against the barrel's six.
pub fn rows() -> Vec<Row> {
    let (one, six) = one_and_six();
    vec![Row {
        name: "one context against six, same work (ratio)".into(),
        modelled: one as f64 / six as f64,
        published: 6.0,
        check: Check::Within(0.15),
        kind: Kind::Formula,
        chip: "—",
        source: "IPU programmer's guide §2.3 (round-robin barrel); poplibs estimators",
        note: format!(
            "`Add<float>` over {ELEMENTS} floats: one vertex {one} cycles, six vertices {six}"
        ),
    }]
}
