"""``nn.upsampling``: scale the H and W axes of an image tensor by factors, by nearest-neighbor,
bilinear or bicubic resampling (TVM's ``relay.nn.upsampling``; ``image.resize2d`` computes it).
"""

from __future__ import annotations

import math

from irlab.ir.attrs import Attrs
from irlab.ir.op import NOT_APPLICABLE, OpPattern, register_op
from irlab.ir.type import TensorType
from irlab.relay.op.image import Resize2DAttrs, resize2d_reference
from irlab.relay.op.nn._utils import spatial_axes
from irlab.relay.op.op_common import make_call
from irlab.tir.data_layout import spatial_axes_of

# upsampling's method names -> resize2d's
_METHODS = {"nearest_neighbor": "nearest_neighbor", "bilinear": "linear", "bicubic": "cubic"}


class UpSamplingAttrs(Attrs):
    """Attributes of ``nn.upsampling`` (TVM's ``relay.attrs.UpSamplingAttrs``)."""

    _type_key = "relay.attrs.UpSamplingAttrs"
    scale_h: float = 1.0
    scale_w: float = 1.0
    layout: str = "NCHW"
    method: str = "nearest_neighbor"
    align_corners: bool = False


def _out_size(data_shape, attrs, h_axis, w_axis):
    """The output height and width: each input extent times its scale, rounded."""
    return (int(math.floor(data_shape[h_axis] * attrs.scale_h + 0.5)),
            int(math.floor(data_shape[w_axis] * attrs.scale_w + 0.5)))


def _upsampling_rel(ctx):
    attrs = ctx.attrs
    data = ctx.tensor(0, "data")
    h_axis, w_axis = spatial_axes(attrs.layout, data.ndim, ctx)
    ctx.expect(attrs.method in _METHODS,
               f"method must be one of {', '.join(_METHODS)}, got {attrs.method!r}")
    ctx.expect(attrs.scale_h > 0 and attrs.scale_w > 0,
               f"scales must be positive, got {attrs.scale_h}, {attrs.scale_w}")
    shape = list(data.shape)
    shape[h_axis], shape[w_axis] = _out_size(data.shape, attrs, h_axis, w_axis)
    return TensorType(tuple(shape), data.dtype)


def as_resize2d_attrs(attrs, out_type) -> Resize2DAttrs:
    """The ``image.resize2d`` attributes computing this upsampling (as TVM's topi does)."""
    h_axis, w_axis = spatial_axes_of(attrs.layout)
    mode = "align_corners" if attrs.align_corners else "asymmetric"
    return Resize2DAttrs(size=(out_type.shape[h_axis], out_type.shape[w_axis]),
                         layout=attrs.layout, method=_METHODS[attrs.method],
                         coordinate_transformation_mode=mode)


def _upsampling_reference(inputs, attrs, out_type):
    return resize2d_reference(inputs, as_resize2d_attrs(attrs, out_type), out_type)


register_op("nn.upsampling", num_inputs=1, arguments=[("data", "Tensor", "The input tensor.")],
            attrs_type=UpSamplingAttrs, type_rel=_upsampling_rel, pattern=OpPattern.INJECTIVE,
            reference=_upsampling_reference, support_level=2,
            description="Upsample the height and width of an image tensor by scale factors.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)


def upsampling(data, scale_h=1, scale_w=1, layout="NCHW", method="nearest_neighbor",
               align_corners=False):
    """Upsample ``data``'s H and W axes by ``scale_h`` and ``scale_w``."""
    attrs = UpSamplingAttrs(scale_h=float(scale_h), scale_w=float(scale_w), layout=str(layout),
                            method=str(method), align_corners=bool(align_corners))
    return make_call("nn.upsampling", [data], attrs)


def _register_compute():
    from irlab.relay.op.strategy.generic import register_injective
    from irlab.topi import image as topi_image

    def compute(attrs, inputs, out_type):
        r = as_resize2d_attrs(attrs, out_type)
        return [topi_image.resize2d(inputs[0], r.size, r.roi, r.layout, r.method,
                                    r.coordinate_transformation_mode, r.rounding_method,
                                    r.cubic_alpha, r.cubic_exclude, r.extrapolation_value,
                                    out_type.dtype)]

    register_injective("nn.upsampling", compute)


_register_compute()

__all__ = ["UpSamplingAttrs", "upsampling"]
