"""Normalization: ``nn.batch_norm`` (inference semantics, 3 outputs) and ``nn.layer_norm``."""

from __future__ import annotations

import numpy as np

from irlab.ir.attrs import Attrs
from irlab.ir.op import Op, OpPattern, register_op
from irlab.ir.type import TensorType, TupleType
from irlab.relay.expr import TupleWrapper, const
from irlab.relay.op import reduce as _reduce
from irlab.relay.op import tensor as _tensor
from irlab.relay.op.layout_rules import channel_normalization_layout
from irlab.relay.op.nn._utils import acc_dtype
from irlab.relay.op.op_common import make_call, normalize_axis, out_array
from irlab.relay.op.transform import expand_bias_to_match_axis


class BatchNormAttrs(Attrs):
    """Attributes of ``nn.batch_norm``."""

    _type_key = "relay.attrs.BatchNormAttrs"
    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True


class LayerNormAttrs(Attrs):
    """Attributes of ``nn.layer_norm``."""

    _type_key = "relay.attrs.LayerNormAttrs"
    axis: int = -1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True


def _channel_params(ctx, data, axis, names):
    """Each of ``names`` (arguments 1..) must be a vector as long as ``data``'s ``axis``; unknown
    ones are inferred, as TVM's relations assign them."""
    channels = data.shape[axis]
    vec = TensorType((channels,), data.dtype)
    for i, name in enumerate(names, start=1):
        if ctx.known(i):
            param = ctx.tensor(i, name)
            ctx.expect(param.shape == (channels,),
                       f"{name} must have shape ({channels},) (axis {axis} of data shape "
                       f"{data.shape}), got shape {param.shape}")
            ctx.expect(param.dtype == data.dtype,
                       f"{name} must have the data's dtype {data.dtype}, got {param.dtype}")
        else:
            ctx.assign(i, vec)
    return vec


def _check_epsilon(ctx):
    eps = ctx.attrs.epsilon
    ctx.expect(eps >= 0, f"epsilon must be non-negative, got {eps}")


def _batch_norm_rel(ctx):
    data = ctx.tensor(0, "data")
    ctx.expect(data.ndim >= 1, "batch_norm needs data of rank >= 1")
    axis = normalize_axis(ctx.attrs.axis, data.ndim, ctx)
    _check_epsilon(ctx)
    vec = _channel_params(ctx, data, axis, ("gamma", "beta", "moving_mean", "moving_var"))
    # (normalized data, moving mean, moving variance), as TVM's BatchNormRel.
    return TupleType([data, vec, vec])


def _layer_norm_rel(ctx):
    data = ctx.tensor(0, "data")
    ctx.expect(data.ndim >= 1, "layer_norm needs data of rank >= 1")
    axis = normalize_axis(ctx.attrs.axis, data.ndim, ctx)
    _check_epsilon(ctx)
    _channel_params(ctx, data, axis, ("gamma", "beta"))
    return data


def _along(vec, axis, ndim):
    shape = [1] * ndim
    shape[axis] = -1
    return vec.reshape(shape)


def _normalize(x, mean, var, gamma, beta, attrs, axis):
    out = (x - mean) / np.sqrt(var + attrs.epsilon)
    if attrs.scale:
        out = out * _along(gamma, axis, x.ndim)
    if attrs.center:
        out = out + _along(beta, axis, x.ndim)
    return out


def _batch_norm_reference(inputs, attrs, out_type):
    data, gamma, beta, mean, var = inputs
    acc = acc_dtype(data.dtype)
    axis = attrs.axis % data.ndim
    x = data.astype(acc)
    out = _normalize(x, _along(mean.astype(acc), axis, x.ndim),
                     _along(var.astype(acc), axis, x.ndim), gamma.astype(acc),
                     beta.astype(acc), attrs, axis)
    # Inference mode: the moving statistics pass through unchanged.
    fields = out_type.fields
    return (out_array(out, fields[0]), out_array(mean, fields[1]), out_array(var, fields[2]))


def _layer_norm_reference(inputs, attrs, out_type):
    data, gamma, beta = inputs
    acc = acc_dtype(data.dtype)
    axis = attrs.axis % data.ndim
    x = data.astype(acc)
    mean = x.mean(axis=axis, keepdims=True)
    var = np.square(x - mean).mean(axis=axis, keepdims=True)
    return out_array(_normalize(x, mean, var, gamma.astype(acc), beta.astype(acc), attrs, axis),
                     out_type)


register_op("nn.batch_norm", num_inputs=5,
            arguments=[("data", "Tensor", "Input to which batch_norm will be applied."),
                       ("gamma", "Tensor", "The gamma scale factor."),
                       ("beta", "Tensor", "The beta offset factor."),
                       ("moving_mean", "Tensor", "Running mean of input."),
                       ("moving_var", "Tensor", "Running variance of input.")],
            attrs_type=BatchNormAttrs, type_rel=_batch_norm_rel,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, reference=_batch_norm_reference,
            support_level=1,
            description="Batch normalization with the moving statistics (inference); returns "
                        "(out, moving_mean, moving_var).",
            ).set_attrs(FInferCorrectLayout=channel_normalization_layout(4, 3))
