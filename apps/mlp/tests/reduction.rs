//! The `--reduction` choice on the device: Sum applies the learning rate to the summed
//! gradient of the global batch, Mean divides it by `R·m·GA` (not by `R·m`, not by `m`); and
//! the bit-for-bit thread check with the 1 and 2 engine threads of the 2-core host.

mod common;

use common::{bits, device_params, init, oracle, small, worst, worst32};
use mlp::config::{Config, Reduction};

fn cfg(
    replicas: u32,
    micro_batch: usize,
    accumulate: usize,
    reduction: Reduction,
    lr: f32,
) -> Config {
    Config {
        accumulate,
        lr,
        reduction,
        seed: 5,
        ..small(replicas, micro_batch)
    }
}

/// With `B = R·m·GA = 2·4·2 = 16` (a power of two), Mean with `lr·B` and Sum with `lr` scale
/// the same summed gradient by the same f32 (`lr·16/16` is exact), so the parameters are equal
/// bit for bit. A Mean that divided by `R·m = 8` or `m = 4` instead would differ from Sum by a
/// factor 2 or 4 in every update; Sum and Mean at the same `lr` must differ.
#[test]
fn mean_divides_the_sum_by_r_m_ga() {
    let steps = 10;
    let (lr, b) = (0.003f32, 16.0f32);
    let sum = cfg(2, 4, 2, Reduction::Sum, lr);
    assert_eq!(sum.global_batch() as f32, b);
    let (train, _) = mlp::run::data(&sum);
    let p_sum = device_params(&sum, &train, steps, 2);
    let p_mean = device_params(&cfg(2, 4, 2, Reduction::Mean, lr * b), &train, steps, 2);
    assert_eq!(bits(&p_sum), bits(&p_mean));
    let p_mean_same_lr = device_params(&cfg(2, 4, 2, Reduction::Mean, lr), &train, steps, 2);
    let p0 = init(&sum);
    // Sum moves the parameters B times further per step than Mean at the same lr.
    assert!(worst32(&p_sum, &p0) > 4.0 * worst32(&p_mean_same_lr, &p0));
}

/// Sum on one replica agrees with the f64 reference (8 steps, GA 3 × m 12: sums of 36 terms,
/// lr 0.002 on the sum) within 1e-5.
#[test]
fn sum_on_one_replica_agrees_with_the_f64_reference() {
    let c = cfg(1, 12, 3, Reduction::Sum, 0.002);
    let (train, _) = mlp::run::data(&c);
    let steps = 8;
    let dev = device_params(&c, &train, steps, 2);
    let w = worst(&dev, &oracle(&c, &train, steps));
    assert!(w <= 1e-5, "worst {w:e}");
}

/// Sum over 4 replicas × m = 4 against one replica × 16: the same samples per step, only the
/// order of the gradient sum differs. The summed gradient of B = 32 terms of magnitude ≤ 2
/// differs by at most B·2⁻²⁴·B·2 ≈ 1.2e-4 between summation orders; Sum scales it by
/// lr = 0.002, so a parameter moves by at most 2.4e-7 differently per step, 4.8e-6 over 20
/// steps: 1e-5 bounds it.
#[test]
fn sum_over_replicas_equals_one_replica() {
    let steps = 20;
    let one = cfg(1, 16, 2, Reduction::Sum, 0.002);
    let (train, _) = mlp::run::data(&one);
    let base = device_params(&one, &train, steps, 2);
    let four = cfg(4, 4, 2, Reduction::Sum, 0.002);
    assert_eq!(four.global_batch(), one.global_batch());
    let p = device_params(&four, &train, steps, 2);
    let w = worst32(&p, &base);
    assert!(w <= 1e-5, "largest difference {w}");
    assert!(worst32(&base, &init(&one)) > 1e-2, "training moved nothing");
}

/// One and two engine threads (the host has two cores) give the same parameters bit for bit,
/// with replicas, accumulation and the all-reduce in the step.
#[test]
fn one_and_two_threads_agree_bit_for_bit() {
    let c = cfg(2, 6, 2, Reduction::Mean, 0.05);
    let (train, _) = mlp::run::data(&c);
    let a = device_params(&c, &train, 8, 1);
    let b = device_params(&c, &train, 8, 2);
    assert_eq!(bits(&a), bits(&b));
}

/// `history.json` states the reduction that was used.
#[test]
fn the_history_names_the_reduction() {
    mlp::link();
    let c = cfg(2, 8, 1, Reduction::Sum, 0.002);
    let (h, _) = mlp::run::train(&c, 2, |_| {}).unwrap();
    let json = serde_json::to_string(&h).unwrap();
    assert!(json.contains("\"reduction\":\"sum\""), "{json}");
    // The step's cycles split into disjoint parts: outside the all-reduce, and the all-reduce.
    let c = &h.step_cycles;
    assert!(c.all_reduce > 0 && c.outside_compute > 0, "{c:?}");
    assert_eq!(
        c.outside_compute + c.outside_exchange + c.outside_sync + c.outside_transfer + c.all_reduce,
        c.total,
        "{c:?}"
    );
}
