"""Set operators: ``unique`` (TVM's ``relax.unique``). Its output shape depends on the data,
so it has no TE compute: the VM calls the packed function ``relax.run.unique`` (over numpy)
with the op's arguments (the op's ``FCallPacked``, as in TVM), and the program re-matches the
result's shape with ``R.match_cast``."""

from __future__ import annotations

import numpy as np

from irlab.errors import DiagnosticError
from irlab.relax.expr import Expr, PrimValue
from irlab.relax.op.common import make_call, normalize_axis, tensor_arg
from irlab.relax.op.registry import CALL_PACKED, register_relax_op
from irlab.relax.struct_info import TensorStructInfo
from irlab.runtime import ndarray as _nd
from irlab.runtime.registry import register_func

__all__ = ["unique"]

_FLAGS = ("sorted", "return_index", "return_inverse", "return_counts")


def _flag(call, index) -> int:
    """The value of the PrimValue argument ``index`` (a flag or the axis), as a Python int."""
    arg = call.args[index]
    value = getattr(getattr(arg, "value", None), "value", None)
    if not isinstance(arg, PrimValue) or value is None:
        raise DiagnosticError(f"R.unique: argument {index} must be a constant PrimValue, "
                              f"got {arg}", call)
    return int(value)


def _unique_infer(call, bb):
    x = tensor_arg(call, 0)
    if len(call.args) not in (5, 6):
        raise DiagnosticError(f"R.unique takes x, {', '.join(_FLAGS)} and an optional axis; "
                              f"got {len(call.args)} arguments", call)
    for index, name in enumerate(_FLAGS[1:], start=2):
        if _flag(call, index):
            raise DiagnosticError(f"R.unique: {name}=True is not supported (as in TVM, whose "
                                  f"runtime refuses it)", call)
    if len(call.args) == 6:
        if x.ndim != -1:
            normalize_axis(call, _flag(call, 5), x.ndim)
        return TensorStructInfo(dtype=x.dtype, ndim=x.ndim)
    return TensorStructInfo(dtype=x.dtype, ndim=1)


register_relax_op("relax.unique", _unique_infer, pure=True,
                  description="the unique elements of a tensor (data-dependent shape)"
                  ).set_attr(CALL_PACKED, "relax.run.unique")


def unique(x, sorted=True, return_index=False, return_inverse=False,  # noqa: A002 (TVM's)
           return_counts=False, axis=None):
    """The unique elements of ``x`` (flattened when ``axis`` is None), sorted ascending when
    ``sorted``, else in order of first occurrence. The output shape is known only at run time."""
    flags = (sorted, return_index, return_inverse, return_counts)
    args = [x] + [f if isinstance(f, Expr) else PrimValue(bool(f)) for f in flags]
    if axis is not None:  # (a printed program passes R.prim_value's back)
        args.append(axis if isinstance(axis, Expr) else PrimValue(int(axis)))
    return make_call("relax.unique", args)


@register_func("relax.run.unique", override=True)
def _run_unique(x, sorted, return_index, return_inverse, return_counts, axis=None):
    """The packed function ``R.unique`` becomes: numpy's ``unique``, in first-occurrence order
    when not ``sorted``."""
    if return_index or return_inverse or return_counts:
        raise DiagnosticError("relax.run.unique: only the unique values can be returned")
    data = x.numpy()
    values, first = np.unique(data, return_index=True, axis=None if axis is None else int(axis))
    if not sorted:
        order = np.argsort(first, kind="stable")
        values = np.take(values, order, axis=0 if axis is None else int(axis))
    return _nd.array(np.ascontiguousarray(values))
