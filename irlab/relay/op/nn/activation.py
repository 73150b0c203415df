"""Activations: ``nn.relu``, ``nn.leaky_relu``, ``nn.softmax``, ``nn.log_softmax`` and
``nn.dropout`` (identity at inference, with an all-ones mask)."""

from __future__ import annotations

import numpy as np

from irlab.ir.attrs import Attrs
from irlab.ir.op import Op, OpPattern, register_op
from irlab.ir.type import TupleType
from irlab.relay.expr import TupleWrapper
from irlab.relay.op.layout_rules import elemwise_arbitrary_layout
from irlab.relay.op.nn._utils import acc_dtype
from irlab.relay.op.op_common import identity_rel, make_call, normalize_axis, out_array
from irlab.relay.op.scale_axis import ScaleAxisRule


class LeakyReluAttrs(Attrs):
    """Attributes of ``nn.leaky_relu`` (C++ default 0.25; the Python constructor's is 0.01)."""

    _type_key = "relay.attrs.LeakyReluAttrs"
    alpha: float = 0.25


class SoftmaxAttrs(Attrs):
    """Attributes of ``nn.softmax`` and ``nn.log_softmax``."""

    _type_key = "relay.attrs.SoftmaxAttrs"
    axis: int = -1


class DropoutAttrs(Attrs):
    """Attributes of ``nn.dropout``."""

    _type_key = "relay.attrs.DropoutAttrs"
    rate: float = 0.5


def _leaky_relu_rel(ctx):
    alpha = ctx.attrs.alpha
    ctx.expect(alpha >= 0, f"alpha must be non-negative, got {alpha}")
    return ctx.tensor(0, "data")


def _softmax_rel(ctx):
    data = ctx.tensor(0, "data")
    normalize_axis(ctx.attrs.axis, data.ndim, ctx)
    ctx.expect(data.ndim >= 1, "softmax needs a tensor of rank >= 1")
    return data


def _dropout_rel(ctx):
    rate = ctx.attrs.rate
    ctx.expect(0 <= rate < 1, f"rate must be in [0, 1), got {rate}")
    data = ctx.tensor(0, "data")
    # (output, mask): the mask has the data's type, as in TVM's DropoutRel.
    return TupleType([data, data])


def _relu_reference(inputs, attrs, out_type):
    x = inputs[0]
    return out_array(np.maximum(x, np.zeros((), x.dtype)), out_type)


def _leaky_relu_reference(inputs, attrs, out_type):
    x = inputs[0]
    return out_array(np.where(x > 0, x, x.astype(acc_dtype(x.dtype)) * attrs.alpha), out_type)


def _shifted(x, axis):
    """x minus its max along axis, in the accumulation dtype (softmax's overflow guard)."""
    x = x.astype(acc_dtype(x.dtype))
    return x - x.max(axis=axis, keepdims=True)


def _softmax_reference(inputs, attrs, out_type):
    e = np.exp(_shifted(inputs[0], attrs.axis))
    return out_array(e / e.sum(axis=attrs.axis, keepdims=True), out_type)


def _log_softmax_reference(inputs, attrs, out_type):
    z = _shifted(inputs[0], attrs.axis)
    return out_array(z - np.log(np.exp(z).sum(axis=attrs.axis, keepdims=True)), out_type)


def _dropout_reference(inputs, attrs, out_type):
    out, mask = out_type.fields
    return (out_array(inputs[0].copy(), out), out_array(np.ones(mask.shape), mask))


_DATA = [("data", "Tensor", "The input tensor.")]
register_op("nn.relu", num_inputs=1, arguments=_DATA, type_rel=identity_rel,
            pattern=OpPattern.ELEMWISE, reference=_relu_reference, support_level=1,
            description="Rectified linear unit: max(x, 0).",
            ).set_attrs(FInferCorrectLayout=elemwise_arbitrary_layout,
                        TScaleAxisRule=ScaleAxisRule.POSITIVE_HOMOGENEOUS)
register_op("nn.leaky_relu", num_inputs=1, arguments=_DATA, attrs_type=LeakyReluAttrs,
            type_rel=_leaky_relu_rel, pattern=OpPattern.ELEMWISE,
            reference=_leaky_relu_reference, support_level=3,
            description="Leaky ReLU: x if x > 0 else alpha * x.",
            ).set_attrs(FInferCorrectLayout=elemwise_arbitrary_layout,
                        TScaleAxisRule=ScaleAxisRule.POSITIVE_HOMOGENEOUS)
