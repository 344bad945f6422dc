"""Builds the importer's whole-model test models with onnx.helper (no download) and their
reference outputs with onnxruntime.

    python make_models.py OUT_DIR

writes, for each model NAME, OUT_DIR/NAME.onnx, OUT_DIR/NAME/input_<i>.pb and
OUT_DIR/NAME/output_<i>.pb (TensorProtos, as ONNX's node tests hold them):

- add: z = x + y, [2, 3] float (the CLI's test);
- small_cnn: conv, batch norm, relu, max pool, conv, relu, global average pool, flatten,
  gemm, softmax on [2, 3, 16, 16];
- encoder: one transformer encoder layer (d 32, 4 heads, sequence 8, batch 2): attention
  through MatMul and Softmax, residuals, LayerNormalization, a Gelu MLP;
- unsupported: a node of an op no ONNX opset has (its error names the node and the op).
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 20


def save(out, name, model, inputs, run=True):
    onnx.checker.check_model(model) if run else None
    onnx.save(model, os.path.join(out, name + ".onnx"))
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    for i, x in enumerate(inputs):
        with open(os.path.join(d, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x).SerializeToString())
    if not run:
        return
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    outs = sess.run(None, dict(zip(names, inputs)))
    for i, y in enumerate(outs):
        with open(os.path.join(d, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y).SerializeToString())


def model_of(nodes, inputs, outputs, inits, name):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="make_models.py")


def init(rng, name, shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def add_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])
    m = model_of([helper.make_node("Add", ["x", "y"], ["z"], name="add")], [x, y], [z], [], "add")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    return m, [a, a * 0.5]


def small_cnn(rng):
    inits = [
        init(rng, "w1", [8, 3, 3, 3]), init(rng, "b1", [8]),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "scale"),
        init(rng, "bias", [8]), init(rng, "mean", [8], 0.1),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "var"),
        init(rng, "w2", [16, 8, 3, 3]), init(rng, "b2", [16]),
        init(rng, "wd", [10, 16]), init(rng, "bd", [10]),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "scale", "bias", "mean", "var"], ["n1"], name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "wd", "bd"], ["logits"], name="dense", transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=-1),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 16, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10])
    m = model_of(nodes, [x], [y], inits, "small_cnn")
    return m, [rng.standard_normal((2, 3, 16, 16)).astype(np.float32)]


def encoder(rng, b=2, s=8, d=32, h=4, f=64):
    dh = d // h
    inits = [init(rng, n, [d, d]) for n in ("wq", "wk", "wv", "wo")]
    inits += [init(rng, n, [d], 0.1) for n in ("bq", "bk", "bv", "bo")]
    inits += [init(rng, "w1", [d, f]), init(rng, "b1", [f], 0.1), init(rng, "w2", [f, d]), init(rng, "b2", [d], 0.1)]
    inits += [numpy_helper.from_array(np.ones(d, np.float32), "g1"), numpy_helper.from_array(np.zeros(d, np.float32), "e1")]
    inits += [numpy_helper.from_array((1 + 0.1 * rng.standard_normal(d)).astype(np.float32), "g2"), init(rng, "e2", [d], 0.1)]
    inits += [numpy_helper.from_array(np.array([b, s, h, dh], np.int64), "split_heads"),
              numpy_helper.from_array(np.array([b, s, d], np.int64), "merge_heads"),
              numpy_helper.from_array(np.array(1 / np.sqrt(dh), np.float32), "inv_sqrt")]
    nodes = []
    for p in ("q", "k", "v"):
        nodes += [
            helper.make_node("MatMul", ["x", "w" + p], [p + "0"], name="proj_" + p),
            helper.make_node("Add", [p + "0", "b" + p], [p + "1"], name="bias_" + p),
            helper.make_node("Reshape", [p + "1", "split_heads"], [p + "2"], name="split_" + p),
            helper.make_node("Transpose", [p + "2"], [p + "h"], name="heads_" + p,
                             perm=[0, 2, 3, 1] if p == "k" else [0, 2, 1, 3]),
        ]
    nodes += [
        helper.make_node("MatMul", ["qh", "kh"], ["s0"], name="scores"),
        helper.make_node("Mul", ["s0", "inv_sqrt"], ["s1"], name="scale"),
        helper.make_node("Softmax", ["s1"], ["a"], name="attention", axis=-1),
        helper.make_node("MatMul", ["a", "vh"], ["o0"], name="weighted"),
        helper.make_node("Transpose", ["o0"], ["o1"], name="merge", perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["o1", "merge_heads"], ["o2"], name="merge_reshape"),
        helper.make_node("MatMul", ["o2", "wo"], ["o3"], name="proj_o"),
        helper.make_node("Add", ["o3", "bo"], ["o4"], name="bias_o"),
        helper.make_node("Add", ["x", "o4"], ["r1"], name="residual1"),
        helper.make_node("LayerNormalization", ["r1", "g1", "e1"], ["n1"], name="norm1", axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["n1", "w1"], ["m0"], name="mlp_in"),
        helper.make_node("Add", ["m0", "b1"], ["m1"], name="mlp_bias_in"),
        helper.make_node("Gelu", ["m1"], ["m2"], name="gelu"),
        helper.make_node("MatMul", ["m2", "w2"], ["m3"], name="mlp_out"),
        helper.make_node("Add", ["m3", "b2"], ["m4"], name="mlp_bias_out"),
        helper.make_node("Add", ["n1", "m4"], ["r2"], name="residual2"),
        helper.make_node("LayerNormalization", ["r2", "g2", "e2"], ["y"], name="norm2", axis=-1, epsilon=1e-5),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [b, s, d])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [b, s, d])
    m = model_of(nodes, [x], [y], inits, "encoder")
    return m, [rng.standard_normal((b, s, d)).astype(np.float32)]


def unsupported():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    m = model_of([helper.make_node("Frobnicate", ["x"], ["y"], name="mystery")], [x], [y], [], "unsupported")
    return m, [np.ones(4, np.float32)]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20261204)
    m, i = add_model()
    save(out, "add", m, i)
    m, i = small_cnn(rng)
    save(out, "small_cnn", m, i)
    m, i = encoder(rng)
    save(out, "encoder", m, i)
    m, i = unsupported()
    save(out, "unsupported", m, i, run=False)


if __name__ == "__main__":
    main()
