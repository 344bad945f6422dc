//! The image and loss op families on cases ONNX's node tests leave out (old opsets, integer
//! images, round trips) and on bad input, each a typed error naming the node.

use std::collections::BTreeMap;

use poponnx::{
    AttrValue, Dim, ElemType, HostTensor, ImportOptions, Model, ModelGraph, Node, OnnxError,
    Session, ValueInfo,
};

fn target() -> poplar::Target {
    poplar::Target::custom(4, 256 * 1024)
}

/// A one-node model: graph inputs `inputs` (name, type, shape), initializers `init`, one
/// output per name of `outputs`.
fn one_node(
    opset: i64,
    op: &str,
    node_inputs: &[&str],
    outputs: &[&str],
    attributes: Vec<(&str, AttrValue)>,
    inputs: &[(&str, ElemType, &[usize])],
    init: Vec<(&str, HostTensor)>,
) -> Model {
    let info = |name: &str, ty, shape: Option<&[usize]>| ValueInfo {
        name: name.into(),
        ty,
        shape: shape.map(|s| s.iter().map(|&d| Dim::Fixed(d)).collect()),
    };
    Model {
        opset,
        producer: "test".into(),
        graph: ModelGraph {
            name: "g".into(),
            nodes: vec![Node {
                index: 0,
                name: "n".into(),
                op: op.into(),
                domain: String::new(),
                inputs: node_inputs.iter().map(|s| s.to_string()).collect(),
                outputs: outputs.iter().map(|s| s.to_string()).collect(),
                attributes: attributes
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
            }],
            inputs: inputs
                .iter()
                .map(|(n, ty, s)| info(n, *ty, Some(s)))
                .collect(),
            outputs: outputs
                .iter()
                .map(|n| info(n, ElemType::Float, None))
                .collect(),
            initializers: init.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        },
    }
}

fn run(model: &Model, inputs: Vec<(&str, HostTensor)>) -> Vec<HostTensor> {
    let mut session = Session::new(model, &target(), &ImportOptions::default()).unwrap();
    let inputs: BTreeMap<String, HostTensor> = inputs
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    session
        .run(&inputs)
        .unwrap()
        .into_iter()
        .map(|(_, v)| v)
        .collect()
}

fn import_error(model: &Model) -> OnnxError {
    match Session::new(model, &target(), &ImportOptions::default()) {
        Err(e) => e,
        Ok(_) => panic!("the model was accepted"),
    }
}

fn floats(shape: &[usize], v: &[f64]) -> HostTensor {
    HostTensor::float(ElemType::Float, shape, v.to_vec())
}

fn close(got: &HostTensor, want: &[f64]) {
    let g = got.to_f64();
    assert_eq!(g.len(), want.len(), "{g:?} vs {want:?}");
    for (a, b) in g.iter().zip(want) {
        assert!((a - b).abs() <= 1e-5 + 1e-5 * b.abs(), "{g:?} vs {want:?}");
    }
}

#[test]
fn upsample_linear_with_scales_attribute_is_asymmetric_and_clamps_at_the_edge() {
    let model = one_node(
        7,
        "Upsample",
        &["x"],
        &["y"],
        vec![
            ("mode", AttrValue::String("linear".into())),
            ("scales", AttrValue::Floats(vec![1.0, 2.0])),
        ],
        &[("x", ElemType::Float, &[1, 2])],
        vec![],
    );
    let y = run(&model, vec![("x", floats(&[1, 2], &[1.0, 2.0]))]);
    assert_eq!(y[0].shape, [1, 4]);
    close(&y[0], &[1.0, 1.5, 2.0, 2.0]);
}

#[test]
fn resize_at_opset_10_takes_scales_as_its_second_input() {
    let model = one_node(
        10,
        "Resize",
        &["x", "s"],
        &["y"],
        vec![],
        &[("x", ElemType::Float, &[1, 3])],
        vec![("s", floats(&[2], &[1.0, 2.0]))],
    );
    let y = run(&model, vec![("x", floats(&[1, 3], &[1.0, 2.0, 3.0]))]);
    assert_eq!(y[0].shape, [1, 6]);
    close(&y[0], &[1.0, 1.0, 2.0, 2.0, 3.0, 3.0]);
}

#[test]
fn a_resize_of_integers_gathers_exactly_or_interpolates_in_float_and_truncates() {
    let sizes = HostTensor::int(ElemType::Int64, &[2], vec![2, 4]);
    let make = |mode: &str| {
        one_node(
            13,
            "Resize",
            &["x", "", "", "sizes"],
            &["y"],
            vec![("mode", AttrValue::String(mode.into()))],
            &[("x", ElemType::Int32, &[2, 2])],
            vec![("sizes", sizes.clone())],
        )
    };
    let x = HostTensor::int(ElemType::Int32, &[2, 2], vec![7, -8, 9, 100_000]);
    let y = run(&make("nearest"), vec![("x", x.clone())]);
    assert_eq!(y[0].to_i64(), [7, 7, -8, -8, 9, 9, 100_000, 100_000]);
    let y = run(&make("linear"), vec![("x", x)]);
    assert_eq!(y[0].to_i64(), [7, 3, -4, -8, 9, 25_006, 75_002, 100_000]);
}

