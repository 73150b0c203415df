"""Layout, shape and indexing operators as TE computes (TVM's ``topi.reshape``,
``topi.transpose``, ``topi.concatenate``, ``topi.take``, ``topi.nn.pad``...).

Every compute here is injective: each output element reads input elements at indices computed
from its own. Shapes are static (Python ints); arguments are already canonical (non-negative
axes, resolved shapes) -- the Relay wrappers in ``irlab/relay/op/*`` canonicalize attrs.
"""

from __future__ import annotations

import math as _math

from irlab import te
from irlab.errors import IrlabError
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.topi.broadcast import broadcast_shape
from irlab.topi.utils import const_shape, dims, is_const, prod as _prod


# -- index helpers ------------------------------------------------------------------------------

def _i(value):
    """An int32 index: ints become IntImms; a symbolic dim is cast to int32 if needed."""
    if isinstance(value, E.PrimExpr) and not isinstance(value, E.IntImm):
        return value if value.dtype == "int32" else O.cast(value, "int32")
    return E.IntImm("int32", int(getattr(value, "value", value)))


def _nonzero(value) -> bool:
    """False only for a known zero (a symbolic offset may be anything)."""
    return not (is_const(value) and int(getattr(value, "value", value)) == 0)


def _dim(value):
    """A shape entry kept as an int when constant, else the PrimExpr."""
    if isinstance(value, E.PrimExpr) and not isinstance(value, E.IntImm):
        return value
    return int(getattr(value, "value", value))


def ravel_index(indices, shape):
    """The row-major flat index of ``indices`` in ``shape``."""
    flat = _i(0)
    for idx, dim in zip(indices, shape):
        flat = flat * _i(dim) + idx if not (isinstance(flat, E.IntImm) and flat.value == 0) \
            else idx
    return flat


def unravel_index(flat, shape):
    """The indices in ``shape`` of the row-major flat index ``flat``."""
    out = []
    for k in range(len(shape) - 1, -1, -1):
        dim = shape[k]
        if k == 0:
            out.append(flat)
        elif dim == 1:
            out.append(_i(0))
        else:
            out.append(O.floormod(flat, _i(dim)))
            flat = O.floordiv(flat, _i(dim))
    return list(reversed(out))


def _eq(a, b):
    a, b = O._match_types(a, b)
    return E.EQ(a, b)


def _lt(a, b):
    a, b = O._match_types(a, b)
    return E.LT(a, b)


def _ge(a, b):
    a, b = O._match_types(a, b)
    return E.GE(a, b)


# -- reshapes --------------------------------------------------------------------------------

def reshape(a, newshape, name="T_reshape"):
    """``a`` with the resolved shape ``newshape`` (same element count, row-major order)."""
    ishape = dims(a)
    newshape = tuple(_dim(d) for d in newshape)
    if all(is_const(d) for d in ishape + newshape) and \
            _math.prod(ishape) != _math.prod(newshape):
        raise IrlabError(f"reshape: cannot reshape {ishape} to {newshape}")
    if ishape == newshape:
        return te.compute(newshape, lambda *i: a(*i), name=name, tag="injective")
    return te.compute(newshape, lambda *i: a(*unravel_index(ravel_index(i, newshape), ishape)),
                      name=name, tag="injective")


def squeeze(a, axis=None, name="T_squeeze"):
    """``a`` without the size-1 axes ``axis`` (all size-1 axes when None)."""
    ishape = dims(a)
    if axis is None:
        axis = [k for k, d in enumerate(ishape) if is_const(d) and d == 1]
    axis = {x % len(ishape) for x in axis}
    oshape = tuple(d for k, d in enumerate(ishape) if k not in axis)

    def body(*i):
        it = iter(i)
        return a(*[_i(0) if k in axis else next(it) for k in range(len(ishape))])

    return te.compute(oshape, body, name=name, tag="injective")