register_op("nn.layer_norm", num_inputs=3,
            arguments=[("data", "Tensor", "Input to which layer_norm will be applied."),
                       ("gamma", "Tensor", "The gamma scale factor."),
                       ("beta", "Tensor", "The beta offset factor.")],
            attrs_type=LayerNormAttrs, type_rel=_layer_norm_rel, pattern=OpPattern.OPAQUE,
            reference=_layer_norm_reference, support_level=1,
            description="Layer normalization over one axis.",
            ).set_attrs(FInferCorrectLayout=channel_normalization_layout(2, 1))


# ---------------------------------------------------------------------------------------------
# inference forms (SimplifyInference; TVM's simplify_inference.cc)
def _batch_norm_inference(attrs, args, data_type):
    """Field 0 of batch_norm as ``x * scale + shift``, with ``scale = 1 / sqrt(var + eps) *
    gamma`` and ``shift = -mean * scale + beta`` along the channel axis (TVM's exact
    expression shape)."""
    data, gamma, beta, moving_mean, moving_var = args
    eps = const(float(attrs.epsilon), data_type.dtype)
    scale = _tensor.divide(const(1.0, data_type.dtype), _tensor.sqrt(_tensor.add(moving_var, eps)))
    if attrs.scale:
        scale = _tensor.multiply(scale, gamma)
    shift = _tensor.multiply(_tensor.negative(moving_mean), scale)
    if attrs.center:
        shift = _tensor.add(shift, beta)
    ndim = len(data_type.shape)
    axis = attrs.axis + ndim if attrs.axis < 0 else attrs.axis
    scale = expand_bias_to_match_axis(scale, ndim, [axis])
    shift = expand_bias_to_match_axis(shift, ndim, [axis])
    return _tensor.add(_tensor.multiply(data, scale), shift)


def normalize_to_arithmetic(attrs, args, data_type, reduced_axes):
    """``(x - mean) / sqrt(var + eps)`` over ``reduced_axes``, then gamma and beta along
    ``attrs.axis`` (the expression shape of TVM's LayerNorm/InstanceNormToInferUnpack)."""
    data, gamma, beta = args
    eps = const(float(attrs.epsilon), data_type.dtype)
    mean = _reduce.mean(data, reduced_axes, keepdims=True)
    var = _reduce.variance(data, reduced_axes, keepdims=True, with_mean=mean)
    denom = _tensor.sqrt(_tensor.add(var, eps))
    out = _tensor.divide(_tensor.subtract(data, mean), denom)
    ndim = len(data_type.shape)
    axis = attrs.axis + ndim if attrs.axis < 0 else attrs.axis
    if attrs.scale:
        out = _tensor.multiply(out, expand_bias_to_match_axis(gamma, ndim, [axis]))
    if attrs.center:
        out = _tensor.add(out, expand_bias_to_match_axis(beta, ndim, [axis]))
    return out


def _layer_norm_inference(attrs, args, data_type):
    """layer_norm in primitive ops (mean and biased variance over ``axis``)."""
    return normalize_to_arithmetic(attrs, args, data_type, [attrs.axis])


Op.get("nn.batch_norm").set_attr("FSimplifyInference", _batch_norm_inference)
Op.get("nn.layer_norm").set_attr("FSimplifyInference", _layer_norm_inference)


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5, center=True,
               scale=True):
    """Batch normalization; a ``TupleWrapper`` of (out, moving_mean, moving_var)."""
    attrs = BatchNormAttrs(axis=int(axis), epsilon=float(epsilon), center=bool(center),
                           scale=bool(scale))
    call = make_call("nn.batch_norm", [data, gamma, beta, moving_mean, moving_var], attrs)
    return TupleWrapper(call, 3)


def layer_norm(data, gamma, beta, axis=-1, epsilon=1e-5, center=True, scale=True):
    """Layer normalization of ``data`` over ``axis``, scaled by gamma and shifted by beta."""
    attrs = LayerNormAttrs(axis=int(axis), epsilon=float(epsilon), center=bool(center),
                           scale=bool(scale))
    return make_call("nn.layer_norm", [data, gamma, beta], attrs)


__all__ = ["BatchNormAttrs", "LayerNormAttrs", "batch_norm", "layer_norm"]


def _register_computes():
    from irlab.relay.op.op_strategy import register_compute, register_strategy
    from irlab.relay.op.strategy import dense as S

    register_compute("nn.batch_norm", S.batch_norm_compute)
    register_strategy("nn.batch_norm", S.batch_norm_strategy)
    register_compute("nn.layer_norm", S.layer_norm_compute)
    register_strategy("nn.layer_norm", S.layer_norm_strategy)


_register_computes()
