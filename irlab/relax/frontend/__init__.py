"""Relax frontends (``tvm.relax.frontend``): ``onnx.from_onnx``."""

from irlab.relax.frontend import onnx  # noqa: F401