def expand_dims(a, axis, num_newaxis=1, name="T_expand_dims"):
    """``a`` with ``num_newaxis`` size-1 axes inserted at ``axis``."""
    ishape = dims(a)
    axis = axis + len(ishape) + 1 if axis < 0 else axis
    oshape = ishape[:axis] + (1,) * num_newaxis + ishape[axis:]
    return te.compute(oshape, lambda *i: a(*(i[:axis] + i[axis + num_newaxis:])), name=name,
                      tag="injective")


def batch_flatten(a, name="T_batch_flatten"):
    ishape = dims(a)
    return reshape(a, (ishape[0], _prod(ishape[1:])), name=name)


def transpose(a, axes=None, name="T_transpose"):
    ishape = dims(a)
    ndim = len(ishape)
    axes = tuple(range(ndim - 1, -1, -1)) if axes is None else tuple(x % ndim for x in axes)
    oshape = tuple(ishape[x] for x in axes)

    def body(*i):
        idx = [None] * ndim
        for k, x in enumerate(axes):
            idx[x] = i[k]
        return a(*idx)

    return te.compute(oshape, body, name=name, tag="injective")


# -- joining and splitting -----------------------------------------------------------------------

def concatenate(tensors, axis=0, name="T_concat"):
    """The tensors joined along ``axis`` (a chain of guarded reads)."""
    tensors = list(tensors)
    shapes = [dims(t) for t in tensors]
    ndim = len(shapes[0])
    axis = axis % ndim
    sizes = [s[axis] for s in shapes]
    oshape = list(shapes[0])
    oshape[axis] = sum(sizes)
    parts = [(t, off, n) for t, off, n in zip(tensors, _offsets(sizes), sizes)
             if not (is_const(n) and n <= 0)]

    def body(*i):
        j = i[axis]
        t, off, _ = parts[-1]
        value = t(*(i[:axis] + (j - _i(off) if _nonzero(off) else j,) + i[axis + 1:]))
        for t, off, n in reversed(parts[:-1]):
            read = t(*(i[:axis] + (j - _i(off) if _nonzero(off) else j,) + i[axis + 1:]))
            value = O.if_then_else(_lt(j, _i(off + n)), read, value)
        return value

    if not parts:
        return te.compute(tuple(oshape), lambda *i: O.const(0, tensors[0].dtype), name=name,
                          tag="injective")
    return te.compute(tuple(oshape), body, name=name, tag="injective")


def _offsets(sizes):
    out, acc = [], 0
    for s in sizes:
        out.append(acc)
        acc = acc + s if _nonzero(acc) else s
    return out


def stack(tensors, axis=0, name="T_stack"):
    """The same-shaped tensors stacked along a new axis ``axis``."""
    tensors = list(tensors)
    ishape = const_shape(tensors[0])
    axis = axis + len(ishape) + 1 if axis < 0 else axis
    oshape = ishape[:axis] + (len(tensors),) + ishape[axis:]

    def body(*i):
        k = i[axis]
        rest = i[:axis] + i[axis + 1:]
        value = tensors[-1](*rest)
        for n in range(len(tensors) - 2, -1, -1):
            value = O.if_then_else(_eq(k, _i(n)), tensors[n](*rest), value)
        return value

    return te.compute(oshape, body, name=name, tag="injective")


def strided_slice_axes(a, plan, name="T_strided_slice"):
    """``a`` sliced per ``plan`` entries ``(axis, begin, end, stride, size)`` (canonical;
    begin and size may be symbolic)."""
    ishape = dims(a)
    oshape = list(ishape)
    lookup = {}
    for axis, begin, _end, stride, size in plan:
        oshape[axis] = size
        lookup[axis] = (begin, stride)

    def body(*i):
        idx = []
        for k, v in enumerate(i):
            if k in lookup:
                b, s = lookup[k]
                e = v if s == 1 else v * _i(s)
                idx.append(e + _i(b) if _nonzero(b) else e)
            else:
                idx.append(v)
        return a(*idx)

    return te.compute(tuple(oshape), body, name=name, tag="injective")


