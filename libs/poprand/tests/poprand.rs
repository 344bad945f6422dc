//! poprand on the simulator: the bits are the host stream's on every mapping, worker split,
//! thread count, rank count and instruction-set level; the distributions pass statistical
//! tests against their analytic CDFs (thresholds stated at each test); bad arguments are typed
//! errors naming the argument.

use poplar::dist::Ranks;
use poplar::{compile, f16, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
use poprand::stream::{self, Stream};
use poprand::RandError;

const SEED: [u32; 2] = [0x1234_5678, 0x9abc_def0];

/// How the reference tensor is laid out.
#[derive(Clone, Copy, Debug)]
enum Layout {
    OneTile,
    Linear(u32),
    /// Blocks of 37 elements dealt to tiles in reverse order.
    Scattered(u32),
}

fn graph_with(
    n: usize,
    dtype: DType,
    layout: Layout,
) -> (Graph, poplar::graph::Tensor, poplar::graph::Tensor) {
    codelets::link();
    let tiles = match layout {
        Layout::OneTile => 1,
        Layout::Linear(t) | Layout::Scattered(t) => t,
    };
    let mut g = Graph::new(&Target::custom(tiles, 1 << 20));
    let seed = g.add_constant(&[2], &SEED, "seed").unwrap();
    g.set_tile_mapping(&seed, tiles - 1).unwrap();
    let r = g.add_variable(dtype, &[n / 10, 10], "reference");
    match layout {
        Layout::OneTile => g.set_tile_mapping(&r, 0).unwrap(),
        Layout::Linear(_) => g.map_linearly(&r, 2).unwrap(),
        Layout::Scattered(t) => {
            let flat = r.flatten();
            let mut at = 0;
            let mut k = 0u32;
            while at < n {
                let end = (at + 37).min(n);
                g.set_tile_mapping(&flat.slice(at..end).unwrap(), t - 1 - k % t)
                    .unwrap();
                at = end;
                k += 1;
            }
        }
    }
    (g, seed, r)
}

fn run<T: poplar::Element>(g: &Graph, prog: Vec<Program>, opts: EngineOptions) -> Vec<T> {
    let exe = compile(g, &[Program::seq(prog)], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, opts).unwrap();
    e.run(0).unwrap();
    e.read_tensor::<T>("x").unwrap()
}

type Build = fn(
    &mut Graph,
    &poplar::graph::Tensor,
    &poplar::graph::Tensor,
    &mut Vec<Program>,
) -> poplar::graph::Tensor;

fn build_normal(
    g: &mut Graph,
    seed: &poplar::graph::Tensor,
    r: &poplar::graph::Tensor,
    p: &mut Vec<Program>,
) -> poplar::graph::Tensor {
    poprand::normal(g, seed, 5, r, DType::F32, 2.0, 3.0, p, "x").unwrap()
}

fn generated(n: usize, layout: Layout, build: Build, opts: EngineOptions) -> Vec<u32> {
    let (mut g, seed, r) = graph_with(n, DType::F32, layout);
    let mut prog = Vec::new();
    let x = build(&mut g, &seed, &r, &mut prog);
    g.create_host_read("x", &x).unwrap();
    run::<f32>(&g, prog, opts)
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

#[test]
fn the_bits_are_the_host_streams_on_every_mapping_thread_count_and_isa_level() {
    let n = 4000;
    let s = Stream::new(SEED, 5);
    let host: Vec<u32> = (0..n as u64)
        .map(|i| ((2.0 + 3.0 * stream::normal(&s.bits(i), (i % 4) as usize)) as f32).to_bits())
        .collect();
    for layout in [Layout::OneTile, Layout::Linear(16), Layout::Scattered(7)] {
        let got = generated(n, layout, build_normal, EngineOptions::default());
        assert_eq!(got, host, "{layout:?}");
    }
    for threads in [1, 3] {
        let opts = EngineOptions {
            threads: Some(threads),
            ..Default::default()
        };
        assert_eq!(
            generated(n, Layout::Linear(16), build_normal, opts),
            host,
            "{threads} threads"
        );
    }
    for level in poplar::isa::supported() {
        let opts = EngineOptions {
            isa: Some(level),
            ..Default::default()
        };
        assert_eq!(
            generated(n, Layout::Scattered(5), build_normal, opts),
            host,
            "{level:?}"
        );
    }
}

#[test]
fn the_bits_are_the_same_on_one_two_and_three_ranks() {
    let n = 3000;
    let one = generated(n, Layout::Linear(6), build_normal, EngineOptions::default());
    for ranks in [2, 3] {
        let results: Vec<Vec<u32>> = std::thread::scope(|sc| {
            let hs: Vec<_> = Ranks::in_process(ranks)
                .into_iter()
                .map(|r| {
                    sc.spawn(move || {
                        let opts = EngineOptions {
                            ranks: Some(r),
                            ..Default::default()
                        };
                        generated(n, Layout::Linear(6), build_normal, opts)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (k, got) in results.iter().enumerate() {
            assert_eq!(got, &one, "rank {k} of {ranks}");
        }
    }
}

#[test]
fn seed_and_modifier_select_the_stream() {
    let n = 400;
    let base = generated(n, Layout::Linear(4), build_normal, EngineOptions::default());
    let other_mod = generated(
        n,
        Layout::Linear(4),
        |g, seed, r, p| poprand::normal(g, seed, 6, r, DType::F32, 2.0, 3.0, p, "x").unwrap(),
        EngineOptions::default(),
    );
    let same = base.iter().zip(&other_mod).filter(|(a, b)| a == b).count();
    assert!(same < 4, "modifier 5 and 6 share {same} of {n} values");
    // A seed written from the host at run time: the same stream as the constant seed.
    let (mut g, _, r) = graph_with(n, DType::F32, Layout::Linear(4));
    let seed = g.add_variable(DType::U32, &[2], "seed_var");
    g.set_tile_mapping(&seed, 0).unwrap();
    g.create_host_write("seed", &seed).unwrap();
    let mut prog = Vec::new();
    let x = poprand::normal(&mut g, &seed, 5, &r, DType::F32, 2.0, 3.0, &mut prog, "x").unwrap();
    g.create_host_read("x", &x).unwrap();
    let exe = compile(&g, &[Program::seq(prog)], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::default()).unwrap();
    e.write_tensor("seed", &SEED).unwrap();
    e.run(0).unwrap();
    let got: Vec<u32> = e
        .read_tensor::<f32>("x")
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(got, base);
    e.write_tensor("seed", &[SEED[0] ^ 1, SEED[1]]).unwrap();
    e.run(0).unwrap();
    let got: Vec<u32> = e
        .read_tensor::<f32>("x")
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert!(got.iter().zip(&base).filter(|(a, b)| a == b).count() < 4);
}

/// `Φ(x)`, by Abramowitz and Stegun 7.1.26 (|error| ≤ 1.5·10⁻⁷ in erf): an independent
/// reference for the KS tests, whose thresholds are three orders of magnitude larger.
fn phi(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// The Kolmogorov–Smirnov statistic of `xs` against `cdf`.
fn ks(xs: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len() as f64;
    let mut d = 0.0f64;
    for (i, &x) in v.iter().enumerate() {
        let f = cdf(x);
        d = d
            .max((f - i as f64 / n).abs())
            .max(((i + 1) as f64 / n - f).abs());
    }
    d
}

/// The KS critical value at significance 10⁻³: `1.95 / √n`.
fn ks_limit(n: usize) -> f64 {
    1.95 / (n as f64).sqrt()
}

fn draw<T: poplar::Element>(
    n: usize,
    dtype: DType,
    build: impl FnOnce(
        &mut Graph,
        &poplar::graph::Tensor,
        &poplar::graph::Tensor,
        &mut Vec<Program>,
    ) -> poplar::graph::Tensor,
) -> Vec<T> {
    let (mut g, seed, r) = graph_with(n, dtype, Layout::Linear(8));
    let mut prog = Vec::new();
    let x = build(&mut g, &seed, &r, &mut prog);
    g.create_host_read("x", &x).unwrap();
    run::<T>(&g, prog, EngineOptions::default())
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    (
        m,
        xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0),
    )
}

const N: usize = 100_000;

#[test]
fn uniform_reals_pass_ks_and_stay_in_range() {
    let xs: Vec<f64> = draw::<f32>(N, DType::F32, |g, s, r, p| {
        poprand::uniform(g, s, 1, r, DType::F32, -2.0, 6.0, p, "x").unwrap()
    })
    .into_iter()
    .map(f64::from)
    .collect();
    assert!(xs.iter().all(|&x| (-2.0..=6.0).contains(&x)));
    let d = ks(&xs, |x| ((x + 2.0) / 8.0).clamp(0.0, 1.0));
    assert!(d < ks_limit(N), "KS {d}");
    // Mean 2 and variance 64/12 within 5 standard errors.
    let (m, v) = mean_var(&xs);
    assert!(
        (m - 2.0).abs() < 5.0 * (64.0f64 / 12.0 / N as f64).sqrt(),
        "mean {m}"
    );
    assert!(
        (v - 64.0 / 12.0).abs() < 5.0 * 64.0 * (1.0f64 / 180.0 / N as f64).sqrt(),
        "var {v}"
    );
    // f16: the same interval, KS within the f16 spacing near 6 (2⁻⁸ of the range) more.
    let hs: Vec<f64> = draw::<f16>(N, DType::F16, |g, s, r, p| {
        poprand::uniform(g, s, 1, r, DType::F16, -2.0, 6.0, p, "x").unwrap()
    })
    .into_iter()
    .map(|h| f64::from(h.to_f32()))
    .collect();
    assert!(hs.iter().all(|&x| (-2.0..=6.0).contains(&x)));
    let d = ks(&hs, |x| ((x + 2.0) / 8.0).clamp(0.0, 1.0));
    assert!(d < ks_limit(N) + 1.0 / 512.0, "f16 KS {d}");
}

#[test]
fn uniform_integers_cover_their_inclusive_range_evenly() {
    let xs = draw::<i32>(N, DType::I32, |g, s, r, p| {
        poprand::uniform(g, s, 2, r, DType::I32, -3.0, 4.0, p, "x").unwrap()
    });
    let mut counts = [0usize; 8];
    for x in &xs {
        assert!((-3..=4).contains(x), "{x}");
        counts[(x + 3) as usize] += 1;
    }
    // χ² with 7 degrees of freedom below 24.3 (significance 10⁻³).
    let e = N as f64 / 8.0;
    let chi2: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
    assert!(chi2 < 24.3, "χ² {chi2}, counts {counts:?}");
    // The full range of i32.
    let xs = draw::<i32>(1000, DType::I32, |g, s, r, p| {
        poprand::uniform(
            g,
            s,
            2,
            r,
            DType::I32,
            f64::from(i32::MIN),
            f64::from(i32::MAX),
            p,
            "x",
        )
        .unwrap()
    });
    assert!(xs.iter().any(|&x| x < -1_000_000_000) && xs.iter().any(|&x| x > 1_000_000_000));
}

#[test]
fn normals_pass_ks_against_the_normal_cdf() {
    let xs: Vec<f64> = draw::<f32>(N, DType::F32, |g, s, r, p| {
        poprand::normal(g, s, 3, r, DType::F32, 2.0, 3.0, p, "x").unwrap()
    })
    .into_iter()
    .map(f64::from)
    .collect();
    let d = ks(&xs, |x| phi((x - 2.0) / 3.0));
    assert!(d < ks_limit(N), "KS {d}");
    let (m, v) = mean_var(&xs);
    assert!((m - 2.0).abs() < 5.0 * 3.0 / (N as f64).sqrt(), "mean {m}");
    // var of the sample variance of a normal: 2σ⁴/(n−1).
    assert!(
        (v - 9.0).abs() < 5.0 * 9.0 * (2.0 / N as f64).sqrt(),
        "var {v}"
    );
    let hs: Vec<f64> = draw::<f16>(N, DType::F16, |g, s, r, p| {
        poprand::normal(g, s, 3, r, DType::F16, 0.0, 1.0, p, "x").unwrap()
    })
    .into_iter()
    .map(|h| f64::from(h.to_f32()))
    .collect();
    // f16 rounding moves values by at most 2⁻⁹ of their size below 4: a KS shift below 10⁻³.
    let d = ks(&hs, phi);
    assert!(d < ks_limit(N) + 1e-3, "f16 KS {d}");
}

#[test]
fn truncated_normals_stay_in_bounds_and_pass_ks() {
    for alpha in [2.0, 0.5] {
        let (mean, sd) = (1.0, 2.0);
        let xs: Vec<f64> = draw::<f32>(N, DType::F32, |g, s, r, p| {
            poprand::truncated_normal(g, s, 4, r, DType::F32, mean, sd, alpha, p, "x").unwrap()
        })
        .into_iter()
        .map(f64::from)
        .collect();
        let (lo, hi) = (mean - alpha * sd, mean + alpha * sd);
        assert!(xs.iter().all(|&x| (lo..=hi).contains(&x)), "alpha {alpha}");
        let mass = phi(alpha) - phi(-alpha);
        let d = ks(&xs, |x| {
            ((phi((x - mean) / sd) - phi(-alpha)) / mass).clamp(0.0, 1.0)
        });
        assert!(d < ks_limit(N), "alpha {alpha}: KS {d}");
    }
}

#[test]
fn bernoulli_rates_and_dropout_masks() {
    let p = 0.3;
    for dtype in [DType::F32, DType::I32] {
        let ones = if dtype == DType::F32 {
            let xs = draw::<f32>(N, dtype, |g, s, r, pr| {
                poprand::bernoulli(g, s, 9, r, dtype, p, pr, "x").unwrap()
            });
            assert!(xs.iter().all(|&x| x == 0.0 || x == 1.0));
            xs.iter().filter(|&&x| x == 1.0).count()
        } else {
            let xs = draw::<i32>(N, dtype, |g, s, r, pr| {
                poprand::bernoulli(g, s, 9, r, dtype, p, pr, "x").unwrap()
            });
            assert!(xs.iter().all(|&x| x == 0 || x == 1));
            xs.iter().filter(|&&x| x == 1).count()
        };
        let rate = ones as f64 / N as f64;
        assert!(
            (rate - p).abs() < 5.0 * (p * (1.0 - p) / N as f64).sqrt(),
            "{dtype}: rate {rate}"
        );
    }
    let mask = draw::<f32>(N, DType::F32, |g, s, r, pr| {
        poprand::bernoulli(g, s, 9, r, DType::F32, 0.8, pr, "x").unwrap()
    });
    // Dropout of x = i (exact in f32 below 2^24) with keep 0.8, scale 1.25: the same mask.
    let dropped = draw::<f32>(N, DType::F32, |g, s, r, pr| {
        let input = g.add_variable(DType::F32, r.shape(), "input");
        g.map_linearly(&input, 2).unwrap();
        let data: Vec<f32> = (0..N).map(|i| i as f32).collect();
        g.set_initial_value(&input, &data).unwrap();
        poprand::dropout(g, s, 9, &input, r, 0.8, 1.25, pr, "x").unwrap()
    });
    for (i, (&m, &d)) in mask.iter().zip(&dropped).enumerate() {
        let want = if m == 1.0 { i as f32 * 1.25 } else { 0.0 };
        assert_eq!(d, want, "element {i}");
    }
    let kept = mask.iter().filter(|&&m| m == 1.0).count() as f64 / N as f64;
    assert!(
        (kept - 0.8).abs() < 5.0 * (0.16 / N as f64).sqrt(),
        "kept {kept}"
    );
    // Probabilities 0 and 1 are exact.
    let none = draw::<f32>(1000, DType::F32, |g, s, r, pr| {
        poprand::bernoulli(g, s, 0, r, DType::F32, 0.0, pr, "x").unwrap()
    });
    let all = draw::<f32>(1000, DType::F32, |g, s, r, pr| {
        poprand::bernoulli(g, s, 0, r, DType::F32, 1.0, pr, "x").unwrap()
    });
    assert!(none.iter().all(|&x| x == 0.0) && all.iter().all(|&x| x == 1.0));
}

#[test]
fn bad_arguments_are_typed_errors_naming_them() {
    let (mut g, seed, r) = graph_with(100, DType::F32, Layout::Linear(2));
    let mut p = Vec::new();
    let msg = |e: RandError| e.to_string();
    let bad_seed = g.add_variable(DType::U32, &[3], "bad_seed");
    g.set_tile_mapping(&bad_seed, 0).unwrap();
    let e =
        poprand::uniform(&mut g, &bad_seed, 0, &r, DType::F32, 0.0, 1.0, &mut p, "x").unwrap_err();
    assert!(msg(e).contains("seed"));
    let e = poprand::uniform(&mut g, &seed, 0, &r, DType::F32, 1.0, 0.0, &mut p, "x").unwrap_err();
    assert!(msg(e).contains("'min'"));
    let e = poprand::uniform(&mut g, &seed, 0, &r, DType::I32, 0.5, 3.0, &mut p, "x").unwrap_err();
    assert!(msg(e).contains("'min'"));
    let e = poprand::bernoulli(&mut g, &seed, 0, &r, DType::F32, 1.5, &mut p, "x").unwrap_err();
    assert!(msg(e).contains("'prob'"));
    let e = poprand::normal(&mut g, &seed, 0, &r, DType::I32, 0.0, 1.0, &mut p, "x").unwrap_err();
    assert!(
        matches!(
            e,
            RandError::Unsupported {
                dtype: DType::I32,
                ..
            }
        ),
        "{e}"
    );
    let e = poprand::normal(&mut g, &seed, 0, &r, DType::F32, 0.0, -1.0, &mut p, "x").unwrap_err();
    assert!(msg(e).contains("'std_dev'"));
    let e = poprand::truncated_normal(&mut g, &seed, 0, &r, DType::F32, 0.0, 1.0, 0.0, &mut p, "x")
        .unwrap_err();
    assert!(msg(e).contains("'alpha'"));
    let other = g.add_variable(DType::F32, &[5, 20], "other");
    let e = poprand::dropout(&mut g, &seed, 0, &other, &r, 0.5, 2.0, &mut p, "x").unwrap_err();
    assert!(msg(e).contains("'input'"));
    // An unmapped reference.
    let unmapped = g.add_variable(DType::F32, &[10], "unmapped");
    let e = poprand::uniform(
        &mut g,
        &seed,
        0,
        &unmapped,
        DType::F32,
        0.0,
        1.0,
        &mut p,
        "x",
    )
    .unwrap_err();
    let m = msg(e);
    assert!(m.contains("mapped"), "{m}");
}

#[test]
fn empty_references_give_empty_tensors() {
    let xs = draw::<f32>(0, DType::F32, |g, s, r, p| {
        poprand::normal(g, s, 0, r, DType::F32, 0.0, 1.0, p, "x").unwrap()
    });
    assert!(xs.is_empty());
}
