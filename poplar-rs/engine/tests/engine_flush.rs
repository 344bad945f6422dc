//! Subnormal flushing (`poplar::fp`): a user-written codelet that produces and consumes
//! subnormals gives zeros with flushing on and the IEEE results with it off, for any thread
//! count; the software fallback flushes what vertices write.

use poplar::codelet::*;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};

poplar::codelet! {
    /// `flush_test::Scale`: `out[i] = a[i] * s` (a subnormal product of normal inputs when
    /// both are small) and `twice[i] = a[i] * 2` (a normal result of a subnormal input).
    pub struct Scale as "flush_test::Scale" {
        a: Input<Vector<f32>>,
        out: Output<Vector<f32>>,
        twice: Output<Vector<f32>>,
        s: State<f32>,
    }
}

impl Vertex for Scale<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        for ((o, t), &a) in self
            .out
            .iter_mut()
            .zip(self.twice.iter_mut())
            .zip(self.a.iter())
        {
            *o = a * self.s;
            *t = a * 2.0;
        }
        Ok(())
    }
}

const N: usize = 64;

/// `a`: normal values near 2^-100 in the first half; in the second, subnormals in
/// `[2^-127, 2^-126)`, whose double is normal.
fn input() -> Vec<f32> {
    (0..N)
        .map(|i| {
            if i < N / 2 {
                (1.0 + i as f32 / 64.0) * f32::from_bits(27 << 23) // × 2^-100
            } else {
                f32::from_bits(0x0040_0000 + 1_000 * i as u32) // exponent bits zero
            }
        })
        .collect()
}

/// 2^-30: its product with the normal half of `a` (about 2^-130) is subnormal.
fn scale() -> f32 {
    f32::from_bits(97 << 23)
}

fn build(flush: bool) -> poplar::Executable {
    let target = Target {
        flush_subnormals: flush,
        ..Target::custom(4, 64 * 1024)
    };
    let mut g = Graph::new(&target);
    let a = g.add_variable(DType::F32, &[N], "a");
    let out = g.add_variable(DType::F32, &[N], "out");
    let twice = g.add_variable(DType::F32, &[N], "twice");
    g.create_host_write("a", &a).unwrap();
    g.create_host_read("out", &out).unwrap();
    g.create_host_read("twice", &twice).unwrap();
    let cs = g.add_compute_set("scale");
    for t in 0..4u32 {
        let r = t as usize * N / 4..(t as usize + 1) * N / 4;
        for x in [&a, &out, &twice] {
            g.set_tile_mapping(&x.slice(r.clone()).unwrap(), t).unwrap();
        }
        let v = g.add_vertex_of::<Scale>(cs).unwrap();
        g.connect(v, "a", &a.slice(r.clone()).unwrap()).unwrap();
        g.connect(v, "out", &out.slice(r.clone()).unwrap()).unwrap();
        g.connect(v, "twice", &twice.slice(r).unwrap()).unwrap();
        g.set_vertex_state(v, "s", scale()).unwrap();
        g.set_tile_mapping(v, t).unwrap();
    }
    compile(&g, &[Program::execute(cs)], &CompileOptions::default()).unwrap()
}

fn run(exe: &poplar::Executable, options: EngineOptions) -> (Vec<f32>, Vec<f32>) {
    let mut e = Engine::new(exe, options).unwrap();
    e.write_tensor("a", &input()).unwrap();
    e.run(0).unwrap();
    (
        e.read_tensor("out").unwrap(),
        e.read_tensor("twice").unwrap(),
    )
}

/// What the host computes with IEEE arithmetic, and with the chip's rule.
fn expected(flush: bool) -> (Vec<f32>, Vec<f32>) {
    let s = scale();
    let f = |x: f32| if flush { poplar::fp::flush_f32(x) } else { x };
    let a = input();
    let out = a.iter().map(|&x| f(f(x) * s)).collect();
    let twice = a.iter().map(|&x| f(f(x) * 2.0)).collect();
    (out, twice)
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn the_gc200_presets_flush_and_old_executables_do_not() {
    assert!(Target::gc200().flush_subnormals);
    assert!(Target::custom(4, 1024).flush_subnormals);
    // A target serialized before the field existed loads with flushing off.
    let mut json = serde_json::to_value(Target::gc200()).unwrap();
    json.as_object_mut().unwrap().remove("flush_subnormals");
    let old: Target = serde_json::from_value(json).unwrap();
    assert!(!old.flush_subnormals);
}

#[test]
fn flushing_on_gives_zeros_and_off_gives_ieee_for_any_thread_count() {
    let (ieee_out, ieee_twice) = expected(false);
    let (chip_out, chip_twice) = expected(true);
    // The data really produces and consumes subnormals: the two rules differ.
    assert!(ieee_out.iter().any(|x| x.is_subnormal()));
    assert!(ieee_twice[N / 2..].iter().all(|x| *x != 0.0));
    assert!(chip_out.iter().all(|x| !x.is_subnormal()));
    assert!(chip_twice[N / 2..].iter().all(|x| *x == 0.0));

    let on = build(true);
    let off = build(false);
    for threads in [1, 2, 3] {
        let got = run(&on, EngineOptions::with_threads(threads));
        if poplar::fp::hardware_flush() {
            assert_eq!(bits(&got.0), bits(&chip_out), "out, {threads} thread(s)");
            assert_eq!(
                bits(&got.1),
                bits(&chip_twice),
                "twice, {threads} thread(s)"
            );
        }
        let got = run(&off, EngineOptions::with_threads(threads));
        assert_eq!(
            bits(&got.0),
            bits(&ieee_out),
            "IEEE out, {threads} thread(s)"
        );
        assert_eq!(
            bits(&got.1),
            bits(&ieee_twice),
            "IEEE twice, {threads} thread(s)"
        );
        // The option overrides the target both ways.
        let forced_off = run(
            &on,
            EngineOptions {
                flush_subnormals: Some(false),
                ..EngineOptions::with_threads(threads)
            },
        );
        assert_eq!(bits(&forced_off.0), bits(&ieee_out));
        if poplar::fp::hardware_flush() {
            let forced_on = run(
                &off,
                EngineOptions {
                    flush_subnormals: Some(true),
                    ..EngineOptions::with_threads(threads)
                },
            );
            assert_eq!(bits(&forced_on.1), bits(&chip_twice));
        }
    }
    // The calling thread is back to IEEE arithmetic after the runs.
    assert!(!poplar::fp::flushing());
    let x = std::hint::black_box(f32::MIN_POSITIVE) / std::hint::black_box(2.0);
    assert!(x.is_subnormal());
}

#[test]
fn the_software_fallback_flushes_what_vertices_write() {
    let on = build(true);
    let got = run(
        &on,
        EngineOptions {
            flush_in_software: true,
            ..EngineOptions::with_threads(2)
        },
    );
    let (ieee_out, ieee_twice) = expected(false);
    // Subnormal results are flushed when stored...
    let want_out: Vec<f32> = ieee_out.iter().map(|&x| poplar::fp::flush_f32(x)).collect();
    assert_eq!(bits(&got.0), bits(&want_out));
    // ...but a subnormal input inside the codelet is not (the fallback's documented limit):
    // twice a subnormal is the IEEE result where that is normal.
    let want_twice: Vec<f32> = ieee_twice
        .iter()
        .map(|&x| poplar::fp::flush_f32(x))
        .collect();
    assert_eq!(bits(&got.1), bits(&want_twice));
    assert!(got.1[N / 2..].iter().any(|&x| x != 0.0));
}
