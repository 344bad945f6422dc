//! The reduction and data-movement lowerings on small models built in code: host folding of
//! shape arithmetic, the edge cases of `Slice` and `Pad`, and the typed errors of bad input.

use std::collections::BTreeMap;

use poplar::Target;
use poponnx::{
    AttrValue, Dim, ElemType, HostTensor, ImportOptions, Model, ModelGraph, Node, OnnxError,
    Session, ValueInfo,
};

/// A node of `op` from `inputs` to `outputs` with `attributes`.
fn node(op: &str, inputs: &[&str], outputs: &[&str], attributes: Vec<(&str, AttrValue)>) -> Node {
    Node {
        index: 0,
        name: format!("{op}_node"),
        op: op.into(),
        domain: String::new(),
        inputs: inputs.iter().map(|s| s.to_string()).collect(),
        outputs: outputs.iter().map(|s| s.to_string()).collect(),
        attributes: attributes
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    }
}

fn info(name: &str, ty: ElemType, shape: &[usize]) -> ValueInfo {
    ValueInfo {
        name: name.into(),
        ty,
        shape: Some(shape.iter().map(|&d| Dim::Fixed(d)).collect()),
    }
}

fn ints(v: &[i64]) -> HostTensor {
    HostTensor::int(ElemType::Int64, &[v.len()], v.to_vec())
}

fn floats(shape: &[usize], v: Vec<f64>) -> HostTensor {
    HostTensor::float(ElemType::Float, shape, v)
}

/// A model of `nodes` taking `x` (float, `shape`) with `inits`, giving `outputs`.
fn model(
    nodes: Vec<Node>,
    shape: &[usize],
    inits: Vec<(&str, HostTensor)>,
    outputs: &[&str],
) -> Model {
    let nodes = nodes
        .into_iter()
        .enumerate()
        .map(|(i, mut n)| {
            n.index = i;
            n
        })
        .collect();
    Model {
        opset: 18,
        producer: "test".into(),
        graph: ModelGraph {
            name: "g".into(),
            nodes,
            inputs: vec![info("x", ElemType::Float, shape)],
            outputs: outputs
                .iter()
                .map(|o| ValueInfo {
                    name: o.to_string(),
                    ty: ElemType::Float,
                    shape: None,
                })
                .collect(),
            initializers: inits.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        },
    }
}

/// Runs `m` on `x` and returns its outputs.
fn run(m: &Model, x: HostTensor) -> Result<Vec<HostTensor>, OnnxError> {
    let target = Target::custom(4, 256 * 1024);
    let mut s = Session::new(m, &target, &ImportOptions::default())?;
    let mut inputs = BTreeMap::new();
    inputs.insert("x".to_string(), x);
    Ok(s.run(&inputs)?.into_iter().map(|(_, v)| v).collect())
}

fn iota(shape: &[usize]) -> HostTensor {
    let n: usize = shape.iter().product();
    floats(shape, (0..n).map(|i| i as f64).collect())
}

#[test]
fn shape_arithmetic_is_folded_on_the_host() {
    // Shape → Gather → Unsqueeze → Concat → Reshape: [2, 3, 4] to [2, 12].
    let nodes = vec![
        node("Shape", &["x"], &["s"], vec![]),
        node("Gather", &["s", "zero"], &["n"], vec![]),
        node("Unsqueeze", &["n", "axes"], &["n1"], vec![]),
        node(
            "Concat",
            &["n1", "minus1"],
            &["shape"],
            vec![("axis", AttrValue::Int(0))],
        ),
        node("Reshape", &["x", "shape"], &["y"], vec![]),
    ];
    let inits = vec![
        ("zero", HostTensor::int(ElemType::Int64, &[], vec![0])),
        ("axes", ints(&[0])),
        ("minus1", ints(&[-1])),
    ];
    let m = model(nodes, &[2, 3, 4], inits, &["y"]);
    let out = run(&m, iota(&[2, 3, 4])).unwrap();
    assert_eq!(out[0].shape, [2, 12]);
    assert_eq!(out[0].to_f64(), iota(&[24]).to_f64());
}

#[test]
fn slice_with_negative_steps_and_clamped_ends() {
    let nodes = vec![node(
        "Slice",
        &["x", "st", "en", "ax", "sp"],
        &["y"],
        vec![],
    )];
    let inits = vec![
        ("st", ints(&[-1, 0])),
        ("en", ints(&[i64::MIN, 100])),
        ("ax", ints(&[1, 0])),
        ("sp", ints(&[-2, 1])),
    ];
    let m = model(nodes, &[2, 5], inits, &["y"]);
    let out = run(&m, iota(&[2, 5])).unwrap();
    assert_eq!(out[0].shape, [2, 3]);
    assert_eq!(out[0].to_f64(), [4.0, 2.0, 0.0, 9.0, 7.0, 5.0]);
}

