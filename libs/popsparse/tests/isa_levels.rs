//! The sparse layer's Fwd, GradA and GradW give the same bits at every instruction-set level
//! this host supports (`poplar::isa`), with subnormal flushing on and off and on 1 and 2
//! threads: f32 and f16 values, element and 4 × 4 block sparsity, a random pattern and one
//! that spills (propagation steps), on edge operands (±0, subnormals, ±inf, NaN, the extremes)
//! and random ones. Each level runs through `EngineOptions::isa`.
//!
//! One test in its own binary: the level is a process-wide setting, and another test of the
//! same binary switching it meanwhile would run this one's engines at the wrong level.

mod common;

use common::Rng;
use poplar::isa::IsaLevel;
use poplar::{f16, DType, Engine, EngineOptions, Target};
use popsparse::{FcOptions, FcParams, FcPlan};

/// Edge values, and random values in [−1, 1], one in five scaled by a power of ten between
/// 1e−38 and 1e38 (products and sums that overflow, underflow to subnormals, and cancel, in
/// f32 and in f16), shuffled.
fn operands(n: usize, seed: u64) -> Vec<f32> {
    let mut v = poplar::isa::EDGE_VALUES.to_vec();
    let mut rng = Rng::new(seed);
    while v.len() < n {
        let scale = [1e-38, 1e-20, 1e-6, 1e4, 1e20, 1e38][(rng.next() % 6) as usize];
        let scale = if rng.next().is_multiple_of(5) {
            scale
        } else {
            1.0
        };
        v.push(rng.unit() * scale);
    }
    v.truncate(n);
    // Spread the edge values over the rows rather than leaving them all in the first.
    let mut rng = Rng::new(seed ^ 0x5555);
    for i in (1..n).rev() {
        v.swap(i, (rng.next() as usize) % (i + 1));
    }
    v
}

/// Distinct `b × b` blocks: `random` over all of `W`, else the first rows of `W` dense (most
/// blocks spill into the other partitions' buckets and travel in propagation steps).
fn blocks(plan: &FcPlan, random: bool, seed: u64) -> Vec<(usize, usize, Vec<f32>)> {
    let p = plan.params;
    let b = p.block;
    let (br, bc) = (p.output_size / b, p.input_size / b);
    let mut rng = Rng::new(seed);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let values = operands(p.nonzero_blocks() * b * b, seed + 1);
    let mut i = 0;
    while out.len() < p.nonzero_blocks() {
        let (r, c) = if random {
            ((rng.next() as usize) % br, (rng.next() as usize) % bc)
        } else {
            (i / bc, i % bc)
        };
        i += 1;
        if seen.insert((r, c)) {
            let k = out.len() * b * b;
            out.push((r * b, c * b, values[k..k + b * b].to_vec()));
        }
    }
    out
}

/// The three passes compiled for `plan` on `target`: (programs 0 Fwd, 1 GradA, 2 GradW).
fn executable(target: &Target, plan: &FcPlan) -> poplar::Executable {
    common::three_passes(target, plan)
}

/// Runs the three passes at `level` with `threads` and returns the bits of Y, X' and the
/// gradient buckets, and the propagation steps of the pattern.
fn run(
    exe: &poplar::Executable,
    plan: &FcPlan,
    pattern: &[(usize, usize, Vec<f32>)],
    level: IsaLevel,
    threads: usize,
) -> (Vec<u32>, u32) {
    let mut e = Engine::new(
        exe,
        EngineOptions {
            threads: Some(threads),
            isa: Some(level),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(e.isa(), level);
    let refs: Vec<(usize, usize, &[f32])> =
        pattern.iter().map(|(r, c, v)| (*r, *c, &v[..])).collect();
    let enc = popsparse::encode_blocks(plan, &refs).unwrap();
    popsparse::write_encoded(&mut e, "W", plan, &enc).unwrap();
    let p = plan.params;
    let x = operands(p.input_size * p.batch, 11);
    let yg = operands(p.output_size * p.batch, 12);
    if plan.data_type == DType::F16 {
        let h = |v: &[f32]| v.iter().map(|&x| f16::from_f32(x)).collect::<Vec<f16>>();
        e.write_tensor("x", &h(&x)).unwrap();
        e.write_tensor("yg", &h(&yg)).unwrap();
    } else {
        e.write_tensor("x", &x).unwrap();
        e.write_tensor("yg", &yg).unwrap();
    }
    for prog in 0..3 {
        e.run(prog).unwrap();
    }
    let mut bits = Vec::new();
    for name in ["y", "xg", "wg"] {
        let v = e.read_tensor::<f32>(name).unwrap();
        bits.extend(v.iter().map(|v| v.to_bits()));
    }
    (bits, enc.steps)
}

#[test]
fn fwd_grad_a_and_grad_w_give_the_same_bits_at_every_level() {
    let levels = poplar::isa::supported();
    // 19 batch columns: a 16-lane vector and a tail of 3.
    let params = |b| FcParams::with_density(64, 48, 19, 0.25).with_block(b);
    for flush in [false, true] {
        let target = Target {
            flush_subnormals: flush,
            ..Target::custom(16, 128 * 1024)
        };
        for data_type in [DType::F32, DType::F16] {
            for b in [1usize, 4] {
                let opts = FcOptions {
                    data_type,
                    ..Default::default()
                };
                let plan = popsparse::plan(&target, params(b), &opts).unwrap();
                let exe = executable(&target, &plan);
                for random in [true, false] {
                    let pattern = blocks(&plan, random, 40 + b as u64);
                    let (base, steps) = run(&exe, &plan, &pattern, IsaLevel::Baseline, 1);
                    let what = format!(
                        "{} block {b} {} pattern, flush {flush}",
                        data_type.poplar_name(),
                        if random { "random" } else { "spilling" }
                    );
                    if !random {
                        assert!(steps > 0, "{what}: no propagation step\n{plan}");
                    }
                    // The operands reach the outputs: some finite, non-zero, and some NaN.
                    let f: Vec<f32> = base.iter().map(|&b| f32::from_bits(b)).collect();
                    assert!(f.iter().any(|v| v.is_finite() && *v != 0.0), "{what}");
                    assert!(
                        f.iter().any(|v| v.is_nan()),
                        "{what}: no NaN among {} outputs ({} infinite, {} zero)",
                        f.len(),
                        f.iter().filter(|v| v.is_infinite()).count(),
                        f.iter().filter(|v| **v == 0.0).count()
                    );
                    for &level in &levels {
                        for threads in [1, 2] {
                            let (bits, _) = run(&exe, &plan, &pattern, level, threads);
                            let diff = bits.iter().zip(&base).filter(|(a, b)| a != b).count();
                            assert!(
                                diff == 0 && bits.len() == base.len(),
                                "{what}, {level}, {threads} thread(s): {diff} of {} outputs \
                                 differ from the baseline's bits",
                                base.len()
                            );
                        }
                    }
                }
            }
        }
    }
}
