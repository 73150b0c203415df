"""Reductions as TE computes (TVM's ``topi.sum``, ``topi.max``, ``topi.argmax``...).

``axis`` lists the reduced axes (None: all; negative counts from the end); ``exclude`` reduces
the other axes instead; ``keepdims`` keeps the reduced axes with size 1. Each reduction is one
``te.compute`` whose body is a ``Reduce`` over one ``te.reduce_axis`` per reduced axis (in
ascending axis order); ``mean`` / ``variance`` divide in a second, elementwise stage.
"""

from __future__ import annotations


from irlab import te
from irlab.errors import IrlabError
from irlab.runtime.dtype import parse_dtype
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.topi.utils import const_shape, dims, is_const, prod as _prod_dims


def reduce_axes(ndim, axis=None, exclude=False):
    """The sorted reduced axes."""
    if axis is None:
        if exclude:
            raise IrlabError("exclude=True needs an explicit axis list")
        return tuple(range(ndim))
    axis = [axis] if isinstance(axis, int) else list(axis)
    if not axis:
        return tuple(range(ndim))
    picked = sorted({a % ndim for a in axis})
    if exclude:
        return tuple(k for k in range(ndim) if k not in picked)
    return tuple(picked)


def _reduce_plan(data, axis, keepdims, exclude):
    ishape = dims(data)
    axes = reduce_axes(len(ishape), axis, exclude)
    oshape = tuple(1 if k in axes else d for k, d in enumerate(ishape)) if keepdims else \
        tuple(d for k, d in enumerate(ishape) if k not in axes)
    return ishape, axes, oshape


def _input_index(ishape, axes, keepdims, out_index, raxes):
    """Indices into the input for output indices ``out_index`` and reduce vars ``raxes``."""
    idx, it, rit = [], iter(out_index), iter(raxes)
    for k in range(len(ishape)):
        if k in axes:
            if keepdims:
                next(it)
            idx.append(next(rit))
        else:
            idx.append(next(it))
    return idx


def comm_reduce(data, axis, keepdims, exclude, reducer, fmap=None, name="T_reduce",
                tag="comm_reduce"):
    """``reducer`` (a ``te.comm_reducer``) over ``fmap(data(...))``."""
    ishape, axes, oshape = _reduce_plan(data, axis, keepdims, exclude)
    rvars = [te.reduce_axis((0, ishape[k]), name=f"k{k}") for k in axes]
    fmap = fmap or (lambda v: v)

    def body(*i):
        value = fmap(data(*_input_index(ishape, axes, keepdims, i, [r.var for r in rvars])))
        if not rvars:
            return value
        return reducer(value, axis=rvars)

    return te.compute(oshape, body, name=name, tag=tag)


_prod = te.comm_reducer(lambda a, b: a * b, lambda dtype: O.const(1, dtype), name="prod")
_all = te.comm_reducer(lambda a, b: O.logical_and(a, b), lambda dtype: O.const(True, "bool"),
                       name="all")
_any = te.comm_reducer(lambda a, b: O.logical_or(a, b), lambda dtype: O.const(False, "bool"),
                       name="any")


def _to_bool(v):
    if v.dtype == "bool":
        return v
    return E.NE(v, O.const(0, v.dtype))


def sum(data, axis=None, keepdims=False, exclude=False):  # noqa: A001 (TVM's name)
    return comm_reduce(data, axis, keepdims, exclude, te.sum, name="T_sum")


def prod(data, axis=None, keepdims=False, exclude=False):
    return comm_reduce(data, axis, keepdims, exclude, _prod, name="T_prod")


def max(data, axis=None, keepdims=False, exclude=False):  # noqa: A001
    return comm_reduce(data, axis, keepdims, exclude, te.max, name="T_max")


def min(data, axis=None, keepdims=False, exclude=False):  # noqa: A001
    return comm_reduce(data, axis, keepdims, exclude, te.min, name="T_min")


def all(data, axis=None, keepdims=False, exclude=False, out_dtype="bool"):  # noqa: A001
    out = comm_reduce(data, axis, keepdims, exclude, _all, _to_bool, name="T_all")
    return out if out_dtype == "bool" else _cast(out, out_dtype)


def any(data, axis=None, keepdims=False, exclude=False, out_dtype="bool"):  # noqa: A001
    out = comm_reduce(data, axis, keepdims, exclude, _any, _to_bool, name="T_any")
    return out if out_dtype == "bool" else _cast(out, out_dtype)


def _cast(t, dtype, name="T_cast"):
    return te.compute(t.shape, lambda *i: O.cast(t(*i), dtype), name=name, tag="elemwise")


