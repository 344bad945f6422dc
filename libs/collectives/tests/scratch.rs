//! Collectives built with one `Scratch` share their send and receive buffers: two tensors
//! all-reduced, reduce-scattered and gathered one after the other give the same bits as with
//! buffers of their own, and the pool holds one set of buffers (as long as the longer
//! tensor's, per role), not one per collective.

use collectives::{Group, Op, Options, RingOrder, Scratch};
use poplar::program::Program;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph};

mod support;
use support::machine;

const R: u32 = 4;

/// Two tensors (`a`: 96 elements on tiles 0–1, `b`: 40 on tile 2) all-reduced, then
/// reduce-scattered in place and gathered back into `ga`, `gb`: with one pool, or each with
/// its own buffers. Returns the four results of every replica and the buffer bytes on tile 0.
fn run(shared: bool) -> (Vec<Vec<f32>>, u64) {
    collectives::link();
    let mut g = Graph::new_replicated(&machine(R), R, 1).unwrap();
    let mut vars = Vec::new();
    for (name, n, tiles) in [
        ("a", 96, [0, 1]),
        ("b", 40, [2, 2]),
        ("ga", 96, [0, 1]),
        ("gb", 40, [2, 2]),
    ] {
        let t = g.add_variable(DType::F32, &[n], name);
        g.set_tile_mapping(&t.slice(0..n / 2).unwrap(), tiles[0])
            .unwrap();
        g.set_tile_mapping(&t.slice(n / 2..n).unwrap(), tiles[1])
            .unwrap();
        g.create_host_read_write(name, &t).unwrap();
        vars.push(t);
    }
    let o = Options {
        ring_order: RingOrder::Sequential,
        ..Options::default()
    };
    // Shared: every collective takes its buffers from one pool.
    let o = if shared {
        o.with_scratch(&Scratch::new("pool"))
    } else {
        o
    };
    let mut progs = Vec::new();
    for (k, (src, dst)) in [(0, 2), (1, 3)].into_iter().enumerate() {
        let t = &vars[src];
        let name = format!("c{k}");
        let ar = collectives::all_reduce_in_place(
            &mut g,
            std::slice::from_ref(t),
            Op::Add,
            Group::All,
            &o,
            &name,
        );
        progs.push(ar.unwrap().program);
        let rs = collectives::reduce_scatter_in_place(&mut g, t, Op::Add, Group::All, &o, &name)
            .unwrap();
        progs.push(rs.program);
        let ag =
            collectives::all_gather_to(&mut g, &rs.outputs[0], &vars[dst], Group::All, &o, &name);
        progs.push(ag.unwrap().program);
    }
    let exe = compile(&g, &[Program::seq(progs)], &CompileOptions::default()).unwrap();
    let buffers: u64 = exe.tiles[0]
        .breakdown
        .iter()
        .filter(|i| i.name.contains("send") || i.name.contains("recv") || i.name.contains("result"))
        .map(|i| u64::from(i.bytes))
        .sum();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(1)).unwrap();
    for (name, n) in [("a", 96usize), ("b", 40)] {
        let v: Vec<f32> = (0..n * R as usize)
            .map(|i| (i as f32 * 0.37).sin())
            .collect();
        e.write_tensor_all_replicas(name, &v).unwrap();
    }
    e.run(0).unwrap();
    let out = ["a", "b", "ga", "gb"]
        .iter()
        .map(|n| e.read_tensor_all_replicas::<f32>(n).unwrap())
        .collect();
    (out, buffers)
}

#[test]
fn a_shared_pool_gives_the_same_bits_with_one_set_of_buffers() {
    let (own, own_bytes) = run(false);
    let (shared, shared_bytes) = run(true);
    for (k, (a, b)) in own.iter().zip(&shared).enumerate() {
        assert!(
            a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
            "result {k} differs"
        );
    }
    // Three collectives over tensor `a` on tile 0: the pool keeps the union of their roles'
    // buffers (the all-reduce's chains differ from the one-way reduce-scatter's), at most
    // half of what they hold on their own (measured: 436 B against 876 B).
    assert!(shared_bytes > 0);
    assert!(
        2 * shared_bytes <= own_bytes,
        "{shared_bytes} B pooled against {own_bytes} B own"
    );
}

/// A reduce-scatter or all-gather into new tensors would return buffers of the pool, which the
/// next collective overwrites: both refuse the option, naming it and the call.
#[test]
fn the_collectives_into_new_tensors_refuse_a_pool() {
    collectives::link();
    let mut g = Graph::new_replicated(&machine(R), R, 1).unwrap();
    let t = g.add_variable(DType::F32, &[16], "t");
    g.set_tile_mapping(&t, 0).unwrap();
    let o = Options::default().with_scratch(&Scratch::new("pool"));
    let rs = collectives::reduce_scatter(
        &mut g,
        std::slice::from_ref(&t),
        Op::Add,
        Group::All,
        &o,
        "rs",
    );
    let ag = collectives::all_gather(&mut g, std::slice::from_ref(&t), Group::All, &o, "ag");
    for (e, call) in [
        (rs.unwrap_err(), "reduce_scatter"),
        (ag.unwrap_err(), "all_gather"),
    ] {
        let text = e.to_string();
        assert!(
            matches!(e, collectives::CollectiveError::BadInputs { .. })
                && text.contains("Options::scratch")
                && text.contains(call),
            "{text}"
        );
    }
    // Without the pool both build.
    let own = Options::default();
    assert!(collectives::reduce_scatter(
        &mut g,
        std::slice::from_ref(&t),
        Op::Add,
        Group::All,
        &own,
        "r"
    )
    .is_ok());
    assert!(
        collectives::all_gather(&mut g, std::slice::from_ref(&t), Group::All, &own, "a").is_ok()
    );
}
