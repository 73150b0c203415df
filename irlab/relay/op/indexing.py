"""Indexing operators: take, gather_nd, strided_slice and one_hot.

Attrs, defaults and relations follow TVM v0.13 (include/tvm/relay/attrs/transform.h and
src/relay/op/tensor/transform.cc); a bad attribute is rejected with what was expected and found.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from irlab.ir.attrs import Attrs
from irlab.runtime.dtype import normalize_dtype, parse_dtype, to_numpy_dtype
from irlab.ir.op import NOT_APPLICABLE, OpPattern, register_op
from irlab.ir.type import TensorType
from irlab.relay.op.op_common import make_call, out_array
from irlab.relay.op.transform import _DATA, _RaiseCtx, _check_axis, _int_list


# ---------------------------------------------------------------------------------------------
# attrs (field order and defaults as TVM's transform.h; a field without a default always prints)
class TakeAttrs(Attrs):
    _type_key = "relay.attrs.TakeAttrs"
    batch_dims: int = 0
    axis: int = None
    mode: str = "clip"


class GatherNDAttrs(Attrs):
    _type_key = "relay.attrs.GatherNDAttrs"
    batch_dims: int = 0
    index_rank: int = None


class StridedSliceAttrs(Attrs):
    _type_key = "relay.attrs.StridedSliceAttrs"
    begin: tuple
    end: tuple
    strides: tuple
    slice_mode: str = "end"
    axes: tuple


class OneHotAttrs(Attrs):
    _type_key = "relay.attrs.OneHotAttrs"
    depth: int = 1
    axis: int = -1
    dtype: str = None


# ---------------------------------------------------------------------------------------------
# take
_TAKE_MODES = ("clip", "wrap", "fast")


def _take_rel(ctx):
    data, indices = ctx.tensor(0, "data"), ctx.tensor(1, "indices")
    ctx.expect(parse_dtype(indices.dtype).code in ("int", "uint"),
               f"indices must be a tensor of integers, got {indices.dtype}")
    a = ctx.attrs
    ctx.expect(a.mode in _TAKE_MODES,
               f"mode must be one of {', '.join(_TAKE_MODES)}, got {a.mode!r}")
    if a.axis is None:
        return TensorType(indices.shape, data.dtype)
    axis = _check_axis(a.axis, data.ndim, ctx, "axis")
    bd = a.batch_dims
    bd = bd + indices.ndim if bd < 0 else bd
    ctx.expect(0 <= bd <= indices.ndim,
               f"batch_dims={a.batch_dims} is out of range for indices of rank "
               f"{indices.ndim}")
    ctx.expect(bd <= axis, f"batch_dims={bd} must not exceed axis={axis}")
    ctx.expect(data.shape[:bd] == indices.shape[:bd],
               f"the {bd} batch dimensions differ: data {data.shape} vs indices "
               f"{indices.shape}")
    oshape = data.shape[:axis] + indices.shape[bd:] + data.shape[axis + 1:]
    return TensorType(oshape, data.dtype)


def _take_index(idx, size, mode):
    idx = idx.astype(np.int64)
    if mode == "clip":  # TVM clips to [0, size - 1]: negative indices select element 0
        return np.clip(idx, 0, max(size - 1, 0))
    # "wrap" wraps modulo size; "fast" promises in-range indices, so wrapping is as good
    return np.mod(idx, size) if size else idx


def _take_reference(inputs, attrs, out_type):
    x, idx = inputs
    if attrs.axis is None:
        flat = x.reshape(-1)
        return out_array(flat[_take_index(idx, flat.size, attrs.mode)], out_type)
    axis = attrs.axis % x.ndim
    bd = attrs.batch_dims + idx.ndim if attrs.batch_dims < 0 else attrs.batch_dims
    idx = _take_index(idx, x.shape[axis], attrs.mode)
    nb, npre = math.prod(x.shape[:bd]), math.prod(x.shape[bd:axis])
    # (batch, pre, axis, post) x (batch, idx) -> (batch, pre, idx, post); explicit sizes keep
    # the reshapes valid for empty tensors.
    xr = x.reshape(nb, npre, x.shape[axis], math.prod(x.shape[axis + 1:]))
    ir = idx.reshape(nb, math.prod(idx.shape[bd:]))
    picked = xr[np.arange(nb)[:, None, None], np.arange(npre)[None, :, None], ir[:, None, :]]
    return out_array(picked.reshape(out_type.shape), out_type)


register_op("take", num_inputs=2,
            arguments=_DATA + [("indices", "Tensor", "The indices tensor.")],
            attrs_type=TakeAttrs, type_rel=_take_rel, pattern=OpPattern.INJECTIVE,
            support_level=3, reference=_take_reference,
            description="Take elements along an axis (the flattened input when axis is None).",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)


def take(data, indices, axis=None, batch_dims=0, mode="clip"):
    """Take elements of ``data`` at ``indices`` along ``axis`` (flattened when None).

    ``mode``: ``"clip"`` clamps indices into range, ``"wrap"`` wraps them, ``"fast"`` assumes
    they are in range.
    """
    return make_call("take", [data, indices], TakeAttrs(
        batch_dims=int(batch_dims), axis=None if axis is None else int(axis), mode=str(mode)))


# ---------------------------------------------------------------------------------------------
# strided_slice
_MAX_RANGE = 2 ** 63 - 1


def _canonical_index(index, extent, stride):
    """TVM's ``CanonicalizeIndex``: wrap a negative index once, then clamp into range."""
    lo, hi = (-1, extent - 1) if stride < 0 else (0, extent)
    if index < 0:
        index += extent
    return min(max(index, lo), hi)