def strided_slice(a, begin, end, strides=None, name="T_strided_slice"):
    """numpy ``a[begin:end:strides]`` over the leading axes (positive strides, clamped)."""
    ishape = const_shape(a)
    strides = list(strides or [1] * len(begin))
    plan = []
    for axis, (b, e) in enumerate(zip(begin, end)):
        s = strides[axis] if axis < len(strides) else 1
        start, stop, step = slice(b, e, s).indices(ishape[axis])
        size = len(range(start, stop, step))
        plan.append((axis, start, stop, step, size))
    return strided_slice_axes(a, plan, name)


def split(a, indices_or_sections, axis=0):
    """The pieces of ``a`` cut along ``axis`` (a number of equal sections or cut points)."""
    ishape = dims(a)
    axis = axis % len(ishape)
    dim = ishape[axis]
    if isinstance(indices_or_sections, int):
        step = dim // indices_or_sections
        points = [step * k for k in range(1, indices_or_sections)]
    else:
        points = list(indices_or_sections)
    bounds = [0] + points + [dim]
    return [strided_slice_axes(a, [(axis, lo, hi, 1, hi - lo if _nonzero(lo) else hi)],
                               name=f"T_split_{k}")
            for k, (lo, hi) in enumerate(zip(bounds, bounds[1:]))]


# -- gathers -------------------------------------------------------------------------------------

def _index_in_range(idx, size, mode):
    idx = O.cast(idx, "int32") if idx.dtype != "int32" else idx
    if mode == "clip":
        top = _i(max(size - 1, 0)) if is_const(size) else O.max(_i(size) - _i(1), _i(0))
        return O.min(O.max(idx, _i(0)), top)
    if mode in ("wrap", "fast"):
        return O.floormod(idx, _i(size)) if _nonzero(size) else idx
    raise IrlabError(f"take: unknown mode {mode!r}")


def take(a, indices, axis=None, batch_dims=0, mode="clip", name="T_take"):
    """``a`` gathered at ``indices`` along ``axis`` (the flattened ``a`` when None)."""
    ishape, jshape = dims(a), dims(indices)
    if axis is None:
        n = _prod(ishape)

        def flat_body(*i):
            return a(*unravel_index(_index_in_range(indices(*i), n, mode), ishape))

        return te.compute(jshape, flat_body, name=name, tag="injective")
    axis = axis % len(ishape)
    bd = batch_dims + len(jshape) if batch_dims < 0 else batch_dims
    nj = len(jshape) - bd
    oshape = ishape[:axis] + jshape[bd:] + ishape[axis + 1:]

    def body(*i):
        batch = i[:bd]
        sel = indices(*(batch + i[axis:axis + nj]))
        k = _index_in_range(sel, ishape[axis], mode)
        return a(*(i[:axis] + (k,) + i[axis + nj:]))

    return te.compute(oshape, body, name=name, tag="injective")


def gather_nd(a, indices, batch_dims=0, name="T_gather_nd"):
    """``a`` at the index tuples along ``indices``' first axis (M of them): output
    ``[b..., y...] + rest = a[b..., indices[0, b..., y...], ..., indices[M-1, ...], rest]``."""
    ashape, ishape = dims(a), dims(indices)
    m = ishape[0]
    ny = len(ishape) - 1  # batch and gather axes of the output
    oshape = ashape[:batch_dims] + ishape[1 + batch_dims:] + ashape[batch_dims + m:]

    def body(*i):
        where = i[:ny]
        picked = tuple(O.cast(indices(*((k,) + where)), "int32") for k in range(m))
        return a(*(i[:batch_dims] + picked + i[ny:]))

    return te.compute(oshape, body, name=name, tag="injective")


