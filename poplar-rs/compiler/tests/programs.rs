//! Control flow, streams and calls, compiled and run end to end with the standard codelets.

use poplar::{
    compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target, Tensor,
};

fn engine(g: &Graph, progs: &[Program]) -> Engine {
    codelets::link();
    let exe = compile(g, progs, &CompileOptions::default()).expect("compiles");
    Engine::new(&exe, EngineOptions::default()).expect("engine")
}

/// `x[i] += k` on every element, as a compute set with one vertex per tile.
fn add_const(g: &mut Graph, x: &Tensor, k: f32, name: &str) -> poplar::ComputeSet {
    let c = g
        .add_constant(
            &[x.num_elements()],
            &vec![k; x.num_elements()],
            &format!("{name}_k"),
        )
        .unwrap();
    g.set_tile_mapping(&c, 0).unwrap();
    let cs = g.add_compute_set(name);
    let v = g.add_vertex(cs, "AddInPlace<float>").unwrap();
    g.connect(v, "a", x).unwrap();
    g.connect(v, "b", &c).unwrap();
    g.set_tile_mapping(v, 1).unwrap();
    cs
}

#[test]
fn repeat_while_true_counts_to_ten() {
    let mut g = Graph::new(&Target::custom(2, 1 << 16));
    let x = g.add_variable(DType::F32, &[3], "x");
    g.set_tile_mapping(&x, 0).unwrap();
    let inc = add_const(&mut g, &x, 1.0, "inc");
    // cond: p = x[0] < 10, computed by a library comparison-free trick: p = (10 - x[0]) > 0 via Max.
    let ten = g.add_constant::<i32>(&[1], &[10], "ten").unwrap();
    let xi = g.add_variable(DType::I32, &[1], "counter");
    let p = g.add_variable(DType::I32, &[1], "p");
    for t in [&ten, &xi, &p] {
        g.set_tile_mapping(t, 0).unwrap();
    }
    let one = g.add_constant::<i32>(&[1], &[1], "one").unwrap();
    g.set_tile_mapping(&one, 0).unwrap();
    let cs_cnt = g.add_compute_set("count");
    let v = g.add_vertex(cs_cnt, "AddInPlace<int>").unwrap();
    g.connect(v, "a", &xi).unwrap();
    g.connect(v, "b", &one).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    let cs_p = g.add_compute_set("pred");
    let v = g.add_vertex(cs_p, "Sub<int>").unwrap();
    g.connect(v, "in1", &ten).unwrap();
    g.connect(v, "in2", &xi).unwrap();
    g.connect(v, "out", &p).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    g.create_host_read_write("x", &x).unwrap();
    g.create_host_read("counter", &xi).unwrap();
    let prog = Program::repeat_while_true(
        Program::execute(cs_p),
        &p,
        Program::seq(vec![Program::execute(inc), Program::execute(cs_cnt)]),
    );
    let mut e = engine(&g, &[prog]);
    e.write_tensor("x", &[0.0f32, 5.0, -1.0]).unwrap();
    e.run(0).unwrap();
    assert_eq!(e.read_tensor::<i32>("counter").unwrap(), vec![10]);
    assert_eq!(e.read_tensor::<f32>("x").unwrap(), vec![10.0, 15.0, 9.0]);
}

#[test]
fn if_and_switch_pick_their_branch_from_device_data() {
    let mut g = Graph::new(&Target::custom(2, 1 << 16));
    let x = g.add_variable(DType::F32, &[2], "x");
    let c = g.add_variable(DType::I32, &[1], "c");
    g.set_tile_mapping(&x, 0).unwrap();
    g.set_tile_mapping(&c, 1).unwrap();
    let a1 = add_const(&mut g, &x, 1.0, "a1");
    let a10 = add_const(&mut g, &x, 10.0, "a10");
    let a100 = add_const(&mut g, &x, 100.0, "a100");
    g.create_host_read_write("x", &x).unwrap();
    g.create_host_write("c", &c).unwrap();
    let p_if = Program::if_else(&c, Program::execute(a1), Program::execute(a10));
    let p_sw = Program::switch(
        &c,
        vec![(0, Program::execute(a1)), (5, Program::execute(a10))],
        Program::execute(a100),
    );
    let mut e = engine(&g, &[p_if, p_sw]);
    e.write_tensor("x", &[0.0f32, 0.0]).unwrap();
    for (cv, prog, want) in [
        (0, 0, 10.0f32),
        (3, 0, 11.0),
        (5, 1, 21.0),
        (0, 1, 22.0),
        (-2, 1, 122.0),
    ] {
        e.write_tensor("c", &[cv]).unwrap();
        e.run(prog).unwrap();
        assert_eq!(
            e.read_tensor::<f32>("x").unwrap(),
            vec![want, want],
            "c = {cv}, program {prog}"
        );
    }
}

