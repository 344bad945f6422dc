//! Golden tests: small graphs in, the supersteps, exchanges and memory layout the compiler
//! produces out. Read each expected text as the specification of that case: they are in
//! `poplar-rs/compiler/tests/golden/<test>.txt`, written out in full. After an intended change
//! of the compiler's output, regenerate them with `UPDATE_GOLDEN=1 cargo test -p poplar-compiler
//! --test golden` and review the diff.
//!
//! Layout conventions these expectations follow: variables are placed in creation order at
//! 8-byte alignment from offset 0 of each tile, then vertex state; temporaries start above the
//! always-live area (after the reserved vertex descriptors and code).

use poplar::{compile, CompileOptions, DType, Graph, InPlaceConcat, Program, Target};

/// Compares `actual` with `tests/golden/<name>.txt` (see the module's documentation).
fn golden(name: &str, actual: &str) {
    poplar_testkit::golden(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden"),
        name,
        actual,
        "cargo test -p poplar-compiler --test golden",
    );
}

fn target(tiles: u32) -> Target {
    Target::custom(tiles, 64 * 1024)
}

fn build(g: &Graph, progs: &[Program]) -> poplar::Executable {
    poplar_testkit::link();
    compile(g, progs, &CompileOptions::default()).expect("compiles")
}

#[test]
fn local_vertex_needs_no_exchange_and_no_sync() {
    let mut g = Graph::new(&target(2));
    let x = g.add_variable(DType::F32, &[4], "x");
    let s = g.add_variable(DType::F32, &[1], "s");
    g.set_tile_mapping(&x, 0).unwrap();
    g.set_tile_mapping(&s, 0).unwrap();
    let cs = g.add_compute_set("sum");
    let v = g.add_vertex(cs, "test::Sum").unwrap();
    g.connect(v, "input", &x).unwrap();
    g.connect(v, "out", &s).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    let exe = build(&g, &[Program::execute(cs)]);
    // x at 0..16, s at 16..20: both fields bound in place.
    golden(
        "local_vertex_needs_no_exchange_and_no_sync",
        &exe.describe_program(0),
    );
}

#[test]
fn remote_input_is_received_into_a_buffer_after_a_sync() {
    let mut g = Graph::new(&target(2));
    let x = g.add_variable(DType::F32, &[4], "x");
    let s = g.add_variable(DType::F32, &[1], "s");
    g.set_tile_mapping(&x, 0).unwrap();
    g.set_tile_mapping(&s, 1).unwrap();
    let cs = g.add_compute_set("sum");
    let v = g.add_vertex(cs, "test::Sum").unwrap();
    g.connect(v, "input", &x).unwrap();
    g.connect(v, "out", &s).unwrap();
    g.set_tile_mapping(v, 1).unwrap();
    let exe = build(&g, &[Program::execute(cs)]);
    let t1 = &exe.tiles[1];
    let buf = t1.always_live_bytes.next_multiple_of(8);
    golden(
        "remote_input_is_received_into_a_buffer_after_a_sync",
        &exe.describe_program(0),
    );
    assert_eq!(t1.temporary_bytes, 16);
    assert_eq!(t1.memory_bytes, buf + 16);
}

#[test]
fn a_region_read_by_two_vertices_of_a_tile_is_fetched_once() {
    let mut g = Graph::new(&target(2));
    let x = g.add_variable(DType::F32, &[4], "x");
    let s = g.add_variable(DType::F32, &[2], "s");
    g.set_tile_mapping(&x, 0).unwrap();
    g.set_tile_mapping(&s, 1).unwrap();
    let cs = g.add_compute_set("sum");
    for i in 0..2 {
        let v = g.add_vertex(cs, "test::Sum").unwrap();
        g.connect(v, "input", &x).unwrap();
        g.connect(v, "out", &s.slice(i..i + 1).unwrap()).unwrap();
        g.set_tile_mapping(v, 1).unwrap();
    }
    let exe = build(&g, &[Program::execute(cs)]);
    let x_in = &exe.exchanges[poplar::exe::ExchangePhaseId::from_u32(0)];
    assert_eq!(x_in.transfers.len(), 1, "{:?}", x_in.transfers);
    assert_eq!(
        exe.tiles[1].temporary_bytes, 16,
        "one shared receive buffer"
    );
}