register_op("nn.softmax", num_inputs=1, arguments=_DATA, attrs_type=SoftmaxAttrs,
            type_rel=_softmax_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            reference=_softmax_reference, support_level=1,
            description="Softmax along an axis.").set_attrs(TFastVersion="nn.fast_softmax")
# FastMath's softmax: an approximate exp in compiled code, the exact softmax as semantics.
register_op("nn.fast_softmax", num_inputs=1, arguments=_DATA, attrs_type=SoftmaxAttrs,
            type_rel=_softmax_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            reference=_softmax_reference, support_level=1,
            description="Softmax along an axis, with a fast approximate exp.")
register_op("nn.log_softmax", num_inputs=1, arguments=_DATA, attrs_type=SoftmaxAttrs,
            type_rel=_softmax_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            reference=_log_softmax_reference, support_level=1,
            description="Log of the softmax along an axis.")
register_op("nn.dropout", num_inputs=1, arguments=_DATA, attrs_type=DropoutAttrs,
            type_rel=_dropout_rel, pattern=OpPattern.OPAQUE, reference=_dropout_reference,
            support_level=1,
            description="Dropout; at inference the identity, with an all-ones mask.")
# Dropout draws random numbers when training: passes must not evaluate it ahead of time
# (FoldConstant skips stateful ops), as TVM's TOpIsStateful.
Op.get("nn.dropout").set_attr("TOpIsStateful", True)
# At inference, dropout's field 0 is its input (SimplifyInference).
Op.get("nn.dropout").set_attr("FSimplifyInference", lambda attrs, args, data_type: args[0])


def relu(data):
    """Rectified linear unit, ``max(data, 0)``; NaN stays NaN as in ``np.maximum`` and
    onnxruntime (TVM's compiled relu turns NaN into 0: docs/semantics.md)."""
    return make_call("nn.relu", [data])


def leaky_relu(data, alpha=0.01):
    """``data if data > 0 else alpha * data``."""
    return make_call("nn.leaky_relu", [data], LeakyReluAttrs(alpha=float(alpha)))


def softmax(data, axis=-1):
    """Softmax of ``data`` along ``axis``."""
    return make_call("nn.softmax", [data], SoftmaxAttrs(axis=int(axis)))


def fast_softmax(data, axis=-1):
    """Softmax of ``data`` along ``axis``, computed with a fast approximate exp."""
    return make_call("nn.fast_softmax", [data], SoftmaxAttrs(axis=int(axis)))


def log_softmax(data, axis=-1):
    """Log-softmax of ``data`` along ``axis``."""
    return make_call("nn.log_softmax", [data], SoftmaxAttrs(axis=int(axis)))


def dropout_raw(data, rate=0.5):
    """The ``nn.dropout`` call itself, whose value is the tuple (output, mask)."""
    return make_call("nn.dropout", [data], DropoutAttrs(rate=float(rate)))


def dropout(data, rate=0.5):
    """Dropout's output: field 0 of ``dropout_raw`` (a ``TupleGetItem``)."""
    return TupleWrapper(dropout_raw(data, rate), 2)[0]


__all__ = ["LeakyReluAttrs", "SoftmaxAttrs", "DropoutAttrs", "relu", "leaky_relu", "softmax",
           "fast_softmax", "log_softmax", "dropout", "dropout_raw"]


def _register_computes():
    from irlab.relay.op.op_strategy import register_compute, register_strategy
    from irlab.relay.op.strategy import dense as S
    from irlab.relay.op.strategy.generic import register_injective
    from irlab.topi.nn import activation as A

    register_injective("nn.relu", lambda attrs, inputs, out_type: [A.relu(inputs[0])])
    register_injective("nn.leaky_relu", lambda attrs, inputs, out_type: [
        A.leaky_relu(inputs[0], attrs.alpha)])
    register_compute("nn.softmax", S.softmax_compute)
    register_strategy("nn.softmax", S.softmax_strategy)
    register_compute("nn.fast_softmax", S.fast_softmax_compute)
    register_strategy("nn.fast_softmax", S.fast_softmax_strategy)
    register_compute("nn.log_softmax", S.log_softmax_compute)
    register_strategy("nn.log_softmax", S.log_softmax_strategy)
    register_compute("nn.dropout", S._dropout_compute)
    register_strategy("nn.dropout", S.dropout_strategy)


_register_computes()
