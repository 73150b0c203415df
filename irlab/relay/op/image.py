"""Image operators (``relay.image``): ``image.resize2d``, nearest / linear / cubic resampling
of the H and W axes with TVM's (and ONNX's) coordinate transformation modes."""

from __future__ import annotations

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.attrs import Attrs
from irlab.ir.op import NOT_APPLICABLE, OpPattern, register_op
from irlab.ir.type import TensorType
from irlab.relay.op.nn._utils import acc_dtype, dtype_or_empty, spatial_axes
from irlab.tir.data_layout import spatial_axes_of
from irlab.relay.op.op_common import make_call, out_array

METHODS = ("nearest_neighbor", "linear", "cubic")
COORDINATE_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                    "tf_half_pixel_for_nn", "tf_crop_and_resize")
ROUNDING_METHODS = ("", "round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


class Resize2DAttrs(Attrs):
    """Attributes of ``image.resize2d`` (TVM's ``relay.attrs.Resize2DAttrs``, fields in its
    order). ``roi`` is (start_h, start_w, end_h, end_w), used by ``tf_crop_and_resize``."""

    _type_key = "relay.attrs.Resize2DAttrs"
    size: tuple
    roi: tuple = (0.0, 0.0, 0.0, 0.0)
    layout: str = "NCHW"
    method: str = "linear"
    coordinate_transformation_mode: str = "half_pixel"
    rounding_method: str = ""
    cubic_alpha: float = -0.5
    cubic_exclude: int = 0
    extrapolation_value: float = 0.0
    out_dtype: str = ""


def _resize2d_rel(ctx):
    attrs = ctx.attrs
    data = ctx.tensor(0, "data")
    h_axis, w_axis = spatial_axes(attrs.layout, data.ndim, ctx)
    size = tuple(attrs.size or ())
    ctx.expect(len(size) == 2 and all(isinstance(v, int) and v >= 1 for v in size),
               f"size must be two positive integers (height, width), got {size}")
    ctx.expect(attrs.method in METHODS,
               f"method must be one of {', '.join(METHODS)}, got {attrs.method!r}")
    ctx.expect(attrs.coordinate_transformation_mode in COORDINATE_MODES,
               f"coordinate_transformation_mode must be one of {', '.join(COORDINATE_MODES)}, "
               f"got {attrs.coordinate_transformation_mode!r}")
    ctx.expect(attrs.rounding_method in ROUNDING_METHODS,
               f"rounding_method must be one of {ROUNDING_METHODS}, "
               f"got {attrs.rounding_method!r}")
    ctx.expect(len(tuple(attrs.roi)) == 4, f"roi must have 4 values, got {attrs.roi}")
    shape = list(data.shape)
    shape[h_axis], shape[w_axis] = size
    return TensorType(tuple(shape), attrs.out_dtype or data.dtype)


# ---------------------------------------------------------------------------------------------
# reference: each spatial axis is resampled on its own (every method here is separable)
def source_coordinates(in_n, out_n, mode, start=0.0, end=1.0):
    """The input coordinate each output index samples (TVM's ``get_inx``); float64."""
    x = np.arange(out_n, dtype=np.float64)
    scale = in_n / out_n
    if mode == "half_pixel":
        return (x + 0.5) * scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) * scale - 0.5 if out_n > 1 else np.zeros_like(x)
    if mode == "align_corners":
        return x * (in_n - 1) / (out_n - 1) if out_n > 1 else np.zeros_like(x)
    if mode == "asymmetric":
        return x * scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) * scale
    if mode == "tf_crop_and_resize":
        if out_n > 1:
            return start * (in_n - 1) + x * (end - start) * (in_n - 1) / (out_n - 1)
        return np.full_like(x, 0.5 * (start + end) * (in_n - 1))
    raise IrlabError(f"unknown coordinate_transformation_mode {mode!r}")


def _round(x, method):
    if method == "round_prefer_floor":
        return np.ceil(x - 0.5)
    if method == "round_prefer_ceil":
        return np.floor(x + 0.5)
    if method == "floor":
        return np.floor(x)
    if method == "ceil":
        return np.ceil(x)
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))  # "round": half away from 0


def _cubic_weights(frac, alpha):
    """Keys' cubic kernel at the distances of taps -1, 0, 1, 2 from the sample point."""
    dist = np.abs(np.stack([1 + frac, frac, 1 - frac, 2 - frac], axis=-1))
    near = ((alpha + 2) * dist - (alpha + 3)) * dist * dist + 1
    far = ((alpha * dist - 5 * alpha) * dist + 8 * alpha) * dist - 4 * alpha
    return np.where(dist <= 1, near, np.where(dist < 2, far, 0.0))


