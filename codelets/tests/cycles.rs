//! The codelets' cycle estimates reach the executable, with the documented formulas (poplibs'
//! estimators written out by hand; see `codelets::cycles`).

use poplar::{compile, CompileOptions, DType, Graph, Program, Target, Tensor};

#[test]
fn estimates_follow_the_documented_formulas() {
    codelets::link();
    let target = Target::custom(2, 64 * 1024);
    let workers = u64::from(target.workers_per_tile);
    let mut g = Graph::new(&target);
    let var = |g: &mut Graph, dtype: DType, shape: &[usize], name: &str| -> Tensor {
        let t = g.add_variable(dtype, shape, name);
        g.set_tile_mapping(&t, 0).unwrap();
        t
    };
    let a = var(&mut g, DType::F32, &[100], "a");
    let b = var(&mut g, DType::F32, &[100], "b");
    let c1 = var(&mut g, DType::F32, &[100], "c1");
    let c2 = var(&mut g, DType::F32, &[100], "c2");
    let c3 = var(&mut g, DType::F32, &[100], "c3");
    let i = var(&mut g, DType::I32, &[10], "i");
    let i2 = var(&mut g, DType::I32, &[10], "i2");
    let m = var(&mut g, DType::F32, &[4, 25], "m");
    let x = var(&mut g, DType::F32, &[25], "x");
    let y1 = var(&mut g, DType::F32, &[4], "y1");
    let y2 = var(&mut g, DType::F32, &[4], "y2");

    let cs = g.add_compute_set("cs");
    let vertex = |g: &mut Graph, codelet: &str, conns: &[(&str, &Tensor)]| {
        let v = g.add_vertex(cs, codelet).unwrap();
        for (f, t) in conns {
            g.connect(v, f, t).unwrap();
        }
        g.set_tile_mapping(v, 1).unwrap();
        v
    };
    vertex(
        &mut g,
        "Add<float>",
        &[("in1", &a), ("in2", &b), ("out", &c1)],
    );
    vertex(
        &mut g,
        "Add<int>",
        &[("in1", &i), ("in2", &i), ("out", &i2)],
    );
    vertex(
        &mut g,
        "Div<float>",
        &[("in1", &a), ("in2", &b), ("out", &c2)],
    );
    let sa = vertex(&mut g, "ScaledAddMulti<float>", &[("a", &c3), ("b", &b)]);
    g.set_vertex_state(sa, "scale", 2.0f32).unwrap();
    let flat_m = m.flatten();
    vertex(
        &mut g,
        "MatVec<float>",
        &[("matrix", &flat_m), ("vec", &x), ("out", &y1)],
    );
    let rp = vertex(&mut g, "ReduceSumPartials<float>", &[("out", &y2)]);
    let parts = [
        a.slice(0..4).unwrap(),
        b.slice(0..4).unwrap(),
        a.slice(4..8).unwrap(),
    ];
    g.connect_list(rp, "partials", &parts).unwrap();

    let want = [
        5 + 50 * 3,                                    // Add<float>: BinaryOp2D, 50 vectors of 3
        5 + 10 * 7,                                    // Add<int>: 7 cycles per element
        5 + 50 * 10,                                   // Div<float>: 10 per 2 elements
        22 + 100u64.div_ceil(workers).div_ceil(2) * 3, // ScaledAddSupervisor's worker share
        17 + 4 * (8 + 25u64.div_ceil(4) * 4),          // MatVec: 4 rows of 25 columns
        7 + 26 + 16 + 6 + 2 * 2 + 2 + (11 + 3 * (10 + 9)), // Reduce: 3 partials of 4 floats
    ];
    let exe = compile(&g, &[Program::execute(cs)], &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut got = vec![0; want.len()];
    for v in exe
        .computes
        .values()
        .flat_map(|c| &c.tiles)
        .flat_map(|t| &t.vertices)
    {
        assert!(
            v.cycles_estimated,
            "vertex {} has no codelet estimate",
            v.id
        );
        got[v.id as usize] = v.cycles;
    }
    assert_eq!(got, want);
}