#[test]
fn overlapping_reads_fetch_only_the_new_part() {
    let mut g = Graph::new(&target(2));
    let x = g.add_variable(DType::F32, &[8], "x");
    let s = g.add_variable(DType::F32, &[2], "s");
    g.set_tile_mapping(&x, 0).unwrap();
    g.set_tile_mapping(&s, 1).unwrap();
    let cs = g.add_compute_set("sum");
    for (i, r) in [(0, 0..6), (1, 4..8)] {
        let v = g.add_vertex(cs, "test::Sum").unwrap();
        g.connect(v, "input", &x.slice(r).unwrap()).unwrap();
        g.connect(v, "out", &s.slice(i..i + 1).unwrap()).unwrap();
        g.set_tile_mapping(v, 1).unwrap();
    }
    let exe = build(&g, &[Program::execute(cs)]);
    let bytes: u32 = exe.exchanges[poplar::exe::ExchangePhaseId::from_u32(0)]
        .transfers
        .iter()
        .map(|t| t.bytes)
        .sum();
    assert_eq!(bytes, 32, "elements 0..8 cross the exchange once");
    let tc = &exe.computes[poplar::exe::ComputePhaseId::from_u32(0)].tiles[0];
    assert_eq!(
        tc.pre_copies.len(),
        1,
        "elements 4..6 are copied on-tile to the second buffer"
    );
    assert_eq!(tc.pre_copies[0].bytes, 8);
}

#[test]
fn same_region_to_several_tiles_is_one_broadcast() {
    let mut g = Graph::new(&target(4));
    let x = g.add_variable(DType::F32, &[4], "x");
    let s = g.add_variable(DType::F32, &[3], "s");
    g.set_tile_mapping(&x, 0).unwrap();
    let cs = g.add_compute_set("sum");
    for t in 1..4u32 {
        let si = s.slice(t as usize - 1..t as usize).unwrap();
        g.set_tile_mapping(&si, t).unwrap();
        let v = g.add_vertex(cs, "test::Sum").unwrap();
        g.connect(v, "input", &x).unwrap();
        g.connect(v, "out", &si).unwrap();
        g.set_tile_mapping(v, t).unwrap();
    }
    let exe = build(&g, &[Program::execute(cs)]);
    let ex = &exe.exchanges[poplar::exe::ExchangePhaseId::from_u32(0)];
    assert_eq!(ex.transfers.len(), 1);
    let dst_tiles: Vec<u32> = ex.transfers[0].dsts.iter().map(|d| d.0.as_u32()).collect();
    assert_eq!(dst_tiles, vec![1, 2, 3]);
    assert_eq!(ex.transfers[0].bytes, 16);
}

#[test]
fn adjacent_ranges_between_two_tiles_are_coalesced() {
    let mut g = Graph::new(&target(2));
    // Two variables placed back to back on tile 0 (16 B each, 8-byte aligned).
    let a = g.add_variable(DType::F32, &[4], "a");
    let b = g.add_variable(DType::F32, &[4], "b");
    let s = g.add_variable(DType::F32, &[1], "s");
    g.set_tile_mapping(&a, 0).unwrap();
    g.set_tile_mapping(&b, 0).unwrap();
    g.set_tile_mapping(&s, 1).unwrap();
    let cs = g.add_compute_set("sum");
    let v = g.add_vertex(cs, "test::Sum").unwrap();
    g.connect(v, "input", &poplar::concat(&[a, b]).unwrap())
        .unwrap();
    g.connect(v, "out", &s).unwrap();
    g.set_tile_mapping(v, 1).unwrap();
    let exe = build(&g, &[Program::execute(cs)]);
    let t = &exe.exchanges[poplar::exe::ExchangePhaseId::from_u32(0)].transfers;
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!((t[0].src_offset, t[0].bytes), (0, 32));
}

