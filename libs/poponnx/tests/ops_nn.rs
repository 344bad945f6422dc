//! The matrix-product and neural-network lowerings on one-node models, against host
//! references: the cases the ONNX node suite lacks at a supported opset (its `Einsum` tests
//! are of opset 12), numpy's `MatMul` promotion and broadcast, and the typed errors.

use std::collections::BTreeMap;

use poponnx::{
    AttrValue, ElemType, HostTensor, ImportOptions, Model, ModelGraph, Node, OnnxError, Session,
    ValueInfo,
};

/// A model of one node `op` over float inputs `x0, x1, …` with outputs `y0, y1, …`.
fn model(op: &str, attrs: Vec<(&str, AttrValue)>, inputs: &[&HostTensor], outputs: usize) -> Model {
    let info = |name: String, t: &HostTensor| ValueInfo {
        name,
        ty: t.ty,
        shape: Some(t.shape.iter().map(|&d| poponnx::Dim::Fixed(d)).collect()),
    };
    let node = Node {
        index: 0,
        name: "n".into(),
        op: op.into(),
        domain: String::new(),
        inputs: (0..inputs.len()).map(|i| format!("x{i}")).collect(),
        outputs: (0..outputs).map(|i| format!("y{i}")).collect(),
        attributes: attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
    };
    Model {
        opset: 17,
        producer: "test".into(),
        graph: ModelGraph {
            name: "g".into(),
            nodes: vec![node],
            inputs: inputs
                .iter()
                .enumerate()
                .map(|(i, t)| info(format!("x{i}"), t))
                .collect(),
            outputs: (0..outputs)
                .map(|i| ValueInfo {
                    name: format!("y{i}"),
                    ty: inputs[0].ty,
                    shape: None,
                })
                .collect(),
            initializers: BTreeMap::new(),
        },
    }
}

/// Runs `op` on `inputs`; its outputs.
fn run(
    op: &str,
    attrs: Vec<(&str, AttrValue)>,
    inputs: &[&HostTensor],
    outputs: usize,
) -> Result<Vec<HostTensor>, OnnxError> {
    let m = model(op, attrs, inputs, outputs);
    let target = poplar::Target::custom(8, 1024 * 1024);
    let mut s = Session::new(&m, &target, &ImportOptions::default())?;
    let feed: BTreeMap<String, HostTensor> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("x{i}"), (*t).clone()))
        .collect();
    Ok(s.run(&feed)?.into_iter().map(|(_, t)| t).collect())
}

/// A float tensor of `shape` with varied values.
fn data(shape: &[usize], seed: u32) -> HostTensor {
    let len = shape.iter().product::<usize>();
    let v = (0..len)
        .map(|i| (((i as u32 * 7 + seed * 13) % 17) as f64 - 8.0) / 4.0)
        .collect();
    HostTensor::float(ElemType::Float, shape, v)
}

/// The element of `t` at `idx` (row-major).
fn at(t: &HostTensor, idx: &[usize]) -> f64 {
    let flat = idx
        .iter()
        .zip(&t.shape)
        .fold(0, |acc, (&i, &d)| acc * d + i);
    t.to_f64()[flat]
}

fn assert_close(got: &HostTensor, shape: &[usize], want: &[f64]) {
    assert_eq!(got.shape, shape);
    for (i, (g, w)) in got.to_f64().iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 + 1e-4 * w.abs(),
            "element {i}: {g} vs {w}"
        );
    }
}

