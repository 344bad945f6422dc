//! The element-wise codelets give the same bits at every instruction-set level this host
//! supports (`poplar::isa`), with subnormal flushing on and off and on 1 and 2 threads: one
//! graph with every binary and unary `float` codelet, run once per level through
//! `EngineOptions::isa`, on edge inputs (±0, subnormals, ±inf, NaN, the extremes) and random
//! bit patterns.

use poplar::isa::IsaLevel;
use poplar::{compile, DType, Engine, EngineOptions, Graph, Program, Target};

const BINARY: [&str; 6] = [
    "Add<float>",
    "Sub<float>",
    "Mul<float>",
    "Max<float>",
    "Min<float>",
    "Div<float>",
];
const IN_PLACE: [&str; 6] = [
    "AddInPlace<float>",
    "SubInPlace<float>",
    "MulInPlace<float>",
    "MaxInPlace<float>",
    "MinInPlace<float>",
    "DivInPlace<float>",
];
const UNARY: [&str; 5] = [
    "Neg<float>",
    "Abs<float>",
    "Square<float>",
    "Sqrt<float>",
    "Exp<float>",
];

/// 1,000 elements: every pair of edge values (`poplar::isa::EDGE_VALUES`), as the first
/// operand (`first`: `e[i / m]`) or the second (`e[i % m]`), so that NaN meets −NaN, ±0 meets
/// ∓0 and inf meets −inf; then random bit patterns (SplitMix64).
fn inputs(seed: u64, first: bool) -> Vec<f32> {
    let e = poplar::isa::EDGE_VALUES;
    let m = e.len();
    let mut v: Vec<f32> = (0..m * m)
        .map(|i| if first { e[i / m] } else { e[i % m] })
        .collect();
    let mut rng = poplar::rand::SplitMix64::new(seed);
    while v.len() < 1000 {
        v.push(f32::from_bits(rng.next_u64() as u32));
    }
    v
}

/// Runs every codelet once at `level` and returns the bits of every output.
fn run(level: IsaLevel, flush: bool, threads: usize) -> Vec<u32> {
    codelets::link();
    let target = Target {
        flush_subnormals: flush,
        ..Target::custom(4, 256 * 1024)
    };
    let mut g = Graph::new(&target);
    let var = |g: &mut Graph, name: &str, tile: u32| {
        let t = g.add_variable(DType::F32, &[1000], name);
        g.set_tile_mapping(&t, tile).unwrap();
        t
    };
    let x = var(&mut g, "x", 0);
    let y = var(&mut g, "y", 0);
    g.set_initial_value(&x, &inputs(0x9e37_79b9_7f4a_7c15, true))
        .unwrap();
    g.set_initial_value(&y, &inputs(0x2545_f491_4f6c_dd1d, false))
        .unwrap();
    let cs = g.add_compute_set("all");
    let mut outs = Vec::new();
    for (i, name) in BINARY.iter().enumerate() {
        let out = var(&mut g, &format!("b{i}"), 1 + i as u32 % 3);
        let v = g.add_vertex(cs, name).unwrap();
        g.connect(v, "in1", &x).unwrap();
        g.connect(v, "in2", &y).unwrap();
        g.connect(v, "out", &out).unwrap();
        g.set_tile_mapping(v, 0).unwrap();
        outs.push(out);
    }
    for (i, name) in IN_PLACE.iter().enumerate() {
        let a = var(&mut g, &format!("p{i}"), 2);
        g.set_initial_value(&a, &inputs(0x1234_5678 + i as u64, true))
            .unwrap();
        let v = g.add_vertex(cs, name).unwrap();
        g.connect(v, "a", &a).unwrap();
        g.connect(v, "b", &y).unwrap();
        g.set_tile_mapping(v, 2).unwrap();
        outs.push(a);
    }
    for (i, name) in UNARY.iter().enumerate() {
        let out = var(&mut g, &format!("u{i}"), 3);
        let v = g.add_vertex(cs, name).unwrap();
        g.connect(v, "input", &x).unwrap();
        g.connect(v, "out", &out).unwrap();
        g.set_tile_mapping(v, 3).unwrap();
        outs.push(out);
    }
    let all = poplar::concat(&outs).unwrap();
    g.create_host_read("all", &all).unwrap();
    let exe = compile(&g, &[Program::execute(cs)], &Default::default()).unwrap();
    let mut e = Engine::new(
        &exe,
        EngineOptions {
            threads: Some(threads),
            isa: Some(level),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(e.isa(), level);
    e.run(0).unwrap();
    e.read_tensor::<f32>("all")
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

#[test]
fn element_wise_codelets_give_the_same_bits_at_every_level() {
    let levels = poplar::isa::supported();
    for flush in [false, true] {
        let base = run(IsaLevel::Baseline, flush, 1);
        for &level in &levels {
            for threads in [1, 2] {
                let got = run(level, flush, threads);
                assert_eq!(got.len(), base.len());
                if let Some(i) = got.iter().zip(&base).position(|(a, b)| a != b) {
                    let name = BINARY.iter().chain(&IN_PLACE).chain(&UNARY).nth(i / 1000);
                    panic!(
                        "{level}, {threads} thread(s), flush {flush}: {} element {} is {:#010x}, \
                         the baseline's {:#010x}",
                        name.unwrap_or(&"?"),
                        i % 1000,
                        got[i],
                        base[i]
                    );
                }
            }
        }
    }
}

#[test]
fn a_level_the_host_cannot_run_is_refused_by_name() {
    let Some(missing) = IsaLevel::ALL.into_iter().find(|l| !l.is_supported()) else {
        // This host runs every level: the refusal is checked through the parser instead.
        let e = "avx1024".parse::<IsaLevel>().unwrap_err();
        assert!(e.to_string().contains("avx1024"), "{e}");
        return;
    };
    let e = poplar::isa::set_active(missing).unwrap_err();
    assert!(e.to_string().contains(missing.name()), "{e}");
}