/// The cardiac pattern on three tiles: tile 1's local vector is `v[10..20]` (its own slice)
/// followed by halo slices of its neighbours, read by one vertex.
fn halo_graph(own_first: bool) -> (Graph, Program) {
    let mut g = Graph::new(&target(3));
    let v = g.add_variable(DType::F32, &[30], "v");
    for t in 0..3u32 {
        g.set_tile_mapping(&v.slice(t as usize * 10..t as usize * 10 + 10).unwrap(), t)
            .unwrap();
    }
    let s = g.add_variable(DType::F32, &[1], "s");
    g.set_tile_mapping(&s, 1).unwrap();
    let own = v.slice(10..20).unwrap();
    let halo = [v.slice(8..10).unwrap(), v.slice(20..23).unwrap()];
    let local = if own_first {
        poplar::concat(&[own, halo[0].clone(), halo[1].clone()]).unwrap()
    } else {
        poplar::concat(&[halo[0].clone(), halo[1].clone(), own]).unwrap()
    };
    let cs = g.add_compute_set("spmv");
    let vx = g.add_vertex(cs, "test::Sum").unwrap();
    g.connect(vx, "input", &local).unwrap();
    g.connect(vx, "out", &s).unwrap();
    g.set_tile_mapping(vx, 1).unwrap();
    (g, Program::execute(cs))
}

#[test]
fn halo_concat_is_bound_around_the_own_slice_and_receives_the_halo_beside_it() {
    let (g, prog) = halo_graph(true);
    let exe = build(&g, &[prog]);
    // Tile 1: v[10..20] at 0..40, 20 bytes of receive slack after it, s at 64. The halo is
    // received at 40 and 48, the field starts at v's own slice: no on-tile copy, no temporary.
    golden(
        "halo_concat_is_bound_around_the_own_slice_and_receives_the_halo_beside_it",
        &exe.describe_program(0),
    );
    let img = &exe.tiles[1];
    assert_eq!(img.temporary_bytes, 0);
    let slack = img
        .breakdown
        .iter()
        .find(|m| m.name == "v (receive slack)")
        .expect("slack listed in the memory report");
    assert_eq!(slack.bytes, 20);
}

#[test]
fn halo_before_the_own_slice_is_received_into_slack_before_it() {
    let (g, prog) = halo_graph(false);
    let exe = build(&g, &[prog]);
    // Tile 1: 20 bytes of slack rounded up to 24, then v[10..20] at 24..64, s at 64. The field
    // starts 20 bytes before v's slice, at 4.
    golden(
        "halo_before_the_own_slice_is_received_into_slack_before_it",
        &exe.describe_program(0),
    );
}

#[test]
fn without_in_place_concat_the_halo_concat_is_gathered_into_a_temporary() {
    let (g, prog) = halo_graph(true);
    poplar_testkit::link();
    let opts = CompileOptions {
        in_place_concat: InPlaceConcat::Never,
        ..Default::default()
    };
    let exe = compile(&g, &[prog], &opts).unwrap();
    golden(
        "without_in_place_concat_the_halo_concat_is_gathered_into_a_temporary",
        &exe.describe_program(0),
    );
    assert_eq!(exe.tiles[1].temporary_bytes, 60);
}

/// A ping-pong on tile 1: two variables, each read as `[own (2 elements), halo (3 from tile
/// 0)]` by its own compute set.
fn ping_pong_graph() -> (Graph, Vec<Program>) {
    let mut g = Graph::new(&target(2));
    let s = g.add_variable(DType::F32, &[2], "s");
    g.set_tile_mapping(&s, 1).unwrap();
    let mut progs = Vec::new();
    for (i, name) in ["a", "b"].into_iter().enumerate() {
        let v = g.add_variable(DType::F32, &[5], name);
        g.set_tile_mapping(&v.slice(0..3).unwrap(), 0).unwrap();
        g.set_tile_mapping(&v.slice(3..5).unwrap(), 1).unwrap();
        let local = poplar::concat(&[v.slice(3..5).unwrap(), v.slice(0..3).unwrap()]).unwrap();
        let cs = g.add_compute_set(name);
        let x = g.add_vertex(cs, "test::Sum").unwrap();
        g.connect(x, "input", &local).unwrap();
        g.connect(x, "out", &s.slice(i..i + 1).unwrap()).unwrap();
        g.set_tile_mapping(x, 1).unwrap();
        progs.push(Program::execute(cs));
    }
    (g, vec![Program::seq(progs)])
}

