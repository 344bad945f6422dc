//! The sparse layer's three passes against dense host products (f64), for random and
//! deliberately bad patterns, forced spills, one and many tiles; pattern updates on the same
//! engine; overflow.
//!
//! (About 600 lines. One file because every test compares the layer with the same dense host
//! products and shares the set-up helpers.)

mod common;

use common::Rng;
use poplar::{Engine, EngineOptions, Target};
use popsparse::{EncodeError, FcOptions, FcParams, FcPlan};

/// `n` distinct random triplets in the top-left `rr × cc` of `W` (all of it for a random
/// pattern; the first partition of a plan for the bad pattern), at most `rr · cc`.
fn pattern(rr: usize, cc: usize, n: usize, seed: u64) -> Vec<(usize, usize, f32)> {
    let mut rng = Rng::new(seed);
    let n = n.min(rr * cc);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    while out.len() < n {
        let (r, c) = ((rng.next() as usize) % rr, (rng.next() as usize) % cc);
        if seen.insert((r, c)) {
            out.push((r, c, rng.unit()));
        }
    }
    out
}

struct Device {
    engine: Engine,
    plan: FcPlan,
}

/// Builds all three passes for `plan` (programs 0 Fwd, 1 GradA, 2 GradW).
fn device(target: &Target, plan: &FcPlan) -> Device {
    let exe = common::three_passes(target, plan);
    Device {
        engine: Engine::new(&exe, EngineOptions::default()).unwrap(),
        plan: plan.clone(),
    }
}

/// Writes the pattern and dense operands, runs the three passes and checks them against the
/// host; returns the propagation steps the encoder asked for.
fn run_and_check(d: &mut Device, triplets: &[(usize, usize, f32)], seed: u64) -> u32 {
    let enc = popsparse::encode(&d.plan, triplets).unwrap();
    check_encoded(d, &enc, triplets, seed)
}

/// As [`run_and_check`] for block sparsity: `blocks` are `(row, col, b² values)`.
fn run_blocks_and_check(d: &mut Device, blocks: &[(usize, usize, Vec<f32>)], seed: u64) -> u32 {
    let b = d.plan.params.block;
    let refs: Vec<(usize, usize, &[f32])> =
        blocks.iter().map(|(r, c, v)| (*r, *c, &v[..])).collect();
    let enc = popsparse::encode_blocks(&d.plan, &refs).unwrap();
    // The elements, in the order decode_grad returns them (block by block, row-major).
    let mut triplets = Vec::new();
    for (r, c, v) in blocks {
        for i in 0..b {
            for j in 0..b {
                triplets.push((r + i, c + j, v[i * b + j]));
            }
        }
    }
    check_encoded(d, &enc, &triplets, seed)
}

