"""Activations and normalized exponentials: ``nn.relu``, ``nn.gelu``, ``nn.silu``,
``nn.softmax``, ``nn.log_softmax``, ``nn.dropout``."""

from __future__ import annotations

import math

from irlab import te, topi
from irlab.ir.op import OpPattern
from irlab.relax.op.attrs import DropoutAttrs, LeakyReluAttrs, SoftmaxAttrs
from irlab.relax.op.common import make_call, normalize_axis, tensor_args
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import TupleStructInfo
from irlab.tir import op as tir_op


def _same_as_input(call, bb):
    (x,) = tensor_args(call, 1)
    return x


def _softmax_infer(call, bb):
    (x,) = tensor_args(call, 1)
    if not x.is_unknown_ndim:
        normalize_axis(call, call.attrs.axis, x.ndim)
    return x


def _gelu(x):
    half, one = tir_op.const(0.5, x.dtype), tir_op.const(1.0, x.dtype)
    inv_sqrt2 = tir_op.const(1.0 / math.sqrt(2.0), x.dtype)
    return te.compute(x.shape, lambda *i: half * x(*i) * (one + tir_op.erf(x(*i) * inv_sqrt2)),
                      name="T_gelu", tag="elemwise")


def _silu(x):
    return te.compute(x.shape, lambda *i: x(*i) * tir_op.sigmoid(x(*i)), name="T_silu",
                      tag="elemwise")


def _unary_legalize(name, compute):
    def legalize(bb, call):
        return bb.call_te(compute, call.args[0], primfunc_name_hint=name)

    return legalize


register_relax_op("relax.nn.relu", _same_as_input, num_inputs=1, pattern=OpPattern.ELEMWISE,
                  legalize=_unary_legalize("relu", topi.nn.relu), description="max(x, 0)")
register_relax_op("relax.nn.gelu", _same_as_input, num_inputs=1, pattern=OpPattern.ELEMWISE,
                  legalize=_unary_legalize("gelu", _gelu),
                  description="x * Phi(x) (the erf form)")
register_relax_op("relax.nn.silu", _same_as_input, num_inputs=1, pattern=OpPattern.ELEMWISE,
                  legalize=_unary_legalize("silu", _silu), description="x * sigmoid(x)")



def _softmax_legalize(bb, call):
    return bb.call_te(topi.nn.softmax.softmax, call.args[0], call.attrs.axis,
                      primfunc_name_hint="softmax")


def _log_softmax_legalize(bb, call):
    return bb.call_te(topi.nn.log_softmax, call.args[0], call.attrs.axis,
                      primfunc_name_hint="log_softmax")


def _leakyrelu_legalize(bb, call):
    return bb.call_te(topi.nn.leaky_relu, call.args[0], call.attrs.alpha,
                      primfunc_name_hint="leaky_relu")


def _gelu_tanh(x):
    half, one = tir_op.const(0.5, x.dtype), tir_op.const(1.0, x.dtype)
    c = tir_op.const(math.sqrt(2.0 / math.pi), x.dtype)
    k = tir_op.const(0.044715, x.dtype)

    def body(*i):
        v = x(*i)
        return half * v * (one + tir_op.tanh(c * (v + k * v * v * v)))

    return te.compute(x.shape, body, name="T_gelu_tanh", tag="elemwise")


register_relax_op("relax.nn.leakyrelu", _same_as_input, num_inputs=1,
                  attrs_type=LeakyReluAttrs, pattern=OpPattern.ELEMWISE,
                  legalize=_leakyrelu_legalize, description="x if x > 0 else alpha * x")
register_relax_op("relax.nn.gelu_tanh", _same_as_input, num_inputs=1,
                  pattern=OpPattern.ELEMWISE, legalize=_unary_legalize("gelu_tanh", _gelu_tanh),
                  description="GELU, tanh approximation")


register_relax_op("relax.nn.softmax", _softmax_infer, num_inputs=1, attrs_type=SoftmaxAttrs,
                  pattern=OpPattern.OUT_ELEMWISE_FUSABLE, legalize=_softmax_legalize,
                  description="exp(x) / sum(exp(x)) along an axis")
register_relax_op("relax.nn.log_softmax", _softmax_infer, num_inputs=1,
                  attrs_type=SoftmaxAttrs, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
                  legalize=_log_softmax_legalize, description="log of softmax along an axis")


def _dropout_infer(call, bb):
    (x,) = tensor_args(call, 1)
    return TupleStructInfo([x, x])


def _dropout_legalize(bb, call):
    """At inference dropout is the identity (and an all-ones mask)."""
    return bb.call_te(topi.nn.dropout, call.args[0], primfunc_name_hint="dropout")


register_relax_op("relax.nn.dropout", _dropout_infer, num_inputs=1, attrs_type=DropoutAttrs,
                  pattern=OpPattern.ELEMWISE, legalize=_dropout_legalize,
                  description="(output, mask); the identity at inference")


def relu(data):
    """``max(data, 0)``."""
    return make_call("relax.nn.relu", [data])


def gelu(data):
    """``data * Phi(data)``, Phi the standard normal CDF."""
    return make_call("relax.nn.gelu", [data])


def silu(data):
    """``data * sigmoid(data)``."""
    return make_call("relax.nn.silu", [data])


def leakyrelu(data, alpha=0.01):
    """``data`` where positive, else ``alpha * data``."""
    return make_call("relax.nn.leakyrelu", [data], LeakyReluAttrs(float(alpha)))


def gelu_tanh(data):
    """GELU with the tanh approximation."""
    return make_call("relax.nn.gelu_tanh", [data])


def softmax(data, axis=-1):
    """Softmax along ``axis``."""
    return make_call("relax.nn.softmax", [data], SoftmaxAttrs(axis))


def log_softmax(data, axis=-1):
    """Log-softmax along ``axis``."""
    return make_call("relax.nn.log_softmax", [data], SoftmaxAttrs(axis))


def dropout(data, rate=0.5):
    """``(output, mask)``: the identity and all ones at inference."""
    return make_call("relax.nn.dropout", [data], DropoutAttrs(rate))


__all__ = ["relu", "gelu", "silu", "leakyrelu", "gelu_tanh", "softmax", "log_softmax",
           "dropout"]