fn einsum(eq: &str, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OnnxError> {
    run(
        "Einsum",
        vec![("equation", AttrValue::String(eq.into()))],
        inputs,
        1,
    )
}

#[test]
fn einsum_batched_matmul() {
    let (a, b) = (data(&[2, 3, 4], 1), data(&[2, 4, 5], 2));
    let y = einsum("bij,bjk->bik", &[&a, &b]).unwrap();
    let mut want = Vec::new();
    for bb in 0..2 {
        for i in 0..3 {
            for k in 0..5 {
                want.push(
                    (0..4)
                        .map(|j| at(&a, &[bb, i, j]) * at(&b, &[bb, j, k]))
                        .sum(),
                );
            }
        }
    }
    assert_close(&y[0], &[2, 3, 5], &want);
}

#[test]
fn einsum_attention_scores_and_implicit_output() {
    let (q, k) = (data(&[1, 2, 3, 4], 3), data(&[1, 2, 5, 4], 4));
    let y = einsum("bhid,bhjd->bhij", &[&q, &k]).unwrap();
    let mut want = Vec::new();
    for h in 0..2 {
        for i in 0..3 {
            for j in 0..5 {
                want.push(
                    (0..4)
                        .map(|d| at(&q, &[0, h, i, d]) * at(&k, &[0, h, j, d]))
                        .sum(),
                );
            }
        }
    }
    assert_close(&y[0], &[1, 2, 3, 5], &want);
    // "ij,jk" implicitly gives "ik".
    let (a, b) = (data(&[3, 4], 5), data(&[4, 2], 6));
    let y = einsum("ij,jk", &[&a, &b]).unwrap();
    let want: Vec<f64> = (0..3)
        .flat_map(|i| (0..2).map(move |k| (i, k)))
        .map(|(i, k)| (0..4).map(|j| at(&a, &[i, j]) * at(&b, &[j, k])).sum())
        .collect();
    assert_close(&y[0], &[3, 2], &want);
}

#[test]
fn einsum_transpose_and_sum() {
    let a = data(&[3, 4], 7);
    let y = einsum("ij->ji", &[&a]).unwrap();
    let want: Vec<f64> = (0..4)
        .flat_map(|j| (0..3).map(move |i| (i, j)))
        .map(|(i, j)| at(&a, &[i, j]))
        .collect();
    assert_close(&y[0], &[4, 3], &want);
    let y = einsum("ij->j", &[&a]).unwrap();
    let want: Vec<f64> = (0..4)
        .map(|j| (0..3).map(|i| at(&a, &[i, j])).sum())
        .collect();
    assert_close(&y[0], &[4], &want);
    // An inner product: a scalar.
    let (u, v) = (data(&[5], 1), data(&[5], 2));
    let y = einsum("i,i", &[&u, &v]).unwrap();
    let want: f64 = (0..5).map(|i| at(&u, &[i]) * at(&v, &[i])).sum();
    assert_close(&y[0], &[], &[want]);
}

#[test]
fn einsum_diagonal_is_a_typed_error() {
    let a = data(&[3, 3], 1);
    let e = einsum("ii->i", &[&a]).unwrap_err();
    assert!(
        matches!(&e, OnnxError::UnsupportedAttribute { attribute, .. } if attribute == "equation"),
        "{e}"
    );
}

#[test]
fn matmul_promotes_vectors_and_broadcasts_batches() {
    let (v, b) = (data(&[3], 1), data(&[2, 3, 4], 2));
    let y = run("MatMul", vec![], &[&v, &b], 1).unwrap();
    let want: Vec<f64> = (0..2)
        .flat_map(|g| (0..4).map(move |k| (g, k)))
        .map(|(g, k)| (0..3).map(|j| at(&v, &[j]) * at(&b, &[g, j, k])).sum())
        .collect();
    assert_close(&y[0], &[2, 4], &want);
}

#[test]
fn matmul_of_integers_is_a_typed_error() {
    let a = HostTensor::int(ElemType::Int32, &[2, 2], vec![1, 2, 3, 4]);
    let e = run("MatMul", vec![], &[&a, &a], 1).unwrap_err();
    assert!(matches!(e, OnnxError::UnsupportedType { .. }), "{e}");
}

#[test]
fn softmax_along_the_first_axis() {
    let x = data(&[2, 3], 3);
    let y = run("Softmax", vec![("axis", AttrValue::Int(0))], &[&x], 1).unwrap();
    let mut want = vec![0.0; 6];
    for j in 0..3 {
        let (a, b) = (at(&x, &[0, j]).exp(), at(&x, &[1, j]).exp());
        want[j] = a / (a + b);
        want[3 + j] = b / (a + b);
    }
    assert_close(&y[0], &[2, 3], &want);
}

#[test]
fn maxpool_indices_column_major() {
    // [1, 2, 3, 4] planes; 2×2 windows, stride 2 along the width, 1 along the height.
    let x = data(&[1, 2, 3, 4], 1);
    let attrs = vec![
        ("kernel_shape", AttrValue::Ints(vec![2, 2])),
        ("strides", AttrValue::Ints(vec![1, 2])),
        ("storage_order", AttrValue::Int(1)),
    ];
    let out = run("MaxPool", attrs, &[&x], 2).unwrap();
    let (mut want_y, mut want_i) = (Vec::new(), Vec::new());
    for c in 0..2 {
        for oh in 0..2 {
            for ow in 0..2 {
                let mut best = (f64::NEG_INFINITY, 0);
                for (h, w) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                    let (h, w) = (oh + h, ow * 2 + w);
                    let v = at(&x, &[0, c, h, w]);
                    if v > best.0 {
                        best = (v, c * 12 + h + w * 3);
                    }
                }
                want_y.push(best.0);
                want_i.push(best.1 as f64);
            }
        }
    }
    assert_close(&out[0], &[1, 2, 2, 2], &want_y);
    assert_eq!(out[1].ty, ElemType::Int64);
    assert_close(&out[1], &[1, 2, 2, 2], &want_i);
}

/// `t` as float16.
fn half(t: &HostTensor) -> HostTensor {
    HostTensor::float(ElemType::Float16, &t.shape, t.to_f64())
}

