"""Layer plumbing: ``nn.bias_add`` (a 1-D bias along one axis), ``nn.batch_flatten`` and
``nn.pad`` (constant, edge or reflect padding; the constant is an expression input)."""

from __future__ import annotations

import numbers

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.attrs import Attrs
from irlab.ir.expr import RelayExpr
from irlab.ir.op import OpPattern, register_op
from irlab.ir.type import TensorType
from irlab.relay.expr import Constant, const
from irlab.relay.op.op_common import make_call, normalize_axis, out_array
from irlab.relay.op.scale_axis import ScaleAxisRule

PAD_MODES = ("constant", "edge", "reflect")


class BiasAddAttrs(Attrs):
    """Attributes of ``nn.bias_add``."""

    _type_key = "relay.attrs.BiasAddAttrs"
    axis: int = 1


class PadAttrs(Attrs):
    """Attributes of ``nn.pad``; ``pad_width`` has no default, so it always prints."""

    _type_key = "relay.attrs.PadAttrs"
    pad_width: tuple
    pad_mode: str = "constant"


def _bias_add_rel(ctx):
    data = ctx.tensor(0, "data")
    ctx.expect(data.ndim >= 1, "bias_add needs data of rank >= 1")
    axis = normalize_axis(ctx.attrs.axis, data.ndim, ctx)
    channels = data.shape[axis]
    if ctx.known(1):
        bias = ctx.tensor(1, "bias")
        ctx.expect(bias.shape == (channels,),
                   f"bias must have shape ({channels},) (axis {axis} of data shape "
                   f"{data.shape}), got shape {bias.shape}")
        ctx.expect(bias.dtype == data.dtype,
                   f"bias must have the data's dtype {data.dtype}, got {bias.dtype}")
    else:
        ctx.assign(1, TensorType((channels,), data.dtype))
    return data


def _batch_flatten_rel(ctx):
    data = ctx.tensor(0, "data")
    ctx.expect(data.ndim >= 1, "batch_flatten needs a tensor of rank >= 1, got a scalar")
    rest = 1
    for d in data.shape[1:]:
        rest *= d
    return TensorType((data.shape[0], rest), data.dtype)


def _pad_rel(ctx):
    attrs = ctx.attrs
    data = ctx.tensor(0, "data")
    pad_value = ctx.tensor(1, "pad_value")
    ctx.expect(pad_value.ndim == 0, f"pad_value must be a scalar, got shape {pad_value.shape}")
    ctx.expect(attrs.pad_mode in PAD_MODES,
               f"pad_mode must be one of {', '.join(PAD_MODES)}, got {attrs.pad_mode!r}")
    width = tuple(attrs.pad_width or ())
    ctx.expect(len(width) == data.ndim,
               f"pad_width has {len(width)} entries but data has rank {data.ndim} "
               f"(shape {data.shape}): give one (before, after) pair per axis")
    shape = []
    for axis, (dim, pair) in enumerate(zip(data.shape, width)):
        ctx.expect(isinstance(pair, tuple) and len(pair) == 2
                   and all(isinstance(p, int) and p >= 0 for p in pair),
                   f"pad_width[{axis}] must be a pair of non-negative integers, got {pair!r}")
        if attrs.pad_mode == "reflect":
            ctx.expect(max(pair) < dim,
                       f"reflect padding of axis {axis} must be smaller than its size {dim}, "
                       f"got {pair}")
        elif attrs.pad_mode == "edge" and max(pair) > 0:
            ctx.expect(dim > 0, f"edge padding of axis {axis} needs a non-empty axis")
        shape.append(dim + pair[0] + pair[1])
    return TensorType(tuple(shape), data.dtype)


def _bias_add_reference(inputs, attrs, out_type):
    data, bias = inputs
    shape = [1] * data.ndim
    shape[attrs.axis % data.ndim] = -1
    return out_array(data + bias.reshape(shape), out_type)


def _batch_flatten_reference(inputs, attrs, out_type):
    return out_array(inputs[0].reshape(out_type.shape), out_type)


