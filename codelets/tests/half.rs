//! Half precision: the f16 codelets against an f64 host reference, and stochastic rounding.

use poplar::{
    compile, f16, f16_from_f64, CompileOptions, DType, Engine, EngineOptions, Graph, Program,
    Target,
};

const N: usize = 256;
const TILES: u32 = 4;

/// f16 values over several binades, both signs (a deterministic pattern).
fn halves(seed: u32) -> Vec<f16> {
    (0..N as u32)
        .map(|i| {
            let k = i
                .wrapping_mul(2_654_435_761)
                .wrapping_add(seed.wrapping_mul(40_503));
            let mag = 1.0 + (k % 1000) as f32 / 1000.0;
            let exp = (k / 1000 % 9) as i32 - 4;
            let sign = if k % 3 == 0 { -1.0 } else { 1.0 };
            f16::from_f32(sign * mag * 2f32.powi(exp))
        })
        .collect()
}

fn target() -> Target {
    Target::custom(TILES, 64 * 1024)
}

/// Runs `codelet` with `fields` (name, tensor dtype, length) over four tiles, one vertex each
/// over a quarter of every vector field; returns the engine after one run.
fn run_binary(codelet: &str, x: &[f16], y: &[f16], options: EngineOptions) -> Vec<f16> {
    codelets::link();
    let mut g = Graph::new(&target());
    let [a, b, out] = ["a", "b", "out"].map(|n| g.add_variable(DType::F16, &[N], n));
    g.create_host_write("a", &a).unwrap();
    g.create_host_write("b", &b).unwrap();
    g.create_host_read("out", &out).unwrap();
    let cs = g.add_compute_set(codelet);
    for t in 0..TILES {
        let r = t as usize * N / 4..(t as usize + 1) * N / 4;
        for v in [&a, &b, &out] {
            g.set_tile_mapping(&v.slice(r.clone()).unwrap(), t).unwrap();
        }
        let v = g.add_vertex(cs, codelet).unwrap();
        g.connect(v, "in1", &a.slice(r.clone()).unwrap()).unwrap();
        g.connect(v, "in2", &b.slice(r.clone()).unwrap()).unwrap();
        g.connect(v, "out", &out.slice(r).unwrap()).unwrap();
        g.set_tile_mapping(v, t).unwrap();
    }
    let exe = compile(&g, &[Program::execute(cs)], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, options).unwrap();
    e.write_tensor("a", x).unwrap();
    e.write_tensor("b", y).unwrap();
    e.run(0).unwrap();
    e.read_tensor("out").unwrap()
}