def axis_taps(in_n, out_n, attrs, start, end):
    """(indices [out, taps], weights [out, taps], outside [out]) resampling one axis."""
    mode = attrs.coordinate_transformation_mode
    coord = source_coordinates(in_n, out_n, mode, start, end)
    outside = (coord < 0) | (coord > in_n - 1) if mode == "tf_crop_and_resize" else \
        np.zeros(out_n, bool)
    if attrs.method == "nearest_neighbor":
        rounding = attrs.rounding_method or ("round" if mode == "align_corners" else "floor")
        index = _round(coord, rounding)[:, None]
        weights = np.ones((out_n, 1))
    elif attrs.method == "linear":
        base = np.floor(coord)
        frac = coord - base
        index = base[:, None] + np.arange(2)
        weights = np.stack([1 - frac, frac], axis=-1)
    else:
        base = np.floor(coord)
        index = base[:, None] + np.arange(-1, 3)
        weights = _cubic_weights(coord - base, attrs.cubic_alpha)
        if attrs.cubic_exclude:
            # Taps outside the image get no weight; the rest are renormalized to sum to 1.
            weights = np.where((index < 0) | (index > in_n - 1), 0.0, weights)
            weights = weights / weights.sum(axis=-1, keepdims=True)
    index = np.clip(index, 0, in_n - 1).astype(np.int64)
    return index, weights, outside


def _resample(x, axis, index, weights):
    picked = np.take(x, index, axis=axis)  # axis becomes (out, taps)
    shape = [1] * picked.ndim
    shape[axis], shape[axis + 1] = weights.shape
    return (picked * weights.reshape(shape)).sum(axis=axis + 1)


def resize2d_reference(inputs, attrs, out_type):
    """The numpy reference of ``image.resize2d`` (also what ``nn.upsampling`` computes)."""
    x = inputs[0]
    h_axis, w_axis = spatial_axes_of(attrs.layout)
    roi = tuple(attrs.roi)
    out = x.astype(acc_dtype(x.dtype))
    outside = None
    for axis, start, end in ((h_axis, roi[0], roi[2]), (w_axis, roi[1], roi[3])):
        index, weights, off = axis_taps(x.shape[axis], out_type.shape[axis], attrs, start, end)
        out = _resample(out, axis, index, weights)
        shape = [1] * x.ndim
        shape[axis] = -1
        off = off.reshape(shape)
        outside = off if outside is None else outside | off
    out = np.where(outside, attrs.extrapolation_value, out)
    if out_type.dtype.startswith(("int", "uint")) and attrs.method != "nearest_neighbor":
        out = np.round(out)
    return out_array(out, out_type)


register_op("image.resize2d", num_inputs=1, arguments=[("data", "Tensor", "The input tensor.")],
            attrs_type=Resize2DAttrs, type_rel=_resize2d_rel, pattern=OpPattern.INJECTIVE,
            reference=resize2d_reference, support_level=5,
            description="Resize the height and width of an image tensor.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)


def resize2d(data, size, roi=None, layout="NCHW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="", cubic_alpha=-0.5,
             cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """Resize ``data`` to ``size`` = (height, width) with TVM's parameters."""
    try:
        size = tuple(int(v) for v in size)
    except (TypeError, ValueError):
        raise IrlabError(f"resize2d: size must be two integers, got {size!r}") from None
    roi = (0.0, 0.0, 0.0, 0.0) if roi is None else tuple(float(v) for v in roi)
    attrs = Resize2DAttrs(size=size, roi=roi, layout=str(layout), method=str(method),
                          coordinate_transformation_mode=str(coordinate_transformation_mode),
                          rounding_method=str(rounding_method), cubic_alpha=float(cubic_alpha),
                          cubic_exclude=int(cubic_exclude),
                          extrapolation_value=float(extrapolation_value),
                          out_dtype=dtype_or_empty(out_dtype))
    return make_call("image.resize2d", [data], attrs)


__all__ = ["Resize2DAttrs", "resize2d"]


# ---------------------------------------------------------------------------------------------
# TE compute (injective strategy)
def _register_computes():
    from irlab.relay.op.strategy.generic import register_injective
    from irlab.topi import image as topi_image

    def compute(attrs, inputs, out_type):
        return [topi_image.resize2d(
            inputs[0], attrs.size, attrs.roi, attrs.layout, attrs.method,
            attrs.coordinate_transformation_mode, attrs.rounding_method, attrs.cubic_alpha,
            attrs.cubic_exclude, attrs.extrapolation_value, out_type.dtype)]

    register_injective("image.resize2d", compute)


_register_computes()