def _pad_reference(inputs, attrs, out_type):
    data, pad_value = inputs
    width = [tuple(p) for p in attrs.pad_width]
    if attrs.pad_mode == "constant":
        # The pad value is converted to the data's dtype first, as TVM's pad casts it.
        with np.errstate(all="ignore"):
            fill = np.asarray(pad_value).astype(data.dtype)
        return out_array(np.pad(data, width, mode="constant", constant_values=fill), out_type)
    return out_array(np.pad(data, width, mode=attrs.pad_mode), out_type)


register_op("nn.bias_add", num_inputs=2,
            arguments=[("data", "nD Tensor", "Input data."), ("bias", "1D Tensor", "Bias.")],
            attrs_type=BiasAddAttrs, type_rel=_bias_add_rel, pattern=OpPattern.BROADCAST,
            reference=_bias_add_reference, support_level=1,
            description="Add a 1-D bias along one axis of the data.",
            ).set_attrs(TScaleAxisRule=ScaleAxisRule.BIAS_ADD)
register_op("nn.batch_flatten", num_inputs=1,
            arguments=[("data", "Tensor", "The input tensor.")], type_rel=_batch_flatten_rel,
            pattern=OpPattern.INJECTIVE, reference=_batch_flatten_reference, support_level=1,
            description="Flatten all dimensions but the first: (N, d1, d2...) -> (N, d1*d2*...).",
            ).set_attr("TReshapeOp", True)
register_op("nn.pad", num_inputs=2,
            arguments=[("data", "Tensor", "The input tensor."),
                       ("pad_val", "Tensor", "The value to fill the padded area with.")],
            attrs_type=PadAttrs, type_rel=_pad_rel, pattern=OpPattern.INJECTIVE,
            reference=_pad_reference, support_level=2,
            description="Pad each axis by (before, after) cells.")


def bias_add(data, bias, axis=1):
    """``data + bias`` with the 1-D ``bias`` laid along ``axis``."""
    return make_call("nn.bias_add", [data, bias], BiasAddAttrs(axis=int(axis)))


def batch_flatten(data):
    """Flatten every dimension but the first."""
    return make_call("nn.batch_flatten", [data])


def _pad_width(pad_width):
    if isinstance(pad_width, Constant):
        pad_width = pad_width.data.numpy().tolist()
    if isinstance(pad_width, np.ndarray):
        pad_width = pad_width.tolist()
    if not isinstance(pad_width, (tuple, list)):
        raise IrlabError(f"pad_width must be a sequence of (before, after) pairs, "
                         f"got {pad_width!r}")
    pairs = []
    for pair in pad_width:
        if isinstance(pair, numbers.Integral) or len(pair) != 2:
            raise IrlabError(f"pad_width entries must be (before, after) pairs, got {pair!r}")
        pairs.append((int(pair[0]), int(pair[1])))
    return tuple(pairs)


def pad(data, pad_width, pad_value=0, pad_mode="constant"):
    """Pad ``data`` by ``pad_width`` ((before, after) per axis). A number ``pad_value`` becomes a
    ``relay.const`` (so the default 0 is an int32 constant, as in TVM)."""
    if pad_mode not in PAD_MODES:
        raise IrlabError(f"pad_mode must be one of {', '.join(PAD_MODES)}, got {pad_mode!r}")
    if not isinstance(pad_value, RelayExpr):
        pad_value = const(pad_value)
    return make_call("nn.pad", [data, pad_value],
                     PadAttrs(pad_width=_pad_width(pad_width), pad_mode=str(pad_mode)))


__all__ = ["BiasAddAttrs", "PadAttrs", "bias_add", "batch_flatten", "pad"]


# ---------------------------------------------------------------------------------------------
# TE computes (injective strategy) of nn.pad and nn.batch_flatten
def _register_transform_computes():
    from irlab.relay.op.strategy.generic import register_injective
    from irlab.topi import transform as T

    register_injective("nn.batch_flatten", lambda attrs, inputs, out_type: [
        T.batch_flatten(inputs[0])])
    register_injective("nn.pad", lambda attrs, inputs, out_type: [
        T.pad(inputs[0], attrs.pad_width, inputs[1], attrs.pad_mode)])


_register_transform_computes()


def _register_bias_add_compute():
    from irlab.relay.op.strategy.generic import register_injective
    from irlab.topi import nn as D

    register_injective("nn.bias_add", lambda attrs, inputs, out_type: [
        D.bias_add(inputs[0], inputs[1], attrs.axis)])


_register_bias_add_compute()
