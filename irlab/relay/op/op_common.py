"""Helpers shared by the op families: call construction and common type relations."""

from __future__ import annotations

import numpy as np

from irlab.ir.op import Op
from irlab.ir.type import TensorType
from irlab.relay.expr import Call, expect_expr


def make_call(op_name: str, args, attrs=None, span=None) -> Call:
    """``Call(Op.get(op_name), args, attrs)`` with arguments checked to be expressions."""
    op = Op.get(op_name)
    args = [expect_expr(a, f"argument {i} of {op_name}") for i, a in enumerate(args)]
    return Call(op, args, attrs, span=span)


def checked_shape(expr) -> tuple:
    """The static shape of a type-checked tensor expression."""
    return tuple(expr.checked_type.shape)


def checked_dtype(expr) -> str:
    """The dtype of a type-checked tensor expression."""
    return expr.checked_type.dtype


def normalize_axis(axis: int, ndim: int, ctx, what="axis") -> int:
    """A possibly negative axis as a non-negative index; fails the relation when out of range."""
    if not -ndim <= axis < max(ndim, 1):
        ctx.fail(f"{what}={axis} is out of range for a tensor of rank {ndim}")
    return axis + ndim if axis < 0 else axis


def broadcast_shapes(lhs: tuple, rhs: tuple, ctx) -> tuple:
    """numpy broadcasting of two static shapes; fails the relation on incompatible dims."""
    ndim = max(len(lhs), len(rhs))
    a = (1,) * (ndim - len(lhs)) + tuple(lhs)
    b = (1,) * (ndim - len(rhs)) + tuple(rhs)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            ctx.fail(f"shapes {tuple(lhs)} and {tuple(rhs)} cannot be broadcast together "
                     f"(dimension {i}: {x} vs {y})")
    return tuple(out)


def identity_rel(ctx):
    """Output type = the type of the first argument (unary elementwise ops)."""
    return ctx.tensor(0)


def out_array(value, out_type: TensorType) -> np.ndarray:
    """A reference result as an array of exactly the output type's dtype."""
    from irlab.runtime.dtype import to_numpy_dtype

    return np.asarray(value).astype(to_numpy_dtype(out_type.dtype), copy=False)