def one_hot(indices, on_value, off_value, depth, axis, dtype, name="T_one_hot"):
    """``on_value`` where the new axis ``axis`` equals the index, else ``off_value``."""
    ishape = dims(indices)
    axis = len(ishape) if axis == -1 else axis
    oshape = ishape[:axis] + (depth,) + ishape[axis:]

    def value(v):
        return O.cast(v() if isinstance(v, te.Tensor) else O.const(v, dtype), dtype)

    def body(*i):
        idx = indices(*(i[:axis] + i[axis + 1:]))
        return E.Select(_eq(O.cast(idx, "int64"), O.cast(i[axis], "int64")), value(on_value),
                        value(off_value))

    return te.compute(oshape, body, name=name, tag="injective")


# -- repetition ------------------------------------------------------------------------------------

def tile(a, reps, name="T_tile"):
    ishape = const_shape(a)
    reps = tuple(reps)
    n = max(len(reps), len(ishape))
    dshape = (1,) * (n - len(ishape)) + ishape
    reps = (1,) * (n - len(reps)) + reps
    oshape = tuple(d * r for d, r in zip(dshape, reps))
    lead = n - len(ishape)

    def body(*i):
        idx = []
        for k in range(lead, n):
            d, r = dshape[k], reps[k]
            idx.append(i[k] if r == 1 else (_i(0) if d == 1 else O.floormod(i[k], _i(d))))
        return a(*idx)

    return te.compute(oshape, body, name=name, tag="broadcast")


def repeat(a, repeats, axis, name="T_repeat"):
    ishape = const_shape(a)
    axis = axis % len(ishape)
    oshape = list(ishape)
    oshape[axis] *= repeats

    def body(*i):
        k = i[axis] if repeats == 1 else O.floordiv(i[axis], _i(repeats))
        return a(*(i[:axis] + (k,) + i[axis + 1:]))

    return te.compute(tuple(oshape), body, name=name, tag="broadcast")


def reverse(a, axis, name="T_reverse"):
    ishape = const_shape(a)
    axis = axis % len(ishape)

    def body(*i):
        return a(*(i[:axis] + (_i(ishape[axis] - 1) - i[axis],) + i[axis + 1:]))

    return te.compute(ishape, body, name=name, tag="injective")


# -- broadcasting and filling --------------------------------------------------------------------

def _bindex(shape, out_shape, indices):
    offset = len(out_shape) - len(shape)
    def one(d):
        return is_const(d) and d == 1

    return [_i(0) if one(shape[d]) and not one(out_shape[d + offset]) else indices[d + offset]
            for d in range(len(shape))]


def broadcast_to(a, shape, name="T_broadcast_to"):
    ishape = dims(a)
    shape = tuple(_dim(d) for d in shape)
    return te.compute(shape, lambda *i: a(*_bindex(ishape, shape, i)), name=name,
                      tag="broadcast")


def where(condition, x, y, name="T_where"):
    """``x`` where ``condition`` is non-zero, else ``y`` (all three broadcast)."""
    sc, sx, sy = dims(condition), dims(x), dims(y)
    oshape = broadcast_shape(broadcast_shape(sc, sx), sy)

    def body(*i):
        c = condition(*_bindex(sc, oshape, i))
        if c.dtype != "bool":
            c = E.NE(c, O.const(0, c.dtype))
        return E.Select(c, x(*_bindex(sx, oshape, i)), y(*_bindex(sy, oshape, i)))

    return te.compute(oshape, body, name=name, tag="broadcast")


def full(shape, dtype, fill_value, name="T_full"):
    """A ``shape`` tensor of ``fill_value`` (a number or a 0-d tensor) as ``dtype``."""
    shape = tuple(_dim(d) for d in shape)
    if isinstance(fill_value, te.Tensor):
        return te.compute(shape, lambda *i: O.cast(fill_value(), dtype), name=name,
                          tag="elemwise")
    value = O.const(fill_value, dtype)
    return te.compute(shape, lambda *i: value, name=name, tag="elemwise")


def full_like(a, fill_value, name="T_full_like"):
    return full(const_shape(a), a.dtype, fill_value, name=name)


