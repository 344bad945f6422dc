//! Rewrites of the model before it is lowered, as PopART's transforms are: each keeps the
//! model's results (within rounding) and leaves fewer ops to lower.
//!
//! - [`fold_batch_norms`]: a `BatchNormalization` in inference after a `Conv` whose weights
//!   and the normalisation's parameters are initializers is folded into the convolution's
//!   weights and bias (one compute set and one pass over the activations fewer per layer).

use std::collections::{BTreeMap, HashMap};

use crate::host::{ElemType, HostData, HostTensor};
use crate::model::{AttrValue, ModelGraph, Node};

/// The graph as lowered: its nodes after the rewrites, and the initializers they added (the
/// model's own are kept as they are, unread where a rewrite replaced them).
pub(crate) struct Rewritten {
    pub nodes: Vec<Node>,
    pub initializers: BTreeMap<String, HostTensor>,
}

/// The rewrites, in order.
pub(crate) fn run(g: &ModelGraph) -> Rewritten {
    fold_batch_norms(g)
}

/// How many nodes read each value (and the graph outputs, which count as readers).
fn readers(g: &ModelGraph) -> HashMap<String, usize> {
    let mut r = HashMap::new();
    for n in &g.nodes {
        for i in n.inputs.iter().filter(|i| !i.is_empty()) {
            *r.entry(i.clone()).or_default() += 1;
        }
    }
    for o in &g.outputs {
        *r.entry(o.name.clone()).or_default() += 1;
    }
    r
}

/// A float initializer's values, when `name` is one of the given shape.
fn floats(g: &ModelGraph, name: &str, len: usize) -> Option<Vec<f64>> {
    let t = g.initializers.get(name)?;
    match (&t.data, t.ty) {
        (HostData::Float(v), ElemType::Float) if v.len() == len => Some(v.clone()),
        _ => None,
    }
}

/// The epsilon of a batch normalisation that runs in inference, or `None` when it does not
/// qualify (training mode, more outputs, attributes this rewrite does not know).
fn inference_epsilon(n: &Node) -> Option<f64> {
    let mut eps = 1e-5;
    for (k, v) in &n.attributes {
        match (k.as_str(), v) {
            ("epsilon", AttrValue::Float(e)) => eps = f64::from(*e),
            ("momentum", _) => {}
            ("training_mode", AttrValue::Int(0)) => {}
            _ => return None,
        }
    }
    (n.outputs.iter().filter(|o| !o.is_empty()).count() == 1 && n.inputs.len() == 5).then_some(eps)
}

