"""Local normalizations: ``nn.lrn`` (local response normalization across channels, AlexNet's) and
``nn.instance_norm`` (normalization of each sample and channel over its spatial axes)."""

from __future__ import annotations

import numpy as np

from irlab.ir.attrs import Attrs
from irlab.ir.op import OpPattern, register_op
from irlab.ir.type import TensorType
from irlab.relay.op.layout_rules import channel_normalization_layout
from irlab.relay.op.nn._utils import acc_dtype
from irlab.relay.op.nn.normalization import normalize_to_arithmetic
from irlab.relay.op.op_common import make_call, normalize_axis, out_array


class LRNAttrs(Attrs):
    """Attributes of ``nn.lrn`` (TVM's ``relay.attrs.LRNAttrs``, C++ defaults)."""

    _type_key = "relay.attrs.LRNAttrs"
    size: int = 5
    axis: int = 1
    bias: float = 2.0
    alpha: float = 1e-4
    beta: float = 0.75


class InstanceNormAttrs(Attrs):
    """Attributes of ``nn.instance_norm``."""

    _type_key = "relay.attrs.InstanceNormAttrs"
    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True


def _lrn_rel(ctx):
    data = ctx.tensor(0, "data")
    ctx.expect(data.ndim >= 1, "lrn needs data of rank >= 1")
    normalize_axis(ctx.attrs.axis, data.ndim, ctx)
    ctx.expect(isinstance(ctx.attrs.size, int) and ctx.attrs.size >= 1,
               f"size must be a positive integer, got {ctx.attrs.size}")
    return data


def _instance_norm_rel(ctx):
    data = ctx.tensor(0, "data")
    ctx.expect(data.ndim >= 2, f"instance_norm needs data of rank >= 2, got {data.shape}")
    axis = normalize_axis(ctx.attrs.axis, data.ndim, ctx)
    ctx.expect(ctx.attrs.epsilon >= 0, f"epsilon must be non-negative, got {ctx.attrs.epsilon}")
    channels = data.shape[axis]
    vec = TensorType((channels,), data.dtype)
    for i, name in ((1, "gamma"), (2, "beta")):
        if not ctx.known(i):
            ctx.assign(i, vec)
            continue
        param = ctx.tensor(i, name)
        ctx.expect(param.shape == (channels,) and param.dtype == data.dtype,
                   f"{name} must be a {data.dtype} vector of shape ({channels},) (axis {axis} of "
                   f"data shape {data.shape}), got {param}")
    return data


def _lrn_reference(inputs, attrs, out_type):
    x = inputs[0]
    acc = acc_dtype(x.dtype)
    axis = attrs.axis % x.ndim
    square = np.moveaxis(np.square(x.astype(acc)), axis, -1)
    # TVM's window: channels [c - size // 2, c - size // 2 + size) (symmetric for odd sizes).
    half = attrs.size // 2
    padded = np.pad(square, [(0, 0)] * (x.ndim - 1) + [(half, attrs.size - 1 - half)])
    window = np.lib.stride_tricks.sliding_window_view(padded, attrs.size, axis=-1).sum(-1)
    denom = np.power(attrs.bias + attrs.alpha * np.moveaxis(window, -1, axis) / attrs.size,
                     attrs.beta)
    return out_array(x.astype(acc) / denom, out_type)


def _instance_norm_reference(inputs, attrs, out_type):
    data, gamma, beta = inputs
    acc = acc_dtype(data.dtype)
    axis = attrs.axis % data.ndim
    x = data.astype(acc)
    reduce = tuple(i for i in range(1, data.ndim) if i != axis)  # all but batch and channel
    mean = x.mean(axis=reduce, keepdims=True)
    var = np.square(x - mean).mean(axis=reduce, keepdims=True)
    out = (x - mean) / np.sqrt(var + attrs.epsilon)
    shape = [1] * data.ndim
    shape[axis] = -1
    if attrs.scale:
        out = out * gamma.astype(acc).reshape(shape)
    if attrs.center:
        out = out + beta.astype(acc).reshape(shape)
    return out_array(out, out_type)


def _instance_norm_inference(attrs, args, data_type):
    """SimplifyInference: instance_norm in primitive ops (statistics per sample and channel)."""
    ndim = len(data_type.shape)
    axis = attrs.axis + ndim if attrs.axis < 0 else attrs.axis
    return normalize_to_arithmetic(attrs, args, data_type,
                                   [i for i in range(1, ndim) if i != axis])


register_op("nn.lrn", num_inputs=1, arguments=[("data", "Tensor", "The input tensor.")],
            attrs_type=LRNAttrs, type_rel=_lrn_rel, pattern=OpPattern.OPAQUE,
            reference=_lrn_reference, support_level=2,
            description="Local response normalization: data / (bias + alpha / size * "
                        "sum of squares over a window of channels) ** beta.")
register_op("nn.instance_norm", num_inputs=3,
            arguments=[("data", "Tensor", "Input to which instance_norm will be applied."),
                       ("gamma", "Tensor", "The gamma scale factor."),
                       ("beta", "Tensor", "The beta offset factor.")],
            attrs_type=InstanceNormAttrs, type_rel=_instance_norm_rel,
            pattern=OpPattern.OPAQUE, reference=_instance_norm_reference, support_level=1,
            description="Instance normalization: each (sample, channel) normalized over the "
                        "remaining axes, then scaled by gamma and shifted by beta.",
            ).set_attrs(FInferCorrectLayout=channel_normalization_layout(2, 1),
                        FSimplifyInference=_instance_norm_inference)


def lrn(data, size=5, axis=1, bias=2, alpha=0.00001, beta=0.75):
    """Local response normalization across ``axis`` (TVM's Python defaults)."""
    return make_call("nn.lrn", [data], LRNAttrs(size=int(size), axis=int(axis),
                                                 bias=float(bias), alpha=float(alpha),
                                                 beta=float(beta)))


def instance_norm(data, gamma, beta, axis=1, epsilon=1e-5, center=True, scale=True):
    """Instance normalization of ``data`` (channels along ``axis``)."""
    attrs = InstanceNormAttrs(axis=int(axis), epsilon=float(epsilon), center=bool(center),
                              scale=bool(scale))
    return make_call("nn.instance_norm", [data, gamma, beta], attrs)


__all__ = ["LRNAttrs", "InstanceNormAttrs", "lrn", "instance_norm"]


# ---------------------------------------------------------------------------------------------
# TE computes and strategies (irlab/relay/op/strategy/conv.py)
def _register_computes():
    from irlab.relay.op.strategy.conv import register_local_norm

    register_local_norm()


_register_computes()


def _register_instance_norm_compute():
    from irlab.relay.op.op_strategy import register_compute, register_strategy
    from irlab.relay.op.strategy import dense as S

    register_compute("nn.instance_norm", S.instance_norm_compute)
    register_strategy("nn.instance_norm", S.instance_norm_strategy)


_register_instance_norm_compute()