#[test]
fn pad_crops_with_negative_pads_and_reflects_beyond_the_axis() {
    let crop = vec![node("Pad", &["x", "p"], &["y"], vec![])];
    let m = model(crop, &[4], vec![("p", ints(&[-1, 2]))], &["y"]);
    let out = run(&m, iota(&[4])).unwrap();
    assert_eq!(out[0].to_f64(), [1.0, 2.0, 3.0, 0.0, 0.0]);

    let mode = ("mode", AttrValue::String("reflect".into()));
    let reflect = vec![node("Pad", &["x", "p"], &["y"], vec![mode])];
    let m = model(reflect, &[3], vec![("p", ints(&[4, 0]))], &["y"]);
    let out = run(&m, iota(&[3])).unwrap();
    // numpy.pad([0, 1, 2], (4, 0), "reflect")
    assert_eq!(out[0].to_f64(), [0.0, 1.0, 2.0, 1.0, 0.0, 1.0, 2.0]);
}

#[test]
fn log_sum_exp_is_stable_for_large_values() {
    let nodes = vec![node(
        "ReduceLogSumExp",
        &["x", "ax"],
        &["y"],
        vec![("keepdims", AttrValue::Int(0))],
    )];
    let m = model(nodes, &[2, 2], vec![("ax", ints(&[1]))], &["y"]);
    let x = floats(&[2, 2], vec![1000.0, 1000.0, -1.0, f64::NEG_INFINITY]);
    let out = run(&m, x).unwrap();
    let y = out[0].to_f64();
    assert!((y[0] - (1000.0 + 2f64.ln())).abs() < 1e-3, "{y:?}");
    assert!((y[1] + 1.0).abs() < 1e-6, "{y:?}");
}

#[test]
fn arg_max_takes_the_last_of_equal_maxima() {
    let attrs = vec![
        ("axis", AttrValue::Int(1)),
        ("select_last_index", AttrValue::Int(1)),
    ];
    let nodes = vec![node("ArgMax", &["x"], &["y"], attrs)];
    let m = model(nodes, &[2, 3], vec![], &["y"]);
    let x = floats(&[2, 3], vec![5.0, 5.0, 1.0, 0.0, 2.0, 2.0]);
    let out = run(&m, x).unwrap();
    assert_eq!(out[0].ty, ElemType::Int64);
    assert_eq!(out[0].shape, [2, 1]);
    assert_eq!(out[0].to_i64(), [1, 2]);
}

#[test]
fn split_into_uneven_outputs() {
    let nodes = vec![node(
        "Split",
        &["x"],
        &["a", "b", "c"],
        vec![("num_outputs", AttrValue::Int(3))],
    )];
    let m = model(nodes, &[7], vec![], &["a", "b", "c"]);
    let out = run(&m, iota(&[7])).unwrap();
    let shapes: Vec<_> = out.iter().map(|t| t.shape.clone()).collect();
    assert_eq!(shapes, [vec![3], vec![3], vec![1]]);
    assert_eq!(out[2].to_f64(), [6.0]);
}

#[test]
fn one_hot_counts_negative_indices_from_depth() {
    let nodes = vec![node(
        "OneHot",
        &["x", "depth", "values"],
        &["y"],
        vec![("axis", AttrValue::Int(0))],
    )];
    let inits = vec![
        ("depth", HostTensor::int(ElemType::Int64, &[], vec![3])),
        ("values", floats(&[2], vec![-1.0, 5.0])),
    ];
    let m = model(nodes, &[2], inits, &["y"]);
    let out = run(&m, floats(&[2], vec![-1.0, 0.0])).unwrap();
    assert_eq!(out[0].shape, [3, 2]);
    assert_eq!(out[0].to_f64(), [-1.0, 5.0, -1.0, -1.0, 5.0, -1.0]);
}

#[test]
fn tile_repeats_each_axis() {
    let nodes = vec![node("Tile", &["x", "r"], &["y"], vec![])];
    let m = model(nodes, &[1, 2], vec![("r", ints(&[2, 2]))], &["y"]);
    let out = run(&m, iota(&[1, 2])).unwrap();
    assert_eq!(out[0].shape, [2, 4]);
    assert_eq!(out[0].to_f64(), [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]);
}

