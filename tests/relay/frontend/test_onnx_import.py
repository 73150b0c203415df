"""from_onnx as an importer: graph names and spans, freeze_params, static shape folding, opset
variants (7 to 21) against onnxruntime, and errors for unsupported, malformed, truncated or
inconsistent models."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from irlab import relay  # noqa: E402
from irlab.errors import FrontendError, IrlabError  # noqa: E402
from irlab.ir.span import Span  # noqa: E402
from irlab.relay.frontend import from_onnx  # noqa: E402
from irlab.relay.frontend import onnx_models  # noqa: E402
from irlab.relay.frontend.onnx import supported_ops  # noqa: E402


def make_model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def tensor(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def conv_relu(weight_shape=(4, 3, 3, 3), out_shape=(1, 4, 8, 8)):
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], name="conv1",
                              pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]  # anonymous: named Relu_0
    inits = [init("conv.w", rng.standard_normal(weight_shape).astype(np.float32)),
             init("conv.b", rng.standard_normal(weight_shape[0]).astype(np.float32))]
    return make_model(nodes, [tensor("x", [1, 3, 8, 8])], [tensor("y", list(out_shape))], inits)


def run(mod, params, *inputs):
    return relay.create_executor("debug", mod=mod, params=params).evaluate()(*inputs).numpy()


# ---------------------------------------------------------------------------------------------
# names and spans
def test_vars_carry_onnx_names_and_calls_carry_node_spans():
    mod, params = from_onnx(conv_relu(), freeze_params=False)
    func = mod["main"]
    assert [p.name_hint for p in func.params] == ["x", "conv.w", "conv.b"]
    assert sorted(params) == ["conv.b", "conv.w"] and params["conv.w"].shape == (4, 3, 3, 3)
    relu = func.body
    assert relu.op.name == "nn.relu" and relu.span == Span("Relu_0", 0, 0)
    bias_add = relu.args[0]
    assert bias_add.op.name == "nn.bias_add" and bias_add.span.source_name.name == "conv1"
    assert bias_add.args[0].op.name == "nn.conv2d" and bias_add.args[0].span == Span("conv1")
    text = mod.astext()
    assert "span=conv1:0:0" in text and "span=Relu_0:0:0" in text and "%conv.w" in text


def test_freeze_params_binds_initializers_as_named_constants():
    model = conv_relu()
    mod, params = from_onnx(model)
    assert params == {} and [p.name_hint for p in mod["main"].params] == ["x"]
    weight = mod["main"].body.args[0].args[0].args[1]
    assert isinstance(weight, relay.Constant) and weight.span == Span("conv.w")
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    frozen = run(mod, params, x)
    mod2, params2 = from_onnx(model, freeze_params=False)
    np.testing.assert_allclose(run(mod2, params2, x), frozen, rtol=1e-6)
    np.testing.assert_allclose(frozen, onnx_models.run_onnxruntime(model, {"x": x})[0],
                               rtol=1e-4, atol=1e-5)


def test_model_as_bytes_or_file(tmp_path):
    model = conv_relu()
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    for source in (model.SerializeToString(), str(path), path):
        mod, _ = from_onnx(source)
        assert mod["main"].checked_type.ret_type.shape == (1, 4, 8, 8)


def test_supported_ops_cover_the_issue_list():
    required = {"Conv", "ConvTranspose", "Gemm", "LayerNormalization", "Resize", "LRN",
                "InstanceNormalization", "HardSwish", "ConstantOfShape", "Shape", "Gelu"}
    assert required <= set(supported_ops(21))
    assert "Gelu" not in supported_ops(17) and "Gelu" in supported_ops(20)


# ---------------------------------------------------------------------------------------------
# static shapes
def test_shape_driven_reshape_and_constant_of_shape_fold_at_import():
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["batch"], axis=0),
             helper.make_node("Concat", ["batch", "minus1"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["flat"], name="flatten"),
             helper.make_node("ConstantOfShape", ["target_shape"], ["ones"],
                              value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
             helper.make_node("Add", ["flat", "ones"], ["y"])]
    inits = [init("zero", np.array([0], np.int64)), init("minus1", np.array([-1], np.int64)),
             init("target_shape", np.array([2, 12], np.int64))]
    model = make_model(nodes, [tensor("x", [2, 3, 4])], [tensor("y", [2, 12])], inits)
    mod, params = from_onnx(model)
    text = mod.astext()
    assert "reshape(%x, newshape=[2, -1])" in text and "take" not in text
    body = mod["main"].body  # add(reshape(x), ones): the shape arithmetic left no trace
    assert body.op.name == "add" and body.args[0].op.name == "reshape"
    assert body.args[0].args[0] is mod["main"].params[0]
    ones = body.args[1]
    assert isinstance(ones, relay.Constant) and ones.span == Span("ConstantOfShape_0")
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(run(mod, params, x), x.reshape(2, 12) + 1)


def test_dynamic_input_needs_a_shape():
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", ["N", 3])],
                       [tensor("y", ["N", 3])])
    with pytest.raises(FrontendError, match=r"'x' has dynamic dimensions \(N, 3\).*shape="):
        from_onnx(model)
    mod, _ = from_onnx(model, shape={"x": (5, 3)})
    assert mod["main"].params[0].type_annotation.shape == (5, 3)
    with pytest.raises(FrontendError, match="does not have"):
        from_onnx(model, shape={"nope": (1,)})


def test_shape_input_computed_from_a_graph_input_is_rejected_clearly():
    model = make_model([helper.make_node("Reshape", ["x", "s"], ["y"], name="r")],
                       [tensor("x", [2, 3]), tensor("s", [2], TensorProto.INT64)],
                       [tensor("y", [3, 2])])
    with pytest.raises(FrontendError, match="'r'.*known at import time.*'s'") as info:
        from_onnx(model)
    assert info.value.graph_input == "s"


# ---------------------------------------------------------------------------------------------
# opsets 7 to 21: the attribute-era and input-era forms of the same ops
def classic_model(opset):
    """Reshape, Squeeze/Unsqueeze, Split, Pad, Clip, Softmax, ReduceSum, Dropout and Slice in
    the form each opset spells them."""
    nodes, inits = [], []

    def add(op, inputs, outputs, **attrs):
        nodes.append(helper.make_node(op, inputs, outputs, **attrs))

    def ints(name, values):
        inits.append(init(name, np.array(values, np.int64)))
        return name

    add("Reshape", ["x", ints("shape", [2, 3, 4])], ["r"])
    if opset < 13:
        add("Unsqueeze", ["r"], ["u"], axes=[0])
        add("Squeeze", ["u"], ["sq"], axes=[0])
        add("Split", ["sq"], ["a", "b"], axis=2, split=[1, 3])
        add("ReduceSum", ["b"], ["rs"], axes=[2], keepdims=1)
    else:
        add("Unsqueeze", ["r", ints("ax0", [0])], ["u"])
        add("Squeeze", ["u", ints("ax0b", [0])], ["sq"])
        if opset >= 18:
            add("Split", ["sq"], ["a", "b"], axis=2, num_outputs=2)  # opset 18 form
        else:
            add("Split", ["sq", ints("split", [1, 3])], ["a", "b"], axis=2)
        add("ReduceSum", ["b", ints("ax2", [2])], ["rs"], keepdims=1)
    if opset < 11:
        add("Pad", ["rs"], ["p"], pads=[0, 1, 0, 0, 1, 1], mode="constant", value=0.5)
        add("Clip", ["p"], ["c"], min=-1.0, max=1.5)
    else:
        inits.append(init("half", np.array(0.5, np.float32)))
        inits.append(init("lo", np.array(-1.0, np.float32)))
        inits.append(init("hi", np.array(1.5, np.float32)))
        add("Pad", ["rs", ints("pads", [0, 1, 0, 0, 1, 1]), "half"], ["p"], mode="edge"
            if opset >= 18 else "constant")
        add("Clip", ["p", "lo", "hi"], ["c"])
    if opset < 10:
        add("Slice", ["c"], ["s"], starts=[0, 1], ends=[2, 4], axes=[0, 1])
    else:
        add("Slice", ["c", ints("st", [0, 1]), ints("en", [2, 4]), ints("axs", [0, 1])], ["s"])
    add("Softmax", ["s"], ["sm"], axis=1)  # before 13: over the flattened [1:] axes
    add("Dropout", ["sm"], ["y"])
    # The output's shape is left undeclared: it differs between the opset forms.
    return make_model(nodes, [tensor("x", [6, 4])], [tensor("y", None)], inits, opset)


@pytest.mark.parametrize("opset", [7, 9, 10, 11, 12, 13, 17, 18, 21])
def test_opset_forms_match_onnxruntime(opset):
    pytest.importorskip("onnxruntime")
    model = classic_model(opset)
    x = np.random.default_rng(opset).standard_normal((6, 4)).astype(np.float32)
    expected = onnx_models.run_onnxruntime(model, {"x": x})[0]
    mod, params = from_onnx(model)
    np.testing.assert_allclose(run(mod, params, x), expected, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# errors
def test_every_unsupported_op_is_listed_with_its_nodes():
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"], name="top1"),
             helper.make_node("Relu", ["v"], ["r"]),
             helper.make_node("TopK", ["r", "k"], ["v2", "i2"], name="top2"),
             helper.make_node("NonZero", ["v2"], ["nz"], name="nonzero"),
             helper.make_node("FusedGemm", ["v2"], ["y"], name="fused", domain="com.microsoft")]
    model = make_model(nodes, [tensor("x", [4, 5])], [tensor("y", [4, 2])],
                       [init("k", np.array([2], np.int64))])
    with pytest.raises(FrontendError) as info:
        from_onnx(model)
    message = str(info.value)
    assert "3 ONNX operator type(s)" in message
    assert "TopK (opset 13): 'top1', 'top2'" in message and "NonZero" in message
    assert "com.microsoft.FusedGemm" in message and "'fused'" in message
    assert info.value.unsupported == {"TopK": ["top1", "top2"], "NonZero": ["nonzero"],
                                      "com.microsoft.FusedGemm": ["fused"]}


def test_missing_initializer_names_the_node_and_value():
    model = conv_relu()
    del model.graph.initializer[1]  # conv.b
    with pytest.raises(FrontendError, match=r"node 'conv1': input 2 'conv.b' is not .*"
                                            r"missing initializer"):
        from_onnx(model)


def test_shape_mismatch_names_the_node():
    with pytest.raises(FrontendError, match=r"Conv node 'conv1': nn.conv2d: input channels "
                                            r"differ") as info:
        from_onnx(conv_relu(weight_shape=(4, 2, 3, 3)))
    # one error, no importer internals chained to it
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_declared_output_shape_must_match():
    with pytest.raises(FrontendError, match=r"inconsistent model: graph output 'y' is "
                                            r"declared with shape \(1, 4, 9, 9\)"):
        from_onnx(conv_relu(out_shape=(1, 4, 9, 9)))


def test_initializer_whose_data_does_not_match_its_dims():
    model = conv_relu()
    bad = TensorProto(name="conv.b", data_type=TensorProto.FLOAT, dims=[4],
                      float_data=[1.0, 2.0])
    model.graph.initializer[1].CopyFrom(bad)
    with pytest.raises(FrontendError, match="initializer 'conv.b'"):
        from_onnx(model)


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.9, 0.999])
def test_truncated_bytes(cut):
    data = onnx_models.mlp(batch=2, sizes=(8, 4, 3)).SerializeToString()
    with pytest.raises(FrontendError):
        from_onnx(data[:int(len(data) * cut)])


@pytest.mark.parametrize("source", [b"", b"not an onnx model at all", 42])
def test_not_a_model(source):
    with pytest.raises(FrontendError):
        from_onnx(source)


def test_corrupted_bytes_never_leak_python_internals():
    data = bytearray(onnx_models.mlp(batch=2, sizes=(8, 4, 3)).SerializeToString())
    rng = np.random.default_rng(0)
    outcomes = set()
    for _ in range(60):
        corrupt = bytearray(data)
        for pos in rng.integers(0, len(corrupt), size=3):
            corrupt[pos] = int(rng.integers(0, 256))
        try:
            from_onnx(bytes(corrupt))
            outcomes.add("imported")
        except IrlabError as err:
            assert isinstance(err, FrontendError), repr(err)
            outcomes.add("rejected")
    assert "rejected" in outcomes


def test_an_initializer_used_twice_stays_one_shared_constant():
    w = np.ones((3, 3), np.float32)
    model = make_model([helper.make_node("MatMul", ["x", "w"], ["a"], name="first"),
                        helper.make_node("MatMul", ["a", "w"], ["y"], name="second")],
                       [tensor("x", [2, 3])], [tensor("y", [2, 3])], [init("w", w)])
    mod, _ = from_onnx(model)
    second = mod["main"].body          # dense(dense(x, transpose(w)), transpose(w))
    first = second.args[0]
    w1, w2 = first.args[1].args[0], second.args[1].args[0]
    assert w1 is w2 and w1.span == Span("w")
    assert first.span == Span("first") and second.span == Span("second")