#[test]
fn float16_models_give_float16() {
    let (a, b) = (data(&[2, 3], 1), data(&[3, 2], 2));
    let y = run("MatMul", vec![], &[&half(&a), &half(&b)], 1).unwrap();
    assert_eq!(y[0].ty, ElemType::Float16);
    let want: Vec<f64> = (0..2)
        .flat_map(|i| (0..2).map(move |k| (i, k)))
        .map(|(i, k)| (0..3).map(|j| at(&a, &[i, j]) * at(&b, &[j, k])).sum())
        .collect();
    assert_close(&y[0], &[2, 2], &want);
    // A 1×1 convolution with a bias is a per-pixel product.
    let (x, w, bias) = (
        data(&[1, 2, 2, 2], 3),
        data(&[1, 2, 1, 1], 4),
        data(&[1], 5),
    );
    let y = run("Conv", vec![], &[&half(&x), &half(&w), &half(&bias)], 1).unwrap();
    assert_eq!(y[0].ty, ElemType::Float16);
    let want: Vec<f64> = (0..4)
        .map(|p| {
            let (h, v) = (p / 2, p % 2);
            at(&bias, &[0])
                + (0..2)
                    .map(|c| at(&x, &[0, c, h, v]) * at(&w, &[0, c, 0, 0]))
                    .sum::<f64>()
        })
        .collect();
    assert_close(&y[0], &[1, 1, 2, 2], &want);
}

#[test]
fn bad_convolutions_are_typed_errors() {
    let (x, w) = (data(&[1, 1, 3, 3], 1), data(&[1, 1, 2, 2], 2));
    // An output_shape of the wrong length.
    let attrs = vec![("output_shape", AttrValue::Ints(vec![4]))];
    let e = run("ConvTranspose", attrs, &[&x, &w], 1).unwrap_err();
    assert!(
        matches!(&e, OnnxError::UnsupportedAttribute { attribute, .. } if attribute == "output_shape"),
        "{e}"
    );
    // Weights over more channels than the input has.
    let w3 = data(&[1, 3, 2, 2], 3);
    let e = run("Conv", vec![], &[&x, &w3], 1).unwrap_err();
    assert!(matches!(e, OnnxError::Shape { .. }), "{e}");
    // An empty input.
    let empty = HostTensor::float(ElemType::Float, &[1, 1, 0, 3], vec![]);
    let attrs = vec![("kernel_shape", AttrValue::Ints(vec![1, 1]))];
    let e = run("MaxPool", attrs, &[&empty], 1).unwrap_err();
    assert!(matches!(e, OnnxError::Shape { .. }), "{e}");
}

#[test]
fn einsum_with_an_ellipsis() {
    let (a, b) = (data(&[2, 3, 4], 1), data(&[2, 4, 5], 2));
    for eq in ["...ij,...jk->...ik", "...ij,...jk"] {
        let y = einsum(eq, &[&a, &b]).unwrap();
        let mut want = Vec::new();
        for g in 0..2 {
            for i in 0..3 {
                for k in 0..5 {
                    want.push(
                        (0..4)
                            .map(|j| at(&a, &[g, i, j]) * at(&b, &[g, j, k]))
                            .sum(),
                    );
                }
            }
        }
        assert_close(&y[0], &[2, 3, 5], &want);
    }
}

#[test]
fn float16_normalisations() {
    let (x, s, b) = (data(&[2, 4], 1), data(&[4], 2), data(&[4], 3));
    let out = run(
        "LayerNormalization",
        vec![],
        &[&half(&x), &half(&s), &half(&b)],
        3,
    )
    .unwrap();
    assert_eq!(out[0].ty, ElemType::Float16);
    assert_eq!(out[1].ty, ElemType::Float);
    let mut want = Vec::new();
    for r in 0..2 {
        let v: Vec<f64> = (0..4).map(|c| at(&x, &[r, c])).collect();
        let mean = v.iter().sum::<f64>() / 4.0;
        let var = v.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / 4.0;
        let inv = 1.0 / (var + 1e-5).sqrt();
        want.extend((0..4).map(|c| (v[c] - mean) * inv * at(&s, &[c]) + at(&b, &[c])));
    }
    let got = out[0].to_f64();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-2 + 1e-3 * w.abs(), "{g} vs {w}");
    }
    // Batch norm at inference, f16 data with f32 statistics.
    let x4 = data(&[1, 2, 1, 2], 4);
    let (mean, var) = (
        data(&[2], 5),
        HostTensor::float(ElemType::Float, &[2], vec![0.5, 2.0]),
    );
    let (sc, bi) = (data(&[2], 6), data(&[2], 7));
    let y = run(
        "BatchNormalization",
        vec![],
        &[&half(&x4), &sc, &bi, &mean, &var],
        1,
    )
    .unwrap();
    assert_eq!(y[0].ty, ElemType::Float16);
    let want: Vec<f64> = (0..4)
        .map(|i| {
            let c = i / 2;
            let v = [0.5, 2.0][c];
            (at(&x4, &[0, c, 0, i % 2]) - at(&mean, &[c])) / (v + 1e-5f64).sqrt() * at(&sc, &[c])
                + at(&bi, &[c])
        })
        .collect();
    for (g, w) in y[0].to_f64().iter().zip(&want) {
        assert!((g - w).abs() < 1e-2 + 1e-3 * w.abs(), "{g} vs {w}");
    }
}
