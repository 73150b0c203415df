"""Shape-changing (injective) operators: reshape, transpose, squeeze, expand_dims, concatenate,
stack, split, tile, repeat, reverse and reshape_like (take, strided_slice and one_hot are in
``indexing.py``, layout_transform in ``layouts.py``).

Attrs, defaults and relations follow TVM v0.13 (include/tvm/relay/attrs/transform.h and
src/relay/op/tensor/transform.cc). Where TVM crashes or reads out of bounds on a bad attribute,
the relation here rejects the call with a message stating what was expected and what was found.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.attrs import Attrs
from irlab.ir.expr import RelayExpr
from irlab.ir.op import OpPattern, register_op
from irlab.ir.type import TensorType, TupleType
from irlab.relay.expr import Constant, Tuple, TupleWrapper
from irlab.relay.op.layout_rules import concatenate_layout
from irlab.relay.op.op_common import make_call, out_array


# ---------------------------------------------------------------------------------------------
# attrs (field order and defaults as TVM's transform.h; a field without a default always prints)
class ExpandDimsAttrs(Attrs):
    _type_key = "relay.attrs.ExpandDimsAttrs"
    axis: int
    num_newaxis: int = 1


class ConcatenateAttrs(Attrs):
    _type_key = "relay.attrs.ConcatenateAttrs"
    axis: int = 0


class TransposeAttrs(Attrs):
    _type_key = "relay.attrs.TransposeAttrs"
    axes: tuple


class ReshapeAttrs(Attrs):
    _type_key = "relay.attrs.ReshapeAttrs"
    newshape: tuple
    allowzero: bool = False


class ReshapeLikeAttrs(Attrs):
    _type_key = "relay.attrs.ReshapeLikeAttrs"
    lhs_begin: int = 0
    lhs_end: int = None
    rhs_begin: int = 0
    rhs_end: int = None


class StackAttrs(Attrs):
    _type_key = "relay.attrs.StackAttrs"
    axis: int = 0


class RepeatAttrs(Attrs):
    _type_key = "relay.attrs.RepeatAttrs"
    repeats: int
    axis: int = None


class TileAttrs(Attrs):
    _type_key = "relay.attrs.TileAttrs"
    reps: tuple


class ReverseAttrs(Attrs):
    _type_key = "relay.attrs.ReverseAttrs"
    axis: int = None


class SqueezeAttrs(Attrs):
    _type_key = "relay.attrs.SqueezeAttrs"
    axis: tuple = None


class SplitAttrs(Attrs):
    _type_key = "relay.attrs.SplitAttrs"
    indices_or_sections: object
    axis: int = 0


# ---------------------------------------------------------------------------------------------
# helpers
_DATA = [("data", "Tensor", "The input tensor.")]


def _check_axis(axis, ndim, ctx, what, extra=0):
    """``axis`` in ``[-(ndim + extra), ndim + extra)``, returned non-negative; ``extra=1`` is
    for ops that insert an axis (expand_dims, stack)."""
    n = ndim + extra
    if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
        ctx.fail(f"{what} must be an integer, got {axis!r}")
    if not -n <= axis < n:
        ctx.fail(f"{what}={axis} is out of range: expected a value in [{-n}, {n - 1}] "
                 f"for a tensor of rank {ndim}")
    return axis + n if axis < 0 else axis


def _int_list(value, what):
    """A Python int or sequence of ints as a list (constructor-side argument checking)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return [int(value)]
    try:
        items = list(value)
    except TypeError:
        raise IrlabError(f"{what} must be an integer or a sequence of integers, "
                         f"got {value!r}") from None
    out = []
    for item in items:
        inner = getattr(item, "value", item)  # tir.IntImm
        if item is None:
            out.append(None)
        elif isinstance(inner, numbers.Integral) and not isinstance(inner, bool):
            out.append(int(inner))
        else:
            raise IrlabError(f"{what} must hold integers, got {item!r} in {value!r}")
    return out


class _RaiseCtx:
    """A relation context for references: a failed check raises at once."""

    @staticmethod
    def fail(msg):
        raise IrlabError(msg)

    def expect(self, cond, msg):
        if not cond:
            self.fail(msg)


def _reshape_reference(inputs, attrs, out_type):
    """Ops that only reinterpret the row-major element order (reshape, squeeze, ...)."""
    return out_array(np.reshape(inputs[0], out_type.shape), out_type)


