//! The reduce-scatter in place and the all-gather into a destination against the host model:
//! replica counts 1 to 8, every group kind, the one-way methods, sizes not divisible by the
//! group (the zero padding never leaks), tensors in one piece (GCL's element order with the
//! sequential ring) or spread over tiles (each piece's run at the ring position); no
//! full-size staging buffer; bad requests are typed errors.

use std::ops::Range;

use collectives::{reference, CollectiveError, Group, Method, Op, Options, Plan, RingOrder};
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Tensor};

mod support;
use support::{machine, Rng};

const ONE_WAY: [Method; 4] = [
    Method::Auto,
    Method::Clockwise,
    Method::Anticlockwise,
    Method::MeetInTheMiddle,
];

/// The groups that divide `r` replicas.
fn groups(r: u32) -> Vec<Group> {
    let mut v = vec![Group::All];
    if r >= 4 {
        v.extend([Group::Consecutive(2), Group::Orthogonal(2)]);
    }
    v
}

/// A call on `n` elements of `dtype` on every replica of `replicas`.
#[derive(Clone, Copy)]
struct Call {
    replicas: u32,
    n: usize,
    /// Over all tiles (several pieces) or on tile 0 (one piece).
    spread: bool,
    dtype: DType,
    group: Group,
    method: Method,
    order: RingOrder,
}

impl Call {
    fn graph(&self) -> (Graph, Tensor, Vec<Range<usize>>) {
        collectives::link();
        let mut g = Graph::new_replicated(&machine(self.replicas), self.replicas, 1).unwrap();
        let t = g.add_variable(self.dtype, &[self.n], "t");
        if self.spread {
            let tiles = g.target().num_tiles();
            g.map_linearly_over(&t, 1, 0..tiles).unwrap();
        } else {
            g.set_tile_mapping(&t, 0).unwrap();
        }
        g.create_host_read_write("t", &t).unwrap();
        let pieces = g.tile_mapping(&t).unwrap().into_iter().flatten().collect();
        (g, t, pieces)
    }

    fn opts(&self) -> Options {
        Options {
            method: self.method,
            ring_order: self.order,
            ..Default::default()
        }
    }

    fn gsz(&self) -> usize {
        self.group.size(self.replicas).unwrap() as usize
    }
}

/// Random values of `dtype` as the device's and as f64, per replica.
fn values(dtype: DType, r: usize, n: usize, rng: &mut Rng) -> Vec<Vec<f64>> {
    (0..r)
        .map(|_| {
            (0..n)
                .map(|_| match dtype {
                    DType::F32 => f64::from(rng.f32()),
                    _ => ((rng.next() % 19) as i32 - 9).into(),
                })
                .collect()
        })
        .collect()
}

fn write(e: &mut Engine, name: &str, dtype: DType, v: &[Vec<f64>]) {
    let flat: Vec<f64> = v.concat();
    match dtype {
        DType::F32 => {
            let x: Vec<f32> = flat.iter().map(|&x| x as f32).collect();
            e.write_tensor_all_replicas(name, &x).unwrap();
        }
        _ => {
            let x: Vec<i32> = flat.iter().map(|&x| x as i32).collect();
            e.write_tensor_all_replicas(name, &x).unwrap();
        }
    }
}

fn read(e: &Engine, name: &str, dtype: DType, r: usize) -> Vec<Vec<f64>> {
    let all: Vec<f64> = match dtype {
        DType::F32 => e
            .read_tensor_all_replicas::<f32>(name)
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect(),
        _ => e
            .read_tensor_all_replicas::<i32>(name)
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect(),
    };
    all.chunks(all.len() / r).map(<[f64]>::to_vec).collect()
}

/// The ring position of replica `m` in its group.
fn position(plan: &Plan, m: u32) -> usize {
    plan.rings
        .iter()
        .find_map(|ring| ring.iter().position(|&x| x == m))
        .expect("every replica is in a ring")
}

/// Run `q` of a piece of `len` elements split in `gsz` runs: its range in the piece.
fn run_of(len: usize, gsz: usize, q: usize) -> Range<usize> {
    let w = len.div_ceil(gsz);
    (q * w).min(len)..((q + 1) * w).min(len)
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!(
            (a - b).abs() <= tol,
            "{what}: element {i}: got {a}, want {b}"
        );
    }
}