/// Folds `BatchNormalization(Conv(x, W, B))` into `Conv(x, W', B')`:
/// `W'[o] = W[o] · s[o]`, `B'[o] = (B[o] − mean[o]) · s[o] + bias[o]`, with
/// `s = scale / sqrt(var + epsilon)`, when the convolution's output has no other reader.
pub(crate) fn fold_batch_norms(g: &ModelGraph) -> Rewritten {
    let mut nodes = g.nodes.clone();
    let mut added = BTreeMap::new();
    let producer: HashMap<String, usize> = g
        .nodes
        .iter()
        .enumerate()
        .flat_map(|(i, n)| n.outputs.iter().map(move |o| (o.clone(), i)))
        .collect();
    let count = readers(g);
    let mut removed = vec![false; nodes.len()];
    for b in 0..nodes.len() {
        let bn = &nodes[b];
        if bn.op != "BatchNormalization" || !(bn.domain.is_empty() || bn.domain == "ai.onnx") {
            continue;
        }
        let Some(eps) = inference_epsilon(bn) else {
            continue;
        };
        let Some(&c) = producer.get(&bn.inputs[0]) else {
            continue;
        };
        let conv = &nodes[c];
        if conv.op != "Conv" || count.get(&bn.inputs[0]) != Some(&1) || removed[c] {
            continue;
        }
        let Some(w) = conv.inputs.get(1).and_then(|w| g.initializers.get(w)) else {
            continue;
        };
        let (Some(&out_ch), HostData::Float(wv), ElemType::Float) =
            (w.shape.first(), &w.data, w.ty)
        else {
            continue;
        };
        let params: Option<Vec<Vec<f64>>> = bn.inputs[1..5]
            .iter()
            .map(|p| floats(g, p, out_ch))
            .collect();
        let Some(params) = params else { continue };
        let bias = match conv.inputs.get(2).filter(|s| !s.is_empty()) {
            Some(name) => match floats(g, name, out_ch) {
                Some(v) => v,
                None => continue,
            },
            None => vec![0.0; out_ch],
        };
        let (scale, shift, mean, var) = (&params[0], &params[1], &params[2], &params[3]);
        let s: Vec<f64> = (0..out_ch)
            .map(|o| scale[o] / (var[o] + eps).sqrt())
            .collect();
        let per = wv.len() / out_ch.max(1);
        let w2: Vec<f64> = wv
            .iter()
            .enumerate()
            .map(|(i, &x)| x * s[i / per.max(1)])
            .collect();
        let b2: Vec<f64> = (0..out_ch)
            .map(|o| (bias[o] - mean[o]) * s[o] + shift[o])
            .collect();
        let (wname, bname) = (
            format!("{}/folded_weights", bn.name),
            format!("{}/folded_bias", bn.name),
        );
        let wshape = w.shape.clone();
        added.insert(
            wname.clone(),
            HostTensor::float(ElemType::Float, &wshape, w2),
        );
        added.insert(
            bname.clone(),
            HostTensor::float(ElemType::Float, &[out_ch], b2),
        );
        let out = bn.outputs[0].clone();
        let conv = &mut nodes[c];
        conv.inputs.truncate(1);
        conv.inputs.extend([wname, bname]);
        conv.outputs = vec![out];
        removed[b] = true;
    }
    let mut i = 0;
    nodes.retain(|_| {
        i += 1;
        !removed[i - 1]
    });
    Rewritten {
        nodes,
        initializers: added,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ValueInfo;

    fn node(op: &str, inputs: &[&str], outputs: &[&str]) -> Node {
        Node {
            index: 0,
            name: op.to_lowercase(),
            op: op.into(),
            domain: String::new(),
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            outputs: outputs.iter().map(|s| s.to_string()).collect(),
            attributes: vec![("epsilon".into(), AttrValue::Float(0.25))],
        }
    }

    /// Conv(x, W[2, 1, 1, 1], B) → BatchNormalization → y, with `extra` also reading the
    /// convolution's output when set.
    fn graph(extra: bool) -> ModelGraph {
        let f = |name: &str, v: Vec<f64>| {
            (
                name.to_string(),
                HostTensor::float(ElemType::Float, &[v.len()], v),
            )
        };
        let mut g = ModelGraph::default();
        g.initializers.extend([
            (
                "w".to_string(),
                HostTensor::float(ElemType::Float, &[2, 1, 1, 1], vec![2.0, -3.0]),
            ),
            f("b", vec![1.0, 0.5]),
            f("scale", vec![4.0, 1.0]),
            f("shift", vec![0.5, -1.0]),
            f("mean", vec![1.0, 2.0]),
            f("var", vec![3.75, 0.0]),
        ]);
        let mut conv = node("Conv", &["x", "w", "b"], &["c"]);
        conv.attributes.clear();
        g.nodes = vec![
            conv,
            node(
                "BatchNormalization",
                &["c", "scale", "shift", "mean", "var"],
                &["y"],
            ),
        ];
        if extra {
            g.nodes.push(node("Relu", &["c"], &["z"]));
        }
        g.outputs = vec![ValueInfo {
            name: "y".into(),
            ty: ElemType::Float,
            shape: None,
        }];
        g
    }

    #[test]
    fn a_batch_norm_after_a_conv_becomes_the_convs_weights_and_bias() {
        let r = fold_batch_norms(&graph(false));
        assert_eq!(r.nodes.len(), 1);
        assert_eq!(r.nodes[0].op, "Conv");
        assert_eq!(r.nodes[0].outputs, vec!["y".to_string()]);
        // s = scale / sqrt(var + 0.25) = [4 / 2, 1 / 0.5] = [2, 2].
        let w = &r.initializers[&r.nodes[0].inputs[1]];
        let b = &r.initializers[&r.nodes[0].inputs[2]];
        assert_eq!(w.to_f64(), vec![4.0, -6.0]);
        // (b - mean) · s + shift = [(1 - 1) · 2 + 0.5, (0.5 - 2) · 2 - 1].
        assert_eq!(b.to_f64(), vec![0.5, -4.0]);
    }

    #[test]
    fn a_conv_output_read_elsewhere_is_not_folded() {
        let r = fold_batch_norms(&graph(true));
        assert_eq!(r.nodes.len(), 3);
        assert!(r.initializers.is_empty());
    }
}
