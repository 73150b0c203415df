"""``image.resize2d``: resampling H and W to a given size (nearest, linear, cubic; ONNX's
coordinate modes); legalized to ``topi.image.resize2d`` (static spatial sizes)."""

from __future__ import annotations

from irlab import topi
from irlab.errors import DiagnosticError
from irlab.ir.op import OpPattern
from irlab.relax import expr as rx
from irlab.relax.op.attrs import Resize2DAttrs
from irlab.relax.op.common import const_int, make_call, tensor_arg
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import ShapeStructInfo, TensorStructInfo
from irlab.runtime.dtype import normalize_dtype

__all__ = ["resize2d"]


def _infer(call, bb):
    data = tensor_arg(call, 0)
    size = call.args[1].struct_info
    a = call.attrs
    dtype = a.out_dtype or data.dtype
    if not isinstance(size, ShapeStructInfo) or size.ndim not in (-1, 2):
        raise DiagnosticError(f"R.image.resize2d: size must be a shape of 2 dims, got {size}",
                              call)
    if data.dims is None or size.values is None:
        return TensorStructInfo(dtype=dtype, ndim=4)
    dims = dict(zip(a.layout, data.dims))
    dims["H"], dims["W"] = size.values
    return TensorStructInfo([dims[c] for c in a.layout], dtype)


def _legalize(bb, call):
    a = call.attrs
    size = [const_int(v) for v in call.args[1].struct_info.values]
    if None in size:
        raise DiagnosticError("R.image.resize2d: legalization needs a static size", call)
    return bb.call_te(topi.image.resize2d, call.args[0], size, a.roi, a.layout, a.method,
                      a.coordinate_transformation_mode, a.rounding_method, a.cubic_alpha,
                      a.cubic_exclude, a.extrapolation_value, call.struct_info.dtype,
                      primfunc_name_hint="resize2d")


register_relax_op("relax.image.resize2d", _infer, num_inputs=2, attrs_type=Resize2DAttrs,
                  pattern=OpPattern.INJECTIVE, legalize=_legalize,
                  description="H and W resampled to a size")


def resize2d(data, size, roi=None, layout="NCHW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="round",
             cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """``data`` resampled to ``size`` = (height, width)."""
    if isinstance(size, int):
        size = (size, size)
    if isinstance(size, (list, tuple)):
        size = rx.ShapeExpr(size)
    roi = tuple(float(v) for v in (roi or (0.0, 0.0, 0.0, 0.0)))
    return make_call("relax.image.resize2d", [data, size], Resize2DAttrs(
        roi, layout, method, coordinate_transformation_mode, rounding_method,
        float(cubic_alpha), int(cubic_exclude), float(extrapolation_value),
        normalize_dtype(out_dtype) if out_dtype else ""))
