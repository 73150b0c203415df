"""Frontends: import models from other frameworks into Relay (``from_onnx``, as TVM's).

Importing this package does not import ``onnx``; ``from_onnx`` loads it when called.
"""

from irlab.relay.frontend.onnx import from_onnx

__all__ = ["from_onnx"]