#[test]
fn by_default_slack_is_reserved_only_where_it_costs_no_more_than_the_temporaries() {
    // Two slacks of 12 B (24 B always-live) would replace one 20 B temporary shared by both
    // supersteps: by default tile 1 gathers; with `Always` it binds both in place.
    let (g, progs) = ping_pong_graph();
    let exe = build(&g, &progs);
    assert_eq!(exe.tiles[1].temporary_bytes, 20);
    assert!(
        exe.describe_program(0).contains("pre "),
        "own slices copied"
    );
    poplar_testkit::link();
    let always = CompileOptions {
        in_place_concat: InPlaceConcat::Always,
        ..Default::default()
    };
    let exe = compile(&g, &progs, &always).unwrap();
    assert_eq!(exe.tiles[1].temporary_bytes, 0);
    assert!(
        !exe.describe_program(0).contains("pre "),
        "no on-tile copies"
    );
    let slack: u32 = exe.tiles[1]
        .breakdown
        .iter()
        .filter(|m| m.name.ends_with("(receive slack)"))
        .map(|m| m.bytes)
        .sum();
    assert_eq!(slack, 24);
}

#[test]
fn two_concats_around_one_slice_in_one_superstep_do_not_share_its_slack() {
    // Two vertices on tile 1 read [own, different halo]: the slack is sized for the larger,
    // the first binds in place, the second (whose halo would overwrite the first's) is
    // gathered into a temporary.
    let mut g = Graph::new(&target(2));
    let v = g.add_variable(DType::F32, &[8], "v");
    g.set_tile_mapping(&v.slice(0..4).unwrap(), 0).unwrap();
    g.set_tile_mapping(&v.slice(4..8).unwrap(), 1).unwrap();
    let s = g.add_variable(DType::F32, &[2], "s");
    g.set_tile_mapping(&s, 1).unwrap();
    let own = v.slice(4..8).unwrap();
    let cs = g.add_compute_set("two");
    for (i, halo) in [0..1, 1..3].into_iter().enumerate() {
        let x = g.add_vertex(cs, "test::Sum").unwrap();
        let local = poplar::concat(&[own.clone(), v.slice(halo).unwrap()]).unwrap();
        g.connect(x, "input", &local).unwrap();
        g.connect(x, "out", &s.slice(i..i + 1).unwrap()).unwrap();
        g.set_tile_mapping(x, 1).unwrap();
    }
    let exe = build(&g, &[Program::execute(cs)]);
    // Tile 1: v[4..8] at 0..16, 8 bytes of slack, s at 24..32; the temporary above the
    // always-live area.
    golden(
        "two_concats_around_one_slice_in_one_superstep_do_not_share_its_slack",
        &exe.describe_program(0),
    );
}

#[test]
fn concat_around_a_slice_inside_its_segment_is_gathered() {
    // The local piece v[5..7] neither starts nor ends tile 1's segment v[4..8]: nothing can be
    // received beside it, so the field is gathered into a temporary as before.
    let mut g = Graph::new(&target(2));
    let v = g.add_variable(DType::F32, &[8], "v");
    g.set_tile_mapping(&v.slice(0..4).unwrap(), 0).unwrap();
    g.set_tile_mapping(&v.slice(4..8).unwrap(), 1).unwrap();
    let s = g.add_variable(DType::F32, &[1], "s");
    g.set_tile_mapping(&s, 1).unwrap();
    let local = poplar::concat(&[
        v.slice(0..1).unwrap(),
        v.slice(5..7).unwrap(),
        v.slice(1..2).unwrap(),
    ])
    .unwrap();
    let cs = g.add_compute_set("inner");
    let x = g.add_vertex(cs, "test::Sum").unwrap();
    g.connect(x, "input", &local).unwrap();
    g.connect(x, "out", &s).unwrap();
    g.set_tile_mapping(x, 1).unwrap();
    let exe = build(&g, &[Program::execute(cs)]);
    assert!(
        exe.tiles[1]
            .breakdown
            .iter()
            .all(|m| !m.name.contains("slack")),
        "{:?}",
        exe.tiles[1].breakdown
    );
    golden(
        "concat_around_a_slice_inside_its_segment_is_gathered",
        &exe.describe_program(0),
    );
}

