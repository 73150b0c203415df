"""Reading an ONNX model: loading it from bytes, a file or a ModelProto, its opset, a node's
attributes and a graph value's declared type. Shared by the Relay and Relax ONNX frontends and
the conformance runner."""

from __future__ import annotations

import os

from irlab.errors import FrontendError

# The domains of the standard ONNX operators.
DEFAULT_DOMAINS = ("", "ai.onnx")


def load_model(model):
    try:
        import onnx
        from google.protobuf.message import DecodeError
    except ImportError:
        raise FrontendError("the ONNX frontend needs the onnx package (pip install onnx)") \
            from None
    if isinstance(model, (str, os.PathLike)):
        try:
            with open(model, "rb") as f:
                model = f.read()
        except OSError as err:
            raise FrontendError(f"cannot read the ONNX model file: {err}") from None
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        model = onnx.ModelProto()
        try:
            model.ParseFromString(data)
        except (DecodeError, RuntimeError, ValueError) as err:
            raise FrontendError(f"not a valid ONNX model: the {len(data)} bytes do not parse "
                                f"as a ModelProto (truncated or corrupt file?): {err}") from None
    if not isinstance(model, onnx.ModelProto):
        raise FrontendError(f"from_onnx expects an onnx.ModelProto (or its bytes, or a file "
                            f"path), got {type(model).__name__}")
    if not model.HasField("graph") or not model.graph.output:
        raise FrontendError("the ONNX model has no graph outputs (empty or truncated model?)")
    return model


def model_opset(model) -> int:
    for entry in model.opset_import:
        if entry.domain in DEFAULT_DOMAINS:
            return int(entry.version)
    # An IR version 2 model may leave the default domain out: ONNX then means opset 1.
    return 1


def parse_attributes(proto) -> dict:
    from onnx import helper

    attrs = {}
    for attribute in proto.attribute:
        value = helper.get_attribute_value(attribute)
        if isinstance(value, bytes):
            value = value.decode("utf-8", errors="replace")
        elif isinstance(value, list):
            value = [v.decode("utf-8", errors="replace") if isinstance(v, bytes) else v
                     for v in value]
        attrs[attribute.name] = value
    return attrs


def declared_type(value_info):
    """(shape with None for unknown dims, dtype or None) of a graph input/output."""
    tensor_type = value_info.type.tensor_type
    if not value_info.type.HasField("tensor_type"):
        return None, None
    dims = None
    if tensor_type.HasField("shape"):
        dims = tuple(d.dim_value if d.HasField("dim_value") else None
                     for d in tensor_type.shape.dim)
    dtype = tensor_type.elem_type or None
    return dims, dtype


__all__ = ["DEFAULT_DOMAINS", "load_model", "model_opset", "parse_attributes",
           "declared_type"]