def _slice_plan(shape, attrs, ctx):
    """Per sliced axis ``(axis, begin, end, stride, size)`` with canonical begin/end."""
    ndim = len(shape)
    begin, end, strides = attrs.begin, attrs.end, attrs.strides
    for name, value in (("begin", begin), ("end", end), ("strides", strides)):
        if value is None:
            ctx.fail(f"{name} is not set")
    mode = attrs.slice_mode
    ctx.expect(mode in ("end", "size"),
               f"slice_mode must be 'end' or 'size', got {mode!r}")
    begin, end, strides = list(begin), list(end), list(strides)
    if attrs.axes is not None:
        axes = [_check_axis(a, ndim, ctx, "axis") for a in attrs.axes]
        ctx.expect(len(set(axes)) == len(axes),
                   f"axes={tuple(attrs.axes)} repeats an axis")
        ctx.expect(len(begin) == len(axes) and len(end) == len(axes)
                   and len(strides) <= len(axes),
                   f"begin, end and strides need one entry per axis in "
                   f"axes={tuple(attrs.axes)}, got begin={tuple(begin)}, end={tuple(end)}, "
                   f"strides={tuple(strides)}")
    else:
        axes = list(range(ndim))
        for name, value in (("begin", begin), ("end", end), ("strides", strides)):
            ctx.expect(len(value) <= ndim,
                       f"{name}={tuple(value)} has more entries than the "
                       f"input rank {ndim}")
    n = len(axes)
    # Missing trailing strides are 1; in "size" mode strides are ignored.
    strides = strides + [1] * (n - len(strides))
    if mode == "size":
        strides = [1] * n
    for s in strides:
        ctx.expect(s is not None and s != 0,
                   f"strides={tuple(attrs.strides)} must be non-zero integers")
    plan = []
    for k, axis in enumerate(axes):
        s = strides[k]
        b = begin[k] if k < len(begin) else None
        e = end[k] if k < len(end) else None
        # A missing (None) bound covers the whole axis in the stride's direction, as TVM's
        # ConvertToVec; note that TVM's missing end for a negative stride is 0 (exclusive).
        b = (0 if s > 0 else _MAX_RANGE) if b is None else b
        if e is None:
            e = _MAX_RANGE if s > 0 else 0
        elif mode == "size":
            e = _MAX_RANGE if e < 0 else b + e
        dim = shape[axis]
        cb, ce = _canonical_index(b, dim, s), _canonical_index(e, dim, s)
        ctx.expect(ce <= cb if s < 0 else cb <= ce,
                   f"begin={b}, end={e} with stride {s} is an invalid range for "
                   f"axis {axis} of size {dim} (normalized [{cb}, {ce}))")
        size = (abs(ce - cb) + abs(s) - 1) // abs(s)
        plan.append((axis, cb, ce, s, size))
    return plan


