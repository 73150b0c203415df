"""Selection and search: ``where`` (broadcasting select), ``argmax`` / ``argmin`` (int64
indices); legalized to TOPI."""

from __future__ import annotations

from irlab import te, topi
from irlab.errors import DiagnosticError
from irlab.ir.op import OpPattern
from irlab.relax.op.attrs import ArgReduceAttrs
from irlab.relax.op.common import broadcast_sinfo, make_call, normalize_axis, tensor_args
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import TensorStructInfo, as_dim
from irlab.tir import op as tir_op

__all__ = ["where", "argmax", "argmin"]


def _where_infer(call, bb):
    cond, x, y = tensor_args(call, 3)
    if x.dtype != y.dtype:
        raise DiagnosticError(f"R.where: branches differ in dtype ({x.dtype} vs {y.dtype})",
                              call)
    xy = broadcast_sinfo(call, x, y, x.dtype)
    return broadcast_sinfo(call, TensorStructInfo(cond.shape, x.dtype, ndim=cond.ndim), xy,
                           x.dtype)


def _where_legalize(bb, call):
    return bb.call_te(topi.transform.where, *call.args, primfunc_name_hint="where")


register_relax_op("relax.where", _where_infer, num_inputs=3, pattern=OpPattern.BROADCAST,
                  legalize=_where_legalize, description="x where cond else y")


def where(condition, x1, x2):
    """``x1`` where ``condition`` holds, else ``x2`` (all three broadcast)."""
    return make_call("relax.where", [condition, x1, x2])


def _arg_infer(call, bb):
    (x,) = tensor_args(call, 1)
    axis, keep = call.attrs.axis, call.attrs.keepdims
    if x.dims is None:
        ndim = x.ndim if keep or x.ndim == -1 else (0 if axis is None else x.ndim - 1)
        return TensorStructInfo(dtype="int64", ndim=ndim)
    if axis is None:
        dims = [as_dim(1)] * x.ndim if keep else []
    else:
        axis = normalize_axis(call, axis, x.ndim)
        dims = [as_dim(1) if k == axis else d for k, d in enumerate(x.dims) if keep or k != axis]
    return TensorStructInfo(dims, "int64")


def _as_int64(t):
    return te.compute(t.shape, lambda *i: tir_op.cast(t(*i), "int64"), name=f"{t.op.name}_i64")


def _arg_legalize(name, reduce):
    def legalize(bb, call):
        x = call.args[0]
        axis = call.attrs.axis
        if axis is not None:
            axis = [normalize_axis(call, axis, x.struct_info.ndim)]

        def compute(data):
            return _as_int64(reduce(data, axis, call.attrs.keepdims))

        return bb.call_te(compute, x, primfunc_name_hint=name)

    return legalize


register_relax_op("relax.argmax", _arg_infer, num_inputs=1, attrs_type=ArgReduceAttrs,
                  pattern=OpPattern.COMM_REDUCE,
                  legalize=_arg_legalize("argmax", topi.reduction.argmax),
                  description="index of the maximum")
register_relax_op("relax.argmin", _arg_infer, num_inputs=1, attrs_type=ArgReduceAttrs,
                  pattern=OpPattern.COMM_REDUCE,
                  legalize=_arg_legalize("argmin", topi.reduction.argmin),
                  description="index of the minimum")


def argmax(x, axis=None, keepdims=False):
    """Index (int64) of the maximum along ``axis`` (of the flattened ``x`` when None)."""
    return make_call("relax.argmax", [x], ArgReduceAttrs(axis, bool(keepdims)))


def argmin(x, axis=None, keepdims=False):
    """Index (int64) of the minimum along ``axis`` (of the flattened ``x`` when None)."""
    return make_call("relax.argmin", [x], ArgReduceAttrs(axis, bool(keepdims)))