#[test]
fn binary_f16_codelets_are_correctly_rounded() {
    let (x, y) = (halves(1), halves(2));
    type Op = fn(f64, f64) -> f64;
    let ops: [(&str, Op); 5] = [
        ("Add<half>", |a, b| a + b),
        ("Sub<half>", |a, b| a - b),
        ("Mul<half>", |a, b| a * b),
        ("Max<half>", f64::max),
        ("Min<half>", f64::min),
    ];
    for (name, op) in ops {
        let got = run_binary(name, &x, &y, EngineOptions::with_threads(2));
        // The exact result in f64, rounded once to f16 (ties to even): the tolerance is half an
        // f16 ulp, which for correctly rounded results means equality.
        let want: Vec<f16> = x
            .iter()
            .zip(&y)
            .map(|(a, b)| f16_from_f64(op(a.to_f64(), b.to_f64())))
            .collect();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn scaled_add_reduce_and_dot_in_half_against_f64() {
    codelets::link();
    let (x, y) = (halves(3), halves(4));
    let mut g = Graph::new(&target());
    let a = g.add_variable(DType::F16, &[N], "a");
    let b = g.add_variable(DType::F16, &[N], "b");
    let sum = g.add_variable(DType::F32, &[], "sum");
    let dot = g.add_variable(DType::F32, &[], "dot");
    for t in [&a, &b, &sum, &dot] {
        g.set_tile_mapping(t, 1).unwrap();
    }
    g.create_host_read_write("a", &a).unwrap();
    g.create_host_write("b", &b).unwrap();
    g.create_host_read("sum", &sum).unwrap();
    g.create_host_read("dot", &dot).unwrap();
    let reduce = g.add_compute_set("reduce and dot");
    let v = g.add_vertex(reduce, "ReduceSum<half>").unwrap();
    g.connect(v, "input", &a).unwrap();
    g.connect(v, "out", &sum).unwrap();
    g.set_tile_mapping(v, 1).unwrap();
    let v = g.add_vertex(reduce, "Dot<half>").unwrap();
    g.connect(v, "a", &a).unwrap();
    g.connect(v, "b", &b).unwrap();
    g.connect(v, "out", &dot).unwrap();
    g.set_tile_mapping(v, 1).unwrap();
    let axpy = g.add_compute_set("scaled add");
    let v = g.add_vertex(axpy, "ScaledAdd<half>").unwrap();
    g.connect(v, "a", &a).unwrap();
    g.connect(v, "b", &b).unwrap();
    g.set_vertex_state(v, "scale", 0.3f32).unwrap();
    g.set_tile_mapping(v, 1).unwrap();
    let prog = Program::seq(vec![Program::execute(reduce), Program::execute(axpy)]);
    let exe = compile(&g, &[prog], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::default()).unwrap();
    e.write_tensor("a", &x).unwrap();
    e.write_tensor("b", &y).unwrap();
    e.run(0).unwrap();

    // Sums in f32 of n terms: |error| <= n · 2^-24 · Σ|terms| (each addition rounds once).
    let bound =
        |terms: &[f64]| N as f64 * 2f64.powi(-24) * terms.iter().map(|t| t.abs()).sum::<f64>();
    let xs: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
    let prods: Vec<f64> = x
        .iter()
        .zip(&y)
        .map(|(a, b)| a.to_f64() * b.to_f64())
        .collect();
    let sum_dev = f64::from(e.read_tensor::<f32>("sum").unwrap()[0]);
    let dot_dev = f64::from(e.read_tensor::<f32>("dot").unwrap()[0]);
    assert!(
        (sum_dev - xs.iter().sum::<f64>()).abs() <= bound(&xs),
        "sum {sum_dev}"
    );
    assert!(
        (dot_dev - prods.iter().sum::<f64>()).abs() <= bound(&prods),
        "dot {dot_dev}"
    );

    // a + 0.3 b: one f16 rounding of an f32 result, so within one f16 ulp of the exact value
    // rounded to f16 (half an ulp for the final rounding, plus f32's error, far below half an
    // ulp, which can move a result across a tie).
    let got: Vec<f16> = e.read_tensor("a").unwrap();
    for i in 0..N {
        let exact = f16_from_f64(x[i].to_f64() + f64::from(0.3f32) * y[i].to_f64());
        let ulps = (i32::from(got[i].to_bits() as i16) - i32::from(exact.to_bits() as i16)).abs();
        assert!(ulps <= 1, "element {i}: {} vs {}", got[i], exact);
    }
}

/// `Cast<float,half>` of `xs` over four tiles; returns the engine so it can run again.
fn cast_engine(options: EngineOptions) -> Engine {
    codelets::link();
    let mut g = Graph::new(&target());
    let input = g.add_variable(DType::F32, &[N * 16], "x");
    let out = g.add_variable(DType::F16, &[N * 16], "h");
    g.create_host_write("x", &input).unwrap();
    g.create_host_read("h", &out).unwrap();
    let cs = g.add_compute_set("cast");
    let q = N * 16 / TILES as usize;
    for t in 0..TILES {
        let r = t as usize * q..(t as usize + 1) * q;
        g.set_tile_mapping(&input.slice(r.clone()).unwrap(), t)
            .unwrap();
        g.set_tile_mapping(&out.slice(r.clone()).unwrap(), t)
            .unwrap();
        let v = g.add_vertex(cs, "Cast<float,half>").unwrap();
        g.connect(v, "input", &input.slice(r.clone()).unwrap())
            .unwrap();
        g.connect(v, "out", &out.slice(r).unwrap()).unwrap();
        g.set_tile_mapping(v, t).unwrap();
    }
    let exe = compile(&g, &[Program::execute(cs)], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, options).unwrap();
    // A quarter of the way from 1 to the next f16 (1 + 2^-10).
    e.write_tensor("x", &vec![1.0f32 + 2f32.powi(-12); N * 16])
        .unwrap();
    e
}

fn cast(e: &mut Engine) -> Vec<u16> {
    e.run(0).unwrap();
    e.read_tensor::<f16>("h")
        .unwrap()
        .iter()
        .map(|h| h.to_bits())
        .collect()
}

fn sr(seed: u64, threads: usize) -> EngineOptions {
    EngineOptions {
        stochastic_rounding: Some(seed),
        ..EngineOptions::with_threads(threads)
    }
}

#[test]
fn stochastic_rounding_is_unbiased_and_reproducible() {
    let x = 1.0f64 + 2f64.powi(-12);
    let one = f16::from_f32(1.0).to_bits();
    // To nearest: every value rounds down to 1.
    let nearest = cast(&mut cast_engine(EngineOptions::with_threads(2)));
    assert!(nearest.iter().all(|&b| b == one));

    let mut e = cast_engine(sr(7, 2));
    let first = cast(&mut e);
    // Unbiased: the mean of the rounded values is x within 5 standard deviations of a
    // Binomial(n, 1/4) count of round-ups, each worth one f16 ulp (2^-10).
    let n = first.len() as f64;
    let ups = first.iter().filter(|&&b| b == one + 1).count() as f64;
    assert!(first.iter().all(|&b| b == one || b == one + 1));
    let mean = 1.0 + ups / n * 2f64.powi(-10);
    let sigma = (n * 0.25 * 0.75).sqrt() / n * 2f64.powi(-10);
    assert!(
        (mean - x).abs() < 5.0 * sigma,
        "mean {mean}, x {x}, sigma {sigma}"
    );

    // The same seed gives the same bits, on any number of threads; each run draws anew.
    let second = cast(&mut e);
    assert_ne!(first, second);
    for threads in [1, 3] {
        let mut other = cast_engine(sr(7, threads));
        assert_eq!(cast(&mut other), first, "{threads} thread(s)");
        assert_eq!(cast(&mut other), second, "{threads} thread(s)");
    }
    // Another seed, other bits.
    assert_ne!(cast(&mut cast_engine(sr(8, 2))), first);
}
