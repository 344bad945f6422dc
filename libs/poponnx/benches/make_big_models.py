"""Builds models of real size with onnx.helper and random weights, for the importer's
benchmark (no download):

    python make_big_models.py OUT_DIR [resnet50] [bert_base]

- resnet50: ResNet-50 v1.5 (He et al. 2016; torchvision's layout: bottleneck blocks
  [3, 4, 6, 3], the stride on the 3x3 conv), batch 1, 3x224x224, 25.6 M parameters, with its
  BatchNormalization nodes (as torch.onnx.export writes them in eval mode);
- bert_base: BERT-base's encoder (Devlin et al. 2019: 12 layers, hidden 768, 12 heads, FFN
  3072, vocabulary 30522, 512 positions), batch 1, sequence 128, token ids in, last hidden
  state out (no pooler), 109 M parameters. Gelu is written as ONNX's Gelu (opset 20).
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 20


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, p):
        self.n += 1
        return f"{p}_{self.n}"

    def weight(self, shape, scale=None, value=None, dtype=np.float32):
        name = self.name("w")
        if value is None:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
            s = scale if scale is not None else np.sqrt(2.0 / max(fan_in, 1))
            value = self.rng.standard_normal(shape, dtype=np.float32) * s
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out


def conv_bn(b, x, cin, cout, k, stride, relu=True):
    w = b.weight([cout, cin, k, k])
    y = b.node("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4)
    scale = b.weight([cout], value=np.ones(cout))
    bias = b.weight([cout], value=np.zeros(cout))
    mean = b.weight([cout], value=np.zeros(cout))
    var = b.weight([cout], value=np.ones(cout))
    y = b.node("BatchNormalization", [y, scale, bias, mean, var], epsilon=1e-5)
    return b.node("Relu", [y]) if relu else y


def bottleneck(b, x, cin, width, stride):
    cout = width * 4
    y = conv_bn(b, x, cin, width, 1, 1)
    y = conv_bn(b, y, width, width, 3, stride)
    y = conv_bn(b, y, width, cout, 1, 1, relu=False)
    short = conv_bn(b, x, cin, cout, 1, stride, relu=False) if stride != 1 or cin != cout else x
    return b.node("Relu", [b.node("Add", [y, short])]), cout


def resnet50():
    b = Builder(50)
    y = conv_bn(b, "x", 3, 64, 7, 2)
    y = b.node("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = 64
    for width, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        for i in range(blocks):
            y, c = bottleneck(b, y, c, width, stride if i == 0 else 1)
    y = b.node("GlobalAveragePool", [y])
    y = b.node("Flatten", [y])
    y = b.node("Gemm", [y, b.weight([1000, c], scale=0.01), b.weight([1000], value=np.zeros(1000))], transB=1)
    b.nodes[-1].output[0] = "logits"
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 224, 224])
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])
    return b, [x], [out]


def layer_norm(b, x, d):
    g = b.weight([d], value=np.ones(d))
    e = b.weight([d], value=np.zeros(d))
    return b.node("LayerNormalization", [x, g, e], axis=-1, epsilon=1e-12)


def dense(b, x, din, dout):
    return b.node("Add", [b.node("MatMul", [x, b.weight([din, dout], scale=0.02)]), b.weight([dout], value=np.zeros(dout))])


def encoder_layer(b, x, batch, seq, d, heads, ffn):
    dh = d // heads
    split = b.weight([4], value=[batch, seq, heads, dh], dtype=np.int64)
    merge = b.weight([3], value=[batch, seq, d], dtype=np.int64)
    q = b.node("Transpose", [b.node("Reshape", [dense(b, x, d, d), split])], perm=[0, 2, 1, 3])
    k = b.node("Transpose", [b.node("Reshape", [dense(b, x, d, d), split])], perm=[0, 2, 3, 1])
    v = b.node("Transpose", [b.node("Reshape", [dense(b, x, d, d), split])], perm=[0, 2, 1, 3])
    s = b.node("Mul", [b.node("MatMul", [q, k]), b.weight([], value=1 / np.sqrt(dh))])
    a = b.node("Softmax", [s], axis=-1)
    o = b.node("Reshape", [b.node("Transpose", [b.node("MatMul", [a, v])], perm=[0, 2, 1, 3]), merge])
    x = layer_norm(b, b.node("Add", [x, dense(b, o, d, d)]), d)
    h = b.node("Gelu", [dense(b, x, d, ffn)])
    return layer_norm(b, b.node("Add", [x, dense(b, h, ffn, d)]), d)


def bert_base(batch=1, seq=128, d=768, heads=12, ffn=3072, layers=12, vocab=30522):
    b = Builder(110)
    words = b.weight([vocab, d], scale=0.02)
    positions = b.weight([1, seq, d], scale=0.02)
    y = b.node("Add", [b.node("Gather", [words, "ids"], axis=0), positions])
    y = layer_norm(b, y, d)
    for _ in range(layers):
        y = encoder_layer(b, y, batch, seq, d, heads, ffn)
    b.nodes[-1].output[0] = "hidden"
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [batch, seq])
    out = helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [batch, seq, d])
    return b, [ids], [out]


def save(out, name, built):
    b, inputs, outputs = built
    g = helper.make_graph(b.nodes, name, inputs, outputs, b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="make_big_models.py")
    params = sum(int(np.prod(t.dims)) for t in b.inits if t.data_type == TensorProto.FLOAT)
    onnx.save(m, os.path.join(out, name + ".onnx"))
    print(f"{name}: {len(b.nodes)} nodes, {params / 1e6:.1f} M parameters")


def main():
    out = sys.argv[1]
    which = sys.argv[2:] or ["resnet50", "bert_base"]
    os.makedirs(out, exist_ok=True)
    for name in which:
        save(out, name, {"resnet50": resnet50, "bert_base": bert_base}[name]())


if __name__ == "__main__":
    main()
