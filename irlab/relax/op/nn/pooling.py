"""2-D pooling: ``nn.max_pool2d``, ``nn.avg_pool2d`` and ``nn.adaptive_avg_pool2d``, legalized
to TOPI's pooling (symbolic batch; the spatial dims must be static to legalize)."""

from __future__ import annotations

from irlab import topi
from irlab.errors import DiagnosticError
from irlab.ir.op import OpPattern
from irlab.relax.op.attrs import AdaptivePool2DAttrs, Pool2DAttrs
from irlab.relax.op.common import const_int, make_call, tensor_args
from irlab.relax.op.nn.convolution import layout_dims, pair, quad_padding, spatial_out
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import TensorStructInfo, as_dim

__all__ = ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"]


def _pool_infer(call, bb):
    (data,) = tensor_args(call, 1)
    a = call.attrs
    if data.dims is None:
        return TensorStructInfo(dtype=data.dtype, ndim=4)
    d = layout_dims(call, data, a.layout)
    top, left, bottom, right = a.padding
    d["H"] = spatial_out(d["H"], a.pool_size[0], a.strides[0], a.dilation[0], top, bottom,
                         a.ceil_mode)
    d["W"] = spatial_out(d["W"], a.pool_size[1], a.strides[1], a.dilation[1], left, right,
                         a.ceil_mode)
    return TensorStructInfo([d[c] for c in a.out_layout or a.layout], data.dtype)


def _static_spatial(call):
    sinfo = call.args[0].struct_info
    layout = call.attrs.layout
    for c in "HW":
        if const_int(sinfo.dims[layout.index(c)]) is None:
            raise DiagnosticError(f"{call.op.name}: legalization needs static spatial dims, "
                                  f"got {sinfo}", call)


def _pool_legalize(kind):
    def legalize(bb, call):
        _static_spatial(call)
        a = call.attrs
        return bb.call_te(topi.nn.pooling.pool2d, call.args[0], kind, a.pool_size, a.strides,
                          a.dilation, a.padding, a.layout, a.ceil_mode, a.count_include_pad,
                          primfunc_name_hint=f"{kind}_pool2d")

    return legalize


register_relax_op("relax.nn.max_pool2d", _pool_infer, num_inputs=1, attrs_type=Pool2DAttrs,
                  pattern=OpPattern.OUT_ELEMWISE_FUSABLE, legalize=_pool_legalize("max"),
                  description="2-D max pooling")
register_relax_op("relax.nn.avg_pool2d", _pool_infer, num_inputs=1, attrs_type=Pool2DAttrs,
                  pattern=OpPattern.OUT_ELEMWISE_FUSABLE, legalize=_pool_legalize("avg"),
                  description="2-D average pooling")


def _pool_attrs(pool_size, strides, padding, dilation, ceil_mode, count_include_pad, layout,
                out_layout):
    return Pool2DAttrs(pair(pool_size), pair(strides), pair(dilation), quad_padding(padding),
                       bool(ceil_mode), bool(count_include_pad), layout, out_layout or layout)


def max_pool2d(data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0), dilation=(1, 1),
               ceil_mode=False, count_include_pad=False, layout="NCHW", out_layout=None):
    """Maximum over ``pool_size`` windows of H and W."""
    return make_call("relax.nn.max_pool2d", [data], _pool_attrs(
        pool_size, strides, padding, dilation, ceil_mode, count_include_pad, layout,
        out_layout))


def avg_pool2d(data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0), dilation=(1, 1),
               ceil_mode=False, count_include_pad=False, layout="NCHW", out_layout=None):
    """Average over ``pool_size`` windows of H and W (padding excluded from the count unless
    ``count_include_pad``)."""
    return make_call("relax.nn.avg_pool2d", [data], _pool_attrs(
        pool_size, strides, padding, dilation, ceil_mode, count_include_pad, layout,
        out_layout))


def _adaptive_infer(call, bb):
    (data,) = tensor_args(call, 1)
    a = call.attrs
    if data.dims is None:
        return TensorStructInfo(dtype=data.dtype, ndim=4)
    d = layout_dims(call, data, a.layout)
    if a.output_size is not None:
        d["H"], d["W"] = (as_dim(v) for v in pair(a.output_size))
    return TensorStructInfo([d[c] for c in a.out_layout or a.layout], data.dtype)


def _adaptive_legalize(bb, call):
    _static_spatial(call)
    a = call.attrs
    size = () if a.output_size is None else pair(a.output_size)
    return bb.call_te(topi.nn.pooling.adaptive_pool, call.args[0], "avg", size, a.layout,
                      primfunc_name_hint="adaptive_avg_pool2d")


register_relax_op("relax.nn.adaptive_avg_pool2d", _adaptive_infer, num_inputs=1,
                  attrs_type=AdaptivePool2DAttrs, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
                  legalize=_adaptive_legalize, description="average pooling to a given size")


def adaptive_avg_pool2d(data, output_size=None, layout="NCHW", out_layout=None):
    """Average pooling to ``output_size`` (the input size when None)."""
    size = None if output_size is None else pair(output_size)
    return make_call("relax.nn.adaptive_avg_pool2d", [data],
                     AdaptivePool2DAttrs(size, layout, out_layout or layout))