/// Runs `reduce_scatter_in_place` and checks each replica's share against the host model.
fn check_reduce_scatter(c: Call, op: Op, seed: u64) {
    let (mut g, t, pieces) = c.graph();
    let col =
        collectives::reduce_scatter_in_place(&mut g, &t, op, c.group, &c.opts(), "rs").unwrap();
    g.create_host_read("share", &col.outputs[0]).unwrap();
    let exe = compile(&g, &[col.program], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
    let r = c.replicas as usize;
    let ins = values(c.dtype, r, c.n, &mut Rng::new(seed));
    // Twice: the second run starts with the buffers the first left (the padding is zeroed
    // on every run, not only found zero in fresh memory).
    for _ in 0..2 {
        write(&mut e, "t", c.dtype, &ins);
        e.run(0).unwrap();
    }
    let got = read(&e, "share", c.dtype, r);
    let reduced = reference::all_reduce(&ins, op, c.group).unwrap();
    let gsz = c.gsz();
    let tol = if c.dtype == DType::F32 {
        4.0 * gsz as f64 * 2.25 * f64::from(f32::EPSILON)
    } else {
        0.0
    };
    let what = |m: usize| {
        format!(
            "{op:?} {:?} {:?} {:?} R={} n={} spread={}: replica {m}",
            c.group, c.method, c.order, c.replicas, c.n, c.spread
        )
    };
    for m in 0..r {
        let q = position(&col.plan, m as u32);
        let mut want = Vec::new();
        for p in &pieces {
            let run = run_of(p.len(), gsz, q);
            let slice = &reduced[m][p.start + run.start..p.start + run.end];
            want.extend_from_slice(slice);
            want.resize(want.len() + p.len().div_ceil(gsz) - run.len(), 0.0);
        }
        assert_close(&got[m], &want, tol, &what(m));
    }
    if !c.spread && c.order == RingOrder::Sequential {
        // One piece and ring position = index in the group: GCL's element order.
        let gcl = reference::reduce_scatter(&ins, op, c.group).unwrap();
        for m in 0..r {
            assert_close(&got[m], &gcl[m], tol, &what(m));
        }
    }
}

/// Runs `all_gather_to` and checks the destination against the host model; the shares'
/// padding holds 1000 + its index, which must never reach the destination.
fn check_all_gather(c: Call, seed: u64) {
    let (mut g, dest, pieces) = c.graph();
    let gsz = c.gsz();
    let share: usize = pieces.iter().map(|p| p.len().div_ceil(gsz)).sum();
    let input = g.add_variable(c.dtype, &[share], "input");
    g.set_tile_mapping(&input, 1).unwrap();
    g.create_host_write("input", &input).unwrap();
    let col = collectives::all_gather_to(&mut g, &input, &dest, c.group, &c.opts(), "ag").unwrap();
    assert_eq!(col.outputs, vec![dest.clone()]);
    let exe = compile(&g, &[col.program], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
    let r = c.replicas as usize;
    let mut ins = values(c.dtype, r, share, &mut Rng::new(seed));
    for (m, v) in ins.iter_mut().enumerate() {
        let q = position(&col.plan, m as u32);
        let mut at = 0;
        for p in &pieces {
            let w = p.len().div_ceil(gsz);
            for (i, x) in v[at + run_of(p.len(), gsz, q).len()..at + w]
                .iter_mut()
                .enumerate()
            {
                *x = 1000.0 + i as f64;
            }
            at += w;
        }
    }
    write(&mut e, "input", c.dtype, &ins);
    write(&mut e, "t", c.dtype, &vec![vec![-77.0; c.n]; r]);
    e.run(0).unwrap();
    let got = read(&e, "t", c.dtype, r);
    for m in 0..r {
        let members = c
            .group
            .members(c.replicas)
            .unwrap()
            .into_iter()
            .find(|g| g.contains(&(m as u32)))
            .unwrap();
        let mut want = vec![0.0; c.n];
        for &o in &members {
            let q = position(&col.plan, o);
            let mut at = 0;
            for p in &pieces {
                let run = run_of(p.len(), gsz, q);
                want[p.start + run.start..p.start + run.end]
                    .copy_from_slice(&ins[o as usize][at..at + run.len()]);
                at += p.len().div_ceil(gsz);
            }
        }
        let what = format!(
            "{:?} {:?} {:?} R={} n={} spread={}: replica {m}",
            c.group, c.method, c.order, c.replicas, c.n, c.spread
        );
        assert_close(&got[m], &want, 0.0, &what);
        if !c.spread && c.order == RingOrder::Sequential {
            let gcl = reference::all_gather(&ins, c.group).unwrap();
            assert_close(&got[m], &gcl[m][..c.n], 0.0, &what);
        }
    }
}

fn calls(replicas: u32) -> Vec<Call> {
    let mut v = Vec::new();
    for group in groups(replicas) {
        for method in ONE_WAY {
            for (n, spread) in [(13, false), (64, false), (3, false), (37, true)] {
                for order in [RingOrder::Sequential, RingOrder::Auto] {
                    v.push(Call {
                        replicas,
                        n,
                        spread,
                        dtype: DType::I32,
                        group,
                        method,
                        order,
                    });
                }
            }
        }
    }
    v
}

#[test]
fn reduce_scatter_in_place_matches_the_host_model() {
    for replicas in [1, 2, 4, 8] {
        for c in calls(replicas) {
            check_reduce_scatter(c, Op::Add, 7 + u64::from(replicas));
        }
    }
}

#[test]
fn reduce_scatter_in_place_with_every_operator() {
    let base = Call {
        replicas: 4,
        n: 10,
        spread: false,
        dtype: DType::F32,
        group: Group::All,
        method: Method::Clockwise,
        order: RingOrder::Sequential,
    };
    for op in [
        Op::Add,
        Op::Mean,
        Op::Mul,
        Op::Min,
        Op::Max,
        Op::SquareAdd,
        Op::Local,
    ] {
        for method in [Method::Clockwise, Method::MeetInTheMiddle] {
            check_reduce_scatter(Call { method, ..base }, op, 3);
            check_reduce_scatter(
                Call {
                    method,
                    spread: true,
                    n: 41,
                    ..base
                },
                op,
                5,
            );
        }
    }
}

#[test]
fn all_gather_to_matches_the_host_model() {
    for replicas in [1, 2, 4, 8] {
        for c in calls(replicas) {
            check_all_gather(c, 11 + u64::from(replicas));
            check_all_gather(
                Call {
                    dtype: DType::F32,
                    ..c
                },
                13,
            );
        }
    }
}

/// Bytes on tile 0 of the variables named `prefix…`.
fn bytes_named(exe: &poplar::Executable, prefix: &str) -> u64 {
    exe.tiles[0]
        .breakdown
        .iter()
        .filter(|i| i.name.starts_with(prefix))
        .map(|i| u64::from(i.bytes))
        .sum()
}

#[test]
fn no_full_size_copy_is_staged() {
    collectives::link();
    let n = 800;
    let mut g = Graph::new_replicated(&machine(8), 8, 1).unwrap();
    let t = g.add_variable(DType::F32, &[n], "t");
    g.set_tile_mapping(&t, 0).unwrap();
    let o = Options::default();
    let rs = collectives::reduce_scatter_in_place(&mut g, &t, Op::Add, Group::All, &o, "rs");
    let share = rs.unwrap();
    let ag = collectives::all_gather_to(&mut g, &share.outputs[0], &t, Group::All, &o, "ag");
    let staged = collectives::reduce_scatter(
        &mut g,
        std::slice::from_ref(&t),
        Op::Add,
        Group::All,
        &o,
        "st",
    );
    let programs = [share.program, ag.unwrap().program, staged.unwrap().program];
    let exe = compile(&g, &programs, &CompileOptions::default()).unwrap();
    let full = 4 * n as u64;
    // Buffers of one share (100 elements: 400 B) each, a few of them (meet in the middle has
    // two chains and a result), and step counters: less than the data, none of its size.
    for name in ["rs/", "ag/"] {
        let b = bytes_named(&exe, name);
        assert!(b < full, "{name}: {b} B of buffers for {full} B of data");
        let big = exe.tiles[0]
            .breakdown
            .iter()
            .find(|i| i.name.starts_with(name) && u64::from(i.bytes) > full / 4);
        assert!(big.is_none(), "{big:?}");
    }
    // The staged reduce-scatter holds a copy of the whole vector.
    assert!(bytes_named(&exe, "st/") >= full);
}

#[test]
fn bad_requests_are_typed_errors() {
    collectives::link();
    let mut g = Graph::new_replicated(&machine(4), 4, 1).unwrap();
    let f = g.add_variable(DType::F32, &[10], "f");
    let i = g.add_variable(DType::I32, &[3], "i");
    let b = g.add_variable(DType::Bool, &[10], "b");
    let short = g.add_variable(DType::F32, &[2], "short");
    let un = g.add_variable(DType::F32, &[10], "unmapped");
    for t in [&f, &i, &b, &short] {
        g.set_tile_mapping(t, 0).unwrap();
    }
    let o = Options::default();
    let pair = Options {
        method: Method::BidirectionalRingPair,
        ..o.clone()
    };
    let rs = |g: &mut Graph, t: &Tensor, op, group, o: &Options| {
        collectives::reduce_scatter_in_place(g, t, op, group, o, "x").unwrap_err()
    };
    assert!(matches!(
        rs(&mut g, &b, Op::Add, Group::All, &o),
        CollectiveError::OpType { .. }
    ));
    assert!(matches!(
        rs(&mut g, &i, Op::Mean, Group::All, &o),
        CollectiveError::OpType { .. }
    ));
    assert!(matches!(
        rs(&mut g, &un, Op::Add, Group::All, &o),
        CollectiveError::Unmapped { index: 0, .. }
    ));
    assert!(matches!(
        rs(&mut g, &f, Op::Add, Group::Consecutive(3), &o),
        CollectiveError::GroupSize { .. }
    ));
    assert!(matches!(
        rs(&mut g, &f, Op::Add, Group::All, &pair),
        CollectiveError::BadInputs { .. }
    ));
    let ag = |g: &mut Graph, src: &Tensor, dst: &Tensor, o: &Options| {
        collectives::all_gather_to(g, src, dst, Group::All, o, "x").unwrap_err()
    };
    // A share of 10 elements over 4 replicas is 3 elements.
    match ag(&mut g, &short, &f, &o) {
        CollectiveError::BadInputs { reason, .. } => assert!(reason.contains("is 3"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        ag(&mut g, &i, &f, &o),
        CollectiveError::MixedTypes { index: 1, .. }
    ));
    assert!(matches!(
        ag(&mut g, &short, &un, &o),
        CollectiveError::Unmapped { index: 1, .. }
    ));
    assert!(matches!(
        ag(&mut g, &un, &f, &o),
        CollectiveError::Unmapped { index: 0, .. }
    ));
    let three = g.add_variable(DType::F32, &[3], "three");
    g.set_tile_mapping(&three, 0).unwrap();
    assert!(matches!(
        ag(&mut g, &three, &f, &pair),
        CollectiveError::BadInputs { .. }
    ));
}

/// f16 (zeroed by copies, there is no `Fill<half>`): each ring step rounds, in the order of
/// `reference::all_reduce_f16_ring` over the tensor's pieces; run twice, bit for bit, the
/// padding zero. Then the shares gathered back into the tensor give the all-reduce.
#[test]
fn half_precision_reduce_scatter_in_place_rounds_in_ring_order() {
    use poplar::f16;
    for (replicas, method, n) in [
        (4, Method::Clockwise, 13),
        (4, Method::MeetInTheMiddle, 13),
        (8, Method::Anticlockwise, 21),
        (8, Method::MeetInTheMiddle, 5),
    ] {
        let c = Call {
            replicas,
            n,
            spread: false,
            dtype: DType::F16,
            group: Group::All,
            method,
            order: RingOrder::Sequential,
        };
        let (mut g, t, pieces) = c.graph();
        let o = c.opts();
        let rs =
            collectives::reduce_scatter_in_place(&mut g, &t, Op::Add, c.group, &o, "rs").unwrap();
        g.create_host_read("share", &rs.outputs[0]).unwrap();
        let ag = collectives::all_gather_to(&mut g, &rs.outputs[0], &t, c.group, &o, "ag");
        let programs = [rs.program.clone(), ag.unwrap().program];
        let exe = compile(&g, &programs, &CompileOptions::default()).unwrap();
        let mut e = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
        let r = replicas as usize;
        let mut rng = Rng::new(u64::from(replicas) * 31 + n as u64);
        let v: Vec<f16> = (0..r * n).map(|_| f16::from_f32(rng.f32())).collect();
        let ins: Vec<Vec<f16>> = v.chunks(n).map(<[f16]>::to_vec).collect();
        for _ in 0..2 {
            e.write_tensor_all_replicas("t", &v).unwrap();
            e.run(0).unwrap();
        }
        let layout = reference::Layout::InPlace(pieces);
        let want = reference::all_reduce_f16_ring(
            &ins,
            Op::Add,
            c.group,
            &rs.plan.rings,
            rs.plan.method,
            &layout,
        )
        .unwrap();
        let got = e.read_tensor_all_replicas::<f16>("share").unwrap();
        let w = n.div_ceil(r);
        let bits = |x: &[f16]| x.iter().map(|h| h.to_bits()).collect::<Vec<_>>();
        for m in 0..r {
            let mut share = want[m][run_of(n, r, m)].to_vec();
            share.resize(w, f16::ZERO);
            assert_eq!(
                bits(&got[m * w..(m + 1) * w]),
                bits(&share),
                "{method:?} replica {m}"
            );
        }
        e.run(1).unwrap();
        let all = e.read_tensor_all_replicas::<f16>("t").unwrap();
        for m in 0..r {
            assert_eq!(
                bits(&all[m * n..(m + 1) * n]),
                bits(&want[m]),
                "{method:?} gathered {m}"
            );
        }
    }
}
