//! Whole models built with onnx.helper (`tests/models/make_models.py`), run on the simulated
//! chip and compared with onnxruntime on the same inputs; and bad input, each a clean error.

mod support;

use std::collections::BTreeMap;

use poponnx::{ElemType, HostTensor, ImportOptions, Model, OnnxError, Session};
use support::models::case;

fn target() -> poplar::Target {
    poplar::Target::custom(16, 256 * 1024)
}

/// Runs a model and checks every output against onnxruntime's: |got − want| ≤ atol + rtol·|want|.
/// With `fp16`, the model's floats are held in f16 on the chip.
fn matches_onnxruntime(name: &str, fp16: bool, rtol: f64, atol: f64) {
    let (path, inputs, want) = case(name);
    let model = Model::load(&path).unwrap();
    let options = ImportOptions {
        fp16,
        ..Default::default()
    };
    let mut session = Session::new(&model, &target(), &options).unwrap();
    let got = session.run(&inputs).unwrap();
    assert_eq!(got.len(), want.len());
    for ((out, g), w) in got.iter().zip(&want) {
        assert_eq!(g.shape, w.shape, "{name}: output '{out}'");
        let (g, w) = (g.to_f64(), w.to_f64());
        let worst = g
            .iter()
            .zip(&w)
            .map(|(a, b)| (a - b).abs() / (atol + rtol * b.abs()))
            .fold(0.0, f64::max);
        assert!(
            worst <= 1.0,
            "{name}: output '{out}' is {worst:.2}× the tolerance from onnxruntime's"
        );
    }
}

#[test]
fn an_add_gives_onnxruntimes_sum() {
    matches_onnxruntime("add", false, 0.0, 0.0);
    // Small integers and halves are exact in f16.
    matches_onnxruntime("add", true, 0.0, 0.0);
}

// f32: the order of the sums differs from onnxruntime's (a few ulps); f16: every value and
// intermediate is rounded to f16 (2^-11 relative), over a few layers.
#[test]
fn a_small_cnn_matches_onnxruntime() {
    matches_onnxruntime("small_cnn", false, 1e-4, 1e-6);
}

#[test]
fn a_small_cnn_in_fp16_is_within_f16_rounding_of_onnxruntime() {
    matches_onnxruntime("small_cnn", true, 2e-2, 2e-3);
}

#[test]
fn a_transformer_encoder_layer_matches_onnxruntime() {
    matches_onnxruntime("encoder", false, 1e-4, 1e-5);
}

#[test]
fn a_transformer_encoder_layer_in_fp16_is_within_f16_rounding_of_onnxruntime() {
    matches_onnxruntime("encoder", true, 2e-2, 2e-2);
}

#[test]
fn replicas_each_run_the_model_and_give_its_outputs() {
    let (path, inputs, want) = case("add");
    let model = Model::load(&path).unwrap();
    let options = ImportOptions {
        replicas: 2,
        ..Default::default()
    };
    let mut session = Session::new(&model, &poplar::Target::gc200_multi(2), &options).unwrap();
    let got = session.run(&inputs).unwrap();
    assert_eq!(got[0].1, want[0]);
    let bad = ImportOptions {
        replicas: 3,
        ..Default::default()
    };
    match Session::new(&model, &poplar::Target::gc200_multi(2), &bad) {
        Err(OnnxError::Input { input, .. }) => assert_eq!(input, "replicas"),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("3 replicas on 2 chips were accepted"),
    }
}

#[test]
fn an_op_outside_the_supported_set_is_named_with_its_node() {
    let (path, _, _) = case("unsupported");
    let model = Model::load(&path).unwrap();
    match Session::new(&model, &target(), &ImportOptions::default()) {
        Err(OnnxError::UnsupportedOp { at }) => {
            assert_eq!(
                (at.node.as_str(), at.op.as_str()),
                ("mystery", "Frobnicate")
            )
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("an unknown op was accepted"),
    }
}

#[test]
fn arrays_that_do_not_match_the_inputs_are_refused_by_name() {
    let (path, inputs, _) = case("add");
    let model = Model::load(&path).unwrap();
    let mut session = Session::new(&model, &target(), &ImportOptions::default()).unwrap();
    let run = |s: &mut Session, i: &BTreeMap<String, HostTensor>| match s.run(i) {
        Err(OnnxError::Input { input, reason }) => (input, reason),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("accepted"),
    };
    let mut wrong_shape = inputs.clone();
    wrong_shape.insert(
        "y".into(),
        HostTensor::float(ElemType::Float, &[3, 2], vec![0.0; 6]),
    );
    let (input, reason) = run(&mut session, &wrong_shape);
    assert_eq!(input, "y");
    assert!(reason.contains("[2, 3]"), "{reason}");
    let mut wrong_type = inputs.clone();
    wrong_type.insert(
        "x".into(),
        HostTensor::int(ElemType::Int64, &[2, 3], vec![0; 6]),
    );
    assert_eq!(run(&mut session, &wrong_type).0, "x");
    let mut missing = inputs.clone();
    missing.remove("x");
    assert_eq!(
        run(&mut session, &missing),
        ("x".into(), "no array given".into())
    );
    let mut extra = inputs.clone();
    extra.insert(
        "w".into(),
        HostTensor::float(ElemType::Float, &[1], vec![0.0]),
    );
    assert_eq!(run(&mut session, &extra).0, "w");
}

#[test]
fn a_truncated_model_is_a_decode_error() {
    let (path, _, _) = case("small_cnn");
    let bytes = std::fs::read(path).unwrap();
    for cut in [1, 7, bytes.len() / 3, bytes.len() / 2, bytes.len() - 1] {
        match Model::from_bytes(&bytes[..cut]) {
            Err(OnnxError::Decode { kind: "model", .. }) | Err(OnnxError::Invalid { .. }) => {}
            Err(e) => panic!("cut at {cut}: unexpected error {e}"),
            Ok(_) => panic!("cut at {cut}: a truncated model was read"),
        }
    }
}

#[test]
fn fuzzed_models_give_errors_or_models_never_a_panic() {
    let (path, inputs, _) = case("small_cnn");
    let bytes = std::fs::read(path).unwrap();
    let mut rng = 0x2026_1204_u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut decoded, mut imported) = (0, 0);
    for _ in 0..200 {
        let mut b = bytes.clone();
        for _ in 0..1 + next() % 8 {
            let i = (next() as usize) % b.len();
            b[i] = next() as u8;
        }
        let outcome = std::panic::catch_unwind(|| {
            let Ok(model) = Model::from_bytes(&b) else {
                return (false, false);
            };
            let ok = Session::new(&model, &target(), &ImportOptions::default())
                .and_then(|mut s| s.run(&inputs))
                .is_ok();
            (true, ok)
        });
        let (d, i) = outcome.expect("a fuzzed model panicked");
        decoded += d as usize;
        imported += i as usize;
    }
    println!("fuzzed small_cnn: {decoded} of 200 decoded, {imported} ran");
}
