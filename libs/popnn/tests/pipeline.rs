//! Pipelined training against the f64 reference: every schedule, 1, 2 and 4 stages, with and
//! without recomputation, gives the reference's parameters after three steps (relative
//! difference below 1e-5 of the largest parameter for SGD), and the same bits whatever the
//! stages, the schedule, recomputation or the thread count (the arithmetic of every element
//! does not depend on where it runs).

mod common;

use common::*;
use popnn::{Activation, Schedule};

#[test]
fn one_stage_matches_the_reference() {
    for act in [Activation::Relu, Activation::Gelu] {
        let model = model(act);
        let opts = options(1, 1, Schedule::Grouped);
        let (dev, loss) = train_device(&model, &opts, 3, 2);
        let (reference, ref_loss) = train_reference(&model, &opts, 3);
        let diff = max_rel_diff(&dev, &reference);
        assert!(diff < 1e-5, "{act:?}: relative difference {diff:e}");
        assert!(
            (loss - ref_loss).abs() < 1e-4 * ref_loss,
            "loss {loss} against {ref_loss}"
        );
    }
}

#[test]
fn stages_schedules_and_recomputation_give_the_same_bits() {
    let model = model(Activation::Gelu);
    let (base, _) = train_device(&model, &options(1, 1, Schedule::Sequential), 3, 1);
    let (reference, _) = train_reference(&model, &options(1, 1, Schedule::Sequential), 3);
    assert!(max_rel_diff(&base, &reference) < 1e-5);
    for stages in [1, 2, 4] {
        for schedule in Schedule::ALL {
            for recompute in [false, true] {
                let mut opts = options(1, stages, schedule);
                opts.recompute = recompute;
                let (dev, _) = train_device(&model, &opts, 3, 2);
                assert!(
                    same_bits(&dev, &base),
                    "{stages} stages, {schedule:?}, recompute {recompute}: bits differ"
                );
            }
        }
    }
}