fn check_encoded(
    d: &mut Device,
    enc: &popsparse::Encoded,
    triplets: &[(usize, usize, f32)],
    seed: u64,
) -> u32 {
    let p = d.plan.params;
    let e = &mut d.engine;
    popsparse::write_encoded(e, "W", &d.plan, enc).unwrap();
    let mut rng = Rng::new(seed);
    let x: Vec<f32> = (0..p.input_size * p.batch).map(|_| rng.unit()).collect();
    let yg: Vec<f32> = (0..p.output_size * p.batch).map(|_| rng.unit()).collect();
    e.write_tensor("x", &x).unwrap();
    e.write_tensor("yg", &yg).unwrap();
    for prog in 0..3 {
        e.run(prog).unwrap();
    }
    let (y, xg, wg) = (
        e.read_tensor::<f32>("y").unwrap(),
        e.read_tensor::<f32>("xg").unwrap(),
        e.read_tensor::<f32>("wg").unwrap(),
    );
    // Host oracles in f64, with the bound k · 2^-24 · Σ|terms| for f32 sums of k terms.
    let z = p.batch;
    let eps = f64::from(f32::EPSILON) / 2.0;
    let (mut yw, mut ym) = (
        vec![0.0f64; p.output_size * z],
        vec![0.0f64; p.output_size * z],
    );
    let (mut xw, mut xm) = (
        vec![0.0f64; p.input_size * z],
        vec![0.0f64; p.input_size * z],
    );
    let mut count_row = vec![0usize; p.output_size];
    let mut count_col = vec![0usize; p.input_size];
    for &(r, c, v) in triplets {
        count_row[r] += 1;
        count_col[c] += 1;
        for k in 0..z {
            let t = f64::from(v) * f64::from(x[c * z + k]);
            yw[r * z + k] += t;
            ym[r * z + k] += t.abs();
            let u = f64::from(v) * f64::from(yg[r * z + k]);
            xw[c * z + k] += u;
            xm[c * z + k] += u.abs();
        }
    }
    for (i, (&g, (&w, &m))) in y.iter().zip(yw.iter().zip(&ym)).enumerate() {
        let tol = (count_row[i / z] as f64 + 2.0) * eps * m + 1e-30;
        assert!(
            (f64::from(g) - w).abs() <= tol,
            "Fwd Y[{i}] {g} vs {w} ({tol:e})\n{}",
            d.plan
        );
    }
    for (i, (&g, (&w, &m))) in xg.iter().zip(xw.iter().zip(&xm)).enumerate() {
        let tol = (count_col[i / z] as f64 + 2.0) * eps * m + 1e-30;
        assert!(
            (f64::from(g) - w).abs() <= tol,
            "GradA X'[{i}] {g} vs {w}\n{}",
            d.plan
        );
    }
    let grads = popsparse::decode_grad(&d.plan, enc, &wg);
    for (i, (&(r, c, _), &g)) in triplets.iter().zip(&grads).enumerate() {
        let (mut w, mut m) = (0.0f64, 0.0f64);
        for k in 0..z {
            let t = f64::from(yg[r * z + k]) * f64::from(x[c * z + k]);
            w += t;
            m += t.abs();
        }
        let tol = (z as f64 + 1.0) * eps * m + 1e-30;
        assert!(
            (f64::from(g) - w).abs() <= tol,
            "GradW entry {i} ({r}, {c}): {g} vs {w}\n{}",
            d.plan
        );
    }
    enc.steps
}

#[test]
fn the_three_passes_match_dense_host_products_for_random_and_bad_patterns() {
    let target = Target::custom(16, 128 * 1024);
    for (rows, cols, batch, density) in [(37, 53, 3, 0.1), (64, 40, 4, 0.5), (90, 70, 2, 0.01)] {
        let params = FcParams::with_density(rows, cols, batch, density);
        let plan = popsparse::plan(&target, params, &FcOptions::default()).unwrap();
        let mut d = device(&target, &plan);
        // A random pattern at the planned density.
        run_and_check(&mut d, &pattern(rows, cols, params.nonzeros, 1), 11);
        // The bad pattern: every non-zero in the first partition (one row block and one
        // column block), so most spill and propagate, up to the whole ring.
        let (xb, yb) = (plan.x_range(0).len(), plan.y_range(0).len());
        let bad = pattern(xb, yb, params.nonzeros, 2);
        let steps = run_and_check(&mut d, &bad, 12);
        let spill = bad.len().saturating_sub(plan.capacity);
        assert_eq!(steps as usize, spill.div_ceil(plan.capacity), "{plan}");
    }
}

#[test]
fn one_tile_many_tiles_and_forced_spills() {
    let params = FcParams::with_density(30, 30, 2, 0.2);
    // One tile: everything is home, no propagation.
    let one = Target::custom(1, 256 * 1024);
    let plan = popsparse::plan(&one, params, &FcOptions::default()).unwrap();
    assert_eq!(plan.tiles(), 1);
    let mut d = device(&one, &plan);
    assert_eq!(
        run_and_check(&mut d, &pattern(30, 30, params.nonzeros, 3), 13),
        0
    );
    // No oversize on many tiles: almost any random pattern spills somewhere.
    let many = Target::custom(24, 64 * 1024);
    let opts = FcOptions {
        bucket_oversize: 0.0,
        max_tiles: Some(9),
        ..Default::default()
    };
    let plan = popsparse::plan(&many, params, &opts).unwrap();
    assert!(plan.tiles() > 1, "{plan}");
    let mut d = device(&many, &plan);
    let steps = run_and_check(&mut d, &pattern(30, 30, params.nonzeros, 4), 14);
    assert!(steps > 0, "no spill with zero oversize?\n{plan}");
}

