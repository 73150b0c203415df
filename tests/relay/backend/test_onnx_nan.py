"""An ONNX model with one NaN weight gives onnxruntime's NaN outputs after relay.build
(issue 20, finding 4): Conv -> Relu -> MaxPool -> Clip -> Gemm-like MatMul, on LLVM and C."""

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import irlab as tvm  # noqa: E402
from irlab import relay  # noqa: E402
from irlab.contrib import graph_executor  # noqa: E402
from irlab.runtime.module import find_c_compiler  # noqa: E402


def nan_weight_model():
    """A small CNN whose conv weight holds one NaN: the NaN reaches one output channel's
    pixels; relu, max pooling and clip must carry it through as onnxruntime does."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 3, 3)).astype("float32")
    w[1, 0, 1, 1] = np.nan
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Clip", ["p", "lo", "hi"], ["y"]),
             helper.make_node("Max", ["y", "x2"], ["z"])]
    graph = helper.make_graph(
        nodes, "nan_weight",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8]),
         helper.make_tensor_value_info("x2", TensorProto.FLOAT, [1, 4, 4, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4, 4, 4])],
        initializer=[numpy_helper.from_array(w, "w"),
                     numpy_helper.from_array(np.array(-1, "float32"), "lo"),
                     numpy_helper.from_array(np.array(1, "float32"), "hi")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("target", ["llvm", pytest.param("c", marks=pytest.mark.skipif(
    find_c_compiler() is None, reason="no C compiler"))])
def test_nan_weight_matches_onnxruntime(target, opt_level):
    model = nan_weight_model()
    rng = np.random.default_rng(1)
    inputs = {"x": rng.standard_normal((1, 3, 8, 8)).astype("float32"),
              "x2": rng.standard_normal((1, 4, 4, 4)).astype("float32")}
    inputs["x2"][0, 2, 1, 1] = np.nan  # a NaN input too, in a channel the weight leaves alone
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    expected = session.run(None, inputs)[0]
    assert np.isnan(expected).sum() == 17  # channel 1's 16 pixels + the NaN input

    mod, params = relay.frontend.from_onnx(model, {k: v.shape for k, v in inputs.items()})
    with tvm.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, target=target, params=params)
    gm = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    gm.set_input(**inputs)
    gm.run()
    got = gm.get_output(0).numpy()
    assert np.isnan(got).sum() == np.isnan(expected).sum()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5, equal_nan=True)