def _strided_slice_rel(ctx):
    data = ctx.tensor(0, "data")
    shape = list(data.shape)
    for axis, _, _, _, size in _slice_plan(data.shape, ctx.attrs, ctx):
        shape[axis] = size
    return TensorType(tuple(shape), data.dtype)


def _strided_slice_reference(inputs, attrs, out_type):
    x = inputs[0]
    index = [slice(None)] * x.ndim
    for axis, b, e, s, size in _slice_plan(x.shape, attrs, _RaiseCtx()):
        # Python slicing reads a stop of -1 as "last element": a negative stride that runs to
        # the front of the axis needs stop=None instead.
        index[axis] = slice(0, 0) if size == 0 else slice(b, e if e >= 0 else None, s)
    return out_array(x[tuple(index)], out_type)


register_op("strided_slice", num_inputs=1, arguments=_DATA, attrs_type=StridedSliceAttrs,
            type_rel=_strided_slice_rel, pattern=OpPattern.INJECTIVE, support_level=4,
            reference=_strided_slice_reference, description="Strided slice of a tensor.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)


def strided_slice(data, begin, end, strides=None, axes=None, slice_mode="end"):
    """Slice ``data`` from ``begin`` to ``end`` (exclusive) with ``strides`` along ``axes``
    (all leading axes when None). ``slice_mode="size"``: ``end`` holds sizes (-1: to the end).
    """
    strides = strides or [1]
    return make_call("strided_slice", [data], StridedSliceAttrs(
        begin=tuple(_int_list(begin, "strided_slice: begin")),
        end=tuple(_int_list(end, "strided_slice: end")),
        strides=tuple(_int_list(strides, "strided_slice: strides")),
        slice_mode=str(slice_mode),
        axes=None if axes is None else tuple(_int_list(axes, "strided_slice: axes"))))


# ---------------------------------------------------------------------------------------------
# one_hot
def _one_hot_rel(ctx):
    indices = ctx.tensor(0, "indices")
    on, off = ctx.tensor(1, "on_value"), ctx.tensor(2, "off_value")
    ctx.expect(parse_dtype(indices.dtype).code in ("int", "uint"),
               f"indices must be a tensor of integers, got {indices.dtype}")
    ctx.expect(on.shape == () and off.shape == (),
               f"on_value and off_value must be scalars, got shapes {on.shape} and "
               f"{off.shape}")
    a = ctx.attrs
    ctx.expect(isinstance(a.depth, numbers.Integral) and a.depth > 0,
               f"depth must be positive, got {a.depth}")
    ctx.expect(bool(a.dtype), "dtype is not set")
    axis = indices.ndim if a.axis == -1 else a.axis
    ctx.expect(0 <= axis <= indices.ndim,
               f"axis={a.axis} is out of range: expected -1 or a value in "
               f"[0, {indices.ndim}] for indices of rank {indices.ndim}")
    return TensorType(indices.shape[:axis] + (a.depth,) + indices.shape[axis:], a.dtype)


def _one_hot_reference(inputs, attrs, out_type):
    idx, on, off = inputs
    axis = idx.ndim if attrs.axis == -1 else attrs.axis
    hot = np.expand_dims(idx.astype(np.int64), axis)
    pos = np.arange(attrs.depth).reshape((-1,) + (1,) * (idx.ndim - axis))
    dtype = to_numpy_dtype(out_type.dtype)
    return out_array(np.where(hot == pos, on.astype(dtype), off.astype(dtype)), out_type)


register_op("one_hot", num_inputs=3,
            arguments=[("indices", "Tensor", "Locations to set to on_value."),
                       ("on_value", "Expr", "Value to fill at indices."),
                       ("off_value", "Expr", "Value to fill at all other positions.")],
            attrs_type=OneHotAttrs, type_rel=_one_hot_rel,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, support_level=10,
            reference=_one_hot_reference, description="One-hot encode integer indices.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)


def one_hot(indices, on_value, off_value, depth, axis, dtype):
    """One-hot encode ``indices``: ``on_value`` where the new axis equals the index, else
    ``off_value`` (both scalar expressions)."""
    return make_call("one_hot", [indices, on_value, off_value], OneHotAttrs(
        depth=int(depth), axis=int(axis), dtype=normalize_dtype(dtype)))



# ---------------------------------------------------------------------------------------------
# gather_nd: indices (M, B..., Y...) pick data[B..., i_0, ..., i_{M-1}, ...]
def _gather_nd_rel(ctx):
    data, indices = ctx.tensor(0, "data"), ctx.tensor(1, "indices")
    ctx.expect(indices.dtype.startswith(("int", "uint")),
               f"indices must be integers, got {indices.dtype}")
    ctx.expect(indices.ndim >= 1, "indices must have at least one axis (its first is M)")
    bd = ctx.attrs.batch_dims
    m = indices.shape[0]
    if ctx.attrs.index_rank is not None:
        ctx.expect(ctx.attrs.index_rank == m, f"index_rank is {ctx.attrs.index_rank} but "
                                              f"indices' first axis is {m}")
    ctx.expect(0 <= bd and bd + m <= data.ndim,
               f"batch_dims ({bd}) + indices' first axis ({m}) exceed data's rank "
               f"{data.ndim}")
    ctx.expect(indices.shape[1:1 + bd] == data.shape[:bd],
               f"the batch axes of indices {indices.shape[1:1 + bd]} and data "
               f"{data.shape[:bd]} differ")
    return TensorType(data.shape[:bd] + indices.shape[1 + bd:] + data.shape[bd + m:],
                      data.dtype)


def _gather_nd_reference(inputs, attrs, out_type):
    data, indices = inputs
    bd, m = attrs.batch_dims, indices.shape[0]
    out = np.empty(out_type.shape, dtype=data.dtype)
    for where in np.ndindex(*indices.shape[1:]):
        batch = where[:bd]
        picked = tuple(int(indices[(k,) + where]) for k in range(m))
        out[where] = data[batch + picked]
    return out_array(out, out_type)


register_op("gather_nd", num_inputs=2,
            arguments=_DATA + [("indices", "Tensor", "The indices of values to gather.")],
            attrs_type=GatherNDAttrs, type_rel=_gather_nd_rel, pattern=OpPattern.INJECTIVE,
            support_level=3, reference=_gather_nd_reference,
            description="Gather elements or slices of data at n-dimensional indices.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)


def gather_nd(data, indices, batch_dims=0, index_rank=None):
    """Elements (or slices) of ``data`` at the index tuples along ``indices``' first axis."""
    return make_call("gather_nd", [data, indices], GatherNDAttrs(
        batch_dims=int(batch_dims), index_rank=None if index_rank is None else int(index_rank)))


__all__ = ["TakeAttrs", "GatherNDAttrs", "StridedSliceAttrs", "OneHotAttrs", "take",
           "gather_nd", "strided_slice", "one_hot"]


# ---------------------------------------------------------------------------------------------
# TE computes (injective strategy)
def _register_computes():
    from irlab.relay.op.strategy.generic import register_injective
    from irlab.topi import transform as T
    from irlab.topi.utils import const_shape

    register_injective("take", lambda attrs, inputs, out_type: [T.take(
        inputs[0], inputs[1], attrs.axis, attrs.batch_dims, attrs.mode)])
    register_injective("gather_nd", lambda attrs, inputs, out_type: [T.gather_nd(
        inputs[0], inputs[1], attrs.batch_dims)])
    register_injective("strided_slice", lambda attrs, inputs, out_type: [
        T.strided_slice_axes(inputs[0], _slice_plan(
            const_shape(inputs[0]), attrs, _RaiseCtx()))])
    register_injective("one_hot", lambda attrs, inputs, out_type: [T.one_hot(
        inputs[0], inputs[1], inputs[2], attrs.depth, attrs.axis, out_type.dtype)])


_register_computes()