#[test]
fn bad_input_is_a_typed_error_naming_the_node() {
    // A host index outside the axis.
    let nodes = vec![
        node("Shape", &["x"], &["s"], vec![]),
        node("Gather", &["s", "i"], &["y"], vec![]),
    ];
    let m = model(nodes, &[2, 3], vec![("i", ints(&[2]))], &["y"]);
    let e = run(&m, iota(&[2, 3])).unwrap_err().to_string();
    assert!(e.contains("Gather") && e.contains("index 2"), "{e}");

    // A step of 0.
    let nodes = vec![node("Slice", &["x", "z", "o", "z", "z"], &["y"], vec![])];
    let inits = vec![("z", ints(&[0])), ("o", ints(&[1]))];
    let m = model(nodes, &[2], inits, &["y"]);
    let e = run(&m, iota(&[2])).unwrap_err().to_string();
    assert!(e.contains("Slice") && e.contains("step"), "{e}");

    // An axis of a scalar.
    let nodes = vec![node("TopK", &["x", "k"], &["v", "i"], vec![])];
    let m = model(nodes, &[], vec![("k", ints(&[1]))], &["v", "i"]);
    let e = run(&m, floats(&[], vec![1.0])).unwrap_err().to_string();
    assert!(e.contains("TopK") && e.contains("scalar"), "{e}");

    // An unknown reduction.
    let nodes = vec![node(
        "ScatterElements",
        &["x", "i", "x"],
        &["y"],
        vec![("reduction", AttrValue::String("avg".into()))],
    )];
    let m = model(nodes, &[2], vec![("i", ints(&[0, 1]))], &["y"]);
    let e = run(&m, iota(&[2])).unwrap_err().to_string();
    assert!(e.contains("reduction") && e.contains("avg"), "{e}");
}

#[test]
fn reductions_of_host_values_are_folded() {
    // The element count of x from its shape: ReduceProd of Shape, then a Reshape to it.
    let nodes = vec![
        node("Shape", &["x"], &["s"], vec![]),
        node("ReduceProd", &["s"], &["n"], vec![]),
        node("Reshape", &["x", "n"], &["y"], vec![]),
        node(
            "ReduceMean",
            &["s"],
            &["m"],
            vec![("keepdims", AttrValue::Int(0))],
        ),
    ];
    let m = model(nodes, &[2, 3, 4], vec![], &["y", "m"]);
    let out = run(&m, iota(&[2, 3, 4])).unwrap();
    assert_eq!(out[0].shape, [24]);
    assert_eq!(out[1].shape, Vec::<usize>::new());
    assert_eq!(out[1].to_i64(), [3]);
}

#[test]
fn narrow_types_are_widened_for_the_gathers_pads_and_scans() {
    let to = |ty: ElemType| vec![("to", AttrValue::Int(ty.code() as i64))];
    let nodes = vec![
        node("Cast", &["x"], &["b"], to(ElemType::Bool)),
        node("Gather", &["b", "i"], &["g"], vec![]),
        node("Pad", &["g", "p"], &["gp"], vec![]),
        node("Cast", &["gp"], &["y"], to(ElemType::Float)),
        node("Cast", &["x"], &["h"], to(ElemType::Float16)),
        node("CumSum", &["h", "ax"], &["c"], vec![]),
        node("Cast", &["c"], &["z"], to(ElemType::Float)),
    ];
    let inits = vec![
        ("i", ints(&[2, 0, -1])),
        ("p", ints(&[1, 0])),
        ("ax", ints(&[0])),
    ];
    let m = model(nodes, &[3], inits, &["y", "z"]);
    let out = run(&m, floats(&[3], vec![0.0, 1.0, 2.0])).unwrap();
    assert_eq!(out[0].to_f64(), [0.0, 1.0, 0.0, 1.0]);
    assert_eq!(out[1].to_f64(), [0.0, 1.0, 3.0]);
}

#[test]
fn tile_and_slice_of_host_values_stay_on_the_host() {
    // Shape [2, 3] tiled to [2, 3, 2, 3], sliced to [3, 2]: x reshaped to it.
    let nodes = vec![
        node("Shape", &["x"], &["s"], vec![]),
        node("Tile", &["s", "r"], &["t"], vec![]),
        node("Slice", &["t", "st", "en"], &["shape"], vec![]),
        node("Reshape", &["x", "shape"], &["y"], vec![]),
    ];
    let inits = vec![("r", ints(&[2])), ("st", ints(&[1])), ("en", ints(&[3]))];
    let m = model(nodes, &[2, 3], inits, &["y"]);
    let out = run(&m, iota(&[2, 3])).unwrap();
    assert_eq!(out[0].shape, [3, 2]);
}