#[test]
fn streams_and_calls() {
    let mut g = Graph::new(&Target::custom(2, 1 << 16));
    let x = g.add_variable(DType::F32, &[4], "x");
    g.map_linearly(&x, 1).unwrap();
    let inc = add_const(&mut g, &x, 1.0, "inc");
    let f = g.add_function(Program::execute(inc));
    let sin = g.add_host_to_device_stream("in", DType::F32, 4).unwrap();
    let sout = g.add_device_to_host_stream("out", DType::F32, 4).unwrap();
    let prog = Program::repeat(
        3,
        Program::seq(vec![
            Program::stream_to_device(sin, &x),
            Program::call(f),
            Program::call(f),
            Program::stream_from_device(&x, sout),
        ]),
    );
    let mut e = engine(&g, &[prog]);
    e.connect_stream("in", (0..8).map(|i| i as f32).collect::<Vec<f32>>())
        .unwrap();
    e.run(0).unwrap();
    // Three chunks of four, wrapping round the 8-element host buffer: 0..4, 4..8, 0..4, each +2.
    let out: Vec<f32> = e.stream_output("out").unwrap();
    let want: Vec<f32> = [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3]
        .iter()
        .map(|&i| i as f32 + 2.0)
        .collect();
    assert_eq!(out, want);
}

#[test]
fn copies_through_views_and_between_tiles() {
    let mut g = Graph::new(&Target::custom(3, 1 << 16));
    let m = g.add_variable(DType::I32, &[3, 4], "m");
    g.map_linearly(&m, 1).unwrap();
    let t = g.add_variable(DType::I32, &[4, 3], "t");
    g.set_tile_mapping(&t, 2).unwrap();
    g.create_host_write("m", &m).unwrap();
    g.create_host_read("t", &t).unwrap();
    let prog = Program::copy(&m.transpose().unwrap(), &t);
    let rev = Program::copy(&t.reverse(1).unwrap(), &t);
    let mut e = engine(&g, &[prog, rev]);
    let data: Vec<i32> = (0..12).collect();
    e.write_tensor("m", &data).unwrap();
    e.run(0).unwrap();
    let tr: Vec<i32> = (0..4)
        .flat_map(|c| (0..3).map(move |r| r * 4 + c))
        .collect();
    assert_eq!(e.read_tensor::<i32>("t").unwrap(), tr);
    // An in-place reversal (source and destination overlap) behaves as if read first.
    e.run(1).unwrap();
    let rv: Vec<i32> = (0..4)
        .flat_map(|c| (0..3).rev().map(move |r| r * 4 + c))
        .collect();
    assert_eq!(e.read_tensor::<i32>("t").unwrap(), rv);
}

/// A compute phase right after an exchange must not be overlapped with it when it writes what
/// the exchange reads (a tempting engine optimisation): here the compute increments the very
/// tensor the copy's exchange reads, and the copy must still deliver the old values.
#[test]
fn a_copy_followed_by_a_compute_writing_its_source_sees_the_old_values() {
    let mut g = Graph::new(&Target::custom(2, 1 << 16));
    let a = g.add_variable(DType::F32, &[4], "a");
    let b = g.add_variable(DType::F32, &[4], "b");
    g.set_tile_mapping(&a, 0).unwrap();
    g.set_tile_mapping(&b, 1).unwrap();
    let one = g.add_constant(&[4], &[1.0f32; 4], "one").unwrap();
    g.set_tile_mapping(&one, 0).unwrap();
    let cs = g.add_compute_set("inc a");
    let v = g.add_vertex(cs, "AddInPlace<float>").unwrap();
    g.connect(v, "a", &a).unwrap();
    g.connect(v, "b", &one).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    g.create_host_read_write("a", &a).unwrap();
    g.create_host_read("b", &b).unwrap();
    codelets::link();
    let prog = Program::seq(vec![Program::copy(&a, &b), Program::execute(cs)]);
    let exe = compile(&g, &[prog], &CompileOptions::default()).unwrap();
    assert!(
        exe.describe_program(0)
            .contains("exchange 'copy'\n  0:0 16B -> 1:0\ncompute 'inc a'"),
        "{}",
        exe.describe_program(0)
    );
    for threads in [1, 2] {
        let mut e = Engine::new(&exe, EngineOptions::with_threads(threads)).unwrap();
        e.write_tensor("a", &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        e.run(0).unwrap();
        assert_eq!(
            e.read_tensor::<f32>("b").unwrap(),
            vec![1.0, 2.0, 3.0, 4.0],
            "{threads} thread(s)"
        );
        assert_eq!(e.read_tensor::<f32>("a").unwrap(), vec![2.0, 3.0, 4.0, 5.0]);
    }
}

#[test]
fn the_typed_add_vertex_names_the_same_codelet_as_its_name() {
    use poplar::codelet::Codelet;
    use poplar_testkit::vertices::Sum;
    assert_eq!(<Sum<'_> as Codelet>::NAME, "test::Sum");
    let mut g = Graph::new(&Target::custom(1, 1024));
    let cs = g.add_compute_set("cs");
    let v = g.add_vertex_of::<Sum>(cs).unwrap();
    let w = g.add_vertex(cs, Sum::NAME).unwrap();
    assert_ne!(v, w);
}
