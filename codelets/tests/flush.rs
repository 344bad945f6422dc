//! Standard codelets compute with the chip's subnormal rule when the target flushes
//! (`poplar::fp`), and with IEEE arithmetic when it does not.

use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};

const N: usize = 32;

/// Small normal values (about 2^-100) and, from `N / 2` on, subnormals just below 2^-126.
fn data(seed: u32) -> Vec<f32> {
    (0..N as u32)
        .map(|i| {
            if (i as usize) < N / 2 {
                (1.0 + (i * seed % 17) as f32 / 32.0) * f32::from_bits(27 << 23)
            } else {
                f32::from_bits(0x0040_0000 + 997 * i * seed)
            }
        })
        .collect()
}

/// Normal values near 2^-30: their product with the normal half of [`data`] is subnormal.
fn factors() -> Vec<f32> {
    (0..N)
        .map(|i| (1.0 + i as f32 / 64.0) * f32::from_bits(97 << 23))
        .collect()
}

/// `Mul<float>` then `ScaledAdd<float>` on one tile: `p = x * y`, then `z += 2^20 * x`.
fn run(flush: bool, threads: usize) -> (Vec<f32>, Vec<f32>) {
    codelets::link();
    let target = Target {
        flush_subnormals: flush,
        ..Target::custom(2, 64 * 1024)
    };
    let mut g = Graph::new(&target);
    let [x, y, p, z] = ["x", "y", "p", "z"].map(|n| {
        let t = g.add_variable(DType::F32, &[N], n);
        g.set_tile_mapping(&t, 1).unwrap();
        t
    });
    g.create_host_write("x", &x).unwrap();
    g.create_host_write("y", &y).unwrap();
    g.create_host_read_write("z", &z).unwrap();
    g.create_host_read("p", &p).unwrap();
    let cs = g.add_compute_set("mul");
    let v = g.add_vertex(cs, "Mul<float>").unwrap();
    g.connect(v, "in1", &x).unwrap();
    g.connect(v, "in2", &y).unwrap();
    g.connect(v, "out", &p).unwrap();
    g.set_tile_mapping(v, 1).unwrap();
    let cs2 = g.add_compute_set("scaled add");
    let v = g.add_vertex(cs2, "ScaledAdd<float>").unwrap();
    g.connect(v, "a", &z).unwrap();
    g.connect(v, "b", &x).unwrap();
    g.set_vertex_state(v, "scale", (1u32 << 20) as f32).unwrap();
    g.set_tile_mapping(v, 1).unwrap();
    let exe = compile(
        &g,
        &[Program::seq(vec![
            Program::execute(cs),
            Program::execute(cs2),
        ])],
        &CompileOptions::default(),
    )
    .unwrap();
    let mut e = Engine::new(&exe, EngineOptions::with_threads(threads)).unwrap();
    e.write_tensor("x", &data(3)).unwrap();
    e.write_tensor("y", &factors()).unwrap();
    e.write_tensor("z", &[0.0f32; N]).unwrap();
    e.run(0).unwrap();
    (e.read_tensor("p").unwrap(), e.read_tensor("z").unwrap())
}

fn host(flush: bool) -> (Vec<f32>, Vec<f32>) {
    let f = |v: f32| if flush { poplar::fp::flush_f32(v) } else { v };
    let (x, y) = (data(3), factors());
    let p = x.iter().zip(&y).map(|(&a, &b)| f(f(a) * f(b))).collect();
    let z = x
        .iter()
        .map(|&a| f(0.0 + f((1u32 << 20) as f32 * f(a))))
        .collect();
    (p, z)
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn standard_codelets_flush_on_the_chip_and_not_with_ieee() {
    let (ieee_p, ieee_z) = host(false);
    let (chip_p, chip_z) = host(true);
    assert_ne!(
        bits(&ieee_p),
        bits(&chip_p),
        "the data must produce subnormal products"
    );
    assert_ne!(
        bits(&ieee_z),
        bits(&chip_z),
        "the data must feed subnormal inputs"
    );
    for threads in [1, 2] {
        let (p, z) = run(false, threads);
        assert_eq!((bits(&p), bits(&z)), (bits(&ieee_p), bits(&ieee_z)));
        if poplar::fp::hardware_flush() {
            let (p, z) = run(true, threads);
            assert_eq!((bits(&p), bits(&z)), (bits(&chip_p), bits(&chip_z)));
        }
    }
}
