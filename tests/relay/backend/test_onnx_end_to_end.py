"""The ONNX test models through from_onnx + relay.build + the graph executor match
onnxruntime (issue 8). Quick tier: every opt level for the MLP and the transformers, levels 0
and 3 for a 64x64 ResNet-18; ``benchmarks/e2e_conformance.py`` runs the whole matrix."""

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import irlab as tvm  # noqa: E402
from irlab import relay  # noqa: E402
from irlab.contrib import graph_executor  # noqa: E402
from irlab.relay.frontend import from_onnx, onnx_models  # noqa: E402

MODELS = {
    "mlp": lambda: onnx_models.mlp(),
    "transformer_opset17": lambda: onnx_models.transformer_encoder(opset=17),
    "transformer_opset20_gelu": lambda: onnx_models.transformer_encoder(opset=20),
    "resnet18_64px": lambda: onnx_models.resnet18(image_size=64, num_classes=10),
}


def check_onnx_model(name, opt_level):
    model = MODELS[name]()
    inputs = onnx_models.random_input(model)
    expected = onnx_models.run_onnxruntime(model, inputs)[0]
    mod, params = from_onnx(model, freeze_params=True)
    with tvm.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, "llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    m.run(**inputs)
    got = m.get_output(0).numpy()
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6 * scale,
                               err_msg=f"{name} at opt_level {opt_level}")


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
@pytest.mark.parametrize("name", ["mlp", "transformer_opset17", "transformer_opset20_gelu"])
def test_onnx_model_matches_onnxruntime(name, opt_level):
    check_onnx_model(name, opt_level)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_onnx_resnet18_matches_onnxruntime(opt_level):
    check_onnx_model("resnet18_64px", opt_level)
