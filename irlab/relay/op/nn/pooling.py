"""2-D pooling: ``nn.max_pool2d`` / ``nn.avg_pool2d`` (strides, dilation, asymmetric padding,
ceil_mode, count_include_pad), their global and adaptive variants. Every op pools over the H and
W axes of its ``layout`` (NCHW, NHWC, NCHW16c...) and keeps the output in that layout."""

from __future__ import annotations

import numbers

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.attrs import Attrs
from irlab.ir.op import Op, OpPattern, register_op
from irlab.ir.type import TensorType
from irlab.relay.op.nn._utils import (acc_dtype, check_pair, get_pad_tuple2d, int_pair, padding4,
                                      spatial_axes, trunc_div)
from irlab.tir.data_layout import spatial_axes_of
from irlab.relay.op.layout_rules import pool_layout
from irlab.relay.op.op import register_convert_op_layout
from irlab.relay.op.op_common import make_call, out_array


class MaxPool2DAttrs(Attrs):
    """Attributes of ``nn.max_pool2d``; ``pool_size`` has no default, so it always prints."""

    _type_key = "relay.attrs.MaxPool2DAttrs"
    pool_size: tuple
    strides: tuple = (1, 1)
    dilation: tuple = (1, 1)
    padding: tuple = (0, 0)
    layout: str = "NCHW"
    out_layout: str = ""
    ceil_mode: bool = False


class AvgPool2DAttrs(Attrs):
    """Attributes of ``nn.avg_pool2d``."""

    _type_key = "relay.attrs.AvgPool2DAttrs"
    pool_size: tuple
    strides: tuple = (1, 1)
    dilation: tuple = (1, 1)
    padding: tuple = (0, 0)
    layout: str = "NCHW"
    out_layout: str = ""
    ceil_mode: bool = False
    count_include_pad: bool = False


class GlobalPool2DAttrs(Attrs):
    """Attributes of ``nn.global_avg_pool2d`` / ``nn.global_max_pool2d``."""

    _type_key = "relay.attrs.GlobalPool2DAttrs"
    layout: str = "NCHW"
    out_layout: str = ""


class AdaptivePool2DAttrs(Attrs):
    """Attributes of ``nn.adaptive_avg_pool2d`` / ``nn.adaptive_max_pool2d``. An empty
    output_size keeps the input's height and width; one value is used for both."""

    _type_key = "relay.attrs.AdaptivePool2DAttrs"
    output_size: tuple = ()
    layout: str = "NCHW"
    out_layout: str = ""


# ---------------------------------------------------------------------------------------------
# type relations
def _pool2d_rel(ctx):
    attrs = ctx.attrs
    data = ctx.tensor(0, "data")
    h_axis, w_axis = spatial_axes(attrs.layout, data.ndim, ctx)
    pool = check_pair(attrs.pool_size, "pool_size", ctx)
    strides = check_pair(attrs.strides, "strides", ctx)
    dilation = check_pair(attrs.dilation, "dilation", ctx)
    top, left, bottom, right = padding4(attrs.padding, ctx)
    shape = list(data.shape)
    for axis, name, k, s, d, pad in ((h_axis, "height", pool[0], strides[0], dilation[0],
                                      top + bottom),
                                     (w_axis, "width", pool[1], strides[1], dilation[1],
                                      left + right)):
        span = (k - 1) * d + 1
        padded = data.shape[axis] + pad
        if padded < span:
            ctx.fail(f"the dilated pool window {name} ({span} = ({k} - 1) * {d} + 1) is larger "
                     f"than the padded input {name} ({padded} = {data.shape[axis]} + {pad})")
        # ceil_mode rounds the window count up, so a last partial window is kept.
        extra = s - 1 if attrs.ceil_mode else 0
        shape[axis] = (padded - span + extra) // s + 1
    return TensorType(tuple(shape), data.dtype)


def _global_pool2d_rel(ctx):
    data = ctx.tensor(0, "data")
    h_axis, w_axis = spatial_axes(ctx.attrs.layout, data.ndim, ctx)
    shape = list(data.shape)
    shape[h_axis] = shape[w_axis] = 1
    return TensorType(tuple(shape), data.dtype)