#[test]
fn remote_output_is_sent_back_after_the_compute_phase() {
    let mut g = Graph::new(&target(2));
    let x = g.add_variable(DType::F32, &[4], "x");
    g.set_tile_mapping(&x, 0).unwrap();
    let cs = g.add_compute_set("inc");
    let v = g.add_vertex(cs, "test::Inc").unwrap();
    g.connect(v, "x", &x).unwrap();
    g.set_tile_mapping(v, 1).unwrap();
    let exe = build(&g, &[Program::execute(cs)]);
    golden(
        "remote_output_is_sent_back_after_the_compute_phase",
        &exe.describe_program(0),
    );
}

#[test]
fn copies_on_one_tile_need_no_sync_and_between_tiles_do() {
    let mut g = Graph::new(&target(2));
    let a = g.add_variable(DType::F32, &[4], "a");
    let b = g.add_variable(DType::F32, &[4], "b");
    let c = g.add_variable(DType::F32, &[4], "c");
    g.set_tile_mapping(&a, 0).unwrap();
    g.set_tile_mapping(&b, 0).unwrap();
    g.set_tile_mapping(&c, 1).unwrap();
    let exe = build(&g, &[Program::copy(&a, &b), Program::copy(&a, &c)]);
    golden(
        "copies_on_one_tile_need_no_sync_and_between_tiles_do",
        &exe.describe_program(0),
    );
    golden(
        "copies_on_one_tile_need_no_sync_and_between_tiles_do.program1",
        &exe.describe_program(1),
    );
}

#[test]
fn overlapping_copy_is_staged_through_temporaries() {
    let mut g = Graph::new(&target(1));
    let a = g.add_variable(DType::F32, &[5], "a");
    g.set_tile_mapping(&a, 0).unwrap();
    // Shift right by one: a[1..5] = a[0..4].
    let exe = build(
        &g,
        &[Program::copy(
            &a.slice(0..4).unwrap(),
            &a.slice(1..5).unwrap(),
        )],
    );
    golden(
        "overlapping_copy_is_staged_through_temporaries",
        &exe.describe_program(0),
    );
}

#[test]
fn transfers_between_chips_need_a_global_sync() {
    let t = Target {
        tiles_per_ipu: 2,
        bytes_per_tile: 64 * 1024,
        ..Target::gc200_multi(2)
    };
    let mut g = Graph::new(&t);
    let a = g.add_variable(DType::F32, &[4], "a");
    let b = g.add_variable(DType::F32, &[4], "b");
    let c = g.add_variable(DType::F32, &[4], "c");
    g.set_tile_mapping(&a, 0).unwrap();
    g.set_tile_mapping(&b, 1).unwrap();
    g.set_tile_mapping(&c, 2).unwrap();
    let exe = build(&g, &[Program::copy(&a, &b), Program::copy(&a, &c)]);
    assert!(exe.describe_program(0).starts_with("sync Internal\n"));
    assert!(exe.describe_program(1).starts_with("sync Global\n"));
}