#[test]
fn resize_scales_computed_on_the_chip_are_refused_as_not_constant() {
    let model = one_node(
        13,
        "Resize",
        &["x", "", "s"],
        &["y"],
        vec![],
        &[
            ("x", ElemType::Float, &[1, 2]),
            ("s", ElemType::Float, &[2]),
        ],
        vec![],
    );
    assert!(matches!(
        import_error(&model),
        OnnxError::NotConstant { index: 2, .. }
    ));
}

#[test]
fn resize_refuses_an_unknown_mode_and_antialiased_nearest() {
    let s = floats(&[2], &[1.0, 2.0]);
    for (k, v) in [("mode", "bicubic"), ("coordinate_transformation_mode", "x")] {
        let model = one_node(
            13,
            "Resize",
            &["x", "", "s"],
            &["y"],
            vec![(k, AttrValue::String(v.into()))],
            &[("x", ElemType::Float, &[1, 2])],
            vec![("s", s.clone())],
        );
        match import_error(&model) {
            OnnxError::UnsupportedAttribute { attribute, .. } => assert_eq!(attribute, k),
            e => panic!("wrong error: {e}"),
        }
    }
    let model = one_node(
        18,
        "Resize",
        &["x", "", "s"],
        &["y"],
        vec![("antialias", AttrValue::Int(1))],
        &[("x", ElemType::Float, &[1, 2])],
        vec![("s", s)],
    );
    assert!(matches!(
        import_error(&model),
        OnnxError::UnsupportedAttribute { attribute, .. } if attribute == "antialias"
    ));
}

#[test]
fn space_to_depth_then_depth_to_space_in_dcr_mode_is_the_identity() {
    let x: Vec<f64> = (0..32).map(f64::from).collect();
    let mut model = one_node(
        13,
        "SpaceToDepth",
        &["x"],
        &["d"],
        vec![("blocksize", AttrValue::Int(2))],
        &[("x", ElemType::Float, &[1, 2, 4, 4])],
        vec![],
    );
    model.graph.nodes.push(Node {
        index: 1,
        name: "back".into(),
        op: "DepthToSpace".into(),
        domain: String::new(),
        inputs: vec!["d".into()],
        outputs: vec!["y".into()],
        attributes: vec![("blocksize".into(), AttrValue::Int(2))],
    });
    model.graph.outputs[0].name = "y".into();
    let y = run(&model, vec![("x", floats(&[1, 2, 4, 4], &x))]);
    assert_eq!(y[0].shape, [1, 2, 4, 4]);
    close(&y[0], &x);
}

#[test]
fn depth_to_space_refuses_a_3d_input_a_bad_blocksize_and_a_bad_mode() {
    let make = |shape: &'static [usize], attrs: Vec<(&'static str, AttrValue)>| {
        one_node(
            13,
            "DepthToSpace",
            &["x"],
            &["y"],
            attrs,
            &[("x", ElemType::Float, shape)],
            vec![],
        )
    };
    let b2 = || ("blocksize", AttrValue::Int(2));
    assert!(matches!(
        import_error(&make(&[4, 2, 2], vec![b2()])),
        OnnxError::Shape { .. }
    ));
    assert!(matches!(
        import_error(&make(&[1, 4, 2, 2], vec![("blocksize", AttrValue::Int(0))])),
        OnnxError::UnsupportedAttribute { attribute, .. } if attribute == "blocksize"
    ));
    let mode = ("mode", AttrValue::String("RDC".into()));
    assert!(matches!(
        import_error(&make(&[1, 4, 2, 2], vec![b2(), mode])),
        OnnxError::UnsupportedAttribute { attribute, .. } if attribute == "mode"
    ));
}

#[test]
fn center_crop_pad_pads_integers_with_zeros_and_crops_centred() {
    let model = one_node(
        18,
        "CenterCropPad",
        &["x", "shape"],
        &["y"],
        vec![],
        &[("x", ElemType::Int32, &[2, 5])],
        vec![("shape", HostTensor::int(ElemType::Int64, &[2], vec![5, 2]))],
    );
    let x = HostTensor::int(ElemType::Int32, &[2, 5], (1..=10).collect());
    let y = run(&model, vec![("x", x)]);
    assert_eq!(y[0].shape, [5, 2]);
    assert_eq!(y[0].to_i64(), [0, 0, 2, 3, 7, 8, 0, 0, 0, 0]);
}

