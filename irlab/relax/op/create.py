"""Tensor creation: ``zeros``, ``ones``, ``full`` (of a shape, which may be symbolic) and
``zeros_like``, ``ones_like``, ``full_like``; legalized to TOPI's ``full``."""

from __future__ import annotations

from irlab import topi
from irlab.errors import DiagnosticError
from irlab.ir.op import OpPattern
from irlab.relax import expr as rx
from irlab.relax.op.attrs import InitAttrs
from irlab.relax.op.common import make_call, tensor_arg
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import ShapeStructInfo, TensorStructInfo
from irlab.runtime.dtype import normalize_dtype

__all__ = ["zeros", "ones", "full", "zeros_like", "ones_like", "full_like"]


def _shape_infer(call, bb):
    sinfo = call.args[0].struct_info
    if not isinstance(sinfo, ShapeStructInfo):
        raise DiagnosticError(f"{call.op.name}: the shape must be a shape value, got {sinfo}",
                              call)
    dtype = call.attrs.dtype
    if dtype == "void":
        dtype = tensor_arg(call, 1).dtype
    if sinfo.values is None:
        return TensorStructInfo(dtype=dtype, ndim=sinfo.ndim)
    return TensorStructInfo(sinfo.values, dtype)


def _like_infer(call, bb):
    x = tensor_arg(call, 0)
    dtype = x.dtype if call.attrs.dtype == "void" else call.attrs.dtype
    return TensorStructInfo(x.shape, dtype, ndim=x.ndim)


def _fill_value(value):
    """A Python number for a scalar constant, else the tensor (read at run time)."""
    if isinstance(value, rx.Constant) and value.data.numpy().size == 1:
        return value.data.numpy().reshape(()).item()
    return value


def _legalize_with(value):
    def legalize(bb, call):
        out = call.struct_info
        shape = rx.ShapeExpr(out.dims)
        fill = value if value is not None else _fill_value(call.args[1])
        return bb.call_te(topi.transform.full, shape, out.dtype, fill,
                          primfunc_name_hint="full")

    return legalize


for _name, _value, _infer in (("zeros", 0, _shape_infer), ("ones", 1, _shape_infer),
                              ("full", None, _shape_infer), ("zeros_like", 0, _like_infer),
                              ("ones_like", 1, _like_infer), ("full_like", None, _like_infer)):
    register_relax_op(f"relax.{_name}", _infer, attrs_type=InitAttrs,
                      pattern=OpPattern.ELEMWISE, legalize=_legalize_with(_value),
                      description=f"a new tensor ({_name})")


def _shape(shape):
    return rx.ShapeExpr(shape) if isinstance(shape, (list, tuple)) else shape


def zeros(shape, dtype="float32"):
    """A tensor of zeros of ``shape`` (dims may be symbolic)."""
    return make_call("relax.zeros", [_shape(shape)], InitAttrs(normalize_dtype(dtype)))


def ones(shape, dtype="float32"):
    """A tensor of ones of ``shape``."""
    return make_call("relax.ones", [_shape(shape)], InitAttrs(normalize_dtype(dtype)))


def full(shape, fill_value, dtype=None):
    """A tensor of ``shape`` filled with ``fill_value`` (a scalar tensor expression)."""
    if not isinstance(fill_value, rx.Expr):
        fill_value = rx.const(fill_value, dtype)
    return make_call("relax.full", [_shape(shape), fill_value],
                     InitAttrs(normalize_dtype(dtype) if dtype else "void"))


def zeros_like(x, dtype=None):
    return make_call("relax.zeros_like", [x], InitAttrs(normalize_dtype(dtype) if dtype
                                                          else "void"))


def ones_like(x, dtype=None):
    return make_call("relax.ones_like", [x], InitAttrs(normalize_dtype(dtype) if dtype
                                                         else "void"))


def full_like(x, fill_value, dtype=None):
    if not isinstance(fill_value, rx.Expr):
        fill_value = rx.const(fill_value)
    return make_call("relax.full_like", [x, fill_value],
                     InitAttrs(normalize_dtype(dtype) if dtype else "void"))