def _adaptive_pool2d_rel(ctx):
    data = ctx.tensor(0, "data")
    h_axis, w_axis = spatial_axes(ctx.attrs.layout, data.ndim, ctx)
    size = tuple(ctx.attrs.output_size or ())
    ctx.expect(len(size) <= 2, f"output_size must have at most 2 values, got {size}")
    ctx.expect(all(isinstance(v, int) and v >= 1 for v in size),
               f"output_size must be positive integers, got {size}")
    shape = list(data.shape)
    if size:
        shape[h_axis], shape[w_axis] = (size * 2)[:2] if len(size) == 1 else size
    return TensorType(tuple(shape), data.dtype)


# ---------------------------------------------------------------------------------------------
# references
def _lowest(dtype: np.dtype):
    """The padding value of max pooling: the lowest finite value, as TVM's min_value."""
    if dtype.kind == "f":
        return np.finfo(dtype).min
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    return False


def _tap_counts(out_n, stride, k, dilation, lo, hi):
    """How many of the k dilated taps of each of the out_n windows fall in [lo, hi)."""
    pos = np.arange(out_n)[:, None] * stride + np.arange(k)[None, :] * dilation
    return ((pos >= lo) & (pos < hi)).sum(axis=1)


def _pool2d_reference(kind):
    def reference(inputs, attrs, out_type):
        h_axis, w_axis = spatial_axes_of(attrs.layout)
        x = np.moveaxis(inputs[0], (h_axis, w_axis), (-2, -1))
        height, width = x.shape[-2:]
        (kh, kw), (sh, sw), (dh, dw) = attrs.pool_size, attrs.strides, attrs.dilation
        pad = tuple(attrs.padding)
        top, left, bottom, right = pad * 4 if len(pad) == 1 else (pad * 2 if len(pad) == 2
                                                                   else pad)
        out_h, out_w = out_type.shape[h_axis], out_type.shape[w_axis]
        span_h, span_w = (kh - 1) * dh + 1, (kw - 1) * dw + 1
        # ceil_mode windows may run past the explicit padding: pad further (the extra cells
        # never win a max and are never counted by an average).
        extra_h = max(0, (out_h - 1) * sh + span_h - (height + top + bottom))
        extra_w = max(0, (out_w - 1) * sw + span_w - (width + left + right))
        if kind == "max":
            fill = _lowest(x.dtype)
        else:
            x, fill = x.astype(acc_dtype(x.dtype)), 0
        widths = [(0, 0)] * (x.ndim - 2) + [(top, bottom + extra_h), (left, right + extra_w)]
        padded = np.pad(x, widths, constant_values=fill)
        windows = np.lib.stride_tricks.sliding_window_view(padded, (span_h, span_w),
                                                           axis=(-2, -1))
        windows = windows[..., :(out_h - 1) * sh + 1:sh, :(out_w - 1) * sw + 1:sw, ::dh, ::dw]
        if kind == "max":
            out = windows.max(axis=(-2, -1))
        else:
            total = windows.sum(axis=(-2, -1))
            if attrs.count_include_pad:
                rows = _tap_counts(out_h, sh, kh, dh, 0, height + top + bottom)
                cols = _tap_counts(out_w, sw, kw, dw, 0, width + left + right)
            else:
                rows = _tap_counts(out_h, sh, kh, dh, top, top + height)
                cols = _tap_counts(out_w, sw, kw, dw, left, left + width)
            count = rows[:, None] * cols[None, :]
            # A window holding no counted cell averages to 0 (TVM divides by max(count, 1)).
            out = np.where(count == 0, 0, trunc_div(total, np.maximum(count, 1)))
        return out_array(np.moveaxis(out, (-2, -1), (h_axis, w_axis)), out_type)
    return reference


def _global_pool2d_reference(kind):
    def reference(inputs, attrs, out_type):
        axes = spatial_axes_of(attrs.layout)
        x = inputs[0]
        if kind == "max":
            return out_array(x.max(axis=axes, keepdims=True), out_type)
        total = x.astype(acc_dtype(x.dtype)).sum(axis=axes, keepdims=True)
        return out_array(trunc_div(total, x.shape[axes[0]] * x.shape[axes[1]]), out_type)
    return reference