#[test]
fn temporaries_of_different_supersteps_share_memory() {
    let mut g = Graph::new(&target(2));
    let x = g.add_variable(DType::F32, &[64], "x");
    let s = g.add_variable(DType::F32, &[2], "s");
    g.set_tile_mapping(&x, 0).unwrap();
    g.set_tile_mapping(&s, 1).unwrap();
    let mut progs = Vec::new();
    for i in 0..2 {
        let cs = g.add_compute_set(&format!("cs{i}"));
        let v = g.add_vertex(cs, "test::Sum").unwrap();
        g.connect(v, "input", &x.slice(i * 32..i * 32 + 32).unwrap())
            .unwrap();
        g.connect(v, "out", &s.slice(i..i + 1).unwrap()).unwrap();
        g.set_tile_mapping(v, 1).unwrap();
        progs.push(Program::execute(cs));
    }
    let exe = build(&g, &[Program::seq(progs)]);
    assert_eq!(
        exe.tiles[1].temporary_bytes, 128,
        "two 128 B receive buffers, live at different times"
    );
}

#[test]
fn a_body_repeated_zero_times_is_not_lowered() {
    // cs1 reads 256 B from tile 0 but only ever runs zero times: no exchange, no buffer.
    let mut g = Graph::new(&target(2));
    let x = g.add_variable(DType::F32, &[64], "x");
    let s = g.add_variable(DType::F32, &[2], "s");
    g.set_tile_mapping(&x, 0).unwrap();
    g.set_tile_mapping(&s, 1).unwrap();
    let mut execs = Vec::new();
    for (i, len) in [(0, 8), (1, 64)] {
        let cs = g.add_compute_set(&format!("cs{i}"));
        let v = g.add_vertex(cs, "test::Sum").unwrap();
        g.connect(v, "input", &x.slice(0..len).unwrap()).unwrap();
        g.connect(v, "out", &s.slice(i..i + 1).unwrap()).unwrap();
        g.set_tile_mapping(v, 1).unwrap();
        execs.push(Program::execute(cs));
    }
    let dead = Program::repeat(0, execs.pop().unwrap());
    let exe = build(&g, &[Program::seq(vec![execs.pop().unwrap(), dead])]);
    assert_eq!(
        exe.tiles[1].temporary_bytes, 32,
        "only cs0's 32 B receive buffer"
    );
    assert!(!exe.describe_program(0).contains("cs1"));
}

#[test]
fn memory_layout_of_a_tile() {
    let mut g = Graph::new(&target(1));
    let a = g.add_variable(DType::F32, &[3], "a"); // 0..12
    let b = g.add_variable(DType::Bool, &[3], "b"); // 16..19
    let c = g.add_constant::<u32>(&[2], &[7, 9], "c").unwrap(); // 24..32
    for t in [&a, &b, &c] {
        g.set_tile_mapping(t, 0).unwrap();
    }
    let cs = g.add_compute_set("scale");
    let v = g.add_vertex(cs, "test::Scale").unwrap();
    g.connect(v, "input", &a).unwrap();
    let out = g.add_variable(DType::F32, &[3], "out"); // 32..44
    g.set_tile_mapping(&out, 0).unwrap();
    g.connect(v, "out", &out).unwrap();
    g.set_vertex_state(v, "k", 2.0f32).unwrap(); // state at 48..52
    g.set_tile_mapping(v, 0).unwrap();
    let exe = build(&g, &[Program::execute(cs)]);
    golden("memory_layout_of_a_tile", &exe.describe_program(0));
    let t = &exe.tiles[0];
    // Descriptors: 8 + 3 fields x 4 = 20 B at 52..72; code: 512 B at 72..584.
    assert_eq!(t.always_live_bytes, 584);
    let init: Vec<(u32, usize)> = t.init.iter().map(|b| (b.offset, b.data.len())).collect();
    assert_eq!(init, vec![(24, 8), (48, 4)]);
}

/// The golden comparison itself fails on a difference (and does not rewrite the file unless
/// UPDATE_GOLDEN=1).
#[test]
#[should_panic(expected = "differs from the output at line 2")]
fn a_golden_mismatch_fails_with_the_line() {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        panic!("differs from the output at line 2 (skipped while blessing)");
    }
    golden(
        "local_vertex_needs_no_exchange_and_no_sync",
        "compute 'sum'\n  tile 0: test::Sum[0+4,20+1]\n",
    );
}