# ---------------------------------------------------------------------------------------------
# reshape
def _infer_newshape(ishape, newshape, allowzero, ctx):
    """TVM's ``InferNewShape``: resolve the special values 0, -1, -2, -3, -4 of ``newshape``."""
    def bad(msg):
        ctx.fail(f"cannot reshape {ishape} to newshape={newshape}: {msg}")

    out, used_in, used_out = [], set(), set()
    src, infer_pos, i = 0, -1, 0
    while i < len(newshape):
        value = newshape[i]
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            bad(f"entry {i} is {value!r}, expected an integer")
        if value > 0:
            out.append(value)
            src += 1
        elif value == 0 and allowzero:
            out.append(0)
            src += 1
        elif value == 0:
            if src >= len(ishape):
                bad(f"0 at position {i} copies input dimension {src}, "
                    f"but the input has rank {len(ishape)}")
            used_in.add(src)
            used_out.add(len(out))
            out.append(ishape[src])
            src += 1
        elif value == -1:
            if infer_pos >= 0:
                bad("at most one dimension can be -1")
            infer_pos = len(out)
            out.append(1)
            src += 1
        elif value == -2:
            while src < len(ishape):
                used_in.add(src)
                used_out.add(len(out))
                out.append(ishape[src])
                src += 1
        elif value == -3:
            if src + 1 >= len(ishape):
                bad(f"-3 at position {i} merges input dimensions {src} and {src + 1}, "
                    f"but the input has rank {len(ishape)}")
            used_in.update((src, src + 1))
            used_out.add(len(out))
            out.append(ishape[src] * ishape[src + 1])
            src += 2
        elif value == -4:
            if i + 2 >= len(newshape):
                bad(f"-4 at position {i} must be followed by two dimensions")
            if src >= len(ishape):
                bad(f"-4 at position {i} splits input dimension {src}, "
                    f"but the input has rank {len(ishape)}")
            d0 = ishape[src]
            used_in.add(src)
            src += 1
            d1, d2 = newshape[i + 1], newshape[i + 2]
            i += 2
            for d in (d1, d2):
                if not isinstance(d, numbers.Integral) or (d <= 0 and d != -1):
                    bad(f"the two dimensions after -4 must be positive or -1, got {d1}, {d2}")
            if d1 == -1 and d2 == -1:
                bad("the two dimensions after -4 cannot both be -1")
            if d1 == -1 or d2 == -1:
                known = d2 if d1 == -1 else d1
                if d0 % known:
                    bad(f"-4 splits dimension {d0}, which is not divisible by {known}")
                d1, d2 = (d0 // known, d2) if d1 == -1 else (d1, d0 // known)
            used_out.update((len(out), len(out) + 1))
            out.extend((d1, d2))
        else:
            bad(f"unsupported special value {value} (expected a positive size, 0, -1, -2, -3 "
                f"or -4)")
        i += 1
    if infer_pos >= 0:
        known_in = math.prod(d for j, d in enumerate(ishape) if j not in used_in)
        known_out = math.prod(d for j, d in enumerate(out) if j not in used_out and j != infer_pos)
        if known_out == 0 or known_in % known_out:
            bad(f"-1 cannot be inferred: {known_in} remaining elements are not a multiple of "
                f"{known_out}")
        out[infer_pos] = known_in // known_out
    return tuple(out)


def _reshape_rel(ctx):
    data = ctx.tensor(0, "data")
    newshape = ctx.attrs.newshape
    if newshape is None:
        ctx.fail("newshape is not set")
    oshape = _infer_newshape(data.shape, tuple(newshape), bool(ctx.attrs.allowzero), ctx)
    n_in, n_out = math.prod(data.shape), math.prod(oshape)
    ctx.expect(n_in == n_out,
               f"cannot reshape {data.shape} ({n_in} elements) to newshape="
               f"{tuple(newshape)} (resolved to {oshape}, {n_out} elements)")
    return TensorType(oshape, data.dtype)


register_op("reshape", num_inputs=1, arguments=_DATA, attrs_type=ReshapeAttrs,
            type_rel=_reshape_rel, pattern=OpPattern.INJECTIVE, support_level=3,
            reference=_reshape_reference,
            description="Reshape a tensor; newshape may use the special values 0, -1, -2, -3, -4.",
            ).set_attr("TReshapeOp", True)


def reshape(data, newshape, allowzero=False):
    """Reshape ``data`` to ``newshape`` (an int or a sequence; see TVM for 0/-1/-2/-3/-4)."""
    if isinstance(newshape, Constant):  # a constant shape is static, as in TVM
        newshape = newshape.data.numpy().tolist()
    return make_call("reshape", [data], ReshapeAttrs(
        newshape=tuple(_int_list(newshape, "reshape: newshape")), allowzero=bool(allowzero)))


# ---------------------------------------------------------------------------------------------
# reshape_like
def _reshape_like_rel(ctx):
    data, like = ctx.tensor(0, "data"), ctx.tensor(1, "shape_like")
    a = ctx.attrs

    def span(begin, end, ndim, which):
        end = ndim if end is None else end
        b = begin + ndim if begin < 0 else begin
        e = end + ndim if end < 0 else end
        ctx.expect(0 <= b <= e <= ndim,
                   f"{which}_begin={begin}, {which}_end={end} is not a valid "
                   f"range of axes for a tensor of rank {ndim}")
        return b, e

    lb, le = span(a.lhs_begin, a.lhs_end, data.ndim, "lhs")
    rb, re_ = span(a.rhs_begin, a.rhs_end, like.ndim, "rhs")
    oshape = data.shape[:lb] + like.shape[rb:re_] + data.shape[le:]
    ctx.expect(math.prod(oshape) == data.size,
               f"cannot reshape {data.shape} ({data.size} elements) to {oshape} "
               f"({math.prod(oshape)} elements)")
    return TensorType(oshape, data.dtype)


register_op("reshape_like", num_inputs=2,
            arguments=_DATA + [("shape_like", "Tensor", "Shape tensor.")],
            attrs_type=ReshapeLikeAttrs, type_rel=_reshape_like_rel,
            pattern=OpPattern.INJECTIVE, support_level=3, reference=_reshape_reference,
            description="Reshape to (part of) the shape of another tensor.",
            ).set_attr("TReshapeOp", True)


def reshape_like(data, shape_like, lhs_begin=0, lhs_end=None, rhs_begin=0, rhs_end=None):
    """Reshape ``data`` so that ``data.shape[lhs_begin:lhs_end]`` becomes
    ``shape_like.shape[rhs_begin:rhs_end]``."""
    return make_call("reshape_like", [data, shape_like], ReshapeLikeAttrs(
        lhs_begin=lhs_begin, lhs_end=lhs_end, rhs_begin=rhs_begin, rhs_end=rhs_end))


# ---------------------------------------------------------------------------------------------
# transpose
def _transpose_axes(ndim, axes, ctx):
    if axes is None:
        return tuple(range(ndim - 1, -1, -1))
    ctx.expect(len(axes) == ndim,
               f"axes={tuple(axes)} has {len(axes)} entries, expected one per "
               f"dimension of the rank-{ndim} input")
    perm = tuple(_check_axis(a, ndim, ctx, "axis") for a in axes)
    ctx.expect(len(set(perm)) == ndim, f"axes={tuple(axes)} repeats an axis")
    return perm


def _transpose_rel(ctx):
    data = ctx.tensor(0, "data")
    perm = _transpose_axes(data.ndim, ctx.attrs.axes, ctx)
    return TensorType(tuple(data.shape[a] for a in perm), data.dtype)


def _transpose_reference(inputs, attrs, out_type):
    x = inputs[0]
    axes = None if attrs.axes is None else [a % x.ndim for a in attrs.axes]
    return out_array(np.transpose(x, axes), out_type)


register_op("transpose", num_inputs=1, arguments=_DATA, attrs_type=TransposeAttrs,
            type_rel=_transpose_rel, pattern=OpPattern.INJECTIVE, support_level=3,
            reference=_transpose_reference, description="Permute the dimensions of a tensor.",
            ).set_attrs(TCopiesValues=True)


def transpose(data, axes=None):
    """Permute the dimensions of ``data``; ``axes=None`` reverses them."""
    axes = None if axes is None else tuple(_int_list(axes, "transpose: axes"))
    return make_call("transpose", [data], TransposeAttrs(axes=axes))


# ---------------------------------------------------------------------------------------------
# squeeze / expand_dims
def _squeeze_rel(ctx):
    data = ctx.tensor(0, "data")
    axis = ctx.attrs.axis
    if axis is None:
        return TensorType(tuple(d for d in data.shape if d != 1), data.dtype)
    drop = set()
    for a in axis:
        a = _check_axis(a, data.ndim, ctx, "axis")
        ctx.expect(data.shape[a] == 1,
                   f"cannot squeeze axis {a} of shape {data.shape}: its size is "
                   f"{data.shape[a]}, expected 1")
        drop.add(a)
    return TensorType(tuple(d for i, d in enumerate(data.shape) if i not in drop), data.dtype)


register_op("squeeze", num_inputs=1, arguments=_DATA, attrs_type=SqueezeAttrs,
            type_rel=_squeeze_rel, pattern=OpPattern.INJECTIVE, support_level=3,
            reference=_reshape_reference, description="Remove axes of size 1.",
            ).set_attr("TReshapeOp", True)


def squeeze(data, axis=None):
    """Remove the size-1 axes listed in ``axis`` (all size-1 axes when ``axis`` is None)."""
    axis = None if axis is None else tuple(_int_list(axis, "squeeze: axis"))
    return make_call("squeeze", [data], SqueezeAttrs(axis=axis))


def _expand_dims_rel(ctx):
    data = ctx.tensor(0, "data")
    ndim, axis, num = data.ndim, ctx.attrs.axis, ctx.attrs.num_newaxis
    ctx.expect(isinstance(num, numbers.Integral) and num >= 0,
               f"num_newaxis must be >= 0, got {num}")
    pivot = _check_axis(axis, ndim, ctx, "axis", extra=1)
    return TensorType(data.shape[:pivot] + (1,) * num + data.shape[pivot:], data.dtype)


register_op("expand_dims", num_inputs=1, arguments=_DATA, attrs_type=ExpandDimsAttrs,
            type_rel=_expand_dims_rel, pattern=OpPattern.BROADCAST, support_level=1,
            reference=_reshape_reference,
            description="Insert num_newaxis axes of size 1 at position axis.",
            ).set_attr("TReshapeOp", True)


def expand_dims(data, axis, num_newaxis=1):
    """Insert ``num_newaxis`` size-1 axes at ``axis`` (in ``[-ndim-1, ndim]``)."""
    if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
        raise IrlabError(f"expand_dims: axis must be an integer, got {axis!r}")
    return make_call("expand_dims", [data], ExpandDimsAttrs(axis=int(axis),
                                                            num_newaxis=int(num_newaxis)))


def expand_bias_to_match_axis(bias, target_ndim: int, axes):
    """Insert unit axes into ``bias`` (whose dims are the sorted ``axes`` of a rank
    ``target_ndim`` tensor) so it broadcasts along those axes (TVM's ExpandBiasToMatchAxis).

    A (C,) bias for axis 1 of NCHW becomes ``expand_dims(bias, axis=1, num_newaxis=2)``.
    """
    axes = [int(a) for a in axes]
    for i in range(len(axes), 0, -1):
        if i == len(axes):
            missing = target_ndim - axes[i - 1] - 1  # unit axes after the last kept axis
        else:
            missing = axes[i] - axes[i - 1]  # unit axes between two kept axes
        if missing > 0:
            bias = expand_dims(bias, axis=i, num_newaxis=missing)
    return bias


# ---------------------------------------------------------------------------------------------
# concatenate / stack
def _tensor_fields(ctx, op_name):
    tup = ctx.tuple(0, "data")
    ctx.expect(len(tup.fields) > 0, "needs at least one tensor, got an empty tuple")
    for i, f in enumerate(tup.fields):
        if not isinstance(f, TensorType):
            ctx.fail(f"tuple field {i} must be a tensor, got {f}")
    first = tup.fields[0]
    for i, f in enumerate(tup.fields):
        ctx.expect(f.ndim == first.ndim,
                   f"all tensors must have the same rank: field 0 has shape "
                   f"{first.shape}, field {i} has shape {f.shape}")
        ctx.expect(f.dtype == first.dtype,
                   f"all tensors must have the same dtype: field 0 is {first.dtype}, "
                   f"field {i} is {f.dtype}")
    return tup.fields


def _concatenate_rel(ctx):
    fields = _tensor_fields(ctx, "concatenate")
    first = fields[0]
    axis = _check_axis(ctx.attrs.axis, first.ndim, ctx, "axis")
    for i, f in enumerate(fields):
        for d in range(first.ndim):
            ctx.expect(d == axis or f.shape[d] == first.shape[d],
                       f"shapes differ outside the concatenation axis {axis}: "
                       f"field 0 has shape {first.shape}, field {i} has shape {f.shape}")
    shape = list(first.shape)
    shape[axis] = sum(f.shape[axis] for f in fields)
    return TensorType(tuple(shape), first.dtype)


def _concatenate_reference(inputs, attrs, out_type):
    arrays = list(inputs[0])
    return out_array(np.concatenate(arrays, axis=attrs.axis), out_type)


register_op("concatenate", num_inputs=1,
            arguments=[("data", "Tensor", "The input list of tensors.")],
            attrs_type=ConcatenateAttrs, type_rel=_concatenate_rel,
            pattern=OpPattern.INJECTIVE, support_level=1, reference=_concatenate_reference,
            description="Concatenate a tuple of tensors along an axis.",
            ).set_attrs(FInferCorrectLayout=concatenate_layout)


def _as_tuple_arg(data, op_name, keep_tuple):
    """The single tuple argument of concatenate/stack. TVM's concatenate always builds a new
    Tuple from the fields, while stack passes a Tuple expression through."""
    if isinstance(data, RelayExpr) and not isinstance(data, Tuple):
        return data  # an expression of tuple type is passed through as the single argument
    fields = list(data)  # a Tuple, a TupleWrapper or a Python sequence of expressions
    if not fields:
        raise IrlabError(f"relay.{op_name} requires data to be non-empty.")
    return data if keep_tuple and isinstance(data, Tuple) else Tuple(fields)


def concatenate(data, axis):
    """Concatenate a list/tuple of tensors along ``axis``."""
    if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
        raise IrlabError(f"concatenate: axis must be an integer, got {axis!r}")
    return make_call("concatenate", [_as_tuple_arg(data, "concatenate", False)],
                     ConcatenateAttrs(axis=int(axis)))


def _stack_rel(ctx):
    fields = _tensor_fields(ctx, "stack")
    first = fields[0]
    for i, f in enumerate(fields):
        ctx.expect(f.shape == first.shape,
                   f"all tensors must have the same shape: field 0 has shape "
                   f"{first.shape}, field {i} has shape {f.shape}")
    axis = _check_axis(ctx.attrs.axis, first.ndim, ctx, "axis", extra=1)
    return TensorType(first.shape[:axis] + (len(fields),) + first.shape[axis:], first.dtype)


def _stack_reference(inputs, attrs, out_type):
    return out_array(np.stack(list(inputs[0]), axis=attrs.axis), out_type)


register_op("stack", num_inputs=1, arguments=[("data", "Tensor", "The input list of tensors.")],
            attrs_type=StackAttrs, type_rel=_stack_rel, pattern=OpPattern.INJECTIVE,
            support_level=3, reference=_stack_reference,
            description="Stack a tuple of same-shaped tensors along a new axis.")


def stack(data, axis):
    """Stack a list/tuple of same-shaped tensors along a new axis ``axis``."""
    if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
        raise IrlabError("For now, we only support integer axis")
    return make_call("stack", [_as_tuple_arg(data, "stack", True)],
                     StackAttrs(axis=int(axis)))


# ---------------------------------------------------------------------------------------------
# split
def _split_points(dim, ios, ctx):
    """The split indices along an axis of size ``dim`` (TVM's rules: sections must divide,
    indices must be strictly ascending, positive and below ``dim``)."""
    if isinstance(ios, numbers.Integral):
        ctx.expect(ios > 0, f"indices_or_sections={ios} must be a positive number of "
                            f"sections")
        ctx.expect(dim % ios == 0,
                   f"{ios} sections do not divide the axis of size {dim}")
        step = dim // ios
        return [step * k for k in range(1, ios)]
    points, prev = list(ios), 0
    for p in points:
        ctx.expect(isinstance(p, numbers.Integral) and p > prev,
                   f"indices_or_sections={tuple(points)} must be strictly ascending "
                   f"positive integers")
        prev = p
    ctx.expect(prev < dim or not points,
               f"index {prev} in indices_or_sections={tuple(points)} is not below the "
               f"axis size {dim}")
    return points


def _split_rel(ctx):
    data = ctx.tensor(0, "data")
    ctx.expect(data.ndim > 0, "the input must have rank >= 1, got a scalar")
    axis = _check_axis(ctx.attrs.axis, data.ndim, ctx, "axis")
    ios = ctx.attrs.indices_or_sections
    if ios is None:
        ctx.fail("indices_or_sections is not set")
    bounds = [0] + _split_points(data.shape[axis], ios, ctx) + [data.shape[axis]]
    fields = []
    for lo, hi in zip(bounds, bounds[1:]):
        shape = list(data.shape)
        shape[axis] = hi - lo
        fields.append(TensorType(tuple(shape), data.dtype))
    return TupleType(fields)


def _split_reference(inputs, attrs, out_type):
    x = inputs[0]
    axis = attrs.axis % x.ndim
    ios = attrs.indices_or_sections
    parts = np.split(x, ios if isinstance(ios, numbers.Integral) else list(ios), axis=axis)
    return tuple(out_array(p, t) for p, t in zip(parts, out_type.fields))


register_op("split", num_inputs=1, arguments=_DATA, attrs_type=SplitAttrs,
            type_rel=_split_rel, pattern=OpPattern.INJECTIVE, support_level=3,
            reference=_split_reference,
            description="Split a tensor into equal sections or at the given indices.")


def split(data, indices_or_sections, axis=0):
    """Split ``data`` along ``axis``; returns a ``TupleWrapper`` of the pieces."""
    if isinstance(indices_or_sections, numbers.Integral) and \
            not isinstance(indices_or_sections, bool):
        ios = int(indices_or_sections)
        size = ios
    else:
        ios = tuple(_int_list(indices_or_sections, "split: indices_or_sections"))
        size = len(ios) + 1
    call = make_call("split", [data], SplitAttrs(indices_or_sections=ios, axis=int(axis)))
    return TupleWrapper(call, size)


# ---------------------------------------------------------------------------------------------
# tile / repeat / reverse
def _tile_rel(ctx):
    data = ctx.tensor(0, "data")
    reps = ctx.attrs.reps
    if reps is None:
        ctx.fail("reps is not set")
    reps = tuple(reps)
    for r in reps:
        ctx.expect(isinstance(r, numbers.Integral) and r > 0,
                   f"reps={reps} must hold positive integers")
    n = max(len(reps), data.ndim)
    dshape = (1,) * (n - data.ndim) + data.shape
    reps = (1,) * (n - len(reps)) + reps
    return TensorType(tuple(d * r for d, r in zip(dshape, reps)), data.dtype)


def _tile_reference(inputs, attrs, out_type):
    return out_array(np.tile(inputs[0], tuple(attrs.reps)), out_type)


register_op("tile", num_inputs=1, arguments=_DATA, attrs_type=TileAttrs, type_rel=_tile_rel,
            pattern=OpPattern.BROADCAST, support_level=3, reference=_tile_reference,
            description="Repeat the whole tensor reps times along each axis.",
            ).set_attrs(TCopiesValues=True)


def tile(data, reps):
    """Repeat the whole of ``data`` ``reps[i]`` times along axis ``i`` (numpy's tile)."""
    return make_call("tile", [data], TileAttrs(reps=tuple(_int_list(reps, "tile: reps"))))


def _repeat_rel(ctx):
    data = ctx.tensor(0, "data")
    repeats = ctx.attrs.repeats
    ctx.expect(isinstance(repeats, numbers.Integral) and repeats >= 1,
               f"repeats must be >= 1, got {repeats}")
    if ctx.attrs.axis is None:
        ctx.fail("axis is not set")
    axis = _check_axis(ctx.attrs.axis, data.ndim, ctx, "axis")
    shape = list(data.shape)
    shape[axis] *= repeats
    return TensorType(tuple(shape), data.dtype)


def _repeat_reference(inputs, attrs, out_type):
    x = inputs[0]
    return out_array(np.repeat(x, attrs.repeats, axis=attrs.axis % x.ndim), out_type)


register_op("repeat", num_inputs=1, arguments=_DATA, attrs_type=RepeatAttrs,
            type_rel=_repeat_rel, pattern=OpPattern.BROADCAST, support_level=3,
            reference=_repeat_reference,
            description="Repeat each element repeats times along an axis.",
            ).set_attrs(TCopiesValues=True)


def repeat(data, repeats, axis):
    """Repeat each element of ``data`` ``repeats`` times along ``axis``."""
    return make_call("repeat", [data], RepeatAttrs(repeats=int(repeats), axis=int(axis)))


def _reverse_rel(ctx):
    data = ctx.tensor(0, "data")
    if ctx.attrs.axis is None:
        ctx.fail("axis is not set")
    _check_axis(ctx.attrs.axis, data.ndim, ctx, "axis")
    return data


def _reverse_reference(inputs, attrs, out_type):
    x = inputs[0]
    return out_array(np.flip(x, axis=attrs.axis % x.ndim), out_type)


register_op("reverse", num_inputs=1, arguments=_DATA, attrs_type=ReverseAttrs,
            type_rel=_reverse_rel, pattern=OpPattern.INJECTIVE, support_level=3,
            reference=_reverse_reference, description="Reverse the elements along an axis.",
            ).set_attrs(TCopiesValues=True)


def reverse(data, axis):
    """Reverse the order of the elements of ``data`` along ``axis``."""
    return make_call("reverse", [data], ReverseAttrs(axis=int(axis)))


__all__ = [
    "ExpandDimsAttrs", "ConcatenateAttrs", "TransposeAttrs", "ReshapeAttrs", "ReshapeLikeAttrs",
    "StackAttrs", "RepeatAttrs", "TileAttrs", "ReverseAttrs", "SqueezeAttrs",
    "SplitAttrs",
    "reshape", "reshape_like", "transpose", "squeeze", "expand_dims", "concatenate", "stack",
    "split", "tile", "repeat", "reverse",
]


# take/strided_slice/one_hot live in indexing.py, layout_transform and layout strings in
# layouts.py; re-exported so both module paths work.
from irlab.relay.op.indexing import *  # noqa: E402,F401,F403
from irlab.relay.op import indexing as _indexing  # noqa: E402
from irlab.relay.op.layouts import *  # noqa: E402,F401,F403
from irlab.relay.op import layouts as _layouts  # noqa: E402

__all__ += _indexing.__all__ + _layouts.__all__


# ---------------------------------------------------------------------------------------------
# TE computes (injective strategy); also for where/broadcast_to and the initializers of
# tensor.py, which are layout-free fills and broadcasts
def _register_computes():
    from irlab.relay.op.strategy.generic import register_injective
    from irlab.topi import transform as T

    def reshape_to_out(attrs, inputs, out_type):
        return [T.reshape(inputs[0], out_type.shape)]

    register_injective("reshape", reshape_to_out)
    register_injective("reshape_like", reshape_to_out)
    register_injective("squeeze", lambda attrs, inputs, out_type: [
        T.reshape(inputs[0], out_type.shape, name="T_squeeze")])
    register_injective("expand_dims", lambda attrs, inputs, out_type: [
        T.expand_dims(inputs[0], attrs.axis, attrs.num_newaxis)])
    register_injective("transpose", lambda attrs, inputs, out_type: [
        T.transpose(inputs[0], attrs.axes)])
    register_injective("concatenate", lambda attrs, inputs, out_type: [
        T.concatenate(inputs, attrs.axis)])
    register_injective("stack", lambda attrs, inputs, out_type: [
        T.stack(inputs, attrs.axis)])
    register_injective("split", lambda attrs, inputs, out_type: T.split(
        inputs[0], attrs.indices_or_sections, attrs.axis))
    register_injective("layout_transform", lambda attrs, inputs, out_type: [
        T.layout_transform(inputs[0], attrs.src_layout, attrs.dst_layout)])
    register_injective("tile", lambda attrs, inputs, out_type: [
        T.tile(inputs[0], attrs.reps)])
    register_injective("repeat", lambda attrs, inputs, out_type: [
        T.repeat(inputs[0], attrs.repeats, attrs.axis)])
    register_injective("reverse", lambda attrs, inputs, out_type: [
        T.reverse(inputs[0], attrs.axis)])
    register_injective("where", lambda attrs, inputs, out_type: [T.where(*inputs)])
    register_injective("broadcast_to", lambda attrs, inputs, out_type: [
        T.broadcast_to(inputs[0], out_type.shape)])
    for name, value in (("zeros", 0), ("ones", 1), ("zeros_like", 0), ("ones_like", 1)):
        register_injective(name, lambda attrs, inputs, out_type, value=value, name=name: [
            T.full(out_type.shape, out_type.dtype, value, name=f"T_{name}")])
    register_injective("full", lambda attrs, inputs, out_type: [
        T.full(out_type.shape, out_type.dtype, inputs[-1])])
    register_injective("full_like", lambda attrs, inputs, out_type: [
        T.full(out_type.shape, out_type.dtype, inputs[-1], name="T_full_like")])


_register_computes()
