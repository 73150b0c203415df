"""Tensor creation: ``zeros``, ``ones``, ``full`` (of a shape, which may be symbolic) and
``zeros_like``, ``ones_like``, ``full_like``; legalized to TOPI's ``full``."""

from __future__ import annotations

from irlab import topi
from irlab.errors import DiagnosticError
from irlab.ir.op import OpPattern
from irlab.relax import expr as rx
from irlab.relax.op.attrs import ArangeAttrs, InitAttrs, OneHotAttrs, TriluAttrs
from irlab.relax.op.common import make_call, tensor_arg
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import ShapeStructInfo, TensorStructInfo, as_dim
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


# -- arange / tril / triu ---------------------------------------------------------------------
def _arange_count(start, end, step) -> int:
    import math

    return max(0, math.ceil((end - start) / step))


def _arange_infer(call, bb):
    a = call.attrs
    return TensorStructInfo([_arange_count(a.start, a.end, a.step)], a.dtype)


def _arange_legalize(bb, call):
    from irlab import te
    from irlab.tir import op as tir_op

    a = call.attrs
    count = _arange_count(a.start, a.end, a.step)

    def compute():
        start, step = tir_op.const(a.start, a.dtype), tir_op.const(a.step, a.dtype)
        return te.compute((count,), lambda i: start + tir_op.cast(i, a.dtype) * step,
                          name="T_arange")

    return bb.call_te(compute, primfunc_name_hint="arange")


register_relax_op("relax.arange", _arange_infer, num_inputs=0, attrs_type=ArangeAttrs,
                  pattern=OpPattern.INJECTIVE, legalize=_arange_legalize,
                  description="evenly spaced values in [start, end)")


def arange(start, end=None, step=1, dtype="int64"):
    """``[start, start + step, ...)`` below ``end`` (numpy's arange; static bounds)."""
    if end is None:
        start, end = 0, start
    return make_call("relax.arange", [], ArangeAttrs(float(start), float(end), float(step),
                                                     normalize_dtype(dtype)))


def _trilu_infer(call, bb):
    x = tensor_arg(call, 0)
    if x.ndim != -1 and x.ndim < 2:
        raise DiagnosticError(f"{call.op.name}: needs at least 2 dims, got {x}", call)
    return x


def _trilu_legalize(bb, call):
    from irlab import te
    from irlab.tir import op as tir_op

    k, upper = call.attrs.k, call.attrs.upper

    def compute(x):
        zero = tir_op.const(0, x.dtype)

        def body(*i):
            row, col = i[-2], i[-1]
            keep = (col - row >= k) if upper else (col - row <= k)
            return tir_op.if_then_else(keep, x(*i), zero)

        return te.compute(x.shape, body, name="T_trilu")

    return bb.call_te(compute, call.args[0], primfunc_name_hint="triu" if upper else "tril")


register_relax_op("relax.trilu", _trilu_infer, num_inputs=1, attrs_type=TriluAttrs,
                  pattern=OpPattern.ELEMWISE, legalize=_trilu_legalize,
                  description="the upper / lower triangle (others zero)")


def triu(x, k=0):
    """The upper triangle of the last two axes from diagonal ``k``; zeros elsewhere."""
    return make_call("relax.trilu", [x], TriluAttrs(int(k), True))


def tril(x, k=0):
    """The lower triangle of the last two axes up to diagonal ``k``; zeros elsewhere."""
    return make_call("relax.trilu", [x], TriluAttrs(int(k), False))


__all__ += ["arange", "triu", "tril"]


# -- one_hot ------------------------------------------------------------------------------------
def _one_hot_infer(call, bb):
    indices = tensor_arg(call, 0)
    on = tensor_arg(call, 1)
    if not indices.dtype.startswith(("int", "uint")):
        raise DiagnosticError(f"R.one_hot: indices must be integers, got {indices.dtype}", call)
    depth, axis = call.attrs.depth, call.attrs.axis
    if indices.dims is None:
        return TensorStructInfo(dtype=on.dtype, ndim=indices.ndim + 1)
    dims = list(indices.dims)
    axis = len(dims) if axis == -1 else axis
    if not 0 <= axis <= len(dims):
        raise DiagnosticError(f"R.one_hot: axis {call.attrs.axis} out of range", call)
    dims.insert(axis, as_dim(depth))
    return TensorStructInfo(dims, on.dtype)


def _one_hot_legalize(bb, call):
    a = call.attrs
    dtype = call.struct_info.dtype
    on, off = (_fill_value(v) for v in call.args[1:])
    return bb.call_te(topi.transform.one_hot, call.args[0], on, off, a.depth, a.axis, dtype,
                      primfunc_name_hint="one_hot")


register_relax_op("relax.one_hot", _one_hot_infer, num_inputs=3, attrs_type=OneHotAttrs,
                  pattern=OpPattern.INJECTIVE, legalize=_one_hot_legalize,
                  description="on_value at each index along a new axis, off_value elsewhere")


def one_hot(indices, on_value, off_value, depth, axis=-1):
    """A new axis of ``depth`` at ``axis``: ``on_value`` where it equals the index."""
    on = on_value if isinstance(on_value, rx.Expr) else rx.const(on_value)
    off = off_value if isinstance(off_value, rx.Expr) else rx.const(off_value)
    return make_call("relax.one_hot", [indices, on, off], OneHotAttrs(int(depth), int(axis)))


__all__ += ["one_hot"]
