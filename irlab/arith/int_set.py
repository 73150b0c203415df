"""Integer facts about expressions: constant bounds (``ConstIntBound``) and ``ModularSet``.

Both analyses are small recursive functions over PrimExprs, parameterized by what the
analyzer knows about variables (``bounds``: Var -> (lo, hi); ``values``: Var -> PrimExpr).
Bounds are exact Python ints: an unbound variable ranges over its dtype, so no infinities
are needed (TVM uses ``+-inf`` sentinels instead; we clamp to the dtype, which is sound
because a value of that dtype can never leave its range).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from irlab.runtime.dtype import parse_dtype
from irlab.tir import expr as E

POS_INF = (1 << 63) - 1  # TVM's ConstIntBound.POS_INF (int64 max)
NEG_INF = -POS_INF


class ConstIntBound(NamedTuple):
    """All values lie in ``[min_value, max_value]``."""

    min_value: int
    max_value: int

    POS_INF = POS_INF
    NEG_INF = NEG_INF


class ModularSet(NamedTuple):
    """All values are ``coeff * k + base`` for some integer k (``coeff == 0``: exactly base)."""

    coeff: int
    base: int


def dtype_range(dtype):
    """The value range of an integer/bool dtype (int64 range for anything else)."""
    t = parse_dtype(dtype)
    if t.code == "int":
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    if t.code == "uint":
        return 0, (1 << t.bits) - 1
    if t.code == "bool":
        return 0, 1
    return NEG_INF, POS_INF


def is_index_dtype(dtype) -> bool:
    """Scalar int32/int64: the dtypes whose arithmetic the simplifier reasons about with
    mathematical integers (their overflow is undefined, as in TVM: LLVM ``nsw``). int8/int16
    arithmetic wraps, so rewrites that assume no overflow would be wrong there."""
    t = parse_dtype(dtype)
    return t.code == "int" and t.lanes == 1 and t.bits >= 32


def _floordiv(a, b):
    return a // b


def _truncdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _corners(f, a, b):
    vals = [f(x, y) for x in a for y in b]
    return min(vals), max(vals)


def _clamp(lo, hi, dtype):
    dlo, dhi = dtype_range(dtype)
    if lo < dlo or hi > dhi:  # the value may wrap around: anything in the dtype is possible
        return dlo, dhi
    return lo, hi


def const_int_bound(e, bounds, values=None) -> ConstIntBound:
    """Bounds of an integer expression given variable bounds; see the module doc."""
    lo, hi = _bound(e, bounds, values or {}, {})
    return ConstIntBound(lo, hi)


def _bound(e, bounds, values, memo):
    key = id(e)
    if key in memo:
        return memo[key]
    result = _bound_uncached(e, bounds, values, memo)
    if hasattr(e, "dtype"):
        result = _clamp(result[0], result[1], e.dtype)
    memo[key] = result
    return result


def _bound_uncached(e, bounds, values, memo):
    def rec(x):
        return _bound(x, bounds, values, memo)

    dt = getattr(e, "dtype", "int64")
    if isinstance(e, E.IntImm):
        return e.value, e.value
    if isinstance(e, E.Var):
        lo, hi = dtype_range(dt)
        if isinstance(e, E.SizeVar):
            lo = max(lo, 0)
        if e in values:
            vlo, vhi = rec(values[e])
            lo, hi = max(lo, vlo), min(hi, vhi)
        if e in bounds:
            blo, bhi = bounds[e]
            lo, hi = max(lo, blo), min(hi, bhi)
        return lo, hi
    if not is_index_dtype(dt) and parse_dtype(dt).code != "bool":
        return dtype_range(dt)
    if isinstance(e, E.Add):
        (a0, a1), (b0, b1) = rec(e.a), rec(e.b)
        return a0 + b0, a1 + b1
    if isinstance(e, E.Sub):
        (a0, a1), (b0, b1) = rec(e.a), rec(e.b)
        return a0 - b1, a1 - b0
    if isinstance(e, E.Mul):
        return _corners(lambda x, y: x * y, rec(e.a), rec(e.b))
    if isinstance(e, (E.FloorDiv, E.Div)):
        (a0, a1), (b0, b1) = rec(e.a), rec(e.b)
        if b0 <= 0 <= b1:  # the divisor may be zero (or change sign): no information
            return dtype_range(dt)
        f = _floordiv if isinstance(e, E.FloorDiv) else _truncdiv
        return _corners(f, (a0, a1), (b0, b1))
    if isinstance(e, E.FloorMod):
        (a0, a1), (b0, b1) = rec(e.a), rec(e.b)
        if b0 > 0:
            if a0 >= 0 and a1 < b0:  # the modulus never wraps
                return a0, a1
            return 0, (b1 - 1 if a0 < 0 else min(a1, b1 - 1))
        if b1 < 0:
            return b0 + 1, 0
        return dtype_range(dt)
    if isinstance(e, E.Mod):
        (a0, a1), (b0, b1) = rec(e.a), rec(e.b)
        if b0 <= 0 <= b1:
            return dtype_range(dt)
        m = max(abs(b0), abs(b1)) - 1
        if a0 >= 0:
            return 0, min(a1, m)
        if a1 <= 0:
            return max(a0, -m), 0
        return max(a0, -m), min(a1, m)
    if isinstance(e, E.Min):
        (a0, a1), (b0, b1) = rec(e.a), rec(e.b)
        return min(a0, b0), min(a1, b1)
    if isinstance(e, E.Max):
        (a0, a1), (b0, b1) = rec(e.a), rec(e.b)
        return max(a0, b0), max(a1, b1)
    if isinstance(e, E.Select):
        (a0, a1), (b0, b1) = rec(e.true_value), rec(e.false_value)
        return min(a0, b0), max(a1, b1)
    if isinstance(e, E.Cast):
        if is_index_dtype(e.value.dtype) or parse_dtype(e.value.dtype).code == "bool":
            return rec(e.value)  # clamped to the target dtype by the caller
        if parse_dtype(e.value.dtype).code in ("int", "uint"):
            return dtype_range(e.value.dtype)  # a narrow integer: anywhere in its range
        return dtype_range(dt)
    if isinstance(e, E.Let):
        inner = dict(values)
        inner[e.var] = e.value
        return _bound(e.body, bounds, inner, {})
    return dtype_range(dt)


# -- modular sets ------------------------------------------------------------------------
_EVERYTHING = ModularSet(1, 0)


def _norm(coeff, base):
    coeff = abs(coeff)
    return ModularSet(coeff, base % coeff if coeff else base)


def _union(a, b):
    coeff = math.gcd(a.coeff, b.coeff, abs(a.base - b.base))
    return _norm(coeff, a.base)


def modular_set(e, bounds, values=None) -> ModularSet:
    """The modular set of an integer expression; see the module doc."""
    return _modular(e, bounds, values or {})


def _modular(e, bounds, values):
    def rec(x):
        return _modular(x, bounds, values)

    if isinstance(e, E.IntImm):
        return ModularSet(0, e.value)
    if not hasattr(e, "dtype") or not is_index_dtype(e.dtype):
        return _EVERYTHING
    if isinstance(e, E.Var):
        if e in values:
            return rec(values[e])
        lo, hi = bounds.get(e, (0, 1))
        return ModularSet(0, lo) if lo == hi else _EVERYTHING
    if isinstance(e, (E.Add, E.Sub)):
        a, b = rec(e.a), rec(e.b)
        base = a.base + b.base if isinstance(e, E.Add) else a.base - b.base
        return _norm(math.gcd(a.coeff, b.coeff), base)
    if isinstance(e, E.Mul):
        a, b = rec(e.a), rec(e.b)
        # (c1 k + b1)(c2 l + b2) = c1 c2 kl + c1 b2 k + c2 b1 l + b1 b2
        coeff = math.gcd(a.coeff * b.coeff, a.coeff * b.base, b.coeff * a.base)
        return _norm(coeff, a.base * b.base)
    if isinstance(e, (E.FloorDiv, E.FloorMod)):
        a, b = rec(e.a), rec(e.b)
        if b.coeff != 0 or b.base <= 0:
            return _EVERYTHING
        c = b.base
        if isinstance(e, E.FloorDiv):
            # (c*m*k + base) // c == m*k + base // c exactly when c divides the coefficient
            if a.coeff % c == 0:
                return _norm(a.coeff // c, a.base // c)
            return _EVERYTHING
        g = math.gcd(a.coeff, c)  # x mod c keeps x's residue modulo gcd(coeff, c)
        return _norm(g, a.base)
    if isinstance(e, (E.Min, E.Max)):
        return _union(rec(e.a), rec(e.b))
    if isinstance(e, E.Select):
        return _union(rec(e.true_value), rec(e.false_value))
    if isinstance(e, E.Let):
        inner = dict(values)
        inner[e.var] = e.value
        return _modular(e.body, bounds, inner)
    return _EVERYTHING
