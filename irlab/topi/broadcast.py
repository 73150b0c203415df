"""Binary operators with numpy broadcasting (TVM's ``topi.add``, ``topi.equal``...).

The output shape aligns both shapes on the right; a dimension of 1 repeats. Each output
element reads ``a`` and ``b`` at the broadcast indices (index 0 on the size-1 dimensions).
"""

from __future__ import annotations

from irlab import te
from irlab.errors import IrlabError
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.topi.utils import dims, is_const


def _broadcast_dim(x, y, a, b):
    """The broadcast of two dims (ints, or PrimExprs for symbolic ones). A symbolic dim
    against a constant other than 1 is taken to equal it (the caller's shape check, e.g.
    Relax's struct-info deduction, decides)."""
    if is_const(x) and is_const(y):
        if x != y and 1 not in (x, y):
            raise IrlabError(f"shapes {a} and {b} do not broadcast")
        return max(x, y) if 0 not in (x, y) else 0
    if is_const(x):
        return y if x == 1 else x
    if is_const(y):
        return x if y == 1 else y
    return x


def broadcast_shape(a: tuple, b: tuple) -> tuple:
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        out.append(_broadcast_dim(x, y, a, b))
    return tuple(reversed(out))


def _index(shape, out_shape, indices):
    """``indices`` of the output mapped onto a tensor of ``shape``."""
    offset = len(out_shape) - len(shape)
    return [0 if is_const(shape[d]) and shape[d] == 1 and not (
        is_const(out_shape[d + offset]) and out_shape[d + offset] == 1) else indices[d + offset]
        for d in range(len(shape))]


def _binary(name, fn):
    def compute(lhs, rhs):
        lhs_scalar, rhs_scalar = not isinstance(lhs, te.Tensor), not isinstance(rhs, te.Tensor)
        if lhs_scalar and rhs_scalar:
            return fn(E.convert(lhs), E.convert(rhs))
        if lhs_scalar or rhs_scalar:
            tensor = rhs if lhs_scalar else lhs
            value = O.const(lhs if lhs_scalar else rhs, tensor.dtype)
            if lhs_scalar:
                return te.compute(tensor.shape, lambda *i: fn(value, tensor(*i)),
                                  name=f"T_{name}", tag="broadcast")
            return te.compute(tensor.shape, lambda *i: fn(tensor(*i), value), name=f"T_{name}",
                              tag="broadcast")
        sa, sb = dims(lhs), dims(rhs)
        out_shape = broadcast_shape(sa, sb)

        def body(*i):
            return fn(lhs(*_index(sa, out_shape, i)), rhs(*_index(sb, out_shape, i)))

        return te.compute(out_shape, body, name=f"T_{name}", tag="broadcast")

    compute.__name__ = name
    compute.__doc__ = f"Broadcasting ``{name}``."
    return compute


def _int_or_float(int_fn, float_fn):
    def fn(a, b):
        return float_fn(a, b) if a.dtype.startswith(("float", "bfloat")) else int_fn(a, b)
    return fn


add = _binary("add", O.add)
subtract = _binary("subtract", O.subtract)
multiply = _binary("multiply", O.multiply)
# Relay's divide/mod truncate on integers (C semantics) and are exact on floats
divide = _binary("divide", _int_or_float(O.truncdiv, O.div))
mod = _binary("mod", _int_or_float(O.truncmod, lambda a, b: E.Call(a.dtype, "tir.fmod",
                                                                     (a, b))))
trunc_divide = _binary("trunc_divide", _int_or_float(O.truncdiv, O.div))
trunc_mod = _binary("trunc_mod", _int_or_float(
    O.truncmod, lambda a, b: E.Call(a.dtype, "tir.fmod", (a, b))))
floor_divide = _binary("floor_divide", _int_or_float(
    O.floordiv, lambda a, b: O.floor(O.div(a, b))))
floor_mod = _binary("floor_mod", _int_or_float(
    O.floormod, lambda a, b: O.subtract(a, O.multiply(O.floor(O.div(a, b)), b))))
power = _binary("power", O.pow)
maximum = _binary("maximum", O.max)
minimum = _binary("minimum", O.min)
logical_and = _binary("logical_and", O.logical_and)
logical_or = _binary("logical_or", O.logical_or)
logical_xor = _binary("logical_xor", lambda a, b: E.NE(a, b))
bitwise_and = _binary("bitwise_and", lambda a, b: a & b)
bitwise_or = _binary("bitwise_or", lambda a, b: a | b)
bitwise_xor = _binary("bitwise_xor", lambda a, b: a ^ b)
left_shift = _binary("left_shift", lambda a, b: a << b)
right_shift = _binary("right_shift", lambda a, b: a >> b)
equal = _binary("equal", lambda a, b: E.EQ(a, b))
not_equal = _binary("not_equal", lambda a, b: E.NE(a, b))
less = _binary("less", lambda a, b: E.LT(a, b))
less_equal = _binary("less_equal", lambda a, b: E.LE(a, b))
greater = _binary("greater", lambda a, b: E.GT(a, b))
greater_equal = _binary("greater_equal", lambda a, b: E.GE(a, b))


__all__ = ["broadcast_shape", "add", "subtract", "multiply", "divide", "mod", "trunc_divide",
           "trunc_mod", "floor_divide", "floor_mod", "power", "maximum", "minimum",
           "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
           "bitwise_xor", "left_shift", "right_shift", "equal", "not_equal", "less",
           "less_equal", "greater", "greater_equal"]