# -- padding ----------------------------------------------------------------------------------

def pad(a, pad_width, pad_value=0.0, pad_mode="constant", name="T_pad"):
    """``a`` padded by ``pad_width`` ((before, after) per axis): with ``pad_value`` (a number
    or a 0-d tensor, cast to ``a``'s dtype), the edge value, or the reflection."""
    ishape = dims(a)
    width = [tuple(int(p) for p in pair) for pair in pad_width]
    oshape = tuple(d + b + e for d, (b, e) in zip(ishape, width))

    def fill():
        if isinstance(pad_value, te.Tensor):
            return O.cast(pad_value(), a.dtype)
        return O.const(pad_value, a.dtype)

    def body(*i):
        idx, conds = [], []
        for v, d, (b, e) in zip(i, ishape, width):
            j = v - _i(b) if b else v
            if pad_mode == "constant":
                if b:
                    conds.append(_ge(v, _i(b)))
                if e:
                    conds.append(_lt(v, _i(b + d)))
            elif pad_mode == "edge":
                if b:
                    j = O.max(j, _i(0))
                if e:
                    j = O.min(j, _i(d - 1))
            elif pad_mode == "reflect":
                if b:
                    j = E.Select(_lt(j, _i(0)), _i(0) - j, j)
                if e:
                    j = E.Select(_ge(j, _i(d)), _i(2 * (d - 1)) - j, j)
            else:
                raise IrlabError(f"pad: unknown pad_mode {pad_mode!r}")
            idx.append(j)
        if not conds:
            return a(*idx)
        return O.if_then_else(O.all(*conds), a(*idx), fill())

    return te.compute(oshape, body, name=name, tag="injective")


# -- layout_transform --------------------------------------------------------------------------

def _parse_layout(name):
    from irlab.tir.data_layout import parse_layout

    return parse_layout(name)


def layout_transform(a, src_layout, dst_layout, name="T_layout_trans"):
    """``a`` converted from ``src_layout`` to ``dst_layout`` (``NCHW``, ``NHWC``, ``NCHW16c``...);
    a primal extent the new factor does not divide is padded with zeros."""
    ishape = const_shape(a)
    src, dst = _parse_layout(src_layout), _parse_layout(dst_layout)
    sfac = {x.upper(): f for x, f in src if f is not None}
    dfac = {x.upper(): f for x, f in dst if f is not None}
    extent = {x: d * sfac.get(x, 1) for (x, f), d in zip(src, ishape) if f is None}
    oshape = tuple(f if f is not None else -(-extent[x] // dfac.get(x, 1)) for x, f in dst)
    dpos = {x: k for k, (x, _) in enumerate(dst)}

    def body(*i):
        logical, conds = {}, []
        for x, f in dst:
            if f is not None:
                continue
            outer = i[dpos[x]]
            if x in dfac:
                v = outer * _i(dfac[x]) + i[dpos[x.lower()]]
                if extent[x] % dfac[x]:
                    conds.append(_lt(v, _i(extent[x])))
            else:
                v = outer
            logical[x] = v
        idx = []
        for x, f in src:
            if f is None:
                v = logical[x]
                idx.append(O.floordiv(v, _i(sfac[x])) if x in sfac else v)
            else:
                idx.append(O.floormod(logical[x.upper()], _i(f)))
        if not conds:
            return a(*idx)
        return O.if_then_else(O.all(*conds), a(*idx), O.const(0, a.dtype))

    return te.compute(oshape, body, name=name, tag="injective")


__all__ = ["ravel_index", "unravel_index", "reshape", "squeeze", "expand_dims", "batch_flatten",
           "transpose", "concatenate", "stack", "strided_slice", "strided_slice_axes", "split",
           "take", "gather_nd", "one_hot", "tile", "repeat", "reverse", "broadcast_to", "where",
           "full", "full_like", "pad", "layout_transform"]