#[test]
fn a_new_pattern_runs_on_the_same_engine_without_recompiling() {
    let target = Target::custom(12, 128 * 1024);
    let params = FcParams::with_density(40, 36, 4, 0.15);
    let plan = popsparse::plan(&target, params, &FcOptions::default()).unwrap();
    let mut d = device(&target, &plan);
    let first = pattern(40, 36, params.nonzeros, 5);
    run_and_check(&mut d, &first, 15);
    // Different positions and values, fewer of them, all in one corner (spilling): the same
    // executable.
    let second = pattern(12, 12, params.nonzeros / 2, 6);
    run_and_check(&mut d, &second, 16);
    run_and_check(&mut d, &first, 17);
}

#[test]
fn a_pattern_that_cannot_fit_is_a_typed_error_and_bad_triplets_are_named() {
    let target = Target::custom(4, 64 * 1024);
    let params = FcParams::with_density(20, 20, 2, 0.1);
    let plan = popsparse::plan(&target, params, &FcOptions::default()).unwrap();
    let total = plan.tiles() * plan.capacity;
    let too_many = pattern(20, 20, total + 3, 7);
    match popsparse::encode(&plan, &too_many) {
        Err(EncodeError::Overflow { not_placed, .. }) => assert_eq!(not_placed, 3),
        other => panic!("{other:?}"),
    }
    let e = popsparse::encode(&plan, &too_many).unwrap_err().to_string();
    assert!(
        e.contains("overflow in buckets") && e.contains("bucket_oversize"),
        "{e}"
    );
    match popsparse::encode(&plan, &[(0, 0, 1.0), (20, 3, 1.0)]) {
        Err(EncodeError::OutOfRange {
            index: 1, row: 20, ..
        }) => {}
        other => panic!("{other:?}"),
    }
    match popsparse::encode(&plan, &[(1, 2, 1.0), (1, 2, 3.0)]) {
        Err(EncodeError::Duplicate {
            first: 0,
            second: 1,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_planner_cost_model_agrees_with_the_cycle_model_in_the_best_case() {
    // A pattern with the same number of non-zeros in every partition (nothing spills): the
    // plan's best-case Fwd estimate against the simulator's modelled cycles, within 10 %.
    use poplar::profile::ProfileOptions;
    let target = Target::custom(64, 128 * 1024);
    for (rows, cols, batch, b) in [(128, 128, 8, 1), (256, 64, 4, 1), (256, 256, 8, 16)] {
        let params = FcParams::with_density(rows, cols, batch, 0.1).with_block(b);
        let plan = popsparse::plan(&target, params, &FcOptions::default()).unwrap();
        let mut d = device(&target, &plan);
        // Equal share per partition: the first `per` blocks of each partition, in order.
        let per = params.nonzero_blocks() / plan.tiles();
        let mut blocks: Vec<(usize, usize, Vec<f32>)> = Vec::new();
        let mut rng = Rng::new(9);
        for x in 0..plan.px {
            for y in 0..plan.py {
                let (xr, yr) = (plan.x_range(x), plan.y_range(y));
                let (bx, by) = (xr.len() / b, yr.len() / b);
                for k in 0..per.min(bx * by) {
                    let v = (0..b * b).map(|_| rng.unit()).collect();
                    blocks.push((xr.start + k / by * b, yr.start + k % by * b, v));
                }
            }
        }
        let refs: Vec<(usize, usize, &[f32])> =
            blocks.iter().map(|(r, c, v)| (*r, *c, &v[..])).collect();
        let enc = popsparse::encode_blocks(&plan, &refs).unwrap();
        assert_eq!(enc.steps, 0);
        let e = &mut d.engine;
        popsparse::write_encoded(e, "W", &d.plan, &enc).unwrap();
        e.enable_profiling(ProfileOptions::default());
        e.run(0).unwrap();
        let cycles = e.profile().unwrap().total_cycles();
        let est = plan.estimate.total();
        eprintln!("{rows}×{cols}, batch {batch}, block {b}: simulator {cycles} cycles, plan {est}");
        let ratio = cycles as f64 / est as f64;
        assert!(
            (0.9..1.1).contains(&ratio),
            "{plan}\nsimulator {cycles} cycles, plan {est}: ratio {ratio:.2}"
        );
    }
}

/// `n` distinct random `b × b` blocks in the top-left `rr × cc` of `W`.
fn block_pattern(
    rr: usize,
    cc: usize,
    b: usize,
    n: usize,
    seed: u64,
) -> Vec<(usize, usize, Vec<f32>)> {
    let mut rng = Rng::new(seed);
    let (br, bc) = (rr / b, cc / b);
    let n = n.min(br * bc);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    while out.len() < n {
        let (r, c) = (
            (rng.next() as usize) % br * b,
            (rng.next() as usize) % bc * b,
        );
        if seen.insert((r, c)) {
            out.push((r, c, (0..b * b).map(|_| rng.unit()).collect()));
        }
    }
    out
}

#[test]
fn block_sparsity_of_4_8_and_16_matches_dense_host_products_with_spills() {
    let target = Target::custom(16, 256 * 1024);
    for (rows, cols, batch, b, density) in [
        (64, 48, 3, 4, 0.2),
        (96, 64, 2, 8, 0.15),
        (128, 96, 4, 16, 0.1),
    ] {
        let params = FcParams::with_density(rows, cols, batch, density).with_block(b);
        let plan = popsparse::plan(&target, params, &FcOptions::default()).unwrap();
        let mut d = device(&target, &plan);
        let n = params.nonzero_blocks();
        run_blocks_and_check(&mut d, &block_pattern(rows, cols, b, n, 21), 31);
        // All blocks in the first partition: spills and propagation.
        let (xb, yb) = (plan.x_range(0).len(), plan.y_range(0).len());
        let bad = block_pattern(xb, yb, b, n, 22);
        let steps = run_blocks_and_check(&mut d, &bad, 32);
        assert_eq!(
            steps as usize,
            bad.len()
                .saturating_sub(plan.capacity)
                .div_ceil(plan.capacity),
            "{plan}"
        );
    }
    // Misaligned blocks, wrong value counts and sizes that are not multiples are refused.
    let params = FcParams::with_density(32, 32, 2, 0.1).with_block(8);
    let plan = popsparse::plan(&target, params, &FcOptions::default()).unwrap();
    let v = vec![1.0f32; 64];
    match popsparse::encode_blocks(&plan, &[(4, 0, &v[..])]) {
        Err(EncodeError::Misaligned {
            index: 0, row: 4, ..
        }) => {}
        other => panic!("{other:?}"),
    }
    match popsparse::encode_blocks(&plan, &[(0, 0, &v[..10])]) {
        Err(EncodeError::BlockValues { got: 10, .. }) => {}
        other => panic!("{other:?}"),
    }
    // A rule broken is named, with the parameters at fault.
    let bad = FcParams::with_density(30, 32, 2, 0.1).with_block(8);
    match popsparse::plan(&target, bad, &FcOptions::default()) {
        Err(
            e @ popsparse::FcPlanError::Unsupported {
                params,
                rule: popsparse::FcRule::Block,
            },
        ) => {
            assert_eq!(params, bad);
            let text = e.to_string();
            assert!(text.starts_with("sparse fc (W 30 × 32,"), "{text}");
            assert!(text.contains("the block must be 1, 4, 8 or 16"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    // Coordinates of 2^31 or more collide with the spilled-entry bit: refused by name.
    let mut huge = FcParams::with_density(32, 32, 2, 0.1);
    huge.input_size = 1 << 31;
    match popsparse::plan(&target, huge, &FcOptions::default()) {
        Err(
            e @ popsparse::FcPlanError::Unsupported {
                rule: popsparse::FcRule::TooLarge,
                ..
            },
        ) => {
            assert!(e.to_string().contains("below 2^31"), "{e}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn each_propagation_step_costs_what_the_plan_says() {
    // Two patterns that differ only in how far they spill: the modelled cycles grow by the
    // plan's propagation step per extra step, within 10 %.
    use poplar::profile::ProfileOptions;
    let target = Target::custom(32, 128 * 1024);
    let params = FcParams::with_density(64, 64, 4, 0.25);
    let plan = popsparse::plan(&target, params, &FcOptions::default()).unwrap();
    let mut d = device(&target, &plan);
    let (xb, yb) = (plan.x_range(0).len(), plan.y_range(0).len());
    let mut cycles = Vec::new();
    for extra in [1usize, 3] {
        // Fill partition 0 and spill `extra` buckets' worth into the ring.
        let n = (plan.capacity * (1 + extra)).min(xb * yb);
        let trip = pattern(xb, yb, n, 40);
        let enc = popsparse::encode(&plan, &trip).unwrap();
        assert_eq!(enc.steps as usize, n.div_ceil(plan.capacity) - 1, "{plan}");
        let e = &mut d.engine;
        popsparse::write_encoded(e, "W", &d.plan, &enc).unwrap();
        e.enable_profiling(ProfileOptions::default());
        e.run(0).unwrap();
        cycles.push((enc.steps, e.profile().unwrap().total_cycles()));
    }
    let per_step = (cycles[1].1 - cycles[0].1) as f64 / f64::from(cycles[1].0 - cycles[0].0);
    let est = plan.estimate.propagation_step as f64;
    eprintln!("per propagation step: simulator {per_step:.0} cycles, plan {est}");
    assert!(
        (per_step / est - 1.0).abs() < 0.1,
        "{cycles:?}: {per_step} vs {est}\n{plan}"
    );
}

#[test]
fn a_batch_split_over_p_z_tiles_gives_the_same_results_and_costs_what_the_plan_says() {
    // P_Z = 3 and 4: a partition's buckets pass through its P_Z tiles in the distribution;
    // spilled ones through all of them during the propagation. Random and one-partition
    // patterns, element and 8×8 blocks, against the dense host products; the best-case
    // estimate against the cycle model.
    use poplar::profile::ProfileOptions;
    let target = Target::custom(48, 128 * 1024);
    for (rows, cols, batch, b, part) in [
        (40, 36, 7, 1, [4, 3, 3]),
        (48, 40, 8, 1, [3, 4, 4]),
        (64, 64, 9, 8, [2, 2, 3]),
    ] {
        let params = FcParams::with_density(rows, cols, batch, 0.2).with_block(b);
        let opts = FcOptions {
            partition: Some(part),
            ..Default::default()
        };
        let plan = popsparse::plan(&target, params, &opts).unwrap();
        assert_eq!([plan.px, plan.py, plan.pz], part);
        let mut d = device(&target, &plan);
        let n = params.nonzero_blocks();
        if b == 1 {
            run_and_check(&mut d, &pattern(rows, cols, n, 50), 60);
            let (xb, yb) = (plan.x_range(0).len(), plan.y_range(0).len());
            let steps = run_and_check(&mut d, &pattern(xb, yb, n, 51), 61);
            assert!(steps as usize >= plan.pz, "{plan}");
        } else {
            run_blocks_and_check(&mut d, &block_pattern(rows, cols, b, n, 52), 62);
            let (xb, yb) = (plan.x_range(0).len(), plan.y_range(0).len());
            run_blocks_and_check(&mut d, &block_pattern(xb, yb, b, n, 53), 63);
        }
        // Best case: an equal share in every bucket.
        let per = n / plan.tiles();
        let mut blocks: Vec<(usize, usize, Vec<f32>)> = Vec::new();
        for x in 0..plan.px {
            for y in 0..plan.py {
                let (xr, yr) = (plan.x_range(x), plan.y_range(y));
                let by = yr.len() / b;
                for k in 0..(per * plan.pz).min(xr.len() / b * by) {
                    blocks.push((
                        xr.start + k / by * b,
                        yr.start + k % by * b,
                        vec![0.5; b * b],
                    ));
                }
            }
        }
        let refs: Vec<(usize, usize, &[f32])> =
            blocks.iter().map(|(r, c, v)| (*r, *c, &v[..])).collect();
        let enc = popsparse::encode_blocks(&plan, &refs).unwrap();
        assert_eq!(enc.steps, 0, "{plan}");
        let e = &mut d.engine;
        popsparse::write_encoded(e, "W", &d.plan, &enc).unwrap();
        e.enable_profiling(ProfileOptions::default());
        e.run(0).unwrap();
        let cycles = e.profile().unwrap().total_cycles();
        let est = plan.estimate.total();
        eprintln!("P_Z {}: simulator {cycles} cycles, plan {est}", plan.pz);
        let ratio = cycles as f64 / est as f64;
        assert!(
            (0.9..1.1).contains(&ratio),
            "{plan}\nsimulator {cycles}, plan {est}"
        );
        e.disable_profiling();
    }
}

#[test]
fn csr_patterns_encode_like_their_triplets_and_buckets_decode_back() {
    let target = Target::custom(12, 64 * 1024);
    let params = FcParams::with_density(30, 20, 2, 0.2);
    let plan = popsparse::plan(&target, params, &FcOptions::default()).unwrap();
    let trip = pattern(30, 20, params.nonzeros, 70);
    let csr = popsparse::Csr::from_triplets(30, 20, &trip);
    let mut sorted = trip.clone();
    sorted.sort_by_key(|&(r, c, _)| (r, c));
    assert_eq!(csr.to_triplets().unwrap(), sorted);
    let (a, b) = (
        popsparse::encode_csr(&plan, &csr).unwrap(),
        popsparse::encode(&plan, &sorted).unwrap(),
    );
    assert_eq!(a, b);
    // The buckets hold exactly the pattern (any order), spilled ones included.
    let mut back: Vec<(usize, usize, f32)> = popsparse::decode(&plan, &a)
        .into_iter()
        .map(|(r, c, v)| (r, c, v[0]))
        .collect();
    back.sort_by_key(|&(r, c, _)| (r, c));
    assert_eq!(back, sorted);
    // A malformed CSR is refused.
    let mut bad = csr.clone();
    bad.row_ptr[3] = bad.row_ptr[4] + 1;
    match popsparse::encode_csr(&plan, &bad) {
        Err(EncodeError::BadCsr(why)) => assert!(why.contains("decreases at row 3"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn f16_values_round_each_product_to_f16_and_accumulate_in_f32() {
    // Weights and dense operands in f16, partials and outputs in f32, for element and 4×4
    // blocks, with a spill. The oracle rounds every product to f16 (as the vertices do) and
    // sums in f64.
    use poplar::f16;
    let target = Target::custom(16, 128 * 1024);
    for b in [1usize, 4] {
        let params = FcParams::with_density(48, 40, 6, 0.2).with_block(b);
        let opts = FcOptions {
            data_type: poplar::DType::F16,
            ..Default::default()
        };
        let plan = popsparse::plan(&target, params, &opts).unwrap();
        assert!(plan.to_string().contains("half values"), "{plan}");
        let mut d = device(&target, &plan);
        let (xb, yb) = (plan.x_range(0).len(), plan.y_range(0).len());
        for (rr, cc, seed) in [(48, 40, 80), (xb, yb, 81)] {
            let blocks: Vec<(usize, usize, Vec<f32>)> =
                block_pattern(rr, cc, b, params.nonzero_blocks(), seed)
                    .into_iter()
                    .map(|(r, c, v)| (r, c, v.iter().map(|&x| f16::from_f32(x).to_f32()).collect()))
                    .collect();
            let refs: Vec<(usize, usize, &[f32])> =
                blocks.iter().map(|(r, c, v)| (*r, *c, &v[..])).collect();
            let enc = popsparse::encode_blocks(&plan, &refs).unwrap();
            let h = |v: &[f32]| v.iter().map(|&x| f16::from_f32(x)).collect::<Vec<f16>>();
            let e = &mut d.engine;
            // write_encoded rounds the values to f16 for this plan.
            popsparse::write_encoded(e, "W", &plan, &enc).unwrap();
            let mut rng = Rng::new(seed + 100);
            let z = params.batch;
            let x: Vec<f32> = (0..40 * z)
                .map(|_| f16::from_f32(rng.unit()).to_f32())
                .collect();
            let yg: Vec<f32> = (0..48 * z)
                .map(|_| f16::from_f32(rng.unit()).to_f32())
                .collect();
            e.write_tensor("x", &h(&x)).unwrap();
            e.write_tensor("yg", &h(&yg)).unwrap();
            for prog in 0..3 {
                e.run(prog).unwrap();
            }
            let (y, xg, wg) = (
                e.read_tensor::<f32>("y").unwrap(),
                e.read_tensor::<f32>("xg").unwrap(),
                e.read_tensor::<f32>("wg").unwrap(),
            );
            let p16 = |a: f32, b: f32| f64::from(f16::from_f32(a * b).to_f32());
            let (mut yw, mut ym, mut yc) =
                (vec![0.0f64; 48 * z], vec![0.0f64; 48 * z], vec![0usize; 48]);
            let (mut xw, mut xm, mut xc) =
                (vec![0.0f64; 40 * z], vec![0.0f64; 40 * z], vec![0usize; 40]);
            let mut trip = Vec::new();
            for (r, c, v) in &blocks {
                for i in 0..b {
                    for j in 0..b {
                        trip.push((r + i, c + j, v[i * b + j]));
                    }
                }
            }
            for &(r, c, v) in &trip {
                yc[r] += 1;
                xc[c] += 1;
                for k in 0..z {
                    let t = p16(v, x[c * z + k]);
                    yw[r * z + k] += t;
                    ym[r * z + k] += t.abs();
                    let u = p16(v, yg[r * z + k]);
                    xw[c * z + k] += u;
                    xm[c * z + k] += u.abs();
                }
            }
            let eps = f64::from(f32::EPSILON) / 2.0;
            for (i, &g) in y.iter().enumerate() {
                let tol = (yc[i / z] as f64 + 2.0) * eps * ym[i] + 1e-30;
                assert!(
                    (f64::from(g) - yw[i]).abs() <= tol,
                    "b {b} Y[{i}] {g} vs {}",
                    yw[i]
                );
            }
            for (i, &g) in xg.iter().enumerate() {
                let tol = (xc[i / z] as f64 + 2.0) * eps * xm[i] + 1e-30;
                assert!(
                    (f64::from(g) - xw[i]).abs() <= tol,
                    "b {b} X'[{i}] {g} vs {}",
                    xw[i]
                );
            }
            let grads = popsparse::decode_grad(&plan, &enc, &wg);
            for (i, (&(r, c, _), &g)) in trip.iter().zip(&grads).enumerate() {
                let (mut w, mut m) = (0.0f64, 0.0f64);
                for k in 0..z {
                    let t = p16(yg[r * z + k], x[c * z + k]);
                    w += t;
                    m += t.abs();
                }
                let tol = (z as f64 + 1.0) * eps * m + 1e-30;
                assert!((f64::from(g) - w).abs() <= tol, "b {b} W'[{i}] {g} vs {w}");
            }
        }
    }
}

#[test]
fn plan_errors_print_the_parameters_readably() {
    let target = Target::custom(32, 128 * 1024);
    let mut p = FcParams::with_density(32, 16, 2, 0.1);
    p.batch = 0;
    let e = popsparse::plan(&target, p, &FcOptions::default())
        .unwrap_err()
        .to_string();
    assert!(!e.contains("FcParams {"), "Debug-printed: {e}");
    assert!(
        e.contains("W 32 × 16") && e.contains("batch 0") && e.contains("non-zeros"),
        "{e}"
    );
}
