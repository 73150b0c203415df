"""Indexing: ``strided_slice`` (numpy slicing on chosen axes, clamped) and ``take`` (gather
along an axis); legalized to TOPI's transform computes."""

from __future__ import annotations

from irlab import topi
from irlab.errors import DiagnosticError
from irlab.ir.op import OpPattern
from irlab.relax.op.attrs import StridedSliceAttrs, TakeAttrs
from irlab.relax.op.common import const_int, make_call, normalize_axis, simplify_dim, \
    tensor_arg, tensor_args
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import TensorStructInfo, as_dim
from irlab.tir import op as tir_op

__all__ = ["strided_slice", "take"]


def _slice_range(call, begin, end, stride, dim):
    """(begin, size) of one sliced axis; constants as numpy slicing, symbolic dims clamped
    with min/max expressions."""
    if stride == 0:
        raise DiagnosticError("R.strided_slice: a stride is 0", call)
    size = const_int(dim)
    if size is not None:
        start, stop, step = slice(begin, end, stride).indices(size)
        return as_dim(start), as_dim(len(range(start, stop, step)))
    if stride < 0:
        raise DiagnosticError("R.strided_slice: negative strides need a static dim", call)

    def clamp(v):
        v = as_dim(v) + dim if v < 0 else as_dim(v)
        return tir_op.min(tir_op.max(v, as_dim(0)), dim)

    lo, hi = clamp(begin), clamp(end)
    count = tir_op.floordiv(tir_op.max(hi - lo, as_dim(0)) + as_dim(stride - 1), as_dim(stride))
    return simplify_dim(lo), simplify_dim(count)


def _plan(call, x):
    attrs = call.attrs
    strides = attrs.strides or (1,) * len(attrs.axes)
    if not len(attrs.axes) == len(attrs.begin) == len(attrs.end) == len(strides):
        raise DiagnosticError("R.strided_slice: axes, begin, end and strides differ in length",
                              call)
    plan = []
    for axis, b, e, s in zip(attrs.axes, attrs.begin, attrs.end, strides):
        axis = normalize_axis(call, axis, x.ndim)
        start, size = _slice_range(call, b, e, s, x.dims[axis])
        plan.append((axis, start, None, s, size))
    return plan


def _slice_infer(call, bb):
    (x,) = tensor_args(call, 1)
    if x.dims is None:
        return TensorStructInfo(dtype=x.dtype, ndim=x.ndim)
    dims = list(x.dims)
    for axis, _start, _end, _stride, size in _plan(call, x):
        dims[axis] = size
    return TensorStructInfo(dims, x.dtype)


def _slice_legalize(bb, call):
    x = call.args[0]
    plan = _plan(call, x.struct_info)

    def compute(data, *starts_sizes):
        it = iter(starts_sizes)
        steps = [(axis, next(it), None, stride, next(it)) for axis, _, _, stride, _ in plan]
        return topi.transform.strided_slice_axes(data, steps)

    flat = [v for axis, start, _, _, size in plan for v in (_prim(start), _prim(size))]
    return bb.call_te(compute, x, *flat, primfunc_name_hint="strided_slice")


def _prim(dim):
    from irlab.relax.expr import PrimValue

    value = const_int(dim)
    return value if value is not None else PrimValue(dim)


register_relax_op("relax.strided_slice", _slice_infer, num_inputs=1,
                  attrs_type=StridedSliceAttrs, pattern=OpPattern.INJECTIVE,
                  legalize=_slice_legalize, description="numpy slicing on chosen axes")


def strided_slice(x, axes, begin, end, strides=None):
    """``x[begin:end:strides]`` on ``axes`` (out-of-range bounds clamp, as numpy's)."""
    def ints(values):
        return tuple(int(v) for v in values)

    return make_call("relax.strided_slice", [x], StridedSliceAttrs(
        ints(axes), ints(begin), ints(end), None if strides is None else ints(strides)))


def _take_infer(call, bb):
    x = tensor_arg(call, 0)
    indices = tensor_arg(call, 1)
    if not indices.dtype.startswith(("int", "uint")):
        raise DiagnosticError(f"R.take: indices must be integers, got {indices.dtype}", call)
    if call.attrs.axis is None:
        return TensorStructInfo(indices.shape, x.dtype, ndim=indices.ndim)
    if x.dims is None or indices.dims is None:
        return TensorStructInfo(dtype=x.dtype, ndim=x.ndim - 1 + indices.ndim)
    axis = normalize_axis(call, call.attrs.axis, x.ndim)
    return TensorStructInfo(list(x.dims[:axis]) + list(indices.dims) + list(x.dims[axis + 1:]),
                            x.dtype)


def _take_legalize(bb, call):
    x, indices = call.args
    axis = call.attrs.axis
    if axis is not None:
        axis = normalize_axis(call, axis, x.struct_info.ndim)
    return bb.call_te(topi.transform.take, x, indices, axis, primfunc_name_hint="take")


register_relax_op("relax.take", _take_infer, num_inputs=2, attrs_type=TakeAttrs,
                  pattern=OpPattern.INJECTIVE, legalize=_take_legalize,
                  description="elements gathered along an axis (indices clamped)")


def take(x, indices, axis=None):
    """``x`` gathered at ``indices`` along ``axis`` (the flattened ``x`` when None)."""
    return make_call("relax.take", [x, indices], TakeAttrs(axis))
