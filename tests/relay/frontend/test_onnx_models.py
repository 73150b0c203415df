"""Real models built with onnx.helper (random weights) through from_onnx and the Relay
interpreter match onnxruntime within 1e-4 relative error."""

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from irlab import relay  # noqa: E402
from irlab.relay.frontend import from_onnx  # noqa: E402
from irlab.relay.frontend import onnx_models  # noqa: E402

MODELS = {
    "resnet18": lambda: onnx_models.resnet18(),
    "mlp": lambda: onnx_models.mlp(),
    "transformer_opset17": lambda: onnx_models.transformer_encoder(opset=17),
    "transformer_opset20_gelu": lambda: onnx_models.transformer_encoder(opset=20),
}


def assert_matches(result, expected):
    # 1e-4 relative; the absolute floor is float32 rounding of the output's magnitude, for
    # the elements that happen to be near zero.
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-6 * scale)


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("freeze_params", [True, False])
def test_model_matches_onnxruntime(name, freeze_params):
    model = MODELS[name]()
    inputs = onnx_models.random_input(model)
    expected = onnx_models.run_onnxruntime(model, inputs)[0]
    mod, params = from_onnx(model, freeze_params=freeze_params)
    assert bool(params) != freeze_params  # weights are constants or returned parameters
    result = relay.create_executor("debug", mod=mod, params=params).evaluate()(**inputs)
    assert result.shape == expected.shape
    assert_matches(result.numpy(), expected)


def test_resnet18_structure():
    mod, params = from_onnx(onnx_models.resnet18(image_size=64))
    text = mod.astext()
    assert params == {}
    assert text.count("nn.conv2d(") == 20 and text.count("nn.batch_norm(") == 20
    assert "nn.max_pool2d(" in text and "nn.global_avg_pool2d(" in text
    assert "nn.dense(" in text and "nn.batch_flatten(" in text
    assert mod["main"].checked_type.ret_type.shape == (1, 1000)


def test_transformer_shape_computation_is_folded():
    # Shape -> Gather -> Concat feeding the head-split Reshapes is computed at import time.
    mod, _ = from_onnx(onnx_models.transformer_encoder())
    text = mod.astext()
    assert "shape_of" not in text and "take(" not in text and "concatenate(" not in text
    assert "newshape=[1, 16, 4, 16]" in text and "newshape=[1, 16, 64]" in text
    assert text.count("nn.layer_norm(") == 2 and text.count("nn.softmax(") == 1
    assert "nn.batch_matmul(" in text and "erf(" in text