def _adaptive_bounds(in_n, out_n):
    """Window i covers [floor(i * in / out), ceil((i + 1) * in / out))."""
    idx = np.arange(out_n)
    return idx * in_n // out_n, -((-(idx + 1) * in_n) // out_n)


def _adaptive_pool2d_reference(kind):
    def reference(inputs, attrs, out_type):
        h_axis, w_axis = spatial_axes_of(attrs.layout)
        x = np.moveaxis(inputs[0], (h_axis, w_axis), (-2, -1))
        if kind == "avg":
            x = x.astype(acc_dtype(x.dtype))
        reduce = np.max if kind == "max" else np.sum
        out_h, out_w = out_type.shape[h_axis], out_type.shape[w_axis]
        h_start, h_end = _adaptive_bounds(x.shape[-2], out_h)
        w_start, w_end = _adaptive_bounds(x.shape[-1], out_w)
        # Windows are rectangles, so reduce rows first, then columns.
        rows = np.stack([reduce(x[..., a:b, :], axis=-2) for a, b in zip(h_start, h_end)], -2)
        out = np.stack([reduce(rows[..., a:b], axis=-1) for a, b in zip(w_start, w_end)], -1)
        if kind == "avg":
            count = (h_end - h_start)[:, None] * (w_end - w_start)[None, :]
            out = trunc_div(out, count)
        return out_array(np.moveaxis(out, (-2, -1), (h_axis, w_axis)), out_type)
    return reference


# ---------------------------------------------------------------------------------------------
# registration
_DATA = [("data", "Tensor", "The input tensor.")]
register_op("nn.max_pool2d", num_inputs=1, arguments=_DATA, attrs_type=MaxPool2DAttrs,
            type_rel=_pool2d_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE, support_level=2,
            reference=_pool2d_reference("max"), description="2-D max pooling.")
register_op("nn.avg_pool2d", num_inputs=1, arguments=_DATA, attrs_type=AvgPool2DAttrs,
            type_rel=_pool2d_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE, support_level=2,
            reference=_pool2d_reference("avg"), description="2-D average pooling.")
register_op("nn.global_max_pool2d", num_inputs=1, arguments=_DATA,
            attrs_type=GlobalPool2DAttrs, type_rel=_global_pool2d_rel,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, support_level=2,
            reference=_global_pool2d_reference("max"),
            description="Max over the whole height and width.")
register_op("nn.global_avg_pool2d", num_inputs=1, arguments=_DATA,
            attrs_type=GlobalPool2DAttrs, type_rel=_global_pool2d_rel,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, support_level=2,
            reference=_global_pool2d_reference("avg"),
            description="Average over the whole height and width.")
register_op("nn.adaptive_max_pool2d", num_inputs=1, arguments=_DATA,
            attrs_type=AdaptivePool2DAttrs, type_rel=_adaptive_pool2d_rel,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, support_level=10,
            reference=_adaptive_pool2d_reference("max"),
            description="Max pooling to a given output height and width.")
register_op("nn.adaptive_avg_pool2d", num_inputs=1, arguments=_DATA,
            attrs_type=AdaptivePool2DAttrs, type_rel=_adaptive_pool2d_rel,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, support_level=10,
            reference=_adaptive_pool2d_reference("avg"),
            description="Average pooling to a given output height and width.")
# every pooling follows its input's layout
for _name in ("max_pool2d", "avg_pool2d", "global_max_pool2d", "global_avg_pool2d",
              "adaptive_max_pool2d", "adaptive_avg_pool2d"):
    Op.get(f"nn.{_name}").set_attr("FInferCorrectLayout", pool_layout)


# ---------------------------------------------------------------------------------------------
# constructors
def _window_attrs(pool_size, strides, dilation, padding, layout, out_layout, ceil_mode):
    return dict(pool_size=int_pair(pool_size, "pool_size"), strides=int_pair(strides, "strides"),
                dilation=int_pair(dilation, "dilation"), padding=get_pad_tuple2d(padding),
                layout=str(layout), out_layout=str(out_layout or ""), ceil_mode=bool(ceil_mode))


