"""Elementwise unary operators (TVM's ``topi.exp``, ``topi.sigmoid``...): one ``te.compute``
applying a TIR intrinsic to each element."""

from __future__ import annotations

from irlab import te
from irlab.tir import expr as E
from irlab.tir import op as O


def _elementwise(name, fn):
    def compute(x, name=name):
        return te.compute(x.shape, lambda *i: fn(x(*i)), name=f"T_{name}", tag="elemwise")

    compute.__name__ = name
    compute.__doc__ = f"Elementwise ``{name}``."
    return compute


def _sign(v):
    zero = O.const(0, v.dtype)
    one = O.const(1, v.dtype)
    return E.Select(v > zero, one, E.Select(v < zero, O.const(-1, v.dtype), zero))


def _round(v):
    return O.round(v)


exp = _elementwise("exp", O.exp)
log = _elementwise("log", O.log)
log2 = _elementwise("log2", O.log2)
log10 = _elementwise("log10", O.log10)
sqrt = _elementwise("sqrt", O.sqrt)
rsqrt = _elementwise("rsqrt", O.rsqrt)
sigmoid = _elementwise("sigmoid", O.sigmoid)
tanh = _elementwise("tanh", O.tanh)
erf = _elementwise("erf", O.erf)
negative = _elementwise("negative", lambda v: O.negate(v))
abs = _elementwise("abs", O.fabs)  # noqa: A001 (TVM's name)
floor = _elementwise("floor", O.floor)
ceil = _elementwise("ceil", O.ceil)
round = _elementwise("round", _round)  # noqa: A001
trunc = _elementwise("trunc", O.trunc)
sign = _elementwise("sign", _sign)
sin = _elementwise("sin", O.sin)
cos = _elementwise("cos", O.cos)
tan = _elementwise("tan", lambda v: E.Call(v.dtype, "tir.tan", (v,)))
atan = _elementwise("atan", lambda v: E.Call(v.dtype, "tir.atan", (v,)))
identity = _elementwise("identity", lambda v: v)
logical_not = _elementwise("logical_not", O.logical_not)
isnan = _elementwise("isnan", lambda v: E.Call("bool", "tir.isnan", (v,)))
isinf = _elementwise("isinf", lambda v: E.Call("bool", "tir.isinf", (v,)))
isfinite = _elementwise("isfinite", lambda v: E.Call("bool", "tir.isfinite", (v,)))


def cast(x, dtype):
    return te.compute(x.shape, lambda *i: O.cast(x(*i), dtype), name="T_cast", tag="elemwise")


def clip(x, a_min, a_max):
    lo, hi = O.const(a_min, x.dtype), O.const(a_max, x.dtype)
    return te.compute(x.shape, lambda *i: O.min(O.max(x(*i), lo), hi), name="T_clip",
                      tag="elemwise")


__all__ = ["exp", "log", "log2", "log10", "sqrt", "rsqrt", "sigmoid", "tanh", "erf",
           "negative", "abs", "floor", "ceil", "round", "trunc", "sign", "sin", "cos", "tan",
           "atan", "identity", "logical_not", "isnan", "isinf", "isfinite", "cast", "clip"]
