"""Reductions: ``sum``, ``mean``, ``max``, ``min``, ``prod`` over axes (all when None), with
``keepdims``; legalized to TOPI's reductions."""

from __future__ import annotations

from irlab import topi
from irlab.ir.op import OpPattern
from irlab.relax.op.attrs import ScanopAttrs, StatisticalAttrs
from irlab.relax.op.common import make_call, normalize_axes, tensor_args
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import TensorStructInfo, as_dim

_REDUCERS = {"sum": topi.reduction.sum, "mean": topi.reduction.mean,
             "max": topi.reduction.max, "min": topi.reduction.min,
             "prod": topi.reduction.prod}


def _axes(call, ndim):
    axis = call.attrs.axis
    return list(range(ndim)) if axis is None else normalize_axes(call, axis, ndim)


def _infer(call, bb):
    (x,) = tensor_args(call, 1)
    keep = call.attrs.keepdims
    if x.is_unknown_ndim:
        return TensorStructInfo(dtype=x.dtype, ndim=-1)
    axes = _axes(call, x.ndim)
    ndim = x.ndim if keep else x.ndim - len(axes)
    if x.dims is None:
        return TensorStructInfo(dtype=x.dtype, ndim=ndim)
    if keep:
        return TensorStructInfo([as_dim(1) if k in axes else d for k, d in enumerate(x.dims)],
                                x.dtype)
    return TensorStructInfo([d for k, d in enumerate(x.dims) if k not in axes], x.dtype)


def _define(name, compute):
    def legalize(bb, call):
        x = call.args[0]
        axes = _axes(call, x.struct_info.ndim)
        return bb.call_te(compute, x, axes, call.attrs.keepdims, primfunc_name_hint=name)

    register_relax_op(f"relax.{name}", _infer, num_inputs=1, attrs_type=StatisticalAttrs,
                      pattern=OpPattern.COMM_REDUCE, legalize=legalize,
                      description=f"{name} over axes")

    def make(x, axis=None, keepdims=False):
        if isinstance(axis, int):
            axis = (axis,)
        attrs = StatisticalAttrs(None if axis is None else tuple(int(a) for a in axis),
                                 bool(keepdims))
        return make_call(f"relax.{name}", [x], attrs)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"``{name}`` of ``x`` over ``axis`` (every axis when None)."
    return make


def _variance(data, axis, keepdims):
    mean = topi.reduction.mean(data, axis, True)
    return topi.reduction.variance(data, mean, axis, keepdims)


_REDUCERS["variance"] = _variance
for _name, _compute in _REDUCERS.items():
    globals()[_name] = _define(_name, _compute)

__all__ = list(_REDUCERS)


def _cumsum_infer(call, bb):
    (x,) = tensor_args(call, 1)
    dtype = call.attrs.dtype or x.dtype
    if call.attrs.axis is None:
        if x.dims is None:
            return TensorStructInfo(dtype=dtype, ndim=1)
        from irlab.relax.op.common import prod_dims

        return TensorStructInfo([prod_dims(x.dims)], dtype)
    if not x.is_unknown_ndim:
        normalize_axes(call, [call.attrs.axis], x.ndim)
    return TensorStructInfo(x.shape, dtype, ndim=x.ndim)


def _cumsum_compute(data, axis, dtype, exclusive):
    from irlab import te
    from irlab.tir import op as tir_op

    if axis is None:
        flat = topi.transform.reshape(data, (topi.utils.prod(topi.utils.dims(data)),))
        return _cumsum_compute(flat, 0, dtype, exclusive)
    extent = data.shape[axis]

    def body(*i):
        k = te.reduce_axis((0, extent), name="k")
        idx = list(i)
        idx[axis] = k
        keep = (k < i[axis]) if exclusive else (k <= i[axis])
        return te.sum(tir_op.cast(data(*idx), dtype), axis=k, where=keep)

    return te.compute(data.shape, body, name="T_cumsum")


def _cumsum_legalize(bb, call):
    a = call.attrs
    x = call.args[0]
    axis = None if a.axis is None else normalize_axes(call, [a.axis], x.struct_info.ndim)[0]
    return bb.call_te(_cumsum_compute, x, axis, call.struct_info.dtype, a.exclusive,
                      primfunc_name_hint="cumsum")


register_relax_op("relax.cumsum", _cumsum_infer, num_inputs=1, attrs_type=ScanopAttrs,
                  pattern=OpPattern.OPAQUE, legalize=_cumsum_legalize,
                  description="running sums along an axis")


def cumsum(data, axis=None, dtype=None, exclusive=False):
    """Running sums of ``data`` along ``axis`` (of the flattened data when None)."""
    from irlab.runtime.dtype import normalize_dtype

    return make_call("relax.cumsum", [data], ScanopAttrs(
        None if axis is None else int(axis), normalize_dtype(dtype) if dtype else "",
        bool(exclusive)))


__all__ += ["cumsum"]