def max_pool2d(data, pool_size=(1, 1), strides=(1, 1), dilation=(1, 1), padding=(0, 0),
               layout="NCHW", out_layout="", ceil_mode=False):
    """2-D max pooling; ints become pairs and padding becomes (top, left, bottom, right)."""
    attrs = MaxPool2DAttrs(**_window_attrs(pool_size, strides, dilation, padding, layout,
                                           out_layout, ceil_mode))
    return make_call("nn.max_pool2d", [data], attrs)


def avg_pool2d(data, pool_size=(1, 1), strides=(1, 1), dilation=(1, 1), padding=(0, 0),
               layout="NCHW", out_layout="", ceil_mode=False, count_include_pad=False):
    """2-D average pooling; padded cells count only with ``count_include_pad``."""
    attrs = AvgPool2DAttrs(**_window_attrs(pool_size, strides, dilation, padding, layout,
                                           out_layout, ceil_mode),
                           count_include_pad=bool(count_include_pad))
    return make_call("nn.avg_pool2d", [data], attrs)


def global_max_pool2d(data, layout="NCHW", out_layout=""):
    """Max over the whole height and width (output H = W = 1)."""
    return make_call("nn.global_max_pool2d", [data],
                     GlobalPool2DAttrs(layout=str(layout), out_layout=str(out_layout or "")))


def global_avg_pool2d(data, layout="NCHW", out_layout=""):
    """Average over the whole height and width (output H = W = 1)."""
    return make_call("nn.global_avg_pool2d", [data],
                     GlobalPool2DAttrs(layout=str(layout), out_layout=str(out_layout or "")))


def _output_size(output_size):
    if output_size is None:
        return ()
    if isinstance(output_size, numbers.Integral) and not isinstance(output_size, bool):
        return (int(output_size), int(output_size))
    if isinstance(output_size, (tuple, list)):
        return tuple(output_size)
    raise IrlabError(f"output_size must be an int or a tuple of ints, got {output_size!r}")


def adaptive_max_pool2d(data, output_size=None, layout="NCHW", out_layout=""):
    """Max pooling with windows chosen to produce ``output_size`` (default: the input size)."""
    attrs = AdaptivePool2DAttrs(output_size=_output_size(output_size), layout=str(layout),
                                out_layout=str(out_layout or ""))
    return make_call("nn.adaptive_max_pool2d", [data], attrs)


def adaptive_avg_pool2d(data, output_size=None, layout="NCHW", out_layout=""):
    """Average pooling with windows chosen to produce ``output_size`` (default: the input
    size)."""
    attrs = AdaptivePool2DAttrs(output_size=_output_size(output_size), layout=str(layout),
                                out_layout=str(out_layout or ""))
    return make_call("nn.adaptive_avg_pool2d", [data], attrs)


# ---------------------------------------------------------------------------------------------
# layout hooks: ConvertLayout may ask for another layout
def _convert_pool(constructor_name):
    def convert(attrs, inputs, tinfos, desired_layouts):
        new_attrs = dict(attrs)
        new_attrs["layout"] = new_attrs["out_layout"] = str(desired_layouts[0])
        return globals()[constructor_name](*inputs, **new_attrs)

    convert.__name__ = f"convert_{constructor_name}"
    return convert


for _name in ("max_pool2d", "avg_pool2d", "global_max_pool2d", "global_avg_pool2d"):
    register_convert_op_layout(f"nn.{_name}", _convert_pool(_name))


for _name in ("max_pool2d", "avg_pool2d", "global_max_pool2d", "global_avg_pool2d"):
    register_convert_op_layout(f"nn.{_name}", _convert_pool(_name))


__all__ = ["MaxPool2DAttrs", "AvgPool2DAttrs", "GlobalPool2DAttrs", "AdaptivePool2DAttrs",
           "max_pool2d", "avg_pool2d", "global_max_pool2d", "global_avg_pool2d",
           "adaptive_max_pool2d", "adaptive_avg_pool2d"]


# ---------------------------------------------------------------------------------------------
# TE computes and strategies (irlab/relay/op/strategy/conv.py)
def _register_computes():
    from irlab.relay.op.strategy.conv import register_pooling

    register_pooling()


_register_computes()
