"""Small ONNX models built with ``onnx.helper`` and seeded random weights: ResNet-18, an MLP and
a transformer encoder layer. The frontend tests, the notebook and the benchmarks import them
(and compare with onnxruntime); this module needs the ``onnx`` package."""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class GraphBuilder:
    """Collects nodes and initializers; names every node ``<prefix>/<op>``-style, as
    exporters do, so imported programs show readable spans."""

    def __init__(self, seed=0):
        self.nodes, self.initializers = [], []
        self.rng = np.random.default_rng(seed)

    def weight(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def random(self, name, shape, scale):
        return self.weight(name, (self.rng.standard_normal(shape) * scale).astype(np.float32))

    def node(self, op, inputs, name, outputs=None, **attrs):
        outputs = outputs or [name]
        self.nodes.append(helper.make_node(op, inputs, outputs, name=name, **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def model(self, name, inputs, outputs, opset):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  producer_name="irlab")
        model.ir_version = 8  # readable by onnxruntime releases of the last years
        onnx.checker.check_model(model)
        return model


def _tensor(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


# ---------------------------------------------------------------------------------------------
# ResNet-18
def _conv_bn(b, x, name, in_ch, out_ch, kernel, stride, relu=True):
    fan_in = in_ch * kernel * kernel
    w = b.random(f"{name}.weight", (out_ch, in_ch, kernel, kernel), math.sqrt(2.0 / fan_in))
    pad = kernel // 2
    y = b.node("Conv", [x, w], f"{name}/Conv", kernel_shape=[kernel, kernel],
               strides=[stride, stride], pads=[pad] * 4)
    bn = [b.weight(f"{name}.bn.{part}", value.astype(np.float32)) for part, value in (
        ("weight", 1 + 0.1 * b.rng.standard_normal(out_ch)),
        ("bias", 0.1 * b.rng.standard_normal(out_ch)),
        ("running_mean", 0.1 * b.rng.standard_normal(out_ch)),
        ("running_var", 1 + 0.1 * b.rng.random(out_ch)))]
    y = b.node("BatchNormalization", [y] + bn, f"{name}/BatchNormalization", epsilon=1e-5)
    return b.node("Relu", [y], f"{name}/Relu") if relu else y


def resnet18(batch=1, image_size=224, num_classes=1000, seed=0, opset=13):
    """ResNet-18 (BasicBlocks [2, 2, 2, 2]) with Conv/BatchNormalization/Relu/MaxPool/Add/
    GlobalAveragePool/Flatten/Gemm, as torchvision exports it."""
    b = GraphBuilder(seed)
    y = _conv_bn(b, "input", "conv1", 3, 64, 7, 2)
    y = b.node("MaxPool", [y], "maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2],
               pads=[1, 1, 1, 1])
    in_ch = 64
    for stage, out_ch in enumerate((64, 128, 256, 512), start=1):
        for block in range(2):
            stride = 2 if stage > 1 and block == 0 else 1
            name = f"layer{stage}.{block}"
            z = _conv_bn(b, y, f"{name}.conv1", in_ch, out_ch, 3, stride)
            z = _conv_bn(b, z, f"{name}.conv2", out_ch, out_ch, 3, 1, relu=False)
            if stride != 1 or in_ch != out_ch:
                y = _conv_bn(b, y, f"{name}.downsample", in_ch, out_ch, 1, stride, relu=False)
            y = b.node("Add", [z, y], f"{name}/Add")
            y = b.node("Relu", [y], f"{name}/Relu")
            in_ch = out_ch
    y = b.node("GlobalAveragePool", [y], "avgpool/GlobalAveragePool")
    y = b.node("Flatten", [y], "flatten/Flatten", axis=1)
    w = b.random("fc.weight", (num_classes, 512), math.sqrt(1.0 / 512))
    bias = b.random("fc.bias", (num_classes,), 0.01)
    b.node("Gemm", [y, w, bias], "fc/Gemm", outputs=["logits"], transB=1)
    return b.model("resnet18", [_tensor("input", [batch, 3, image_size, image_size])],
                   [_tensor("logits", [batch, num_classes])], opset)


# ---------------------------------------------------------------------------------------------
# MLP
def mlp(batch=32, sizes=(784, 256, 256, 10), seed=0, opset=13):
    """A multi-layer perceptron: Gemm + Relu layers, Softmax at the end."""
    b = GraphBuilder(seed)
    y = "input"
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        w = b.random(f"fc{i}.weight", (n_out, n_in), math.sqrt(2.0 / n_in))
        bias = b.random(f"fc{i}.bias", (n_out,), 0.1)
        y = b.node("Gemm", [y, w, bias], f"fc{i}/Gemm", transB=1)
        if i < len(sizes) - 2:
            y = b.node("Relu", [y], f"fc{i}/Relu")
    b.node("Softmax", [y], "softmax/Softmax", outputs=["probabilities"], axis=1)
    return b.model("mlp", [_tensor("input", [batch, sizes[0]])],
                   [_tensor("probabilities", [batch, sizes[-1]])], opset)


# ---------------------------------------------------------------------------------------------
# transformer encoder layer
def transformer_encoder(batch=1, seq=16, hidden=64, heads=4, ffn=128, seed=0, opset=17):
    """One post-norm (BERT-style) encoder layer: multi-head self-attention with Q/K/V MatMuls,
    head split by Reshape/Transpose (its shape computed from Shape, as exporters write it),
    Softmax, residual Adds, LayerNormalization and a GELU feed-forward (the Gelu op from
    opset 20, else its Erf formula)."""
    b = GraphBuilder(seed)
    head_dim = hidden // heads
    scale = 1 / math.sqrt(hidden)

    def linear(x, name, n_in, n_out):
        w = b.random(f"{name}.weight", (n_in, n_out), scale if n_in == hidden else 1 /
                     math.sqrt(n_in))
        bias = b.random(f"{name}.bias", (n_out,), 0.02)
        y = b.node("MatMul", [x, w], f"{name}/MatMul")
        return b.node("Add", [y, bias], f"{name}/Add")

    # (batch, seq) from the input's shape, concatenated with the head split: [b, s, h, d]
    shape = b.node("Shape", ["input"], "attention/Shape")
    b.weight("dims01", np.array([0, 1], np.int64))
    batch_seq = b.node("Gather", [shape, "dims01"], "attention/Gather", axis=0)
    b.weight("head_split", np.array([heads, head_dim], np.int64))
    split_shape = b.node("Concat", [batch_seq, "head_split"], "attention/Concat", axis=0)
    b.weight("merged_hidden", np.array([hidden], np.int64))
    merge_shape = b.node("Concat", [batch_seq, "merged_hidden"], "attention/Concat_1", axis=0)

    def heads_of(x, name):
        y = b.node("Reshape", [x, split_shape], f"{name}/Reshape")
        return b.node("Transpose", [y], f"{name}/Transpose", perm=[0, 2, 1, 3])

    q = heads_of(linear("input", "attention.query", hidden, hidden), "attention.query")
    k = heads_of(linear("input", "attention.key", hidden, hidden), "attention.key")
    v = heads_of(linear("input", "attention.value", hidden, hidden), "attention.value")
    kt = b.node("Transpose", [k], "attention/Transpose_k", perm=[0, 1, 3, 2])
    scores = b.node("MatMul", [q, kt], "attention/MatMul_qk")
    b.weight("sqrt_head_dim", np.array(math.sqrt(head_dim), np.float32))
    scores = b.node("Div", [scores, "sqrt_head_dim"], "attention/Div")
    probs = b.node("Softmax", [scores], "attention/Softmax", axis=-1)
    context = b.node("MatMul", [probs, v], "attention/MatMul_pv")
    context = b.node("Transpose", [context], "attention/Transpose_out", perm=[0, 2, 1, 3])
    context = b.node("Reshape", [context, merge_shape], "attention/Reshape_out")
    attn = linear(context, "attention.output", hidden, hidden)
    y = b.node("Add", [attn, "input"], "attention/residual")
    y = _layer_norm(b, y, "attention.norm", hidden)

    h = linear(y, "ffn.up", hidden, ffn)
    if opset >= 20:
        h = b.node("Gelu", [h], "ffn/Gelu")
    else:  # 0.5 x (1 + erf(x / sqrt 2)), as exporters spell GELU before opset 20
        b.weight("sqrt2", np.array(math.sqrt(2), np.float32))
        b.weight("one", np.array(1, np.float32))
        b.weight("half", np.array(0.5, np.float32))
        e = b.node("Erf", [b.node("Div", [h, "sqrt2"], "ffn/Div")], "ffn/Erf")
        e = b.node("Add", [e, "one"], "ffn/Add")
        h = b.node("Mul", [b.node("Mul", [h, e], "ffn/Mul"), "half"], "ffn/Mul_1")
    h = linear(h, "ffn.down", ffn, hidden)
    y = b.node("Add", [h, y], "ffn/residual")
    y = _layer_norm(b, y, "ffn.norm", hidden, output="output")
    return b.model("transformer_encoder", [_tensor("input", [batch, seq, hidden])],
                   [_tensor("output", [batch, seq, hidden])], opset)


def _layer_norm(b, x, name, hidden, output=None):
    gamma = b.weight(f"{name}.weight", (1 + 0.1 * b.rng.standard_normal(hidden))
                     .astype(np.float32))
    beta = b.weight(f"{name}.bias", (0.1 * b.rng.standard_normal(hidden)).astype(np.float32))
    return b.node("LayerNormalization", [x, gamma, beta], f"{name}/LayerNormalization",
                  outputs=[output] if output else None, axis=-1, epsilon=1e-5)


def random_input(model, seed=0):
    """A float32 standard-normal array for each graph input of ``model``: {name: array}."""
    rng = np.random.default_rng(seed)
    inputs = {}
    for info in model.graph.input:
        shape = [d.dim_value for d in info.type.tensor_type.shape.dim]
        inputs[info.name] = rng.standard_normal(shape).astype(np.float32)
    return inputs


def run_onnxruntime(model, inputs: dict):
    """The outputs of ``model`` on ``inputs`` with onnxruntime (CPU), as a list of arrays."""
    import onnxruntime

    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, inputs)


__all__ = ["GraphBuilder", "resnet18", "mlp", "transformer_encoder", "random_input",
           "run_onnxruntime"]
