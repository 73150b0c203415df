"""The floating-point math intrinsics (``tir.exp``, ``tir.tanh``, ``tir.pow``...): numpy
reference, LLVM intrinsic or C math-library function, and whether VectorizeLoop widens them."""

from __future__ import annotations

import math

import numpy as np

from irlab.runtime.dtype import parse_dtype
from irlab.tir.intrinsics.record import register_intrinsic


def _erf(x):
    if isinstance(x, np.ndarray):
        return np.vectorize(math.erf)(x).astype(x.dtype)
    return math.erf(x)


def _round_half_away(x):
    """C's ``round`` (TVM's ``tir.round`` is ``llvm.round``): halves go away from zero."""
    whole = np.trunc(x)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole)


def _rsqrt(x):
    return 1 / np.sqrt(x)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _exp10(x):
    return np.power(10, x)


def _fma(a, b, c):
    return a * b + c


# name, numpy reference, LLVM intrinsic, C math function, elementwise (VectorizeLoop widens it)
_UNARY = (
    ("exp", np.exp, "exp", "exp", True),
    ("exp2", np.exp2, "exp2", "exp2", True),
    ("exp10", _exp10, "exp10", None, True),  # C: pow(10, x), a lowering
    ("log", np.log, "log", "log", True),
    ("log2", np.log2, "log2", "log2", True),
    ("log10", np.log10, "log10", "log10", True),
    ("log1p", np.log1p, None, "log1p", True),
    ("sqrt", np.sqrt, "sqrt", "sqrt", True),
    ("rsqrt", _rsqrt, None, None, True),  # 1 / sqrt(x): lowerings
    ("tanh", np.tanh, None, "tanh", True),
    ("erf", _erf, None, "erf", True),
    ("sigmoid", _sigmoid, None, None, True),  # 1 / (1 + exp(-x)): lowerings
    ("fabs", np.abs, "fabs", "fabs", True),
    ("floor", np.floor, "floor", "floor", True),
    ("ceil", np.ceil, "ceil", "ceil", True),
    ("round", _round_half_away, "round", "round", True),
    ("nearbyint", np.rint, "roundeven", "nearbyint", True),
    ("trunc", np.trunc, "trunc", "trunc", True),
    ("sin", np.sin, "sin", "sin", True),
    ("cos", np.cos, "cos", "cos", True),
    ("tan", np.tan, None, "tan", False),
    ("asin", np.arcsin, None, "asin", False),
    ("acos", np.arccos, None, "acos", False),
    ("atan", np.arctan, None, "atan", False),
    ("sinh", np.sinh, None, "sinh", False),
    ("cosh", np.cosh, None, "cosh", False),
    ("asinh", np.arcsinh, None, None, False),
    ("acosh", np.arccosh, None, None, False),
    ("atanh", np.arctanh, None, None, False),
)
_BINARY = (
    ("pow", np.power, "pow", "pow", True),
    ("copysign", np.copysign, "copysign", "copysign", False),
    ("fmod", np.fmod, None, "fmod", False),
    ("atan2", np.arctan2, None, "atan2", False),
    ("hypot", np.hypot, None, "hypot", False),
    ("nextafter", np.nextafter, None, "nextafter", False),
)
for _table, _arity in ((_UNARY, 1), (_BINARY, 2)):
    for _name, _ref, _llvm, _libm, _elementwise in _table:
        register_intrinsic("tir." + _name, _arity, numpy=_ref, llvm=_llvm, libm=_libm,
                           elementwise=_elementwise, tvmscript=_arity == 1 or _name == "pow")

# fma: LLVM's llvm.fma without the float16 widening of the other LLVM math (a lowering)
register_intrinsic("tir.fma", 3, numpy=_fma, libm="fma", elementwise=True, tvmscript=True,
                   doc="a * b + c, rounded once")


def _bool_result(args):
    return str(parse_dtype("bool").with_lanes(parse_dtype(args[0].dtype).lanes))


for _name, _ref in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
    register_intrinsic("tir." + _name, 1, numpy=_ref, c_function=_name,
                       dtype_rule=_bool_result)
