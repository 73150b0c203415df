"""relax.frontend.onnx.from_onnx: ONNX models with a symbolic batch, compiled once by
relax.build, equal to onnxruntime at several batch sizes."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax, tir
from irlab.errors import FrontendError
from irlab.relay.frontend import onnx_models

onnx = pytest.importorskip("onnx", reason="the ONNX frontend needs the onnx package")
pytest.importorskip("onnxruntime", reason="the reference is onnxruntime")


def _symbolic_batch(model):
    """``model`` with dim 0 of its first input and of every output named "batch"."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for value in (m.graph.input[0], *m.graph.output):
        value.type.tensor_type.shape.dim[0].dim_param = "batch"
    return m


def _check(model, batches, rtol=1e-4):
    m = _symbolic_batch(model)
    mod = relax.frontend.onnx.from_onnx(m)
    (param,) = mod["main"].params
    assert isinstance(param.struct_info.dims[0], tir.Var)  # one build for every batch
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    rng = np.random.default_rng(0)
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim][1:]
    for b in batches:
        x = rng.standard_normal([b, *dims]).astype("float32")
        (expect,) = onnx_models.run_onnxruntime(m, {m.graph.input[0].name: x})[:1]
        got = vm["main"](tvm.nd.array(x)).numpy()
        assert got.shape == expect.shape
        np.testing.assert_allclose(got, expect, rtol=rtol, atol=rtol * np.abs(expect).max())


def test_mlp_symbolic_batch():
    _check(onnx_models.mlp(batch=4), (1, 7, 32))


def test_transformer_layer_shape_arithmetic_stays_symbolic():
    """Shape -> Gather -> Concat -> Reshape (the head split) over a symbolic batch."""
    _check(onnx_models.transformer_encoder(batch=1), (1, 3))


def test_resnet18_symbolic_batch():
    _check(onnx_models.resnet18(batch=1, image_size=32, num_classes=10), (1, 2))


def test_shape_dict_fixes_dims():
    m = _symbolic_batch(onnx_models.mlp(batch=4))
    mod = relax.frontend.onnx.from_onnx(m, shape_dict={"input": [5, 784]})
    assert [int(d) for d in mod["main"].params[0].struct_info.dims] == [5, 784]


def test_keep_params_in_input():
    model = onnx_models.mlp(batch=2)
    mod = relax.frontend.onnx.from_onnx(model, keep_params_in_input=True)
    params = mod["main"].params
    assert len(params) == 1 + len(model.graph.initializer)
    values = mod["main"].attrs["params"]
    x = np.random.default_rng(1).standard_normal((2, 784)).astype("float32")
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    got = vm["main"](tvm.nd.array(x), *values).numpy()
    (expect,) = onnx_models.run_onnxruntime(model, {"input": x})[:1]
    np.testing.assert_allclose(got, expect, rtol=1e-4, atol=1e-6)


def test_unsupported_op_names_it():
    from onnx import TensorProto, helper

    node = helper.make_node("Hardmax", ["x"], ["y"], name="hm")
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    with pytest.raises(FrontendError, match="Hardmax"):
        relax.frontend.onnx.from_onnx(helper.make_model(graph))
