"""Reductions: sum, mean, max, min, prod, all, any, argmax, argmin and variance, plus the
composites std, mean_variance, mean_std and logsumexp built from them (as TVM's reduce.py).

Attrs and relations follow TVM v0.13 (include/tvm/relay/attrs/reduce.h, src/relay/op/tensor/
reduce.cc): ``axis=None`` (or an empty list) reduces every axis, ``exclude=True`` reduces the
axes *not* listed, and ``keepdims`` keeps reduced axes as size 1.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.attrs import Attrs
from irlab.ir.op import NOT_APPLICABLE, OpPattern, register_op
from irlab.ir.type import TensorType
from irlab.relay.expr import Tuple, TupleWrapper
from irlab.relay.op.op_common import make_call, out_array
from irlab.relay.op.tensor import exp as _exp, log as _log, sqrt as _sqrt
from irlab.relay.op.transform import squeeze as _squeeze


# ---------------------------------------------------------------------------------------------
# attrs (field order as TVM's reduce.h)
class ReduceAttrs(Attrs):
    _type_key = "relay.attrs.ReduceAttrs"
    axis: tuple = None
    keepdims: bool = False
    exclude: bool = False


class ArgReduceAttrs(Attrs):
    _type_key = "relay.attrs.ArgReduceAttrs"
    axis: tuple = None
    keepdims: bool = False
    select_last_index: bool = False
    exclude: bool = False


class VarianceAttrs(Attrs):
    _type_key = "relay.attrs.VarianceAttrs"
    axis: tuple = None
    keepdims: bool = False
    exclude: bool = False
    unbiased: bool = False


# ---------------------------------------------------------------------------------------------
# shared shape logic
class _Raise:
    @staticmethod
    def fail(msg):
        raise IrlabError(msg)


def reduce_axes(ndim, axis, exclude, ctx=_Raise):
    """The sorted axes a reduction runs over (TVM's ``GetReduceAxes``)."""
    if axis is None and exclude:
        ctx.fail("exclude=True needs an explicit axis list")
    if axis is None or len(axis) == 0:
        return tuple(range(ndim))
    picked = []
    for a in axis:
        if not isinstance(a, numbers.Integral) or isinstance(a, bool) or not -ndim <= a < ndim:
            ctx.fail(f"axis={a!r} is out of range: expected a value in "
                     f"[{-ndim}, {ndim - 1}] for a tensor of rank {ndim}")
        a = a + ndim if a < 0 else a
        if a in picked:
            ctx.fail(f"axis={tuple(axis)} names axis {a} twice")
        picked.append(a)
    if exclude:
        return tuple(i for i in range(ndim) if i not in picked)
    return tuple(sorted(picked))


def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _attrs_axes(attrs, ndim):
    return reduce_axes(ndim, attrs.axis, attrs.exclude)


def _reduce_rel(out_dtype=None, need_rank=False):
    def rel(ctx):
        data = ctx.tensor(0, "data")
        if need_rank:
            ctx.expect(data.ndim > 0, "the input must have rank >= 1, got a scalar")
        axes = reduce_axes(data.ndim, ctx.attrs.axis, ctx.attrs.exclude, ctx)
        shape = _reduced_shape(data.shape, axes, ctx.attrs.keepdims)
        return TensorType(shape, out_dtype or data.dtype)
    return rel


# ---------------------------------------------------------------------------------------------
# references
def _accumulate(fn, x, axes, keepdims):
    """sum/prod: integers accumulate (and wrap) in their own dtype as TVM does; floats
    accumulate in float64 so the reference is the exactly rounded result."""
    if x.dtype.kind == "f":
        return fn(x.astype(np.float64), axis=axes, keepdims=keepdims)
    if x.dtype.kind == "b":
        x = x.astype(np.int64)
    with np.errstate(all="ignore"):
        return fn(x, axis=axes, keepdims=keepdims, dtype=x.dtype)


def _sum_reference(inputs, attrs, out_type):
    x = inputs[0]
    return out_array(_accumulate(np.sum, x, _attrs_axes(attrs, x.ndim), attrs.keepdims),
                     out_type)


def _prod_reference(inputs, attrs, out_type):
    x = inputs[0]
    return out_array(_accumulate(np.prod, x, _attrs_axes(attrs, x.ndim),
                                 attrs.keepdims), out_type)


def _count(shape, axes):
    return math.prod(shape[a] for a in axes)


def _divide(total, count):
    """total / count in the input's arithmetic, as TVM's mean/variance: the count is cast to
    the dtype and integers divide truncating toward zero."""
    total = np.asarray(total)
    if total.dtype.kind not in "iu":
        with np.errstate(all="ignore"):
            return total / count
    with np.errstate(all="ignore"):
        c = np.array(count).astype(total.dtype)
        if c == 0:
            return np.zeros_like(total)
        q = np.floor_divide(total, c)
        inexact = (total - q * c) != 0
    return q + (inexact & ((total < 0) != (c < 0))).astype(total.dtype)


def _mean_reference(inputs, attrs, out_type):
    x = inputs[0]
    axes = _attrs_axes(attrs, x.ndim)
    total = _accumulate(np.sum, x, axes, attrs.keepdims)
    return out_array(_divide(total, _count(x.shape, axes)), out_type)


def _extreme_reference(fn):
    def reference(inputs, attrs, out_type):
        x = inputs[0]
        axes = _attrs_axes(attrs, x.ndim)
        kwargs = {}
        if _count(x.shape, axes) == 0:
            # An empty reduction yields the reducer's identity (TVM's min/max_value).
            if x.dtype.kind == "b":
                kwargs["initial"] = fn is np.min
            else:
                info = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
                kwargs["initial"] = info.min if fn is np.max else info.max
        return out_array(fn(x, axis=axes, keepdims=attrs.keepdims, **kwargs), out_type)
    return reference


def _logical_reference(fn):
    def reference(inputs, attrs, out_type):
        x = inputs[0]
        axes = _attrs_axes(attrs, x.ndim)
        return out_array(fn(x != 0, axis=axes, keepdims=attrs.keepdims), out_type)
    return reference


def _arg_reference(fn):
    def reference(inputs, attrs, out_type):
        x = inputs[0]
        axes = _attrs_axes(attrs, x.ndim)
        kept = [i for i in range(x.ndim) if i not in axes]
        # Move the reduced axes last and flatten them: the result indexes the row-major
        # flattening of the reduced axes (in ascending axis order), as topi's argmax/argmin.
        flat = np.transpose(x, kept + list(axes)).reshape(
            [x.shape[i] for i in kept] + [_count(x.shape, axes)])
        n = flat.shape[-1]
        if n == 0:
            idx = np.full(flat.shape[:-1], -1, np.int64)
        elif attrs.select_last_index:
            idx = n - 1 - fn(flat[..., ::-1], axis=-1)
        else:
            idx = fn(flat, axis=-1)
        if attrs.keepdims:
            idx = idx.reshape(_reduced_shape(x.shape, axes, True))
        return out_array(idx, out_type)
    return reference


def _variance_reference(inputs, attrs, out_type):
    x, m = inputs
    axes = _attrs_axes(attrs, x.ndim)
    count = _count(x.shape, axes) - (1 if attrs.unbiased else 0)
    if x.dtype.kind == "f":
        diff = x.astype(np.float64) - m.astype(np.float64)
        total = np.sum(diff * diff, axis=axes, keepdims=attrs.keepdims)
    else:
        with np.errstate(all="ignore"):
            diff = np.subtract(x, m, dtype=x.dtype)
            total = np.sum(diff * diff, axis=axes, keepdims=attrs.keepdims, dtype=x.dtype)
    return out_array(_divide(total, count), out_type)


# ---------------------------------------------------------------------------------------------
# registration
_DATA = [("data", "Tensor", "The input tensor.")]
_REDUCE_DOC = {
    "sum": "Sum over the given axes.", "mean": "Mean over the given axes.",
    "max": "Maximum over the given axes.", "min": "Minimum over the given axes.",
    "prod": "Product over the given axes.", "all": "Logical AND over the given axes.",
    "any": "Logical OR over the given axes.",
}
_REDUCE_REFERENCE = {
    "sum": _sum_reference, "mean": _mean_reference, "prod": _prod_reference,
    "max": _extreme_reference(np.max), "min": _extreme_reference(np.min),
    "all": _logical_reference(np.all), "any": _logical_reference(np.any),
}
for _name, _doc in _REDUCE_DOC.items():
    register_op(_name, num_inputs=1, arguments=_DATA, attrs_type=ReduceAttrs,
                type_rel=_reduce_rel(), pattern=OpPattern.COMM_REDUCE, support_level=4,
                reference=_REDUCE_REFERENCE[_name], description=_doc,
                ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)

for _name, _fn in (("argmax", np.argmax), ("argmin", np.argmin)):
    register_op(_name, num_inputs=1, arguments=_DATA, attrs_type=ArgReduceAttrs,
                type_rel=_reduce_rel(out_dtype="int32", need_rank=True),
                pattern=OpPattern.COMM_REDUCE, support_level=4,
                reference=_arg_reference(_fn),
                description=f"Indices of the {_name[3:]}imum values over the given axes.",
                ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)


def _variance_rel(ctx):
    data, mean_ = ctx.tensor(0, "data"), ctx.tensor(1, "mean")
    ctx.expect(data.ndim > 0, "the input must have rank >= 1, got a scalar")
    ctx.expect(mean_.ndim == data.ndim,
               f"mean must have the rank of data: data {data.shape} vs mean "
               f"{mean_.shape}")
    axes = reduce_axes(data.ndim, ctx.attrs.axis, ctx.attrs.exclude, ctx)
    for i, (d, m) in enumerate(zip(data.shape, mean_.shape)):
        ctx.expect(m == d or m == 1,
                   f"mean of shape {mean_.shape} does not broadcast against data "
                   f"{data.shape} (dimension {i}: {m} vs {d})")
    return TensorType(_reduced_shape(data.shape, axes, ctx.attrs.keepdims), data.dtype)


register_op("variance", num_inputs=2,
            arguments=_DATA + [("mean", "Tensor", "The mean tensor.")],
            attrs_type=VarianceAttrs, type_rel=_variance_rel, pattern=OpPattern.COMM_REDUCE,
            support_level=4, reference=_variance_reference,
            description="Variance of data around a given mean over the given axes.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)


# ---------------------------------------------------------------------------------------------
# constructors
def _axis_attr(axis):
    if axis is None:
        return None
    if isinstance(axis, numbers.Integral) and not isinstance(axis, bool):
        return (int(axis),)
    try:
        axes = tuple(axis)
    except TypeError:
        raise IrlabError(f"reduction axis must be an int or a list of ints, got {axis!r}") \
            from None
    for a in axes:
        if not isinstance(a, numbers.Integral) or isinstance(a, bool):
            raise IrlabError(f"reduction axis must hold integers, got {a!r} in {axis!r}")
    return tuple(int(a) for a in axes)


def _reduce_maker(name):
    def make(data, axis=None, keepdims=False, exclude=False):
        return make_call(name, [data], ReduceAttrs(
            axis=_axis_attr(axis), keepdims=bool(keepdims), exclude=bool(exclude)))
    make.__name__ = name
    make.__doc__ = (f"{_REDUCE_DOC[name]} ``axis`` is an int or list (None: all axes); "
                    f"``exclude`` reduces the axes not listed.")
    return make


sum = _reduce_maker("sum")  # noqa: A001 - TVM's names
mean = _reduce_maker("mean")
max = _reduce_maker("max")  # noqa: A001
min = _reduce_maker("min")  # noqa: A001
prod = _reduce_maker("prod")
all = _reduce_maker("all")  # noqa: A001
any = _reduce_maker("any")  # noqa: A001


def argmax(data, axis=None, keepdims=False, exclude=False, select_last_index=False):
    """Indices (int32) of the maximum values over ``axis``."""
    return make_call("argmax", [data], ArgReduceAttrs(
        axis=_axis_attr(axis), keepdims=bool(keepdims),
        select_last_index=bool(select_last_index), exclude=bool(exclude)))


def argmin(data, axis=None, keepdims=False, exclude=False, select_last_index=False):
    """Indices (int32) of the minimum values over ``axis``."""
    return make_call("argmin", [data], ArgReduceAttrs(
        axis=_axis_attr(axis), keepdims=bool(keepdims),
        select_last_index=bool(select_last_index), exclude=bool(exclude)))


def _variance_call(data, mean_, axis, keepdims, exclude, unbiased):
    return make_call("variance", [data, mean_], VarianceAttrs(
        axis=axis, keepdims=bool(keepdims), exclude=bool(exclude), unbiased=bool(unbiased)))


def variance(data, axis=None, keepdims=False, exclude=False, unbiased=False, with_mean=None):
    """Variance over ``axis``: ``variance(data, mean(data, axis, keepdims=True))`` unless
    ``with_mean`` gives the mean."""
    axis = _axis_attr(axis)
    m = mean(data, axis, True, exclude) if with_mean is None else with_mean
    return _variance_call(data, m, axis, keepdims, exclude, unbiased)


def std(data, axis=None, keepdims=False, exclude=False, unbiased=False):
    """Standard deviation over ``axis``: ``sqrt(variance(...))``."""
    axis = _axis_attr(axis)
    m = mean(data, axis, True, exclude)
    return _sqrt(_variance_call(data, m, axis, keepdims, exclude, unbiased))


def mean_variance(data, axis=None, keepdims=False, exclude=False, unbiased=False):
    """``(mean, variance)`` over ``axis`` as a ``TupleWrapper``."""
    axis = _axis_attr(axis)
    m = mean(data, axis, True, exclude)
    var = _variance_call(data, m, axis, keepdims, exclude, unbiased)
    if not keepdims:
        m = _squeeze(m, axis=axis)
    return TupleWrapper(Tuple((m, var)), 2)


def mean_std(data, axis=None, keepdims=False, exclude=False):
    """``(mean, std)`` over ``axis`` as a ``TupleWrapper``."""
    axis = _axis_attr(axis)
    m = mean(data, axis, True, exclude)
    s = _sqrt(_variance_call(data, m, axis, keepdims, exclude, False))
    if not keepdims:
        m = _squeeze(m, axis=axis)
    return TupleWrapper(Tuple((m, s)), 2)


def logsumexp(data, axis=None, keepdims=False):
    """``log(sum(exp(data)))`` over ``axis``, computed stably around the maximum."""
    axis = _axis_attr(axis)
    max_x = max(data, axis, True)
    sum_x = sum(_exp(data - max_x), axis, True)
    out = _log(sum_x) + max_x
    return out if keepdims else _squeeze(out, axis)


__all__ = [
    "ReduceAttrs", "ArgReduceAttrs", "VarianceAttrs",
    "sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin",
    "variance", "std", "mean_variance", "mean_std", "logsumexp",
]


# ---------------------------------------------------------------------------------------------
# TE computes (reduce strategy: topi.x86.schedule_reduce on CPUs)
def _register_computes():
    from irlab.relay.op.strategy.reduce import register_reduce
    from irlab.topi import reduction as R

    for name in ("sum", "prod", "max", "min", "mean"):
        fn = getattr(R, name)
        register_reduce(name, lambda attrs, inputs, out_type, fn=fn: [
            fn(inputs[0], attrs.axis, attrs.keepdims, attrs.exclude)])
    for name in ("all", "any"):
        fn = getattr(R, name)
        register_reduce(name, lambda attrs, inputs, out_type, fn=fn: [
            fn(inputs[0], attrs.axis, attrs.keepdims, attrs.exclude, out_type.dtype)])
    for name in ("argmax", "argmin"):
        fn = getattr(R, name)
        register_reduce(name, lambda attrs, inputs, out_type, fn=fn: [
            fn(inputs[0], attrs.axis, attrs.keepdims, attrs.exclude, attrs.select_last_index)])
    register_reduce("variance", lambda attrs, inputs, out_type: [R.variance(
        inputs[0], inputs[1], attrs.axis, attrs.keepdims, attrs.exclude, attrs.unbiased)])


_register_computes()