#[test]
fn losses_refuse_float_labels_mismatched_shapes_and_unknown_reductions() {
    let make = |lty, lshape: &'static [usize], reduction: &str| {
        one_node(
            13,
            "NegativeLogLikelihoodLoss",
            &["x", "t"],
            &["l"],
            vec![("reduction", AttrValue::String(reduction.into()))],
            &[("x", ElemType::Float, &[2, 3]), ("t", lty, lshape)],
            vec![],
        )
    };
    assert!(matches!(
        import_error(&make(ElemType::Float, &[2], "mean")),
        OnnxError::UnsupportedType { .. }
    ));
    assert!(matches!(
        import_error(&make(ElemType::Int64, &[3], "mean")),
        OnnxError::Shape { .. }
    ));
    assert!(matches!(
        import_error(&make(ElemType::Int64, &[2], "max")),
        OnnxError::UnsupportedAttribute { attribute, .. } if attribute == "reduction"
    ));
}

#[test]
fn softmax_cross_entropy_with_an_ignored_class_in_range_averages_the_others() {
    let model = one_node(
        13,
        "SoftmaxCrossEntropyLoss",
        &["x", "t"],
        &["l", "p"],
        vec![("ignore_index", AttrValue::Int(1))],
        &[
            ("x", ElemType::Float, &[3, 2]),
            ("t", ElemType::Int64, &[3]),
        ],
        vec![],
    );
    let x = floats(&[3, 2], &[0.0, 0.0, 1.0, 3.0, 2.0, 0.0]);
    let t = HostTensor::int(ElemType::Int64, &[3], vec![0, 1, 0]);
    let out = run(&model, vec![("x", x), ("t", t)]);
    let lse = |a: f64, b: f64| a.max(b) + ((a - a.max(b)).exp() + (b - a.max(b)).exp()).ln();
    let l0 = lse(0.0, 0.0);
    let l2 = lse(2.0, 0.0) - 2.0;
    close(&out[0], &[(l0 + l2) / 2.0]);
    assert_eq!(out[1].shape, [3, 2]);
    close(
        &out[1],
        &[
            -l0,
            -l0,
            1.0 - lse(1.0, 3.0),
            3.0 - lse(1.0, 3.0),
            -l2,
            -lse(2.0, 0.0),
        ],
    );
}

#[test]
fn a_downsampling_scale_held_in_f16_keeps_every_output_position() {
    let model = one_node(
        13,
        "Resize",
        &["x", "", "s"],
        &["y"],
        vec![("mode", AttrValue::String("linear".into()))],
        &[("x", ElemType::Float, &[1, 6])],
        vec![("s", floats(&[2], &[1.0, 1.0 / 3.0]))],
    );
    let options = ImportOptions {
        fp16: true,
        ..Default::default()
    };
    let mut session = Session::new(&model, &target(), &options).unwrap();
    let x = floats(&[1, 6], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let inputs = BTreeMap::from([("x".to_string(), x)]);
    let y = session.run(&inputs).unwrap().remove(0).1;
    assert_eq!(y.shape, [1, 2]);
    for (g, w) in y.to_f64().iter().zip([1.0, 4.0]) {
        assert!((g - w).abs() < 1e-2, "{g} vs {w}");
    }
}

#[test]
fn a_resize_to_more_elements_than_the_chip_indexes_is_refused() {
    let model = one_node(
        13,
        "Resize",
        &["x", "", "s"],
        &["y"],
        vec![],
        &[("x", ElemType::Float, &[2, 6])],
        vec![("s", floats(&[2], &[1e6, 1e6]))],
    );
    assert!(matches!(import_error(&model), OnnxError::Shape { .. }));
}

#[test]
fn a_resize_given_both_scales_and_sizes_is_refused() {
    let model = one_node(
        13,
        "Resize",
        &["x", "", "s", "z"],
        &["y"],
        vec![],
        &[("x", ElemType::Float, &[2, 6])],
        vec![
            ("s", floats(&[2], &[1.0, 2.0])),
            ("z", HostTensor::int(ElemType::Int64, &[2], vec![2, 12])),
        ],
    );
    match import_error(&model) {
        OnnxError::Shape { what, .. } => assert!(what.contains("input 3"), "{what}"),
        e => panic!("wrong error: {e}"),
    }
}

#[test]
fn a_linear_resize_of_uint8_pixels_is_computed_in_float() {
    let model = one_node(
        13,
        "Resize",
        &["x", "", "", "sizes"],
        &["y"],
        vec![("mode", AttrValue::String("linear".into()))],
        &[("x", ElemType::Uint8, &[1, 2])],
        vec![("sizes", HostTensor::int(ElemType::Int64, &[2], vec![1, 4]))],
    );
    let x = HostTensor::int(ElemType::Uint8, &[1, 2], vec![10, 250]);
    let y = run(&model, vec![("x", x)]);
    assert_eq!(y[0].ty, ElemType::Uint8);
    assert_eq!(y[0].to_i64(), [10, 70, 190, 250]);
}