def _divide_by(t, count, name):
    """``t / count`` in ``t``'s arithmetic (integers truncate toward zero; a zero count gives
    0 for integers, as the reference)."""
    dtype = t.dtype
    if not is_const(count):  # a symbolic element count
        c = O.cast(count, dtype)
        if dtype.startswith(("float", "bfloat")):
            return te.compute(t.shape, lambda *i: t(*i) / c, name=name, tag="elemwise")
        return te.compute(t.shape, lambda *i: O.truncdiv(t(*i), c), name=name, tag="elemwise")
    if dtype.startswith(("float", "bfloat")):
        c = O.const(float(count), dtype)
        return te.compute(t.shape, lambda *i: t(*i) / c, name=name, tag="elemwise")
    if count == 0:
        return te.compute(t.shape, lambda *i: O.const(0, dtype), name=name, tag="elemwise")
    c = O.const(count, dtype)
    return te.compute(t.shape, lambda *i: O.truncdiv(t(*i), c), name=name, tag="elemwise")


def mean(data, axis=None, keepdims=False, exclude=False):
    ishape, axes, _ = _reduce_plan(data, axis, keepdims, exclude)
    total = sum(data, axis, keepdims, exclude)
    return _divide_by(total, _prod_dims([ishape[k] for k in axes]), "T_mean")


def variance(data, mean_, axis=None, keepdims=False, exclude=False, unbiased=False):
    """``sum((data - mean_)^2) / (count - unbiased)``; ``mean_`` broadcasts (keepdims shape)."""
    ishape, axes, _ = _reduce_plan(data, axis, keepdims, exclude)
    mshape = dims(mean_)

    rvars = [te.reduce_axis((0, ishape[k]), name=f"k{k}") for k in axes]
    oshape = _reduce_plan(data, axis, keepdims, exclude)[2]

    def body(*i):
        idx = _input_index(ishape, axes, keepdims, i, [r.var for r in rvars])
        m = mean_(*[E.IntImm("int32", 0) if is_const(mshape[k]) and mshape[k] == 1 and not (
                    is_const(ishape[k]) and ishape[k] == 1) else v
                    for k, v in enumerate(idx)])
        diff = data(*idx) - m
        return te.sum(diff * diff, axis=rvars) if rvars else diff * diff

    total = te.compute(oshape, body, name="T_variance_sum", tag="comm_reduce")
    count = _prod_dims([ishape[k] for k in axes]) - (1 if unbiased else 0)
    return _divide_by(total, count, "T_variance")


def _arg_reducer(is_max, select_last):
    def fcombine(x, y):
        # x: accumulator (index, value), y: new (index, value). A float NaN wins over any
        # number and ties with another NaN, as in np.argmax / np.argmin (first NaN's index).
        better = (x[1] > y[1]) if is_max else (x[1] < y[1])
        same = E.EQ(x[1], y[1])
        if parse_dtype(x[1].dtype).is_float:
            x_nan, y_nan = E.NE(x[1], x[1]), E.NE(y[1], y[1])
            better = O.logical_or(better, O.logical_and(x_nan, O.logical_not(y_nan)))
            same = O.logical_or(same, O.logical_and(x_nan, y_nan))
        idx_pick = (x[0] > y[0]) if select_last else (x[0] < y[0])
        keep = O.logical_or(better, O.logical_and(same, idx_pick))
        return E.Select(keep, x[0], y[0]), E.Select(keep, x[1], y[1])

    def fidentity(idx_dtype, val_dtype):
        init = O.min_value(val_dtype) if is_max else O.max_value(val_dtype)
        return O.const(-1, idx_dtype), init

    return te.comm_reducer(fcombine, fidentity, name="argmax" if is_max else "argmin")


def _arg_reduce(data, axis, keepdims, exclude, select_last_index, is_max, name):
    ishape, axes, oshape = _reduce_plan(data, axis, keepdims, exclude)
    rvars = [te.reduce_axis((0, ishape[k]), name=f"k{k}") for k in axes]
    reducer = _arg_reducer(is_max, select_last_index)
    rshape = [ishape[k] for k in axes]

    def body(*i):
        rv = [r.var for r in rvars]
        flat = E.IntImm("int32", 0)
        for k, (v, d) in enumerate(zip(rv, rshape)):
            flat = v if k == 0 else flat * E.IntImm("int32", d) + v
        value = data(*_input_index(ishape, axes, keepdims, i, rv))
        return reducer((flat, value), axis=rvars)

    idx, _val = te.compute(oshape, body, name=f"{name}_red", tag="comm_reduce_idx")
    return idx


def argmax(data, axis=None, keepdims=False, exclude=False, select_last_index=False):
    return _arg_reduce(data, axis, keepdims, exclude, select_last_index, True, "T_argmax")


def argmin(data, axis=None, keepdims=False, exclude=False, select_last_index=False):
    return _arg_reduce(data, axis, keepdims, exclude, select_last_index, False, "T_argmin")


__all__ = ["reduce_axes", "comm_reduce", "sum", "prod", "max", "min", "all", "any", "mean",
           "variance", "argmax", "argmin"]
