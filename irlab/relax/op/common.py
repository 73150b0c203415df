"""Helpers shared by the op families' struct-info rules: argument checks, axis normalization,
broadcasting and symbolic dim arithmetic (through ``irlab.arith``)."""

from __future__ import annotations

import numbers

from irlab.arith import Analyzer
from irlab.errors import DiagnosticError
from irlab.ir.op import Op
from irlab.relax.expr import Call
from irlab.relax.struct_info import TensorStructInfo, as_dim
from irlab.tir import expr as tir_expr

__all__ = ["make_call", "tensor_arg", "tensor_args", "normalize_axis", "normalize_axes",
           "broadcast_sinfo", "dims_equal", "simplify_dim", "const_int", "unknown_like",
           "prod_dims"]


def make_call(name, args, attrs=None, sinfo_args=None) -> Call:
    """A call of the Relax op ``name``."""
    return Call(Op.get(name), list(args), attrs, sinfo_args)


def _op_name(call) -> str:
    return call.op.name.replace("relax.", "R.", 1)


def tensor_arg(call, index) -> TensorStructInfo:
    """The struct info of tensor argument ``index`` (an error naming the op otherwise)."""
    sinfo = call.args[index].struct_info
    if not isinstance(sinfo, TensorStructInfo):
        raise DiagnosticError(f"{_op_name(call)}: argument {index} must be a tensor, got "
                              f"{sinfo}", call)
    return sinfo


def tensor_args(call, count) -> list:
    if len(call.args) != count:
        raise DiagnosticError(f"{_op_name(call)} takes {count} arguments, got "
                              f"{len(call.args)}", call)
    return [tensor_arg(call, i) for i in range(count)]


def normalize_axis(call, axis, ndim) -> int:
    """``axis`` in ``[0, ndim)`` (negative counts from the end)."""
    if not -ndim <= axis < ndim:
        raise DiagnosticError(f"{_op_name(call)}: axis {axis} is out of range for a tensor of "
                              f"{ndim} dimensions", call)
    return axis % ndim


def normalize_axes(call, axes, ndim) -> list:
    axes = [normalize_axis(call, a, ndim) for a in axes]
    if len(set(axes)) != len(axes):
        raise DiagnosticError(f"{_op_name(call)}: repeated axes {axes}", call)
    return axes


def const_int(dim):
    """The int value of a constant dim, else None."""
    if isinstance(dim, tir_expr.IntImm):
        return dim.value
    if isinstance(dim, numbers.Integral):
        return int(dim)
    return None


def simplify_dim(dim):
    return Analyzer().simplify(as_dim(dim))


def dims_equal(a, b) -> bool:
    ca, cb = const_int(a), const_int(b)
    if ca is not None and cb is not None:
        return ca == cb
    return a is b or Analyzer().can_prove_equal(a, b)


def prod_dims(dims):
    out = as_dim(1)
    for d in dims:
        out = out * d
    return simplify_dim(out)


def unknown_like(dtype, ndim) -> TensorStructInfo:
    return TensorStructInfo(dtype=dtype, ndim=ndim)


def broadcast_sinfo(call, lhs, rhs, dtype) -> TensorStructInfo:
    """Numpy broadcasting of two tensor struct infos; a pair of dims neither equal nor 1 is
    an error when both are constants, an unknown shape when symbolic."""
    if lhs.is_unknown_ndim or rhs.is_unknown_ndim:
        return unknown_like(dtype, -1)
    ndim = max(lhs.ndim, rhs.ndim)
    if lhs.dims is None or rhs.dims is None:
        return unknown_like(dtype, ndim)
    a, b = lhs.dims, rhs.dims
    out = []
    for i in range(1, ndim + 1):
        x = a[-i] if i <= len(a) else None
        y = b[-i] if i <= len(b) else None
        if x is None or const_int(x) == 1 and y is not None:
            out.append(y)
        elif y is None or const_int(y) == 1:
            out.append(x)
        elif dims_equal(x, y):
            out.append(x)
        elif const_int(x) is not None and const_int(y) is not None:
            raise DiagnosticError(f"{_op_name(call)}: shapes {lhs} and {rhs} do not "
                                  f"broadcast (dims {x} and {y})", call)
        else:
            return unknown_like(dtype, ndim)
    return TensorStructInfo(list(reversed(out)), dtype)
